"""Hopper Kernel IR in the SIMT emulator: mbarriers, TMA loads, wgmma and warp-specialised
kernels whose producer and consumer warpgroups wait for each other.

A hand-written warp-specialised GEMM (one producer warpgroup issuing TMA loads into a ring of
two stages, two consumer warpgroups running wgmma) matches torch.matmul on fresh random bf16
inputs, K tail included; the mistakes that make such kernels wrong on a GPU (a missing wait
on the full or the empty barrier, a release that never comes, a wgmma by part of a
warpgroup) are errors naming the thread and the op. A cluster of two blocks streams tiles
through TMA loads multicast to both blocks, into a ring that both blocks' consumers release
with arrivals on each other's mbarriers; ranks outside the cluster are errors. A TMA store
writes a swizzled staging buffer into a tensor, clipped at its edges; writing the staging
before the store's wait, or ending the block with a store in flight, is an error.
"""

from __future__ import annotations

import threading

import pytest
import torch
from test_cuda_target import NVCC, nvcc_compile
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import InterpretationError, VerifyException

from emmy.dialects import make_context
from emmy.tools.cuda.target import print_cuda
from emmy.tools.interpreter.run import ExecutionError, run_module

M, N, BOX = 128, 64, 64
"""The GEMM's rows and columns; TMA boxes are BOX x BOX (rows x K)."""
STAGES = 2
WARPGROUP = 128


def parse(text: str, verify: bool = True) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    if verify:
        module.verify()
    return module


def emulate(text: str, *inputs: torch.Tensor, verify: bool = True) -> list[torch.Tensor]:
    arrays = [x.float().numpy() if x.dtype == torch.bfloat16 else x.numpy() for x in inputs]
    return [torch.from_numpy(out) for out in run_module(parse(text, verify), arrays)]


def fresh(*shape: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator).to(torch.bfloat16)


