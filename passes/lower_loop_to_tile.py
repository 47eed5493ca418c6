"""`lower-loop-to-tile`: chooses a GPU schedule for each `loop.kernel`.

The heuristic, for the loop nests lower-fused-to-loop produces (one nest per output shape):
- From the root of a nest, parallel loops go to the grid while the loop holds exactly one
  loop, itself parallel and not innermost: the rows of a norm, the leading dims of an
  elementwise kernel.
- The loops directly inside the last grid loop go to the threads of a block: the columns of
  an elementwise kernel, and the reductions and the column loop of a norm or softmax, whose
  reductions are then combined across the block.
- A nest that is a single loop goes to every thread of the grid (`global`); so does a single
  reduction of 65536 or more iterations whose result is only stored, at constant indices, with
  a combiner and type atomics take (add, max, min on f32, f64, i32, i64): its blocks each reduce
  a part, and combine their totals with atomics (`split-reductions=false` keeps it in one
  block).
- A kernel's only nest, if elementwise (the loops inside its grid loops are parallel and
  hold no loops) and with fewer than 256 grid iterations (rows), is two-dimensional: its
  grid loops go to rows of blocks and the loops inside them to `global`, over the blocks of
  a row, so that 16 rows of 4096 still reach about 128 blocks (a block of one vector per
  thread, sized so that the grid has about 128 blocks in all).
- Everything deeper runs serially in each thread (a reduction inside a thread-mapped loop).
- Vector width: a thread or global loop that holds no loop and reads or writes along the last
  dimension at its induction variable (plus a constant) takes 16 bytes of its widest such
  element at a time (8 bf16, 4 f32), halved until it divides the loop's start and trip count.
- Staging: in the last grid loop of a nest, a row (the leading indices are the grid loops'
  variables) of a buffer the kernel only reads, loaded by two or more of the thread loops, is
  staged in shared memory, so that the passes of a norm or softmax read it from global memory
  once; asynchronously (cp.async) when the row is a whole number of 16-byte chunks. Rows are
  staged while they fit in 32 KiB together, which leaves room for several blocks per SM.
- Block size: with 256 or more grid iterations (rows), a thread takes 4 vectors of the widest
  thread-mapped loop, so the block is a quarter of that extent (in vectors) rounded up to a
  warp, at most 512 threads: small blocks let an SM hold many rows at once, and so many loads
  in flight; with fewer rows, which leave SMs idle anyway, a thread takes one vector, so that
  each row is done sooner;
  the grid covers the largest nest's grid iterations (at most 65535 blocks; loops mapped to
  the grid stride by the grid size, so any grid is correct), and a two-dimensional nest's
  rows by its columns of blocks.

The schedule is data: `block-size=N`, `vector-width=N` and `stage=none|sync|async` override the
heuristic for every kernel, and the attributes `tile.block_size`, `tile.vector_width` (integers)
and `tile.stage` (a string) on a `loop.kernel` override it for that kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from emmy.dialects import loop, tile
from emmy.dialects.kernel import element_bytes

MAX_GRID = 65535
MAX_BLOCK = 512
VECTORS_PER_THREAD = 4
SPLIT_REDUCTION_TRIP_COUNT = 65536
"""From this length a reduction of a whole buffer is split across blocks (shorter ones fit one
block's loads in flight)."""
MANY_ROWS = 256
"""Grid iterations from which a thread takes several vectors: about two rows per SM of an
H100 or H200 (132 SMs); fewer rows get a thread per vector, so that each row finishes sooner."""
SPREAD_BLOCKS = 128
"""The blocks a two-dimensional nest aims at: about one per SM of an H100 or H200."""
VECTOR_BYTES = 16
STAGE_BUDGET_BYTES = 32 * 1024
BLOCK_SIZE_ATTRIBUTE = "tile.block_size"
VECTOR_WIDTH_ATTRIBUTE = "tile.vector_width"
STAGE_ATTRIBUTE = "tile.stage"
STAGE_CHOICES = ("auto", "none", *tile.STAGE_MODES)


@dataclass(frozen=True)
class Overrides:
    """What the user fixed of a schedule; 0 or "auto" leaves it to the heuristic."""

    block_size: int = 0
    vector_width: int = 0
    stage: str = "auto"
    split_reductions: bool = True

    def for_kernel(self, kernel: loop.KernelOp) -> Overrides:
        attributes = kernel.attributes
        block = attributes.get(BLOCK_SIZE_ATTRIBUTE)
        vector = attributes.get(VECTOR_WIDTH_ATTRIBUTE)
        stage = attributes.get(STAGE_ATTRIBUTE)
        return Overrides(
            block.value.data if isinstance(block, IntegerAttr) else self.block_size,
            vector.value.data if isinstance(vector, IntegerAttr) else self.vector_width,
            stage.data if isinstance(stage, StringAttr) else self.stage,
            self.split_reductions,
        )


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


def _spreads_rows_over_blocks(roots: list[loop.ForOp], chain: list[loop.ForOp]) -> bool:
    """A kernel's only nest, elementwise (its loops inside the grid loops are parallel and
    hold no loops), with fewer grid iterations than MANY_ROWS: its rows go to rows of blocks
    and each row's iterations over a row of blocks (a two-dimensional nest), so that a few
    long rows still reach every SM."""
    if len(roots) != 1 or not chain or prod(f.trip_count for f in chain) >= MANY_ROWS:
        return False
    inner = _child_loops(chain[-1])
    return all(not f.is_reduction and not _child_loops(f) for f in inner)


def _mappings(kernel: loop.KernelOp, split_reductions: bool) -> dict[loop.ForOp, str]:
    mappings: dict[loop.ForOp, str] = {}
    roots = [op for op in kernel.body.block.ops if isinstance(op, loop.ForOp)]
    for root in roots:
        chain = _grid_chain(root)
        for grid_loop in chain:
            mappings[grid_loop] = "grid"
        threaded = _child_loops(chain[-1]) if chain else [root]
        two_dimensional = _spreads_rows_over_blocks(roots, chain)
        for thread_loop in threaded:
            one_dimensional = not chain and (
                not thread_loop.is_reduction
                or (split_reductions and _splits_across_blocks(thread_loop))
            )
            mappings[thread_loop] = "global" if one_dimensional or two_dimensional else "thread"
    return mappings


def _accesses(body: Block) -> list[loop.LoadOp | loop.StoreOp]:
    return [op for op in body.walk() if isinstance(op, loop.LoadOp | loop.StoreOp)]


def _is_inside(value: SSAValue, region_op: Operation) -> bool:
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    while op is not None:
        if op is region_op:
            return True
        op = op.parent_op()
    return False


def _contiguous_accesses(for_op: loop.ForOp) -> list[loop.LoadOp | loop.StoreOp]:
    """The accesses of a loop that run along the last dimension with its induction variable."""
    return [
        access
        for access in _accesses(for_op.body.block)
        if access.indices
        and tile.contiguous_offset(access.indices[-1], for_op.induction_var) is not None
        and not any(_is_inside(index, for_op) for index in access.indices[:-1])
    ]


def _vector_width(for_op: loop.ForOp, override: int) -> int:
    if _child_loops(for_op):
        return 1
    if override:
        width = override
    else:
        accesses = _contiguous_accesses(for_op)
        if not accesses:
            return 1
        widest = max(element_bytes(a.memref.type.get_element_type()) for a in accesses)
        width = max(1, VECTOR_BYTES // widest)
    while width > 1 and (for_op.lower.data % width or for_op.trip_count % width):
        width //= 2
    return width


def _block_size(
    mappings: dict[loop.ForOp, str], widths: dict[loop.ForOp, int], override: int
) -> int:
    if override:
        return override
    extents = [
        -(-f.trip_count // widths.get(f, 1))
        for f, m in mappings.items()
        if m in ("thread", "global")
    ]
    rows_of_blocks = _row_count(mappings)
    if rows_of_blocks:
        # Two-dimensional: about SPREAD_BLOCKS blocks in all, a vector per thread.
        threads = -(-rows_of_blocks * max(extents) // SPREAD_BLOCKS)
    else:
        rows = max(_nest_extents(mappings, widths, 1).values(), default=1)
        per_thread = VECTORS_PER_THREAD if rows >= MANY_ROWS else 1
        threads = -(-max(extents, default=1) // per_thread)
    return min(MAX_BLOCK, max(32, -(-threads // 32) * 32))


def _row_count(mappings: dict[loop.ForOp, str]) -> int:
    """The grid iterations of a kernel's two-dimensional nest (its rows of blocks), or 0."""
    for for_op, mapping in mappings.items():
        parent = for_op.parent_op()
        if mapping == "global" and isinstance(parent, loop.ForOp):
            return prod(f.trip_count for f in _enclosing_and_self(parent))
    return 0


def _staged_rows(
    kernel: loop.KernelOp, mappings: dict[loop.ForOp, str], mode: str
) -> dict[loop.ForOp, list[tuple[SSAValue, tuple[SSAValue, ...], str]]]:
    """For the last grid loop of each nest, the read-only buffers whose rows it stages."""
    if mode == "none":
        return {}
    written = {o.memref for o in _accesses(kernel.body.block) if isinstance(o, loop.StoreOp)}
    staged: dict[loop.ForOp, list[tuple[SSAValue, tuple[SSAValue, ...], str]]] = {}
    budget = STAGE_BUDGET_BYTES
    for grid_loop, mapping in mappings.items():
        children = _child_loops(grid_loop)
        if mapping != "grid" or any(mappings.get(c) in ("grid", "global") for c in children):
            continue
        grid_variables = {f.induction_var for f in _enclosing_and_self(grid_loop)}

        def known_at_top(index: SSAValue) -> bool:
            return index in grid_variables or not _is_inside(index, grid_loop)

        readers: dict[tuple[SSAValue, tuple[SSAValue, ...]], int] = {}
        for child in children:
            for row_key in {
                (a.memref, tuple(a.indices[:-1]))
                for a in _accesses(child.body.block)
                if isinstance(a, loop.LoadOp) and all(map(known_at_top, a.indices[:-1]))
            }:
                readers[row_key] = readers.get(row_key, 0) + 1
        for (buffer, rows), count in readers.items():
            memref_type = buffer.type
            assert isinstance(memref_type, MemRefType)
            row = memref_type.get_shape()[-1] * element_bytes(memref_type.get_element_type())
            if buffer in written or count < 2 or row > budget:
                continue
            budget -= row
            chosen = mode if mode != "auto" else ("async" if row % VECTOR_BYTES == 0 else "sync")
            staged.setdefault(grid_loop, []).append((buffer, rows, chosen))
    return staged


def _grid_shape(
    mappings: dict[loop.ForOp, str], widths: dict[loop.ForOp, int], block: int
) -> list[int]:
    rows = _row_count(mappings)
    if rows:
        columns = max(
            -(-f.trip_count // (block * widths.get(f, 1)))
            for f, m in mappings.items()
            if m == "global"
        )
        return [min(MAX_GRID, columns), min(MAX_GRID, rows), 1]
    extents = _nest_extents(mappings, widths, block).values()
    return [max(1, min(MAX_GRID, max(extents, default=1))), 1, 1]


def _nest_extents(
    mappings: dict[loop.ForOp, str], widths: dict[loop.ForOp, int], block: int
) -> dict[Operation, int]:
    """The blocks each nest needs: its grid iterations (its blocks of `block` threads for a
    one-dimensional nest)."""
    nests: dict[Operation, list[int]] = {}
    for for_op, mapping in mappings.items():
        root = for_op
        while isinstance(root.parent_op(), loop.ForOp):
            root = root.parent_op()
        if mapping == "grid":
            nests.setdefault(root, []).append(for_op.trip_count)
        elif mapping == "global":
            per_block = block * widths.get(for_op, 1)
            nests.setdefault(root, []).append(-(-for_op.trip_count // per_block))
    return {root: prod(extents) for root, extents in nests.items()}


@dataclass
class _Schedule:
    mappings: dict[loop.ForOp, str]
    widths: dict[loop.ForOp, int]
    staged: dict[loop.ForOp, list[tuple[SSAValue, tuple[SSAValue, ...], str]]]


def _convert_body(
    source: Block, target: Block, schedule: _Schedule, values: dict[SSAValue, SSAValue]
):
    for op in source.ops:
        if isinstance(op, loop.ForOp):
            reduction = (op.kind.data, op.init) if op.is_reduction else None
            body = Block(arg_types=[op.induction_var.type])
            body.args[0].name_hint = op.induction_var.name_hint
            values[op.induction_var] = body.args[0]
            for buffer, rows, mode in schedule.staged.get(op, ()):
                body.add_op(tile.StageOp(values[buffer], [values[i] for i in rows], mode))
            _convert_body(op.body.block, body, schedule, values)
            converted = tile.ForOp(
                op.lower.data,
                op.upper.data,
                schedule.mappings.get(op, "serial"),
                Region(body),
                reduction,
                schedule.widths.get(op, 1),
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
        for old, new in zip(op.results, converted.results):
            new.name_hint = old.name_hint
            values[old] = new
        target.add_op(converted)


def _enclosing_and_self(for_op: loop.ForOp) -> list[loop.ForOp]:
    chain = [for_op]
    while isinstance(chain[0].parent_op(), loop.ForOp):
        chain.insert(0, chain[0].parent_op())
    return chain


def _lower_kernel(kernel: loop.KernelOp, overrides: Overrides) -> tile.KernelOp:
    overrides = overrides.for_kernel(kernel)
    mappings = _mappings(kernel, overrides.split_reductions)
    widths = {
        f: _vector_width(f, overrides.vector_width)
        for f, m in mappings.items()
        if m in tile.VECTOR_MAPPINGS
    }
    schedule = _Schedule(mappings, widths, _staged_rows(kernel, mappings, overrides.stage))
    block = _block_size(mappings, widths, overrides.block_size)
    body = Block(arg_types=kernel.buffer_types)
    values: dict[SSAValue, SSAValue] = {}
    for old, new in zip(kernel.body.block.args, body.args):
        new.name_hint = old.name_hint
        values[old] = new
    _convert_body(kernel.body.block, body, schedule, values)
    lowered = tile.KernelOp(
        kernel.sym_name.data,
        kernel.buffer_types,
        _grid_shape(mappings, widths, block),
        [block, 1, 1],
        Region(body),
    )
    lowered.location = kernel.location
    return lowered


@dataclass(frozen=True)
class LowerLoopToTilePass(ModulePass):
    """Schedules each loop.kernel onto the GPU's grid and blocks (see the module docstring)."""

    name = "lower-loop-to-tile"

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
        if self.block_size and (self.block_size % 32 or not 32 <= self.block_size <= 1024):
            raise PassFailedException(
                f"block-size {self.block_size} must be a multiple of 32 between 32 and 1024"
            )
        if self.vector_width not in (0, 1, *tile.VECTOR_WIDTHS):
            raise PassFailedException(
                f"vector-width {self.vector_width} must be 0 (the heuristic), 1 or one of "
                f"{', '.join(map(str, tile.VECTOR_WIDTHS))}"
            )
        if self.stage not in STAGE_CHOICES:
            raise PassFailedException(
                f"stage '{self.stage}' must be one of {', '.join(STAGE_CHOICES)}"
            )
        overrides = Overrides(self.block_size, self.vector_width, self.stage, self.split_reductions)
        for kernel in [k for k in op.body.block.ops if isinstance(k, loop.KernelOp)]:
            op.body.block.insert_op_before(_lower_kernel(kernel, overrides), kernel)
            op.body.block.erase_op(kernel, safe_erase=False)
        for launch in [o for o in op.walk() if isinstance(o, loop.LaunchOp)]:
            replacement = tile.LaunchOp(launch.kernel.root_reference.data, launch.buffers)
            replacement.location = launch.location
            parent = launch.parent_block()
            parent.insert_op_before(replacement, launch)
            parent.erase_op(launch)
