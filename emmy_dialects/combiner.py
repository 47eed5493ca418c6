"""Reduction combiners shared by `prim.reduce` and reduction `loop.for`.

A combiner is named by a string property (`add`, `mul`, `max`, `min`); its identity is the
default init, and also the init of every inner loop when one reduction spans several axes.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, IntegerType
from xdsl.dialects import arith
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

COMBINERS = ("add", "mul", "max", "min")


def verify_combiner(kind: str) -> None:
    if kind not in COMBINERS:
        raise VerifyException(
            f"unknown combiner '{kind}'; expected one of {', '.join(COMBINERS)}"
        )


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


def verify_init(kind: str, init: Attribute, element_type: Attribute) -> None:
    verify_combiner(kind)
    if not isinstance(init, FloatAttr | IntegerAttr) or isinstance(init.type, IndexType):
        raise VerifyException(f"init must be a float or integer constant, got {init}")
    if init.type != element_type:
        raise VerifyException(
            f"init type {init.type} does not match the element type {element_type}"
        )


def print_init(printer: Printer, init: FloatAttr | IntegerAttr) -> None:
    """Prints an init value as a bare number (`0.0`, `-inf`, `3`), typed by context."""
    value = init.value.data
    if isinstance(init, FloatAttr):
        printer.print_string(repr(float(value)))
    else:
        printer.print_string(str(value))


def parse_init_literal(parser: Parser) -> float | int:
    """Parses a bare number, `inf` or `-inf`; its type comes later from the op's types."""
    sign = -1 if parser.parse_optional_punctuation("-") is not None else 1
    if parser.parse_optional_keyword("inf") is not None:
        return sign * math.inf
    return sign * parser.parse_number(context_msg=" for the init value")


def init_attr(
    parser: Parser, value: float | int, element_type: Attribute, pos: int
) -> FloatAttr | IntegerAttr:
    if isinstance(element_type, AnyFloat):
        return FloatAttr(float(value), element_type)
    if isinstance(element_type, IntegerType) and isinstance(value, int):
        return IntegerAttr(value, element_type)
    parser.raise_error(f"init {value} is not a valid {element_type} constant", pos, parser.pos)
