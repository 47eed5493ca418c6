"""How `emmy` ends on errors that are not bugs: a runtime error (the kernel cache refusing a
directory, a failed or timed-out compile) is one line, Ctrl-C is one line and exit 130, and
`-o` replaces its file only with a whole, successful result."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emmy.tools import cli
from emmy.tools.runtime.compile import CudaCompileTimeoutError
from emmy.tools.runtime.cubin_cache import CubinCacheError

EMMY = str(Path(sys.executable).parent / "emmy")


@pytest.mark.parametrize(
    "error",
    [
        CubinCacheError("/shared/cache is writable by others: chmod 700 /shared/cache"),
        CudaCompileTimeoutError(
            'extern "C" __global__ void k_relu(float* x) {}', "sm_90a", "nvcc", 300
        ),
    ],
)
def test_runtime_errors_are_one_line_not_internal(monkeypatch, capsys, error) -> None:
    def failing(args):
        raise error

    monkeypatch.setattr(cli, "run_exec", failing)
    assert cli.main(["exec", "in.mlir"]) == 1
    printed = capsys.readouterr().err
    assert printed == f"error: {error}\n"


def _interrupted(command: list[str], after: float) -> tuple[int, str]:
    """`command`'s exit status and stderr when a SIGINT reaches it `after` seconds in. Its
    SIGINT is the default one whatever the test runner's (a runner started in the background
    by a shell ignores SIGINT, which its children would inherit), and it is killed if it
    outlives the signal by a minute."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,  # never written: emmy-opt without a file waits on it
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "EMMY_NO_CACHE": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        time.sleep(after)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    return process.returncode, stderr


@pytest.mark.parametrize("command", ["emmy", "emmy-opt"])
def test_ctrl_c_starting_or_at_work_is_one_line_and_exit_130(tmp_path, command: str) -> None:
    """A Ctrl-C while the command still imports its modules, not a traceback of the import."""
    program = tmp_path / "spin.py"
    program.write_text("while True:\n    pass\nnn.ReLU()(torch.randn(4))\n")
    arguments = ["compile", str(program)] if command == "emmy" else []
    executable = str(Path(EMMY).parent / command)
    status, stderr = _interrupted([executable, *arguments], after=0.3)
    assert status == 130, stderr
    assert len(stderr.strip().splitlines()) == 1 and stderr.strip().endswith(": interrupted")
    # At work: in the program's loop, past importing torch, or reading stdin.
    status, stderr = _interrupted([executable, *arguments], after=6)
    assert status == 130, stderr
    assert stderr.strip() == f"{' '.join([command, *arguments[:1]])}: interrupted"


