"""Loop IR and Tile IR on the CPU: a parallel loop runs its body once, over every iteration.

    loop.for %i in 0 to 32 {                       // %i = np.arange(32).reshape(32, 1)
      loop.for %j in 0 to 2048 {                   // %j = np.arange(2048).reshape(1, 2048)
        %v = loop.load %x[%i, %j] : memref<32x2048xf32>  // x[i, j]: every element at once
        loop.store %v, %y[%i, %j] : memref<32x2048xf32>
      }
    }

`LoopFunctions` says how values, loops, loads and stores are vectorised; a kernel's launch
(`loop.launch`, `tile.launch`) calls the kernel with the host's buffers, which it mutates in place.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX
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
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from emmy.dialects import loop, tile
from emmy.tools.interpreter.attention import attention
from emmy.tools.interpreter.scalar import COMBINERS, fold_with_combiner, numpy_dtype, to_type

LOOP_OPS = (loop.ForOp, tile.ForOp, loop.ContractOp)
"""Loop IR and Tile IR run alike: a schedule changes where iterations run, not what they do.
A loop.contract's epilogue is a loop nest over its parallel dims."""


def loop_axes(op: Operation) -> int:
    """How many loop axes `op` adds to the values in its body."""
    return len(op.parallel_extents) if isinstance(op, loop.ContractOp) else 1


def enclosing_loops(op: Operation) -> Iterator[loop.ForOp | tile.ForOp | loop.ContractOp]:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, LOOP_OPS):
            yield parent
        parent = parent.parent_op()


def loop_depth(op: Operation) -> int:
    """The first loop axis of `op`: 0 for an outermost loop, the number of axes of the
    loops around it otherwise."""
    return sum(loop_axes(parent) for parent in enclosing_loops(op))


def loop_nest_depth(kernel: loop.KernelOp | tile.KernelOp) -> int:
    """How deep the loops of a kernel nest: the number of loop axes of its values."""
    return max(
        (loop_depth(op) + loop_axes(op) for op in kernel.walk() if isinstance(op, LOOP_OPS)),
        default=0,
    )


def _attention(op: loop.AttentionOp | tile.AttentionOp, args: PythonValues) -> PythonValues:
    """Writes the attention of the buffers `args` into its output buffer."""
    query, key, value, *mask, out = args
    out[...] = attention(
        query,
        key,
        value,
        mask[0] if mask else None,
        op.scale.value.data,
        op.causal is not None,
        op.query.type.get_element_type(),
        op.out.type.get_element_type(),
    )
    return ()


class OutOfBounds(InterpretationError, IndexError):
    """An access outside its buffer (an index a program computed from its data: an
    embedding's id past the table), an IndexError as eager PyTorch's."""


def check_in_bounds(buffer: np.ndarray, indices: Sequence[np.ndarray]) -> None:
    for position, (index, size) in enumerate(zip(indices, buffer.shape)):
        lowest, highest = int(np.min(index)), int(np.max(index))
        if lowest < 0 or highest >= size:
            raise OutOfBounds(
                f"index #{position} takes values from {lowest} to {highest}, out of bounds "
                f"for a dimension of size {size}"
            )


def _iteration_view(
    buffer: np.ndarray, dims: Sequence[loop.IterationDim], rank: int, matrix_dims
) -> np.ndarray:
    """`buffer` as an array over the iteration dims (batch.., then `matrix_dims`: the
    parallel dim and k of a matmul operand), with size 1 along the dims it is not read at
    and the element its indexing map reads everywhere else."""
    order = (*range(rank - 2), *matrix_dims)
    kept = [d for d in dims if d is not None]
    # Dims read at 0 are dropped; the rest are put in iteration order.
    view = buffer[tuple(0 if d is None else slice(None) for d in dims)]
    view = view.transpose([kept.index(d) for d in sorted(kept, key=order.index)])
    shape = [1] * len(order)
    for d in kept:
        shape[order.index(d)] = buffer.shape[dims.index(d)]
    return view.reshape(shape)


def _outside_kernel() -> int:
    raise InterpretationError("a loop runs only inside a kernel")


