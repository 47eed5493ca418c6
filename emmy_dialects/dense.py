"""Tensor literals of the constant ops (`torch.constant`, `prim.constant`), a splat kept as its
one element.

    %c = torch.constant dense<1.0> : tensor<10000000xf32>

holds the value `dense<1.0> : tensor<f32>` (4 bytes) beside its result type, not the 40 MB that
xDSL 0.75's dense attribute would store (it expands a splat into every element, and unpacks
every element to print one): a rank-0 value under a result of more elements is that value in
every element. The custom form prints and parses it as above; the generic form shows the
rank-0 value (`<{value = dense<1.0> : tensor<f32>}> : () -> tensor<10000000xf32>`). The
interpreters broadcast it; lowered, a kernel computes it (see `prim.ConstantOp.splat_map`).
"""

from __future__ import annotations

import re
from math import prod

from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

LITERAL_ELEMENT = re.compile(r"-?0x[0-9a-fA-F]+|true|false|[-+]?[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?")

SPLAT_LITERAL = re.compile(
    r"\s*dense\s*<\s*(-?\s*(?:0x[0-9a-fA-F]+|true|false|[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?))\s*>"
)
"""`dense<1.0>`: a literal of one element, which the type after it may repeat."""


def _hex_float(token: str, element_type: AnyFloat) -> float:
    """The float whose bits a `0x...` literal gives; ValueError for one that does not fit."""
    size = element_type.compile_time_size
    bits = int(token, 16)
    if token.startswith("-") or bits >> (8 * size):
        raise ValueError(
            f"a hexadecimal float literal is the {8 * size} bits of an {element_type}, without "
            f"a sign, got {token}"
        )
    return element_type.unpack(bits.to_bytes(size, "little"), 1)[0]


def dense_with_hex_floats(literal: str, type: TensorType) -> DenseIntOrFPElementsAttr:
    """Re-reads a float `dense<...>` literal whose inf/nan elements are printed as hex bit
    patterns: xDSL 0.75 prints them so but parses hex back as an integer value. ValueError for
    a hex literal that is not the bits of the element type."""
    element_type = type.get_element_type()
    elements = literal[literal.index("<") + 1 : literal.index(">")]
    values = [
        _hex_float(token, element_type) if "0x" in token else float(token)
        for token in LITERAL_ELEMENT.findall(elements)
    ]
    return DenseIntOrFPElementsAttr.from_list(type, values)


def is_splat(value: DenseIntOrFPElementsAttr, result_type: Attribute) -> bool:
    """Whether `value` is a rank-0 value standing for every element of `result_type`."""
    return not value.get_shape() and value.type != result_type


def splat_element(value: DenseIntOrFPElementsAttr) -> int | float | None:
    """The one element of a value whose elements are all equal, else None; looks at the bytes,
    so an expanded splat costs no Python object per element."""
    data = value.data.data
    size = value.get_element_type().compile_time_size
    if not data or memoryview(data)[size:] != memoryview(data)[:-size]:
        return None
    return value.get_element_type().unpack(data[:size], 1)[0]


def verify_literal(value: DenseIntOrFPElementsAttr, result_type: TensorType, what: str) -> None:
    """A constant's value is of its result type, or a splat: a rank-0 value of its element."""
    element = result_type.get_element_type()
    if value.type == result_type or value.type == TensorType(element, []):
        return
    raise VerifyException(
        f"a {what} of type {result_type} holds a value of that type, or a splat of one "
        f"{element} (a rank-0 tensor), not {value.type}"
    )


def print_literal(printer: Printer, value: DenseIntOrFPElementsAttr, result_type: Attribute):
    """`dense<1.0> : tensor<4xf32>`, as xDSL prints it, without unpacking every element."""
    element = value.get_element_type()
    data = value.data.data
    if len(data) > element.compile_time_size and (one := splat_element(value)) is not None:
        value = DenseIntOrFPElementsAttr.from_list(TensorType(element, []), [one])
    if len(value) > 100:
        printer.print_string(f'dense<"0x{data.hex().upper()}">')
    else:
        value.print_without_type(printer)
    printer.print_string(" : ")
    printer.print_attribute(result_type)


def parse_literal(parser: Parser, what: str) -> tuple[DenseIntOrFPElementsAttr, Attribute]:
    """A `dense<...> : type` literal: (its value, the type). A one-element literal of a type
    of more elements gives a rank-0 value."""
    content = parser.lexer.input.content
    pos = parser.pos
    splat = SPLAT_LITERAL.match(content, pos)
    if splat is None:
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error(f"{what} takes a dense<...> literal, got {value}", pos, parser.pos)
        literal = content[pos : parser.pos]
        # A hex string (`dense<"0x...">`) holds the bytes, which xDSL reads right.
        if (
            "0x" in literal
            and '"' not in literal
            and isinstance(value.get_element_type(), AnyFloat)
        ):
            try:
                value = dense_with_hex_floats(literal, value.type)
            except ValueError as error:
                parser.raise_error(str(error), pos, parser.pos)
        return value, value.type
    parser.parse_keyword("dense")
    parser.parse_punctuation("<")
    number_pos = parser.pos
    number = parser.parse_number(allow_boolean=True)
    parser.parse_punctuation(">")
    parser.parse_punctuation(":")
    type_pos = parser.pos
    result_type = parser.parse_type()
    element = result_type.get_element_type() if isinstance(result_type, TensorType) else None
    if not isinstance(element, IntegerType | IndexType | AnyFloat) or any(
        size < 0 for size in result_type.get_shape()
    ):
        parser.raise_error(
            f"{what} takes a statically shaped tensor of integers, index or floats, got "
            f"{result_type}",
            type_pos,
            parser.pos,
        )
    if isinstance(number, float) and not isinstance(element, AnyFloat):
        parser.raise_error(f"a {element} literal is an integer, got {number}", number_pos)
    count = prod(result_type.get_shape())
    value_type = result_type if count <= 1 else TensorType(element, [])
    if isinstance(element, AnyFloat) and "0x" in splat.group(1):
        try:
            return dense_with_hex_floats(splat.group(0), value_type), result_type
        except ValueError as error:
            parser.raise_error(str(error), number_pos, type_pos)
    try:
        return DenseIntOrFPElementsAttr.from_list(value_type, [number]), result_type
    except (ValueError, OverflowError) as error:
        parser.raise_error(f"a literal out of its type's range: {error}", number_pos, type_pos)
