"""What the kernels of every level share: a module-level symbol taking arguments, written
`@name(%x: memref<..>, ..)`, and launched from a host `func.func` with
`<dialect>.launch @name(%x, ..) : memref<..>, ..`.

    loop.kernel @k(%x: memref<4xf32>, %y: memref<4xf32>) { ... }      // a KernelSymbolOp
    func.func @forward(%x: memref<4xf32>) -> memref<4xf32> {
      %y = memref.alloc() : memref<4xf32>
      loop.launch @k(%x, %y) : memref<4xf32>, memref<4xf32>           // a LaunchOpBase
      func.return %y : memref<4xf32>
    }

A kernel whose buffers have a `?` dim takes the program's dynamic size as its last argument,
an `index` (`verify_kernel_arguments`; see `emmy.dialects.sizes`):

    loop.kernel @k(%x: memref<?x64xf32>, %y: memref<?x64xf32>, %s0: index) { ... }
    loop.launch @k(%x, %y, %s0) : memref<?x64xf32>, memref<?x64xf32>, index

`loop.kernel`, `tile.kernel` and `kernel.func` are `KernelSymbolOp`s (a launch shape, if the
level has one, is printed between the signature and the body); `loop.launch`, `tile.launch`
and `kernel.launch` are `LaunchOpBase`s, which find the kernel they name and check what they
pass against its signature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FunctionType,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation, prop_def, region_def, traits_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from emmy.dialects.effects import ReadsOperand, WritesOperand, written_values


def type_list(types: Sequence[Attribute]) -> str:
    return ", ".join(str(t) for t in types)


def print_shape(printer: Printer, keyword: str, values: Sequence[int]) -> None:
    """` grid [32, 1, 1]`: a launch shape after its keyword."""
    printer.print_string(f" {keyword} [{', '.join(map(str, values))}]")


def parse_shape(parser: Parser, keyword: str) -> list[int]:
    parser.parse_keyword(keyword)
    return parser.parse_comma_separated_list(
        Parser.Delimiter.SQUARE,
        lambda: parser.parse_integer(allow_boolean=False, context_msg=f" for a {keyword} size"),
    )


def _enclosing_symbol_table(op: Operation) -> Operation | None:
    table = op.parent_op()
    while table is not None and not table.has_trait(SymbolTable):
        table = table.parent_op()
    return table


def written_arguments(kernel: KernelSymbolOp) -> set[int]:
    """The positions of the arguments that the kernel writes (by its ops' declared effects)."""
    written = written_values(kernel.body)
    return {index for index, arg in enumerate(kernel.body.block.args) if arg in written}


def verify_kernel_arguments(kernel: KernelSymbolOp) -> None:
    """A kernel's arguments are buffers, then the dynamic size (an `index`) exactly when a
    buffer has a `?` dim."""
    types = kernel.argument_types
    buffers = types[:-1] if types and isinstance(types[-1], IndexType) else types
    for index, arg_type in enumerate(buffers):
        if not isinstance(arg_type, MemRefType):
            raise VerifyException(
                f"kernel argument #{index} must be a memref (or, last, the dynamic size as an "
                f"index), got {arg_type}"
            )
    dynamic = any(not b.has_static_shape() for b in buffers if isinstance(b, MemRefType))
    if dynamic and len(buffers) == len(types):
        raise VerifyException(
            "a kernel whose buffers have a dynamic dim (?) takes the dynamic size as its last "
            "argument, an index"
        )
    if not dynamic and len(buffers) != len(types):
        raise VerifyException(
            "a kernel takes the dynamic size (its last argument, an index) only when a buffer "
            "has a dynamic dim (?)"
        )


def kernel_size_argument(op: Operation) -> SSAValue | None:
    """The dynamic size argument (the last, an `index`) of the kernel that holds `op`, or
    None outside a kernel or in one that takes no size."""
    kernel = op.parent_op()
    while kernel is not None and not isinstance(kernel, KernelSymbolOp):
        kernel = kernel.parent_op()
    if kernel is None or not kernel.body.block.args:
        return None
    size = kernel.body.block.args[-1]
    return size if isinstance(size.type, IndexType) else None


def parse_argument_type(parser: Parser, what: str) -> Attribute:
    """A kernel argument's type: a memref, or `index` for the dynamic size."""
    pos = parser.pos
    parsed = parser.parse_type()
    if not isinstance(parsed, MemRefType | IndexType):
        parser.raise_error(f"{what} must be a memref or index, got {parsed}", pos, parser.pos)
    return parsed


class KernelSymbolOp(IRDLOperation):
    """A kernel at any level: a module-level symbol whose body runs on the device, printed
    `@name(%a: T, ..) <launch shape> attributes {..} { body }`; it returns nothing and
    writes its buffer arguments. A level adds its launch shape with `print_launch_shape`,
    `parse_launch_shape` (the constructor's arguments between the argument types and the
    body, unless `from_parsed` takes them otherwise) and its own checks in `verify_`, after
    `verify_symbol`."""

    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        argument_types: Sequence[Attribute],
        body: Region,
        properties: dict[str, Attribute] | None = None,
    ):
        super().__init__(
            regions=[body],
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(argument_types, []),
                **(properties or {}),
            },
        )

    @property
    def argument_types(self) -> tuple[Attribute, ...]:
        return tuple(self.function_type.inputs.data)

    def verify_symbol(self) -> None:
        parent = self.parent_op()
        if not isinstance(parent, ModuleOp):
            where = f"'{parent.name}'" if parent is not None else "no parent op"
            raise VerifyException(
                f"a {self.name} is a module-level symbol that {self.dialect_name()}.launch can "
                f"find, but its parent is {where}"
            )
        if self.function_type.outputs.data:
            raise VerifyException(
                f"a {self.name} returns nothing, it writes its buffer arguments; its type "
                f"{self.function_type} has results"
            )
        arg_types = tuple(a.type for a in self.body.block.args)
        if arg_types != self.argument_types:
            raise VerifyException(
                f"kernel body takes ({type_list(arg_types)}) but the kernel signature "
                f"says ({type_list(self.argument_types)})"
            )

    def print_launch_shape(self, printer: Printer) -> None:
        return

    @classmethod
    def parse_launch_shape(cls, parser: Parser) -> tuple:
        return ()

    @classmethod
    def from_parsed(
        cls, name: str, argument_types: list[Attribute], launch_shape: tuple, body: Region
    ) -> KernelSymbolOp:
        """The op of what `parse` read: by default the constructor takes the launch shape's
        parts between the argument types and the body."""
        return cls(name, argument_types, *launch_shape, body)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(SymbolRefAttr(self.sym_name))
        printer.print_string("(")
        printer.print_list(
            self.body.block.args,
            lambda arg: (
                printer.print_ssa_value(arg),
                printer.print_string(": "),
                printer.print_attribute(arg.type),
            ),
        )
        printer.print_string(")")
        self.print_launch_shape(printer)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        # The arguments were printed in the signature; an empty body's entry block label
        # would re-declare them, which the parser rejects.
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> KernelSymbolOp:
        name = parser.parse_symbol_name()
        args = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_argument)
        launch_shape = cls.parse_launch_shape(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body = parser.parse_region(args)
        op = cls.from_parsed(name.data, [a.type for a in args], launch_shape, body)
        if attributes is not None:
            op.attributes.update(attributes.data)
        return op


class LaunchOpBase(IRDLOperation):
    """Host side: runs the kernel named `kernel` (a `KERNEL_TYPE`) on `arguments`, printed
    `@name(%x, ..) attr-dict : memref<..>, ..`; a level whose launch carries more (the launch
    shape of `kernel.launch`) prints and parses it itself."""

    kernel = prop_def(SymbolRefAttr)
    arguments = var_operand_def(MemRefType | IndexType)
    traits = traits_def(ReadsOperand("arguments"), WritesOperand("arguments"))

    KERNEL_TYPE: ClassVar[type[KernelSymbolOp]]

    def __init__(
        self,
        kernel: str,
        arguments: Sequence[SSAValue],
        properties: dict[str, Attribute] | None = None,
    ):
        super().__init__(
            operands=[arguments],
            properties={"kernel": SymbolRefAttr(kernel), **(properties or {})},
        )

    def kernel_op(self) -> KernelSymbolOp | None:
        """The kernel this launch names, if the enclosing symbol table has it."""
        table = _enclosing_symbol_table(self)
        found = SymbolTable.lookup_symbol(table, self.kernel) if table is not None else None
        return found if isinstance(found, self.KERNEL_TYPE) else None

    @classmethod
    def passes(cls, given: Attribute, parameter: Attribute) -> bool:
        """Whether an argument of type `given` may be passed for a `parameter` of the kernel."""
        return given == parameter

    def verify_launch(self) -> KernelSymbolOp | None:
        """Checks that the launch runs in a host function and passes what the kernel it names
        takes; returns that kernel (None when the kernel's own signature is malformed, which
        its verifier reports)."""
        what, kind = self.name, self.KERNEL_TYPE.name
        host = self.parent_op()
        if not isinstance(host, func.FuncOp):
            where = f"'{host.name}'" if host is not None else "no parent op"
            raise VerifyException(
                f"a {what} runs on the host, in a func.func, but its parent is {where}"
            )
        if self.kernel.nested_references.data:
            raise VerifyException(
                f"a {what} names a module-level {kind}, got the nested reference {self.kernel}"
            )
        table = _enclosing_symbol_table(host)
        kernel = SymbolTable.lookup_symbol(table, self.kernel) if table is not None else None
        if kernel is None:
            raise VerifyException(f"no {kind} named {self.kernel} in the enclosing module")
        if not isinstance(kernel, self.KERNEL_TYPE):
            raise VerifyException(f"'{self.kernel}' names a '{kernel.name}', not a {kind}")
        if not isinstance(kernel.properties.get("function_type"), FunctionType):
            return None
        given = tuple(a.type for a in self.arguments)
        taken = kernel.argument_types
        if len(given) != len(taken) or not all(map(self.passes, given, taken)):
            raise VerifyException(
                f"launch passes ({type_list(given)}) but {self.kernel} takes "
                f"({type_list(kernel.argument_types)})"
            )
        return kernel

    def verify_(self) -> None:
        kernel = self.verify_launch()
        if kernel is not None:
            self.verify_no_written_alias(kernel)

    def verify_no_written_alias(self, kernel: KernelSymbolOp) -> None:
        """A buffer passed twice, where the kernel writes either position: the kernel's
        arguments do not alias (the cuda target prints them `__restrict__`, and a kernel's
        loads and stores are ordered only per argument). A tensor-map parameter is no
        pointer: the buffer passed again for it (a wgmma gemm's output, which TMA stores)
        aliases nothing the compiler sees, the kernel's fences ordering its accesses."""
        if len(set(self.arguments)) == len(self.arguments):
            return
        written = written_arguments(kernel)
        types = kernel.argument_types
        seen: dict[SSAValue, int] = {}
        for index, buffer in enumerate(self.arguments):
            if index < len(types) and not isinstance(types[index], MemRefType):
                continue
            if buffer in seen and (index in written or seen[buffer] in written):
                raise VerifyException(
                    f"launch passes one buffer as arguments #{seen[buffer]} and #{index} of "
                    f"{self.kernel}, which writes one of them; kernel arguments must not alias "
                    f"(they are __restrict__)"
                )
            seen.setdefault(buffer, index)

    def print_arguments(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.kernel)
        printer.print_string("(")
        printer.print_list(self.arguments, printer.print_ssa_value)
        printer.print_string(")")

    def print_types(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        if self.arguments:
            printer.print_string(" : ")
            printer.print_list((a.type for a in self.arguments), printer.print_attribute)

    def print(self, printer: Printer) -> None:
        self.print_arguments(printer)
        self.print_types(printer)

    @classmethod
    def parse_arguments(cls, parser: Parser) -> tuple[str, list]:
        """`@name(%operands)`: the kernel's name and the unresolved operands."""
        kernel = parser.parse_symbol_name()
        operands = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        return kernel.data, operands

    @classmethod
    def parse_types(
        cls, parser: Parser, operands: list, parse_type
    ) -> tuple[list[SSAValue], dict[str, Attribute]]:
        """`attr-dict : types`, the types read by `parse_type()`; the operands resolved."""
        attributes = parser.parse_optional_attr_dict()
        types: list[Attribute] = []
        pos = parser.pos
        if operands:
            parser.parse_punctuation(":")
            types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parse_type)
        return parser.resolve_operands(operands, types, pos), attributes

    @classmethod
    def parse(cls, parser: Parser) -> LaunchOpBase:
        kernel, operands = cls.parse_arguments(parser)
        arguments, attributes = cls.parse_types(
            parser, operands, lambda: parse_argument_type(parser, f"{cls.name} argument")
        )
        op = cls(kernel, arguments)
        op.attributes.update(attributes)
        return op
