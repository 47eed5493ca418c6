"""CPU execution of emmy programs at the torch, prim, fused and loop levels, on numpy arrays.

`run_module(module, inputs, function="forward")` runs a host `func.func` through xDSL's
interpreter framework and returns its results as numpy arrays. Every SSA value is a numpy
array, and every op runs once over whole arrays, so a kernel over 32x2048 elements takes
milliseconds:

- Scalars (`arith`, `math`): vectorised numpy, see `emmy.tools.interpreter.scalar` for how each
  type is represented.
- prim: `prim.map` runs its body once with the whole input tensors as the block arguments;
  `prim.reduce` is a numpy reduction over `axes` combined with `init` (honouring `keepdim`);
  `prim.broadcast` is `np.broadcast_to` (right-aligned, like numpy); the views are their numpy
  counterparts, `prim.contract` is `np.matmul` and `prim.gather` is fancy indexing.
- torch: each op runs PyTorch's own CPU op on the arrays, see `emmy.tools.interpreter.torch_ops`.
- fused: `fused.kernel` runs its region on its operands and returns what `fused.yield` yields.
- host: `func.func` / `func.call` / `func.return`; `memref.alloc` makes a buffer of the
  memref's shape and dtype, filled with NaN for floats (zero otherwise) so that an element a
  kernel forgets to write shows up; `memref.dealloc` does nothing. `loop.launch @k(bufs)`
  calls the `loop.kernel` with the buffers, which the kernel mutates in place.
- loop: iterations of a parallel `loop.for` are independent, so its body runs once, with the
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
  outer loop) see the last write of the whole vectorised loop, not their own.
- kernel: `kernel.launch` runs a `kernel.func` in a SIMT emulator, every thread of a block
  at once, see `emmy.tools.interpreter.simt`.

Loads and stores check their indices and fail on out-of-bounds accesses rather than let
numpy wrap negative indices around. Float errors (overflow, division by zero, NaN) follow
IEEE and are not reported.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, MemRefType, ModuleOp, TensorType
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
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import InterpretationError

from emmy.dialects import fused, loop, prim, tile
from emmy.tools.interpreter.scalar import ScalarFunctions, numpy_dtype, to_type
from emmy.tools.interpreter.simt import SimtFunctions
from emmy.tools.interpreter.torch_ops import TorchFunctions

COMBINERS: dict[str, np.ufunc] = {
    "add": np.add,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}
"""The numpy ufunc of each reduction combiner; `max`/`min` propagate NaN like
`arith.maximumf`/`arith.minimumf`."""


class ExecutionError(Exception):
    """An op failed while running; `op` is the innermost op that was being interpreted."""

    def __init__(self, op: Operation, cause: Exception):
        super().__init__(f"while running '{op.name}': {cause}")
        self.op = op


def shape_and_element_type(value_type: Attribute) -> tuple[tuple[int, ...], Attribute]:
    """The array shape and element type of a tensor, memref or scalar type."""
    if isinstance(value_type, TensorType | MemRefType):
        return tuple(value_type.get_shape()), value_type.get_element_type()
    return (), value_type


def dense_array(value: DenseIntOrFPElementsAttr, shaped_type: Attribute) -> np.ndarray:
    shape, element_type = shape_and_element_type(shaped_type)
    values = to_type(np.array(value.get_values()), element_type)
    return np.array(values.reshape(shape))


@register_impls
class HostFunctions(InterpreterFunctions):
    """Buffers on the host side; `func` itself runs through xDSL's `FuncFunctions`."""

    @impl(memref.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues
    ) -> PythonValues:
        memref_type = op.memref.type
        dtype = numpy_dtype(memref_type.get_element_type())
        return (np.full(memref_type.get_shape(), np.nan if dtype.kind == "f" else 0, dtype),)

    @impl(memref.DeallocOp)
    def run_dealloc(
        self, interpreter: Interpreter, op: memref.DeallocOp, args: PythonValues
    ) -> PythonValues:
        return ()

    @impl(memref.GetGlobalOp)
    def run_get_global(
        self, interpreter: Interpreter, op: memref.GetGlobalOp, args: PythonValues
    ) -> PythonValues:
        global_op = interpreter.get_op_for_symbol(op.name_)
        assert isinstance(global_op, memref.GlobalOp)
        return (dense_array(global_op.initial_value, op.memref.type),)


