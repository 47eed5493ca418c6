"""`hoist-invariant-reciprocals`: a division in a loop by a value the loop does not change
becomes a multiplication by its reciprocal, computed once before the loop.

    loop.for %j in 0 to 4096 {                  %r = arith.divf 1.0, %sum
      %e = ...                          ->      loop.for %j in 0 to 4096 {
      %o = arith.divf %e, %sum                    %e = ...
                                                  %o = arith.mulf %e, %r

The reciprocal goes before the outermost loop of the nest that `%sum` is invariant in (a
`loop.contract`'s epilogue counts as the loop nest it runs in). A
correctly rounded division is about ten instructions on a GPU, a multiplication one: in a
softmax's output loop the division per element is the largest cost after the exp. The product
is within 1.5 ulp of the correctly rounded quotient, not always equal to it (what `arcp`
allows in LLVM's fast-math flags; Triton divides to within 2 ulp everywhere): the same bound
class as the cuda target's exp, which is the hardware's exp2.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from emmy.dialects import loop
from emmy.passes.loop_canonicalization import defined_inside


def _is_one(value: SSAValue) -> bool:
    constant = value.owner
    return (
        isinstance(constant, arith.ConstantOp)
        and isinstance(constant.value, FloatAttr)
        and constant.value.value.data == 1.0
    )


class HoistInvariantReciprocal(RewritePattern):
    """`x / s` in a loop (or loop.contract epilogue) that does not define `s` is `x * r`,
    `r = 1 / s` before the loop."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.DivfOp, rewriter: PatternRewriter) -> None:
        if _is_one(op.lhs):
            return
        outermost = None
        parent = op.parent_op()
        if isinstance(parent, loop.ForOp) and op.parent_region() is parent.combiner:
            return  # a combiner sees only its arguments and constants, wherever it is inlined
        while isinstance(parent, loop.ForOp | loop.ContractOp) and not defined_inside(
            op.rhs, parent
        ):
            outermost = parent
            parent = parent.parent_op()
        if outermost is None:
            return
        one = arith.ConstantOp(FloatAttr(1.0, op.rhs.type))
        reciprocal = arith.DivfOp(one.result, op.rhs)
        if op.rhs.name_hint:
            reciprocal.result.name_hint = f"inv_{op.rhs.name_hint}"
        rewriter.insert([one, reciprocal], InsertPoint.before(outermost))
        rewriter.replace(op, arith.MulfOp(op.lhs, reciprocal.result))


@dataclass(frozen=True)
class HoistInvariantReciprocalsPass(ModulePass):
    """Turns each division in a loop by a loop-invariant value into a multiplication by its
    reciprocal, computed once before the loop (within 1.5 ulp of the quotient)."""

    name = "hoist-invariant-reciprocals"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(HoistInvariantReciprocal()).rewrite_module(op)
