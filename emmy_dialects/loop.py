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
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
)
from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    HasParent,
    IsTerminator,
    Pure,
    RecursiveMemoryEffect,
)
from xdsl.utils.exceptions import VerifyException

from emmy.dialects.access import (
    parse_access,
    parse_memref_type,
    print_access,
    resolve_access,
    verify_indices,
)
from emmy.dialects.combiner import (
    Combiner,
    CombinerAttr,
    parse_reduction,
    print_reduction,
    verify_reduction,
)
from emmy.dialects.effects import ReadsOperand, WritesOperand
from emmy.dialects.launch import KernelSymbolOp, LaunchOpBase, type_list
from emmy.dialects.prim import ends_in

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
class ForOp(IRDLOperation):
    """`loop.for %i in lower to upper`, parallel, or a reduction when it has a combiner."""

    name = "loop.for"
    lower = prop_def(IntAttr)
    upper = prop_def(IntAttr)
    kind = opt_prop_def(CombinerAttr)
    init = opt_prop_def(Attribute)
    accumulator = var_result_def()
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect(), ForOpHasCanonicalizationPatterns())

    def __init__(
        self,
        lower: int,
        upper: int,
        body: Region,
        reduction: tuple[str, FloatAttr | IntegerAttr] | None = None,
    ):
        properties: dict[str, Attribute] = {"lower": IntAttr(lower), "upper": IntAttr(upper)}
        result_types: list[Attribute] = []
        if reduction is not None:
            kind, init = reduction
            properties.update(kind=CombinerAttr(Combiner(kind)), init=init)
            result_types.append(init.type)
        block = body.block
        if block.last_op is None or not block.last_op.has_trait(IsTerminator):
            block.add_op(YieldOp())
        super().__init__(result_types=[result_types], regions=[body], properties=properties)

    @staticmethod
    def empty(lower: int, upper: int, reduction=None) -> ForOp:
        """A loop with an empty body, whose block argument is the induction variable."""
        body = Region(Block(arg_types=[IndexType()]))
        return ForOp(lower, upper, body, reduction)

    @property
    def induction_var(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def trip_count(self) -> int:
        return self.upper.data - self.lower.data

    @property
    def is_reduction(self) -> bool:
        return self.kind is not None

    def verify_(self) -> None:
        _verify_in_kernel(self)
        if self.lower.data < 0 or self.upper.data < self.lower.data:
            raise VerifyException(
                f"loop bounds {self.lower.data} to {self.upper.data} must satisfy "
                "0 <= lower <= upper"
            )
        block = self.body.block
        if len(block.args) != 1 or not isinstance(block.args[0].type, IndexType):
            raise VerifyException(
                f"a loop body takes one index induction variable, but it takes "
                f"({type_list([a.type for a in block.args])})"
            )
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException(f"a loop body must end in a loop.yield, but {ends_in(block)}")
        if (self.kind is None) != (self.init is None):
            raise VerifyException("a reduction loop needs both a combiner and an init")
        if self.kind is None:
            if self.accumulator:
                raise VerifyException("a parallel loop has no results")
            if terminator.arguments:
                raise VerifyException(
                    f"a parallel loop body yields nothing, but its loop.yield yields "
                    f"({type_list([v.type for v in terminator.arguments])})"
                )
            return
        accumulator_type = verify_reduction(self.kind.data, self.init)
        if len(self.accumulator) != 1 or self.accumulator[0].type != accumulator_type:
            raise VerifyException(
                f"a reduction loop has one result of its init type {accumulator_type}"
            )
        yielded = [v.type for v in terminator.arguments]
        if yielded != [accumulator_type]:
            raise VerifyException(
                f"a reduction loop body yields one {accumulator_type} per iteration, but its "
                f"loop.yield yields ({type_list(yielded)})"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_var)
        printer.print_string(f" in {self.lower.data} to {self.upper.data}")
        print_reduction(printer, self.kind, self.init)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(
            self.body,
            print_entry_block_args=False,
            print_block_terminators=self.kind is not None,
        )

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        induction_var = parser.parse_argument(expect_type=False)
        parser.parse_keyword("in")
        lower = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        upper = parser.parse_integer(allow_boolean=False)
        reduction = parse_reduction(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body_pos = parser.pos
        body = parser.parse_region([induction_var.resolve(IndexType())])
        if len(body.blocks) != 1:
            parser.raise_error("a loop.for body is a single block", body_pos, parser.pos)
        op = cls(lower, upper, body, reduction)
        if attributes is not None:
            op.attributes.update(attributes.data)
        return op


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
