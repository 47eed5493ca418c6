"""loop.contract, numerically: matrix products that stay structured at the Loop level, at
every level on the CPU interpreters against PyTorch eager on fresh random inputs (fp32, bf16,
fp16), and the Loop interpreter's loop.contract against numpy and against its expansion."""

import numpy as np
import pytest
from corpus import assert_every_level_matches_eager, with_dtype
from launched import launched_kernels
from xdsl.parser import Parser

from emmy.dialects import make_context
from emmy.passes.expand_loop_contract import ExpandLoopContractPass
from emmy.tools.bench.differential import lower
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter.run import find_function, random_inputs, run_module

SWIGLU = """
class SwiGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(16, 24, bias=False)
        self.up = nn.Linear(16, 24, bias=False)
        self.down = nn.Linear(24, 16, bias=False)
    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))
SwiGLU().to(DT)(torch.randn(2, 3, 16, dtype=DT))
"""

PROGRAMS: dict[str, tuple[str, list[str]]] = {
    "linear_bias": (
        "nn.Linear(24, 16).to(DT)(torch.randn(5, 24, dtype=DT))",
        ["(%i0, %i1) in [5, 16], k in 24, %acc = sum %input[d0, k] * %p_weight[d1, k]"],
    ),
    "linear_3d_input": (
        "nn.Linear(24, 16).to(DT)(torch.randn(2, 3, 24, dtype=DT))",
        ["in [2, 3, 16], k in 24, %acc = sum %input[d0, d1, k] * %p_weight[d2, k]"],
    ),
    "linear_one_row": (
        "nn.Linear(24, 16).to(DT)(torch.randn(1, 24, dtype=DT))",
        ["in [1, 16], k in 24, %acc = sum %input[d0, k] * %p_weight[d1, k]"],
    ),
    "linear_gelu": (
        "nn.Sequential(nn.Linear(16, 32), nn.GELU()).to(DT)(torch.randn(4, 16, dtype=DT))",
        ["in [4, 32], k in 16, %acc = sum %input[d0, k] * %p_0_weight[d1, k]"],
    ),
    "matmul_broadcast_batch": (
        """
class Product(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
Product()(torch.randn(2, 3, 5, 7, dtype=DT), torch.randn(3, 7, 4, dtype=DT))
""",
        ["in [2, 3, 5, 4], k in 7, %acc = sum %a[d0, d1, d2, k] * %b[d1, k, d3]"],
    ),
    "bmm_transposed_rhs": (
        """
class Scores(nn.Module):
    def forward(self, q, k):
        return torch.bmm(q, k.transpose(1, 2)) * 0.25
Scores()(torch.randn(2, 5, 8, dtype=DT), torch.randn(2, 6, 8, dtype=DT))
""",
        ["in [2, 5, 6], k in 8, %acc = sum %q[d0, d1, k] * %k[d0, d2, k]"],
    ),
    "matrix_vector": (
        """
class Products(nn.Module):
    def forward(self, a, v, w):
        return torch.relu(a @ v), v @ w
Products()(torch.randn(5, 7, dtype=DT), torch.randn(7, dtype=DT), torch.randn(7, 4, dtype=DT))
""",
        [
            "in [5, 1], k in 7, %acc = sum %a[d0, k] * %v[k]",
            "in [1, 4], k in 7, %acc = sum %v[k] * %w[k, d1]",
        ],
    ),
    "projection_with_residual": (
        """
class Projection(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 4, bias=False)
    def forward(self, h, x):
        return x + self.proj(h).reshape(2, 3, 4)
Projection().to(DT)(torch.randn(6, 8, dtype=DT), torch.randn(2, 3, 4, dtype=DT))
""",
        ["in [6, 4], k in 8, %acc = sum %h[d0, k] * %p_proj_weight[d1, k]"],
    ),
    "swiglu": (
        SWIGLU,
        [
            # gate and up, siblings: one contract of both weights
            "in [2, 3, 24], k in 16, (%acc0, %acc1) = sum %x[d0, d1, k] * "
            "(%p_gate_weight, %p_up_weight)[d2, k]",
            "in [6, 16], k in 24, %acc = sum %0[d0, k] * %p_down_weight[d1, k]",
        ],
    ),
    # A norm's scaling would make a computed operand: the norm's kernel materializes the
    # scaled rows, which the Linear's loop.contract reads in place.
    "rms_norm_linear": (
        "nn.Sequential(nn.RMSNorm(16), nn.Linear(16, 8)).to(DT)(torch.randn(4, 16, dtype=DT))",
        ["in [4, 8], k in 16, %acc = sum %rms_norm[d0, k] * %p_1_weight[d1, k]"],
    ),
    # An output projection of attention's [B, H, S, D] output transposed and merged to [B, S,
    # H * D], or of a contiguous [B, S, H, D] merged: k spans two dims of the buffer, which no
    # loop.contract reads in place, so another kernel materializes the merged rows first.
    "merged_heads_projection": (
        """
class OutputProjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.o = nn.Linear(12, 5, bias=False)
    def forward(self, y, z):
        b, h, s, d = y.shape
        return self.o(y.transpose(1, 2).reshape(b, s, h * d)), self.o(z.reshape(b, s, h * d))
OutputProjection().to(DT)(torch.randn(2, 3, 7, 4, dtype=DT), torch.randn(2, 7, 3, 4, dtype=DT))
""",
        [
            "in [14, 5], k in 12, %acc = sum %0[d0, k] * %p_o_weight[d1, k]",
            "in [14, 5], k in 12, %acc = sum %0[d0, k] * %p_o_weight[d1, k]",
        ],
    ),
    # Projections split into heads and transposed to [B, H, S, D], as attention reads them:
    # the epilogue stores each transposed (rows and columns split into whole digits, the
    # head dim still last), from the input's [B, S] space or the normed rows' [B*S] one. A
    # permute that takes the head dim from last (v) is left to its reader.
    "heads_projection": (
        """
class HeadsProjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(16)
        self.q = nn.Linear(16, 12, bias=False)
        self.k = nn.Linear(16, 12, bias=False)
        self.v = nn.Linear(16, 12, bias=False)
    def forward(self, x):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, 3, 4).transpose(1, 2)
        k = self.k(self.norm(x)).view(b, s, 3, 4).transpose(1, 2)
        v = self.v(x).view(b, s, 3, 4).permute(2, 3, 0, 1)
        return torch.softmax(q, -1), torch.softmax(k * 2.0, -1), v.sum(-1)
HeadsProjection().to(DT)(torch.randn(2, 5, 16, dtype=DT))
""",
        [
            "in [2, 5, 12], k in 16, %acc = sum %x[d0, d1, k] * %p_q_weight[d2, k]",
            "in [10, 12], k in 16, %acc = sum %0[d0, k] * %p_k_weight[d1, k]",
            "in [2, 5, 12], k in 16, %acc = sum %x[d0, d1, k] * %p_v_weight[d2, k]",
        ],
    ),
}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_structured_products_match_eager_at_every_level(name: str, dtype: str) -> None:
    source, contracts = PROGRAMS[name]
    program = load_program(with_dtype(source, dtype), "<source>")
    torch_ir = program.to_torch_ir()
    loop_ir = str(lower(torch_ir, "loop"))
    launched = [
        line
        for _, body in launched_kernels(loop_ir, "loop")
        for line in body.splitlines()
        if "loop.contract" in line
    ]
    assert len(launched) == len(contracts), loop_ir
    for contract in contracts:
        assert any(contract in line for line in launched), loop_ir
    assert_every_level_matches_eager(program, torch_ir, seed=13)


