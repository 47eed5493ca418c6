"""Named pipelines: the chain of passes from Torch IR down to each level, and `run_passes`,
the one function that runs them.

    emmy-opt --torch-to-tile=block-size=256 in.mlir
    EMMY_DUMP_DIR=dumps emmy compile -c "nn.ReLU()(torch.randn(4, 8))" --ir loop
        # dumps/001-torch-to-loop/000-input.mlir, 001-decompose-torch.mlir, ..., 009-cse.mlir

Each stage is the short list of passes that takes a program from the level above to its own
level; a pipeline to a level runs every stage down to it. The pipelines are registered like
passes (`emmy-opt --torch-to-loop in.mlir`), and `emmy-opt` runs their passes one by one: each
is dumped and timed on its own, and an option given to the pipeline goes to each of its passes
that declares it. `emmy compile --ir LEVEL` and the Python API run them through `run_passes`,
which writes the IR after every pass to numbered files when EMMY_DUMP_DIR names a folder.
"""

from __future__ import annotations

import os
import re
from abc import abstractmethod
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from emmy.passes.choose_tile_schedule import ChooseTileSchedulePass
from emmy.passes.decompose_torch import DecomposeTorchPass
from emmy.passes.expand_loop_attention import ExpandLoopAttentionPass
from emmy.passes.expand_loop_contract import ExpandLoopContractPass
from emmy.passes.fold_reshapes import FoldReshapesPass
from emmy.passes.fuse_attention import FuseAttentionPass
from emmy.passes.fuse_prims import FusePrimsPass
from emmy.passes.hoist_invariant_reciprocals import HoistInvariantReciprocalsPass
from emmy.passes.interchange_invariant_reductions import InterchangeInvariantReductionsPass
from emmy.passes.lower_fused_to_loop import LowerFusedToLoopPass
from emmy.passes.lower_loop_to_tile import LowerLoopToTilePass
from emmy.passes.lower_tile_to_kernel import LowerTileToKernelPass
from emmy.passes.merge_identical_kernels import MergeIdenticalKernelsPass
from emmy.passes.place_results_in_arguments import PlaceResultsInArgumentsPass
from emmy.passes.predicate_write_backs import PredicateWriteBacksPass
from emmy.passes.reuse_identical_launches import ReuseIdenticalLaunchesPass

STAGES: dict[str, tuple[ModulePass, ...]] = {
    "prim": (DecomposeTorchPass(),),
    # CSE before fuse-prims: a value used by several ops (a norm feeding the Q, K and V
    # projections, each reshaping it) is then one value, which its kernel writes once instead
    # of once per use. After fuse-attention, whose pattern wants each value it matches used by
    # the pattern alone (CSE merges a mask's broadcasts, say, with other uses).
    "fused": (
        FoldReshapesPass(),
        FuseAttentionPass(),
        CommonSubexpressionElimination(),
        FusePrimsPass(),
    ),
    # Results are placed in arguments while each kernel has its one launch, before kernels
    # alike are merged.
    "loop": (
        LowerFusedToLoopPass(),
        PlaceResultsInArgumentsPass(),
        MergeIdenticalKernelsPass(),
        InterchangeInvariantReductionsPass(),
        HoistInvariantReciprocalsPass(),
        CanonicalizePass(),
        CommonSubexpressionElimination(),
    ),
    "tile": (
        ChooseTileSchedulePass(),
        ExpandLoopAttentionPass(),
        ExpandLoopContractPass(),
        LowerLoopToTilePass(),
    ),
    "kernel": (
        LowerTileToKernelPass(),
        PredicateWriteBacksPass(),
        CanonicalizePass(),
        CommonSubexpressionElimination(),
        MergeIdenticalKernelsPass(),
        ReuseIdenticalLaunchesPass(),
    ),
}

LEVELS = ("torch", *STAGES)
"""Every level a program can be shown or run at, from the top; each is also the name of the
dialect that says it."""

LEVEL_TITLES = {
    "torch": "Torch IR",
    "prim": "Tensor IR",
    "fused": "Fused IR",
    "loop": "Loop IR",
    "tile": "Tile IR",
    "kernel": "Kernel IR",
}


def passes_to(level: str, start: str = "torch") -> list[ModulePass]:
    """The passes that take a program at level `start` (Torch IR by default) to `level`."""
    for name in (start, level):
        if name not in LEVELS:
            raise ValueError(f"unknown level '{name}'; the levels are {', '.join(LEVELS)}")
    stages = list(STAGES)[LEVELS.index(start) : LEVELS.index(level)]
    return [p for stage in stages for p in STAGES[stage]]