def warp_specialised_gemm(
    k: int,
    full_wait: bool = True,
    empty_wait: bool = True,
    release: bool = True,
    in_flight: int = 0,
    blocks: int = 1,
    split_consumers: bool = False,
) -> str:
    """D (M * blocks x N, f32) = A (M * blocks x k) @ W^T (W: N x k, nn.Linear's layout),
    M rows per block of 3 warpgroups: thread 0 of warpgroup 0 streams K tiles of A (two
    64 x 64 boxes) and W (one) through TMA into a ring of STAGES swizzled stages (full[s]: the
    tiles landed; empty[s]: both consumers are done with them); warpgroup 1 + c multiplies the
    block's rows 64c to 64c + 63 with four m64n64k16 wgmmas per K tile. The flags leave out
    the consumers' wait on full, the producer's wait on empty, or the consumers' release of
    empty; `in_flight` groups of wgmmas stay in flight when a consumer releases the stage
    they read; `split_consumers` puts the two consumers in the two regions of an scf.if."""
    tiles = -(-k // BOX)
    rows = M * blocks
    a_map = f"!kernel.tensor_map<memref<{rows}x{k}xbf16>, box [{BOX}, {BOX}], swizzle 128>"
    w_map = f"!kernel.tensor_map<memref<{N}x{k}xbf16>, box [{BOX}, {BOX}], swizzle 128>"
    sa = f"memref<{STAGES}x{M}x{BOX}xbf16, 3 : i32>"
    sw = f"memref<{STAGES}x{N}x{BOX}xbf16, 3 : i32>"
    bars = f"!kernel.mbarrier<{STAGES}>"
    acc = f"vector<{N // 2}xf32>"
    d = f"memref<{rows}x{N}xf32>"
    tile_bytes = 3 * BOX * BOX * 2
    constants = sorted({0, 1, 2, 4, 8, 16, 32, 48, 64, 128, tiles} | set(range(0, N, 8)))
    constant_text = "\n".join(f"  %c{v} = arith.constant {v} : index" for v in constants)
    empty_wait_text = (
        f"      kernel.mbarrier_wait %empty[%s], %empty_parity : {bars}" if empty_wait else ""
    )
    full_wait_text = f"    kernel.mbarrier_wait %full[%s], %parity : {bars}" if full_wait else ""
    release_text = f"    kernel.mbarrier_arrive %empty[%s] : {bars}" if release else ""
    wgmmas, previous = [], "%acc_in"
    for step in range(BOX // 16):
        wgmmas.append(
            f"    %d{step} = kernel.wgmma m64n{N}k16 %sa[%s, %arow, %c{16 * step}], "
            f"%sw[%s, %c0, %c{16 * step}], {previous} : {sa}, {sw}, {acc} -> {acc}"
        )
        previous = f"%d{step}"
    stores = []
    for i in range(N // 2):
        row = "%row8" if i // 2 % 2 else "%row0"
        stores.append(f"    %e{i} = vector.extract %result[{i}] : f32 from {acc}")
        stores.append(f"    %col{i} = arith.addi %q2, %c{8 * (i // 4)} : index")
        if i % 2:
            stores.append(f"    %col{i}_odd = arith.addi %col{i}, %c1 : index")
        column = f"%col{i}_odd" if i % 2 else f"%col{i}"
        stores.append(f"    memref.store %e{i}, %d[{row}, {column}] : {d}")
    wgmma_text, store_text = "\n".join(wgmmas), "\n".join(stores)
    consumer_text = f"""    kernel.setmaxnreg inc 232
    %consumer = arith.subi %wg, %c1 : index
    %arow = arith.muli %consumer, %c64 : index
    %zero = arith.constant 0.0 : f32
    %acc0 = vector.broadcast %zero : f32 to {acc}
    %result = scf.for %kt = %c0 to %c{tiles} step %c1 iter_args(%acc_in = %acc0) -> ({acc}) {{
      %s = arith.remui %kt, %c2 : index
      %round = arith.divui %kt, %c2 : index
      %parity = arith.remui %round, %c2 : index
{full_wait_text}
      kernel.wgmma_fence
{wgmma_text}
      kernel.wgmma_commit
      %acc_out = kernel.wgmma_wait {in_flight}, %d{BOX // 16 - 1} : {acc}
{release_text}
      scf.yield %acc_out : {acc}
    }}
    %t = arith.remui %tid, %c128 : index
    %warp = arith.divui %t, %c32 : index
    %lane = arith.remui %t, %c32 : index
    %g = arith.divui %lane, %c4 : index
    %q = arith.remui %lane, %c4 : index
    %q2 = arith.muli %q, %c2 : index
    %w16 = arith.muli %warp, %c16 : index
    %block_arow = arith.addi %brow, %arow : index
    %wrow = arith.addi %block_arow, %w16 : index
    %row0 = arith.addi %wrow, %g : index
    %row8 = arith.addi %row0, %c8 : index
{store_text}
"""
    if split_consumers:
        # Each consumer warpgroup in a region of its own, waiting and arriving on its own.
        consumer_text = (
            "    %second = arith.cmpi eq, %wg, %c2 : index\n"
            f"    scf.if %second {{\n{consumer_text}    }} else {{\n{consumer_text}    }}\n"
        )
    return f"""
kernel.func @gemm(%amap: {a_map}, %wmap: {w_map}, %d: {d}) block [384, 1, 1] {{
  %tid = kernel.thread_id x
{constant_text}
  %full = kernel.mbarrier_alloc : {bars}
  %empty = kernel.mbarrier_alloc : {bars}
  %sa = kernel.dynamic_shared offset 0 {{layout = #kernel.swizzle<128>}} : {sa}
  %sw = kernel.dynamic_shared offset {STAGES * M * BOX * 2} {{layout = #kernel.swizzle<128>}} : {sw}
  %bid = kernel.block_id x
  %brow = arith.muli %bid, %c128 : index
  %brow64 = arith.addi %brow, %c64 : index
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {{
    scf.for %i = %c0 to %c{STAGES} step %c1 {{
      kernel.mbarrier_init %full[%i], arrivals 1 : {bars}
      kernel.mbarrier_init %empty[%i], arrivals 256 : {bars}
    }}
  }}
  kernel.barrier
  %wg = arith.divui %tid, %c128 : index
  %producer = arith.cmpi eq, %wg, %c0 : index
  scf.if %producer {{
    kernel.setmaxnreg dec 40
    scf.if %first {{
      scf.for %kt = %c0 to %c{tiles} step %c1 {{
        %s = arith.remui %kt, %c2 : index
        %round = arith.divui %kt, %c2 : index
        %round_parity = arith.remui %round, %c2 : index
        %empty_parity = arith.xori %round_parity, %c1 : index
{empty_wait_text}
        kernel.mbarrier_arrive_expect_tx %full[%s], bytes {tile_bytes} : {bars}
        %k0 = arith.muli %kt, %c64 : index
        kernel.tma_load %amap[%brow, %k0], %sa[%s, %c0, %c0], %full[%s] : {a_map}, {sa}, {bars}
        kernel.tma_load %amap[%brow64, %k0], %sa[%s, %c64, %c0], %full[%s]
            : {a_map}, {sa}, {bars}
        kernel.tma_load %wmap[%c0, %k0], %sw[%s, %c0, %c0], %full[%s] : {w_map}, {sw}, {bars}
      }}
    }}
  }} else {{
{consumer_text}  }}
}}

func.func @forward(%a: memref<{rows}x{k}xbf16>, %w: memref<{N}x{k}xbf16>) -> {d} {{
  %d = memref.alloc() : {d}
  kernel.launch @gemm(%a, %w, %d) grid [{blocks}, 1, 1] block [384, 1, 1]
      smem {STAGES * (M + N) * BOX * 2} : memref<{rows}x{k}xbf16>, memref<{N}x{k}xbf16>, {d}
  func.return %d : {d}
}}
"""


@pytest.mark.parametrize(
    "k, blocks, split",
    [(192, 1, False), (168, 1, False), (192, 2, False), (192, 1, True)],
    ids=["whole-tiles", "k-tail", "two-blocks", "consumers-apart"],
)
def test_a_warp_specialised_gemm_matches_torch(k: int, blocks: int, split: bool):
    a, w = fresh(M * blocks, k, seed=k), fresh(N, k, seed=k + 1)
    (d,) = emulate(warp_specialised_gemm(k, blocks=blocks, split_consumers=split), a, w)
    expected = torch.matmul(a.double(), w.double().T)
    # One f32 rounding per wgmma, of sums of 16 exact products onto the accumulator.
    torch.testing.assert_close(d, expected.float(), rtol=1e-5, atol=1e-4)


def test_reading_a_tile_before_waiting_for_its_phase_is_an_error():
    a, w = fresh(M, 192, seed=1), fresh(N, 192, seed=2)
    with pytest.raises(
        ExecutionError,
        match=r"while running 'kernel.wgmma': 'kernel.wgmma' by the warpgroup of thread "
        r"\(128, 0, 0\) of block \(0, 0, 0\) reads shared element \[0, \d+, \d+\] before its "
        r"kernel.tma_load's phase 0 of mbarrier %full\[0\] completed for it",
    ):
        emulate(warp_specialised_gemm(192, full_wait=False), a, w)


def test_a_producer_that_does_not_wait_for_the_release_is_an_error():
    a, w = fresh(M, 192, seed=3), fresh(N, 192, seed=4)
    with pytest.raises(
        ExecutionError,
        match=r"while running 'kernel.tma_load': thread \(0, 0, 0\) of block \(0, 0, 0\): "
        r"'kernel.tma_load' overwrites shared element \[0, 0, \d+\], which an earlier "
        r"kernel.tma_load delivered in phase 0 of mbarrier %full\[0\] and no thread has waited "
        r"for yet \(a missing mbarrier wait on the consumer's release\?\)",
    ):
        emulate(warp_specialised_gemm(192, empty_wait=False), a, w)


def test_a_release_that_never_comes_is_a_deadlock():
    a, w = fresh(M, 192, seed=5), fresh(N, 192, seed=6)
    with pytest.raises(ExecutionError, match=r"deadlock: every task is blocked") as error:
        emulate(warp_specialised_gemm(192, release=False), a, w)
    message = str(error.value)
    assert (
        "thread (0, 0, 0) of block (0, 0, 0) wait in 'kernel.mbarrier_wait' for the phase of "
        "parity 0 of mbarrier %empty[0], whose phase 0 still expects 256 of 256 arrivals"
    ) in message
    assert (
        "thread (128, 0, 0) of block (0, 0, 0) and 255 other threads wait in "
        "'kernel.mbarrier_wait' for the phase of parity 1 of mbarrier %full[0]"
    ) in message


def test_releasing_a_stage_that_a_wgmma_in_flight_reads_is_an_error():
    a, w = fresh(M, 256, seed=11), fresh(N, 256, seed=12)
    with pytest.raises(
        ExecutionError,
        match=r"while running 'kernel.tma_load': thread \(0, 0, 0\) of block \(0, 0, 0\): "
        r"'kernel.tma_load' overwrites shared element \[1, 0, \d+\], which a kernel.wgmma still "
        r"in flight reads",
    ):
        emulate(warp_specialised_gemm(256, in_flight=1), a, w)


def partial_warpgroup_wgmma(threads: int) -> str:
    tile = "memref<64x64xbf16, 3 : i32>"
    return f"""
kernel.func @k(%out: memref<1xf32>) block [128, 1, 1] {{
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %bound = arith.constant {threads} : index
  %sa = kernel.shared_alloc {{layout = #kernel.swizzle<128>}} : {tile}
  %some = arith.cmpi ult, %tid, %bound : index
  scf.if %some {{
    %zero = arith.constant 0.0 : f32
    %c = vector.broadcast %zero : f32 to vector<4xf32>
    kernel.wgmma_fence
    %d = kernel.wgmma m64n8k16 %sa[%c0, %c0], %sa[%c0, %c0], %c
        : {tile}, {tile}, vector<4xf32> -> vector<4xf32>
    kernel.wgmma_commit
    %e = kernel.wgmma_wait 0, %d : vector<4xf32>
  }}
}}

func.func @forward() -> memref<1xf32> {{
  %out = memref.alloc() : memref<1xf32>
  kernel.launch @k(%out) grid [1, 1, 1] block [128, 1, 1] smem 0 : memref<1xf32>
  func.return %out : memref<1xf32>
}}
"""


def test_wgmma_by_part_of_a_warpgroup_is_an_error():
    # The verifier rejects this kernel; the emulator reports it too, when it runs unverified.
    with pytest.raises(VerifyException, match="every thread of the warpgroup"):
        parse(partial_warpgroup_wgmma(96))
    with pytest.raises(
        ExecutionError,
        match=r"while running 'kernel.wgmma_fence': 'kernel.wgmma_fence' under divergent control "
        r"flow: only 96 of the 128 threads of warpgroup 0 of block \(0, 0, 0\) execute it",
    ):
        emulate(partial_warpgroup_wgmma(96), verify=False)


def tma_box_kernel(wait: bool) -> str:
    """Thread 0 copies the 4 x 8 box at (-1, 4) of a 6 x 8 f32 tensor (its first row and last
    four columns lie outside) into shared memory with TMA; every thread then (after waiting
    for the copy's phase, if `wait`) reads element `tid` of the box."""
    tensor = "memref<6x8xf32>"
    tensor_map = f"!kernel.tensor_map<{tensor}, box [4, 8], swizzle 0>"
    box = "memref<4x8xf32, 3 : i32>"
    wait_text = "  kernel.mbarrier_wait %bar[%c0], %c0 : !kernel.mbarrier<1>" if wait else ""
    return f"""
kernel.func @k(%map: {tensor_map}, %out: memref<32xf32>) block [32, 1, 1] {{
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %minus1 = arith.constant -1 : index
  %bar = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %box = kernel.dynamic_shared offset 0 : {box}
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {{
    kernel.mbarrier_init %bar[%c0], arrivals 1 : !kernel.mbarrier<1>
  }}
  kernel.barrier
  scf.if %first {{
    kernel.mbarrier_arrive_expect_tx %bar[%c0], bytes 128 : !kernel.mbarrier<1>
    kernel.tma_load %map[%minus1, %c4], %box[%c0, %c0], %bar[%c0]
        : {tensor_map}, {box}, !kernel.mbarrier<1>
  }}
{wait_text}
  %row = arith.divui %tid, %c8 : index
  %column = arith.remui %tid, %c8 : index
  %value = memref.load %box[%row, %column] : {box}
  memref.store %value, %out[%tid] : memref<32xf32>
}}

func.func @forward(%x: {tensor}) -> memref<32xf32> {{
  %out = memref.alloc() : memref<32xf32>
  kernel.launch @k(%x, %out) grid [1, 1, 1] block [32, 1, 1] smem 128 : {tensor}, memref<32xf32>
  func.return %out : memref<32xf32>
}}
"""


def test_tma_reads_zeros_outside_the_tensor():
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(7))
    (out,) = emulate(tma_box_kernel(wait=True), x)
    padded = torch.zeros(7, 12)
    padded[1:, :8] = x
    torch.testing.assert_close(out, padded[0:4, 4:12].reshape(-1), rtol=0, atol=0)


def test_a_generic_load_of_tma_data_needs_the_wait():
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(8))
    with pytest.raises(
        ExecutionError,
        match=r"while running 'memref.load': thread \(0, 0, 0\) of block \(0, 0, 0\) reads "
        r"shared element \[0, 0\] before its kernel.tma_load's phase 0 of mbarrier %bar\[0\] "
        r"completed for it",
    ):
        emulate(tma_box_kernel(wait=False), x)


def counting_thread_starts(monkeypatch) -> list[threading.Thread]:
    started = []
    start = threading.Thread.start

    def counted(thread: threading.Thread) -> None:
        started.append(thread)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", counted)
    return started


DIVERGENT = """
kernel.func @k(%out: memref<64xf32>) block [64, 1, 1] {
  %tid = kernel.thread_id x
  %c16 = arith.constant 16 : index
  %low = arith.cmpi ult, %tid, %c16 : index
  %value = scf.if %low -> (f32) {
    %one = arith.constant 1.0 : f32
    scf.yield %one : f32
  } else {
    %two = arith.constant 2.0 : f32
    scf.yield %two : f32
  }
  memref.store %value, %out[%tid] : memref<64xf32>
}

func.func @forward() -> memref<64xf32> {
  %out = memref.alloc() : memref<64xf32>
  kernel.launch @k(%out) grid [1, 1, 1] block [64, 1, 1] smem 0 : memref<64xf32>
  func.return %out : memref<64xf32>
}
"""


def test_only_a_region_that_waits_for_another_gets_a_task_of_its_own(monkeypatch):
    started = counting_thread_starts(monkeypatch)
    (out,) = emulate(DIVERGENT)
    assert started == []
    assert out.tolist() == [1.0] * 16 + [2.0] * 48
    a, w = fresh(M, 192, seed=9), fresh(N, 192, seed=10)
    emulate(warp_specialised_gemm(192), a, w)
    # The consumers' else-region, started when the producer first waits for a release.
    assert len(started) == 1


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_the_warp_specialised_gemm_compiles_for_sm_90a(tmp_path):
    nvcc_compile(print_cuda(parse(warp_specialised_gemm(168, split_consumers=True))), tmp_path)


def registers_a_wgmma() -> str:
    """A warpgroup multiplies a 64 x 16 A that each thread reads into its register fragment
    (element i of thread t at row 16 (t / 32) + (t % 32) / 4 + 8 ((i / 2) % 2), column
    8 (i / 4) + 2 (t % 4) + i % 2) by a 16 x 8 B it stored, transposed, into a K-major shared
    tile, and stores D by the accumulator layout (the same formula, 4 elements)."""
    tile = "memref<8x64xbf16, 3 : i32>"

    def place(i: int, result: str) -> str:
        return f"""
  %r{result}_h = arith.constant {8 * (i // 2 % 2)} : index
  %r{result}_c = arith.constant {8 * (i // 4) + i % 2} : index
  %r{result} = arith.addi %row, %r{result}_h : index
  %k{result} = arith.addi %pair, %r{result}_c : index"""

    fragment = "".join(
        f"""{place(i, f"a{i}")}
  %a{i} = memref.load %a[%ra{i}, %ka{i}] : memref<64x16xbf16>
  %f{i + 1} = vector.insert %a{i}, %f{i} [{i}] : bf16 into vector<8xbf16>"""
        for i in range(8)
    )
    stores = "".join(
        f"""{place(i, f"d{i}")}
  %d{i} = vector.extract %e[{i}] : f32 from vector<4xf32>
  memref.store %d{i}, %out[%rd{i}, %kd{i}] : memref<64x8xf32>"""
        for i in range(4)
    )
    return f"""
kernel.func @k(%a: memref<64x16xbf16>, %b: memref<16x8xbf16>, %out: memref<64x8xf32>)
    block [128, 1, 1] {{
  %tid = kernel.thread_id x
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %bt = kernel.shared_alloc {{layout = #kernel.swizzle<128>}} : {tile}
  %n = arith.divui %tid, %c16 : index
  %kk = arith.remui %tid, %c16 : index
  %bv = memref.load %b[%kk, %n] : memref<16x8xbf16>
  memref.store %bv, %bt[%n, %kk] : {tile}
  kernel.barrier
  %warp = arith.divui %tid, %c32 : index
  %lane = arith.remui %tid, %c32 : index
  %w16 = arith.muli %warp, %c16 : index
  %g = arith.divui %lane, %c4 : index
  %q = arith.remui %lane, %c4 : index
  %row = arith.addi %w16, %g : index
  %pair = arith.muli %q, %c2 : index
  %zero16 = arith.constant 0.0 : bf16
  %f0 = vector.broadcast %zero16 : bf16 to vector<8xbf16>{fragment}
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %c = vector.broadcast %zero : f32 to vector<4xf32>
  kernel.fence_proxy_async
  kernel.wgmma_fence
  %d = kernel.wgmma m64n8k16 %f8, %bt[%c0, %c0], %c
      : vector<8xbf16>, {tile}, vector<4xf32> -> vector<4xf32>
  kernel.wgmma_commit
  %e = kernel.wgmma_wait 0, %d : vector<4xf32>{stores}
}}

func.func @forward(%a: memref<64x16xbf16>, %b: memref<16x8xbf16>) -> memref<64x8xf32> {{
  %out = memref.alloc() : memref<64x8xf32>
  kernel.launch @k(%a, %b, %out) grid [1, 1, 1] block [128, 1, 1] smem 0
      : memref<64x16xbf16>, memref<16x8xbf16>, memref<64x8xf32>
  func.return %out : memref<64x8xf32>
}}
"""


def test_a_wgmma_with_a_in_registers_reads_the_fragment_layout():
    a, b = fresh(64, 16, seed=5), fresh(16, 8, seed=6)
    (out,) = emulate(registers_a_wgmma(), a, b)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-5, atol=1e-5)


