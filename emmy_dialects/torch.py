"""Torch IR (`torch`): a 1:1 mirror of the PyTorch (aten) ops a program uses, on value tensors.

    %h = torch.rms_norm %x weight %w normalized_shape [64] eps 1.1920928955078125e-07
           : tensor<2x8x64xf32> weight tensor<64xf32> -> tensor<2x8x64xf32>
    %y = torch.linear %h, %wq : tensor<2x8x64xf32>, tensor<64x64xf32> -> tensor<2x8x64xf32>

Conventions every op keeps, so that passes need not re-derive them:
- Tensors are builtin `tensor` types with static shapes (the program is specialized to its
  example inputs) of f16, bf16, f32 or f64, of i32 or i64 for indices, or of i1 for masks.
  Integers are signed; i1 is torch's bool, so true > false (compare it unsigned).
- Each op computes exactly what the aten op of the same name computes, with torch's numerics:
  f16 and bf16 ops compute in f32 (torch's "opmath" type) and round their result once.
- Type promotion is explicit: operands of an elementwise op share one element type (the
  importer inserts `torch.to`), and a Python scalar is a 0-d `torch.constant` of that type.
- Dimension properties are normalized: non-negative, in range, and for lists sorted with no
  repeats where order does not matter (reductions, squeeze). Slice bounds are clamped.
- Optional scalars torch resolves at run time are resolved when the op is built: `rms_norm`'s
  eps and `sdpa`'s scale are always present.
- Float properties (eps, scale, clamp bounds) are f64; an elementwise op converts them to its
  element type as torch does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrConstraint,
    AttrSizedOperandSegments,
    IRDLOperation,
    VerificationContext,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from emmy.dialects import dense
from emmy.dialects.access import verify_constant_rows
from emmy.dialects.prim import reduced_shape

FLOAT_ELEMENT_TYPES = (Float16Type(), BFloat16Type(), Float32Type(), Float64Type())

FLOAT32_MATMUL_PRECISION = "torch.float32_matmul_precision"
"""The module attribute that records `torch.get_float32_matmul_precision()` as the importer
found it, `"highest"`, `"high"` or `"medium"`: how f32 matrix products may round. "highest"
keeps them f32; "high" and "medium" let them run on tf32 tensor cores. A module without it
is "highest", torch's default."""
FLOAT32_MATMUL_PRECISIONS = ("highest", "high", "medium")


def float32_matmul_precision(op: Operation) -> str:
    """The float32 matmul precision of the module `op` is in (see FLOAT32_MATMUL_PRECISION)."""
    top = op
    while top.parent_op() is not None:
        top = top.parent_op()
    attribute = top.attributes.get(FLOAT32_MATMUL_PRECISION)
    if attribute is None:
        return "highest"
    if not isinstance(attribute, StringAttr) or attribute.data not in FLOAT32_MATMUL_PRECISIONS:
        raise VerifyException(
            f"a module's {FLOAT32_MATMUL_PRECISION} is one of "
            f"{', '.join(map(repr, FLOAT32_MATMUL_PRECISIONS))}, got {attribute}"
        )
    return attribute.data


@dataclass(frozen=True)
class TensorOf(AttrConstraint[TensorType[Attribute]]):
    """A tensor of one of `element_types`, shaped as the example inputs were, but for the
    program's dynamic size: a `?` dim (see `emmy.dialects.sizes`)."""

    element_types: tuple[Attribute, ...]
    description: str

    def verify(self, attr: Attribute, constraint_context: VerificationContext) -> None:
        if not isinstance(attr, TensorType) or attr.get_element_type() not in self.element_types:
            raise VerifyException(f"expected a {self.description}, got {attr}")
        if any(d < 0 and d != DYNAMIC_INDEX for d in attr.get_shape()):
            raise VerifyException(f"torch ops take tensors of sizes >= 0 or ?, got {attr}")

    def get_bases(self) -> set[type[Attribute]]:
        return {TensorType}

    def mapping_type_vars(self, type_var_mapping: Mapping[TypeVar, object]) -> TensorOf:
        return self


INTEGER_ELEMENT_TYPES = (i8, i16, i32, i64)
"""The signed integers Torch IR computes with (torch's int8 to int64)."""
AnyTorchTensor = TensorOf(
    (*FLOAT_ELEMENT_TYPES, i1, *INTEGER_ELEMENT_TYPES),
    "tensor of f16, bf16, f32, f64, i1, i8, i16, i32 or i64",
)
FloatTensor = TensorOf(FLOAT_ELEMENT_TYPES, "floating-point tensor (f16, bf16, f32 or f64)")
IndexTensor = TensorOf((i32, i64), "tensor of i32 or i64 indices")
IntegerTensor = TensorOf(INTEGER_ELEMENT_TYPES, "tensor of i8, i16, i32 or i64")
MaskTensor = TensorOf((i1,), "tensor of i1")
BitsTensor = TensorOf(
    (i1, *INTEGER_ELEMENT_TYPES), "tensor of i1, i8, i16, i32 or i64 (bool or integer)"
)


# --- shape helpers, shared with the passes that rewrite torch ops ---------------------------


