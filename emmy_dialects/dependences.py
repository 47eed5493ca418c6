"""Which ops of a kernel pass data to each other through memory: those that must not run at
the same time in different threads, so that where they could, something must order them.

    tile.for %i in 0 to 8 map grid {
      tile.for %j in 0 to 64 map thread {         // writes %t
        memref.store %v, %t[%i, %j] : memref<8x64xf32>
      }
      tile.for %j in 0 to 64 map thread {         // reads %t: depends on the loop before it
        %w = memref.load %t[%i, %k] : memref<8x64xf32>
        ...
      }
    }

A later op depends on an earlier one when it reads or writes a buffer the earlier one writes,
or writes one the earlier one reads (`Accessed.passed_to`), by the buffers their ops name as
read and written (`emmy.dialects.effects`): per buffer, not per element, so a dependence may
be one that no element carries. In a loop body, an op of one iteration may depend on an op of
the one before (`first_carried_dependence`), except through a buffer that every iteration
accesses at elements of its own (`private_to_iterations`): the two loops above pass nothing
from one row to the next. The tile verifier refuses dependences between ops that blocks run at
once (nothing orders blocks), `lower-tile-to-kernel` puts a barrier between the ops of one
block, and `lower-loop-to-tile` launches dependent nests one after another.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.traits import MemoryEffectKind

from emmy.dialects.effects import affected_values


@dataclass(frozen=True)
class Accessed:
    """The buffers that some ops read and those they write."""

    read: frozenset[SSAValue] = frozenset()
    written: frozenset[SSAValue] = frozenset()

    @classmethod
    def by(cls, op: Operation) -> Accessed:
        """What `op` and the ops in its regions access."""
        read: set[SSAValue] = set()
        written: set[SSAValue] = set()
        for inner in op.walk():
            read |= affected_values(inner, MemoryEffectKind.READ)
            written |= affected_values(inner, MemoryEffectKind.WRITE)
        return cls(frozenset(read), frozenset(written))

    def __or__(self, other: Accessed) -> Accessed:
        return Accessed(self.read | other.read, self.written | other.written)

    def passed_to(self, later: Accessed) -> frozenset[SSAValue]:
        """The buffers through which the accesses `later`, made after these, depend on them:
        one of the two writes what the other reads or writes."""
        return (self.written & (later.read | later.written)) | (self.read & later.written)


@dataclass(frozen=True)
class Dependence:
    """`later` accesses `buffer`, which `earlier` accessed before it, one of them writing it;
    `carried`: `earlier` ran in the iteration before `later`'s, of the loop whose body they
    are."""

    earlier: Operation
    later: Operation
    buffer: SSAValue
    carried: bool = False


def first_dependence(ops: Sequence[Operation]) -> Dependence | None:
    """The first op of `ops` (run in order) that depends on an op before it."""
    accessed = [Accessed.by(op) for op in ops]
    for position, (later, after) in enumerate(zip(ops, accessed)):
        for earlier, before in zip(ops[:position], accessed[:position]):
            if shared := before.passed_to(after):
                return Dependence(earlier, later, _first(shared))
    return None


def first_carried_dependence(
    ops: Sequence[Operation], loops: Sequence[Operation], itself: bool
) -> Dependence | None:
    """The first op of `ops`, the body of `loops` (a loop, or a chain of loops run as one),
    that depends on an op of the iteration before: one at or after it in the body (with
    `itself`, the op itself too), except through a buffer private to the iterations."""
    accessed = [Accessed.by(op) for op in ops]
    private = private_to_iterations(loops, ops)
    for position, (later, after) in enumerate(zip(ops, accessed)):
        start = position if itself else position + 1
        for earlier, before in zip(ops[start:], accessed[start:]):
            if shared := before.passed_to(after) - private:
                return Dependence(earlier, later, _first(shared), carried=True)
    return None


def private_to_iterations(
    loops: Sequence[Operation], ops: Iterable[Operation]
) -> frozenset[SSAValue]:
    """The buffers that each iteration of `loops` accesses at elements of its own: every
    access to one in `ops` (their body) indexes it with each loop's induction variable, each
    at one dimension, the same in every access."""
    variables = [loop.regions[0].block.args[0] for loop in loops]
    dimensions: dict[SSAValue, list[set[int]]] = {}
    shared: set[SSAValue] = set()
    for op in ops:
        for access in op.walk():
            buffers = affected_values(access, MemoryEffectKind.READ) | affected_values(
                access, MemoryEffectKind.WRITE
            )
            indices = getattr(access, "indices", None)
            for buffer in buffers:
                if indices is None or getattr(access, "memref", None) is not buffer:
                    shared.add(buffer)
                    continue
                found = [{d for d, i in enumerate(indices) if i is v} for v in variables]
                known = dimensions.setdefault(buffer, found)
                dimensions[buffer] = [k & f for k, f in zip(known, found)]
    return frozenset(b for b, found in dimensions.items() if b not in shared and all(found))


def _first(buffers: Iterable[SSAValue]) -> SSAValue:
    """One of `buffers`, the same every time: the first argument among them, by position."""

    def position(buffer: SSAValue) -> tuple[int, str]:
        return (getattr(buffer, "index", 1 << 30), buffer.name_hint or "")

    return min(buffers, key=position)


def buffer_name(buffer: SSAValue) -> str:
    """`%name`, or which argument the buffer is."""
    if buffer.name_hint:
        return f"%{buffer.name_hint}"
    index = getattr(buffer, "index", None)
    return f"argument #{index}" if index is not None else "a buffer"
