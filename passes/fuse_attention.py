"""`fuse-attention`: attention written as two products around a row softmax becomes one
`prim.attention`, so that one kernel computes it without the scores in memory.

    %s = prim.contract %qf, %ktf : ... -> tensor<2x64x64xf32>   // %ktf: extf(permute(%k))
    %m = prim.map(%s, %qi, %ki) { scale, causal select }        // %qi, %ki: prim.iota
    %p = softmax(%m) along the last dim                           // max, exp, sum, div
    %o = prim.contract extf(truncf(%p)), extf(%v) -> tensor<2x64x64xf32>
    %r = prim.map(%o) { truncf to bf16 }

becomes

    %r = prim.attention %q, %k, %v scale 1.250000e-01 causal : ... -> tensor<2x64x64xbf16>

`torch.sdpa` decomposes into this pattern, and so does attention written by hand
(`softmax(q @ k.transpose(-2, -1) * scale) @ v`, also with `/ d` or a mask), which rounds its
16-bit scores to their type on the way, where the fused op keeps them in f32, as the
attention kernels of eager and Inductor do. What the pass takes:
- a first product of the query and the key with its last two dims swapped, each only widened;
- between it and the softmax, `prim.map`s computing `s * c` or `s / c` (constants `c`,
  folded into one scale), casts, then optionally an additive mask (`s + m`, `m` widened), a
  boolean one (`select(m, s, -inf)`) and causality (`select(key pos <= query pos, s, -inf)`
  on `prim.iota`s of the last two dims); nothing scales a masked score;
- softmax along the last dim: `exp(x - max(x))` over `sum` of it, each reduced keeping the
  dim from -inf and 0, or the safe softmax that sdpa with a mask decomposes into (that
  quotient, or 0 where the max is -inf: a query whose every key is masked gives zeros, as
  torch's sdpa does). The op gives those zeros in either case: attention by hand with a
  plain softmax, whose eager result is NaN on such a row, gives zeros there once fused (as
  Inductor's attention patterns do, which make it an sdpa);
- a second product of the probabilities (only cast: rounded to the value's type if it is a
  16-bit one, not narrower) and the value, only widened, and optionally one cast of the
  result to its element type;
- grouped-query heads (`prim.reshape(prim.broadcast(prim.reshape(x)))` repeating each key
  and value head, as the importer writes `enable_gqa`) are read unrepeated; a numpy-style
  broadcast of the mask is read unbroadcast, and an additive mask `select(b, 0, -inf)` of a
  boolean `b` (a boolean mask that PyTorch's decomposition made additive) as the boolean;
- each value in between is used by the pattern alone (a score returned too keeps the
  decomposed form).
Anything else keeps the decomposed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IntegerType, ModuleOp, TensorType
from xdsl.dialects.math import ExpOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from emmy.dialects import prim
from emmy.dialects.attention import accumulator_type
from emmy.dialects.dtypes import element_bytes
from emmy.dialects.prim import tensor_shape


def _body_ops(op: prim.MapOp) -> list[Operation]:
    return [o for o in op.body.block.ops if not isinstance(o, prim.YieldOp)]


def _cast_input(value: SSAValue, widening_only: bool) -> SSAValue | None:
    """The input of a one-input map that only converts its elements' type."""
    op = value.owner
    if not isinstance(op, prim.MapOp) or len(op.inputs) != 1:
        return None
    body = _body_ops(op)
    casts = (arith.ExtFOp,) if widening_only else (arith.ExtFOp, arith.TruncFOp)
    return op.inputs[0] if len(body) == 1 and isinstance(body[0], casts) else None


def _uncast(value: SSAValue, matched: list[Operation], widening_only: bool = True) -> SSAValue:
    while (source := _cast_input(value, widening_only)) is not None:
        matched.append(value.owner)
        value = source
    return value


def _unrepeated_heads(
    value: SSAValue, matched: list[Operation], created: list[Operation]
) -> SSAValue:
    """`value` before the repeat of its heads (dim -3) that grouped-query attention writes,
    `reshape(broadcast(x))` from x [.., Hkv, 1, S, E] over [.., Hkv, G, S, E]: x's source
    where x is a reshape of [.., Hkv, S, E] (as the importer writes it), else a new reshape
    of x (in `created`; fold-reshapes moves the split above a rotation of the keys)."""
    merge = value.owner
    if not isinstance(merge, prim.ReshapeOp) or not isinstance(merge.input.owner, prim.BroadcastOp):
        return value
    broadcast = merge.input.owner
    shape = tensor_shape(broadcast.input)
    if len(shape) < 4 or shape[-3] != 1:
        return value
    *batch, heads, _, rows, columns = shape
    group = tensor_shape(merge.result)[-3] // heads
    if tensor_shape(broadcast.result) != (*batch, heads, group, rows, columns) or tensor_shape(
        merge.result
    ) != (*batch, heads * group, rows, columns):
        return value
    matched.extend((merge, broadcast))
    split = broadcast.input.owner
    if isinstance(split, prim.ReshapeOp) and tensor_shape(split.input) == (
        *batch,
        heads,
        rows,
        columns,
    ):
        matched.append(split)
        return split.input
    element_type = broadcast.input.type.get_element_type()
    reshape = prim.ReshapeOp(
        broadcast.input, TensorType(element_type, [*batch, heads, rows, columns])
    )
    created.append(reshape)
    return reshape.result


