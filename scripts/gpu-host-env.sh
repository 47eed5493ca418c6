#!/usr/bin/env bash
# Source this on an offline GPU host, from the repository root, after copying the wheels of
# ../shared/gpu-host/fetch-wheels.sh into .whl/: it installs them and emmy itself (editable, so
# the emmy.* namespace maps onto this checkout) into the host's Python, with no package index.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl || return 1
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e . || return 1
export PYTHONUNBUFFERED=1
