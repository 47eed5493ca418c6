"""Sibling contractions (products of one input by weights of one shape: SwiGLU's gate and up,
q/k/v projections of equal widths) computed by one tensor-core kernel: fuse-prims puts them in
one kernel, lower-fused-to-loop makes them one loop.contract of several rhs, and every atom's
kernel multiplies the input's tiles by each rhs and runs the epilogue on the siblings'
accumulators of each element. The SIMT emulator runs each program against PyTorch eager on
fresh random inputs at every level (shapes with tails in M, N and K): wgmma on sm_90a, mma.sync
on sm_80 and for a decode's few rows, the fma atom for f32 under "highest", and hand-written
tiles the heuristic does not choose (warps along N, [K, N] rhs); nvcc compiles the generated
tensor-core kernels for sm_90a without spills."""

import pytest
import torch
from corpus import assert_every_level_matches_eager, with_dtype
from test_cuda_target import NVCC, nvcc_compile
from xdsl.context import Context
from xdsl.parser import Parser

from emmy.dialects import make_context
from emmy.dialects.target import TARGET_ATTRIBUTE, TargetAttr
from emmy.passes.lower_tile_to_kernel import LowerTileToKernelPass
from emmy.tools.bench.differential import lower
from emmy.tools.bench.programs import SWIGLU_MLP
from emmy.tools.cuda.target import print_cuda
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter.run import run_module

SWIGLU = SWIGLU_MLP + "MLP({dim}, {hidden}).to(DT)(torch.randn({rows}, {dim}, dtype=DT))\n"

PROJECTIONS = """
class Projections(nn.Module):
    def __init__(self, dim, width):
        super().__init__()
        self.q = nn.Linear(dim, width, bias=False)
        self.k = nn.Linear(dim, width, bias=False)
        self.v = nn.Linear(dim, width, bias=False)

    def forward(self, x):
        return self.q(x), self.k(x), self.v(x)
Projections(64, 48).to(DT)(torch.randn(70, 64, dtype=DT))
"""
"""q, k and v of one input with equal widths: three siblings, each stored as it is."""

GATED_MATMUL = """
class Gated(nn.Module):
    def forward(self, x, a, b):
        return F.silu(torch.matmul(x, a)) * torch.matmul(x, b)
Gated()(torch.randn({rows}, {k}, dtype=DT), torch.randn({k}, {n}, dtype=DT),
        torch.randn({k}, {n}, dtype=DT))
"""
"""Siblings of [K, N] rhs (torch.matmul's layout: N contiguous)."""

SIBLINGS = "(%p_gate_weight, %p_up_weight)[n, k]"

NORMED_SWIGLU = (
    SWIGLU_MLP
    + """
class NormedMLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.RMSNorm(dim)
        self.mlp = MLP(dim, hidden)

    def forward(self, x):
        return self.mlp(self.norm(x))
NormedMLP(72, 136).to(DT)(torch.randn(2, 65, 72, dtype=DT))
"""
)
"""A decoder layer's MLP: a [B, S, D] input, normalized, so that gate and up read the norm's
rows materialized and merged to [B * S, D]."""

PROGRAMS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    # name: (source, dtype, target, what the siblings' tile.gemm says)
    "swiglu_wgmma_bf16": (
        SWIGLU.format(dim=72, hidden=136, rows=130),
        "bfloat16",
        "sm_90a",
        (SIBLINGS, "atom wgmma"),
    ),
    "swiglu_mma_sync_f16": (
        SWIGLU.format(dim=40, hidden=72, rows=70),
        "float16",
        "sm_80",
        (SIBLINGS, "atom mma_sync m16n8k16"),
    ),
    # A decode's few rows stream the weights in narrow tiles, unsplit: 3 rows, K = 1100.
    "swiglu_decode_bf16": (
        SWIGLU.format(dim=1100, hidden=50, rows=3),
        "bfloat16",
        "sm_90a",
        (SIBLINGS, "atom mma_sync m16n8k16 tile [16, 32, 128] warps [1, 2] pipeline 8 epilogue"),
    ),
    "swiglu_fma_f32_highest": (
        SWIGLU.format(dim=40, hidden=72, rows=70),
        "float32",
        "sm_90a",
        (SIBLINGS, "atom fma"),
    ),
    "gated_matmul_kn_wgmma_bf16": (
        GATED_MATMUL.format(rows=130, k=64, n=136),
        "bfloat16",
        "sm_90a",
        ("(%a, %b)[k, n]", "atom wgmma"),
    ),
    "gated_matmul_kn_mma_sync_f16": (
        GATED_MATMUL.format(rows=70, k=40, n=72),
        "float16",
        "sm_80",
        ("(%a, %b)[k, n]", "atom mma_sync m16n8k16"),
    ),
    "projections_mma_sync_bf16": (
        PROJECTIONS,
        "bfloat16",
        "sm_80",
        ("(%p_q_weight, %p_k_weight, %p_v_weight)[n, k]", "atom mma_sync m16n8k16"),
    ),
}


