"""Tile IR (`tile`): how a kernel's iterations map onto the GPU — the schedule, as data.

    tile.kernel @k_rms_norm(%x: memref<32x2048xf32>, %w: memref<2048xf32>,
                            %y: memref<32x2048xf32>) grid [32, 1, 1] block [256, 1, 1] {
      tile.for %i in 0 to 32 map grid {
        %ss = tile.for %j in 0 to 2048 map thread reduce add init 0.0 : f32 {
          %v = memref.load %x[%i, %j] : memref<32x2048xf32>
          ...
          tile.yield %sq : f32
        }
        ...
        tile.for %j in 0 to 2048 map thread {
          ...
          memref.store %r, %y[%i, %j] : memref<32x2048xf32>
        }
      }
    }

The kernel carries the launch shape (`grid`, `block`), and the `#tile.schedule` it was lowered
with (see `Schedule`), if any. Each loop carries its mapping, whatever the rest of the nest is:
- `grid`: iterations go to blocks, `blockIdx.x`, `blockIdx.x + gridDim.x`, ...; a chain of
  loops mapped to grid (each the only loop of the one around it) shares the block index,
  outermost first;
- `grid_y`: the same over rows of blocks (`blockIdx.y`, strided by `gridDim.y`): around a
  `global` loop, which spreads each row over the blocks of a row of the grid, a few long rows
  of an elementwise kernel reach many blocks. A grid with more than one row of blocks needs a
  grid_y loop in every nest (any other nest would run once per row);
- `thread`: iterations go to the threads of a block, strided by the block size; a reduction
  mapped to threads is combined across the block (warp shuffles, then shared memory), and
  every thread gets the total;
- `global`: iterations go to every thread of the grid's x dimension (`blockIdx.x *
  blockDim.x + threadIdx.x`, strided by its thread count); a reduction mapped to global, a
  whole nest, is split across blocks: each block combines its threads' partials, and the
  blocks' totals are combined with atomics into the one element the result is stored to
  (which the host sets to the init first), so never one with a combiner region, whose
  state no atomic combines;
- `serial`: each thread runs every iteration.
No loop is inside another that reads the same block index (a global loop inside a grid loop
would give each block a part of a part), and no `thread` or `global` loop is inside a `thread`
or `global` loop (the threads already split the outer loop's iterations). Blocks run at once
and nothing orders them, so ops that different blocks run pass nothing to each other through
memory (`emmy.dialects.dependences`): the nests of a kernel of more than one block, the
iterations of a grid loop over more than one block (unless each accesses elements of its own,
at the loop's variable), the loops of a row of a two-dimensional nest. The ops of one block
are ordered by barriers (`lower-tile-to-kernel` puts them in). The grid's z
dimension is 1; a block may have any shape, its threads numbered linearly (`x + y * bx + z * bx
* by`, as CUDA forms warps), but in a kernel with `rows` loops:
- `rows`: as `grid`, but a block of `block [bx, by, 1]` takes by iterations at once, one per
  row of its threads (`blockIdx.x * by + threadIdx.y`, strided by `gridDim.x * by`), and its
  thread loops run over the bx threads of a row (`threadIdx.x`): rows shorter than a warp's
  worth of vectors (a head dim of 64 or 128) still fill whole warps. The rows of a block run
  apart (`rows_per_block`), so every nest of such a kernel is a chain of rows loops over
  thread and serial loops that reduce nothing across threads, stage nothing and pass nothing
  to each other.
Element accesses are upstream `memref.load` / `memref.store`.

Two more choices make a schedule fast, and neither changes what a kernel computes (the CPU
interpreter runs Tile IR as if they were absent):
- `vector N` on a `thread` or `global` loop: each thread takes N consecutive iterations at a
  time, so the loop's accesses along the last dimension become N-wide (up to 16-byte) vector
  loads and stores (`tile.for %j in 0 to 4096 map thread vector 8 { ... }`);
- `tile.stage %x[%i] async : memref<...>` at the top of a `grid` or `grid_y` loop: the block
  copies the row of `%x` that the leading indices pick into shared memory once (`sync`
  through registers, `async` with cp.async), and every load of that row after it in the loop
  reads the copy — a norm or softmax reads its row from global memory once, not once per
  pass.

A contraction's kernel holds one `tile.gemm` instead of loop nests: the product stays one op,
whose schedule says how the blocks tile it (the block tile, the warps' split of it, the
instruction atom, the K pipeline's depth), with an epilogue run per output element that fuses
the elementwise work after it (see `GemmOp`):

    tile.kernel @k_linear(%x: memref<70x40xbf16>, %w: memref<50x40xbf16>,
                          %y: memref<70x50xbf16>) grid [1, 2, 1] block [128, 1, 1] {
      tile.gemm %x[m, k] * %w[n, k] : memref<70x40xbf16>, memref<50x40xbf16> -> f32
          atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3
          epilogue(%m, %n, %acc) {
        %t = arith.truncf %acc : f32 to bf16
        memref.store %t, %y[%m, %n] : memref<70x50xbf16>
      }
    }
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from math import prod
from typing import ClassVar

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    UnitAttr,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.dialects.utils import AbstractYieldOperation, EnumAttribute
from xdsl.ir import (
    Attribute,
    Block,
    Data,
    Dialect,
    Operation,
    Region,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsTerminator,
    Pure,
    RecursiveMemoryEffect,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from emmy.dialects.access import constant_index, parse_memref_type
from emmy.dialects.access_bounds import verify_access_bounds
from emmy.dialects.attention import kv_group, verify_attention
from emmy.dialects.dependences import (
    buffer_name,
    first_dependence,
    store_shared_by_iterations,
)
from emmy.dialects.dtypes import element_bytes
from emmy.dialects.effects import ReadsOperand, WritesOperand, WritesSharedMemory, written_values
from emmy.dialects.for_op import ForOpBase, Reduction
from emmy.dialects.kernel import (
    TMA_MAX_BOX,
    TMA_MAX_RANK,
    WGMMA_MAX_N,
    WGMMA_N_STEP,
    WGMMA_ROW_BYTES,
    verify_block_shape,
    verify_grid_shape,
    wgmma_k,
)
from emmy.dialects.launch import (
    KernelSymbolOp,
    LaunchOpBase,
    parse_shape,
    print_shape,
    verify_kernel_arguments,
)
from emmy.dialects.sizes import REPRESENTATIVE_SIZE
from emmy.dialects.target import GpuTarget, target_of


class Mapping(StrEnum):
    """Which processors a loop's iterations go to (see the module docstring)."""

    GRID = "grid"
    GRID_Y = "grid_y"
    ROWS = "rows"
    THREAD = "thread"
    GLOBAL = "global"
    SERIAL = "serial"


class StageMode(StrEnum):
    """How a block copies a staged row into shared memory: through registers, or cp.async."""

    SYNC = "sync"
    ASYNC = "async"


@irdl_attr_definition
class MappingAttr(EnumAttribute[Mapping], SpacedOpaqueSyntaxAttribute):
    name = "tile.mapping"


@irdl_attr_definition
class StageModeAttr(EnumAttribute[StageMode], SpacedOpaqueSyntaxAttribute):
    name = "tile.stage_mode"


VECTOR_MAPPINGS = (Mapping.THREAD, Mapping.GLOBAL)
GRID_MAPPINGS = (Mapping.GRID, Mapping.GRID_Y, Mapping.ROWS)
VECTOR_WIDTHS = (2, 4, 8, 16)
SPLIT_KINDS = ("add", "max", "min")
SPLIT_TYPES = (f32, f64, i32, i64)


def _split_target_index(op: Operation) -> tuple[Attribute, ...] | None:
    """The constant indices of the element a reduction split across blocks is stored to, when
    `op` is that store; None for any other op."""
    if not (isinstance(op, memref.StoreOp) and isinstance(op.value.owner, ForOp)):
        return None
    loop = op.value.owner
    constants = [i.owner for i in op.indices]
    if loop.kind is None or loop.mapping.data != Mapping.GLOBAL:
        return None
    if not all(isinstance(c, arith.ConstantOp) for c in constants):
        return None
    return tuple(c.value for c in constants if isinstance(c, arith.ConstantOp))


def grid_dimensions(mapping: Mapping) -> tuple[int, ...]:
    """The grid dimensions (0 for x, 1 for y) whose block index a loop of `mapping` reads."""
    return {
        Mapping.GRID: (0,),
        Mapping.ROWS: (0,),
        Mapping.GLOBAL: (0,),
        Mapping.GRID_Y: (1,),
    }.get(mapping, ())


def _op_name(paths: dict[Operation, LoopPath], op: Operation) -> str:
    return f"loop {list(paths[op])}" if op in paths else f"'{op.name}'"


def _has_rows_loops(kernel: KernelOp) -> bool:
    return any(isinstance(f, ForOp) and f.mapping.data == Mapping.ROWS for f in kernel.walk())


def rows_per_block(kernel: KernelOp) -> int:
    """How many iterations of its `rows` loops a block of `kernel` takes at once, one per row
    of threads (`threadIdx.y`): its block's y size where it has such loops, else 1."""
    return kernel.block_shape[1] if _has_rows_loops(kernel) else 1


def contiguous_offset(index: SSAValue, induction_var: SSAValue) -> int | None:
    """c when `index` is `induction_var + c` (c a constant, 0 for the variable itself): the
    accesses that a vectorised loop makes N-wide."""
    if index is induction_var:
        return 0
    owner = index.owner
    if not isinstance(owner, arith.AddiOp):
        return None
    for variable, other in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
        offset = constant_index(other)
        if variable is induction_var and offset is not None:
            return offset
    return None


def verify_launch_shape(grid: Sequence[int], block: Sequence[int], target: GpuTarget) -> None:
    verify_grid_shape(grid, target)
    verify_block_shape(block, target)
    if grid[2] != 1:
        raise VerifyException(
            f"grid {list(grid)}: no mapping spreads loops over the grid's z dimension, so it is 1"
        )


SCHEDULE_ATTRIBUTE = "tile.schedule"
"""The attribute of a `loop.kernel` (and of the `tile.kernel` lowered from it) that holds its
schedule."""
TUNED_ATTRIBUTE = "tile.tuned"
"""Beside a schedule taken from the tuning database (`emmy tune`): a string with the time it
was measured at, the heuristic's, and the date; a schedule without it is the heuristic's."""

LoopPath = tuple[int, ...]
"""A loop of a kernel by its position in the nest: its index among the loops of the kernel's
body, then among the loops of that loop's body, and so on (`[0, 1]` is the second loop inside
the first), so that it names the same loop after the IR is printed and parsed again."""


def loop_paths(body: Block, loop_type: type[Operation]) -> dict[Operation, LoopPath]:
    """Every loop (op of `loop_type`) nested in a kernel's `body`, with its path."""
    paths: dict[Operation, LoopPath] = {}

    def visit(block: Block, prefix: LoopPath) -> None:
        for index, op in enumerate(o for o in block.ops if isinstance(o, loop_type)):
            paths[op] = (*prefix, index)
            visit(op.regions[0].block, paths[op])

    visit(body, ())
    return paths


class AtomKind(StrEnum):
    """Which instruction multiplies a contraction's tiles."""

    MMA_SYNC = "mma_sync"
    WGMMA = "wgmma"
    FMA = "fma"


WGMMA_N = range(WGMMA_N_STEP, WGMMA_MAX_N + 1, WGMMA_N_STEP)
MMA_SYNC_SHAPE = (16, 8, 16)
"""The mma_sync atom of f16 and bf16 operands."""
TF32_MMA_SYNC_SHAPE = (16, 8, 8)
"""The mma_sync atom of f32 operands, which it rounds to tf32."""
TF32_WGMMA_K = wgmma_k(f32)
"""The K of the wgmma atom of f32 operands, which it reads as tf32 (8)."""