def level_of(module: ModuleOp) -> tuple[str, Operation] | None:
    """The level `module` has reached, with its first op of that level's dialect: the lowest
    level whose dialect it uses (Fused IR keeps prim ops inside its fused.kernels). None for IR
    of no level's dialect (func and arith alone)."""
    first_ops: dict[str, Operation] = {}
    for op in module.walk():
        dialect = op.name.partition(".")[0]
        if dialect in LEVELS:
            first_ops.setdefault(dialect, op)
    reached = [level for level in LEVELS if level in first_ops]
    return (reached[-1], first_ops[reached[-1]]) if reached else None


DUMP_DIR_VARIABLE = "EMMY_DUMP_DIR"


class IRDumps:
    """Numbered files of a module's IR in one folder, one per step of a pipeline:
    `000-input.mlir`, `001-decompose-torch.mlir`, ..."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.written = 0

    @classmethod
    def from_environment(cls, run_name: str) -> IRDumps | None:
        """A fresh folder under $EMMY_DUMP_DIR for one run of a pipeline, numbered after those
        already there (`003-torch-to-kernel`); None when the variable is unset or empty."""
        root = os.environ.get(DUMP_DIR_VARIABLE)
        if not root:
            return None
        Path(root).mkdir(parents=True, exist_ok=True)
        numbers = [int(m[1]) for p in Path(root).iterdir() if (m := re.match(r"(\d+)-", p.name))]
        number = max(numbers, default=0) + 1
        while True:
            # Another process may have taken the number since: the folder must be a new one.
            try:
                (folder := Path(root) / f"{number:03}-{run_name}").mkdir()
                return cls(folder)
            except FileExistsError:
                number += 1

    def write(self, step: str, ir: str) -> None:
        (self.folder / f"{self.written:03}-{step}.mlir").write_text(ir)
        self.written += 1


def printed(module: ModuleOp) -> str:
    text = StringIO()
    Printer(stream=text).print_op(module)
    return f"{text.getvalue()}\n"


def run_passes(ctx: Context, module: ModuleOp, passes: Sequence[ModulePass], name: str) -> None:
    """Applies `passes` to `module` in order: how `emmy compile`, `emmy run` and the Python API
    run a pipeline. With EMMY_DUMP_DIR set, the input and the IR after each pass go to a new
    folder under it named after the run (`name`), as `IRDumps`; a pass that fails leaves the
    IR as it was then, in `NNN-<pass>-failed.mlir`. No passes, no folder."""
    dumps = IRDumps.from_environment(name) if passes else None
    if dumps is not None:
        dumps.write("input", printed(module))
    for module_pass in passes:
        try:
            module_pass.apply(ctx, module)
        except Exception:
            if dumps is not None:
                # The pass's error is the one to report, even if IR it broke cannot print.
                with suppress(Exception):
                    dumps.write(f"{module_pass.name}-failed", printed(module))
            raise
        if dumps is not None:
            dumps.write(module_pass.name, printed(module))


class NamedPipeline(ModulePass):
    """A fixed sequence of passes registered under one name, like a pass.

    `emmy-opt` expands it into its passes, so that each is dumped and timed on its own, and
    gives each of them the pipeline's options that it declares; its options are its passes'."""

    @classmethod
    @abstractmethod
    def passes(cls) -> Sequence[ModulePass]: ...

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_passes(ctx, op, self.passes(), self.name)


@dataclass(frozen=True)
class TorchToLevelPipeline(NamedPipeline):
    """Runs every stage from Torch IR down to `level`."""

    level: ClassVar[str]

    @classmethod
    def passes(cls) -> Sequence[ModulePass]:
        return passes_to(cls.level)


@dataclass(frozen=True)
class TorchToPrimPipeline(TorchToLevelPipeline):
    """Pipeline: Torch IR to Tensor IR."""

    name = "torch-to-prim"
    level = "prim"


@dataclass(frozen=True)
class TorchToFusedPipeline(TorchToLevelPipeline):
    """Pipeline: Torch IR to Fused IR."""

    name = "torch-to-fused"
    level = "fused"


@dataclass(frozen=True)
class TorchToLoopPipeline(TorchToLevelPipeline):
    """Pipeline: Torch IR to Loop IR."""

    name = "torch-to-loop"
    level = "loop"


@dataclass(frozen=True)
class TorchToTilePipeline(TorchToLevelPipeline):
    """Pipeline: Torch IR to Tile IR."""

    name = "torch-to-tile"
    level = "tile"


@dataclass(frozen=True)
class TorchToKernelPipeline(TorchToLevelPipeline):
    """Pipeline: Torch IR to Kernel IR."""

    name = "torch-to-kernel"
    level = "kernel"


PIPELINES = (
    TorchToPrimPipeline,
    TorchToFusedPipeline,
    TorchToLoopPipeline,
    TorchToTilePipeline,
    TorchToKernelPipeline,
)
