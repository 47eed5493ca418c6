"""Warp-level tensor cores in Kernel IR: `kernel.ldmatrix` and `kernel.mma_sync`.

The SIMT emulator is their executable specification: each lane's fragment is checked against
the PTX ISA's layouts (transcribed here from the ISA's pseudo-code, independently of the
emulator's tables), whole warp and block GEMMs against torch.matmul on fresh random inputs, and
the misuses the hardware leaves undefined are errors. The same kernels print as CUDA that nvcc
compiles for sm_90a, and on a GPU (skipped without one) give what the emulator gives.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from test_cuda_target import NVCC, nvcc_compile
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from emmy.dialects import make_context, target
from emmy.tools.cuda.target import print_cuda
from emmy.tools.interpreter.run import ExecutionError, run_module

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")

HALF_TYPES = {"bf16": torch.bfloat16, "f16": torch.float16}


def parse(text: str, verify: bool = True) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    if verify:
        module.verify()
    return module


def as_numpy(value: torch.Tensor) -> np.ndarray:
    """The emulator's representation: bf16 as float32 (holding bf16 values)."""
    value = value.cpu()
    return (value.float() if value.dtype == torch.bfloat16 else value).numpy()


def emulate(text: str, *inputs: torch.Tensor, verify: bool = True) -> list[torch.Tensor]:
    arrays = [as_numpy(x) for x in inputs]
    return [torch.from_numpy(out) for out in run_module(parse(text, verify), arrays)]


def on_gpu(text: str, *inputs: torch.Tensor) -> list[torch.Tensor]:
    from emmy.tools.runtime.host import HostProgram

    return [out.cpu() for out in HostProgram(parse(text))([x.cuda() for x in inputs])]


def fresh(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator).to(dtype)


# ---- the PTX ISA's fragment layouts, as its pseudo-code states them --------------------------
# groupID = %laneid >> 2, threadID_in_group = %laneid % 4 ("Matrix Fragments for
# mma.m16n8k16 with floating point type", "Matrix Fragments for mma.m16n8k8").


def a_position(shape: str, tf32: bool, lane: int, i: int) -> tuple[int, int]:
    group, tig = lane >> 2, lane % 4
    if shape == "m16n8k16":
        row = group if i < 2 or 4 <= i < 6 else group + 8
        col = tig * 2 + (i & 1) if i < 4 else tig * 2 + (i & 1) + 8
    elif tf32:
        row = group if i in (0, 2) else group + 8
        col = tig if i in (0, 1) else tig + 4
    else:
        row = group if i in (0, 1) else group + 8
        col = tig * 2 + (i & 1)
    return row, col


def b_position(shape: str, tf32: bool, lane: int, i: int) -> tuple[int, int]:
    group, tig = lane >> 2, lane % 4
    if shape == "m16n8k16":
        row = tig * 2 + (i & 1) if i < 2 else tig * 2 + (i & 1) + 8
    elif tf32:
        row = tig if i == 0 else tig + 4
    else:
        row = tig * 2 + i
    return row, group


def c_position(lane: int, i: int) -> tuple[int, int]:
    group, tig = lane >> 2, lane % 4
    return (group if i < 2 else group + 8), tig * 2 + (i & 1)


def fragments(matrix: torch.Tensor, elements: int, position) -> torch.Tensor:
    """Each lane's fragment of `matrix`: row `lane` holds its `elements` elements."""
    return torch.stack(
        [torch.stack([matrix[position(lane, i)] for i in range(elements)]) for lane in range(32)]
    )


def unfragment(lanes: torch.Tensor) -> torch.Tensor:
    """The 16x8 accumulator whose lanes' fragments are the rows of `lanes`."""
    matrix = torch.full((16, 8), float("nan"))
    for lane in range(32):
        for i in range(4):
            matrix[c_position(lane, i)] = lanes[lane, i]
    return matrix


def tf32(values: torch.Tensor) -> torch.Tensor:
    """f32 rounded to 10 fraction bits, to nearest with ties away from zero."""
    mantissa, exponent = np.frexp(values.numpy().astype(np.float64))
    rounded = np.sign(mantissa) * np.floor(np.abs(mantissa) * 2.0**11 + 0.5) / 2.0**11
    return torch.from_numpy(np.ldexp(rounded, exponent).astype(np.float32))


