"""Tensor IR (`prim`): the small set of primitives every torch op decomposes into.

Every op works on value tensors (builtin `tensor` types with static shapes):
- `prim.map` applies a scalar `arith`/`math` body elementwise to same-shaped operands;
- `prim.reduce` folds some axes with a combiner (`add`, `mul`, `max`, `min`) from an init;
  `prim.multi_reduce` folds several tensors at once with a combiner region that carries state
  (argmax's value and index, Welford's mean, M2 and count);
- `prim.scan` is the inclusive running fold of one dim under a combiner (cumsum, cumprod);
- `prim.broadcast` expands size-1 and missing leading dims, numpy-style (right-aligned);
- views that only move elements: `prim.permute`, `prim.reshape`, `prim.slice`, `prim.concat`;
- `prim.gather` picks rows of a table by index (embeddings), `prim.iota` numbers positions;
- `prim.contract` is the batched matrix product that matmul, linear and attention become.

Each op declares how an element of its result is made (a `FusionClass` trait), which is all
that `fuse-prims` and `lower-fused-to-loop` know of it: `Elementwise` (from the operands'
elements at the same index), `View` (one operand element, at the index the view's index map
computes from the result's), `Concatenation`, `Reduction` and `Contraction` (which fold
axes, and so are computed once per kernel), or `HostConstant` (stays on the host).

    %r = prim.reshape %x : tensor<4x6xf32> -> tensor<2x2x6xf32>
    // View: %r[i, j, k] is %x[i * 2 + j, k] (see `reshape_runs`)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod
from typing import Protocol, TypeVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    ShapedType,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils import AbstractYieldOperation
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
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
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, OpTrait, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from emmy.dialects import dense
from emmy.dialects.access import verify_constant_rows
from emmy.dialects.attention import verify_attention
from emmy.dialects.combiner import (
    Combiner,
    CombinerAttr,
    identity,
    init_attr,
    inits_of,
    parse_combiner,
    parse_init_literal,
    parse_init_literals,
    print_init,
    print_inits,
    verify_combiner,
    verify_init,
)
from emmy.dialects.sizes import DYNAMIC_SIZE

SCALAR_DIALECTS = ("arith", "math")

Index = TypeVar("Index")


class IndexAlgebra(Protocol[Index]):
    """What an index map computes with. `lower-fused-to-loop` builds `index` SSA values with
    it; `fuse-prims` computes, for each dim an operand is read at, whether its index depends
    on some result dims."""

    def constant(self, value: int) -> Index: ...

    def add(self, lhs: Index, rhs: Index) -> Index: ...

    def mul(self, lhs: Index, factor: int) -> Index: ...

    def div_mod(self, lhs: Index, divisor: int, modulus: int) -> Index:
        """`(lhs // divisor) % modulus` for a non-negative `lhs`; modulus 0 means none."""
        ...

    def index_at(self, value: SSAValue, index: Sequence[Index]) -> Index:
        """The integer element of `value` at `index`, as an index (a gather's row)."""
        ...

    def one_element(self, index: Index) -> Index:
        """The index into a run of one element (a reshape's [1] -> [1, 1]), which is 0
        wherever it is inside: `index` itself where the algebra computes values, so that a
        gathered row outside a one-row table still reaches the load that refuses it; 0 where
        it follows structure."""
        ...


IndexMap = Callable[[Operation, Sequence[Index], IndexAlgebra[Index]], tuple[SSAValue, tuple]]
"""A view's index map: the operand one result element is, and that operand's index."""


class FusionClass(OpTrait):
    """How an element of the op's result is made, which decides how `fuse-prims` groups it
    and how `lower-fused-to-loop` computes it (see the module docstring)."""


class Elementwise(FusionClass):
    """Each result element is computed from the operands' elements at the same index (and
    the index itself): cheap, so copied into every kernel that needs it."""


@dataclass(frozen=True)
class View(FusionClass):
    """Each result element is one element of an operand, at the index `index_map` computes
    from the result's index (`IndexMap`): cheap, so copied into every kernel that needs it."""

    index_map: IndexMap


@dataclass(frozen=True)
class Concatenation(FusionClass):
    """The result is `pieces(op)`'s operands laid end to end along the dim it gives: each
    element is one element of one piece, at the same index less the piece's offset."""

    pieces: Callable[[Operation], tuple[int, Sequence[SSAValue]]]


@dataclass(frozen=True)
class Reduction(FusionClass):
    """The op folds the axes `folded(op)` gives of the operands it gives: expensive, computed
    by one kernel."""

    folded: Callable[[Operation], tuple[Sequence[SSAValue], Sequence[int]]]


class Contraction(FusionClass):
    """A matrix product, which folds its operands' shared dim: expensive, computed by one
    kernel, which holds no other expensive op."""


class HostConstant(FusionClass):
    """A value the host holds as a buffer, which kernels take as an input."""


def fusion_class(op: Operation) -> FusionClass | None:
    return op.get_trait(FusionClass)


DYNAMIC_STAND_IN = 2**61 - 1
"""The dynamic size in `reshape_runs`: a prime that no product of static sizes reaches."""


def reshape_runs(source: Sequence[int], target: Sequence[int]) -> list[tuple[range, range]]:
    """The runs of dims a reshape pairs up: the shortest runs of source and target dims, in
    order, whose sizes have equal products (`[4, 6] -> [2, 2, 6]`: dims 0 with 0-1, 1 with
    2). Within a run the target index, linearised, is the source index linearised; trailing
    size-1 dims of either shape form runs with none of the other's. The dynamic size (`?`)
    counts as a prime larger than any product of static sizes, so it pairs with itself."""
    source = [DYNAMIC_STAND_IN if d == DYNAMIC_INDEX else d for d in source]
    target = [DYNAMIC_STAND_IN if d == DYNAMIC_INDEX else d for d in target]
    runs: list[tuple[range, range]] = []
    s = t = 0
    while s < len(source) or t < len(target):
        s_end, t_end = min(s + 1, len(source)), min(t + 1, len(target))
        s_size, t_size = prod(source[s:s_end]), prod(target[t:t_end])
        while s_size != t_size:
            if s_size < t_size:
                s_size, s_end = s_size * source[s_end], s_end + 1
            else:
                t_size, t_end = t_size * target[t_end], t_end + 1
        runs.append((range(s, s_end), range(t, t_end)))
        s, t = s_end, t_end
    return runs


def tensor_shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def verify_shapes(op: Operation) -> None:
    """Loop extents and buffer sizes are read off shapes, so every dim is static or the
    program's one dynamic size, which its module declares (`emmy.dialects.sizes`)."""
    module = op.get_toplevel_object()
    if not isinstance(module, ModuleOp) or DYNAMIC_SIZE in module.attributes:
        return
    for role, values in (("operand", op.operands), ("result", op.results)):
        for index, value in enumerate(values):
            if isinstance(value.type, ShapedType) and not value.type.has_static_shape():
                raise VerifyException(
                    f"{role} #{index} has type {value.type}, but its module declares no "
                    f"dynamic size ({DYNAMIC_SIZE}), so shapes must be static"
                )


def ends_in(block: Block) -> str:
    """Says how a region body ends, for an error about its terminator."""
    if block.last_op is None:
        return "it is empty"
    return f"it ends in '{block.last_op.name}'"


def parse_tensor_type(parser: Parser, what: str) -> TensorType:
    """Parses a type that must be a ranked tensor, failing at the type's position."""
    pos = parser.pos
    parsed = parser.parse_type()
    if not isinstance(parsed, TensorType):
        parser.raise_error(f"{what} must be a ranked tensor, got {parsed}", pos, parser.pos)
    return parsed


def _is_scalar_type(type: Attribute) -> bool:
    return isinstance(type, AnyFloat | IntegerType | IndexType)


def _verify_scalar_body_op(op: Operation, map_op: MapOp) -> None:
    """A map body is cloned onto the scalars of one element when the map is lowered, so it
    may compute only on scalars, and only on values of its own."""
    for value in (*op.operands, *op.results):
        if not _is_scalar_type(value.type):
            raise VerifyException(
                f"a map body computes on scalars, but '{op.name}' has a value of type {value.type}"
            )
    for value in op.operands:
        if not map_op.body.is_ancestor(value.owner):
            raise VerifyException(
                f"'{op.name}' in a map body uses a value defined outside the map; a map "
                "body sees only its block arguments and what it computes from them"
            )


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    """Ends a `prim.map` body with the scalar it computes for one element, and a
    `prim.multi_reduce` combiner with the new accumulators."""

    name = "prim.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), Pure(), HasParent(MapOp, MultiReduceOp)))


@irdl_op_definition
class MapOp(IRDLOperation):
    """Elementwise map: `result[i] = body(inputs[0][i], inputs[1][i], ...)`."""

    name = "prim.map"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect(), Elementwise())

    def __init__(self, inputs: Sequence[SSAValue], result_type: TensorType, body: Region):
        super().__init__(operands=[inputs], result_types=[result_type], regions=[body])

    def verify_(self) -> None:
        verify_shapes(self)
        shape = tensor_shape(self.result)
        element_type = self.result.type.get_element_type()
        for index, value in enumerate(self.inputs):
            if tensor_shape(value) != shape:
                raise VerifyException(
                    f"input #{index} has shape {list(tensor_shape(value))} but the result "
                    f"has shape {list(shape)}; broadcast it first"
                )
        block = self.body.block
        if len(block.args) != len(self.inputs):
            raise VerifyException(
                f"a map body takes one scalar per input ({len(self.inputs)}), but it takes "
                f"{len(block.args)}"
            )
        for index, (arg, value) in enumerate(zip(block.args, self.inputs)):
            if arg.type != value.type.get_element_type():
                raise VerifyException(
                    f"body argument #{index} has type {arg.type} but input #{index} has "
                    f"element type {value.type.get_element_type()}"
                )
        for op in block.ops:
            if op is block.last_op:
                break
            if op.dialect_name() not in SCALAR_DIALECTS:
                raise VerifyException(
                    f"a map body holds only arith and math ops, found '{op.name}'"
                )
            _verify_scalar_body_op(op, self)
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException(
                f"a map body must end in a prim.yield of one scalar, but {ends_in(block)}"
            )
        if len(terminator.arguments) != 1:
            raise VerifyException(
                f"a map body yields one scalar per element, but its prim.yield yields "
                f"({', '.join(str(v.type) for v in terminator.arguments)})"
            )
        if terminator.arguments[0].type != element_type:
            raise VerifyException(
                f"body yields {terminator.arguments[0].type} but the result element type "
                f"is {element_type}"
            )
        if not self.body.is_ancestor(terminator.arguments[0].owner):
            raise VerifyException(
                "a map body yields a value defined outside the map; a map body sees only its "
                "block arguments and what it computes from them"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string("(")
        printer.print_list(self.inputs, printer.print_ssa_value)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_list((v.type for v in self.inputs), printer.print_attribute)
        printer.print_string(") -> ")
        printer.print_attribute(self.result.type)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> MapOp:
        operands = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        types = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, lambda: parse_tensor_type(parser, "prim.map input")
        )
        inputs = parser.resolve_operands(operands, types, pos)
        parser.parse_punctuation("->")
        result_type = parse_tensor_type(parser, "prim.map result")
        body = parser.parse_region()
        op = cls(inputs, result_type, body)
        op.attributes.update(attributes)
        return op

    @staticmethod
    def build(inputs: Sequence[SSAValue], result_type: TensorType, scalar_ops_and_result) -> MapOp:
        """Builds a map whose body is made by `scalar_ops_and_result(block_args)`, which
        returns the body's ops and the scalar to yield."""
        block = Block(arg_types=[v.type.get_element_type() for v in inputs])
        ops, value = scalar_ops_and_result(block.args)
        block.add_ops([*ops, YieldOp(value)])
        return MapOp(inputs, result_type, Region(block))


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Folds `axes` of the input with a combiner, starting from `init`."""

    name = "prim.reduce"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(CombinerAttr)
    axes = prop_def(DenseArrayBase)
    init = prop_def(Attribute)
    keepdim = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), Reduction(lambda op: ((op.input,), op.axis_list)))

    def __init__(
        self,
        kind: str,
        value: SSAValue,
        axes: Sequence[int],
        init: FloatAttr | IntegerAttr,
        keepdim: bool,
        result_type: TensorType,
    ):
        super().__init__(
            operands=[value],
            result_types=[result_type],
            properties={
                "kind": CombinerAttr(Combiner(kind)),
                "axes": DenseArrayBase.from_list(i64, list(axes)),
                "init": init,
                "keepdim": UnitAttr() if keepdim else None,
            },
        )

    @property
    def axis_list(self) -> tuple[int, ...]:
        return tuple(self.axes.get_values())

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} ")
        printer.print_ssa_value(self.input)
        printer.print_string(" axes [")
        printer.print_list(self.axis_list, lambda a: printer.print_string(str(a)))
        printer.print_string("]")
        if self.keepdim is not None:
            printer.print_string(" keepdim")
        printer.print_string(" init ")
        print_init(printer, self.init)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ReduceOp:
        kind = parse_combiner(parser)
        operand = parser.parse_unresolved_operand()
        parser.parse_keyword("axes")
        axes = parser.parse_comma_separated_list(
            Parser.Delimiter.SQUARE, lambda: _parse_axis(parser)
        )
        keepdim = parser.parse_optional_keyword("keepdim") is not None
        parser.parse_keyword("init")
        init_pos = parser.pos
        init_text = parse_init_literal(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        input_type = parse_tensor_type(parser, "prim.reduce input")
        parser.parse_punctuation("->")
        result_type = parse_tensor_type(parser, "prim.reduce result")
        (value,) = parser.resolve_operands([operand], [input_type], pos)
        init = init_attr(parser, init_text, input_type.get_element_type(), init_pos)
        op = cls(kind, value, axes, init, keepdim, result_type)
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        verify_shapes(self)
        element_type = self.input.type.get_element_type()
        verify_init(self.kind.data, self.init, element_type)
        if self.result.type.get_element_type() != element_type:
            raise VerifyException(
                f"result element type {self.result.type.get_element_type()} differs from "
                f"the input element type {element_type}"
            )
        _verify_reduced_shape(self, self.input, self.result)


def _verify_reduced_shape(op: ReduceOp | MultiReduceOp, input: SSAValue, result: SSAValue) -> None:
    """The axes are distinct dims of the input, and the result's shape is the input's without
    them (size 1 with keepdim)."""
    if op.axes.elt_type != i64:
        raise VerifyException(f"reduce axes must be an i64 array, got {op.axes}")
    shape = tensor_shape(input)
    axes = op.axis_list
    for axis in axes:
        if not 0 <= axis < len(shape):
            raise VerifyException(
                f"reduce axis {axis} is out of range for a rank-{len(shape)} input"
            )
    if len(set(axes)) != len(axes):
        raise VerifyException(f"reduce axes {list(axes)} repeat an axis")
    expected = reduced_shape(shape, axes, op.keepdim is not None)
    if tensor_shape(result) != expected:
        raise VerifyException(
            f"reducing axes {list(axes)} of shape {list(shape)} gives shape "
            f"{list(expected)}, but the result has shape {list(tensor_shape(result))}"
        )


@irdl_op_definition
class MultiReduceOp(IRDLOperation):
    """Folds `axes` of several same-shaped inputs at once with a combiner region (see
    `emmy.dialects.combiner`), from one init per input; a result per input.

        %m, %i = prim.multi_reduce (%x, %pos) axes [1] init (-inf, 0)
            : (tensor<4x8xf32>, tensor<4x8xi64>) -> (tensor<4xf32>, tensor<4xi64>) {
        ^bb0(%m0: f32, %i0: i64, %x1: f32, %i1: i64):
          ...
          prim.yield %m2, %i2 : f32, i64
        }
    """

    name = "prim.multi_reduce"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axes = prop_def(DenseArrayBase)
    inits = prop_def(ArrayAttr)
    keepdim = opt_prop_def(UnitAttr)
    combiner = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect(), Reduction(lambda op: (op.inputs, op.axis_list)))

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        axes: Sequence[int],
        inits: Sequence[FloatAttr | IntegerAttr],
        keepdim: bool,
        result_types: Sequence[TensorType],
        combiner: Region,
    ):
        super().__init__(
            operands=[inputs],
            result_types=[result_types],
            regions=[combiner],
            properties={
                "axes": DenseArrayBase.from_list(i64, list(axes)),
                "inits": ArrayAttr(inits),
                "keepdim": UnitAttr() if keepdim else None,
            },
        )

    @property
    def axis_list(self) -> tuple[int, ...]:
        return tuple(self.axes.get_values())

    @property
    def init_values(self) -> tuple[FloatAttr | IntegerAttr, ...]:
        return tuple(self.inits.data)

    def print(self, printer: Printer) -> None:
        printer.print_string(" (")
        printer.print_list(self.inputs, printer.print_ssa_value)
        printer.print_string(") axes [")
        printer.print_list(self.axis_list, lambda a: printer.print_string(str(a)))
        printer.print_string("]")
        if self.keepdim is not None:
            printer.print_string(" keepdim")
        printer.print_string(" init ")
        print_inits(printer, self.init_values)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : (")
        printer.print_list((v.type for v in self.inputs), printer.print_attribute)
        printer.print_string(") -> (")
        printer.print_list((v.type for v in self.outputs), printer.print_attribute)
        printer.print_string(") ")
        printer.print_region(self.combiner, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> MultiReduceOp:
        operands = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        parser.parse_keyword("axes")
        axes = parser.parse_comma_separated_list(
            Parser.Delimiter.SQUARE, lambda: _parse_axis(parser)
        )
        keepdim = parser.parse_optional_keyword("keepdim") is not None
        parser.parse_keyword("init")
        init_pos, init_values = parse_init_literals(parser)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        input_types = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, lambda: parse_tensor_type(parser, "prim.multi_reduce input")
        )
        inputs = parser.resolve_operands(operands, input_types, pos)
        parser.parse_punctuation("->")
        result_types = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, lambda: parse_tensor_type(parser, "prim.multi_reduce result")
        )
        element_types = [t.get_element_type() for t in input_types]
        inits = inits_of(parser, init_pos, init_values, element_types)
        combiner = parser.parse_region()
        op = cls(inputs, axes, inits, keepdim, result_types, combiner)
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        verify_shapes(self)
        types = verify_combiner(self.combiner, self.init_values, YieldOp, "a prim.multi_reduce")
        if len(self.inputs) != len(types) or len(self.outputs) != len(types):
            raise VerifyException(
                f"a prim.multi_reduce has one input and one result per init ({len(types)}), "
                f"but it has {len(self.inputs)} inputs and {len(self.outputs)} results"
            )
        shape = tensor_shape(self.inputs[0])
        for index, (value, result, element_type) in enumerate(
            zip(self.inputs, self.outputs, types)
        ):
            if tensor_shape(value) != shape:
                raise VerifyException(
                    f"input #{index} has shape {list(tensor_shape(value))} but input #0 has "
                    f"shape {list(shape)}; the inputs are folded together"
                )
            for role, typed in (("input", value), ("result", result)):
                if typed.type.get_element_type() != element_type:
                    raise VerifyException(
                        f"{role} #{index} has element type {typed.type.get_element_type()}, but "
                        f"init #{index} is {element_type}"
                    )
            _verify_reduced_shape(self, value, result)


def _parse_axis(parser: Parser) -> int:
    pos = parser.pos
    axis = parser.parse_integer(allow_boolean=False, context_msg=" for a reduce axis")
    low, high = i64.value_range()
    if not low <= axis < high:
        parser.raise_error(f"reduce axis {axis} does not fit in i64", pos, parser.pos)
    return axis


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _broadcast_source(op: BroadcastOp, index: Sequence[Index], algebra: IndexAlgebra[Index]):
    """An expanded dim is read at 0; the missing leading dims are not read."""
    source, target = tensor_shape(op.input), tensor_shape(op.result)
    offset = len(target) - len(source)
    return op.input, tuple(
        algebra.constant(0) if n == 1 and target[offset + d] != 1 else index[offset + d]
        for d, n in enumerate(source)
    )


def _scanned(op: ScanOp) -> tuple[Sequence[SSAValue], Sequence[int]]:
    return (op.input,), (op.dim.value.data,)


@irdl_op_definition
class ScanOp(IRDLOperation):
    """The inclusive running fold along `dim`: `result[.., i, ..]` combines `input[.., j, ..]`
    for every `j <= i` (cumsum with `add`, cumprod with `mul`), from the combiner's identity.
    Each element folds the dim of its input, so it fuses as a reduction."""

    name = "prim.scan"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(CombinerAttr)
    dim = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), Reduction(_scanned))

    def __init__(self, kind: str, value: SSAValue, dim: int, result_type: TensorType):
        super().__init__(
            operands=[value],
            result_types=[result_type],
            properties={"kind": CombinerAttr(Combiner(kind)), "dim": IntegerAttr(dim, i64)},
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} ")
        printer.print_ssa_value(self.input)
        printer.print_string(f" dim {self.dim.value.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ScanOp:
        kind = parse_combiner(parser)
        operand = parser.parse_unresolved_operand()
        parser.parse_keyword("dim")
        dim = parser.parse_integer(allow_boolean=False, allow_negative=False)
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        input_type = parse_tensor_type(parser, "prim.scan input")
        parser.parse_punctuation("->")
        result_type = parse_tensor_type(parser, "prim.scan result")
        (value,) = parser.resolve_operands([operand], [input_type], pos)
        op = cls(kind, value, dim, result_type)
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        verify_shapes(self)
        if self.input.type != self.result.type:
            raise VerifyException(
                f"a scan keeps its input type {self.input.type}, but the result is "
                f"{self.result.type}"
            )
        _verify_dim(self.dim.value.data, len(tensor_shape(self.input)))
        identity(self.kind.data, self.input.type.get_element_type())


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """Numpy-style broadcast: dims align from the right; a size-1 or missing dim expands."""

    name = "prim.broadcast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), View(_broadcast_source))

    def __init__(self, value: SSAValue, result_type: TensorType):
        super().__init__(operands=[value], result_types=[result_type])

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.input)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> BroadcastOp:
        operand = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        input_type = parse_tensor_type(parser, "prim.broadcast input")
        parser.parse_punctuation("->")
        result_type = parse_tensor_type(parser, "prim.broadcast result")
        (value,) = parser.resolve_operands([operand], [input_type], pos)
        op = cls(value, result_type)
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        verify_shapes(self)
        source, target = tensor_shape(self.input), tensor_shape(self.result)
        input_element, result_element = (
            self.input.type.get_element_type(),
            self.result.type.get_element_type(),
        )
        if input_element != result_element:
            raise VerifyException(
                f"result element type {result_element} differs from the input element type "
                f"{input_element}; a broadcast only copies elements"
            )
        if len(source) > len(target):
            raise VerifyException(
                f"cannot broadcast rank {len(source)} to the smaller rank {len(target)}"
            )
        offset = len(target) - len(source)
        for d, n in enumerate(source):
            if n not in (1, target[offset + d]):
                raise VerifyException(
                    f"cannot broadcast shape {list(source)} to {list(target)}: dim {d} has "
                    f"size {n}, expected 1 or {target[offset + d]}"
                )


def _verify_same_element_type(op: IRDLOperation, *values: SSAValue) -> None:
    expected = op.result.type.get_element_type()
    for value in values:
        if value.type.get_element_type() != expected:
            raise VerifyException(
                f"operand element type {value.type.get_element_type()} differs from the "
                f"result element type {expected}"
            )


def _verify_dim(dim: int, rank: int) -> None:
    if not 0 <= dim < rank:
        raise VerifyException(f"dim {dim} is out of range for rank {rank}")


def _permute_source(op: PermuteOp, index: Sequence[Index], algebra: IndexAlgebra[Index]):
    source_index = list(index)
    for result_dim, source_dim in enumerate(op.permutation):
        source_index[source_dim] = index[result_dim]
    return op.input, tuple(source_index)


@irdl_op_definition
class PermuteOp(IRDLOperation):
    """A view that reorders dims: result dim `k` is input dim `permutation[k]`."""

    name = "prim.permute"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    dims = prop_def(DenseArrayBase[I64])
    traits = traits_def(Pure(), View(_permute_source))

    assembly_format = "$input $dims attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, permutation: Sequence[int], result_type: TensorType):
        super().__init__(
            operands=[value],
            result_types=[result_type],
            properties={"dims": DenseArrayBase.from_list(i64, list(permutation))},
        )

    @property
    def permutation(self) -> tuple[int, ...]:
        return tuple(self.dims.get_values())

    def verify_(self) -> None:
        _verify_same_element_type(self, self.input)
        source = tensor_shape(self.input)
        if sorted(self.permutation) != list(range(len(source))):
            raise VerifyException(
                f"{list(self.permutation)} is not a permutation of the {len(source)} input dims"
            )
        expected = [source[d] for d in self.permutation]
        if list(tensor_shape(self.result)) != expected:
            raise VerifyException(
                f"permuting shape {list(source)} by {list(self.permutation)} gives "
                f"{expected}, but the result has shape {list(tensor_shape(self.result))}"
            )


def _reshape_source(op: ReshapeOp, index: Sequence[Index], algebra: IndexAlgebra[Index]):
    source, target = tensor_shape(op.input), tensor_shape(op.result)
    return op.input, reshape_source_index(source, target, index, algebra)


def reshape_source_index(
    source: Sequence[int], target: Sequence[int], index: Sequence[Index], algebra: IndexAlgebra
) -> tuple[Index, ...]:
    """The index in `source` of the element at `index` of its reshape to `target`: within each
    run of `reshape_runs`, the target index is linearised and split again over the source
    dims."""
    source_index: list[Index] = []
    for source_dims, target_dims in reshape_runs(source, target):
        linear = algebra.constant(0)
        # A size-1 dim's index is 0: skipping it keeps a run that merges the dynamic dim
        # with size-1 dims ([1, ?] -> [?]) free of products with the dynamic size. A run of
        # one element passes its indices on to its first source dim (`one_element`).
        ones = all(target[d] == 1 for d in target_dims)
        for d in target_dims:
            if ones:
                linear = algebra.add(linear, algebra.one_element(index[d]))
            elif target[d] != 1:
                linear = algebra.add(algebra.mul(linear, target[d]), index[d])
        stride, leading = prod(source[d] for d in source_dims), True
        for d in source_dims:
            stride //= source[d]
            if source[d] == 1 and not (ones and leading):
                source_index.append(algebra.constant(0))
                continue
            # The run's leading dim needs no modulus: `linear` is below the run's size.
            source_index.append(algebra.div_mod(linear, stride, 0 if leading else source[d]))
            leading = False
    return tuple(source_index)


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """A view with another shape over the same elements in row-major order."""

    name = "prim.reshape"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), View(_reshape_source))

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, result_type: TensorType):
        super().__init__(operands=[value], result_types=[result_type])

    def verify_(self) -> None:
        _verify_same_element_type(self, self.input)
        source, target = tensor_shape(self.input), tensor_shape(self.result)
        if prod(source) != prod(target):
            raise VerifyException(
                f"cannot reshape {list(source)} ({prod(source)} elements) to {list(target)} "
                f"({prod(target)} elements)"
            )


def _slice_source(op: SliceOp, index: Sequence[Index], algebra: IndexAlgebra[Index]):
    d = op.dim.value.data
    source_index = list(index)
    step, start = op.step.value.data, op.start.value.data
    source_index[d] = algebra.add(algebra.mul(index[d], step), algebra.constant(start))
    return op.input, tuple(source_index)


@irdl_op_definition
class SliceOp(IRDLOperation):
    """A strided window along one dim: `result[.., i, ..] = input[.., start + step * i, ..]`."""

    name = "prim.slice"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    start = prop_def(IntegerAttr[I64])
    step = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), View(_slice_source))

    assembly_format = (
        "$input `dim` $dim `start` $start `step` $step attr-dict "
        "`:` type($input) `->` type($result)"
    )

    def __init__(self, value: SSAValue, dim: int, start: int, step: int, result_type: TensorType):
        super().__init__(
            operands=[value],
            result_types=[result_type],
            properties={
                "dim": IntegerAttr(dim, i64),
                "start": IntegerAttr(start, i64),
                "step": IntegerAttr(step, i64),
            },
        )

    def verify_(self) -> None:
        _verify_same_element_type(self, self.input)
        source, target = tensor_shape(self.input), tensor_shape(self.result)
        dim, start, step = self.dim.value.data, self.start.value.data, self.step.value.data
        if len(source) != len(target):
            raise VerifyException("a slice keeps the rank")
        _verify_dim(dim, len(source))
        if step < 1 or start < 0:
            raise VerifyException(f"slice start {start} must be >= 0 and step {step} >= 1")
        for d, (n, m) in enumerate(zip(source, target)):
            if d != dim and n != m:
                raise VerifyException(f"a slice along dim {dim} changed the size of dim {d}")
        if target[dim] and start + step * (target[dim] - 1) >= source[dim]:
            raise VerifyException(
                f"{target[dim]} elements from {start} in steps of {step} overrun the "
                f"{source[dim]} elements of dim {dim}"
            )


@irdl_op_definition
class ConcatOp(IRDLOperation):
    """Joins tensors along one dim; all other dims agree."""

    name = "prim.concat"
    inputs = var_operand_def(TensorType)
    result = result_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), Concatenation(lambda op: (op.dim.value.data, op.inputs)))

    assembly_format = "$inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)"

    def __init__(self, values: Sequence[SSAValue], dim: int, result_type: TensorType):
        super().__init__(
            operands=[values],
            result_types=[result_type],
            properties={"dim": IntegerAttr(dim, i64)},
        )

    def verify_(self) -> None:
        if not self.inputs:
            raise VerifyException("a concat needs at least one input")
        _verify_same_element_type(self, *self.inputs)
        target = tensor_shape(self.result)
        dim = self.dim.value.data
        _verify_dim(dim, len(target))
        total = 0
        for index, value in enumerate(self.inputs):
            shape = tensor_shape(value)
            if len(shape) != len(target) or any(
                n != m for d, (n, m) in enumerate(zip(shape, target)) if d != dim
            ):
                raise VerifyException(
                    f"input #{index} of shape {list(shape)} does not fit a concat along dim "
                    f"{dim} into {list(target)}"
                )
            total += shape[dim]
        if total != target[dim]:
            raise VerifyException(
                f"inputs add up to {total} along dim {dim}, but the result has {target[dim]}"
            )


def _gather_source(op: GatherOp, index: Sequence[Index], algebra: IndexAlgebra[Index]):
    rank = len(tensor_shape(op.indices))
    row = algebra.index_at(op.indices, index[:rank])
    return op.table, (row, *index[rank:])


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Rows of a table picked by integer indices:
    `result[i.., j..] = table[indices[i..], j..]` (an embedding lookup)."""

    name = "prim.gather"
    table = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), View(_gather_source))

    assembly_format = (
        "$table `[` $indices `]` attr-dict `:` type($table) `,` type($indices) `->` type($result)"
    )

    def __init__(self, table: SSAValue, indices: SSAValue, result_type: TensorType):
        super().__init__(operands=[table, indices], result_types=[result_type])

    def verify_(self) -> None:
        _verify_same_element_type(self, self.table)
        if not isinstance(self.indices.type.get_element_type(), IntegerType):
            raise VerifyException(
                f"gather indices must be integers, got {self.indices.type.get_element_type()}"
            )
        table, indices = tensor_shape(self.table), tensor_shape(self.indices)
        if not table:
            raise VerifyException("a gather table needs at least one dim")
        verify_constant_rows(self.indices, table[0])
        expected = [*indices, *table[1:]]
        if list(tensor_shape(self.result)) != expected:
            raise VerifyException(
                f"gathering rows of {list(table)} at indices of shape {list(indices)} gives "
                f"{expected}, but the result has shape {list(tensor_shape(self.result))}"
            )


