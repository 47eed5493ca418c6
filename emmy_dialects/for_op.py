"""The `for` loop that the loop and tile dialects share: parallel, or a reduction with a
combiner.

    loop.for %i in 0 to 32 { ... }                          // parallel
    %s = loop.for %j in 0 to 2048 reduce add init 0.0 : f32 {
      ...
      loop.yield %sq : f32                                  // this iteration's contribution
    }
    tile.for %j in 0 to 2048 map thread vector 4 { ... }    // tile: where iterations go

A reduction that carries state has a combiner region (`emmy.dialects.combiner`), one init and
one result per accumulator, and a body that yields one value per accumulator:

    %m, %i = loop.for %j in 0 to 8 reduce (%m0: f32, %i0: i64, %m1: f32, %i1: i64)
        init (-inf, 9223372036854775807) {
      ...                                                   // the combiner
      loop.yield %m2, %i2 : f32, i64
    } {
      ...
      loop.yield %x, %jj : f32, i64                         // this iteration's (value, index)
    }

A loop over the program's dynamic size (`emmy.dialects.sizes`) runs to the kernel's size
argument, an `index` operand in place of the static upper bound:

    loop.for %i in 0 to %s0 { ... }

`ForOpBase` holds the bounds, the reduction (a `CombinerAttr` and its init, or the inits and
the combiner region) and the body with its one `index` induction variable, and checks them; a
dialect's `for` adds what goes between the bounds and the reduction in its syntax
(`print_schedule`, `parse_schedule`: tile's mapping and vector width) and its own checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IndexType, IntAttr, IntegerAttr
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    opt_operand_def,
    opt_prop_def,
    opt_region_def,
    prop_def,
    region_def,
    traits_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsTerminator, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from emmy.dialects.combiner import (
    Combiner,
    CombinerAttr,
    StateReduction,
    combine,
    copy_combiner,
    inline_combiner,
    parse_reduction,
    print_reduction,
    print_state_reduction,
    verify_combiner,
    verify_reduction,
)
from emmy.dialects.dtypes import integer_range
from emmy.dialects.launch import kernel_size_argument, type_list
from emmy.dialects.prim import ends_in

Reduction = tuple[str, FloatAttr | IntegerAttr]
"""A reduction loop's combiner (by name) and init."""