# ---- mma_sync on fragments given per lane ----------------------------------------------------

MMA_VARIANTS = [
    ("m16n8k16", "bf16"),
    ("m16n8k16", "f16"),
    ("m16n8k8", "bf16"),
    ("m16n8k8", "f16"),
    ("m16n8k8", "tf32"),
]
MMA_FORMS = [
    pytest.param(shape, element, id=f"{shape}-{element}") for shape, element in MMA_VARIANTS
]


def mma_kernel(shape: str, element: str) -> str:
    """A warp loads each lane's A, B and C fragments from a row of its own, multiplies, and
    stores D the same way."""
    k = 16 if shape == "m16n8k16" else 8
    a_n, b_n = 16 * k // 32, 8 * k // 32
    t = "f32" if element == "tf32" else element
    keyword = " tf32" if element == "tf32" else ""
    a, b, c = f"memref<32x{a_n}x{t}>", f"memref<32x{b_n}x{t}>", "memref<32x4xf32>"
    return f"""
kernel.func @mma(%a: {a}, %b: {b}, %c: {c}, %d: {c}) block [32, 1, 1] {{
  %lane = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %fa = kernel.vector_load %a[%lane, %c0] : {a}, vector<{a_n}x{t}>
  %fb = kernel.vector_load %b[%lane, %c0] : {b}, vector<{b_n}x{t}>
  %fc = kernel.vector_load %c[%lane, %c0] : {c}, vector<4xf32>
  %fd = kernel.mma_sync {shape}{keyword} %fa, %fb, %fc
      : vector<{a_n}x{t}>, vector<{b_n}x{t}>, vector<4xf32> -> vector<4xf32>
  kernel.vector_store %fd, %d[%lane, %c0] : {c}, vector<4xf32>
}}

func.func @forward(%a: {a}, %b: {b}, %c: {c}) -> {c} {{
  %d = memref.alloc() : {c}
  kernel.launch @mma(%a, %b, %c, %d) grid [1, 1, 1] block [32, 1, 1] smem 0 : {a}, {b}, {c}, {c}
  func.return %d : {c}
}}
"""


