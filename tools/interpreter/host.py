"""Host buffers for the CPU interpreter: `memref.alloc` makes a numpy array, NaN-filled.

    %y = memref.alloc() : memref<32x2048xf32>      // np.full((32, 2048), nan, np.float32)
    %w = memref.get_global @weight : memref<2048xf32>
    memref.dealloc %y : memref<32x2048xf32>        // nothing

`func.func`, `func.call` and `func.return` run through xDSL's `FuncFunctions`; the launches of
kernels are run by the level of the kernel (`loop.py` for `loop.launch` and `tile.launch`,
`simt.py` for `kernel.launch`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import memref
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)

from emmy.tools.interpreter.scalar import dense_array, numpy_dtype


@register_impls
class HostFunctions(InterpreterFunctions):
    """Buffers on the host side. A fresh buffer holds NaN (floats) or zero (integers), so that
    an element a kernel forgets to write shows up; a `memref.global` is its dense value."""

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
        # A buffer of its own, writable like any other.
        return (dense_array(global_op.initial_value, op.memref.type).copy(),)
