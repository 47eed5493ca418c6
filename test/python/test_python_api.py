"""`emmy.compile`: a module compiled for its example inputs runs like the module (on the CPU
here: the interpreters; the GPU path is in test_gpu_programs.py), and shows every level."""

import subprocess
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import emmy
from emmy.passes.pipelines import LEVELS
from emmy.tools import compiled_graph
from emmy.tools.bench import differential
from emmy.tools.frontend.program import FrontendError
from emmy.tools.runtime.host import HostProgram


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.RMSNorm(dim)
        self.proj = nn.Linear(dim, 2 * dim)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        gate, up = self.proj(self.norm(x)).chunk(2, dim=-1)
        return {"out": F.silu(gate) * up, "rows": x.sum(-1)}


def test_compiled_module_matches_pytorch_on_fresh_inputs():
    block = Block(16).eval()
    compiled = emmy.compile(block, torch.randn(4, 16))
    x = torch.randn(4, 16)
    got, want = compiled(x), block(x)
    assert set(got) == {"out", "rows"}
    for name in want:
        torch.testing.assert_close(got[name], want[name], rtol=1e-5, atol=1e-5)


def test_parameters_updated_after_compiling_are_used():
    linear = nn.Linear(8, 3)
    compiled = emmy.compile(linear, torch.randn(2, 8))
    with torch.no_grad():
        linear.weight.mul_(-2.0)
    x = torch.randn(2, 8)
    torch.testing.assert_close(compiled(x), linear(x).detach(), rtol=1e-5, atol=1e-5)


class CachedStep(nn.Module):
    """A decode step's state: a cache written at `positions` in place (a non-persistent
    buffer), a step counter (a persistent one) and a running sum in the caller's tensor."""

    def __init__(self, dim: int, length: int):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.register_buffer("cache", torch.zeros(length, dim), persistent=False)
        self.register_buffer("steps", torch.zeros(()))

    def forward(self, x, positions, total):
        self.cache.index_copy_(0, positions, self.proj(x))
        self.steps.add_(1)
        total.add_(x.sum(0))
        return self.cache.softmax(-1).sum(0) * self.steps


def test_mutated_buffers_and_inputs_are_written_back_as_in_eager():
    """`emmy.compile` of a module that mutates its buffers and an input in place (a KV
    cache) writes their new values back after each call, so that calls see each other's
    writes as in eager."""
    torch.manual_seed(0)
    eager, compiled_model = CachedStep(8, 6), CachedStep(8, 6)
    compiled_model.load_state_dict(eager.state_dict())
    compiled = emmy.compile(compiled_model, torch.randn(2, 8), torch.tensor([0, 1]), torch.zeros(8))
    eager_total, compiled_total = torch.zeros(8), torch.zeros(8)
    with torch.no_grad():
        for positions in ([4, 2], [0, 5], [2, 3]):
            x, at = torch.randn(2, 8), torch.tensor(positions)
            torch.testing.assert_close(compiled(x, at, compiled_total), eager(x, at, eager_total))
            torch.testing.assert_close(compiled_model.cache, eager.cache)
            torch.testing.assert_close(compiled_total, eager_total)
    assert compiled_model.steps.item() == eager.steps.item() == 3


class Normalise(nn.Module):
    def forward(self, image, bias):
        return (image.float() / 255 - 0.5).permute(2, 0, 1) + bias


class WrapAround(nn.Module):
    def forward(self, image):
        return (image + 200).float()  # wraps at 256: uint8 arithmetic


@pytest.mark.parametrize("level", ["loop", "kernel"])
def test_a_uint8_image_the_module_only_converts_is_read_as_int32(level):
    """A uint8 input that the module only converts (an image normalised in the model) is an
    i32 argument, passed converted; uint8 arithmetic, which Torch IR has no type for, is
    refused at the input, saying where uint8 is taken."""
    image = torch.randint(0, 256, (8, 8, 3), dtype=torch.uint8)
    compiled = emmy.compile(Normalise(), image, torch.randn(3, 1, 1), cpu_level=level)
    assert "%image: tensor<8x8x3xi32>" in compiled.ir("torch")
    image, bias = torch.randint(0, 256, (8, 8, 3), dtype=torch.uint8), torch.randn(3, 1, 1)
    torch.testing.assert_close(compiled(image, bias), Normalise()(image, bias))
    with pytest.raises(FrontendError, match=r"dtype torch.uint8 is not supported \(an input"):
        emmy.compile(WrapAround(), image)


