"""Vectorised `arith` and `math` for the CPU interpreter: every scalar SSA value is a numpy
array holding that scalar for many elements (or loop iterations) at once.

    %s = arith.mulf %v, %v : f32                   // np.multiply(v, v), v: float32 array
    %r = math.rsqrt %s : f32                       // np.reciprocal(np.sqrt(s))

A value of type T is an array of `numpy_dtype(T)`: f16/f32/f64 as float16/float32/float64,
bf16 as float32 rounded to bf16 precision (round to nearest even) after every op, i1 as bool,
iN as intN (signless integers are stored signed; unsigned ops reinterpret the bits),
index as int64. `to_type` brings a numpy result back to that representation, wrapping
integers to their width.

xDSL ships `ArithFunctions` and `MathFunctions`, but they compute on one `FloatAttr` or
`IntegerAttr` at a time; a program is run here once over whole arrays instead, so those are
never registered next to these (they would claim the same ops).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    TensorType,
    i1,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation, Region
from xdsl.utils.exceptions import InterpretationError

from emmy.dialects import dtypes


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of a scalar type (`dtypes.ELEMENT_TYPES`); numpy has
    no bf16, whose values live in float32, rounded by `to_type`."""
    if isinstance(element_type, BFloat16Type):
        return np.dtype(np.float32)
    row = dtypes.element_type(element_type)
    if row is None or row.numpy is None:
        raise InterpretationError(
            f"the CPU interpreter has no numpy representation for {element_type}"
        )
    return np.dtype(row.numpy)


def to_type(value: object, element_type: Attribute) -> np.ndarray:
    """`value` in the representation of `element_type`: integers wrap to the type's width
    (i1 keeps the low bit, like `arith.trunci`), bf16 rounds to nearest even."""
    array = np.asarray(value)
    if isinstance(element_type, BFloat16Type):
        return dtypes.round_to_bfloat16(array.astype(np.float32, copy=False))
    dtype = numpy_dtype(element_type)
    if array.dtype == dtype:
        return array
    if dtype == np.bool_:
        return (array.astype(np.int64) & 1).astype(np.bool_)
    return array.astype(dtype)


def shape_and_element_type(value_type: Attribute) -> tuple[tuple[int, ...], Attribute]:
    """The array shape and element type of a tensor, memref or scalar type."""
    if isinstance(value_type, TensorType | MemRefType):
        return tuple(value_type.get_shape()), value_type.get_element_type()
    return (), value_type


def dense_array(value: DenseIntOrFPElementsAttr, shaped_type: Attribute) -> np.ndarray:
    """The elements of a dense value in the shape of `shaped_type`; one element (a splat) is
    broadcast, as a read-only view."""
    shape, element_type = shape_and_element_type(shaped_type)
    values = to_type(np.array(value.get_values()), element_type)
    if values.size == 1:
        return np.broadcast_to(values.reshape(()), shape)
    return values.reshape(shape)


COMBINERS: dict[str, np.ufunc] = {
    "add": np.add,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}
"""The numpy ufunc of each reduction combiner; `max`/`min` propagate NaN like
`arith.maximumf`/`arith.minimumf`."""


def fold_with_combiner(
    interpreter: Interpreter,
    region: Region,
    inits: Sequence[FloatAttr | IntegerAttr],
    values: Sequence[np.ndarray],
    axis: int,
) -> list[np.ndarray]:
    """Folds `values` (one array per accumulator, of one shape) along `axis` with a combiner
    region, keeping `axis` with size 1: neighbours are combined pairwise, the earlier one
    first, until one is left (a combiner is associative and its inits are its identity, which
    pads an odd count and is the result of folding nothing)."""
    types = [init.type for init in inits]
    shape = np.broadcast_shapes(*(np.shape(v) for v in values))
    arrays = [to_type(np.broadcast_to(v, shape), t) for v, t in zip(values, types)]
    if shape[axis] == 0:
        kept = (*shape[:axis], 1, *shape[axis + 1 :])
        return [to_type(np.full(kept, init.value.data), t) for init, t in zip(inits, types)]
    while arrays[0].shape[axis] > 1:
        if arrays[0].shape[axis] % 2:
            pad = [(0, 0)] * len(shape)
            pad[axis] = (0, 1)
            arrays = [
                np.pad(a, pad, constant_values=init.value.data) for a, init in zip(arrays, inits)
            ]
        earlier = [np.take(a, range(0, a.shape[axis], 2), axis) for a in arrays]
        later = [np.take(a, range(1, a.shape[axis], 2), axis) for a in arrays]
        combined = interpreter.run_ssacfg_region(region, (*earlier, *later), "combiner")
        arrays = [to_type(np.broadcast_to(c, earlier[0].shape), t) for c, t in zip(combined, types)]
    return arrays