def cluster_ring(rounds: int, mask: str = "%c3", rank: str = "%other") -> str:
    """A cluster of 2 blocks streams `rounds` 16 x 32 f32 tiles of x (16 * rounds x 32)
    through a ring of one 128-byte-swizzled stage in each block. Thread 0 of the block of rank
    r loads rows 8r to 8r + 7 of a tile with TMA multicast to the blocks of `mask` (0b11:
    both), into the same rows of their stages, so that each block's full barrier expects the
    whole tile's bytes, half from each block. The 32 consumer threads (warp 1) of each block
    wait for the tile, copy their column of it to out[block], and release the stage with an
    arrival on the empty barrier of their own block and one on that of the block of rank
    `rank` (the other's): both producers write both stages, so each waits for the consumers
    of both blocks before the next round. `%wide` (0b110) and `%beyond` (rank 2 or 3) reach
    past the cluster."""
    rows = 16 * rounds
    tensor = f"memref<{rows}x32xf32>"
    tensor_map = f"!kernel.tensor_map<{tensor}, box [8, 32], swizzle 128>"
    stage = "memref<16x32xf32, 3 : i32>"
    out = f"memref<2x{rows}x32xf32>"
    bar = "!kernel.mbarrier<1>"
    return f"""
kernel.func @ring(%map: {tensor_map}, %out: {out}) block [64, 1, 1] cluster 2 {{
  %tid = kernel.thread_id x
  %bid = kernel.block_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %rounds = arith.constant {rounds} : index
  %full = kernel.mbarrier_alloc : {bar}
  %empty = kernel.mbarrier_alloc : {bar}
  %stage = kernel.dynamic_shared offset 0 {{layout = #kernel.swizzle<128>}} : {stage}
  %r = arith.remui %bid, %c2 : index
  %other = arith.subi %c1, %r : index
  %wide = arith.shli %c3, %c1 : index
  %beyond = arith.addi %other, %c2 : index
  %half = arith.muli %r, %c8 : index
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {{
    kernel.mbarrier_init %full[%c0], arrivals 1 : {bar}
    kernel.mbarrier_init %empty[%c0], arrivals 64 : {bar}
  }}
  kernel.cluster_barrier
  %producer = arith.cmpi ult, %tid, %c32 : index
  scf.if %producer {{
    scf.if %first {{
      scf.for %k = %c0 to %rounds step %c1 {{
        %later = arith.cmpi ugt, %k, %c0 : index
        scf.if %later {{
          %previous = arith.subi %k, %c1 : index
          %released = arith.remui %previous, %c2 : index
          kernel.mbarrier_wait %empty[%c0], %released : {bar}
        }}
        kernel.mbarrier_arrive_expect_tx %full[%c0], bytes 2048 : {bar}
        %tile = arith.muli %k, %c16 : index
        %row = arith.addi %tile, %half : index
        kernel.tma_load %map[%row, %c0], %stage[%half, %c0], %full[%c0] multicast {mask}
            : {tensor_map}, {stage}, {bar}
      }}
    }}
  }} else {{
    %column = arith.subi %tid, %c32 : index
    scf.for %k = %c0 to %rounds step %c1 {{
      %parity = arith.remui %k, %c2 : index
      kernel.mbarrier_wait %full[%c0], %parity : {bar}
      %tile = arith.muli %k, %c16 : index
      scf.for %i = %c0 to %c16 step %c1 {{
        %value = memref.load %stage[%i, %column] : {stage}
        %row = arith.addi %tile, %i : index
        memref.store %value, %out[%bid, %row, %column] : {out}
      }}
      kernel.mbarrier_arrive %empty[%c0] rank %r : {bar}
      kernel.mbarrier_arrive %empty[%c0] rank {rank} : {bar}
    }}
  }}
  kernel.cluster_barrier
}}

func.func @forward(%x: {tensor}) -> {out} {{
  %out = memref.alloc() : {out}
  kernel.launch @ring(%x, %out) grid [2, 1, 1] block [64, 1, 1] smem 2048 : {tensor}, {out}
  func.return %out : {out}
}}
"""


