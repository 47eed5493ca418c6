"""Element accesses of a buffer, `%buffer[%i, %j]`, as the loop and kernel dialects spell them.

    %v = loop.load %x[%i, %j] : memref<32x2048xf32>
    %old = kernel.atomic add %v, %y[%i] : memref<32xf32>

An access takes one `index` per dimension of its memref (`verify_indices`), is printed as the
buffer, its indices in square brackets, and is parsed back with the memref type given after the
op (`parse_memref_type`, which names what must be a memref when it is not).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import OpResult, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


def constant_index(value: SSAValue) -> int | None:
    """The value of an integer that an `arith.constant` defines, None for any other."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def verify_indices(buffer: SSAValue, indices: Sequence[SSAValue]) -> MemRefType:
    """One index per dimension of the accessed memref; returns its type."""
    memref_type = buffer.type
    assert isinstance(memref_type, MemRefType)
    rank = memref_type.get_num_dims()
    if len(indices) != rank:
        raise VerifyException(
            f"a rank-{rank} {memref_type} takes {rank} indices, but {len(indices)} are given"
        )
    return memref_type


def verify_constant_rows(indices: SSAValue, rows: int) -> None:
    """Indices given by a constant (an op whose `value` is a dense literal) pick rows of a
    table of `rows` rows: past the end they would read outside it in the kernel, where the
    indices are data that no verifier sees."""
    literal = indices.owner.properties.get("value") if isinstance(indices, OpResult) else None
    if not isinstance(literal, DenseIntOrFPElementsAttr) or not isinstance(
        literal.get_element_type(), IntegerType
    ):
        return
    outside = next((i for i in literal.get_values() if not 0 <= i < rows), None)
    if outside is not None:
        raise VerifyException(
            f"constant index {outside} is outside the {rows} rows of the table it picks from"
        )


def parse_memref_type(parser: Parser, what: str) -> MemRefType:
    pos = parser.pos
    parsed = parser.parse_type()
    if not isinstance(parsed, MemRefType):
        parser.raise_error(f"{what} must be a memref, got {parsed}", pos, parser.pos)
    return parsed


def print_access(printer: Printer, buffer: SSAValue, indices: Sequence[SSAValue]) -> None:
    printer.print_ssa_value(buffer)
    printer.print_string("[")
    printer.print_list(indices, printer.print_ssa_value)
    printer.print_string("]")


def parse_access(parser: Parser) -> tuple[UnresolvedOperand, list[UnresolvedOperand]]:
    """`%buffer[%indices]`, unresolved until the memref type after the op is known."""
    buffer = parser.parse_unresolved_operand()
    indices = parser.parse_comma_separated_list(
        Parser.Delimiter.SQUARE, parser.parse_unresolved_operand
    )
    return buffer, indices


def resolve_access(
    parser: Parser,
    access: tuple[UnresolvedOperand, list[UnresolvedOperand]],
    memref_type: MemRefType,
    pos: int,
) -> tuple[SSAValue, list[SSAValue]]:
    buffer, indices = access
    (resolved,) = parser.resolve_operands([buffer], [memref_type], pos)
    return resolved, parser.resolve_operands(indices, [IndexType()] * len(indices), pos)
