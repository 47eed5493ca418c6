"""bf16 and f16 matrix products through the whole pipeline onto tensor cores: choose-tile-schedule
gives each product's kernel a contraction schedule, lower-loop-to-tile makes it a tile.gemm, and
lower-tile-to-kernel a tensor-core kernel (wgmma fed by TMA for products of 128 rows or more on
sm_90a, mma.sync below), which the SIMT emulator runs against PyTorch eager on
fresh random inputs (every level, on small shapes with tails in M, N and K) and nvcc compiles
for sm_90a. f32 products take the atom that the float32 matmul precision recorded at import
allows: the fma atom (a register-tiled SIMT GEMM) under "highest", tf32 under "high" and
"medium": wgmma m64nNk8 for 128 rows or more of K-major operands (nn.Linear's), mma.sync
m16n8k8 otherwise (PTX has no transposed tf32 wgmma for a [K, N] rhs)."""

from contextlib import contextmanager

import pytest
import torch
from corpus import assert_every_level_matches_eager, with_dtype
from test_cuda_target import NVCC, nvcc_compile

from emmy.tools.bench.differential import lower
from emmy.tools.cuda.target import print_cuda
from emmy.tools.frontend.program import load_program

PROGRAMS: dict[str, tuple[str, str, str]] = {
    # name: (source, dtype, the tile.gemm's operands and schedule)
    "linear_bias_bf16": (
        "nn.Linear(40, 72).to(DT)(torch.randn(5, 40, dtype=DT))",
        "bfloat16",
        "tile.gemm %input[m, k] * %p_weight[n, k] : memref<5x40xbf16>, memref<72x40xbf16> -> f32 "
        "atom mma_sync m16n8k16 tile [16, 32, 64] warps [1, 4] pipeline 2",
    ),
    "batched_matmul_bf16": (
        """
class Product(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
Product()(torch.randn(2, 3, 20, 24, dtype=DT), torch.randn(3, 24, 12, dtype=DT))
""",
        "bfloat16",
        "tile.gemm %a[b0, b1, m, k] * %b[b1, k, n] : memref<2x3x20x24xbf16>, "
        "memref<3x24x12xbf16> -> f32",
    ),
    "matmul_tails_f16": (
        """
class Product(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
Product()(torch.randn(70, 33, dtype=DT), torch.randn(33, 50, dtype=DT))
""",
        "float16",
        "tile.gemm %a[m, k] * %b[k, n] : memref<70x33xf16>, memref<33x50xf16> -> f32",
    ),
    "linear_wgmma_bf16": (
        "nn.Linear(64, 72).to(DT)(torch.randn(130, 64, dtype=DT))",
        "bfloat16",
        "tile.gemm %input[m, k] * %p_weight[n, k] : memref<130x64xbf16>, memref<72x64xbf16> -> f32 "
        "atom wgmma m64n64k16 tile [128, 64, 64] warps [8, 1] pipeline 8",
    ),
    "matmul_wgmma_kn_bf16": (
        """
class Product(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
Product()(torch.randn(130, 64, dtype=DT), torch.randn(64, 72, dtype=DT))
""",
        "bfloat16",
        "tile.gemm %a[m, k] * %b[k, n] : memref<130x64xbf16>, memref<64x72xbf16> -> f32 "
        "atom wgmma m64n64k16 tile [128, 64, 64] warps [8, 1] pipeline 8",
    ),
    "linear_one_row_bf16": (
        "nn.Linear(64, 48, bias=False).to(DT)(torch.randn(1, 64, dtype=DT))",
        "bfloat16",
        "tile.gemm %input[m, k] * %p_weight[n, k] : memref<1x64xbf16>, memref<48x64xbf16> -> f32",
    ),
    # A batch of one (a [1, S, K] input): its size-1 dim walks a unit batch dim of the gemm's
    # own, so the rows are one product, with an M tail.
    "linear_batch_of_one_wgmma_bf16": (
        "nn.Linear(64, 72).to(DT)(torch.randn(1, 130, 64, dtype=DT))",
        "bfloat16",
        "tile.gemm %input[b0, m, k] * %p_weight[n, k] : memref<1x130x64xbf16>, "
        "memref<72x64xbf16> -> f32 atom wgmma m64n64k16",
    ),
    # A decode step of 5 sequences of one token ([5, 1, K]): one product of 5 rows, not 5 of
    # one row each.
    "linear_decode_rows_bf16": (
        "nn.Linear(64, 48, bias=False).to(DT)(torch.randn(5, 1, 64, dtype=DT))",
        "float16",
        "tile.gemm %input[m, b0, k] * %p_weight[n, k] : memref<5x1x64xf16>, memref<48x64xf16> -> "
        "f32 atom mma_sync m16n8k16",
    ),
    # The same over 130 sequences: wgmma reads the rows through a box of one along b0.
    "linear_rows_of_one_token_wgmma_bf16": (
        "nn.Linear(64, 72).to(DT)(torch.randn(130, 1, 64, dtype=DT))",
        "bfloat16",
        "tile.gemm %input[m, b0, k] * %p_weight[n, k] : memref<130x1x64xbf16>, "
        "memref<72x64xbf16> -> f32 atom wgmma m64n64k16",
    ),
    # A projection into heads ([1, 130, 4, 16] transposed to [1, 4, 130, 16]): the epilogue
    # stores columns n / 16 and n % 16 of a head as pairs.
    "linear_into_heads_wgmma_bf16": (
        """
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(64, 64, bias=False)

    def forward(self, x):
        return self.q(x).view(1, 130, 4, 16).transpose(1, 2)
Heads().to(DT)(torch.randn(1, 130, 64, dtype=DT))
""",
        "bfloat16",
        "tile.gemm %x[b0, m, k] * %p_q_weight[n, k] : memref<1x130x64xbf16>, memref<64x64xbf16> "
        "-> f32 atom wgmma m64n64k16",
    ),
    # A [S, K] product made a [1, S, N] output (as a Linear after a norm of a [1, S, K]
    # input, a model's head): stored at a constant batch index, in pairs.
    "linear_unsqueezed_wgmma_bf16": (
        """
class Unsqueezed(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(64, 72, bias=False)

    def forward(self, x):
        return self.out(x).unsqueeze(0)
Unsqueezed().to(DT)(torch.randn(130, 64, dtype=DT))
""",
        "bfloat16",
        "tile.gemm %x[m, k] * %p_out_weight[n, k] : memref<130x64xbf16>, memref<72x64xbf16> "
        "-> f32 atom wgmma m64n64k16",
    ),
    # Decode with a long K and few output tiles: 2 tiles of 32 columns, K split between the 2
    # blocks of a cluster (9 slices of 128, 5 and 4), GELU after the bias.
    "linear_gelu_decode_split_bf16": (
        "nn.Sequential(nn.Linear(1100, 50), nn.GELU()).to(DT)(torch.randn(3, 1100, dtype=DT))",
        "bfloat16",
        "tile.gemm %input[m, k] * %p_0_weight[n, k] : memref<3x1100xbf16>, memref<50x1100xbf16> "
        "-> f32 atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 4] pipeline 6 split 2",
    ),
}