def test_a_multicast_tma_load_lands_in_every_block_of_its_mask():
    # Each block loads half of the tile; both see all of it.
    x = torch.randn(16, 32, generator=torch.Generator().manual_seed(13))
    (out,) = emulate(cluster_ring(rounds=1), x)
    torch.testing.assert_close(out, torch.stack([x, x]), rtol=0, atol=0)


def test_a_ring_released_by_both_blocks_consumers_streams_every_tile():
    x = torch.randn(32, 32, generator=torch.Generator().manual_seed(14))
    (out,) = emulate(cluster_ring(rounds=2), x)
    torch.testing.assert_close(out, torch.stack([x, x]), rtol=0, atol=0)


def test_a_multicast_mask_bit_beyond_the_cluster_is_an_error():
    x = torch.randn(16, 32, generator=torch.Generator().manual_seed(15))
    with pytest.raises(
        ExecutionError,
        match=r"while running 'kernel.tma_load': thread \(0, 0, 0\) of block \(0, 0, 0\): "
        r"'kernel.tma_load' multicasts to the block of rank 2 of a cluster of 2 blocks$",
    ) as error:
        emulate(cluster_ring(rounds=1, mask="%wide"), x)
    assert isinstance(error.value.cause, InterpretationError)


def test_an_arrival_at_a_rank_beyond_the_cluster_is_an_error():
    x = torch.randn(16, 32, generator=torch.Generator().manual_seed(16))
    with pytest.raises(
        ExecutionError,
        match=r"while running 'kernel.mbarrier_arrive': thread \(32, 0, 0\) of block "
        r"\(0, 0, 0\): 'kernel.mbarrier_arrive' addresses the block of rank 3 of a cluster of "
        r"2 blocks$",
    ) as error:
        emulate(cluster_ring(rounds=1, rank="%beyond"), x)
    assert isinstance(error.value.cause, InterpretationError)


