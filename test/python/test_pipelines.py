"""The named pipelines and `run_passes`: the levels they reach, and EMMY_DUMP_DIR's files."""

import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from emmy.dialects import make_context
from emmy.passes.pipelines import (
    DUMP_DIR_VARIABLE,
    LEVELS,
    TorchToLoopPipeline,
    level_of,
    passes_to,
    printed,
    run_passes,
)
from emmy.tools.bench.differential import check_levels, lower
from emmy.tools.frontend.program import load_program

SOFTMAX = """\
func.func @forward(%input: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %softmax = torch.softmax %input dim 2 : tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  func.return %softmax : tensor<1x4x8xf32>
}
"""


def torch_ir() -> ModuleOp:
    return Parser(make_context(), SOFTMAX).parse_module()


def at_level(level: str) -> ModuleOp:
    module = torch_ir()
    run_passes(make_context(), module, passes_to(level), "test")
    return module


@pytest.mark.parametrize("level", LEVELS)
def test_level_of_names_the_level_a_pipeline_reaches(level: str, monkeypatch):
    monkeypatch.delenv(DUMP_DIR_VARIABLE, raising=False)
    reached, op = level_of(at_level(level))
    assert reached == level
    assert op.name.startswith(f"{level}.")


def test_level_of_plain_ir_is_none():
    module = Parser(make_context(), "func.func @f() {\n  func.return\n}\n").parse_module()
    assert level_of(module) is None


def test_passes_from_a_level_are_the_rest_of_the_pipeline():
    from_torch = passes_to("kernel")
    from_loop = passes_to("kernel", start="loop")
    assert [p.name for p in from_loop] == [p.name for p in from_torch[-len(from_loop) :]]
    assert from_loop[0].name == "choose-tile-schedule"
    assert passes_to("loop", start="loop") == []


def test_dump_dir_gets_one_numbered_folder_per_run(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(DUMP_DIR_VARIABLE, str(tmp_path))
    module = torch_ir()
    TorchToLoopPipeline().apply(make_context(), module)
    run_passes(make_context(), torch_ir(), passes_to("prim"), "to-prim")
    run_passes(make_context(), torch_ir(), [], "nothing")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["001-torch-to-loop", "002-to-prim"]
    files = sorted(p.name for p in (tmp_path / "001-torch-to-loop").iterdir())
    assert files == [
        "000-input.mlir",
        *(f"{i + 1:03}-{p.name}.mlir" for i, p in enumerate(passes_to("loop"))),
    ]
    assert (tmp_path / "001-torch-to-loop" / "000-input.mlir").read_text() == printed(torch_ir())
    assert (tmp_path / "001-torch-to-loop" / files[-1]).read_text() == printed(module)


def test_a_failing_pass_leaves_its_ir_and_its_error(tmp_path: Path, monkeypatch):
    class Fails(ModulePass):
        name = "test-fails"

        def apply(self, ctx, op):
            op.body.block.first_op.attributes["touched"] = op.body.block.first_op.sym_name
            raise PassFailedException("refused")

    monkeypatch.setenv(DUMP_DIR_VARIABLE, str(tmp_path / "dumps"))
    with pytest.raises(PassFailedException, match="refused"):
        run_passes(make_context(), torch_ir(), [*passes_to("prim"), Fails()], "failing")
    folder = tmp_path / "dumps" / "001-failing"
    assert sorted(p.name for p in folder.iterdir()) == [
        "000-input.mlir",
        "001-decompose-torch.mlir",
        "002-test-fails-failed.mlir",
    ]
    assert 'touched = "forward"' in (folder / "002-test-fails-failed.mlir").read_text()


def test_lower_dumps_every_pass_of_its_level(tmp_path: Path, monkeypatch):
    from emmy.tools.bench.differential import lower

    monkeypatch.setenv(DUMP_DIR_VARIABLE, str(tmp_path))
    kernel_ir = lower(torch_ir(), "kernel")
    (folder,) = tmp_path.iterdir()
    assert folder.name == "001-torch-to-kernel"
    files = sorted(p.name for p in folder.iterdir())
    assert len(files) == 1 + len(passes_to("kernel"))
    assert (folder / files[-1]).read_text() == printed(kernel_ir)


def test_emmy_opt_imports_neither_torch_nor_the_interpreter(tmp_path: Path):
    source = tmp_path / "softmax.mlir"
    source.write_text(SOFTMAX)
    script = (
        "import sys\n"
        "from emmy.tools.opt import main\n"
        f"status = main([{str(source)!r}, '--torch-to-kernel', '--dump-dir',"
        f" {str(tmp_path / 'dumps')!r}, '-t', 'cuda', '-o', '/dev/null'])\n"
        "print(status, sorted(m for m in sys.modules if m.split('.')[0] == 'torch'"
        " or m.startswith('emmy.tools.interpreter')))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout == "0 []\n", result.stderr


LAYERS = """
class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(64)
        self.up = nn.Linear(64, 128, bias=False)
        self.down = nn.Linear(128, 64, bias=False)
    def forward(self, x):
        return x + self.down(F.silu(self.up(self.norm(x))))
DT = torch.bfloat16
nn.Sequential(Layer(), Layer(), Layer()).to(DT)(torch.randn(2, 70, 64, dtype=DT))
"""


def test_identical_layers_launch_one_set_of_kernels():
    """Three identical layers lower to three launches of each of one layer's kernels (named
    for the first layer), and still match eager in the SIMT emulator."""
    program = load_program(LAYERS, "<source>")
    torch_ir = program.to_torch_ir()
    kernel_ir = lower(torch_ir, "kernel")
    funcs = [op.sym_name.data for op in kernel_ir.walk() if op.name == "kernel.func"]
    launches = [
        op.kernel.root_reference.data for op in kernel_ir.walk() if op.name == "kernel.launch"
    ]
    assert len(launches) == 3 * len(funcs)
    assert sorted(set(launches)) == sorted(funcs)
    reports = check_levels(program, torch_ir, ("kernel",), seed=3)
    assert all(r.passed for r in reports), [(r.max_abs_error, r.max_rel_error) for r in reports]
