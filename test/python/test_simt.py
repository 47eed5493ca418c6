"""The SIMT emulator (`emmy.tools.interpreter.simt`) on hand-written Kernel IR and on Kernel IR
lowered from Tile and Loop IR, against numpy and the levels above."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest
from test_cuda_target import NVCC, nvcc_compile
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from emmy.dialects import kernel, make_context, target
from emmy.passes.choose_tile_schedule import ChooseTileSchedulePass
from emmy.passes.lower_loop_to_tile import LowerLoopToTilePass
from emmy.passes.lower_tile_to_kernel import LowerTileToKernelPass
from emmy.tools.bench.differential import check_levels, lower
from emmy.tools.cuda.target import print_cuda
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter import simt
from emmy.tools.interpreter.run import ExecutionError, run_module


def parse(text: str, verify: bool = True) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    if verify:
        module.verify()
    return module


def run(text: str, *inputs: np.ndarray, verify: bool = True) -> list[np.ndarray]:
    return run_module(parse(text, verify), list(inputs))


def randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# ---- whole kernels ---------------------------------------------------------------------------

VECTOR_ADD = """
kernel.func @add(%a: memref<1000xf32>, %b: memref<1000xf32>, %c: memref<1000xf32>) block
    [128, 1, 1] {
  %tid = kernel.thread_id x
  %bid = kernel.block_id x
  %bdim = kernel.block_dim x
  %gdim = kernel.grid_dim x
  %base = arith.muli %bid, %bdim : index
  %start = arith.addi %base, %tid : index
  %stride = arith.muli %bdim, %gdim : index
  %n = arith.constant 1000 : index
  scf.for %i = %start to %n step %stride {
    %x = memref.load %a[%i] : memref<1000xf32>
    %y = memref.load %b[%i] : memref<1000xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<1000xf32>
  }
}

func.func @forward(%a: memref<1000xf32>, %b: memref<1000xf32>) -> memref<1000xf32> {
  %c = memref.alloc() : memref<1000xf32>
  kernel.launch @add(%a, %b, %c) grid [3, 1, 1] block [128, 1, 1] smem 0 : memref<1000xf32>,
      memref<1000xf32>, memref<1000xf32>
  func.return %c : memref<1000xf32>
}
"""


def test_vector_add_with_a_grid_stride_loop():
    a, b = randn(1000), randn(1000, seed=1)
    (c,) = run(VECTOR_ADD, a, b)
    np.testing.assert_array_equal(c, a + b)


def test_blocks_run_in_chunks(monkeypatch):
    # One block per chunk: the same answer as all blocks in lockstep.
    from emmy.tools.interpreter import simt

    monkeypatch.setattr(simt, "CHUNK_THREADS", 1)
    a, b = randn(1000), randn(1000, seed=1)
    (c,) = run(VECTOR_ADD, a, b)
    np.testing.assert_array_equal(c, a + b)


def warp_sum(value: str, kind: str = "addf", prefix: str = "w", offsets=(16, 8, 4, 2, 1)) -> str:
    """IR reducing `%value` (f32) across the warp with shuffle-xor; the total is `%{prefix}1`."""
    lines, current = [], value
    for offset in offsets:
        offset_value = f"%{prefix}o{offset}"
        lines.append(f"{offset_value} = arith.constant {offset} : i32")
        lines.append(f"%{prefix}s{offset} = kernel.shuffle xor %{current}, {offset_value} : f32")
        lines.append(f"%{prefix}{offset} = arith.{kind} %{current}, %{prefix}s{offset} : f32")
        current = f"{prefix}{offset}"
    return "\n  ".join(lines)


def block_reduce(value: str, kind: str, identity: str, prefix: str) -> str:
    """IR reducing `%value` over a block of 256 threads: within each warp by shuffles, across
    the 8 warps through shared memory; every thread gets the total as `%{prefix}_total`."""
    return f"""
  {warp_sum(value, kind, prefix + "a")}
  %{prefix}_partials = kernel.shared_alloc : memref<8xf32, 3 : i32>
  %{prefix}_result = kernel.shared_alloc : memref<1xf32, 3 : i32>
  scf.if %lane0 {{
    memref.store %{prefix}a1, %{prefix}_partials[%warp] : memref<8xf32, 3 : i32>
  }}
  kernel.barrier
  scf.if %warp0 {{
    %{prefix}_in = arith.cmpi ult, %lane, %c8 : index
    %{prefix}_mine = scf.if %{prefix}_in -> (f32) {{
      %{prefix}_p = memref.load %{prefix}_partials[%lane] : memref<8xf32, 3 : i32>
      scf.yield %{prefix}_p : f32
    }} else {{
      %{prefix}_id = arith.constant {identity} : f32
      scf.yield %{prefix}_id : f32
    }}
    {warp_sum(prefix + "_mine", kind, prefix + "b", (4, 2, 1))}
    scf.if %lane0 {{
      memref.store %{prefix}b1, %{prefix}_result[%c0] : memref<1xf32, 3 : i32>
    }}
  }}
  kernel.barrier
  %{prefix}_total = memref.load %{prefix}_result[%c0] : memref<1xf32, 3 : i32>
"""


BLOCK_PROLOGUE = """
  %tid = kernel.thread_id x
  %row = kernel.block_id x
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %lane = arith.remui %tid, %c32 : index
  %warp = arith.divui %tid, %c32 : index
  %lane0 = arith.cmpi eq, %lane, %c0 : index
  %warp0 = arith.cmpi eq, %warp, %c0 : index
"""

RMS_NORM = f"""
kernel.func @rms_norm(%x: memref<32x2048xf32>, %w: memref<2048xf32>, %y: memref<32x2048xf32>) block
    [256, 1, 1] {{
  {BLOCK_PROLOGUE}
  %n = arith.constant 2048 : index
  %zero = arith.constant 0.0 : f32
  %partial = scf.for %j = %tid to %n step %c256 iter_args(%acc = %zero) -> (f32) {{
    %v = memref.load %x[%row, %j] : memref<32x2048xf32>
    %sq = arith.mulf %v, %v : f32
    %acc2 = arith.addf %acc, %sq : f32
    scf.yield %acc2 : f32
  }}
  {block_reduce("partial", "addf", "0.0", "sum")}
  %count = arith.constant 2048.0 : f32
  %mean = arith.divf %sum_total, %count : f32
  %eps = arith.constant 1.0e-6 : f32
  %shifted = arith.addf %mean, %eps : f32
  %scale = math.rsqrt %shifted : f32
  scf.for %j = %tid to %n step %c256 {{
    %v = memref.load %x[%row, %j] : memref<32x2048xf32>
    %g = memref.load %w[%j] : memref<2048xf32>
    %s = arith.mulf %v, %scale : f32
    %o = arith.mulf %s, %g : f32
    memref.store %o, %y[%row, %j] : memref<32x2048xf32>
  }}
}}

func.func @forward(%x: memref<32x2048xf32>, %w: memref<2048xf32>) -> memref<32x2048xf32> {{
  %y = memref.alloc() : memref<32x2048xf32>
  kernel.launch @rms_norm(%x, %w, %y) grid [32, 1, 1] block [256, 1, 1] smem 0 :
      memref<32x2048xf32>, memref<2048xf32>, memref<32x2048xf32>
  func.return %y : memref<32x2048xf32>
}}
"""


def test_rms_norm_block_per_row():
    x, w = randn(32, 2048), randn(2048, seed=1)
    module = parse(RMS_NORM)
    start = time.perf_counter()
    (y,) = run_module(module, [x, w])
    elapsed = time.perf_counter() - start
    x64 = x.astype(np.float64)
    expected = x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    assert elapsed < 1.0, f"the emulator took {elapsed:.2f} s"


SOFTMAX = f"""
kernel.func @softmax(%x: memref<8x1000xf32>, %y: memref<8x1000xf32>) block [256, 1, 1] {{
  {BLOCK_PROLOGUE}
  %n = arith.constant 1000 : index
  %lowest = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %local_max = scf.for %j = %tid to %n step %c256 iter_args(%m = %lowest) -> (f32) {{
    %v = memref.load %x[%row, %j] : memref<8x1000xf32>
    %m2 = arith.maximumf %m, %v : f32
    scf.yield %m2 : f32
  }}
  {block_reduce("local_max", "maximumf", "0xFF800000", "max")}
  %local_sum = scf.for %j = %tid to %n step %c256 iter_args(%s = %zero) -> (f32) {{
    %v = memref.load %x[%row, %j] : memref<8x1000xf32>
    %d = arith.subf %v, %max_total : f32
    %e = math.exp %d : f32
    %s2 = arith.addf %s, %e : f32
    scf.yield %s2 : f32
  }}
  {block_reduce("local_sum", "addf", "0.0", "sum")}
  scf.for %j = %tid to %n step %c256 {{
    %v = memref.load %x[%row, %j] : memref<8x1000xf32>
    %d = arith.subf %v, %max_total : f32
    %e = math.exp %d : f32
    %p = arith.divf %e, %sum_total : f32
    memref.store %p, %y[%row, %j] : memref<8x1000xf32>
  }}
}}

