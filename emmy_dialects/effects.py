"""Memory effects that name the operand they touch, and the buffers a region writes.

    loop.store %v, %y[%i, %j] : memref<32x2048xf32>     // WritesOperand("memref"): writes %y
    kernel.cp_async %s[%j], %x[%i, %j] bytes 16 : ...   // WritesOperand("destination"): %s,
                                                        // ReadsOperand("source"): %x

An op of the loop, tile and kernel dialects that reads or writes a buffer says which operand
with these traits. They are xDSL `MemoryEffect`s whose `EffectInstance`s carry the operand's
values, so xDSL's own analyses (dead code, CSE) see them as reads and writes; `written_values`
turns them into the set of buffers a kernel writes, which drives `const __restrict__`, the
aliasing check of `kernel.launch` and which buffers a schedule may stage.

An op whose effects are not tied to an operand is taken at its word where it says which
resource it touches (`WritesSharedMemory`: a `tile.stage` fills a shared copy of a row, no
operand); otherwise (upstream `memref.store`'s plain `MemoryWriteEffect`, or an op that declares
no effects at all) every memref operand it has counts as read and written, so an op that
forgets to declare its effects makes a buffer less const, never wrongly const.
"""

from __future__ import annotations

from collections.abc import Iterable, Set
from dataclasses import dataclass

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, Region, SSAValue
from xdsl.traits import (
    DefaultResource,
    EffectInstance,
    MemoryEffect,
    MemoryEffectKind,
    RecursiveMemoryEffect,
    Resource,
)
from xdsl.utils.exceptions import VerifyException


def named_operand(op: Operation, operand: str) -> tuple[SSAValue, ...]:
    """The values of the operand (single or variadic) of `op` that its definition names
    `operand`, for a trait that names it; a verify error when `op` has no such operand."""
    names = [name for name, _ in op.get_irdl_definition().operands]
    if operand not in names:
        raise VerifyException(f"'{op.name}' declares a fact about '{operand}', not an operand")
    value = getattr(op, operand)
    if value is None:  # an optional operand left out
        return ()
    return (value,) if isinstance(value, SSAValue) else tuple(value)


class BufferDescriptor:
    """A type whose values stand for a buffer without being one (a TMA tensor map): an op
    that accesses the buffer through one declares the effect on it."""


def operand_values(op: Operation, operand: str) -> tuple[SSAValue, ...]:
    """The buffer values (memrefs, and the values of a `BufferDescriptor` type) of `op`'s
    operand `operand`."""
    return tuple(
        v for v in named_operand(op, operand) if isinstance(v.type, MemRefType | BufferDescriptor)
    )


@dataclass(frozen=True)
class _OperandEffect(MemoryEffect):
    operand: str
    kind = MemoryEffectKind.READ

    def get_effects(self, op: Operation) -> Set[EffectInstance]:
        return {EffectInstance(self.kind, value) for value in operand_values(op, self.operand)}

    def verify(self, op: Operation) -> None:
        operand_values(op, self.operand)


@dataclass(frozen=True)
class ReadsOperand(_OperandEffect):
    """The op reads the buffers of its operand `operand`."""

    kind = MemoryEffectKind.READ


@dataclass(frozen=True)
class WritesOperand(_OperandEffect):
    """The op writes the buffers of its operand `operand`."""

    kind = MemoryEffectKind.WRITE


@dataclass(frozen=True)
class SharedMemoryResource(Resource):
    """The shared memory a block's ops fill without naming it as an operand."""

    def name(self) -> str:
        return "<shared memory>"


class WritesSharedMemory(MemoryEffect):
    """The op writes shared memory that none of its operands is (a `tile.stage`'s copy)."""

    @classmethod
    def get_effects(cls, op: Operation) -> Set[EffectInstance]:
        return {EffectInstance(MemoryEffectKind.WRITE, resource=SharedMemoryResource())}


def declared_effects(op: Operation) -> set[EffectInstance] | None:
    """The effects `op` itself declares (not those of the ops in its regions); None when it
    declares none."""
    traits = op.get_traits_of_type(MemoryEffect)
    if not traits:
        return None
    effects: set[EffectInstance] = set()
    for trait in traits:
        if isinstance(trait, RecursiveMemoryEffect):
            continue
        found = trait.get_effects(op)
        if found is None:
            return None
        effects.update(found)
    return effects


def _memrefs(values: Iterable[SSAValue]) -> set[SSAValue]:
    return {v for v in values if isinstance(v.type, MemRefType)}


def affected_values(op: Operation, kind: MemoryEffectKind) -> set[SSAValue]:
    """The buffers `op` itself reads or writes (`kind`), by its declared effects; every memref
    operand where an effect of that kind names no operand and no resource of its own, or
    where `op` declares no effects."""
    effects = declared_effects(op)
    if effects is None:
        return _memrefs(op.operands)
    found: set[SSAValue] = set()
    for effect in effects:
        if effect.kind != kind:
            continue
        if isinstance(effect.value, SSAValue):
            found.add(effect.value)
        elif effect.value is None and isinstance(effect.resource, DefaultResource):
            found |= _memrefs(op.operands)
    return found


def read_where_written(loads: Iterable[Operation], store: Operation) -> bool:
    """Whether each of `loads` (ops with a `memref` and `indices`, as `store`) reads, in
    `store`'s block and before it, at its indices: each element is read only by the iteration
    that then writes it, before it does, so a buffer may be read and written in place."""
    return all(
        load.parent is store.parent
        and load.is_before_in_block(store)
        and tuple(load.indices) == tuple(store.indices)
        for load in loads
    )


def written_values(root: Operation | Region) -> set[SSAValue]:
    """The buffers that some op in `root` (an op and its regions, or a region) writes."""
    return _touched_values(root, MemoryEffectKind.WRITE)


def read_values(root: Operation | Region) -> set[SSAValue]:
    """The buffers that some op in `root` (an op and its regions, or a region) reads."""
    return _touched_values(root, MemoryEffectKind.READ)


def _touched_values(root: Operation | Region, kind: MemoryEffectKind) -> set[SSAValue]:
    touched: set[SSAValue] = set()
    for op in root.walk():
        touched |= affected_values(op, kind)
    return touched