def shape_of(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def element_type_of(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.get_element_type()


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The numpy/torch broadcast of `shapes`: dims align from the right, size 1 stretches."""
    rank = max(len(s) for s in shapes)
    result = []
    for d in range(-rank, 0):
        sizes = {s[d] for s in shapes if len(s) >= -d} - {1}
        if len(sizes) > 1:
            raise VerifyException(
                f"shapes {', '.join(str(list(s)) for s in shapes)} do not broadcast: "
                f"dim {d} has sizes {sorted(sizes)}"
            )
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """Whether `shape` expands to `target`: aligned from the right, each dim is 1 or equal."""
    offset = len(target) - len(shape)
    return offset >= 0 and all(n in (1, target[offset + d]) for d, n in enumerate(shape))


def verify_dim(dim: int, rank: int) -> None:
    if not 0 <= dim < rank:
        raise VerifyException(f"dim {dim} is out of range for a rank-{rank} tensor")


def verify_normalized_dims(dims: Sequence[int], rank: int) -> None:
    for dim in dims:
        verify_dim(dim, rank)
    if list(dims) != sorted(set(dims)):
        raise VerifyException(f"dims {list(dims)} must be sorted and unique")


def verify_result_shape(op: Operation, expected: Sequence[int], how: str) -> None:
    actual = shape_of(op.results[0])
    if actual != tuple(expected):
        raise VerifyException(
            f"{how} gives shape {list(expected)}, but the result has shape {list(actual)}"
        )


def verify_same_element_type(*values: SSAValue) -> None:
    types = [element_type_of(v) for v in values]
    if any(t != types[0] for t in types):
        raise VerifyException(
            f"operands must share one element type, got {', '.join(map(str, types))}; "
            "convert with torch.to first"
        )


def dims_attr(dims: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(dims))


def int_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def float_attr(value: float) -> FloatAttr:
    return FloatAttr(value, Float64Type())


def single_input_format(properties: str = "") -> str:
    return f"$input {properties} attr-dict `:` type($input) `->` type($result)"


class SingleInputOp(IRDLOperation):
    """One tensor in, one tensor out."""

    input = operand_def(AnyTorchTensor)
    result = result_def(AnyTorchTensor)
    traits = traits_def(Pure())

    assembly_format = single_input_format()

    def __init__(
        self, input: SSAValue, result_type: Attribute, properties: Mapping[str, Attribute] = {}
    ):
        super().__init__(operands=[input], result_types=[result_type], properties=properties)

    def verify_type_kept(self, subject: str) -> None:
        if self.input.type != self.result.type:
            raise VerifyException(
                f"{subject} keeps its operand type {self.input.type}, "
                f"but the result is {self.result.type}"
            )


class SingleDimOp(SingleInputOp):
    """One tensor in, one out, along the dim `dim`."""

    dim = prop_def(IntegerAttr[I64])

    assembly_format = single_input_format("`dim` $dim")

    def __init__(self, input: SSAValue, result_type: Attribute, dim: int):
        super().__init__(input, result_type, {"dim": int_attr(dim)})


# --- elementwise ------------------------------------------------------------------------------


class UnaryOp(SingleInputOp):
    """Elementwise `result[i] = f(input[i])`, keeping shape and element type."""

    def verify_(self) -> None:
        self.verify_type_kept("an elementwise op")


class FloatUnaryOp(UnaryOp):
    """A unary op torch defines on floating-point tensors only."""

    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)


class FittedUnaryOp(FloatUnaryOp):
    """A unary op emmy computes by a fit (a series, a polynomial) to f32's precision: of f16,
    bf16 and f32 tensors, as an f64 result would keep only f32's digits."""

    def verify_(self) -> None:
        super().verify_()
        if element_type_of(self.input) == Float64Type():
            raise VerifyException(
                f"{self.name} is computed to f32's precision (a fit): f16, bf16 or f32, not f64"
            )


@irdl_op_definition
class NegOp(UnaryOp):
    """`-x`."""

    name = "torch.neg"


@irdl_op_definition
class AbsOp(UnaryOp):
    """`|x|`."""

    name = "torch.abs"


@irdl_op_definition
class BitwiseNotOp(UnaryOp):
    """`~x`: every bit flipped (on bools, logical not)."""

    name = "torch.bitwise_not"
    input = operand_def(BitsTensor)
    result = result_def(BitsTensor)


@irdl_op_definition
class ReluOp(UnaryOp):
    """`max(x, 0)`."""

    name = "torch.relu"


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    """`e^x`."""

    name = "torch.exp"


@irdl_op_definition
class LogOp(FloatUnaryOp):
    """Natural logarithm."""

    name = "torch.log"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    """`sqrt(x)`."""

    name = "torch.sqrt"


@irdl_op_definition
class RsqrtOp(FloatUnaryOp):
    """`1 / sqrt(x)`."""

    name = "torch.rsqrt"


@irdl_op_definition
class FloorOp(FloatUnaryOp):
    """The largest integer value not above `x`."""

    name = "torch.floor"


@irdl_op_definition
class CeilOp(FloatUnaryOp):
    """The smallest integer value not below `x`."""

    name = "torch.ceil"


@irdl_op_definition
class RoundOp(FloatUnaryOp):
    """`x` rounded to the nearest integer value, halves to even."""

    name = "torch.round"


@irdl_op_definition
class TruncOp(FloatUnaryOp):
    """`x` rounded toward zero."""

    name = "torch.trunc"


@irdl_op_definition
class SinOp(FloatUnaryOp):
    """Sine."""

    name = "torch.sin"


@irdl_op_definition
class CosOp(FloatUnaryOp):
    """Cosine."""

    name = "torch.cos"


@irdl_op_definition
class TanOp(FloatUnaryOp):
    """Tangent."""

    name = "torch.tan"


@irdl_op_definition
class AtanOp(FloatUnaryOp):
    """Arctangent, in [-pi/2, pi/2]."""

    name = "torch.atan"


@irdl_op_definition
class AsinOp(FloatUnaryOp):
    """Arcsine, in [-pi/2, pi/2]; NaN outside [-1, 1]."""

    name = "torch.asin"


@irdl_op_definition
class AcosOp(FloatUnaryOp):
    """Arccosine, in [0, pi]; NaN outside [-1, 1]."""

    name = "torch.acos"


@irdl_op_definition
class SinhOp(FloatUnaryOp):
    """Hyperbolic sine."""

    name = "torch.sinh"


@irdl_op_definition
class CoshOp(FloatUnaryOp):
    """Hyperbolic cosine."""

    name = "torch.cosh"


@irdl_op_definition
class AsinhOp(FloatUnaryOp):
    """Inverse hyperbolic sine."""

    name = "torch.asinh"


@irdl_op_definition
class AcoshOp(FloatUnaryOp):
    """Inverse hyperbolic cosine, non-negative; NaN below 1."""

    name = "torch.acosh"


@irdl_op_definition
class AtanhOp(FloatUnaryOp):
    """Inverse hyperbolic tangent; +-inf at +-1, NaN outside [-1, 1]."""

    name = "torch.atanh"


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """The error function."""

    name = "torch.erf"


@irdl_op_definition
class ErfcOp(FittedUnaryOp):
    """`1 - erf(x)`, to its relative precision where it is small (large `x`)."""

    name = "torch.erfc"


@irdl_op_definition
class ErfinvOp(FittedUnaryOp):
    """The inverse of `erf` on [-1, 1]: +-inf at +-1, NaN outside."""

    name = "torch.erfinv"


@irdl_op_definition
class LgammaOp(FittedUnaryOp):
    """`log |Gamma(x)|`; +inf at 0 and the negative integers."""

    name = "torch.lgamma"


@irdl_op_definition
class DigammaOp(FittedUnaryOp):
    """`Gamma'(x) / Gamma(x)`; -inf at 0, NaN at the negative integers."""

    name = "torch.digamma"


@irdl_op_definition
class Log1pOp(FloatUnaryOp):
    """`log(1 + x)`, exact for small `x`."""

    name = "torch.log1p"


@irdl_op_definition
class Expm1Op(FloatUnaryOp):
    """`e^x - 1`, exact for small `x`."""

    name = "torch.expm1"


@irdl_op_definition
class Log2Op(FloatUnaryOp):
    """Base-2 logarithm."""

    name = "torch.log2"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """Hyperbolic tangent."""

    name = "torch.tanh"


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """`1 / (1 + e^-x)`."""

    name = "torch.sigmoid"


@irdl_op_definition
class SiluOp(FloatUnaryOp):
    """`x * sigmoid(x)`."""

    name = "torch.silu"


GELU_APPROXIMATIONS = ("none", "tanh")


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """GELU: `x * Phi(x)` with the exact normal CDF (`approximate = "none"`) or
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))` (`"tanh"`)."""

    name = "torch.gelu"
    approximate = prop_def(StringAttr, default_value=StringAttr("none"))

    assembly_format = single_input_format("(`approximate` $approximate^)?")

    def __init__(self, input: SSAValue, result_type: Attribute, approximate: str = "none"):
        super().__init__(input, result_type, {"approximate": StringAttr(approximate)})

    def verify_(self) -> None:
        super().verify_()
        if self.approximate.data not in GELU_APPROXIMATIONS:
            raise VerifyException(
                f"gelu approximation must be one of {', '.join(GELU_APPROXIMATIONS)}, "
                f"got '{self.approximate.data}'"
            )


@irdl_op_definition
class ClampOp(UnaryOp):
    """`min(max(x, min), max)`; an absent bound does not clamp."""

    name = "torch.clamp"
    min = opt_prop_def(FloatAttr[Float64Type])
    max = opt_prop_def(FloatAttr[Float64Type])

    assembly_format = single_input_format("(`min` $min^)? (`max` $max^)?")

    def __init__(
        self, input: SSAValue, result_type: Attribute, min: float | None, max: float | None
    ):
        bounds = {"min": min, "max": max}
        super().__init__(
            input,
            result_type,
            {name: float_attr(v) for name, v in bounds.items() if v is not None},
        )

    def verify_(self) -> None:
        super().verify_()
        if self.min is None and self.max is None:
            raise VerifyException("clamp needs at least one of min and max")


@irdl_op_definition
class ToOp(SingleInputOp):
    """Converts to the result's element type (`Tensor.to(dtype)`): floats round to nearest
    even, floats to integers truncate toward zero, and anything to i1 tests `!= 0`."""

    name = "torch.to"

    def verify_(self) -> None:
        if shape_of(self.input) != shape_of(self.result):
            raise VerifyException(
                f"torch.to keeps the shape {list(shape_of(self.input))}, but the result has "
                f"shape {list(shape_of(self.result))}"
            )


class TwoInputOp(IRDLOperation):
    """Two tensors `lhs` and `rhs` in, one tensor out."""

    lhs = operand_def(AnyTorchTensor)
    rhs = operand_def(AnyTorchTensor)
    result = result_def(AnyTorchTensor)
    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])


