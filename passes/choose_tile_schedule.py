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
  i64; never a combiner region): its blocks each reduce a part, and combine their totals
  with atomics (`split-reductions=false` keeps it in one block).
- A kernel's only nest, if elementwise (the loops inside its grid loops are parallel, hold no
  loops and pass nothing to each other through memory, which the blocks of a row, running
  them at once, could not order) and with fewer grid iterations (rows) than two per SM, is
  two-dimensional:
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
  vector, so that each row is done sooner. A global loop beside thread loops (another nest's)
  does not size the block: it spreads over the grid that the thread loops make.
- Rows per block: where every nest is grid loops over elementwise thread loops whose row is
  fewer vectors than a warp has threads (a head dim of 128 bf16 is 16), the grid loops map to
  `rows` and a block takes several rows, each on bx threads (the row's vectors, rounded up to
  a power of 2): up to ROW_BLOCK_THREADS threads while the grid keeps MANY_ROWS_PER_SM blocks
  an SM, `block [16, 16, 1]` for 8192 such rows (`_rows_per_block`).

A kernel whose body is one `loop.contract` of bf16 or f16 operands accumulated in f32 (or
f32 ones where the float32 matmul precision allows tf32), on a target with tensor cores,
gets a contraction's schedule instead: the `tile.gemm` that `lower-loop-to-tile` makes of
the contract computes it in block tiles. On a target with wgmma (sm_90a), a product of at
least WGMMA_TILE's BM rows takes WGMMA_TILE on `wgmma` (or one 128 or 64 columns wide where
that keeps more of the SMs busy: `_narrowed`), warp-specialised, WGMMA_PIPELINE_DEPTH K
slices in flight (a narrower tile the deeper ring of WGMMA_DEEP_PIPELINES that fits):

    #tile.schedule<block [384, 1, 1], loops [], tile [128, 256, 64],
                   atom wgmma m64n256k16, warps [8, 1], pipeline 4,
                   warp_roles ["producer", "consumer", "consumer"]>

Smaller products, and those wgmma cannot take (a [K, M] lhs, rows TMA cannot copy), are
multiplied on `mma_sync m16n8k16`, 2 x 2 warps a block, PIPELINE_DEPTH K slices in flight:

    #tile.schedule<block [128, 1, 1], loops [], tile [128, 128, 32],
                   atom mma_sync m16n8k16, warps [2, 2], pipeline 3>

The heuristic is deliberately simple: the LARGE_TILE when M and N both reach its extent (few
enough blocks that each does much work); a weight-streaming tile when M is at most
STREAMING_M (a few tokens: decode); else the SMALL_TILE (more blocks for small outputs). A
product of a few rows is bound by reading its [N, K] operand (the weights) once, which only
all SMs together, each with many loads in flight, do at the copy speed:

    #tile.schedule<block [128, 1, 1], loops [], tile [16, 32, 128],
                   atom mma_sync m16n8k16, warps [1, 4], pipeline 8>