class CacheUpdate(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cache", torch.zeros(6, 8), persistent=False)

    def forward(self, x, positions):
        self.cache.index_copy_(0, positions, x)
        return self.cache * 2


@pytest.mark.parametrize("level", ["loop", "kernel"])
def test_a_mutated_buffer_is_computed_in_place(level):
    """The cache's new value is computed in the cache's own buffer (`place-results-in-
    arguments`: its old value is dead once the call returns), not in a new one copied back."""
    compiled_model, eager = CacheUpdate(), CacheUpdate()
    compiled = emmy.compile(
        compiled_model, torch.randn(2, 8), torch.tensor([0, 1]), cpu_level=level
    )
    forward = compiled.ir("loop").split("func.func @forward")[1]
    assert "func.return %b_cache," in forward
    assert "%index_copy = memref.alloc()" not in forward
    for positions in ([4, 2], [5, 0]):
        x = torch.randn(2, 8)
        torch.testing.assert_close(
            compiled(x, torch.tensor(positions)), eager(x, torch.tensor(positions))
        )
        torch.testing.assert_close(compiled_model.cache, eager.cache)


def test_bf16_outputs_keep_their_dtype():
    model = nn.Sequential(nn.Linear(32, 32), nn.GELU()).to(torch.bfloat16)
    compiled = emmy.compile(model, torch.randn(8, 32, dtype=torch.bfloat16))
    x = torch.randn(8, 32, dtype=torch.bfloat16)
    got = compiled(x)
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got, model(x).detach(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("level", ["tile", "kernel"])
def test_cpu_level_chooses_the_interpreter(level):
    """The lower levels run in the SIMT emulator: the same answer as PyTorch."""
    model = nn.Softmax(dim=-1)
    compiled = emmy.compile(model, torch.randn(3, 40), cpu_level=level)
    x = torch.randn(3, 40)
    torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-6)


def test_ir_shows_every_level_and_the_cuda():
    compiled = emmy.compile(nn.ReLU(), torch.randn(4, 8))
    for level in LEVELS:
        text = compiled.ir(level)
        assert f"{level}." in text, level
    assert "__global__" in compiled.ir("cuda")
    with pytest.raises(ValueError, match="unknown level 'ptx'"):
        compiled.ir("ptx")


def test_unknown_or_bad_options_are_errors_that_list_the_options():
    with pytest.raises(ValueError, match="unknown emmy option 'block'; the options are cpu_level"):
        emmy.compile(nn.ReLU(), torch.randn(4), block=128)
    with pytest.raises(ValueError, match="cpu_level must be one of torch, prim"):
        emmy.compile(nn.ReLU(), torch.randn(4), cpu_level="ptx")
    with pytest.raises(ValueError, match="cuda_graphs must be True or False, not 'yes'"):
        emmy.compile(nn.ReLU(), torch.randn(4), cuda_graphs="yes")


class Middle(nn.Module):
    def forward(self, x):
        return torch.special.ndtri(x)  # the line the error names


def test_an_unsupported_op_is_an_error_at_the_users_line():
    with pytest.raises(FrontendError) as caught:
        emmy.compile(Middle(), torch.randn(5))
    message = str(caught.value)
    line = next(
        number
        for number, text in enumerate(open(__file__).read().splitlines(), 1)
        if "the line the error names" in text
    )
    assert f"{__file__}:{line}:" in message
    assert "unsupported PyTorch op 'aten.special_ndtri.default'" in message


def test_inputs_of_another_shape_are_refused():
    compiled = emmy.compile(nn.ReLU(), torch.randn(4, 8))
    with pytest.raises(ValueError, match="4x8"):
        compiled(torch.randn(4, 9))


def test_import_emmy_does_not_load_pytorch():
    code = "import sys, emmy; print('torch' in sys.modules, callable(emmy.compile))"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert shown.stdout.split() == ["False", "True"], shown.stderr


def test_emmy_dump_dir_gets_every_pass_of_each_lowering(tmp_path, monkeypatch):
    monkeypatch.setenv("EMMY_DUMP_DIR", str(tmp_path))
    compiled = emmy.compile(nn.Tanh(), torch.randn(3, 7, 2))
    x = torch.randn(3, 7, 2)
    torch.testing.assert_close(compiled(x), torch.tanh(x))
    (run,) = tmp_path.iterdir()
    assert run.name == "001-torch-to-loop"
    steps = sorted(p.name for p in run.iterdir())
    assert steps[0] == "000-input.mlir" and steps[-1] == "012-cse.mlir"
    assert "loop.kernel" in (run / steps[-1]).read_text()


def test_a_lowered_program_is_read_back_from_the_disk_cache(tmp_path, monkeypatch):
    """A later process (here: the in-process sharing forgotten) parses the lowered program
    back instead of lowering it."""
    monkeypatch.setenv("EMMY_CACHE_DIR", str(tmp_path))
    model, x = nn.Sigmoid(), torch.randn(2, 3, 5)
    first = emmy.compile(model, x)(x)
    (entry,) = (tmp_path / "loop-ir").iterdir()

    def lowering_again(*args):
        raise AssertionError("lowered again")

    monkeypatch.setattr(compiled_graph, "_COMPILED", {})
    monkeypatch.setattr(differential, "lower", lowering_again)
    torch.testing.assert_close(emmy.compile(model, x)(x), first)
    entry.write_text(entry.read_text().replace("loop.kernel", "loop.kernal"))
    monkeypatch.setattr(compiled_graph, "_COMPILED", {})
    with pytest.raises(AssertionError, match="lowered again"):  # a damaged entry is not used
        emmy.compile(model, x)(x)


def test_the_cuda_and_the_host_plan_are_read_back_without_any_ir(tmp_path, monkeypatch):
    """What the GPU runtime needs, the kernels' CUDA and the host function's plan (plain data:
    `HostProgram.plan_text`), is cached apart from the Kernel IR, whose unrolled tensor-core
    bodies take longer to parse than to lower again: a later process reads both back and
    lowers nothing, and runs the launches the Kernel IR has."""
    monkeypatch.setenv("EMMY_CACHE_DIR", str(tmp_path))
    model, x = nn.Softmax(-1), torch.randn(4, 8)
    graph = emmy.compile(model, x).graph
    source, plan = graph.cuda_source(), graph.host_plan()
    assert "kernel.thread_id" in graph.ir("kernel") and "kernel.thread_id" not in plan
    kept = HostProgram.from_plan_text(plan, source)
    assert kept.launches == HostProgram(graph.module("kernel")).launches
    assert kept.cuda_source() == source

    def lowering_again(*args):
        raise AssertionError("lowered again")

    monkeypatch.setattr(compiled_graph, "_COMPILED", {})
    monkeypatch.setattr(differential, "lower", lowering_again)
    later = emmy.compile(model, x).graph
    assert later.cuda_source() == source
    assert later.host_plan() == plan
