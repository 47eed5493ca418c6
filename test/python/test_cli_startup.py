"""What `emmy` loads before it answers: `--help` (of the command and of each subcommand),
`--version` and `exec` below Torch IR load neither PyTorch nor, where they do not run a
program, the interpreter; and the help texts say what the commands do."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from emmy.passes.pipelines import LEVELS
from emmy.tools.bench.tolerances import TF32_TOLERANCE, TOLERANCES

EMMY = Path(sys.executable).parent / "emmy"

HEAVY = re.compile(r"^(torch|emmy\.tools\.interpreter)(\.|$)")
"""The modules a command answers without: PyTorch (seconds to load) and the interpreter."""


ENTRY_POINT = "import sys; from emmy.tools.cli import main; sys.exit(main(sys.argv[1:]))"
"""What the installed `emmy` script runs."""


def imported(*args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Runs `emmy ARGS` in a fresh interpreter: its result and the modules it imported."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", ENTRY_POINT, *args],
        capture_output=True,
        text=True,
    )
    modules = {
        line.split("|")[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    return result, modules


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["compile", "--help"],
        ["run", "--help"],
        ["bench", "--help"],
        ["exec", "--help"],
    ],
    ids=" ".join,
)
def test_help_and_version_load_neither_torch_nor_the_interpreter(args):
    result, modules = imported(*args)
    assert result.returncode == 0, result.stderr
    assert "emmy.tools.cli" in modules
    assert not {m for m in modules if HEAVY.match(m)}


def test_the_command_help_imports_no_ir_at_all():
    result, modules = imported("--help")
    assert result.returncode == 0
    assert not {m for m in modules if m.startswith(("xdsl", "numpy", "emmy.dialects"))}


LOOP_IR = """
loop.kernel @double(%x: memref<4xf32>, %y: memref<4xf32>) {
  loop.for %i in 0 to 4 {
    %v = loop.load %x[%i] : memref<4xf32>
    %d = arith.addf %v, %v : f32
    loop.store %d, %y[%i] : memref<4xf32>
  }
}
func.func @forward(%x: memref<4xf32>) -> memref<4xf32> {
  %y = memref.alloc() : memref<4xf32>
  loop.launch @double(%x, %y) : memref<4xf32>, memref<4xf32>
  func.return %y : memref<4xf32>
}
"""


def test_exec_below_torch_ir_runs_without_torch(tmp_path):
    path = tmp_path / "double.mlir"
    path.write_text(LOOP_IR)
    result, modules = imported("exec", str(path))
    assert result.returncode == 0, result.stderr
    assert "#0 memref<4xf32>: 4 float32" in result.stdout
    assert "emmy.tools.interpreter.run" in modules
    assert not {m for m in modules if m == "torch" or m.startswith("torch.")}


def test_version_names_emmy_xdsl_and_torch_as_emmy_opt_does():
    result = subprocess.run([EMMY, "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout == (
        f"emmy {version('emmy')} (xDSL {version('xdsl')}, PyTorch {version('torch')})\n"
    )
    opt = subprocess.run([EMMY.with_name("emmy-opt"), "--version"], capture_output=True, text=True)
    assert f"(emmy {version('emmy')}, xDSL {version('xdsl')})" in opt.stdout


def help_text(*args: str) -> str:
    result = subprocess.run([EMMY, *args, "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    return " ".join(result.stdout.split())  # as one line, whatever argparse's wrapping


def test_help_lists_every_command_and_version():
    text = help_text()
    for command in ("compile", "run", "bench", "exec", "--version"):
        assert command in text


def test_run_help_names_the_six_levels_and_every_tolerance():
    text = help_text("run")
    assert f"each of its {len(LEVELS)} levels ({', '.join(LEVELS)})" in text
    for dtype, (rtol, atol) in TOLERANCES.items():
        assert f"{dtype} {rtol:g}, {atol:g}" in text
    assert f"within {TF32_TOLERANCE:g} of the output's largest magnitude" in text
    assert "atol + rtol * |eager|" in text
    assert "start is reported on stderr" in text


def test_compile_help_names_the_levels_and_the_cache():
    text = help_text("compile")
    assert f"the level to print: {', '.join(LEVELS)}, or cuda" in text
    for variable in ("EMMY_CACHE_DIR", "XDG_CACHE_HOME", "EMMY_NO_CACHE=1"):
        assert variable in text


def test_exec_help_says_what_random_inputs_are():
    text = help_text("exec")
    assert "at any level from torch to kernel" in text
    assert "below its size" in text
