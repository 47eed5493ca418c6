"""`lower-loop-to-tile`: applies each `loop.kernel`'s `#tile.schedule`, giving Tile IR.

    loop.kernel @k_rms_norm(%x: memref<32x2048xf32>, %y: memref<32x2048xf32>) attributes {
        tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] grid,
        [0, 0] thread vector 4], stage [[0] arg 0 async]>} {
      loop.for %i in 0 to 32 {
        loop.for %j in 0 to 2048 { ... }
      }
    }

becomes

    tile.kernel @k_rms_norm(...) grid [32, 1, 1] block [512, 1, 1] attributes {...} {
      tile.for %i in 0 to 32 map grid {
        tile.stage %x[%i] async : memref<32x2048xf32>
        tile.for %j in 0 to 2048 map thread vector 4 { ... }
      }
    }

A kernel whose body is one `loop.contract` and whose schedule is a contraction's (`tile`,
`atom`, `warps`, `pipeline`) becomes a kernel of one `tile.gemm` with those fields, the
contract's indexing maps (dims `d0..` and `k` are the gemm's `b0.., m, n` and `k`) and its
epilogue; its grid is the gemm's tiles (N tiles, M tiles, batch):

    loop.kernel @k(%x: memref<70x40xbf16>, %w: memref<50x40xbf16>, %y: memref<70x50xf32>)
        attributes {tile.schedule = #tile.schedule<block [128, 1, 1], loops [],
        tile [64, 64, 32], atom mma_sync m16n8k16, warps [2, 2], pipeline 3>} {
      loop.contract (%i, %j) in [70, 50], k in 40, %acc = sum %x[d0, k] * %w[d1, k] ... {
        loop.store %acc, %y[%i, %j] : memref<70x50xf32>
      }
    }

becomes

    tile.kernel @k(...) grid [1, 2, 1] block [128, 1, 1] attributes {...} {
      tile.gemm %x[m, k] * %w[n, k] : ... atom mma_sync m16n8k16 tile [64, 64, 32]
          warps [2, 2] pipeline 3 epilogue(%i, %j, %acc) {
        memref.store %acc, %y[%i, %j] : memref<70x50xf32>
      }
    }

Nothing is decided here (`choose-tile-schedule` decides): each loop gets the mapping and
vector width the schedule gives its path (serial when it gives none), and each staging a
`tile.stage` of the rows of its buffer that the loops inside its grid loop read. The kernel
keeps the schedule it was lowered with. A kernel without a schedule, or one its schedule does
not fit, is an error at the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from emmy.dialects import loop, tile
from emmy.dialects.effects import written_values
from emmy.dialects.target import TARGET_ATTRIBUTE, TargetAttr, target_of
from emmy.dialects.tile import GRID_MAPPINGS, LoopPath, Mapping, Schedule, ScheduleAttr, StageMode

_Stages = dict[loop.ForOp, list[tuple[SSAValue, tuple[SSAValue, ...], StageMode]]]


def is_inside(value: SSAValue, region_op: Operation) -> bool:
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    while op is not None:
        if op is region_op:
            return True
        op = op.parent_op()
    return False


def enclosing_and_self(for_op: loop.ForOp) -> list[loop.ForOp]:
    chain = [for_op]
    while isinstance(chain[0].parent_op(), loop.ForOp):
        chain.insert(0, chain[0].parent_op())
    return chain


def row_known_at_top(access: loop.LoadOp, grid_loop: loop.ForOp) -> bool:
    """Whether the row `access` reads (its leading indices) is known at the top of
    `grid_loop`, where it is staged: each index is an enclosing loop's variable or is defined
    outside the loop."""
    variables = {f.induction_var for f in enclosing_and_self(grid_loop)}
    return all(
        index in variables or not is_inside(index, grid_loop) for index in access.indices[:-1]
    )


class ScheduleError(Exception):
    """The schedule does not fit its kernel."""


def _stages(kernel: loop.KernelOp, schedule: Schedule, loops: dict[LoopPath, loop.ForOp]):
    """The rows each staging copies: every row of its buffer that a load in the loops inside
    its grid loop reads and that is known at the grid loop's top."""
    written = written_values(kernel.body)
    stages: _Stages = {}
    for staging in schedule.stages:
        where = f"staging at loop {list(staging.loop)}"
        grid_loop = loops.get(staging.loop)
        if grid_loop is None:
            raise ScheduleError(f"{where}: the kernel has no such loop")
        if not 0 <= staging.argument < len(kernel.body.block.args):
            raise ScheduleError(f"{where}: the kernel has no argument {staging.argument}")
        buffer = kernel.body.block.args[staging.argument]
        if buffer in written:
            raise ScheduleError(
                f"{where}: the kernel writes argument {staging.argument}, so a staged copy "
                "of its row could go stale"
            )
        rows = {
            tuple(access.indices[:-1]): None
            for child in grid_loop.body.block.ops
            if isinstance(child, loop.ForOp)
            for access in child.body.walk()
            if isinstance(access, loop.LoadOp)
            and access.memref is buffer
            and row_known_at_top(access, grid_loop)
        }
        if not rows:
            raise ScheduleError(
                f"{where}: the loops inside it read no row of argument {staging.argument} "
                "known at its top"
            )
        stages.setdefault(grid_loop, []).extend((buffer, row, staging.mode) for row in rows)
    return stages


