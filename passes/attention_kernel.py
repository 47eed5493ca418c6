"""The Kernel IR of a `tile.attention` on mma_sync tensor cores, FlashAttention-2's loop, for
`lower-tile-to-kernel`.

    tile.attention %q, %k, %v scale 1.250000e-01 causal into %o : memref<1x4x100x64xbf16>, ..
        atom <mma_sync m16n8k16> tile [64, 64, 64] warps [4, 1] pipeline 2

becomes a `kernel.func` in which block x computes query rows 64x to 64x + 63 of one head
(grid z over the batch and heads; each of the block's 4 warps owns 16 rows), key/value head
h / (H / Hkv) for query head h:

- Shared memory holds the block's query tile and `pipeline` blocks of keys and of values, each
  a tile of rows of the head dim D, in panels of 128 bytes, swizzled (`#kernel.swizzle`): the
  8 rows an ldmatrix reads lie in 8 different bank groups (the tiles of `gemm_kernel`, views
  of the dynamic shared memory where they outgrow the static). cp.async copies them 16 bytes
  at a time, rows past the end of L or S zero-filled; the queries and the first
  `pipeline - 1` key/value blocks first, then in iteration j block j + pipeline - 1, after a
  barrier that orders it after every warp's use of the stage it overwrites.
- Each warp loads its 16 x D queries into registers once (ldmatrix x4 per 16 columns). Per
  key block it computes S = Q K^T in m16n8k16 atoms (K's [keys, D] tile is B as [N, K]:
  ldmatrix x4 of two atoms), scales it by `scale * log2(e)` and masks it to -inf where a key
  is past S or, causal, after the query; then the online softmax, in registers: the row max
  of the lane's elements and its quad's (`kernel.shuffle xor` 1 and 2: the 4 lanes holding a
  row), m' = max(m, max), P = exp2(S - m'), the running sum l = l exp2(m - m') + the lane's
  sum of P, and O rescaled by exp2(m - m'). P's accumulators, rounded to the input type, are
  the A fragments of P V as they are (atoms 2i and 2i + 1 of S are A's k-step i), and V's
  [keys, D] tile is B as [K, N] (ldmatrix x4 trans).
- Causal, the block stops after the key block that holds its last query's position (the
  blocks wholly above the diagonal are skipped); the scores past the diagonal are masked in
  the blocks it does take. A mask operand is read where each score is, from global memory:
  an i1 mask's false gives -inf, a float mask is added (times log2(e)); a row whose keys so
  far are all masked keeps its max at -inf and takes its exponents from 0, so that the keys
  it keeps later count in full; a row masked whole ends with a sum of 0 and gives zeros (its
  inverse taken as 0), as torch's sdpa does.
- At the end each lane sums its quad's l, divides its O by it and stores its rows below L, two
  columns at a time, in the output's type.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import prod

from xdsl.dialects import arith, memref, scf
from xdsl.dialects import math as math_dialect
from xdsl.dialects import vector as vector_dialect
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerType, VectorType, f32, i32
from xdsl.ir import Block, SSAValue

from emmy.dialects import kernel, tile
from emmy.dialects.attention import kv_group
from emmy.dialects.target import GpuTarget
from emmy.passes.gemm_kernel import (
    SWIZZLE_ROW_BYTES,
    Index,
    KernelEmitter,
    OperandTiles,
    kernel_body,
    kernel_func,
)

COPY_BYTES = 16
"""The bytes of one cp.async of a row's elements."""


