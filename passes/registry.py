"""The registry of passes that `emmy-opt` and the `emmy` driver know by name.

A pass author adds a pass by listing its class here, or at run time with `register_pass`.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

_extra_passes: dict[str, type[ModulePass]] = {}


def register_pass(pass_class: type[ModulePass]) -> None:
    """Makes a pass from another package available to `emmy-opt` and the pipelines."""
    _extra_passes[pass_class.name] = pass_class


def registered_passes() -> dict[str, type[ModulePass]]:
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
    from emmy.passes.pipelines import PIPELINES
    from emmy.passes.place_results_in_arguments import PlaceResultsInArgumentsPass
    from emmy.passes.predicate_write_backs import PredicateWriteBacksPass
    from emmy.passes.reuse_identical_launches import ReuseIdenticalLaunchesPass

    builtin = (
        DecomposeTorchPass,
        FoldReshapesPass,
        FuseAttentionPass,
        FusePrimsPass,
        LowerFusedToLoopPass,
        PlaceResultsInArgumentsPass,
        InterchangeInvariantReductionsPass,
        HoistInvariantReciprocalsPass,
        ExpandLoopAttentionPass,
        ExpandLoopContractPass,
        ChooseTileSchedulePass,
        LowerLoopToTilePass,
        LowerTileToKernelPass,
        PredicateWriteBacksPass,
        MergeIdenticalKernelsPass,
        ReuseIdenticalLaunchesPass,
        CanonicalizePass,
        CommonSubexpressionElimination,
        DeadCodeElimination,
        *PIPELINES,
    )
    return {**{p.name: p for p in builtin}, **_extra_passes}


def pass_factories() -> dict[str, Callable[[], type[ModulePass]]]:
    """The registry in the shape xDSL's pass-pipeline parser expects."""
    return {name: (lambda p=p: p) for name, p in registered_passes().items()}
