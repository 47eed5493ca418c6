"""lit configuration for the FileCheck suites under test/: `.venv/bin/lit test`."""

import os
import shutil
import sys

import lit.formats

config.name = "emmy"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
# lit finds a test by its path relative to this file's folder, so the source root is the
# repository: `lit test/tools` then means the folder test/tools.
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.test_source_root
# Excludes match folder names at any depth: test/python is pytest's, Inputs/ folders hold files
# that tests read, and .venv holds xDSL's own .mlir files (should someone run `lit .`).
config.excludes = ["python", "Inputs", ".venv"]

# RUN lines name `emmy-opt` and `filecheck` (`not` is lit's own): take them from the
# environment lit runs in, so `.venv/bin/lit test` works without activating the venv.
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(sys.executable), config.environment["PATH"]]
)
config.substitutions.append(("%python", sys.executable))

# `emmy compile` caches each program's Torch IR (emmy.tools.frontend.program_cache): one cache
# for the whole run, so that the RUN lines compiling one program export it once, emptied as the
# run starts, so that no result depends on an earlier run or on the user's own cache.
program_cache = os.path.join(config.test_source_root, "test", "Output", "emmy-cache")
shutil.rmtree(program_cache, ignore_errors=True)
config.environment["EMMY_CACHE_DIR"] = program_cache