def _grid(schedule: Schedule, paths: dict[loop.ForOp, LoopPath], kernel: loop.KernelOp):
    """The blocks along each grid dimension: the most that any loop over it needs (a chain of
    grid loops needs its iterations, a global loop its iterations in blocks' worth)."""
    threads = prod(schedule.block)
    extents = [1, 1, 1]
    for for_op, path in paths.items():
        mapped = schedule.loop(path)
        if mapped.mapping == Mapping.GLOBAL:
            extents[0] = max(extents[0], -(-for_op.trip_count // (threads * mapped.vector)))
        elif mapped.mapping in GRID_MAPPINGS:
            dimension = tile.grid_dimensions(mapped.mapping)[0]
            chain = [
                f
                for f in enclosing_and_self(for_op)
                if schedule.loop(paths[f]).mapping == mapped.mapping
            ]
            extents[dimension] = max(extents[dimension], prod(f.trip_count for f in chain))
    limits = target_of(kernel).max_grid_shape
    return [min(limit, extent) for limit, extent in zip(limits, extents)]


def _convert_body(
    source: Block,
    target: Block,
    schedule: Schedule,
    paths: dict[loop.ForOp, LoopPath],
    stages: _Stages,
    values: dict[SSAValue, SSAValue],
):
    for op in source.ops:
        if isinstance(op, loop.ForOp):
            reduction = (op.kind.data, op.init) if op.is_reduction else None
            body = Block(arg_types=[op.induction_var.type])
            body.args[0].name_hint = op.induction_var.name_hint
            values[op.induction_var] = body.args[0]
            for buffer, row, mode in stages.get(op, ()):
                body.add_op(tile.StageOp(values[buffer], [values[i] for i in row], mode))
            _convert_body(op.body.block, body, schedule, paths, stages, values)
            mapped = schedule.loop(paths[op])
            converted = tile.ForOp(
                op.lower.data, op.upper.data, mapped.mapping, Region(body), reduction, mapped.vector
            )
        elif isinstance(op, loop.YieldOp):
            converted = tile.YieldOp(*(values[v] for v in op.arguments))
        elif isinstance(op, loop.LoadOp):
            converted = memref.LoadOp.get(values[op.memref], [values[i] for i in op.indices])
        elif isinstance(op, loop.StoreOp):
            converted = memref.StoreOp.get(
                values[op.value], values[op.memref], [values[i] for i in op.indices]
            )
        else:
            converted = op.clone(value_mapper=values)
        converted.location = op.location
        for old, new in zip(op.results, converted.results):
            new.name_hint = old.name_hint
            values[old] = new
        target.add_op(converted)


def _contraction_body(
    kernel: loop.KernelOp, schedule: Schedule, values: dict[SSAValue, SSAValue], body: Block
) -> tile.GemmOp:
    """The tile.gemm of the kernel's one loop.contract, with the schedule's fields; the
    constants beside it (hoisted from its epilogue) move into the gemm's epilogue."""
    constants = [op for op in kernel.body.block.ops if isinstance(op, arith.ConstantOp)]
    ops = [op for op in kernel.body.block.ops if not isinstance(op, arith.ConstantOp)]
    if len(ops) != 1 or not isinstance(ops[0], loop.ContractOp):
        raise ScheduleError(
            "a contraction's schedule (with a tile) is for a kernel whose body is one "
            "loop.contract (and constants)"
        )
    contract = ops[0]
    maps = []
    for what, dims in (("lhs", contract.lhs_dims), ("rhs", contract.rhs_dims)):
        if None in dims:
            raise ScheduleError(
                f"the contract's {what} is indexed at 0 along a dimension, which a tile.gemm's "
                "operand map cannot say"
            )
        maps.append(dims)
    epilogue = Block(arg_types=[a.type for a in contract.epilogue.block.args])
    for old, new in zip(contract.epilogue.block.args, epilogue.args):
        new.name_hint = old.name_hint
        values[old] = new
    for constant in constants:
        clone = constant.clone()
        clone.result.name_hint = constant.result.name_hint
        values[constant.result] = clone.result
        epilogue.add_op(clone)
    _convert_body(contract.epilogue.block, epilogue, schedule, {}, {}, values)
    assert schedule.mma_atom is not None
    gemm = tile.GemmOp(
        values[contract.lhs],
        maps[0],
        values[contract.rhs],
        maps[1],
        schedule.mma_atom,
        schedule.tile_shape,
        schedule.warps,
        schedule.pipeline_depth,
        Region(epilogue),
        schedule.raster,
    )
    gemm.location = contract.location
    body.add_op(gemm)
    return gemm


def lower_kernel(kernel: loop.KernelOp, schedule: Schedule) -> tile.KernelOp:
    """`kernel` scheduled by `schedule`, verified; a ScheduleError says why it cannot be."""
    if any(isinstance(op, loop.ContractOp) for op in kernel.body.block.ops) and not (
        schedule.is_contraction
    ):
        raise ScheduleError(
            "a loop.contract takes a contraction's schedule (with a tile); "
            "expand-loop-contract gives the loop nest that other schedules map"
        )
    paths = tile.loop_paths(kernel.body.block, loop.ForOp)
    loops = {path: for_op for for_op, path in paths.items()}
    for path, _ in schedule.loops:
        if path not in loops:
            raise ScheduleError(f"loop {list(path)} of the schedule is not in the kernel")
    stages = _stages(kernel, schedule, loops)
    body = Block(arg_types=kernel.argument_types)
    values: dict[SSAValue, SSAValue] = {}
    for old, new in zip(kernel.body.block.args, body.args):
        new.name_hint = old.name_hint
        values[old] = new
    target = target_of(kernel)
    if schedule.is_contraction:
        gemm = _contraction_body(kernel, schedule, values, body)
        try:
            grid = list(gemm.grid(target))
        except VerifyException as error:
            raise ScheduleError(str(error)) from None
    else:
        _convert_body(kernel.body.block, body, schedule, paths, stages, values)
        grid = _grid(schedule, paths, kernel)
    lowered = tile.KernelOp(
        kernel.sym_name.data, kernel.argument_types, grid, schedule.block, Region(body)
    )
    lowered.attributes[tile.SCHEDULE_ATTRIBUTE] = ScheduleAttr(schedule)
    lowered.location = kernel.location
    # A tile.kernel is a module-level symbol whose limits are its module's target's: it is
    # verified in a module for the GPU that `kernel`'s module is for.
    ModuleOp([lowered], {TARGET_ATTRIBUTE: TargetAttr(target.arch)})
    try:
        lowered.verify()
    except VerifyException as error:
        raise ScheduleError(str(error)) from None
    finally:
        lowered.detach()
    return lowered


@dataclass(frozen=True)
class LowerLoopToTilePass(ModulePass):
    """Lowers each loop.kernel to the tile.kernel its #tile.schedule says (see the module
    docstring)."""

    name = "lower-loop-to-tile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.body.block.ops if isinstance(k, loop.KernelOp)]:
            name = kernel.sym_name.data
            attribute = kernel.attributes.get(tile.SCHEDULE_ATTRIBUTE)
            if not isinstance(attribute, ScheduleAttr):
                raise PassFailedException(
                    f"@{name} has no #tile.schedule attribute '{tile.SCHEDULE_ATTRIBUTE}' "
                    "(choose-tile-schedule writes one)",
                    kernel,
                )
            try:
                lowered = lower_kernel(kernel, attribute.data)
            except ScheduleError as error:
                raise PassFailedException(
                    f"cannot apply the schedule of @{name}: {error}", kernel
                ) from None
            op.body.block.insert_op_before(lowered, kernel)
            op.body.block.erase_op(kernel, safe_erase=False)
        for launch in [o for o in op.walk() if isinstance(o, loop.LaunchOp)]:
            replacement = tile.LaunchOp(launch.kernel.root_reference.data, launch.arguments)
            replacement.location = launch.location
            parent = launch.parent_block()
            parent.insert_op_before(replacement, launch)
            parent.erase_op(launch)
