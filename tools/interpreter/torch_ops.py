"""CPU execution of Torch IR: every `torch` op runs PyTorch's own CPU op on the interpreter's
numpy arrays, so the torch level of a program is executable like the levels below it.

    %y = torch.rms_norm %x weight %w normalized_shape [2048] eps 1.0e-06 : ...
                                                   // torch.rms_norm(x, [2048], w, 1e-06)

Torch IR mirrors aten op for op, so running it through the aten ops themselves checks what
the importer did (which op it chose, its properties, the explicit type promotion) rather
than re-deriving the semantics: a mismatch against eager at the torch level names the
importer, and one that first appears at prim names decompose-torch.

For each op: the operand arrays become tensors (`torch.from_numpy`; a bf16 operand, held
as float32 values rounded to bf16, converts to `torch.bfloat16` exactly), the matching
torch function runs with the op's properties, and the result comes back as an array of the
interpreter's representation (bf16 as float32). The result's shape and dtype must be those
of the op's result type; anything else is an importer or verifier bug and raises
`InterpretationError`.

Where the dialect resolves or normalizes what aten leaves open, the op's stored form is
used as the dialect documents it: `rms_norm`'s eps and `sdpa`'s scale are always present;
reduction dims are explicit (an empty list reduces nothing, where aten would reduce every
dim); `expand` and `reshape` take their shape from the result type; `to` converts to the
result's element type; `sdpa` accepts `causal` together with a mask (aten refuses both) by
folding the top-left causal mask into the given one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, TensorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import InterpretationError

from emmy.dialects import dtypes
from emmy.dialects import torch as t
from emmy.tools.interpreter.host import concrete_shape


@dataclass(frozen=True)
class Operands:
    """The operand tensors of the op being run, and the shape of its result in this run (a
    `?` dim is the dynamic size)."""

    tensors: dict[SSAValue, torch.Tensor]
    result_shape: tuple[int, ...]

    def __call__(self, value: SSAValue | None) -> torch.Tensor | None:
        """The tensor of an operand (None for an absent optional operand)."""
        return None if value is None else self.tensors[value]


TorchImpl = Callable[[Operation, Operands], torch.Tensor]
"""How one torch op runs: the op (for its properties and types) and its operand tensors."""


def torch_dtype(element_type: Attribute) -> torch.dtype:
    dtype = dtypes.torch_dtype(element_type)
    if dtype is None:
        raise InterpretationError(f"Torch IR has no PyTorch dtype for {element_type}")
    return dtype


def to_tensor(array: np.ndarray, value_type: Attribute) -> torch.Tensor:
    """An interpreter value as a tensor of its type's dtype (bf16 from its float32 values)."""
    array = np.asarray(array)
    if not array.flags.writeable:  # a broadcast view; torch wants memory it may write
        array = array.copy()
    tensor = torch.from_numpy(array)
    assert isinstance(value_type, TensorType)
    dtype = torch_dtype(value_type.get_element_type())
    if dtype == torch.bfloat16 and tensor.dtype == torch.float32:
        # The values are rounded to bf16 already, so their upper halves are their bf16 bits
        # (torch's conversion would make every NaN one with all bits set: a negative NaN).
        bits = np.asarray(array, order="C").view(np.uint32)
        halves = np.asarray(bits >> 16, dtype=np.uint16)
        return torch.from_numpy(halves).view(torch.bfloat16)
    if tensor.dtype != dtype:
        raise InterpretationError(
            f"an operand of type {value_type} is held as a numpy array of {array.dtype}"
        )
    return tensor


def to_array(tensor: torch.Tensor, op: Operation, shape: tuple[int, ...]) -> np.ndarray:
    """The result of `op` as the interpreter holds it, after checking it against the op's
    result type (of `shape` in this run)."""
    result_type = op.results[0].type
    assert isinstance(result_type, TensorType)
    dtype = torch_dtype(result_type.get_element_type())
    if tuple(tensor.shape) != shape or tensor.dtype != dtype:
        raise InterpretationError(
            f"PyTorch computes '{op.name}' as a {list(tensor.shape)} tensor of {tensor.dtype}, "
            f"but the op's result type is {result_type} ({list(shape)} of {dtype}): the "
            "importer built a wrong op, or its verifier let a wrong result type through"
        )
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.contiguous().numpy().copy()


