"""`expand-loop-contract`: a `loop.contract` becomes a loop nest with a reduction over k.

    loop.contract (%i0, %i1) in [16, 32], k in 64, %acc = sum %x[d0, k] * %w[d1, k]
        : memref<16x64xbf16>, memref<32x64xbf16> -> f32 {
      %b = loop.load %bias[%i1] : memref<32xf32>
      %r = arith.addf %acc, %b : f32
      loop.store %r, %y[%i0, %i1] : memref<16x32xf32>
    }

becomes

    loop.for %i0 in 0 to 16 {
      loop.for %i1 in 0 to 32 {
        %acc = loop.for %k in 0 to 64 reduce add init 0.0 : f32 {
          %xv = loop.load %x[%i0, %k] : memref<16x64xbf16>
          %xf = arith.extf %xv : bf16 to f32
          %wv = loop.load %w[%i1, %k] : memref<32x64xbf16>
          %wf = arith.extf %wv : bf16 to f32
          %p = arith.mulf %xf, %wf : f32
          loop.yield %p : f32
        }
        %b = loop.load %bias[%i1] : memref<32xf32>
        %r = arith.addf %acc, %b : f32
        loop.store %r, %y[%i0, %i1] : memref<16x32xf32>
      }
    }

the nest `lower-fused-to-loop` builds for a product it lowers to scalar loops (sibling rhs
each get their reduction over k, whose sums the epilogue takes in order): parallel loops
over the dims of extent above 1 (a dim of extent 1 is indexed at 0; one of the dynamic size
runs to the contract's size operand), the reduction placed in
the outermost of them that its operands' indices exist in, and each op of the epilogue in the
outermost loop where its operands exist (ops with regions or writes, and loads of a buffer
the kernel writes, stay innermost). The scalar schedules of `choose-tile-schedule` take
this nest; a kernel whose `#tile.schedule` is a contraction's (a tensor-core tile and atom,
which `choose-tile-schedule`, run before this pass, writes for a bf16 or f16 product) keeps
its loop.contract, which `lower-loop-to-tile` makes a `tile.gemm`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, AnyFloat, IndexType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.traits import MemoryEffectKind, get_effects

from emmy.dialects import loop, tile
from emmy.dialects.combiner import identity
from emmy.dialects.effects import written_values


def _index_zero(kernel: loop.KernelOp, rewriter: PatternRewriter) -> SSAValue:
    """The kernel's index constant 0 at its top, made if it has none."""
    for op in kernel.body.block.ops:
        if (
            isinstance(op, arith.ConstantOp)
            and isinstance(op.result.type, IndexType)
            and op.value.value.data == 0
        ):
            return op.result
    zero = arith.ConstantOp.from_int_and_width(0, IndexType())
    zero.result.name_hint = "c0"
    rewriter.insert(zero, InsertPoint.at_start(kernel.body.block))
    return zero.result


def _hoistable(op: Operation, written: set[SSAValue]) -> bool:
    """Whether `op` may move to an outer loop: no regions, and no effects but reads of
    buffers the kernel does not write."""
    effects = get_effects(op)
    return (
        not op.regions
        and effects is not None
        and all(e.kind == MemoryEffectKind.READ and e.value not in written for e in effects)
    )


