"""Prim IR on the CPU: each op is one numpy call over whole tensors.

    %s = prim.map(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
    ^bb0(%v: f32):                                 // %v is all of %x at once
      %sq = arith.mulf %v, %v : f32
      prim.yield %sq : f32
    }
    %r = prim.reduce add %s axes [1] init 0.0 : tensor<4x8xf32> -> tensor<4xf32>
                                                   // np.add.reduce(s, axis=1, initial=0.0)

`prim.map` runs its body once with the whole input tensors as the block arguments;
`prim.reduce` is a numpy reduction combined with `init` and `prim.scan` the combiner's
`accumulate`; `prim.multi_reduce` runs its combiner on whole halves of the folded values at a
time (`fold_with_combiner`); `prim.broadcast` is `np.broadcast_to` (right-aligned, like
numpy); the views are their numpy counterparts, `prim.contract` is `np.matmul`,
`prim.attention` is `attention.attention` and `prim.gather` is fancy indexing.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)

from emmy.dialects import prim
from emmy.tools.interpreter.attention import attention
from emmy.tools.interpreter.host import concrete_shape
from emmy.tools.interpreter.scalar import COMBINERS, dense_array, fold_with_combiner, to_type


@register_impls
class PrimFunctions(InterpreterFunctions):
    @impl(prim.MapOp)
    def run_map(self, interpreter: Interpreter, op: prim.MapOp, args: PythonValues) -> PythonValues:
        (value,) = interpreter.run_ssacfg_region(op.body, args, "prim.map")
        # A body that ignores its inputs yields a 0-d value.
        return (np.broadcast_to(value, concrete_shape(interpreter, op.result.type)),)

    @impl_terminator(prim.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: prim.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl(prim.ReduceOp)
    def run_reduce(
        self, interpreter: Interpreter, op: prim.ReduceOp, args: PythonValues
    ) -> PythonValues:
        (value,) = args
        total = COMBINERS[op.kind.data].reduce(
            value,
            axis=op.axis_list,
            keepdims=op.keepdim is not None,
            initial=op.init.value.data,
        )
        return (to_type(total, op.result.type.get_element_type()),)

    @impl(prim.ScanOp)
    def run_scan(
        self, interpreter: Interpreter, op: prim.ScanOp, args: PythonValues
    ) -> PythonValues:
        (value,) = args
        running = COMBINERS[op.kind.data].accumulate(value, axis=op.dim.value.data)
        return (to_type(running, op.result.type.get_element_type()),)

    @impl(prim.MultiReduceOp)
    def run_multi_reduce(
        self, interpreter: Interpreter, op: prim.MultiReduceOp, args: PythonValues
    ) -> PythonValues:
        axes = op.axis_list
        kept = [d for d in range(np.ndim(args[0])) if d not in axes]
        rows = [np.shape(args[0])[d] for d in kept]
        # The folded axes moved last and merged into one.
        merged = [np.transpose(a, (*kept, *axes)).reshape((*rows, -1)) for a in args]
        totals = fold_with_combiner(interpreter, op.combiner, op.init_values, merged, len(rows))
        return tuple(
            np.reshape(total, concrete_shape(interpreter, result.type))
            for total, result in zip(totals, op.outputs)
        )

    @impl(prim.BroadcastOp)
    def run_broadcast(
        self, interpreter: Interpreter, op: prim.BroadcastOp, args: PythonValues
    ) -> PythonValues:
        (value,) = args
        return (np.broadcast_to(value, concrete_shape(interpreter, op.result.type)),)

    @impl(prim.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: prim.ConstantOp, args: PythonValues
    ) -> PythonValues:
        return (dense_array(op.value, op.result.type),)

    @impl(prim.PermuteOp)
    def run_permute(
        self, interpreter: Interpreter, op: prim.PermuteOp, args: PythonValues
    ) -> PythonValues:
        return (np.transpose(args[0], op.permutation),)

    @impl(prim.ReshapeOp)
    def run_reshape(
        self, interpreter: Interpreter, op: prim.ReshapeOp, args: PythonValues
    ) -> PythonValues:
        return (np.reshape(args[0], concrete_shape(interpreter, op.result.type)),)

    @impl(prim.SliceOp)
    def run_slice(
        self, interpreter: Interpreter, op: prim.SliceOp, args: PythonValues
    ) -> PythonValues:
        dim, start, step = op.dim.value.data, op.start.value.data, op.step.value.data
        size = concrete_shape(interpreter, op.result.type)[dim]
        window = [slice(None)] * len(op.result.type.get_shape())
        window[dim] = slice(start, start + step * size, step)
        return (args[0][tuple(window)],)

    @impl(prim.ConcatOp)
    def run_concat(
        self, interpreter: Interpreter, op: prim.ConcatOp, args: PythonValues
    ) -> PythonValues:
        return (np.concatenate(args, axis=op.dim.value.data),)

    @impl(prim.GatherOp)
    def run_gather(
        self, interpreter: Interpreter, op: prim.GatherOp, args: PythonValues
    ) -> PythonValues:
        table, indices = args
        if indices.size and not (0 <= indices.min() and indices.max() < table.shape[0]):
            raise ValueError(
                f"gather index out of range [0, {table.shape[0]}): {indices.min()}..{indices.max()}"
            )
        return (table[indices],)

    @impl(prim.ContractOp)
    def run_contract(
        self, interpreter: Interpreter, op: prim.ContractOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs = args
        return (to_type(np.matmul(lhs, rhs), op.result.type.get_element_type()),)

    @impl(prim.AttentionOp)
    def run_attention(
        self, interpreter: Interpreter, op: prim.AttentionOp, args: PythonValues
    ) -> PythonValues:
        query, key, value, *mask = args
        out = attention(
            query,
            key,
            value,
            mask[0] if mask else None,
            op.scale.value.data,
            op.causal is not None,
            op.query.type.get_element_type(),
            op.result.type.get_element_type(),
        )
        return (out,)

    @impl(prim.IotaOp)
    def run_iota(
        self, interpreter: Interpreter, op: prim.IotaOp, args: PythonValues
    ) -> PythonValues:
        shape = concrete_shape(interpreter, op.result.type)
        dim = op.dim.value.data
        positions = np.arange(shape[dim]).reshape(
            [-1 if d == dim else 1 for d in range(len(shape))]
        )
        return (to_type(np.broadcast_to(positions, shape), op.result.type.get_element_type()),)
