"""Named pipelines: the chain of passes from Torch IR down to each level.

Each stage is the short list of passes that takes a program from the level above to its own
level; a pipeline to a level runs every stage down to it. The pipelines are registered like
passes (`emmy-opt --torch-to-loop in.mlir`), and `emmy compile --ir LEVEL` runs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from emmy.passes.choose_tile_schedule import ChooseTileSchedulePass
from emmy.passes.decompose_torch import DecomposeTorchPass
from emmy.passes.expand_loop_contract import ExpandLoopContractPass
from emmy.passes.fold_reshapes import FoldReshapesPass
from emmy.passes.fuse_prims import FusePrimsPass
from emmy.passes.hoist_invariant_reciprocals import HoistInvariantReciprocalsPass
from emmy.passes.lower_fused_to_loop import LowerFusedToLoopPass
from emmy.passes.lower_loop_to_tile import LowerLoopToTilePass
from emmy.passes.lower_tile_to_kernel import LowerTileToKernelPass

STAGES: dict[str, tuple[ModulePass, ...]] = {
    "prim": (DecomposeTorchPass(),),
    "fused": (FoldReshapesPass(), FusePrimsPass()),
    "loop": (
        LowerFusedToLoopPass(),
        HoistInvariantReciprocalsPass(),
        CanonicalizePass(),
        CommonSubexpressionElimination(),
    ),
    "tile": (ChooseTileSchedulePass(), ExpandLoopContractPass(), LowerLoopToTilePass()),
    "kernel": (
        LowerTileToKernelPass(),
        CanonicalizePass(),
        CommonSubexpressionElimination(),
    ),
}

LEVELS = ("torch", *STAGES)
"""Every level a program can be shown or run at, from the top."""


def passes_to(level: str) -> list[ModulePass]:
    """The passes that take a Torch IR program to `level`."""
    if level not in LEVELS:
        raise ValueError(f"unknown level '{level}'; the levels are {', '.join(LEVELS)}")
    stages = list(STAGES)[: LEVELS.index(level)]
    return [p for stage in stages for p in STAGES[stage]]


@dataclass(frozen=True)
class TorchToLevelPipeline(ModulePass):
    """Runs every stage from Torch IR down to `level`."""

    level: ClassVar[str]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for stage in passes_to(self.level):
            stage.apply(ctx, op)


@dataclass(frozen=True)
class TorchToPrimPipeline(TorchToLevelPipeline):
    """Pipeline: Torch IR to Tensor IR (decompose-torch)."""

    name = "torch-to-prim"
    level = "prim"


@dataclass(frozen=True)
class TorchToFusedPipeline(TorchToLevelPipeline):
    """Pipeline: Torch IR to Fused IR (decompose-torch, fuse-prims)."""

    name = "torch-to-fused"
    level = "fused"


@dataclass(frozen=True)
class TorchToLoopPipeline(TorchToLevelPipeline):
    """Pipeline: Torch IR to Loop IR (..., lower-fused-to-loop, hoist-invariant-reciprocals,
    canonicalize, cse)."""

    name = "torch-to-loop"
    level = "loop"


@dataclass(frozen=True)
class TorchToTilePipeline(TorchToLevelPipeline):
    """Pipeline: Torch IR to Tile IR (..., choose-tile-schedule, expand-loop-contract,
    lower-loop-to-tile)."""

    name = "torch-to-tile"
    level = "tile"


@dataclass(frozen=True)
class TorchToKernelPipeline(TorchToLevelPipeline):
    """Pipeline: Torch IR to Kernel IR (..., lower-tile-to-kernel, canonicalize, cse)."""

    name = "torch-to-kernel"
    level = "kernel"


PIPELINES = (
    TorchToPrimPipeline,
    TorchToFusedPipeline,
    TorchToLoopPipeline,
    TorchToTilePipeline,
    TorchToKernelPipeline,
)
