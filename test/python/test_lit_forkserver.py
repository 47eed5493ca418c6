"""The lit suite's fork server: a command run through it behaves as the command itself."""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "test" / "lit_forkserver.py"
BIN = Path(sys.executable).parent
BAD_IR = "func.func @f() {\n  %x = arith.constant 1 : i32\n  func.return %x : i32\n}\n"


def client(command: str, socket_path: str) -> list[str]:
    code = (
        f"import sys; sys.path.insert(0, {str(SERVER.parent)!r}); from lit_forkserver import "
        f"client; client({command!r}, {socket_path!r}, {str(BIN / command)!r})"
    )
    return [sys.executable, "-IS", "-c", code]


@pytest.fixture(scope="module")
def server():
    socket_path = os.path.join(tempfile.mkdtemp(prefix="emmy-lit-"), "forkserver")
    process = subprocess.Popen(
        [sys.executable, SERVER, "serve", socket_path], stdin=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while not os.path.exists(socket_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert os.path.exists(socket_path), "the fork server never listened"
    yield socket_path
    process.stdin.close()
    process.wait(timeout=30)
    assert not os.path.exists(os.path.dirname(socket_path)), "the server left its folder"


def run(argv: list[str], cwd: Path, stdin: str = "", env: dict[str, str] | None = None):
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def test_streams_status_and_working_directory_are_the_callers(server, tmp_path):
    (tmp_path / "bad.mlir").write_text(BAD_IR)
    through_server = run([*client("emmy-opt", server), "bad.mlir"], tmp_path)
    direct = run([str(BIN / "emmy-opt"), "bad.mlir"], tmp_path)
    assert through_server.returncode == direct.returncode == 1
    assert through_server.stderr == direct.stderr
    assert "bad.mlir:3:" in through_server.stderr

    piped = run([*client("emmy-opt", server), "-"], tmp_path, stdin="func.func @g() {\n}\n")
    assert piped.returncode == 0, piped.stderr
    assert "func.func @g()" in piped.stdout


def test_the_callers_environment_reaches_the_command(server, tmp_path):
    dumps = tmp_path / "dumps"
    env = {**os.environ, "EMMY_DUMP_DIR": str(dumps)}
    result = run([*client("emmy", server), "--version"], tmp_path, env=env)
    assert result.returncode == 0 and result.stdout.startswith("emmy ")
    ir = "func.func @g() {\n}\n"
    result = run([*client("emmy-opt", server), "--canonicalize", "-"], tmp_path, ir, env)
    assert result.returncode == 0, result.stderr
    assert list(dumps.rglob("*.mlir")), "EMMY_DUMP_DIR set by the caller was not seen"


def test_without_a_server_the_real_command_runs(tmp_path):
    result = run([*client("emmy-opt", str(tmp_path / "none")), "--version"], tmp_path)
    assert result.returncode == 0 and "emmy-opt" in result.stdout