# --- the ops ---------------------------------------------------------------------------------


TORCH_IMPLS: dict[type[Operation], TorchImpl] = {}
"""Every op of the torch dialect, with how it runs."""


def elementwise(function: Callable[..., torch.Tensor]) -> TorchImpl:
    """An op whose operands are the torch function's tensor arguments, in order."""
    return lambda op, x: function(*(x(value) for value in op.operands))


TORCH_IMPLS.update(
    {
        op_class: elementwise(function)
        for op_class, function in {
            t.NegOp: torch.neg,
            t.AbsOp: torch.abs,
            t.ReluOp: torch.relu,
            t.ExpOp: torch.exp,
            t.LogOp: torch.log,
            t.SqrtOp: torch.sqrt,
            t.RsqrtOp: torch.rsqrt,
            t.FloorOp: torch.floor,
            t.CeilOp: torch.ceil,
            t.RoundOp: torch.round,
            t.TruncOp: torch.trunc,
            t.SinOp: torch.sin,
            t.CosOp: torch.cos,
            t.TanOp: torch.tan,
            t.AtanOp: torch.atan,
            t.AsinOp: torch.asin,
            t.AcosOp: torch.acos,
            t.SinhOp: torch.sinh,
            t.CoshOp: torch.cosh,
            t.AsinhOp: torch.asinh,
            t.AcoshOp: torch.acosh,
            t.AtanhOp: torch.atanh,
            t.ErfOp: torch.erf,
            t.ErfcOp: torch.erfc,
            t.ErfinvOp: torch.erfinv,
            t.LgammaOp: torch.lgamma,
            t.DigammaOp: torch.digamma,
            t.Log1pOp: torch.log1p,
            t.Expm1Op: torch.expm1,
            t.Log2Op: torch.log2,
            t.TanhOp: torch.tanh,
            t.SigmoidOp: torch.sigmoid,
            t.SiluOp: F.silu,
            t.AddOp: torch.add,
            t.SubOp: torch.sub,
            t.MulOp: torch.mul,
            t.DivOp: torch.div,
            t.PowOp: torch.pow,
            t.RemainderOp: torch.remainder,
            t.FmodOp: torch.fmod,
            t.FloorDivideOp: torch.floor_divide,
            t.TruncDivideOp: partial(torch.div, rounding_mode="trunc"),
            t.Atan2Op: torch.atan2,
            t.HypotOp: torch.hypot,
            t.CopySignOp: torch.copysign,
            t.MaximumOp: torch.maximum,
            t.MinimumOp: torch.minimum,
            t.ShiftLeftOp: torch.bitwise_left_shift,
            t.ShiftRightOp: torch.bitwise_right_shift,
            t.GcdOp: torch.gcd,
            t.LcmOp: torch.lcm,
            t.BitwiseAndOp: torch.bitwise_and,
            t.BitwiseOrOp: torch.bitwise_or,
            t.BitwiseXorOp: torch.bitwise_xor,
            t.BitwiseNotOp: torch.bitwise_not,
            t.GtOp: torch.gt,
            t.LtOp: torch.lt,
            t.GeOp: torch.ge,
            t.LeOp: torch.le,
            t.EqOp: torch.eq,
            t.NeOp: torch.ne,
            t.WhereOp: torch.where,
            t.MatmulOp: torch.matmul,
            t.BmmOp: torch.bmm,
            t.EmbeddingOp: lambda weight, indices: F.embedding(indices, weight),
        }.items()
    }
)


def implements(op_class: type[Operation]) -> Callable[[TorchImpl], TorchImpl]:
    def register(function: TorchImpl) -> TorchImpl:
        TORCH_IMPLS[op_class] = function
        return function

    return register


def ints(attr: DenseArrayBase) -> list[int]:
    return list(attr.get_values())


@implements(t.GeluOp)
def gelu(op: t.GeluOp, x: Operands) -> torch.Tensor:
    return F.gelu(x(op.input), approximate=op.approximate.data)


