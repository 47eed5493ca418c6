"""The rewrite patterns of `decompose-torch`, one per family of torch ops.

Elementwise ops are data: `ELEMENTWISE` maps each torch op class to the scalar computation
of its map body. The other patterns build on the helpers of `emmy.passes.decompose_torch`
(`PrimBuilder.map` / `widen` / `convert` / `reduce` / `contract`), which locate every op
they create at the torch op and handle 16-bit floats the way torch does.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import isqrt, prod

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    TensorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from emmy.dialects import prim
from emmy.dialects import torch as t
from emmy.dialects.combiner import combine, identity
from emmy.passes.decompose_torch import (
    Body,
    PrimBuilder,
    TorchOpDecomposition,
    Unsupported,
    compute_type,
    is_16_bit_float,
    is_float,
    splat_value,
)

# --- elementwise --------------------------------------------------------------------------


@dataclass(frozen=True)
class Scalar:
    """The map body of an elementwise torch op: `compute(body, op, *operand_scalars)`.

    An `exact` computation gives the same result in any float type (no rounding happens:
    neg, max, comparisons, select, conversions), so it runs in the element type. Otherwise
    16-bit floats are widened to f32 and the result is rounded back once."""

    compute: Callable[..., SSAValue]
    exact: bool = False


def exact(compute: Callable[..., SSAValue]) -> Scalar:
    return Scalar(compute, exact=True)


def unary_math(op_class: type[Operation]) -> Scalar:
    return Scalar(lambda b, op, x: b.emit(op_class(x)))


def constant_operand(value: SSAValue) -> float | int | None:
    """The value of a scalar that is an `arith.constant` in the body (a splat operand)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr | IntegerAttr):
        return owner.value.value.data
    return None


def sigmoid(b: Body, x: SSAValue) -> SSAValue:
    """`1 / (1 + exp(-x))`."""
    one = b.like(1.0, x)
    return b.div(one, b.add(one, b.emit(math.ExpOp(b.neg(x)))))


def silu(b: Body, x: SSAValue) -> SSAValue:
    """`x / (1 + exp(-x))`, as torch's kernel computes `x * sigmoid(x)`."""
    return b.div(x, b.add(b.like(1.0, x), b.emit(math.ExpOp(b.neg(x)))))


GELU_TANH_BETA = pymath.sqrt(2) * (2 / pymath.sqrt(pymath.pi)) * 0.5
GELU_TANH_KAPPA = 0.044715


def gelu(b: Body, op: t.GeluOp, x: SSAValue) -> SSAValue:
    """torch's kernels: `x * 0.5 * (1 + erf(x / sqrt(2)))`, or with `approximate="tanh"`
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`."""
    half_x = b.mul(x, b.like(0.5, x))
    if op.approximate.data == "tanh":
        cube = b.mul(b.mul(x, x), x)
        inner = b.mul(b.like(GELU_TANH_BETA, x), b.add(x, b.mul(b.like(GELU_TANH_KAPPA, x), cube)))
        return b.mul(half_x, b.add(b.like(1.0, x), b.emit(math.TanhOp(inner))))
    erf = b.emit(math.ErfOp(b.mul(x, b.like(pymath.sqrt(0.5), x))))
    return b.mul(half_x, b.add(b.like(1.0, x), erf))


def series(b: Body, w: SSAValue, coefficients: Sequence[float]) -> SSAValue:
    """`c0 + c1 w + c2 w^2 + ..` by Horner's rule."""
    total = b.like(coefficients[-1], w)
    for coefficient in reversed(coefficients[:-1]):
        total = b.add(b.like(coefficient, w), b.mul(w, total))
    return total


ERFC_COEFFICIENTS = (
    -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
    0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277,
)  # fmt: skip
"""The Chebyshev fit of `erfc` of Numerical Recipes (`erfcc`, §6.2): `t exp(-z^2 + P(t))`
with `t = 1 / (1 + z / 2)`, of relative error below 1.2e-7 for every `z >= 0`."""


def erfc(b: Body, x: SSAValue) -> SSAValue:
    """`erfc(|x|)` by `ERFC_COEFFICIENTS`, and `2 - erfc(|x|)` below 0: `1 - erf(x)` would
    lose every digit where erfc is small (2e-8 at 4, which 1 - erf rounds to 0 in f32).
    `z^2` is taken as its rounding plus the rest (an fma), and its exp apart from the fit's,
    since an error of half an ulp of an argument near -81 is 4e-6 of its exp. In f32 it is
    within 5e-7 of erfc, relative, wherever erfc is a normal float (x < 9.2)."""
    z = b.abs(x)
    t_ = b.div(b.like(1.0, x), b.add(b.like(1.0, x), b.mul(z, b.like(0.5, x))))
    polynomial = series(b, t_, ERFC_COEFFICIENTS)
    square = b.mul(z, z)
    rest = b.emit(math.FmaOp(z, z, b.neg(square)))
    tail = b.mul(b.mul(t_, b.emit(math.ExpOp(b.neg(square)))), b.emit(math.ExpOp(polynomial)))
    tail = b.sub(tail, b.mul(tail, rest))  # exp(-rest) to first order: |rest| < 5e-6
    infinity = b.like(pymath.inf, x)
    tail = b.select(b.compare("eq", z, infinity), b.like(0.0, x), tail)  # rest is NaN there
    return b.select(b.compare("ge", x, b.like(0.0, x)), tail, b.sub(b.like(2.0, x), tail))


def euclid_steps(bits: int) -> int:
    """The most steps Euclid's algorithm takes on two integers of `bits` bits: consecutive
    Fibonacci numbers are the slowest pair, one step for each below the larger (Lamé)."""
    steps, smaller, larger = 0, 1, 2
    while larger < 2 ** (bits - 1):
        steps, smaller, larger = steps + 1, larger, smaller + larger
    return steps + 2


