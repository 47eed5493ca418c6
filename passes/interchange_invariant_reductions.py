"""`interchange-invariant-reductions`: a kernel's outer parallel loop around a parallel loop
whose iterations each first reduce something the outer loop does not change swaps places with
it, so that the reduction runs once per inner iteration instead of once per pair of them.

    loop.for %h in 0 to 8 {                         loop.for %r in 0 to 2112 {
      %o = arith.muli %h, %c64                        %m = loop.for %p in 0 to 2048 reduce max
      loop.for %r in 0 to 2112 {           ->         %s = ... %m ...
        %m = loop.for %p in 0 to 2048 reduce max      loop.for %h in 0 to 8 {
        %s = ... %m ...                                 %o = arith.muli %h, %c64
        loop.for %d in 0 to 64 {                        loop.for %d in 0 to 64 {
          ... %o, %s, %h, %r, %d ...                      ... %o, %s, %h, %r, %d ...

A scatter into a cache of several heads computed by gathering (index_copy of a prefill's
keys: for each cache row, the position that names it, a max over the positions) is this nest:
the search for a row's position is the same for every head. Both loops are parallel (their
iterations are independent), so their order is free; the ops of the outer body before the
inner loop (index arithmetic of its variable) move inside. Only where the moved prefix reads no
buffer that the rest of the inner body writes, and the loops have static bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from emmy.dialects import loop
from emmy.dialects.effects import read_values, written_values


def _body_ops(for_op: loop.ForOp) -> list[Operation]:
    """The ops of a loop's body, without its terminator."""
    return [op for op in for_op.body.block.ops if not isinstance(op, loop.YieldOp)]


def _reads(op: Operation, values: set[SSAValue]) -> bool:
    """Whether `op`, or any op nested in it, takes one of `values`."""
    return any(operand in values for inner in op.walk() for operand in inner.operands)


def _invariant_prefix(inner: loop.ForOp, variant: set[SSAValue]) -> list[Operation]:
    """The ops at the start of `inner`'s body that take none of `variant` (nor values computed
    from them) and store nothing."""
    prefix = []
    for op in _body_ops(inner):
        if _reads(op, variant) or any(isinstance(o, loop.StoreOp) for o in op.walk()):
            break
        prefix.append(op)
    return prefix


def _interchange(outer: loop.ForOp) -> bool:
    """Swaps `outer` with the one loop of its body where that hoists a reduction (see the
    module docstring); whether it did."""
    if outer.is_reduction or outer.is_dynamic:
        return False
    *leading, inner = _body_ops(outer) or [None]
    if not isinstance(inner, loop.ForOp) or inner.is_reduction or inner.is_dynamic:
        return False
    if not all(op.dialect_name() == "arith" for op in leading):
        return False
    variant = {outer.induction_var, *(r for op in leading for r in op.results)}
    hoisted = _invariant_prefix(inner, variant)
    rest = _body_ops(inner)[len(hoisted) :]
    reduces = any(isinstance(o, loop.ForOp) and o.is_reduction for op in hoisted for o in op.walk())
    if not reduces or not rest:
        return False
    written = {value for op in rest for value in written_values(op)}
    if any(written & read_values(op) for op in hoisted):
        return False
    for op in hoisted:
        op.detach()
        outer.body.block.insert_op_before(op, inner)
    first = inner.body.block.first_op
    assert first is not None
    for op in leading:
        op.detach()
        inner.body.block.insert_op_before(op, first)
    outer.lower, inner.lower = inner.lower, outer.lower
    outer.upper, inner.upper = inner.upper, outer.upper
    # The outer loop's variable now runs over the inner loop's range, and the other way round.
    outer_index, inner_index = outer.induction_var, inner.induction_var
    outer_uses, inner_uses = list(outer_index.uses), list(inner_index.uses)
    for use in outer_uses:
        use.operation.operands[use.index] = inner_index
    for use in inner_uses:
        use.operation.operands[use.index] = outer_index
    outer_index.name_hint, inner_index.name_hint = inner_index.name_hint, outer_index.name_hint
    return True


@dataclass(frozen=True)
class InterchangeInvariantReductionsPass(ModulePass):
    """Swaps two nested parallel loops where the inner one's iterations first reduce something
    the outer one does not change, so that it is reduced once (see the module docstring)."""

    name = "interchange-invariant-reductions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, loop.KernelOp)]:
            for nest in [o for o in kernel.body.block.ops if isinstance(o, loop.ForOp)]:
                _interchange(nest)