func.func @forward(%x: memref<8x1000xf32>) -> memref<8x1000xf32> {{
  %y = memref.alloc() : memref<8x1000xf32>
  kernel.launch @softmax(%x, %y) grid [8, 1, 1] block [256, 1, 1] smem 0 : memref<8x1000xf32>,
      memref<8x1000xf32>
  func.return %y : memref<8x1000xf32>
}}
"""


def test_softmax_max_then_sum():
    x = randn(8, 1000) * 4
    (y,) = run(SOFTMAX, x)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


ATOMIC_SUM = f"""
kernel.func @sum(%x: memref<10000xf32>, %total: memref<1xf32>) block [256, 1, 1] {{
  %tid = kernel.thread_id x
  %bid = kernel.block_id x
  %bdim = kernel.block_dim x
  %gdim = kernel.grid_dim x
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %base = arith.muli %bid, %bdim : index
  %start = arith.addi %base, %tid : index
  %stride = arith.muli %bdim, %gdim : index
  %n = arith.constant 10000 : index
  %zero = arith.constant 0.0 : f32
  %partial = scf.for %i = %start to %n step %stride iter_args(%acc = %zero) -> (f32) {{
    %v = memref.load %x[%i] : memref<10000xf32>
    %acc2 = arith.addf %acc, %v : f32
    scf.yield %acc2 : f32
  }}
  {warp_sum("partial")}
  %lane = arith.remui %tid, %c32 : index
  %lane0 = arith.cmpi eq, %lane, %c0 : index
  scf.if %lane0 {{
    %old = kernel.atomic add %w1, %total[%c0] : memref<1xf32>
  }}
}}

func.func @forward(%x: memref<10000xf32>, %total: memref<1xf32>) -> memref<1xf32> {{
  kernel.launch @sum(%x, %total) grid [5, 1, 1] block [256, 1, 1] smem 0 : memref<10000xf32>,
      memref<1xf32>
  func.return %total : memref<1xf32>
}}
"""


def test_reduction_with_atomics():
    x = randn(10000)
    (total,) = run(ATOMIC_SUM, x, np.zeros(1, np.float32))
    np.testing.assert_allclose(total[0], x.astype(np.float64).sum(), rtol=1e-5)


ATOMIC_ORDER = """
kernel.func @count(%counter: memref<4xi32>, %old: memref<2x64xi32>, %mx: memref<4xf32>) block
    [64, 1, 1] {
  %tid = kernel.thread_id x
  %bid = kernel.block_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1 : i32
  %slot = arith.remui %tid, %c3 : index
  %o = kernel.atomic add %one, %counter[%slot] : memref<4xi32>
  memref.store %o, %old[%bid, %tid] : memref<2x64xi32>
  %t = arith.index_cast %tid : index to i32
  %f = arith.sitofp %t : i32 to f32
  %m = kernel.atomic max %f, %mx[%c0] : memref<4xf32>
  %n = kernel.atomic min %f, %mx[%c1] : memref<4xf32>
}

func.func @forward(%counter: memref<4xi32>, %mx: memref<4xf32>) -> memref<2x64xi32> {
  %old = memref.alloc() : memref<2x64xi32>
  kernel.launch @count(%counter, %old, %mx) grid [2, 1, 1] block [64, 1, 1] smem 0 : memref<4xi32>,
      memref<2x64xi32>, memref<4xf32>
  func.return %old : memref<2x64xi32>
}
"""


def test_atomics_serialise_in_thread_order():
    module = parse(ATOMIC_ORDER)
    from emmy.tools.interpreter.run import find_function, make_interpreter

    initial = np.array([100, 200, 300, 400], np.int32)
    counter = initial.copy()
    mx = np.array([-1.0, 1000.0, 7.0, 7.0], np.float32)
    interpreter = make_interpreter(module)
    (old,) = interpreter.call_op(find_function(module, "forward"), (counter, mx))
    # Block 0's threads come before block 1's, each block's in thread order.
    slot = np.arange(64) % 3
    rank = np.array([(slot[:t] == slot[t]).sum() for t in range(64)])
    per_block = np.bincount(slot, minlength=4)
    expected = np.stack([initial[slot] + rank, initial[slot] + per_block[slot] + rank])
    np.testing.assert_array_equal(old, expected)
    np.testing.assert_array_equal(counter, [100 + 2 * 22, 200 + 2 * 21, 300 + 2 * 21, 400])
    np.testing.assert_array_equal(mx, [63.0, 0.0, 7.0, 7.0])


SHUFFLES = """
kernel.func @shuffles(%out: memref<5x64xi32>) block [64, 1, 1] {
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %v = arith.index_cast %tid : index to i32
  %five = arith.constant 5 : i32
  %three = arith.constant 3 : i32
  %thirty_nine = arith.constant 39 : i32
  %x = kernel.shuffle xor %v, %five : i32
  %d = kernel.shuffle down %v, %three : i32
  %u = kernel.shuffle up %v, %three : i32
  %i = kernel.shuffle idx %v, %thirty_nine : i32
  %lane_per_thread = arith.constant 31 : i32
  %src = arith.subi %lane_per_thread, %v : i32
  %r = kernel.shuffle idx %v, %src : i32
  memref.store %x, %out[%c0, %tid] : memref<5x64xi32>
  memref.store %d, %out[%c1, %tid] : memref<5x64xi32>
  memref.store %u, %out[%c2, %tid] : memref<5x64xi32>
  memref.store %i, %out[%c3, %tid] : memref<5x64xi32>
  memref.store %r, %out[%c4, %tid] : memref<5x64xi32>
}

func.func @forward() -> memref<5x64xi32> {
  %out = memref.alloc() : memref<5x64xi32>
  kernel.launch @shuffles(%out) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<5x64xi32>
  func.return %out : memref<5x64xi32>
}
"""


def test_shuffle_modes():
    (out,) = run(SHUFFLES)
    tid = np.arange(64)
    lane, warp_base = tid % 32, tid - tid % 32
    np.testing.assert_array_equal(out[0], warp_base + (lane ^ 5))
    np.testing.assert_array_equal(out[1], np.where(lane + 3 < 32, tid + 3, tid))
    np.testing.assert_array_equal(out[2], np.where(lane >= 3, tid - 3, tid))
    np.testing.assert_array_equal(out[3], warp_base + 7)  # 39 mod 32
    # Lanes 0..31 of warp 0 read 31 - lane; warp 1's threads 32..63 compute negative
    # sources, which wrap mod 32 like any idx source.
    np.testing.assert_array_equal(out[4], warp_base + ((31 - tid) & 31))


DIVERGENT_IF = """
kernel.func @branches(%x: memref<64xf32>, %y: memref<64xf32>) block [64, 1, 1] {
  %tid = kernel.thread_id x
  %c3 = arith.constant 3 : index
  %c0 = arith.constant 0 : index
  %c10 = arith.constant 10 : index
  %r = arith.remui %tid, %c3 : index
  %is0 = arith.cmpi eq, %r, %c0 : index
  %v = memref.load %x[%tid] : memref<64xf32>
  %out = scf.if %is0 -> (f32) {
    %two = arith.constant 2.0 : f32
    %d = arith.mulf %v, %two : f32
    scf.yield %d : f32
  } else {
    %one = arith.constant 1.0 : f32
    %big = arith.cmpi ugt, %tid, %c10 : index
    %e = scf.if %big -> (f32) {
      %a = arith.addf %v, %one : f32
      scf.yield %a : f32
    } else {
      %a = arith.subf %v, %one : f32
      scf.yield %a : f32
    }
    scf.yield %e : f32
  }
  memref.store %out, %y[%tid] : memref<64xf32>
  %low = arith.cmpi ult, %tid, %c10 : index
  scf.if %low {
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %x[%tid] : memref<64xf32>
  }
}

func.func @forward(%x: memref<64xf32>) -> memref<64xf32> {
  %y = memref.alloc() : memref<64xf32>
  kernel.launch @branches(%x, %y) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>,
      memref<64xf32>
  func.return %y : memref<64xf32>
}
"""


def test_divergent_if_merges_results_and_masks_stores():
    x = randn(64)
    module = parse(DIVERGENT_IF)
    from emmy.tools.interpreter.run import find_function, make_interpreter

    x_buffer = x.copy()
    (y,) = make_interpreter(module).call_op(find_function(module, "forward"), (x_buffer,))
    tid = np.arange(64)
    expected = np.where(tid % 3 == 0, x * 2, np.where(tid > 10, x + 1, x - 1))
    np.testing.assert_array_equal(y, expected.astype(np.float32))
    np.testing.assert_array_equal(x_buffer, np.where(tid < 10, 0, x))


PER_THREAD_TRIP_COUNTS = """
kernel.func @triangle(%y: memref<64xi32>) block [64, 1, 1] {
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i32
  %sum = scf.for %i = %c0 to %tid step %c1 iter_args(%acc = %zero) -> (i32) {
    %v = arith.index_cast %i : index to i32
    %acc2 = arith.addi %acc, %v : i32
    scf.yield %acc2 : i32
  }
  memref.store %sum, %y[%tid] : memref<64xi32>
}