REMOTE_ARRIVALS = """
kernel.func @k(%out: memref<2x32xf32>) block [32, 1, 1] cluster 2 {
  %tid = kernel.thread_id x
  %bid = kernel.block_id x
  %c0 = arith.constant 0 : index
  %bar = kernel.mbarrier_alloc : !kernel.mbarrier<1>
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {
    kernel.mbarrier_init %bar[%c0], arrivals 64 : !kernel.mbarrier<1>
  }
  kernel.cluster_barrier
  kernel.mbarrier_arrive %bar[%c0] rank %c0 : !kernel.mbarrier<1>
  %lead = arith.cmpi eq, %bid, %c0 : index
  scf.if %lead {
    kernel.mbarrier_wait %bar[%c0], %c0 : !kernel.mbarrier<1>
  }
  %value = arith.index_cast %bid : index to i32
  %float = arith.sitofp %value : i32 to f32
  memref.store %float, %out[%bid, %tid] : memref<2x32xf32>
  kernel.cluster_barrier
}

func.func @forward() -> memref<2x32xf32> {
  %out = memref.alloc() : memref<2x32xf32>
  kernel.launch @k(%out) grid [2, 1, 1] block [32, 1, 1] smem 0 : memref<2x32xf32>
  func.return %out : memref<2x32xf32>
}
"""


