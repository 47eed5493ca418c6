"""`tile.gemm` through `lower-tile-to-kernel`: hand-written Tile IR GEMMs, lowered to cp.async +
ldmatrix + mma_sync Kernel IR (f32 on the fma atom: a register-tiled SIMT kernel; on mma_sync
m16n8k8: tf32 tensor cores), against torch.matmul on fresh random inputs (f32 products within
the rounding error bound of their atom, `Gemm.error_bound`).

Each program runs at Tile IR (the interpreter's one product) and at Kernel IR (the SIMT
emulator, which lands each cp.async only when its group is waited for and checks the warp
instructions' layouts), on small shapes: multiples of the tile, tails in M, N and K, M = 1,
both layouts of B (nn.Linear's [N, K] and [K, N]) and of A, batches (one operand broadcast),
pipelines 1 to 8 deep (in dynamic shared memory beyond a block's static 48 KB), the
weight-streaming tiles of decode (M of 1 to 64 in tiles of 16, 32 or 64 rows, warps along N
only, K slices of 64 or 128), and a bias + GELU / SiLU epilogue cast to bf16. The generated CUDA
compiles for sm_90a with no spills; on a GPU (skipped without one) it matches torch up to
1024 x 1024 x 1024. On the wgmma atom the same, B [K, N] included (read by the wgmmas as
N-major panels). Split-K (mma_sync and fma): M of 1, 5 and 16, splits of 2 to 4 blocks, K
not a multiple of split x BK (the last block's run short), a bias + GELU epilogue cast to
bf16, batches, and a race check of the cluster barrier between the partials' stores and
their reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

import pytest
import torch
from test_cuda_target import NVCC, nvcc_compile
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from emmy.dialects import make_context
from emmy.passes.lower_tile_to_kernel import LowerTileToKernelPass
from emmy.tools.bench.differential import check_levels, lower
from emmy.tools.cuda.target import print_cuda
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter.run import ExecutionError, run_module

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")

TYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
EPILOGUES = {
    "store": "",
    "bias-gelu": """
      %bias_n = memref.load %bias[%n] : memref<{n}xf32>
      %v = arith.addf %acc, %bias_n : f32
      %half = arith.constant 0.5 : f32
      %one = arith.constant 1.0 : f32
      %rsqrt2 = arith.constant 0.70710678118654752 : f32
      %scaled = arith.mulf %v, %rsqrt2 : f32
      %erf = math.erf %scaled : f32
      %erf1 = arith.addf %erf, %one : f32
      %halfv = arith.mulf %v, %half : f32
      %act = arith.mulf %halfv, %erf1 : f32""",
    "bias-silu": """
      %bias_n = memref.load %bias[%n] : memref<{n}xf32>
      %v = arith.addf %acc, %bias_n : f32
      %one = arith.constant 1.0 : f32
      %neg = arith.negf %v : f32
      %exp = math.exp %neg : f32
      %denominator = arith.addf %exp, %one : f32
      %act = arith.divf %v, %denominator : f32""",
}


@dataclass(frozen=True)
class Gemm:
    """A GEMM program: Y[batch..., m, n] = epilogue(sum_k A * B), A [M, K] (or [K, M] with
    `a_layout="km"`), B [N, K] (`b_layout="nk"`) or [K, N] (`"kn"`), B without the batch
    dimensions when `b_batched` is false; the epilogue `store`s the f32 accumulator or adds
    a bias, applies GELU or SiLU and stores bf16."""

    m: int
    n: int
    k: int
    dtype: str = "bf16"
    batch: tuple[int, ...] = ()
    a_layout: str = "mk"
    b_layout: str = "nk"
    b_batched: bool = True
    epilogue: str = "store"
    tile: tuple[int, int, int] = (64, 64, 32)
    warps: tuple[int, int] = (2, 2)
    pipeline: int = 3
    atom: str = "mma_sync m16n8k16"
    raster: int = 0
    """A wgmma gemm's tile order (rows of tiles down, then right); 0 leaves the default."""
    split: int = 1
    """How many blocks (a cluster) share each output tile's K slices (split-K)."""
    cluster: int = 1
    """How many persistent wgmma blocks of consecutive M tiles share each rhs K slice (TMA
    multicast in a thread-block cluster)."""
    seed: int = field(default=0, compare=False)

    @property
    def batch_names(self) -> list[str]:
        return [f"b{i}" for i in range(len(self.batch))]

    def shape(self, layout: str, batched: bool = True) -> list[int]:
        sizes = {"m": self.m, "n": self.n, "k": self.k}
        return [*(self.batch if batched else ()), *(sizes[d] for d in layout)]

    @property
    def out_type(self) -> str:
        return "f32" if self.epilogue == "store" else "bf16"

    def memref(self, shape: list[int], element: str) -> str:
        return f"memref<{'x'.join(map(str, shape))}x{element}>"

    def text(self) -> str:
        t = self.dtype
        a = self.memref(self.shape(self.a_layout), t)
        b = self.memref(self.shape(self.b_layout, self.b_batched), t)
        y = self.memref([*self.batch, self.m, self.n], self.out_type)
        bias = f"memref<{self.n}xf32>"
        has_bias = self.epilogue != "store"
        names = self.batch_names
        a_map = ", ".join([*names, *self.a_layout])
        b_map = ", ".join([*(names if self.b_batched else []), *self.b_layout])
        point = ", ".join(f"%{d}" for d in [*names, "m", "n"])
        if has_bias:
            body = EPILOGUES[self.epilogue].format(n=self.n)
            body += "\n      %out = arith.truncf %act : f32 to bf16\n"
            body += f"      memref.store %out, %y[{point}] : {y}"
        else:
            body = f"      memref.store %acc, %y[{point}] : {y}"
        block_m, block_n, block_k = self.tile
        raster = f" raster {self.raster}" if self.raster else ""
        split = f" split {self.split}" if self.split != 1 else ""
        cluster = f" cluster {self.cluster}" if self.cluster != 1 else ""
        grid = [-(-self.n // block_n) * self.split, -(-self.m // block_m), prod(self.batch)]
        if self.atom.startswith("wgmma"):  # persistent blocks, one an SM (132) at most
            clusters = grid[0] * -(-grid[1] // self.cluster) * grid[2]
            grid = [self.cluster * min(clusters, 132 // self.cluster), 1, 1]
        # A wgmma block has a producer warp group besides the warps that multiply.
        threads = 32 * (prod(self.warps) + (4 if self.atom.startswith("wgmma") else 0))
        args = f"%a: {a}, %b: {b}" + (f", %bias: {bias}" if has_bias else "")
        types = f"{a}, {b}" + (f", {bias}" if has_bias else "")
        operands = "%a, %b" + (", %bias" if has_bias else "")
        persistent = f"{raster}{cluster}"
        return f"""
tile.kernel @gemm({args}, %y: {y}) grid {grid} block [{threads}, 1, 1] {{
  tile.gemm %a[{a_map}] * %b[{b_map}] : {a}, {b} -> f32 atom {self.atom}
      tile {list(self.tile)} warps {list(self.warps)} pipeline {self.pipeline}{split}{persistent}
      epilogue({point}, %acc) {{
{body}
  }}
}}

func.func @forward({args}) -> {y} {{
  %y = memref.alloc() : {y}
  tile.launch @gemm({operands}, %y) : {types}, {y}
  func.return %y : {y}
}}
"""

    def inputs(self) -> list[torch.Tensor]:
        generator = torch.Generator().manual_seed(self.seed)
        dtype = TYPES[self.dtype]
        a = torch.randn(*self.shape(self.a_layout), generator=generator).to(dtype)
        b = torch.randn(*self.shape(self.b_layout, self.b_batched), generator=generator).to(dtype)
        inputs = [a, b]
        if self.epilogue != "store":
            inputs.append(torch.randn(self.n, generator=generator))
        return inputs

    def matrices(self, inputs: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """A as [..., M, K] and B as [..., K, N], in float64."""
        a, b = (x.double() for x in inputs[:2])
        if self.a_layout == "km":
            a = a.transpose(-1, -2)
        if self.b_layout == "nk":
            b = b.transpose(-1, -2)
        return a, b

    def expected(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        """The exact product of the inputs (float64; f32 for 16-bit inputs), through the
        epilogue."""
        product = torch.matmul(*self.matrices(inputs))
        if self.epilogue == "store":
            return product if self.dtype == "f32" else product.float()
        v = product + inputs[2].double()
        act = (
            torch.nn.functional.gelu(v)
            if self.epilogue == "bias-gelu"
            else torch.nn.functional.silu(v)
        )
        return act.to(torch.bfloat16)

    def error_bound(self, inputs: list[torch.Tensor]) -> torch.Tensor:
        """How far an f32 product may be from the exact one, elementwise: u (|A| |B|) with
        u = (K + 1) 2^-24 for the K roundings of an f32 accumulation (an FMA rounds once), plus
        2^-10 + 2^-22 on tf32, whose rounding of each operand to 10 fraction bits (to nearest)
        moves each product by a factor (1 + e1)(1 + e2), |e| <= 2^-11."""
        a, b = self.matrices(inputs)
        unit = (self.k + 1) * 2**-24
        if self.atom == "mma_sync m16n8k8":
            unit += 2**-10 + 2**-22
        return unit * torch.matmul(a.abs(), b.abs())


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def lowered(gemm: Gemm) -> ModuleOp:
    module = parse(gemm.text())
    LowerTileToKernelPass().apply(Context(), module)
    module.verify()
    return module


def as_numpy(value: torch.Tensor):
    return (value.float() if value.dtype == torch.bfloat16 else value).numpy()


def check(gemm: Gemm, result, inputs: list[torch.Tensor]) -> None:
    result = torch.as_tensor(result)
    expected = gemm.expected(inputs)
    if gemm.dtype == "f32":
        error = (result.double() - expected).abs()
        bound = gemm.error_bound(inputs)
        assert bool((error <= bound).all()), (
            f"off by {float((error - bound).max()):.3g} beyond the bound "
            f"(max error {float(error.max()):.3g})"
        )
    elif expected.dtype == torch.bfloat16:
        # The accumulators differ from the exact sums in the last f32 bits, which can move a
        # value across a bf16 rounding boundary: one bf16 step apart at most.
        torch.testing.assert_close(result.to(torch.bfloat16), expected, rtol=2**-7, atol=1e-5)
    else:
        # One f32 rounding per k-step of 16 products.
        torch.testing.assert_close(result, expected, rtol=1e-5, atol=1e-5)


EMULATED = {
    "bf16-64x64x64": Gemm(64, 64, 64),
    "f16-64x64x64-kn": Gemm(64, 64, 64, dtype="f16", b_layout="kn"),
    "tails-70x50x40-nk": Gemm(70, 50, 40),
    "tails-70x50x40-kn": Gemm(70, 50, 40, b_layout="kn"),
    "f16-tails-a-km": Gemm(70, 50, 40, dtype="f16", a_layout="km", b_layout="kn"),
    "m1": Gemm(1, 64, 64),
    "m1-kn-k-tail": Gemm(1, 40, 72, b_layout="kn"),
    "batched": Gemm(33, 24, 40, batch=(3,), b_layout="kn"),
    "batched-shared-weight": Gemm(17, 40, 32, batch=(2, 2), b_batched=False),
    "pipeline-1": Gemm(48, 64, 96, pipeline=1),
    "pipeline-2": Gemm(48, 64, 96, pipeline=2, b_layout="kn"),
    "pipeline-4-short-k": Gemm(32, 32, 40, pipeline=4, tile=(32, 32, 16)),
    "odd-k-through-registers": Gemm(20, 24, 33, tile=(32, 32, 16)),
    "odd-n-through-registers": Gemm(20, 25, 32, b_layout="kn", tile=(32, 32, 16)),
    "warps-4x1-wide-tile": Gemm(96, 140, 64, tile=(64, 128, 64), warps=(4, 1), pipeline=2),
    "one-warp-odd-atoms": Gemm(24, 40, 32, tile=(16, 24, 32), warps=(1, 1)),
    "dynamic-shared-4-stages": Gemm(130, 128, 64, tile=(128, 128, 32), pipeline=4),
    "two-panels-of-k": Gemm(24, 32, 136, tile=(32, 32, 128), warps=(2, 1), pipeline=2),
    "two-panels-of-n-kn": Gemm(64, 130, 48, b_layout="kn", tile=(64, 128, 32)),
    "two-panels-of-m-km": Gemm(130, 64, 48, a_layout="km", tile=(128, 64, 32), warps=(4, 1)),
    "bias-gelu-bf16": Gemm(70, 50, 40, epilogue="bias-gelu"),
    "bias-silu-bf16-kn": Gemm(33, 72, 48, b_layout="kn", epilogue="bias-silu", seed=3),
    **{
        f"fma-{name}": Gemm(
            **{"dtype": "f32", "atom": "fma", "tile": (32, 32, 8), "warps": (1, 1), **shape}
        )
        for name, shape in (
            ("64x64x32-4x8-registers", dict(m=64, n=64, k=32, tile=(64, 64, 8), warps=(2, 2))),
            ("tails-70x50x37-nk", dict(m=70, n=50, k=37, pipeline=2)),
            ("tails-70x50x40-kn", dict(m=70, n=50, k=40, b_layout="kn")),
            ("batched-a-km", dict(m=33, n=24, k=40, batch=(3,), a_layout="km", b_layout="kn")),
            ("batched-shared-weight", dict(m=17, n=40, k=32, batch=(2, 2), b_batched=False)),
            ("m1", dict(m=1, n=64, k=64, pipeline=1)),
            ("two-panels-of-k", dict(m=24, n=32, k=72, tile=(32, 32, 64), pipeline=2)),
            (
                "128x128x8-8x8-registers",
                dict(m=130, n=128, k=16, tile=(128, 128, 8), warps=(4, 2), b_layout="kn"),
            ),
        )
    },
    **{
        f"tf32-{name}": Gemm(
            **{"dtype": "f32", "atom": "mma_sync m16n8k8", "tile": (64, 64, 16), **shape}
        )
        for name, shape in (
            ("64x64x32", dict(m=64, n=64, k=32)),
            ("tails-70x50x40-kn", dict(m=70, n=50, k=40, b_layout="kn")),
            ("tails-a-km-nk", dict(m=70, n=50, k=36, a_layout="km", pipeline=2)),
            ("batched-shared-weight", dict(m=17, n=40, k=32, batch=(2,), b_batched=False)),
            ("two-panels-of-k", dict(m=24, n=32, k=72, tile=(32, 32, 64), warps=(2, 1))),
        )
    },
    **{
        f"wgmma-{name}": Gemm(**{"tile": (128, 64, 64), "warps": (8, 1), **shape}, atom=atom)
        for name, atom, shape in (
            ("128x64x192-ring-wraps", "wgmma m64n64k16", dict(m=128, n=64, k=192, pipeline=2)),
            ("tails-150x72x136", "wgmma m64n64k16", dict(m=150, n=72, k=136, pipeline=2)),
            (
                "192-wide-tails-150x200x72",
                "wgmma m64n192k16",
                dict(m=150, n=200, k=72, tile=(128, 192, 64), pipeline=2),
            ),
            # Rows of 70 f32 (280 bytes) are no multiple of TMA's 16: stored from registers.
            ("registers-tails-100x70x80", "wgmma m64n64k16", dict(m=100, n=70, k=80, pipeline=2)),
            (
                "raster-3-of-4-rows-of-tiles",
                "wgmma m64n64k16",
                dict(m=256, n=128, k=64, tile=(64, 64, 64), warps=(4, 1), pipeline=2, raster=3),
            ),
            (
                "one-consumer-one-stage",
                "wgmma m64n128k16",
                dict(m=64, n=128, k=128, tile=(64, 128, 64), warps=(4, 1), pipeline=1),
            ),
            (
                "consumers-along-n-f16",
                "wgmma m64n32k16",
                dict(m=64, n=64, k=64, dtype="f16", tile=(64, 64, 64), warps=(4, 2)),
            ),
            (
                "kn-tails-150x72x136",
                "wgmma m64n64k16",
                dict(m=150, n=72, k=136, b_layout="kn", pipeline=2),
            ),
            (
                "kn-128-wide-batched-f16",
                "wgmma m64n128k16",
                dict(
                    m=70,
                    n=200,
                    k=72,
                    dtype="f16",
                    batch=(2,),
                    b_layout="kn",
                    tile=(64, 128, 64),
                    warps=(4, 1),
                    pipeline=2,
                ),
            ),
            (
                "kn-256-wide-k-tail",
                "wgmma m64n256k16",
                dict(m=64, n=312, k=80, b_layout="kn", tile=(64, 256, 64), warps=(4, 1)),
            ),
            (
                "kn-consumers-along-n-shared-weight",
                "wgmma m64n64k16",
                dict(
                    m=64,
                    n=136,
                    k=64,
                    batch=(2,),
                    b_layout="kn",
                    b_batched=False,
                    tile=(64, 128, 64),
                    warps=(4, 2),
                    seed=6,
                ),
            ),
            (
                "cluster-2-odd-m-tiles-k-tail",
                "wgmma m64n64k16",
                dict(m=150, n=72, k=136, pipeline=2, cluster=2, seed=7),
            ),
            (
                "kn-cluster-2-batched-tails",
                "wgmma m64n128k16",
                dict(
                    m=70,
                    n=200,
                    k=72,
                    batch=(2,),
                    b_layout="kn",
                    tile=(64, 128, 64),
                    warps=(4, 1),
                    pipeline=2,
                    cluster=2,
                    seed=8,
                ),
            ),
            (
                "cluster-4-consumers-along-n",
                "wgmma m64n32k16",
                dict(m=200, n=64, k=128, tile=(64, 64, 64), warps=(4, 2), cluster=4, seed=9),
            ),
            (
                "batched-shared-weight-bias-gelu",
                "wgmma m64n64k16",
                dict(
                    m=70,
                    n=64,
                    k=64,
                    batch=(2,),
                    b_batched=False,
                    epilogue="bias-gelu",
                    tile=(64, 64, 64),
                    warps=(4, 1),
                    pipeline=2,
                ),
            ),
        )
    },
    # Weight-streaming (decode) tiles: a few rows, warps along N only, wide K slices, deep
    # pipelines (past a block's static 48 KB of shared memory at 8 deep), tails in N and K.
    "streaming-m1-16x32x128-8-stages": Gemm(
        1, 40, 300, tile=(16, 32, 128), warps=(1, 4), pipeline=8
    ),
    "streaming-m5-16x32x64-kn-tails": Gemm(
        5, 72, 200, b_layout="kn", tile=(16, 32, 64), warps=(1, 4), pipeline=5, seed=1
    ),
    "streaming-m16-16x64x128-a-km": Gemm(
        16, 64, 264, a_layout="km", tile=(16, 64, 128), warps=(1, 4), pipeline=6, seed=2
    ),
    "streaming-m33-64x32x128-bias-gelu": Gemm(
        33, 50, 136, tile=(64, 32, 128), warps=(1, 4), pipeline=4, epilogue="bias-gelu", seed=3
    ),
    "streaming-m64-64x16x64-two-warps": Gemm(
        64, 24, 72, tile=(64, 16, 64), warps=(1, 2), pipeline=4, seed=4
    ),
    "streaming-m20-32x32x128-f16": Gemm(
        20, 32, 128, dtype="f16", tile=(32, 32, 128), warps=(1, 4), pipeline=2, seed=5
    ),
    # Split-K: `split` blocks of a cluster per output tile, each an equal run of K slices (the
    # last one's past the end of K adding zeros), their partial tiles summed through
    # distributed shared memory before the epilogue.
    "split-2-m1-k-tail": Gemm(1, 40, 200, tile=(16, 32, 64), warps=(1, 4), pipeline=2, split=2),
    "split-3-m5-last-block-short": Gemm(
        5, 72, 300, tile=(16, 32, 64), warps=(1, 4), pipeline=3, split=3, seed=1
    ),
    "split-4-m16-bias-gelu-bf16": Gemm(
        16,
        64,
        900,
        tile=(16, 32, 128),
        warps=(1, 4),
        pipeline=4,
        split=4,
        epilogue="bias-gelu",
        seed=2,
    ),
    "split-2-m16-kn-n-tail": Gemm(
        16, 50, 136, b_layout="kn", tile=(16, 32, 32), warps=(1, 2), pipeline=2, split=2, seed=3
    ),
    "split-2-batched-shared-weight": Gemm(
        17, 40, 96, batch=(2,), b_batched=False, tile=(32, 32, 32), split=2, seed=4
    ),
    "split-3-fma": Gemm(
        20, 24, 40, dtype="f32", atom="fma", tile=(32, 32, 8), warps=(1, 1), split=3, seed=5
    ),
}


@pytest.mark.parametrize("name", sorted(EMULATED))
def test_tile_gemm_in_the_emulator_matches_torch(name: str):
    gemm = EMULATED[name]
    inputs = gemm.inputs()
    arrays = [as_numpy(x) for x in inputs]
    (at_tile,) = run_module(parse(gemm.text()), arrays)
    check(gemm, at_tile, inputs)
    (at_kernel,) = run_module(lowered(gemm), arrays)
    check(gemm, at_kernel, inputs)


@pytest.mark.parametrize(
    "product, shape, dtype",
    [
        ("torch.bmm(a, a)", (2, 4, 4), "float32"),
        ("a @ a.T", (70, 33), "float32"),
        ("torch.bmm(a, a)", (2, 64, 64), "bfloat16"),
    ],
)
def test_one_buffer_as_both_operands(product: str, shape: tuple[int, ...], dtype: str):
    """A product of a buffer with itself (`bmm(a, a)`, `a @ a.T`): its two operands' tiles
    have their own shapes and copies though they read one buffer (they were told apart by
    the buffer, and the second's copies took the first's rows)."""
    program = load_program(
        f"""
class Square(nn.Module):
    def forward(self, a):
        return {product}
Square()(torch.randn{shape}.to(torch.{dtype}))
""",
        "<source>",
    )
    torch_ir = program.to_torch_ir()
    reports = check_levels(program, torch_ir, ("kernel",), seed=7)
    assert all(r.passed for r in reports), [(r.max_abs_error, r.max_rel_error) for r in reports]


def test_a_wrong_wait_count_is_a_race_the_emulator_reports():
    """A pipeline that waits for one group too few reads a slice still in flight."""
    gemm = Gemm(32, 32, 64, tile=(32, 32, 16))
    text = str(lowered(gemm)).replace("kernel.cp_async_wait 1", "kernel.cp_async_wait 2")
    with pytest.raises(ExecutionError, match=r"which a cp.async still in flight writes"):
        run_module(parse(text), [as_numpy(x) for x in gemm.inputs()])


@pytest.mark.parametrize(
    "name, staged",
    [
        ("wgmma-tails-150x72x136", True),
        ("wgmma-batched-shared-weight-bias-gelu", True),
        ("wgmma-kn-cluster-2-batched-tails", True),
        ("wgmma-registers-tails-100x70x80", False),
    ],
)
def test_wgmma_output_goes_through_shared_memory_and_tma_where_it_can(name: str, staged: bool):
    """A wgmma gemm stores its output a panel at a time with TMA (which clips the tails),
    except where TMA cannot address the output's rows: each thread then stores its own."""
    text = str(lowered(EMULATED[name]))
    assert ("kernel.tma_store %out_map" in text) == staged
    assert ("kernel.tma_store_wait 0" in text) == staged
    assert ("kernel.vector_store" in text and "%out_panels" not in text) == (not staged)


def test_a_wgmma_pipeline_that_leaves_no_room_for_a_panel_stores_from_registers():
    """7 stages of a 128 x 128 tile take 224 KB of the block's 227: no staging panel of
    64 rows x 128 bytes for each of the 2 consumer warp groups fits beside them, so each
    thread stores its own results; with 6 stages two slots each fit."""
    deep, room = (
        Gemm(256, 256, 128, tile=(128, 128, 64), warps=(8, 1), atom="wgmma m64n128k16", pipeline=p)
        for p in (7, 6)
    )
    assert "kernel.tma_store" not in str(lowered(deep))
    assert "memref<2x2x64x32xf32, 3 : i32>" in str(lowered(room))


def test_a_linear_of_one_sequence_stores_its_output_through_tma():
    """`nn.Linear` of a [1, S, D] input writes its [1, S, N] output at (0, m, n): through TMA
    too, the output's map one deep along the leading 1; correct on the emulator, tails
    included (150 rows, 72 columns)."""
    program = load_program(
        """
class Project(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(64, 72)
    def forward(self, x):
        return self.linear(x)
Project().to(torch.bfloat16)(torch.randn(1, 150, 64).to(torch.bfloat16))
""",
        "<source>",
    )
    torch_ir = program.to_torch_ir()
    text = str(lower(torch_ir, "kernel"))
    assert "!kernel.tensor_map<memref<1x150x72xbf16>, box [1, 64, 64], swizzle 128>" in text
    assert "kernel.tma_store %out_map[%c0, " in text
    reports = check_levels(program, torch_ir, ("kernel",), seed=7)
    assert all(r.passed for r in reports), [(r.max_abs_error, r.max_rel_error) for r in reports]


def test_a_projection_into_heads_stores_its_output_through_tma():
    """A projection viewed as heads and transposed ([1, S, H * D] as [1, H, S, D], as
    attention's q, k and v are) writes element (m, n) at (0, n / D, m, n % D): a panel of
    64 columns lies in one head, so it goes through TMA as one box of [1, 1, 64, 64]."""
    program = load_program(
        """
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(64, 256, bias=False)
    def forward(self, x):
        return self.linear(x).view(1, 150, 2, 128).transpose(1, 2)
Heads().to(torch.bfloat16)(torch.randn(1, 150, 64).to(torch.bfloat16))
""",
        "<source>",
    )
    torch_ir = program.to_torch_ir()
    text = str(lower(torch_ir, "kernel"))
    assert "!kernel.tensor_map<memref<1x2x150x128xbf16>, box [1, 1, 64, 64], swizzle 128>" in text
    reports = check_levels(program, torch_ir, ("kernel",), seed=7)
    assert all(r.passed for r in reports), [(r.max_abs_error, r.max_rel_error) for r in reports]


def test_a_wgmma_output_panel_rewritten_before_its_store_read_it_is_an_error():
    """The group's thread waits until the TMA stores that read a staging slot are done
    reading it before the group writes the slot again."""
    gemm = EMULATED["wgmma-tails-150x72x136"]
    # One persistent block takes all 4 tiles, each of 2 panels a group, in its 2 slots.
    text = str(lowered(gemm)).replace("grid [4, 1, 1]", "grid [1, 1, 1]")
    run_module(parse(text), [as_numpy(x) for x in gemm.inputs()])
    text = text.replace("kernel.tma_store_wait 1 read", "kernel.tma_store_wait 2 read")
    with pytest.raises(ExecutionError, match=r"kernel.tma_store still in flight reads"):
        run_module(parse(text), [as_numpy(x) for x in gemm.inputs()])


def test_a_wgmma_kernel_that_ends_before_its_output_stores_is_an_error():
    """The block's shared memory ends with it: its last TMA stores are waited for."""
    gemm = EMULATED["wgmma-tails-150x72x136"]
    text = str(lowered(gemm)).replace("kernel.tma_store_wait 0\n", "kernel.tma_store_wait 1\n")
    with pytest.raises(ExecutionError, match=r"ends with kernel.tma_store in flight"):
        run_module(parse(text), [as_numpy(x) for x in gemm.inputs()])


def test_a_split_that_reads_the_partials_before_the_cluster_barrier_is_a_race():
    """The blocks of a split read each other's partial tiles only after the cluster barrier
    that follows every block's stores."""
    gemm = EMULATED["split-2-m1-k-tail"]
    text = str(lowered(gemm)).replace("kernel.cluster_barrier", "kernel.barrier", 1)
    with pytest.raises(
        ExecutionError, match=r"since the last cluster barrier \(a missing kernel.cluster_barrier"
    ):
        run_module(parse(text), [as_numpy(x) for x in gemm.inputs()])


# ---- CUDA ------------------------------------------------------------------------------------

COMPILED = {
    "fma-128x128x8-nk": Gemm(
        256, 256, 256, dtype="f32", atom="fma", tile=(128, 128, 8), warps=(4, 2)
    ),
    "fma-64x64x8-tails-batched-kn": Gemm(
        70, 50, 40, dtype="f32", batch=(2,), b_layout="kn", atom="fma", tile=(64, 64, 8)
    ),
    "tf32-128x128x16-nk": Gemm(
        256, 256, 256, dtype="f32", atom="mma_sync m16n8k8", tile=(128, 128, 16)
    ),
    "tf32-tails-a-km-kn": Gemm(
        70,
        50,
        40,
        dtype="f32",
        a_layout="km",
        b_layout="kn",
        atom="mma_sync m16n8k8",
        tile=(64, 64, 16),
    ),
    "bf16-128x128x32-nk": Gemm(256, 256, 256, tile=(128, 128, 32)),
    "bf16-128x128x32-4-stages-dynamic": Gemm(256, 256, 256, tile=(128, 128, 32), pipeline=4),
    "f16-tails-kn-bias-gelu": Gemm(70, 50, 40, dtype="f16", b_layout="kn", epilogue="bias-gelu"),
    "batched-a-km": Gemm(64, 64, 64, batch=(2,), a_layout="km"),
    "odd-k": Gemm(20, 24, 33, tile=(32, 32, 16)),
    "wgmma-128x256x64-4-stages": Gemm(
        512, 512, 512, tile=(128, 256, 64), warps=(8, 1), atom="wgmma m64n256k16", pipeline=4
    ),
    "wgmma-128x192x64-4-stages-bias-gelu": Gemm(
        512,
        576,
        512,
        tile=(128, 192, 64),
        warps=(8, 1),
        atom="wgmma m64n192k16",
        pipeline=4,
        epilogue="bias-gelu",
    ),
    "wgmma-batched-tails-bias-gelu": Gemm(
        70,
        200,
        136,
        batch=(2,),
        epilogue="bias-gelu",
        tile=(64, 128, 64),
        warps=(4, 1),
        atom="wgmma m64n128k16",
    ),
    "wgmma-kn-128x256x64-4-stages": Gemm(
        512,
        512,
        512,
        b_layout="kn",
        tile=(128, 256, 64),
        warps=(8, 1),
        atom="wgmma m64n256k16",
        pipeline=4,
    ),
    "wgmma-cluster-2-128x256x64-4-stages": Gemm(
        512,
        512,
        512,
        tile=(128, 256, 64),
        warps=(8, 1),
        atom="wgmma m64n256k16",
        pipeline=4,
        cluster=2,
    ),
    "wgmma-kn-f16-batched-tails-bias-gelu": Gemm(
        70,
        200,
        136,
        dtype="f16",
        batch=(2,),
        b_layout="kn",
        epilogue="bias-gelu",
        tile=(64, 128, 64),
        warps=(4, 1),
        atom="wgmma m64n128k16",
    ),
    "decode-16x4096x4096-16x32x128-8-stages": Gemm(
        16, 4096, 4096, tile=(16, 32, 128), warps=(1, 4), pipeline=8
    ),
    "decode-1x11008x4096-16x64x128-5-stages-bias-gelu": Gemm(
        1, 11008, 4096, tile=(16, 64, 128), warps=(1, 4), pipeline=5, epilogue="bias-gelu"
    ),
    "decode-16x4096x4096-16x32x128-8-stages-split-4-bias-gelu": Gemm(
        16, 4096, 4096, tile=(16, 32, 128), warps=(1, 4), pipeline=8, split=4, epilogue="bias-gelu"
    ),
    "decode-5x4096x11008-16x32x128-split-3-k-tail": Gemm(
        5, 4096, 11008, tile=(16, 32, 128), warps=(1, 4), pipeline=6, split=3
    ),
    "split-2-fma-batched": Gemm(
        70, 50, 40, dtype="f32", batch=(2,), atom="fma", tile=(64, 64, 8), split=2
    ),
}


@needs_nvcc
@pytest.mark.parametrize("name", sorted(COMPILED))
def test_tile_gemm_compiles_for_sm_90a_without_spills(name: str, tmp_path):
    report = nvcc_compile(print_cuda(lowered(COMPILED[name])), tmp_path, ptxas_report=True)
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in report


ON_GPU = {
    "fma-1024x1024x1024": Gemm(
        1024, 1024, 1024, dtype="f32", atom="fma", tile=(128, 128, 8), warps=(4, 2)
    ),
    "fma-tails-1000x1000x1000-kn": Gemm(
        1000,
        1000,
        1000,
        dtype="f32",
        b_layout="kn",
        atom="fma",
        tile=(128, 128, 8),
        warps=(4, 2),
        seed=6,
    ),
    "tf32-1024x1024x1024": Gemm(
        1024, 1024, 1024, dtype="f32", atom="mma_sync m16n8k8", tile=(128, 128, 16)
    ),
    "tf32-batched-tails-a-km": Gemm(
        300,
        200,
        136,
        dtype="f32",
        batch=(2,),
        a_layout="km",
        atom="mma_sync m16n8k8",
        tile=(64, 64, 16),
        seed=7,
    ),
    "bf16-1024x1024x1024-nk": Gemm(1024, 1024, 1024, tile=(128, 128, 32)),
    "bf16-1024x1024x1024-4-stages": Gemm(1024, 1024, 1024, tile=(128, 128, 32), pipeline=4),
    "f16-1024x1024x1024-kn": Gemm(
        1024, 1024, 1024, dtype="f16", b_layout="kn", tile=(128, 128, 32)
    ),
    "tails-1000x1000x1000": Gemm(1000, 1000, 1000, tile=(128, 128, 32), seed=1),
    "m1-decode": Gemm(1, 4096, 4096, tile=(64, 64, 64), seed=2),
    "m16-decode-streaming": Gemm(
        16, 4096, 4096, tile=(16, 32, 128), warps=(1, 4), pipeline=8, seed=4
    ),
    "batched-bias-silu": Gemm(
        300, 200, 136, batch=(4,), b_layout="kn", epilogue="bias-silu", tile=(128, 128, 32)
    ),
    "m16-decode-streaming-split-4-bias-gelu": Gemm(
        16,
        4096,
        4096,
        tile=(16, 32, 128),
        warps=(1, 4),
        pipeline=8,
        split=4,
        epilogue="bias-gelu",
        seed=10,
    ),
    "m1-decode-split-3-k-tail": Gemm(
        1, 4096, 4000, tile=(16, 32, 128), warps=(1, 4), pipeline=6, split=3, seed=11
    ),
    "split-emulated": EMULATED["split-2-batched-shared-weight"],
    "emulated-tails": EMULATED["tails-70x50x40-kn"],
    "wgmma-1024x1024x1024": Gemm(
        1024, 1024, 1024, tile=(128, 256, 64), warps=(8, 1), atom="wgmma m64n256k16", pipeline=4
    ),
    "wgmma-tails-1000x1000x1000": Gemm(
        1000, 1000, 1000, tile=(128, 256, 64), warps=(8, 1), atom="wgmma m64n256k16", seed=4
    ),
    "wgmma-batched-bias-silu-f16": Gemm(
        300,
        200,
        136,
        dtype="f16",
        batch=(4,),
        epilogue="bias-silu",
        tile=(128, 128, 64),
        warps=(8, 1),
        atom="wgmma m64n128k16",
        seed=5,
    ),
    "wgmma-emulated-tails": EMULATED["wgmma-tails-150x72x136"],
    "wgmma-cluster-2-tails-1000x1000x1000": Gemm(
        1000,
        1000,
        1000,
        tile=(128, 256, 64),
        warps=(8, 1),
        atom="wgmma m64n256k16",
        cluster=2,
        seed=12,
    ),
    "wgmma-kn-cluster-2-2048x1024x512": Gemm(
        2048,
        1024,
        512,
        b_layout="kn",
        tile=(128, 256, 64),
        warps=(8, 1),
        atom="wgmma m64n256k16",
        pipeline=4,
        cluster=2,
        seed=13,
    ),
    "wgmma-kn-1024x1024x1024": Gemm(
        1024,
        1024,
        1024,
        b_layout="kn",
        tile=(128, 256, 64),
        warps=(8, 1),
        atom="wgmma m64n256k16",
        pipeline=4,
    ),
    "wgmma-kn-tails-1000x1000x1000": Gemm(
        1000,
        1000,
        1000,
        b_layout="kn",
        tile=(128, 256, 64),
        warps=(8, 1),
        atom="wgmma m64n256k16",
        seed=7,
    ),
    "wgmma-kn-batched-bias-silu-f16": Gemm(
        300,
        200,
        136,
        dtype="f16",
        batch=(4,),
        b_layout="kn",
        epilogue="bias-silu",
        tile=(128, 128, 64),
        warps=(8, 1),
        atom="wgmma m64n128k16",
        seed=8,
    ),
    "wgmma-kn-consumers-along-n-f16": Gemm(
        256,
        520,
        200,
        dtype="f16",
        b_layout="kn",
        tile=(64, 256, 64),
        warps=(4, 2),
        atom="wgmma m64n128k16",
        seed=9,
    ),
    **{
        f"wgmma-emulated-{name}": EMULATED[f"wgmma-{name}"]
        for name in (
            "kn-tails-150x72x136",
            "kn-128-wide-batched-f16",
            "kn-256-wide-k-tail",
            "cluster-2-odd-m-tiles-k-tail",
            "kn-cluster-2-batched-tails",
            "cluster-4-consumers-along-n",
            "192-wide-tails-150x200x72",
            "registers-tails-100x70x80",
        )
    },
    "wgmma-192-wide-tails-1000x1000x1000": Gemm(
        1000,
        1000,
        1000,
        tile=(128, 192, 64),
        warps=(8, 1),
        atom="wgmma m64n192k16",
        pipeline=4,
        seed=6,
    ),
}


@needs_gpu
@pytest.mark.parametrize("name", sorted(ON_GPU))
def test_tile_gemm_on_the_gpu_matches_torch(name: str):
    from emmy.tools.runtime.host import HostProgram

    gemm = ON_GPU[name]
    inputs = gemm.inputs()
    expected = gemm.expected(inputs)
    (result,) = HostProgram(lowered(gemm))([x.cuda() for x in inputs])
    result = result.cpu()
    if gemm.dtype == "f32":
        check(gemm, result, inputs)
    elif expected.dtype == torch.bfloat16:
        torch.testing.assert_close(result, expected, rtol=2**-7, atol=1e-5)
    else:
        # The hardware's accumulation order is its own: f32 sums of K products.
        torch.testing.assert_close(result, expected, rtol=1e-4, atol=1e-3)
