"""emmy-opt driven in-process through `main`, and once as the installed command."""

import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

from emmy.tools.opt import main

REDUNDANT_ADDS = """\
func.func @twice(%x: f32) -> (f32, f32) {
  %a = arith.addf %x, %x : f32
  %b = arith.addf %x, %x : f32
  func.return %a, %b : f32, f32
}
"""


def emmy_opt(*args: str) -> tuple[int, str, str]:
    """Runs emmy-opt in this process: its exit status, standard output and standard error."""
    with redirect_stdout(StringIO()) as out, redirect_stderr(StringIO()) as err:
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def redundant_adds(tmp_path: Path) -> str:
    path = tmp_path / "redundant_adds.mlir"
    path.write_text(REDUNDANT_ADDS)
    return str(path)


def test_runs_flags_in_order_and_matches_the_pipeline(redundant_adds):
    status, flags_output, dumps = emmy_opt(redundant_adds, "--print-ir-after-all", "--cse", "--dce")
    assert status == 0
    assert dumps.index("IR Dump After cse") < dumps.index("IR Dump After dce")
    assert flags_output.count("arith.addf") == 1
    assert emmy_opt(redundant_adds, "-p", "cse,dce") == (0, flags_output, "")


def test_pipeline_and_flags_together_are_an_error(redundant_adds):
    status, output, errors = emmy_opt(redundant_adds, "-p", "cse", "--dce")
    assert (status, output) == (1, "")
    assert "not both" in errors


def test_unknown_pass_suggests_the_closest(redundant_adds):
    status, _, errors = emmy_opt(redundant_adds, "--lower-fused")
    assert status == 1
    assert errors == (
        "emmy-opt: error: unknown pass or option '--lower-fused'; did you mean "
        "'--lower-fused-to-loop'?\n"
    )


def test_verifier_error_points_at_the_op(tmp_path: Path):
    path = tmp_path / "bad.mlir"
    path.write_text(REDUNDANT_ADDS.replace("func.return %a, %b : f32, f32", "func.return %a : f32"))
    status, output, errors = emmy_opt(str(path))
    assert (status, output) == (1, "")
    assert errors.startswith(f"{path}:4:3: error: 'func.return' op ")
    assert errors.endswith("  func.return %a : f32\n  ^\n")


def test_an_unclosed_complex_literal_is_a_parse_error(tmp_path: Path):
    """xDSL asserts the `)` of a complex element of a dense literal (the fuzzer's seed 297):
    a parse error at the token, not an internal one."""
    path = tmp_path / "bad.mlir"
    literal = "dense<[[1.0, 0.0], [0.0,(1.0, 0.0]]> : tensor<2x2xf32>"
    path.write_text(f"%u = prim.constant {literal}\n")
    status, output, errors = emmy_opt(str(path))
    assert (status, output) == (1, "")
    assert errors.startswith(f"{path}:1:53: error: expected ')', got ']'\n"), errors


def test_verify_diagnostics(tmp_path: Path):
    path = tmp_path / "annotated.mlir"
    path.write_text("// expected-error @+1 {{unknown op 'arith.nope'}}\n%0 = arith.nope\n")
    assert emmy_opt(str(path), "--verify-diagnostics")[0] == 0
    path.write_text("// expected-error @+1 {{something else}}\n%0 = arith.nope\n")
    status, _, errors = emmy_opt(str(path), "--verify-diagnostics")
    assert status == 1
    assert f'{path}:1:4: error: expected error "something else" was not produced' in errors
    assert f"{path}:2:6: error: unexpected error: unknown op 'arith.nope'" in errors


def test_a_plugin_registers_passes(tmp_path: Path, redundant_adds):
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "from dataclasses import dataclass\n"
        "from xdsl.passes import ModulePass\n"
        "from emmy.passes.registry import register_pass\n\n"
        "@dataclass(frozen=True)\n"
        "class Nothing(ModulePass):\n"
        '    """Does nothing, carefully."""\n'
        '    name = "test-plugin-nothing"\n'
        "    times: int = 1\n\n"
        "    def apply(self, ctx, op):\n"
        "        pass\n\n"
        "register_pass(Nothing)\n"
    )
    status, listing, _ = emmy_opt("--load-pass-plugin", str(plugin), "--list-passes")
    assert status == 0
    assert (
        "  test-plugin-nothing\n      Does nothing, carefully.\n      times: int = 1\n" in listing
    )
    status, output, _ = emmy_opt(
        "--load-pass-plugin", str(plugin), redundant_adds, "--test-plugin-nothing=times=2"
    )
    assert status == 0 and "func.func @twice" in output


def test_help_lists_pass_flags():
    status, help_text, _ = emmy_opt("--help")
    assert status == 0
    assert "--lower-fused-to-loop [OPTIONS]" in help_text


def test_command_reads_standard_input():
    result = subprocess.run(
        [Path(sys.executable).with_name("emmy-opt"), "--cse"],
        input=REDUNDANT_ADDS.replace("%x, %x", "%x, %y"),
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("<stdin>:2:")
    assert "Traceback" not in result.stderr


CHAIN = """\
func.func @chain(%x: f32) -> f32 {
  %a = arith.addf %x, %x : f32
  %b = arith.mulf %a, %a : f32
  func.return %b : f32
}
"""


def test_use_before_definition_is_reported_at_the_use_before_any_pass(tmp_path: Path):
    path = tmp_path / "swapped.mlir"
    lines = CHAIN.splitlines(keepends=True)
    path.write_text("".join([lines[0], lines[2], lines[1], lines[3], lines[4]]))
    status, output, errors = emmy_opt(str(path), "--lower-fused-to-loop", "--cse")
    assert (status, output) == (1, "")
    assert errors.startswith(
        f"{path}:2:3: error: 'arith.mulf' op operand #0 (%a) is used before its definition\n"
    )
    assert "pass" not in errors


def test_a_pass_that_breaks_dominance_is_named(tmp_path: Path):
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "from dataclasses import dataclass\n"
        "from xdsl.dialects import arith\n"
        "from xdsl.passes import ModulePass\n"
        "from emmy.passes.registry import register_pass\n\n"
        "@dataclass(frozen=True)\n"
        "class Hoist(ModulePass):\n"
        '    """Moves each arith.mulf to the top of its block, wrongly."""\n'
        '    name = "test-plugin-hoist"\n\n'
        "    def apply(self, ctx, op):\n"
        "        for mul in [o for o in op.walk() if isinstance(o, arith.MulfOp)]:\n"
        "            block = mul.parent_block()\n"
        "            mul.detach()\n"
        "            block.insert_op_before(mul, block.first_op)\n\n"
        "register_pass(Hoist)\n"
    )
    path = tmp_path / "chain.mlir"
    path.write_text(CHAIN)
    status, output, errors = emmy_opt(
        "--load-pass-plugin", str(plugin), str(path), "--test-plugin-hoist"
    )
    assert (status, output) == (1, "")
    assert errors.startswith(
        f"{path}:3:3: error: after pass 'test-plugin-hoist': 'arith.mulf' op operand #0 (%a) "
        "is used before its definition\n"
    )