class ExpandContract(RewritePattern):
    """A loop.contract becomes its loop nest: see the module docstring."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.ContractOp, rewriter: PatternRewriter) -> None:
        kernel = op.parent_op()
        assert isinstance(kernel, loop.KernelOp)
        # The nest's blocks from the outermost; ops placed at depth d go before `ends[d]`,
        # the loop of depth d + 1 or, innermost, the end of the body.
        ends: list[Operation] = [op]
        depth: dict[SSAValue, int] = {}
        index: list[SSAValue] = []
        for arg, extent in zip(op.indices, op.parallel_extents):
            if extent == 1:
                index.append(_index_zero(kernel, rewriter))
                continue
            upper = op.size if extent == DYNAMIC_INDEX and op.size is not None else extent
            for_op = loop.ForOp.empty(0, upper)
            for_op.induction_var.name_hint = arg.name_hint
            rewriter.insert(for_op, InsertPoint.before(ends[-1]))
            ends[-1] = for_op
            ends.append(for_op.body.block.last_op)
            depth[for_op.induction_var] = len(ends) - 1
            index.append(for_op.induction_var)

        accumulators = [
            self._reduction(op, rhs, kernel, index, depth, ends, rewriter) for rhs in op.rhs
        ]
        for arg, value in zip(op.epilogue.block.args, (*index, *accumulators)):
            rewriter.replace_all_uses_with(arg, value)
        written = written_values(kernel)
        innermost = len(ends) - 1
        for epilogue_op in list(op.epilogue.block.ops)[:-1]:
            home = innermost
            if _hoistable(epilogue_op, written):
                home = max((depth.get(v, 0) for v in epilogue_op.operands), default=0)
            epilogue_op.detach()
            rewriter.insert(epilogue_op, InsertPoint.before(ends[home]))
            for result in epilogue_op.results:
                depth[result] = home
        rewriter.erase(op)

    @staticmethod
    def _reduction(
        op: loop.ContractOp,
        rhs: SSAValue,
        kernel: loop.KernelOp,
        index: list[SSAValue],
        depth: dict[SSAValue, int],
        ends: list[Operation],
        rewriter: PatternRewriter,
    ) -> SSAValue:
        """The sum over k of lhs times `rhs` (one of the op's siblings), in the outermost
        loop where the operands' indices exist."""
        accumulator_type = op.accumulator_type
        used = [index[d] for d in (*op.lhs_dims, *op.rhs_dims) if d is not None and d < op.k_dim]
        home = max((depth.get(v, 0) for v in used), default=0)
        extent = op.reduction.data
        k_loop = None
        if extent == 1:
            k = _index_zero(kernel, rewriter)
        else:
            k_loop = loop.ForOp.empty(0, extent, ("add", identity("add", accumulator_type)))
            k_loop.induction_var.name_hint = "k"
            rewriter.insert(k_loop, InsertPoint.before(ends[home]))
            k = k_loop.induction_var
        point = InsertPoint.before(ends[home] if k_loop is None else k_loop.body.block.last_op)
        iteration = (*index, k)
        operands = []
        for buffer, dims in ((op.lhs, op.lhs_dims), (rhs, op.rhs_dims)):
            indices = [_index_zero(kernel, rewriter) if d is None else iteration[d] for d in dims]
            load = loop.LoadOp(buffer, indices)
            rewriter.insert(load, point)
            value = load.result
            if value.type != accumulator_type:
                widen = arith.ExtFOp(value, accumulator_type)
                rewriter.insert(widen, point)
                value = widen.result
            operands.append(value)
        multiply = arith.MulfOp if isinstance(accumulator_type, AnyFloat) else arith.MuliOp
        product = multiply(*operands)
        rewriter.insert(product, point)
        if k_loop is None:
            depth[product.result] = home
            return product.result
        rewriter.replace(k_loop.body.block.last_op, loop.YieldOp(product.result))
        depth[k_loop.accumulator[0]] = home
        return k_loop.accumulator[0]


@dataclass(frozen=True)
class ExpandLoopContractPass(ModulePass):
    """Rewrites each loop.contract into parallel loops, a reduction loop over k and its
    epilogue, except in kernels whose schedule is a contraction's."""

    name = "expand-loop-contract"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.body.block.ops:
            if isinstance(kernel, loop.KernelOp) and not has_contraction_schedule(kernel):
                expand_contracts(kernel)


def has_contraction_schedule(kernel: loop.KernelOp) -> bool:
    attribute = kernel.attributes.get(tile.SCHEDULE_ATTRIBUTE)
    return isinstance(attribute, tile.ScheduleAttr) and attribute.data.is_contraction


def expand_contracts(kernel: loop.KernelOp) -> None:
    """Expands each loop.contract of `kernel` in place."""
    PatternRewriteWalker(ExpandContract()).rewrite_region(kernel.body)