def _program(name: str):
    source, dtype, _ = PROGRAMS[name]
    return load_program(with_dtype(source, dtype), "<source>")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_product_becomes_one_tile_gemm(name: str) -> None:
    tile_ir = str(lower(_program(name).to_torch_ir(), "tile"))
    assert tile_ir.count("tile.gemm") == 1, tile_ir
    assert PROGRAMS[name][2] in tile_ir, tile_ir
    assert "tile.for" not in tile_ir, tile_ir


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_product_on_tensor_cores_matches_eager_at_every_level(name: str) -> None:
    program = _program(name)
    assert_every_level_matches_eager(program, program.to_torch_ir(), seed=11)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_product_compiles_to_tensor_cores_for_sm_90a(name: str, tmp_path) -> None:
    cuda = print_cuda(lower(_program(name).to_torch_ir(), "kernel"))
    atom = "wgmma.mma_async.sync.aligned" if "wgmma" in PROGRAMS[name][2] else "mma.sync.aligned"
    assert atom in cuda
    nvcc_compile(cuda, tmp_path)


ATTENTION = """
class Attention(nn.Module):
    def forward(self, q, k, v):
        b, s, h, d = q.shape
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return y.transpose(1, 2).reshape(b, s, h * d)
Attention()(torch.randn(1, 136, 2, 128, dtype=DT), torch.randn(1, 136, 2, 128, dtype=DT),
            torch.randn(1, 136, 2, 128, dtype=DT))
"""
"""Attention between [B, S, H, D] projections, as a decoder layer has it: 136 positions (a tail
of 8 rows past one 128-row tile, rows of 272 bytes that TMA takes)."""