def _unbroadcast(value: SSAValue, matched: list[Operation]) -> SSAValue:
    if isinstance(value.owner, prim.BroadcastOp):
        matched.append(value.owner)
        return value.owner.input
    return value


def _through_scalar_casts(value: SSAValue) -> SSAValue:
    while isinstance(value.owner, arith.ExtFOp | arith.TruncFOp):
        value = value.owner.input
    return value


def _constant(value: SSAValue) -> float | None:
    value = _through_scalar_casts(value)
    if isinstance(value.owner, arith.ConstantOp) and isinstance(value.owner.value, FloatAttr):
        return value.owner.value.value.data
    return None


def _is_minus_inf(value: SSAValue) -> bool:
    return _constant(value) == -math.inf


@dataclass
class _Scores:
    """What the maps between the first product and the softmax do to the scores."""

    scale: float = 1.0
    mask: SSAValue | None = None
    causal: bool = False
    scaled: bool = False
    matched: list[Operation] = field(default_factory=list)


def _iota_dim(value: SSAValue, map_op: prim.MapOp) -> int | None:
    if not isinstance(value, BlockArgument) or value.owner is not map_op.body.block:
        return None
    iota = map_op.inputs[value.index].owner
    if not isinstance(iota, prim.IotaOp):
        return None
    return iota.dim.value.data - len(tensor_shape(iota.result))


def _is_causal_keep(condition: SSAValue, map_op: prim.MapOp) -> bool:
    """Whether `condition` is `key position <= query position` (dims -1 and -2)."""
    compare = condition.owner
    if not isinstance(compare, arith.CmpiOp):
        return False
    lhs, rhs = (_iota_dim(v, map_op) for v in (compare.lhs, compare.rhs))
    predicate = arith.CMPI_COMPARISON_OPERATIONS[compare.predicate.value.data]
    return (predicate in ("sle", "ule") and (lhs, rhs) == (-1, -2)) or (
        predicate in ("sge", "uge") and (lhs, rhs) == (-2, -1)
    )


def _mask_input(value: SSAValue, map_op: prim.MapOp) -> SSAValue | None:
    value = _through_scalar_casts(value)
    if not isinstance(value, BlockArgument) or value.owner is not map_op.body.block:
        return None
    return map_op.inputs[value.index]


def _is_boolean(value: SSAValue | None) -> bool:
    if value is None:
        return False
    element_type = value.type.get_element_type()
    return isinstance(element_type, IntegerType) and element_type.width.data == 1


def _first_product(value: SSAValue, scores: _Scores) -> prim.ContractOp | None:
    """The product whose scores `value` is, recording the maps on the way in `scores`."""
    owner = value.owner
    if isinstance(owner, prim.ContractOp):
        return owner
    if not isinstance(owner, prim.MapOp):
        return None
    scores.matched.append(owner)
    return _scalar_scores(_yielded(owner), owner, scores)


def _scalar_scores(value: SSAValue, map_op: prim.MapOp, scores: _Scores):
    """As `_first_product`, for a scalar of `map_op`'s body."""
    value = _through_scalar_casts(value)
    owner = value.owner
    if isinstance(value, BlockArgument):
        if value.owner is not map_op.body.block:
            return None
        return _first_product(map_op.inputs[value.index], scores)
    if isinstance(owner, arith.MulfOp | arith.DivfOp):
        factor = _constant(owner.rhs)
        operand = owner.lhs
        if factor is None and isinstance(owner, arith.MulfOp):
            factor, operand = _constant(owner.lhs), owner.rhs
        if factor is None or factor == 0:
            return None
        scores.scale *= factor if isinstance(owner, arith.MulfOp) else 1 / factor
        scores.scaled = True
        return _scalar_scores(operand, map_op, scores)
    if scores.scaled:
        return None  # a mask applied before a scale
    if isinstance(owner, arith.SelectOp) and _is_minus_inf(owner.rhs):
        if _is_causal_keep(owner.cond, map_op) and not scores.causal:
            scores.causal = True
            scores.matched.extend(map_op.inputs[v.index].owner for v in owner.cond.owner.operands)
        elif scores.mask is None and _is_boolean(mask := _mask_input(owner.cond, map_op)):
            scores.mask = mask
        else:
            return None
        return _scalar_scores(owner.lhs, map_op, scores)
    if isinstance(owner, arith.AddfOp) and scores.mask is None:
        for score, mask in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            mask_value = _mask_input(mask, map_op)
            if mask_value is None or not isinstance(mask_value.type.get_element_type(), AnyFloat):
                continue
            attempt = _Scores(scores.scale, mask_value, scores.causal, False, [*scores.matched])
            product = _scalar_scores(score, map_op, attempt)
            if product is not None:
                scores.__dict__.update(attempt.__dict__)
                return product
    return None