def test_compile_output_file_is_kept_when_compiling_fails(tmp_path) -> None:
    output = tmp_path / "out.mlir"
    output.write_text("the old output\n")
    bad = subprocess.run(
        [EMMY, "compile", "-c", "nn.Linear(3, 2)(torch.randn(4, 5))", "-o", str(output)],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "error" in bad.stderr
    assert output.read_text() == "the old output\n"
    good = subprocess.run(
        [EMMY, "compile", "-c", "nn.ReLU()(torch.randn(4))", "--ir", "loop", "-o", str(output)],
        capture_output=True,
        text=True,
    )
    assert good.returncode == 0, good.stderr
    assert "loop.kernel @k_relu" in output.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.mlir"]


@pytest.mark.parametrize("command", ["compile", "exec"])
def test_a_file_that_is_not_utf8_is_an_error_at_the_byte(tmp_path, command) -> None:
    path = tmp_path / ("program.py" if command == "compile" else "program.mlir")
    path.write_bytes(b"nn.ReLU()(torch.randn(4))\n# caf\xe9\n")
    result = subprocess.run([EMMY, command, str(path)], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr == f"{path}:2:6: error: not UTF-8 text (byte 0xe9)\n"


@pytest.mark.parametrize("call", ["sys.exit(0)", "raise SystemExit(3)"])
def test_a_program_that_exits_is_an_error_at_the_exit(call) -> None:
    source = f"import sys\n{call}\nnn.ReLU()(torch.randn(4))\n"
    result = subprocess.run(
        [EMMY, "compile", "-c", source],
        capture_output=True,
        text=True,
        env={**os.environ, "EMMY_NO_CACHE": "1"},
    )
    assert result.returncode == 1
    assert result.stderr.startswith(
        "<source>:2:1: error: the program exited before its last statement: SystemExit"
    ), result.stderr


def test_a_program_too_big_for_the_interpreter_is_refused_before_any_work() -> None:
    """8 MiB of tensors (a 4 MiB input and its 4 MiB result) over a 6 MiB limit: refused at
    once with the size it would need, before any level runs."""
    result = subprocess.run(
        [EMMY, "run", "-c", "nn.ReLU()(torch.empty(1 << 20))"],
        capture_output=True,
        text=True,
        env={**os.environ, "EMMY_NO_CACHE": "1", "EMMY_INTERPRETER_MAX_BYTES": str(6 << 20)},
    )
    assert result.returncode == 1
    assert result.stderr.endswith(
        "error: the CPU interpreter would hold 8.0 MiB of tensors for @forward, over its limit "
        "of 6.0 MiB (EMMY_INTERPRETER_MAX_BYTES): run it at a smaller size, or on a GPU with "
        "--device cuda\n"
    ), result.stderr
    assert "checking prim" not in result.stderr


def test_exec_limit_counts_every_tensor_of_the_host_function() -> None:
    scale = Path(__file__).resolve().parents[2] / "docs" / "examples" / "scale.mlir"
    limited = subprocess.run(
        [EMMY, "exec", str(scale)],
        capture_output=True,
        text=True,
        env={**os.environ, "EMMY_INTERPRETER_MAX_BYTES": "255"},
    )
    assert limited.returncode == 1
    assert "would hold 256 bytes of tensors for @forward, over its limit of 255 bytes" in (
        limited.stderr
    )
    fits = subprocess.run(
        [EMMY, "exec", str(scale)],
        capture_output=True,
        text=True,
        env={**os.environ, "EMMY_INTERPRETER_MAX_BYTES": "256"},
    )
    assert fits.returncode == 0, fits.stderr


def test_output_cut_short_by_its_reader_is_not_an_error() -> None:
    scale = Path(__file__).resolve().parents[2] / "docs" / "examples" / "scale.mlir"
    result = subprocess.run(
        f"'{EMMY}' exec '{scale}' | head -c 1",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert result.stdout == "@"
    assert result.stderr == ""


@pytest.mark.parametrize(
    "program",
    [
        # Its definitions never end, even catching what they can.
        "while True:\n    try:\n        pass\n    except Exception:\n        pass\n"
        "nn.ReLU()(torch.randn(4))\n",
        # Its forward never ends, while torch.export traces it.
        "class Spin(nn.Module):\n    def forward(self, x):\n        while True:\n"
        "            x = x + 1\n        return x\nSpin()(torch.randn(4))\n",
        # Cleanup that raises as the timeout unwinds through it (torch.export's mode stack
        # raised "Trying to pop empty mode stack" so): still the timeout.
        "try:\n    while True:\n        pass\nfinally:\n    raise RuntimeError('cleanup')\n"
        "nn.ReLU()(torch.randn(4))\n",
        "class Spin(nn.Module):\n    def forward(self, x):\n        try:\n"
        "            while True:\n                x = x + 1\n        finally:\n"
        "            raise RuntimeError('cleanup')\nSpin()(torch.randn(4))\n",
    ],
    ids=["definitions", "forward", "definitions-cleanup", "forward-cleanup"],
)
@pytest.mark.parametrize("command", ["compile", "run"])
def test_a_program_past_its_timeout_is_a_one_line_error(program, command) -> None:
    started = time.monotonic()
    result = subprocess.run(
        [EMMY, command, "-c", program, "--timeout", "1.5"],
        capture_output=True,
        text=True,
        env={**os.environ, "EMMY_NO_CACHE": "1"},
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr == "error: the program's Python ran past the 1.5 s limit (--timeout)\n"
    assert time.monotonic() - started < 60


def test_the_timeout_may_come_from_the_environment() -> None:
    spin = "while True:\n    pass\nnn.ReLU()(torch.randn(4))\n"
    env = {**os.environ, "EMMY_NO_CACHE": "1", "EMMY_TIMEOUT_S": "1"}
    result = subprocess.run(
        [EMMY, "compile", "-c", spin], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 1
    assert result.stderr == "error: the program's Python ran past the 1 s limit (--timeout)\n"
    bad = subprocess.run(
        [EMMY, "compile", "-c", "nn.ReLU()(torch.randn(4))"],
        capture_output=True,
        text=True,
        env={**env, "EMMY_TIMEOUT_S": "soon"},
    )
    assert bad.returncode == 1
    assert bad.stderr == "error: EMMY_TIMEOUT_S must be a positive number of seconds, got 'soon'\n"


def test_a_program_within_its_timeout_compiles() -> None:
    result = subprocess.run(
        [EMMY, "compile", "-c", "nn.ReLU()(torch.randn(4))", "--timeout", "60"],
        capture_output=True,
        text=True,
        env={**os.environ, "EMMY_NO_CACHE": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert "torch.relu" in result.stdout


SPIN_KERNEL = """
kernel.func @spin(%out: memref<32xf32>) block [32, 1, 1] {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1000000000000 : index
  %t = kernel.thread_id x
  scf.for %i = %c0 to %n step %c1 {
    %v = arith.constant 1.0 : f32
    memref.store %v, %out[%t] : memref<32xf32>
  }
}

func.func @forward(%out: memref<32xf32>) -> memref<32xf32> {
  kernel.launch @spin(%out) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<32xf32>
  func.return %out : memref<32xf32>
}
"""


def test_exec_past_its_timeout_is_a_one_line_error(tmp_path) -> None:
    path = tmp_path / "spin.mlir"
    path.write_text(SPIN_KERNEL)
    result = subprocess.run(
        [EMMY, "exec", str(path), "--timeout", "1"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1
    assert result.stderr == "error: the interpreter ran past the 1 s limit (--timeout)\n"


def test_a_timeout_is_a_positive_number_of_seconds() -> None:
    result = subprocess.run(
        [EMMY, "compile", "-c", "nn.ReLU()(torch.randn(4))", "--timeout", "0"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "argument --timeout: a positive number of seconds, got '0'" in result.stderr


def test_a_pass_that_fails_at_an_op_is_reported_at_its_source_line(
    monkeypatch, capsys, tmp_path
) -> None:
    """A pass raising `PassFailedException(message, op)` while `emmy compile` lowers is one
    located line with the message, not the exception's arguments as a tuple."""
    from xdsl.utils.exceptions import PassFailedException

    from emmy.tools.bench import differential

    def failing(module, level):
        op = next(o for o in module.walk() if o.name == "torch.relu")
        raise PassFailedException("cannot apply the schedule of @k_relu: a reason", op)

    monkeypatch.setattr(differential, "lower", failing)
    program = tmp_path / "program.py"
    program.write_text(
        "import torch\nfrom torch import nn\n\n"
        "class M(nn.Module):\n    def forward(self, x):\n        return torch.relu(x) * 2\n\n"
        "M()(torch.randn(4))\n"
    )
    assert cli.main(["compile", str(program), "--ir", "tile"]) == 1
    printed = capsys.readouterr().err
    assert printed.splitlines() == [
        f"{program}:6:22: error: lowering to tile failed: cannot apply the schedule of"
        " @k_relu: a reason",
        "        return torch.relu(x) * 2",
        "                     ^",
    ]
