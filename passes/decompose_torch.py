"""`decompose-torch`: every `torch` op becomes `prim` ops (with `arith`/`math` in map bodies).

Each torch op is rewritten by a small pattern (in `emmy.passes.torch_decompositions`):
- elementwise (neg, abs, relu, exp, log, sqrt, rsqrt, tanh, sigmoid, silu, gelu with erf or
  tanh, clamp, to, add, sub, mul, div, pow, maximum, minimum, gt/lt/ge/le/eq/ne, where):
  `prim.broadcast` of each operand whose shape differs from the result's, then one
  `prim.map` whose body computes the op on scalars (`ELEMENTWISE`, a table);
- sum, amax, amin: `prim.reduce`; mean: a sum, then a map dividing by the count; var: a sum
  (keepdim), a map of centered squares, their sum, a map dividing by `max(0, N - correction)`;
- rms_norm: a map `x*x`, a keepdim sum, a map `rsqrt(sum / N + eps)`, broadcast back, a map
  `x * r [* weight]`; layer_norm: a keepdim sum, a map of centered squares, a keepdim sum,
  both broadcast back, a map `(x - mean) * rsqrt(var + eps) [* weight] [+ bias]`;
- softmax / log_softmax along any dim: a keepdim max, a map `exp(x - max)`, a keepdim sum,
  a map `e / sum` (or `x - max - log(sum)`), the statistics broadcast back;
- linear: the input reshaped to [M, K], the weight `prim.permute`d to [K, N], `prim.contract`,
  a map adding the bias, reshaped back; matmul / bmm: the batch dims broadcast, a contract;
- sdpa: a contract with the permuted key, one map scaling and masking the scores (causal:
  two `prim.iota`, -inf where key > query), softmax as above, a contract with the value;
- embedding: `prim.gather`; reshape / unsqueeze / squeeze: `prim.reshape`; permute /
  transpose: `prim.permute`; expand: `prim.broadcast`; slice: `prim.slice`; cat:
  `prim.concat`; constant: a splat is a `prim.map` without inputs yielding an
  `arith.constant`, anything else a `prim.constant`.

Conventions the passes after this one rely on:
- Every op created for a torch op is located at `NameLoc("<torch op short name>", <the torch op's
  location>)`, e.g. `loc("rms_norm"("model.py":3:12))`; `fuse-prims` names kernels after them.
- Numerics are torch's: f16 and bf16 ops compute in f32 (map bodies `arith.extf` their
  operands and `arith.truncf` the result, once per torch op); reductions, normalizations,
  softmax, contractions and attention widen 16-bit inputs to f32, compute in f32 and round
  once at the end. Ops that are exact in any type (neg, abs, relu, clamp, max/min,
  comparisons, where, amax/amin, conversions) compute in the element type.
- A splat constant operand (a Python scalar) is folded into the map body as an
  `arith.constant` instead of being broadcast.
- Prim ops the rewrite leaves unused are erased.

A torch op the pass cannot decompose exactly (e.g. arithmetic on i1 tensors, an integer
`pow` by a tensor) is a `PassFailedException` at that op; the pass never guesses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    TensorType,
    f32,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.utils.exceptions import PassFailedException

from emmy.dialects import dense, prim
from emmy.dialects import torch as t
from emmy.dialects.combiner import identity
from emmy.dialects.dtypes import round_to_bfloat16

# --- types --------------------------------------------------------------------------------


def is_float(type: Attribute) -> bool:
    return isinstance(type, AnyFloat)


def is_16_bit_float(type: Attribute) -> bool:
    return isinstance(type, Float16Type | BFloat16Type)


def compute_type(element_type: Attribute) -> Attribute:
    """torch's "opmath" type: f32 for f16 and bf16, the type itself otherwise."""
    return f32 if is_16_bit_float(element_type) else element_type


def round_to(value: float, type: Attribute) -> float:
    """`value` as a constant of float `type` holds it; like torch's `Scalar.to<T>()`, a
    16-bit type rounds through f32."""
    import numpy as np  # here: most emmy-opt runs decompose nothing and start without numpy

    # A value past the type's range becomes inf, as torch's cast makes it: not worth a warning.
    with np.errstate(over="ignore"):
        if isinstance(type, Float16Type):
            return float(np.float16(np.float32(value)))
        if isinstance(type, BFloat16Type):
            return float(round_to_bfloat16(np.float32(value)))
        if type == f32:
            return float(np.float32(value))
    return float(value)


class Unsupported(Exception):
    """A torch op (or form of it) this pass cannot decompose exactly; becomes a
    PassFailedException at the op."""