class BinaryOp(TwoInputOp):
    """Elementwise op on two operands of one element type, broadcast numpy-style."""

    def result_element_type(self) -> Attribute:
        return element_type_of(self.lhs)

    def verify_(self) -> None:
        verify_same_element_type(self.lhs, self.rhs)
        if element_type_of(self.result) != self.result_element_type():
            raise VerifyException(
                f"{self.name} on {element_type_of(self.lhs)} produces "
                f"{self.result_element_type()}, but the result is {element_type_of(self.result)}"
            )
        shape = broadcast_shapes(shape_of(self.lhs), shape_of(self.rhs))
        verify_result_shape(self, shape, "broadcasting the operands")


class FloatBinaryOp(BinaryOp):
    """A binary op torch defines on floating-point tensors only."""

    lhs = operand_def(FloatTensor)
    rhs = operand_def(FloatTensor)
    result = result_def(FloatTensor)


class ComparisonOp(BinaryOp):
    """Elementwise comparison producing an i1 mask."""

    result = result_def(MaskTensor)

    def result_element_type(self) -> Attribute:
        return i1


@irdl_op_definition
class AddOp(BinaryOp):
    """`lhs + rhs` (aten's `alpha` is an explicit `torch.mul`)."""

    name = "torch.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """`lhs - rhs` (aten's `alpha` is an explicit `torch.mul`)."""

    name = "torch.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """`lhs * rhs`."""

    name = "torch.mul"


@irdl_op_definition
class DivOp(FloatBinaryOp):
    """True division `lhs / rhs`; torch promotes integer operands to float first."""

    name = "torch.div"


@irdl_op_definition
class PowOp(BinaryOp):
    """`lhs ** rhs`."""

    name = "torch.pow"


@irdl_op_definition
class RemainderOp(BinaryOp):
    """`lhs % rhs` as Python defines it: the result has the sign of `rhs`."""

    name = "torch.remainder"


@irdl_op_definition
class FmodOp(BinaryOp):
    """C's `fmod(lhs, rhs)`: `lhs - trunc(lhs / rhs) * rhs`, with the sign of `lhs`."""

    name = "torch.fmod"


@irdl_op_definition
class FloorDivideOp(BinaryOp):
    """`lhs // rhs`: the quotient rounded toward negative infinity."""

    name = "torch.floor_divide"


@irdl_op_definition
class TruncDivideOp(BinaryOp):
    """`torch.div(lhs, rhs, rounding_mode="trunc")`: the quotient rounded toward zero."""

    name = "torch.trunc_divide"


@irdl_op_definition
class Atan2Op(FloatBinaryOp):
    """`atan(lhs / rhs)` in the quadrant of the point (rhs, lhs), in [-pi, pi]; the signs of
    zeros pick it (`atan2(+-0, -0)` is +-pi)."""

    name = "torch.atan2"


@irdl_op_definition
class HypotOp(FloatBinaryOp):
    """`sqrt(lhs^2 + rhs^2)` without overflow or underflow in the squares; infinite where
    either operand is, even if the other is NaN."""

    name = "torch.hypot"


@irdl_op_definition
class CopySignOp(FloatBinaryOp):
    """The magnitude of `lhs` with the sign bit of `rhs` (of a zero and a NaN too)."""

    name = "torch.copysign"


@irdl_op_definition
class MaximumOp(BinaryOp):
    """Elementwise max; NaN if either operand is NaN."""

    name = "torch.maximum"


@irdl_op_definition
class MinimumOp(BinaryOp):
    """Elementwise min; NaN if either operand is NaN."""

    name = "torch.minimum"


class BitwiseOp(BinaryOp):
    """Elementwise op on the bits of two bool or integer operands."""

    lhs = operand_def(BitsTensor)
    rhs = operand_def(BitsTensor)
    result = result_def(BitsTensor)


class IntegerBinaryOp(BinaryOp):
    """An elementwise op of two integer tensors."""

    lhs = operand_def(IntegerTensor)
    rhs = operand_def(IntegerTensor)
    result = result_def(IntegerTensor)


class ShiftOp(IntegerBinaryOp):
    """A shift of the bits of integer `lhs` by `rhs` places."""


@irdl_op_definition
class GcdOp(IntegerBinaryOp):
    """The greatest common divisor of `|lhs|` and `|rhs|` (0 of two zeros)."""

    name = "torch.gcd"


@irdl_op_definition
class LcmOp(IntegerBinaryOp):
    """The least common multiple of `|lhs|` and `|rhs|` (0 where either is 0)."""

    name = "torch.lcm"


@irdl_op_definition
class ShiftLeftOp(ShiftOp):
    """`lhs << rhs`; 0 where `rhs` is negative or not below the bit width, as torch's."""

    name = "torch.shift_left"


@irdl_op_definition
class ShiftRightOp(ShiftOp):
    """`lhs >> rhs`, arithmetic (the sign fills in); where `rhs` is negative or not below
    the bit width, the sign alone (0 or -1), as torch's."""

    name = "torch.shift_right"


@irdl_op_definition
class BitwiseAndOp(BitwiseOp):
    """`lhs & rhs` (on bools, logical and)."""

    name = "torch.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(BitwiseOp):
    """`lhs | rhs` (on bools, logical or)."""

    name = "torch.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(BitwiseOp):
    """`lhs ^ rhs` (on bools, logical exclusive or)."""

    name = "torch.bitwise_xor"


@irdl_op_definition
class GtOp(ComparisonOp):
    """`lhs > rhs`."""

    name = "torch.gt"


@irdl_op_definition
class LtOp(ComparisonOp):
    """`lhs < rhs`."""

    name = "torch.lt"


@irdl_op_definition
class GeOp(ComparisonOp):
    """`lhs >= rhs`."""

    name = "torch.ge"


@irdl_op_definition
class LeOp(ComparisonOp):
    """`lhs <= rhs`."""

    name = "torch.le"


@irdl_op_definition
class EqOp(ComparisonOp):
    """`lhs == rhs`."""

    name = "torch.eq"


@irdl_op_definition
class NeOp(ComparisonOp):
    """`lhs != rhs`."""

    name = "torch.ne"


@irdl_op_definition
class WhereOp(IRDLOperation):
    """`condition ? on_true : on_false`, elementwise, broadcasting all three operands."""

    name = "torch.where"
    condition = operand_def(MaskTensor)
    on_true = operand_def(AnyTorchTensor)
    on_false = operand_def(AnyTorchTensor)
    result = result_def(AnyTorchTensor)
    traits = traits_def(Pure())

    assembly_format = (
        "$condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,` "
        "type($on_true) `,` type($on_false) `->` type($result)"
    )

    def __init__(
        self, condition: SSAValue, on_true: SSAValue, on_false: SSAValue, result_type: Attribute
    ):
        super().__init__(operands=[condition, on_true, on_false], result_types=[result_type])

    def verify_(self) -> None:
        verify_same_element_type(self.on_true, self.on_false, self.result)
        shape = broadcast_shapes(
            shape_of(self.condition), shape_of(self.on_true), shape_of(self.on_false)
        )
        verify_result_shape(self, shape, "broadcasting the operands")


# --- reductions -------------------------------------------------------------------------------


class ReductionOp(SingleInputOp):
    """Reduces the input over `dims`, dropping them unless `keepdim`. The element type is
    kept; torch accumulates f16/bf16 in f32."""

    dims = prop_def(DenseArrayBase.constr(i64))
    keepdim = opt_prop_def(UnitAttr)

    assembly_format = single_input_format("`dims` $dims (`keepdim` $keepdim^)?")

    def __init__(
        self,
        input: SSAValue,
        result_type: Attribute,
        dims: Sequence[int],
        keepdim: bool,
        properties: Mapping[str, Attribute] = {},
    ):
        properties = {"dims": dims_attr(dims), **properties}
        if keepdim:
            properties["keepdim"] = UnitAttr()
        super().__init__(input, result_type, properties)

    @property
    def dim_list(self) -> tuple[int, ...]:
        return self.dims.get_values()

    def verify_(self) -> None:
        shape = shape_of(self.input)
        verify_normalized_dims(self.dim_list, len(shape))
        verify_same_element_type(self.input, self.result)
        expected = reduced_shape(shape, self.dim_list, self.keepdim is not None)
        verify_result_shape(self, expected, f"reducing dims {list(self.dim_list)}")


@irdl_op_definition
class SumOp(ReductionOp):
    """Sum over `dims`."""

    name = "torch.sum"


@irdl_op_definition
class ProdOp(ReductionOp):
    """Product over `dims`."""

    name = "torch.prod"


@irdl_op_definition
class MeanOp(ReductionOp):
    """Arithmetic mean over `dims`."""

    name = "torch.mean"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)


