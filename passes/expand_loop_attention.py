"""`expand-loop-attention`: a `loop.attention` becomes scalar loop nests, a row softmax
between two products recomputed from the buffers.

    loop.attention %q, %k, %v scale 1.250000e-01 causal into %o
        : memref<2x8x4xf32>, memref<2x6x4xf32>, memref<2x6x4xf32> into memref<2x8x4xf32>

becomes

    loop.for %b in 0 to 2 {
      loop.for %i in 0 to 8 {
        %m = loop.for %j in 0 to 6 reduce max init -inf : f32 {
          %s = loop.for %e in 0 to 4 reduce add init 0.0 : f32 { q[b, i, e] * k[b, j, e] }
          ...                                   // scaled, masked: the score
          loop.yield %score : f32
        }
        %l = loop.for %j in 0 to 6 reduce add init 0.0 : f32 { exp(score - m) }
        loop.for %d in 0 to 4 {
          %acc = loop.for %j in 0 to 6 reduce add init 0.0 : f32 { exp(score - m) / l * v[b, j, d] }
          loop.store %acc, %o[%b, %i, %d] : memref<2x8x4xf32>
        }
      }
    }

the nest that the scalar schedules of `choose-tile-schedule` (run before this pass, on a copy
expanded as here) map (each score is computed once
per reduction that reads it: correct for any shape and type, and no faster than the
decomposed form); a kernel whose schedule is attention's (a tile, which `choose-tile-schedule`
writes for one that tensor cores take) keeps its loop.attention, which `lower-loop-to-tile`
makes a `tile.attention`. The probabilities are rounded to the value's type where it is 16-bit, as
`loop.attention` says; with a mask, a row whose max is -inf (every key masked) takes its
exponents from 0 and divides by 1, giving zeros. Loops over the dynamic size (the query
rows, the keys) run to the kernel's size argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IndexType, IntegerType, ModuleOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from emmy.dialects import loop
from emmy.dialects.attention import accumulator_type, kv_group
from emmy.dialects.combiner import identity
from emmy.dialects.dtypes import element_bytes
from emmy.dialects.launch import kernel_size_argument
from emmy.passes.expand_loop_contract import has_contraction_schedule


class _Nest:
    """Inserts ops before a point, opening loops there (a loop over the dynamic size to
    `size`, the kernel's size argument)."""

    def __init__(self, before: Operation, size: SSAValue | None):
        self.before = before
        self.size = size

    def emit(self, op: Operation) -> SSAValue:
        Rewriter.insert_op(op, InsertPoint.before(self.before))
        return op.results[0] if op.results else None

    def index(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp.from_int_and_width(value, IndexType()))

    def float(self, value: float, float_type: Attribute) -> SSAValue:
        return self.emit(arith.ConstantOp(FloatAttr(value, float_type)))

    def loop(
        self, extent: int, name: str, reduction: str | None = None, element_type=None
    ) -> tuple[loop.ForOp, _Nest]:
        combiner = None if reduction is None else (reduction, identity(reduction, element_type))
        upper = self.size if extent == DYNAMIC_INDEX and self.size is not None else extent
        for_op = loop.ForOp.empty(0, upper, combiner)
        for_op.induction_var.name_hint = name
        self.emit(for_op)
        body: Block = for_op.body.block
        if body.last_op is None:
            body.add_op(loop.YieldOp())
        return for_op, _Nest(body.last_op, self.size)

    def reduce(self, extent: int, name: str, kind: str, element_type, contribution) -> SSAValue:
        """A reduction loop over `extent`, yielding `contribution(nest, index)`."""
        for_op, inner = self.loop(extent, name, kind, element_type)
        value = contribution(inner, for_op.induction_var)
        Rewriter.replace_op(inner.before, loop.YieldOp(value))
        return for_op.results[0]


def expand_attention(op: loop.AttentionOp) -> None:
    """Replaces `op` by its loop nest: see the module docstring."""
    q_shape, k_shape = op.query.type.get_shape(), op.key.type.get_shape()
    *batch, rows, depth = q_shape
    keys, columns = k_shape[-2], op.value.type.get_shape()[-1]
    input_type = op.query.type.get_element_type()
    acc = accumulator_type(input_type)
    group = kv_group(q_shape, k_shape)
    nest = _Nest(op, kernel_size_argument(op))
    zero = nest.index(0)
    index: list[SSAValue] = []
    for d, extent in enumerate(batch):
        if extent == 1:
            index.append(zero)
            continue
        for_op, nest = nest.loop(extent, f"b{d}")
        index.append(for_op.induction_var)
    kv_index = list(index)
    if group > 1:
        kv_index[-1] = nest.emit(arith.DivUIOp(index[-1], nest.index(group)))
    row_loop, row = nest.loop(rows, "i")
    i = row_loop.induction_var

    def widened(n: _Nest, buffer: SSAValue, indices: list[SSAValue]) -> SSAValue:
        value = n.emit(loop.LoadOp(buffer, indices))
        return value if value.type == acc else n.emit(arith.ExtFOp(value, acc))

    def score(n: _Nest, j: SSAValue) -> SSAValue:
        def product(inner: _Nest, e: SSAValue) -> SSAValue:
            query = widened(inner, op.query, [*index, i, e])
            key = widened(inner, op.key, [*kv_index, j, e])
            return inner.emit(arith.MulfOp(query, key))

        s = n.reduce(depth, "e", "add", acc, product)
        s = n.emit(arith.MulfOp(s, n.float(op.scale.value.data, acc)))
        minus_inf = n.float(-math.inf, acc)
        if op.mask is not None:
            scores_index = [*index, i, j]
            mask_shape = op.mask.type.get_shape()
            at = scores_index[len(scores_index) - len(mask_shape) :]
            mask_index = [zero if size == 1 else x for size, x in zip(mask_shape, at)]
            mask = n.emit(loop.LoadOp(op.mask, mask_index))
            if isinstance(mask.type, IntegerType):
                s = n.emit(arith.SelectOp(mask, s, minus_inf))
            else:
                if mask.type != acc:
                    mask = n.emit(arith.ExtFOp(mask, acc))
                s = n.emit(arith.AddfOp(s, mask))
        if op.causal is not None:
            keep = n.emit(arith.CmpiOp(j, i, "ule"))
            s = n.emit(arith.SelectOp(keep, s, minus_inf))
        return s

    maximum = row.reduce(keys, "j", "max", acc, score)
    masked_whole = None
    if op.mask is not None:
        # A row masked whole (max -inf) takes its exponents from 0 (all 0) over a sum of 1.
        masked_whole = row.emit(arith.CmpfOp(maximum, row.float(-math.inf, acc), "oeq"))
        maximum = row.emit(arith.SelectOp(masked_whole, row.float(0.0, acc), maximum))

    def exponential(n: _Nest, j: SSAValue) -> SSAValue:
        return n.emit(math_dialect.ExpOp(n.emit(arith.SubfOp(score(n, j), maximum))))

    total = row.reduce(keys, "j", "add", acc, exponential)
    if masked_whole is not None:
        total = row.emit(arith.SelectOp(masked_whole, row.float(1.0, acc), total))
    column_loop, column = row.loop(columns, "d")

    def weighted(n: _Nest, j: SSAValue) -> SSAValue:
        p = n.emit(arith.DivfOp(exponential(n, j), total))
        if element_bytes(input_type) == 2:
            p = n.emit(arith.ExtFOp(n.emit(arith.TruncFOp(p, input_type)), acc))
        v = widened(n, op.value, [*kv_index, j, column_loop.induction_var])
        return n.emit(arith.MulfOp(p, v))

    out = column.reduce(keys, "j", "add", acc, weighted)
    out_type = op.out.type.get_element_type()
    if out_type != acc:
        cast = arith.TruncFOp if element_bytes(out_type) < element_bytes(acc) else arith.ExtFOp
        out = column.emit(cast(out, out_type))
    column.emit(loop.StoreOp(out, op.out, [*index, i, column_loop.induction_var]))
    Rewriter.erase_op(op)


@dataclass(frozen=True)
class ExpandLoopAttentionPass(ModulePass):
    """Rewrites each loop.attention into scalar loop nests (see the module docstring)."""

    name = "expand-loop-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.body.block.ops:
            if isinstance(kernel, loop.KernelOp) and not has_contraction_schedule(kernel):
                expand_attentions(kernel)


def expand_attentions(kernel: loop.KernelOp) -> None:
    """Expands each loop.attention of `kernel` in place."""
    for attention in [o for o in kernel.body.block.ops if isinstance(o, loop.AttentionOp)]:
        expand_attention(attention)