func.func @forward() -> memref<64xi32> {
  %y = memref.alloc() : memref<64xi32>
  kernel.launch @triangle(%y) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xi32>
  func.return %y : memref<64xi32>
}
"""


def test_loop_with_per_thread_trip_counts_keeps_each_threads_last_value():
    (y,) = run(PER_THREAD_TRIP_COUNTS)
    tid = np.arange(64)
    np.testing.assert_array_equal(y, tid * (tid - 1) // 2)


VECTOR_ACCESS = """
kernel.func @reverse4(%x: memref<4x128xf32>, %y: memref<4x128xf32>) block [32, 4, 1] {
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %c4 = arith.constant 4 : index
  %j = arith.muli %tx, %c4 : index
  %v = kernel.vector_load %x[%ty, %j] : memref<4x128xf32>, vector<4xf32>
  %a = vector.extract %v[0] : f32 from vector<4xf32>
  %b = vector.extract %v[1] : f32 from vector<4xf32>
  %c = vector.extract %v[2] : f32 from vector<4xf32>
  %d = vector.extract %v[3] : f32 from vector<4xf32>
  %r0 = vector.broadcast %d : f32 to vector<4xf32>
  %r1 = vector.insert %c, %r0 [1] : f32 into vector<4xf32>
  %r2 = vector.insert %b, %r1 [2] : f32 into vector<4xf32>
  %r3 = vector.insert %a, %r2 [3] : f32 into vector<4xf32>
  kernel.vector_store %r3, %y[%ty, %j] : memref<4x128xf32>, vector<4xf32>
}

func.func @forward(%x: memref<4x128xf32>) -> memref<4x128xf32> {
  %y = memref.alloc() : memref<4x128xf32>
  kernel.launch @reverse4(%x, %y) grid [1, 1, 1] block [32, 4, 1] smem 0 : memref<4x128xf32>,
      memref<4x128xf32>
  func.return %y : memref<4x128xf32>
}
"""


def test_vector_loads_and_stores_with_a_2d_block():
    x = randn(4, 128)
    (y,) = run(VECTOR_ACCESS, x)
    np.testing.assert_array_equal(y, x.reshape(4, 32, 4)[:, :, ::-1].reshape(4, 128))


def test_misaligned_vector_access_is_an_error():
    text = VECTOR_ACCESS.replace(
        "%j = arith.muli %tx, %c4 : index",
        "%j0 = arith.muli %tx, %c4 : index\n  %c2 = arith.constant 2 : index\n"
        "  %j1 = arith.addi %j0, %c2 : index\n  %c124 = arith.constant 124 : index\n"
        "  %j = arith.minui %j1, %c124 : index",
    )
    with pytest.raises(ExecutionError, match=r"kernel.vector_load.*thread \(0, 0, 0\).*aligned"):
        run(text, randn(4, 128))


LANES_AND_SCALARS = """
kernel.func @lanes(%x: memref<256xf32>, %y: memref<256xf32>, %scale: f32, %shift: index) block
    [64, 1, 1] {
  %t = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %j = arith.muli %t, %c4 : index
  %v = kernel.vector_load %x[%j] : memref<256xf32>, vector<4xf32>
  %lane = arith.remui %t, %c4 : index
  %picked = vector.extract %v[%lane] : f32 from vector<4xf32>
  %scaled = arith.mulf %picked, %scale : f32
  %odd = arith.cmpi ne, %lane, %c0 : index
  %w = scf.if %odd -> (vector<4xf32>) {
    %u = vector.insert %scaled, %v[%lane] : f32 into vector<4xf32>
    scf.yield %u : vector<4xf32>
  } else {
    %u = vector.broadcast %scaled : f32 to vector<4xf32>
    scf.yield %u : vector<4xf32>
  }
  %k = arith.addi %j, %shift : index
  %end = arith.constant 256 : index
  %wrapped = arith.remui %k, %end : index
  kernel.vector_store %w, %y[%wrapped] : memref<256xf32>, vector<4xf32>
}

