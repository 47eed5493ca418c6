#!/usr/bin/env bash
# Source this on an offline GPU host, from the repository root, after copying the wheels of
# ../shared/gpu-host/fetch-wheels.sh into .whl/: it installs them and emmy itself (editable, so
# the emmy.* namespace maps onto this checkout) into the host's Python, with no package index.
# The runtime also needs cuda-core, which that script does not fetch (a compiled wheel):
#   pip download cuda-core==1.2.2 --no-deps --only-binary=:all: --python-version 3.12 \
#     --platform manylinux_2_28_x86_64 -d .whl
# With pytest-xdist and execnet there too (`pip download pytest-xdist execnet --no-deps -d
# .whl`), the GPU suites can compile their programs on the host's cores in parallel
# (`python3 -m pytest -n 14 test/python/test_gpu_*.py`; not yet timed on a GPU host).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl || return 1
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . || return 1
export PYTHONUNBUFFERED=1
