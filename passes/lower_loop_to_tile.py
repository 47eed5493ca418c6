"""`lower-loop-to-tile`: chooses a GPU schedule for each `loop.kernel`.

The heuristic, for the loop nests lower-fused-to-loop produces (one nest per output shape):
- From the root of a nest, parallel loops go to the grid while the loop holds exactly one
  loop, itself parallel and not innermost: the rows of a norm, the leading dims of an
  elementwise kernel.
- The loops directly inside the last grid loop go to the threads of a block: the columns of
  an elementwise kernel, and the reductions and the column loop of a norm or softmax, whose
  reductions are then combined across the block.
- A nest that is a single loop goes to every thread of the grid (`global`).
- Everything deeper runs serially in each thread (a reduction inside a thread-mapped loop).
- Block size: the thread-mapped extents rounded up to a warp, at most 256 threads (512 for
  rows of 2048 elements or more, so that each thread keeps several loads in flight);
  the grid covers the largest nest's grid iterations (at most 65535 blocks; loops mapped to
  the grid stride by the grid size, so any grid is correct).

The schedule is data: `block-size=N` overrides the block size of every kernel, and a
`tile.block_size` integer attribute on a `loop.kernel` overrides it for that kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from emmy.dialects import loop, tile

MAX_GRID = 65535
BLOCK_SIZE_ATTRIBUTE = "tile.block_size"


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


def _mappings(kernel: loop.KernelOp) -> dict[loop.ForOp, str]:
    mappings: dict[loop.ForOp, str] = {}
    for root in kernel.body.block.ops:
        if not isinstance(root, loop.ForOp):
            continue
        chain = _grid_chain(root)
        for grid_loop in chain:
            mappings[grid_loop] = "grid"
        threaded = _child_loops(chain[-1]) if chain else [root]
        for thread_loop in threaded:
            one_dimensional = not chain and not thread_loop.is_reduction
            mappings[thread_loop] = "global" if one_dimensional else "thread"
    return mappings


def _block_size(kernel: loop.KernelOp, mappings: dict[loop.ForOp, str], override: int) -> int:
    if isinstance(attribute := kernel.attributes.get(BLOCK_SIZE_ATTRIBUTE), IntegerAttr):
        return attribute.value.data
    if override:
        return override
    extents = [f.trip_count for f, m in mappings.items() if m in ("thread", "global")]
    widest = max(extents, default=1)
    cap = 512 if widest >= 2048 else 256
    return min(cap, max(32, -(-widest // 32) * 32))


def _grid_size(mappings: dict[loop.ForOp, str], block: int) -> int:
    nests: dict[Operation, list[int]] = {}
    for for_op, mapping in mappings.items():
        root = for_op
        while isinstance(root.parent_op(), loop.ForOp):
            root = root.parent_op()
        if mapping == "grid":
            nests.setdefault(root, []).append(for_op.trip_count)
        elif mapping == "global":
            nests.setdefault(root, []).append(-(-for_op.trip_count // block))
    return max(1, min(MAX_GRID, max((prod(e) for e in nests.values()), default=1)))


def _convert_body(source: Block, target: Block, mappings, values: dict[SSAValue, SSAValue]):
    for op in source.ops:
        if isinstance(op, loop.ForOp):
            reduction = (op.kind.data, op.init) if op.is_reduction else None
            body = Block(arg_types=[op.induction_var.type])
            body.args[0].name_hint = op.induction_var.name_hint
            values[op.induction_var] = body.args[0]
            _convert_body(op.body.block, body, mappings, values)
            converted = tile.ForOp(
                op.lower.data, op.upper.data, mappings.get(op, "serial"), Region(body), reduction
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


def _lower_kernel(kernel: loop.KernelOp, block_size: int) -> tile.KernelOp:
    mappings = _mappings(kernel)
    block = _block_size(kernel, mappings, block_size)
    body = Block(arg_types=kernel.buffer_types)
    values: dict[SSAValue, SSAValue] = {}
    for old, new in zip(kernel.body.block.args, body.args):
        new.name_hint = old.name_hint
        values[old] = new
    _convert_body(kernel.body.block, body, mappings, values)
    grid = _grid_size(mappings, block)
    lowered = tile.KernelOp(
        kernel.sym_name.data, kernel.buffer_types, [grid, 1, 1], [block, 1, 1], Region(body)
    )
    lowered.location = kernel.location
    return lowered


@dataclass(frozen=True)
class LowerLoopToTilePass(ModulePass):
    """Schedules each loop.kernel onto the GPU's grid and blocks (see the module docstring)."""

    name = "lower-loop-to-tile"

    block_size: int = 0
    """Threads per block for every kernel; 0 lets the heuristic choose."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.block_size and (self.block_size % 32 or not 32 <= self.block_size <= 1024):
            raise PassFailedException(
                f"block-size {self.block_size} must be a multiple of 32 between 32 and 1024"
            )
        for kernel in [k for k in op.body.block.ops if isinstance(k, loop.KernelOp)]:
            op.body.block.insert_op_before(_lower_kernel(kernel, self.block_size), kernel)
            op.body.block.erase_op(kernel, safe_erase=False)
        for launch in [o for o in op.walk() if isinstance(o, loop.LaunchOp)]:
            replacement = tile.LaunchOp(launch.kernel.root_reference.data, launch.buffers)
            replacement.location = launch.location
            parent = launch.parent_block()
            parent.insert_op_before(replacement, launch)
            parent.erase_op(launch)