@irdl_op_definition
class AmaxOp(ReductionOp):
    """Maximum over `dims`."""

    name = "torch.amax"


@irdl_op_definition
class AminOp(ReductionOp):
    """Minimum over `dims`."""

    name = "torch.amin"


class ArgReductionOp(ReductionOp):
    """The first position along one dim (`dims` holds it) of the extreme value, as i64; a
    NaN counts as the extreme, as torch picks it."""

    def verify_(self) -> None:
        shape = shape_of(self.input)
        verify_normalized_dims(self.dim_list, len(shape))
        if len(self.dim_list) != 1:
            raise VerifyException(
                f"'{self.name}' finds a position along one dim, but dims is {list(self.dim_list)}"
            )
        if element_type_of(self.result) != i64:
            raise VerifyException(
                f"'{self.name}' gives i64 positions, but its result has element type "
                f"{element_type_of(self.result)}"
            )
        expected = reduced_shape(shape, self.dim_list, self.keepdim is not None)
        verify_result_shape(self, expected, f"reducing dims {list(self.dim_list)}")


@irdl_op_definition
class ArgmaxOp(ArgReductionOp):
    """Position of the largest value along a dim."""

    name = "torch.argmax"


@irdl_op_definition
class ArgminOp(ArgReductionOp):
    """Position of the smallest value along a dim."""

    name = "torch.argmin"