@register_impls
class LoopFunctions(InterpreterFunctions):
    """Loop IR and Tile IR, vectorised across loop iterations.

    Iterations of a parallel `loop.for` are independent, so its body runs once, with the
    induction variable as an array of every iteration. Each loop nesting depth d has its own
    axis: in a kernel whose loops nest D deep, the induction variable of a loop at depth d is
    `np.arange(lower, upper)` shaped `(1,)*d + (n,) + (1,)*(D-d-1)`, and every value is a
    D-dimensional array broadcasting across the loop axes (or a 0-d array, for values that
    depend on no loop). `loop.load` is numpy fancy indexing with the broadcast index arrays;
    `loop.store` writes the value broadcast against the indices. A reduction `loop.for` runs
    its body once, broadcasts the yielded contribution to size n along its axis (a
    contribution that does not depend on the induction variable still counts n times),
    reduces that axis with the combiner (keeping it as size 1) and combines the result with
    `init`. A loop of trip count 0 does nothing; as a reduction it gives `init`.

    Consequence: iterations that write a location another iteration reads or writes (a race
    under the parallel-loop promise, such as a scratch buffer shared by the iterations of an
    outer loop) see the last write of the whole vectorised loop, not their own. Loads and
    stores check their indices and fail on out-of-bounds accesses rather than let numpy wrap
    negative indices around. Tile IR runs as the Loop IR it schedules: `tile.stage` copies
    nothing (loads of a staged row read the buffer itself), and a `tile.gemm` computes its
    accumulators as one product of its operands, then runs its epilogue once over every
    output point, its indices and accumulator arrays broadcasting like a loop nest's."""

    LOOP_AXES = "loop_axes"
    """Interpreter data: the number of loop axes of the kernel that is running."""

    def _launch(self, interpreter: Interpreter, symbol, args: PythonValues) -> PythonValues:
        # Kernels have no CallableOpInterface, so a launch runs the kernel's body itself
        # rather than going through `interpreter.call_op`.
        kernel = interpreter.get_op_for_symbol(symbol)
        interpreter.set_data(LoopFunctions, self.LOOP_AXES, loop_nest_depth(kernel))
        interpreter.run_ssacfg_region(kernel.body, args, kernel.sym_name.data)
        return ()

    @impl(loop.LaunchOp)
    def run_launch(
        self, interpreter: Interpreter, op: loop.LaunchOp, args: PythonValues
    ) -> PythonValues:
        return self._launch(interpreter, op.kernel, args)

    @impl(tile.LaunchOp)
    def run_tile_launch(
        self, interpreter: Interpreter, op: tile.LaunchOp, args: PythonValues
    ) -> PythonValues:
        return self._launch(interpreter, op.kernel, args)

    def _for(
        self, interpreter: Interpreter, op: loop.ForOp | tile.ForOp, args: PythonValues
    ) -> PythonValues:
        upper = int(args[0]) if op.is_dynamic else op.trip_count + op.lower.data
        trip_count = upper - op.lower.data
        if trip_count == 0:
            return tuple(to_type(init.value.data, init.type) for init in op.init_values)
        axes = interpreter.get_data(LoopFunctions, self.LOOP_AXES, _outside_kernel)
        axis = loop_depth(op)
        axis_shape = [1] * axes
        axis_shape[axis] = trip_count
        induction_var = np.arange(op.lower.data, upper, dtype=np.int64).reshape(axis_shape)
        yielded = interpreter.run_ssacfg_region(op.body, (induction_var,), op.name)
        if not op.is_reduction:
            return ()
        contributions = [np.asarray(value) for value in yielded]
        contributions = [c.reshape((1,) * (axes - c.ndim) + c.shape) for c in contributions]
        every_iteration = list(np.broadcast_shapes(*(c.shape for c in contributions)))
        every_iteration[axis] = trip_count
        if op.combiner is not None:
            values = [np.broadcast_to(c, every_iteration) for c in contributions]
            return tuple(fold_with_combiner(interpreter, op.combiner, op.init_values, values, axis))
        (contribution,) = contributions
        total = COMBINERS[op.kind.data].reduce(
            np.broadcast_to(contribution, every_iteration),
            axis=axis,
            keepdims=True,
            initial=op.init.value.data,
        )
        return (to_type(total, op.init.type),)

    @impl(loop.ForOp)
    def run_for(self, interpreter: Interpreter, op: loop.ForOp, args: PythonValues) -> PythonValues:
        return self._for(interpreter, op, args)

    @impl(tile.ForOp)
    def run_tile_for(
        self, interpreter: Interpreter, op: tile.ForOp, args: PythonValues
    ) -> PythonValues:
        return self._for(interpreter, op, args)

    @impl(loop.ContractOp)
    def run_contract(
        self, interpreter: Interpreter, op: loop.ContractOp, args: PythonValues
    ) -> PythonValues:
        """Each accumulated value (one per sibling rhs) is one batched matmul in the
        accumulator type (numpy's order of summation); the epilogue then runs as the body of
        a parallel loop nest."""
        axes = interpreter.get_data(LoopFunctions, self.LOOP_AXES, _outside_kernel)
        first = loop_depth(op)
        lhs, *operands = args
        siblings, size = operands[: len(op.rhs)], operands[len(op.rhs) :]
        extents = tuple(int(size[0]) if e == DYNAMIC_INDEX else e for e in op.parallel_extents)
        rank = len(extents)
        accumulator_type = op.accumulator_type
        # Each operand as an array over (batch.., m, k) or (batch.., k, n), size 1 along the
        # dims it is not read at, so that np.matmul broadcasts it there.
        lhs = _iteration_view(lhs, op.lhs_dims, rank, (rank - 2, rank))
        dtype = numpy_dtype(accumulator_type)
        sums = []
        for rhs in siblings:
            rhs = _iteration_view(rhs, op.rhs_dims, rank, (rank, rank - 1))
            product = to_type(np.matmul(lhs.astype(dtype), rhs.astype(dtype)), accumulator_type)
            sums.append(np.broadcast_to(product, extents))
        shape = (1,) * first + tuple(extents) + (1,) * (axes - first - rank)
        indices = []
        for d, extent in enumerate(extents):
            axis_shape = [1] * axes
            axis_shape[first + d] = extent
            indices.append(np.arange(extent, dtype=np.int64).reshape(axis_shape))
        accumulated = [value.reshape(shape) for value in sums]
        interpreter.run_ssacfg_region(op.epilogue, (*indices, *accumulated), op.name)
        return ()

    @impl(loop.AttentionOp)
    def run_attention(
        self, interpreter: Interpreter, op: loop.AttentionOp, args: PythonValues
    ) -> PythonValues:
        return _attention(op, args)

    @impl(tile.AttentionOp)
    def run_tile_attention(
        self, interpreter: Interpreter, op: tile.AttentionOp, args: PythonValues
    ) -> PythonValues:
        # The schedule says where rows are computed, not what they are: as loop.attention.
        return _attention(op, args)

    @impl(tile.StageOp)
    def run_stage(
        self, interpreter: Interpreter, op: tile.StageOp, args: PythonValues
    ) -> PythonValues:
        # A staged row is a copy of the same values: loads of it read the buffer itself here.
        return ()

    @impl(tile.GemmOp)
    def run_gemm(
        self, interpreter: Interpreter, op: tile.GemmOp, args: PythonValues
    ) -> PythonValues:
        # Products of f16, bf16 and f32 are exact in float64, and so nearly are their sums:
        # the accumulator is the f32 nearest the exact sum, whatever order a GPU adds in.
        lhs, *siblings = (np.asarray(arg, np.float64) for arg in args)
        letters = "abcdefghijklmnopqrstuvwxyz"
        lhs_letters = "".join(letters[d] for d in op.lhs_dims)
        rhs_letters = "".join(letters[d] for d in op.rhs_dims)
        point = op.batch_rank + 2  # the output point: batch..., m, n
        product = f"{lhs_letters},{rhs_letters}->{letters[:point]}"
        sums = [np.einsum(product, lhs, rhs) for rhs in siblings]
        indices = []
        for dim in range(point):
            shape = [1] * point
            shape[dim] = sums[0].shape[dim]
            indices.append(np.arange(sums[0].shape[dim], dtype=np.int64).reshape(shape))
        accumulators = [to_type(value, op.accumulator_type) for value in sums]
        interpreter.run_ssacfg_region(op.epilogue, (*indices, *accumulators), op.name)
        return ()

    @impl_terminator(loop.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: loop.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(tile.YieldOp)
    def run_tile_yield(
        self, interpreter: Interpreter, op: tile.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    def _load(self, args: PythonValues) -> PythonValues:
        buffer, *indices = args
        check_in_bounds(buffer, indices)
        return (np.asarray(buffer[tuple(indices)]),)

    def _store(self, args: PythonValues) -> PythonValues:
        value, buffer, *indices = args
        check_in_bounds(buffer, indices)
        # Indices that do not vary along an axis the value varies along write the same
        # element several times; the last write wins, as it would in a racy parallel loop.
        if not indices:
            buffer[()] = np.asarray(value).reshape(-1)[-1]
            return ()
        *indices, value = np.broadcast_arrays(*indices, value)
        buffer[tuple(indices)] = value
        return ()

    @impl(loop.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: loop.LoadOp, args: PythonValues
    ) -> PythonValues:
        return self._load(args)

    @impl(loop.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: loop.StoreOp, args: PythonValues
    ) -> PythonValues:
        return self._store(args)

    @impl(memref.LoadOp)
    def run_memref_load(
        self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues
    ) -> PythonValues:
        return self._load(args)

    @impl(memref.StoreOp)
    def run_memref_store(
        self, interpreter: Interpreter, op: memref.StoreOp, args: PythonValues
    ) -> PythonValues:
        return self._store(args)