@irdl_op_definition
class ContractOp(IRDLOperation):
    """Batched matrix product `[.., M, K] x [.., K, N] -> [.., M, N]` with equal batch dims,
    summed in the element type (widen the operands first for a wider accumulator)."""

    name = "prim.contract"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Contraction())

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: TensorType):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        _verify_same_element_type(self, self.lhs, self.rhs)
        lhs, rhs = tensor_shape(self.lhs), tensor_shape(self.rhs)
        if len(lhs) < 2 or len(lhs) != len(rhs):
            raise VerifyException(
                f"contract operands must have the same rank >= 2, got {list(lhs)} and {list(rhs)}"
            )
        if lhs[:-2] != rhs[:-2] or lhs[-1] != rhs[-2]:
            raise VerifyException(
                f"cannot contract {list(lhs)} with {list(rhs)}: batch dims must be equal and "
                "the lhs's last dim must equal the rhs's second-to-last"
            )
        expected = [*lhs[:-1], rhs[-1]]
        if list(tensor_shape(self.result)) != expected:
            raise VerifyException(
                f"contracting {list(lhs)} with {list(rhs)} gives {expected}, but the result "
                f"has shape {list(tensor_shape(self.result))}"
            )


@irdl_op_definition
class AttentionOp(IRDLOperation):
    """Scaled dot-product attention as one product, `softmax(q . k^T * scale + mask) . v`
    over the keys (the shapes, grouped-query heads, masks and types of
    `emmy.dialects.attention`); `fuse-attention` makes it of the product, softmax and
    product that attention decomposes into."""

    name = "prim.attention"
    query = operand_def(TensorType)
    key = operand_def(TensorType)
    value = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    result = result_def(TensorType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), Contraction())

    assembly_format = (
        "$query `,` $key `,` $value (`mask` $mask^)? `scale` $scale (`causal` $causal^)? "
        "attr-dict `:` type($query) `,` type($key) `,` type($value) (`mask` type($mask)^)? "
        "`->` type($result)"
    )

    def __init__(
        self,
        query: SSAValue,
        key: SSAValue,
        value: SSAValue,
        mask: SSAValue | None,
        scale: float,
        causal: bool,
        result_type: TensorType,
    ):
        properties: dict[str, Attribute] = {"scale": FloatAttr(scale, Float64Type())}
        if causal:
            properties["causal"] = UnitAttr()
        super().__init__(
            operands=[query, key, value, mask], result_types=[result_type], properties=properties
        )

    def verify_(self) -> None:
        verify_shapes(self)
        verify_attention(self.query, self.key, self.value, self.mask, self.result)