@register_impls
class PrimFunctions(InterpreterFunctions):
    @impl(prim.MapOp)
    def run_map(self, interpreter: Interpreter, op: prim.MapOp, args: PythonValues) -> PythonValues:
        (value,) = interpreter.run_ssacfg_region(op.body, args, "prim.map")
        # A body that ignores its inputs yields a 0-d value.
        return (np.broadcast_to(value, op.result.type.get_shape()),)

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

    @impl(prim.BroadcastOp)
    def run_broadcast(
        self, interpreter: Interpreter, op: prim.BroadcastOp, args: PythonValues
    ) -> PythonValues:
        (value,) = args
        return (np.broadcast_to(value, op.result.type.get_shape()),)

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
        return (np.reshape(args[0], op.result.type.get_shape()),)

    @impl(prim.SliceOp)
    def run_slice(
        self, interpreter: Interpreter, op: prim.SliceOp, args: PythonValues
    ) -> PythonValues:
        dim, start, step = op.dim.value.data, op.start.value.data, op.step.value.data
        size = op.result.type.get_shape()[dim]
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

    @impl(prim.IotaOp)
    def run_iota(
        self, interpreter: Interpreter, op: prim.IotaOp, args: PythonValues
    ) -> PythonValues:
        shape = op.result.type.get_shape()
        dim = op.dim.value.data
        positions = np.arange(shape[dim]).reshape(
            [-1 if d == dim else 1 for d in range(len(shape))]
        )
        return (to_type(np.broadcast_to(positions, shape), op.result.type.get_element_type()),)


@register_impls
class FusedFunctions(InterpreterFunctions):
    @impl(fused.KernelOp)
    def run_kernel(
        self, interpreter: Interpreter, op: fused.KernelOp, args: PythonValues
    ) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, args, op.kernel_name.data)

    @impl_terminator(fused.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: fused.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


LOOP_OPS = (loop.ForOp, tile.ForOp)
"""Loop IR and Tile IR run alike: a schedule changes where iterations run, not what they do."""


def enclosing_loops(op: Operation) -> Iterator[loop.ForOp | tile.ForOp]:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, LOOP_OPS):
            yield parent
        parent = parent.parent_op()


def loop_depth(op: loop.ForOp | tile.ForOp) -> int:
    """0 for an outermost loop, 1 for a loop directly inside it, and so on."""
    return sum(1 for _ in enclosing_loops(op))


def loop_nest_depth(kernel: loop.KernelOp | tile.KernelOp) -> int:
    """How deep the loops of a kernel nest: the number of loop axes of its values."""
    return max((loop_depth(op) + 1 for op in kernel.walk() if isinstance(op, LOOP_OPS)), default=0)


def check_in_bounds(buffer: np.ndarray, indices: Sequence[np.ndarray]) -> None:
    for position, (index, size) in enumerate(zip(indices, buffer.shape)):
        lowest, highest = int(np.min(index)), int(np.max(index))
        if lowest < 0 or highest >= size:
            raise InterpretationError(
                f"index #{position} takes values from {lowest} to {highest}, out of bounds "
                f"for a dimension of size {size}"
            )


def _outside_kernel() -> int:
    raise InterpretationError("a loop runs only inside a kernel")


@register_impls
class LoopFunctions(InterpreterFunctions):
    """Loop IR and Tile IR, vectorised across loop iterations (see the module docstring)."""

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
        trip_count = op.upper.data - op.lower.data
        if trip_count == 0:
            return (to_type(op.init.value.data, op.init.type),) if op.is_reduction else ()
        axes = interpreter.get_data(LoopFunctions, self.LOOP_AXES, _outside_kernel)
        axis = loop_depth(op)
        axis_shape = [1] * axes
        axis_shape[axis] = trip_count
        induction_var = np.arange(op.lower.data, op.upper.data, dtype=np.int64).reshape(axis_shape)
        yielded = interpreter.run_ssacfg_region(op.body, (induction_var,), op.name)
        if not op.is_reduction:
            return ()
        contribution = np.asarray(yielded[0])
        contribution = contribution.reshape((1,) * (axes - contribution.ndim) + contribution.shape)
        every_iteration = list(contribution.shape)
        every_iteration[axis] = trip_count
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

    @impl(tile.StageOp)
    def run_stage(
        self, interpreter: Interpreter, op: tile.StageOp, args: PythonValues
    ) -> PythonValues:
        # A staged row is a copy of the same values: loads of it read the buffer itself here.
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