@irdl_op_definition
class VarOp(ReductionOp):
    """Variance over `dims`: `sum((x - mean)^2) / max(0, n - correction)` with `n` the
    number of reduced elements (`correction = 1` is Bessel's unbiased estimate)."""

    name = "torch.var"
    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)
    correction = prop_def(IntegerAttr[I64], default_value=int_attr(1))

    assembly_format = single_input_format(
        "`dims` $dims (`keepdim` $keepdim^)? (`correction` $correction^)?"
    )

    def __init__(
        self,
        input: SSAValue,
        result_type: Attribute,
        dims: Sequence[int],
        keepdim: bool,
        correction: int = 1,
    ):
        super().__init__(input, result_type, dims, keepdim, {"correction": int_attr(correction)})


# --- contractions -----------------------------------------------------------------------------


def verify_contraction_operands(
    op: Operation, lhs: SSAValue, rhs: SSAValue, lhs_k: int, rhs_k: int
) -> None:
    verify_same_element_type(lhs, rhs, op.results[0])
    k, rhs_size = shape_of(lhs)[lhs_k], shape_of(rhs)[rhs_k]
    if k != rhs_size:
        raise VerifyException(
            f"contraction sizes differ: {list(shape_of(lhs))} has {k} at dim {lhs_k} but "
            f"{list(shape_of(rhs))} has {rhs_size} at dim {rhs_k}"
        )


@irdl_op_definition
class LinearOp(IRDLOperation):
    """`input @ weight^T + bias`: input [..., K], weight [N, K], bias [N] -> [..., N]."""

    name = "torch.linear"
    input = operand_def(FloatTensor)
    weight = operand_def(FloatTensor)
    bias = opt_operand_def(FloatTensor)
    result = result_def(FloatTensor)
    traits = traits_def(Pure())

    assembly_format = (
        "$input `,` $weight (`bias` $bias^)? attr-dict `:` type($input) `,` type($weight) "
        "(`bias` type($bias)^)? `->` type($result)"
    )

    def __init__(
        self, input: SSAValue, weight: SSAValue, bias: SSAValue | None, result_type: Attribute
    ):
        super().__init__(operands=[input, weight, bias], result_types=[result_type])

    def verify_(self) -> None:
        if len(shape_of(self.input)) < 1 or len(shape_of(self.weight)) != 2:
            raise VerifyException(
                f"linear takes an input of rank >= 1 and a rank-2 weight [N, K], got "
                f"{list(shape_of(self.input))} and {list(shape_of(self.weight))}"
            )
        verify_contraction_operands(self, self.input, self.weight, -1, 1)
        n = shape_of(self.weight)[0]
        if self.bias is not None:
            verify_same_element_type(self.input, self.bias)
            if shape_of(self.bias) != (n,):
                raise VerifyException(
                    f"linear bias must have shape [{n}] (the weight's N), got "
                    f"{list(shape_of(self.bias))}"
                )
        verify_result_shape(self, (*shape_of(self.input)[:-1], n), "input [..., K] @ weight^T")


class MatrixProductOp(TwoInputOp):
    """Batched matrix product of lhs [..., M, K] and rhs [..., K, N]."""

    def batch_shape(
        self, lhs_batch: tuple[int, ...], rhs_batch: tuple[int, ...]
    ) -> tuple[int, ...]:
        raise NotImplementedError

    def verify_(self) -> None:
        lhs, rhs = shape_of(self.lhs), shape_of(self.rhs)
        if len(lhs) < 2 or len(rhs) < 2:
            raise VerifyException(
                f"{self.name} takes operands of rank >= 2 (unsqueeze vectors first), got "
                f"{list(lhs)} and {list(rhs)}"
            )
        verify_contraction_operands(self, self.lhs, self.rhs, -1, -2)
        batch = self.batch_shape(lhs[:-2], rhs[:-2])
        verify_result_shape(self, (*batch, lhs[-2], rhs[-1]), "[..., M, K] @ [..., K, N]")


@irdl_op_definition
class MatmulOp(MatrixProductOp):
    """`torch.matmul` on operands of rank >= 2: batch dims broadcast numpy-style."""

    name = "torch.matmul"

    def batch_shape(
        self, lhs_batch: tuple[int, ...], rhs_batch: tuple[int, ...]
    ) -> tuple[int, ...]:
        return broadcast_shapes(lhs_batch, rhs_batch)


@irdl_op_definition
class BmmOp(MatrixProductOp):
    """`torch.bmm`: [B, M, K] @ [B, K, N] -> [B, M, N], no broadcasting."""

    name = "torch.bmm"

    def batch_shape(
        self, lhs_batch: tuple[int, ...], rhs_batch: tuple[int, ...]
    ) -> tuple[int, ...]:
        if len(lhs_batch) != 1 or lhs_batch != rhs_batch:
            raise VerifyException(
                f"bmm takes rank-3 operands with one batch size, got batch dims "
                f"{list(lhs_batch)} and {list(rhs_batch)}"
            )
        return lhs_batch


# --- normalizations and attention -------------------------------------------------------------


class NormOp(IRDLOperation):
    """Normalizes over the trailing `normalized_shape` dims, then scales (and shifts)."""

    # Each subclass defines `input`, `weight`, ... and `result` itself: IRDL would order
    # inherited operand defs after the subclass's own.
    normalized_shape = prop_def(DenseArrayBase.constr(i64))
    eps = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure())

    def __init__(
        self,
        operands: Sequence[SSAValue | None],
        normalized_shape: Sequence[int],
        eps: float,
        result_type: Attribute,
    ):
        super().__init__(
            operands=operands,
            result_types=[result_type],
            properties={"normalized_shape": dims_attr(normalized_shape), "eps": float_attr(eps)},
        )

    def affine_operands(self) -> tuple[SSAValue | None, ...]:
        raise NotImplementedError

    def verify_(self) -> None:
        shape = shape_of(self.input)
        normalized = tuple(self.normalized_shape.get_values())
        if not normalized or shape[len(shape) - len(normalized) :] != normalized:
            raise VerifyException(
                f"normalized_shape {list(normalized)} must be a non-empty suffix of the input "
                f"shape {list(shape)}"
            )
        for value in self.affine_operands():
            if value is not None and shape_of(value) != normalized:
                raise VerifyException(
                    f"weight and bias must have the normalized shape {list(normalized)}, got "
                    f"{list(shape_of(value))}"
                )
        verify_same_element_type(
            self.input, self.result, *(v for v in self.affine_operands() if v is not None)
        )
        verify_result_shape(self, shape, "normalization")