def test_an_operand_merging_the_reduction_over_two_dims_is_materialized_first() -> None:
    """The kernels that the merged-heads products read their rows from: the transpose and the
    merge, each of one input."""
    source, _ = PROGRAMS["merged_heads_projection"]
    program = load_program(with_dtype(source, "bfloat16"), "<source>")
    loop_ir = str(lower(program.to_torch_ir(), "loop"))
    assert "@k_transpose_reshape(%y: memref<2x3x7x4xbf16>, %out: memref<14x12xbf16>)" in loop_ir
    assert "@k_reshape(%z: memref<2x7x3x4xbf16>, %out: memref<14x12xbf16>)" in loop_ir


def test_heads_are_stored_transposed_by_their_projection() -> None:
    """q and k leave their projections' kernels as [B, H, S, D] (no transpose kernel before
    the softmax reads them); v, permuted to [H, D, B, S], leaves as [B, S, H, D], which the
    sum's kernel reads permuted."""
    source, _ = PROGRAMS["heads_projection"]
    program = load_program(with_dtype(source, "bfloat16"), "<source>")
    loop_ir = str(lower(program.to_torch_ir(), "loop"))
    launched = launched_kernels(loop_ir, "loop")
    assert len(launched) == 7, loop_ir
    transposed = [name for name, body in launched if "%out: memref<2x3x5x4xbf16>) {" in body]
    # The two softmaxes are one kernel, launched twice (merge-identical-kernels).
    assert transposed == [
        "k_linear_reshape_transpose",
        "k_linear_reshape_transpose_1",
        "k_softmax",
        "k_softmax",
    ]
    assert "@k_sum_permute(%view: memref<2x5x3x4xbf16>" in loop_ir


