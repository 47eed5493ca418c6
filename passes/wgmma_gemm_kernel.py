"""The Kernel IR of a `tile.gemm` on warp-group tensor cores (wgmma), fed by TMA, for
`lower-tile-to-kernel`.

    tile.gemm %x[m, k] * %w[n, k] : memref<4096x4096xbf16>, memref<4096x4096xbf16> -> f32
        atom wgmma m64n256k16 tile [128, 256, 64] warps [8, 1] pipeline 4 epilogue(..) {..}

becomes a warp-specialised `kernel.func` of 3 warp groups, which takes two tensor maps besides
the kernel's own arguments (`!kernel.tensor_map<memref<4096x4096xbf16>, box [128, 64],
swizzle 128>` and the weight's, box [256, 64]: the launch passes the operands again for them):

    %a = kernel.dynamic_shared offset 0 : memref<4x128x64xbf16, 3 : i32>   (swizzled)
    %b = kernel.dynamic_shared offset 65536 : memref<4x256x64xbf16, 3 : i32>
    %full = kernel.mbarrier_alloc : !kernel.mbarrier<4>     // slice s has landed
    %empty = kernel.mbarrier_alloc : !kernel.mbarrier<4>    // slice s is free again
    thread 0: kernel.mbarrier_init %full[s], arrivals 1; %empty[s], arrivals 2; barrier
    warp group 0, the producer (setmaxnreg dec), its thread 0 only:
      for kt: s = kt % 4; if kt >= 4: kernel.mbarrier_wait %empty[s], (kt / 4 - 1) % 2
              kernel.mbarrier_arrive_expect_tx %full[s], bytes 49152
              kernel.tma_load %a_map[m0, 64 kt], %a[s, 0, 0], %full[s]   (and %b's)
    warp groups 1 and 2, the consumers (setmaxnreg inc), rows 64 (g - 1) of the tile each:
      for kt: s = kt % 4; kernel.mbarrier_wait %full[s], (kt / 4) % 2
              kernel.wgmma_fence; 4 x %acc = kernel.wgmma m64n256k16 %a[s, r, 16 j],
              %b[s, 0, 16 j], %acc; kernel.wgmma_commit; kernel.wgmma_wait 1
              if kt > 0: kernel.mbarrier_arrive %empty[(kt - 1) % 4]   (the group's thread 0)
      (the slice's products stay in flight while the next slice's are issued), then after
      the last slice %acc = kernel.wgmma_wait 0, %acc and its stage's release, and
      the epilogue of each accumulator element, at its place in the PTX wgmma D layout.

Where the epilogue ends in its one store of each output element at its own place, of a
kernel argument (`staged_output`), and shared memory beside the stages has room, the output
goes out through shared memory and TMA: each consumer warp group writes a panel of 128-byte
rows of its results into one of its staging slots (`%out_panels`, swizzled), and its thread 0
stores the panel with `kernel.tma_store %out_map[row, column], %out_panels[g, slot, 0, 0]`
while the group goes on to the next panel, tile and K slices; the thread waits
(`kernel.tma_store_wait slots - 1 read`) before the group writes a slot again. Stores from
registers took 11% of a 4096^3 product's time on an H100 (the kernel without them ran that
much faster, `benchmarks/h100/2026-12-07-fifth/`); TMA clips the rows and columns past the
output.

The blocks are persistent, one an SM at most: block x computes tiles x, x + grid, ... of the
batch's tiles, in groups of `raster` rows of tiles (the schedule's, 8 by default; `tile_order`),
the K slices of all its tiles counted on as one sequence (so the barriers' phases run on, and
the producer copies the next tile's slices while the consumers run the epilogue of the last).
A warp group of consumers computes (BM / (WM / 4)) x (BN / WN) of the tile (for warps [WM, WN])
in 64 x N atoms, each accumulator a `vector<N/2 x f32>`. TMA reads out-of-bounds elements of
the operands as zeros, so tails add zeros, and the epilogue runs only inside the output.

With `cluster C` (`kernel.func ... cluster C`), block x is rank r = x % C of its cluster, and
cluster x / C takes clusters' tiles (C M tiles of one N column) as a block without one takes
tiles, its rank-r block the r-th M tile. Each producer copies its A box, and 1/C of each B
piece (rows r BN / C on of a K-major one, its share of the panels of an N-major one) with
`multicast` into every block of the cluster: a stage's full barrier expects the whole stage's
bytes as before, the other blocks' copies completing on it. Thread 0 of each consumer warp
group releases a stage on the empty barrier of every block r of the cluster
(`kernel.mbarrier_arrive %empty[s] rank r`, C x 2 arrivals a phase), so no producer refills a
stage before every consumer of the cluster is done with it. A cluster barrier after the
barriers' initialisation, and the producer's wait for the releases of its last slices before
the block ends, keep every block's barriers there while the others arrive on them (the other
blocks' copies into a block are of slices its own consumers wait for).

Sibling rhs (`* (%wg, %wu)[n, k]`) fill the B stage side by side, each consumer warp group's
share of each sibling's columns in turn: one TMA box (or its panels) per rhs and share, from
each rhs's own tensor map (the launch passes every rhs again), all under the stage's one
expect_tx. With tile [128, 256, 64] and warps [8, 1], rows 0-127 of a stage are the gate's 128
output columns and rows 128-255 the up's, one m64n256k16 multiplies both, and a thread's
element e of its accumulator (row 8 (e / 2 % 2), column 8 (e / 4) + e % 2 past its own) has
the up's value of the same output element at e + 64.

Over the dynamic size the tiles are counted from the kernel's size argument (ceil(M / BM)
M tiles a batch point), and the tensor-map parameters come before it, which a kernel
takes last; the runtime encodes each map from its tensor's shape at launch, so a `?` dim is
its run-time size.

A [k, n] rhs (torch.matmul's weight, N contiguous) lands N-major, in panels of 64 columns:
`%b = kernel.dynamic_shared ... : memref<4x4x64x64xbf16, 3 : i32>` (stages, BN / 64 panels,
BK rows of 64), filled by BN / 64 TMA loads a stage of boxes [64, 64] (`kernel.tma_load
%b_map[64 kt, n0 + 64 p], %b[s, p, 0, 0]`), which the wgmmas read as `%b[s, n / 64, 16 j, 0]
mn_major`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from xdsl.dialects import arith, memref, scf
from xdsl.dialects import vector as vector_dialect
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    MemRefType,
    VectorType,
    f32,
)
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from emmy.dialects import kernel, tile
from emmy.dialects.access import constant_index
from emmy.dialects.target import GpuTarget
from emmy.passes.gemm_kernel import GemmEmitter, Index, KernelEmitter, kernel_body, kernel_func

WARPGROUP_WARPS = 4
PRODUCER_REGISTERS = 24
"""The registers per thread the producer warp group keeps (setmaxnreg's least): it only
issues copies, so the consumers get the rest of the register file."""
MAX_REGISTERS = 240
"""The most registers per thread setmaxnreg gives a consumer (of the 255 a thread may use,
a multiple of 8, as CUTLASS's warp-specialised kernels give theirs)."""


def consumer_registers(target: GpuTarget, consumers: int) -> int:
    """The registers per thread setmaxnreg gives each of `consumers` warp groups beside a
    producer that keeps PRODUCER_REGISTERS: a block of T threads claims the whole register
    file at launch (nvcc caps a thread at file / T under __launch_bounds__(T, 1)), and
    setmaxnreg moves it between the groups."""
    threads = WARPGROUP_WARPS * target.warp_size
    spare = target.registers_per_sm - PRODUCER_REGISTERS * threads
    return min(MAX_REGISTERS, spare // (consumers * threads) // 8 * 8)


STAGING_SLACK = 1024
"""Shared memory left unplanned beside the stages and the staged output: the dynamic shared
memory starts on the 1024 bytes that the 128-byte swizzle's pattern takes, after the
static mbarriers."""


@dataclass(frozen=True)
class StagedOutput:
    """How the consumers store their output through shared memory and TMA: each warp group
    writes `panel` columns (128 bytes) of its rows at a time into one of its `slots` staging
    panels, and one of its threads stores the panel with `kernel.tma_store`, which runs on
    while the group goes on to the next panel and tile."""

    buffer: SSAValue
    """The tile.kernel's output buffer, which the epilogue's store writes."""
    dims: tuple[OutputDim, ...]
    """How the store indexes each dimension of the output (`_output_dims`)."""
    rows: int
    panel: int
    slots: int


class OutputDim(NamedTuple):
    """How the epilogue's store indexes a dimension of the output: by iteration dimension
    `dim` (batch, m or n; None: a dimension of one, at 0), divided by `divisor` and, with a
    `modulus`, taken modulo it (n / D and n % D address the heads of a [B, H, S, D] output)."""

    dim: int | None
    divisor: int = 1
    modulus: int = 0


def _output_dims(store: memref.StoreOp, gemm: tile.GemmOp) -> tuple[OutputDim, ...] | None:
    """How the epilogue's `store` indexes each dimension of its output, where a panel of
    its 128-byte rows (a warp group's rows by 128 bytes of consecutive columns) is one TMA
    box: each batch dimension of more than one, m and n index their own dimensions, whose
    extents they span, n the last; or n / D and n % D (D a multiple of the panel's columns,
    n % D the last) a [.., N / D, .., D] pair; a batch dimension of one, or any other of
    one, may be indexed at 0. Else None."""
    body = gemm.epilogue.block
    places = {arg: dim for dim, arg in enumerate(body.args[: gemm.batch_rank + 2])}
    output_type = store.memref.type
    assert isinstance(output_type, MemRefType)
    panel = kernel.WGMMA_ROW_BYTES // kernel.element_bytes(output_type.get_element_type())
    sizes = gemm.sizes()
    n = gemm.batch_rank + 1
    dims: list[OutputDim] = []
    for index, extent in zip(store.indices, output_type.get_shape()):
        owner = index.owner
        operands = getattr(owner, "operands", ())
        divisor = constant_index(operands[1]) if len(operands) == 2 else None
        if index in places and extent == sizes[places[index]]:
            dims.append(OutputDim(places[index]))
        elif extent == 1 and constant_index(index) == 0:
            dims.append(OutputDim(None))
        elif not (divisor and divisor % panel == 0 and operands[0] is body.args[n]):
            return None
        elif isinstance(owner, arith.DivUIOp) and extent * divisor == sizes[n]:
            dims.append(OutputDim(n, divisor))
        elif isinstance(owner, arith.RemUIOp) and extent == divisor:
            dims.append(OutputDim(n, 1, divisor))
        else:
            return None
    # n whole, or as the pair (n / D, n % D) of one D.
    columns = sorted((d.divisor, d.modulus) for d in dims if d.dim == n)
    pair = len(columns) == 2 and columns[0] == (1, columns[1][0]) and columns[1][1] == 0
    if columns != [(1, 0)] and not pair:
        return None
    used = Counter(d.dim for d in dims)
    for dim in places.values():
        wanted = len(columns) if dim == n else 1
        dropped = dim < gemm.batch_rank and sizes[dim] == 1 and not used[dim]
        if used[dim] != wanted and not dropped:
            return None
    return tuple(dims) if dims[-1].dim == n and dims[-1].divisor == 1 else None


def staged_output(gemm: tile.GemmOp, target: GpuTarget) -> StagedOutput | None:
    """The `StagedOutput` of a wgmma gemm whose epilogue ends in its one store, of each
    output element at its own (batch, m, n) of a kernel argument (`_output_dims`; bf16, f16
    or f32, rows of a multiple of 16 bytes, as TMA needs), where shared memory beside the
    stages holds a panel for each consumer warp group; else None (the epilogue stores from
    registers)."""
    body = gemm.epilogue.block
    ops = [op for op in body.ops if not isinstance(op, tile.YieldOp)]
    stores = [op for op in ops if isinstance(op, memref.StoreOp)]
    if len(stores) != 1 or stores[0] is not ops[-1]:
        return None
    (store,) = stores
    output = store.memref
    output_type = output.type
    dims = _output_dims(store, gemm)
    if not isinstance(output, BlockArgument) or dims is None:
        return None
    if not isinstance(output.block.parent_op(), tile.KernelOp):
        return None
    assert isinstance(output_type, MemRefType)
    element_bytes = kernel.element_bytes(output_type.get_element_type())
    size_n = output_type.get_shape()[-1]
    if str(output_type.get_element_type()) not in ("bf16", "f16", "f32"):
        return None
    if size_n == DYNAMIC_INDEX or size_n * element_bytes % 16:
        return None
    block_m, block_n, _ = gemm.tile_shape
    warps_m, warps_n = gemm.warp_grid
    rows = block_m // (warps_m // WARPGROUP_WARPS)
    columns = block_n // warps_n // gemm.siblings
    panel = kernel.WGMMA_ROW_BYTES // element_bytes
    if columns % panel:
        return None
    consumers = warps_m // WARPGROUP_WARPS * warps_n
    barriers = 2 * gemm.pipeline_depth * kernel.MBARRIER_BYTES
    used = sum(operand_stage_bytes(gemm)) + barriers
    slots = staging_slots(columns // panel, consumers, rows, used, target)
    return StagedOutput(output, dims, rows, panel, slots) if slots else None


def operand_stage_bytes(gemm: tile.GemmOp) -> tuple[int, int]:
    """The bytes of shared memory of the stages of the lhs's tiles and of the rhs's (every
    sibling's), which the kernel lays out in that order from offset 0."""
    block_m, block_n, block_k = gemm.tile_shape
    row_bytes = block_k * kernel.element_bytes(gemm.lhs.type.get_element_type())
    return gemm.pipeline_depth * block_m * row_bytes, gemm.pipeline_depth * block_n * row_bytes


def staging_slots(panels: int, consumers: int, rows: int, used: int, target: GpuTarget) -> int:
    """The staging slots of each of `consumers` warp groups that store `panels` panels of
    `rows` rows by 128 bytes a tile: the most that divide the panels (the slots take the
    panels in turn, each panel the same slot in every tile) and fit in the block's shared
    memory beside the `used` bytes of its stages and mbarriers (and STAGING_SLACK); 0 where
    none fits."""
    spare = target.shared_bytes_per_block - used - STAGING_SLACK
    fit = spare // (consumers * rows * kernel.WGMMA_ROW_BYTES)
    return max((s for s in range(1, panels + 1) if panels % s == 0 and s <= fit), default=0)


class PanelStaging(KernelEmitter):
    """Stores a consumer warp group's output through shared memory and TMA, a panel of its
    rows by 128 bytes at a time (`stage_panels`), for the wgmma kernels."""

    signals: SSAValue
    """Whether the thread is its warp group's first, which issues the group's TMA stores."""
    staging: SSAValue
    """The staging slots, [warp groups, slots, rows, panel], swizzled as the map's boxes."""
    output_map: SSAValue | None
    warpgroup_threads: int

    def stage_panels(
        self,
        group: Index,
        panels: int,
        slots: int,
        barrier: Index,
        write: Callable[[int, int], None],
        coordinates: Callable[[int], list[SSAValue]],
    ) -> None:
        """Each of consumer warp group `group`'s `panels` stored through its slots: the
        signalling thread waits until the stores that read the slot last are done reading
        it, the group writes the panel (`write(panel, slot)`), and once all have (a fence
        for the async proxy and the group's named barrier `barrier`) the thread stores it
        with TMA at `coordinates(panel)`, out-of-bounds rows and columns clipped. Slots go
        round, so the group writes a panel while the stores of the panels before it run."""
        threads = self.warpgroup_threads
        for panel in range(panels):
            slot = panel % slots
            self.if_then(self.signals, lambda: self.wait_for_stores(slots - 1, read=True))
            self.add_op(kernel.NamedBarrierOp("sync", barrier, threads))
            write(panel, slot)
            self.add_op(kernel.FenceProxyAsyncOp())
            self.add_op(kernel.NamedBarrierOp("sync", barrier, threads))

            def store(panel: int = panel, slot: int = slot) -> None:
                assert self.output_map is not None
                at = [self.index(i) for i in (group, slot, 0, 0)]
                self.add_op(
                    kernel.TmaStoreOp(self.output_map, coordinates(panel), self.staging, at)
                )
                self.add_op(kernel.TmaStoreCommitOp())

            self.if_then(self.signals, store)

    def wait_for_stores(self, pending: int, read: bool = False) -> None:
        """Waits until at most `pending` of the thread's TMA stores run on (only reading
        shared memory, with `read`)."""
        self.add_op(kernel.TmaStoreWaitOp(pending, read=read))

    def finish_stores(self) -> None:
        """Waits, at the kernel's end, until the group's TMA stores are done reading the
        block's shared memory, which ends with the block."""
        self.if_then(self.signals, lambda: self.wait_for_stores(0))


class _WgmmaGemmBuilder(GemmEmitter, PanelStaging):
    """The kernel of a tile.gemm on the wgmma atom (see the module docstring)."""

    def __init__(
        self,
        gemm: tile.GemmOp,
        body: Block,
        values: dict[SSAValue, SSAValue],
        target: GpuTarget,
        maps: Sequence[SSAValue],
        staged: StagedOutput | None,
    ):
        super().__init__(gemm, body, values, target)
        self.staged = staged
        self.a_map, *self.b_maps = maps[: len(maps) - (staged is not None)]
        self.output_map = maps[-1] if staged is not None else None
        self.warpgroup_threads = WARPGROUP_WARPS * target.warp_size
        self.warpgroups_m = self.warps_m // WARPGROUP_WARPS
        self.consumers = self.warpgroups_m * self.warps_n
        self.group_m = self.block_m // self.warpgroups_m
        self.group_n = self.block_n // self.warps_n
        self.group_share = self.group_n // self.siblings
        """A consumer warp group's output columns: its share of each sibling's."""
        self.slices = -(-self.size_k // self.block_k)
        self.b_n_major = gemm.rhs_n_contiguous
        self.panel = kernel.WGMMA_ROW_BYTES // self.element_bytes
        self.cluster = gemm.cluster_blocks

    def build(self) -> None:
        stages = self.stages
        a_bytes, b_bytes = operand_stage_bytes(self.gemm)
        a_type = kernel.shared_memref([stages, self.block_m, self.block_k], self.element)
        if self.b_n_major:
            b_shape = [stages, self.block_n // self.panel, self.block_k, self.panel]
        else:
            b_shape = [stages, self.block_n, self.block_k]
        b_type = kernel.shared_memref(b_shape, self.element)
        swizzle = kernel.SwizzleAttr(kernel.WGMMA_ROW_BYTES)
        self.shared_a = self.named(kernel.DynamicSharedOp(0, a_type, swizzle), "a_tiles")
        self.shared_b = self.named(kernel.DynamicSharedOp(a_bytes, b_type, swizzle), "b_tiles")
        if self.staged is not None:
            staged = self.staged
            shape = [self.consumers, staged.slots, staged.rows, staged.panel]
            offset = a_bytes + b_bytes
            staging_type = kernel.shared_memref(shape, staged.buffer.type.get_element_type())
            self.staging = self.named(
                kernel.DynamicSharedOp(offset, staging_type, swizzle), "out_panels"
            )
        self.full = self.named(kernel.MbarrierAllocOp(stages), "full")
        self.empty = self.named(kernel.MbarrierAllocOp(stages), "empty")
        thread = self.named(kernel.ThreadIdOp("x"), "tid")
        self.thread_id = thread
        self.block_x = self.named(kernel.BlockIdOp("x"), "bx")
        self.rank = self.rem(self.block_x, self.cluster)
        """The block's rank in its cluster (0 without one)."""

        def initialise() -> None:
            for stage in range(stages):
                self.add_op(kernel.MbarrierInitOp(self.full, self.index(stage), 1))
                releases = self.consumers * self.cluster
                self.add_op(kernel.MbarrierInitOp(self.empty, self.index(stage), releases))

        self.if_then(self.equal(thread, 0), initialise)
        # The cluster's blocks arrive on each other's barriers once all are initialised.
        self.add_op(kernel.ClusterBarrierOp() if self.cluster > 1 else kernel.BarrierOp())
        warpgroup = self.div(thread, self.warpgroup_threads)
        producer = self.nested(lambda _: self.producer())
        consumer = self.nested(lambda _: self.consumer(warpgroup))
        self.add_op(scf.IfOp(self.equal(warpgroup, 0), [], Region(producer), Region(consumer)))
        self.place_constants()

    # -- the warp groups --

    def producer(self) -> None:
        """Warp group 0: its thread 0 copies every K slice of the block's tiles, each into
        the stage the consumers have released."""
        if self.consumers > 1:
            self.add_op(kernel.SetmaxnregOp("dec", PRODUCER_REGISTERS))

        def copy_and_drain() -> None:
            first_work, tiles, step = self.work_loop(self.copy_slices)
            if self.cluster == 1:
                return
            # The other blocks' consumers arrive on this block's barriers until their last
            # slices are done: the block waits for those releases (CUTLASS's producer tail)
            # so that it does not end before them. A cluster barrier at the end would do too,
            # but makes ptxas spill the consumers' registers. A grid of at most one block per
            # tile gives every block one tile or more.
            taken = self.div(self.add(self.sub(tiles, first_work), self.sub(step, 1)), step)
            slices = self.mul(taken, self.slices)
            for later in range(self.stages):
                count = self.add(slices, later)
                self.wait_until_released(self.rem(count, self.stages), self.div(count, self.stages))

        self.if_then(self.equal(self.thread_id, 0), copy_and_drain)

    def consumer(self, warpgroup: SSAValue) -> None:
        """Warp groups 1 on: each multiplies its part of the tile and runs its epilogue."""
        if self.consumers > 1:
            self.add_op(kernel.SetmaxnregOp("inc", consumer_registers(self.target, self.consumers)))
        group = self.add_op(arith.SubiOp(warpgroup, self.index(1))).results[0]
        self.group = group
        self.group_row = self.mul(self.div(group, self.warps_n), self.group_m)
        group_n = self.rem(group, self.warps_n)
        self.group_column = self.mul(group_n, self.group_n)
        self.group_output_column = (
            self.group_column if self.siblings == 1 else self.mul(group_n, self.group_share)
        )
        lane_thread = self.rem(self.thread_id, self.warpgroup_threads)
        self.signals = self.equal(lane_thread, 0)
        """Whether the thread releases stages for its warp group."""
        warp = self.div(lane_thread, self.target.warp_size)
        lane = self.rem(lane_thread, self.target.warp_size)
        # The D fragment's rows 16w + g (+ 8) and columns 2q (+ 1).
        self.fragment_row = self.add(self.mul(warp, 16), self.div(lane, 4))
        self.fragment_column = self.mul(self.rem(lane, 4), 2)
        self.work_loop(self.multiply_tile)
        if self.staged is not None:
            self.finish_stores()

    # -- the K slices --

    def work_loop(self, fill) -> tuple[Index, Index, Index]:
        """`fill(batch, tile_row, tile_column, first)` for each output tile the block computes,
        `first` the number of K slices it went through before; the loop's start, end and step
        over the (clusters') tiles. The block is persistent,
        taking every grid-th tile of the batch's tiles in grouped order (`tile_order`); over
        the dynamic size, as many tiles as the kernel's size argument gives. In a cluster,
        the blocks take a cluster's tiles (`cluster` M tiles of one N column) at a time,
        each the M tile of its rank."""
        tiles_m = self.ceil_div(self.size_m, self.cluster_m)
        tiles_n = -(-self.size_n // self.output_n)
        per_batch = self.mul(tiles_m, tiles_n)
        grid_x = self.named(kernel.GridDimOp("x"), "gx")
        first_work, step = self.div(self.block_x, self.cluster), self.div(grid_x, self.cluster)

        def work_body(block: Block) -> None:
            work = block.args[0]
            done = self.div(self.sub(work, first_work), step)
            indices = self.batch_point(self.div(work, per_batch))
            tile_m, tile_n = self.tile_order(self.rem(work, per_batch), tiles_m, tiles_n)
            tile_row = self.add(self.mul(tile_m, self.cluster_m), self.mul(self.rank, self.block_m))
            tile_column = self.mul(tile_n, self.output_n)
            fill(indices, tile_row, tile_column, self.mul(done, self.slices))

        body = self.nested(work_body, [IndexType()])
        tiles = self.mul(self.batch_count(), per_batch)
        loop = scf.ForOp(self.index(first_work), self.index(tiles), self.index(step), [], body)
        self.add_op(loop)
        return first_work, tiles, step

    def tile_order(self, tile: Index, tiles_m: Index, tiles_n: int) -> tuple[Index, Index]:
        """The (M, N) tile (of clusters' tiles, in a cluster) of a batch's `tile`-th:
        column-major within groups of the gemm's `raster_group` rows of tiles, so that the
        blocks running at once share rows of A and columns of B in the L2 cache."""
        group = max(1, self.gemm.raster_group // self.cluster)
        group_tiles = group * tiles_n
        first_m = self.mul(self.div(tile, group_tiles), group)
        rows_left = self.add_op(arith.SubiOp(self.index(tiles_m), self.index(first_m))).results[0]
        rows = self.add_op(arith.MinUIOp(rows_left, self.index(group))).results[0]
        within = self.rem(tile, group_tiles)
        return self.add(first_m, self.rem(within, rows)), self.div(within, rows)

    def slice_loop(self, first: Index, fill, init: Sequence[SSAValue] = ()) -> list[SSAValue]:
        """`fill(slice, stage, phase, carried)` for every K slice, with the stage it is in
        and how many times the ring of stages went round before it."""

        def k_loop(block: Block) -> list[SSAValue]:
            k_slice, *carried = block.args
            count = self.add(first, k_slice)
            stage = self.rem(count, self.stages)
            rounds = self.div(count, self.stages)
            return fill(k_slice, stage, rounds, list(carried))

        body = self.nested(k_loop, [IndexType()] + [value.type for value in init])
        loop = self.add_op(
            scf.ForOp(self.index(0), self.index(self.slices), self.index(1), list(init), body)
        )
        return list(loop.results)

    def copy_slices(
        self, batch: Sequence[Index], tile_row: Index, tile_column: Index, first: Index
    ) -> None:
        box_bytes = (self.block_m + self.block_n) * self.block_k * self.element_bytes

        def copy(k_slice: SSAValue, stage: Index, rounds: Index, _) -> list[SSAValue]:
            stage_value = self.index(stage)
            self.wait_until_released(stage, rounds)
            self.add_op(kernel.MbarrierArriveExpectTxOp(self.full, stage_value, box_bytes))
            k_start = self.mul(k_slice, self.block_k)
            starts = {self.m_dim: tile_row, self.n_dim: tile_column, self.k_dim: k_start}
            self.copy_box(self.a_map, self.gemm.lhs_dims, self.shared_a, batch, starts, stage)
            # Each block of a cluster copies its share of every piece into all of theirs.
            everyone = self.index((1 << self.cluster) - 1) if self.cluster > 1 else None
            for b_map, start, offset, extent in self.b_pieces():
                share = extent // self.cluster
                # A K-major share is rows of the stage's tile; an N-major one, panels.
                step = self.panel if self.b_n_major else share
                for within in range(0, share, step):
                    column = self.add(self.mul(self.rank, share), within)
                    starts[self.n_dim] = self.add(tile_column, self.add(column, offset))
                    first = self.add(column, start)
                    first = self.div(first, step) if self.b_n_major else first
                    self.copy_box(
                        b_map,
                        self.gemm.rhs_dims,
                        self.shared_b,
                        batch,
                        starts,
                        stage,
                        first,
                        everyone,
                    )
            return []

        self.slice_loop(first, copy)

    def wait_until_released(self, stage: Index, rounds: Index) -> None:
        """Waits until the consumers have released `stage` after the round before `rounds`:
        they release a stage once per round, the previous round's release having the parity
        of rounds + 1; the first round's stages are free."""
        previous = self.index(self.rem(self.add(rounds, 1), 2))

        def wait() -> None:
            self.add_op(kernel.MbarrierWaitOp(self.empty, self.index(stage), previous))

        self.if_then(self.less(0, rounds), wait)

    def b_pieces(self) -> list[tuple[SSAValue, int, int, int]]:
        """What fills the B tile: each rhs's tensor map, the first position along N of the
        stage's tile it fills, the output column past the tile's first it reads from, and
        how many: the whole tile for one rhs, else each warp group's share of each sibling
        (`tile.GemmOp`)."""
        if self.siblings == 1:
            return [(self.b_maps[0], 0, 0, self.block_n)]
        share = self.group_share
        return [
            (b_map, group * self.group_n + sibling * share, group * share, share)
            for group in range(self.warps_n)
            for sibling, b_map in enumerate(self.b_maps)
        ]

    def copy_box(
        self,
        tensor_map: SSAValue,
        dims: Sequence[int],
        shared: SSAValue,
        batch: Sequence[Index],
        starts: dict[int, Index],
        stage: Index,
        first: Index = 0,
        multicast: SSAValue | None = None,
    ) -> None:
        """One TMA box of an operand, from `starts` into the stage's tile from index `first`
        of its first dimension (a row, or a panel of an N-major tile), and into the same
        place of the blocks of the cluster in `multicast`'s mask."""
        coordinates = [self.index(batch[d] if d < self.batch_rank else starts[d]) for d in dims]
        stage_value = self.index(stage)
        within = [self.index(0)] * (shared.type.get_num_dims() - 1)
        within[0] = self.index(first)
        self.add_op(
            kernel.TmaLoadOp(
                tensor_map,
                coordinates,
                shared,
                [stage_value, *within],
                self.full,
                stage_value,
                multicast=multicast,
            )
        )

    def release(self, count: Index) -> None:
        """Lets the producers of the cluster's blocks (the block's own without one) refill
        the stage of the block's `count`-th K slice: thread 0 of each consumer warp group
        arrives on the stage's empty barrier in every block of the cluster, once the group's
        wait has seen its wgmmas that read the stage done. (One thread, and constant ranks:
        the 128 accumulator registers leave a thread few others.)"""
        stage = self.index(self.rem(count, self.stages))

        def arrive() -> None:
            for rank in range(self.cluster):
                at = self.index(rank) if self.cluster > 1 else None
                self.add_op(kernel.MbarrierArriveOp(self.empty, stage, rank=at))

        self.if_then(self.signals, arrive)

    def multiply_tile(
        self, batch: Sequence[Index], tile_row: Index, tile_column: Index, first: Index
    ) -> None:
        atoms_m = self.group_m // self.atom_m
        atoms_n = self.group_n // self.atom_n
        accumulator_type = VectorType(f32, [self.atom_n // 2])
        zero = self.add_op(arith.ConstantOp(FloatAttr(0.0, f32))).results[0]
        zeros = self.add_op(vector_dialect.BroadcastOp(zero, accumulator_type)).vector

        # A ring of one stage holds the only slice the next one waits for: it is released
        # once its products are done.
        in_flight = self.stages > 1

        def multiply(k_slice, stage: Index, rounds: Index, accumulators) -> list[SSAValue]:
            stage_value = self.index(stage)
            parity = self.index(self.rem(rounds, 2))
            self.add_op(kernel.MbarrierWaitOp(self.full, stage_value, parity))
            self.add_op(kernel.WgmmaFenceOp())
            for k0 in range(0, self.block_k, self.atom_k):
                for i in range(atoms_m):
                    for j in range(atoms_n):
                        position = i * atoms_n + j
                        a_row = self.add(self.group_row, i * self.atom_m)
                        b_column = self.add(self.group_column, j * self.atom_n)
                        if self.b_n_major:
                            b_panel = self.index(self.div(b_column, self.panel))
                            b_at = [stage_value, b_panel, self.index(k0), self.index(0)]
                        else:
                            b_at = [stage_value, self.index(b_column), self.index(k0)]
                        accumulators[position] = self.add_op(
                            kernel.WgmmaOp(
                                self.atom_n,
                                self.shared_a,
                                [stage_value, self.index(a_row), self.index(k0)],
                                self.shared_b,
                                b_at,
                                accumulators[position],
                                b_mn_major=self.b_n_major,
                            )
                        ).result
            self.add_op(kernel.WgmmaCommitOp())
            if not in_flight:
                waited = self.add_op(kernel.WgmmaWaitOp(0, accumulators)).results
                self.release(self.add(first, k_slice))
                return list(waited)
            # This slice's products stay in flight while the next slice's are issued: the
            # wait leaves one group behind, so the slice before this one is the one done,
            # and its stage the one released.
            self.add_op(kernel.WgmmaWaitOp(1, []))
            self.if_then(
                self.less(0, k_slice),
                lambda: self.release(self.sub(self.add(first, k_slice), 1)),
            )
            return accumulators

        accumulators = self.slice_loop(first, multiply, [zeros] * (atoms_m * atoms_n))
        if in_flight:
            accumulators = list(self.add_op(kernel.WgmmaWaitOp(0, accumulators)).results)
            self.release(self.add(first, self.slices - 1))
        fill = self.stage_output if self.staged is not None else self.store_output
        fill(batch, tile_row, tile_column, accumulators)

    def pair_values(
        self, accumulators: Sequence[SSAValue], atom_row: int, octet: int, half: int
    ) -> list[tuple[SSAValue, ...]]:
        """The accumulator elements of columns 8 `octet` + 2q and + 1 of the group's output
        columns, row 8 `half` + g of its `atom_row`-th atom, each one per sibling. The D
        fragment gives a thread columns 2q, 2q + 1 of each 8 of an atom, rows g and g + 8:
        element 4c + 2h + e at row 8h, column 8c + e. The siblings' columns of an output
        column are the group's share apart in its N."""
        atoms_n = self.group_n // self.atom_n
        places = [
            divmod(8 * octet + sibling * self.group_share, self.atom_n)
            for sibling in range(self.siblings)
        ]
        return [
            tuple(
                self.add_op(
                    vector_dialect.ExtractOp(
                        accumulators[atom_row * atoms_n + j],
                        [within // 8 * 4 + 2 * half + e],
                        f32,
                    )
                ).result
                for j, within in places
            )
            for e in range(2)
        ]

    def output_place(self, tile_row: Index, tile_column: Index) -> tuple[Index, Index]:
        """The output row and column of the thread's first accumulator element."""
        row = self.add(self.add(tile_row, self.group_row), self.fragment_row)
        column = self.add(self.add(tile_column, self.group_output_column), self.fragment_column)
        return row, column

    def store_output(
        self,
        batch: Sequence[Index],
        tile_row: Index,
        tile_column: Index,
        accumulators: Sequence[SSAValue],
    ) -> None:
        """The epilogue of each accumulator element, its results stored from registers."""
        row_base, column_base = self.output_place(tile_row, tile_column)
        for i in range(self.group_m // self.atom_m):
            for octet in range(self.group_share // 8):
                for half in range(2):
                    row = self.add(row_base, i * self.atom_m + 8 * half)
                    column = self.add(column_base, 8 * octet)
                    values = self.pair_values(accumulators, i, octet, half)
                    self.epilogue_pair(batch, row, column, values)

    def output_coordinate(
        self, output: OutputDim, batch: Sequence[Index], starts: dict[int, Index]
    ) -> SSAValue:
        """The TMA coordinate along an output dimension of a panel whose first element is at
        batch point `batch`, row and column `starts`."""
        if output.dim is None:
            return self.index(0)
        if output.dim < self.batch_rank:
            return self.index(batch[output.dim])
        position = self.div(starts[output.dim], output.divisor)
        return self.index(self.rem(position, output.modulus) if output.modulus else position)

    def stage_output(
        self,
        batch: Sequence[Index],
        tile_row: Index,
        tile_column: Index,
        accumulators: Sequence[SSAValue],
    ) -> None:
        """The epilogue of each accumulator element, its results stored a panel at a time
        through the group's staging slots (`StagedOutput`, `stage_panels`)."""
        staged = self.staged
        assert staged is not None
        row_base, column_base = self.output_place(tile_row, tile_column)
        first_row = self.add(tile_row, self.group_row)
        first_column = self.add(tile_column, self.group_output_column)
        octets = staged.panel // 8

        def write(panel: int, slot: int) -> None:
            for i in range(self.group_m // self.atom_m):
                for octet in range(panel * octets, (panel + 1) * octets):
                    for half in range(2):
                        within = i * self.atom_m + 8 * half
                        row = self.add(row_base, within)
                        column = self.add(column_base, 8 * octet)
                        at = [
                            self.group,
                            slot,
                            self.add(self.fragment_row, within),
                            self.add(self.fragment_column, 8 * octet - panel * staged.panel),
                        ]
                        values = self.pair_values(accumulators, i, octet, half)
                        self.epilogue_pair(batch, row, column, values, (self.staging, at))

        def coordinates(panel: int) -> list[SSAValue]:
            starts = {
                self.m_dim: first_row,
                self.n_dim: self.add(first_column, panel * staged.panel),
            }
            return [self.output_coordinate(output, batch, starts) for output in staged.dims]

        barrier = self.index(self.add(self.group, 1))
        self.stage_panels(
            self.group, self.group_share // staged.panel, staged.slots, barrier, write, coordinates
        )


def tensor_map_types(
    gemm: tile.GemmOp, staged: StagedOutput | None = None
) -> list[kernel.TensorMapType]:
    """The tensor maps through which TMA copies the operands' tiles: boxes of one tile row
    (BM, or of each rhs its warp groups' share of BN) by one K slice, or for a [k, n] rhs of
    one K slice by one panel of 64 columns, 1 along batch dimensions, swizzled as the wgmma
    reads them; the lhs's, then each rhs's; then, for a `staged` output, the output's,
    whose boxes are a warp group's rows by one panel of its staging."""
    batch_rank = gemm.batch_rank
    block_m, block_n, block_k = gemm.tile_shape
    extents = {batch_rank: block_m, batch_rank + 1: block_n, batch_rank + 2: block_k}
    # A cluster's blocks each copy 1/cluster of the rows of a K-major rhs piece.
    rhs_extents = dict(extents)
    rhs_extents[batch_rank + 1] = gemm.rhs_piece_n // gemm.cluster_blocks
    if gemm.rhs_n_contiguous:
        element_bytes = kernel.element_bytes(gemm.rhs[0].type.get_element_type())
        rhs_extents[batch_rank + 1] = kernel.WGMMA_ROW_BYTES // element_bytes
    operands = [
        (gemm.lhs, gemm.lhs_dims, extents),
        *((rhs, gemm.rhs_dims, rhs_extents) for rhs in gemm.rhs),
    ]
    boxes = [
        kernel.TensorMapType(operand.type, [box.get(d, 1) for d in dims], kernel.WGMMA_ROW_BYTES)
        for operand, dims, box in operands
    ]
    if staged is not None:
        # A warp group's rows along m, a panel along the last dimension (n or n % D).
        *outer, _ = staged.dims
        box = [staged.rows if d.dim == batch_rank else 1 for d in outer] + [staged.panel]
        boxes.append(kernel.TensorMapType(staged.buffer.type, box, kernel.WGMMA_ROW_BYTES))
    return boxes


def lower_wgmma_gemm_kernel(
    source: tile.KernelOp, target: GpuTarget
) -> tuple[kernel.FuncOp, list[int]]:
    """The kernel.func of a wgmma contraction's tile.kernel, and the positions of the
    kernel's arguments that its launch passes again, for the tensor-map parameters added to
    the kernel's own (the lhs's, then each rhs's, then a staged output's; before the
    dynamic size, which a kernel takes last)."""
    gemm = source.gemm
    assert gemm is not None
    staged = staged_output(gemm, target)
    operands = list(source.body.block.args)
    mapped = [gemm.lhs, *gemm.rhs, *([staged.buffer] if staged is not None else [])]
    positions = [operands.index(value) for value in mapped]
    body, values = kernel_body(source, tensor_map_types(gemm, staged))
    maps = tuple(a for a in body.args if isinstance(a.type, kernel.TensorMapType))
    names = ["b_map"] if gemm.siblings == 1 else [f"b{s}_map" for s in range(gemm.siblings)]
    for tensor_map, name in zip(maps, ["a_map", *names, "out_map"]):
        tensor_map.name_hint = name
    _WgmmaGemmBuilder(gemm, body, values, target, maps, staged).build()
    return kernel_func(source, body, gemm.cluster_blocks), positions
