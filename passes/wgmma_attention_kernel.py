"""The Kernel IR of a `tile.attention` on warp-group tensor cores (wgmma), fed by TMA,
FlashAttention-3's main loop, for `lower-tile-to-kernel`.

    tile.attention %q, %k, %v scale 8.838835e-02 causal into %o : memref<1x16x1024x128xbf16>,
        .. atom wgmma m64n128k16 tile [128, 128, 128] warps [8, 1] pipeline 2

becomes a warp-specialised `kernel.func` of 3 warp groups whose persistent blocks, at most one
an SM, take the items that a constant table, `@attention_items`, deals them (`item_table`:
item i is row block i % R of query head i / R, R row blocks of 128 rows a head; causal, the
longest first, each to the block that would be free first, in sections of heads whose keys
and values fit the L2 cache). One item's queries and first keys load while the consumers
finish the one before. The kernel takes three or four tensor maps and the table besides
the kernel's own arguments
(`!kernel.tensor_map<memref<1x16x1024x128xbf16>, box [1, 1, 128, 64], swizzle 128>` for
the queries, box [1, 1, 128, 64] of the keys and of the values, box [1, 1, 64, 64] of the
output where it is staged: the launch passes the operands again for them). The maps keep
the operands' rank, so a box past the end of a head's rows reads zeros, never the next
head's. An item is rows of one query head, and reads the
key/value head it shares with the G - 1 others (GQA) as theirs do: the items of a key/value
head's G query heads are neighbours, run at about the same time and read it from the L2
cache, and the query rows of a head fill the 128-row blocks this kernel is chosen for
(packing the G heads' rows into a block, as the mma_sync kernel does for decoding, would need
a tensor map over the query viewed as [.., Hkv, G L, D]).

    %q_tile = kernel.dynamic_shared offset 0 : memref<2x128x64xbf16, 3 : i32>      (swizzled)
    %k_tiles = kernel.dynamic_shared offset 32768 : memref<2x2x128x64xbf16, 3 : i32>
    %v_tiles = kernel.dynamic_shared offset 98304 : memref<2x2x128x64xbf16, 3 : i32>
    %out_panels = kernel.dynamic_shared offset 163840 : memref<2x2x64x64xbf16, 3 : i32>
    mbarriers: %q_full (the queries landed), %q_empty (the consumers are done with them),
               %k_full[s], %v_full[s] (the key, the value block in stage s landed: the scores
               need not wait for the values), %empty[s] (stage s is free)
    warp group 0, the producer (setmaxnreg dec), its thread 0 only, per item:
      wait %q_empty (after the first item); expect_tx %q_full; TMA the D / 64 query panels
      for each key block j: s = n % 2 (n counting the blocks of every item the block took)
        wait %empty[s] (after the first round); expect_tx %k_full[s]; TMA K's panels;
        expect_tx %v_full[s]; TMA V's panels
    warp groups 1 and 2, the consumers (setmaxnreg inc), 64 query rows each:
      wait %q_full; the first key block's S = Q K^T, waited for, and its softmax give P_0:
        S: wgmma m64n128k16 %q_tile[p, 64 c, 16 k], %k_tiles[s, p, 0, 16 k] (K-major)
        the online softmax of `AttentionEmitter` on S's elements (scaled by scale log2(e),
          masked; max and sum over the quad), P rounded into register A fragments
      for each next key block j: wait %k_full[s], %v_full[s'] (block j - 1's)
        issue S_j = Q K_j^T, then O += P_{j-1} V_{j-1}: wgmma m64nDk16 %p, %v_tiles[s', 0,
          16 i, 0] mn_major (P from registers): both in flight
        wgmma_wait 1 (S_j is in; P V still runs), the softmax of S_j gives P_j
        wgmma_wait 0 (P V is in), arrive %empty[s'], O rescaled by exp2(m_{j-1} - m_j)
      O += P V of the last block; arrive %empty, %q_empty; each lane's rows divided by
      their sums, in the output's type, written into the group's %out_panels a panel of
      64 rows by 128 bytes at a time; its thread 0 stores each with TMA (`output_slots`)

The softmax of one block thus overlaps the tensor cores' P V of the one before
(FlashAttention-3's intra-warpgroup pipelining). A mask summarised before the kernel
(`attention_mask_summary`: a boolean mask of keys a multiple of 16) and a boolean mask at
head dim 64 keep it; with any other mask operand, whose elements the overlap leaves no
registers for (ptxas spills a few), each block's S, softmax and P V run in turn (`overlaps`).
On the overlapped path the two consumer warp groups also take turns at issuing their
products (FlashAttention-3's ping-pong): each waits at the named barrier of its turn, issues,
and arrives at the other's, so that one's softmax runs while the other's products do.

The output goes out as the wgmma gemm's does (`PanelStaging`): through staging slots in
shared memory beside the stages, each warp group's panels stored by TMA while it goes on
to its next item, instead of 4-byte stores from registers of 8 rows a warp instruction.
Where no slot fits (3 stages at head dim 128), the lanes store from registers.

The accumulator of S (m64nN, f32: element i of a thread at row 16w + g + 8 ((i / 2) % 2),
column 8 (i / 4) + 2q + i % 2) is, in each warp's 16 rows, N / 8 fragments of mma.sync's
m16n8 accumulator side by side, so the softmax, the masks and the stores are the mma_sync
kernel's (`AttentionEmitter`) on its elements 4 a to 4 a + 3, and elements 8 j to 8 j + 7,
rounded to 16 bits, are the register A fragment of P V's k-step j
(`AttentionEmitter.probability_fragment`). V's [keys, D] block is the MN-major B of that
product: panels of 64 columns by the keys, which TMA lands as they are (the K and V tiles
have one layout). Causal, the blocks wholly above the diagonal of the block's rows are
skipped and only the blocks from the first that crosses it are masked; the keys past the
end (which TMA reads as zeros) are masked to -inf, only in the block that holds them (a
uniform branch, `tail_mask_branch`: 2048 keys are 11 blocks of 176 and a tail, and the
other 11 take no compares or selects). With a mask summary, an item takes
only the key blocks its row block's list names (the producer and the consumers read the same
list, so the ring's count runs on alike; an item listing none stores zeros), and a lane reads
the mask at a block's scores as one word of bits for each of its two rows. Any other mask
operand is read from global memory at each score, as on mma_sync. Either is loaded once a
block's Q K^T is issued, so that the loads' latency passes while the tensor cores multiply.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from itertools import accumulate
from math import prod

from xdsl.dialects import arith, memref, scf
from xdsl.dialects import vector as vector_dialect
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType, VectorType, f32, i1, i32
from xdsl.ir import Block, BlockArgument, Region, SSAValue

from emmy.dialects import kernel, tile
from emmy.dialects.attention import kv_group
from emmy.dialects.target import GpuTarget
from emmy.passes.attention_kernel import AttentionEmitter, mask_point
from emmy.passes.attention_mask_summary import mask_summary_types
from emmy.passes.gemm_kernel import Index, kernel_body, kernel_func
from emmy.passes.wgmma_gemm_kernel import (
    PRODUCER_REGISTERS,
    WARPGROUP_WARPS,
    PanelStaging,
    consumer_registers,
    staging_slots,
)

PING_PONG_CONSUMERS = 2
"""The consumer warp groups that take turns at issuing their products (ping-pong)."""

PING_PONG_MIN_DEPTH = 128
"""The smallest head dim at which the consumers take turns without a mask summary. Measured
on an H100 (`benchmarks/h100/2026-12-06-ab/`): at 128 the ping-pong made causal B4 H32 S4096
7% faster; at 64 it made causal B8 H32 S2048 12% slower, but a summarised boolean mask (GQA
32/8 S2048) 8% faster, so with a summary the consumers take turns at every head dim. Why
the two differ at 64 is not known: the causal items are half as long on average (8.5 key
blocks against 16), and the turns cost once an item."""

PING_PONG_BARRIER = 1
"""The named barrier of the first consumer warp group's turn; the second's is the next."""

STAGING_BARRIER = PING_PONG_BARRIER + PING_PONG_CONSUMERS
"""The named barrier of the first consumer warp group's staged output; the second's is the
next."""

OVERLAPPED_MASK_DEPTH = 64
"""The largest head dim at which a boolean mask keeps the softmax/P V overlap (`overlaps`)."""


class _WgmmaAttentionBuilder(AttentionEmitter, PanelStaging):
    """The kernel of a tile.attention on the wgmma atom (see the module docstring)."""

    row_max = arith.MaxnumfOp
    tail_mask_branch = True

    def __init__(
        self,
        attention: tile.AttentionOp,
        body: Block,
        values: dict[SSAValue, SSAValue],
        target: GpuTarget,
        maps: Sequence[SSAValue],
        summary: Sequence[SSAValue],
        items: SSAValue,
        grid: int,
        slots: int,
    ):
        super().__init__(attention, body, values, target, packed=False)
        self.q_map, self.k_map, self.v_map = maps[:3]
        self.output_map = maps[3] if slots else None
        self.slots = slots
        """The staging slots of each consumer warp group's output (`output_slots`; 0: its
        rows are stored from registers)."""
        self.summary = summary
        """The mask summary's bits and key block lists (`attention_mask_summary`), if any."""
        self.items = items
        """The item table (`item_table`) of the `grid` blocks."""
        self.grid = grid
        self.turns: tuple[SSAValue, SSAValue] | None = None
        """The named barriers of a consumer warp group's turn and of the other's (ping-pong),
        if they take turns."""
        self.warpgroup_threads = WARPGROUP_WARPS * target.warp_size
        self.consumers = self.block_q // kernel.WGMMA_M
        self.row_blocks = -(-self.rows // self.block_q)
        """The blocks of rows of a query head, an item each."""
        self.panel = kernel.WGMMA_ROW_BYTES // self.element_bytes
        self.panels = self.depth // self.panel
        self.batch_rank = len(self.batch_sizes)
        self.key_blocks: Index = 0
        """How many key blocks the block takes for its item (`key_ranges`)."""
        self.blocks_before: Index = 0
        """How many key blocks the block took for its items before this one."""

    def build(self) -> None:
        stages = self.stages
        q_bytes, kv_bytes = operand_tile_bytes(self.attention)
        swizzle = kernel.SwizzleAttr(kernel.WGMMA_ROW_BYTES)
        q_type = kernel.shared_memref([self.panels, self.block_q, self.panel], self.element)
        kv_shape = [stages, self.panels, self.block_kv, self.panel]
        kv_type = kernel.shared_memref(kv_shape, self.element)
        self.q_tile = self.named(kernel.DynamicSharedOp(0, q_type, swizzle), "q_tile")
        self.k_tiles = self.named(kernel.DynamicSharedOp(q_bytes, kv_type, swizzle), "k_tiles")
        self.v_tiles = self.named(
            kernel.DynamicSharedOp(q_bytes + kv_bytes, kv_type, swizzle), "v_tiles"
        )
        if self.slots:
            out_element = self.attention.out.type.get_element_type()
            self.out_panel = kernel.WGMMA_ROW_BYTES // kernel.element_bytes(out_element)
            """The output's columns a staging panel holds."""
            shape = [self.consumers, self.slots, kernel.WGMMA_M, self.out_panel]
            self.staging = self.named(
                kernel.DynamicSharedOp(
                    q_bytes + 2 * kv_bytes, kernel.shared_memref(shape, out_element), swizzle
                ),
                "out_panels",
            )
        self.q_full = self.named(kernel.MbarrierAllocOp(1), "q_full")
        self.q_empty = self.named(kernel.MbarrierAllocOp(1), "q_empty")
        self.keys_full = self.named(kernel.MbarrierAllocOp(stages), "k_full")
        self.values_full = self.named(kernel.MbarrierAllocOp(stages), "v_full")
        self.empty = self.named(kernel.MbarrierAllocOp(stages), "empty")
        self.thread_id = self.named(kernel.ThreadIdOp("x"), "tid")
        consumer_threads = self.consumers * self.warpgroup_threads

        def initialise() -> None:
            self.add_op(kernel.MbarrierInitOp(self.q_full, self.index(0), 1))
            self.add_op(kernel.MbarrierInitOp(self.q_empty, self.index(0), consumer_threads))
            for stage in range(stages):
                self.add_op(kernel.MbarrierInitOp(self.keys_full, self.index(stage), 1))
                self.add_op(kernel.MbarrierInitOp(self.values_full, self.index(stage), 1))
                self.add_op(kernel.MbarrierInitOp(self.empty, self.index(stage), consumer_threads))

        self.if_then(self.equal(self.thread_id, 0), initialise)
        self.add_op(kernel.BarrierOp())
        warpgroup = self.div(self.thread_id, self.warpgroup_threads)
        producer = self.nested(lambda _: self.producer())
        consumer = self.nested(lambda _: self.consumer(warpgroup))
        self.add_op(scf.IfOp(self.equal(warpgroup, 0), [], Region(producer), Region(consumer)))
        self.place_constants()

    # -- the items (a head's block of rows) and key blocks a block takes --

    def item_loop(self, fill) -> None:
        """`fill(batch, kv_batch, taken)` for each item the block takes (`first_row`,
        `first_key_block`, `key_blocks` and `masked_from` set for it), in the order of its
        entries of the item table (`item_table`): its batch indices, its key/value head's and
        how many items the block took before it."""
        block_x = self.add_op(kernel.BlockIdOp("x")).results[0]
        first, after = (self.table_entry(self.add(block_x, i)) for i in (0, 1))

        def item_body(block: Block) -> list[SSAValue]:
            entry, self.blocks_before = block.args
            taken = self.add_op(arith.SubiOp(entry, first)).results[0]
            linear = self.table_entry(self.add(entry, self.grid + 1))
            head, row_block = self.div(linear, self.row_blocks), self.rem(linear, self.row_blocks)
            self.first_row = self.mul(row_block, self.block_q)
            batch = self.point_of(head, self.batch_sizes)
            start, end, self.masked_from = self.key_ranges()
            self.first_key_block = start
            if self.summary:
                self.taken_at = self.mask_rows_point(batch, row_block)
                self.key_blocks = self.summary_entry(0)
            else:
                self.key_blocks = self.add_op(
                    arith.SubiOp(self.index(end), self.index(start))
                ).result
            kv_batch = list(batch)
            if self.group > 1:
                kv_batch[-1] = self.div(kv_batch[-1], self.group)
            fill(batch, kv_batch, taken)
            return [self.add(self.blocks_before, self.key_blocks)]

        body = self.nested(item_body, [IndexType(), IndexType()])
        self.add_op(scf.ForOp(first, after, self.index(1), [self.index(0)], body))

    def table_entry(self, position: Index) -> SSAValue:
        """Entry `position` of the item table, as an index."""
        entry = self.add_op(memref.LoadOp.get(self.items, [self.index(position)])).res
        return self.add_op(arith.IndexCastOp(entry, IndexType())).result

    def key_block_counts(self) -> list[int]:
        """How many key blocks each row block of a head takes (`key_ranges`; all the keys'
        where a mask summary lists them)."""
        counts = []
        for row_block in range(self.row_blocks):
            self.first_row = row_block * self.block_q
            start, end, _ = self.key_ranges()
            counts.append(end - start)
        return counts

    def mask_rows_point(self, batch: Sequence[Index], row: Index) -> list[Index]:
        """The mask's batch indices and row at the query's `batch` and `row` (a row block's,
        for the summary's lists), as the mask broadcasts."""
        return mask_point(self.attention.mask.type.get_shape()[:-1], [*batch, row])

    def summary_entry(self, position: Index) -> SSAValue:
        """Entry `position` of the item's row block's list of key blocks (the count, then
        the blocks) in the mask summary, as an index."""
        taken = self.summary[1]
        at = [self.index(i) for i in (*self.taken_at, position)]
        entry = self.add_op(memref.LoadOp.get(taken, at)).res
        return self.add_op(arith.IndexCastOp(entry, IndexType())).result

    def key_stage(self, step: Index) -> tuple[Index, Index]:
        """The stage that key block `step` of those the block takes for its item is in, and
        how many times the ring of stages went round before it (the blocks of every item
        counted on as one sequence, so that the barriers' phases run on)."""
        count = self.add(self.blocks_before, step)
        return self.rem(count, self.stages), self.div(count, self.stages)

    def key_position(self, step: Index) -> tuple[Index, Index, Index]:
        """Key block `step` of those the block takes for its item: its index (the next
        listed in the mask summary, if any) and `key_stage`'s."""
        if self.summary:
            # The summary lists only key blocks: the clamp proves the bits' index in range
            # to the printer, which then checks none (a trap's branch costs the registers
            # that keep the wgmmas in flight).
            last = self.key_block_count - 1
            index = self.minimum(self.summary_entry(self.add(step, 1)), last)
        else:
            index = self.add(self.first_key_block, step)
        return index, *self.key_stage(step)

    def key_loop(self, fill, init: Sequence[SSAValue] = (), first_step: int = 0) -> list[SSAValue]:
        """`fill(index, stage, rounds, carried)` for each key block the block takes for its
        item from its `first_step`-th on (`key_position`)."""

        def body_of(block: Block) -> list[SSAValue]:
            step, *carried = block.args
            return fill(*self.key_position(step), carried)

        body = self.nested(body_of, [IndexType()] + [value.type for value in init])
        loop = self.add_op(
            scf.ForOp(self.index(first_step), self.key_blocks, self.index(1), list(init), body)
        )
        return list(loop.results)

    # -- the producer --

    def producer(self) -> None:
        """Warp group 0: its thread 0 copies each head's query tile and key and value blocks,
        each block into the stage the consumers have released."""
        if self.consumers > 1:
            self.add_op(kernel.SetmaxnregOp("dec", PRODUCER_REGISTERS))
        self.if_then(self.equal(self.thread_id, 0), lambda: self.item_loop(self.copy_item))

    def copy_item(self, batch: Sequence[Index], kv_batch: Sequence[Index], taken: Index) -> None:
        def wait_until_released() -> None:
            previous = self.index(self.rem(self.add(taken, 1), 2))
            self.add_op(kernel.MbarrierWaitOp(self.q_empty, self.index(0), previous))

        self.if_then(self.less(0, taken), wait_until_released)
        q_bytes = self.block_q * self.depth * self.element_bytes
        self.add_op(kernel.MbarrierArriveExpectTxOp(self.q_full, self.index(0), q_bytes))
        for panel in range(self.panels):
            self.tma_load(self.q_map, batch, self.first_row, panel, self.q_tile, [], self.q_full, 0)

        def copy(index: Index, stage: Index, rounds: Index, _) -> list[SSAValue]:
            # The consumers release a stage once per round, the previous round's release
            # having the parity of rounds + 1; the first round's stages are free.
            previous = self.index(self.rem(self.add(rounds, 1), 2))

            def wait_until_released() -> None:
                self.add_op(kernel.MbarrierWaitOp(self.empty, self.index(stage), previous))

            self.if_then(self.less(0, rounds), wait_until_released)
            block_bytes = self.block_kv * self.depth * self.element_bytes
            first_key = self.mul(index, self.block_kv)
            for tensor_map, tiles, full in (
                (self.k_map, self.k_tiles, self.keys_full),
                (self.v_map, self.v_tiles, self.values_full),
            ):
                self.add_op(kernel.MbarrierArriveExpectTxOp(full, self.index(stage), block_bytes))
                for panel in range(self.panels):
                    self.tma_load(
                        tensor_map, kv_batch, first_key, panel, tiles, [stage], full, stage
                    )
            return []

        self.key_loop(copy)

    def tma_load(
        self,
        tensor_map: SSAValue,
        batch: Sequence[Index],
        first_row: Index,
        panel: int,
        tiles: SSAValue,
        stage: list[Index],
        barriers: SSAValue,
        barrier: Index,
    ) -> None:
        """The box of rows `first_row` on of the head at `batch`, columns of panel `panel`,
        into that panel of `tiles` (at `stage`)."""
        coordinates = [self.index(i) for i in (*batch, first_row, panel * self.panel)]
        destination = [self.index(i) for i in (*stage, panel, 0, 0)]
        self.add_op(
            kernel.TmaLoadOp(
                tensor_map, coordinates, tiles, destination, barriers, self.index(barrier)
            )
        )

    # -- the consumers --

    def consumer(self, warpgroup: SSAValue) -> None:
        """Warp groups 1 on: each computes 64 of the block's query rows of each head."""
        if self.consumers > 1:
            self.add_op(kernel.SetmaxnregOp("inc", consumer_registers(self.target, self.consumers)))
        group = self.add_op(arith.SubiOp(warpgroup, self.index(1))).results[0]
        self.consumer_group = group
        self.group_first_row = self.mul(group, kernel.WGMMA_M)
        lane_thread = self.rem(self.thread_id, self.warpgroup_threads)
        self.signals = self.equal(lane_thread, 0)
        lane = self.rem(lane_thread, self.target.warp_size)
        # The accumulators' rows 16w + g (+ 8) and columns 2q (+ 1) of each 8.
        self.group_warp_row = self.mul(self.div(lane_thread, self.target.warp_size), 16)
        self.warp_row = self.add(self.group_first_row, self.group_warp_row)
        self.group_row = self.div(lane, 4)
        self.quad_lane = self.rem(lane, 4)
        self.pair_column = self.mul(self.quad_lane, 2)
        if (
            self.consumers == PING_PONG_CONSUMERS
            and (self.depth >= PING_PONG_MIN_DEPTH or self.summary)
            and self.overlaps()
        ):
            self.turns = (
                self.add(group, PING_PONG_BARRIER),
                self.add_op(arith.SubiOp(self.index(PING_PONG_BARRIER + 1), group)).results[0],
            )
            # The second warp group lets the first take the first turn, and at the end the
            # first takes the second's last, so that no barrier is left waiting.
            self.if_then(self.equal(group, 1), self.pass_turn)
        self.item_loop(self.attend_item)
        if self.turns is not None:
            self.if_then(self.equal(group, 0), self.take_turn)
        if self.slots:
            self.finish_stores()

    def take_turn(self) -> None:
        """Waits until the other consumer warp group has issued its products (ping-pong)."""
        self.turn_barrier("sync", 0)

    def pass_turn(self) -> None:
        """Lets the other consumer warp group issue its products (ping-pong)."""
        self.turn_barrier("arrive", 1)

    def turn_barrier(self, action: str, whose: int) -> None:
        """`action` at the named barrier of this warp group's turn (`whose` 0) or of the
        other's (1), where the consumers take turns."""
        if self.turns is not None:
            threads = PING_PONG_CONSUMERS * self.warpgroup_threads
            self.add_op(kernel.NamedBarrierOp(action, self.turns[whose], threads))

    def lane_row_point(self, half: int) -> tuple[SSAValue | None, list[Index], Index]:
        row = self.add(self.add(self.first_row, self.warp_row), self.add(self.group_row, 8 * half))
        inside = None
        if self.rows % self.block_q:
            inside = self.less(row, self.rows)
            row = self.select(inside, row, 0)
        return inside, list(self.batch), row

    def attend_item(self, batch: Sequence[Index], kv_batch: Sequence[Index], taken: Index) -> None:
        """The warp group's rows of one item: its key blocks overlapped (`overlapped_blocks`)
        or, with a mask operand, in turn (`blocks_in_turn`); then its rows stored."""
        self.batch = batch
        self.add_op(
            kernel.MbarrierWaitOp(self.q_full, self.index(0), self.index(self.rem(taken, 2)))
        )
        zero = self.float(0.0)
        output = self.add_op(
            vector_dialect.BroadcastOp(zero, VectorType(f32, [self.depth // 2]))
        ).vector
        blocks = self.overlapped_blocks if self.overlaps() else self.blocks_in_turn
        if self.summary:
            maxima, sums, output = self.unless_no_key_blocks(blocks, output)
        else:
            maxima, sums, output = blocks(output)
        self.add_op(kernel.MbarrierArriveOp(self.q_empty, self.index(0)))
        outputs = [
            [self.element_of(output, 4 * atom + i) for i in range(4)]
            for atom in range(self.depth // 8)
        ]
        self.store_rows(maxima, sums, outputs)

    def store_rows(
        self, maxima: list[SSAValue], sums: list[SSAValue], outputs: list[list[SSAValue]]
    ) -> None:
        """Each lane's output elements divided by its rows' sums: with staging slots, the
        group's 64 rows stored a panel of 128 bytes at a time through them (`stage_panels`;
        TMA clips the rows past the end); else from registers."""
        if not self.slots:
            super().store_rows(maxima, sums, outputs)
            return
        inverses = [self.inverse(self.quad(total, arith.AddfOp)) for total in sums]
        out_element = self.attention.out.type.get_element_type()
        out_panel = self.out_panel
        octets = out_panel // 8

        def write(panel: int, slot: int) -> None:
            for atom in range(panel * octets, (panel + 1) * octets):
                for half in range(2):
                    pair = self.output_pair(outputs[atom], half, inverses[half], out_element)
                    row = self.add(self.group_warp_row, self.add(self.group_row, 8 * half))
                    column = self.add(self.pair_column, 8 * atom - panel * out_panel)
                    at = [self.index(i) for i in (self.consumer_group, slot, row, column)]
                    self.add_op(kernel.VectorStoreOp(self.vector_of(pair), self.staging, at))

        def coordinates(panel: int) -> list[SSAValue]:
            row = self.add(self.first_row, self.group_first_row)
            return [self.index(i) for i in (*self.batch, row, panel * out_panel)]

        group = self.consumer_group
        barrier = self.index(self.add(group, STAGING_BARRIER))
        self.stage_panels(group, len(outputs) // octets, self.slots, barrier, write, coordinates)

    def unless_no_key_blocks(
        self, blocks, output: SSAValue
    ) -> tuple[list[SSAValue], list[SSAValue], SSAValue]:
        """`blocks(output)` where the mask summary lists key blocks for the item; else the
        state of rows that took no key (max -inf, sum 0: zeros are stored)."""
        minus_inf, zero = self.float(-math.inf), self.float(0.0)

        def some(_: Block) -> list[SSAValue]:
            maxima, sums, result = blocks(output)
            return [*maxima, *sums, result]

        taken = self.nested(some)
        none = self.nested(lambda _: [minus_inf, minus_inf, zero, zero, output])
        listed = self.add_op(arith.CmpiOp(self.key_blocks, self.index(0), "ne")).result
        types = [f32] * 4 + [output.type]
        state = self.add_op(scf.IfOp(listed, types, Region(taken), Region(none))).results
        return list(state[:2]), list(state[2:4]), state[4]

    def overlaps(self) -> bool:
        """Whether a key block's softmax overlaps the previous block's P V: without a mask,
        or with a boolean one at head dims up to OVERLAPPED_MASK_DEPTH, where a block's S, the
        previous block's P, the output and the mask's elements fit in the consumers'
        registers together (ptxas spills with a 16-bit mask at head dim 64, or with any mask
        at 128: `test_wgmma_attention`'s no-spill test)."""
        mask = self.attention.mask
        if mask is None or self.summary:
            return True
        return mask.type.get_element_type() == i1 and self.depth <= OVERLAPPED_MASK_DEPTH

    def overlapped_blocks(
        self, output: SSAValue
    ) -> tuple[list[SSAValue], list[SSAValue], SSAValue]:
        """The running maxima, sums and output after the head's key blocks, the scores of
        block j + 1 and P V of block j in flight together, so that the softmax of block j + 1
        overlaps the tensor cores' P V of block j (FlashAttention-3's intra-warpgroup
        pipelining)."""
        minus_inf, zero = self.float(-math.inf), self.float(0.0)
        # The first key block: its scores and P (the output is zero, nothing to rescale).
        index, stage, rounds = self.key_position(0)
        self.wait_for_keys(stage, rounds)
        self.take_turn()
        self.add_op(kernel.WgmmaFenceOp())
        scores = self.multiply_keys(stage)
        self.add_op(kernel.WgmmaCommitOp())
        self.pass_turn()
        mask = self.issued_mask_elements(index)
        (scores,) = self.add_op(kernel.WgmmaWaitOp(0, [scores])).results
        maxima, sums, _, fragments = self.softmax(scores, index, [minus_inf] * 2, [zero] * 2, mask)
        state = [*maxima, *sums, output, *fragments]
        state = self.key_loop(self.overlapped_block, state, first_step=1)
        # The last key block's P V.
        last = self.add_op(arith.SubiOp(self.key_blocks, self.index(1))).results[0]
        stage, rounds = self.key_stage(last)
        self.wait_for_values(stage, rounds)
        self.take_turn()
        self.add_op(kernel.WgmmaFenceOp())
        output = self.multiply_values(state[5:], stage, state[4])
        self.add_op(kernel.WgmmaCommitOp())
        self.pass_turn()
        (output,) = self.add_op(kernel.WgmmaWaitOp(0, [output])).results
        self.add_op(kernel.MbarrierArriveOp(self.empty, self.index(stage)))
        return state[:2], state[2:4], output

    def blocks_in_turn(self, output: SSAValue) -> tuple[list[SSAValue], list[SSAValue], SSAValue]:
        """The running maxima, sums and output after the head's key blocks, each block's
        scores, softmax and P V in turn: the overlap's registers leave no room for a mask's
        reads (ptxas spills)."""
        minus_inf, zero = self.float(-math.inf), self.float(0.0)
        state = [minus_inf, minus_inf, zero, zero, output]
        state = self.key_loop(self.block_in_turn, state)
        return state[:2], state[2:4], state[4]

    def issued_mask_elements(self, index: Index) -> list[list[SSAValue]] | None:
        """The mask's elements at key block `index`'s scores, loaded once its Q K^T is issued
        and before it is waited for, so that the loads' latency passes while the tensor
        cores multiply; None without a mask."""
        if self.attention.mask is None:
            return None
        if self.summary:
            return self.summarised_mask_elements(index)
        return self.mask_elements(self.score_columns(index, self.block_kv // 8))

    def summarised_mask_elements(self, index: Index) -> list[list[SSAValue]]:
        """The mask's elements at key block `index`'s scores, from the summary's bits: one
        word for each of the lane's two rows, element i of atom a its bit 2 a + i % 2."""
        bits = self.summary[0]
        words = []
        for half in range(2):
            _, batch, row = self.lane_row_point(half)
            at = [*self.mask_rows_point(batch, row), index, self.quad_lane]
            words.append(self.add_op(memref.LoadOp.get(bits, [self.index(i) for i in at])).res)
        elements = []
        for atom in range(self.block_kv // 8):
            row = []
            for i in range(4):
                word, shift = words[i // 2], 2 * atom + i % 2
                if shift:
                    word = self.add_op(arith.ShRUIOp(word, self.constant(shift, i32))).result
                row.append(self.add_op(arith.TruncIOp(word, i1)).result)
            elements.append(row)
        return elements

    def wait_for_keys(self, stage: Index, rounds: Index) -> None:
        parity = self.index(self.rem(rounds, 2))
        self.add_op(kernel.MbarrierWaitOp(self.keys_full, self.index(stage), parity))

    def wait_for_values(self, stage: Index, rounds: Index) -> None:
        parity = self.index(self.rem(rounds, 2))
        self.add_op(kernel.MbarrierWaitOp(self.values_full, self.index(stage), parity))

    def multiply_keys(self, stage: Index) -> SSAValue:
        """S = Q K^T of the key block in `stage`, issued (in flight)."""
        zero = self.float(0.0)
        scores_type = VectorType(f32, [self.block_kv // 2])
        scores = self.add_op(vector_dialect.BroadcastOp(zero, scores_type)).vector
        for step in range(self.depth // kernel.WGMMA_K):
            panel, k = divmod(step * kernel.WGMMA_K, self.panel)
            q_at = [self.index(i) for i in (panel, self.group_first_row, k)]
            k_at = [self.index(i) for i in (stage, panel, 0, k)]
            scores = self.add_op(
                kernel.WgmmaOp(self.block_kv, self.q_tile, q_at, self.k_tiles, k_at, scores)
            ).result
        return scores

    def multiply_values(
        self, fragments: Sequence[SSAValue], stage: Index, output: SSAValue
    ) -> SSAValue:
        """O += P V of the value block in `stage`, P from registers, issued (in flight)."""
        for step, a in enumerate(fragments):
            v_at = [self.index(i) for i in (stage, 0, step * kernel.WGMMA_K, 0)]
            output = self.add_op(
                kernel.WgmmaOp(self.depth, a, [], self.v_tiles, v_at, output, b_mn_major=True)
            ).result
        return output

    def softmax(
        self,
        scores: SSAValue,
        index: Index,
        maxima: list[SSAValue],
        sums: list[SSAValue],
        mask: list[list[SSAValue]] | None = None,
    ) -> tuple[list[SSAValue], list[SSAValue], list[SSAValue], list[SSAValue]]:
        """The online softmax's step over key block `index`'s scores (masked by `mask`, the
        mask operand's elements loaded earlier, where given): the new maxima and sums, the
        factors that rescale the output, and P's A fragments (all rounded before the fence of
        the wgmmas that read them: ptxas need not add a fence of its own between them,
        warning C7519)."""
        raw = [
            [self.element_of(scores, 4 * atom + i) for i in range(4)]
            for atom in range(self.block_kv // 8)
        ]
        elements, factor = self.masked_scores(raw, index, self.masked_from, mask)
        new_maxima, alphas, probabilities, new_sums = self.online_softmax(
            elements, factor, maxima, sums
        )
        fragments = [
            self.probability_fragment(probabilities, step)
            for step in range(self.block_kv // kernel.WGMMA_K)
        ]
        return new_maxima, new_sums, alphas, fragments

    def rescaled(self, output: SSAValue, alphas: list[SSAValue]) -> SSAValue:
        """The output rescaled by its rows' factors: element i is in row half (i / 2) % 2."""
        return self.vector_of(
            [
                self.add_op(arith.MulfOp(self.element_of(output, i), alphas[i // 2 % 2])).result
                for i in range(self.depth // 2)
            ]
        )

    def block_in_turn(
        self, index: Index, stage: Index, rounds: Index, state: list[SSAValue]
    ) -> list[SSAValue]:
        """Key block `index` (in `stage`): its scores issued, the mask's elements at them
        loaded while the tensor cores multiply, the scores waited for, their softmax, the
        output rescaled, P V, waited for, and the stage released."""
        maxima, sums, output = state[:2], state[2:4], state[4]
        self.wait_for_keys(stage, rounds)
        self.add_op(kernel.WgmmaFenceOp())
        scores = self.multiply_keys(stage)
        self.add_op(kernel.WgmmaCommitOp())
        mask = self.issued_mask_elements(index)
        (scores,) = self.add_op(kernel.WgmmaWaitOp(0, [scores])).results
        new_maxima, new_sums, alphas, fragments = self.softmax(scores, index, maxima, sums, mask)
        output = self.rescaled(output, alphas)
        self.wait_for_values(stage, rounds)
        # The fence orders the writes of P's and O's registers before the wgmmas read them.
        self.add_op(kernel.WgmmaFenceOp())
        output = self.multiply_values(fragments, stage, output)
        self.add_op(kernel.WgmmaCommitOp())
        (output,) = self.add_op(kernel.WgmmaWaitOp(0, [output])).results
        self.add_op(kernel.MbarrierArriveOp(self.empty, self.index(stage)))
        return [*new_maxima, *new_sums, output]

    def overlapped_block(
        self, index: Index, stage: Index, rounds: Index, state: list[SSAValue]
    ) -> list[SSAValue]:
        """Key block `index` (in `stage`) with the previous block's P V: the scores and P V
        issued together, the softmax of the scores once they are in (`wgmma_wait 1`), the
        previous stage released and the output rescaled once P V is."""
        maxima, sums, output, fragments = state[:2], state[2:4], state[4], state[5:]
        count = self.add_op(
            arith.SubiOp(self.index(self.add(self.mul(rounds, self.stages), stage)), self.index(1))
        ).results[0]
        previous, previous_rounds = self.rem(count, self.stages), self.div(count, self.stages)
        self.wait_for_keys(stage, rounds)
        self.wait_for_values(previous, previous_rounds)
        self.take_turn()
        # The fence orders the writes of P's and O's registers before the wgmmas read them.
        self.add_op(kernel.WgmmaFenceOp())
        scores = self.multiply_keys(stage)
        self.add_op(kernel.WgmmaCommitOp())
        output = self.multiply_values(fragments, previous, output)
        self.add_op(kernel.WgmmaCommitOp())
        self.pass_turn()
        mask = self.issued_mask_elements(index)
        (scores,) = self.add_op(kernel.WgmmaWaitOp(1, [scores])).results
        new_maxima, new_sums, alphas, fragments = self.softmax(scores, index, maxima, sums, mask)
        (output,) = self.add_op(kernel.WgmmaWaitOp(0, [output])).results
        self.add_op(kernel.MbarrierArriveOp(self.empty, self.index(previous)))
        return [*new_maxima, *new_sums, self.rescaled(output, alphas), *fragments]


def operand_tile_bytes(attention: tile.AttentionOp) -> tuple[int, int]:
    """The bytes of shared memory of the query tile, and of the stages of the key (or the
    value) blocks."""
    block_q, block_kv, _ = attention.tile_shape
    depth = attention.query.type.get_shape()[-1]
    element_bytes = kernel.element_bytes(attention.query.type.get_element_type())
    stages = attention.pipeline_depth
    return block_q * depth * element_bytes, stages * block_kv * depth * element_bytes


def output_slots(attention: tile.AttentionOp, target: GpuTarget) -> int:
    """The staging slots of each consumer warp group's output panels (64 rows by 128 bytes):
    as many of a row's panels as fit in shared memory beside the query tile and the key and
    value stages (`staging_slots`), where the output is a kernel argument of bf16 or f16
    (the wgmma's operands' types) whose rows are whole panels, as TMA stores them; else 0
    (the lanes store their rows from registers)."""
    out = attention.out
    out_type = out.type
    assert isinstance(out_type, MemRefType)
    if not isinstance(out, BlockArgument) or not isinstance(out.block.parent_op(), tile.KernelOp):
        return 0
    element = out_type.get_element_type()
    if str(element) not in ("bf16", "f16"):
        return 0
    panel = kernel.WGMMA_ROW_BYTES // kernel.element_bytes(element)
    depth = out_type.get_shape()[-1]
    if depth == DYNAMIC_INDEX or depth % panel:
        return 0
    q_bytes, kv_bytes = operand_tile_bytes(attention)
    barriers = (2 + 3 * attention.pipeline_depth) * kernel.MBARRIER_BYTES
    consumers = attention.tile_shape[0] // kernel.WGMMA_M
    used = q_bytes + 2 * kv_bytes + barriers
    return staging_slots(depth // panel, consumers, kernel.WGMMA_M, used, target)


def tensor_map_types(attention: tile.AttentionOp, slots: int = 0) -> list[kernel.TensorMapType]:
    """The tensor maps through which TMA copies the query tile and the key and value blocks:
    boxes of the tile's rows by one panel of 128 bytes, 1 along the batch dimensions, in the
    operands' own rank (rows past a head's end read as zeros), swizzled as the wgmmas read
    them; with staging `slots`, then the output's, whose boxes are a warp group's 64 rows by
    a panel."""
    block_q, block_kv, _ = attention.tile_shape
    operands = [
        (attention.query, block_q),
        (attention.key, block_kv),
        (attention.value, block_kv),
    ]
    if slots:
        operands.append((attention.out, kernel.WGMMA_M))
    maps = []
    for operand, rows in operands:
        operand_type = operand.type
        assert isinstance(operand_type, MemRefType)
        panel = kernel.WGMMA_ROW_BYTES // kernel.element_bytes(operand_type.get_element_type())
        box = [1] * (operand_type.get_num_dims() - 2) + [rows, panel]
        maps.append(kernel.TensorMapType(operand_type, box, kernel.WGMMA_ROW_BYTES))
    return maps


ITEM_OVERHEAD_BLOCKS = 1
"""What an item costs besides its key blocks, in key blocks: its first block's scores and
softmax, which no P V overlaps, and the stores of its rows."""


def item_table(
    attention: tile.AttentionOp, key_blocks: Sequence[int], grid: int, target: GpuTarget
) -> list[int]:
    """Which items each of the `grid` persistent blocks takes, and in which order: the
    offsets of block b's entries (b + 1 of them: block b takes entries offsets[b] to
    offsets[b + 1]), then the entries, items h R + r (row block r of query head h, R row
    blocks a head, taking `key_blocks[r]` key blocks). The items are dealt out as blocks
    that take the next item once they are done would take them (the longest processing time
    first: causal, a head's last rows take the most keys), so that every block ends at about
    the same time, in sections of the heads whose items fill the grid once (and whose keys
    and values fit half the L2 cache): each block's items are neighbours of the other
    blocks' at the time, and read the section's keys and values from the L2
    (FlashAttention-3's LPT tile scheduler). Sections of 48 heads (half the H100's L2) made
    causal B8 H32 S2048 D64 6% slower than sections of 8 (`benchmarks/h100/2026-12-06-ab/`)."""
    heads = max(prod(attention.query.type.get_shape()[:-2]), 1)
    group = kv_group(attention.query.type.get_shape(), attention.key.type.get_shape())
    keys, key_depth = attention.key.type.get_shape()[-2:]
    value_depth = attention.value.type.get_shape()[-1]
    element = kernel.element_bytes(attention.query.type.get_element_type())
    kv_head_bytes = keys * (key_depth + value_depth) * element
    wave = -(-grid // (len(key_blocks) * group))
    section = group * max(1, min(target.l2_bytes // 2 // kv_head_bytes, wave))
    longest_first = sorted(range(len(key_blocks)), key=lambda r: -key_blocks[r])
    order = [
        head * len(key_blocks) + row_block
        for first_head in range(0, heads, section)
        for row_block in longest_first
        for head in range(first_head, min(first_head + section, heads))
    ]
    taken: list[list[int]] = [[] for _ in range(grid)]
    busy = [(0, block) for block in range(grid)]
    for item in order:
        time, block = heapq.heappop(busy)
        taken[block].append(item)
        heapq.heappush(
            busy, (time + key_blocks[item % len(key_blocks)] + ITEM_OVERHEAD_BLOCKS, block)
        )
    offsets = list(accumulate((len(items) for items in taken), initial=0))
    return [*offsets, *(item for items in taken for item in items)]


def lower_wgmma_attention_kernel(
    source: tile.KernelOp, target: GpuTarget
) -> tuple[kernel.FuncOp, list[int], list[int]]:
    """The kernel.func of a wgmma attention's tile.kernel, the positions of the kernel's
    arguments that its launch passes again, for the tensor-map parameters appended to the
    kernel's own (the query's, the key's, the value's, then a staged output's), and its item
    table (`item_table`), which the launch passes after them
    (and after the mask summary's)."""
    attention = source.attention
    assert attention is not None
    slots = output_slots(attention, target)
    operands = list(source.body.block.args)
    mapped = [attention.query, attention.key, attention.value]
    positions = [operands.index(v) for v in mapped + ([attention.out] if slots else [])]
    summary_types = mask_summary_types(attention)
    grid = source.grid_shape[0]
    heads = max(prod(attention.query.type.get_shape()[:-2]), 1)
    row_blocks = -(-attention.query.type.get_shape()[-2] // attention.tile_shape[0])
    items_type = MemRefType(i32, [grid + 1 + heads * row_blocks])
    map_types = tensor_map_types(attention, slots)
    extra_types = [*map_types, *summary_types, items_type]
    body, values = kernel_body(source, extra_types)
    maps = body.args[len(operands) : len(operands) + len(map_types)]
    summary = body.args[len(operands) + len(map_types) : len(operands) + len(extra_types) - 1]
    items = body.args[len(operands) + len(extra_types) - 1]
    for argument, name in zip(maps, ("q_map", "k_map", "v_map", "out_map")):
        argument.name_hint = name
    for argument, name in zip(summary, ("bits", "taken")):
        argument.name_hint = name
    items.name_hint = "items"
    builder = _WgmmaAttentionBuilder(
        attention, body, values, target, maps, summary, items, grid, slots
    )
    table = item_table(attention, builder.key_block_counts(), grid, target)
    builder.build()
    return kernel_func(source, body), positions, table
