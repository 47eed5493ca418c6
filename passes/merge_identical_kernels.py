"""`merge-identical-kernels`: kernels that differ only in their names become one, which every
launch of them calls.

    loop.kernel @k_linear(%w: memref<..>, %x: memref<..>) { B }
    loop.kernel @k_linear_1(%w: memref<..>, %x: memref<..>) { B }
    loop.launch @k_linear_1(%w1, %h) : ...          ->      loop.launch @k_linear(%w1, %h) : ...

A model of N identical layers lowers to N copies of each layer's kernels, each named apart
(`k_linear`, `k_linear_1`, ...). Merged, every later pass lowers, the cuda target prints and
the compiler compiles each distinct kernel once (an 8-layer Llama prefill: 99 kernels, 17
distinct), so the pipeline runs it as soon as kernels are loop kernels, and again on Kernel
IR, where kernels that lowering made equal (or a program given at that level) meet. It works
on the kernels of any level (`KernelSymbolOp` and `LaunchOpBase`). Kernels are the same when
their properties but the name, attributes and bodies are structurally equal
(`Operation.is_structurally_equivalent`, which ignores the names of values); the first in the
module is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.passes import ModulePass

from emmy.dialects.launch import KernelSymbolOp, LaunchOpBase


def _unnamed_properties(func: KernelSymbolOp) -> dict:
    return {k: v for k, v in func.properties.items() if k != "sym_name"}


def _same_kernel(first: KernelSymbolOp, second: KernelSymbolOp) -> bool:
    return (
        _unnamed_properties(first) == _unnamed_properties(second)
        and first.attributes == second.attributes
        and first.body.is_structurally_equivalent(second.body)
    )


@dataclass(frozen=True)
class MergeIdenticalKernelsPass(ModulePass):
    """Calls one kernel for each set of identical ones (see the module docstring)."""

    name = "merge-identical-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kept: list[KernelSymbolOp] = []
        renamed: dict[str, str] = {}
        for func in [o for o in op.body.block.ops if isinstance(o, KernelSymbolOp)]:
            same = next((k for k in kept if _same_kernel(k, func)), None)
            if same is None:
                kept.append(func)
                continue
            renamed[func.sym_name.data] = same.sym_name.data
            op.body.block.erase_op(func)
        if not renamed:
            return
        for launch in op.walk():
            if isinstance(launch, LaunchOpBase):
                name = launch.kernel.root_reference.data
                if name in renamed:
                    launch.kernel = SymbolRefAttr(renamed[name])
