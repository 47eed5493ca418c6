"""Which values of a kernel differ between the threads of one block, from facts the ops declare.

    %t = kernel.thread_id x                     // ThreadVarying: differs between threads
    %b = kernel.block_id x                      // ThreadDependsOn(): the same in a block
    %s = kernel.shuffle xor %v, %o : f32        // ThreadDependsOn("value"): as %v does
    %c = arith.cmpi ult, %t, %b : index         // no trait: as any operand does (%t)
    scf.if %c { kernel.barrier }                // a barrier under it: a verify error

An op whose results differ between threads however they are computed (a thread id, an atomic's
old value) says so with `ThreadVarying`; one whose results differ only where some operands do
names them with `ThreadDependsOn` (none: the results are uniform in a block). An op that
declares neither computes its results from its operands alone, so they differ where any operand
does: the rule for `arith`, `math` and `vector`, and the sound one for any other op without
hidden inputs. The ops of the kernel dialect that have results each declare one of the two.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.ir import Operation, Region, SSAValue
from xdsl.traits import IsolatedFromAbove, OpTrait

from emmy.dialects.effects import named_operand


class ThreadVarying(OpTrait):
    """The op's results differ between the threads of a block, whatever its operands."""


@dataclass(frozen=True, init=False)
class ThreadDependsOn(OpTrait):
    """The op's results differ between threads only where one of the operands it names does;
    `ThreadDependsOn()` says they are the same in every thread of a block."""

    operands: tuple[str, ...]

    def __init__(self, *operands: str):
        object.__setattr__(self, "operands", operands)

    def values(self, op: Operation) -> tuple[SSAValue, ...]:
        return tuple(v for name in self.operands for v in named_operand(op, name))

    def verify(self, op: Operation) -> None:
        self.values(op)


def _inputs(op: Operation) -> Iterable[SSAValue]:
    """The operands `op`'s results follow between threads (see the module docstring)."""
    declared = op.get_trait(ThreadDependsOn)
    return op.operands if declared is None else declared.values(op)


def thread_dependent_values(body: Region) -> dict[SSAValue, str]:
    """The values of a kernel's `body` that may differ between the threads of one block, each
    with the name of a `ThreadVarying` op it derives from.

    A def-use taint analysis from the ops' declared facts (see the module docstring; a load's
    result follows its indices, as memory is assumed race-free); an `scf.for`'s induction
    variable and results depend on the thread when its bounds do, and an `scf.if`'s results
    when its condition does. Loop-carried values are iterated to a fixed point."""
    dependent: dict[SSAValue, str] = {}
    changed = True

    def mark(values: Iterable[SSAValue], source: str) -> None:
        nonlocal changed
        for value in values:
            if value not in dependent:
                dependent[value] = source
                changed = True

    def source_of(values: Iterable[SSAValue]) -> str | None:
        return next((dependent[v] for v in values if v in dependent), None)

    while changed:
        changed = False
        for op in body.walk():
            if isinstance(op, scf.ForOp):
                carried = op.body.block.args[1:]
                if (source := source_of((op.lb, op.ub, op.step))) is not None:
                    # Threads run different iterations, or different numbers of them.
                    mark(op.body.block.args, source)
                    mark(op.results, source)
                terminator = op.body.block.last_op
                yields = terminator.operands if isinstance(terminator, scf.YieldOp) else ()
                for index, result in enumerate(op.results):
                    sources = [*op.iter_args[index : index + 1], *yields[index : index + 1]]
                    if (source := source_of(sources)) is not None:
                        mark([result, *carried[index : index + 1]], source)
            elif isinstance(op, scf.IfOp):
                if (source := source_of([op.cond])) is not None:
                    mark(op.results, source)
                for region in op.regions:
                    if region.blocks and isinstance(region.block.last_op, scf.YieldOp):
                        for result, value in zip(op.results, region.block.last_op.operands):
                            if value in dependent:
                                mark([result], dependent[value])
            elif op.has_trait(ThreadVarying):
                mark(op.results, op.name)
            elif (source := source_of(_inputs(op))) is not None:
                mark(op.results, source)
    return dependent


def divergent_ancestor(
    op: Operation, dependent: dict[SSAValue, str]
) -> tuple[Operation, str] | None:
    """The innermost `scf.if` or `scf.for` around `op` (inside its kernel) that threads of one
    block may take differently, if any, with the `ThreadVarying` op its condition or bounds
    derive from."""
    ancestor = op.parent_op()
    while ancestor is not None and not ancestor.has_trait(IsolatedFromAbove):
        if isinstance(ancestor, scf.IfOp) and ancestor.cond in dependent:
            return ancestor, dependent[ancestor.cond]
        if isinstance(ancestor, scf.ForOp):
            for bound in (ancestor.lb, ancestor.ub, ancestor.step):
                if bound in dependent:
                    return ancestor, dependent[bound]
        ancestor = ancestor.parent_op()
    return None
