"""`merge-identical-kernels`: kernels that differ only in their names become one, which every
launch of them calls.

    kernel.func @k_linear(%w: memref<..>, %x: memref<..>) block [384, 1, 1] { B }
    kernel.func @k_linear_1(%w: memref<..>, %x: memref<..>) block [384, 1, 1] { B }
    kernel.launch @k_linear_1(%w1, %h) ...          ->      kernel.launch @k_linear(%w1, %h) ...

A model of N identical layers lowers to N copies of each layer's kernels, each named apart
(`k_linear`, `k_linear_1`, ...); merged, the cuda target prints, and the compiler compiles,
each distinct kernel once (an 8-layer Llama prefill: 99 kernels, 29 distinct), which is most
of a cold compile's time. Kernels are the same when their launch shapes, attributes and
bodies are structurally equal (`Operation.is_structurally_equivalent`, which ignores the
names of values); the first in the module is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.passes import ModulePass

from emmy.dialects import kernel


def _unnamed_properties(func: kernel.FuncOp) -> dict:
    return {k: v for k, v in func.properties.items() if k != "sym_name"}


def _same_kernel(first: kernel.FuncOp, second: kernel.FuncOp) -> bool:
    return (
        _unnamed_properties(first) == _unnamed_properties(second)
        and first.attributes == second.attributes
        and first.body.is_structurally_equivalent(second.body)
    )


@dataclass(frozen=True)
class MergeIdenticalKernelsPass(ModulePass):
    """Calls one kernel.func for each set of identical ones (see the module docstring)."""

    name = "merge-identical-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kept: list[kernel.FuncOp] = []
        renamed: dict[str, str] = {}
        for func in [o for o in op.body.block.ops if isinstance(o, kernel.FuncOp)]:
            same = next((k for k in kept if _same_kernel(k, func)), None)
            if same is None:
                kept.append(func)
                continue
            renamed[func.sym_name.data] = same.sym_name.data
            op.body.block.erase_op(func)
        if not renamed:
            return
        for launch in op.walk():
            if isinstance(launch, kernel.LaunchOp):
                name = launch.kernel.root_reference.data
                if name in renamed:
                    launch.kernel = SymbolRefAttr(renamed[name])