func.func @forward(%x: memref<256xf32>) -> memref<256xf32> {
  %y = memref.alloc() : memref<256xf32>
  %scale = arith.constant 3.0 : f32
  %shift = arith.constant 8 : index
  kernel.launch @lanes(%x, %y, %scale, %shift) grid [1, 1, 1] block [64, 1, 1] smem 0 :
      memref<256xf32>, memref<256xf32>, f32, index
  func.return %y : memref<256xf32>
}
"""


def test_vector_lanes_at_per_thread_positions_and_scalar_parameters():
    x = randn(256)
    (y,) = run(LANES_AND_SCALARS, x)
    rows = x.reshape(64, 4).copy()
    lane = np.arange(64) % 4
    picked = rows[np.arange(64), lane] * np.float32(3.0)
    expected = rows.copy()
    expected[np.arange(64), lane] = picked
    expected[lane == 0] = picked[lane == 0, None]
    np.testing.assert_array_equal(y, np.roll(expected.reshape(256), 8))


def test_extracting_a_lane_outside_the_vector_is_an_error():
    text = LANES_AND_SCALARS.replace(
        "%picked = vector.extract %v[%lane]",
        "%c1 = arith.constant 1 : index\n  %bad = arith.addi %lane, %c1 : index\n"
        "  %picked = vector.extract %v[%bad]",
    )
    # The verifier rejects this kernel; the emulator reports it too, when it runs unverified.
    with pytest.raises(VerifyException, match=r"index %bad of vector<4xf32> ranges over \[1, 4\]"):
        parse(text)
    with pytest.raises(ExecutionError, match=r"thread \(3, 0, 0\).*lane 4 of a 4-lane vector"):
        run(text, randn(256), verify=False)


SWIZZLED_TRANSPOSE = """
kernel.func @transpose(%x: memref<32x32xf32>, %y: memref<32x32xf32>) block [32, 8, 1] {
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %tile = kernel.shared_alloc {layout = #kernel.swizzle<128>} : memref<32x32xf32, 3 : i32>
  scf.for %r = %ty to %c32 step %c8 {
    %v = memref.load %x[%r, %tx] : memref<32x32xf32>
    memref.store %v, %tile[%r, %tx] : memref<32x32xf32, 3 : i32>
  }
  kernel.barrier
  scf.for %r = %ty to %c32 step %c8 {
    %v = memref.load %tile[%tx, %r] : memref<32x32xf32, 3 : i32>
    memref.store %v, %y[%r, %tx] : memref<32x32xf32>
  }
}

func.func @forward(%x: memref<32x32xf32>) -> memref<32x32xf32> {
  %y = memref.alloc() : memref<32x32xf32>
  kernel.launch @transpose(%x, %y) grid [1, 1, 1] block [32, 8, 1] smem 0 : memref<32x32xf32>,
      memref<32x32xf32>
  func.return %y : memref<32x32xf32>
}
"""


def test_a_swizzled_shared_buffer_reads_back_what_was_stored():
    x = randn(32, 32)
    (y,) = run(SWIZZLED_TRANSPOSE, x)
    np.testing.assert_array_equal(y, x.T)


SWIZZLED_VIEW = SWIZZLED_TRANSPOSE.replace(
    "kernel.shared_alloc {layout", "kernel.dynamic_shared offset 1024 {layout"
).replace("smem 0", "smem 5120")


@pytest.mark.parametrize("text", [SWIZZLED_TRANSPOSE, SWIZZLED_VIEW], ids=["static", "dynamic"])
def test_a_swizzled_shared_buffer_places_elements_through_the_swizzle(text: str):
    # Without the barrier, thread (1, 0) reads [1, 0], which thread (0, 1) stored: the race
    # report names where that element lies. Row 1's first 16-byte chunk is chunk 1 of its
    # 128-byte row (byte 128 ^ (1 << 4) = 144), elements [1, 4..7] of the dense layout.
    x = randn(32, 32)
    (y,) = run(text, x)
    np.testing.assert_array_equal(y, x.T)
    with pytest.raises(ExecutionError, match=r"reads shared element \[1, 4\]"):
        run(text.replace("  kernel.barrier\n", ""), x)


CP_ASYNC = """
kernel.func @stage(%x: memref<2x256xf32>, %y: memref<2x256xf32>) block [64, 1, 1] {
  %tid = kernel.thread_id x
  %row = kernel.block_id x
  %c4 = arith.constant 4 : index
  %c255 = arith.constant 255 : index
  %tile = kernel.dynamic_shared offset 16 : memref<256xf32, 3 : i32>
  %j = arith.muli %tid, %c4 : index
  kernel.cp_async %tile[%j], %x[%row, %j] bytes 16 : memref<256xf32, 3 : i32>, memref<2x256xf32>
  kernel.cp_async_commit
  kernel.cp_async_wait 0
  kernel.barrier
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  scf.for %k = %tid to %c256 step %c64 {
    %mirror = arith.subi %c255, %k : index
    %v = memref.load %tile[%mirror] : memref<256xf32, 3 : i32>
    memref.store %v, %y[%row, %k] : memref<2x256xf32>
  }
}

func.func @forward(%x: memref<2x256xf32>) -> memref<2x256xf32> {
  %y = memref.alloc() : memref<2x256xf32>
  kernel.launch @stage(%x, %y) grid [2, 1, 1] block [64, 1, 1] smem 1040 : memref<2x256xf32>,
      memref<2x256xf32>
  func.return %y : memref<2x256xf32>
}
"""


def test_cp_async_into_dynamic_shared_memory():
    x = randn(2, 256)
    (y,) = run(CP_ASYNC, x)
    np.testing.assert_array_equal(y, x[:, ::-1])


def test_cp_async_data_needs_a_barrier_before_other_threads_read_it():
    text = CP_ASYNC.replace("  kernel.barrier\n", "")
    with pytest.raises(
        ExecutionError, match=r"'memref.load'.*reads shared element \[255\].*barrier"
    ):
        run(text, randn(2, 256))


def test_cp_async_data_lands_only_when_its_group_is_waited_for():
    text = CP_ASYNC.replace("  kernel.cp_async_wait 0\n", "")
    with pytest.raises(
        ExecutionError,
        match=r"'memref.load'.*thread \(0, 0, 0\) of block \(0, 0, 0\) reads shared element "
        r"\[255\], which a cp.async still in flight writes \(a missing kernel.cp_async_wait\?\)",
    ):
        run(text, randn(2, 256))


PIPELINED_COPIES = """
kernel.func @two_groups(%x: memref<2x128xf32>, %y: memref<2x128xf32>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %first = kernel.shared_alloc : memref<128xf32, 3 : i32>
  %second = kernel.shared_alloc : memref<128xf32, 3 : i32>
  %j = arith.muli %tid, %c4 : index
  kernel.cp_async %first[%j], %x[%c0, %j] bytes 16 : memref<128xf32, 3 : i32>, memref<2x128xf32>
  kernel.cp_async_commit
  kernel.cp_async %second[%j], %x[%c1, %j] bytes 16 : memref<128xf32, 3 : i32>, memref<2x128xf32>
  kernel.cp_async_commit
  kernel.cp_async_wait 1
  kernel.barrier
  %v = memref.load %first[%j] : memref<128xf32, 3 : i32>
  memref.store %v, %y[%c0, %j] : memref<2x128xf32>
  kernel.cp_async_wait 0
  kernel.barrier
  %w = memref.load %second[%j] : memref<128xf32, 3 : i32>
  memref.store %w, %y[%c1, %j] : memref<2x128xf32>
}

func.func @forward(%x: memref<2x128xf32>) -> memref<2x128xf32> {
  %y = memref.alloc() : memref<2x128xf32>
  kernel.launch @two_groups(%x, %y) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<2x128xf32>,
      memref<2x128xf32>
  func.return %y : memref<2x128xf32>
}
"""


def test_cp_async_wait_leaves_the_newest_groups_in_flight():
    x = randn(2, 128)
    (y,) = run(PIPELINED_COPIES, x)
    np.testing.assert_array_equal(y[:, ::4], x[:, ::4])
    # Waiting for all but one group first leaves the second copy in flight: reading it then
    # is the race a pipeline with a wrong wait count has.
    early = PIPELINED_COPIES.replace(
        "  %w = memref.load %second",
        "  %early = memref.load %second[%j] : memref<128xf32, 3 : i32>\n  %w = memref.load %second",
        1,
    ).replace("  kernel.cp_async_wait 0\n  kernel.barrier\n", "")
    with pytest.raises(ExecutionError, match=r"reads shared element \[0\], which a cp.async still"):
        run(early, x)


def test_cp_async_to_an_element_in_flight_is_an_error():
    text = PIPELINED_COPIES.replace(
        "kernel.cp_async %second[%j]", "kernel.cp_async %first[%j]"
    ).replace("%w = memref.load %second", "%w = memref.load %first")
    with pytest.raises(
        ExecutionError,
        match=r"'kernel.cp_async'.*starts a cp.async to shared element \[0\], which a cp.async "
        r"still in flight writes",
    ):
        run(text, randn(2, 128))


ROTATE = """
kernel.func @rotate(%x: memref<32xf32>, %y: memref<32xf32>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %s = kernel.shared_alloc : memref<32xf32, 3 : i32>
  %v = memref.load %x[%tid] : memref<32xf32>
  memref.store %v, %s[%tid] : memref<32xf32, 3 : i32>
  kernel.barrier
  %next = arith.addi %tid, %c1 : index
  %j = arith.remui %next, %c32 : index
  %w = memref.load %s[%j] : memref<32xf32, 3 : i32>
  kernel.barrier
  %twice = arith.addf %w, %w : f32
  memref.store %twice, %s[%tid] : memref<32xf32, 3 : i32>
  memref.store %w, %y[%tid] : memref<32xf32>
}

func.func @forward(%x: memref<32xf32>) -> memref<32xf32> {
  %y = memref.alloc() : memref<32xf32>
  kernel.launch @rotate(%x, %y) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<32xf32>,
      memref<32xf32>
  func.return %y : memref<32xf32>
}
"""


def test_a_store_over_what_another_thread_read_needs_a_barrier_between():
    x = randn(32)
    (y,) = run(ROTATE, x)
    np.testing.assert_array_equal(y, np.roll(x, -1))
    # Without the second barrier, thread 0's store may overwrite element 0 before thread 31
    # reads it.
    racy = ROTATE.replace("  kernel.barrier\n  %twice", "  %twice")
    with pytest.raises(
        ExecutionError,
        match=r"'memref.store'.*thread \(0, 0, 0\) of block \(0, 0, 0\) stores to shared "
        r"element \[0\], which thread \(31, 0, 0\) read since the last barrier",
    ):
        run(racy, x)


def test_a_cp_async_over_what_another_thread_read_needs_a_barrier_before_it():
    """A cp.async may land as soon as it starts: a pipeline that refills a stage before the
    barrier after its last readers races with them."""
    text = PIPELINED_COPIES.replace(
        "  kernel.cp_async %second[%j], %x[%c1, %j]",
        "  kernel.cp_async_wait 0\n  kernel.barrier\n"
        "  %l = arith.addi %j, %c4 : index\n"
        "  %c128 = arith.constant 128 : index\n"
        "  %wrapped = arith.remui %l, %c128 : index\n"
        "  %peek = memref.load %first[%wrapped] : memref<128xf32, 3 : i32>\n"
        "  kernel.cp_async %first[%j], %x[%c1, %j]",
    )
    with pytest.raises(
        ExecutionError,
        match=r"'kernel.cp_async'.*stores to shared element \[0\], which thread \(31, 0, 0\) "
        r"read since the last barrier",
    ):
        run(text, randn(2, 128))


ZERO_FILL = """
kernel.func @tail(%x: memref<10xbf16>, %y: memref<16xbf16>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %tile = kernel.shared_alloc : memref<16xbf16, 3 : i32>
  %one = arith.cmpi ult, %tid, %c8 : index
  scf.if %one {
    %j = arith.muli %tid, %c2 : index
    %inside = arith.cmpi ult, %j, %c10 : index
    %source = arith.select %inside, %j, %c0 : index
    %bytes4 = arith.constant 4 : i32
    %none = arith.constant 0 : i32
    %bytes = arith.select %inside, %bytes4, %none : i32
    kernel.cp_async %tile[%j], %x[%source] bytes 4 src_bytes %bytes
        : memref<16xbf16, 3 : i32>, memref<10xbf16>
  }
  kernel.cp_async_commit
  kernel.cp_async_wait 0
  kernel.barrier
  %c16 = arith.constant 16 : index
  %c1 = arith.constant 1 : index
  %first = arith.cmpi ult, %tid, %c16 : index
  scf.if %first {
    %v = memref.load %tile[%tid] : memref<16xbf16, 3 : i32>
    memref.store %v, %y[%tid] : memref<16xbf16>
  }
}

func.func @forward(%x: memref<10xbf16>) -> memref<16xbf16> {
  %y = memref.alloc() : memref<16xbf16>
  kernel.launch @tail(%x, %y) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<10xbf16>,
      memref<16xbf16>
  func.return %y : memref<16xbf16>
}
"""


def test_cp_async_src_bytes_zero_fills_the_rest():
    x = (np.round(randn(10) * 8) / 8 + 0.5).astype(np.float32)  # exact in bf16, none zero
    (y,) = run(ZERO_FILL, x)
    np.testing.assert_array_equal(y, np.r_[x, np.zeros(6, np.float32)])


def test_cp_async_src_bytes_are_whole_elements_up_to_the_copy():
    text = ZERO_FILL.replace("%bytes4 = arith.constant 4 : i32", "%bytes4 = arith.constant 3 : i32")
    with pytest.raises(
        ExecutionError,
        match=r"a cp_async of 4 bytes reads 0 to 4 bytes of whole elements, got "
        r"src_bytes 3",
    ):
        run(text, randn(10))


def test_dynamic_shared_view_beyond_the_launch_size_is_an_error():
    text = CP_ASYNC.replace("smem 1040", "smem 1024")
    with pytest.raises(ExecutionError, match=r"kernel.dynamic_shared.*\[16, 1040\).*1024 bytes"):
        run(text, randn(2, 256), verify=False)


TRANSPOSE = """
kernel.func @transpose(%x: memref<64x96xf32>, %y: memref<96x64xf32>) block [32, 8, 1] {
  %tx = kernel.thread_id x
  %ty = kernel.thread_id y
  %bx = kernel.block_id x
  %by = kernel.block_id y
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %tile = kernel.shared_alloc : memref<32x33xf32, 3 : i32>
  %col = arith.muli %bx, %c32 : index
  %row = arith.muli %by, %c32 : index
  %j = arith.addi %col, %tx : index
  scf.for %k = %c0 to %c32 step %c8 {
    %r = arith.addi %ty, %k : index
    %i = arith.addi %row, %r : index
    %v = memref.load %x[%i, %j] : memref<64x96xf32>
    memref.store %v, %tile[%r, %tx] : memref<32x33xf32, 3 : i32>
  }
  kernel.barrier
  %out_col = arith.addi %row, %tx : index
  scf.for %k = %c0 to %c32 step %c8 {
    %r = arith.addi %ty, %k : index
    %out_row = arith.addi %col, %r : index
    %v = memref.load %tile[%tx, %r] : memref<32x33xf32, 3 : i32>
    memref.store %v, %y[%out_row, %out_col] : memref<96x64xf32>
  }
}

func.func @forward(%x: memref<64x96xf32>) -> memref<96x64xf32> {
  %y = memref.alloc() : memref<96x64xf32>
  kernel.launch @transpose(%x, %y) grid [3, 2, 1] block [32, 8, 1] smem 0 : memref<64x96xf32>,
      memref<96x64xf32>
  func.return %y : memref<96x64xf32>
}
"""


def test_tiled_transpose_with_a_2d_grid_and_a_shared_tile():
    x = randn(64, 96)
    (y,) = run(TRANSPOSE, x)
    np.testing.assert_array_equal(y, x.T)


def test_threads_storing_different_values_to_one_shared_element_race():
    text = TRANSPOSE.replace(
        "memref.store %v, %tile[%r, %tx] : memref<32x33xf32, 3 : i32>",
        "memref.store %v, %tile[%c0, %tx] : memref<32x33xf32, 3 : i32>",
    )
    with pytest.raises(
        ExecutionError,
        match=r"'memref.store'.*thread \(0, 0, 0\) of block \(0, 0, 0\) and another thread "
        r"of its block store different values to shared element \[0, 0\]",
    ):
        run(text, randn(64, 96))


UNIFORM_STORE = """
kernel.func @last(%y: memref<1xi32>) block [64, 1, 1] {
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c50 = arith.constant 50 : index
  %v = arith.index_cast %tid : index to i32
  %low = arith.cmpi ult, %tid, %c50 : index
  scf.if %low {
    memref.store %v, %y[%c0] : memref<1xi32>
  }
}

func.func @forward() -> memref<1xi32> {
  %y = memref.alloc() : memref<1xi32>
  kernel.launch @last(%y) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<1xi32>
  func.return %y : memref<1xi32>
}
"""


def test_threads_storing_one_value_to_one_global_element_is_fine():
    text = UNIFORM_STORE.replace(
        "%v = arith.index_cast %tid : index to i32", "%v = arith.constant 49 : i32"
    )
    (y,) = run(text)
    assert y[0] == 49


def test_threads_storing_different_values_to_one_global_element_race():
    """Which thread's value stays is up to the GPU: a race, however small the kernel."""
    with pytest.raises(
        ExecutionError,
        match=r"'memref.store'.*in @last, thread \(0, 0, 0\) of block \(0, 0, 0\) and another "
        r"thread store different values to element \[0\] of %y at once",
    ):
        run(UNIFORM_STORE)


UNINITIALISED_SHARED = """
kernel.func @peek(%y: memref<32xf32>) block [32, 1, 1] {
  %tid = kernel.thread_id x
  %s = kernel.shared_alloc : memref<32xf32, 3 : i32>
  %v = memref.load %s[%tid] : memref<32xf32, 3 : i32>
  memref.store %v, %y[%tid] : memref<32xf32>
}

func.func @forward() -> memref<32xf32> {
  %y = memref.alloc() : memref<32xf32>
  kernel.launch @peek(%y) grid [1, 1, 1] block [32, 1, 1] smem 0 : memref<32xf32>
  func.return %y : memref<32xf32>
}
"""


def test_unwritten_shared_memory_reads_nan():
    (y,) = run(UNINITIALISED_SHARED)
    assert np.isnan(y).all()


# ---- errors --------------------------------------------------------------------------------

BARRIER_UNDER_DIVERGENCE = """
kernel.func @bad(%y: memref<64xf32>) block [64, 1, 1] {
  %tid = kernel.thread_id x
  %c40 = arith.constant 40 : index
  %low = arith.cmpi ult, %tid, %c40 : index
  scf.if %low {
    kernel.barrier
  }
}

func.func @forward() -> memref<64xf32> {
  %y = memref.alloc() : memref<64xf32>
  kernel.launch @bad(%y) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  func.return %y : memref<64xf32>
}
"""


def test_barrier_under_divergent_control_flow_is_an_error():
    # The verifier rejects this kernel; the emulator reports it too, when it runs unverified.
    with pytest.raises(VerifyException):
        parse(BARRIER_UNDER_DIVERGENCE)
    with pytest.raises(
        ExecutionError,
        match=r"'kernel.barrier'.*barrier under divergent control flow.*40 of 64 threads "
        r"reach it \(thread \(40, 0, 0\) of block \(0, 0, 0\) does not\)",
    ):
        run(BARRIER_UNDER_DIVERGENCE, verify=False)


def test_barrier_under_block_uniform_control_flow_is_fine():
    # Every thread of block 0 reaches it; no thread of block 1 does.
    text = (
        BARRIER_UNDER_DIVERGENCE.replace("%tid = kernel.thread_id x", "%tid = kernel.block_id x")
        .replace("%c40 = arith.constant 40", "%c40 = arith.constant 1")
        .replace("grid [1, 1, 1]", "grid [2, 1, 1]")
    )
    run(text)


def test_out_of_bounds_load_names_the_op_and_thread():
    # The verifier rejects this kernel; the emulator reports it too, when it runs unverified.
    text = VECTOR_ADD.replace("arith.constant 1000 : index", "arith.constant 1001 : index")
    with pytest.raises(
        VerifyException, match=r"index %i of memref<1000xf32> ranges over \[0, 1000\]"
    ):
        parse(text)
    # Element 1000 is the third iteration of global thread 1000 - 2 * 384 = 232.
    with pytest.raises(
        ExecutionError,
        match=r"'memref.load'.*thread \(104, 0, 0\) of block \(1, 0, 0\).*index #0 is 1000, "
        r"out of bounds for a dimension of size 1000",
    ) as error:
        run(text, randn(1000), randn(1000), verify=False)
    assert error.value.op.name == "memref.load"


def test_out_of_bounds_store_names_the_op():
    # The verifier rejects this kernel; the emulator reports it too, when it runs unverified.
    text = DIVERGENT_IF.replace("memref.store %zero, %x[%tid]", "memref.store %zero, %x[%c10]")
    text = text.replace("%c10 = arith.constant 10 : index", "%c10 = arith.constant 64 : index")
    with pytest.raises(VerifyException, match=r"index %c10 of memref<64xf32> is 64"):
        parse(text)
    with pytest.raises(ExecutionError, match=r"'memref.store'.*index #0 is 64"):
        run(text, randn(64), verify=False)


def test_inactive_threads_do_not_fault():
    # Threads past the end compute out-of-bounds indices but never use them.
    guarded = """
kernel.func @guarded(%x: memref<100xf32>, %y: memref<100xf32>) block [128, 1, 1] {
  %tid = kernel.thread_id x
  %n = arith.constant 100 : index
  %in = arith.cmpi ult, %tid, %n : index
  scf.if %in {
    %v = memref.load %x[%tid] : memref<100xf32>
    memref.store %v, %y[%tid] : memref<100xf32>
  }
}

func.func @forward(%x: memref<100xf32>) -> memref<100xf32> {
  %y = memref.alloc() : memref<100xf32>
  kernel.launch @guarded(%x, %y) grid [1, 1, 1] block [128, 1, 1] smem 0 : memref<100xf32>,
      memref<100xf32>
  func.return %y : memref<100xf32>
}
"""
    x = randn(100)
    (y,) = run(guarded, x)
    np.testing.assert_array_equal(y, x)


def test_missing_barrier_is_reported_as_a_race():
    text = RMS_NORM.replace("  kernel.barrier\n", "", 1)
    with pytest.raises(
        ExecutionError,
        match=r"'memref.load'.*reads shared element \[1\].*"
        r"thread \(32, 0, 0\) stored since the last barrier",
    ):
        run(text, randn(32, 2048), randn(2048))


# ---- races on global memory -------------------------------------------------------------

REVERSE_THROUGH_MEMORY = """
kernel.func @reverse(%x: memref<1024xf32>, %t: memref<1024xf32>, %y: memref<1024xf32>) block
    [128, 1, 1] {
  %tid = kernel.thread_id x
  %bid = kernel.block_id x
  %bdim = kernel.block_dim x
  %gdim = kernel.grid_dim x
  %base = arith.muli %bid, %bdim : index
  %start = arith.addi %base, %tid : index
  %stride = arith.muli %bdim, %gdim : index
  %n = arith.constant 1024 : index
  %last = arith.constant 1023 : index
  scf.for %i = %start to %n step %stride {
    %v = memref.load %x[%i] : memref<1024xf32>
    memref.store %v, %t[%i] : memref<1024xf32>
  }
  kernel.barrier
  scf.for %i = %start to %n step %stride {
    %j = arith.subi %last, %i : index
    %v = memref.load %t[%j] : memref<1024xf32>
    memref.store %v, %y[%i] : memref<1024xf32>
  }
}

func.func @forward(%x: memref<1024xf32>) -> memref<1024xf32> {
  %t = memref.alloc() : memref<1024xf32>
  %y = memref.alloc() : memref<1024xf32>
  kernel.launch @reverse(%x, %t, %y) grid [1, 1, 1] block [128, 1, 1] smem 0
      : memref<1024xf32>, memref<1024xf32>, memref<1024xf32>
  func.return %y : memref<1024xf32>
}
"""


def test_a_block_passes_data_through_global_memory_across_a_barrier():
    x = randn(1024)
    (y,) = run(REVERSE_THROUGH_MEMORY, x)
    np.testing.assert_array_equal(y, x[::-1])


def test_a_missing_barrier_before_reading_global_memory_is_a_race():
    """Thread 0 reads t[1023], which thread 127 (of another warp) stored in the same phase:
    lockstep execution gets it right, a GPU need not."""
    with pytest.raises(
        ExecutionError,
        match=r"'memref.load'.*in @reverse, thread \(0, 0, 0\) of block \(0, 0, 0\) reads "
        r"element \[1023\] of %t, which thread \(127, 0, 0\) stored since the last barrier "
        r"\(a missing kernel.barrier\?\): `memref.store %v, %t\[%i\] : memref<1024xf32>`, "
        r"then `%v = memref.load %t\[%j\] : memref<1024xf32>`",
    ):
        run(REVERSE_THROUGH_MEMORY.replace("  kernel.barrier\n", ""), randn(1024))


@pytest.mark.parametrize("blocks_per_chunk", [None, 1], ids=["lockstep", "one-by-one"])
def test_a_barrier_does_not_order_blocks(monkeypatch, blocks_per_chunk):
    """Across blocks nothing orders the two loops, however the emulator runs the blocks: in
    lockstep the read finds the other block's store; one block after another, the store finds
    the other block's read."""
    from emmy.tools.interpreter import simt

    text = REVERSE_THROUGH_MEMORY.replace("grid [1, 1, 1]", "grid [4, 1, 1]")
    if blocks_per_chunk is None:
        message = (
            r"'memref.load'.*thread \(0, 0, 0\) of block \(0, 0, 0\) reads element \[1023\] "
            r"of %t, which thread \(127, 0, 0\) of block \(3, 0, 0\) stored in the same "
            r"launch, whose blocks nothing orders"
        )
    else:
        monkeypatch.setattr(simt, "CHUNK_THREADS", 128 * blocks_per_chunk)
        message = (
            r"'memref.store'.*thread \(0, 0, 0\) of block \(2, 0, 0\) stores to element "
            r"\[256\] of %t, which thread \(127, 0, 0\) of block \(1, 0, 0\) read in the "
            r"same launch, whose blocks nothing orders"
        )
    with pytest.raises(ExecutionError, match=message):
        run(text, randn(1024))


def test_a_store_over_what_another_thread_of_the_block_read_is_a_race():
    """Thread 1 stores t[1023], which thread 0 has just read: on a GPU the store may come
    first."""
    text = REVERSE_THROUGH_MEMORY.replace(
        "    memref.store %v, %y[%i] : memref<1024xf32>",
        "    memref.store %v, %y[%i] : memref<1024xf32>\n"
        "    %c1 = arith.constant 1 : index\n"
        "    %next = arith.addi %j, %c1 : index\n"
        "    %k = arith.remui %next, %n : index\n"
        "    %w = arith.addf %v, %v : f32\n"
        "    memref.store %w, %t[%k] : memref<1024xf32>",
    )
    with pytest.raises(
        ExecutionError,
        match=r"'memref.store'.*thread \(1, 0, 0\) of block \(0, 0, 0\) stores to element "
        r"\[1023\] of %t, which thread \(0, 0, 0\) read since the last barrier",
    ):
        run(text, randn(1024))


SUM_THEN_READ = """
kernel.func @total(%x: memref<1024xf32>, %sum: memref<1xf32>, %y: memref<1024xf32>) block
    [128, 1, 1] {
  %tid = kernel.thread_id x
  %bid = kernel.block_id x
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %base = arith.muli %bid, %c128 : index
  %i = arith.addi %base, %tid : index
  %v = memref.load %x[%i] : memref<1024xf32>
  %old = kernel.atomic add %v, %sum[%c0] : memref<1xf32>
  READ
}

func.func @forward(%x: memref<1024xf32>) -> (memref<1xf32>, memref<1024xf32>) {
  %sum = memref.alloc() : memref<1xf32>
  %y = memref.alloc() : memref<1024xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  memref.store %zero, %sum[%c0] : memref<1xf32>
  kernel.launch @total(%x, %sum, %y) grid [8, 1, 1] block [128, 1, 1] smem 0
      : memref<1024xf32>, memref<1xf32>, memref<1024xf32>
  func.return %sum, %y : memref<1xf32>, memref<1024xf32>
}
"""


def test_atomics_of_many_blocks_do_not_race_with_each_other():
    x = randn(1024)
    total, _ = run(SUM_THEN_READ.replace("READ", ""), x)
    np.testing.assert_allclose(total, [x.sum()], rtol=1e-5)


def test_reading_what_other_blocks_update_with_atomics_is_a_race():
    read = (
        "kernel.barrier\n"
        "  %s = memref.load %sum[%c0] : memref<1xf32>\n"
        "  memref.store %s, %y[%i] : memref<1024xf32>"
    )
    with pytest.raises(
        ExecutionError,
        match=r"'memref.load'.*in @total, thread \(0, 0, 0\) of block \(0, 0, 0\) reads "
        r"element \[0\] of %sum, which threads of several blocks updated with kernel.atomic "
        r"in the same launch",
    ):
        run(SUM_THEN_READ.replace("READ", read), randn(1024))


LAST_BLOCK_REVERSES = """
kernel.func @last(%x: memref<1024xf32>, %y: memref<1024xf32>, %out: memref<1024xf32>,
    %count: memref<1xi32>) block [128, 1, 1] {
  %tid = kernel.thread_id x
  %bid = kernel.block_id x
  %arrived = kernel.shared_alloc : memref<1xi32, 3 : i32>
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c1023 = arith.constant 1023 : index
  %c1024 = arith.constant 1024 : index
  %c7 = arith.constant 7 : i32
  %base = arith.muli %bid, %c128 : index
  %i = arith.addi %base, %tid : index
  %v = memref.load %x[%i] : memref<1024xf32>
  %w = arith.addf %v, %v : f32
  memref.store %w, %y[%i] : memref<1024xf32>
  kernel.barrier
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {
    %old = kernel.atomic inc ORDER %c7, %count[%c0] : memref<1xi32>
    memref.store %old, %arrived[%c0] : memref<1xi32, 3 : i32>
  }
  kernel.barrier
  %seen = memref.load %arrived[%c0] : memref<1xi32, 3 : i32>
  %last = arith.cmpi eq, %seen, %c7 : i32
  scf.if %last {
    scf.for %j = %tid to %c1024 step %c128 {
      %k = arith.subi %c1023, %j : index
      %e = memref.load %y[%k] : memref<1024xf32>
      memref.store %e, %out[%j] : memref<1024xf32>
    }
  }
}

func.func @forward(%x: memref<1024xf32>, %count: memref<1xi32>) -> memref<1024xf32> {
  %y = memref.alloc() : memref<1024xf32>
  %out = memref.alloc() : memref<1024xf32>
  kernel.launch @last(%x, %y, %out, %count) grid [8, 1, 1] block [128, 1, 1] smem 0
      : memref<1024xf32>, memref<1024xf32>, memref<1024xf32>, memref<1xi32>
  func.return %out : memref<1024xf32>
}
"""


@pytest.mark.parametrize("chunk_threads", [1 << 16, 128])
def test_the_last_block_to_arrive_acq_rel_reads_what_the_others_stored(
    chunk_threads: int, monkeypatch
) -> None:
    """8 blocks store their doubled inputs, then arrive at a counter (`inc` 7: 0 to 7, then
    back to 0); the eighth reads every block's stores, which its acq_rel arrival orders after
    theirs, whether the blocks run in lockstep or a chunk each."""
    monkeypatch.setattr(simt, "CHUNK_THREADS", chunk_threads)
    x, count = randn(1024), np.zeros(1, np.int32)
    (out,) = run(LAST_BLOCK_REVERSES.replace("ORDER", "acq_rel"), x, count)
    np.testing.assert_array_equal(out, 2 * x[::-1])
    np.testing.assert_array_equal(count, [0])


def test_what_a_block_does_after_its_arrival_is_not_released(monkeypatch) -> None:
    """The other blocks store again after they arrive (each a chunk of its own, so done
    before the last block runs): the last block's read of such a store races, as on a GPU,
    while what they stored before arriving it reads in order."""
    monkeypatch.setattr(simt, "CHUNK_THREADS", 128)
    text = LAST_BLOCK_REVERSES.replace("ORDER", "acq_rel").replace(
        "      memref.store %e, %out[%j] : memref<1024xf32>\n    }\n  }",
        "      memref.store %e, %out[%j] : memref<1024xf32>\n    }\n  } else {\n"
        "    memref.store %v, %y[%i] : memref<1024xf32>\n  }",
    )
    with pytest.raises(
        ExecutionError,
        match=r"'memref.load'.*block \(7, 0, 0\) reads element \[895\] of %y, which thread "
        r"\(127, 0, 0\) of block \(6, 0, 0\) stored in the same launch",
    ):
        run(text, randn(1024), np.zeros(1, np.int32))


def test_a_relaxed_arrival_orders_nothing():
    with pytest.raises(
        ExecutionError,
        match=r"'memref.load'.*in @last, thread \(0, 0, 0\) of block \(7, 0, 0\) reads element "
        r"\[895\] of %y, which thread \(127, 0, 0\) of block \(6, 0, 0\) stored in the same "
        r"launch",
    ):
        run(LAST_BLOCK_REVERSES.replace("ORDER", ""), randn(1024), np.zeros(1, np.int32))


def test_shuffle_in_a_partly_active_warp_is_an_error():
    text = SHUFFLES.replace(
        "%x = kernel.shuffle xor %v, %five : i32",
        "%c20 = arith.constant 20 : index\n  %some = arith.cmpi ult, %tid, %c20 : index\n"
        "  %x = scf.if %some -> (i32) {\n"
        "    %s = kernel.shuffle xor %v, %five : i32\n    scf.yield %s : i32\n"
        "  } else {\n    scf.yield %v : i32\n  }",
    )
    # The verifier rejects this kernel; the emulator reports it too, when it runs unverified.
    with pytest.raises(VerifyException, match="every lane of the warp"):
        parse(text)
    with pytest.raises(
        ExecutionError, match=r"'kernel.shuffle'.*only 20 of the 32 lanes of warp 0"
    ):
        run(text, verify=False)


# ---- Tile IR lowered to Kernel IR ------------------------------------------------------------

TILE_BLOCK_SHAPES = """
tile.kernel @k(%x: memref<8x200xf32>, %y: memref<8x200xf32>, %rows: memref<8xf32>,
               %total: memref<1xf32>) grid [4, 1, 1] block BLOCK {
  tile.for %i in 0 to 8 map grid {
    %sum = tile.for %j in 0 to 200 map thread reduce add init 0.0 : f32 {
      %v = memref.load %x[%i, %j] : memref<8x200xf32>
      tile.yield %v : f32
    }
    memref.store %sum, %rows[%i] : memref<8xf32>
    tile.for %j in 0 to 200 map thread vector 4 {
      %v = memref.load %x[%i, %j] : memref<8x200xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %y[%i, %j] : memref<8x200xf32>
    }
  }
}
tile.kernel @max(%rows: memref<8xf32>, %total: memref<1xf32>) grid [4, 1, 1] block BLOCK {
  %max = tile.for %n in 0 to 8 map global reduce max init -3.4e38 : f32 {
    %m = memref.load %rows[%n] : memref<8xf32>
    tile.yield %m : f32
  }
  %c0 = arith.constant 0 : index
  memref.store %max, %total[%c0] : memref<1xf32>
}
func.func @forward(%x: memref<8x200xf32>) -> (memref<8x200xf32>, memref<8xf32>, memref<1xf32>) {
  %y = memref.alloc() : memref<8x200xf32>
  %rows = memref.alloc() : memref<8xf32>
  %total = memref.alloc() : memref<1xf32>
  tile.launch @k(%x, %y, %rows, %total)
    : memref<8x200xf32>, memref<8x200xf32>, memref<8xf32>, memref<1xf32>
  tile.launch @max(%rows, %total) : memref<8xf32>, memref<1xf32>
  func.return %y, %rows, %total : memref<8x200xf32>, memref<8xf32>, memref<1xf32>
}
"""


@pytest.mark.parametrize("block", [(64, 1, 1), (32, 2, 1), (16, 2, 2), (8, 4, 4)])
def test_tile_kernel_of_any_block_shape_covers_every_element(block):
    """Every thread of a block of any shape takes its share: thread loops, their reductions
    (warps of the linear thread id) and a reduction split across blocks all see every element
    (the blocks' row sums pass to the split reduction between two launches)."""
    text = TILE_BLOCK_SHAPES.replace("BLOCK", str(list(block)))
    module = parse(text)
    LowerTileToKernelPass().apply(make_context(), module)
    module.verify()
    assert "tile." not in str(module)
    x = randn(8, 200)
    y, rows, total = run_module(module, [x])
    np.testing.assert_array_equal(y, x * x)
    np.testing.assert_allclose(rows, x.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(total, [x.sum(axis=1).max()], rtol=1e-5)


# ---- data passed between loops through memory, lowered from Loop IR --------------------------

REVERSE_NESTS = """
loop.kernel @k(%x: memref<Nxf32>, %t: memref<Nxf32>, %y: memref<Nxf32>) {
  loop.for %i in 0 to N {
    %v = loop.load %x[%i] : memref<Nxf32>
    loop.store %v, %t[%i] : memref<Nxf32>
  }
  loop.for %i in 0 to N {
    %last = arith.constant LAST : index
    %j = arith.subi %last, %i : index
    %v = loop.load %t[%j] : memref<Nxf32>
    loop.store %v, %y[%i] : memref<Nxf32>
  }
}
func.func @forward(%x: memref<Nxf32>) -> memref<Nxf32> {
  %t = memref.alloc() : memref<Nxf32>
  %y = memref.alloc() : memref<Nxf32>
  loop.launch @k(%x, %t, %y) : memref<Nxf32>, memref<Nxf32>, memref<Nxf32>
  func.return %y : memref<Nxf32>
}
"""

REVERSE_ROWS = """
loop.kernel @k(%x: memref<16x4096xf32>, %t: memref<16x4096xf32>, %y: memref<16x4096xf32>) {
  loop.for %i in 0 to 16 {
    loop.for %j in 0 to 4096 {
      %v = loop.load %x[%i, %j] : memref<16x4096xf32>
      loop.store %v, %t[%i, %j] : memref<16x4096xf32>
    }
    loop.for %j in 0 to 4096 {
      %c4095 = arith.constant 4095 : index
      %k = arith.subi %c4095, %j : index
      %v = loop.load %t[%i, %k] : memref<16x4096xf32>
      loop.store %v, %y[%i, %j] : memref<16x4096xf32>
    }
  }
}
func.func @forward(%x: memref<16x4096xf32>) -> memref<16x4096xf32> {
  %t = memref.alloc() : memref<16x4096xf32>
  %y = memref.alloc() : memref<16x4096xf32>
  loop.launch @k(%x, %t, %y) : memref<16x4096xf32>, memref<16x4096xf32>, memref<16x4096xf32>
  func.return %y : memref<16x4096xf32>
}
"""


def scheduled_levels(text: str) -> tuple[ModuleOp, ModuleOp, ModuleOp]:
    """The program at the loop, tile and kernel levels, by the heuristic's schedules."""
    loop_level = parse(text)
    ChooseTileSchedulePass().apply(make_context(), loop_level)
    tile_level = loop_level.clone()
    LowerLoopToTilePass().apply(make_context(), tile_level)
    tile_level.verify()
    kernel_level = tile_level.clone()
    LowerTileToKernelPass().apply(make_context(), kernel_level)
    kernel_level.verify()
    return loop_level, tile_level, kernel_level


def without_barriers(module: ModuleOp, keep=lambda barrier: False) -> ModuleOp:
    """A copy of `module` without its kernel.barrier ops (but those `keep` says)."""
    copy = module.clone()
    for barrier in [op for op in copy.walk() if isinstance(op, kernel.BarrierOp)]:
        if not keep(barrier):
            barrier.detach()
            barrier.erase()
    return copy


def fresh(*shape: int) -> np.ndarray:
    return np.random.default_rng().standard_normal(shape).astype(np.float32)


def test_dependent_nests_of_many_blocks_are_launched_one_after_another():
    """The second nest reads, reversed, what the first writes, over 4 blocks of 16 warps: two
    kernels, each of several blocks, and the same answer at every level."""
    text = REVERSE_NESTS.replace("LAST", "8191").replace("N", "8192")
    loop_level, tile_level, kernel_level = scheduled_levels(text)
    launches = [op for op in kernel_level.walk() if isinstance(op, kernel.LaunchOp)]
    assert [(op.kernel.root_reference.data, op.grid_shape) for op in launches] == [
        ("k", (4, 1, 1)),
        ("k_1", (4, 1, 1)),
    ]
    x = fresh(8192)
    expected = x[::-1]
    for module in (loop_level, tile_level, kernel_level):
        (y,) = run_module(module, [x])
        np.testing.assert_array_equal(y, expected)


def test_dependent_nests_of_one_block_meet_at_a_barrier():
    """In one block the nests stay one kernel, with a barrier between them, without which the
    emulator reports the race, at any size."""
    text = REVERSE_NESTS.replace("LAST", "63").replace("N", "64")
    loop_level, _, kernel_level = scheduled_levels(text)
    assert str(kernel_level).count("kernel.barrier") == 1
    x = fresh(64)
    (y,) = run_module(kernel_level, [x])
    np.testing.assert_array_equal(y, run_module(loop_level, [x])[0])
    with pytest.raises(ExecutionError, match=r"reads element \[63\] of %t, which thread"):
        run_module(without_barriers(kernel_level), [x])


def test_dependent_loops_of_a_row_meet_at_a_barrier():
    """Each of 16 rows passes through %t from one loop to the next: a row stays in one block
    (not spread over a row of blocks, which nothing would order), whose loops meet at a
    barrier; without it, the emulator reports the race."""
    loop_level, _, kernel_level = scheduled_levels(REVERSE_ROWS)
    assert str(kernel_level).count("kernel.barrier") == 1
    x = fresh(16, 4096)
    (y,) = run_module(kernel_level, [x])
    np.testing.assert_array_equal(y, x[:, ::-1])
    np.testing.assert_array_equal(y, run_module(loop_level, [x])[0])
    with pytest.raises(ExecutionError, match=r"reads element \[0, 4095\] of %t, which thread"):
        run_module(without_barriers(kernel_level), [x])


ROUNDS = """
tile.kernel @k(%x: memref<4x256xf32>, %s: memref<4x256xf32>, %y: memref<4x256xf32>) grid
    [4, 1, 1] block [64, 1, 1] {
  tile.for %i in 0 to 4 map grid {
    tile.for %k in 0 to 3 map serial {
      tile.for %j in 0 to 256 map thread {
        %v = memref.load %y[%i, %j] : memref<4x256xf32>
        memref.store %v, %s[%i, %j] : memref<4x256xf32>
      }
      tile.for %j in 0 to 256 map thread {
        %c255 = arith.constant 255 : index
        %m = arith.subi %c255, %j : index
        %v = memref.load %s[%i, %m] : memref<4x256xf32>
        %w = memref.load %x[%i, %j] : memref<4x256xf32>
        %a = arith.addf %v, %w : f32
        memref.store %a, %y[%i, %j] : memref<4x256xf32>
      }
    }
  }
}
func.func @forward(%x: memref<4x256xf32>, %y: memref<4x256xf32>) -> memref<4x256xf32> {
  %s = memref.alloc() : memref<4x256xf32>
  tile.launch @k(%x, %s, %y) : memref<4x256xf32>, memref<4x256xf32>, memref<4x256xf32>
  func.return %y : memref<4x256xf32>
}
"""


def test_a_loops_next_iteration_waits_for_the_reads_of_this_one():
    """Each of 3 rounds adds %x to %y reversed, through %s: a barrier between the two loops,
    and one at the end of the round, where the next round's first loop overwrites what this
    one's second loop reads; without that one the emulator reports the race."""
    module = parse(ROUNDS)
    LowerTileToKernelPass().apply(make_context(), module)
    module.verify()
    x, y = fresh(4, 256), fresh(4, 256)
    expected = y.copy()
    for _ in range(3):
        expected = expected[:, ::-1] + x
    (result,) = run_module(module, [x, y])
    np.testing.assert_allclose(result, expected, rtol=1e-6)

    def between_the_loops(barrier: kernel.BarrierOp) -> bool:
        return not isinstance(barrier.next_op, scf.YieldOp)

    with pytest.raises(
        ExecutionError,
        match=r"stores to element \[0, 0\] of %s, which thread \(63, 0, 0\) read since the "
        r"last barrier",
    ):
        run_module(without_barriers(module, between_the_loops), [x, y])


# ---- clusters ---------------------------------------------------------------------------------

CLUSTER_SWAP = """
kernel.func @swap(%y: memref<8x32xf32>) block [32, 1, 1] cluster 2 {
  %s = kernel.shared_alloc : memref<32xf32, 3 : i32>
  %t = kernel.thread_id x
  %b = kernel.block_id x
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = arith.remui %b, %c2 : index
  %v = memref.load %y[%b, %t] : memref<8x32xf32>
  memref.store %v, %s[%t] : memref<32xf32, 3 : i32>
  FIRST
  %o = arith.subi %c1, %r : index
  %m = kernel.map_shared_rank %s, RANK : memref<32xf32, 3 : i32>
  %w = memref.load %m[%t] : memref<32xf32, 3 : i32>
  LAST
  memref.store %w, %y[%b, %t] : memref<8x32xf32>
}

func.func @forward(%y: memref<8x32xf32>) -> memref<8x32xf32> {
  kernel.launch @swap(%y) grid [8, 1, 1] block [32, 1, 1] smem 0 : memref<8x32xf32>
  func.return %y : memref<8x32xf32>
}
"""


def cluster_swap(
    first: str = "kernel.cluster_barrier", last: str = "kernel.cluster_barrier", rank: str = "%o"
) -> str:
    return CLUSTER_SWAP.replace("FIRST", first).replace("LAST", last).replace("RANK", rank)


@pytest.mark.parametrize("chunk_threads", [32, 64, 1 << 16])
def test_blocks_of_a_cluster_read_each_others_shared_memory(monkeypatch, chunk_threads: int):
    """Each block reads the row its partner in the cluster stored: chunks of one block are
    widened to whole clusters."""
    monkeypatch.setattr("emmy.tools.interpreter.simt.CHUNK_THREADS", chunk_threads)
    y = randn(8, 32)
    (result,) = run(cluster_swap(), y.copy())
    np.testing.assert_array_equal(result, y.reshape(4, 2, 32)[:, ::-1].reshape(8, 32))


def test_reading_another_blocks_shared_memory_without_a_cluster_barrier_is_a_race():
    with pytest.raises(
        ExecutionError,
        match=r"reads shared element \[0\], which thread \(0, 0, 0\) of block \(1, 0, 0\) "
        r"stored since the last cluster barrier \(a missing kernel.cluster_barrier\?\)",
    ):
        run(cluster_swap(first="kernel.barrier"), randn(8, 32))


def test_a_cluster_that_ends_while_its_shared_memory_is_read_is_an_error():
    with pytest.raises(
        ExecutionError,
        match=r"the blocks of a cluster end while another may still access their shared "
        r"memory \(`%w = memref.load %m\[%t\] .*`\): a missing kernel.cluster_barrier",
    ):
        run(cluster_swap(last=""), randn(8, 32))


def test_mapping_a_rank_outside_the_cluster_is_an_error():
    with pytest.raises(ExecutionError, match=r"maps rank 2 of a cluster of 2 blocks"):
        run(cluster_swap(rank="%c2"), randn(8, 32))


def test_a_cluster_barrier_that_one_block_of_the_cluster_skips_is_an_error():
    skip = """%c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %r, %c0 : index
  scf.if %first {
    kernel.cluster_barrier
  }"""
    with pytest.raises(
        ExecutionError,
        match=r"cluster barrier under divergent control flow: in block \(1, 0, 0\), 32 of 64 "
        r"threads of its cluster reach it",
    ):
        run(cluster_swap(first=skip), randn(8, 32))


ROTARY_HEADS = """
class Rotary(nn.Module):
    def forward(self, x, cos, sin):
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin
Rotary()(torch.randn(2, 3, 37, 64, dtype=torch.bfloat16),
         torch.randn(37, 64, dtype=torch.bfloat16), torch.randn(37, 64, dtype=torch.bfloat16))
"""


def test_blocks_of_several_rows_match_eager(monkeypatch, tmp_path) -> None:
    """A rotation of heads of 64 bf16 (8 vectors a row) on a GPU of 8 SMs: blocks of 8 rows
    of 8 threads, 222 rows in 28 blocks, the last one of 6 rows; the SIMT emulator runs
    the rows of each block apart and matches eager, and nvcc compiles it."""
    monkeypatch.setitem(target.TARGETS, "sm_90a", replace(target.TARGETS["sm_90a"], sm_count=8))
    program = load_program(ROTARY_HEADS, "<source>")
    torch_ir = program.to_torch_ir()
    torch_ir.attributes["kernel.target"] = target.TargetAttr("sm_90a")
    assert "grid [28, 1, 1] block [8, 8, 1]" in str(lower(torch_ir, "tile"))
    reports = check_levels(program, torch_ir, ("kernel",), seed=5)
    assert all(r.passed for r in reports), [(r.max_abs_error, r.max_rel_error) for r in reports]
    if NVCC:
        nvcc_compile(print_cuda(lower(torch_ir, "kernel")), tmp_path)