class _AttentionBuilder(KernelEmitter):
    """Builds the kernel of one tile.attention (see the module docstring)."""

    def __init__(
        self,
        attention: tile.AttentionOp,
        body: Block,
        values: dict[SSAValue, SSAValue],
        target: GpuTarget,
    ):
        super().__init__(body, values, target)
        self.attention = attention
        *self.batch_sizes, self.rows, self.depth = attention.query.type.get_shape()
        self.keys = attention.key.type.get_shape()[-2]
        self.group = kv_group(attention.query.type.get_shape(), attention.key.type.get_shape())
        self.block_q, self.block_kv, _ = attention.tile_shape
        self.stages = attention.pipeline_depth
        self.element = attention.query.type.get_element_type()
        self.element_bytes = kernel.element_bytes(self.element)
        self.threads = attention.warp_grid[0] * target.warp_size
        self.causal = attention.causal is not None
        self.k_steps = self.depth // 16
        self.score_atoms = self.block_kv // 8
        self.out_atoms = self.depth // 8

    # -- shared tiles and their copies --

    def tiles(self, operand: SSAValue, rows: int) -> OperandTiles:
        width = min(self.depth, SWIZZLE_ROW_BYTES // self.element_bytes)
        copy = COPY_BYTES // self.element_bytes
        return OperandTiles(operand, (), 0, 1, rows, self.depth, width, copy)

    def shared(self, tiles: OperandTiles, stages: int, name: str, offset: int | None):
        shape = [stages, tiles.panels, tiles.rows, tiles.width]
        layout = kernel.SwizzleAttr(tiles.width * self.element_bytes)
        memref_type = kernel.shared_memref(shape, self.element)
        if offset is None:
            op = kernel.SharedAllocOp(memref_type, layout)
        else:
            op = kernel.DynamicSharedOp(offset, memref_type, layout)
        return self.named(op, name)

    def copy_tile(
        self,
        tiles: OperandTiles,
        shared: SSAValue,
        stage: Index,
        batch: Sequence[Index],
        first_row: Index,
        extent: int,
    ) -> None:
        """The block's cp.asyncs of rows `first_row` on of its operand (of `extent` rows)
        into stage `stage` of `shared`; rows past the extent read nothing and fill zeros."""
        copy = tiles.copy_elements
        per_row = tiles.columns // copy
        chunks = tiles.rows * per_row
        source = self.values[tiles.operand]
        for step in range(-(-chunks // self.threads)):
            chunk = self.add(self.thread_id, step * self.threads)
            guard = self.less(chunk, chunks) if (step + 1) * self.threads > chunks else None

            def copy_chunk(chunk: Index = chunk) -> None:
                row, column = self.div(chunk, per_row), self.mul(self.rem(chunk, per_row), copy)
                position = self.add(first_row, row)
                source_bytes = None
                if extent % tiles.rows:
                    valid = self.less(position, extent)
                    position = self.select(valid, position, 0)
                    size = self.constant(COPY_BYTES, i32)
                    source_bytes = self.select(valid, size, self.constant(0, i32))
                panel, within = self.panel_column(tiles, column)
                destination = [self.index(i) for i in (stage, panel, row, within)]
                indices = [self.index(i) for i in (*batch, position, column)]
                self.add_op(
                    kernel.CpAsyncOp(shared, destination, source, indices, COPY_BYTES, source_bytes)
                )

            self.if_then(guard, copy_chunk)

    # -- scalar and vector helpers --

    def float(self, value: float) -> SSAValue:
        return self.add_op(arith.ConstantOp(FloatAttr(value, f32))).results[0]

    def element_of(self, vector: SSAValue, position: int) -> SSAValue:
        return self.add_op(vector_dialect.ExtractOp(vector, [position], f32)).result

    def quad(self, value: SSAValue, combine: type) -> SSAValue:
        """`value` combined over the 4 lanes that hold one row of an accumulator."""
        for offset in (1, 2):
            other = self.add_op(kernel.ShuffleOp("xor", value, self.constant(offset, i32)))
            value = self.add_op(combine(value, other.results[0])).results[0]
        return value

    def exp2(self, value: SSAValue) -> SSAValue:
        return self.add_op(math_dialect.Exp2Op(value)).results[0]

    # -- the kernel --

    def build(self) -> None:
        attention = self.attention
        self.q_tiles = self.tiles(attention.query, self.block_q)
        self.k_tiles = self.tiles(attention.key, self.block_kv)
        self.v_tiles = self.tiles(attention.value, self.block_kv)
        self.thread_id = self.named(kernel.ThreadIdOp("x"), "tid")
        self.lane = self.rem(self.thread_id, self.target.warp_size)
        self.warp = self.div(self.thread_id, self.target.warp_size)
        self.emit_fragment_offsets()
        self.group_row = self.div(self.lane, 4)
        self.pair_column = self.mul(self.rem(self.lane, 4), 2)
        q_bytes = self.block_q * self.depth * self.element_bytes
        kv_bytes = self.stages * self.block_kv * self.depth * self.element_bytes
        dynamic = q_bytes + 2 * kv_bytes > self.target.static_shared_bytes_per_block
        self.shared_q = self.shared(self.q_tiles, 1, "q_tile", 0 if dynamic else None)
        offsets = (q_bytes, q_bytes + kv_bytes) if dynamic else (None, None)
        self.shared_k = self.shared(self.k_tiles, self.stages, "k_tiles", offsets[0])
        self.shared_v = self.shared(self.v_tiles, self.stages, "v_tiles", offsets[1])
        block_x = self.add_op(kernel.BlockIdOp("x")).results[0]
        self.first_query = self.mul(block_x, self.block_q)
        self.warp_first_row = self.add(self.first_query, self.mul(self.warp, 16))
        batches = prod(self.batch_sizes)
        if batches == 1:
            self.block_rows([0] * len(self.batch_sizes))
        else:
            block_z = self.add_op(kernel.BlockIdOp("z")).results[0]
            grid_z = self.add_op(kernel.GridDimOp("z")).results[0]

            def batch_body(block: Block) -> None:
                # The tiles of the previous batch point may still be read.
                self.add_op(kernel.BarrierOp())
                linear, indices, stride = block.args[0], [], batches
                for position, size in enumerate(self.batch_sizes):
                    stride //= size
                    index = self.div(linear, stride)
                    indices.append(self.rem(index, size) if position else index)
                self.block_rows(indices)

            body = self.nested(batch_body, [IndexType()])
            self.add_op(scf.ForOp(block_z, self.constant(batches), grid_z, [], body))
        self.place_constants()

    def key_blocks(self) -> Index:
        """How many key blocks the block takes: all, or (causal) up to the one holding its
        last query's position."""
        blocks = -(-self.keys // self.block_kv)
        if not self.causal:
            return blocks
        last = self.add(self.first_query, self.block_q + self.block_kv - 1)
        needed = self.div(last, self.block_kv)
        return self.add_op(arith.MinUIOp(self.index(needed), self.index(blocks))).results[0]

    def block_rows(self, batch: Sequence[Index]) -> None:
        """The block's query rows at batch point `batch`."""
        kv_batch = list(batch)
        if self.group > 1:
            kv_batch[-1] = self.div(kv_batch[-1], self.group)
        stages, blocks = self.stages, self.key_blocks()

        def load_block(index: Index) -> None:
            stage, first = self.rem(index, stages), self.mul(index, self.block_kv)
            for tiles, shared in ((self.k_tiles, self.shared_k), (self.v_tiles, self.shared_v)):
                self.copy_tile(tiles, shared, stage, kv_batch, first, self.keys)

        self.copy_tile(self.q_tiles, self.shared_q, 0, batch, self.first_query, self.rows)
        self.add_op(kernel.CpAsyncCommitOp())
        for index in range(stages - 1):
            self.if_then(self.less(index, blocks), lambda index=index: load_block(index))
            self.add_op(kernel.CpAsyncCommitOp())
        self.add_op(kernel.CpAsyncWaitOp(stages - 1))
        self.add_op(kernel.BarrierOp())
        queries = [self.query_fragment(step) for step in range(self.k_steps)]
        minus_inf = self.float(-math.inf)
        zero = self.float(0.0)
        zeros = self.add_op(vector_dialect.BroadcastOp(zero, VectorType(f32, [4]))).vector
        initial = [minus_inf, minus_inf, zero, zero, *[zeros] * self.out_atoms]

        def key_loop(block: Block) -> list[SSAValue]:
            index, *state = block.args
            self.add_op(kernel.CpAsyncWaitOp(stages - 2))
            self.add_op(kernel.BarrierOp())
            ahead = self.add(index, stages - 1)
            self.if_then(self.less(ahead, blocks), lambda: load_block(ahead))
            self.add_op(kernel.CpAsyncCommitOp())
            return self.key_block(batch, self.rem(index, stages), index, queries, state)

        body = self.nested(key_loop, [IndexType()] + [value.type for value in initial])
        loop = self.add_op(
            scf.ForOp(self.constant(0), self.index(blocks), self.constant(1), initial, body)
        )
        self.store_rows(batch, list(loop.results))

    def query_fragment(self, step: int) -> SSAValue:
        """The warp's A fragment of its 16 query rows, columns 16 step on (ldmatrix x4)."""
        row = self.add(self.mul(self.warp, 16), self.lane_row)
        column = (step * 16, self.lane_column)
        return self.ldmatrix(self.q_tiles, self.shared_q, 0, row, column, 4, False)

    def key_fragments(self, stage: Index, atom: int, step: int) -> list[SSAValue]:
        """B fragments of score atoms `atom` and `atom + 1` at k-step `step`: the key tile is
        [N, K], read as it is (ldmatrix x4)."""
        row = self.add(atom * 8, self.lane_block_row)
        loaded = self.ldmatrix(
            self.k_tiles, self.shared_k, stage, row, (step * 16, self.lane_half), 4, False
        )
        return [self.lanes(loaded, 0, 4), self.lanes(loaded, 4, 4)]

    def value_fragments(self, stage: Index, step: int, atom: int) -> list[SSAValue]:
        """B fragments of output atoms `atom` and `atom + 1` at k-step `step` (keys 16 step
        on): the value tile is [K, N], read transposed (ldmatrix x4 trans)."""
        row = self.add(step * 16, self.lane_row)
        loaded = self.ldmatrix(
            self.v_tiles, self.shared_v, stage, row, (atom * 8, self.lane_column), 4, True
        )
        return [self.lanes(loaded, 0, 4), self.lanes(loaded, 4, 4)]

    def masked(
        self, value: SSAValue, batch: Sequence[Index], query: Index, column: Index
    ) -> SSAValue:
        """The base-2 score `value` of query row `query` and key `column` under the mask: -inf
        where an i1 mask is false, plus the float mask's element (times log2(e)). The mask
        broadcasts to the scores' shape; rows and keys past the ends read element 0."""
        mask = self.attention.mask
        if self.rows % self.block_q:
            query = self.select(self.less(query, self.rows), query, 0)
        if self.keys % self.block_kv:
            column = self.select(self.less(column, self.keys), column, 0)
        point = [*batch, query, column]
        shape = mask.type.get_shape()
        indices = [
            self.index(0 if size == 1 else i)
            for size, i in zip(shape, point[len(point) - len(shape) :])
        ]
        element = self.add_op(memref.LoadOp.get(self.values[mask], indices)).res
        if isinstance(element.type, IntegerType):
            minus_inf = self.float(-math.inf)
            return self.add_op(arith.SelectOp(element, value, minus_inf)).result
        if element.type != f32:
            element = self.add_op(arith.ExtFOp(element, f32)).result
        scaled = self.add_op(arith.MulfOp(element, self.float(math.log2(math.e)))).result
        return self.add_op(arith.AddfOp(value, scaled)).result

    def mma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        return self.add_op(kernel.MmaSyncOp(kernel.MmaShape.M16N8K16, a, b, c)).result

    def key_block(
        self,
        batch: Sequence[Index],
        stage: Index,
        index: Index,
        queries: list[SSAValue],
        state: list[SSAValue],
    ) -> list[SSAValue]:
        """The running max, sum and output after key block `index` (in `stage`) at batch
        point `batch`."""
        maxima, sums, outputs = state[:2], state[2:4], state[4:]
        zero = self.float(0.0)
        zeros = self.add_op(vector_dialect.BroadcastOp(zero, VectorType(f32, [4]))).vector
        scores = [zeros] * self.score_atoms
        for step in range(self.k_steps):
            for atom in range(0, self.score_atoms, 2):
                for offset, b in enumerate(self.key_fragments(stage, atom, step)):
                    scores[atom + offset] = self.mma(queries[step], b, scores[atom + offset])
        # Scaled into base 2, masked: each element of each atom, by row half h (rows g, g + 8).
        factor = self.float(self.attention.scale.value.data * math.log2(math.e))
        minus_inf = self.float(-math.inf)
        first_key = self.mul(index, self.block_kv)
        elements: list[list[SSAValue]] = []
        for atom, accumulator in enumerate(scores):
            column_base = self.add(self.add(first_key, atom * 8), self.pair_column)
            row = []
            for i in range(4):
                value = self.add_op(arith.MulfOp(self.element_of(accumulator, i), factor)).result
                keep = []
                column = self.add(column_base, i % 2)
                query = self.add(self.add(self.warp_first_row, self.group_row), 8 * (i // 2))
                if self.attention.mask is not None:
                    value = self.masked(value, batch, query, column)
                if self.keys % self.block_kv:
                    keep.append(self.less(column, self.keys))
                if self.causal:
                    keep.append(self.less(column, self.add(query, 1)))
                condition = self.both(keep)
                if condition is not None:
                    value = self.select(condition, value, minus_inf)
                row.append(value)
            elements.append(row)
        new_maxima, bases, alphas, new_sums = [], [], [], []
        for half in range(2):
            values = [row[i] for row in elements for i in (2 * half, 2 * half + 1)]
            largest = values[0]
            for value in values[1:]:
                largest = self.add_op(arith.MaximumfOp(largest, value)).result
            largest = self.quad(largest, arith.MaximumfOp)
            new_max = self.add_op(arith.MaximumfOp(maxima[half], largest)).result
            new_maxima.append(new_max)
            if self.attention.mask is not None:
                # A row masked whole so far has the max -inf: exponents from 0 keep it at 0
                # (exp2(-inf - -inf) would be NaN) until a key it keeps arrives.
                unset = self.add_op(arith.CmpfOp(new_max, minus_inf, "oeq")).result
                new_max = self.add_op(arith.SelectOp(unset, self.float(0.0), new_max)).result
            bases.append(new_max)
            alphas.append(self.exp2(self.add_op(arith.SubfOp(maxima[half], new_max)).result))
        probabilities = [
            [
                self.exp2(self.add_op(arith.SubfOp(v, bases[i // 2])).result)
                for i, v in enumerate(row)
            ]
            for row in elements
        ]
        for half in range(2):
            total = self.add_op(arith.MulfOp(sums[half], alphas[half])).result
            for row in probabilities:
                for i in (2 * half, 2 * half + 1):
                    total = self.add_op(arith.AddfOp(total, row[i])).result
            new_sums.append(total)
        outputs = [
            self.vector_of(
                [
                    self.add_op(arith.MulfOp(self.element_of(o, i), alphas[i // 2])).result
                    for i in range(4)
                ]
            )
            for o in outputs
        ]
        for step in range(self.block_kv // 16):
            rounded = [
                self.add_op(arith.TruncFOp(p, self.element)).result
                for p in (*probabilities[2 * step], *probabilities[2 * step + 1])
            ]
            a = self.vector_of(rounded)
            for atom in range(0, self.out_atoms, 2):
                for offset, b in enumerate(self.value_fragments(stage, step, atom)):
                    outputs[atom + offset] = self.mma(a, b, outputs[atom + offset])
        return [*new_maxima, *new_sums, *outputs]

    def inverse(self, total: SSAValue) -> SSAValue:
        """1 / `total`, a row's sum; 0 for a row masked whole (a sum of 0, whose outputs are
        0), which only a mask can make."""
        inverse = self.add_op(arith.DivfOp(self.float(1.0), total)).result
        if self.attention.mask is None:
            return inverse
        empty = self.add_op(arith.CmpfOp(total, self.float(0.0), "oeq")).result
        return self.add_op(arith.SelectOp(empty, self.float(0.0), inverse)).result

    def store_rows(self, batch: Sequence[Index], state: list[SSAValue]) -> None:
        """Each lane's output elements divided by its rows' sums, stored two columns at a
        time below L."""
        sums, outputs = state[2:4], state[4:]
        inverses = [self.inverse(self.quad(total, arith.AddfOp)) for total in sums]
        out = self.values[self.attention.out]
        out_type = self.attention.out.type.get_element_type()
        for atom, accumulator in enumerate(outputs):
            column = self.add(atom * 8, self.pair_column)
            for half in range(2):
                row = self.add(self.add(self.warp_first_row, self.group_row), 8 * half)
                pair = []
                for i in (2 * half, 2 * half + 1):
                    value = self.add_op(
                        arith.MulfOp(self.element_of(accumulator, i), inverses[half])
                    ).result
                    if out_type != f32:
                        value = self.add_op(arith.TruncFOp(value, out_type)).result
                    pair.append(value)

                def store(pair=pair, row=row, column=column) -> None:
                    indices = [self.index(i) for i in (*batch, row, column)]
                    self.add_op(kernel.VectorStoreOp(self.vector_of(pair), out, indices))

                inside = self.less(row, self.rows) if self.rows % self.block_q else None
                self.if_then(inside, store)


def lower_attention_kernel(source: tile.KernelOp, target: GpuTarget) -> kernel.FuncOp:
    """The kernel.func of an attention's tile.kernel (see the module docstring)."""
    attention = source.attention
    assert attention is not None
    body, values = kernel_body(source)
    _AttentionBuilder(attention, body, values, target).build()
    return kernel_func(source, body)
