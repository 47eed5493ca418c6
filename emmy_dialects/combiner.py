"""Reduction combiners shared by `prim.reduce` and reduction `loop.for` / `tile.for`.

    %s = prim.reduce add %x axes [1] init 0.0 : tensor<4x8xf32> -> tensor<4xf32>

A combiner (`add`, `mul`, `max`, `min`) is a `CombinerAttr` property, printed as its bare name
by the ops (`#prim<combiner add>` in generic form); its identity is the default init, and also
the init of every inner loop when one reduction spans several axes.
"""

from __future__ import annotations

import math

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, IntegerType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Operation, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


class Combiner(StrEnum):
    ADD = "add"
    MUL = "mul"
    MAX = "max"
    MIN = "min"


@irdl_attr_definition
class CombinerAttr(EnumAttribute[Combiner], SpacedOpaqueSyntaxAttribute):
    name = "prim.combiner"


COMBINERS = tuple(Combiner)


def identity(kind: str, element_type: Attribute) -> FloatAttr | IntegerAttr:
    """The value `x` with `combine(x, y) == y` for every `y` of `element_type`."""
    if isinstance(element_type, AnyFloat):
        value = {"add": 0.0, "mul": 1.0, "max": -math.inf, "min": math.inf}[kind]
        return FloatAttr(value, element_type)
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        value = {
            "add": 0,
            "mul": 1,
            "max": -(2 ** (width - 1)) if width > 1 else 0,
            "min": 2 ** (width - 1) - 1 if width > 1 else 1,
        }[kind]
        return IntegerAttr(value, element_type)
    raise VerifyException(f"no combiner identity for element type {element_type}")


_FLOAT_COMBINE = {
    "add": arith.AddfOp,
    "mul": arith.MulfOp,
    "max": arith.MaximumfOp,
    "min": arith.MinimumfOp,
}
_INTEGER_COMBINE = {
    "add": arith.AddiOp,
    "mul": arith.MuliOp,
    "max": arith.MaxSIOp,
    "min": arith.MinSIOp,
}


def combine(kind: str, lhs: SSAValue, rhs: SSAValue) -> Operation:
    """The scalar op that combines two partial results under `kind`."""
    table = _FLOAT_COMBINE if isinstance(lhs.type, AnyFloat) else _INTEGER_COMBINE
    return table[kind](lhs, rhs)


def verify_reduction(kind: str, init: Attribute) -> Attribute:
    """Checks a reduction's init; returns the init's type, the type being reduced."""
    if not isinstance(init, FloatAttr | IntegerAttr) or isinstance(init.type, IndexType):
        raise VerifyException(f"init must be a float or (non-index) integer constant, got {init}")
    return init.type


def verify_init(kind: str, init: Attribute, element_type: Attribute) -> None:
    if verify_reduction(kind, init) != element_type:
        raise VerifyException(
            f"init type {init.type} does not match the element type {element_type}"
        )


def parse_combiner(parser: Parser) -> Combiner:
    """Parses a combiner name, rejecting unknown ones where they are written."""
    pos = parser.pos
    kind = parser.parse_identifier(context_msg=" for the combiner")
    if kind not in COMBINERS:
        parser.raise_error(
            f"unknown combiner '{kind}'; expected one of {', '.join(COMBINERS)}", pos, parser.pos
        )
    return Combiner(kind)


def float_literal(value: float) -> str:
    """`value` as a literal the parser reads back: `1e-07` lexes as an integer followed by
    an identifier, so a mantissa always gets a decimal point."""
    if math.isnan(value) or math.isinf(value):
        return repr(value)
    mantissa, e, exponent = repr(value).partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def print_init(printer: Printer, init: FloatAttr | IntegerAttr) -> None:
    """Prints an init value as a bare number (`0.0`, `-inf`, `3`), typed by context."""
    value = init.value.data
    if isinstance(init, FloatAttr):
        printer.print_string(float_literal(float(value)))
    else:
        printer.print_string(str(value))


def parse_init_literal(parser: Parser) -> float | int:
    """Parses a bare number, `inf`, `-inf` or `nan`; its type comes later from the op's types."""
    sign = -1 if parser.parse_optional_punctuation("-") is not None else 1
    if parser.parse_optional_keyword("inf") is not None:
        return sign * math.inf
    if parser.parse_optional_keyword("nan") is not None:
        return math.nan
    return sign * parser.parse_number(context_msg=" for the init value")


def init_attr(
    parser: Parser, value: float | int, element_type: Attribute, pos: int
) -> FloatAttr | IntegerAttr:
    if isinstance(element_type, AnyFloat):
        return FloatAttr(float(value), element_type)
    if isinstance(element_type, IntegerType) and isinstance(value, int):
        low, high = element_type.value_range()
        if low <= value < high:
            return IntegerAttr(value, element_type)
        parser.raise_error(
            f"init {value} is out of range for {element_type}; expected {low} <= init < {high}",
            pos,
            parser.pos,
        )
    parser.raise_error(f"init {value} is not a valid {element_type} constant", pos, parser.pos)


def print_reduction(printer: Printer, kind: CombinerAttr | None, init: Attribute | None) -> None:
    """Prints a loop's ` reduce KIND init VALUE : TYPE` clause, if it has one."""
    if kind is None:
        return
    printer.print_string(f" reduce {kind.data} init ")
    print_init(printer, init)
    printer.print_string(" : ")
    printer.print_attribute(init.type)


def parse_reduction(parser: Parser) -> tuple[Combiner, FloatAttr | IntegerAttr] | None:
    """Parses an optional ` reduce KIND init VALUE : TYPE` clause."""
    if parser.parse_optional_keyword("reduce") is None:
        return None
    kind = parse_combiner(parser)
    parser.parse_keyword("init")
    pos = parser.pos
    value = parse_init_literal(parser)
    parser.parse_punctuation(":")
    return kind, init_attr(parser, value, parser.parse_type(), pos)
