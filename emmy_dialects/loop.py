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
expressions). A matrix product stays one op, `loop.contract`, whose indexing maps say how
it reads its two buffers and whose region is the elementwise epilogue of each output
element; attention stays one op too, `loop.attention`. The host function launches a kernel
with `loop.launch`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    AffineMapAttr,
    AnyFloat,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerType,
    MemRefType,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
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
from emmy.dialects.access_bounds import verify_access_bounds
from emmy.dialects.attention import verify_attention
from emmy.dialects.effects import ReadsOperand, WritesOperand
from emmy.dialects.for_op import ForOpBase, Reduction
from emmy.dialects.launch import (
    KernelSymbolOp,
    LaunchOpBase,
    kernel_size_argument,
    type_list,
    verify_kernel_arguments,
)
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
    """A GPU kernel as a loop nest; its arguments are the buffers it reads and writes, then
    the dynamic size if a buffer has a `?` dim (`verify_kernel_arguments`)."""

    name = "loop.kernel"

    def verify_(self) -> None:
        self.verify_symbol()
        verify_kernel_arguments(self)
        for op in self.body.walk():
            if op.dialect_name() not in KERNEL_BODY_DIALECTS:
                raise VerifyException(
                    f"a loop.kernel body holds only loop, arith and math ops, found '{op.name}'"
                )
        verify_access_bounds(self)


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    """Ends a `loop.for` body or a `loop.contract` epilogue; a reduction loop yields this
    iteration's contribution."""

    name = "loop.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), Pure(), HasParent(ForOp, ContractOp)))


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
    def empty(lower: int, upper: int | SSAValue, reduction: Reduction | None = None) -> ForOp:
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


def widens_to(element_type: Attribute, accumulator_type: Attribute) -> bool:
    """Whether a `loop.contract` reads elements of `element_type` into `accumulator_type`:
    the same type, or a narrower float, extended exactly as by `arith.extf`."""
    if element_type == accumulator_type:
        return True
    return (
        isinstance(element_type, AnyFloat)
        and isinstance(accumulator_type, AnyFloat)
        and element_type.bitwidth < accumulator_type.bitwidth
    )


IterationDim = int | None
"""An entry of a `loop.contract` indexing map in Python: the iteration dim a buffer dim is
read at (the parallel dims by position, then `k`), or None for a size-1 dim read at 0."""


def indexing_map(dims: Sequence[IterationDim], parallel_rank: int) -> AffineMapAttr:
    """The affine map `(d0, .., d{P-1}, k) -> (..)` that stores an indexing map."""
    results = tuple(AffineExpr.constant(0) if d is None else AffineExpr.dimension(d) for d in dims)
    return AffineMapAttr(AffineMap(parallel_rank + 1, 0, results))


def _extent_name(extent: int) -> str:
    return "?" if extent == DYNAMIC_INDEX else str(extent)


def _map_entry_name(dim: IterationDim, parallel_rank: int) -> str:
    if dim is None:
        return "0"
    return "k" if dim == parallel_rank else f"d{dim}"


