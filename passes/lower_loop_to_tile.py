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
contract's indexing maps (dims `d0..` and `k` are the gemm's `b0.., m, n` and `k`), its rhs
(several for siblings, whose columns the tile's N covers) and its epilogue; its grid is the
gemm's tiles (N tiles, M tiles, batch):

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

A kernel of one `loop.attention` under a contraction's schedule becomes a
kernel of one `tile.attention` with the schedule's fields, its grid the blocks of query rows
(x) and the batch and heads (z).

Nothing is decided here (`choose-tile-schedule` decides): each loop gets the mapping and
vector width the schedule gives its path (serial when it gives none), and each staging a
`tile.stage` of the rows of its buffer that the loops inside its grid loop read. The kernel
keeps the schedule it was lowered with. A kernel without a schedule, or one its schedule does
not fit, is an error at the kernel.

The nests of a `loop.kernel` run in order; those of a `tile.kernel` of more than one block at
once (its blocks take their shares of every nest, and nothing orders blocks). So a kernel
whose grid has more than one block and whose later nest depends on an earlier one through
memory (reads or writes a buffer it writes, or writes one it reads; see
`emmy.dialects.dependences`) becomes several tile kernels, launched one after another where
the loop kernel was: each nest goes into the launch after that of the latest nest it
depends on, with the top-level ops it passes values to in registers; each kernel has its
own grid and the schedule of its nests (their paths counted from 0), and is named `@k`,
`@k_1`, ... (a name no symbol has):

    loop.kernel @k(%x, %t, %y) {               tile.kernel @k(%x, %t, %y) grid [16, 1, 1] ...
      loop.for %i in 0 to 8192 { t[i] = x[i] }   tile.for %i in 0 to 8192 map global { ... }
      loop.for %i in 0 to 8192 {             tile.kernel @k_1(%x, %t, %y) grid [16, 1, 1] ...
        y[i] = t[8191 - i]                       tile.for %i in 0 to 8192 map global { ... }
      }                                      func.func @forward(...) {
    }                                          tile.launch @k(...)
                                               tile.launch @k_1(...)

A kernel of one block keeps its nests together: `lower-tile-to-kernel` puts a barrier between
dependent ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from emmy.dialects import loop, tile
from emmy.dialects.dependences import Accessed, Dependence
from emmy.dialects.effects import written_values
from emmy.dialects.sizes import representative_size
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


def _grid(
    nests: Sequence[Operation], block: Sequence[int], limits: Sequence[int], representative: int
) -> list[int]:
    """The blocks along each grid dimension: the most that any tile.for of `nests` needs (a
    chain of grid loops needs its iterations, a global loop its iterations in blocks'
    worth; a loop to the dynamic size `representative` iterations; a block of several rows
    takes as many rows iterations), within the target's `limits`."""
    threads = prod(block)
    extents = [1, 1, 1]
    for for_op in (f for nest in nests for f in nest.walk() if isinstance(f, tile.ForOp)):
        mapping = for_op.mapping.data
        if mapping == Mapping.GLOBAL:
            per_block = threads * for_op.vector_width
            trips = for_op.planned_trip_count(representative)
            extents[0] = max(extents[0], -(-trips // per_block))
        elif mapping in GRID_MAPPINGS:
            chain, op = [], for_op
            while isinstance(op, tile.ForOp):
                if op.mapping.data == mapping:
                    chain.append(op)
                op = op.parent_op()
            dimension = tile.grid_dimensions(mapping)[0]
            trips = prod(f.planned_trip_count(representative) for f in chain)
            rows = block[1] if mapping == Mapping.ROWS else 1
            extents[dimension] = max(extents[dimension], -(-trips // rows))
    return [min(limit, extent) for limit, extent in zip(limits, extents)]


def _launch_groups(ops: Sequence[Operation]) -> list[list[Operation]]:
    """The top-level ops of a kernel of several blocks (but constants, which each group makes
    its own), in groups to launch one after another, in order within each: an op goes in
    the group after the latest of the ops before it that it depends on through memory, with
    the ops that pass it values or take values from it, which cannot cross a launch."""
    ops = [op for op in ops if not isinstance(op, arith.ConstantOp)]
    together = {op: op for op in ops}
    """Each op's representative among the ops that values pass between (a union-find)."""

    def unit(op: Operation) -> Operation:
        while together[op] is not op:
            op = together[op]
        return op

    for op in ops:
        for inner in op.walk():
            for operand in inner.operands:
                if isinstance(operand.owner, Operation) and operand.owner in together:
                    together[unit(operand.owner)] = unit(op)
    accessed = [(op, Accessed.by(op)) for op in ops]
    dependences = [
        dependence
        for position, later in enumerate(accessed)
        for earlier in accessed[:position]
        if (dependence := Dependence.between(earlier, later))
    ]
    group = dict.fromkeys((unit(op) for op in ops), 0)
    rounds = 0
    while apart := [d for d in dependences if group[unit(d.later)] <= group[unit(d.earlier)]]:
        # Each round settles one more unit of a longest chain; one more than there are
        # units, or a unit that depends on itself, is a cycle no order of launches breaks.
        if rounds > len(group) or any(unit(d.earlier) is unit(d.later) for d in apart):
            loops = [op for op in ops if isinstance(op, tile.ForOp)]

            def name(op: Operation) -> str:
                return f"loop [{loops.index(op)}]" if op in loops else f"'{op.name}'"

            raise ScheduleError(
                f"{apart[0].explain(name)}, so they must run in separate launches (the blocks "
                "of one run their shares of every nest at once), but values pass between them "
                "in registers too, which launches do not share"
            )
        for dependence in apart:
            group[unit(dependence.later)] = group[unit(dependence.earlier)] + 1
        rounds += 1
    return [
        [op for op in ops if group[unit(op)] == number]
        for number in range(max(group.values(), default=0) + 1)
    ]


def _uses(op: Operation, value: SSAValue) -> bool:
    return any(operand is value for inner in op.walk() for operand in inner.operands)


def _group_kernel(
    name: str,
    kernel: loop.KernelOp,
    body: Block,
    group: Sequence[Operation],
    schedule: Schedule,
    limits: Sequence[int],
) -> tile.KernelOp:
    """The tile kernel of the top-level ops `group` of `body`, constants aside (copies, with
    the constants of `body` they use), scheduled by `schedule`'s part for its loops (their
    paths counted from the group's first loop)."""
    copy = Block(arg_types=kernel.argument_types)
    values: dict[SSAValue, SSAValue] = {}
    for old, new in zip(body.args, copy.args):
        new.name_hint = old.name_hint
        values[old] = new
    for constant in body.ops:
        if isinstance(constant, arith.ConstantOp) and any(
            _uses(op, constant.result) for op in group
        ):
            copy.add_op(constant.clone(value_mapper=values))
    for op in group:
        copy.add_op(op.clone(value_mapper=values))
    loops = [op for op in body.ops if isinstance(op, tile.ForOp)]
    renumbered = {
        loops.index(op): index
        for index, op in enumerate(o for o in group if isinstance(o, tile.ForOp))
    }

    def moved(path: LoopPath) -> LoopPath:
        return (renumbered[path[0]], *path[1:])

    part = replace(
        schedule,
        loops=tuple((moved(p), s) for p, s in schedule.loops if p[0] in renumbered),
        stages=tuple(
            replace(s, loop=moved(s.loop)) for s in schedule.stages if s.loop[0] in renumbered
        ),
    )
    grid = _grid(group, schedule.block, limits, representative_size(kernel))
    return _kernel(name, kernel, copy, grid, part)


def _kernel(
    name: str, kernel: loop.KernelOp, body: Block, grid: Sequence[int], schedule: Schedule
) -> tile.KernelOp:
    lowered = tile.KernelOp(name, kernel.argument_types, grid, schedule.block, Region(body))
    lowered.attributes[tile.SCHEDULE_ATTRIBUTE] = ScheduleAttr(schedule)
    if tile.TUNED_ATTRIBUTE in kernel.attributes:
        lowered.attributes[tile.TUNED_ATTRIBUTE] = kernel.attributes[tile.TUNED_ATTRIBUTE]
    lowered.location = kernel.location
    return lowered


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
            reduction = op.reduction_in(tile.YieldOp)
            body = Block(arg_types=[op.induction_var.type])
            body.args[0].name_hint = op.induction_var.name_hint
            values[op.induction_var] = body.args[0]
            for buffer, row, mode in stages.get(op, ()):
                body.add_op(tile.StageOp(values[buffer], [values[i] for i in row], mode))
            _convert_body(op.body.block, body, schedule, paths, stages, values)
            mapped = schedule.loop(paths[op])
            upper = values[op.dynamic_upper] if op.dynamic_upper is not None else op.bound
            converted = tile.ForOp(
                op.lower.data, upper, mapped.mapping, Region(body), reduction, mapped.vector
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


def _attention_body(
    attention: loop.AttentionOp,
    schedule: Schedule,
    values: dict[SSAValue, SSAValue],
    body: Block,
) -> tile.AttentionOp:
    """The tile.attention of the kernel's one loop.attention, with the schedule's fields."""
    assert schedule.mma_atom is not None
    mask = None if attention.mask is None else values[attention.mask]
    lowered = tile.AttentionOp(
        *(values[v] for v in (attention.query, attention.key, attention.value)),
        mask,
        values[attention.out],
        attention.scale.value.data,
        attention.causal is not None,
        schedule.mma_atom,
        schedule.tile_shape,
        schedule.warps,
        schedule.pipeline_depth,
        schedule.split,
    )
    lowered.location = attention.location
    body.add_op(lowered)
    return lowered


def _gemm_maps(contract: loop.ContractOp) -> tuple[int, list[list[int]]]:
    """The tile.gemm's operand maps of a loop.contract's, and how many batch dims of extent 1
    the gemm puts before the contract's dims. A tile.gemm operand walks a dim with each of
    its own, where a loop.contract's reads a size-1 dim at index 0 (a [1, K] row of a decode
    step, a [1, S, K] input's batch of one): such a dim walks, in order, m where the operand
    is the lhs of one row and does not walk it, then the batch dims of extent 1 the operand
    does not walk, then unit batch dims of the gemm's own. A rhs of one column (a
    matrix-vector product's vector) keeps its 0: a loop nest of a dot product per row reads
    the matrix as fast, over more blocks than its tiles would have."""
    extents = contract.parallel_extents
    rank = len(extents)
    operands = []
    for dims, unit_dims in (
        (contract.lhs_dims, (rank - 2, *range(rank - 2))),
        (contract.rhs_dims, range(rank - 2)),
    ):
        free = iter(d for d in unit_dims if extents[d] == 1 and d not in dims)
        operands.append([next(free, None) if d is None else d for d in dims])
    if rank - 1 not in operands[1]:
        raise ScheduleError(
            "the contract's rhs is one column read at index 0, which a tile.gemm's operand "
            "map cannot say (it walks n)"
        )
    units = max(dims.count(None) for dims in operands)
    maps = []
    for dims in operands:
        unit_dims = iter(range(units))
        maps.append([next(unit_dims) if d is None else d + units for d in dims])
    return units, maps


def _contraction_body(
    kernel: loop.KernelOp, schedule: Schedule, values: dict[SSAValue, SSAValue], body: Block
) -> tile.GemmOp | tile.AttentionOp:
    """The tile.gemm of the kernel's one loop.contract, with the schedule's fields; the
    constants beside it (hoisted from its epilogue) move into the gemm's epilogue. The
    tile.attention of its one loop.attention."""
    constants = [op for op in kernel.body.block.ops if isinstance(op, arith.ConstantOp)]
    ops = [op for op in kernel.body.block.ops if not isinstance(op, arith.ConstantOp)]
    if len(ops) == 1 and isinstance(ops[0], loop.AttentionOp):
        return _attention_body(ops[0], schedule, values, body)
    if len(ops) != 1 or not isinstance(ops[0], loop.ContractOp):
        raise ScheduleError(
            "a contraction's schedule (with a tile) is for a kernel whose body is one "
            "loop.contract (and constants) or one loop.attention"
        )
    contract = ops[0]
    units, maps = _gemm_maps(contract)
    epilogue = Block(
        arg_types=[IndexType()] * units + [a.type for a in contract.epilogue.block.args]
    )
    for old, new in zip(contract.epilogue.block.args, epilogue.args[units:]):
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
        [values[rhs] for rhs in contract.rhs],
        maps[1],
        schedule.mma_atom,
        schedule.tile_shape,
        schedule.warps,
        schedule.pipeline_depth,
        Region(epilogue),
        schedule.raster,
        schedule.split,
        schedule.cluster,
    )
    gemm.location = contract.location
    body.add_op(gemm)
    return gemm


def lower_kernel(
    kernel: loop.KernelOp,
    schedule: Schedule,
    name: Callable[[int], str] | None = None,
) -> list[tile.KernelOp]:
    """`kernel` scheduled by `schedule`, verified: one tile kernel, or the kernels to launch
    one after another where its nests depend on each other (see the module docstring), the
    first named as `kernel`, part `n` as `name(n)` (`<kernel>_<n>` if not given); a
    ScheduleError says why it cannot be."""
    for op in kernel.body.block.ops:
        if isinstance(op, loop.ContractOp | loop.AttentionOp) and not schedule.is_contraction:
            expansion = "expand-" + op.name.replace(".", "-")
            raise ScheduleError(
                f"a {op.name} takes a contraction's schedule (with a tile); {expansion} gives "
                "the loop nest that other schedules map"
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
    first = kernel.sym_name.data
    if schedule.is_contraction:
        gemm = _contraction_body(kernel, schedule, values, body)
        try:
            grid = list(gemm.grid(target, representative_size(kernel)))
        except VerifyException as error:
            raise ScheduleError(str(error)) from None
        lowered = [_kernel(first, kernel, body, grid, schedule)]
    else:
        _convert_body(kernel.body.block, body, schedule, paths, stages, values)
        limits = target.max_grid_shape
        grid = _grid(list(body.ops), schedule.block, limits, representative_size(kernel))
        groups = _launch_groups(list(body.ops)) if prod(grid) > 1 else []
        if len(groups) > 1:
            lowered = [
                _group_kernel(
                    first if not part else name(part) if name else f"{first}_{part}",
                    kernel,
                    body,
                    group,
                    schedule,
                    limits,
                )
                for part, group in enumerate(groups)
            ]
        else:
            lowered = [_kernel(first, kernel, body, grid, schedule)]
    # A tile.kernel is a module-level symbol whose limits are its module's target's: it is
    # verified in a module for the GPU that `kernel`'s module is for.
    ModuleOp(lowered, {TARGET_ATTRIBUTE: TargetAttr(target.arch)})
    try:
        for verified in lowered:
            verified.verify()
    except VerifyException as error:
        raise ScheduleError(str(error)) from None
    finally:
        for verified in lowered:
            verified.detach()
    return lowered


@dataclass(frozen=True)
class LowerLoopToTilePass(ModulePass):
    """Lowers each loop.kernel to the tile.kernel its #tile.schedule says (see the module
    docstring)."""

    name = "lower-loop-to-tile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # A nested builtin.module has a sym_name that may be unset.
        symbols = {
            name.data
            for o in op.body.block.ops
            if isinstance(name := getattr(o, "sym_name", None), StringAttr)
        }
        launched: dict[str, list[str]] = {}

        def unused(name: str, part: int) -> str:
            """The name of part `part` of kernel `name`: `<name>_<part>`, or with a further
            suffix where that is taken."""
            candidate, suffix = f"{name}_{part}", 0
            while candidate in symbols:
                suffix += 1
                candidate = f"{name}_{part}_{suffix}"
            return candidate

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
                lowered = lower_kernel(kernel, attribute.data, lambda part: unused(name, part))
            except ScheduleError as error:
                raise PassFailedException(
                    f"cannot apply the schedule of @{name}: {error}", kernel
                ) from None
            for part in lowered:
                op.body.block.insert_op_before(part, kernel)
                symbols.add(part.sym_name.data)
            launched[name] = [part.sym_name.data for part in lowered]
            op.body.block.erase_op(kernel, safe_erase=False)
        for launch in [o for o in op.walk() if isinstance(o, loop.LaunchOp)]:
            parent = launch.parent_block()
            for part in launched.get(launch.kernel.root_reference.data, []):
                replacement = tile.LaunchOp(part, launch.arguments)
                replacement.location = launch.location
                parent.insert_op_before(replacement, launch)
            parent.erase_op(launch)