def test_arrivals_with_a_rank_count_on_that_blocks_mbarrier():
    # The mbarrier of rank 0 completes only with the 32 arrivals of each block.
    (out,) = emulate(REMOTE_ARRIVALS)
    assert out.tolist() == [[0.0] * 32, [1.0] * 32]


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_the_cluster_ring_compiles_for_sm_90a(tmp_path):
    nvcc_compile(print_cuda(parse(cluster_ring(rounds=2))), tmp_path)


def tma_store_kernel(
    row: int,
    column: int,
    commit: bool = True,
    wait: str | None = "0 read",
    rewrite: bool = False,
) -> str:
    """One block of 128 threads copies X (64 x 64 bf16) into a 128-byte-swizzled staging
    buffer with generic stores, fences them for the async proxy and waits for all four warps
    at a named barrier; thread 0 then TMA-stores the staging as the 64 x 64 box at (row,
    column) of Y (96 x 96), which the host passes for the map. `commit` and `wait` (the
    kernel.tma_store_wait's operands, None for none) close and wait for the store's group;
    with `rewrite`, every thread stores into the staging again after a second named barrier
    (the next tile, before the store has surely read this one)."""
    tensor = "memref<96x96xbf16>"
    tensor_map = f"!kernel.tensor_map<{tensor}, box [64, 64], swizzle 128>"
    stage = "memref<64x64xbf16, 3 : i32>"
    commit_text = "    kernel.tma_store_commit" if commit else ""
    wait_text = f"    kernel.tma_store_wait {wait}" if wait is not None else ""
    rewrite_text = ""
    if rewrite:
        rewrite_text = f"""  kernel.named_barrier sync %c1, threads 128
  %zero = arith.constant 0.0 : bf16
  scf.for %j = %tid to %c4096 step %c128 {{
    %r2 = arith.divui %j, %c64 : index
    %k2 = arith.remui %j, %c64 : index
    memref.store %zero, %stage[%r2, %k2] : {stage}
  }}"""
    return f"""
kernel.func @k(%x: memref<64x64xbf16>, %map: {tensor_map}) block [128, 1, 1] {{
  %tid = kernel.thread_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c4096 = arith.constant 4096 : index
  %row = arith.constant {row} : index
  %column = arith.constant {column} : index
  %stage = kernel.shared_alloc {{layout = #kernel.swizzle<128>}} : {stage}
  scf.for %i = %tid to %c4096 step %c128 {{
    %r = arith.divui %i, %c64 : index
    %k = arith.remui %i, %c64 : index
    %v = memref.load %x[%r, %k] : memref<64x64xbf16>
    memref.store %v, %stage[%r, %k] : {stage}
  }}
  kernel.fence_proxy_async
  kernel.named_barrier sync %c1, threads 128
  %first = arith.cmpi eq, %tid, %c0 : index
  scf.if %first {{
    kernel.tma_store %map[%row, %column], %stage[%c0, %c0] : {tensor_map}, {stage}
{commit_text}
{wait_text}
  }}
{rewrite_text}
}}

func.func @forward(%x: memref<64x64xbf16>, %y: {tensor}) -> {tensor} {{
  kernel.launch @k(%x, %y) grid [1, 1, 1] block [128, 1, 1] smem 0
      : memref<64x64xbf16>, {tensor}
  func.return %y : {tensor}
}}
"""