def _program(name: str):
    source, dtype, arch, _ = PROGRAMS[name]
    program = load_program(with_dtype(source, dtype), "<source>")
    torch_ir = program.to_torch_ir()
    torch_ir.attributes[TARGET_ATTRIBUTE] = TargetAttr(arch)
    return program, torch_ir


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_siblings_are_one_tile_gemm(name: str) -> None:
    tile_ir = str(lower(_program(name)[1], "tile"))
    products = 2 if name.startswith("swiglu") else 1
    assert tile_ir.count("tile.gemm") == products, tile_ir
    assert tile_ir.count("tile.kernel") == products, tile_ir
    for expected in PROGRAMS[name][3]:
        assert expected in tile_ir, tile_ir
    assert "tile.for" not in tile_ir, tile_ir


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_siblings_match_eager_at_every_level(name: str) -> None:
    program, torch_ir = _program(name)
    assert_every_level_matches_eager(program, torch_ir, seed=29)


def test_a_normed_3d_mlps_gate_and_up_are_siblings() -> None:
    """A decoder layer's MLP reads the norm's rows, materialized and merged to [B * S, D]:
    gate and up read that one buffer, so they are siblings, at every level as eager."""
    program = load_program(with_dtype(NORMED_SWIGLU, "bfloat16"), "<source>")
    torch_ir = program.to_torch_ir()
    tile_ir = str(lower(torch_ir, "tile"))
    assert tile_ir.count("tile.gemm") == 2, tile_ir
    assert "* (%p_mlp_gate_weight, %p_mlp_up_weight)[n, k]" in tile_ir, tile_ir
    assert_every_level_matches_eager(program, torch_ir, seed=31)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
@pytest.mark.parametrize(
    ("name", "instruction"),
    [
        ("swiglu_wgmma_bf16", "wgmma.mma_async.sync.aligned"),
        ("swiglu_mma_sync_f16", "mma.sync.aligned.m16n8k16"),
        ("gated_matmul_kn_wgmma_bf16", "wgmma.mma_async.sync.aligned"),
        ("projections_mma_sync_bf16", "mma.sync.aligned.m16n8k16"),
    ],
)
def test_siblings_compile_for_sm_90a_without_spills(name: str, instruction: str, tmp_path):
    cuda = print_cuda(lower(_program(name)[1], "kernel"))
    assert instruction in cuda
    report = nvcc_compile(cuda, tmp_path, ptxas_report=True)
    spills = [line for line in report.splitlines() if "spill" in line]
    assert spills, report
    assert all("0 bytes spill stores, 0 bytes spill loads" in line for line in spills), report


def test_benchmark_swiglu_is_two_gemm_kernels() -> None:
    """The bench suite's SwiGLU MLP (1024 x 5632 x 2048): gate and up in one wgmma kernel of
    128 x 256 tiles, 128 columns of each, then down."""
    source = with_dtype(SWIGLU.format(dim=2048, hidden=5632, rows=1024), "bfloat16")
    tile_ir = str(lower(load_program(source, "<source>").to_torch_ir(), "tile"))
    assert tile_ir.count("tile.kernel") == 2, tile_ir
    assert (
        f"tile.gemm %x[m, k] * {SIBLINGS} : memref<1024x2048xbf16>, memref<5632x2048xbf16>, "
        "memref<5632x2048xbf16> -> f32 atom wgmma m64n256k16 tile [128, 256, 64] warps [8, 1]"
    ) in tile_ir