@irdl_op_definition
class RmsNormOp(NormOp):
    """`x / sqrt(mean(x^2) + eps) * weight`. `eps` is resolved: torch's default (None) is
    the machine epsilon of the compute type (f32 for f16/bf16/f32, f64 for f64)."""

    name = "torch.rms_norm"
    input = operand_def(FloatTensor)
    weight = opt_operand_def(FloatTensor)
    result = result_def(FloatTensor)

    assembly_format = (
        "$input (`weight` $weight^)? `normalized_shape` $normalized_shape `eps` $eps attr-dict "
        "`:` type($input) (`weight` type($weight)^)? `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue | None,
        normalized_shape: Sequence[int],
        eps: float,
        result_type: Attribute,
    ):
        super().__init__([input, weight], normalized_shape, eps, result_type)

    def affine_operands(self) -> tuple[SSAValue | None, ...]:
        return (self.weight,)


@irdl_op_definition
class LayerNormOp(NormOp):
    """`(x - mean) / sqrt(var + eps) * weight + bias`, with the biased variance."""

    name = "torch.layer_norm"
    input = operand_def(FloatTensor)
    weight = opt_operand_def(FloatTensor)
    bias = opt_operand_def(FloatTensor)
    result = result_def(FloatTensor)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = (
        "$input (`weight` $weight^)? (`bias` $bias^)? `normalized_shape` $normalized_shape "
        "`eps` $eps attr-dict `:` type($input) (`weight` type($weight)^)? "
        "(`bias` type($bias)^)? `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue,
        weight: SSAValue | None,
        bias: SSAValue | None,
        normalized_shape: Sequence[int],
        eps: float,
        result_type: Attribute,
    ):
        super().__init__([input, weight, bias], normalized_shape, eps, result_type)

    def affine_operands(self) -> tuple[SSAValue | None, ...]:
        return (self.weight, self.bias)


class SoftmaxFamilyOp(SingleDimOp):
    """A normalization of exponentials along `dim`."""

    input = operand_def(FloatTensor)
    result = result_def(FloatTensor)

    def verify_(self) -> None:
        verify_dim(self.dim.value.data, len(shape_of(self.input)))
        self.verify_type_kept(self.name)


@irdl_op_definition
class SoftmaxOp(SoftmaxFamilyOp):
    """`exp(x) / sum(exp(x))` along `dim`."""

    name = "torch.softmax"


@irdl_op_definition
class LogSoftmaxOp(SoftmaxFamilyOp):
    """`x - log(sum(exp(x)))` along `dim`."""

    name = "torch.log_softmax"


class ScanOp(SingleDimOp):
    """A running fold along `dim`, keeping the type (the importer converts the input to the
    result's type first, as aten does for integers and `dtype=`); f16/bf16 accumulate in
    f32 and round each element once."""

    def verify_(self) -> None:
        verify_dim(self.dim.value.data, len(shape_of(self.input)))
        self.verify_type_kept(self.name)


@irdl_op_definition
class CumsumOp(ScanOp):
    """`result[.., i, ..] = sum(input[.., :i + 1, ..])` along `dim`."""

    name = "torch.cumsum"


@irdl_op_definition
class CumprodOp(ScanOp):
    """`result[.., i, ..] = prod(input[.., :i + 1, ..])` along `dim`."""

    name = "torch.cumprod"


@irdl_op_definition
class SdpaOp(IRDLOperation):
    """Scaled dot-product attention, `softmax(q @ k^T * scale + mask) @ v`, for query
    [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev] (batch dims equal).
    An i1 `attn_mask` keeps the positions where it is true; a float one is added. It
    broadcasts to [..., L, S]. `is_causal` keeps key j for query i iff j <= i (top-left
    aligned, as torch). `scale` is resolved: torch's default (None) is 1/sqrt(E)."""

    name = "torch.sdpa"
    query = operand_def(FloatTensor)
    key = operand_def(FloatTensor)
    value = operand_def(FloatTensor)
    attn_mask = opt_operand_def(AnyTorchTensor)
    result = result_def(FloatTensor)
    is_causal = opt_prop_def(UnitAttr)
    scale = prop_def(FloatAttr[Float64Type])
    traits = traits_def(Pure())

    assembly_format = (
        "$query `,` $key `,` $value (`mask` $attn_mask^)? (`causal` $is_causal^)? "
        "`scale` $scale attr-dict `:` type($query) `,` type($key) `,` type($value) "
        "(`mask` type($attn_mask)^)? `->` type($result)"
    )

    def __init__(
        self,
        query: SSAValue,
        key: SSAValue,
        value: SSAValue,
        attn_mask: SSAValue | None,
        is_causal: bool,
        scale: float,
        result_type: Attribute,
    ):
        properties: dict[str, Attribute] = {"scale": float_attr(scale)}
        if is_causal:
            properties["is_causal"] = UnitAttr()
        super().__init__(
            operands=[query, key, value, attn_mask],
            result_types=[result_type],
            properties=properties,
        )

    def verify_(self) -> None:
        q, k, v = shape_of(self.query), shape_of(self.key), shape_of(self.value)
        if len(q) < 2 or not (len(q) == len(k) == len(v)):
            raise VerifyException(
                f"query, key and value must have one rank >= 2, got {list(q)}, {list(k)}, {list(v)}"
            )
        if not (q[:-2] == k[:-2] == v[:-2]):
            raise VerifyException(
                f"query, key and value must share batch dims, got {list(q[:-2])}, "
                f"{list(k[:-2])}, {list(v[:-2])}"
            )
        if q[-1] != k[-1] or k[-2] != v[-2]:
            raise VerifyException(
                f"attention needs query [..., L, E], key [..., S, E], value [..., S, Ev], got "
                f"{list(q)}, {list(k)}, {list(v)}"
            )
        verify_same_element_type(self.query, self.key, self.value, self.result)
        if self.attn_mask is not None:
            mask_type = element_type_of(self.attn_mask)
            if mask_type not in (i1, element_type_of(self.query)):
                raise VerifyException(
                    f"attn_mask must be i1 or the query's {element_type_of(self.query)}, "
                    f"got {mask_type}"
                )
            scores = (*q[:-1], k[-2])
            if not broadcasts_to(shape_of(self.attn_mask), scores):
                raise VerifyException(
                    f"attn_mask of shape {list(shape_of(self.attn_mask))} must broadcast to "
                    f"the scores' shape {list(scores)}"
                )
        verify_result_shape(self, (*q[:-1], v[-1]), "attention")