@pytest.mark.parametrize(
    "row, column",
    [(8, 16), (64, 48), (-8, -16)],
    ids=["inside", "past-the-end", "before-the-start"],
)
@pytest.mark.parametrize("wait", ["0", "0 read"])
def test_a_tma_store_writes_its_box_into_the_tensor_clipped(row: int, column: int, wait: str):
    x = fresh(64, 64, seed=17)
    y = torch.full((96, 96), -1.0).to(torch.bfloat16)
    (out,) = emulate(tma_store_kernel(row, column, wait=wait), x, y)
    expected = torch.full((96 + 128, 96 + 128), -1.0)
    expected[64 + row : 128 + row, 64 + column : 128 + column] = x.float()
    torch.testing.assert_close(out, expected[64:160, 64:160], rtol=0, atol=0)


def test_storing_into_a_tma_store_source_before_its_wait_is_an_error():
    x, y = fresh(64, 64, seed=18), torch.zeros(96, 96).to(torch.bfloat16)
    with pytest.raises(
        ExecutionError,
        match=r"while running 'memref.store': thread \(0, 0, 0\) of block \(0, 0, 0\) stores "
        r"to shared element \[0, 0\], which a kernel.tma_store still in flight reads \(a "
        r"missing kernel.tma_store_wait\?\)$",
    ):
        emulate(tma_store_kernel(0, 0, wait=None, rewrite=True), x, y)
    # After the wait for the store's reads, the staging is free again.
    emulate(tma_store_kernel(0, 0, wait="0 read", rewrite=True), x, y)


@pytest.mark.parametrize(
    "commit, wait",
    [(True, None), (False, "0"), (True, "1 read")],
    ids=["no-wait", "not-committed", "one-left-pending"],
)
def test_a_block_that_ends_with_a_tma_store_in_flight_is_an_error(commit: bool, wait: str):
    x, y = fresh(64, 64, seed=19), torch.zeros(96, 96).to(torch.bfloat16)
    with pytest.raises(
        ExecutionError,
        match=r"while running 'kernel.launch': in @k, thread \(0, 0, 0\) of block \(0, 0, 0\) "
        r"ends with kernel.tma_store in flight \(`kernel.tma_store %map\[%row, %column\], "
        r"%stage\[%c0, %c0\] : .*`\), which still reads its block's shared memory: a missing "
        r"kernel.tma_store_wait\?$",
    ):
        emulate(tma_store_kernel(0, 0, commit=commit, wait=wait), x, y)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")
def test_the_tma_store_kernel_compiles_for_sm_90a(tmp_path):
    nvcc_compile(print_cuda(parse(tma_store_kernel(64, 48))), tmp_path)