class ForOpBase(IRDLOperation):
    """`%i in lower to upper`, over a single-block body that takes `%i`; with a combiner and an
    init, a reduction whose body yields one contribution per iteration; with inits and a
    combiner region, one whose body yields one value per accumulator (see the module
    docstring)."""

    lower = prop_def(IntAttr)
    upper = opt_prop_def(IntAttr)
    dynamic_upper = opt_operand_def(IndexType)
    kind = opt_prop_def(CombinerAttr)
    init = opt_prop_def(Attribute)
    inits = opt_prop_def(ArrayAttr)
    accumulator = var_result_def()
    body = region_def("single_block")
    combiner = opt_region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    YIELD: ClassVar[type[IRDLOperation]]
    """The op that ends the body."""

    def __init__(
        self,
        lower: int,
        upper: int | SSAValue,
        body: Region,
        reduction: Reduction | StateReduction | None = None,
        properties: dict[str, Attribute] | None = None,
    ):
        all_properties: dict[str, Attribute] = {"lower": IntAttr(lower), **(properties or {})}
        if isinstance(upper, int):
            all_properties["upper"] = IntAttr(upper)
        result_types: list[Attribute] = []
        combiner: list[Region] = []
        if reduction is not None and isinstance(reduction[0], str):
            kind, init = reduction
            all_properties.update(kind=CombinerAttr(Combiner(kind)), init=init)
            result_types.append(init.type)
        elif reduction is not None:
            inits, region = reduction
            all_properties["inits"] = ArrayAttr(inits)
            result_types.extend(init.type for init in inits)
            combiner.append(region)
        block = body.block
        if block.last_op is None or not block.last_op.has_trait(IsTerminator):
            block.add_op(self.YIELD())
        super().__init__(
            operands=[[upper] if isinstance(upper, SSAValue) else []],
            result_types=[result_types],
            regions=[body, combiner],
            properties=all_properties,
        )

    @property
    def induction_var(self) -> SSAValue:
        return self.body.block.args[0]

    @property
    def bound(self) -> int | SSAValue:
        """The upper bound: static, or the dynamic size's value."""
        if self.dynamic_upper is not None:
            return self.dynamic_upper
        assert self.upper is not None
        return self.upper.data

    @property
    def is_dynamic(self) -> bool:
        return self.dynamic_upper is not None

    def planned_trip_count(self, representative: int) -> int:
        """The trip count a schedule is chosen for: the static one, or for a loop to the
        dynamic size `representative` (`emmy.dialects.sizes.representative_size`)."""
        return representative if self.upper is None else self.trip_count

    @property
    def trip_count(self) -> int:
        """The static trip count; a loop to the dynamic size has none (`is_dynamic`)."""
        if self.upper is None:
            raise ValueError(f"a {self.name} to the dynamic size has no static trip count")
        return self.upper.data - self.lower.data

    @property
    def is_reduction(self) -> bool:
        return self.kind is not None or self.combiner is not None

    @property
    def init_values(self) -> tuple[FloatAttr | IntegerAttr, ...]:
        """A reduction's init per accumulator."""
        if self.inits is not None:
            return tuple(self.inits.data)
        return (self.init,) if self.init is not None else ()

    def reduction_in(self, yield_type: type[Operation]) -> Reduction | StateReduction | None:
        """This loop's reduction as the constructor of a loop whose body ends in `yield_type`
        takes it (another dialect's: a combiner region is copied to end in its yield)."""
        if self.kind is not None:
            return self.kind.data, self.init
        if self.combiner is not None:
            return self.init_values, copy_combiner(self.combiner, yield_type)
        return None

    def combine(
        self,
        accumulators: Sequence[SSAValue],
        values: Sequence[SSAValue],
        add: Callable[[Operation], Operation],
    ) -> list[SSAValue]:
        """Emits, through `add`, the ops that fold `values` into `accumulators` with this
        reduction's combiner; returns the new accumulators."""
        if self.combiner is not None:
            return inline_combiner(self.combiner, accumulators, values, add)
        (accumulator,), (value,) = accumulators, values
        return [add(combine(self.kind.data, accumulator, value)).results[0]]

    def verify_loop(self) -> None:
        """The bounds, the induction variable, and what a parallel or reduction body yields."""
        if (self.upper is None) == (self.dynamic_upper is None):
            raise VerifyException(
                "a loop has a static upper bound or runs to the dynamic size, one of them"
            )
        if self.dynamic_upper is not None:
            if self.lower.data != 0:
                raise VerifyException(
                    f"a loop to the dynamic size starts at 0, not {self.lower.data}"
                )
            if self.dynamic_upper is not kernel_size_argument(self):
                raise VerifyException(
                    "a loop with an upper bound operand runs to the dynamic size: its "
                    "kernel's last argument, an index"
                )
        elif self.lower.data < 0 or self.upper.data < self.lower.data:
            raise VerifyException(
                f"loop bounds {self.lower.data} to {self.upper.data} must satisfy "
                "0 <= lower <= upper"
            )
        index_range = integer_range(IndexType())
        if self.upper is not None and self.upper.data not in index_range:
            raise VerifyException(
                f"loop bound {self.upper.data} does not fit the 64-bit index a kernel counts "
                f"iterations in (at most {index_range.stop - 1})"
            )
        block = self.body.block
        if len(block.args) != 1 or not isinstance(block.args[0].type, IndexType):
            raise VerifyException(
                f"a loop body takes one index induction variable, but it takes "
                f"({type_list([a.type for a in block.args])})"
            )
        terminator = block.last_op
        yield_name = self.YIELD.name
        if not isinstance(terminator, self.YIELD):
            raise VerifyException(f"a loop body must end in a {yield_name}, but {ends_in(block)}")
        if (self.kind is None) != (self.init is None):
            raise VerifyException("a reduction loop needs both a combiner and an init")
        if (self.combiner is None) != (self.inits is None):
            raise VerifyException("a reduction loop with a combiner region needs its inits")
        if self.kind is not None and self.combiner is not None:
            raise VerifyException(
                "a reduction loop has a named combiner or a combiner region, not both"
            )
        yielded = [v.type for v in terminator.operands]
        if self.combiner is not None:
            types = verify_combiner(self.combiner, self.init_values, self.YIELD, "a loop")
            if tuple(r.type for r in self.accumulator) != types:
                raise VerifyException(
                    f"a reduction loop has one result per init, of its type "
                    f"({type_list(types)}), but it has ({type_list(self.accumulator.types)})"
                )
            if tuple(yielded) != types:
                raise VerifyException(
                    f"a reduction loop body yields one value per accumulator "
                    f"({type_list(types)}) each iteration, but its {yield_name} yields "
                    f"({type_list(yielded)})"
                )
            return
        if self.kind is None:
            if self.accumulator:
                raise VerifyException("a parallel loop has no results")
            if yielded:
                raise VerifyException(
                    f"a parallel loop body yields nothing, but its {yield_name} yields "
                    f"({type_list(yielded)})"
                )
            return
        accumulator_type = verify_reduction(self.kind.data, self.init)
        if len(self.accumulator) != 1 or self.accumulator[0].type != accumulator_type:
            raise VerifyException(
                f"a reduction loop has one result of its init type {accumulator_type}"
            )
        if yielded != [accumulator_type]:
            raise VerifyException(
                f"a reduction loop body yields one {accumulator_type} per iteration, but its "
                f"{yield_name} yields ({type_list(yielded)})"
            )

    def print_schedule(self, printer: Printer) -> None:
        return

    @classmethod
    def parse_schedule(cls, parser: Parser) -> dict[str, object]:
        """The constructor's keyword arguments that `print_schedule` prints."""
        return {}

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_var)
        printer.print_string(f" in {self.lower.data} to ")
        if self.dynamic_upper is not None:
            printer.print_ssa_value(self.dynamic_upper)
        else:
            printer.print_string(str(self.bound))
        self.print_schedule(printer)
        print_reduction(printer, self.kind, self.init)
        if self.combiner is not None:
            print_state_reduction(printer, self.init_values, self.combiner)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(
            self.body,
            print_entry_block_args=False,
            print_block_terminators=self.is_reduction,
        )

    @classmethod
    def parse(cls, parser: Parser) -> ForOpBase:
        induction_var = parser.parse_argument(expect_type=False)
        parser.parse_keyword("in")
        lower = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        upper: int | SSAValue
        size = parser.parse_optional_operand(IndexType())
        upper = size if size is not None else parser.parse_integer(allow_boolean=False)
        schedule = cls.parse_schedule(parser)
        reduction = parse_reduction(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        body_pos = parser.pos
        body = parser.parse_region([induction_var.resolve(IndexType())])
        if len(body.blocks) != 1:
            parser.raise_error(f"a {cls.name} body is a single block", body_pos, parser.pos)
        op = cls(lower, upper, body=body, reduction=reduction, **schedule)
        if attributes is not None:
            op.attributes.update(attributes.data)
        return op