@implements(t.ClampOp)
def clamp(op: t.ClampOp, x: Operands) -> torch.Tensor:
    """The f64 bounds as Python scalars, which torch converts to the element type. An integer
    tensor's bounds are integral (a fractional one would have promoted the clamp to float),
    and are passed as ints so that torch does not promote."""
    input = x(op.input)
    scalar = float if input.is_floating_point() else int
    bounds = [None if b is None else scalar(b.value.data) for b in (op.min, op.max)]
    return torch.clamp(input, *bounds)


@implements(t.ToOp)
def to(op: t.ToOp, x: Operands) -> torch.Tensor:
    return x(op.input).to(torch_dtype(t.element_type_of(op.result)))


def product(values: torch.Tensor, dims: list[int], keepdim: bool) -> torch.Tensor:
    """The product over `dims` (torch.prod takes one dim at a time), in the element type."""
    for dim in sorted((d % values.dim() for d in dims), reverse=True):
        values = torch.prod(values, dim, keepdim, dtype=values.dtype)
    return values


def reduction(function: Callable[..., torch.Tensor]) -> TorchImpl:
    """`function(op, input, dims, keepdim)` over the op's dims. An empty dim list reduces
    nothing (aten would reduce every dim): the input gets a size-1 dim to reduce instead."""

    def run(op: t.ReductionOp, x: Operands) -> torch.Tensor:
        input, dims, keepdim = x(op.input), list(op.dim_list), op.keepdim is not None
        if not dims:
            input, dims, keepdim = input.unsqueeze(-1), [-1], False
        return function(op, input, dims, keepdim)

    return run


TORCH_IMPLS.update(
    {
        # The sum keeps the element type (aten sums integers to i64 unless told the dtype).
        t.SumOp: reduction(lambda op, v, dims, keep: torch.sum(v, dims, keep, dtype=v.dtype)),
        t.ProdOp: reduction(lambda op, v, dims, keep: product(v, dims, keep)),
        t.MeanOp: reduction(lambda op, v, dims, keep: torch.mean(v, dims, keep)),
        t.AmaxOp: reduction(lambda op, v, dims, keep: torch.amax(v, dims, keep)),
        t.AminOp: reduction(lambda op, v, dims, keep: torch.amin(v, dims, keep)),
        t.ArgmaxOp: reduction(lambda op, v, dims, keep: torch.argmax(v, dims[0], keep)),
        t.ArgminOp: reduction(lambda op, v, dims, keep: torch.argmin(v, dims[0], keep)),
        t.VarOp: reduction(
            lambda op, v, dims, keep: torch.var(
                v, dims, correction=op.correction.value.data, keepdim=keep
            )
        ),
    }
)


@implements(t.LinearOp)
def linear(op: t.LinearOp, x: Operands) -> torch.Tensor:
    return F.linear(x(op.input), x(op.weight), x(op.bias))


@implements(t.RmsNormOp)
def rms_norm(op: t.RmsNormOp, x: Operands) -> torch.Tensor:
    return F.rms_norm(x(op.input), ints(op.normalized_shape), x(op.weight), eps=op.eps.value.data)


@implements(t.LayerNormOp)
def layer_norm(op: t.LayerNormOp, x: Operands) -> torch.Tensor:
    return F.layer_norm(
        x(op.input), ints(op.normalized_shape), x(op.weight), x(op.bias), eps=op.eps.value.data
    )


@implements(t.SoftmaxOp)
def softmax(op: t.SoftmaxOp, x: Operands) -> torch.Tensor:
    return torch.softmax(x(op.input), op.dim.value.data)


@implements(t.LogSoftmaxOp)
def log_softmax(op: t.LogSoftmaxOp, x: Operands) -> torch.Tensor:
    return torch.log_softmax(x(op.input), op.dim.value.data)


@implements(t.CumsumOp)
def cumsum(op: t.CumsumOp, x: Operands) -> torch.Tensor:
    return torch.cumsum(x(op.input), op.dim.value.data)


@implements(t.CumprodOp)
def cumprod(op: t.CumprodOp, x: Operands) -> torch.Tensor:
    return torch.cumprod(x(op.input), op.dim.value.data)


