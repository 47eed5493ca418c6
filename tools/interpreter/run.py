"""Runs a program's host function on the CPU, at any level from Torch IR to Kernel IR.

    outputs = run_module(module, [x, w])           # numpy arrays in, numpy arrays out

    func.func @forward(%x: tensor<32x2048xf32>, %w: tensor<2048xf32>) -> tensor<32x2048xf32>

Every SSA value is a numpy array and every op runs once over whole arrays, so a kernel over
32x2048 elements takes milliseconds. Each level has its module: `scalar` (arith, math),
`torch_ops` (PyTorch's own CPU ops), `prim`, `fused`, `host` (buffers), `loop` (Loop and Tile
IR) and `simt` (Kernel IR, every thread of a block at once).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Operation
from xdsl.traits import SymbolTable

from emmy.dialects.sizes import DynamicSize
from emmy.dialects.torch import Torch
from emmy.tools.interpreter.fused import FusedFunctions
from emmy.tools.interpreter.host import HostFunctions
from emmy.tools.interpreter.index_bounds import index_bounds
from emmy.tools.interpreter.loop import LoopFunctions, OutOfBounds
from emmy.tools.interpreter.prim import PrimFunctions
from emmy.tools.interpreter.scalar import (
    ScalarFunctions,
    numpy_dtype,
    shape_and_element_type,
    to_type,
)
from emmy.tools.interpreter.simt import SimtFunctions


class ExecutionError(Exception):
    """An op failed while running; `op` is the innermost op that was being interpreted and
    `cause` what it raised."""

    summary = ""
    """What went wrong in the user's terms, before the op and its error."""

    def __init__(self, op: Operation, cause: Exception):
        super().__init__(f"{self.summary}while running '{op.name}': {cause}")
        self.op = op
        self.cause = cause


class ExecutionIndexError(ExecutionError, IndexError, RuntimeError):
    """An access outside its buffer (`OutOfBounds`): code that catches what eager PyTorch
    raises for an index outside its dim catches it too (an IndexError from indexing and
    embeddings, a RuntimeError from gather and index_select)."""

    summary = "an index is outside its dim, which eager PyTorch refuses too; "


def make_interpreter(
    module: ModuleOp, listeners: Sequence[Interpreter.Listener] = ()
) -> Interpreter:
    """An interpreter that runs `module` at any level, from Torch IR to Kernel IR."""
    interpreter = Interpreter(module, index_bitwidth=64, listeners=tuple(listeners))
    # ScalarFunctions stands in for xDSL's ArithFunctions and MathFunctions, which compute on
    # one FloatAttr or IntegerAttr at a time and would claim the same ops.
    loop_functions = LoopFunctions()
    for functions in (
        FuncFunctions(),
        HostFunctions(),
        ScalarFunctions(),
        PrimFunctions(),
        FusedFunctions(),
        loop_functions,
    ):
        interpreter.register_implementations(functions)
    if any(op.dialect_name() == Torch.name for op in module.walk()):
        # Only Torch IR runs on PyTorch: a module below it runs without loading PyTorch.
        from emmy.tools.interpreter.torch_ops import TorchFunctions

        interpreter.register_implementations(TorchFunctions())
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


def check_inputs(
    function: func.FuncOp, inputs: Sequence[np.ndarray], dynamic: DynamicSize | None = None
) -> tuple[list[np.ndarray], int | None]:
    """Copies of the inputs, in the representation of the function's argument types, and
    the dynamic size they give; raises ValueError when they do not fit the signature (with a
    dynamic size: when their static dims differ, their `?` dims disagree, or the size is
    outside its range)."""
    name = function.sym_name.data
    argument_types = function.function_type.inputs.data
    if len(inputs) != len(argument_types):
        raise ValueError(
            f"@{name} takes {len(argument_types)} arguments "
            f"({', '.join(map(str, argument_types))}) but {len(inputs)} inputs were given"
        )
    declared = [shape_and_element_type(t)[0] for t in argument_types]
    size = None
    if dynamic is not None:
        names = [f"#{i}" for i in range(len(inputs))]
        size = dynamic.check_inputs([np.shape(a) for a in inputs], declared, names)
    arguments = []
    for index, (array, argument_type) in enumerate(zip(inputs, argument_types)):
        shape, element_type = shape_and_element_type(argument_type)
        dtype = numpy_dtype(element_type)
        array = np.asarray(array)
        if dynamic is None and array.shape != shape:
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
    return arguments, size


class _InnermostOp(Interpreter.Listener):
    """Tracks the ops being interpreted, so that an error can say which one failed: per Python
    thread, since the SIMT emulator runs blocked regions as tasks in threads of their own (one
    at a time, so the thread that started an op last is the one that failed)."""

    def __init__(self) -> None:
        self.running: dict[int, list[Operation]] = {}
        self.last_thread = threading.get_ident()

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        self.last_thread = threading.get_ident()
        self.running.setdefault(self.last_thread, []).append(op)

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        self.running[threading.get_ident()].pop()

    def innermost(self) -> Operation | None:
        running = self.running.get(self.last_thread)
        return running[-1] if running else None


def run_module(
    module: ModuleOp, inputs: Sequence[np.ndarray], function: str = "forward"
) -> list[np.ndarray]:
    """Runs the host function `function` of a verified module on `inputs` (one array per
    argument, of the argument's shape and dtype; bf16 as float32) and returns copies of its
    results. Raises ValueError for inputs that do not fit, ExecutionError when an op fails.
    Float errors (overflow, division by zero, NaN) follow IEEE and are not reported."""
    function_op = find_function(module, function)
    arguments, size = check_inputs(function_op, inputs, DynamicSize.of(module))
    innermost = _InnermostOp()
    interpreter = make_interpreter(module, [innermost])
    if size is not None:
        interpreter.set_data(HostFunctions, HostFunctions.DYNAMIC_SIZE, size)
    try:
        with np.errstate(all="ignore"):
            results = interpreter.call_op(function_op, tuple(arguments))
    except Exception as error:
        failed = innermost.innermost() or function_op
        kind = ExecutionIndexError if isinstance(error, OutOfBounds) else ExecutionError
        # Not chained: xDSL's diagnostics on the way print the whole module, hundreds of
        # lines above the one that says what failed.
        raise kind(failed, error) from None
    return [np.array(result) for result in results]


def random_inputs(
    function: func.FuncOp, seed: int = 0, size: int | None = None
) -> list[np.ndarray]:
    """Fresh inputs for `function`: standard normal floats, random booleans, and integers
    from 0 to 15, or below the size of the dim they index (`index_bounds`: an embedding's
    indices below its number of rows); `size` for the `?` dims of a dynamic program."""
    bounds = index_bounds(function)
    rng = np.random.default_rng(seed)
    inputs = []
    for position, argument_type in enumerate(function.function_type.inputs.data):
        shape, element_type = shape_and_element_type(argument_type)
        if DYNAMIC_INDEX in shape:
            assert size is not None, "a dynamic program's inputs need a size"
            shape = tuple(size if d == DYNAMIC_INDEX else d for d in shape)
        if numpy_dtype(element_type).kind == "f":
            values = rng.standard_normal(shape)
        else:
            values = rng.integers(0, bounds.get(position, 16), shape)
        inputs.append(to_type(values, element_type))
    return inputs