def mma_case(shape: str, element: str, seed: int):
    """The kernel, its fragment inputs, the matrices and D = A @ B + C in float64."""
    k = 16 if shape == "m16n8k16" else 8
    is_tf32 = element == "tf32"
    dtype = torch.float32 if is_tf32 else HALF_TYPES[element]
    a, b = fresh(16, k, dtype=dtype, seed=seed), fresh(k, 8, dtype=dtype, seed=seed + 1)
    c = fresh(16, 8, seed=seed + 2)
    inputs = (
        fragments(a, 16 * k // 32, lambda lane, i: a_position(shape, is_tf32, lane, i)),
        fragments(b, 8 * k // 32, lambda lane, i: b_position(shape, is_tf32, lane, i)),
        fragments(c, 4, c_position),
    )
    if is_tf32:
        a, b = tf32(a), tf32(b)
    expected = a.double() @ b.double() + c.double()
    return mma_kernel(shape, element), inputs, expected


@pytest.mark.parametrize("shape,element", MMA_FORMS)
@pytest.mark.parametrize("seed", [0, 1])
def test_mma_sync_follows_the_ptx_fragment_layouts(shape: str, element: str, seed: int):
    text, inputs, expected = mma_case(shape, element, 10 * seed)
    (d,) = emulate(text, *inputs)
    # Exact products summed in float64 and rounded once: the f32 nearest the exact value.
    torch.testing.assert_close(unfragment(d), expected.float(), rtol=2**-23, atol=1e-30)


def test_tf32_rounds_each_operand_to_nearest_ties_away():
    text, inputs, expected = mma_case("m16n8k8", "tf32", 3)
    (d,) = emulate(text, *inputs)
    a_lanes, b_lanes, c_lanes = inputs
    a = torch.zeros(16, 8)
    b = torch.zeros(8, 8)
    for lane in range(32):
        for i in range(4):
            a[a_position("m16n8k8", True, lane, i)] = a_lanes[lane, i]
        for i in range(2):
            b[b_position("m16n8k8", True, lane, i)] = b_lanes[lane, i]
    full_precision = (a.double() @ b.double() + unfragment(c_lanes).double()).float()
    assert not torch.allclose(unfragment(d), full_precision, rtol=1e-6, atol=0)
    # A tie rounds away from zero: 1 + 2^-11 is halfway between tf32's 1 and 1 + 2^-10.
    halfway = torch.tensor([1 + 2**-11, -(1 + 2**-11), 1 + 3 * 2**-12])
    assert tf32(halfway).tolist() == [1 + 2**-10, -(1 + 2**-10), 1 + 2**-10]
    from emmy.tools.interpreter.simt import round_to_tf32

    assert round_to_tf32(halfway.numpy()).tolist() == tf32(halfway).tolist()


# ---- ldmatrix, lane by lane ------------------------------------------------------------------


def ldmatrix_kernel(element: str, matrices: int, trans: bool) -> str:
    """Lanes copy a 32x16 matrix to shared memory; each lane gives the (row, column) of the
    next input row as its ldmatrix address and stores the fragment it receives."""
    src, shared = f"memref<32x16x{element}>", f"memref<32x16x{element}, 3 : i32>"
    width = 2 * matrices
    out = f"memref<32x{width}x{element}>"
    return f"""
kernel.func @load(%x: {src}, %where: memref<32x2xindex>, %y: {out}) block [32, 1, 1] {{
  %lane = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %s = kernel.shared_alloc : {shared}
  scf.for %j = %c0 to %c16 step %c1 {{
    %v = memref.load %x[%lane, %j] : {src}
    memref.store %v, %s[%lane, %j] : {shared}
  }}
  kernel.barrier
  %row = memref.load %where[%lane, %c0] : memref<32x2xindex>
  %col = memref.load %where[%lane, %c1] : memref<32x2xindex>
  %f = kernel.ldmatrix %s[%row, %col]{" trans" if trans else ""}
      : {shared}, vector<{width}x{element}>
  kernel.vector_store %f, %y[%lane, %c0] : {out}, vector<{width}x{element}>
}}

func.func @forward(%x: {src}, %where: memref<32x2xindex>) -> {out} {{
  %y = memref.alloc() : {out}
  kernel.launch @load(%x, %where, %y) grid [1, 1, 1] block [32, 1, 1] smem 0
      : {src}, memref<32x2xindex>, {out}
  func.return %y : {out}
}}
"""


def ldmatrix_case(element: str, matrices: int, trans: bool, seed: int):
    """Random addresses (distinct rows, column 0 or 8), the unused lanes' out of bounds, and
    each lane's fragment by the PTX ISA: lanes 8i to 8i + 7 address the rows of matrix i, and
    lane l receives row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of each (of its transpose
    with trans)."""
    x = fresh(32, 16, dtype=HALF_TYPES[element], seed=seed)
    generator = torch.Generator().manual_seed(seed + 1)
    rows = torch.randperm(32, generator=generator)
    cols = 8 * torch.randint(0, 2, (32,), generator=generator)
    where = torch.stack([rows, cols], dim=1)
    where[8 * matrices :] = torch.tensor([1000, -5])
    expected = torch.empty(32, 2 * matrices, dtype=x.dtype)
    for lane in range(32):
        for i in range(matrices):
            matrix = torch.stack([x[r, c : c + 8] for r, c in where[8 * i : 8 * i + 8].tolist()])
            if trans:
                matrix = matrix.T
            for j in range(2):
                expected[lane, 2 * i + j] = matrix[lane // 4, 2 * (lane % 4) + j]
    return ldmatrix_kernel(element, matrices, trans), (x, where), expected


@pytest.mark.parametrize("element", ["bf16", "f16"])
@pytest.mark.parametrize("matrices", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True], ids=["rows", "trans"])
def test_ldmatrix_hands_out_the_ptx_fragments(element: str, matrices: int, trans: bool):
    text, inputs, expected = ldmatrix_case(element, matrices, trans, seed=matrices)
    (y,) = emulate(text, *inputs)
    assert torch.equal(y.to(expected.dtype), expected)


# ---- GEMMs from shared memory ----------------------------------------------------------------


def warp_gemm_kernel(element: str, b_layout: str) -> str:
    """One warp: D (16x8, f32) = A (16x32) @ B over K = 32 in two m16n8k16 steps; A and B are
    staged in shared memory and loaded with ldmatrix. B is [K, N] (`kn`, loaded with trans) or
    nn.Linear's [N, K] (`nk`)."""
    t = element
    a, sa = f"memref<16x32x{t}>", f"memref<16x32x{t}, 3 : i32>"
    b_shape = "32x8" if b_layout == "kn" else "8x32"
    b, sb = f"memref<{b_shape}x{t}>", f"memref<{b_shape}x{t}, 3 : i32>"
    d = "memref<16x8xf32>"
    b_columns = 8 if b_layout == "kn" else 32
    if b_layout == "kn":
        # Lanes 0-15 address rows k0 .. k0 + 15 of B: two 8x8 blocks, transposed.
        b_address = """
    %br = arith.addi %k0, %l16 : index
    %fb = kernel.ldmatrix %sb[%br, %c0] trans : SB, vector<4xT>"""
    else:
        # Lanes 0-7 address W[n, k0], lanes 8-15 W[n, k0 + 8].
        b_address = """
    %bn = arith.remui %lane, %c8 : index
    %bh = arith.divui %lane, %c8 : index
    %bh2 = arith.remui %bh, %c2 : index
    %bo = arith.muli %bh2, %c8 : index
    %bc = arith.addi %k0, %bo : index
    %fb = kernel.ldmatrix %sb[%bn, %bc] : SB, vector<4xT>"""
    b_address = b_address.replace("SB", sb).replace("xT>", f"x{t}>")
    return f"""
kernel.func @warp_gemm(%a: {a}, %b: {b}, %d: {d}) block [32, 1, 1] {{
  %lane = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %bcols = arith.constant {b_columns} : index
  %sa = kernel.shared_alloc : {sa}
  %sb = kernel.shared_alloc : {sb}
  scf.for %i = %lane to %c512 step %c32 {{
    %r = arith.divui %i, %c32 : index
    %c = arith.remui %i, %c32 : index
    %v = memref.load %a[%r, %c] : {a}
    memref.store %v, %sa[%r, %c] : {sa}
  }}
  scf.for %i = %lane to %c256 step %c32 {{
    %r = arith.divui %i, %bcols : index
    %c = arith.remui %i, %bcols : index
    %v = memref.load %b[%r, %c] : {b}
    memref.store %v, %sb[%r, %c] : {sb}
  }}
  kernel.barrier
  %l16 = arith.remui %lane, %c16 : index
  %half = arith.divui %lane, %c16 : index
  %a_off = arith.muli %half, %c8 : index
  %zero = arith.constant 0.0 : f32
  %acc0 = vector.broadcast %zero : f32 to vector<4xf32>
  %acc = scf.for %k0 = %c0 to %c32 step %c16 iter_args(%acc_in = %acc0) -> (vector<4xf32>) {{
    %ac = arith.addi %k0, %a_off : index
    %fa = kernel.ldmatrix %sa[%l16, %ac] : {sa}, vector<8x{t}>{b_address}
    %acc_out = kernel.mma_sync m16n8k16 %fa, %fb, %acc_in
        : vector<8x{t}>, vector<4x{t}>, vector<4xf32> -> vector<4xf32>
    scf.yield %acc_out : vector<4xf32>
  }}
  %g = arith.divui %lane, %c4 : index
  %g8 = arith.addi %g, %c8 : index
  %q = arith.remui %lane, %c4 : index
  %n0 = arith.muli %q, %c2 : index
  %n1 = arith.addi %n0, %c1 : index
  %d0 = vector.extract %acc[0] : f32 from vector<4xf32>
  %d1 = vector.extract %acc[1] : f32 from vector<4xf32>
  %d2 = vector.extract %acc[2] : f32 from vector<4xf32>
  %d3 = vector.extract %acc[3] : f32 from vector<4xf32>
  memref.store %d0, %d[%g, %n0] : {d}
  memref.store %d1, %d[%g, %n1] : {d}
  memref.store %d2, %d[%g8, %n0] : {d}
  memref.store %d3, %d[%g8, %n1] : {d}
}}

func.func @forward(%a: {a}, %b: {b}) -> {d} {{
  %d = memref.alloc() : {d}
  kernel.launch @warp_gemm(%a, %b, %d) grid [1, 1, 1] block [32, 1, 1] smem 0 : {a}, {b}, {d}
  func.return %d : {d}
}}
"""


def warp_gemm_case(element: str, b_layout: str, seed: int):
    dtype = HALF_TYPES[element]
    a, b = fresh(16, 32, dtype=dtype, seed=seed), fresh(32, 8, dtype=dtype, seed=seed + 1)
    given_b = b if b_layout == "kn" else b.T.contiguous()
    return warp_gemm_kernel(element, b_layout), (a, given_b), torch.matmul(a.double(), b.double())


@pytest.mark.parametrize("element", ["bf16", "f16"])
@pytest.mark.parametrize("b_layout", ["kn", "nk"])
def test_a_warp_gemm_through_ldmatrix_and_mma_sync(element: str, b_layout: str):
    text, inputs, expected = warp_gemm_case(element, b_layout, seed=7)
    (d,) = emulate(text, *inputs)
    # Two f32 roundings (one per k-step of 16) of sums of at most 32 products.
    torch.testing.assert_close(d, expected.float(), rtol=1e-6, atol=1e-6)


def block_gemm_kernel(element: str, swizzle: bool) -> str:
    """A 128-thread block computes D (64x64, f32) = A (64x64) @ B (64x64, [K, N]): A and B are
    copied to shared memory with 16-byte cp.async, and each of the 4 warps computes a 32x32
    quarter of D as 2x4 m16n8k16 tiles over 4 k-steps, loading A with ldmatrix x4 and B with
    ldmatrix x2 trans."""
    t = element
    g = f"memref<64x64x{t}>"
    s = f"memref<64x64x{t}, 3 : i32>"
    d = "memref<64x64xf32>"
    layout = " {layout = #kernel.swizzle<128>}" if swizzle else ""
    tiles = [(mi, nj) for mi in range(2) for nj in range(4)]
    carried = ", ".join(f"%acc{mi}{nj}_in = %zero4" for mi, nj in tiles)
    carried_types = ", ".join("vector<4xf32>" for _ in tiles)
    step = []
    for mi in range(2):
        step.append(f"    %ar{mi} = arith.addi %arow, %c{16 * mi} : index")
        step.append(f"    %fa{mi} = kernel.ldmatrix %sa[%ar{mi}, %acol] : {s}, vector<8x{t}>")
    for nj in range(4):
        step.append(f"    %bc{nj} = arith.addi %wcol, %c{8 * nj} : index")
        step.append(f"    %fb{nj} = kernel.ldmatrix %sb[%brow, %bc{nj}] trans : {s}, vector<4x{t}>")
    for mi, nj in tiles:
        step.append(
            f"    %acc{mi}{nj}_out = kernel.mma_sync m16n8k16 %fa{mi}, %fb{nj}, %acc{mi}{nj}_in "
            f": vector<8x{t}>, vector<4x{t}>, vector<4xf32> -> vector<4xf32>"
        )
    yields = ", ".join(f"%acc{mi}{nj}_out" for mi, nj in tiles)
    results = ", ".join(f"%acc{mi}{nj}" for mi, nj in tiles)
    stores = []
    for mi in range(2):
        stores.append(f"  %row{mi} = arith.addi %grow, %c{16 * mi} : index")
        stores.append(f"  %row{mi}_8 = arith.addi %row{mi}, %c8 : index")
    for nj in range(4):
        stores.append(f"  %col{nj}_0 = arith.addi %gcol, %c{8 * nj} : index")
        stores.append(f"  %col{nj}_1 = arith.addi %col{nj}_0, %c1 : index")
    for mi, nj in tiles:
        for i in range(4):
            row = f"%row{mi}{'_8' if i >= 2 else ''}"
            col = f"%col{nj}_{i % 2}"
            stores.append(
                f"  %e{mi}{nj}{i} = vector.extract %acc{mi}{nj}[{i}] : f32 from vector<4xf32>"
            )
            stores.append(f"  memref.store %e{mi}{nj}{i}, %d[{row}, {col}] : {d}")
    constants = "\n".join(
        f"  %c{v} = arith.constant {v} : index" for v in (0, 1, 2, 4, 8, 16, 24, 32, 64, 128, 512)
    )
    step_text = "\n".join(step)
    store_text = "\n".join(stores)
    return f"""
kernel.func @block_gemm(%a: {g}, %b: {g}, %d: {d}) block [128, 1, 1] {{
  %tid = kernel.thread_id x
{constants}
  %sa = kernel.shared_alloc{layout} : {s}
  %sb = kernel.shared_alloc{layout} : {s}
  scf.for %v = %tid to %c512 step %c128 {{
    %r = arith.divui %v, %c8 : index
    %q = arith.remui %v, %c8 : index
    %c = arith.muli %q, %c8 : index
    kernel.cp_async %sa[%r, %c], %a[%r, %c] bytes 16 : {s}, {g}
    kernel.cp_async %sb[%r, %c], %b[%r, %c] bytes 16 : {s}, {g}
  }}
  kernel.cp_async_commit
  kernel.cp_async_wait 0
  kernel.barrier
  %warp = arith.divui %tid, %c32 : index
  %lane = arith.remui %tid, %c32 : index
  %wm = arith.divui %warp, %c2 : index
  %wn = arith.remui %warp, %c2 : index
  %wrow = arith.muli %wm, %c32 : index
  %wcol = arith.muli %wn, %c32 : index
  %l16 = arith.remui %lane, %c16 : index
  %half = arith.divui %lane, %c16 : index
  %a_off = arith.muli %half, %c8 : index
  %arow = arith.addi %wrow, %l16 : index
  %zero = arith.constant 0.0 : f32
  %zero4 = vector.broadcast %zero : f32 to vector<4xf32>
  {results} = scf.for %k0 = %c0 to %c64 step %c16
      iter_args({carried}) -> ({carried_types}) {{
    %acol = arith.addi %k0, %a_off : index
    %brow = arith.addi %k0, %l16 : index
{step_text}
    scf.yield {yields} : {carried_types}
  }}
  %g = arith.divui %lane, %c4 : index
  %q4 = arith.remui %lane, %c4 : index
  %n0 = arith.muli %q4, %c2 : index
  %grow = arith.addi %wrow, %g : index
  %gcol = arith.addi %wcol, %n0 : index
{store_text}
}}

func.func @forward(%a: {g}, %b: {g}) -> {d} {{
  %d = memref.alloc() : {d}
  kernel.launch @block_gemm(%a, %b, %d) grid [1, 1, 1] block [128, 1, 1] smem 0 : {g}, {g}, {d}
  func.return %d : {d}
}}
"""


def block_gemm_case(element: str, swizzle: bool, seed: int):
    dtype = HALF_TYPES[element]
    a, b = fresh(64, 64, dtype=dtype, seed=seed), fresh(64, 64, dtype=dtype, seed=seed + 1)
    return block_gemm_kernel(element, swizzle), (a, b), torch.matmul(a.double(), b.double())


@pytest.mark.parametrize("element", ["bf16", "f16"])
@pytest.mark.parametrize("swizzle", [False, True], ids=["dense", "swizzled"])
def test_a_64x64x64_block_gemm_with_four_warps(element: str, swizzle: bool):
    text, inputs, expected = block_gemm_case(element, swizzle, seed=11)
    (d,) = emulate(text, *inputs)
    # Four f32 roundings (one per k-step) of sums of at most 64 products.
    torch.testing.assert_close(d, expected.float(), rtol=1e-6, atol=1e-5)


# ---- what the hardware leaves undefined is an error ------------------------------------------


def guarded_mma_kernel(condition: str) -> str:
    """A 64-thread block whose threads with `thread_id <predicate> <bound>` (`condition`, as
    "ult 16") run an mma_sync of zero A and B onto C = 1 and store D."""
    predicate, bound = condition.split()
    return f"""
kernel.func @k(%y: memref<64x4xf32>) block [64, 1, 1] {{
  %t = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %bound = arith.constant {bound} : index
  %taken = arith.cmpi {predicate}, %t, %bound : index
  %zero = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %a = vector.broadcast %zero : bf16 to vector<8xbf16>
  %b = vector.broadcast %zero : bf16 to vector<4xbf16>
  %c = vector.broadcast %one : f32 to vector<4xf32>
  scf.if %taken {{
    %d = kernel.mma_sync m16n8k16 %a, %b, %c
        : vector<8xbf16>, vector<4xbf16>, vector<4xf32> -> vector<4xf32>
    kernel.vector_store %d, %y[%t, %c0] : memref<64x4xf32>, vector<4xf32>
  }}
}}

func.func @forward(%y: memref<64x4xf32>) -> memref<64x4xf32> {{
  kernel.launch @k(%y) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64x4xf32>
  func.return %y : memref<64x4xf32>
}}
"""


def test_mma_sync_needs_every_lane_of_the_warp():
    y = torch.zeros(64, 4)
    # The verifier rejects this kernel; the emulator reports it too, when it runs unverified.
    with pytest.raises(VerifyException, match="every lane of the warp"):
        parse(guarded_mma_kernel("ult 16"))
    with pytest.raises(
        ExecutionError,
        match=r"while running 'kernel.mma_sync': 'kernel.mma_sync' under divergent control "
        r"flow: only 16 of the 32 lanes of warp 0 of block \(0, 0, 0\) execute it, but every "
        r"lane of the warp must, converged",
    ):
        emulate(guarded_mma_kernel("ult 16"), y, verify=False)


def test_a_warp_may_skip_mma_sync_as_a_whole():
    (y,) = emulate(guarded_mma_kernel("uge 32"), torch.zeros(64, 4))
    assert torch.equal(y[:32], torch.zeros(32, 4)) and torch.equal(y[32:], torch.ones(32, 4))


def test_ldmatrix_rows_are_16_byte_aligned():
    text, (x, where), _ = ldmatrix_case("bf16", 4, False, seed=0)
    where[3, 1] = 4  # 8 bytes into a row
    with pytest.raises(
        ExecutionError,
        match=r"thread \(3, 0, 0\) of block \(0, 0, 0\): a 8-element access is not aligned to "
        r"its 16 bytes",
    ):
        emulate(text, x, where)


def test_ldmatrix_rows_are_in_bounds():
    text, (x, where), _ = ldmatrix_case("f16", 2, True, seed=0)
    where[12, 0] = 32
    with pytest.raises(
        ExecutionError,
        match=r"thread \(12, 0, 0\) of block \(0, 0, 0\): index #0 is 32, out of bounds for a "
        r"dimension of size 32",
    ):
        emulate(text, x, where)


def test_ldmatrix_reads_what_other_threads_stored_only_after_a_barrier():
    text, (x, where), _ = ldmatrix_case("bf16", 1, False, seed=0)
    where[:8] = torch.tensor([[row, 0] for row in range(1, 9)])
    with pytest.raises(
        ExecutionError,
        match=r"thread \(0, 0, 0\) of block \(0, 0, 0\) reads shared element \[1, 0\], which "
        r"thread \(1, 0, 0\) stored since the last barrier",
    ):
        emulate(text.replace("kernel.barrier", ""), x, where)


def test_ldmatrix_needs_every_lane_of_the_warp():
    text, (x, where), _ = ldmatrix_case("bf16", 4, False, seed=0)
    divergent = text.replace(
        "  %f = kernel.ldmatrix",
        "  %c24 = arith.constant 24 : index\n"
        "  %some = arith.cmpi ult, %lane, %c24 : index\n"
        "  scf.if %some {\n"
        "  %f = kernel.ldmatrix",
    ).replace("vector<8xbf16>\n}", "vector<8xbf16>\n  }\n}")
    with pytest.raises(VerifyException, match="every lane of the warp"):
        parse(divergent)
    with pytest.raises(ExecutionError, match=r"only 24 of the 32 lanes of warp 0"):
        emulate(divergent, x, where, verify=False)


def test_mma_sync_needs_a_target_with_tensor_cores(monkeypatch):
    sm_75 = replace(target.TARGETS["sm_80"], arch="sm_75", name="T4", has_mma_sync=False)
    monkeypatch.setitem(target.TARGETS, "sm_75", sm_75)
    kernel_text = mma_kernel("m16n8k16", "bf16")
    text = (
        f'builtin.module attributes {{kernel.target = #kernel.target<"sm_75">}} {{{kernel_text}}}'
    )
    with pytest.raises(
        VerifyException,
        match=r"kernel.mma_sync needs warp-level tensor cores \(sm_80 and later\), which the "
        r"module's target sm_75 \(T4\) does not have",
    ):
        parse(text)


# ---- CUDA: compiled for sm_90a, and on a GPU what the emulator gives -------------------------

KERNELS = {
    **{f"mma-{shape}-{element}": mma_kernel(shape, element) for shape, element in MMA_VARIANTS},
    "ldmatrix-x1": ldmatrix_kernel("bf16", 1, False),
    "ldmatrix-x2-trans": ldmatrix_kernel("f16", 2, True),
    "ldmatrix-x4": ldmatrix_kernel("bf16", 4, False),
    "ldmatrix-x4-trans": ldmatrix_kernel("bf16", 4, True),
    "warp-gemm-bf16-kn": warp_gemm_kernel("bf16", "kn"),
    "warp-gemm-f16-nk": warp_gemm_kernel("f16", "nk"),
    "block-gemm-bf16-dense": block_gemm_kernel("bf16", False),
    "block-gemm-f16-swizzled": block_gemm_kernel("f16", True),
}


@needs_nvcc
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_tensor_core_kernels_compile_for_sm_90a(name: str, tmp_path):
    nvcc_compile(print_cuda(parse(KERNELS[name])), tmp_path)


@needs_nvcc
def test_fragments_stay_in_registers(tmp_path):
    """The fragments are structs passed to the helpers by address: nvcc keeps them in
    registers, with no stack frame or spills."""
    report = nvcc_compile(
        print_cuda(parse(block_gemm_kernel("bf16", True))), tmp_path, ptxas_report=True
    )
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in report


@needs_gpu
@pytest.mark.parametrize("shape,element", MMA_FORMS)
def test_mma_sync_on_the_gpu_has_the_emulated_layouts(shape: str, element: str):
    text, inputs, expected = mma_case(shape, element, seed=20)
    (d,) = on_gpu(text, *inputs)
    # The hardware's accumulation order and rounding are its own; the layout must be the same.
    torch.testing.assert_close(unfragment(d), expected.float(), rtol=1e-5, atol=1e-5)


@needs_gpu
@pytest.mark.parametrize("element", ["bf16", "f16"])
@pytest.mark.parametrize("matrices", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True], ids=["rows", "trans"])
def test_ldmatrix_on_the_gpu_has_the_emulated_layouts(element: str, matrices: int, trans: bool):
    text, inputs, expected = ldmatrix_case(element, matrices, trans, seed=matrices)
    (y,) = on_gpu(text, *inputs)
    assert torch.equal(y, expected)
    (emulated,) = emulate(text, *inputs)
    assert torch.equal(emulated.to(y.dtype), y)


@needs_gpu
@pytest.mark.parametrize("element", ["bf16", "f16"])
@pytest.mark.parametrize("b_layout", ["kn", "nk"])
def test_a_warp_gemm_on_the_gpu(element: str, b_layout: str):
    text, inputs, expected = warp_gemm_case(element, b_layout, seed=21)
    (d,) = on_gpu(text, *inputs)
    torch.testing.assert_close(d, expected.float(), rtol=1e-5, atol=1e-5)


@needs_gpu
@pytest.mark.parametrize("element", ["bf16", "f16"])
@pytest.mark.parametrize("swizzle", [False, True], ids=["dense", "swizzled"])
def test_a_block_gemm_on_the_gpu_matches_torch_and_the_emulator(element: str, swizzle: bool):
    text, inputs, expected = block_gemm_case(element, swizzle, seed=22)
    (d,) = on_gpu(text, *inputs)
    torch.testing.assert_close(d, expected.float(), rtol=1e-4, atol=1e-4)
    (emulated,) = emulate(text, *inputs)
    torch.testing.assert_close(d, emulated, rtol=1e-4, atol=1e-4)