def default_sdpa_scale(head_dim: int) -> float:
    return 1 / math.sqrt(head_dim)


@irdl_op_definition
class EmbeddingOp(IRDLOperation):
    """Row lookup `weight[indices]`: weight [V, D], indices [...] -> [..., D]."""

    name = "torch.embedding"
    weight = operand_def(AnyTorchTensor)
    indices = operand_def(IndexTensor)
    result = result_def(AnyTorchTensor)
    traits = traits_def(Pure())

    assembly_format = (
        "$weight `,` $indices attr-dict `:` type($weight) `,` type($indices) `->` type($result)"
    )

    def __init__(self, weight: SSAValue, indices: SSAValue, result_type: Attribute):
        super().__init__(operands=[weight, indices], result_types=[result_type])

    def verify_(self) -> None:
        if len(shape_of(self.weight)) != 2:
            raise VerifyException(
                f"embedding weight must have rank 2 [V, D], got {list(shape_of(self.weight))}"
            )
        verify_same_element_type(self.weight, self.result)
        verify_result_shape(
            self, (*shape_of(self.indices), shape_of(self.weight)[1]), "looking up rows"
        )
        verify_constant_rows(self.indices, shape_of(self.weight)[0])


# --- views and data movement ------------------------------------------------------------------


class ShapeOp(SingleInputOp):
    """Rearranges elements without changing them: the element type is kept."""

    def verify_(self) -> None:
        verify_same_element_type(self.input, self.result)
        self.verify_shape(shape_of(self.input))

    def verify_shape(self, shape: tuple[int, ...]) -> None:
        raise NotImplementedError


@irdl_op_definition
class ReshapeOp(ShapeOp):
    """Row-major reshape (`view` and `reshape`) to the result's shape."""

    name = "torch.reshape"

    def verify_shape(self, shape: tuple[int, ...]) -> None:
        if math.prod(shape) != math.prod(shape_of(self.result)):
            raise VerifyException(
                f"reshape keeps the number of elements: {list(shape)} has {math.prod(shape)}, "
                f"the result {list(shape_of(self.result))} has {math.prod(shape_of(self.result))}"
            )


@irdl_op_definition
class ExpandOp(ShapeOp):
    """Broadcasts size-1 dims and adds leading dims to reach the result's shape."""

    name = "torch.expand"

    def verify_shape(self, shape: tuple[int, ...]) -> None:
        target = shape_of(self.result)
        if not broadcasts_to(shape, target):
            raise VerifyException(f"cannot expand shape {list(shape)} to {list(target)}")


class DimsShapeOp(ShapeOp):
    """A shape op on the list of dims `dims`."""

    dims = prop_def(DenseArrayBase.constr(i64))

    assembly_format = single_input_format("`dims` $dims")

    def __init__(self, input: SSAValue, result_type: Attribute, dims: Sequence[int]):
        super().__init__(input, result_type, {"dims": dims_attr(dims)})


@irdl_op_definition
class PermuteOp(DimsShapeOp):
    """`result.shape[i] = input.shape[dims[i]]`."""

    name = "torch.permute"

    def verify_shape(self, shape: tuple[int, ...]) -> None:
        dims = self.dims.get_values()
        if sorted(dims) != list(range(len(shape))):
            raise VerifyException(f"dims {list(dims)} must be a permutation of 0..{len(shape) - 1}")
        verify_result_shape(self, [shape[d] for d in dims], f"permuting by {list(dims)}")


@irdl_op_definition
class TransposeOp(ShapeOp):
    """Swaps dims `dim0` and `dim1`."""

    name = "torch.transpose"
    dim0 = prop_def(IntegerAttr[I64])
    dim1 = prop_def(IntegerAttr[I64])

    assembly_format = single_input_format("`dims` $dim0 `,` $dim1")

    def __init__(self, input: SSAValue, result_type: Attribute, dim0: int, dim1: int):
        super().__init__(input, result_type, {"dim0": int_attr(dim0), "dim1": int_attr(dim1)})

    def verify_shape(self, shape: tuple[int, ...]) -> None:
        dim0, dim1 = self.dim0.value.data, self.dim1.value.data
        verify_dim(dim0, len(shape))
        verify_dim(dim1, len(shape))
        swapped = list(shape)
        swapped[dim0], swapped[dim1] = shape[dim1], shape[dim0]
        verify_result_shape(self, swapped, f"swapping dims {dim0} and {dim1}")


@irdl_op_definition
class UnsqueezeOp(ShapeOp, SingleDimOp):
    """Inserts a size-1 dim at `dim` of the result."""

    name = "torch.unsqueeze"

    def verify_shape(self, shape: tuple[int, ...]) -> None:
        dim = self.dim.value.data
        verify_dim(dim, len(shape) + 1)
        verify_result_shape(self, (*shape[:dim], 1, *shape[dim:]), f"unsqueezing at {dim}")


@irdl_op_definition
class SqueezeOp(DimsShapeOp):
    """Removes the size-1 dims `dims`."""

    name = "torch.squeeze"

    def verify_shape(self, shape: tuple[int, ...]) -> None:
        dims = self.dims.get_values()
        verify_normalized_dims(dims, len(shape))
        for dim in dims:
            if shape[dim] != 1:
                raise VerifyException(f"squeezed dim {dim} must have size 1, got {shape[dim]}")
        kept = [n for d, n in enumerate(shape) if d not in dims]
        verify_result_shape(self, kept, f"squeezing dims {list(dims)}")