# Hand-written sibling tiles the heuristic does not choose: warps (or wgmma's consumer warp
# groups) along N, each with its share of both siblings, and [K, N] rhs.
HAND_WRITTEN: dict[str, tuple[int, int, int, str, str, tuple[int, int, int], tuple[int, int]]] = {
    # name: (M, N, K, element type (which picks the atom), rhs layout, tile, warps)
    "wgmma-groups-along-n": (130, 136, 72, "bf16", "nk", (128, 256, 64), (4, 2)),
    "wgmma-groups-along-n-kn": (70, 136, 64, "bf16", "kn", (64, 256, 64), (4, 2)),
    "mma-sync-kn": (70, 72, 40, "f16", "kn", (64, 64, 32), (2, 2)),
    "fma-warps-along-n": (33, 40, 20, "f32", "nk", (32, 64, 8), (1, 2)),
}
ATOMS = {"bf16": "wgmma m64n{n}k16", "f16": "mma_sync m16n8k16", "f32": "fma"}


def _hand_written(name: str) -> tuple[str, list[torch.Tensor]]:
    """A module of one sibling tile.gemm storing silu(gate) * up in f32, and its inputs."""
    m, n, k, element, layout, tile_shape, warps = HAND_WRITTEN[name]
    atom = ATOMS[element].format(n=tile_shape[1] // warps[1])
    wgmma = atom.startswith("wgmma")
    a, y = f"memref<{m}x{k}x{element}>", f"memref<{m}x{n}xf32>"
    b = f"memref<{n}x{k}x{element}>" if layout == "nk" else f"memref<{k}x{n}x{element}>"
    b_map = "n, k" if layout == "nk" else "k, n"
    tiles = [-(-n // (tile_shape[1] // 2)), -(-m // tile_shape[0]), 1]
    grid = [min(tiles[0] * tiles[1], 132), 1, 1] if wgmma else tiles
    threads = 32 * (warps[0] * warps[1] + (4 if wgmma else 0))
    text = f"""
tile.kernel @gate_up(%a: {a}, %g: {b}, %u: {b}, %y: {y}) grid {grid} block [{threads}, 1, 1] {{
  tile.gemm %a[m, k] * (%g, %u)[{b_map}] : {a}, {b}, {b} -> f32 atom {atom}
      tile {list(tile_shape)} warps {list(warps)} pipeline 2 epilogue(%m, %n, %gate, %up) {{
    %one = arith.constant 1.0 : f32
    %neg = arith.negf %gate : f32
    %exp = math.exp %neg : f32
    %denominator = arith.addf %exp, %one : f32
    %silu = arith.divf %gate, %denominator : f32
    %p = arith.mulf %silu, %up : f32
    memref.store %p, %y[%m, %n] : {y}
  }}
}}

func.func @forward(%a: {a}, %g: {b}, %u: {b}) -> {y} {{
  %y = memref.alloc() : {y}
  tile.launch @gate_up(%a, %g, %u, %y) : {a}, {b}, {b}, {y}
  func.return %y : {y}
}}
"""
    generator = torch.Generator().manual_seed(sum(map(ord, name)))
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[element]
    shapes = [(m, k), *[(n, k) if layout == "nk" else (k, n)] * 2]
    return text, [torch.randn(*shape, generator=generator).to(dtype) for shape in shapes]


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_hand_written_sibling_tiles_match_torch(name: str) -> None:
    """At Tile IR (the interpreter) and at Kernel IR (the SIMT emulator) alike."""
    text, inputs = _hand_written(name)
    layout = HAND_WRITTEN[name][4]
    a, g, u = (x.double() for x in inputs)
    if layout == "nk":
        g, u = g.T, u.T
    gate, up = a @ g, a @ u
    expected = gate * torch.sigmoid(gate) * up
    arrays = [(x.float() if x.dtype == torch.bfloat16 else x).numpy() for x in inputs]
    module = Parser(make_context(), text).parse_module()
    module.verify()
    (at_tile,) = run_module(module, arrays)
    LowerTileToKernelPass().apply(Context(), module)
    module.verify()
    (at_kernel,) = run_module(module, arrays)
    for result in (at_tile, at_kernel):
        torch.testing.assert_close(torch.as_tensor(result).double(), expected, rtol=1e-4, atol=1e-4)
