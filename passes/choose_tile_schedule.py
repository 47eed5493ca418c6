"""`choose-tile-schedule`: decides a GPU schedule for each `loop.kernel` that has none.

    loop.kernel @k_rms_norm(%x: memref<32x2048xf32>, %y: memref<32x2048xf32>)
        attributes {tile.schedule = #tile.schedule<block [512, 1, 1], loops [[0] grid,
        [0, 0] thread vector 4, [0, 1] thread vector 4], stage [[0] arg 0 async]>} { ... }

The schedule is written as the kernel's `#tile.schedule` attribute, which `lower-loop-to-tile`
applies; a kernel that already has one (written by hand, or by an autotuner from
`candidates`) keeps it. This module is the only place tuning constants live; the heuristic is
for the loop nests lower-fused-to-loop produces (one nest per output shape):
- From the root of a nest, parallel loops go to the grid while the loop holds exactly one
  loop, itself parallel and not innermost: the rows of a norm, the leading dims of an
  elementwise kernel.
- The loops directly inside the last grid loop go to the threads of a block: the columns of
  an elementwise kernel, and the reductions and the column loop of a norm or softmax, whose
  reductions are then combined across the block.
- A nest that is a single loop goes to every thread of the grid (`global`); so does a single
  reduction of SPLIT_REDUCTION_TRIP_COUNT or more iterations whose result is only stored, at
  constant indices, with a combiner and type atomics take (add, max, min on f32, f64, i32,
  i64): its blocks each reduce a part, and combine their totals with atomics
  (`split-reductions=false` keeps it in one block).
- A kernel's only nest, if elementwise (the loops inside its grid loops are parallel and
  hold no loops) and with fewer grid iterations (rows) than two per SM, is two-dimensional:
  its grid loops go to rows of blocks (`grid_y`) and the loops inside them to `global`, over
  the blocks of a row, so that 16 rows of 4096 still reach about one block per SM (a block of
  one vector per thread, sized so that the grid has about that many blocks in all).
- Everything deeper runs serially in each thread (a reduction inside a thread-mapped loop).
- Vector width: a thread or global loop that holds no loop and reads or writes along the last
  dimension at its induction variable (plus a constant) takes 16 bytes of its widest such
  element at a time (8 bf16, 4 f32), halved until it divides the loop's start and trip count.
- Staging: in the last grid loop of a nest, a row (the leading indices are the grid loops'
  variables) of a buffer the kernel only reads, loaded by two or more of the thread loops, is
  staged in shared memory, so that the passes of a norm or softmax read it from global memory
  once; asynchronously (cp.async) when the row is a whole number of 16-byte chunks. Rows are
  staged while they fit in STAGE_BUDGET_BYTES together, which leaves room for several blocks
  per SM.
- Block size: with two or more rows per SM, a thread takes VECTORS_PER_THREAD vectors of the
  widest thread-mapped loop, so the block is that fraction of its extent (in vectors) rounded
  up to a warp, at most MAX_BLOCK threads: small blocks let an SM hold many rows at once, and
  so many loads in flight; with fewer rows, which leave SMs idle anyway, a thread takes one
  vector, so that each row is done sooner.

`block-size=N`, `vector-width=N`, `stage=none|sync|async` and `split-reductions=false`
override the heuristic for every kernel it schedules.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException, VerifyException

from emmy.dialects import loop, tile
from emmy.dialects.dtypes import element_bytes
from emmy.dialects.effects import written_values
from emmy.dialects.kernel import MAX_VECTOR_BYTES, verify_block_shape
from emmy.dialects.target import GpuTarget, target_of
from emmy.dialects.tile import LoopSchedule, Mapping, Schedule, ScheduleAttr, StageMode, Staging
from emmy.passes.lower_loop_to_tile import (
    ScheduleError,
    enclosing_and_self,
    is_inside,
    lower_kernel,
    row_known_at_top,
)

MAX_BLOCK = 512
VECTORS_PER_THREAD = 4
SPLIT_REDUCTION_TRIP_COUNT = 65536
"""From this length a reduction of a whole buffer is split across blocks (shorter ones fit one
block's loads in flight)."""
MANY_ROWS_PER_SM = 2
"""Rows (grid iterations) per SM from which a thread takes several vectors; fewer rows get a
thread per vector, so that each row finishes sooner."""
SPREAD_BLOCKS_PER_SM = 1
"""The blocks per SM a two-dimensional nest aims at."""
STAGE_BUDGET_BYTES = 32 * 1024
CANDIDATE_BLOCKS = (64, 128, 256, 512, 1024)
"""The block sizes `candidates` offers besides the heuristic's."""
STAGE_CHOICES = ("auto", "none", *StageMode)


@dataclass(frozen=True)
class Overrides:
    """What the user fixed of every schedule; 0 or "auto" leaves it to the heuristic."""

    block_size: int = 0
    vector_width: int = 0
    stage: str = "auto"
    split_reductions: bool = True


def _child_loops(op: loop.ForOp) -> list[loop.ForOp]:
    return [o for o in op.body.block.ops if isinstance(o, loop.ForOp)]


def _grid_chain(root: loop.ForOp) -> list[loop.ForOp]:
    """The loops of a nest that go to the grid, outermost first."""
    if root.is_reduction or not _child_loops(root):
        return []
    chain = [root]
    while True:
        children = _child_loops(chain[-1])
        if len(children) != 1 or children[0].is_reduction or not _child_loops(children[0]):
            return chain
        chain.append(children[0])


def _splits_across_blocks(reduction: loop.ForOp) -> bool:
    """A long reduction whose result is only stored (at constant indices), with a combiner
    and type that atomics take: its blocks can each reduce a part and combine with atomics."""
    uses = [use.operation for use in reduction.accumulator[0].uses]
    return (
        reduction.trip_count >= SPLIT_REDUCTION_TRIP_COUNT
        and reduction.kind.data in tile.SPLIT_KINDS
        and reduction.init.type in tile.SPLIT_TYPES
        and len(uses) == 1
        and isinstance(uses[0], loop.StoreOp)
        and uses[0].value is reduction.accumulator[0]
        and all(isinstance(i.owner, arith.ConstantOp) for i in uses[0].indices)
    )


def _spreads_rows_over_blocks(
    roots: list[loop.ForOp], chain: list[loop.ForOp], target: GpuTarget
) -> bool:
    """A kernel's only nest, elementwise (its loops inside the grid loops are parallel and
    hold no loops), with fewer than MANY_ROWS_PER_SM rows per SM: its rows go to rows of
    blocks and each row's iterations over a row of blocks (a two-dimensional nest), so that a
    few long rows still reach every SM."""
    rows = prod(f.trip_count for f in chain)
    if len(roots) != 1 or not chain or rows >= MANY_ROWS_PER_SM * target.sm_count:
        return False
    inner = _child_loops(chain[-1])
    return all(not f.is_reduction and not _child_loops(f) for f in inner)


def _mappings(
    kernel: loop.KernelOp, split_reductions: bool, target: GpuTarget
) -> dict[loop.ForOp, Mapping]:
    mappings: dict[loop.ForOp, Mapping] = {}
    roots = [op for op in kernel.body.block.ops if isinstance(op, loop.ForOp)]
    for root in roots:
        chain = _grid_chain(root)
        two_dimensional = _spreads_rows_over_blocks(roots, chain, target)
        for grid_loop in chain:
            mappings[grid_loop] = Mapping.GRID_Y if two_dimensional else Mapping.GRID
        threaded = _child_loops(chain[-1]) if chain else [root]
        for thread_loop in threaded:
            one_dimensional = not chain and (
                not thread_loop.is_reduction
                or (split_reductions and _splits_across_blocks(thread_loop))
            )
            mappings[thread_loop] = (
                Mapping.GLOBAL if one_dimensional or two_dimensional else Mapping.THREAD
            )
    return mappings


def _accesses(body: Block) -> list[loop.LoadOp | loop.StoreOp]:
    return [op for op in body.walk() if isinstance(op, loop.LoadOp | loop.StoreOp)]


def _contiguous_accesses(for_op: loop.ForOp) -> list[loop.LoadOp | loop.StoreOp]:
    """The accesses of a loop that run along the last dimension with its induction variable."""
    return [
        access
        for access in _accesses(for_op.body.block)
        if access.indices
        and tile.contiguous_offset(access.indices[-1], for_op.induction_var) is not None
        and not any(is_inside(index, for_op) for index in access.indices[:-1])
    ]


def _fitting_width(for_op: loop.ForOp, width: int) -> int:
    """`width`, halved until it divides the loop's start and trip count."""
    while width > 1 and (for_op.lower.data % width or for_op.trip_count % width):
        width //= 2
    return width


def _widest_vector(for_op: loop.ForOp) -> int:
    """The most iterations a thread of `for_op` can take at a time: 16 bytes of the widest
    element it accesses along the last dimension; 1 for a loop holding loops or with no such
    access."""
    accesses = _contiguous_accesses(for_op)
    if _child_loops(for_op) or not accesses:
        return 1
    widest = max(element_bytes(a.memref.type.get_element_type()) for a in accesses)
    return _fitting_width(for_op, max(1, MAX_VECTOR_BYTES // widest))


def _vector_width(for_op: loop.ForOp, override: int) -> int:
    if _child_loops(for_op):
        return 1
    return _fitting_width(for_op, override) if override else _widest_vector(for_op)


def _rows(mappings: dict[loop.ForOp, Mapping]) -> int:
    """The most grid iterations of one nest: the rows the kernel's blocks share out."""
    nests: dict[Operation, int] = {}
    for for_op, mapping in mappings.items():
        if mapping in tile.GRID_MAPPINGS:
            root = enclosing_and_self(for_op)[0]
            nests[root] = nests.get(root, 1) * for_op.trip_count
    return max(nests.values(), default=1)


def _block_size(
    mappings: dict[loop.ForOp, Mapping],
    widths: dict[loop.ForOp, int],
    target: GpuTarget,
    override: int,
) -> int:
    if override:
        return override
    extents = [
        -(-f.trip_count // widths.get(f, 1))
        for f, m in mappings.items()
        if m in tile.VECTOR_MAPPINGS
    ]
    if Mapping.GRID_Y in mappings.values():
        # Two-dimensional: about SPREAD_BLOCKS_PER_SM blocks per SM in all, a vector a thread.
        spread = SPREAD_BLOCKS_PER_SM * target.sm_count
        threads = -(-_rows(mappings) * max(extents) // spread)
    else:
        one_dimensional = [
            -(-f.trip_count // widths.get(f, 1)) for f, m in mappings.items() if m == Mapping.GLOBAL
        ]
        rows = max([_rows(mappings), *one_dimensional])
        per_thread = VECTORS_PER_THREAD if rows >= MANY_ROWS_PER_SM * target.sm_count else 1
        threads = -(-max(extents, default=1) // per_thread)
    warp = target.warp_size
    return min(MAX_BLOCK, max(warp, -(-threads // warp) * warp))


def _staged_rows(
    kernel: loop.KernelOp, mappings: dict[loop.ForOp, Mapping], paths, mode: str
) -> list[Staging]:
    """For the last grid loop of each nest, the read-only buffers whose rows it stages."""
    if mode == "none":
        return []
    written = written_values(kernel.body)
    arguments = list(kernel.body.block.args)
    staged: list[Staging] = []
    budget = STAGE_BUDGET_BYTES
    for grid_loop, mapping in mappings.items():
        children = _child_loops(grid_loop)
        if mapping not in tile.GRID_MAPPINGS or any(
            mappings.get(c) in (*tile.GRID_MAPPINGS, Mapping.GLOBAL) for c in children
        ):
            continue
        readers: dict[SSAValue, int] = {}
        for child in children:
            for buffer in {
                a.memref
                for a in _accesses(child.body.block)
                if isinstance(a, loop.LoadOp) and row_known_at_top(a, grid_loop)
            }:
                readers[buffer] = readers.get(buffer, 0) + 1
        for buffer, count in readers.items():
            memref_type = buffer.type
            assert isinstance(memref_type, MemRefType)
            row = memref_type.get_shape()[-1] * element_bytes(memref_type.get_element_type())
            if buffer in written or count < 2 or row > budget:
                continue
            budget -= row
            chosen = mode if mode != "auto" else ("sync" if row % MAX_VECTOR_BYTES else "async")
            staged.append(Staging(arguments.index(buffer), paths[grid_loop], StageMode(chosen)))
    return staged


def choose_schedule(
    kernel: loop.KernelOp, target: GpuTarget, overrides: Overrides = Overrides()
) -> Schedule:
    """The heuristic's schedule of `kernel` (see the module docstring)."""
    mappings = _mappings(kernel, overrides.split_reductions, target)
    widths = {
        f: _vector_width(f, overrides.vector_width)
        for f, m in mappings.items()
        if m in tile.VECTOR_MAPPINGS
    }
    paths = tile.loop_paths(kernel.body.block, loop.ForOp)
    block = _block_size(mappings, widths, target, overrides.block_size)
    return Schedule(
        block=(block, 1, 1),
        loops=tuple(
            sorted((paths[f], LoopSchedule(m, widths.get(f, 1))) for f, m in mappings.items())
        ),
        stages=tuple(_staged_rows(kernel, mappings, paths, overrides.stage)),
    )


def candidates(kernel: loop.KernelOp, target: GpuTarget) -> list[Schedule]:
    """The legal schedules of `kernel` worth timing, the heuristic's first: its mappings
    (with and without splitting a long reduction across blocks) under every block size of
    CANDIDATE_BLOCKS, every vector width up to 16 bytes of the widest element, and staging
    its re-read rows asynchronously, synchronously or not at all; each one lowers."""
    heuristic = choose_schedule(kernel, target)
    loops = tile.loop_paths(kernel.body.block, loop.ForOp)
    widest = max((_widest_vector(f) for f in loops), default=1)
    schedules = {heuristic: None}
    for split in (True, False):
        for block in [b for b in CANDIDATE_BLOCKS if b <= target.max_threads_per_block]:
            for width in [w for w in (1, *tile.VECTOR_WIDTHS) if w <= widest]:
                for stage in STAGE_CHOICES:
                    overrides = Overrides(block, width, stage, split)
                    schedules.setdefault(choose_schedule(kernel, target, overrides), None)
    legal = []
    for schedule in schedules:
        try:
            lower_kernel(kernel, schedule)
        except ScheduleError:
            continue
        legal.append(schedule)
    return legal


@dataclass(frozen=True)
class ChooseTileSchedulePass(ModulePass):
    """Writes a #tile.schedule on each loop.kernel that has none (see the module docstring)."""

    name = "choose-tile-schedule"

    block_size: int = 0
    """Threads per block for every kernel; 0 lets the heuristic choose."""

    vector_width: int = 0
    """Iterations a thread takes at a time in every vectorisable loop (1 turns vectors off);
    0 lets the heuristic choose."""

    stage: str = "auto"
    """Shared-memory staging of re-read rows: auto (the heuristic), none, sync or async."""

    split_reductions: bool = True
    """Split long reductions of a whole buffer across blocks, combined with atomics."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.vector_width not in (0, 1, *tile.VECTOR_WIDTHS):
            raise PassFailedException(
                f"vector-width {self.vector_width} must be 0 (the heuristic), 1 or one of "
                f"{', '.join(map(str, tile.VECTOR_WIDTHS))}"
            )
        if self.stage not in STAGE_CHOICES:
            raise PassFailedException(
                f"stage '{self.stage}' must be one of {', '.join(STAGE_CHOICES)}"
            )
        if self.block_size:
            try:
                verify_block_shape((self.block_size, 1, 1), target_of(op))
            except VerifyException as error:
                raise PassFailedException(f"block-size {self.block_size}: {error}") from None
        overrides = Overrides(self.block_size, self.vector_width, self.stage, self.split_reductions)
        for kernel in op.body.block.ops:
            if (
                isinstance(kernel, loop.KernelOp)
                and tile.SCHEDULE_ATTRIBUTE not in kernel.attributes
            ):
                schedule = choose_schedule(kernel, target_of(kernel), overrides)
                kernel.attributes[tile.SCHEDULE_ATTRIBUTE] = ScheduleAttr(schedule)