def test_attention_between_projections_is_one_tensor_core_kernel() -> None:
    """`fuse-attention` makes both products and the softmax one tile.attention (wgmma on
    sm_90a), which reads row-major buffers: the transposed q, k and v are copied to [B, H, S,
    D] by kernels of their own, and its [B, H, S, D] output is read transposed by the next."""
    program = load_program(with_dtype(ATTENTION, "bfloat16"), "<source>")
    tile_ir = str(lower(program.to_torch_ir(), "tile"))
    assert "tile.gemm" not in tile_ir, tile_ir
    assert tile_ir.count("tile.attention") == 1, tile_ir
    assert "memref<1x2x136x128xbf16> into memref<1x2x136x128xbf16> atom wgmma" in tile_ir
    assert_every_level_matches_eager(program, program.to_torch_ir(), seed=5)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_attention_between_projections_compiles_for_sm_90a(tmp_path) -> None:
    program = load_program(with_dtype(ATTENTION, "bfloat16"), "<source>")
    cuda = print_cuda(lower(program.to_torch_ir(), "kernel"))
    assert "wgmma.mma_async.sync.aligned" in cuda
    nvcc_compile(cuda, tmp_path)


# ---- f32: the atom follows torch.get_float32_matmul_precision() ------------------------------

F32_PROGRAMS: dict[str, tuple[str, str, str]] = {
    # name: (source, float32 matmul precision at import, the tile.gemm's operands and schedule)
    "linear_bias_f32_highest": (
        "nn.Linear(40, 72)(torch.randn(5, 40))",
        "highest",
        "tile.gemm %input[m, k] * %p_weight[n, k] : memref<5x40xf32>, memref<72x40xf32> -> f32 "
        "atom fma tile [64, 64, 8] warps [2, 2] pipeline 3",
    ),
    "linear_bias_f32_high": (
        "nn.Linear(40, 72)(torch.randn(5, 40))",
        "high",
        "tile.gemm %input[m, k] * %p_weight[n, k] : memref<5x40xf32>, memref<72x40xf32> -> f32 "
        "atom mma_sync m16n8k8 tile [64, 64, 16] warps [2, 2] pipeline 3",
    ),
    "linear_bias_f32_medium": (
        "nn.Linear(40, 72)(torch.randn(5, 40))",
        "medium",
        "atom mma_sync m16n8k8 tile [64, 64, 16]",
    ),
    "linear_tails_f32_high_wgmma": (
        "nn.Linear(72, 200)(torch.randn(130, 72))",
        "high",
        "tile.gemm %input[m, k] * %p_weight[n, k] : memref<130x72xf32>, memref<200x72xf32> -> "
        "f32 atom wgmma m64n64k8 tile [128, 64, 32] warps [8, 1] pipeline 8",
    ),
    "matmul_kn_rhs_f32_high": (
        """
class Product(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
Product()(torch.randn(130, 36), torch.randn(36, 50))
""",
        "high",
        "tile.gemm %a[m, k] * %b[k, n] : memref<130x36xf32>, memref<36x50xf32> -> f32 "
        "atom mma_sync m16n8k8",
    ),
    "matmul_tails_f32_highest": (
        """
class Product(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
Product()(torch.randn(70, 33), torch.randn(33, 50))
""",
        "highest",
        "tile.gemm %a[m, k] * %b[k, n] : memref<70x33xf32>, memref<33x50xf32> -> f32 atom fma",
    ),
    "matmul_tails_f32_high": (
        """
class Product(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
Product()(torch.randn(70, 36), torch.randn(36, 50))
""",
        "high",
        "tile.gemm %a[m, k] * %b[k, n] : memref<70x36xf32>, memref<36x50xf32> -> f32 "
        "atom mma_sync m16n8k8",
    ),
    "batched_matmul_f32_highest": (
        """
class Product(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
Product()(torch.randn(2, 3, 20, 24), torch.randn(3, 24, 12))
""",
        "highest",
        "tile.gemm %a[b0, b1, m, k] * %b[b1, k, n] : memref<2x3x20x24xf32>, "
        "memref<3x24x12xf32> -> f32 atom fma",
    ),
}