def _reduced_row(value: SSAValue, kind: str, init: float) -> SSAValue | None:
    """The input of `broadcast(reduce kind x axes [last] keepdim init)` that `value` is."""
    broadcast = value.owner
    if not isinstance(broadcast, prim.BroadcastOp):
        return None
    reduce = broadcast.input.owner
    if not isinstance(reduce, prim.ReduceOp) or reduce.kind.data.value != kind:
        return None
    rank = len(tensor_shape(reduce.input))
    if tuple(reduce.axis_list) != (rank - 1,) or reduce.keepdim is None:
        return None
    if reduce.init.value.data != init:
        return None
    return reduce.input


def _is_argument(value: SSAValue, map_op: prim.MapOp, index: int) -> bool:
    """Whether `value` is argument `index` of `map_op`'s body."""
    block = map_op.body.block
    return isinstance(value, BlockArgument) and value.owner is block and value.index == index


def _on_inputs(value: SSAValue, map_op: Operation, kind: type[Operation]) -> bool:
    """Whether `value` (through casts) is a `kind` op on the first and second input of the
    two-input map `map_op`, each through casts."""
    if not isinstance(map_op, prim.MapOp) or len(map_op.inputs) != 2:
        return False
    op = _through_scalar_casts(value).owner
    if not isinstance(op, kind):
        return False
    return all(_is_argument(_through_scalar_casts(v), map_op, i) for i, v in enumerate(op.operands))


def _yielded(map_op: prim.MapOp) -> SSAValue:
    return map_op.body.block.last_op.operands[0]


def _boolean_behind(mask: SSAValue) -> SSAValue | None:
    """The boolean `b` of an additive mask that is `select(b, 0, -inf)` of it: a boolean mask
    that PyTorch's own decomposition of sdpa made additive. The op reads `b` instead: a byte
    an element rather than two or four, and one select a score rather than a widening, a
    multiplication and an addition (the same scores but where a score is NaN, which the
    boolean mask makes -inf, as PyTorch does with the mask it was given)."""
    owner = mask.owner
    if not isinstance(owner, prim.MapOp) or len(owner.inputs) != 1:
        return None
    if not _is_boolean(owner.inputs[0]):
        return None
    select = _through_scalar_casts(_yielded(owner)).owner
    if not isinstance(select, arith.SelectOp) or not _is_argument(select.cond, owner, 0):
        return None
    if _constant(select.lhs) != 0.0 or not _is_minus_inf(select.rhs):
        return None
    return owner.inputs[0]


def _divides_safely(divide: prim.MapOp) -> bool:
    """Whether the three-input map `divide` is `select(m == -inf, 0, e / s)` of its inputs
    (e, s, m): the safe softmax's division, zeros where the whole row is -inf."""
    select = _through_scalar_casts(_yielded(divide)).owner
    if len(divide.inputs) != 3 or not isinstance(select, arith.SelectOp):
        return False
    compare, quotient = select.cond.owner, _through_scalar_casts(select.rhs).owner
    if not isinstance(compare, arith.CmpfOp) or _constant(select.lhs) != 0.0:
        return False
    if arith.CMPF_COMPARISON_OPERATIONS[compare.predicate.value.data] != "oeq":
        return False
    if not (_is_argument(compare.lhs, divide, 2) and _is_minus_inf(compare.rhs)):
        return False
    return isinstance(quotient, arith.DivfOp) and all(
        _is_argument(_through_scalar_casts(v), divide, i) for i, v in enumerate(quotient.operands)
    )


