"""`double-to-add`: a pass in a user's own file, loaded with `emmy-opt --load-pass-plugin`.

    %y = arith.mulf %x, %two : f32      ->      %y = arith.addf %x, %x : f32
    (%two = arith.constant 2.0)

One pattern, a frozen-dataclass pass that walks it over the module, and one call that makes the
pass known to `emmy-opt` by its name.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from emmy.passes.registry import register_pass


class DoubleToAdd(RewritePattern):
    """`x * 2.0` is `x + x`, exactly, in any float type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.MulfOp, rewriter: PatternRewriter) -> None:
        constant = op.rhs.owner
        if (
            isinstance(constant, arith.ConstantOp)
            and isinstance(constant.value, FloatAttr)
            and constant.value.value.data == 2.0
        ):
            rewriter.replace(op, arith.AddfOp(op.lhs, op.lhs))


@dataclass(frozen=True)
class DoubleToAddPass(ModulePass):
    """Rewrites each multiplication by the constant 2.0 as an addition of the value to itself."""

    name = "double-to-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(DoubleToAdd()).rewrite_module(op)


register_pass(DoubleToAddPass)
