"""The Kernel IR of a `tile.attention` on warp-group tensor cores (wgmma), fed by TMA,
FlashAttention-3's main loop, for `lower-tile-to-kernel`.

    tile.attention %q, %k, %v scale 8.838835e-02 causal into %o : memref<1x16x1024x128xbf16>,
        .. atom wgmma m64n128k16 tile [128, 128, 128] warps [8, 1] pipeline 2

becomes a warp-specialised `kernel.func` of 3 warp groups in which block (x, z) computes rows
128 x to 128 x + 127 of query head z (of the batch's heads, strided through where there are
more than the grid's z), taking three tensor maps besides the kernel's own arguments
(`!kernel.tensor_map<memref<1x16x1024x128xbf16>, box [1, 1, 128, 64], swizzle 128>` for
the queries, box [1, 1, 128, 64] of the keys and of the values: the launch passes the
operands again for them). The maps keep the operands' rank, so a box past the end of a head's
rows reads zeros, never the next head's. A block takes one query head, and reads the
key/value head it shares with the G - 1 others (GQA) as they do: the G blocks read it at
about the same time, from the L2 cache, and the query rows of a head fill the 128-row
blocks this kernel is chosen for (packing the G heads' rows into a block, as the mma_sync
kernel does for decoding, would need a tensor map over the query viewed as [.., Hkv, G L, D]).

    %q_tile = kernel.dynamic_shared offset 0 : memref<2x128x64xbf16, 3 : i32>      (swizzled)
    %k_tiles = kernel.dynamic_shared offset 32768 : memref<2x2x128x64xbf16, 3 : i32>
    %v_tiles = kernel.dynamic_shared offset 98304 : memref<2x2x128x64xbf16, 3 : i32>
    mbarriers: %q_full (the queries landed), %q_empty (the consumers are done with them),
               %full[s] (key and value block in stage s landed), %empty[s] (stage s is free)
    warp group 0, the producer (setmaxnreg dec), its thread 0 only, per head:
      wait %q_empty (after the first head); expect_tx %q_full; TMA the D / 64 query panels
      for each key block j: s = n % 2 (n counting the blocks of every head the block took)
        wait %empty[s] (after the first round); expect_tx %full[s]; TMA K's and V's panels
    warp groups 1 and 2, the consumers (setmaxnreg inc), 64 query rows each:
      wait %q_full; for each key block j: wait %full[s]
        S = Q K^T: wgmma m64n128k16 %q_tile[p, 64 c, 16 k], %k_tiles[s, p, 0, 16 k] (K-major)
        the online softmax of `AttentionEmitter` on S's elements (scaled by scale log2(e),
          masked; max and sum over the quad), O rescaled
        O += P V: wgmma m64nDk16 %p_j, %v_tiles[s, 0, 16 j, 0] mn_major, P from registers
        arrive %empty[s]
      arrive %q_empty; each lane's rows divided by their sums, stored in the output's type

The accumulator of S (m64nN, f32: element i of a thread at row 16w + g + 8 ((i / 2) % 2),
column 8 (i / 4) + 2q + i % 2) is, in each warp's 16 rows, N / 8 fragments of mma.sync's
m16n8 accumulator side by side, so the softmax, the masks and the stores are the mma_sync
kernel's (`AttentionEmitter`) on its elements 4 a to 4 a + 3, and elements 8 j to 8 j + 7,
rounded to 16 bits, are the register A fragment of P V's k-step j
(`AttentionEmitter.probability_fragment`). V's [keys, D] block is the MN-major B of that
product: panels of 64 columns by the keys, which TMA lands as they are (the K and V tiles
have one layout). Causal, the blocks wholly above the diagonal of the block's rows are
skipped and only the blocks from the first that crosses it are masked; the keys past the
end (which TMA reads as zeros) are masked to -inf; a mask operand is read from global
memory where each score is, as on mma_sync.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, scf
from xdsl.dialects import vector as vector_dialect
from xdsl.dialects.builtin import IndexType, VectorType, f32
from xdsl.ir import Block, Region, SSAValue

from emmy.dialects import kernel, tile
from emmy.dialects.target import GpuTarget
from emmy.passes.attention_kernel import AttentionEmitter
from emmy.passes.gemm_kernel import Index, kernel_body, kernel_func
from emmy.passes.wgmma_gemm_kernel import (
    PRODUCER_REGISTERS,
    WARPGROUP_WARPS,
    consumer_registers,
)


class _WgmmaAttentionBuilder(AttentionEmitter):
    """The kernel of a tile.attention on the wgmma atom (see the module docstring)."""

    def __init__(
        self,
        attention: tile.AttentionOp,
        body: Block,
        values: dict[SSAValue, SSAValue],
        target: GpuTarget,
        maps: Sequence[SSAValue],
    ):
        super().__init__(attention, body, values, target, packed=False)
        self.q_map, self.k_map, self.v_map = maps
        self.warpgroup_threads = WARPGROUP_WARPS * target.warp_size
        self.consumers = self.block_q // kernel.WGMMA_M
        self.panel = kernel.WGMMA_ROW_BYTES // self.element_bytes
        self.panels = self.depth // self.panel
        self.batch_rank = len(self.batch_sizes)
        self.key_blocks: Index = 0
        """How many key blocks a block takes for each head (`key_ranges`)."""

    def build(self) -> None:
        stages = self.stages
        q_bytes = self.block_q * self.depth * self.element_bytes
        kv_bytes = stages * self.block_kv * self.depth * self.element_bytes
        swizzle = kernel.SwizzleAttr(kernel.WGMMA_ROW_BYTES)
        q_type = kernel.shared_memref([self.panels, self.block_q, self.panel], self.element)
        kv_shape = [stages, self.panels, self.block_kv, self.panel]
        kv_type = kernel.shared_memref(kv_shape, self.element)
        self.q_tile = self.named(kernel.DynamicSharedOp(0, q_type, swizzle), "q_tile")
        self.k_tiles = self.named(kernel.DynamicSharedOp(q_bytes, kv_type, swizzle), "k_tiles")
        self.v_tiles = self.named(
            kernel.DynamicSharedOp(q_bytes + kv_bytes, kv_type, swizzle), "v_tiles"
        )
        self.q_full = self.named(kernel.MbarrierAllocOp(1), "q_full")
        self.q_empty = self.named(kernel.MbarrierAllocOp(1), "q_empty")
        self.full = self.named(kernel.MbarrierAllocOp(stages), "full")
        self.empty = self.named(kernel.MbarrierAllocOp(stages), "empty")
        self.thread_id = self.named(kernel.ThreadIdOp("x"), "tid")
        consumer_threads = self.consumers * self.warpgroup_threads

        def initialise() -> None:
            self.add_op(kernel.MbarrierInitOp(self.q_full, self.index(0), 1))
            self.add_op(kernel.MbarrierInitOp(self.q_empty, self.index(0), consumer_threads))
            for stage in range(stages):
                self.add_op(kernel.MbarrierInitOp(self.full, self.index(stage), 1))
                self.add_op(kernel.MbarrierInitOp(self.empty, self.index(stage), consumer_threads))

        self.if_then(self.equal(self.thread_id, 0), initialise)
        self.add_op(kernel.BarrierOp())
        block_x = self.add_op(kernel.BlockIdOp("x")).results[0]
        self.first_row = self.mul(block_x, self.block_q)
        start, end, self.masked_from = self.key_ranges()
        self.first_key_block = start
        self.key_blocks = self.add_op(arith.SubiOp(self.index(end), self.index(start))).results[0]
        warpgroup = self.div(self.thread_id, self.warpgroup_threads)
        producer = self.nested(lambda _: self.producer())
        consumer = self.nested(lambda _: self.consumer(warpgroup))
        self.add_op(scf.IfOp(self.equal(warpgroup, 0), [], Region(producer), Region(consumer)))
        self.place_constants()

    # -- the heads and key blocks a block takes --

    def head_loop(self, fill) -> None:
        """`fill(batch, kv_batch, taken)` for each query head the block takes (the grid's z
        striding through the batch's heads): its batch indices, its key/value head's and how
        many heads the block took before it."""
        batches = prod(self.batch_sizes)
        block_z = self.add_op(kernel.BlockIdOp("z")).results[0]
        grid_z = self.add_op(kernel.GridDimOp("z")).results[0]

        def head_body(block: Block) -> None:
            linear = block.args[0]
            taken = self.div(self.add_op(arith.SubiOp(linear, block_z)).results[0], grid_z)
            batch, stride = [], batches
            for position, size in enumerate(self.batch_sizes):
                stride //= size
                index = self.div(linear, stride)
                batch.append(self.rem(index, size) if position else index)
            kv_batch = list(batch)
            if self.group > 1:
                kv_batch[-1] = self.div(kv_batch[-1], self.group)
            fill(batch, kv_batch, taken)

        body = self.nested(head_body, [IndexType()])
        self.add_op(scf.ForOp(block_z, self.index(max(batches, 1)), grid_z, [], body))

    def key_loop(self, taken: Index, fill, init: Sequence[SSAValue] = ()) -> list[SSAValue]:
        """`fill(index, stage, rounds, carried)` for each key block the block takes for its
        `taken`-th head: the stage it is in, and how many times the ring of stages went
        round before it (the blocks of every head counted on as one sequence, so that the
        barriers' phases run on)."""
        first = self.mul(taken, self.key_blocks)

        def body_of(block: Block) -> list[SSAValue]:
            step, *carried = block.args
            count = self.add(first, step)
            index = self.add(self.first_key_block, step)
            return fill(index, self.rem(count, self.stages), self.div(count, self.stages), carried)

        body = self.nested(body_of, [IndexType()] + [value.type for value in init])
        loop = self.add_op(
            scf.ForOp(self.index(0), self.key_blocks, self.index(1), list(init), body)
        )
        return list(loop.results)

    # -- the producer --

    def producer(self) -> None:
        """Warp group 0: its thread 0 copies each head's query tile and key and value blocks,
        each block into the stage the consumers have released."""
        if self.consumers > 1:
            self.add_op(kernel.SetmaxnregOp("dec", PRODUCER_REGISTERS))
        self.if_then(self.equal(self.thread_id, 0), lambda: self.head_loop(self.copy_head))

    def copy_head(self, batch: Sequence[Index], kv_batch: Sequence[Index], taken: Index) -> None:
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
            kv_bytes = 2 * self.block_kv * self.depth * self.element_bytes
            self.add_op(kernel.MbarrierArriveExpectTxOp(self.full, self.index(stage), kv_bytes))
            first_key = self.mul(index, self.block_kv)
            for tensor_map, tiles in ((self.k_map, self.k_tiles), (self.v_map, self.v_tiles)):
                for panel in range(self.panels):
                    self.tma_load(
                        tensor_map, kv_batch, first_key, panel, tiles, [stage], self.full, stage
                    )
            return []

        self.key_loop(taken, copy)

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
        self.group_first_row = self.mul(group, kernel.WGMMA_M)
        lane_thread = self.rem(self.thread_id, self.warpgroup_threads)
        warp = self.div(lane_thread, self.target.warp_size)
        lane = self.rem(lane_thread, self.target.warp_size)
        # The accumulators' rows 16w + g (+ 8) and columns 2q (+ 1) of each 8.
        self.warp_first_row = self.add(
            self.add(self.first_row, self.group_first_row), self.mul(warp, 16)
        )
        self.group_row = self.div(lane, 4)
        self.pair_column = self.mul(self.rem(lane, 4), 2)
        self.head_loop(self.attend_head)

    def lane_row_point(self, half: int) -> tuple[SSAValue | None, list[Index], Index]:
        row = self.add(self.add(self.warp_first_row, self.group_row), 8 * half)
        inside = None
        if self.rows % self.block_q:
            inside = self.less(row, self.rows)
            row = self.select(inside, row, 0)
        return inside, list(self.batch), row

    def attend_head(self, batch: Sequence[Index], kv_batch: Sequence[Index], taken: Index) -> None:
        self.batch = batch
        self.add_op(
            kernel.MbarrierWaitOp(self.q_full, self.index(0), self.index(self.rem(taken, 2)))
        )
        minus_inf, zero = self.float(-math.inf), self.float(0.0)
        zeros = self.add_op(vector_dialect.BroadcastOp(zero, VectorType(f32, [self.depth // 2])))
        state = [minus_inf, minus_inf, zero, zero, zeros.vector]
        state = self.key_loop(taken, self.key_block, state)
        self.add_op(kernel.MbarrierArriveOp(self.q_empty, self.index(0)))
        outputs = [
            [self.element_of(state[4], 4 * atom + i) for i in range(4)]
            for atom in range(self.depth // 8)
        ]
        self.store_rows(state[:2], state[2:4], outputs)

    def key_block(
        self, index: Index, stage: Index, rounds: Index, state: list[SSAValue]
    ) -> list[SSAValue]:
        """The running max, sum and output after key block `index` (in `stage`)."""
        maxima, sums, output = state[:2], state[2:4], state[4]
        stage_value = self.index(stage)
        self.add_op(kernel.MbarrierWaitOp(self.full, stage_value, self.index(self.rem(rounds, 2))))
        zero = self.float(0.0)
        scores_type = VectorType(f32, [self.block_kv // 2])
        scores = self.add_op(vector_dialect.BroadcastOp(zero, scores_type)).vector
        self.add_op(kernel.WgmmaFenceOp())
        for step in range(self.depth // kernel.WGMMA_K):
            panel, k = divmod(step * kernel.WGMMA_K, self.panel)
            q_at = [self.index(i) for i in (panel, self.group_first_row, k)]
            k_at = [self.index(i) for i in (stage, panel, 0, k)]
            scores = self.add_op(
                kernel.WgmmaOp(self.block_kv, self.q_tile, q_at, self.k_tiles, k_at, scores)
            ).result
        self.add_op(kernel.WgmmaCommitOp())
        (scores,) = self.add_op(kernel.WgmmaWaitOp(0, [scores])).results
        raw = [
            [self.element_of(scores, 4 * atom + i) for i in range(4)]
            for atom in range(self.block_kv // 8)
        ]
        elements = self.scores_in_base_2(raw, index, self.masked_from)
        new_maxima, alphas, probabilities, new_sums = self.online_softmax(elements, maxima, sums)
        # Element i of the output is in row half (i / 2) % 2.
        output = self.vector_of(
            [
                self.add_op(arith.MulfOp(self.element_of(output, i), alphas[i // 2 % 2])).result
                for i in range(self.depth // 2)
            ]
        )
        fragments = [
            self.probability_fragment(probabilities, step)
            for step in range(self.block_kv // kernel.WGMMA_K)
        ]
        # The fence orders the writes of P's and O's registers before the wgmmas read them:
        # with every fragment written before it, ptxas need not add a fence of its own
        # between the wgmmas (warning C7519).
        self.add_op(kernel.WgmmaFenceOp())
        for step, a in enumerate(fragments):
            v_at = [self.index(i) for i in (stage, 0, step * kernel.WGMMA_K, 0)]
            output = self.add_op(
                kernel.WgmmaOp(self.depth, a, [], self.v_tiles, v_at, output, b_mn_major=True)
            ).result
        self.add_op(kernel.WgmmaCommitOp())
        (output,) = self.add_op(kernel.WgmmaWaitOp(0, [output])).results
        self.add_op(kernel.MbarrierArriveOp(self.empty, stage_value))
        return [*new_maxima, *new_sums, output]


def tensor_map_types(attention: tile.AttentionOp) -> list[kernel.TensorMapType]:
    """The tensor maps through which TMA copies the query tile and the key and value blocks:
    boxes of the tile's rows by one panel of 128 bytes, 1 along the batch dimensions, in the
    operands' own rank (rows past a head's end read as zeros), swizzled as the wgmmas read
    them."""
    block_q, block_kv, _ = attention.tile_shape
    element = attention.query.type.get_element_type()
    panel = kernel.WGMMA_ROW_BYTES // kernel.element_bytes(element)
    return [
        kernel.TensorMapType(
            operand.type,
            [1] * (operand.type.get_num_dims() - 2) + [rows, panel],
            kernel.WGMMA_ROW_BYTES,
        )
        for operand, rows in (
            (attention.query, block_q),
            (attention.key, block_kv),
            (attention.value, block_kv),
        )
    ]


def lower_wgmma_attention_kernel(
    source: tile.KernelOp, target: GpuTarget
) -> tuple[kernel.FuncOp, list[int]]:
    """The kernel.func of a wgmma attention's tile.kernel, and the positions of the kernel's
    arguments that its launch passes again, for the three tensor-map parameters appended to
    the kernel's own."""
    attention = source.attention
    assert attention is not None
    operands = list(source.body.block.args)
    positions = [operands.index(v) for v in (attention.query, attention.key, attention.value)]
    body, values = kernel_body(source, tensor_map_types(attention))
    maps = body.args[len(operands) :]
    for tensor_map, name in zip(maps, ("q_map", "k_map", "v_map")):
        tensor_map.name_hint = name
    _WgmmaAttentionBuilder(attention, body, values, target, maps).build()
    return kernel_func(source, body), positions