def as_signed(value: np.ndarray, value_type: Attribute) -> np.ndarray:
    """The value as signed integer ops read it; i1 true is -1. Floats pass through."""
    if value_type == i1:
        return -np.asarray(value, np.int8)
    return value


def as_unsigned(value: np.ndarray, value_type: Attribute) -> np.ndarray:
    """The value as unsigned integer ops read it: the same bits, as an unsigned dtype."""
    if not isinstance(value_type, IntegerType | IndexType):
        return value
    array = np.asarray(value)
    if array.dtype == np.bool_:
        return array.astype(np.uint8)
    return array.view(f"u{array.dtype.itemsize}")


def _truncating_divide(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero, as C and `arith.divsi` do."""
    quotient = np.floor_divide(lhs, rhs)
    inexact = np.remainder(lhs, rhs) != 0
    return quotient + (inexact & ((lhs < 0) != (rhs < 0)))


def _ceiling_divide(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    return np.floor_divide(lhs, rhs) + (np.remainder(lhs, rhs) != 0)


def _round_half_away_from_zero(values: np.ndarray) -> np.ndarray:
    # Comparing the exact fractional part avoids the double rounding of floor(x + 0.5).
    truncated = np.trunc(values)
    return np.where(np.abs(values - truncated) >= 0.5, truncated + np.sign(values), truncated)


def _fused_multiply_add(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    # float64 holds the product of two f32/f16 values exactly: like a fused op, the product
    # is not rounded before the addition.
    return np.multiply(a, b, dtype=np.float64) + c


def _reciprocal_square_root(value: np.ndarray) -> np.ndarray:
    return np.reciprocal(np.sqrt(value))


def _keep(value: np.ndarray) -> np.ndarray:
    """Casts only convert, which `to_type` does for every result."""
    return value


def _float_to_unsigned(value: np.ndarray) -> np.ndarray:
    # Through uint64 so that `to_type` wraps to the result width instead of saturating.
    return np.asarray(value).astype(np.uint64)


# numpy has no erf (scipy, which has, is not a dependency); libm's, element by element, costs
# a few milliseconds per 64k elements.
_erf = np.vectorize(pymath.erf, otypes=[np.float64])

ELEMENTWISE_OPS: dict[type[Operation], Callable[..., np.ndarray]] = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
    arith.NegfOp: np.negative,
    arith.MaximumfOp: np.maximum,
    arith.MinimumfOp: np.minimum,
    arith.MaxnumfOp: np.fmax,
    arith.MinnumfOp: np.fmin,
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.DivSIOp: _truncating_divide,
    arith.FloorDivSIOp: np.floor_divide,
    arith.CeilDivSIOp: _ceiling_divide,
    arith.RemSIOp: np.fmod,
    arith.MaxSIOp: np.maximum,
    arith.MinSIOp: np.minimum,
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
    arith.ShLIOp: np.left_shift,
    arith.ShRSIOp: np.right_shift,
    arith.SelectOp: np.where,
    arith.ExtFOp: _keep,
    arith.TruncFOp: _keep,
    arith.SIToFPOp: _keep,
    arith.FPToSIOp: _keep,
    arith.FPToUIOp: _float_to_unsigned,
    arith.ExtSIOp: _keep,
    arith.TruncIOp: _keep,
    arith.IndexCastOp: _keep,
    math.AbsFOp: np.abs,
    math.AbsIOp: np.abs,
    math.AcosOp: np.arccos,
    math.AcoshOp: np.arccosh,
    math.AsinOp: np.arcsin,
    math.AsinhOp: np.arcsinh,
    math.AtanOp: np.arctan,
    math.Atan2Op: np.arctan2,
    math.AtanhOp: np.arctanh,
    math.CbrtOp: np.cbrt,
    math.CeilOp: np.ceil,
    math.CopySignOp: np.copysign,
    math.CosOp: np.cos,
    math.CoshOp: np.cosh,
    math.ErfOp: _erf,
    math.ExpOp: np.exp,
    math.Exp2Op: np.exp2,
    math.ExpM1Op: np.expm1,
    math.FloorOp: np.floor,
    math.FmaOp: _fused_multiply_add,
    math.FPowIOp: np.power,
    math.LogOp: np.log,
    math.Log10Op: np.log10,
    math.Log1pOp: np.log1p,
    math.Log2Op: np.log2,
    math.PowFOp: np.power,
    math.RoundOp: _round_half_away_from_zero,
    math.RoundEvenOp: np.rint,
    math.RsqrtOp: _reciprocal_square_root,
    math.SinOp: np.sin,
    math.SinhOp: np.sinh,
    math.SqrtOp: np.sqrt,
    math.TanOp: np.tan,
    math.TanhOp: np.tanh,
    math.TruncOp: np.trunc,
}
"""Ops computed by a numpy function of their operands, integers read as signed."""

UNSIGNED_ELEMENTWISE_OPS: dict[type[Operation], Callable[..., np.ndarray]] = {
    arith.DivUIOp: np.floor_divide,
    arith.CeilDivUIOp: _ceiling_divide,
    arith.RemUIOp: np.remainder,
    arith.MaxUIOp: np.maximum,
    arith.MinUIOp: np.minimum,
    arith.ShRUIOp: np.right_shift,
    arith.UIToFPOp: _keep,
    arith.ExtUIOp: _keep,
    math.CtPopOp: np.bitwise_count,
}
"""Ops computed by a numpy function of their operands, integers read as unsigned."""


def _always(lhs: np.ndarray, rhs: np.ndarray) -> np.bool_:
    # `run_cmpf` broadcasts the answer to the operands' shape.
    return np.True_


def _never(lhs: np.ndarray, rhs: np.ndarray) -> np.bool_:
    return np.False_


FLOAT_PREDICATES: dict[str, tuple[Callable[..., np.ndarray], bool]] = {
    "false": (_never, False),
    "oeq": (np.equal, False),
    "ogt": (np.greater, False),
    "oge": (np.greater_equal, False),
    "olt": (np.less, False),
    "ole": (np.less_equal, False),
    "one": (np.not_equal, False),
    "ord": (_always, False),
    "ueq": (np.equal, True),
    "ugt": (np.greater, True),
    "uge": (np.greater_equal, True),
    "ult": (np.less, True),
    "ule": (np.less_equal, True),
    "une": (np.not_equal, True),
    "uno": (_never, True),
    "true": (_always, True),
}
"""`arith.cmpf` predicates: the comparison of two numbers, and the answer when either is NaN
(false for the ordered predicates, true for the unordered ones)."""

INTEGER_PREDICATES: dict[str, tuple[Callable[..., np.ndarray], bool]] = {
    "eq": (np.equal, False),
    "ne": (np.not_equal, False),
    "slt": (np.less, False),
    "sle": (np.less_equal, False),
    "sgt": (np.greater, False),
    "sge": (np.greater_equal, False),
    "ult": (np.less, True),
    "ule": (np.less_equal, True),
    "ugt": (np.greater, True),
    "uge": (np.greater_equal, True),
}
"""`arith.cmpi` predicates: the comparison, and whether it reads its operands as unsigned."""


def _elementwise_impl(compute: Callable[..., np.ndarray], read_operand):
    def run(
        functions: InterpreterFunctions,
        interpreter: Interpreter,
        op: Operation,
        args: PythonValues,
    ) -> PythonValues:
        operands = (read_operand(value, operand.type) for value, operand in zip(args, op.operands))
        return (to_type(compute(*operands), op.results[0].type),)

    return run


def _with_table_impls(functions: type[InterpreterFunctions]) -> type[InterpreterFunctions]:
    """Adds an `@impl` for every op in the elementwise tables, for `register_impls` to find."""
    for table, read_operand in (
        (ELEMENTWISE_OPS, as_signed),
        (UNSIGNED_ELEMENTWISE_OPS, as_unsigned),
    ):
        for op_type, compute in table.items():
            run = impl(op_type)(_elementwise_impl(compute, read_operand))
            setattr(functions, f"run_{op_type.__name__}", run)
    return functions


@register_impls
@_with_table_impls
class ScalarFunctions(InterpreterFunctions):
    """`arith` and `math` on numpy arrays; the elementwise tables add most ops."""

    @impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues
    ) -> PythonValues:
        if not isinstance(op.value, IntegerAttr | FloatAttr):
            raise InterpretationError(
                f"the CPU interpreter runs only scalar constants, not {op.value}"
            )
        return (to_type(op.value.value.data, op.result.type),)

    @impl(arith.CmpfOp)
    def run_cmpf(
        self, interpreter: Interpreter, op: arith.CmpfOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs = args
        predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        compare, if_nan = FLOAT_PREDICATES[predicate]
        return (np.where(np.isnan(lhs) | np.isnan(rhs), if_nan, compare(lhs, rhs)),)

    @impl(arith.CmpiOp)
    def run_cmpi(
        self, interpreter: Interpreter, op: arith.CmpiOp, args: PythonValues
    ) -> PythonValues:
        predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        compare, unsigned = INTEGER_PREDICATES[predicate]
        read_operand = as_unsigned if unsigned else as_signed
        lhs, rhs = (read_operand(value, op.lhs.type) for value in args)
        return (np.asarray(compare(lhs, rhs)),)

    @impl(arith.BitcastOp)
    def run_bitcast(
        self, interpreter: Interpreter, op: arith.BitcastOp, args: PythonValues
    ) -> PythonValues:
        (value,) = args
        if BFloat16Type() in (op.input.type, op.result.type):
            raise InterpretationError("the CPU interpreter cannot bitcast bf16, held as float32")
        return (np.asarray(value).view(numpy_dtype(op.result.type)),)
