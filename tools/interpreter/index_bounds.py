"""Which integer inputs of a host function index a dim, and that dim's size, at any level.

    func.func @forward(%p_weight: tensor<10x8xf32>, %input: tensor<4xi64>) -> tensor<4x8xf32> {
      %embedding = torch.embedding %p_weight, %input : tensor<10x8xf32>, tensor<4xi64> -> ...
    index_bounds(forward)  # {1: 10}: argument #1 picks rows of a 10-row table

Random inputs must keep such an input's values below that size, or the program reads outside
its table (`emmy exec` and `emmy run` draw them so: `run.random_inputs`,
`emmy.tools.bench.differential.random_inputs`). An argument's values are followed through
the ops that pass them on unchanged: views (`torch` shape ops, `prim` views), into a
`fused.kernel`'s body and a launched kernel's arguments, loaded from a buffer (`loop.load`,
`memref.load`, `kernel.vector_load` and `vector.extract`) and cast (`arith.index_cast` and
integer extensions and truncations); they index a dim where they are an embedding's or a
gather's indices, or an index of a buffer access (`%table[%row, %i]`).
"""

from __future__ import annotations

from xdsl.dialects import arith, func, vector
from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Operation, SSAValue

from emmy.dialects import fused, prim
from emmy.dialects import torch as t
from emmy.dialects.launch import LaunchOpBase

_CASTS = (arith.IndexCastOp, arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp, vector.ExtractOp)
"""Ops whose result is their operand's value (or one element of a vector of values)."""


def index_bounds(function: func.FuncOp) -> dict[int, int]:
    """For each argument whose values index a dim, the smallest such dim's size, by the
    argument's position."""
    bounds = {}
    for position, argument in enumerate(function.args):
        if sizes := _indexed_sizes(argument):
            bounds[position] = min(sizes)
    return bounds


Pending = list[tuple[SSAValue, bool]]
"""Values to follow, each with whether it holds the argument's elements (a tensor or buffer)
rather than being one of them."""


def _indexed_sizes(argument: SSAValue) -> list[int]:
    """The sizes of the dims that `argument`'s values index, wherever they flow."""
    sizes: list[int] = []
    pending: Pending = [(argument, True)]
    seen: set[SSAValue] = set()
    while pending:
        value, holds = pending.pop()
        if value in seen:
            continue
        seen.add(value)
        follow = _follow_holder if holds else _follow_element
        for use in value.uses:
            sizes.extend(follow(use.operation, use.index, value, pending))
    return sizes


def _follow_holder(op: Operation, operand: int, value: SSAValue, pending: Pending) -> list[int]:
    """What `op` does with the elements `value` holds: index a table (the sizes returned) or
    pass them on (to `pending`)."""
    if isinstance(op, t.EmbeddingOp) and op.indices is value:
        return [_shape(op.weight)[0]]
    if isinstance(op, prim.GatherOp) and op.indices is value:
        return [_shape(op.table)[0]]
    if isinstance(op, t.ShapeOp) or (
        isinstance(prim.fusion_class(op), prim.View) and len(op.operands) == 1
    ):
        pending.extend((result, True) for result in op.results)
    elif isinstance(op, fused.KernelOp):
        pending.append((op.body.block.args[operand], True))
    elif isinstance(op, LaunchOpBase) and (kernel := op.kernel_op()) is not None:
        # A launch's operands are the kernel's arguments, in order.
        pending.append((kernel.body.block.args[operand], True))
    elif getattr(op, "memref", None) is value:  # a load
        pending.extend((result, False) for result in op.results)
    return []


def _follow_element(op: Operation, operand: int, value: SSAValue, pending: Pending) -> list[int]:
    """What `op` does with `value`, one of the elements: cast it (on to `pending`) or index
    the buffer it accesses with it (the sizes of those dims returned)."""
    if isinstance(op, _CASTS):
        pending.append((op.results[0], False))
        return []
    buffer = getattr(op, "memref", None) or getattr(op, "buffer", None)
    indices = getattr(op, "indices", None)
    if not isinstance(buffer, SSAValue) or not isinstance(buffer.type, MemRefType) or not indices:
        return []
    shape = buffer.type.get_shape()
    return [shape[dim] for dim, index in enumerate(indices) if index is value]


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())