def _softmax_input(value: SSAValue, matched: list[Operation]) -> SSAValue | None:
    """`x` where `value` is softmax(x) along the last dim, or the safe softmax of it (zeros
    where x's row is -inf whole)."""
    divide = value.owner
    if not isinstance(divide, prim.MapOp):
        return None
    if not (_on_inputs(_yielded(divide), divide, arith.DivfOp) or _divides_safely(divide)):
        return None
    exponentials, sums = divide.inputs[:2]
    if _reduced_row(sums, "add", 0.0) is not exponentials:
        return None
    exp_map = exponentials.owner
    if not isinstance(exp_map, prim.MapOp) or len(exp_map.inputs) != 2:
        return None
    exp = _through_scalar_casts(_yielded(exp_map)).owner
    if not isinstance(exp, ExpOp) or not _on_inputs(exp.operand, exp_map, arith.SubfOp):
        return None
    x, maxima = exp_map.inputs
    if _reduced_row(maxima, "max", -math.inf) is not x:
        return None
    if tuple(divide.inputs[2:]) not in ((), (maxima,)):
        return None  # a safe softmax guarding with another max
    matched.extend((divide, sums.owner, sums.owner.input.owner, exp_map))
    matched.extend((maxima.owner, maxima.owner.input.owner))
    return x


def _attention_of(
    product: prim.ContractOp, result_type: TensorType, created: list[Operation]
) -> tuple[prim.AttentionOp, list[Operation]] | None:
    """The attention `product` ends, giving `result_type`, with the ops it replaces; the
    views of its operands that it needs go to `created`."""
    matched: list[Operation] = [product]
    value = _unrepeated_heads(_uncast(product.rhs, matched), matched, created)
    probabilities = _uncast(product.lhs, matched, widening_only=False)
    scores_value = _softmax_input(probabilities, matched)
    if scores_value is None:
        return None
    scores = _Scores()
    first = _first_product(scores_value, scores)
    if first is None:
        return None
    matched.extend((*scores.matched, first))
    query = _uncast(first.lhs, matched)
    transposed = _uncast(first.rhs, matched)
    if not isinstance(transposed.owner, prim.PermuteOp):
        return None
    rank = len(tensor_shape(transposed))
    if list(transposed.owner.dims.get_values()) != [*range(rank - 2), rank - 1, rank - 2]:
        return None
    matched.append(transposed.owner)
    key = _unrepeated_heads(transposed.owner.input, matched, created)
    mask = None if scores.mask is None else _unbroadcast(scores.mask, matched)
    if mask is not None:
        mask = _boolean_behind(mask) or mask
    element_type = query.type.get_element_type()
    if not _rounded_as_attention(product.lhs, probabilities, element_type):
        return None
    attention = prim.AttentionOp(query, key, value, mask, scores.scale, scores.causal, result_type)
    try:
        attention.verify()
    except VerifyException:
        attention.erase()  # unused, but it uses its operands
        return None
    return attention, matched


def _rounded_as_attention(
    operand: SSAValue, probabilities: SSAValue, element_type: Attribute
) -> bool:
    """Whether the casts from the probabilities to the second product's operand round them
    as attention does: to the value's type if it is 16-bit, else not below the accumulator."""
    narrowest = min(
        element_bytes(v.type.get_element_type()) for v in _cast_chain(operand, probabilities)
    )
    rounded = element_type if element_bytes(element_type) == 2 else accumulator_type(element_type)
    return narrowest == element_bytes(rounded)


def _cast_chain(operand: SSAValue, probabilities: SSAValue) -> list[SSAValue]:
    chain = [operand]
    while chain[-1] is not probabilities:
        chain.append(chain[-1].owner.inputs[0])
    return chain


def _only_used_inside(ops: list[Operation], end: Operation) -> bool:
    inside = set(ops)
    return all(
        use.operation in inside
        for op in ops
        if op is not end
        for result in op.results
        for use in result.uses
    )


def fuse_attention(function: func.FuncOp) -> None:
    for product in [op for op in function.walk() if isinstance(op, prim.ContractOp)]:
        if product.parent is None:
            continue  # erased: the first product of an attention
        end: Operation = product
        users = [use.operation for use in product.result.uses]
        if len(users) == 1 and users[0].results and _cast_input(users[0].results[0], False):
            end = users[0]
        created: list[Operation] = []
        found = _attention_of(product, end.results[0].type, created)
        block = end.parent
        chain = [] if found is None else sorted({*found[1], end}, key=block.get_operation_index)
        if found is None or not _only_used_inside(chain, end):
            for op in (*(() if found is None else (found[0],)), *reversed(created)):
                op.erase()  # built, never inserted, but using their operands
            continue
        attention = found[0]
        Rewriter.insert_op([*created, attention], InsertPoint.before(end))
        attention.location = product.location
        end.results[0].replace_all_uses_with(attention.result)
        for op in reversed(chain):
            if not any(r.uses for r in op.results):
                block.erase_op(op)


@dataclass(frozen=True)
class FuseAttentionPass(ModulePass):
    """Makes attention written as product, row softmax, product one prim.attention: see the
    module docstring for what it takes."""

    name = "fuse-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(op.walk()):
            if isinstance(function, func.FuncOp):
                fuse_attention(function)
