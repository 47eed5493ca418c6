"""Reductions whose combiner is a region (`prim.multi_reduce`, loops with several
accumulators), at every level against PyTorch on fresh random inputs: argmax/argmin with their
index in one pass (ties and NaN as torch), online softmax's (max, rescaled sum) and Welford's
(mean, M2, count), the last two written as Tensor IR and lowered to Kernel IR, which the SIMT
emulator runs."""

import numpy as np
import pytest
import torch
from xdsl.parser import Parser
from xdsl.transforms.canonicalize import CanonicalizePass

from emmy.dialects import make_context, tile
from emmy.passes.lower_fused_to_loop import LowerFusedToLoopPass
from emmy.passes.pipelines import LEVELS, passes_to, run_passes
from emmy.tools.bench.differential import EXECUTABLE_LEVELS, check_levels, lower
from emmy.tools.diagnostics import verify
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter.run import run_module

PRIM_LEVELS = LEVELS[LEVELS.index("prim") :]


def lower_prim(text: str, level: str):
    module = Parser(make_context(), text).parse_module()
    run_passes(make_context(), module, passes_to(level, "prim"), f"prim-to-{level}")
    verify(module)
    return module


def run_prim_levels(text: str, inputs: list[np.ndarray]) -> dict[str, list[np.ndarray]]:
    return {level: run_module(lower_prim(text, level), inputs) for level in PRIM_LEVELS}


ARG_PROGRAM = """
class Arg(nn.Module):
    def forward(self, x):
        return (x.argmax(dim={dim}), x.argmin(dim={dim}, keepdim=True), x.argmax(),
                torch.round(x).argmin(dim={dim}), torch.round(x).argmax(dim={dim}))
Arg()(torch.randn({shape}, dtype=DT))
"""


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize(
    "shape,dim",
    [("5, 7", 1), ("3, 300", -1), ("2, 3, 40", 1), ("1100", 0), ("4, 1", 1), ("6, 33", 0)],
)
def test_argmax_argmin_match_eager_at_every_level(shape, dim, dtype):
    """Rounded values tie often: the first position of the extreme wins, as in torch."""
    source = ARG_PROGRAM.format(dim=dim, shape=shape).replace("DT", f"torch.{dtype}")
    program = load_program(f"import torch\nfrom torch import nn\n{source}", "<source>")
    torch_ir = program.to_torch_ir()
    prim_text = str(lower(torch_ir, "prim"))
    assert "prim.multi_reduce" in prim_text and "torch.argmax" not in prim_text
    for seed in (1, 2):
        reports = check_levels(program, torch_ir, EXECUTABLE_LEVELS, seed=seed)
        assert [r.level for r in reports if not r.passed] == [], reports


def test_argmax_of_integers_match_eager():
    source = """import torch
from torch import nn
class Arg(nn.Module):
    def forward(self, x):
        i = (x * 3).to(torch.int32)
        return i.argmax(dim=1), i.argmin(dim=0), i.to(torch.int64).argmax(dim=1)
Arg()(torch.randn(6, 45))
"""
    program = load_program(source, "<source>")
    reports = check_levels(program, program.to_torch_ir(), EXECUTABLE_LEVELS, seed=4)
    assert [r.level for r in reports if not r.passed] == [], reports


@pytest.mark.parametrize("largest", [True, False])
def test_argmax_picks_nan_and_the_first_tie_as_torch(largest):
    x = torch.randn(6, 70)
    x[0, 5] = x[0, 40] = 100.0 if largest else -100.0  # a tie, far apart
    x[1, 64] = x[1, 3] = float("nan")  # NaN beats every number; the first one wins
    x[2, :] = 1.0  # all equal
    x[3, 69] = float("nan")  # NaN last
    x[4, :] = float("-inf") if largest else float("inf")  # all the init's value
    source = f"""import torch
from torch import nn
class Arg(nn.Module):
    def forward(self, x):
        return x.{"argmax" if largest else "argmin"}(dim=1)
Arg()(torch.randn(6, 70))
"""
    program = load_program(source, "<source>")
    torch_ir = program.to_torch_ir()
    expected = (x.argmax(1) if largest else x.argmin(1)).numpy()
    for level in EXECUTABLE_LEVELS:
        (got,) = run_module(lower(torch_ir, level), [x.numpy()])
        np.testing.assert_array_equal(got, expected, err_msg=level)


