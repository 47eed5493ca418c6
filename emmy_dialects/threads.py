"""Which values of a kernel differ between the threads of one block, or between the lanes of one
warp, from facts the ops declare; and the ops those threads must execute together.

    %t = kernel.thread_id x                     // ThreadVarying: differs between threads
    %b = kernel.block_id x                      // ThreadDependsOn(): the same in a block
    %s = kernel.shuffle xor %v, %o : f32        // ThreadDependsOn("value"): as %v does
    %c = arith.cmpi ult, %t, %b : index         // no trait: as any operand does (%t)
    scf.if %c { kernel.barrier }                // a barrier under it: a verify error
    %w = arith.divui %t, %c32 : index           // the same in every lane of a warp
    %first = arith.cmpi eq, %w, %c0 : index
    scf.if %first { kernel.shuffle ... }        // a shuffle under it: the whole warp takes part

An op whose results differ between threads however they are computed (a thread id, an atomic's
old value) says so with `ThreadVarying`; one whose results differ only where some operands do
names them with `ThreadDependsOn` (none: the results are uniform in a block). An op that
declares neither computes its results from its operands alone, so they differ where any operand
does: the rule for `arith`, `math` and `vector`, and the sound one for any other op without
hidden inputs. The ops of the kernel dialect that have results each declare one of the two.

Within a warp (or a warpgroup of 4 warps), fewer values differ: a `ThreadVarying` op may say
(`group_divisor`) that its result divided by, or compared with, a multiple of some number is the
same in every thread of the group, as a thread's index along x divided by a multiple of the warp
size is in a warp, where the block's x extent is a multiple too. An op that the threads of a
block, a warp or a warpgroup must execute together (a barrier, a shuffle, a tensor-core
instruction) says so with `Convergent`, whose verifier rejects it under an `scf.if` or `scf.for`
that they may take differently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from xdsl.dialects import arith, scf
from xdsl.ir import Operation, Region, SSAValue
from xdsl.traits import IsolatedFromAbove, OpTrait
from xdsl.utils.exceptions import VerifyException

from emmy.dialects.access import constant_index
from emmy.dialects.effects import named_operand


class Threads(Enum):
    """The threads a value may differ between, or an op must be executed by together."""

    BLOCK = "thread of the block"
    WARP = "lane of the warp"
    WARPGROUP = "thread of the warpgroup"


class ThreadVarying(OpTrait):
    """The op's results differ between the threads of a block, whatever its operands."""

    def group_divisor(self, op: Operation, among: Threads) -> int | None:
        """A number such that `op`'s result divided by, or compared (<, >=) with, any multiple
        of it is the same in every thread of a warp or warpgroup (`among`; 1: the result
        itself is), or None where none is known to be."""
        return None


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


# Comparisons `index < bound` and `index >= bound` (predicate names of arith.cmpi), and the
# same with the operands swapped.
_LESS = ("slt", "sge", "ult", "uge")
_SWAPPED_LESS = ("sgt", "sle", "ugt", "ule")


def _uniform_in_group(op: Operation, divisors: dict[SSAValue, int]) -> bool:
    """Whether `op`'s result is the same in every thread of a group although an operand is
    not: the quotient of a value by a multiple of its `group_divisor`, or the comparison of
    it with such a multiple (a group's values lie on one side of it)."""
    if isinstance(op, arith.DivUIOp):
        value, bound = op.lhs, op.rhs
    elif isinstance(op, arith.CmpiOp):
        predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        if predicate in _LESS:
            value, bound = op.lhs, op.rhs
        elif predicate in _SWAPPED_LESS:
            value, bound = op.rhs, op.lhs
        else:
            return False
    else:
        return False
    multiple = constant_index(bound)
    return (
        value in divisors
        and multiple is not None
        and multiple % divisors[value] == 0
        and (multiple > 0 or isinstance(op, arith.CmpiOp))
    )