def gcd(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    """torch's `gcd`: Euclid's algorithm on `|x|` and `|y|`, `(a, c) -> (c % a, a)` until `a`
    is 0, then `c`; unrolled to `euclid_steps` of the type (46 of i32, 92 of i64), a step
    after `a` reached 0 keeping the pair."""
    a, c = b.abs(x), b.abs(y)
    zero, one = b.like(0, x), b.like(1, x)
    for _ in range(euclid_steps(x.type.width.data)):
        done = b.compare("eq", a, zero)
        rest = b.emit(arith.RemSIOp(c, b.select(done, one, a)))
        a, c = b.select(done, a, rest), b.select(done, c, a)
    return c


def lcm(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    """torch's `lcm`: `|x / gcd * y|`, 0 where the gcd is (either operand 0)."""
    divisor = gcd(b, x, y)
    zero = b.like(0, x)
    done = b.compare("eq", divisor, zero)
    quotient = b.trunc_divide(x, b.select(done, b.like(1, x), divisor))
    return b.select(done, zero, b.abs(b.mul(quotient, y)))


GAMMA_SHIFT = 8
"""`lgamma` and `digamma` step arguments below this up to it (`lgamma(x) = lgamma(x + n) -
log(x (x + 1) .. (x + n - 1))`), where their asymptotic series' next terms are below 3e-10."""


def gamma_reflected(b: Body, x: SSAValue) -> tuple[SSAValue, SSAValue, SSAValue]:
    """`y`, `x` where it is at least 1/2 and `1 - x` below (the reflection formulas' other
    side), whether `x` is below, and `pi r` for `r = x - round(x)`, whose sine and tangent are
    those of `pi x`, reduced exactly."""
    below = b.compare("lt", x, b.like(0.5, x))
    y = b.select(below, b.sub(b.like(1.0, x), x), x)
    nearest = b.emit(math.RoundEvenOp(x))
    return y, below, b.mul(b.like(pymath.pi, x), b.sub(x, nearest))


def gamma_shifted(b: Body, y: SSAValue) -> tuple[SSAValue, SSAValue, list[SSAValue]]:
    """Whether `y` is below `GAMMA_SHIFT`, `z` (`y + GAMMA_SHIFT` there, else `y`) and the
    terms `y + k` of the steps up."""
    low = b.compare("lt", y, b.like(float(GAMMA_SHIFT), y))
    terms = [b.add(y, b.like(float(k), y)) for k in range(GAMMA_SHIFT)]
    z = b.select(low, b.add(y, b.like(float(GAMMA_SHIFT), y)), y)
    return low, z, terms


ERFINV_CENTRAL = (
    1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087,
    -4.39150654e-06, -3.5233877e-06, 3.43273939e-07, 2.81022636e-08,
)  # fmt: skip
ERFINV_TAIL = (
    2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773,
    -0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257,
)  # fmt: skip
"""Giles' single-precision fits of `erfinv(x) / x` ("Approximating the erfinv function", GPU
Computing Gems, 2011) in `w = -log((1 - x)(1 + x))`: in `w - 2.5` for w < 5, in `sqrt(w) - 3`
beyond, which f32's x reaches up to w = 16.6 (1 - x = 2^-24)."""


def erfinv(b: Body, x: SSAValue) -> SSAValue:
    """`erf^-1(x)` by Giles' fits (ERFINV_CENTRAL, ERFINV_TAIL), +-inf at +-1 and NaN outside
    [-1, 1] as torch's. The fits evaluated in f32 by numpy on 200,000 uniform points of
    (-1, 1) and 2,000 within 1e-7 to 1e-1 of +-1 came within 2.6e-7 of torch's f64 erfinv,
    relatively (a scratch check, not a test; the corpus compares this lowering with eager)."""
    one = b.like(1.0, x)
    w = b.neg(b.emit(math.LogOp(b.mul(b.sub(one, x), b.add(one, x)))))
    central = series(b, b.sub(w, b.like(2.5, x)), ERFINV_CENTRAL)
    tail = series(b, b.sub(b.emit(math.SqrtOp(w)), b.like(3.0, x)), ERFINV_TAIL)
    fitted = b.mul(b.select(b.compare("lt", w, b.like(5.0, x)), central, tail), x)
    edge = b.compare("eq", b.abs(x), one)
    infinite = b.emit(math.CopySignOp(b.like(pymath.inf, x), x))
    outside = b.compare("gt", b.abs(x), one)
    return b.select(outside, b.like(pymath.nan, x), b.select(edge, infinite, fitted))


def lgamma(b: Body, x: SSAValue) -> SSAValue:
    """`log |Gamma(x)|` by Stirling's series at `z >= GAMMA_SHIFT` (`(z - 1/2) log z - z +
    log(2 pi) / 2 + 1/(12 z) - 1/(360 z^3) + 1/(1260 z^5)`), stepped down to `y`, and below
    1/2 by the reflection `log(pi / |sin(pi x)|) - lgamma(1 - x)`. Measured in f32 on [-20,
    40]: within 5e-6 of lgamma absolutely, where it nears a zero (the steps' log cancels
    Stirling's, the reflection's terms each other), and 5e-5 relative elsewhere."""
    y, below, reduced = gamma_reflected(b, x)
    low, z, terms = gamma_shifted(b, y)
    log = lambda v: b.emit(math.LogOp(v))  # noqa: E731
    inverse = b.div(b.like(1.0, z), z)
    tail = b.mul(inverse, series(b, b.mul(inverse, inverse), (1 / 12, -1 / 360, 1 / 1260)))
    stirling = b.add(b.sub(b.mul(b.sub(z, b.like(0.5, z)), log(z)), z), tail)
    stirling = b.add(stirling, b.like(0.5 * pymath.log(2 * pymath.pi), z))
    product = terms[0]
    for term in terms[1:]:
        product = b.mul(product, term)
    of_y = b.select(low, b.sub(stirling, log(product)), stirling)
    sine = b.abs(b.emit(math.SinOp(reduced)))
    reflected = b.sub(log(b.div(b.like(pymath.pi, x), sine)), of_y)  # +inf at the poles
    infinite = b.compare("eq", b.abs(x), b.like(pymath.inf, x))
    return b.select(infinite, b.like(pymath.inf, x), b.select(below, reflected, of_y))


def digamma(b: Body, x: SSAValue) -> SSAValue:
    """`Gamma'(x) / Gamma(x)` by its asymptotic series at `z >= GAMMA_SHIFT` (`log z - 1/(2 z)
    - 1/(12 z^2) + 1/(120 z^4) - 1/(252 z^6)`), stepped down to `y` by `- 1/(y + k)`, and
    below 1/2 by the reflection `digamma(1 - x) - pi / tan(pi x)`; -inf at 0 (inf at -0) and
    NaN at the negative integers, as torch's."""
    y, below, reduced = gamma_reflected(b, x)
    low, z, terms = gamma_shifted(b, y)
    inverse = b.div(b.like(1.0, z), z)
    square = b.mul(inverse, inverse)
    tail = b.mul(square, series(b, square, (-1 / 12, 1 / 120, -1 / 252)))
    asymptotic = b.add(b.sub(b.emit(math.LogOp(z)), b.mul(b.like(0.5, z), inverse)), tail)
    steps = b.div(b.like(1.0, y), terms[0])
    for term in terms[1:]:
        steps = b.add(steps, b.div(b.like(1.0, y), term))
    of_y = b.select(low, b.sub(asymptotic, steps), asymptotic)
    reflected = b.sub(of_y, b.div(b.like(pymath.pi, x), b.emit(math.TanOp(reduced))))
    pole = b.compare("eq", b.emit(math.RoundEvenOp(x)), x)
    zero = b.emit(math.CopySignOp(b.like(pymath.inf, x), b.neg(x)))  # -inf at 0, inf at -0
    at_pole = b.select(b.compare("eq", x, b.like(0.0, x)), zero, b.like(pymath.nan, x))
    return b.select(below, b.select(pole, at_pole, reflected), of_y)


def clamp(b: Body, op: t.ClampOp, x: SSAValue) -> SSAValue:
    """`min(max(x, min), max)` with the bounds converted to the element type, as torch's
    kernel does; NaN stays NaN."""
    if op.min is not None:
        x = b.max(x, b.like(op.min.value.data, x))
    if op.max is not None:
        x = b.min(x, b.like(op.max.value.data, x))
    return x


def integer_power(b: Body, x: SSAValue, exponent: int) -> SSAValue:
    """`x ** exponent` by repeated squaring, wrapping like torch's integer pow."""
    result, square = None, x
    while exponent:
        if exponent & 1:
            result = square if result is None else b.mul(result, square)
        exponent >>= 1
        if exponent:
            square = b.mul(square, square)
    return b.like(1, x) if result is None else result


def power(b: Body, op: t.PowOp, x: SSAValue, y: SSAValue) -> SSAValue:
    """torch's pow: a constant exponent of 2, 3, 0.5, -0.5, -1 or -2 is computed as the
    multiplications, sqrt, rsqrt or division torch's kernel uses; any other float exponent
    is `math.powf`; an integer base needs a non-negative constant exponent."""
    exponent = constant_operand(y)
    if is_float(x.type):
        special = {
            2.0: lambda: b.mul(x, x),
            3.0: lambda: b.mul(b.mul(x, x), x),
            0.5: lambda: b.emit(math.SqrtOp(x)),
            -0.5: lambda: b.emit(math.RsqrtOp(x)),
            -1.0: lambda: b.div(b.like(1.0, x), x),
            -2.0: lambda: b.div(b.like(1.0, x), b.mul(x, x)),
        }
        if exponent in special:
            return special[exponent]()
        return b.emit(math.PowFOp(x, y))
    if x.type == i1:
        raise Unsupported("pow of i1 (bool) values is not supported")
    if exponent is None or exponent < 0:
        raise Unsupported(
            "an integer pow needs a constant, non-negative exponent (a splat constant)"
        )
    return integer_power(b, x, int(exponent))


def hypot(b: Body, op: t.HypotOp, x: SSAValue, y: SSAValue) -> SSAValue:
    """`sqrt(x^2 + y^2)` as `big * sqrt(1 + (small / big)^2)` of the magnitudes, as MLIR
    lowers complex.abs: the squares themselves would overflow or underflow where the result
    does not (this is within 2 ulp in f32). As IEEE's hypot (torch's), infinite where either
    is infinite, even beside a NaN, and zero where both are zero (there `small / big` is NaN);
    any other NaN reaches the result through `big`."""
    magnitudes = b.abs(x), b.abs(y)
    big, small = b.max(*magnitudes), b.min(*magnitudes)
    ratio = b.div(small, big)
    scaled = b.mul(big, b.emit(math.SqrtOp(b.add(b.like(1.0, x), b.mul(ratio, ratio)))))
    infinity = b.like(pymath.inf, x)
    infinite = b.emit(arith.OrIOp(*(b.compare("eq", m, infinity) for m in magnitudes)))
    finite = b.select(b.compare("eq", big, b.like(0.0, x)), big, scaled)
    return b.select(infinite, infinity, finite)


def comparison(relation: str) -> Scalar:
    return exact(lambda b, op, x, y: b.compare(relation, x, y))


ELEMENTWISE: dict[type[Operation], Scalar] = {
    t.NegOp: exact(lambda b, op, x: b.neg(x)),
    t.AbsOp: exact(lambda b, op, x: b.abs(x)),
    t.ReluOp: exact(lambda b, op, x: b.max(x, b.like(0, x))),
    t.ExpOp: unary_math(math.ExpOp),
    t.LogOp: unary_math(math.LogOp),
    t.SqrtOp: unary_math(math.SqrtOp),
    t.RsqrtOp: unary_math(math.RsqrtOp),
    t.FloorOp: unary_math(math.FloorOp),
    t.CeilOp: unary_math(math.CeilOp),
    t.RoundOp: unary_math(math.RoundEvenOp),
    t.TruncOp: unary_math(math.TruncOp),
    t.SinOp: unary_math(math.SinOp),
    t.CosOp: unary_math(math.CosOp),
    t.TanOp: unary_math(math.TanOp),
    t.AtanOp: unary_math(math.AtanOp),
    t.AsinOp: unary_math(math.AsinOp),
    t.AcosOp: unary_math(math.AcosOp),
    t.SinhOp: unary_math(math.SinhOp),
    t.CoshOp: unary_math(math.CoshOp),
    t.AsinhOp: unary_math(math.AsinhOp),
    t.AcoshOp: unary_math(math.AcoshOp),
    t.AtanhOp: unary_math(math.AtanhOp),
    t.ErfOp: unary_math(math.ErfOp),
    t.ErfcOp: Scalar(lambda b, op, x: erfc(b, x)),
    t.ErfinvOp: Scalar(lambda b, op, x: erfinv(b, x)),
    t.LgammaOp: Scalar(lambda b, op, x: lgamma(b, x)),
    t.DigammaOp: Scalar(lambda b, op, x: digamma(b, x)),
    t.Log1pOp: unary_math(math.Log1pOp),
    t.Expm1Op: unary_math(math.ExpM1Op),
    t.Log2Op: unary_math(math.Log2Op),
    t.TanhOp: unary_math(math.TanhOp),
    t.SigmoidOp: Scalar(lambda b, op, x: sigmoid(b, x)),
    t.SiluOp: Scalar(lambda b, op, x: silu(b, x)),
    t.GeluOp: Scalar(gelu),
    t.ClampOp: exact(clamp),
    t.ToOp: exact(lambda b, op, x: b.convert(x, t.element_type_of(op.result))),
    t.AddOp: Scalar(lambda b, op, x, y: b.add(x, y)),
    t.SubOp: Scalar(lambda b, op, x, y: b.sub(x, y)),
    t.MulOp: Scalar(lambda b, op, x, y: b.mul(x, y)),
    t.DivOp: Scalar(lambda b, op, x, y: b.div(x, y)),
    t.PowOp: Scalar(power),
    t.RemainderOp: Scalar(lambda b, op, x, y: b.remainder(x, y)),
    t.FmodOp: Scalar(lambda b, op, x, y: b.fmod(x, y)),
    t.FloorDivideOp: Scalar(lambda b, op, x, y: b.floor_divide(x, y)),
    t.TruncDivideOp: Scalar(lambda b, op, x, y: b.trunc_divide(x, y)),
    t.Atan2Op: Scalar(lambda b, op, x, y: b.emit(math.Atan2Op(x, y))),
    t.HypotOp: Scalar(hypot),
    t.CopySignOp: Scalar(lambda b, op, x, y: b.emit(math.CopySignOp(x, y))),
    t.MaximumOp: exact(lambda b, op, x, y: b.max(x, y)),
    t.MinimumOp: exact(lambda b, op, x, y: b.min(x, y)),
    t.ShiftLeftOp: exact(lambda b, op, x, y: b.shift(x, y, left=True)),
    t.ShiftRightOp: exact(lambda b, op, x, y: b.shift(x, y, left=False)),
    t.GcdOp: exact(lambda b, op, x, y: gcd(b, x, y)),
    t.LcmOp: exact(lambda b, op, x, y: lcm(b, x, y)),
    t.BitwiseAndOp: exact(lambda b, op, x, y: b.emit(arith.AndIOp(x, y))),
    t.BitwiseOrOp: exact(lambda b, op, x, y: b.emit(arith.OrIOp(x, y))),
    t.BitwiseXorOp: exact(lambda b, op, x, y: b.emit(arith.XOrIOp(x, y))),
    # All ones: -1 of an integer, true of an i1.
    t.BitwiseNotOp: exact(lambda b, op, x: b.emit(arith.XOrIOp(x, b.like(-1, x)))),
    t.GtOp: comparison("gt"),
    t.LtOp: comparison("lt"),
    t.GeOp: comparison("ge"),
    t.LeOp: comparison("le"),
    t.EqOp: comparison("eq"),
    t.NeOp: comparison("ne"),
    t.WhereOp: exact(lambda b, op, condition, x, y: b.select(condition, x, y)),
}
"""The scalar computation of each elementwise torch op."""


class ElementwiseToMap(TorchOpDecomposition):
    """An elementwise op: its operands broadcast to the result's shape, one `prim.map`."""

    op_types = tuple(ELEMENTWISE)

    def decompose(self, op: Operation, build: PrimBuilder) -> SSAValue:
        scalar = ELEMENTWISE[type(op)]
        result = op.results[0]
        if isinstance(op, t.ToOp) and op.input.type == result.type:
            return op.input
        return build.map(
            op.operands,
            t.shape_of(result),
            t.element_type_of(result),
            lambda b, *xs: scalar.compute(b, op, *xs),
            widen=not scalar.exact,
        )


# --- reductions ---------------------------------------------------------------------------


def reduced_count(
    build: PrimBuilder, shape: Sequence[int], counted: Attribute, axes: Sequence[int], keepdim: bool
) -> int | SSAValue:
    """How many elements of `shape` each reduction over `axes` combines: a constant, or over
    the dynamic dim (known at run time only) a sum of ones, of type `counted`."""
    if all(shape[d] != DYNAMIC_INDEX for d in axes):
        return prod(shape[d] for d in axes)
    ones = build.map([], shape, counted, lambda b: b.constant(1.0, counted))
    return build.reduce("add", ones, axes, keepdim)


def divided_by_count(
    build: PrimBuilder, total: SSAValue, count: int | SSAValue, element: Attribute, less: int = 0
) -> SSAValue:
    """`total / max(0, count - less)` elementwise, as `element`."""
    counted = [] if isinstance(count, int) else [count]

    def compute(b: Body, s: SSAValue, *n: SSAValue) -> SSAValue:
        if not n:
            return b.div(s, b.like(max(0, count - less), s))
        return b.div(s, b.max(b.sub(n[0], b.like(less, n[0])), b.like(0, n[0])))

    return build.map([total, *counted], t.shape_of(total), element, compute)


class ReductionToReduce(TorchOpDecomposition):
    """sum / prod / mean / amax / amin: a `prim.reduce`. Sums and products of 16-bit floats
    combine in f32 (a map widens the input) and round once; mean divides the sum by the count
    in a map (over the dynamic dim, by a sum of ones: the count is known at run time only)."""

    op_types = (t.SumOp, t.ProdOp, t.MeanOp, t.AmaxOp, t.AminOp)

    def decompose(self, op: t.ReductionOp, build: PrimBuilder) -> SSAValue:
        x, axes = op.input, op.dim_list
        keepdim = op.keepdim is not None
        element_type = t.element_type_of(x)
        if isinstance(op, t.AmaxOp | t.AminOp):
            kind = "max" if isinstance(op, t.AmaxOp) else "min"
            if element_type == i1:
                # max/min of bools is or/and: reduce 0/1 as i32 rather than rely on how a
                # combiner orders i1
                widened = build.reduce(kind, build.convert(x, i32), axes, keepdim)
                return build.convert(widened, i1)
            return build.reduce(kind, x, axes, keepdim)
        if element_type == i1:
            what = "product" if isinstance(op, t.ProdOp) else "sum"
            raise Unsupported(f"a {what} of i1 (bool) values is not supported; convert them first")
        kind = "mul" if isinstance(op, t.ProdOp) else "add"
        total = build.reduce(kind, build.widen(x), axes, keepdim)
        if isinstance(op, t.SumOp | t.ProdOp):
            return build.convert(total, element_type)
        count = reduced_count(build, t.shape_of(x), t.element_type_of(total), axes, keepdim)
        return divided_by_count(build, total, count, element_type)


def first_extreme(element_type: Attribute, largest: bool) -> Region:
    """The combiner of (value, position) pairs that keeps the largest (or smallest) value
    and, among equal ones, the first position; a NaN beats any number, as torch's argmax
    and argmin pick it."""
    block = Block(arg_types=[element_type, i64, element_type, i64])
    value, position, other, other_position = block.args
    for arg, name in zip(block.args, ("value", "position", "other", "other_position")):
        arg.name_hint = name

    def emit(op: Operation) -> SSAValue:
        block.add_op(op)
        return op.results[0]

    earlier = emit(arith.CmpiOp(other_position, position, "slt"))
    if isinstance(element_type, AnyFloat):
        better = emit(arith.CmpfOp(other, value, "ogt" if largest else "olt"))
        same = emit(arith.CmpfOp(other, value, "oeq"))
        other_nan = emit(arith.CmpfOp(other, other, "uno"))
        value_nan = emit(arith.CmpfOp(value, value, "uno"))
        value_number = emit(arith.CmpfOp(value, value, "ord"))
        better = emit(arith.OrIOp(better, emit(arith.AndIOp(other_nan, value_number))))
        same = emit(arith.OrIOp(same, emit(arith.AndIOp(other_nan, value_nan))))
    else:
        better = emit(arith.CmpiOp(other, value, "sgt" if largest else "slt"))
        same = emit(arith.CmpiOp(other, value, "eq"))
    take = emit(arith.OrIOp(better, emit(arith.AndIOp(same, earlier))))
    kept = emit(arith.SelectOp(take, other, value))
    kept_position = emit(arith.SelectOp(take, other_position, position))
    block.add_op(prim.YieldOp(kept, kept_position))
    return Region(block)


class ArgReductionToMultiReduce(TorchOpDecomposition):
    """argmax / argmin: one pass, a `prim.multi_reduce` of each value with its position
    (`prim.iota`) that keeps the first extreme (`first_extreme`); 16-bit floats compare as
    f32 (exactly)."""

    op_types = (t.ArgmaxOp, t.ArgminOp)

    def decompose(self, op: t.ArgReductionOp, build: PrimBuilder) -> SSAValue:
        x = build.widen(op.input)
        shape, element_type = t.shape_of(x), t.element_type_of(x)
        axes = op.dim_list
        largest = isinstance(op, t.ArgmaxOp)
        positions = build.iota(axes[0], shape, i64)
        keepdim = op.keepdim is not None
        reduced = prim.reduced_shape(shape, axes, keepdim)
        inits = (identity("max" if largest else "min", element_type), identity("min", i64))
        extremes = prim.MultiReduceOp(
            [x, positions],
            axes,
            inits,
            keepdim,
            [TensorType(element_type, reduced), TensorType(i64, reduced)],
            first_extreme(element_type, largest),
        )
        build.emit(extremes)
        return extremes.outputs[1]


def centered_squares(
    build: PrimBuilder, x: SSAValue, total: SSAValue, count: int | SSAValue
) -> SSAValue:
    """`(x - total / count)^2` elementwise, `total` (and a `count` of the dynamic dim)
    broadcast back to `x`'s shape."""
    counted = [] if isinstance(count, int) else [count]

    def compute(b: Body, v: SSAValue, s: SSAValue, *n: SSAValue) -> SSAValue:
        d = b.sub(v, b.div(s, n[0] if n else b.like(count, s)))
        return b.mul(d, d)

    return build.map([x, total, *counted], t.shape_of(x), t.element_type_of(x), compute)


class VarToReduce(TorchOpDecomposition):
    """var: the mean (a sum, keepdim), the sum of centered squares, divided by
    `max(0, N - correction)`; in f32 for 16-bit inputs, rounded once."""

    op_types = (t.VarOp,)

    def decompose(self, op: t.VarOp, build: PrimBuilder) -> SSAValue:
        x = build.widen(op.input)
        axes, keepdim = op.dim_list, op.keepdim is not None
        total = build.reduce("add", x, axes, keepdim=True)
        shape, element = t.shape_of(x), t.element_type_of(x)
        kept_count = reduced_count(build, shape, element, axes, True)
        squares = build.reduce("add", centered_squares(build, x, total, kept_count), axes, keepdim)
        count = kept_count if keepdim else reduced_count(build, shape, element, axes, False)
        result_element = t.element_type_of(op.result)
        return divided_by_count(build, squares, count, result_element, op.correction.value.data)


# --- normalizations -----------------------------------------------------------------------


def normalized_axes(op: t.NormOp) -> tuple[list[int], int]:
    """The trailing axes a norm normalizes over, and how many elements they hold."""
    rank = len(t.shape_of(op.input))
    normalized = op.normalized_shape.get_values()
    return list(range(rank - len(normalized), rank)), prod(normalized)


class RmsNormToPrims(TorchOpDecomposition):
    """rms_norm as torch computes it: `x * rsqrt(mean(x^2) + eps) [* weight]` with x (and
    the weight) in f32 for 16-bit inputs, rounded once."""

    op_types = (t.RmsNormOp,)

    def decompose(self, op: t.RmsNormOp, build: PrimBuilder) -> SSAValue:
        x, shape = op.input, t.shape_of(op.input)
        axes, count = normalized_axes(op)
        opmath = compute_type(t.element_type_of(x))
        eps = op.eps.value.data
        squares = build.map([x], shape, opmath, lambda b, v: b.mul(v, v))
        total = build.reduce("add", squares, axes, keepdim=True)

        def inverse_rms(b: Body, s: SSAValue) -> SSAValue:
            mean = b.div(s, b.like(count, s))
            return b.emit(math.RsqrtOp(b.add(mean, b.like(eps, s))))

        scale = build.map([total], t.shape_of(total), opmath, inverse_rms)

        def normalize(b: Body, v: SSAValue, r: SSAValue, *weight: SSAValue) -> SSAValue:
            y = b.mul(v, r)
            return b.mul(y, weight[0]) if weight else y

        weight = [op.weight] if op.weight is not None else []
        return build.map([x, scale, *weight], shape, t.element_type_of(op.result), normalize)


class LayerNormToPrims(TorchOpDecomposition):
    """layer_norm, two-pass: the mean, the biased variance from centered squares, then
    `(x - mean) * rsqrt(var + eps) [* weight] [+ bias]`; f32 for 16-bit inputs, rounded
    once."""

    op_types = (t.LayerNormOp,)

    def decompose(self, op: t.LayerNormOp, build: PrimBuilder) -> SSAValue:
        x = build.widen(op.input)
        shape = t.shape_of(x)
        axes, count = normalized_axes(op)
        eps = op.eps.value.data
        total = build.reduce("add", x, axes, keepdim=True)
        squares = build.reduce("add", centered_squares(build, x, total, count), axes, keepdim=True)
        has_weight, has_bias = op.weight is not None, op.bias is not None

        def normalize(b: Body, v: SSAValue, s: SSAValue, q: SSAValue, *affine: SSAValue):
            centered = b.sub(v, b.div(s, b.like(count, s)))
            variance = b.div(q, b.like(count, q))
            y = b.mul(centered, b.emit(math.RsqrtOp(b.add(variance, b.like(eps, q)))))
            if has_weight:
                y = b.mul(y, affine[0])
            if has_bias:
                y = b.add(y, affine[-1])
            return y

        affine = [v for v in (op.weight, op.bias) if v is not None]
        return build.map(
            [x, total, squares, *affine], shape, t.element_type_of(op.result), normalize
        )


def softmax_statistics(
    build: PrimBuilder, x: SSAValue, dim: int
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """The row max (keepdim, in x's type: max is exact), `exp(x - max)` in the compute
    type, and its row sum (keepdim)."""
    shape = t.shape_of(x)
    opmath = compute_type(t.element_type_of(x))
    row_max = build.reduce("max", x, [dim], keepdim=True)
    exps = build.map([x, row_max], shape, opmath, lambda b, v, m: b.emit(math.ExpOp(b.sub(v, m))))
    return row_max, exps, build.reduce("add", exps, [dim], keepdim=True)


def softmax(build: PrimBuilder, x: SSAValue, dim: int, result_element) -> SSAValue:
    _, exps, total = softmax_statistics(build, x, dim)
    return build.map([exps, total], t.shape_of(x), result_element, lambda b, e, s: b.div(e, s))


def safe_softmax(build: PrimBuilder, x: SSAValue, dim: int, result_element) -> SSAValue:
    """softmax, except that a row whose every element is -inf gives zeros (not 0 / 0), as
    the math backend of torch's sdpa (`_safe_softmax`) does for a query whose every key is
    masked: `select(max == -inf, 0, exp(x - max) / sum)`."""
    row_max, exps, total = softmax_statistics(build, x, dim)

    def divide(b: Body, e: SSAValue, s: SSAValue, m: SSAValue) -> SSAValue:
        masked_whole = b.compare("eq", m, b.like(-pymath.inf, m))
        return b.select(masked_whole, b.like(0.0, e), b.div(e, s))

    return build.map([exps, total, row_max], t.shape_of(x), result_element, divide)


class SoftmaxToPrims(TorchOpDecomposition):
    """softmax `exp(x - max) / sum`, log_softmax `x - max - log(sum)`, along any dim, with
    the row statistics reduced keepdim and broadcast back; f32 for 16-bit inputs."""

    op_types = (t.SoftmaxOp, t.LogSoftmaxOp)

    def decompose(self, op: t.SoftmaxFamilyOp, build: PrimBuilder) -> SSAValue:
        x, dim = op.input, op.dim.value.data
        element_type = t.element_type_of(op.result)
        if isinstance(op, t.SoftmaxOp):
            return softmax(build, x, dim, element_type)
        row_max, _, total = softmax_statistics(build, x, dim)

        def log_softmax(b: Body, v: SSAValue, m: SSAValue, s: SSAValue) -> SSAValue:
            return b.sub(b.sub(v, m), b.emit(math.LogOp(s)))

        return build.map([x, row_max, total], t.shape_of(x), element_type, log_softmax)


BLOCKED_SCAN_MIN = 32
"""A scan of at least this many elements is blocked (`blocked_scan`)."""


def blocked_scan(build: PrimBuilder, kind: str, x: SSAValue, dim: int) -> SSAValue:
    """`prim.scan` along `dim` in blocks of about sqrt(n): each element of a `prim.scan`
    costs a pass over its dim as loops lower it, so n elements cost n^2, where scanning within
    blocks of c elements, then the b block totals, costs c + b per element. The dim is padded
    with the combiner's identity to b * c, split into [b, c], scanned along c; the totals of
    the blocks before each one (an inclusive scan of the totals shifted by one block, the
    identity first) are combined into it, and the padding sliced off."""
    shape, element_type = t.shape_of(x), t.element_type_of(x)
    n = shape[dim]
    width = isqrt(n - 1) + 1
    count = -(-n // width)
    unit = identity(kind, element_type).value.data

    def filled(sizes: Sequence[int]) -> SSAValue:
        return build.map([], sizes, element_type, lambda b: b.constant(unit, element_type))

    padded = (*shape[:dim], count * width, *shape[dim + 1 :])
    if count * width > n:
        padding = filled((*shape[:dim], count * width - n, *shape[dim + 1 :]))
        x = build.emit(prim.ConcatOp([x, padding], dim, TensorType(element_type, padded)))
    blocked_shape = (*shape[:dim], count, width, *shape[dim + 1 :])
    blocks = build.reshape(x, blocked_shape)
    within = build.emit(prim.ScanOp(kind, blocks, dim + 1, blocks.type))
    totals = build.reduce(kind, blocks, [dim + 1], keepdim=True)
    running = build.emit(prim.ScanOp(kind, totals, dim, totals.type))
    earlier_shape = list(t.shape_of(totals))
    earlier_shape[dim] = count - 1
    earlier = build.emit(prim.SliceOp(running, dim, 0, 1, TensorType(element_type, earlier_shape)))
    first = filled((*shape[:dim], 1, 1, *shape[dim + 1 :]))
    before = build.emit(prim.ConcatOp([first, earlier], dim, totals.type))
    combined = build.map(
        [before, within],
        blocked_shape,
        element_type,
        lambda b, p, v: b.emit(combine(kind, p, v)),
        widen=False,
    )
    scanned = build.reshape(combined, padded)
    if count * width == n:
        return scanned
    return build.emit(prim.SliceOp(scanned, dim, 0, 1, TensorType(element_type, shape)))


class ScanToPrim(TorchOpDecomposition):
    """cumsum / cumprod: a `prim.scan` (`add` / `mul`), blocked where the dim is long
    (`blocked_scan`); in f32 for 16-bit inputs, each element rounded once as torch does."""

    op_types = (t.CumsumOp, t.CumprodOp)

    def decompose(self, op: t.ScanOp, build: PrimBuilder) -> SSAValue:
        x, dim = build.widen(op.input), op.dim.value.data
        kind = "add" if isinstance(op, t.CumsumOp) else "mul"
        if t.shape_of(x)[dim] >= BLOCKED_SCAN_MIN:
            scanned = blocked_scan(build, kind, x, dim)
        else:
            scanned = build.emit(prim.ScanOp(kind, x, dim, x.type))
        return build.convert(scanned, t.element_type_of(op.result))


# --- contractions and attention -----------------------------------------------------------


class LinearToContract(TorchOpDecomposition):
    """linear: the input reshaped to [M, K], the weight permuted to [K, N], one
    `prim.contract` (in f32 for 16-bit operands), a map adding the bias (and rounding),
    reshaped back to [..., N]."""

    op_types = (t.LinearOp,)

    def decompose(self, op: t.LinearOp, build: PrimBuilder) -> SSAValue:
        x_shape = t.shape_of(op.input)
        n, k = t.shape_of(op.weight)
        rows = prod(x_shape[:-1])
        x = build.widen(build.reshape(op.input, [rows, k]))
        weight = build.widen(build.permute(op.weight, [1, 0]))
        product = build.contract(x, weight)
        element_type = t.element_type_of(op.result)
        if op.bias is not None:
            y = build.map([product, op.bias], [rows, n], element_type, lambda b, p, c: b.add(p, c))
        else:
            y = build.convert(product, element_type)
        return build.reshape(y, [*x_shape[:-1], n])


class MatmulToContract(TorchOpDecomposition):
    """matmul / bmm: both operands broadcast to the result's batch dims, one
    `prim.contract` (in f32 for 16-bit operands, rounded once)."""

    op_types = (t.MatmulOp, t.BmmOp)

    def decompose(self, op: t.MatrixProductOp, build: PrimBuilder) -> SSAValue:
        element_type = t.element_type_of(op.result)
        if element_type == i1:
            raise Unsupported("a matrix product of i1 (bool) values is not supported")
        *batch, m, n = t.shape_of(op.result)
        k = t.shape_of(op.lhs)[-1]
        lhs = build.widen(build.broadcast(op.lhs, [*batch, m, k]))
        rhs = build.widen(build.broadcast(op.rhs, [*batch, k, n]))
        return build.convert(build.contract(lhs, rhs), element_type)


class SdpaToPrims(TorchOpDecomposition):
    """Attention: scores `q @ k^T` (a contract with the permuted key), one map scaling
    them and masking (an i1 mask selects -inf where false, a float mask is added, causal
    compares a query and a key `prim.iota`: -inf where key > query), softmax over the
    keys (with a mask, `safe_softmax`: a query whose every key is masked gives zeros, as
    torch does), a contract with the value. In f32 for 16-bit inputs, rounded once at the
    end."""

    op_types = (t.SdpaOp,)

    def decompose(self, op: t.SdpaOp, build: PrimBuilder) -> SSAValue:
        query, key = build.widen(op.query), build.widen(build.transpose_last(op.key))
        scores = build.contract(query, key)
        shape = t.shape_of(scores)
        rank = len(shape)
        operands = [scores]
        mask = op.attn_mask
        if mask is not None:
            operands.append(mask)
        causal = op.is_causal is not None
        if causal:
            operands += [build.iota(rank - 2, shape, i64), build.iota(rank - 1, shape, i64)]
        scale = op.scale.value.data
        boolean_mask = mask is not None and t.element_type_of(mask) == i1

        def masked_scores(b: Body, s: SSAValue, *rest: SSAValue) -> SSAValue:
            s = b.mul(s, b.like(scale, s))
            minus_inf = b.like(-pymath.inf, s)
            if mask is not None:
                m = rest[0]
                s = b.select(m, s, minus_inf) if boolean_mask else b.add(s, m)
            if causal:
                query_position, key_position = rest[-2:]
                keep = b.compare("le", key_position, query_position)
                s = b.select(keep, s, minus_inf)
            return s

        masked = build.map(operands, shape, t.element_type_of(scores), masked_scores)
        rows = safe_softmax if mask is not None else softmax
        probabilities = rows(build, masked, rank - 1, t.element_type_of(scores))
        # 16-bit attention multiplies probabilities rounded to the value's type, as the
        # flash and memory-efficient kernels eager runs do: a 16-bit product is one that
        # tensor cores take, and the rounding errs by far less than 16-bit inputs already do.
        value_type = t.element_type_of(op.value)
        if is_16_bit_float(value_type):
            probabilities = build.widen(build.convert(probabilities, value_type))
        out = build.contract(probabilities, build.widen(op.value))
        return build.convert(out, t.element_type_of(op.result))


class EmbeddingToGather(TorchOpDecomposition):
    """embedding: `prim.gather` of the weight's rows."""

    op_types = (t.EmbeddingOp,)

    def decompose(self, op: t.EmbeddingOp, build: PrimBuilder) -> SSAValue:
        return build.emit(prim.GatherOp(op.weight, op.indices, op.result.type))


class IotaToPrim(TorchOpDecomposition):
    """iota: `prim.iota`."""

    op_types = (t.IotaOp,)

    def decompose(self, op: t.IotaOp, build: PrimBuilder) -> SSAValue:
        return build.emit(prim.IotaOp(op.dim.value.data, op.result.type))


# --- views, data movement, constants ------------------------------------------------------


class ViewToPrim(TorchOpDecomposition):
    """reshape / unsqueeze / squeeze -> `prim.reshape`, permute / transpose ->
    `prim.permute`, expand -> `prim.broadcast`, slice -> `prim.slice`, cat ->
    `prim.concat`. A view that changes nothing is its input."""

    op_types = (
        t.ReshapeOp,
        t.UnsqueezeOp,
        t.SqueezeOp,
        t.PermuteOp,
        t.TransposeOp,
        t.ExpandOp,
        t.SliceOp,
        t.CatOp,
    )

    def decompose(self, op: Operation, build: PrimBuilder) -> SSAValue:
        shape = t.shape_of(op.results[0])
        if isinstance(op, t.ReshapeOp | t.UnsqueezeOp | t.SqueezeOp):
            return build.reshape(op.input, shape)
        if isinstance(op, t.PermuteOp):
            return build.permute(op.input, op.dims.get_values())
        if isinstance(op, t.TransposeOp):
            permutation = list(range(len(shape)))
            dim0, dim1 = op.dim0.value.data, op.dim1.value.data
            permutation[dim0], permutation[dim1] = dim1, dim0
            return build.permute(op.input, permutation)
        if isinstance(op, t.ExpandOp):
            return build.broadcast(op.input, shape)
        if isinstance(op, t.SliceOp):
            if shape == t.shape_of(op.input):
                return op.input  # start 0, and step 1 or a dim of size <= 1
            dim, start, step = (a.value.data for a in (op.dim, op.start, op.step))
            return build.emit(prim.SliceOp(op.input, dim, start, step, op.result.type))
        assert isinstance(op, t.CatOp)
        dim = op.dim.value.data
        # An input of no extent along the dim adds nothing (torch.block_diag's padding).
        inputs = [v for v in op.inputs if t.shape_of(v)[dim] != 0] or list(op.inputs[:1])
        if len(inputs) == 1:
            return inputs[0]
        return build.emit(prim.ConcatOp(inputs, dim, op.result.type))


class ConstantToPrim(TorchOpDecomposition):
    """A splat constant becomes a `prim.map` without inputs yielding an `arith.constant`
    (so it fuses, and maps that use it fold it into their bodies); any other constant a
    `prim.constant`."""

    op_types = (t.ConstantOp,)

    def decompose(self, op: t.ConstantOp, build: PrimBuilder) -> SSAValue:
        value = splat_value(op.result)
        if value is None:
            return build.emit(prim.ConstantOp(op.value, op.result.type))
        element_type = t.element_type_of(op.result)
        return build.map(
            [], t.shape_of(op.result), element_type, lambda b: b.constant(value, element_type)
        )


DECOMPOSITIONS: tuple[type[TorchOpDecomposition], ...] = (
    ElementwiseToMap,
    ReductionToReduce,
    ArgReductionToMultiReduce,
    VarToReduce,
    RmsNormToPrims,
    LayerNormToPrims,
    SoftmaxToPrims,
    ScanToPrim,
    LinearToContract,
    MatmulToContract,
    SdpaToPrims,
    EmbeddingToGather,
    IotaToPrim,
    ViewToPrim,
    ConstantToPrim,
)
"""Every pattern of `decompose-torch`."""