ONLINE_SOFTMAX = """
func.func @forward(%x: tensor<ROWSxCOLSxf32>) -> (tensor<ROWSxf32>, tensor<ROWSxf32>) {
  %ones = prim.map(%x) : (tensor<ROWSxCOLSxf32>) -> tensor<ROWSxCOLSxf32> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    prim.yield %one : f32
  }
  %m, %l = prim.multi_reduce (%x, %ones) axes [1] init (-inf, 0.0)
      : (tensor<ROWSxCOLSxf32>, tensor<ROWSxCOLSxf32>) -> (tensor<ROWSxf32>, tensor<ROWSxf32>) {
  ^bb0(%m0: f32, %l0: f32, %m1: f32, %l1: f32):
    %one = arith.constant 1.0 : f32
    %m2 = arith.maximumf %m0, %m1 : f32
    %d0 = arith.subf %m0, %m2 : f32
    %d1 = arith.subf %m1, %m2 : f32
    %e0 = math.exp %d0 : f32
    %e1 = math.exp %d1 : f32
    %same0 = arith.cmpf oeq, %m0, %m2 : f32
    %same1 = arith.cmpf oeq, %m1, %m2 : f32
    %s0 = arith.select %same0, %one, %e0 : f32
    %s1 = arith.select %same1, %one, %e1 : f32
    %a0 = arith.mulf %l0, %s0 : f32
    %a1 = arith.mulf %l1, %s1 : f32
    %l2 = arith.addf %a0, %a1 : f32
    prim.yield %m2, %l2 : f32, f32
  }
  func.return %m, %l : tensor<ROWSxf32>, tensor<ROWSxf32>
}
"""


@pytest.mark.parametrize("rows,cols", [(4, 8), (3, 1000), (1, 5000)])
def test_online_softmax_max_and_sum_match_torch(rows, cols):
    text = ONLINE_SOFTMAX.replace("ROWS", str(rows)).replace("COLS", str(cols))
    x = torch.randn(rows, cols) * 4
    x[0, 0] = float("-inf")  # a masked score: the sum must not become NaN
    m = x.max(1).values
    l_expected = torch.exp(x - m[:, None]).sum(1)
    for level, (got_m, got_l) in run_prim_levels(text, [x.numpy()]).items():
        np.testing.assert_array_equal(got_m, m.numpy(), err_msg=level)
        np.testing.assert_allclose(got_l, l_expected.numpy(), rtol=2e-5, err_msg=level)


WELFORD = """
func.func @forward(%x: tensor<ROWSxCOLSxf32>) -> (tensor<ROWSxf32>, tensor<ROWSxf32>) {
  %zeros = prim.map(%x) : (tensor<ROWSxCOLSxf32>) -> tensor<ROWSxCOLSxf32> {
  ^bb0(%v: f32):
    %zero = arith.constant 0.0 : f32
    prim.yield %zero : f32
  }
  %ones = prim.map(%x) : (tensor<ROWSxCOLSxf32>) -> tensor<ROWSxCOLSxf32> {
  ^bb0(%v: f32):
    %one = arith.constant 1.0 : f32
    prim.yield %one : f32
  }
  %mean, %m2, %n = prim.multi_reduce (%x, %zeros, %ones) axes [1] init (0.0, 0.0, 0.0)
      : (tensor<ROWSxCOLSxf32>, tensor<ROWSxCOLSxf32>, tensor<ROWSxCOLSxf32>)
      -> (tensor<ROWSxf32>, tensor<ROWSxf32>, tensor<ROWSxf32>) {
  ^bb0(%mean0: f32, %m20: f32, %n0: f32, %mean1: f32, %m21: f32, %n1: f32):
    %one = arith.constant 1.0 : f32
    %n = arith.addf %n0, %n1 : f32
    %at_least_one = arith.maximumf %n, %one : f32
    %delta = arith.subf %mean1, %mean0 : f32
    %share = arith.divf %n1, %at_least_one : f32
    %step = arith.mulf %delta, %share : f32
    %mean = arith.addf %mean0, %step : f32
    %spread = arith.mulf %delta, %step : f32
    %cross = arith.mulf %spread, %n0 : f32
    %both = arith.addf %m20, %m21 : f32
    %m2 = arith.addf %both, %cross : f32
    prim.yield %mean, %m2, %n : f32, f32, f32
  }
  %var = prim.map(%m2, %n) : (tensor<ROWSxf32>, tensor<ROWSxf32>) -> tensor<ROWSxf32> {
  ^bb0(%s: f32, %count: f32):
    %one = arith.constant 1.0 : f32
    %bessel = arith.subf %count, %one : f32
    %v = arith.divf %s, %bessel : f32
    prim.yield %v : f32
  }
  func.return %var, %mean : tensor<ROWSxf32>, tensor<ROWSxf32>
}
"""