@irdl_op_definition
class ContractOp(IRDLOperation):
    """A matrix product over buffers and the elementwise epilogue of each of its elements.

        loop.contract (%i, %j) in [16, 32], k in 64, %acc = sum %x[d0, k] * %w[d1, k]
            : memref<16x64xbf16>, memref<32x64xbf16> -> f32 {
          %b = loop.load %bias[%j] : memref<32xbf16>
          %bf = arith.extf %b : bf16 to f32
          %r = arith.addf %acc, %bf : f32
          %o = arith.truncf %r : f32 to bf16
          loop.store %o, %y[%i, %j] : memref<16x32xbf16>
        }

    Over the parallel iteration space `[batch.., m, n]` (here `[16, 32]`: dims d0 and d1 of
    the indexing maps, bound to `%i` and `%j` in the epilogue), each element's `%acc` is the
    sum over `k` of `lhs[lhs map] * rhs[rhs map]` in the accumulator type (here f32), each
    operand first widened to it (`widens_to`); the order of summation is unspecified. The
    epilogue then runs once per element, as the body of a parallel loop nest, and ends in an
    empty `loop.yield`, which is not printed.

    An indexing map gives, for each dim of its buffer, the iteration dim it is read at: `dI`,
    `k`, or `0` for a size-1 dim. A buffer that omits a batch dim is broadcast along it
    (weights shared by a batch) and dims in any order read a transposed layout in place
    (here nn.Linear's [N, K] weight, as `%w[d1, k]`). The lhs is read along `k` and not `n`,
    the rhs along `k` and not `m`, each iteration dim at most once per buffer. A
    loop.contract is a loop nest of its own, directly in a kernel's body.

    Several rhs of one type, read at one indexing map, are *siblings* (`fuse-prims` makes
    them of products that share their lhs, as SwiGLU's gate and up do): the epilogue takes
    one accumulated value per rhs, each the sum of lhs times that rhs, and pairs them
    element by element without either going to memory:

        loop.contract (%i, %j) in [16, 32], k in 64, (%gate, %up) = sum
            %x[d0, k] * (%wg, %wu)[d1, k]
            : memref<16x64xbf16>, memref<32x64xbf16>, memref<32x64xbf16> -> f32 {
          (silu(%gate) * %up, stored at [%i, %j])
        }

    A batch dim or m may be the program's dynamic size (`emmy.dialects.sizes`), its extent
    the kernel's size argument, as a `loop.for`'s bound is: `(%i, %j) in [%s0, 32]` over
    `memref<?x64xbf16>` rows. n and k are static: the kernels that take a loop.contract tile
    them at sizes they know.
    """

    name = "loop.contract"
    lhs = operand_def(MemRefType)
    rhs = var_operand_def(MemRefType)
    parallel = prop_def(DenseArrayBase[I64])
    reduction = prop_def(IntAttr)
    lhs_map = prop_def(AffineMapAttr)
    rhs_map = prop_def(AffineMapAttr)
    size = opt_operand_def(IndexType)
    epilogue = region_def("single_block")
    traits = traits_def(
        HasParent(KernelOp), ReadsOperand("lhs"), ReadsOperand("rhs"), RecursiveMemoryEffect()
    )
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        lhs: SSAValue,
        lhs_dims: Sequence[IterationDim],
        rhs: Sequence[SSAValue],
        rhs_dims: Sequence[IterationDim],
        parallel: Sequence[int],
        reduction: int,
        epilogue: Region,
        size: SSAValue | None = None,
    ):
        """`parallel` holds DYNAMIC_INDEX for a dim of the dynamic size, `size`."""
        block = epilogue.block
        if block.last_op is None or not block.last_op.has_trait(IsTerminator):
            block.add_op(YieldOp())
        super().__init__(
            operands=[lhs, list(rhs), [size] if size is not None else []],
            regions=[epilogue],
            properties={
                "parallel": DenseArrayBase.from_list(i64, list(parallel)),
                "reduction": IntAttr(reduction),
                "lhs_map": indexing_map(lhs_dims, len(parallel)),
                "rhs_map": indexing_map(rhs_dims, len(parallel)),
            },
        )

    @staticmethod
    def empty_epilogue(parallel_rank: int, accumulator_type: Attribute, rhs_count: int) -> Region:
        """An epilogue block taking the parallel indices and the accumulated value of each
        of `rhs_count` rhs."""
        return Region(
            Block(arg_types=[*[IndexType()] * parallel_rank, *[accumulator_type] * rhs_count])
        )

    @property
    def parallel_extents(self) -> tuple[int, ...]:
        """Each parallel dim's extent, DYNAMIC_INDEX for one of the dynamic size."""
        return tuple(self.parallel.get_values())

    def planned_extents(self, representative: int) -> tuple[int, ...]:
        """The extents a schedule is chosen for: a dim of the dynamic size taken as
        `representative` (`emmy.dialects.sizes.representative_size`)."""
        return tuple(representative if e == DYNAMIC_INDEX else e for e in self.parallel_extents)

    @property
    def is_dynamic(self) -> bool:
        return DYNAMIC_INDEX in self.parallel_extents

    @property
    def k_dim(self) -> int:
        """The number of the reduction dim `k` in the indexing maps: after the parallel dims."""
        return len(self.parallel_extents)

    @property
    def indices(self) -> tuple[SSAValue, ...]:
        """The epilogue's index along each parallel dim."""
        return tuple(self.epilogue.block.args[: len(self.parallel_extents)])

    @property
    def accumulators(self) -> tuple[SSAValue, ...]:
        """The epilogue's accumulated values, one per rhs."""
        return tuple(self.epilogue.block.args[len(self.parallel_extents) :])

    @property
    def accumulator_type(self) -> Attribute:
        return self.epilogue.block.args[-1].type

    @staticmethod
    def _dims(map_attr: AffineMapAttr) -> tuple[IterationDim, ...]:
        return tuple(
            expr.position if isinstance(expr, AffineDimExpr) else None
            for expr in map_attr.data.results
        )

    @property
    def lhs_dims(self) -> tuple[IterationDim, ...]:
        return self._dims(self.lhs_map)

    @property
    def rhs_dims(self) -> tuple[IterationDim, ...]:
        return self._dims(self.rhs_map)

    def verify_(self) -> None:
        parallel = self.parallel_extents
        rank = len(parallel)
        if rank < 2:
            raise VerifyException(
                f"the parallel iteration space [batch.., m, n] has at least the dims m and n, "
                f"got {list(parallel)}"
            )
        static = [e for e in parallel if e != DYNAMIC_INDEX]
        if min(static, default=1) < 1 or self.reduction.data < 1:
            raise VerifyException(
                f"extents must be positive, got [{', '.join(map(_extent_name, parallel))}] and "
                f"k in {self.reduction.data}"
            )
        count = len(self.rhs)
        if not count:
            raise VerifyException("a loop.contract multiplies its lhs by at least one rhs")
        if self.is_dynamic != (self.size is not None):
            raise VerifyException(
                "a loop.contract takes the dynamic size operand exactly when a parallel "
                "extent is the dynamic size"
            )
        if self.size is not None and self.size is not kernel_size_argument(self):
            raise VerifyException(
                "a loop.contract's dynamic extent is the dynamic size: its kernel's last "
                "argument, an index"
            )
        if parallel[-1] == DYNAMIC_INDEX:
            raise VerifyException(
                "n of a loop.contract is static: only a batch dim or m may be the dynamic size"
            )
        block = self.epilogue.block
        arg_types = [a.type for a in block.args]
        if (
            len(arg_types) != rank + count
            or any(not isinstance(t, IndexType) for t in arg_types[:rank])
            or len(set(arg_types[rank:])) != 1
        ):
            what = (
                "the accumulated value"
                if count == 1
                else f"the {count} accumulated values (one per rhs, of one type)"
            )
            raise VerifyException(
                f"the epilogue takes {rank} indices and {what}, but it takes "
                f"({type_list(arg_types)})"
            )
        accumulator_type = arg_types[-1]
        if not isinstance(accumulator_type, AnyFloat | IntegerType):
            raise VerifyException(
                f"the accumulator is a float or an integer, got {accumulator_type}"
            )
        if len({value.type for value in self.rhs}) != 1:
            raise VerifyException(
                f"sibling rhs have one type, read at one indexing map, got "
                f"{type_list([value.type for value in self.rhs])}"
            )
        excluded = {"lhs": rank - 1, "rhs": rank - 2}
        for operand, map_attr in (("lhs", self.lhs_map), ("rhs", self.rhs_map)):
            self._verify_operand(operand, map_attr, excluded[operand], accumulator_type)
        terminator = block.last_op
        if not isinstance(terminator, YieldOp) or terminator.arguments:
            raise VerifyException(
                f"the epilogue ends in a loop.yield of nothing, but {ends_in(block)}"
            )

    def _verify_operand(
        self, operand: str, map_attr: AffineMapAttr, excluded: int, accumulator_type: Attribute
    ) -> None:
        buffer_type = self.lhs.type if operand == "lhs" else self.rhs[0].type
        assert isinstance(buffer_type, MemRefType)
        extents = (*self.parallel_extents, self.reduction.data)
        affine_map = map_attr.data
        if affine_map.num_dims != len(extents) or affine_map.num_symbols:
            raise VerifyException(
                f"the {operand} indexing map {affine_map} must map the {len(extents)} "
                "iteration dims (the parallel dims, then k) without symbols"
            )
        shape = buffer_type.get_shape()
        if len(affine_map.results) != len(shape):
            raise VerifyException(
                f"the {operand} indexing map gives {len(affine_map.results)} indices, but the "
                f"{operand} {buffer_type} has rank {len(shape)}"
            )
        for d, (expr, size) in enumerate(zip(affine_map.results, shape)):
            if isinstance(expr, AffineConstantExpr) and expr.value == 0:
                if size != 1:
                    raise VerifyException(
                        f"{operand} dim {d} of size {size} is read at 0; only a size-1 dim can be"
                    )
            elif isinstance(expr, AffineDimExpr):
                if size != extents[expr.position]:
                    name = _map_entry_name(expr.position, len(self.parallel_extents))
                    raise VerifyException(
                        f"{operand} dim {d} has size {_extent_name(size)}, but it is read at "
                        f"{name}, of extent {_extent_name(extents[expr.position])}"
                    )
            else:
                raise VerifyException(
                    f"each index of the {operand} indexing map is an iteration dim or 0, got {expr}"
                )
        dims = [d for d in self._dims(map_attr) if d is not None]
        if len(set(dims)) != len(dims):
            raise VerifyException(f"the {operand} reads an iteration dim at two of its dims")
        rank = len(self.parallel_extents)
        if rank not in dims:
            raise VerifyException(f"the {operand} is read along k")
        if excluded in dims:
            what = "n" if operand == "lhs" else "m"
            raise VerifyException(
                f"the {operand} cannot be read along {what} (d{excluded}): an element of the "
                f"{operand} is used across {'columns' if what == 'n' else 'rows'}"
            )
        element_type = buffer_type.get_element_type()
        if not widens_to(element_type, accumulator_type):
            raise VerifyException(
                f"{operand} elements of type {element_type} do not widen to the accumulator "
                f"type {accumulator_type}: it is the same type or a wider float"
            )

    def _print_operand(self, printer: Printer, buffers: Sequence[SSAValue], dims) -> None:
        """`%b[..]`, or `(%b0, %b1)[..]` for sibling rhs."""
        if len(buffers) == 1:
            printer.print_ssa_value(buffers[0])
        else:
            printer.print_string("(")
            printer.print_list(buffers, printer.print_ssa_value)
            printer.print_string(")")
        rank = len(self.parallel_extents)
        printer.print_string(f"[{', '.join(_map_entry_name(d, rank) for d in dims)}]")

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.indices, printer.print_ssa_value)
        printer.print_string(") in [")

        def print_extent(extent: int) -> None:
            if extent == DYNAMIC_INDEX:
                assert self.size is not None
                printer.print_ssa_value(self.size)
            else:
                printer.print_string(str(extent))

        printer.print_list(self.parallel_extents, print_extent)
        printer.print_string(f"], k in {self.reduction.data}, ")
        if len(self.accumulators) == 1:
            printer.print_ssa_value(self.accumulators[0])
        else:
            printer.print_string("(")
            printer.print_list(self.accumulators, printer.print_ssa_value)
            printer.print_string(")")
        printer.print_string(" = sum ")
        self._print_operand(printer, [self.lhs], self.lhs_dims)
        printer.print_string(" * ")
        self._print_operand(printer, self.rhs, self.rhs_dims)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        printer.print_list((self.lhs.type, *(v.type for v in self.rhs)), printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(self.accumulator_type)
        printer.print_string(" ")
        printer.print_region(
            self.epilogue, print_entry_block_args=False, print_block_terminators=False
        )

    @classmethod
    def parse(cls, parser: Parser) -> ContractOp:
        def parse_index_arg():
            return parser.parse_argument(expect_type=False)

        def parse_extent() -> int:
            return parser.parse_integer(allow_boolean=False, allow_negative=False)

        sizes: list[SSAValue] = []

        def parse_parallel_extent() -> int:
            size = parser.parse_optional_operand(IndexType())
            if size is None:
                return parse_extent()
            sizes.append(size)
            return DYNAMIC_INDEX

        indices = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parse_index_arg)
        parser.parse_keyword("in")
        extents_pos = parser.pos
        parallel = parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, parse_parallel_extent)
        if any(size is not sizes[0] for size in sizes):
            parser.raise_error(
                "the dynamic extents of a loop.contract are one size", extents_pos, parser.pos
            )
        parser.parse_punctuation(",")
        parser.parse_keyword("k")
        parser.parse_keyword("in")
        reduction = parse_extent()
        parser.parse_punctuation(",")
        if parser.parse_optional_punctuation("(") is None:
            accumulators = [parser.parse_argument(expect_type=False)]
        else:
            accumulators = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parse_index_arg)
            parser.parse_punctuation(")")
        parser.parse_punctuation("=")
        parser.parse_keyword("sum")

        def parse_map_entry() -> IterationDim:
            pos = parser.pos
            if parser.parse_optional_integer(allow_boolean=False, allow_negative=False) == 0:
                return None
            name = parser.parse_optional_identifier()
            if name == "k":
                return len(parallel)
            if name and name[0] == "d" and name[1:].isdigit() and int(name[1:]) < len(parallel):
                return int(name[1:])
            parser.raise_error(
                f"an index of a loop.contract operand is d0 to d{len(parallel) - 1}, k or 0",
                pos,
                parser.pos,
            )

        lhs = parser.parse_unresolved_operand()
        lhs_dims = parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, parse_map_entry)
        parser.parse_punctuation("*")
        if parser.parse_optional_punctuation("(") is None:
            rhs = [parser.parse_unresolved_operand()]
        else:
            rhs = parser.parse_comma_separated_list(
                Parser.Delimiter.NONE, parser.parse_unresolved_operand
            )
            parser.parse_punctuation(")")
        rhs_dims = parser.parse_comma_separated_list(Parser.Delimiter.SQUARE, parse_map_entry)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        pos = parser.pos
        lhs_type = parse_memref_type(parser, "the lhs of a loop.contract")
        rhs_types = []
        for _ in rhs:
            parser.parse_punctuation(",")
            rhs_types.append(parse_memref_type(parser, "the rhs of a loop.contract"))
        parser.parse_punctuation("->")
        accumulator_type = parser.parse_type()
        lhs_value, *rhs_values = parser.resolve_operands([lhs, *rhs], [lhs_type, *rhs_types], pos)
        if len(accumulators) != len(rhs):
            parser.raise_error(
                f"{len(accumulators)} accumulated values name the sums of {len(rhs)} rhs",
                pos,
                parser.pos,
            )
        block_args = [
            *(i.resolve(IndexType()) for i in indices),
            *(a.resolve(accumulator_type) for a in accumulators),
        ]
        body_pos = parser.pos
        epilogue = parser.parse_region(block_args)
        if len(epilogue.blocks) != 1:
            parser.raise_error("a loop.contract epilogue is a single block", body_pos, parser.pos)
        if len(indices) != len(parallel):
            parser.raise_error(
                f"{len(indices)} indices name {len(parallel)} parallel dims", pos, parser.pos
            )
        size = sizes[0] if sizes else None
        op = cls(lhs_value, lhs_dims, rhs_values, rhs_dims, parallel, reduction, epilogue, size)
        if attributes is not None:
            op.attributes.update(attributes.data)
        return op


