"""Reduction combiners shared by `prim.reduce` and reduction `loop.for` / `tile.for`.

    %s = prim.reduce add %x axes [1] init 0.0 : tensor<4x8xf32> -> tensor<4xf32>

A combiner (`add`, `mul`, `max`, `min`) is a `CombinerAttr` property, printed as its bare name
by the ops (`#prim<combiner add>` in generic form); its identity is the default init, and also
the init of every inner loop when one reduction spans several axes.

A reduction that carries state (`prim.multi_reduce`, and a loop's `reduce (...) init (...)`)
combines with a region instead: its block takes the accumulators, then the values folded into
them, and yields the new accumulators (argmax's (value, index), online softmax's (max, sum)).
Its inits are the region's identity: every thread of a block starts its partial result from
them, and partial results combine in any grouping, so the region must be associative:

    ^bb0(%m: f32, %l: f32, %x: f32, %one: f32):     // (running max, rescaled sum) + one more
      ...
      prim.yield %new_m, %new_l : f32, f32
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, IntegerType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Operation,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
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


def parse_reduction(
    parser: Parser,
) -> tuple[Combiner, FloatAttr | IntegerAttr] | StateReduction | None:
    """Parses an optional ` reduce KIND init VALUE : TYPE` clause, or a combiner region's
    ` reduce (%acc: T, ..., %value: T, ...) init (VALUE, ...) { ... }`."""
    if parser.parse_optional_keyword("reduce") is None:
        return None
    pos = parser.pos
    arguments = parser.parse_optional_comma_separated_list(
        Parser.Delimiter.PAREN, parser.parse_argument
    )
    if arguments is not None:
        if len(arguments) % 2:
            parser.raise_error(
                "a combiner takes the accumulators then the values folded into them, an even "
                f"number of arguments, not {len(arguments)}",
                pos,
                parser.pos,
            )
        parser.parse_keyword("init")
        init_pos, values = parse_init_literals(parser)
        types = [a.type for a in arguments[: len(arguments) // 2]]
        inits = inits_of(parser, init_pos, values, types)
        return inits, parser.parse_region(arguments)
    kind = parse_combiner(parser)
    parser.parse_keyword("init")
    pos = parser.pos
    value = parse_init_literal(parser)
    parser.parse_punctuation(":")
    return kind, init_attr(parser, value, parser.parse_type(), pos)


def print_state_reduction(
    printer: Printer, inits: Sequence[FloatAttr | IntegerAttr], combiner: Region
) -> None:
    """Prints a loop's ` reduce (%acc: T, ..., %value: T, ...) init (VALUE, ...) { ... }`."""
    printer.print_string(" reduce (")
    printer.print_list(combiner.block.args, printer.print_block_argument)
    printer.print_string(") init ")
    print_inits(printer, inits)
    printer.print_string(" ")
    printer.print_region(combiner, print_entry_block_args=False)


StateReduction = tuple[tuple[FloatAttr | IntegerAttr, ...], Region]
"""A reduction whose combiner is a region: one init per accumulator, and the region (see the
module docstring)."""

COMBINER_DIALECTS = ("arith", "math")


def verify_combiner(
    region: Region, inits: Sequence[Attribute], yield_type: type[Operation], what: str
) -> tuple[Attribute, ...]:
    """Checks a combiner region against its inits (one per accumulator, each a scalar
    constant); returns the accumulators' types."""
    if not inits:
        raise VerifyException(f"{what} has at least one accumulator, but it has no init")
    types = tuple(verify_reduction("region", init) for init in inits)
    listed = ", ".join(map(str, types))
    if len(region.blocks) != 1:
        raise VerifyException(f"{what}'s combiner region is one block")
    block = region.block
    arg_types = tuple(a.type for a in block.args)
    if arg_types != types * 2:
        raise VerifyException(
            f"{what}'s combiner takes the accumulators then the values folded into them "
            f"({listed}, {listed}), one pair per init, but it takes "
            f"({', '.join(map(str, arg_types))})"
        )
    terminator = block.last_op
    if not isinstance(terminator, yield_type):
        ending = "it is empty" if terminator is None else f"it ends in '{terminator.name}'"
        raise VerifyException(f"{what}'s combiner must end in a {yield_type.name}, but {ending}")
    yielded = tuple(v.type for v in terminator.operands)
    if yielded != types:
        raise VerifyException(
            f"{what}'s combiner yields the new accumulators ({listed}), but its "
            f"{yield_type.name} yields ({', '.join(map(str, yielded))})"
        )
    for op in block.ops:
        if op is not terminator and op.dialect_name() not in COMBINER_DIALECTS:
            raise VerifyException(
                f"{what}'s combiner holds only arith and math ops, found '{op.name}'"
            )
        for value in op.operands:
            if not region.is_ancestor(value.owner) and not isinstance(
                value.owner, arith.ConstantOp
            ):
                raise VerifyException(
                    f"'{op.name}' in {what}'s combiner uses a value defined outside it; a "
                    "combiner sees only its block arguments, constants and what it computes "
                    "from them"
                )
    return types


def inline_combiner(
    region: Region,
    accumulators: Sequence[SSAValue],
    values: Sequence[SSAValue],
    add: Callable[[Operation], Operation],
) -> list[SSAValue]:
    """Emits the combiner region's ops through `add` on `accumulators` and `values`; returns
    the new accumulators. A constant from outside the region (where cse merged the region's
    own with an equal one) is emitted again, as the region is not inlined where it was."""
    block = region.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, (*accumulators, *values)))
    terminator = block.last_op
    for op in block.ops:
        for operand in op.operands:
            if operand not in mapping and not region.is_ancestor(operand.owner):
                mapping[operand] = add(operand.owner.clone()).results[0]
        if op is terminator:
            break
        clone = add(op.clone(value_mapper=mapping))
        mapping.update(zip(op.results, clone.results))
    return [mapping[v] for v in terminator.operands]


def copy_combiner(region: Region, yield_type: Callable[..., Operation]) -> Region:
    """The combiner region with its terminator made `yield_type`'s (from one dialect's
    reduction to another's)."""
    block = Block(arg_types=[a.type for a in region.block.args])
    for old, new in zip(region.block.args, block.args):
        new.name_hint = old.name_hint
    half = len(block.args) // 2

    def add(op: Operation) -> Operation:
        block.add_op(op)
        return op

    results = inline_combiner(region, block.args[:half], block.args[half:], add)
    block.add_op(yield_type(*results))
    return Region(block)


def print_inits(printer: Printer, inits: Sequence[FloatAttr | IntegerAttr]) -> None:
    """Prints inits as a parenthesised list of bare numbers, typed by context."""
    printer.print_string("(")
    printer.print_list(inits, lambda init: print_init(printer, init))
    printer.print_string(")")


def parse_init_literals(parser: Parser) -> tuple[int, list[float | int]]:
    """Parses `(VALUE, ...)`; returns where the list starts and the values, which the
    accumulators' types convert (`inits_of`)."""
    pos = parser.pos
    values = parser.parse_comma_separated_list(
        Parser.Delimiter.PAREN, lambda: parse_init_literal(parser)
    )
    return pos, values


def inits_of(
    parser: Parser, pos: int, values: Sequence[float | int], types: Sequence[Attribute]
) -> tuple[FloatAttr | IntegerAttr, ...]:
    if len(values) != len(types):
        parser.raise_error(
            f"expected one init per accumulator ({len(types)}), got {len(values)}", pos, parser.pos
        )
    return tuple(init_attr(parser, v, t, pos) for v, t in zip(values, types))
