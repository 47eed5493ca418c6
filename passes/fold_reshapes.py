"""`fold-reshapes`: a reshape of an elementwise map moves to the map's inputs, where it meets
the reshapes that made them and folds away with them.

    %g3 = prim.reshape %g : tensor<256x512xbf16> -> tensor<2x128x512xbf16>
    %u3 = prim.reshape %u : tensor<256x512xbf16> -> tensor<2x128x512xbf16>
    %m3 = prim.map(%g3, %u3) {..}                         %m = prim.map(%g, %u) {..}
    %m = prim.reshape %m3 : tensor<2x128x512xbf16>  ->     (tensor<256x512xbf16>)
         -> tensor<256x512xbf16>

nn.Linear on a [B, S, K] input multiplies [B * S, K] rows and reshapes the product back; a
SwiGLU's `silu(gate(x)) * up(x)` is then computed in [B, S, N] and reshaped to [B * S, N] for
the down projection. Every element is the same, but the round trip through the 3-d shape hides
from `lower-fused-to-loop` that the down projection's operand is the gate product's element
at the same (row, column), so the product is not structured and misses the tensor cores. A
reshape of a map that nothing else uses becomes the map of the reshaped inputs; a reshape of a
reshape is one reshape of the first input, and a reshape to the input's own shape is the
input.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from emmy.dialects import prim


class FoldReshapeOfReshape(RewritePattern):
    """`reshape(reshape(x))` is one reshape of x, and x itself where the shapes agree."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: prim.ReshapeOp, rewriter: PatternRewriter) -> None:
        source = op.input
        if source.type == op.result.type:
            rewriter.replace(op, [], [source])
        elif isinstance(source.owner, prim.ReshapeOp):
            rewriter.replace(op, prim.ReshapeOp(source.owner.input, op.result.type))


class ReshapeMapInputs(RewritePattern):
    """`reshape(map(a, b))` is `map(reshape(a), reshape(b))` where the map has no other use
    (a map's inputs have its shape)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: prim.ReshapeOp, rewriter: PatternRewriter) -> None:
        mapped = op.input.owner
        if not isinstance(mapped, prim.MapOp) or mapped.result.uses.get_length() != 1:
            return
        target = op.result.type.get_shape()
        reshaped = [
            prim.ReshapeOp(value, TensorType(value.type.get_element_type(), target))
            for value in mapped.inputs
        ]
        for reshape in reshaped:
            reshape.location = op.location
        rewriter.insert(reshaped)
        result = prim.MapOp([r.result for r in reshaped], op.result.type, mapped.body.clone())
        result.location = mapped.location  # kernel names come from it
        rewriter.replace(op, result)
        rewriter.erase(mapped)


@dataclass(frozen=True)
class FoldReshapesPass(ModulePass):
    """Moves reshapes of elementwise maps to the maps' inputs and folds reshape chains (see
    the module docstring)."""

    name = "fold-reshapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FoldReshapeOfReshape(), ReshapeMapInputs()])
        ).rewrite_module(op)