@irdl_op_definition
class AttentionOp(IRDLOperation):
    """Attention over buffers, `out = softmax(q . k^T * scale + mask) . v` over the keys
    (`emmy.dialects.attention` gives the shapes, grouped-query heads, masks and types).

        loop.attention %q, %k, %v scale 1.250000e-01 causal into %o
            : memref<1x4x50x64xbf16>, memref<1x2x70x64xbf16>, memref<1x2x70x64xbf16>
            into memref<1x4x50x64xbf16>

    Every buffer is read in its row-major layout; query head h reads key/value head
    h // (H / Hkv). Like a loop.contract it is a loop nest of its own, directly in a
    kernel's body."""

    name = "loop.attention"
    query = operand_def(MemRefType)
    key = operand_def(MemRefType)
    value = operand_def(MemRefType)
    mask = opt_operand_def(MemRefType)
    out = operand_def(MemRefType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = opt_prop_def(UnitAttr)
    traits = traits_def(
        HasParent(KernelOp),
        ReadsOperand("query"),
        ReadsOperand("key"),
        ReadsOperand("value"),
        ReadsOperand("mask"),
        WritesOperand("out"),
    )

    assembly_format = (
        "$query `,` $key `,` $value (`mask` $mask^)? `scale` $scale (`causal` $causal^)? "
        "`into` $out attr-dict `:` type($query) `,` type($key) `,` type($value) "
        "(`mask` type($mask)^)? `into` type($out)"
    )

    def __init__(
        self,
        query: SSAValue,
        key: SSAValue,
        value: SSAValue,
        mask: SSAValue | None,
        out: SSAValue,
        scale: float,
        causal: bool,
    ):
        properties: dict[str, Attribute] = {"scale": FloatAttr(scale, Float64Type())}
        if causal:
            properties["causal"] = UnitAttr()
        super().__init__(operands=[query, key, value, mask, out], properties=properties)

    def verify_(self) -> None:
        verify_attention(self.query, self.key, self.value, self.mask, self.out)


@irdl_op_definition
class LaunchOp(LaunchOpBase):
    """Host side: runs a `loop.kernel` on buffers, `loop.launch @k(%x, %y) : memref<..>, ..`."""

    name = "loop.launch"
    KERNEL_TYPE: ClassVar[type[KernelSymbolOp]] = KernelOp


Loop = Dialect(
    "loop",
    [KernelOp, ForOp, YieldOp, LoadOp, StoreOp, ContractOp, AttentionOp, LaunchOp],
    [],
)