@dataclass(frozen=True)
class MmaAtom:
    """The instruction a contraction's tiles are multiplied with, and the M x N x K it
    multiplies at once: `mma_sync m16n8k16` (a warp's tensor-core product, sm_80 on, on f16
    or bf16), `mma_sync m16n8k8` (the same on f32 operands rounded to tf32, what
    torch's "high" and "medium" float32 matmul precisions allow), `wgmma m64n128k16` (a warp
    group's, sm_90a; N from 8 to 256 in steps of 8; `wgmma m64n128k8` on f32 as tf32) or
    `fma` (one multiply-add of a thread, on any float type: true f32 products for the
    "highest" precision)."""

    kind: AtomKind
    shape: tuple[int, int, int] = (1, 1, 1)

    def __str__(self) -> str:
        if self.kind == AtomKind.FMA:
            return str(self.kind)
        m, n, k = self.shape
        return f"{self.kind} m{m}n{n}k{k}"

    @property
    def is_tf32(self) -> bool:
        """Whether the atom multiplies f32 operands as tf32 (`mma_sync m16n8k8`, `wgmma
        m64nNk8`)."""
        if self.kind == AtomKind.WGMMA:
            return self.shape[2] == TF32_WGMMA_K
        return self.kind == AtomKind.MMA_SYNC and self.shape == TF32_MMA_SYNC_SHAPE

    def verify(self) -> None:
        m, n, k = self.shape
        if self.kind == AtomKind.MMA_SYNC:
            ok = self.shape in (MMA_SYNC_SHAPE, TF32_MMA_SYNC_SHAPE)
            expected = "m16n8k16 (f16, bf16) or m16n8k8 (f32 as tf32)"
        elif self.kind == AtomKind.WGMMA:
            ok = m == 64 and n in WGMMA_N and k in (16, TF32_WGMMA_K)
            expected = (
                "m64nNk16 (f16, bf16) or m64nNk8 (f32 as tf32), N from 8 to 256 in steps of 8"
            )
        else:
            ok = self.shape == (1, 1, 1)
            expected = "one multiply-add, no shape"
        if not ok:
            raise VerifyException(f"a {self.kind} atom is {expected}, got {self}")


ATOM_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")


def parse_atom(parser: AttrParser) -> MmaAtom:
    """`mma_sync m16n8k16`, `mma_sync m16n8k8`, `wgmma m64n128k16` or `fma`."""
    start = parser.pos
    kind = parser.parse_str_enum(AtomKind)
    shape = (1, 1, 1)
    if kind != AtomKind.FMA:
        shape_pos = parser.pos
        match = ATOM_SHAPE.fullmatch(parser.parse_identifier())
        if match is None:
            parser.raise_error(
                "an atom's shape is written mMnNkK, as in m16n8k16", shape_pos, parser.pos
            )
        shape = tuple(int(size) for size in match.groups())
    atom = MmaAtom(kind, shape)
    try:
        atom.verify()
    except VerifyException as error:
        parser.raise_error(str(error), start, parser.pos)
    return atom


def verify_gemm_tiling(
    tile_shape: Sequence[int], atom: MmaAtom, warps: Sequence[int]
) -> tuple[int, int]:
    """A block tile (BM, BN, BK) split among (WM, WN) warps is whole atoms for every warp (for
    wgmma, a warp group is 4 warps along M); returns the warp tile (BM / WM, BN / WN)."""
    if len(tile_shape) != 3 or min(tile_shape) < 1:
        raise VerifyException(f"tile {list(tile_shape)} must have 3 positive sizes (BM, BN, BK)")
    if len(warps) != 2 or min(warps) < 1:
        raise VerifyException(f"warps {list(warps)} must have 2 positive counts (WM, WN)")
    atom.verify()
    block_m, block_n, block_k = tile_shape
    warps_m, warps_n = warps
    atom_m, atom_n, atom_k = atom.shape
    if atom.kind == AtomKind.WGMMA:
        if warps_m % 4:
            raise VerifyException(
                f"a wgmma is issued by a warp group of 4 warps along M, but warps "
                f"{list(warps)} has {warps_m} along M"
            )
        atom_m //= 4
    if block_m % warps_m or block_n % warps_n:
        raise VerifyException(f"warps {list(warps)} must divide tile {list(tile_shape)}'s M and N")
    warp_m, warp_n = block_m // warps_m, block_n // warps_n
    if warp_m % atom_m or warp_n % atom_n or block_k % atom_k:
        raise VerifyException(
            f"tile {list(tile_shape)} over warps {list(warps)} gives each warp {warp_m}x{warp_n} "
            f"and K slices of {block_k}, which must be whole {atom} atoms "
            f"({atom_m}x{atom_n}, K {atom_k})"
        )
    return warp_m, warp_n


