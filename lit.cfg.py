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

# `emmy-opt` and `emmy` run as forks of one warm process (test/lit_forkserver.py): most of a
# RUN line's time was Python, xDSL and torch starting up. EMMY_LIT_FORKSERVER=0 turns it off.
if os.environ.get("EMMY_LIT_FORKSERVER") != "0":
    import subprocess
    import tempfile

    forkserver = os.path.join(config.test_source_root, "test", "lit_forkserver.py")
    # A socket path must be short (108 bytes), so it lives in a fresh folder under /tmp.
    socket_path = os.path.join(tempfile.mkdtemp(prefix="emmy-lit-"), "forkserver")
    server = subprocess.Popen(
        [sys.executable, forkserver, "serve", socket_path], stdin=subprocess.PIPE
    )
    # The server exits when this pipe closes, that is when lit and its workers have exited: the
    # copy of its end outlives the Popen object (config is pickled, so it cannot hold either).
    os.dup(server.stdin.fileno())
    clients = os.path.join(config.test_source_root, "test", "Output", "forkserver-bin")
    os.makedirs(clients, exist_ok=True)
    for command in ("emmy-opt", "emmy"):
        client = os.path.join(clients, command)
        real = os.path.join(os.path.dirname(sys.executable), command)
        with open(client, "w") as script:
            script.write(
                f"#!{sys.executable} -IS\n"
                f"import sys\nsys.path.insert(0, {os.path.dirname(forkserver)!r})\n"
                f"from lit_forkserver import client\n"
                f"client({command!r}, {socket_path!r}, {real!r})\n"
            )
        os.chmod(client, 0o755)
    config.environment["PATH"] = os.pathsep.join([clients, config.environment["PATH"]])