# --- scalar map bodies --------------------------------------------------------------------


class Body:
    """Builds the scalar ops of one `prim.map` body. The arithmetic helpers pick the float
    or the integer op from their operands' type (i1 compares unsigned)."""

    def __init__(self, location: LocationAttr):
        self.location = location
        self.ops: list[Operation] = []
        self.constants: dict[tuple[str, Attribute], SSAValue] = {}

    def emit(self, op: Operation) -> SSAValue:
        op.location = self.location
        self.ops.append(op)
        return op.results[0] if op.results else None

    def live_ops(self) -> list[Operation]:
        """The ops, without those nothing uses (e.g. a constant exponent that became
        multiplications); ends in the terminator."""
        live: list[Operation] = []
        for op in reversed(self.ops):
            if op.results and not any(r.uses for r in op.results):
                op.erase()
            else:
                live.append(op)
        return live[::-1]

    def constant(self, value: float | int | bool, type: Attribute) -> SSAValue:
        """A constant of `type`, made once per body."""
        if is_float(type):
            attr = FloatAttr(round_to(float(value), type), type)
        elif type == i1:
            attr = IntegerAttr(int(bool(value)), i1)
        else:
            assert isinstance(type, IntegerType)
            low, high = type.value_range()
            if value != int(value) or not low <= value < high:
                raise Unsupported(f"{value} is not a value of type {type}")
            attr = IntegerAttr(int(value), type)
        key = (repr(attr.value.data), type)  # repr tells -0.0 from 0.0, and matches nan
        if key not in self.constants:
            self.constants[key] = self.emit(arith.ConstantOp(attr))
        return self.constants[key]

    def like(self, value: float | int, other: SSAValue) -> SSAValue:
        """A constant of `other`'s type."""
        return self.constant(value, other.type)

    def _integer(self, x: SSAValue, what: str) -> None:
        if x.type == i1:
            raise Unsupported(f"{what} on i1 (bool) values is not supported")

    def _pick(self, x: SSAValue, float_op, integer_op, what: str, *operands: SSAValue):
        if is_float(x.type):
            return self.emit(float_op(x, *operands))
        self._integer(x, what)
        return self.emit(integer_op(x, *operands))

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._pick(x, arith.AddfOp, arith.AddiOp, "addition", y)

    def sub(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._pick(x, arith.SubfOp, arith.SubiOp, "subtraction", y)

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self._pick(x, arith.MulfOp, arith.MuliOp, "multiplication", y)

    def div(self, x: SSAValue, y: SSAValue) -> SSAValue:
        if not is_float(x.type):
            raise Unsupported(f"division of {x.type} values is not supported")
        return self.emit(arith.DivfOp(x, y))

    def floor_divide(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """For floats as torch computes it, from the exact `fmod` rather than the rounded
        quotient (which, near a multiple of `y`, floors to one more than torch's): `(x -
        fmod(x, y)) / y`, less one where the remainder's sign differs from `y`'s, then the
        nearest whole number at or below it (rounded up past .5); a zero quotient has the
        sign of `x / y`, and a zero `y` gives `x / y`."""
        if not is_float(x.type):
            self._integer(x, "floor division")
            return self.emit(arith.FloorDivSIOp(x, y))
        rest, zero, one = self.fmod(x, y), self.like(0.0, x), self.like(1.0, x)
        quotient = self.div(self.sub(x, rest), y)
        quotient = self.select(self.signs_differ(rest, y), self.sub(quotient, one), quotient)
        floored = self.emit(math.FloorOp(quotient))
        up = self.compare("gt", self.sub(quotient, floored), self.like(0.5, x))
        floored = self.select(up, self.add(floored, one), floored)
        ratio = self.div(x, y)
        signed_zero = self.emit(math.CopySignOp(zero, ratio))
        floored = self.select(self.compare("eq", quotient, zero), signed_zero, floored)
        return self.select(self.compare("eq", y, zero), ratio, floored)

    def trunc_divide(self, x: SSAValue, y: SSAValue) -> SSAValue:
        if is_float(x.type):
            return self.emit(math.TruncOp(self.div(x, y)))
        self._integer(x, "truncating division")
        return self.emit(arith.DivSIOp(x, y))

    def shift(self, x: SSAValue, y: SSAValue, left: bool) -> SSAValue:
        """`x << y` (or `>>`, arithmetic) as torch shifts: by a `y` that is negative or not
        below the bit width, to 0 (or to the sign alone). Such a `y` never reaches the
        shift itself, for which it would be undefined."""
        self._integer(x, "a shift")
        bits = x.type.width.data
        outside = self.emit(
            arith.OrIOp(
                self.compare("lt", y, self.like(0, y)), self.compare("ge", y, self.like(bits, y))
            )
        )
        if left:
            shifted = self.emit(arith.ShLIOp(x, self.select(outside, self.like(0, y), y)))
            return self.select(outside, self.like(0, x), shifted)
        return self.emit(arith.ShRSIOp(x, self.select(outside, self.like(bits - 1, y), y)))

    def remainder(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """Python's `%`, as torch computes it: the truncated remainder (`fmod`), moved by `y`
        where it is not zero and its sign differs from `y`'s."""
        truncated = self.fmod(x, y)
        return self.select(self.signs_differ(truncated, y), self.add(truncated, y), truncated)

    def signs_differ(self, rest: SSAValue, y: SSAValue) -> SSAValue:
        """Where a truncated remainder `rest` is not zero and its sign is not `y`'s: where
        Python's `%` and `//` round the other way than C's."""
        zero = self.like(0, rest)
        differ = self.compare("ne", self.compare("lt", rest, zero), self.compare("lt", y, zero))
        return self.emit(arith.AndIOp(self.compare("ne", rest, zero), differ))

    def fmod(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """C's fmod, as torch computes it: `x - trunc(x / y) * y` (one fused multiply-add,
        exact where the result is), the sign of `x` and below `|y|`; the rounded quotient may
        be one off near a multiple of `y`, which moves the result by `|y|` back into that
        range. A finite `x` is its own fmod by an infinite `y`. For integers the truncated
        remainder."""
        if not is_float(x.type):
            self._integer(x, "fmod")
            return self.emit(arith.RemSIOp(x, y))
        rest = self.emit(math.FmaOp(self.neg(self.trunc_divide(x, y)), y, x))
        step = self.emit(math.CopySignOp(self.abs(y), x))
        zero = self.like(0.0, x)
        behind = self.compare("lt", self.mul(rest, x), zero)  # the sign of x lost
        rest = self.select(behind, self.add(rest, step), rest)
        beyond = self.compare("ge", self.abs(rest), self.abs(y))
        rest = self.select(beyond, self.sub(rest, step), rest)
        rest = self.emit(math.CopySignOp(rest, x))  # a zero too has the sign of x
        infinite = self.like(float("inf"), x)
        kept = self.emit(
            arith.AndIOp(
                self.compare("eq", self.abs(y), infinite), self.compare("lt", self.abs(x), infinite)
            )
        )
        return self.select(kept, x, rest)

    def neg(self, x: SSAValue) -> SSAValue:
        if is_float(x.type):
            return self.emit(arith.NegfOp(x))
        self._integer(x, "negation")
        return self.emit(arith.SubiOp(self.like(0, x), x))

    def abs(self, x: SSAValue) -> SSAValue:
        if is_float(x.type):
            return self.emit(math.AbsFOp(x))
        self._integer(x, "abs")
        return self.emit(math.AbsIOp(x))

    def max(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """The larger value; NaN if either is NaN (torch.maximum, clamp, relu)."""
        if is_float(x.type):
            return self.emit(arith.MaximumfOp(x, y))
        return self.emit((arith.MaxUIOp if x.type == i1 else arith.MaxSIOp)(x, y))

    def min(self, x: SSAValue, y: SSAValue) -> SSAValue:
        if is_float(x.type):
            return self.emit(arith.MinimumfOp(x, y))
        return self.emit((arith.MinUIOp if x.type == i1 else arith.MinSIOp)(x, y))

    FLOAT_PREDICATES = {
        "gt": "ogt",
        "lt": "olt",
        "ge": "oge",
        "le": "ole",
        "eq": "oeq",
        "ne": "une",
    }
    SIGNED_PREDICATES = {"gt": "sgt", "lt": "slt", "ge": "sge", "le": "sle", "eq": "eq", "ne": "ne"}
    UNSIGNED_PREDICATES = {
        "gt": "ugt",
        "lt": "ult",
        "ge": "uge",
        "le": "ule",
        "eq": "eq",
        "ne": "ne",
    }

    def compare(self, relation: str, x: SSAValue, y: SSAValue) -> SSAValue:
        """`x <relation> y` as torch compares: NaN is unequal to everything (so `ne` is
        true for it and the rest false), integers are signed and i1 is unsigned."""
        if is_float(x.type):
            return self.emit(arith.CmpfOp(x, y, self.FLOAT_PREDICATES[relation]))
        table = self.UNSIGNED_PREDICATES if x.type == i1 else self.SIGNED_PREDICATES
        return self.emit(arith.CmpiOp(x, y, table[relation]))

    def select(self, condition: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(arith.SelectOp(condition, x, y))

    def convert(self, x: SSAValue, type: Attribute) -> SSAValue:
        """`x` converted to `type` as `Tensor.to` does: floats round to nearest even (a
        16-bit result from f64 or an integer rounds through f32, like torch), floats to
        integers truncate toward zero, and anything to i1 tests `!= 0`."""
        source = x.type
        if source == type:
            return x
        if type == i1:
            return self.compare("ne", x, self.like(0, x))
        if is_float(source) and is_float(type):
            if is_16_bit_float(type) and source != f32:
                x = self.convert(x, f32)
                return x if x.type == type else self.emit(arith.TruncFOp(x, type))
            wider = source.bitwidth < type.bitwidth
            return self.emit((arith.ExtFOp if wider else arith.TruncFOp)(x, type))
        if is_float(type):
            if is_16_bit_float(type):
                return self.convert(self.convert(x, f32), type)
            return self.emit((arith.UIToFPOp if source == i1 else arith.SIToFPOp)(x, type))
        if is_float(source):
            return self.emit(arith.FPToSIOp(x, type))
        if source == i1:
            return self.emit(arith.ExtUIOp(x, type))
        if source.width.data < type.width.data:
            return self.emit(arith.ExtSIOp(x, type))
        return self.emit(arith.TruncIOp(x, type))


# --- splat constants ----------------------------------------------------------------------


def splat_value(value: SSAValue) -> float | int | None:
    """The element of a tensor every element of which is one known constant (a splat
    `torch.constant`, or the input-less map it becomes), else None."""
    owner = value.owner
    if isinstance(owner, t.ConstantOp):
        return dense.splat_element(owner.value) if prod(t.shape_of(value)) > 0 else None
    if isinstance(owner, prim.MapOp) and not owner.inputs:
        ops = list(owner.body.block.ops)
        if (
            len(ops) == 2
            and isinstance(ops[0], arith.ConstantOp)
            and isinstance(ops[1], prim.YieldOp)
            and ops[1].arguments[0] is ops[0].result
            and isinstance(ops[0].value, FloatAttr | IntegerAttr)
        ):
            return ops[0].value.value.data
    return None


# --- tensor-level building ----------------------------------------------------------------

ScalarCompute = Callable[..., SSAValue]
"""`compute(body, *scalars) -> scalar`: a map body's computation on one element."""


class PrimBuilder:
    """Emits the prim ops that replace one torch op, before it, each located at
    `NameLoc(<torch op short name>, <torch op location>)`."""

    def __init__(self, rewriter: PatternRewriter, op: Operation):
        self.rewriter = rewriter
        self.op = op
        self.location = NameLoc(StringAttr(op.name.partition(".")[2]), op.location)
        self.broadcasts: dict[tuple[SSAValue, tuple[int, ...]], SSAValue] = {}

    def emit(self, op: Operation) -> SSAValue:
        op.location = self.location
        self.rewriter.insert(op)
        return op.results[0]

    # views and data movement

    def broadcast(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        """`value` broadcast (numpy-style) to `shape`, once per torch op; itself if it has
        that shape."""
        shape = tuple(shape)
        if t.shape_of(value) == shape:
            return value
        if (value, shape) not in self.broadcasts:
            result_type = TensorType(t.element_type_of(value), shape)
            self.broadcasts[value, shape] = self.emit(prim.BroadcastOp(value, result_type))
        return self.broadcasts[value, shape]

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        if t.shape_of(value) == tuple(shape):
            return value
        return self.emit(prim.ReshapeOp(value, TensorType(t.element_type_of(value), shape)))

    def permute(self, value: SSAValue, permutation: Sequence[int]) -> SSAValue:
        if list(permutation) == list(range(len(permutation))):
            return value
        shape = t.shape_of(value)
        result_type = TensorType(t.element_type_of(value), [shape[d] for d in permutation])
        return self.emit(prim.PermuteOp(value, permutation, result_type))

    def transpose_last(self, value: SSAValue) -> SSAValue:
        """Swaps the last two dims."""
        rank = len(t.shape_of(value))
        return self.permute(value, [*range(rank - 2), rank - 1, rank - 2])

    # elementwise maps

    def map(
        self,
        operands: Sequence[SSAValue],
        shape: Sequence[int],
        result_element: Attribute,
        compute: ScalarCompute,
        widen: bool = True,
    ) -> SSAValue:
        """One `prim.map` over `shape` computing `compute(body, *scalars)` per element.

        Operands are broadcast to `shape` where their shape differs; splat constants become
        `arith.constant`s in the body; an operand used twice is one map input. With `widen`,
        16-bit float scalars are extended to f32 first; the computed scalar is converted to
        `result_element` at the end (so a 16-bit result is rounded once)."""
        inputs: list[SSAValue] = []
        for value in operands:
            if splat_value(value) is None and value not in inputs:
                inputs.append(value)
        broadcast = [self.broadcast(value, shape) for value in inputs]
        block = Block(arg_types=[t.element_type_of(v) for v in inputs])
        body = Body(self.location)
        scalars = []
        for value in operands:
            element_type = t.element_type_of(value)
            target = compute_type(element_type) if widen else element_type
            splat = splat_value(value)
            if splat is not None:
                scalars.append(body.constant(splat, target))
            else:
                scalars.append(body.convert(block.args[inputs.index(value)], target))
        result = body.convert(compute(body, *scalars), result_element)
        body.emit(prim.YieldOp(result))
        block.add_ops(body.live_ops())
        return self.emit(prim.MapOp(broadcast, TensorType(result_element, shape), Region(block)))

    def widen(self, value: SSAValue) -> SSAValue:
        """A 16-bit float tensor as f32 (a map of `arith.extf`); others as they are."""
        element_type = t.element_type_of(value)
        if not is_16_bit_float(element_type):
            return value
        return self.map([value], t.shape_of(value), f32, lambda b, x: x)

    def convert(self, value: SSAValue, element_type: Attribute) -> SSAValue:
        """`value` as `element_type` (a map converting each element), if it is not."""
        if t.element_type_of(value) == element_type:
            return value
        return self.map([value], t.shape_of(value), element_type, lambda b, x: x, widen=False)

    # reductions and contractions

    def reduce(self, kind: str, value: SSAValue, axes: Sequence[int], keepdim: bool) -> SSAValue:
        element_type = t.element_type_of(value)
        shape = prim.reduced_shape(t.shape_of(value), axes, keepdim)
        return self.emit(
            prim.ReduceOp(
                kind,
                value,
                axes,
                identity(kind, element_type),
                keepdim,
                TensorType(element_type, shape),
            )
        )

    def contract(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        lhs_shape, rhs_shape = t.shape_of(lhs), t.shape_of(rhs)
        result_type = TensorType(t.element_type_of(lhs), (*lhs_shape[:-1], rhs_shape[-1]))
        return self.emit(prim.ContractOp(lhs, rhs, result_type))

    def iota(self, dim: int, shape: Sequence[int], element_type: Attribute) -> SSAValue:
        return self.emit(prim.IotaOp(dim, TensorType(element_type, shape)))


# --- the pass -----------------------------------------------------------------------------


class TorchOpDecomposition(RewritePattern):
    """Base of the patterns: rewrites an op of one of `op_types` by `decompose`, which
    emits prim ops through a `PrimBuilder` and returns the value that replaces the op's
    result."""

    op_types: tuple[type[Operation], ...] = ()

    def decompose(self, op: Operation, build: PrimBuilder) -> SSAValue:
        raise NotImplementedError

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, self.op_types):
            return
        try:
            result = self.decompose(op, PrimBuilder(rewriter, op))
        except Unsupported as error:
            raise PassFailedException(f"cannot decompose '{op.name}': {error}", op) from None
        rewriter.replace(op, [], [result])


def erase_unused_prim_ops(module: ModuleOp) -> None:
    """Removes prim ops whose results nothing uses (e.g. a constant folded into the maps
    that used it), consumers before producers."""
    for function in module.walk():
        if not isinstance(function, func.FuncOp):
            continue
        for block in function.body.blocks:
            for op in reversed(list(block.ops)):
                if (
                    op.dialect_name() == "prim"
                    and op.results
                    and not any(r.uses for r in op.results)
                ):
                    block.erase_op(op)


@dataclass(frozen=True)
class DecomposeTorchPass(ModulePass):
    """Rewrites every torch op into prim ops (see the module docstring)."""

    name = "decompose-torch"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from emmy.passes.torch_decompositions import DECOMPOSITIONS

        PatternRewriteWalker(
            GreedyRewritePatternApplier([pattern() for pattern in DECOMPOSITIONS]),
            apply_recursively=False,
        ).rewrite_module(op)
        for remaining in op.walk():
            if remaining.dialect_name() == "torch":
                raise PassFailedException(
                    f"decompose-torch has no decomposition for '{remaining.name}'", remaining
                )
        erase_unused_prim_ops(op)
