"""What the kernels of every level share: a module-level symbol taking buffer arguments,
written `@name(%x: memref<..>, ..)`, and launched from a host `func.func` with
`<dialect>.launch @name(%x, ..) : memref<..>, ..`."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, MemRefType, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException


def type_list(types: Sequence[Attribute]) -> str:
    return ", ".join(str(t) for t in types)


def print_signature(printer: Printer, name: StringAttr, args: Sequence[SSAValue]) -> None:
    printer.print_string(" ")
    printer.print_attribute(SymbolRefAttr(name))
    printer.print_string("(")
    printer.print_list(
        args,
        lambda arg: (
            printer.print_ssa_value(arg),
            printer.print_string(": "),
            printer.print_attribute(arg.type),
        ),
    )
    printer.print_string(")")


def parse_signature(parser: Parser) -> tuple[StringAttr, list[Parser.Argument]]:
    name = parser.parse_symbol_name()
    args = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_argument)
    return name, args


def parse_memref_type(parser: Parser, what: str) -> MemRefType:
    pos = parser.pos
    parsed = parser.parse_type()
    if not isinstance(parsed, MemRefType):
        parser.raise_error(f"{what} must be a memref, got {parsed}", pos, parser.pos)
    return parsed


def verify_launch(
    launch: Operation, kernel_name: SymbolRefAttr, buffers: Sequence[SSAValue], kernel_type: type
) -> Operation | None:
    """Checks that `launch` runs in a host function and passes the buffers the kernel it
    names takes; returns that kernel (None when the kernel's own signature is malformed,
    which its verifier reports)."""
    what = launch.name
    kind = kernel_type.name
    host = launch.parent_op()
    if not isinstance(host, func.FuncOp):
        where = f"'{host.name}'" if host is not None else "no parent op"
        raise VerifyException(
            f"a {what} runs on the host, in a func.func, but its parent is {where}"
        )
    if kernel_name.nested_references.data:
        raise VerifyException(
            f"a {what} names a module-level {kind}, got the nested reference {kernel_name}"
        )
    table = host.parent_op()
    while table is not None and not table.has_trait(SymbolTable):
        table = table.parent_op()
    kernel = SymbolTable.lookup_symbol(table, kernel_name) if table is not None else None
    if kernel is None:
        raise VerifyException(f"no {kind} named {kernel_name} in the enclosing module")
    if not isinstance(kernel, kernel_type):
        raise VerifyException(f"'{kernel_name}' names a '{kernel.name}', not a {kind}")
    function_type = kernel.properties.get("function_type")
    if not isinstance(function_type, FunctionType):
        return None
    given = tuple(b.type for b in buffers)
    expected = tuple(function_type.inputs.data)
    if given != expected:
        raise VerifyException(
            f"launch passes ({type_list(given)}) but {kernel_name} takes ({type_list(expected)})"
        )
    return kernel


def print_launch(printer: Printer, launch: Operation, kernel: SymbolRefAttr, buffers) -> None:
    printer.print_string(" ")
    printer.print_attribute(kernel)
    printer.print_string("(")
    printer.print_list(buffers, printer.print_ssa_value)
    printer.print_string(")")
    printer.print_op_attributes(launch.attributes)
    if buffers:
        printer.print_string(" : ")
        printer.print_list((b.type for b in buffers), printer.print_attribute)


def parse_launch(parser: Parser, what: str) -> tuple[str, list[SSAValue], dict[str, Attribute]]:
    """Parses `@name(%buffers) attr-dict : types`."""
    kernel = parser.parse_symbol_name()
    operands = parser.parse_comma_separated_list(
        Parser.Delimiter.PAREN, parser.parse_unresolved_operand
    )
    attributes = parser.parse_optional_attr_dict()
    types: list[Attribute] = []
    pos = parser.pos
    if operands:
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(
            Parser.Delimiter.NONE, lambda: parse_memref_type(parser, f"{what} buffer")
        )
    return kernel.data, parser.resolve_operands(operands, types, pos), attributes