# Each operand layout a loop.contract reads in place: a batch dim a buffer omits or reads at 0
# (broadcast), a transposed rhs, f16 widened to f32, f32 as it is; the epilogue uses the
# indices as well as the accumulated value.
BATCHED = """
loop.kernel @k(%a: memref<4x1x8x16xf16>, %b: memref<5x16x3xf32>, %c: memref<4x3x8x5xf32>) {
  loop.contract (%i, %j, %m, %n) in [4, 3, 8, 5], k in 16,
      %acc = sum %a[d0, 0, d2, k] * %b[d3, k, d1] : memref<4x1x8x16xf16>, memref<5x16x3xf32>
      -> f32 {
    %p = arith.muli %j, %n : index
    %q = arith.index_cast %p : index to i32
    %f = arith.sitofp %q : i32 to f32
    %r = arith.addf %acc, %f : f32
    loop.store %r, %c[%i, %j, %m, %n] : memref<4x3x8x5xf32>
  }
}
func.func @forward(%a: memref<4x1x8x16xf16>, %b: memref<5x16x3xf32>) -> memref<4x3x8x5xf32> {
  %c = memref.alloc() : memref<4x3x8x5xf32>
  loop.launch @k(%a, %b, %c) : memref<4x1x8x16xf16>, memref<5x16x3xf32>, memref<4x3x8x5xf32>
  func.return %c : memref<4x3x8x5xf32>
}
"""

# An integer product, and a second loop nest after it in the same kernel.
INTEGER = """
loop.kernel @k(%a: memref<3x4xi32>, %b: memref<4x2xi32>, %c: memref<3x2xi32>, %d: memref<3xi32>) {
  loop.contract (%i, %j) in [3, 2], k in 4, %acc = sum %a[d0, k] * %b[k, d1]
      : memref<3x4xi32>, memref<4x2xi32> -> i32 {
    loop.store %acc, %c[%i, %j] : memref<3x2xi32>
  }
  loop.for %i in 0 to 3 {
    %s = loop.for %j in 0 to 4 reduce add init 0 : i32 {
      %v = loop.load %a[%i, %j] : memref<3x4xi32>
      loop.yield %v : i32
    }
    loop.store %s, %d[%i] : memref<3xi32>
  }
}
func.func @forward(%a: memref<3x4xi32>, %b: memref<4x2xi32>) -> (memref<3x2xi32>, memref<3xi32>) {
  %c = memref.alloc() : memref<3x2xi32>
  %d = memref.alloc() : memref<3xi32>
  loop.launch @k(%a, %b, %c, %d) : memref<3x4xi32>, memref<4x2xi32>, memref<3x2xi32>, memref<3xi32>
  func.return %c, %d : memref<3x2xi32>, memref<3xi32>
}
"""


def _batched_reference(a, b):
    lhs = a[:, 0].astype(np.float64)  # [4, 8, 16]
    rhs = b.astype(np.float64).transpose(2, 1, 0)  # [3, 16, 5]
    products = np.einsum("imk,jkn->ijmn", lhs, rhs)
    return products + np.arange(3)[None, :, None, None] * np.arange(5)


@pytest.mark.parametrize(
    "text, reference, rtol",
    [
        (BATCHED, lambda a, b: [_batched_reference(a, b)], 1e-5),
        (INTEGER, lambda a, b: [a @ b, a.sum(1)], 0),
    ],
    ids=["batched", "integer"],
)
def test_contract_and_its_expansion_match_numpy(text, reference, rtol) -> None:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    module.verify()
    inputs = random_inputs(find_function(module, "forward"), seed=5)
    expected = reference(*inputs)
    contract_outputs = run_module(module, inputs)
    ExpandLoopContractPass().apply(ctx, module)
    module.verify()
    assert "loop.contract" not in str(module)
    expanded_outputs = run_module(module, inputs)
    for want, *values in zip(expected, contract_outputs, expanded_outputs):
        for value in values:
            np.testing.assert_allclose(value, want, rtol=rtol, atol=rtol)
