"""Fused IR on the CPU: a `fused.kernel` runs its region on its operands and returns what its
`fused.yield` yields.

    %y = fused.kernel @k_scale(%x, %w) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
    ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>):  // %x and %w
      ...                                          // prim ops, on numpy
      fused.yield %r : tensor<4x8xf32>             // %y
    }
"""

from __future__ import annotations

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

from emmy.dialects import fused


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
