"""Host buffers for the CPU interpreter: `memref.alloc` makes a numpy array, NaN-filled.

    %y = memref.alloc() : memref<32x2048xf32>      // np.full((32, 2048), nan, np.float32)
    %s = memref.dim %x, %c0 : memref<?x64xf32>     // x.shape[0]: the dynamic size
    %z = memref.alloc(%s) : memref<?x64xf32>       // np.full((s, 64), nan, np.float32)
    %w = memref.get_global @weight : memref<2048xf32>
    memref.dealloc %y : memref<32x2048xf32>        // nothing

`func.func`, `func.call` and `func.return` run through xDSL's `FuncFunctions`; the launches of
kernels are run by the level of the kernel (`loop.py` for `loop.launch` and `tile.launch`,
`simt.py` for `kernel.launch`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, ShapedType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.utils.exceptions import InterpretationError

from emmy.tools.interpreter.scalar import dense_array, numpy_dtype


def concrete_shape(interpreter: Interpreter, shaped_type: ShapedType) -> tuple[int, ...]:
    """The shape of a value of `shaped_type` in this run: a `?` is the dynamic size, which
    `run_module` found in the inputs."""
    shape = tuple(shaped_type.get_shape())
    if DYNAMIC_INDEX not in shape:
        return shape
    size = interpreter.get_data(HostFunctions, HostFunctions.DYNAMIC_SIZE, _no_dynamic_size)
    return tuple(size if d == DYNAMIC_INDEX else d for d in shape)


def _no_dynamic_size() -> int:
    raise InterpretationError("a ? dim in a run whose inputs gave no dynamic size")


@register_impls
class HostFunctions(InterpreterFunctions):
    """Buffers on the host side. A fresh buffer holds NaN (floats) or zero (integers), so that
    an element a kernel forgets to write shows up; a `memref.global` is its dense value."""

    DYNAMIC_SIZE = "dynamic_size"
    """Interpreter data: the program's dynamic size in this run (`concrete_shape`)."""

    @impl(memref.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues
    ) -> PythonValues:
        memref_type = op.memref.type
        dtype = numpy_dtype(memref_type.get_element_type())
        sizes = iter(args)
        shape = [int(next(sizes)) if d == DYNAMIC_INDEX else d for d in memref_type.get_shape()]
        return (np.full(shape, np.nan if dtype.kind == "f" else 0, dtype),)

    @impl(memref.DimOp)
    def run_dim(
        self, interpreter: Interpreter, op: memref.DimOp, args: PythonValues
    ) -> PythonValues:
        buffer, dim = args
        return (buffer.shape[int(dim)],)

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
        # A buffer of its own, writable like any other.
        return (dense_array(global_op.initial_value, op.memref.type).copy(),)