def make_interpreter(
    module: ModuleOp, listeners: Sequence[Interpreter.Listener] = ()
) -> Interpreter:
    """An interpreter that runs `module` at any of the levels this module implements."""
    interpreter = Interpreter(module, index_bitwidth=64, listeners=tuple(listeners))
    # ScalarFunctions stands in for xDSL's ArithFunctions and MathFunctions, which compute on
    # one FloatAttr or IntegerAttr at a time and would claim the same ops.
    loop_functions = LoopFunctions()
    for functions in (
        FuncFunctions(),
        HostFunctions(),
        ScalarFunctions(),
        TorchFunctions(),
        PrimFunctions(),
        FusedFunctions(),
        loop_functions,
    ):
        interpreter.register_implementations(functions)
    # Kernel IR; inside a kernel, memref.load and memref.store are per-thread accesses, so
    # SimtFunctions takes them over and hands those outside kernels back to LoopFunctions.
    interpreter.register_implementations(SimtFunctions(loop_functions), override=True)
    return interpreter


def find_function(module: ModuleOp, name: str) -> func.FuncOp:
    function = SymbolTable.lookup_symbol(module, name)
    if isinstance(function, func.FuncOp):
        return function
    functions = (op for op in module.ops if isinstance(op, func.FuncOp))
    available = ", ".join(f"@{op.sym_name.data}" for op in functions)
    problem = f"no function @{name}" if function is None else f"@{name} is a '{function.name}'"
    raise ValueError(f"{problem}; the module's functions are: {available or 'none'}")


def check_inputs(function: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Copies of the inputs, in the representation of the function's argument types;
    raises ValueError when they do not fit the signature."""
    name = function.sym_name.data
    argument_types = function.function_type.inputs.data
    if len(inputs) != len(argument_types):
        raise ValueError(
            f"@{name} takes {len(argument_types)} arguments "
            f"({', '.join(map(str, argument_types))}) but {len(inputs)} inputs were given"
        )
    arguments = []
    for index, (array, argument_type) in enumerate(zip(inputs, argument_types)):
        shape, element_type = shape_and_element_type(argument_type)
        dtype = numpy_dtype(element_type)
        array = np.asarray(array)
        if array.shape != shape:
            raise ValueError(
                f"input #{index} has shape {list(array.shape)} but argument #{index} of "
                f"@{name} is {argument_type}"
            )
        if array.dtype != dtype:
            raise ValueError(
                f"input #{index} has dtype {array.dtype} but argument #{index} of @{name} "
                f"is {argument_type}, held as {dtype}"
            )
        # A copy, because kernels write their memref arguments in place.
        arguments.append(to_type(np.array(array), element_type))
    return arguments


class _InnermostOp(Interpreter.Listener):
    """Tracks the ops being interpreted, so that an error can say which one failed."""

    def __init__(self) -> None:
        self.running: list[Operation] = []

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        self.running.append(op)

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        self.running.pop()


def run_module(
    module: ModuleOp, inputs: Sequence[np.ndarray], function: str = "forward"
) -> list[np.ndarray]:
    """Runs the host function `function` of a verified module on `inputs` (one array per
    argument, of the argument's shape and dtype; bf16 as float32) and returns copies of its
    results. Raises ValueError for inputs that do not fit, ExecutionError when an op fails."""
    function_op = find_function(module, function)
    arguments = check_inputs(function_op, inputs)
    innermost = _InnermostOp()
    interpreter = make_interpreter(module, [innermost])
    try:
        with np.errstate(all="ignore"):
            results = interpreter.call_op(function_op, tuple(arguments))
    except Exception as error:
        failed = innermost.running[-1] if innermost.running else function_op
        raise ExecutionError(failed, error) from error
    return [np.array(result) for result in results]


def random_inputs(function: func.FuncOp, seed: int = 0) -> list[np.ndarray]:
    """Fresh inputs for `function`: standard normal floats, integers from 0 to 15, random
    booleans."""
    rng = np.random.default_rng(seed)
    inputs = []
    for argument_type in function.function_type.inputs.data:
        shape, element_type = shape_and_element_type(argument_type)
        if numpy_dtype(element_type).kind == "f":
            values = rng.standard_normal(shape)
        else:
            values = rng.integers(0, 16, shape)
        inputs.append(to_type(values, element_type))
    return inputs