@irdl_op_definition
class IotaOp(IRDLOperation):
    """Each element's position along one dim: `result[i0, i1, ..] = i_dim`."""

    name = "prim.iota"
    result = result_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), Elementwise())

    assembly_format = "`dim` $dim attr-dict `:` type($result)"

    def __init__(self, dim: int, result_type: TensorType):
        super().__init__(result_types=[result_type], properties={"dim": IntegerAttr(dim, i64)})

    def verify_(self) -> None:
        if not isinstance(self.result.type.get_element_type(), IntegerType):
            raise VerifyException(
                f"iota produces integers, got {self.result.type.get_element_type()}"
            )
        _verify_dim(self.dim.value.data, len(tensor_shape(self.result)))


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor known at compile time. Splats are better written as a `prim.map` without
    inputs, which fuses; a dense constant stays in the host function, as a buffer. A splat
    holds its one element as a rank-0 value (see `emmy.dialects.dense`)."""

    name = "prim.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), HostConstant())

    def __init__(self, value: DenseIntOrFPElementsAttr, result_type: Attribute | None = None):
        super().__init__(result_types=[result_type or value.type], properties={"value": value})

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        dense.print_literal(printer, self.value, self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        attributes = parser.parse_optional_attr_dict()
        op = cls(*dense.parse_literal(parser, "prim.constant"))
        op.attributes.update(attributes)
        return op

    def verify_(self) -> None:
        dense.verify_literal(self.value, self.result.type, "prim.constant")

    def splat_map(self) -> MapOp:
        """The map without inputs that computes this splat constant (a kernel fills a buffer
        with it, or the kernels that read it fuse it, where a host buffer would hold every
        element)."""
        element_type = self.result.type.get_element_type()
        (value,) = self.value.get_values()
        if isinstance(element_type, AnyFloat):
            scalar = arith.ConstantOp(FloatAttr(value, element_type))
        else:
            scalar = arith.ConstantOp(IntegerAttr(value, element_type))
        return MapOp([], self.result.type, Region(Block([scalar, YieldOp(scalar.result)])))


Prim = Dialect(
    "prim",
    [
        MapOp,
        YieldOp,
        ReduceOp,
        MultiReduceOp,
        ScanOp,
        BroadcastOp,
        PermuteOp,
        ReshapeOp,
        SliceOp,
        ConcatOp,
        GatherOp,
        ContractOp,
        AttentionOp,
        IotaOp,
        ConstantOp,
    ],
    [CombinerAttr],
)

__all__ = [
    "Prim",
    "MapOp",
    "YieldOp",
    "ReduceOp",
    "MultiReduceOp",
    "ScanOp",
    "BroadcastOp",
    "PermuteOp",
    "ReshapeOp",
    "SliceOp",
    "ConcatOp",
    "GatherOp",
    "ContractOp",
    "AttentionOp",
    "IotaOp",
    "ConstantOp",
    "reduced_shape",
]
