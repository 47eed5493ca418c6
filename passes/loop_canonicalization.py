"""Canonicalization patterns of the `loop` dialect, run by `canonicalize`."""

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from emmy.dialects import loop
from emmy.dialects.combiner import combine, identity
from emmy.dialects.effects import written_values


class FoldUnitLoop(RewritePattern):
    """A loop of one iteration becomes its body at the lower bound; a reduction of one
    iteration becomes its contribution combined with the init (the inits, through a combiner
    region); a loop of none disappears (a reduction of none is its inits)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.ForOp, rewriter: PatternRewriter) -> None:
        if op.is_dynamic or op.trip_count > 1:
            return
        if op.trip_count == 0:
            if op.is_reduction:
                rewriter.replace(op, [arith.ConstantOp(init) for init in op.init_values])
            else:
                rewriter.erase(op)
            return
        lower = arith.ConstantOp.from_int_and_width(op.lower.data, IndexType())
        lower.result.name_hint = f"c{op.lower.data}"
        rewriter.insert(lower, InsertPoint.before(op))
        block = op.body.block
        terminator = block.last_op
        assert isinstance(terminator, loop.YieldOp)
        contributions = terminator.arguments
        rewriter.inline_block(block, InsertPoint.before(op), [lower.result])
        rewriter.erase(terminator)
        if not op.is_reduction:
            rewriter.erase(op)
            return
        if op.combiner is not None:
            ops: list[Operation] = [arith.ConstantOp(init) for init in op.init_values]

            def emit(combining: Operation) -> Operation:
                ops.append(combining)
                return combining

            results = op.combine([o.results[0] for o in ops], contributions, emit)
            rewriter.replace(op, ops, results)
            return
        (contribution,) = contributions
        kind, element_type = op.kind.data, op.init.type
        if op.init == identity(kind, element_type):
            rewriter.replace(op, [], [contribution])
            return
        init = arith.ConstantOp(op.init)
        rewriter.replace(op, [init, combine(kind, init.result, contribution)])


def defined_inside(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is `op`'s result or defined anywhere in its regions."""
    owner = value.owner
    defining = owner if isinstance(owner, Operation) else owner.parent_op()
    return defining is not None and (defining is op or op.is_ancestor(defining))


class HoistInvariantLoad(RewritePattern):
    """A load in a loop body whose indices are all defined outside the loop reads the same
    element in every iteration: it moves before the loop, unless the kernel writes that
    buffer."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.ForOp, rewriter: PatternRewriter) -> None:
        for load in list(op.body.block.ops):
            if not isinstance(load, loop.LoadOp):
                continue
            if any(defined_inside(index, op) for index in load.indices):
                continue
            if any(load.memref in written_values(use.operation) for use in load.memref.uses):
                continue
            load.detach()
            rewriter.insert(load, InsertPoint.before(op))