@pytest.mark.parametrize("rows,cols", [(4, 8), (6, 777), (2, 4096)])
def test_welford_variance_and_mean_match_torch(rows, cols):
    text = WELFORD.replace("ROWS", str(rows)).replace("COLS", str(cols))
    x = torch.randn(rows, cols) * 3 + 100  # a large mean: the two-pass form's cancellation case
    var, mean = torch.var_mean(x, dim=1)
    for level, (got_var, got_mean) in run_prim_levels(text, [x.numpy()]).items():
        np.testing.assert_allclose(got_mean, mean.numpy(), rtol=1e-5, err_msg=level)
        np.testing.assert_allclose(got_var, var.numpy(), rtol=1e-3, err_msg=level)


def test_a_long_reduction_with_a_combiner_region_stays_in_one_block():
    """One long row would be split across blocks with atomics for a named combiner; a combiner
    region's state has no atomic, so its loop goes to the threads of one block."""
    text = ONLINE_SOFTMAX.replace("ROWS", "1").replace("COLS", "100000")
    tiled = lower_prim(text, "tile")
    reductions = [op for op in tiled.walk() if isinstance(op, tile.ForOp) and op.is_reduction]
    assert [op.mapping.data for op in reductions] == ["thread"]


def test_a_unit_reduction_folds_the_combiner_into_the_init():
    """With unit dims kept, the one-trip loop of a size-1 axis folds into its body combined
    with the inits (canonicalize), which gives the element itself."""
    text = ONLINE_SOFTMAX.replace("ROWS", "3").replace("COLS", "1")
    module = lower_prim(text, "fused")
    run_passes(
        make_context(),
        module,
        [LowerFusedToLoopPass(keep_unit_dims=True), CanonicalizePass()],
        "fused-to-loop",
    )
    assert not [op for op in module.walk() if op.name == "loop.for" and op.is_reduction]
    x = np.random.default_rng(0).standard_normal((3, 1)).astype(np.float32)
    got_m, got_l = run_module(module, [x])
    np.testing.assert_array_equal(got_m, x[:, 0])
    np.testing.assert_array_equal(got_l, np.ones(3, np.float32))


GPU_ARG_PROGRAM = """import torch
from torch import nn
class Arg(nn.Module):
    def forward(self, x):
        return x.argmax(dim=-1), x.argmin(dim=-1), x.argmax()
Arg()(torch.randn({shape}, dtype=torch.{dtype}))
"""


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(16, 50257), (1, 300001), (512, 96)])
def test_argmax_on_the_gpu_matches_eager(shape, dtype):
    """Logits-sized rows, one long row (a block's threads and warps), many short rows; values
    rounded to a few levels tie often, and NaNs sit in some rows."""
    from emmy.tools.runtime.host import HostProgram  # noqa: PLC0415

    text = GPU_ARG_PROGRAM.format(shape=", ".join(map(str, shape)), dtype=dtype)
    kernels = HostProgram(lower(load_program(text, "<source>").to_torch_ir(), "kernel"))
    generator = torch.Generator(device="cuda").manual_seed(3)
    x = torch.randn(shape, device="cuda", generator=generator).mul(2).round()
    x = x.to(getattr(torch, dtype))
    x[::5, -1] = float("nan")
    got = kernels([x], poison=True)
    expected = [x.argmax(dim=-1), x.argmin(dim=-1), x.argmax()]
    for value, want in zip(got, expected):
        torch.testing.assert_close(value, want, rtol=0, atol=0)
