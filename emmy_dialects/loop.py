"""Loop IR (`loop`): how each kernel iterates, as loop nests over memref buffers.

    loop.kernel @k_rms_norm(%x: memref<32x2048xf32>, %w: memref<2048xf32>,
                            %y: memref<32x2048xf32>) {
      loop.for %i in 0 to 32 {
        %ss = loop.for %j in 0 to 2048 reduce add init 0.0 : f32 {
          %v = loop.load %x[%i, %j] : memref<32x2048xf32>
          %sq = arith.mulf %v, %v : f32
          loop.yield %sq : f32
        }
        ...
        loop.for %j in 0 to 2048 {
          ...
          loop.store %r, %y[%i, %j] : memref<32x2048xf32>
        }
      }
    }

A parallel `loop.for` promises that its iterations are independent. A reduction `loop.for`
yields one contribution per iteration and returns `init` combined with every contribution
under its combiner; the order of combination is unspecified, so later levels may split the
reduction across threads. Indices are `index` SSA values (arith on `index` builds index
expressions). The host function launches a kernel with `loop.launch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    IndexType,
    MemRefType,
)
from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    HasParent,
    IsTerminator,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from emmy.dialects.access import (
    parse_access,
    parse_memref_type,
    print_access,
    resolve_access,
    verify_indices,
)
from emmy.dialects.effects import ReadsOperand, WritesOperand
from emmy.dialects.for_op import ForOpBase, Reduction
from emmy.dialects.launch import KernelSymbolOp, LaunchOpBase

KERNEL_BODY_DIALECTS = ("loop", "arith", "math")


def _verify_in_kernel(op: Operation) -> None:
    """Loops and buffer accesses run on the device, so they live inside a loop.kernel."""
    ancestor = op.parent_op()
    while ancestor is not None and not isinstance(ancestor, KernelOp):
        ancestor = ancestor.parent_op()
    if ancestor is None:
        raise VerifyException(f"'{op.name}' must be nested in a loop.kernel")


@irdl_op_definition
class KernelOp(KernelSymbolOp):
    """A GPU kernel as a loop nest; its arguments are the buffers it reads and writes."""

    name = "loop.kernel"

    def verify_(self) -> None:
        self.verify_symbol()
        for index, arg_type in enumerate(self.argument_types):
            if not isinstance(arg_type, MemRefType):
                raise VerifyException(f"kernel argument #{index} must be a memref, got {arg_type}")
            if not arg_type.has_static_shape():
                raise VerifyException(
                    f"kernel argument #{index} has type {arg_type}, but shapes must be static"
                )
        for op in self.body.walk():
            if op.dialect_name() not in KERNEL_BODY_DIALECTS:
                raise VerifyException(
                    f"a loop.kernel body holds only loop, arith and math ops, found '{op.name}'"
                )


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    """Ends a `loop.for` body; a reduction loop yields this iteration's contribution."""

    name = "loop.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), Pure(), HasParent(ForOp)))


class ForOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls):
        from emmy.passes.loop_canonicalization import FoldUnitLoop, HoistInvariantLoad

        return (FoldUnitLoop(), HoistInvariantLoad())


@irdl_op_definition
class ForOp(ForOpBase):
    """`loop.for %i in lower to upper`, parallel, or a reduction when it has a combiner."""

    name = "loop.for"
    traits = traits_def(ForOpHasCanonicalizationPatterns())
    YIELD: ClassVar[type[IRDLOperation]] = YieldOp

    @staticmethod
    def empty(lower: int, upper: int, reduction: Reduction | None = None) -> ForOp:
        """A loop with an empty body, whose block argument is the induction variable."""
        body = Region(Block(arg_types=[IndexType()]))
        return ForOp(lower, upper, body, reduction)

    def verify_(self) -> None:
        _verify_in_kernel(self)
        self.verify_loop()


def _print_access(printer: Printer, op: LoadOp | StoreOp) -> None:
    print_access(printer, op.memref, op.indices)
    printer.print_op_attributes(op.attributes)
    printer.print_string(" : ")
    printer.print_attribute(op.memref.type)


def _parse_access(parser: Parser) -> tuple[SSAValue, list[SSAValue], dict[str, Attribute]]:
    """Parses `%buffer[%indices] attr-dict : memref-type`."""
    access = parse_access(parser)
    attributes = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    pos = parser.pos
    memref_type = parse_memref_type(parser, "an accessed buffer")
    buffer, indices = resolve_access(parser, access, memref_type, pos)
    return buffer, indices, attributes


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Reads one element of a buffer: `%v = loop.load %x[%i, %j] : memref<...>`."""

    name = "loop.load"
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    result = result_def()
    traits = traits_def(ReadsOperand("memref"))

    def __init__(self, memref: SSAValue, indices: Sequence[SSAValue]):
        assert isinstance(memref.type, MemRefType)
        super().__init__(operands=[memref, indices], result_types=[memref.type.get_element_type()])

    def verify_(self) -> None:
        _verify_in_kernel(self)
        memref_type = verify_indices(self.memref, self.indices)
        if self.result.type != memref_type.get_element_type():
            raise VerifyException(
                f"loaded type {self.result.type} differs from the element type "
                f"{memref_type.get_element_type()}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_access(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        buffer, indices, attributes = _parse_access(parser)
        op = cls(buffer, indices)
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Writes one element of a buffer: `loop.store %v, %y[%i, %j] : memref<...>`."""

    name = "loop.store"
    value = operand_def()
    memref = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    traits = traits_def(WritesOperand("memref"))

    def __init__(self, value: SSAValue, memref: SSAValue, indices: Sequence[SSAValue]):
        super().__init__(operands=[value, memref, indices])

    def verify_(self) -> None:
        _verify_in_kernel(self)
        memref_type = verify_indices(self.memref, self.indices)
        if self.value.type != memref_type.get_element_type():
            raise VerifyException(
                f"stored type {self.value.type} differs from the element type "
                f"{memref_type.get_element_type()}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.value)
        printer.print_string(", ")
        _print_access(printer, self)

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        buffer, indices, attributes = _parse_access(parser)
        element_type = buffer.type.get_element_type()
        (resolved,) = parser.resolve_operands([value], [element_type], parser.pos)
        op = cls(resolved, buffer, indices)
        op.attributes.update(attributes)
        return op


@irdl_op_definition
class LaunchOp(LaunchOpBase):
    """Host side: runs a `loop.kernel` on buffers, `loop.launch @k(%x, %y) : memref<..>, ..`."""

    name = "loop.launch"
    KERNEL_TYPE: ClassVar[type[KernelSymbolOp]] = KernelOp


Loop = Dialect("loop", [KernelOp, ForOp, YieldOp, LoadOp, StoreOp, LaunchOp], [])
