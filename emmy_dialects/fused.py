"""Fused IR (`fused`): which primitives share one GPU kernel.

A `fused.kernel` sits in the host `func.func` where its results are needed. Its region is
isolated: it sees only its operands (as entry-block arguments), computes with `prim` ops on
value tensors and ends in a `fused.yield` of its results.

    %y = fused.kernel @k_rms_norm(%x, %w) : (tensor<32x2048xf32>, tensor<2048xf32>)
        -> tensor<32x2048xf32> {
    ^bb0(%a: tensor<32x2048xf32>, %b: tensor<2048xf32>):
      ...
      fused.yield %r : tensor<32x2048xf32>
    }
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr, SymbolRefAttr, TensorType
from xdsl.ir import Attribute, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    prop_def,
    region_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from emmy.dialects.prim import Prim, ends_in, parse_tensor_type, verify_shapes


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a `fused.kernel` with the tensors it produces."""

    name = "fused.yield"
    arguments = var_operand_def(TensorType)
    traits = lazy_traits_def(lambda: (IsTerminator(), Pure(), HasParent(KernelOp)))

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        if self.arguments:
            printer.print_string(" ")
            printer.print_list(self.arguments, printer.print_ssa_value)
            printer.print_string(" : ")
            printer.print_list((v.type for v in self.arguments), printer.print_attribute)

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        attributes = parser.parse_optional_attr_dict()
        operands = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        )
        values = []
        if operands is not None:
            parser.parse_punctuation(":")
            pos = parser.pos
            types = parser.parse_comma_separated_list(
                Parser.Delimiter.NONE, lambda: parse_tensor_type(parser, "fused.yield value")
            )
            values = parser.resolve_operands(operands, types, pos)
        op = cls(*values)
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class KernelOp(IRDLOperation):
    """One future GPU kernel: an isolated region of prim computation on value tensors."""

    name = "fused.kernel"
    kernel_name = prop_def(StringAttr, prop_name="sym_name")
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = lazy_traits_def(lambda: (IsolatedFromAbove(), RecursiveMemoryEffect()))

    def __init__(
        self,
        name: str,
        inputs: Sequence[SSAValue],
        output_types: Sequence[Attribute],
        body: Region,
    ):
        super().__init__(
            operands=[inputs],
            result_types=[output_types],
            regions=[body],
            properties={"sym_name": StringAttr(name)},
        )

    def verify_(self) -> None:
        parent = self.parent_op()
        if not isinstance(parent, func.FuncOp):
            where = f"'{parent.name}'" if parent is not None else "no parent op"
            raise VerifyException(
                f"a fused.kernel is launched from a host func.func, but its parent is {where}"
            )
        if not self.outputs:
            raise VerifyException("a fused.kernel has at least one result; it has none")
        verify_shapes(self)
        block = self.body.block
        if len(block.args) != len(self.inputs):
            raise VerifyException(
                f"a fused.kernel body takes one argument per operand ({len(self.inputs)}), "
                f"but it takes {len(block.args)}"
            )
        for index, (arg, value) in enumerate(zip(block.args, self.inputs)):
            if arg.type != value.type:
                raise VerifyException(
                    f"kernel body argument #{index} has type {arg.type} but operand "
                    f"#{index} has type {value.type}"
                )
        terminator = block.last_op
        for op in block.ops:
            if op is not terminator and op.dialect_name() != Prim.name:
                raise VerifyException(f"a fused.kernel body holds only prim ops, found '{op.name}'")
        if not isinstance(terminator, YieldOp):
            raise VerifyException(
                f"a fused.kernel body must end in a fused.yield, but {ends_in(block)}"
            )
        yielded = [v.type for v in terminator.arguments]
        expected = [r.type for r in self.outputs]
        if len(yielded) != len(expected):
            raise VerifyException(
                f"fused.yield yields one value per kernel result ({len(expected)}), but it "
                f"yields {len(yielded)}"
            )
        for index, (got, want) in enumerate(zip(yielded, expected)):
            if got != want:
                raise VerifyException(
                    f"fused.yield value #{index} has type {got} but kernel result #{index} "
                    f"has type {want}"
                )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(SymbolRefAttr(self.kernel_name))
        printer.print_string("(")
        printer.print_list(self.inputs, printer.print_ssa_value)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_list((v.type for v in self.inputs), printer.print_attribute)
        printer.print_string(") -> ")
        types = [r.type for r in self.outputs]
        if len(types) == 1:
            printer.print_attribute(types[0])
        else:
            printer.print_string("(")
            printer.print_list(types, printer.print_attribute)
            printer.print_string(")")
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name()
        operands = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        types = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, lambda: parse_tensor_type(parser, "fused.kernel operand")
        )
        inputs = parser.resolve_operands(operands, types, pos)
        parser.parse_punctuation("->")

        def parse_result_type() -> TensorType:
            return parse_tensor_type(parser, "fused.kernel result")

        if parser.parse_optional_punctuation("(") is None:
            output_types = [parse_result_type()]
        elif parser.parse_optional_punctuation(")") is not None:
            # `()` parses so that a kernel without results reaches the verifier, which
            # says why it is wrong.
            output_types = []
        else:
            output_types = parser.parse_comma_separated_list(
                Parser.Delimiter.NONE, parse_result_type
            )
            parser.parse_punctuation(")")
        body = parser.parse_region()
        op = cls(name.data, inputs, output_types, body)
        op.attributes.update(attributes)
        return op


Fused = Dialect("fused", [KernelOp, YieldOp], [])