def fma_lane_grid(warp_m: int, warp_n: int, target: GpuTarget) -> tuple[int, int] | None:
    """How the lanes of a warp on the fma atom lie over its `warp_m` x `warp_n` tile: (lanes
    along M, lanes along N), each lane computing every (warp_m / lanes_m)-th row and (warp_n /
    lanes_n)-th column (a register tile); the squarest register tile (the fewest loads per
    multiply-add), then the most lanes along N (consecutive columns, coalesced stores). None
    where no split is whole."""
    lanes = target.warp_size
    grids = [
        (lanes // along_n, along_n)
        for along_n in (1 << i for i in range(lanes.bit_length()))
        if lanes % along_n == 0 and warp_n % along_n == 0 and warp_m % (lanes // along_n) == 0
    ]
    if not grids:
        return None
    return min(grids, key=lambda grid: (abs(warp_m // grid[0] - warp_n // grid[1]), -grid[1]))


class WarpRole(StrEnum):
    """What a warp group of a warp-specialised contraction's block does."""

    PRODUCER = "producer"
    """Copies the operands' K slices into shared memory (TMA), ahead of the consumers."""
    CONSUMER = "consumer"
    """Multiplies the slices the producer has copied, and runs the epilogue."""


def gemm_warp_roles(atom: MmaAtom, warps: Sequence[int]) -> tuple[str, ...]:
    """The warp groups' roles a contraction's block of `warps` has on `atom`: a wgmma block is
    warp-specialised, one producer warp group before one consumer warp group per 4 of the
    `warps` (which issue the wgmmas); other atoms' warps all multiply, with no roles."""
    if atom.kind != AtomKind.WGMMA:
        return ()
    return (WarpRole.PRODUCER.value,) + (WarpRole.CONSUMER.value,) * (prod(warps) // 4)


def gemm_threads(atom: MmaAtom, warps: Sequence[int], warp_size: int) -> int:
    """The threads of a contraction's block: its warps, and a producer warp group's."""
    roles = gemm_warp_roles(atom, warps)
    return (len(roles) * 4 if roles else prod(warps)) * warp_size


RASTER_GROUP = 8
"""The rows of tiles a persistent block's tile order walks down before it moves right, unless
its schedule says otherwise: the blocks running at once then share rows of A and columns of B
in the L2 cache."""


def _verify_raster(atom: MmaAtom, raster: int) -> None:
    if raster < 0 or (raster and atom.kind != AtomKind.WGMMA):
        raise VerifyException(
            f"'raster' orders the tiles of persistent (wgmma) blocks, a positive number of rows "
            f"of tiles; got {raster} for a {atom} atom"
        )


def _verify_cluster(atom: MmaAtom, cluster: int) -> None:
    if cluster < 1 or (cluster != 1 and atom.kind != AtomKind.WGMMA):
        raise VerifyException(
            f"'cluster' is how many persistent (wgmma) blocks share the rhs's K slices, at "
            f"least 1; got {cluster} for a {atom} atom"
        )


def _verify_target_cluster(target: GpuTarget, blocks: int, purpose: str, field: str) -> None:
    """`target` runs thread-block clusters of `blocks` blocks, which the schedule's `field`
    asks for `purpose`."""
    if not target.has_clusters:
        raise VerifyException(
            f"{purpose} in a thread-block cluster, which {target.arch} ({target.name}) does "
            f"not have"
        )
    if blocks > target.max_cluster_blocks:
        raise VerifyException(
            f"{purpose} in a thread-block cluster, of at most {target.max_cluster_blocks} "
            f"blocks on {target.arch}, got {field} {blocks}"
        )


def _verify_split(split: int) -> None:
    if split < 1:
        raise VerifyException(
            f"'split' is how many blocks share an output tile's reduction, at least 1, got {split}"
        )


def _verify_warp_roles(atom: MmaAtom, warps: Sequence[int], roles: Sequence[str]) -> None:
    expected = gemm_warp_roles(atom, warps)
    if tuple(roles) != expected:
        shown = "none" if not expected else "[" + ", ".join(f'"{r}"' for r in expected) + "]"
        raise VerifyException(
            f"a {atom} block of warps {list(warps)} has warp roles {shown}, got "
            f"{list(roles) or 'none'}"
        )


@irdl_attr_definition
class MmaAtomAttr(Data[MmaAtom]):
    """`#tile.atom<mma_sync m16n8k16>`: an `MmaAtom` in the IR."""

    name = "tile.atom"

    def verify(self) -> None:
        self.data.verify()

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data}>")

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> MmaAtom:
        with parser.in_angle_brackets():
            return parse_atom(parser)


@dataclass(frozen=True)
class LoopSchedule:
    """Where one loop's iterations go, and how many consecutive ones a thread takes at a time.
    A reduction's strategy is its mapping: `thread` combines it within a block, `global`
    splits it across the blocks, which combine their totals with atomics."""

    mapping: Mapping
    vector: int = 1


@dataclass(frozen=True)
class Staging:
    """The row of kernel argument `argument` that the loops inside the grid loop at `loop`
    read is copied into shared memory at the top of each of its iterations."""

    argument: int
    loop: LoopPath
    mode: StageMode


@dataclass(frozen=True)
class Schedule:
    """How a `loop.kernel` runs on the GPU: what `choose-tile-schedule` decides and
    `lower-loop-to-tile` applies, as the `#tile.schedule<...>` attribute of the kernel.

        #tile.schedule<block [512, 1, 1], loops [[0] grid, [0, 0] thread vector 4,
                       [0, 1] thread vector 4], stage [[0] arg 0 async]>

    A loop the schedule does not name runs serially in each thread. The grid is not part of
    the schedule: it is the blocks the mapped loops need (every loop mapped to a grid
    dimension strides by that dimension's size, so any grid would be correct).

    A contraction's kernel (a `tile.gemm`) has no loops to map; its schedule says how the
    blocks tile the product instead, with `tile`, `atom` and `warps` together (and
    `pipeline`), which the `tile.gemm` lowered with it carries:

        #tile.schedule<block [128, 1, 1], loops [], tile [128, 128, 32],
                       atom mma_sync m16n8k16, warps [2, 2], pipeline 3>

    A wgmma block is warp-specialised: `warp_roles ["producer", "consumer", ...]` names what
    each warp group does (see `gemm_warp_roles`), and the block has the producer's warp group
    besides the `warps` that multiply; its blocks are persistent, and `raster N` orders the
    tiles each takes (N rows of tiles down, then right; RASTER_GROUP when not given)."""

    block: tuple[int, int, int]
    loops: tuple[tuple[LoopPath, LoopSchedule], ...]
    stages: tuple[Staging, ...] = ()
    tile_shape: tuple[int, ...] = ()
    """A contraction's block tile (BM, BN, BK): each block computes BM x BN outputs, taking
    the K dimension BK at a time."""
    mma_atom: MmaAtom | None = None
    """The instruction that multiplies (see `MmaAtom`)."""
    warps: tuple[int, ...] = ()
    """How the block's warps split its tile: (WM, WN) warps, each computing a (BM / WM) x
    (BN / WN) sub-tile."""
    pipeline_depth: int = 1
    """How many K slices of the tile are in shared memory at once: the block copies the next
    `pipeline_depth - 1` slices (cp.async) while it multiplies one."""
    warp_roles: tuple[str, ...] = ()
    """What each warp group of a warp-specialised block does (`WarpRole`), in order."""
    raster: int = 0
    """A persistent (wgmma) block's tile order: how many rows of tiles it walks down before it
    moves right (`GemmOp.raster_group`); 0 takes RASTER_GROUP."""
    split: int = 1
    """How many blocks share the reduction of each output tile (K of a product, the keys and
    values of attention), each taking 1/split of it, their partials combined after (split-K,
    flash-decoding): more blocks for an output too small to fill the GPU."""
    cluster: int = 1
    """How many persistent (wgmma) blocks of consecutive M tiles of one N column run as a
    thread-block cluster, each copying 1/cluster of every K slice of the rhs into all of
    theirs (TMA multicast): the L2 cache serves each rhs slice once per cluster."""

    def loop(self, path: LoopPath) -> LoopSchedule:
        return dict(self.loops).get(path, LoopSchedule(Mapping.SERIAL))

    def verify(self) -> None:
        # The block's limits are the target's, which the tile.kernel lowered from this checks;
        # here only that every number fits the 32 bits CUDA counts threads, tiles and stages in.
        numbers = [
            *self.block,
            *(i for path, _ in self.loops for i in path),
            *(n for stage in self.stages for n in (stage.argument, *stage.loop)),
            *self.tile_shape,
            *self.warps,
            self.pipeline_depth,
            self.raster,
            self.split,
            self.cluster,
        ]
        if any(abs(n) >= 2**31 for n in numbers):
            raise VerifyException(
                f"{max(numbers, key=abs)} is too large a number for a schedule (below 2**31)"
            )
        if len(self.block) != 3 or min(self.block) < 1:
            raise VerifyException(f"block {list(self.block)} must have 3 positive sizes")
        paths = [path for path, _ in self.loops]
        if len(set(paths)) != len(paths) or not all(paths) or min(min(paths, default=[0])) < 0:
            raise VerifyException(
                f"loops {[list(p) for p in paths]} must be distinct, non-empty paths of "
                "non-negative loop indices"
            )
        for path, loop_schedule in self.loops:
            width = loop_schedule.vector
            if width != 1 and (
                width not in VECTOR_WIDTHS or loop_schedule.mapping not in VECTOR_MAPPINGS
            ):
                raise VerifyException(
                    f"loop {list(path)}: vector width {width} must be one of "
                    f"{', '.join(map(str, VECTOR_WIDTHS))}, on a loop mapped to thread or global"
                )
        for stage in self.stages:
            if self.loop(stage.loop).mapping not in GRID_MAPPINGS:
                raise VerifyException(
                    f"a row is staged by a block: staging at loop {list(stage.loop)} needs "
                    "that loop mapped to grid or grid_y"
                )
        self._verify_contraction()

    @property
    def is_contraction(self) -> bool:
        """Whether this schedules a contraction's kernel (a `tile.gemm`)."""
        return bool(self.tile_shape)

    def _verify_contraction(self) -> None:
        given = [bool(self.tile_shape), self.mma_atom is not None, bool(self.warps)]
        if any(given) and not all(given):
            raise VerifyException(
                "a contraction's schedule gives its 'tile', 'atom' and 'warps' together"
            )
        if self.pipeline_depth < 1:
            raise VerifyException(
                f"'pipeline' is how many K slices are in shared memory at once, at least 1, "
                f"got {self.pipeline_depth}"
            )
        _verify_split(self.split)
        if not self.is_contraction:
            contraction_only = (self.raster, self.split != 1, self.cluster != 1)
            if self.pipeline_depth != 1 or self.warp_roles or any(contraction_only):
                raise VerifyException(
                    "'pipeline', 'warp_roles', 'raster', 'split' and 'cluster' are part of a "
                    "contraction's schedule"
                )
            return
        if self.loops or self.stages:
            raise VerifyException(
                "a contraction's schedule maps no loops and stages no rows: its tile.gemm "
                "says how the blocks tile the product"
            )
        verify_gemm_tiling(self.tile_shape, self.mma_atom, self.warps)
        _verify_warp_roles(self.mma_atom, self.warps, self.warp_roles)
        _verify_raster(self.mma_atom, self.raster)
        _verify_cluster(self.mma_atom, self.cluster)


def _print_path(printer: Printer, path: LoopPath) -> None:
    printer.print_string(f"[{', '.join(map(str, path))}]")


def _parse_path(parser: AttrParser) -> LoopPath:
    return tuple(
        parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
        )
    )


@irdl_attr_definition
class ScheduleAttr(Data[Schedule]):
    """`#tile.schedule<...>`: a `Schedule` in the IR, on the `loop.kernel` it is for."""

    name = "tile.schedule"

    def verify(self) -> None:
        self.data.verify()

    def print_parameter(self, printer: Printer) -> None:
        schedule = self.data
        with printer.in_angle_brackets():
            printer.print_string(f"block [{', '.join(map(str, schedule.block))}], loops [")

            def print_loop(entry: tuple[LoopPath, LoopSchedule]) -> None:
                path, loop_schedule = entry
                _print_path(printer, path)
                printer.print_string(f" {loop_schedule.mapping}")
                if loop_schedule.vector != 1:
                    printer.print_string(f" vector {loop_schedule.vector}")

            printer.print_list(schedule.loops, print_loop)
            printer.print_string("]")
            if schedule.stages:
                printer.print_string(", stage [")

                def print_stage(stage: Staging) -> None:
                    _print_path(printer, stage.loop)
                    printer.print_string(f" arg {stage.argument} {stage.mode}")

                printer.print_list(schedule.stages, print_stage)
                printer.print_string("]")
            if schedule.tile_shape:
                printer.print_string(f", tile [{', '.join(map(str, schedule.tile_shape))}]")
            if schedule.mma_atom is not None:
                printer.print_string(f", atom {schedule.mma_atom}")
            if schedule.warps:
                printer.print_string(f", warps [{', '.join(map(str, schedule.warps))}]")
            if schedule.pipeline_depth != 1:
                printer.print_string(f", pipeline {schedule.pipeline_depth}")
            if schedule.warp_roles:
                printer.print_string(", warp_roles [")
                printer.print_list(schedule.warp_roles, printer.print_string_literal)
                printer.print_string("]")
            if schedule.raster:
                printer.print_string(f", raster {schedule.raster}")
            if schedule.split != 1:
                printer.print_string(f", split {schedule.split}")
            if schedule.cluster != 1:
                printer.print_string(f", cluster {schedule.cluster}")

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Schedule:
        start = parser.pos
        integer = lambda: parser.parse_integer(allow_boolean=False)  # noqa: E731
        square = parser.Delimiter.SQUARE
        with parser.in_angle_brackets():
            parser.parse_keyword("block")
            block_pos = parser.pos
            block = tuple(parser.parse_comma_separated_list(square, integer))
            if len(block) != 3:
                parser.raise_error("a block shape has 3 sizes", block_pos, parser.pos)
            parser.parse_punctuation(",")
            parser.parse_keyword("loops")

            def parse_loop() -> tuple[LoopPath, LoopSchedule]:
                path = _parse_path(parser)
                mapping = MappingAttr.parse_parameter(parser)
                vector = integer() if parser.parse_optional_keyword("vector") else 1
                return path, LoopSchedule(mapping, vector)

            loops = tuple(parser.parse_comma_separated_list(square, parse_loop))
            fields: dict[str, object] = {}
            parsers = {
                "stage": lambda: tuple(parser.parse_comma_separated_list(square, parse_stage)),
                "tile": lambda: tuple(parser.parse_comma_separated_list(square, integer)),
                "atom": lambda: parse_atom(parser),
                "warps": lambda: tuple(parser.parse_comma_separated_list(square, integer)),
                "pipeline": integer,
                "raster": integer,
                "split": integer,
                "cluster": integer,
                "warp_roles": lambda: tuple(
                    parser.parse_comma_separated_list(square, parser.parse_str_literal)
                ),
            }
            names = {"stage": "stages", "tile": "tile_shape", "atom": "mma_atom"}
            names.update(
                pipeline="pipeline_depth",
                warps="warps",
                warp_roles="warp_roles",
                raster="raster",
                split="split",
                cluster="cluster",
            )

            def parse_stage() -> Staging:
                path = _parse_path(parser)
                parser.parse_keyword("arg")
                argument = integer()
                return Staging(argument, path, StageModeAttr.parse_parameter(parser))

            while parser.parse_optional_punctuation(",") is not None:
                keyword_pos = parser.pos
                keyword = parser.parse_identifier()
                if keyword not in parsers or names[keyword] in fields:
                    parser.raise_error(
                        f"expected one of {', '.join(parsers)}, each at most once",
                        keyword_pos,
                        parser.pos,
                    )
                fields[names[keyword]] = parsers[keyword]()
        schedule = Schedule(block, loops, **fields)
        try:
            schedule.verify()
        except VerifyException as error:
            parser.raise_error(str(error), start, parser.pos)
        return schedule


@irdl_op_definition
class KernelOp(KernelSymbolOp):
    """A scheduled kernel: the loop nest of a `loop.kernel` with its launch shape."""

    name = "tile.kernel"
    grid = prop_def(DenseArrayBase[I64])
    block = prop_def(DenseArrayBase[I64])

    def __init__(
        self,
        name: str,
        argument_types: Sequence[Attribute],
        grid: Sequence[int],
        block: Sequence[int],
        body: Region,
    ):
        super().__init__(
            name,
            argument_types,
            body,
            {
                "grid": DenseArrayBase.from_list(i64, list(grid)),
                "block": DenseArrayBase.from_list(i64, list(block)),
            },
        )

    @property
    def grid_shape(self) -> tuple[int, ...]:
        return tuple(self.grid.get_values())

    @property
    def block_shape(self) -> tuple[int, ...]:
        return tuple(self.block.get_values())

    @property
    def gemm(self) -> GemmOp | None:
        """The contraction this kernel computes, if it is a contraction's kernel."""
        return next((op for op in self.body.block.ops if isinstance(op, GemmOp)), None)

    @property
    def attention(self) -> AttentionOp | None:
        """The attention this kernel computes, if it is an attention's kernel."""
        return next((op for op in self.body.block.ops if isinstance(op, AttentionOp)), None)

    def _verify_gemm_kernel(self, gemm: GemmOp | AttentionOp, target: GpuTarget) -> None:
        verify_grid_shape(self.grid_shape, target)
        verify_block_shape(self.block_shape, target)
        if len(self.body.block.ops) != 1:
            raise VerifyException(
                f"a contraction's tile.kernel holds its {gemm.name} and nothing else"
            )
        try:
            expected = gemm.grid(target)
        except VerifyException:
            return  # the tile.gemm's own verifier says what is wrong with it
        # Along x, a dynamic size's blocks are counted at its representative size.
        sized = gemm.dynamic_dim is not None if isinstance(gemm, GemmOp) else gemm.dynamic_rows
        compared = 1 if sized else 0
        if self.grid_shape[compared:] != expected[compared:]:
            split = f" ({gemm.split_count} along x per tile: split)" if gemm.split else ""
            raise VerifyException(
                f"grid {list(self.grid_shape)} is not the {list(expected)} blocks that the "
                f"{gemm.name}'s tiles take{split}"
            )

    def verify_(self) -> None:
        self.verify_symbol()
        target = target_of(self)
        gemm = self.gemm or self.attention
        if gemm is not None:
            self._verify_gemm_kernel(gemm, target)
        else:
            self._verify_loop_kernel(target)
        self._verify_schedule()
        verify_kernel_arguments(self)
        verify_access_bounds(self)

    def _verify_loop_kernel(self, target: GpuTarget) -> None:
        verify_launch_shape(self.grid_shape, self.block_shape, target)
        if self.grid_shape[1] > 1:
            for nest in self.body.block.ops:
                if isinstance(nest, ForOp) and not any(
                    isinstance(f, ForOp) and f.mapping.data == Mapping.GRID_Y for f in nest.walk()
                ):
                    raise VerifyException(
                        f"grid {list(self.grid_shape)} has {self.grid_shape[1]} rows of blocks, "
                        f"but a nest maps no loop to grid_y: it would run once per row"
                    )
        if _has_rows_loops(self):
            self._verify_rows()
        self._verify_blocks_pass_nothing()

    def _verify_rows(self) -> None:
        """A block of several rows runs an iteration of its grid loops in each row of its
        threads, apart: so every nest is a chain of grid loops over thread and serial loops
        that reduce nothing across the block, stage nothing and pass nothing to each other
        (which would take a barrier of the whole block inside the rows' own iterations). A
        nest of one global loop that reduces nothing may sit beside them: every thread of the
        block takes its iterations, numbered across the rows."""
        rows = (
            f"block {list(self.block_shape)} gives each iteration of a rows loop a row of threads"
        )
        if self.block_shape[2] != 1:
            raise VerifyException(f"{rows}, so its z size is 1")
        paths = loop_paths(self.body.block, ForOp)
        for nest in self.body.block.ops:
            if not isinstance(nest, ForOp):
                continue
            if nest.mapping.data == Mapping.GLOBAL and not nest.is_reduction:
                if any(isinstance(op, ForOp) for op in nest.body.walk()):
                    raise VerifyException(
                        f"{rows}, but global loop {list(paths[nest])} has loops inside"
                    )
                continue
            if nest.mapping.data != Mapping.ROWS:
                raise VerifyException(
                    f"{rows}, but loop {list(paths[nest])} is mapped to {nest.mapping.data}, "
                    "not rows (every nest's threads are numbered in rows)"
                )
            last = nest
            while (inner := [o for o in last.body.block.ops if isinstance(o, ForOp)]) and (
                inner[0].mapping.data == Mapping.ROWS and len(inner) == 1
            ):
                last = inner[0]
            for op in last.body.walk():
                if isinstance(op, StageOp):
                    raise VerifyException(f"{rows}, which shares no staged row")
                if not isinstance(op, ForOp) or op is last:
                    continue
                where = f"loop {list(paths[op])} ({op.mapping.data})"
                if op.mapping.data not in (Mapping.THREAD, Mapping.SERIAL):
                    raise VerifyException(f"{rows}, but {where} is not a thread or serial loop")
                if op.mapping.data == Mapping.THREAD and op.is_reduction:
                    raise VerifyException(
                        f"{rows}, but {where} reduces across the threads of the whole block"
                    )
            if dependence := first_dependence(list(last.body.block.ops)):
                raise VerifyException(
                    f"{dependence.explain(partial(_op_name, paths))}, but {rows}, and no "
                    "barrier orders a row's own ops"
                )

    def _verify_blocks_pass_nothing(self) -> None:
        """Ops that different blocks run at once, which nothing orders (no barrier spans the
        grid), pass nothing to each other through memory (`emmy.dialects.dependences`): the
        nests of a kernel of more than one block, the ops of an iteration of a grid_y loop
        over rows of more than one block, and the ops of a serial loop's iteration where its
        own are spread so; and no store is made to the same elements by every iteration of a
        grid or grid_y loop whose iterations go to different blocks. (The ops of one block
        are ordered with barriers by lower-tile-to-kernel.)"""
        grid_x, grid_y, _ = self.grid_shape
        paths = loop_paths(self.body.block, ForOp)
        name = partial(_op_name, paths)

        def check(ops: list[Operation], spread: str) -> None:
            """`spread`: why `ops` run at once on different blocks ("" where they do not)."""
            if spread and (dependence := first_dependence(ops)):
                raise VerifyException(
                    f"{dependence.explain(name)}, but nothing orders them: {spread}"
                )
            for op in ops:
                if not isinstance(op, ForOp):
                    continue
                body = list(op.body.block.ops)
                where = f"loop {list(paths[op])} ({op.mapping.data})"
                blocks = {
                    Mapping.GRID: grid_x,
                    Mapping.ROWS: grid_x * self.block_shape[1],
                    Mapping.GRID_Y: grid_y,
                }.get(op.mapping.data, 1)
                spread_iterations = blocks > 1 and (op.is_dynamic or op.trip_count > 1)
                if spread_iterations and (shared := store_shared_by_iterations(op)):
                    raise VerifyException(
                        f"every iteration of {where} stores to the same elements of "
                        f"{buffer_name(shared)}, but its iterations run at once on "
                        f"{blocks} blocks, and no barrier spans the grid (give each iteration "
                        f"elements of its own, at the loop's variable)"
                    )
                if op.mapping.data in (Mapping.GRID, Mapping.ROWS):
                    check(body, "")
                elif op.mapping.data == Mapping.GRID_Y:
                    row = f"the ops of an iteration of {where}"
                    check(body, _spread(row, grid_x, "in rows of one block, barriers order them"))
                elif op.mapping.data == Mapping.SERIAL:
                    check(body, spread)

        nests = _spread(
            "the nests of the kernel",
            prod(self.grid_shape),
            "launch them one after another, as lower-loop-to-tile does, or in one block",
        )
        check(list(self.body.block.ops), nests)

    def _verify_schedule(self) -> None:
        """The schedule a kernel was lowered with, if it keeps one, is the one it follows."""
        attribute = self.attributes.get(SCHEDULE_ATTRIBUTE)
        if attribute is None:
            return
        if not isinstance(attribute, ScheduleAttr):
            raise VerifyException(f"'{SCHEDULE_ATTRIBUTE}' must be a #tile.schedule")
        schedule = attribute.data
        if schedule.block != self.block_shape:
            raise VerifyException(
                f"block {list(self.block_shape)} is not the schedule's {list(schedule.block)}"
            )
        gemm = self.gemm or self.attention
        if schedule.is_contraction != (gemm is not None):
            raise VerifyException(
                "a contraction's schedule (with a tile) is the schedule of a tile.gemm's or a "
                "tile.attention's kernel, and only of one"
            )
        if gemm is not None:
            cluster = gemm.cluster_blocks if isinstance(gemm, GemmOp) else 1
            lowered = (
                gemm.tile_shape,
                gemm.mma_atom,
                gemm.warp_grid,
                gemm.pipeline_depth,
                gemm.raster_rows,
                gemm.split_count,
                cluster,
            )
            if lowered != (
                schedule.tile_shape,
                schedule.mma_atom,
                schedule.warps,
                schedule.pipeline_depth,
                schedule.raster,
                schedule.split,
                schedule.cluster,
            ):
                fields = [
                    f"tile {list(gemm.tile_shape)}",
                    f"atom {gemm.mma_atom}",
                    f"warps {list(gemm.warp_grid)}",
                    f"pipeline {gemm.pipeline_depth}",
                ]
                if gemm.raster_rows or schedule.raster:
                    fields.append(f"raster {gemm.raster_rows}")
                if gemm.split_count != 1 or schedule.split != 1:
                    fields.append(f"split {gemm.split_count}")
                if cluster != 1 or schedule.cluster != 1:
                    fields.append(f"cluster {cluster}")
                raise VerifyException(
                    f"the {gemm.name}'s {', '.join(fields[:-1])} and {fields[-1]} are not its "
                    f"schedule's"
                )
            return
        paths = loop_paths(self.body.block, ForOp)
        for path, _ in schedule.loops:
            if path not in paths.values():
                raise VerifyException(f"the schedule maps loop {list(path)}, which is not here")
        for for_op, path in paths.items():
            expected = schedule.loop(path)
            if (for_op.mapping.data, for_op.vector_width) != (expected.mapping, expected.vector):
                raise VerifyException(
                    f"loop {list(path)} is mapped {for_op.mapping.data} vector "
                    f"{for_op.vector_width}, but the schedule says {expected.mapping} vector "
                    f"{expected.vector}"
                )

    def print_launch_shape(self, printer: Printer) -> None:
        print_shape(printer, "grid", self.grid_shape)
        print_shape(printer, "block", self.block_shape)

    @classmethod
    def parse_launch_shape(cls, parser: Parser) -> tuple[list[int], list[int]]:
        return parse_shape(parser, "grid"), parse_shape(parser, "block")


def _spread(what: str, blocks: int, remedy: str) -> str:
    """Why `what` run at once on different blocks, and what orders them; "" for one block."""
    if blocks == 1:
        return ""
    return f"{what} run at once on {blocks} blocks, and no barrier spans the grid ({remedy})"


@irdl_op_definition
class YieldOp(AbstractYieldOperation[Attribute]):
    """Ends a `tile.for` body (a reduction yields this iteration's contribution) and a
    `tile.gemm` epilogue."""

    name = "tile.yield"
    traits = lazy_traits_def(lambda: (IsTerminator(), Pure(), HasParent(ForOp, GemmOp)))


@irdl_op_definition
class ForOp(ForOpBase):
    """`tile.for %i in lower to upper map MAPPING`, parallel or, with a combiner, a reduction
    (the same semantics as `loop.for`, see `emmy.dialects.for_op`)."""

    name = "tile.for"
    mapping = prop_def(MappingAttr)
    vector = opt_prop_def(IntAttr)
    YIELD: ClassVar[type[IRDLOperation]] = YieldOp

    def __init__(
        self,
        lower: int,
        upper: int | SSAValue,
        mapping: Mapping,
        body: Region,
        reduction: Reduction | None = None,
        vector: int = 1,
    ):
        properties: dict[str, Attribute] = {"mapping": MappingAttr(Mapping(mapping))}
        if vector != 1:
            properties["vector"] = IntAttr(vector)
        super().__init__(lower, upper, body, reduction, properties)

    @property
    def vector_width(self) -> int:
        """How many consecutive iterations a thread takes at a time."""
        return self.vector.data if self.vector is not None else 1

    def _verify_vector(self) -> None:
        width = self.vector_width
        if width == 1:
            return
        if width not in VECTOR_WIDTHS:
            raise VerifyException(
                f"vector width {width} must be one of {', '.join(map(str, VECTOR_WIDTHS))}"
            )
        if self.mapping.data not in VECTOR_MAPPINGS:
            raise VerifyException(
                f"only a loop mapped to thread or global is vectorised, not {self.mapping.data}"
            )
        if self.is_dynamic:
            raise VerifyException(
                f"vector width {width} must divide the loop's trip count, but it runs to the "
                "dynamic size"
            )
        if self.lower.data % width or self.trip_count % width:
            raise VerifyException(
                f"vector width {width} must divide the loop's start {self.lower.data} and its "
                f"trip count {self.trip_count}"
            )
        if any(isinstance(op, ForOp) for op in self.body.walk()):
            raise VerifyException("a vectorised tile.for holds no loops")

    def _verify_split_reduction(self) -> None:
        if self.combiner is not None:
            raise VerifyException(
                "a reduction with a combiner region cannot be mapped to global: the blocks' "
                "totals are combined with atomics, which combine one value with add, max or "
                "min, not a combiner region's state (map it to thread, within one block)"
            )
        if self.kind.data not in SPLIT_KINDS:
            raise VerifyException(
                f"a reduction mapped to global combines the blocks' totals with atomics, which "
                f"take {', '.join(SPLIT_KINDS)}, not {self.kind.data}"
            )
        if self.init.type not in SPLIT_TYPES:
            raise VerifyException(
                f"a reduction mapped to global combines the blocks' totals with atomics, on "
                f"f32, f64, i32 or i64, not {self.init.type}"
            )
        uses = [use.operation for use in self.accumulator[0].uses]
        store = uses[0] if len(uses) == 1 else None
        if not (
            isinstance(store, memref.StoreOp)
            and store.value is self.accumulator[0]
            and store.parent_block() is self.parent_block()
            and all(isinstance(i.owner, arith.ConstantOp) for i in store.indices)
        ):
            raise VerifyException(
                "a reduction mapped to global combines the blocks' totals with atomics into "
                "the element it is stored to: its result has one use, a memref.store beside "
                "the loop at constant indices"
            )
        self._verify_split_target_untouched(store)

    def _verify_split_target_untouched(self, store: memref.StoreOp) -> None:
        """The host sets the element to the init before the kernel and the blocks add into it
        as they finish: any other access to the buffer in the kernel would read the init or a
        partial total, and a second split reduction into the element would add into it too."""
        kernel_op = self.parent_op()
        assert isinstance(kernel_op, KernelOp)
        target = store.memref
        for op in kernel_op.body.walk():
            if op is store or target not in op.operands:
                continue
            other = _split_target_index(op)
            if other is not None and other != _split_target_index(store):
                continue
            raise VerifyException(
                "a reduction mapped to global adds the blocks' totals with atomics into the "
                "element it is stored to, after the host sets it to the init: no other op of "
                f"the kernel may access that element's buffer, but '{op.name}' does"
            )

    def _enclosing_loops(self) -> list[ForOp]:
        """The tile.for ops around this one in its kernel, innermost first."""
        loops, op = [], self.parent_op()
        while op is not None and not isinstance(op, KernelOp):
            if isinstance(op, ForOp):
                loops.append(op)
            op = op.parent_op()
        return loops

    def _verify_nesting(self) -> None:
        """The threads split the iterations of one loop of a nest (see the module docstring):
        a thread or global loop inside another would give each thread a part of a part."""
        mapping = self.mapping.data
        if mapping not in VECTOR_MAPPINGS:
            return
        enclosing = self._enclosing_loops()
        spread = next((o for o in enclosing if o.mapping.data in VECTOR_MAPPINGS), None)
        if spread is not None:
            raise VerifyException(
                f"a loop mapped to {mapping} cannot be inside a loop mapped to "
                f"{spread.mapping.data}: the threads already split the outer loop's iterations"
            )

    def _verify_block_index_read_once(self) -> None:
        """A loop over a grid dimension strides by the block index: a loop around it that reads
        the same index would give each block a part of a part. Only a chain of grid loops of one
        mapping, each the only loop of the one around it, is linearised over the index once."""
        dimensions = set(grid_dimensions(self.mapping.data))
        if not dimensions:
            return
        inner, outer = self, self.parent_op()
        while (
            isinstance(outer, ForOp)
            and outer.mapping.data == self.mapping.data
            and self.mapping.data in GRID_MAPPINGS
            and [o for o in outer.body.block.ops if isinstance(o, ForOp)] == [inner]
        ):
            inner, outer = outer, outer.parent_op()
        while isinstance(outer, ForOp):
            if dimensions & set(grid_dimensions(outer.mapping.data)):
                raise VerifyException(
                    f"a loop mapped to {self.mapping.data} inside a loop mapped to "
                    f"{outer.mapping.data} would read the same block index twice (map the outer "
                    "loop to grid_y, or make the loops one chain)"
                )
            outer = outer.parent_op()

    def verify_(self) -> None:
        self._verify_block_index_read_once()
        self.verify_loop()
        self._verify_vector()
        self._verify_nesting()
        if not self.is_reduction:
            return
        if self.mapping.data in GRID_MAPPINGS:
            raise VerifyException(
                f"a reduction cannot be mapped to {self.mapping.data}: blocks do not combine "
                "their results"
            )
        if self.mapping.data == "global":
            if not isinstance(self.parent_op(), KernelOp):
                raise VerifyException(
                    "a reduction mapped to global is split across the blocks of the grid: it "
                    "is a whole nest, not inside another loop"
                )
            self._verify_split_reduction()

    def print_schedule(self, printer: Printer) -> None:
        printer.print_string(f" map {self.mapping.data}")
        if self.vector_width != 1:
            printer.print_string(f" vector {self.vector_width}")

    @classmethod
    def parse_schedule(cls, parser: Parser) -> dict[str, object]:
        parser.parse_keyword("map")
        mapping = MappingAttr.parse_parameter(parser)
        vector = 1
        if parser.parse_optional_keyword("vector") is not None:
            vector = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return {"mapping": mapping, "vector": vector}


@irdl_op_definition
class StageOp(IRDLOperation):
    """`tile.stage %x[%i] async : memref<32x2048xf32>`: the block copies the row of `%x` at
    the leading indices into shared memory, and the loads of that row after it in the
    enclosing grid loop read the copy (see the module docstring)."""

    name = "tile.stage"
    buffer = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    mode = prop_def(StageModeAttr)
    traits = lazy_traits_def(
        lambda: (HasParent(ForOp), ReadsOperand("buffer"), WritesSharedMemory())
    )

    assembly_format = "$buffer `[` $indices `]` $mode attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, indices: Sequence[SSAValue], mode: StageMode):
        super().__init__(
            operands=[buffer, indices], properties={"mode": StageModeAttr(StageMode(mode))}
        )

    @property
    def row_type(self) -> MemRefType:
        """The shape and element type of the staged row."""
        memref_type = self.buffer.type
        assert isinstance(memref_type, MemRefType)
        return MemRefType(memref_type.element_type, memref_type.get_shape()[len(self.indices) :])

    def verify_(self) -> None:
        parent = self.parent_op()
        if not isinstance(parent, ForOp) or parent.mapping.data not in GRID_MAPPINGS:
            raise VerifyException("a row is staged by a block: tile.stage belongs in a grid loop")
        if any(o.mapping.data == "thread" for o in parent._enclosing_loops()):
            raise VerifyException(
                "a row is staged by the whole block: tile.stage is not inside a loop mapped to "
                "thread, whose iterations differ between the threads"
            )
        kernel_op = parent.parent_op()
        while kernel_op is not None and not isinstance(kernel_op, KernelOp):
            kernel_op = kernel_op.parent_op()
        if kernel_op is not None and self.buffer in written_values(kernel_op.body):
            raise VerifyException(
                "a staged row is read from its shared copy, so the kernel may not write the "
                "staged buffer (its stores would miss the copy, or the copy its stores)"
            )
        rank = self.buffer.type.get_num_dims()
        if len(self.indices) != rank - 1:
            raise VerifyException(
                f"a staged row is the last dimension: a rank-{rank} buffer takes {rank - 1} "
                f"leading indices, got {len(self.indices)}"
            )
        row = self.row_type
        size = prod(row.get_shape()) * element_bytes(row.element_type)
        limit = target_of(self).static_shared_bytes_per_block
        if size > limit:
            raise VerifyException(
                f"a staged row of {size} bytes is over the {limit} bytes of a block's "
                "static shared memory"
            )


GEMM_DIMS = ("m", "n", "k")


def gemm_dim_name(position: int, batch_rank: int) -> str:
    """The name of iteration dimension `position` of a contraction with `batch_rank` batch
    dimensions: `b0`, `b1`, ..., then `m`, `n`, `k`."""
    return f"b{position}" if position < batch_rank else GEMM_DIMS[position - batch_rank]


SHARED_ROW_BYTES = (32, 64)
"""Widths of a shared tile's rows, besides multiples of 128 bytes, whose swizzle keeps the 8
rows an ldmatrix reads in 8 different 16-byte bank groups."""


@irdl_op_definition
class GemmOp(IRDLOperation):
    """A contraction computed in tiles by the blocks of its kernel, with an epilogue run for
    each output element:

        tile.gemm %x[m, k] * %w[n, k] : memref<70x40xbf16>, memref<50x40xbf16> -> f32
            atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3
            epilogue(%m, %n, %acc) {
          %b = memref.load %bias[%n] : memref<50xf32>
          %s = arith.addf %acc, %b : f32
          %y16 = arith.truncf %s : f32 to bf16
          memref.store %y16, %y[%m, %n] : memref<70x50xbf16>
        }

    For each point (b0, ..., m, n) of the output, `acc` = sum over k of lhs * rhs, both
    widened to the accumulator type f32; then the epilogue runs once with the point and
    `acc`, and stores what it computes (a bias, an activation, a cast fuse there). The
    iteration dimensions are the batch dimensions `b0`, `b1`, ... (as many as the epilogue
    takes before m and n), `m`, `n` and `k`; each dimension of an operand names the one it
    walks: lhs has m and k, rhs n and k, and each batch dimension is in one or both (an
    operand without it is the same for every batch), with a matrix dimension last (`%w[n, k]`
    is nn.Linear's weight, `%w[k, n]` a [K, N] matrix).

    The schedule: each block computes a BM x BN tile of the output (`tile [BM, BN, BK]`), one
    block per tile, the grid's x over the N tiles, y over the M tiles and z over the batch
    (a block strides through the batch by the grid's z when there are more than the grid
    has); K is taken BK at a time through shared memory, `pipeline` slices deep. The block's
    `warps [WM, WN]` each compute a (BM / WM) x (BN / WN) sub-tile in whole `atom`s (see
    `MmaAtom`); on the fma atom its lanes split it into equal register tiles
    (`fma_lane_grid`). Tiles past the end of M, N or K compute zeros and store nothing, so any
    sizes are correct. With `split S` (split-K, on the mma_sync and fma atoms) S blocks share
    each output tile, the grid's x holding S blocks per N tile, each multiplying an equal run
    of the K slices; the S blocks are a thread-block cluster, which sums their partial tiles
    through distributed shared memory before the epilogue runs once per output element.

    Sibling rhs (`* (%wg, %wu)[n, k]`, of one type; `loop.contract`'s) are multiplied by the
    same lhs tiles, and the epilogue takes one accumulator per rhs (`epilogue(%m, %n, %gate,
    %up)`). The tile's N covers the siblings: tile [128, 256, 64] of 2 siblings is 128 output
    columns of each, a tile per 128 columns of the output. Each warp's part of the tile's N
    is 1/S of it from each sibling, at the same columns (column c of a warp's N of width W is
    column W/S w + c % (W/S) of sibling c / (W/S) for warp column w), so a thread holds
    the siblings' accumulators of an output element side by side: the mma_sync and wgmma
    accumulator layouts give every thread of a warp (group) 2 columns of each 8 of the warp's
    N, so each sibling's part is a multiple of 8 columns (of `fma_lane_grid`'s lanes_n on the
    fma atom). Siblings take no split.

    On wgmma, `cluster C` runs the persistent blocks in thread-block clusters of C: the
    blocks of a cluster take C consecutive M tiles of one N column at once (the last M
    tiles past the end compute zeros and store nothing), and each copies 1/C of every K
    slice of the rhs into the shared memory of all of them (TMA multicast), so the L2 cache
    serves each rhs slice once per cluster.

    One batch dimension or m may be the program's dynamic size (`emmy.dialects.sizes`): its
    operands' `?` dim (`memref<1x?x64xbf16>`), its extent the kernel's size argument. The
    blocks then take the tiles of the batch and M along the grid's x, those of N along y,
    as many as the size needs (`sized_grid`; the grid's own x is the count at the size the
    schedule was chosen for, and the blocks stride through the tiles past it); the tails
    of M compute zeros and store nothing, as a static M's do. n and k are static, and so is
    the split: a split is for a product of few rows, which a size planned at its
    representative is not."""

    name = "tile.gemm"
    lhs = operand_def(MemRefType)
    rhs = var_operand_def(MemRefType)
    lhs_map = prop_def(DenseArrayBase[I64])
    rhs_map = prop_def(DenseArrayBase[I64])
    atom = prop_def(MmaAtomAttr)
    tile = prop_def(DenseArrayBase[I64])
    warps = prop_def(DenseArrayBase[I64])
    pipeline = prop_def(IntAttr)
    raster = opt_prop_def(IntAttr)
    split = opt_prop_def(IntAttr)
    cluster = opt_prop_def(IntAttr)
    epilogue = region_def("single_block")
    traits = lazy_traits_def(
        lambda: (
            HasParent(KernelOp),
            ReadsOperand("lhs"),
            ReadsOperand("rhs"),
            RecursiveMemoryEffect(),
        )
    )

    def __init__(
        self,
        lhs: SSAValue,
        lhs_map: Sequence[int],
        rhs: Sequence[SSAValue],
        rhs_map: Sequence[int],
        atom: MmaAtom,
        tile_shape: Sequence[int],
        warps: Sequence[int],
        pipeline_depth: int,
        epilogue: Region,
        raster: int = 0,
        split: int = 1,
        cluster: int = 1,
    ):
        block = epilogue.block
        if block.last_op is None or not block.last_op.has_trait(IsTerminator):
            block.add_op(YieldOp())
        super().__init__(
            operands=[lhs, list(rhs)],
            regions=[epilogue],
            properties={
                "lhs_map": DenseArrayBase.from_list(i64, list(lhs_map)),
                "rhs_map": DenseArrayBase.from_list(i64, list(rhs_map)),
                "atom": MmaAtomAttr(atom),
                "tile": DenseArrayBase.from_list(i64, list(tile_shape)),
                "warps": DenseArrayBase.from_list(i64, list(warps)),
                "pipeline": IntAttr(pipeline_depth),
                "raster": IntAttr(raster) if raster else None,
                "split": IntAttr(split) if split != 1 else None,
                "cluster": IntAttr(cluster) if cluster != 1 else None,
            },
        )

    # -- what it computes --

    @property
    def batch_rank(self) -> int:
        return len(self.epilogue.block.args) - 2 - len(self.rhs)

    @property
    def siblings(self) -> int:
        """How many rhs the lhs is multiplied by."""
        return len(self.rhs)

    @property
    def accumulators(self) -> tuple[SSAValue, ...]:
        """The epilogue's accumulators, one per rhs."""
        return tuple(self.epilogue.block.args[self.batch_rank + 2 :])

    @property
    def lhs_dims(self) -> tuple[int, ...]:
        """The iteration dimension each dimension of lhs walks (batch..., m = B, n, k)."""
        return tuple(self.lhs_map.get_values())

    @property
    def rhs_dims(self) -> tuple[int, ...]:
        return tuple(self.rhs_map.get_values())

    @property
    def rhs_n_contiguous(self) -> bool:
        """Whether rhs is [..., k, n] (torch.matmul's weight), its last dimension n."""
        return self.rhs_dims[-1] == self.batch_rank + 1

    @property
    def accumulator_type(self) -> Attribute:
        return self.epilogue.block.args[-1].type

    def sizes(self) -> tuple[int, ...]:
        """The extent of each iteration dimension (batch..., M, N, K), from the operands."""
        rank = self.batch_rank + 3
        found: dict[int, int] = {}
        for operand, dims in ((self.lhs, self.lhs_dims), (self.rhs[0], self.rhs_dims)):
            for dim, size in zip(dims, operand.type.get_shape()):
                if found.setdefault(dim, size) != size:
                    raise VerifyException(
                        f"dimension {gemm_dim_name(dim, self.batch_rank)} is {found[dim]} in "
                        f"one operand and {size} in another"
                    )
        missing = [gemm_dim_name(d, self.batch_rank) for d in range(rank) if d not in found]
        if missing:
            raise VerifyException(
                f"no operand walks dimension {', '.join(missing)}: its extent is unknown"
            )
        return tuple(found[d] for d in range(rank))

    @property
    def dynamic_dim(self) -> int | None:
        """The iteration dimension that is the dynamic size, if one is."""
        try:
            sizes = self.sizes()
        except VerifyException:
            return None
        return sizes.index(DYNAMIC_INDEX) if DYNAMIC_INDEX in sizes else None

    def planned_sizes(self, representative: int) -> tuple[int, ...]:
        """`sizes`, the dynamic size taken as `representative`."""
        return tuple(representative if s == DYNAMIC_INDEX else s for s in self.sizes())

    # -- the schedule --

    @property
    def mma_atom(self) -> MmaAtom:
        return self.atom.data

    @property
    def tile_shape(self) -> tuple[int, int, int]:
        return tuple(self.tile.get_values())

    @property
    def warp_grid(self) -> tuple[int, int]:
        return tuple(self.warps.get_values())

    @property
    def pipeline_depth(self) -> int:
        return self.pipeline.data

    @property
    def sibling_tile_n(self) -> int:
        """The output columns a tile covers: its N, shared by the siblings."""
        return self.tile_shape[1] // self.siblings

    @property
    def raster_rows(self) -> int:
        """The schedule's `raster` (0: none given)."""
        return self.raster.data if self.raster is not None else 0

    @property
    def split_count(self) -> int:
        """The schedule's `split` (1: none given)."""
        return self.split.data if self.split is not None else 1

    @property
    def cluster_blocks(self) -> int:
        """The schedule's `cluster` (1: none given)."""
        return self.cluster.data if self.cluster is not None else 1

    @property
    def raster_group(self) -> int:
        """How many rows of tiles a persistent block's tile order walks down before it moves
        right: the schedule's `raster`, else RASTER_GROUP."""
        return self.raster_rows or RASTER_GROUP

    def grid(
        self, target: GpuTarget, representative: int = REPRESENTATIVE_SIZE
    ) -> tuple[int, int, int]:
        """The blocks the tiles take: the N tiles, the M tiles, and the batch (up to the
        grid's z limit: the blocks stride through the rest); with a dynamic size (taken as
        `representative`), the batch's M tiles, then the N tiles; on wgmma, persistent
        blocks, at most one an SM, that stride through all the tiles."""
        *batch, size_m, size_n, _ = self.planned_sizes(representative)
        block_m = self.tile_shape[0]
        tiles_n, tiles_m = -(-size_n // self.sibling_tile_n), -(-size_m // block_m)
        if self.mma_atom.kind == AtomKind.WGMMA:
            cluster = self.cluster_blocks
            cluster_tiles = tiles_n * -(-tiles_m // cluster) * prod(batch)
            return (cluster * min(cluster_tiles, target.sm_count // cluster), 1, 1)
        if self.dynamic_dim is not None:
            return (min(prod(batch) * tiles_m, target.max_grid_shape[0]), tiles_n, 1)
        return (tiles_n * self.split_count, tiles_m, min(prod(batch), target.max_grid_shape[2]))

    def sized_grid(self) -> tuple[int, int, int] | None:
        """The blocks along x that a size needs (`kernel.LaunchOp.sized`: [factor, divisor,
        power], ceil(size / divisor) * factor): ceil(size / BM) M tiles times the batch's
        (static) points for a dynamic m, size batch points times the M tiles for a dynamic
        batch dimension, each times the N tiles on wgmma (and M tiles counted in whole
        clusters of `cluster`). None for static sizes."""
        dynamic = self.dynamic_dim
        if dynamic is None:
            return None
        *batch, size_m, size_n, _ = self.sizes()
        cluster = self.cluster_blocks
        block_m = self.tile_shape[0]
        factor = prod(b for b in batch if b != DYNAMIC_INDEX) * cluster
        divisor = block_m * cluster if dynamic == self.batch_rank else 1
        if dynamic != self.batch_rank:
            factor *= -(-size_m // (block_m * cluster))
        if self.mma_atom.kind == AtomKind.WGMMA:
            factor *= -(-size_n // self.sibling_tile_n)
        return (factor, divisor, 1)

    def _verify_dynamic(self) -> None:
        sizes = self.sizes()
        dynamic = [gemm_dim_name(d, self.batch_rank) for d, s in enumerate(sizes) if s < 0]
        if len(dynamic) > 1:
            raise VerifyException(
                f"one dimension of a tile.gemm is the dynamic size, got {', '.join(dynamic)}"
            )
        if dynamic and dynamic[0] in ("n", "k"):
            raise VerifyException(
                f"{dynamic[0]} of a tile.gemm is static: only a batch dimension or m may be "
                "the dynamic size"
            )
        if dynamic and self.split_count != 1:
            raise VerifyException(
                "a tile.gemm over the dynamic size takes split 1: a split is for a product "
                "of few rows, which one planned at its representative size is not"
            )

    def split_slices(self) -> tuple[int, int]:
        """How many K slices there are, and how many each of the `split` blocks of a tile
        takes (the last may run past the end of K, where it adds zeros)."""
        slices = -(-self.sizes()[-1] // self.tile_shape[2])
        return slices, -(-slices // self.split_count)

    # -- verification --

    def _verify_maps(self) -> None:
        batch_rank = self.batch_rank
        m, n, k = batch_rank, batch_rank + 1, batch_rank + 2
        for what, operand, dims, own, other in (
            ("lhs", self.lhs, self.lhs_dims, m, n),
            ("rhs", self.rhs[0], self.rhs_dims, n, m),
        ):
            rank = operand.type.get_num_dims()
            names = [gemm_dim_name(d, batch_rank) if 0 <= d <= k else str(d) for d in dims]
            if len(dims) != rank:
                raise VerifyException(
                    f"{what} has {rank} dimensions but its map names {len(dims)}: "
                    f"[{', '.join(names)}]"
                )
            if any(not 0 <= d <= k for d in dims) or len(set(dims)) != len(dims):
                raise VerifyException(
                    f"{what}'s map [{', '.join(names)}] names distinct iteration dimensions "
                    f"of {', '.join(gemm_dim_name(d, batch_rank) for d in range(k + 1))}"
                )
            if own not in dims or k not in dims or other in dims:
                raise VerifyException(
                    f"{what} walks {gemm_dim_name(own, batch_rank)} and k, not "
                    f"{gemm_dim_name(other, batch_rank)}, got [{', '.join(names)}]"
                )
            if dims[-1] < batch_rank:
                raise VerifyException(
                    f"{what}'s last, contiguous dimension is one of its matrix dimensions "
                    f"({gemm_dim_name(own, batch_rank)} or k), got [{', '.join(names)}]"
                )

    def _verify_epilogue(self) -> None:
        block = self.epilogue.block
        types = [arg.type for arg in block.args]
        points = len(types) - self.siblings
        if points < 2 or any(not isinstance(t, IndexType) for t in types[:points]):
            raise VerifyException(
                f"a tile.gemm epilogue takes the output point (batch..., m, n) as indices and "
                f"an accumulator per rhs, got ({', '.join(map(str, types))})"
            )
        if any(t != f32 for t in types[points:]):
            raise VerifyException(f"a tile.gemm accumulates in f32, got {types[-1]}")
        terminator = block.last_op
        if not isinstance(terminator, YieldOp) or terminator.arguments:
            raise VerifyException("a tile.gemm epilogue ends in a tile.yield of nothing")
        for op in self.epilogue.walk():
            if isinstance(op, ForOp | StageOp | GemmOp):
                raise VerifyException(
                    f"a tile.gemm epilogue runs once per output element, without {op.name}"
                )
        written = written_values(self.epilogue) & {self.lhs, *self.rhs}
        if written:
            raise VerifyException(
                "a tile.gemm epilogue does not store to the operands, which every block reads"
            )

    def _verify_element_types(self, target: GpuTarget) -> None:
        atom = self.mma_atom
        lhs, rhs = (v.type.get_element_type() for v in (self.lhs, self.rhs[0]))
        if lhs != rhs:
            raise VerifyException(
                f"a tile.gemm multiplies operands of one type, got {lhs} and {rhs}"
            )
        if atom.kind == AtomKind.FMA:
            if not isinstance(lhs, Float16Type | BFloat16Type | Float32Type):
                raise VerifyException(f"an fma atom multiplies f16, bf16 or f32, got {lhs}")
            return
        if atom.is_tf32 != isinstance(lhs, Float32Type) or not isinstance(
            lhs, Float16Type | BFloat16Type | Float32Type
        ):
            alternatives = (
                "f16 and bf16 take mma_sync m16n8k16 or wgmma m64nNk16"
                if atom.is_tf32
                else "f32 takes the fma atom, or mma_sync m16n8k8 or wgmma m64nNk8 as tf32"
            )
            expected = "f32, rounded to tf32," if atom.is_tf32 else "f16 or bf16"
            raise VerifyException(
                f"a {atom} atom multiplies {expected} on tensor cores ({alternatives}), got {lhs}"
            )
        if atom.kind == AtomKind.WGMMA and atom.is_tf32 and self.rhs_n_contiguous:
            raise VerifyException(
                f"a {atom} atom reads the rhs K-major (PTX has no transposed tf32 wgmma), got "
                f"an rhs whose N is contiguous; it takes mma_sync m16n8k8"
            )
        available = target.has_mma_sync if atom.kind == AtomKind.MMA_SYNC else target.has_wgmma
        if not available:
            raise VerifyException(
                f"the {atom.kind} atom needs tensor cores that target {target.arch} "
                f"({target.name}) does not have"
            )

    def _verify_shared_tiles(self, target: GpuTarget) -> None:
        """The K slices of both operands fit in shared memory `pipeline` deep, in rows whose
        swizzle suits ldmatrix."""
        batch_rank = self.batch_rank
        block_m, block_n, block_k = self.tile_shape
        extents = {batch_rank: block_m, batch_rank + 1: block_n, batch_rank + 2: block_k}
        element = self.lhs.type.get_element_type()
        size = element_bytes(element)
        for what, dims in (("lhs", self.lhs_dims), ("rhs", self.rhs_dims)):
            row = extents[dims[-1]] * size
            if self.mma_atom.kind != AtomKind.FMA and row not in SHARED_ROW_BYTES and row % 128:
                raise VerifyException(
                    f"{what}'s tile is stored in shared memory by its last dimension "
                    f"{gemm_dim_name(dims[-1], batch_rank)}, {row} bytes a row, which must be "
                    f"32, 64 or a multiple of 128 bytes for a swizzle that keeps ldmatrix free "
                    f"of bank conflicts"
                )
            if self.mma_atom.kind == AtomKind.FMA and row > 128 and row % 128:
                raise VerifyException(
                    f"{what}'s tile is stored in shared memory by its last dimension "
                    f"{gemm_dim_name(dims[-1], batch_rank)}, {row} bytes a row, which must be "
                    f"at most 128 bytes or whole panels of 128"
                )
        if self.mma_atom.kind == AtomKind.WGMMA:
            self._verify_tma_tiles(size)
        shared = self.pipeline_depth * (block_m + block_n) * block_k * size
        partial = " and the f32 partial tile of a split" if self.split_count != 1 else ""
        if partial:
            shared += block_m * block_n * element_bytes(f32)
        limit = target.shared_bytes_per_block
        if shared > limit:
            raise VerifyException(
                f"{self.pipeline_depth} K slices of tile {list(self.tile_shape)}{partial} take "
                f"{shared} bytes of shared memory, over the {limit} bytes a block may have on "
                f"{target.arch}"
            )

    def _verify_split(self, target: GpuTarget) -> None:
        """The blocks of a split are a cluster, each with K slices of its own."""
        split = self.split_count
        _verify_split(split)
        if split == 1:
            return
        if self.mma_atom.kind == AtomKind.WGMMA:
            raise VerifyException(
                "split > 1 is lowered on the mma_sync and fma atoms, whose blocks each own one "
                "output tile; the persistent blocks of a wgmma kernel take split 1"
            )
        _verify_target_cluster(
            target, split, "the blocks of a split sum their partial tiles", "split"
        )
        slices, per_block = self.split_slices()
        if (split - 1) * per_block >= slices:
            raise VerifyException(
                f"K = {self.sizes()[-1]} is {slices} slices of {self.tile_shape[2]}: split "
                f"{split} blocks, {per_block} slices each, would leave the last one none"
            )

    def _verify_cluster(self, target: GpuTarget) -> None:
        """A cluster's blocks each copy an equal share of the rhs's boxes of a K slice: of a
        [n, k] rhs, 1/cluster of the rows of each box, whole 8-row groups of the 128-byte
        swizzle; of a [k, n] rhs, whole panels."""
        cluster = self.cluster_blocks
        _verify_cluster(self.mma_atom, cluster)
        if cluster == 1:
            return
        _verify_target_cluster(
            target, cluster, "the blocks of a cluster share the rhs's slices", "cluster"
        )
        box_n = self.rhs_piece_n
        if self.rhs_n_contiguous:
            unit = WGMMA_ROW_BYTES // element_bytes(self.lhs.type.get_element_type())
            what = f"panels of {unit} columns"
        else:
            unit, what = 8, "groups of 8 rows"
        if box_n % (unit * cluster):
            raise VerifyException(
                f"the {cluster} blocks of a cluster each copy an equal share of the {box_n} "
                f"columns of N of an rhs piece of a K slice, in whole {what}"
            )

    @property
    def rhs_piece_n(self) -> int:
        """The columns of N of the rhs that a stage takes from one tensor map: the tile's N,
        or of siblings each warp group's share of each one's."""
        if self.siblings == 1:
            return self.tile_shape[1]
        return self.tile_shape[1] // self.warp_grid[1] // self.siblings

    def _verify_tma_tiles(self, size: int) -> None:
        """What a wgmma's tiles need: TMA copies them (boxes of at most 256 rows, from rows
        of whole 16 bytes) into tiles of 128-byte swizzled rows, as the wgmma's shared-memory
        descriptors describe them: K-major, one row per row of the operand, or for a [k, n]
        rhs N-major panels of 64 columns (the atom's N a multiple of 64) by the K slice."""
        batch_rank = self.batch_rank
        block_m, block_n, block_k = self.tile_shape
        row_elements = WGMMA_ROW_BYTES // size
        if block_k * size != WGMMA_ROW_BYTES:
            raise VerifyException(
                f"a wgmma's K slice is one {WGMMA_ROW_BYTES}-byte swizzled row, "
                f"{row_elements} elements, got tile K {block_k}"
            )
        if self.rhs_n_contiguous and self.mma_atom.shape[1] % row_elements:
            raise VerifyException(
                f"a wgmma reads a [k, n] rhs in panels of {row_elements} columns: the atom's "
                f"N is a multiple of {row_elements}, got {self.mma_atom}"
            )
        share = block_n // self.warp_grid[1] // self.siblings
        if self.rhs_n_contiguous and self.siblings > 1 and share % row_elements:
            raise VerifyException(
                f"a wgmma reads a [k, n] rhs in panels of {row_elements} columns: each "
                f"sibling's share of a warp group's N is whole panels, got {share} columns"
            )
        for what, operand, dims, rows in (
            ("lhs", self.lhs, self.lhs_dims, block_m),
            ("rhs", self.rhs[0], self.rhs_dims, block_k if self.rhs_n_contiguous else block_n),
        ):
            names = ", ".join(gemm_dim_name(d, batch_rank) for d in dims)
            if dims[-1] != batch_rank + 2 and not (what == "rhs" and self.rhs_n_contiguous):
                raise VerifyException(
                    f"a wgmma reads a K-major lhs and a K- or N-major rhs: {what}'s last "
                    f"dimension is k, got [{names}]"
                )
            if operand.type.get_shape()[-1] * size % 16:
                raise VerifyException(
                    f"TMA copies rows of whole 16 bytes: {what}'s rows of "
                    f"{operand.type.get_shape()[-1]} elements are not"
                )
            if rows > TMA_MAX_BOX:
                raise VerifyException(
                    f"a TMA box has at most {TMA_MAX_BOX} rows: {what}'s tile has {rows}"
                )

    def _verify_siblings(self, target: GpuTarget) -> None:
        """Sibling rhs are of one type, and each warp's share of a sibling's columns is whole
        groups of the columns its threads hold (8 on tensor cores, lanes_n on fma)."""
        siblings = self.siblings
        if not siblings:
            raise VerifyException("a tile.gemm multiplies its lhs by at least one rhs")
        if len({value.type for value in self.rhs}) != 1:
            raise VerifyException(
                "sibling rhs have one type, got " + ", ".join(str(value.type) for value in self.rhs)
            )
        if siblings == 1:
            return
        if self.split_count != 1:
            raise VerifyException(
                f"{siblings} sibling rhs take split 1: a split's blocks sum one accumulator "
                f"tile through shared memory, not {siblings} side by side"
            )
        warp_n = self.tile_shape[1] // self.warp_grid[1]
        group = 8
        if self.mma_atom.kind == AtomKind.FMA:
            lanes = fma_lane_grid(self.tile_shape[0] // self.warp_grid[0], warp_n, target)
            group = lanes[1] if lanes is not None else group
        if warp_n % (siblings * group):
            raise VerifyException(
                f"a warp's {warp_n} columns of tile N {self.tile_shape[1]} are {siblings} "
                f"siblings' equal shares, each whole groups of {group} columns (those whose "
                f"accumulators a thread holds), got {warp_n / siblings:g} columns a sibling"
            )

    def verify_(self) -> None:
        target = target_of(self)
        self._verify_siblings(target)
        self._verify_epilogue()
        self._verify_maps()
        self._verify_dynamic()
        self._verify_element_types(target)
        if self.pipeline_depth < 1:
            raise VerifyException(
                f"pipeline is how many K slices are in shared memory at once, at least 1, got "
                f"{self.pipeline_depth}"
            )
        warp_m, warp_n = verify_gemm_tiling(self.tile_shape, self.mma_atom, self.warp_grid)
        _verify_raster(self.mma_atom, self.raster_rows)
        self._verify_split(target)
        self._verify_cluster(target)
        if self.mma_atom.kind == AtomKind.FMA and fma_lane_grid(warp_m, warp_n, target) is None:
            raise VerifyException(
                f"an fma warp tile of {warp_m}x{warp_n} must split among the "
                f"{target.warp_size} lanes of a warp into equal register tiles"
            )
        self._verify_shared_tiles(target)
        kernel = self.parent_op()
        threads = gemm_threads(self.mma_atom, self.warp_grid, target.warp_size)
        if isinstance(kernel, KernelOp) and kernel.block_shape != (threads, 1, 1):
            producer = " and a producer warp group" if self.mma_atom.kind == AtomKind.WGMMA else ""
            raise VerifyException(
                f"warps {list(self.warp_grid)}{producer} are a block of [{threads}, 1, 1] "
                f"threads, but the kernel's block is {list(kernel.block_shape)}"
            )
        *_, size_m, _, _ = self.sizes()
        if self.dynamic_dim is None and -(-size_m // self.tile_shape[0]) > target.max_grid_shape[1]:
            raise VerifyException(
                f"M = {size_m} in tiles of {self.tile_shape[0]} is more rows of blocks than "
                f"the grid's {target.max_grid_shape[1]}"
            )

    # -- assembly --

    def print(self, printer: Printer) -> None:
        batch_rank = self.batch_rank

        def print_operand(operand: SSAValue, dims: Sequence[int]) -> None:
            printer.print_string(" ")
            printer.print_ssa_value(operand)
            printer.print_string(f"[{', '.join(gemm_dim_name(d, batch_rank) for d in dims)}]")

        print_operand(self.lhs, self.lhs_dims)
        printer.print_string(" *")
        if self.siblings == 1:
            print_operand(self.rhs[0], self.rhs_dims)
        else:
            printer.print_string(" (")
            printer.print_list(self.rhs, printer.print_ssa_value)
            names = ", ".join(gemm_dim_name(d, batch_rank) for d in self.rhs_dims)
            printer.print_string(f")[{names}]")
        printer.print_string(" : ")
        printer.print_list((self.lhs.type, *(v.type for v in self.rhs)), printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(self.accumulator_type)
        _print_tiling(printer, self)
        if self.raster is not None:
            printer.print_string(f" raster {self.raster_rows}")
        if self.cluster is not None:
            printer.print_string(f" cluster {self.cluster_blocks}")
        printer.print_string(" epilogue(")
        printer.print_list(self.epilogue.block.args, printer.print_ssa_value)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(
            self.epilogue, print_entry_block_args=False, print_block_terminators=False
        )

    @classmethod
    def parse(cls, parser: Parser) -> GemmOp:
        integer = lambda: parser.parse_integer(allow_boolean=False)  # noqa: E731
        square = parser.Delimiter.SQUARE

        def parse_operand() -> tuple[list[UnresolvedOperand], list[str], int]:
            if parser.parse_optional_punctuation("(") is None:
                operands = [parser.parse_unresolved_operand()]
            else:
                operands = parser.parse_comma_separated_list(
                    parser.Delimiter.NONE, parser.parse_unresolved_operand
                )
                parser.parse_punctuation(")")
            pos = parser.pos
            names = parser.parse_comma_separated_list(square, parser.parse_identifier)
            return operands, names, pos

        (lhs,), lhs_names, lhs_pos = parse_operand()
        parser.parse_punctuation("*")
        rhs, rhs_names, rhs_pos = parse_operand()
        parser.parse_punctuation(":")
        types_pos = parser.pos
        lhs_type = parse_memref_type(parser, "a tile.gemm's lhs")
        rhs_types = []
        for _ in rhs:
            parser.parse_punctuation(",")
            rhs_types.append(parse_memref_type(parser, "a tile.gemm's rhs"))
        lhs_value, *rhs_values = parser.resolve_operands(
            [lhs, *rhs], [lhs_type, *rhs_types], types_pos
        )
        parser.parse_punctuation("->")
        accumulator_type = parser.parse_type()
        atom, tile_shape, warps, pipeline_depth, split = _parse_tiling(parser)
        raster = integer() if parser.parse_optional_keyword("raster") is not None else 0
        cluster = integer() if parser.parse_optional_keyword("cluster") is not None else 1
        parser.parse_keyword("epilogue")
        arguments = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False)
        )
        attributes = parser.parse_optional_attr_dict_with_keyword()
        batch_rank = len(arguments) - 2 - len(rhs)
        positions = {gemm_dim_name(d, batch_rank): d for d in range(max(batch_rank, 0) + 3)}

        def resolve_map(names: list[str], pos: int) -> list[int]:
            unknown = [name for name in names if name not in positions]
            if unknown:
                parser.raise_error(
                    f"'{unknown[0]}' is not an iteration dimension of this tile.gemm "
                    f"({', '.join(positions)})",
                    pos,
                    parser.pos,
                )
            return [positions[name] for name in names]

        lhs_map, rhs_map = resolve_map(lhs_names, lhs_pos), resolve_map(rhs_names, rhs_pos)
        types = [IndexType()] * (batch_rank + 2) + [accumulator_type] * len(rhs)
        body = parser.parse_region([a.resolve(t) for a, t in zip(arguments, types)])
        op = cls(
            lhs_value,
            lhs_map,
            rhs_values,
            rhs_map,
            atom,
            tile_shape,
            warps,
            pipeline_depth,
            body,
            raster,
            split,
            cluster,
        )
        if attributes is not None:
            op.attributes.update(attributes.data)
        return op


def _print_tiling(printer: Printer, op: GemmOp | AttentionOp) -> None:
    """` atom A tile [..] warps [..] pipeline N`: the schedule a tile.gemm or a tile.attention
    carries."""
    printer.print_string(
        f" atom {op.mma_atom} tile [{', '.join(map(str, op.tile_shape))}] warps "
        f"[{', '.join(map(str, op.warp_grid))}] pipeline {op.pipeline_depth}"
    )
    if op.split is not None:
        printer.print_string(f" split {op.split_count}")


def _parse_tiling(parser: Parser) -> tuple[MmaAtom, list[int], list[int], int, int]:
    integer = lambda: parser.parse_integer(allow_boolean=False)  # noqa: E731
    square = parser.Delimiter.SQUARE
    parser.parse_keyword("atom")
    atom = parse_atom(parser)
    parser.parse_keyword("tile")
    tile_shape = parser.parse_comma_separated_list(square, integer)
    parser.parse_keyword("warps")
    warps = parser.parse_comma_separated_list(square, integer)
    parser.parse_keyword("pipeline")
    pipeline_depth = integer()
    split = integer() if parser.parse_optional_keyword("split") is not None else 1
    return atom, tile_shape, warps, pipeline_depth, split


@irdl_op_definition
class AttentionOp(IRDLOperation):
    """Attention (`emmy.dialects.attention`) computed a block of query rows
    at a time by the blocks of its kernel, FlashAttention-2's way:

        tile.attention %q, %k, %v scale 1.250000e-01 causal into %o
            : memref<1x4x100x64xbf16>, memref<1x2x100x64xbf16>, memref<1x2x100x64xbf16>
            into memref<1x4x100x64xbf16>
            atom mma_sync m16n8k16 tile [64, 64, 64] warps [4, 1] pipeline 2

    Each block computes `tile [BQ, BKV, D]`'s BQ query rows of the query heads that share
    one key/value head, their rows packed (the grid's x over the row blocks, z over the
    batch and key/value heads, striding where there are more than the grid has), taking the
    keys and values BKV at a time through shared memory, `pipeline` blocks deep; each of its
    `warps [BQ / 16, 1]` owns 16 rows, multiplying in `atom`s with the softmax kept online
    in registers. D is the head dim of the query, key and value; a mask, if there is one,
    is read where each score is.

    The query rows, the keys, or both (prefill: L = S = the size) may be the program's
    dynamic size (`emmy.dialects.sizes`), the kernel's size argument: the row blocks the
    size needs are launched (`sized_grid`; the grid's x counts them at the size the
    schedule was chosen for, and the blocks stride through those past it), and the keys
    past the size are masked as a static S's tail is. The batch and heads are static, and
    the keys are not split (a split is for a decode's few rows, planned at known sizes)."""

    name = "tile.attention"
    query = operand_def(MemRefType)
    key = operand_def(MemRefType)
    value = operand_def(MemRefType)
    mask = opt_operand_def(MemRefType)
    out = operand_def(MemRefType)
    scale = prop_def(FloatAttr[Float64Type])
    causal = opt_prop_def(UnitAttr)
    atom = prop_def(MmaAtomAttr)
    tile = prop_def(DenseArrayBase[I64])
    warps = prop_def(DenseArrayBase[I64])
    pipeline = prop_def(IntegerAttr[I64])
    split = opt_prop_def(IntAttr)
    traits = lazy_traits_def(
        lambda: (
            HasParent(KernelOp),
            ReadsOperand("query"),
            ReadsOperand("key"),
            ReadsOperand("value"),
            ReadsOperand("mask"),
            WritesOperand("out"),
        )
    )

    def __init__(
        self,
        query: SSAValue,
        key: SSAValue,
        value: SSAValue,
        mask: SSAValue | None,
        out: SSAValue,
        scale: float,
        causal: bool,
        atom: MmaAtom,
        tile_shape: Sequence[int],
        warps: Sequence[int],
        pipeline_depth: int,
        split: int = 1,
    ):
        super().__init__(
            operands=[query, key, value, mask, out],
            properties={
                "scale": FloatAttr(scale, Float64Type()),
                "causal": UnitAttr() if causal else None,
                "atom": MmaAtomAttr(atom),
                "tile": DenseArrayBase.from_list(i64, list(tile_shape)),
                "warps": DenseArrayBase.from_list(i64, list(warps)),
                "pipeline": IntegerAttr(pipeline_depth, i64),
                "split": IntAttr(split) if split != 1 else None,
            },
        )

    @property
    def mma_atom(self) -> MmaAtom:
        return self.atom.data

    @property
    def tile_shape(self) -> tuple[int, int, int]:
        return tuple(self.tile.get_values())

    @property
    def warp_grid(self) -> tuple[int, int]:
        return tuple(self.warps.get_values())

    @property
    def pipeline_depth(self) -> int:
        return self.pipeline.value.data

    @property
    def raster_rows(self) -> int:
        """Attention's blocks are not persistent: no tile order."""
        return 0

    @property
    def split_count(self) -> int:
        """The schedule's `split` (1: none given)."""
        return self.split.data if self.split is not None else 1

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list((self.query, self.key, self.value), printer.print_ssa_value)
        if self.mask is not None:
            printer.print_string(" mask ")
            printer.print_ssa_value(self.mask)
        printer.print_string(" scale ")
        printer.print_float(self.scale.value.data, Float64Type())
        if self.causal is not None:
            printer.print_string(" causal")
        printer.print_string(" into ")
        printer.print_ssa_value(self.out)
        printer.print_string(" : ")
        printer.print_list(
            (self.query.type, self.key.type, self.value.type), printer.print_attribute
        )
        if self.mask is not None:
            printer.print_string(" mask ")
            printer.print_attribute(self.mask.type)
        printer.print_string(" into ")
        printer.print_attribute(self.out.type)
        _print_tiling(printer, self)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> AttentionOp:
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        if parser.parse_optional_keyword("mask") is not None:
            operands.append(parser.parse_unresolved_operand())
        parser.parse_keyword("scale")
        scale = parser.parse_float()
        causal = parser.parse_optional_keyword("causal") is not None
        parser.parse_keyword("into")
        out = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        pos = parser.pos
        types = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, lambda: parse_memref_type(parser, "a tile.attention operand")
        )
        if parser.parse_optional_keyword("mask") is not None:
            types.append(parse_memref_type(parser, "a tile.attention mask"))
        parser.parse_keyword("into")
        out_type = parse_memref_type(parser, "a tile.attention output")
        if len(operands) != len(types) or len(types) not in (3, 4):
            parser.raise_error(
                "a tile.attention takes a query, a key, a value and a mask if it names one",
                pos,
                parser.pos,
            )
        *inputs, out_value = parser.resolve_operands([*operands, out], [*types, out_type], pos)
        mask = inputs[3] if len(inputs) == 4 else None
        tiling = _parse_tiling(parser)
        attributes = parser.parse_optional_attr_dict_with_keyword()
        op = cls(*inputs[:3], mask, out_value, scale, causal, *tiling)
        if attributes is not None:
            op.attributes.update(attributes.data)
        return op

    def grid(
        self, target: GpuTarget, representative: int = REPRESENTATIVE_SIZE
    ) -> tuple[int, int, int]:
        """The blocks the row blocks take. On mma_sync: x over them (the rows of the query
        heads that share a key/value head, packed; at most the grid's x), y over the parts of
        the keys (`split`), z over the batch and key/value heads (up to the grid's z limit:
        the blocks stride through the rest); dynamic rows taken as `representative`. On
        wgmma, persistent blocks, at most one an SM, that stride through the query heads'
        row blocks."""
        query = self.query.type.get_shape()
        *batch, rows, _ = query
        group = self.packed_heads
        rows = representative if rows == DYNAMIC_INDEX else rows
        row_blocks = -(-group * rows // self.tile_shape[0])
        if self.mma_atom.kind == AtomKind.WGMMA:
            return (min(row_blocks * prod(batch), target.sm_count), 1, 1)
        row_blocks = min(row_blocks, target.max_grid_shape[0])
        return (row_blocks, self.split_count, min(prod(batch) // group, target.max_grid_shape[2]))

    @property
    def packed_heads(self) -> int:
        """The query heads whose rows a block packs: those that share a key/value head on
        mma_sync, one on wgmma."""
        if self.mma_atom.kind == AtomKind.WGMMA:
            return 1
        return kv_group(self.query.type.get_shape(), self.key.type.get_shape())

    @property
    def dynamic_rows(self) -> bool:
        """Whether the query rows are the dynamic size."""
        return self.query.type.get_shape()[-2] == DYNAMIC_INDEX

    def sized_grid(self) -> tuple[int, int, int] | None:
        """The row blocks along x that a size of the query rows needs (`kernel.LaunchOp.sized`):
        a block per BQ // G rows (G query heads a key/value head, their rows packed; at least
        the ceil(G size / BQ) blocks the rows take). None where the rows are static."""
        if not self.dynamic_rows:
            return None
        return (1, max(1, self.tile_shape[0] // self.packed_heads), 1)

    def _verify_dynamic(self) -> None:
        shapes = [v.type.get_shape() for v in (self.query, self.key, self.value, self.out)]
        if any(DYNAMIC_INDEX in (*shape[:-2], shape[-1]) for shape in shapes):
            raise VerifyException(
                "the dynamic size of a tile.attention is its query rows, its keys or both: "
                "the batch, the heads and the head dims are static"
            )
        dynamic = any(DYNAMIC_INDEX in shape for shape in shapes)
        if dynamic and self.split_count != 1:
            raise VerifyException(
                "a tile.attention over the dynamic size takes split 1: a split is for a "
                "decode's few rows at keys it knows"
            )

    def verify_(self) -> None:
        verify_attention(self.query, self.key, self.value, self.mask, self.out)
        self._verify_dynamic()
        verify_gemm_tiling(self.tile_shape, self.mma_atom, self.warp_grid)
        _verify_split(self.split_count)
        grid_y = target_of(self).max_grid_shape[1]
        if self.split_count > grid_y:
            raise VerifyException(
                f"split {self.split_count} is a block of the grid's y for each part of the "
                f"keys, at most {grid_y}"
            )
        block_q, block_kv, depth = self.tile_shape
        head_dims = {self.query.type.get_shape()[-1], self.value.type.get_shape()[-1]}
        wgmma = self.mma_atom.kind == AtomKind.WGMMA
        if wgmma:
            self._verify_wgmma(target_of(self))
        elif self.mma_atom.shape != MMA_SYNC_SHAPE or self.mma_atom.kind != AtomKind.MMA_SYNC:
            raise VerifyException(
                f"attention multiplies in mma_sync m16n8k16 or wgmma m64nNk16 atoms, got "
                f"{self.mma_atom}"
            )
        if self.warp_grid != (block_q // 16, 1) or head_dims != {depth}:
            raise VerifyException(
                f"tile {list(self.tile_shape)} takes warps [{block_q // 16}, 1] (16 query rows "
                f"each) and a head dim of {depth} for the query, key and value, got warps "
                f"{list(self.warp_grid)} and head dims {sorted(head_dims)}"
            )
        row_bytes = depth * element_bytes(self.query.type.get_element_type())
        if block_kv % 16 or not (row_bytes in (32, 64, 128) or row_bytes % 128 == 0):
            raise VerifyException(
                f"tile {list(self.tile_shape)} takes keys 16 at a time (P is the A operand of "
                f"k-steps of 16) and rows of 32, 64 or a multiple of 128 bytes (swizzled), got "
                f"{block_kv} keys and rows of {row_bytes} bytes"
            )
        if self.pipeline_depth < 2:
            raise VerifyException(
                f"pipeline {self.pipeline_depth} must be at least 2: the next key block is "
                "copied while one is used"
            )
        kernel = self.parent_op()
        threads = gemm_threads(self.mma_atom, self.warp_grid, target_of(self).warp_size)
        if isinstance(kernel, KernelOp) and kernel.block_shape != (threads, 1, 1):
            producer = " and a producer warp group" if wgmma else ""
            raise VerifyException(
                f"warps {list(self.warp_grid)}{producer} are a block of [{threads}, 1, 1] "
                f"threads, but the kernel's block is {list(kernel.block_shape)}"
            )
        element = self.query.type.get_element_type()
        if element_bytes(element) != 2:
            raise VerifyException(f"an {self.mma_atom} atom multiplies f16 or bf16, got {element}")

    def _verify_wgmma(self, target: GpuTarget) -> None:
        """What the wgmma kernel (`emmy.passes.wgmma_attention_kernel`) lowers: warp groups
        of 64 query rows of one head, S = Q K^T in m64nBKVk16 atoms, a head dim of whole
        128-byte rows TMA copies from 3-D to 5-D tensors, no split, its tiles in shared
        memory."""
        block_q, block_kv, depth = self.tile_shape
        if not target.has_wgmma or not target.has_tma:
            raise VerifyException(
                f"the wgmma atom needs warp-group tensor cores and TMA, which target "
                f"{target.arch} ({target.name}) does not have"
            )
        if self.mma_atom.shape != (64, block_kv, 16) or block_q % 64 or block_q > TMA_MAX_BOX:
            raise VerifyException(
                f"attention on wgmma takes query rows 64 a warp group (at most {TMA_MAX_BOX}) "
                f"and its atom's N is the tile's keys, m64n{block_kv}k16, got {self.mma_atom} "
                f"for tile {list(self.tile_shape)}"
            )
        row_elements = WGMMA_ROW_BYTES // element_bytes(self.query.type.get_element_type())
        if depth % row_elements:
            raise VerifyException(
                f"attention on wgmma takes a head dim of whole {WGMMA_ROW_BYTES}-byte rows "
                f"({row_elements} elements), got {depth}"
            )
        rank = self.query.type.get_num_dims()
        if not 2 <= rank <= TMA_MAX_RANK or self.split_count != 1:
            raise VerifyException(
                f"attention on wgmma copies by TMA from tensors of rank 2 to {TMA_MAX_RANK} and "
                f"takes no split, got rank {rank} and split {self.split_count}"
            )
        for what, operand in (("query", self.query), ("key", self.key), ("value", self.value)):
            if not isinstance(operand.type.layout, NoneAttr):
                raise VerifyException(
                    f"attention on wgmma copies its {what} by TMA, from a dense row-major "
                    f"buffer, got {operand.type}"
                )
        shared = (block_q + 2 * self.pipeline_depth * block_kv) * depth * 2
        if shared > target.shared_bytes_per_block:
            raise VerifyException(
                f"tile {list(self.tile_shape)} takes {shared} bytes of shared memory for its "
                f"query tile and {self.pipeline_depth} stages of keys and values, over the "
                f"{target.shared_bytes_per_block} a block may have on {target.arch}"
            )


@irdl_op_definition
class LaunchOp(LaunchOpBase):
    """Host side: runs a `tile.kernel` on buffers with its launch shape."""

    name = "tile.launch"
    KERNEL_TYPE: ClassVar[type[KernelSymbolOp]] = KernelOp


Tile = Dialect(
    "tile",
    [KernelOp, ForOp, YieldOp, StageOp, GemmOp, AttentionOp, LaunchOp],
    [MappingAttr, StageModeAttr, ScheduleAttr, MmaAtomAttr],
)
