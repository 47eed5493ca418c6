"""`lower-fused-to-loop`: each `fused.kernel` becomes a `loop.kernel` and its launch."""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class LowerFusedToLoopPass(ModulePass):
    """Lowers fused kernels to loop nests over buffers (work in progress)."""

    name = "lower-fused-to-loop"

    keep_unit_dims: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise NotImplementedError
