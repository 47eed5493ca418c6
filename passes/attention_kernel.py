"""The Kernel IR of a `tile.attention` on mma_sync tensor cores, FlashAttention-2's loop, for
`lower-tile-to-kernel`.

    tile.attention %q, %k, %v scale 1.250000e-01 causal into %o : memref<1x4x100x64xbf16>, ..
        atom <mma_sync m16n8k16> tile [64, 64, 64] warps [4, 1] pipeline 2

becomes a `kernel.func` in which block x computes rows 64x to 64x + 63 of the G L query rows
of the G query heads that share a key/value head, packed (row g L + i is query head h G + g's
row i, for key/value head h: grid z over the batch and key/value heads; each of the block's
4 warps owns 16 rows), so that a block of a few query rows (decode) takes the queries of
all the heads that read its keys and values, which it reads once for them:

- Shared memory holds the block's query tile and `pipeline` blocks of keys and of values, each
  a tile of rows of the head dim D, in panels of 128 bytes, swizzled (`#kernel.swizzle`): the
  8 rows an ldmatrix reads lie in 8 different bank groups (the tiles of `gemm_kernel`, views
  of the dynamic shared memory where they outgrow the static). cp.async copies them 16 bytes
  at a time, rows past the end of G L or S zero-filled; the queries and the first
  `pipeline - 1` key/value blocks first, then in iteration j block j + pipeline - 1, after a
  barrier that orders it after every warp's use of the stage it overwrites.
- Each warp loads its 16 x D queries into registers once (ldmatrix x4 per 16 columns). Per
  key block it computes S = Q K^T in m16n8k16 atoms (K's [keys, D] tile is B as [N, K]:
  ldmatrix x4 of two atoms) and masks it to -inf where a key is past S or, causal, after the
  query; then the online softmax, in registers, with c = `scale * log2(e)`: the row max of
  the lane's elements and its quad's (`kernel.shuffle xor` 1 and 2: the 4 lanes holding a
  row), m' = max(m, c max), P = exp2(c S - m') (one fma and the hardware's exp2 an element;
  with a mask operand, added to the scaled scores, S is scaled first and c is 1), the running
  sum l = l exp2(m - m') + the lane's sum of P, and O rescaled by exp2(m - m'). P's
  accumulators, rounded to the input type, are the A fragments of P V as they are (atoms 2i
  and 2i + 1 of S are A's k-step i), and V's [keys, D] tile is B as [K, N] (ldmatrix x4
  trans).
- Causal, the block stops after the key block that holds its last query's position (the
  blocks wholly above the diagonal are skipped), and masks the scores past the diagonal and
  the last key only in the blocks from the first that crosses the diagonal or holds the last
  keys: before it, a uniform branch passes the scores through without mask arithmetic (one
  loop body: a second loop for the crossing blocks costs registers that D 128 spills).
  Without causal, the keys past the last are masked in every block (the wgmma kernel's
  blocks branch as the causal ones do: `tail_mask_branch`). A mask operand is read
  where each score is, from global memory: an i1 mask's false gives -inf, a float mask is
  added (times log2(e)); a row whose keys so far are all masked keeps its max at -inf and
  takes its exponents from 0, so that the keys it keeps later count in full; a row masked
  whole ends with a sum of 0 and gives zeros (its inverse taken as 0), as torch's sdpa does.
- At the end each lane sums its quad's l, divides its O by it and stores its query rows, two
  columns at a time, in the output's type.
- Split (flash-decoding, `split S`: block y takes part y of the key blocks), the rows go in
  f32 into the part's slice of a workspace, with each row's base-2 log-sum-exp m + log2(l);
  then, between barriers, thread 0 arrives at the rows' counter with an acq_rel
  `kernel.atomic inc` (S - 1: it counts 0 to S - 1, then back to 0 for the next launch). The
  block that arrives last, and so sees every other part's stores, combines them in the same
  launch: each row, 4 columns a thread, is the parts' rows weighted by 2^(log-sum-exp - the
  largest) over the weights' sum, merged online 16 parts at a time. A separate combining
  kernel cost its launch and a pass over the workspace after the last part, where here only
  the last part of each row waits.

        kernel.barrier
        scf.if %thread_0 {
          %old = kernel.atomic inc acq_rel %c3_i32, %arrivals[%rows] : memref<2xi32>
          memref.store %old, %arrived[%c0] : memref<1xi32, 3 : i32>
        }
        kernel.barrier
        %last = arith.cmpi eq, (memref.load %arrived[%c0]), %c3_i32 : i32
        scf.if %last { (the rows' parts combined into the output) }

Over the dynamic size (`emmy.dialects.sizes`), the query rows L, the keys S or both are the
kernel's size argument: the blocks stride along x through the ceil(G L / BQ) row blocks, as
many as the launch's `sized` gives, each after a barrier; the key blocks are counted from S,
and the rows and keys past the size are handled as a static tail's (copies zero-filled,
scores masked, stores predicated). Attention over the dynamic size takes mma_sync.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from math import prod

from xdsl.dialects import arith, memref, scf
from xdsl.dialects import math as math_dialect
from xdsl.dialects import vector as vector_dialect
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerType,
    MemRefType,
    VectorType,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from emmy.dialects import kernel, tile
from emmy.dialects.attention import kv_group, packed_row_blocks
from emmy.dialects.launch import kernel_size_argument
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

COMBINE_WIDTH = 4
"""The f32 columns of a part's row that a thread of the combining block loads at once (16
bytes)."""

COMBINED_AT_ONCE = 16
"""The parts whose rows a thread of the combining block loads before it adds them up, in each
iteration of a loop: all of a split of 66 at once would take 264 registers (and spill)."""


def mask_point(shape: Sequence[int], point: Sequence[Index]) -> list[Index]:
    """The indices of a mask of `shape` at `point` of the scores (or of their leading dims),
    which it broadcasts to: aligned at the last dims, 0 along a dim of size 1."""
    return [0 if size == 1 else i for size, i in zip(shape, point[len(point) - len(shape) :])]


class _Emitter(KernelEmitter):
    """A KernelEmitter with f32 constants."""

    def float(self, value: float) -> SSAValue:
        return self.add_op(arith.ConstantOp(FloatAttr(value, f32))).results[0]


class AttentionEmitter(_Emitter):
    """What attention's kernels on mma_sync (here) and on wgmma
    (`emmy.passes.wgmma_attention_kernel`) compute alike, on the f32 accumulators of S = Q K^T
    in the fragment layout both share (a warp's 16 rows, element i of atom a of a lane at row
    g + 8 (i / 2), key 8 a + 2 q + i % 2): which key blocks a block of rows takes, the scores
    scaled into base 2 and masked, the online softmax of a key block, P's A fragments, and the
    output rows divided by their sums and stored. A subclass says where its lanes' rows are
    (`lane_row_point`); `packed` blocks take the rows of the query heads that share a
    key/value head together (see `query_point`)."""

    row_max: type[arith.MaximumfOp | arith.MaxnumfOp] = arith.MaximumfOp
    """The op of the softmax's row max. Either is right: a NaN score that maxnumf passes over
    still makes its probability, and so its row, NaN. maxnumf is one instruction, maximumf
    five (NaN and signed zeros), but with maxnumf ptxas schedules the split decode kernel
    into 255 registers and spills; a subclass whose softmax competes with its tensor cores
    for issue slots takes maxnumf."""

    tail_mask_branch = False
    """Whether, without causal, only the key block holding the last keys masks those past
    them, behind a uniform branch (`key_ranges`), instead of every block. The branch saves
    the other blocks' compares and selects, but on mma_sync it takes the registers that a
    head dim of 128 then spills; a subclass whose softmax competes with its tensor cores for
    issue slots takes it."""

    def __init__(
        self,
        attention: tile.AttentionOp,
        body: Block,
        values: dict[SSAValue, SSAValue],
        target: GpuTarget,
        packed: bool,
    ):
        super().__init__(body, values, target)
        self.attention = attention
        size = kernel_size_argument(attention)

        def extent(dim: int) -> Index:
            """A static extent, or the kernel's size argument for the dynamic one."""
            return values[size] if dim == DYNAMIC_INDEX and size is not None else dim

        *self.batch_sizes, rows, self.depth = attention.query.type.get_shape()
        self.rows = extent(rows)
        self.dynamic_rows = rows == DYNAMIC_INDEX
        self.keys = extent(attention.key.type.get_shape()[-2])
        self.group = kv_group(attention.query.type.get_shape(), attention.key.type.get_shape())
        self.packed_group = self.group if packed else 1
        self.packed_rows = self.mul(self.rows, self.packed_group)
        self.block_q, self.block_kv, _ = attention.tile_shape
        self.stages = attention.pipeline_depth
        self.split = attention.split_count
        self.element = attention.query.type.get_element_type()
        self.element_bytes = kernel.element_bytes(self.element)
        self.causal = attention.causal is not None
        self.key_block_count = self.ceil_div(self.keys, self.block_kv)
        self.part: Index = 0
        self.workspace: Sequence[SSAValue] = ()
        # Only a mask, or causal keys in a part of the keys after a row's position, leave a
        # row no key in a block it takes.
        self.may_mask_whole = attention.mask is not None or (self.causal and self.split > 1)

    def lane_row_point(self, half: int) -> tuple[SSAValue | None, list[Index], Index]:
        """Whether the lane's row of accumulator half `half` (rows g, g + 8 of its warp's 16)
        is a query row, its batch indices and its position (those of row 0 where it is not:
        rows past the end are computed, never stored)."""
        raise NotImplementedError

    def element_of(self, vector: SSAValue, position: int) -> SSAValue:
        return self.add_op(vector_dialect.ExtractOp(vector, [position], f32)).result

    def quad(self, value: SSAValue, combine: type) -> SSAValue:
        """`value` combined over the 4 lanes that hold one row of an accumulator."""
        for offset in (1, 2):
            other = self.add_op(kernel.ShuffleOp("xor", value, self.constant(offset, i32)))
            value = self.add_op(combine(value, other.results[0])).results[0]
        return value

    def exp2(self, value: SSAValue) -> SSAValue:
        # Approximate (`afn`): the hardware's exp2 alone, flushing results below 2^-126 to 0,
        # which no probability that the row's max (exp2(0) = 1) joins in a sum can show.
        flags = arith.FastMathFlagsAttr((arith.FastMathFlag.APPROX_FUNC,))
        return self.add_op(math_dialect.Exp2Op(value, flags)).results[0]

    def minimum(self, lhs: Index, rhs: Index) -> Index:
        if isinstance(lhs, int) and isinstance(rhs, int):
            return min(lhs, rhs)
        return self.add_op(arith.MinUIOp(self.index(lhs), self.index(rhs))).results[0]

    def query_point(self, kv_batch: Sequence[Index], row: Index) -> tuple[list[Index], Index]:
        """The batch indices and the position of packed row `row` of key/value head point
        `kv_batch`: row g L + i is query head h G + g's row i (G query heads a key/value
        head h, L rows a head); unpacked, `kv_batch` is the query's batch point and `row`
        its position."""
        if self.packed_group == 1:
            return list(kv_batch), row
        head = self.add(self.mul(kv_batch[-1], self.packed_group), self.div(row, self.rows))
        return [*kv_batch[:-1], head], self.rem(row, self.rows)

    def positions(self) -> tuple[Index, Index]:
        """The first and last position of the block's query rows, bounds where its rows
        span heads."""
        if self.packed_group == 1:
            return self.first_row, self.add(self.first_row, self.block_q - 1)
        if self.rows == 1:
            return 0, 0
        last_row = self.minimum(
            self.add(self.first_row, self.block_q - 1), self.add(self.packed_rows, -1)
        )
        heads = [self.div(row, self.rows) for row in (self.first_row, last_row)]
        spans = self.add_op(arith.CmpiOp(*map(self.index, heads), "ne")).result
        first = self.select(spans, 0, self.rem(self.first_row, self.rows))
        return first, self.select(spans, self.add(self.rows, -1), self.rem(last_row, self.rows))

    def key_ranges(self) -> tuple[Index, Index, Index | None]:
        """The key blocks the block takes, from the first to the end: its part of them, up to
        (causal) the one holding its last query's position (the blocks wholly above the
        diagonal are skipped); and the first block from which blocks are masked: (causal)
        the first that crosses the diagonal, or (`tail_mask_branch`) the one holding the last
        keys where a block reaches past them (None: none is, or every block masks the keys
        past the last)."""
        blocks = self.key_block_count
        start = self.div(self.mul(self.part, blocks), self.split)
        end = self.div(self.mul(self.add(self.part, 1), blocks), self.split)
        if not self.causal:
            if self.tail_mask_branch and self.overruns(self.keys, self.block_kv):
                return start, end, self.div(self.keys, self.block_kv)
            return start, end, None
        first, last = self.positions()
        end = self.minimum(end, self.div(self.add(last, self.block_kv), self.block_kv))
        unmasked = self.div(self.add(first, 1), self.block_kv)
        if self.overruns(self.keys, self.block_kv):
            unmasked = self.minimum(unmasked, self.div(self.keys, self.block_kv))
        return start, end, unmasked

    def mask_element(self, batch: Sequence[Index], position: Index, column: Index) -> SSAValue:
        """The mask operand's element at the query row at `batch`, `position` and key
        `column`, loaded. The mask broadcasts to the scores' shape; keys past the end read
        element 0."""
        mask = self.attention.mask
        if self.overruns(self.keys, self.block_kv):
            column = self.select(self.less(column, self.keys), column, 0)
        point = mask_point(mask.type.get_shape(), [*batch, position, column])
        return self.add_op(memref.LoadOp.get(self.values[mask], [self.index(i) for i in point])).res

    def score_columns(self, index: Index, atoms: int) -> list[list[Index]]:
        """The keys of the lane's scores of key block `index`: element i of atom a."""
        first_key = self.mul(index, self.block_kv)
        return [
            [
                self.add(self.add(self.add(first_key, atom * 8), self.pair_column), i % 2)
                for i in range(4)
            ]
            for atom in range(atoms)
        ]

    def mask_elements(self, columns: list[list[Index]]) -> list[list[SSAValue]]:
        """The mask operand's elements at the lane's scores of keys `columns`
        (`score_columns`: element i of atom a), loaded: where they are loaded before the
        scores are waited for, their latency passes while the tensor cores multiply (the
        wgmma kernel)."""
        lane_rows = [self.lane_row_point(half)[1:] for half in range(2)]
        return [
            [self.mask_element(*lane_rows[i // 2], columns[atom][i]) for i in range(4)]
            for atom in range(len(columns))
        ]

    def masked(self, value: SSAValue, element: SSAValue) -> SSAValue:
        """The base-2 score `value` under the mask's `element` (`mask_element`): -inf where an
        i1 mask is false, plus the float mask's element (times log2(e))."""
        if isinstance(element.type, IntegerType):
            minus_inf = self.float(-math.inf)
            return self.add_op(arith.SelectOp(element, value, minus_inf)).result
        if element.type != f32:
            element = self.add_op(arith.ExtFOp(element, f32)).result
        scaled = self.add_op(arith.MulfOp(element, self.float(math.log2(math.e)))).result
        return self.add_op(arith.AddfOp(value, scaled)).result

    def mask_positions(
        self,
        elements: list[list[SSAValue]],
        columns: list[list[Index]],
        positions: Sequence[Index] | None,
    ) -> list[list[SSAValue]]:
        """`elements` with -inf where the key is past the last and (causal: given the
        positions of the lane's rows of each accumulator half) where it is after the row's
        position."""
        minus_inf = self.float(-math.inf)
        masked = []
        for row, row_columns in zip(elements, columns):
            masked_row = []
            for i, (value, column) in enumerate(zip(row, row_columns)):
                keep = []
                if self.overruns(self.keys, self.block_kv):
                    keep.append(self.less(column, self.keys))
                if positions is not None:
                    keep.append(self.less(column, self.add(positions[i // 2], 1)))
                condition = self.both(keep)
                if condition is not None:
                    value = self.select(condition, value, minus_inf)
                masked_row.append(value)
            masked.append(masked_row)
        return masked

    def masked_scores(
        self,
        raw: list[list[SSAValue]],
        index: Index,
        masked_from: Index | None,
        mask: list[list[SSAValue]] | None = None,
    ) -> tuple[list[list[SSAValue]], float]:
        """The lane's scores of key block `index`, `raw[a][i]` (element i of its atom a),
        masked, and the factor that puts them in base 2 (`scale * log2(e)`), left to the
        softmax's fma where it is positive and no mask operand is added to the scaled scores
        (else applied here, and the factor is 1). A mask operand's elements are `mask`'s
        where given (`mask_elements`, loaded earlier), else loaded here. A block from
        `masked_from` on (`key_ranges`) masks its scores past the last key and, causal,
        after each row's position; the blocks before it take no mask arithmetic (a uniform
        branch). Without `masked_from`, every block masks the keys past the last."""
        base_2 = self.attention.scale.value.data * math.log2(math.e)
        unscaled = base_2 > 0 and self.attention.mask is None
        factor = self.float(base_2)
        if self.attention.mask is not None and mask is None:
            mask = self.mask_elements(self.score_columns(index, len(raw)))
        elements = []
        for atom, accumulator in enumerate(raw):
            row = []
            for i in range(4):
                value = accumulator[i]
                if not unscaled:
                    value = self.add_op(arith.MulfOp(value, factor)).result
                if mask is not None:
                    value = self.masked(value, mask[atom][i])
                row.append(value)
            elements.append(row)
        if masked_from is None:
            if self.overruns(self.keys, self.block_kv):
                columns = self.score_columns(index, len(raw))
                elements = self.mask_positions(elements, columns, None)
        else:
            flat = [v for row in elements for v in row]

            def mask(_: Block) -> list[SSAValue]:
                # The keys and rows are computed in the branch, which alone uses them.
                columns = self.score_columns(index, len(raw))
                positions = None
                if self.causal:
                    positions = [self.lane_row_point(half)[2] for half in range(2)]
                masked = self.mask_positions(elements, columns, positions)
                return [v for row in masked for v in row]

            taken = self.nested(mask)
            kept = Block()
            kept.add_op(scf.YieldOp(*flat))
            crossing = self.less(index, masked_from)
            branch = self.add_op(scf.IfOp(crossing, [f32] * len(flat), Region(kept), Region(taken)))
            elements = [list(branch.results[4 * a : 4 * a + 4]) for a in range(len(raw))]
        return elements, base_2 if unscaled else 1.0

    def online_softmax(
        self,
        elements: list[list[SSAValue]],
        factor: float,
        maxima: list[SSAValue],
        sums: list[SSAValue],
    ) -> tuple[list[SSAValue], list[SSAValue], list[list[SSAValue]], list[SSAValue]]:
        """One key block's step of the online softmax of the lane's rows (halves g, g + 8),
        from its scores, which `factor` (> 0) puts in base 2 (`masked_scores`): the new
        running maxima (over the quad: `kernel.shuffle xor` 1 and 2), the factors
        exp2(m - m') that rescale what went before, the probabilities exp2(s factor - m')
        (one fma each) and the new running sums (the lane's own part). The lane's maxima and
        sums are chains (`chained`): as balanced trees (`reduced`) the causal B4 H32 S4096
        prefill took 3% longer on an H100, the others as long
        (`benchmarks/h100/2026-12-07-seventh/variants.json`)."""
        new_maxima, bases, alphas, new_sums = [], [], [], []
        for half in range(2):
            values = [row[i] for row in elements for i in (2 * half, 2 * half + 1)]
            largest = self.quad(self.chained(values, self.row_max), self.row_max)
            if factor != 1.0:
                # The max of the scaled scores, rounded as each of them would be (rounding
                # is monotonic).
                largest = self.add_op(arith.MulfOp(largest, self.float(factor))).result
            new_max = self.add_op(self.row_max(maxima[half], largest)).result
            new_maxima.append(new_max)
            if self.may_mask_whole:
                # A row masked whole so far has the max -inf: exponents from 0 keep it at 0
                # (exp2(-inf - -inf) would be NaN) until a key it keeps arrives.
                unset = self.add_op(arith.CmpfOp(new_max, self.float(-math.inf), "oeq")).result
                new_max = self.add_op(arith.SelectOp(unset, self.float(0.0), new_max)).result
            bases.append(self.add_op(arith.NegfOp(new_max)).result)
            alphas.append(self.exp2(self.add_op(arith.SubfOp(maxima[half], new_max)).result))
        scale = self.float(factor)
        probabilities = [
            [
                self.exp2(self.add_op(math_dialect.FmaOp(v, scale, bases[i // 2])).result)
                for i, v in enumerate(row)
            ]
            for row in elements
        ]
        for half in range(2):
            rescaled = self.add_op(arith.MulfOp(sums[half], alphas[half])).result
            values = [row[i] for row in probabilities for i in (2 * half, 2 * half + 1)]
            block_sum = self.chained(values, arith.AddfOp)
            new_sums.append(self.add_op(arith.AddfOp(rescaled, block_sum)).result)
        return new_maxima, alphas, probabilities, new_sums

    def probability_fragment(self, probabilities: list[list[SSAValue]], step: int) -> SSAValue:
        """P's A fragment of k-step `step` (keys 16 step on), rounded to the input type: the
        score atoms 2 step and 2 step + 1 as they are. The A fragment of m16n8k16 (and of
        wgmma m64nNk16 from registers, each warp's 16 rows) holds element i at row g + 8 ((i
        / 2) % 2), column 2q + i % 2 + 8 (i / 4), and atom a's element i of the scores is at
        row g + 8 (i / 2), key 8 a + 2q + i % 2: elements 0-3 of atom 2 step are A's 0-3,
        those of atom 2 step + 1 A's 4-7 (PTX ISA, "Matrix Fragments for mma.m16n8k16" and
        "Register Fragments for wgmma .m64nNk16")."""
        return self.vector_of(
            [
                self.add_op(arith.TruncFOp(p, self.element)).result
                for p in (*probabilities[2 * step], *probabilities[2 * step + 1])
            ]
        )

    def output_pair(
        self, accumulator: list[SSAValue], half: int, inverse: SSAValue, out_type: Attribute
    ) -> list[SSAValue]:
        """The lane's two output elements of an atom's `accumulator` in its row of half
        `half`, multiplied by the row's `inverse` sum, in `out_type`."""
        pair = []
        for i in (2 * half, 2 * half + 1):
            value = self.add_op(arith.MulfOp(accumulator[i], inverse)).result
            if out_type != f32:
                value = self.add_op(arith.TruncFOp(value, out_type)).result
            pair.append(value)
        return pair

    def inverse(self, total: SSAValue) -> SSAValue:
        """1 / `total`, a row's sum; 0 for a row with no key (a sum of 0, whose outputs are
        0), which only a mask or a part of the keys (split) can leave."""
        inverse = self.add_op(arith.DivfOp(self.float(1.0), total)).result
        if not self.may_mask_whole and self.split == 1:
            return inverse
        empty = self.add_op(arith.CmpfOp(total, self.float(0.0), "oeq")).result
        return self.add_op(arith.SelectOp(empty, self.float(0.0), inverse)).result

    def store_rows(
        self, maxima: list[SSAValue], sums: list[SSAValue], outputs: list[list[SSAValue]]
    ) -> None:
        """Each lane's output elements (`outputs[a][i]`, element i of its atom a) divided by
        its rows' sums, stored two columns at a time for the query rows: into the output, or
        (split) in f32 into the block's part of the workspace, with each row's base-2
        log-sum-exp m + log2(l) (-inf for a row with no key in the part), which the lane
        holding its first two columns stores."""
        totals = [self.quad(total, arith.AddfOp) for total in sums]
        inverses = [self.inverse(total) for total in totals]
        if self.split == 1:
            out = self.values[self.attention.out]
            out_type = self.attention.out.type.get_element_type()
            part = []
        else:
            out, sums_out, _ = self.workspace
            out_type, part = f32, [self.part]
        for half in range(2):
            inside, batch, position = self.lane_row_point(half)
            for atom, accumulator in enumerate(outputs):
                column = self.add(atom * 8, self.pair_column)
                pair = self.output_pair(accumulator, half, inverses[half], out_type)

                def store(pair=pair, column=column) -> None:
                    indices = [self.index(i) for i in (*part, *batch, position, column)]
                    self.add_op(kernel.VectorStoreOp(self.vector_of(pair), out, indices))

                self.if_then(inside, store)
            if self.split == 1:
                continue
            logarithm = self.add_op(math_dialect.Log2Op(totals[half])).result
            log_sum = self.add_op(arith.AddfOp(maxima[half], logarithm)).result

            def store_log_sum(log_sum=log_sum, batch=batch, position=position) -> None:
                indices = [self.index(i) for i in (self.part, *batch, position)]
                self.add_op(memref.StoreOp.get(log_sum, sums_out, indices))

            first_lane = self.equal(self.pair_column, 0)
            self.if_then(
                self.both([c for c in (inside, first_lane) if c is not None]), store_log_sum
            )


class _AttentionBuilder(AttentionEmitter):
    """Builds the kernel of one tile.attention on mma_sync (see the module docstring)."""

    def __init__(
        self,
        attention: tile.AttentionOp,
        body: Block,
        values: dict[SSAValue, SSAValue],
        target: GpuTarget,
        workspace: Sequence[SSAValue] = (),
    ):
        super().__init__(attention, body, values, target, packed=True)
        self.workspace = workspace
        self.threads = attention.warp_grid[0] * target.warp_size
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
        point: Callable[[Index], list[Index]],
        first_row: Index,
        extent: Index,
    ) -> None:
        """The block's cp.asyncs of rows `first_row` on of its operand (of `extent` rows, row
        r at the indices `point(r)`, then the column) into stage `stage` of `shared`; rows
        past the extent read nothing and fill zeros."""
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
                if self.overruns(extent, tiles.rows):
                    valid = self.less(position, extent)
                    position = self.select(valid, position, 0)
                    size = self.constant(COPY_BYTES, i32)
                    source_bytes = self.select(valid, size, self.constant(0, i32))
                panel, within = self.panel_column(tiles, column)
                destination = [self.index(i) for i in (stage, panel, row, within)]
                indices = [self.index(i) for i in (*point(position), column)]
                self.add_op(
                    kernel.CpAsyncOp(shared, destination, source, indices, COPY_BYTES, source_bytes)
                )

            self.if_then(guard, copy_chunk)

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
        self.part = self.add_op(kernel.BlockIdOp("y")).results[0] if self.split > 1 else 0
        if self.split > 1:
            arrived = kernel.SharedAllocOp(kernel.shared_memref([1], i32))
            self.arrived = self.named(arrived, "arrived")
        if not self.dynamic_rows:
            self.row_block(block_x)
        else:
            # The blocks stride through the row blocks that the size gives.
            grid_x = self.add_op(kernel.GridDimOp("x")).results[0]
            row_blocks = self.ceil_div(self.packed_rows, self.block_q)

            def row_block_body(block: Block) -> None:
                # The tiles of the previous row block may still be read.
                self.add_op(kernel.BarrierOp())
                self.row_block(block.args[0])

            body = self.nested(row_block_body, [IndexType()])
            self.add_op(scf.ForOp(block_x, self.index(row_blocks), grid_x, [], body))
        self.place_constants()

    def row_block(self, row_block: Index) -> None:
        """The rows of row block `row_block` at every batch point the block takes."""
        self.first_row = self.mul(row_block, self.block_q)
        self.warp_first_row = self.add(self.first_row, self.mul(self.warp, 16))
        kv_batch_sizes = list(self.batch_sizes)
        if self.group > 1:
            kv_batch_sizes[-1] //= self.group
        batches = prod(kv_batch_sizes)
        if batches == 1:
            self.arrival = row_block
            self.block_rows([0] * len(kv_batch_sizes))
        else:
            block_z = self.add_op(kernel.BlockIdOp("z")).results[0]
            grid_z = self.add_op(kernel.GridDimOp("z")).results[0]
            row_blocks = self.ceil_div(self.packed_rows, self.block_q)

            def batch_body(block: Block) -> None:
                # The tiles of the previous batch point may still be read.
                self.add_op(kernel.BarrierOp())
                self.arrival = self.add(self.mul(block.args[0], row_blocks), row_block)
                self.block_rows(self.point_of(block.args[0], kv_batch_sizes))

            body = self.nested(batch_body, [IndexType()])
            self.add_op(scf.ForOp(block_z, self.constant(batches), grid_z, [], body))

    def block_rows(self, kv_batch: Sequence[Index]) -> None:
        """The block's query rows at key/value batch point `kv_batch`."""
        self.kv_batch = kv_batch
        stages = self.stages
        start, end, masked_from = self.key_ranges()

        def load_block(index: Index) -> None:
            stage, first = self.rem(index, stages), self.mul(index, self.block_kv)
            for tiles, shared in ((self.k_tiles, self.shared_k), (self.v_tiles, self.shared_v)):
                self.copy_tile(tiles, shared, stage, lambda row: [*kv_batch, row], first, self.keys)

        def query_row(row: Index) -> list[Index]:
            batch, position = self.query_point(kv_batch, row)
            return [*batch, position]

        self.copy_tile(self.q_tiles, self.shared_q, 0, query_row, self.first_row, self.packed_rows)
        self.add_op(kernel.CpAsyncCommitOp())
        for index in range(stages - 1):
            ahead = self.add(start, index)
            self.if_then(self.less(ahead, end), lambda ahead=ahead: load_block(ahead))
            self.add_op(kernel.CpAsyncCommitOp())
        self.add_op(kernel.CpAsyncWaitOp(stages - 1))
        self.add_op(kernel.BarrierOp())
        queries = [self.query_fragment(step) for step in range(self.k_steps)]
        minus_inf = self.float(-math.inf)
        zero = self.float(0.0)
        zeros = self.add_op(vector_dialect.BroadcastOp(zero, VectorType(f32, [4]))).vector
        state = [minus_inf, minus_inf, zero, zero, *[zeros] * self.out_atoms]

        def key_loop(block: Block) -> list[SSAValue]:
            index, *carried = block.args
            self.add_op(kernel.CpAsyncWaitOp(stages - 2))
            self.add_op(kernel.BarrierOp())
            ahead = self.add(index, stages - 1)
            self.if_then(self.less(ahead, end), lambda: load_block(ahead))
            self.add_op(kernel.CpAsyncCommitOp())
            stage = self.rem(index, stages)
            return self.key_block(stage, index, queries, carried, masked_from)

        body = self.nested(key_loop, [IndexType()] + [value.type for value in state])
        loop = self.add_op(
            scf.ForOp(self.index(start), self.index(end), self.constant(1), state, body)
        )
        state = list(loop.results)
        outputs = [[self.element_of(o, i) for i in range(4)] for o in state[4:]]
        self.store_rows(state[:2], state[2:4], outputs)
        if self.split > 1:
            self.combine_if_last()

    def combine_if_last(self) -> None:
        """After the block's part of its rows is in the workspace: its arrival at their
        counter (thread 0's, acq_rel, which the barriers around it make the block's), and if
        it is the last of the split's, the combining of every part of the rows."""
        *_, arrivals = self.workspace
        self.add_op(kernel.BarrierOp())
        last = self.constant(self.split - 1, i32)

        def arrive() -> None:
            counter = [self.index(self.arrival)]
            old = self.add_op(kernel.AtomicOp("inc", last, arrivals, counter, acq_rel=True))
            self.add_op(memref.StoreOp.get(old.result, self.arrived, [self.index(0)]))

        self.if_then(self.equal(self.thread_id, 0), arrive)
        self.add_op(kernel.BarrierOp())
        arrived = self.add_op(memref.LoadOp.get(self.arrived, [self.index(0)])).res
        is_last = self.add_op(arith.CmpiOp(arrived, last, "eq")).result
        self.if_then(is_last, self.combine_parts)

    def combine_parts(self) -> None:
        """The output rows of the block: each part's rows weighted by 2^(log-sum-exp - max),
        over the weights' sum (0 where no part has a key), merged online COMBINED_AT_ONCE
        parts at a time, `COMBINE_WIDTH` columns a thread, the threads strided over the rows'
        column runs."""
        parts_out, log_sums_in, _ = self.workspace
        columns = self.attention.out.type.get_shape()[-1]
        width = math.gcd(columns, COMBINE_WIDTH)
        runs = columns // width
        rows = self.minimum(self.block_q, self.sub(self.packed_rows, self.first_row))
        threads = self.constant(self.threads)

        def item_body(block: Block) -> None:
            row = self.add(self.first_row, self.div(block.args[0], runs))
            column = self.mul(self.rem(block.args[0], runs), width)
            batch, position = self.query_point(self.kv_batch, row)

            minus_inf = self.float(-math.inf)

            def merged(first: Index, count: int, state: Sequence[SSAValue]) -> list[SSAValue]:
                """The running (largest log-sum-exp, sum of weights, weighted sums of the
                columns) `state` after parts `first` to `first + count - 1`, whose loads are
                issued at once (unrolled), so that their latencies overlap: this block's
                combining is what its rows' last part waits for."""
                largest, total, *sums = state
                parts = [self.add(first, offset) for offset in range(count)]
                log_sums = [
                    self.add_op(
                        memref.LoadOp.get(
                            log_sums_in, [self.index(i) for i in (p, *batch, position)]
                        )
                    ).res
                    for p in parts
                ]
                runs_in = [
                    self.add_op(
                        kernel.VectorLoadOp(
                            parts_out, [self.index(i) for i in (p, *batch, position, column)], width
                        )
                    ).results[0]
                    for p in parts
                ]
                new_largest = self.reduced([largest, *log_sums], arith.MaximumfOp)
                # Where no part so far has a key, every weight is 2^-inf = 0 either way.
                unset = self.add_op(arith.CmpfOp(new_largest, minus_inf, "oeq")).result
                base = self.add_op(arith.SelectOp(unset, self.float(0.0), new_largest)).result

                def weight(value: SSAValue) -> SSAValue:
                    difference = self.add_op(arith.SubfOp(value, base)).result
                    return self.add_op(math_dialect.Exp2Op(difference)).result

                rescale, *weights = [weight(v) for v in (largest, *log_sums)]

                def scaled(value: SSAValue, factor: SSAValue) -> SSAValue:
                    return self.add_op(arith.MulfOp(value, factor)).result

                new_total = self.reduced([scaled(total, rescale), *weights], arith.AddfOp)
                new_sums = [
                    self.reduced(
                        [
                            scaled(sums[i], rescale),
                            *(
                                scaled(w, self.element_of(run, i))
                                for w, run in zip(weights, runs_in)
                            ),
                        ],
                        arith.AddfOp,
                    )
                    for i in range(width)
                ]
                return [new_largest, new_total, *new_sums]

            def chunk_body(block: Block) -> list[SSAValue]:
                return merged(block.args[0], COMBINED_AT_ONCE, block.args[1:])

            whole = self.split // COMBINED_AT_ONCE * COMBINED_AT_ONCE
            state = [minus_inf, *[self.float(0.0)] * (width + 1)]
            if whole:
                body = self.nested(chunk_body, [IndexType(), *[f32] * (width + 2)])
                step = self.constant(COMBINED_AT_ONCE)
                chunks = scf.ForOp(self.constant(0), self.constant(whole), step, state, body)
                state = list(self.add_op(chunks).results)
            if whole < self.split:
                state = merged(whole, self.split - whole, state)
            _, total, *sums = state
            inverse = self.inverse(total)
            out_type = self.attention.out.type.get_element_type()
            values = []
            for value in sums:
                value = self.add_op(arith.MulfOp(value, inverse)).result
                if out_type != f32:
                    value = self.add_op(arith.TruncFOp(value, out_type)).result
                values.append(value)
            out = self.values[self.attention.out]
            indices = [self.index(i) for i in (*batch, position, column)]
            self.add_op(kernel.VectorStoreOp(self.vector_of(values), out, indices))

        body = self.nested(item_body, [IndexType()])
        items = self.index(self.mul(rows, runs))
        self.add_op(scf.ForOp(self.thread_id, items, threads, [], body))

    def lane_row_point(self, half: int) -> tuple[SSAValue | None, list[Index], Index]:
        """Whether the lane's row of accumulator half `half` (rows g, g + 8 of its warp's 16)
        is a query row, its batch indices and its position (those of row 0 where it is not:
        rows past the end are computed, never stored)."""
        row = self.add(self.add(self.warp_first_row, self.group_row), 8 * half)
        inside = None
        if self.overruns(self.packed_rows, self.block_q):
            inside = self.less(row, self.packed_rows)
            row = self.select(inside, row, 0)
        batch, position = self.query_point(self.kv_batch, row)
        return inside, batch, position

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

    def mma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        return self.add_op(kernel.MmaSyncOp(kernel.MmaShape.M16N8K16, a, b, c)).result

    def key_block(
        self,
        stage: Index,
        index: Index,
        queries: list[SSAValue],
        state: list[SSAValue],
        masked_from: Index | None,
    ) -> list[SSAValue]:
        """The running max, sum and output after key block `index` (in `stage`), its scores
        masked from `masked_from` on (`masked_scores`)."""
        maxima, sums, outputs = state[:2], state[2:4], state[4:]
        zero = self.float(0.0)
        zeros = self.add_op(vector_dialect.BroadcastOp(zero, VectorType(f32, [4]))).vector
        scores = [zeros] * self.score_atoms
        for step in range(self.k_steps):
            for atom in range(0, self.score_atoms, 2):
                for offset, b in enumerate(self.key_fragments(stage, atom, step)):
                    scores[atom + offset] = self.mma(queries[step], b, scores[atom + offset])
        raw = [[self.element_of(accumulator, i) for i in range(4)] for accumulator in scores]
        elements, factor = self.masked_scores(raw, index, masked_from)
        new_maxima, alphas, probabilities, new_sums = self.online_softmax(
            elements, factor, maxima, sums
        )
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
            a = self.probability_fragment(probabilities, step)
            for atom in range(0, self.out_atoms, 2):
                for offset, b in enumerate(self.value_fragments(stage, step, atom)):
                    outputs[atom + offset] = self.mma(a, b, outputs[atom + offset])
        return [*new_maxima, *new_sums, *outputs]


def attention_workspace(attention: tile.AttentionOp) -> list[MemRefType]:
    """The buffers a split attention's parts leave for the last of them to combine: each
    part's normalised output rows [split, ..., H, L, Ev] and their base-2 log-sum-exps
    [split, ..., H, L] (f32, fresh each run), and the arrival counters (i32, one for each
    block of rows, which hold 0 between launches); none without a split."""
    split = attention.split_count
    if split == 1:
        return []
    shape = attention.out.type.get_shape()
    query, key = (v.type.get_shape() for v in (attention.query, attention.key))
    return [
        MemRefType(f32, [split, *shape]),
        MemRefType(f32, [split, *shape[:-1]]),
        MemRefType(i32, [packed_row_blocks(query, key, attention.tile_shape[0])]),
    ]


def lower_attention_kernel(source: tile.KernelOp, target: GpuTarget) -> kernel.FuncOp:
    """The kernel.func of an attention's tile.kernel (see the module docstring): with a
    split, it takes the workspace's buffers after the tile.kernel's arguments."""
    attention = source.attention
    assert attention is not None
    types = attention_workspace(attention)
    body, values = kernel_body(source, types)
    workspace = body.args[len(body.args) - len(types) :]
    _AttentionBuilder(attention, body, values, target, workspace).build()
    return kernel_func(source, body)