@contextmanager
def float32_matmul_precision(precision: str):
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


def _f32_torch_ir(name: str):
    """The program and its Torch IR, imported under its precision (restored afterwards)."""
    source, precision, _ = F32_PROGRAMS[name]
    program = load_program(with_dtype(source, "float32"), "<source>")
    with float32_matmul_precision(precision):
        return program, program.to_torch_ir()


@pytest.mark.parametrize("name", sorted(F32_PROGRAMS))
def test_f32_product_takes_the_atom_its_recorded_precision_allows(name: str) -> None:
    """The precision at import is in the IR, and decides the atom whatever it is later."""
    _, torch_ir = _f32_torch_ir(name)
    precision = F32_PROGRAMS[name][1]
    assert f'{{torch.float32_matmul_precision = "{precision}"}}' in str(torch_ir)
    with float32_matmul_precision("highest" if precision != "highest" else "high"):
        tile_ir = str(lower(torch_ir, "tile"))
    assert tile_ir.count("tile.gemm") == 1, tile_ir
    assert F32_PROGRAMS[name][2] in tile_ir, tile_ir
    assert "tile.for" not in tile_ir, tile_ir


@pytest.mark.parametrize("name", sorted(F32_PROGRAMS))
def test_f32_product_matches_eager_at_every_level(name: str) -> None:
    program, torch_ir = _f32_torch_ir(name)
    assert_every_level_matches_eager(program, torch_ir, seed=11)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize(
    ("name", "instruction"),
    [
        ("linear_bias_f32_highest", "fmaf("),
        ("linear_bias_f32_high", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
        ("linear_tails_f32_high_wgmma", "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32"),
    ],
)
def test_f32_product_compiles_for_sm_90a(name: str, instruction: str, tmp_path) -> None:
    cuda = print_cuda(lower(_f32_torch_ir(name)[1], "kernel"))
    assert instruction in cuda
    assert "mma.sync.aligned.m16n8k16" not in cuda
    nvcc_compile(cuda, tmp_path)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_a_large_tf32_linear_takes_wide_wgmma_tiles_without_spills(tmp_path) -> None:
    """nn.Linear(4096, 4096) in f32 under "high": 128 x 256 tiles of 32-element K slices
    (128-byte rows), two consumer warp groups of m64n256k8 accumulators, compiled by ptxas
    without spilling them."""
    program = load_program("nn.Linear(4096, 4096, bias=False)(torch.randn(4096, 4096))", "<s>")
    with float32_matmul_precision("high"):
        torch_ir = program.to_torch_ir()
    kernel_ir = lower(torch_ir, "kernel")
    assert "atom wgmma m64n256k8 tile [128, 256, 32]" in str(lower(torch_ir, "tile"))
    report = nvcc_compile(print_cuda(kernel_ir), tmp_path, ptxas_report=True)
    assert "0 bytes spill stores, 0 bytes spill loads" in report, report


SWIGLU_F32 = """
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate, self.up = nn.Linear(64, 96, bias=False), nn.Linear(64, 96, bias=False)
        self.down = nn.Linear(96, 64, bias=False)
    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))
MLP()(torch.randn(130, 64))
"""


def test_a_tf32_swiglu_chains_two_wgmma_products_within_tf32s_tolerance() -> None:
    """Under "high" a SwiGLU MLP of 130 rows is two tf32 wgmma kernels (gate and up as
    siblings, then down), each reading operands truncated to tf32 in the emulator: the chain
    stays within `TF32_TOLERANCE` of eager's true f32 at every level."""
    program = load_program(SWIGLU_F32, "<source>")
    with float32_matmul_precision("high"):
        torch_ir = program.to_torch_ir()
    tile_ir = str(lower(torch_ir, "tile"))
    assert tile_ir.count("-> f32 atom wgmma m64n64k8") == 2, tile_ir
    assert_every_level_matches_eager(program, torch_ir, seed=3)
