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
or writes one the earlier one reads (`Accessed.passed_to`, `Dependence`), by the buffers their
ops name as read and written (`emmy.dialects.effects`): per buffer, not per element, so a
dependence may be one that no element carries. The tile verifier refuses dependences between
ops that blocks run at once (nothing orders blocks), `lower-tile-to-kernel` puts a barrier
between the ops of one block, and `lower-loop-to-tile` launches dependent nests one after
another. The iterations of a parallel loop promise to be independent; where one block runs
them one after another, `lower-tile-to-kernel` still orders an iteration's last ops before
the next one's first where they share a buffer that is not private to each iteration
(`private_to_iterations`: the two loops above pass nothing from one row to the next), and
the verifier refuses the one break of the promise it can see, a store that every iteration
makes to the same elements (`store_shared_by_iterations`), where the iterations run on
different blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.traits import MemoryEffectKind

from emmy.dialects.effects import affected_values


@dataclass(frozen=True)
class Accessed:
    """The buffers that some ops read and those they write."""

    read: frozenset[SSAValue]
    written: frozenset[SSAValue]

    @classmethod
    def by(cls, op: Operation) -> Accessed:
        """What `op` and the ops in its regions access."""
        read: set[SSAValue] = set()
        written: set[SSAValue] = set()
        for inner in op.walk():
            read |= affected_values(inner, MemoryEffectKind.READ)
            written |= affected_values(inner, MemoryEffectKind.WRITE)
        return cls(frozenset(read), frozenset(written))

    def passed_to(self, later: Accessed) -> frozenset[SSAValue]:
        """The buffers through which the accesses `later`, made after these, depend on them:
        one of the two writes what the other reads or writes."""
        return (self.written & (later.read | later.written)) | (self.read & later.written)


@dataclass(frozen=True)
class Dependence:
    """`later` accesses `buffer`, which `earlier` accessed before it, one of them writing it
    (`writes`: whether each does, earlier's first)."""

    earlier: Operation
    later: Operation
    buffer: SSAValue
    writes: tuple[bool, bool]

    @classmethod
    def between(
        cls, earlier: tuple[Operation, Accessed], later: tuple[Operation, Accessed]
    ) -> Dependence | None:
        """How the op `later` depends on `earlier` (each with what it accesses), if it does."""
        (first, before), (second, after) = earlier, later
        shared = before.passed_to(after)
        if not shared:
            return None
        buffer = min(shared, key=_position)
        return cls(first, second, buffer, (buffer in before.written, buffer in after.written))

    def explain(self, name: Callable[[Operation], str]) -> str:
        """`<later> reads %t, which <earlier> writes`, the ops as `name` names them."""
        earlier, later = ("writes" if w else "reads" for w in self.writes)
        return (
            f"{name(self.later)} {later} {buffer_name(self.buffer)}, which "
            f"{name(self.earlier)} {earlier}"
        )


def first_dependence(ops: Sequence[Operation]) -> Dependence | None:
    """The first op of `ops` (run in order) that depends on an op before it."""
    accessed = [(op, Accessed.by(op)) for op in ops]
    for position, later in enumerate(accessed):
        for earlier in accessed[:position]:
            if dependence := Dependence.between(earlier, later):
                return dependence
    return None


def store_shared_by_iterations(loop: Operation) -> SSAValue | None:
    """The buffer of the first store in the body of `loop` that every iteration makes to the
    same elements: none of its indices depends on the loop's variable. (Parallel iterations
    promise to be independent: such a store breaks the promise where it runs more than
    once.)"""
    variable = loop.regions[0].block.args[0]
    varying: set[SSAValue] = {variable}
    for op in loop.regions[0].block.walk():
        if any(operand in varying for operand in op.operands):
            varying.update(op.results)
        written = affected_values(op, MemoryEffectKind.WRITE)
        if written and not any(index in varying for index in getattr(op, "indices", ())):
            return min(written, key=_position)
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


def _position(buffer: SSAValue) -> tuple[int, str]:
    """Orders buffers so that one of several is the same every time: arguments first."""
    return (getattr(buffer, "index", 1 << 30), buffer.name_hint or "")


def buffer_name(buffer: SSAValue) -> str:
    """`%name`, or which argument the buffer is."""
    if buffer.name_hint:
        return f"%{buffer.name_hint}"
    index = getattr(buffer, "index", None)
    return f"argument #{index}" if index is not None else "a buffer"