def thread_dependent_values(body: Region, among: Threads = Threads.BLOCK) -> dict[SSAValue, str]:
    """The values of a kernel's `body` that may differ between the threads of one block (or
    warp, or warpgroup: `among`), each with the name of a `ThreadVarying` op it derives from.

    A def-use taint analysis from the ops' declared facts (see the module docstring; a load's
    result follows its indices, as memory is assumed race-free); an `scf.for`'s induction
    variable and results depend on the thread when its bounds do, and an `scf.if`'s results
    when its condition does. Loop-carried values are iterated to a fixed point."""
    dependent: dict[SSAValue, str] = {}
    # Within a group: the thread-varying values whose quotient by a multiple of this is uniform.
    divisors: dict[SSAValue, int] = {}
    changed = True

    def mark(values: Iterable[SSAValue], source: str) -> None:
        nonlocal changed
        for value in values:
            if value not in dependent:
                dependent[value] = source
                changed = True

    def source_of(values: Iterable[SSAValue]) -> str | None:
        return next((dependent[v] for v in values if v in dependent), None)

    # Each op's declared facts, read once for all the rounds to the fixed point.
    steps: list[tuple[Operation, ThreadVarying | None, tuple[SSAValue, ...]]] = []
    for op in body.walk():
        if isinstance(op, scf.ForOp | scf.IfOp):
            steps.append((op, None, ()))
        elif (varying := op.get_trait(ThreadVarying)) is not None:
            steps.append((op, varying, ()))
        else:
            steps.append((op, None, tuple(_inputs(op))))
    while changed:
        changed = False
        for op, varying, inputs in steps:
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
            elif varying is not None:
                divisor = None if among is Threads.BLOCK else varying.group_divisor(op, among)
                if divisor == 1:
                    continue
                if divisor is not None:
                    divisors.update((result, divisor) for result in op.results)
                mark(op.results, op.name)
            elif _uniform_in_group(op, divisors):
                continue
            elif (source := source_of(inputs)) is not None:
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


T = TypeVar("T")

_KEPT_ANALYSES: ContextVar[dict[tuple[Operation, object], object] | None] = ContextVar(
    "kept_analyses", default=None
)


@contextmanager
def analyses_kept() -> Iterator[None]:
    """Within it, what `kept_analysis` computes of an op is computed once (the thread-dependent
    values of a kernel for each of its convergent ops, a kernel's shared memory for each of
    its launches): for verifying a module whole, during which it does not change."""
    token = _KEPT_ANALYSES.set({})
    try:
        yield
    finally:
        _KEPT_ANALYSES.reset(token)


def kept_analysis(op: Operation, key: object, compute: Callable[[], T]) -> T:
    """`compute()`, an analysis `key` of `op`, kept within `analyses_kept`."""
    kept = _KEPT_ANALYSES.get()
    if kept is None:
        return compute()
    if (op, key) not in kept:
        kept[op, key] = compute()
    return kept[op, key]  # type: ignore[return-value]


def _kernel_thread_dependent_values(kernel: Operation, among: Threads) -> dict[SSAValue, str]:
    def compute() -> dict[SSAValue, str]:
        dependent: dict[SSAValue, str] = {}
        for region in kernel.regions:
            dependent.update(thread_dependent_values(region, among))
        return dependent

    return kept_analysis(kernel, among, compute)


@dataclass(frozen=True)
class Convergent(OpTrait):
    """Every thread of a block, a warp or a warpgroup (`among`) executes the op together, so it
    may not sit under an `scf.if` or `scf.for` that they may take differently."""

    among: Threads

    def verify(self, op: Operation) -> None:
        kernel = op.parent_op()
        while kernel is not None and not kernel.has_trait(IsolatedFromAbove):
            kernel = kernel.parent_op()
        if kernel is None:
            return
        divergent = divergent_ancestor(op, _kernel_thread_dependent_values(kernel, self.among))
        if divergent is None:
            return
        ancestor, source = divergent
        what = "condition depends" if isinstance(ancestor, scf.IfOp) else "bounds depend"
        raise VerifyException(
            f"a {op.name} must be reached by every {self.among.value}, but it is inside an "
            f"{ancestor.name} whose {what} on {source}"
        )