@irdl_op_definition
class SliceOp(ShapeOp):
    """Keeps indices `start, start + step, ...` below `end` of dim `dim`, with
    `0 <= start <= end <= size` and `step >= 1` (the importer clamps as aten.slice does).
    An `end` of `DYNAMIC_INDEX` (printed as its value, -9223372036854775808, as xDSL writes
    a dynamic index) keeps the program's dynamic size of elements from `start`, step 1 (a
    table sliced to a dynamic sequence length, `cos[:seq]`): the result's dim is `?`, and the
    importer has checked that every size of the range fits the dim."""

    name = "torch.slice"
    dim = prop_def(IntegerAttr[I64])
    start = prop_def(IntegerAttr[I64])
    end = prop_def(IntegerAttr[I64])
    step = prop_def(IntegerAttr[I64])

    assembly_format = single_input_format("`dim` $dim `start` $start `end` $end `step` $step")

    def __init__(
        self, input: SSAValue, result_type: Attribute, dim: int, start: int, end: int, step: int
    ):
        bounds = {"dim": dim, "start": start, "end": end, "step": step}
        super().__init__(input, result_type, {k: int_attr(v) for k, v in bounds.items()})

    def verify_shape(self, shape: tuple[int, ...]) -> None:
        dim = self.dim.value.data
        verify_dim(dim, len(shape))
        start, end, step = (a.value.data for a in (self.start, self.end, self.step))
        if end == DYNAMIC_INDEX:
            if not (0 <= start < shape[dim] and step == 1 and shape[dim] != DYNAMIC_INDEX):
                raise VerifyException(
                    f"a slice to the dynamic size takes a static dim {dim}, a start in it and "
                    f"step 1, got size {shape[dim]}, start {start}, step {step}"
                )
            sliced = list(shape)
            sliced[dim] = DYNAMIC_INDEX
            verify_result_shape(self, sliced, f"slicing dim {dim}")
            return
        if not (0 <= start <= end <= shape[dim] and step >= 1):
            raise VerifyException(
                f"slice bounds must satisfy 0 <= start <= end <= {shape[dim]} (the size of "
                f"dim {dim}) and step >= 1, got start {start}, end {end}, step {step}"
            )
        sliced = list(shape)
        sliced[dim] = -(-(end - start) // step)
        verify_result_shape(self, sliced, f"slicing dim {dim}")


@irdl_op_definition
class CatOp(IRDLOperation):
    """Concatenates `inputs` along `dim`; the other dims must agree."""

    name = "torch.cat"
    inputs = var_operand_def(AnyTorchTensor)
    result = result_def(AnyTorchTensor)
    dim = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())

    assembly_format = "$inputs `dim` $dim attr-dict `:` type($inputs) `->` type($result)"

    def __init__(self, inputs: Sequence[SSAValue], result_type: Attribute, dim: int):
        super().__init__(
            operands=[inputs], result_types=[result_type], properties={"dim": int_attr(dim)}
        )

    def verify_(self) -> None:
        if not self.inputs:
            raise VerifyException("cat needs at least one input")
        verify_same_element_type(*self.inputs, self.result)
        first = shape_of(self.inputs[0])
        dim = self.dim.value.data
        verify_dim(dim, len(first))
        for value in self.inputs:
            shape = shape_of(value)
            if len(shape) != len(first) or any(
                a != b for d, (a, b) in enumerate(zip(shape, first)) if d != dim
            ):
                raise VerifyException(
                    f"cat inputs must agree on every dim but {dim}, got {list(first)} and "
                    f"{list(shape)}"
                )
        joined = list(first)
        joined[dim] = sum(shape_of(v)[dim] for v in self.inputs)
        verify_result_shape(self, joined, f"concatenating along dim {dim}")


@irdl_op_definition
class IotaOp(IRDLOperation):
    """Each element's position along `dim`: `result[i0, i1, ..] = i_dim`, the positions that
    an index lookup compares or offsets (a `torch.arange` laid along one dim), without a
    literal of their values."""

    name = "torch.iota"
    result = result_def(IndexTensor)
    dim = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure())

    assembly_format = "`dim` $dim attr-dict `:` type($result)"

    def __init__(self, dim: int, result_type: Attribute):
        super().__init__(result_types=[result_type], properties={"dim": IntegerAttr(dim, i64)})

    def verify_(self) -> None:
        verify_dim(self.dim.value.data, len(shape_of(self.result)))


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor literal; a Python scalar is a 0-d (or splat) constant. A splat holds its one
    element as a rank-0 value (see `emmy.dialects.dense`)."""

    name = "torch.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(AnyTorchTensor)
    traits = traits_def(Pure())

    def __init__(self, value: DenseIntOrFPElementsAttr, result_type: Attribute | None = None):
        super().__init__(result_types=[result_type or value.type], properties={"value": value})

    def verify_(self) -> None:
        dense.verify_literal(self.value, self.result.type, "constant")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        dense.print_literal(printer, self.value, self.result.type)
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        op = cls(*dense.parse_literal(parser, "torch.constant"))
        op.attributes |= parser.parse_optional_attr_dict()
        return op


Torch = Dialect(
    "torch",
    [
        NegOp,
        AbsOp,
        BitwiseNotOp,
        ReluOp,
        ExpOp,
        LogOp,
        SqrtOp,
        RsqrtOp,
        FloorOp,
        CeilOp,
        RoundOp,
        TruncOp,
        SinOp,
        CosOp,
        TanOp,
        AtanOp,
        AsinOp,
        AcosOp,
        SinhOp,
        CoshOp,
        AsinhOp,
        AcoshOp,
        AtanhOp,
        ErfOp,
        ErfcOp,
        ErfinvOp,
        LgammaOp,
        DigammaOp,
        Log1pOp,
        Expm1Op,
        Log2Op,
        TanhOp,
        SigmoidOp,
        SiluOp,
        GeluOp,
        ClampOp,
        ToOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        PowOp,
        RemainderOp,
        FmodOp,
        FloorDivideOp,
        TruncDivideOp,
        Atan2Op,
        HypotOp,
        CopySignOp,
        MaximumOp,
        MinimumOp,
        ShiftLeftOp,
        ShiftRightOp,
        GcdOp,
        LcmOp,
        BitwiseAndOp,
        BitwiseOrOp,
        BitwiseXorOp,
        GtOp,
        LtOp,
        GeOp,
        LeOp,
        EqOp,
        NeOp,
        WhereOp,
        SumOp,
        ProdOp,
        MeanOp,
        AmaxOp,
        AminOp,
        ArgmaxOp,
        ArgminOp,
        VarOp,
        LinearOp,
        MatmulOp,
        BmmOp,
        RmsNormOp,
        LayerNormOp,
        SoftmaxOp,
        LogSoftmaxOp,
        CumsumOp,
        CumprodOp,
        SdpaOp,
        EmbeddingOp,
        IotaOp,
        ReshapeOp,
        ExpandOp,
        PermuteOp,
        TransposeOp,
        UnsqueezeOp,
        SqueezeOp,
        SliceOp,
        CatOp,
        ConstantOp,
    ],
    [],
)