@implements(t.SdpaOp)
def sdpa(op: t.SdpaOp, x: Operands) -> torch.Tensor:
    query, key, value, mask = x(op.query), x(op.key), x(op.value), x(op.attn_mask)
    is_causal = op.is_causal is not None
    if is_causal and mask is not None:
        # aten refuses a mask with is_causal; keep key j for query i iff j <= i, top-left.
        length, source_length = query.shape[-2], key.shape[-2]
        causal = torch.ones(length, source_length, dtype=torch.bool).tril()
        if mask.dtype == torch.bool:
            mask = mask & causal
        else:
            mask = mask.masked_fill(~causal, float("-inf"))
        is_causal = False
    return F.scaled_dot_product_attention(
        query, key, value, attn_mask=mask, is_causal=is_causal, scale=op.scale.value.data
    )


@implements(t.ReshapeOp)
def reshape(op: t.ReshapeOp, x: Operands) -> torch.Tensor:
    return x(op.input).reshape(x.result_shape)


@implements(t.ExpandOp)
def expand(op: t.ExpandOp, x: Operands) -> torch.Tensor:
    return x(op.input).expand(x.result_shape)


@implements(t.PermuteOp)
def permute(op: t.PermuteOp, x: Operands) -> torch.Tensor:
    return x(op.input).permute(ints(op.dims))


@implements(t.TransposeOp)
def transpose(op: t.TransposeOp, x: Operands) -> torch.Tensor:
    return x(op.input).transpose(op.dim0.value.data, op.dim1.value.data)


@implements(t.UnsqueezeOp)
def unsqueeze(op: t.UnsqueezeOp, x: Operands) -> torch.Tensor:
    return x(op.input).unsqueeze(op.dim.value.data)


@implements(t.SqueezeOp)
def squeeze(op: t.SqueezeOp, x: Operands) -> torch.Tensor:
    return torch.squeeze(x(op.input), tuple(ints(op.dims)))


@implements(t.SliceOp)
def slice_(op: t.SliceOp, x: Operands) -> torch.Tensor:
    dim, start, end, step = (b.value.data for b in (op.dim, op.start, op.end, op.step))
    if end == DYNAMIC_INDEX:  # as many as the dynamic size, which the result's shape has
        end = start + x.result_shape[dim]
    return torch.ops.aten.slice.Tensor(x(op.input), dim, start, end, step)


@implements(t.CatOp)
def cat(op: t.CatOp, x: Operands) -> torch.Tensor:
    return torch.cat([x(v) for v in op.inputs], op.dim.value.data)


@implements(t.IotaOp)
def iota(op: t.IotaOp, x: Operands) -> torch.Tensor:
    shape, dim = x.result_shape, op.dim.value.data
    positions = torch.arange(shape[dim], dtype=torch_dtype(t.element_type_of(op.result)))
    view = [1] * len(shape)
    view[dim] = shape[dim]
    return positions.reshape(view).expand(shape).clone()


@implements(t.ConstantOp)
def constant(op: t.ConstantOp, x: Operands) -> torch.Tensor:
    """The literal's values (one value for a splat) in the result's dtype and shape."""
    shape = x.result_shape
    values = torch.tensor(op.value.get_values(), dtype=torch_dtype(t.element_type_of(op.result)))
    if values.numel() == 1:
        return values.reshape(()).expand(shape).clone()
    return values.reshape(shape)


# --- the interpreter functions ---------------------------------------------------------------


def run_torch_op(
    functions: InterpreterFunctions, interpreter: Interpreter, op: Operation, args: PythonValues
) -> PythonValues:
    tensors = {
        value: to_tensor(array, value.type) for value, array in zip(op.operands, args, strict=True)
    }

    shape = concrete_shape(interpreter, op.results[0].type)
    with torch.no_grad():
        return (to_array(TORCH_IMPLS[type(op)](op, Operands(tensors, shape)), op, shape),)


class TorchFunctions(InterpreterFunctions):
    """Torch IR on PyTorch's CPU ops: one `@impl` per op of the dialect, each running
    `TORCH_IMPLS[op class]` (see the module docstring)."""


def _register(op_classes: Sequence[type[Operation]]) -> None:
    for op_class in op_classes:
        name = "run_" + op_class.name.removeprefix("torch.")
        setattr(TorchFunctions, name, impl(op_class)(run_torch_op))
    register_impls(TorchFunctions)


_register(list(TORCH_IMPLS))