(M = 16, N = K = 4096 on the H200, before its K is split, below): the tile's M is the
smallest of STREAMING_TILE_M that covers M (little padding), its N the widest of
STREAMING_TILE_N that still gives the grid an SM's worth of blocks (else the narrowest),
split among warps along N only; its K STREAMING_TILE_K elements at most (the fewest of 32,
64, 128 that cover K), and the pipeline deep enough to keep WEIGHT_BYTES_IN_FLIGHT of the
weights in flight per block (at most MAX_PIPELINE_DEPTH slices, within the block's shared
memory, no more than K has slices).
Such tiles are few where N is small next to K (128 for N = 4096 in tiles of 32, about one
4-warp block per SM, which cannot keep enough loads in flight nor multiply fast enough to
stream at the copy speed), so K is split (split-K, on sm_90's thread-block clusters): each
output tile's K slices are shared by the most blocks, up to a cluster's 8, that keep the grid
within SPLIT_BLOCKS_PER_SM blocks an SM and each block at least MIN_SPLIT_SLICES slices (and
none without one); the blocks of an SM then share its WEIGHT_BYTES_IN_FLIGHT, which with
their partial tile must fit their share of its shared memory, and K is split only where they
keep as many slices of weights in flight between them as one block alone would (at M = 64 the
activations' tiles take most of a block's share, and a split of 64 x 4096 x 4096 ran at 0.72x
cuBLAS where one block an SM, 8 slices deep, ran at 0.94x):

    #tile.schedule<block [128, 1, 1], loops [], tile [16, 32, 128],
                   atom mma_sync m16n8k16, warps [1, 4], pipeline 3, split 4>

(M = 16, N = K = 4096: 4 x 128 = 512 blocks, 4 an SM, 8 K slices each, 2 of 32 x 128 weights
in flight in each block, 16 KB). Where the split tile does not verify, the unsplit one is
tried. Sibling rhs (`loop.contract` of several rhs) count as a product of their summed N,
which each tile covers side by side (`tile.GemmOp`), their warps with whole atoms of each
sibling's share; they are not split: a split's cluster sums one accumulator tile, and an
unsplit sibling grid already streams every sibling's weights once, in one launch, as the
unsplit grids of separate kernels would (and without the round trip of a product to memory
that separate kernels' epilogues need). A split summing each sibling's tile is left for later.
If the tile.gemm would not verify with the chosen tile (an operand indexed at 0 along a
dimension, a layout whose shared rows ldmatrix cannot read), the SMALL_TILE is tried, then
the contract is expanded as any other is.

A kernel of one `loop.attention` of bf16 or f16 with a head dim of 64 or 128 (masked or not)
whose query heads have at least 64 rows gets attention's schedule on wgmma on a target with
it (sm_90a): WGMMA_ATTENTION_TILE, a block per 128 rows of a query head (two consumer warp
groups of 64; one where a head has fewer than 128, or where the items of 64 rows all fit
one wave of the SMs) and a producer warp group, the keys and values 128 at a time (176,
WIDE_WGMMA_ATTENTION_KEYS, where it is neither masked nor causal at head dim 128 and takes
several waves) in a ring of WGMMA_ATTENTION_PIPELINE stages:

    #tile.schedule<block [384, 1, 1], loops [], tile [128, 128, 128],
                   atom wgmma m64n128k16, warps [8, 1], pipeline 2,
                   warp_roles ["producer", "consumer", "consumer"]>

Other attention of bf16 or f16 with a head dim of 64 or 128 (decode: a few query rows a
head) gets attention's schedule on a target with mma_sync: ATTENTION_TILE's 64 query rows a block,
16 a warp, the keys and values 64 at a time, the next block copied while one is used:

    #tile.schedule<block [128, 1, 1], loops [], tile [64, 64, 128],
                   atom mma_sync m16n8k16, warps [4, 1], pipeline 2>

which `lower-loop-to-tile` makes a `tile.attention`; other attention is scheduled as the loop
nests `expand-loop-attention` makes of it. A block takes the rows of the G query heads that
share a key/value head together (G L rows, packed): where they are fewer than 64 (decode: a
few queries a head), the tile has as few rows as cover them, 16 a warp (the m16 atom's
least). Where the blocks that gives (row blocks times the batch and key/value heads) have
fewer warps than ATTENTION_SPLIT_WARPS_PER_SM an SM, the keys are split (flash-decoding,
`split S`: S blocks share each tile of rows, each taking 1/S of the keys, their parts
combined after) into as many parts as make up that many warps, but no more than leave each
part ATTENTION_MIN_PART_BLOCKS blocks of keys. GQA H32/KV8 decoding one query against 4096
keys of head dim 128 on the H200 (8 blocks of 4 packed rows, 64 key blocks):

    #tile.schedule<block [32, 1, 1], loops [], tile [16, 64, 128],
                   atom mma_sync m16n8k16, warps [1, 1], pipeline 2, split 16>

A product of f32 operands follows the float32 matmul precision its module recorded
(`torch.float32_matmul_precision`): under "highest" it stays f32 on the `fma` atom, a
register-tiled SIMT GEMM (tile [128, 128, 8] of 4 x 2 warps, 8 x 8 outputs a thread); under
"high" and "medium" it runs on tf32 tensor cores, `mma_sync m16n8k8`:

    #tile.schedule<block [256, 1, 1], loops [], tile [128, 128, 8], atom fma, warps [4, 2],
                   pipeline 3>
    #tile.schedule<block [128, 1, 1], loops [], tile [128, 128, 16],
                   atom mma_sync m16n8k8, warps [2, 2], pipeline 3>

f32 products take their atom's large tile ([128, 128, 8] for fma, [128, 128, 16] for tf32)
when M and N both reach it, else its small tile (ATOM_TILES). Every other contract (f64,
integers, 16-bit floats without tensor cores) is scheduled as the loop nest
`expand-loop-contract` makes of it, which that pass, run after this one, then builds.

`block-size=N`, `vector-width=N`, `stage=none|sync|async` and `split-reductions=false`
override the heuristic for every loop nest it schedules.

Before the heuristic, a kernel's schedule comes from the tuning database
(`emmy.tools.tuning_database`, written by `emmy tune`) where it holds one for this kernel
(its structure and shapes, the target's arch, this emmy) that still lowers it, marked beside
it as `tile.tuned = "11.84 us on sm_90a (heuristic 13.02 us), 2026-12-05"`. `tuned=false`, or
any option above, leaves the database out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    Float16Type,
    Float32Type,
    MemRefType,
    ModuleOp,
    StringAttr,
    f32,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import ParseError, PassFailedException, VerifyException

from emmy.dialects import loop, tile
from emmy.dialects.attention import kv_group, packed_row_blocks
from emmy.dialects.dependences import first_dependence
from emmy.dialects.dtypes import element_bytes
from emmy.dialects.effects import written_values
from emmy.dialects.kernel import MAX_VECTOR_BYTES, WGMMA_ROW_BYTES, verify_block_shape, wgmma_k
from emmy.dialects.sizes import is_dynamic, representative_size
from emmy.dialects.target import GpuTarget, target_of
from emmy.dialects.tile import LoopSchedule, Mapping, Schedule, ScheduleAttr, StageMode, Staging
from emmy.dialects.torch import float32_matmul_precision
from emmy.passes.expand_loop_attention import expand_attentions
from emmy.passes.expand_loop_contract import expand_contracts
from emmy.passes.lower_loop_to_tile import (
    ScheduleError,
    enclosing_and_self,
    is_inside,
    lower_kernel,
    row_known_at_top,
)

if TYPE_CHECKING:
    from emmy.tools.tuning_database import TuningDatabase

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
ROW_BLOCK_THREADS = 256
"""The threads of a block of several rows (`_rows_per_block`)."""
CANDIDATE_ROWS = (2, 4, 8, 16, 32, 64)
"""The rows of a block the tuner tries where a nest's rows may share blocks."""
STAGE_BUDGET_BYTES = 32 * 1024
CANDIDATE_BLOCKS = (64, 128, 256, 512, 1024)
"""The block sizes `candidates` offers besides the heuristic's."""
STAGE_CHOICES = ("auto", "none", *StageMode)
MMA_SYNC = tile.MmaAtom(tile.AtomKind.MMA_SYNC, tile.MMA_SYNC_SHAPE)
TF32_MMA_SYNC = tile.MmaAtom(tile.AtomKind.MMA_SYNC, tile.TF32_MMA_SYNC_SHAPE)
FMA = tile.MmaAtom(tile.AtomKind.FMA)
LARGE_TILE = ((128, 128, 32), (2, 2))
"""A contraction's block tile [BM, BN, BK] and warps [WM, WN] when M and N are both at least
its BM and BN."""
SMALL_TILE = ((64, 64, 32), (2, 2))
"""The block tile of smaller products (a small N, or an M between STREAMING_M and the large
tile's), and of a few rows whose streaming tile does not verify."""
ATOM_TILES = {
    TF32_MMA_SYNC: (((128, 128, 16), (2, 2)), ((64, 64, 16), (2, 2))),
    FMA: (((128, 128, 8), (4, 2)), ((64, 64, 8), (2, 2))),
}
"""The large and small tiles of the f32 products' atoms: f32 slices of 16 (64-byte rows,
whose swizzle keeps the lanes' tf32 fragment loads free of bank conflicts) or of 8 for the
fma atom, whose 8 x 8 (large) or 8 x 4 (small) register tile a thread reads K at a time."""
PIPELINE_DEPTH = 3
WGMMA_ATTENTION_TILE = (128, 128)
"""The query rows (two consumer warp groups of 64; 64 rows, one, where a head has fewer than
128) and the keys a block of attention on wgmma takes at a time: FlashAttention-3's tile for
head dims 64 and 128."""
WIDE_WGMMA_ATTENTION_KEYS = 176
"""The keys a block of attention on wgmma takes at a time without a mask or causality, at
head dim 128: FlashAttention-3's tile there (`tile_size_fwd_sm90`). A block's fixed work
(rescaling its output rows, the row maxima's shuffles, the ring's waits) is shared by 1.375x
the products; the scores of 176 keys (88 registers a thread) still fit beside P and O with
the softmax/P V overlap. A mask summary's words hold at most 128 keys, and causal blocks
that cross the diagonal waste more of a wider block, so those keep 128. Measured on an H100
(`benchmarks/h100/2026-12-07-third/kv176.json`): 2-3% faster at B4 H32 S2048 and S4096 and
GQA 32/8 S4096."""
WGMMA_ATTENTION_PIPELINE = 2
CANDIDATE_WGMMA_ATTENTION_PIPELINES = (2, 3)
"""The depths of the key/value ring `candidates` offers attention on wgmma."""
ATTENTION_TILE = (64, 64)
"""An attention block's query rows (16 a warp) and the keys and values it takes at a time."""
ATTENTION_HEAD_DIMS = (64, 128)
ATTENTION_PIPELINE = 2
"""Key and value blocks in shared memory at once: the next one copied while one is used."""
ATTENTION_SPLIT_WARPS_PER_SM = 16
"""The warps an attention's blocks should give each SM before its keys are split among more
blocks (flash-decoding): a decode's few query rows are a warp or so a block, and reading the
keys and values at the copy speed takes many loads in flight on every SM. Not tuned on a
GPU yet."""
ATTENTION_MIN_PART_BLOCKS = 4
"""The fewest key blocks (ATTENTION_TILE's keys each) a part of a split attention's keys
takes: shorter parts spend more on their prologue and on combining than they save."""
WGMMA_TILE = ((128, 256, 64), (8, 1))
"""The block tile and warps of products with M of at least its BM on a target with wgmma:
two consumer warp groups of 64 x 256 each (wgmma m64n256k16), K 64 elements (one 128-byte
swizzled row) a slice; of f32 products where tf32 is allowed, 32 elements (wgmma
m64n256k8)."""
WGMMA_PIPELINE_DEPTH = 4
WGMMA_DEEP_PIPELINES = (8, 6)
"""The deeper rings a narrower wgmma tile takes where its stages fit: on an H100 a 2048 x 512 x
2048 product in 128 x 64 tiles took 17.4 us 4 deep, 15.8 6 deep, 15.3 8 deep; 128 x 128 tiles
6 deep were 3-7% faster than 4 deep on each of the Llama prefill's products
(`benchmarks/h100/2026-12-07-eighth/prefill_products*.json`)."""
WGMMA_CLUSTER = 2
"""The blocks of consecutive M tiles that `candidates` offers to run as a thread-block cluster
sharing each K slice of the rhs (TMA multicast): each SM then reads 2/3 of a 128 x 256 tile's
operands from the L2 cache (its A and half of B). Not the heuristic's choice: on an H100 with
the TMA-stored output, 3% faster at 8192^3 but 0.5-1.5% slower on the suite's other large
products (`benchmarks/h100/2026-12-07-fifth/`; twice as slow before the remote arrivals
released at the CTA's scope, `h100/2026-12-07-fourth/`)."""
NARROW_WGMMA_EFFICIENCY = 0.9
"""How fast a 128 x 128 wgmma tile multiplies next to a 128 x 256 one (less reuse of each
A tile per byte of shared memory read), for choosing between them."""
SIBLING_COLUMNS = 8
"""The columns of an output row that a thread of a warp holds 2 of in a tensor-core
accumulator (mma_sync's and wgmma's): a warp's share of a sibling is whole groups of them."""
STREAMING_M = 64
"""Products of at most this many rows (M) get a weight-streaming tile."""
STREAMING_TILE_M = (16, 32, 64)
STREAMING_TILE_N = (64, 32)
"""A streaming tile's N, widest first: the widest that gives every SM a block is taken."""
STREAMING_TILE_K = (32, 64, 128)
STREAMING_WARPS_N = 4
"""Warps of a streaming block, along N (fewer where the tile's N has fewer 8-column atoms)."""
WEIGHT_BYTES_IN_FLIGHT = 64 * 1024
"""The weight loads a streaming block keeps in flight: by Little's law, the copy speed over
the SMs times the memory latency (about 4.3 TB/s / 132 x ~1 us, some 32 KB on the H200), with
a margin, as only one block runs per SM."""
MAX_PIPELINE_DEPTH = 8
SPLIT_BLOCKS_PER_SM = 4
"""The blocks per SM that splitting a streaming product's K (split-K) fills the GPU up to:
more warps per SM to multiply, and more loads in flight, than one block of 4 warps."""
MIN_SPLIT_SLICES = 4
"""The fewest K slices each block of a split multiplies, so that its pipeline's start and
the reduction of the partial tiles stay a small part of its work."""
CANDIDATE_TILES = (
    LARGE_TILE,
    SMALL_TILE,
    ((128, 64, 32), (2, 2)),
    ((64, 128, 32), (2, 2)),
    ((64, 64, 64), (2, 2)),
    ((32, 32, 32), (1, 1)),
)
"""The block tiles `candidates` offers a contraction, each with every CANDIDATE_PIPELINES."""
CANDIDATE_PIPELINES = (2, 3, 4)
CANDIDATE_WGMMA_PIPELINES = (2, 3, 4, 6, 8)
"""The depths of the K-slice ring `candidates` offers a wgmma product, those whose stages fit
a block's shared memory: 4 of 128 x 256 x 64 bf16 (48 KB each), 6 of 128 x 128, 8 of 128 x 64
(cuBLAS's kernels for such narrow tiles keep 8 slices in flight; a short K of few slices
spends more of its time filling the ring)."""
CANDIDATE_WGMMA_TILE_NS = (256, 192, 128, 64)
"""The N of the wgmma tiles (128 rows) `candidates` offers: the heuristic's two, 192 (fewer
idle SMs in a product's last round of tiles where 256 leaves many: 3000 x 5120 x 5120 is 480
tiles of 256 on 132 SMs, 3.6 rounds, 91% of the SMs' time, and 648 of 192, 4.9 rounds, 98%;
not yet timed), and 64 for products too small to fill the SMs with them."""
CANDIDATE_RASTERS = (0, 4, 16)
"""The tile orders `candidates` offers a wgmma product: rows of tiles a persistent block walks
down before it moves right (0: the default, `tile.RASTER_GROUP`)."""
CANDIDATE_STREAMING_TILES_NK = ((16, 128), (32, 64), (32, 128), (64, 64), (64, 128))
"""The (BN, BK) of the streaming tiles `candidates` offers a product of at most STREAMING_M
rows, with the heuristic's BM, each with every CANDIDATE_STREAMING_PIPELINES depth that
fits."""
CANDIDATE_STREAMING_PIPELINES = (4, 6, 8)
CANDIDATE_ATTENTION_SPLITS = (1, 2, 4, 8, 16, 32, 64, 128)
"""The splits of the keys `candidates` offers an attention, with the heuristic's tile, those
that leave each part a block of keys or more; and those of CANDIDATE_ATTENTION_WAVES."""
CANDIDATE_ATTENTION_WAVES = (1, 2)
"""The waves of resident blocks whose splits `candidates` offers an attention besides
(`_attention_wave_splits`): fewer, longer parts than the heuristic's on a long KV cache."""
BLOCK_RESERVED_SHARED = 1024
"""The shared memory that the GPU keeps for each block besides what it asks for (sm_80 on)."""


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
    and type that atomics take: its blocks can each reduce a part and combine with atomics.
    Never one with a combiner region, whose state no atomic combines."""
    uses = [use.operation for use in reduction.accumulator[0].uses]
    return (
        not reduction.is_dynamic
        and reduction.trip_count >= SPLIT_REDUCTION_TRIP_COUNT
        and reduction.kind is not None
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
    """A kernel's only nest, elementwise (its loops inside the grid loops are parallel, hold
    no loops and do not depend on each other), with fewer than MANY_ROWS_PER_SM rows per SM:
    its rows go to rows of blocks and each row's iterations over a row of blocks (a
    two-dimensional nest), so that a few long rows still reach every SM."""
    if len(roots) != 1 or not chain or any(f.is_dynamic for f in chain):
        return False
    rows = prod(f.trip_count for f in chain)
    if rows >= MANY_ROWS_PER_SM * target.sm_count:
        return False
    return _elementwise_rows(chain)


def _elementwise_rows(chain: list[loop.ForOp]) -> bool:
    """Whether the loops inside `chain`'s last grid loop are parallel, hold no loops and pass
    nothing to each other: each grid iteration (row) may run apart from the others' threads."""
    inner = _child_loops(chain[-1])
    return all(not f.is_reduction and not _child_loops(f) for f in inner) and (
        first_dependence(list(chain[-1].body.block.ops)) is None
    )


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
    """`width`, halved until it divides the loop's start and trip count (1 for a loop to the
    dynamic size, which may be any)."""
    if for_op.is_dynamic:
        return 1
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


def _rows(mappings: dict[loop.ForOp, Mapping], representative: int) -> int:
    """The most grid iterations of one nest: the rows the kernel's blocks share out."""
    nests: dict[Operation, int] = {}
    for for_op, mapping in mappings.items():
        if mapping in tile.GRID_MAPPINGS:
            root = enclosing_and_self(for_op)[0]
            nests[root] = nests.get(root, 1) * for_op.planned_trip_count(representative)
    return max(nests.values(), default=1)


def _block_size(
    mappings: dict[loop.ForOp, Mapping],
    widths: dict[loop.ForOp, int],
    target: GpuTarget,
    override: int,
    representative: int,
) -> int:
    if override:
        return override
    vectors = {
        f: -(-f.planned_trip_count(representative) // widths.get(f, 1))
        for f, m in mappings.items()
        if m in tile.VECTOR_MAPPINGS
    }

    def extents(*kinds: Mapping) -> list[int]:
        return [v for f, v in vectors.items() if mappings[f] in kinds]

    if Mapping.GRID_Y in mappings.values():
        # Two-dimensional: about SPREAD_BLOCKS_PER_SM blocks per SM in all, a vector a thread.
        spread = SPREAD_BLOCKS_PER_SM * target.sm_count
        threads = -(-_rows(mappings, representative) * max(vectors.values()) // spread)
    else:
        rows = max([_rows(mappings, representative), *extents(Mapping.GLOBAL)])
        per_thread = VECTORS_PER_THREAD if rows >= MANY_ROWS_PER_SM * target.sm_count else 1
        # A global loop beside thread loops (a small nest beside the grid nest, as a KV
        # cache update's row lookup beside its rows) spreads over whatever grid the thread
        # loops make: sized by it, a block would leave most of its threads idle in theirs.
        sizing = extents(Mapping.THREAD) or extents(Mapping.GLOBAL)
        threads = -(-max(sizing, default=1) // per_thread)
    warp = target.warp_size
    return min(MAX_BLOCK, max(warp, -(-threads // warp) * warp))


def _rows_per_block(
    kernel: loop.KernelOp,
    mappings: dict[loop.ForOp, Mapping],
    widths: dict[loop.ForOp, int],
    target: GpuTarget,
    representative: int,
    rows: int = 0,
) -> tuple[int, int] | None:
    """(bx, by) for a block of by rows of bx threads, where a row of each nest's thread loops
    takes fewer vectors than a warp has threads (a head dim of 128 in bf16 is 16 vectors): bx
    covers the longest row's vectors, by = ROW_BLOCK_THREADS / bx rows while the grid keeps
    MANY_ROWS_PER_SM blocks per SM (or `rows`, a tuner's candidate), so whole warps load where
    a block of one row would leave lanes idle. Only for nests of grid loops over thread loops
    that the rows run apart: no reduction, no loop inside them, nothing passed between them.
    A nest of one global loop beside them (a small table the kernel also writes) is spread
    over all the block's threads (`lower-tile-to-kernel`)."""
    if any(m not in (Mapping.GRID, Mapping.THREAD, Mapping.GLOBAL) for m in mappings.values()):
        return None
    vectors = 1
    for root in (op for op in kernel.body.block.ops if isinstance(op, loop.ForOp)):
        if mappings.get(root) == Mapping.GLOBAL and not root.is_reduction:
            continue
        chain = _grid_chain(root)
        if not chain or not _elementwise_rows(chain):
            return None
        for f in _child_loops(chain[-1]):
            vectors = max(vectors, -(-f.planned_trip_count(representative) // widths[f]))
    bx = 1 << (vectors - 1).bit_length()
    by = rows or min(
        ROW_BLOCK_THREADS // bx,
        _rows(mappings, representative) // (MANY_ROWS_PER_SM * target.sm_count),
    )
    if bx >= target.warp_size or by * bx < target.warp_size:
        return None
    if rows:
        return (bx, by) if bx * by <= target.max_threads_per_block else None
    return bx, 1 << (by.bit_length() - 1)


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
            # A row of the dynamic size has no size to allocate shared memory for.
            if buffer in written or count < 2 or row < 0 or row > budget:
                continue
            budget -= row
            chosen = mode if mode != "auto" else ("sync" if row % MAX_VECTOR_BYTES else "async")
            staged.append(Staging(arguments.index(buffer), paths[grid_loop], StageMode(chosen)))
    return staged


def _contract_atom(
    kernel: loop.KernelOp, target: GpuTarget
) -> tuple[loop.ContractOp, tile.MmaAtom] | None:
    """The kernel's product and the atom it is multiplied on, if its body is one
    loop.contract (and constants) of float operands of one type accumulated in f32: bf16 or
    f16 on mma_sync m16n8k16 (on a target with mma_sync); f32 on tf32 mma_sync m16n8k8 where
    the module's float32 matmul precision allows it and the target has mma_sync, else on the
    fma atom."""
    ops = [op for op in kernel.body.block.ops if not isinstance(op, arith.ConstantOp)]
    if len(ops) != 1 or not isinstance(ops[0], loop.ContractOp):
        return None
    contract = ops[0]
    element_types = {v.type.get_element_type() for v in (contract.lhs, *contract.rhs)}
    (element_type, *others) = element_types
    if others or contract.accumulator_type != f32:
        return None
    if isinstance(element_type, Float16Type | BFloat16Type) and target.has_mma_sync:
        return contract, MMA_SYNC
    if isinstance(element_type, Float32Type):
        allows_tf32 = float32_matmul_precision(kernel) != "highest"
        return contract, TF32_MMA_SYNC if allows_tf32 and target.has_mma_sync else FMA
    return None


def _planned_extents(contract: loop.ContractOp) -> tuple[int, ...]:
    """The product's parallel extents, a dim of the dynamic size taken as its module's
    representative size (`emmy.dialects.sizes`)."""
    return contract.planned_extents(representative_size(contract))


def contraction_schedule(
    tile_shape: tuple[int, int, int],
    warps: tuple[int, int],
    pipeline: int,
    target: GpuTarget,
    atom: tile.MmaAtom = MMA_SYNC,
    siblings: int = 1,
) -> Schedule:
    """The schedule of a product on `atom` in block tiles `tile_shape` of `warps` warps (and
    the warp roles the atom's blocks have); for `siblings` rhs, the tile's N rounded down to
    whole SIBLING_COLUMNS of each sibling's share of every warp's N (at least one each), a
    wgmma atom's N with it."""
    block_m, block_n, block_k = tile_shape
    unit = siblings * warps[1] * SIBLING_COLUMNS
    if siblings > 1 and block_n % unit:
        block_n = max(unit, block_n // unit * unit)
        tile_shape = (block_m, block_n, block_k)
        if atom.kind == tile.AtomKind.WGMMA:
            atom = tile.MmaAtom(atom.kind, (atom.shape[0], block_n // warps[1], atom.shape[2]))
    return Schedule(
        block=(tile.gemm_threads(atom, warps, target.warp_size), 1, 1),
        loops=(),
        tile_shape=tile_shape,
        mma_atom=atom,
        warps=warps,
        pipeline_depth=pipeline,
        warp_roles=tile.gemm_warp_roles(atom, warps),
    )


def _covered_n(contract: loop.ContractOp) -> tuple[int, ...]:
    """The product's planned extents (batch.., M, N; `_planned_extents`) with N as its tiles
    cover it: once per sibling rhs, whose columns a tile's N holds side by side."""
    *rest, size_n = _planned_extents(contract)
    return (*rest, size_n * len(contract.rhs))


def _wgmma_schedule(
    contract: loop.ContractOp, pipeline: int, target: GpuTarget, block_n: int | None = None
) -> Schedule:
    """A warp-specialised wgmma schedule: WGMMA_TILE, or its half as wide (N tiles of 128)
    where N fits it or that keeps the SMs busier (`_wave_efficiency`, the narrower tile
    counted at NARROW_WGMMA_EFFICIENCY of the wider's speed), or `block_n` if given."""
    (block_m, widest, _), warps = WGMMA_TILE
    element = contract.lhs.type.get_element_type()
    block_k = WGMMA_ROW_BYTES // element_bytes(element)
    *_, size_n = _covered_n(contract)
    if block_n is None:
        scores = {
            n: _wave_efficiency(_tile_count(contract, block_m, n), target)
            * (1.0 if n == widest else NARROW_WGMMA_EFFICIENCY)
            for n in (widest, widest // 2)
            if n < widest or size_n > widest // 2  # no wide tile for a narrow product
        }
        block_n = max(scores, key=scores.__getitem__)
    atom = tile.MmaAtom(tile.AtomKind.WGMMA, (64, block_n, wgmma_k(element)))
    siblings = len(contract.rhs)
    tile_shape = (block_m, block_n, block_k)
    return contraction_schedule(tile_shape, warps, pipeline, target, atom, siblings)


def _narrowed(
    kernel: loop.KernelOp, contract: loop.ContractOp, schedule: Schedule, target: GpuTarget
) -> Schedule:
    """`schedule`'s wgmma tile, or one half as wide, down to CANDIDATE_WGMMA_TILE_NS's
    narrowest, while twice the tiles still fit one wave of the SMs (and the tile lowers): a
    block of the narrower tile does part of what one of the wider does, and all the blocks
    run at once, so the product takes no longer, and SMs the wider tiles would leave idle
    share the work (a decoder layer's 1024 x 1024 projections: 128 tiles, not 64)."""
    block_m, block_n, _ = schedule.tile_shape
    while block_n // 2 >= CANDIDATE_WGMMA_TILE_NS[-1]:
        if _tile_count(contract, block_m, block_n // 2) > target.sm_count:
            break
        narrower = _wgmma_schedule(contract, schedule.pipeline_depth, target, block_n // 2)
        if not _lowers(kernel, narrower):
            break
        schedule, block_n = narrower, block_n // 2
    return schedule


def _deepest_ring(kernel: loop.KernelOp, schedule: Schedule) -> Schedule:
    """`schedule` with the deepest ring of K slices of WGMMA_DEEP_PIPELINES that lowers (fits
    shared memory beside the output's staging), else as it is: 8 of a 128 x 64 tile, 6 of a
    128 x 128 one; a 128 x 256 tile's 4 are all that fit."""
    for depth in WGMMA_DEEP_PIPELINES:
        deeper = replace(schedule, pipeline_depth=depth)
        if depth > schedule.pipeline_depth and _lowers(kernel, deeper):
            return deeper
    return schedule


def _tile_count(contract: loop.ContractOp, block_m: int, block_n: int) -> int:
    """The output tiles of `block_m` x `block_n` that cover the product (`_covered_n`)."""
    *batch, size_m, size_n = _covered_n(contract)
    return prod(batch) * -(-size_m // block_m) * -(-size_n // block_n)


def _wave_efficiency(tiles: int, target: GpuTarget) -> float:
    """The share of the SMs busy over the waves a persistent grid takes for `tiles` tiles."""
    waves = -(-tiles // target.sm_count)
    return tiles / (waves * target.sm_count)


def _lowers(kernel: loop.KernelOp, schedule: Schedule) -> bool:
    try:
        lower_kernel(kernel, schedule)
    except ScheduleError:
        return False
    return True


def _streaming_warps(block_n: int, siblings: int = 1) -> tuple[int, int]:
    """Warps along N only, each with whole atoms of each sibling's share."""
    return 1, max(1, min(STREAMING_WARPS_N, block_n // siblings // MMA_SYNC.shape[1]))


def _fits_shared(
    tile_shape: tuple[int, int, int],
    pipeline: int,
    element: int,
    target: GpuTarget,
    split: int = 1,
    blocks_per_sm: int = 1,
) -> bool:
    """Whether `pipeline` K slices of both operands' tiles (and a split's f32 partial tile)
    fit a block's shared memory, `blocks_per_sm` blocks in an SM's."""
    block_m, block_n, block_k = tile_shape
    shared = pipeline * (block_m + block_n) * block_k * element
    if split > 1:
        shared += block_m * block_n * element_bytes(f32)
    limit = min(target.shared_bytes_per_block, target.shared_bytes_per_sm // blocks_per_sm)
    return shared <= limit


def _split(tiles: int, slices: int, target: GpuTarget) -> int:
    """How many blocks share each output tile of a streaming product of `tiles` tiles and
    `slices` K slices: the most, up to a cluster's, whose grid stays within
    SPLIT_BLOCKS_PER_SM blocks an SM, each block MIN_SPLIT_SLICES slices or more and none
    left without a slice (1 where the tiles alone come near that many blocks)."""
    splits = [
        split
        for split in range(2, target.max_cluster_blocks + 1)
        if tiles * split <= SPLIT_BLOCKS_PER_SM * target.sm_count
        and slices >= split * MIN_SPLIT_SLICES
        and (split - 1) * -(-slices // split) < slices
    ]
    return max(splits, default=1)


def _streaming_pipeline(
    tile_shape: tuple[int, int, int],
    tiles: int,
    slices: int,
    element: int,
    target: GpuTarget,
    split: int,
) -> int | None:
    """The K slices in flight in each block of a streaming product split `split` ways: enough
    that the blocks sharing an SM keep WEIGHT_BYTES_IN_FLIGHT of weights in flight between
    them (no more slices than a block has, MAX_PIPELINE_DEPTH at most), fewer where they do not
    fit the blocks' shares of its shared memory. None for a split whose blocks do not fit their
    shares, or, several sharing an SM, keep fewer slices in flight between them than one block
    alone would: their tiles of activations crowd the weights out (M = 64), and fewer weights
    in flight read them slower (`benchmarks/h100/2026-12-07-second/`)."""
    _, block_n, block_k = tile_shape
    slice_bytes = block_n * block_k * element
    blocks_per_sm = -(-tiles * split // target.sm_count) if split > 1 else 1
    in_flight = -(-WEIGHT_BYTES_IN_FLIGHT // blocks_per_sm)
    block_slices = -(-slices // split)
    pipeline = 1 + min(-(-in_flight // slice_bytes), MAX_PIPELINE_DEPTH - 1, block_slices)
    while pipeline > 2 and not _fits_shared(
        tile_shape, pipeline, element, target, split, blocks_per_sm
    ):
        pipeline -= 1
    if split == 1:
        return pipeline
    fits = _fits_shared(tile_shape, pipeline, element, target, split, blocks_per_sm)
    alone = _streaming_pipeline(tile_shape, tiles, slices, element, target, 1)
    # A split of one block an SM only adds SMs; more share each SM's shared memory.
    keeps_as_many = blocks_per_sm == 1 or blocks_per_sm * (pipeline - 1) >= alone - 1
    return pipeline if fits and keeps_as_many else None


def _streaming_schedule(
    contract: loop.ContractOp, target: GpuTarget, split_k: bool = True
) -> Schedule:
    """The weight-streaming schedule of a product of at most STREAMING_M rows (see the
    module docstring); with `split_k`, its K split among blocks where the tiles are few
    (never for sibling rhs, see the module docstring)."""
    *batch, size_m, size_n = _covered_n(contract)
    siblings = len(contract.rhs)
    size_k = contract.reduction.data
    block_m = next(m for m in STREAMING_TILE_M if m >= size_m)
    block_k = next((k for k in STREAMING_TILE_K if k >= size_k), STREAMING_TILE_K[-1])
    tiles = -(-size_m // block_m) * prod(batch)
    block_n = next(
        (n for n in STREAMING_TILE_N if tiles * -(-size_n // n) >= target.sm_count),
        STREAMING_TILE_N[-1],
    )
    tiles *= -(-size_n // block_n)
    element = element_bytes(contract.rhs[0].type.get_element_type())
    slices = -(-size_k // block_k)
    tile_shape = (block_m, block_n, block_k)
    split = _split(tiles, slices, target) if split_k and siblings == 1 else 1
    pipeline = _streaming_pipeline(tile_shape, tiles, slices, element, target, split)
    if pipeline is None:
        split, pipeline = 1, _streaming_pipeline(tile_shape, tiles, slices, element, target, 1)
    warps = _streaming_warps(block_n, siblings)
    schedule = contraction_schedule(tile_shape, warps, pipeline, target, MMA_SYNC, siblings)
    return replace(schedule, split=split)


def _choose_contraction_schedule(kernel: loop.KernelOp, target: GpuTarget) -> Schedule | None:
    """A block-tiled schedule of the kernel's product, if it has one that lowers."""
    contract_atom = _contract_atom(kernel, target)
    if contract_atom is None:
        return None
    contract, atom = contract_atom
    *_, size_m, size_n = _covered_n(contract)
    siblings = len(contract.rhs)
    # An f32 rhs whose N is contiguous does not lower on wgmma (no transposed tf32 wgmma).
    tensor_cores = (MMA_SYNC, TF32_MMA_SYNC)
    if atom in tensor_cores and target.has_wgmma and size_m >= WGMMA_TILE[0][0]:
        schedule = _wgmma_schedule(contract, WGMMA_PIPELINE_DEPTH, target)
        if _lowers(kernel, schedule):
            return _deepest_ring(kernel, _narrowed(kernel, contract, schedule, target))
    if atom != MMA_SYNC:
        large, small = ATOM_TILES[atom]
        (large_m, large_n, _), _ = large
        tile_shape, warps = large if size_m >= large_m and size_n >= large_n else small
        schedule = contraction_schedule(tile_shape, warps, PIPELINE_DEPTH, target, atom, siblings)
        return schedule if _lowers(kernel, schedule) else None
    (large_m, large_n, _), _ = LARGE_TILE
    small = contraction_schedule(*SMALL_TILE, PIPELINE_DEPTH, target, MMA_SYNC, siblings)
    if size_m >= large_m and size_n >= large_n:
        tried = [contraction_schedule(*LARGE_TILE, PIPELINE_DEPTH, target, MMA_SYNC, siblings)]
    elif size_m <= STREAMING_M:
        streaming = _streaming_schedule(contract, target)
        tried = [streaming, _streaming_schedule(contract, target, split_k=False), small]
        tried = list(dict.fromkeys(tried))
    else:
        tried = [small]
    return next((s for s in tried if _lowers(kernel, s)), None)


def _tensor_core_attention(kernel: loop.KernelOp) -> loop.AttentionOp | None:
    """The one loop.attention of `kernel`, where it is of bf16 or f16 with a head dim of
    ATTENTION_HEAD_DIMS (which tensor cores take)."""
    ops = list(kernel.body.block.ops)
    if len(ops) != 1 or not isinstance(attention := ops[0], loop.AttentionOp):
        return None
    element = attention.query.type.get_element_type()
    depth = attention.query.type.get_shape()[-1]
    if not isinstance(element, BFloat16Type | Float16Type) or depth not in ATTENTION_HEAD_DIMS:
        return None
    return attention


def _attention_schedule(
    kernel: loop.KernelOp, target: GpuTarget, block_q: int | None = None
) -> Schedule | None:
    """Attention's schedule on mma_sync of a kernel of one loop.attention of bf16 or f16 with
    a head dim of ATTENTION_HEAD_DIMS, where it lowers: ATTENTION_TILE, its rows as few as the
    packed query rows take (or `block_q`), its keys split to fill the SMs (see the module
    docstring)."""
    attention = _tensor_core_attention(kernel)
    if attention is None or not target.has_mma_sync:
        return None
    representative = representative_size(kernel)
    query, key = (
        [representative if d == DYNAMIC_INDEX else d for d in v.type.get_shape()]
        for v in (attention.query, attention.key)
    )
    *_, rows, depth = query
    warp_rows = MMA_SYNC.shape[0]
    packed_rows = kv_group(query, key) * rows
    block_kv = ATTENTION_TILE[1]
    if block_q is None:
        block_q = min(ATTENTION_TILE[0], warp_rows * -(-packed_rows // warp_rows))
    warps = block_q // warp_rows
    blocks = packed_row_blocks(query, key, block_q)
    wanted = -(-target.sm_count * ATTENTION_SPLIT_WARPS_PER_SM // (blocks * warps))
    key_blocks = -(-key[-2] // block_kv)
    split = max(1, min(wanted, key_blocks // ATTENTION_MIN_PART_BLOCKS))
    if is_dynamic((*attention.query.type.get_shape(), *attention.key.type.get_shape())):
        split = 1  # the keys of a decode over the dynamic size are not split (tile.attention)
    schedule = replace(
        contraction_schedule((block_q, block_kv, depth), (warps, 1), ATTENTION_PIPELINE, target),
        split=split,
    )
    return schedule if _lowers(kernel, schedule) else None


def _attention_wave_splits(
    attention: loop.AttentionOp, schedule: Schedule, target: GpuTarget
) -> list[int]:
    """The splits of an mma_sync attention's keys whose blocks fill CANDIDATE_ATTENTION_WAVES
    waves of the blocks that the SMs' shared memory holds at once: a decode's blocks are few
    warps each, and its grid of 2,112 one-warp blocks (B1 H32 against 32,768 keys, split
    66) is 5.3 waves of the 396 that 3 blocks of 70 KB an SM make, its last a third full."""
    query, key = (v.type.get_shape() for v in (attention.query, attention.key))
    block_q, block_kv, depth = schedule.tile_shape
    element = element_bytes(attention.query.type.get_element_type())
    shared = (block_q + 2 * schedule.pipeline_depth * block_kv) * depth * element
    resident = target.sm_count * (target.shared_bytes_per_sm // (shared + BLOCK_RESERVED_SHARED))
    blocks = packed_row_blocks(query, key, block_q)
    return [waves * resident // blocks for waves in CANDIDATE_ATTENTION_WAVES]


def _wgmma_attention_schedule(
    kernel: loop.KernelOp,
    target: GpuTarget,
    block_q: int | None = None,
    pipeline: int = WGMMA_ATTENTION_PIPELINE,
    block_kv: int | None = None,
) -> Schedule | None:
    """Attention's schedule on wgmma (see the module docstring), where it lowers: a block per
    WGMMA_ATTENTION_TILE's 128 rows of a query head (64 where a head has fewer or where the
    items of 64 rows all fit one wave of the SMs, or `block_q`), none for heads of fewer
    than 64 rows; WIDE_WGMMA_ATTENTION_KEYS keys at a time (or `block_kv`) where the
    attention is plain at head dim 128 (`_plain_at_depth_128`) and its items take several
    waves of the SMs, else WGMMA_ATTENTION_TILE's."""
    attention = _tensor_core_attention(kernel)
    if attention is None or not target.has_wgmma:
        return None
    if is_dynamic((*attention.query.type.get_shape(), *attention.key.type.get_shape())):
        return None  # the wgmma kernel's tensor maps and row blocks are of static sizes
    *_, rows, depth = attention.query.type.get_shape()
    heads = prod(attention.query.type.get_shape()[:-2])
    warpgroup_rows = WGMMA_ATTENTION_TILE[0] // 2
    if rows < warpgroup_rows:
        return None
    if block_q is None:
        block_q = WGMMA_ATTENTION_TILE[0] if rows >= WGMMA_ATTENTION_TILE[0] else warpgroup_rows
        if heads * -(-rows // warpgroup_rows) <= target.sm_count:
            # All the items of one warp group's rows run at once, each no longer than one of
            # two warp groups sharing an SM: the SMs that blocks of 128 rows would leave idle
            # share the work (a decoder layer's 2 x 8 heads of 512 rows: 128 items, not 64).
            block_q = warpgroup_rows
    if block_kv is None:
        # In one wave of items (B1 H16 S1024: 128) each SM runs one, whose latency the
        # wider blocks lengthen: 34.6 us against 29.2 on an H100.
        several_waves = heads * -(-rows // block_q) > target.sm_count
        wide = _plain_at_depth_128(attention) and several_waves
        block_kv = WIDE_WGMMA_ATTENTION_KEYS if wide else WGMMA_ATTENTION_TILE[1]
    atom = tile.MmaAtom(tile.AtomKind.WGMMA, (warpgroup_rows, block_kv, 16))
    warps = (block_q // MMA_SYNC.shape[0], 1)
    schedule = contraction_schedule((block_q, block_kv, depth), warps, pipeline, target, atom)
    return schedule if _lowers(kernel, schedule) else None


def _plain_at_depth_128(attention: loop.AttentionOp) -> bool:
    """Whether `attention` is neither masked nor causal, at head dim 128: where
    WIDE_WGMMA_ATTENTION_KEYS may pay."""
    depth = attention.query.type.get_shape()[-1]
    return attention.mask is None and attention.causal is None and depth == 128


def _wgmma_attention_key_blocks(kernel: loop.KernelOp) -> tuple[int, ...]:
    """The keys at a time `candidates` offers attention on wgmma: WIDE_WGMMA_ATTENTION_KEYS
    only where it may pay (at head dim 64 it made B8 H32 S2048 25% slower on an H100)."""
    attention = _tensor_core_attention(kernel)
    narrow = WGMMA_ATTENTION_TILE[1]
    wide = attention is not None and _plain_at_depth_128(attention)
    return (narrow, WIDE_WGMMA_ATTENTION_KEYS) if wide else (narrow,)


def _choose_attention_schedule(kernel: loop.KernelOp, target: GpuTarget) -> Schedule | None:
    """Attention's schedule on wgmma where it has one (heads of at least 64 query rows);
    else (decode: a few query rows a head, flash-decoding's split) on mma_sync."""
    return _wgmma_attention_schedule(kernel, target) or _attention_schedule(kernel, target)


def _loop_nests(kernel: loop.KernelOp) -> loop.KernelOp:
    """`kernel` as the loop nests it is scheduled as: a copy with its loop.contracts and
    loop.attentions expanded (as `expand-loop-contract` and `expand-loop-attention` will
    expand them), or itself if it has none."""
    if not any(isinstance(op, loop.ContractOp | loop.AttentionOp) for op in kernel.body.block.ops):
        return kernel
    nests = kernel.clone()
    expand_attentions(nests)
    expand_contracts(nests)
    return nests


def choose_schedule(
    kernel: loop.KernelOp, target: GpuTarget, overrides: Overrides = Overrides()
) -> Schedule:
    """The heuristic's schedule of `kernel` (see the module docstring)."""
    contraction = _choose_contraction_schedule(kernel, target) or _choose_attention_schedule(
        kernel, target
    )
    if contraction is not None:
        return contraction
    return _loop_schedule(_loop_nests(kernel), target, overrides, representative_size(kernel))


def _loop_schedule(
    kernel: loop.KernelOp,
    target: GpuTarget,
    overrides: Overrides,
    representative: int,
    rows: int = 0,
) -> Schedule:
    """The heuristic's schedule of the loop nests of `kernel`, a loop to the dynamic size
    taken to run `representative` times (with blocks of `rows` rows, where they may have
    several)."""
    mappings = _mappings(kernel, overrides.split_reductions, target)
    widths = {
        f: _vector_width(f, overrides.vector_width)
        for f, m in mappings.items()
        if m in tile.VECTOR_MAPPINGS
    }
    paths = tile.loop_paths(kernel.body.block, loop.ForOp)
    stages = tuple(_staged_rows(kernel, mappings, paths, overrides.stage))
    rows_shape = None
    if not stages and not overrides.block_size:
        rows_shape = _rows_per_block(kernel, mappings, widths, target, representative, rows)
    if rows_shape is not None:
        block = (*rows_shape, 1)
        mappings = {f: Mapping.ROWS if m == Mapping.GRID else m for f, m in mappings.items()}
    else:
        block = (_block_size(mappings, widths, target, overrides.block_size, representative), 1, 1)
    return Schedule(
        block=block,
        loops=tuple(
            sorted((paths[f], LoopSchedule(m, widths.get(f, 1))) for f, m in mappings.items())
        ),
        stages=stages,
    )


def candidates(kernel: loop.KernelOp, target: GpuTarget) -> list[Schedule]:
    """The legal schedules of `kernel` worth timing, the heuristic's first: its mappings
    (with and without splitting a long reduction across blocks) under every block size of
    CANDIDATE_BLOCKS, every vector width up to 16 bytes of the widest element, and staging
    its re-read rows asynchronously, synchronously or not at all; and for a product tensor
    cores can take, every CANDIDATE_TILES tile with every CANDIDATE_PIPELINES depth too (on
    wgmma: the CANDIDATE_WGMMA_TILE_NS widths with the CANDIDATE_WGMMA_PIPELINES depths that
    fit, each with the CANDIDATE_RASTERS tile orders and in clusters of WGMMA_CLUSTER), and
    for one of at most STREAMING_M rows the streaming tiles of CANDIDATE_STREAMING_TILES_NK
    with every CANDIDATE_STREAMING_PIPELINES depth, each unsplit and with the split `_split`
    gives its tiles; for an attention, its tile and ATTENTION_TILE (a decode's tile of few
    rows is one warp, which issues every copy of its keys and values; 4 warps share them)
    with each of CANDIDATE_ATTENTION_SPLITS, and on wgmma blocks of 64 and 128 rows with
    each of CANDIDATE_WGMMA_ATTENTION_PIPELINES, taking 128 and WIDE_WGMMA_ATTENTION_KEYS
    keys at a time; blocks of each of CANDIDATE_ROWS rows where
    a nest's rows may share blocks (`_rows_per_block`); each one lowers."""
    heuristic = choose_schedule(kernel, target)
    schedules = {heuristic: None}
    attention = _attention_schedule(kernel, target)
    if attention is not None:
        (attention_op,) = kernel.body.block.ops
        key_blocks = -(-attention_op.key.type.get_shape()[-2] // attention.tile_shape[1])
        for block_q in sorted({attention.tile_shape[0], ATTENTION_TILE[0]}):
            rows = _attention_schedule(kernel, target, block_q)
            if rows is None:
                continue
            splits = {
                *CANDIDATE_ATTENTION_SPLITS,
                *_attention_wave_splits(attention_op, rows, target),
            }
            for split in sorted(s for s in splits if s <= key_blocks):
                if _lowers(kernel, replace(rows, split=split)):
                    schedules.setdefault(replace(rows, split=split), None)
    for block_q in (WGMMA_ATTENTION_TILE[0] // 2, WGMMA_ATTENTION_TILE[0]):
        for pipeline in CANDIDATE_WGMMA_ATTENTION_PIPELINES:
            for block_kv in _wgmma_attention_key_blocks(kernel):
                wgmma = _wgmma_attention_schedule(kernel, target, block_q, pipeline, block_kv)
                if wgmma is not None:
                    schedules.setdefault(wgmma, None)
    contract_atom = _contract_atom(kernel, target)
    if contract_atom is not None and contract_atom[1] in (MMA_SYNC, TF32_MMA_SYNC):
        contract, atom = contract_atom
        for pipeline in CANDIDATE_WGMMA_PIPELINES if target.has_wgmma else ():
            for block_n in CANDIDATE_WGMMA_TILE_NS:
                wgmma = _wgmma_schedule(contract, pipeline, target, block_n)
                variants = [wgmma]
                if atom == MMA_SYNC:  # tf32's tile orders and clusters are not yet timed
                    variants = [replace(wgmma, raster=raster) for raster in CANDIDATE_RASTERS]
                    variants.append(replace(wgmma, cluster=WGMMA_CLUSTER))
                for schedule in variants:
                    if _lowers(kernel, schedule):
                        schedules.setdefault(schedule, None)
    if contract_atom is not None and contract_atom[1] == MMA_SYNC:
        contract = contract_atom[0]
        tiles = [(t, w, CANDIDATE_PIPELINES, (1,)) for t, w in CANDIDATE_TILES]
        *batch, size_m, size_n = _covered_n(contract)
        siblings = len(contract.rhs)
        size_k = contract.reduction.data
        if size_m <= STREAMING_M:
            block_m = _streaming_schedule(contract, target).tile_shape[0]
            output_tiles = -(-size_m // block_m) * prod(batch)
            for n, k in CANDIDATE_STREAMING_TILES_NK:
                split = _split(output_tiles * -(-size_n // n), -(-size_k // k), target)
                splits = (1, split)
                warps = _streaming_warps(n, siblings)
                tiles.append(((block_m, n, k), warps, CANDIDATE_STREAMING_PIPELINES, splits))
        for tile_shape, warps, pipelines, splits in tiles:
            for pipeline in pipelines:
                for split in splits:
                    schedule = contraction_schedule(
                        tile_shape, warps, pipeline, target, MMA_SYNC, siblings
                    )
                    schedule = replace(schedule, split=split)
                    if _lowers(kernel, schedule):
                        schedules.setdefault(schedule, None)
    nests = _loop_nests(kernel)
    representative = representative_size(kernel)
    loops = tile.loop_paths(nests.body.block, loop.ForOp)
    widest = max((_widest_vector(f) for f in loops), default=1)
    for split in (True, False):
        for block in [b for b in CANDIDATE_BLOCKS if b <= target.max_threads_per_block]:
            for width in [w for w in (1, *tile.VECTOR_WIDTHS) if w <= widest]:
                for stage in STAGE_CHOICES:
                    overrides = Overrides(block, width, stage, split)
                    schedule = _loop_schedule(nests, target, overrides, representative)
                    schedules.setdefault(schedule, None)
    for rows in CANDIDATE_ROWS:
        schedule = _loop_schedule(nests, target, Overrides(), representative, rows)
        schedules.setdefault(schedule, None)
    return [s for s in schedules if (_lowers(kernel, s) if s.is_contraction else _lowers(nests, s))]


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

    tuned: bool = True
    """Take a kernel's schedule from the tuning database (`emmy tune`) where it has one and
    nothing above is fixed."""

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
        tuned = self.tuned and overrides == Overrides()
        database = None
        if tuned:
            # here: SQLite and the database's keys cost start-up only where they are used
            from emmy.tools.tuning_database import TuningDatabase

            database = TuningDatabase()
            if not database.path.exists():
                database = None
        for kernel in op.body.block.ops:
            if (
                isinstance(kernel, loop.KernelOp)
                and tile.SCHEDULE_ATTRIBUTE not in kernel.attributes
            ):
                found = _tuned_schedule(ctx, kernel, database) if tuned else None
                if found is not None:
                    schedule, summary = found
                    kernel.attributes[tile.TUNED_ATTRIBUTE] = StringAttr(summary)
                else:
                    schedule = choose_schedule(kernel, target_of(kernel), overrides)
                kernel.attributes[tile.SCHEDULE_ATTRIBUTE] = ScheduleAttr(schedule)


def _tuned_schedule(
    ctx: Context, kernel: loop.KernelOp, database: TuningDatabase | None
) -> tuple[Schedule, str] | None:
    """The tuned schedule of `kernel` (`lookup_tuned`: the user's `database`, else emmy's
    shipped tuning), if there is one that still lowers it, and its summary for
    `tile.tuned`."""
    from emmy.tools.tuning_database import lookup_tuned

    found = lookup_tuned(database, kernel, target_of(kernel))
    if found is None:
        return None
    entry, is_shipped = found
    try:
        attribute = Parser(ctx, entry.schedule).parse_attribute()
    except ParseError:
        return None
    if not isinstance(attribute, ScheduleAttr):
        return None
    schedule = attribute.data
    nests = kernel if schedule.is_contraction else _loop_nests(kernel)
    if not _lowers(nests, schedule):
        return None
    return schedule, f"shipped: {entry.summary}" if is_shipped else entry.summary
