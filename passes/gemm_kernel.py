"""The Kernel IR of a `tile.gemm` on mma_sync tensor cores or on FMAs, for `lower-tile-to-kernel`.

    tile.gemm %x[m, k] * %w[n, k] : memref<70x40xbf16>, memref<50x40xbf16> -> f32
        atom mma_sync m16n8k16 tile [64, 64, 32] warps [2, 2] pipeline 3 epilogue(%m, %n, %acc) {..}

becomes a `kernel.func` in which block (x, y) computes the output tile at rows 64y, columns
64x (z strides through the batch), each of its 2 x 2 warps a 32 x 32 quarter of it as 2 x 4
m16n8k16 atoms, each atom's accumulator a `vector<4xf32>` carried through the K loop:

- Shared memory holds `pipeline` K slices of both operands, each tile in the layout of its
  operand (rows of its last, contiguous dimension), cut into panels of rows of 128 bytes
  at most and swizzled (`#kernel.swizzle`), so that the 8 rows an ldmatrix reads lie in 8
  different bank groups: `memref<stages x panels x rows x 64 x bf16, 3>`; static
  `kernel.shared_alloc`s, or views of the dynamic shared memory when they need more than a
  block's static shared memory.
- The block copies the slices with `kernel.cp_async` (16 bytes a copy, or the widest copy
  that the operand's row length keeps aligned; a row of odd length goes through registers),
  `pipeline - 1` slices ahead of the one it multiplies: before the K loop it starts the first
  `pipeline - 1`, one group each; in iteration kt it waits until slice kt has landed
  (`kernel.cp_async_wait pipeline-2`), passes a barrier (everyone's copies are visible, and
  everyone is done with the slice that the next copy overwrites), starts slice
  kt + pipeline - 1 and commits its group (empty past the last slice), and multiplies slice kt.
- A copy past the end of M, N or K reads nothing and zero-fills (`src_bytes`), so the tails
  add zeros; its source indices are clamped to 0, a valid address.
- Each warp loads its A fragments with `kernel.ldmatrix` x4 (`trans` when A is [K, M]) and
  its B fragments two atoms at a time with ldmatrix x4 (one at a time with x2 for an odd
  last atom; `trans` when B is [K, N]), the next k-step's fragments before this k-step's
  `kernel.mma_sync`s.
- After the K loop, element i of an atom's accumulator is the output at row g + 8 (i / 2),
  column 2t + i % 2 of the atom (g = lane / 4, t = lane % 4, the PTX C-fragment layout); the
  epilogue runs there, under `m < M and n < N` where the tiles overrun.

Sibling rhs (`tile.gemm %x[m, k] * (%wg, %wu)[n, k]`, SwiGLU's gate and up) make one B tile
whose N covers them: each warp's N is its share of each sibling's columns side by side
(`tile.GemmOp`), so the block multiplies one BM x BN product as for a single
rhs, and the B tile is filled from each rhs, a cp.async run per warp and sibling (`pieces`).
A thread's accumulators then hold each output element's value of every sibling, `share`
columns apart (atoms of 8 columns on mma_sync, a register tile's columns on fma), which the
epilogue takes together (`by_sibling`): with warps [2, 2] and tile N 64, warp column w holds
output columns 16w .. 16w + 15 of the gate in its atoms 0-1 and of the up in atoms 2-3.

Split-K (`split S`, for decode: too few output tiles to give every SM blocks to stream the
weights with): the S blocks of an output tile are consecutive along the grid's x (the tile is
block x / S), a thread-block cluster of S (`kernel.func ... cluster S`), and rank r = x % S
multiplies K slices r * ceil(slices / S) on, ceil(slices / S) of them (those past K read
nothing and add zeros). Their partial tiles are summed in the same launch, through
distributed shared memory, before the epilogue:

    tile.gemm ... tile [16, 32, 128] warps [1, 4] pipeline 8 split 4 epilogue(..)

    (K loop over the block's slices)         // each block: its 16x32 partial in registers
    kernel.vector_store %acc01, %partials[%row, %col]   // memref<16x32xf32, 3>, its own
    kernel.cluster_barrier                   // arrive.release + wait.acquire: all stored
    %p0 = kernel.map_shared_rank %partials, %c0    // ... %p3: each block's partials
    (rank r: column pairs 64r .. 64r + 63 of the tile's 256, one a thread)
      %sum = (%p0[i] + %p1[i]) + %p2[i] + %p3[i]   // in rank order: deterministic
      (epilogue of the two columns at the pair's row and column)
    kernel.cluster_barrier                   // no block leaves while others read its memory

The cluster is chosen over the other in-kernel reduction, an f32 workspace in global memory
with a per-tile arrival counter that the last block to arrive sums (`__threadfence` before
its atomic, an acquire after): it needs no workspace or zeroed counters from the host (nor
their reset, nor a second stream's launch sharing them), no global round trip of the
partials (2 KB a block here, through L2) and no fence/atomic chain, and it sums in one fixed
order, so results do not depend on which block finishes last; the barrier's release/acquire
semantics order the shared stores before the remote loads on the GPU as the emulator's phase
order does. Its limits: sm_90 clusters, at most 8 blocks (the portable cluster size), and the
S blocks must be co-resident in one GPC, which the small decode tiles are. Every block sums
1/S of the tile, so the reduction's shared reads and epilogue are spread over the cluster.

Over the dynamic size (`emmy.dialects.sizes`: a `?` m or batch dimension, the kernel's size
argument last), block y is the N tile and the blocks along x stride through the batch's
ceil(M / BM) M tiles, each after a barrier (the last tile's slices may still be read), as
many blocks as the launch's `sized` gives for the size; the copies and the epilogue are
predicated against the size as against a static M that is no multiple of BM:

    tile.gemm %x[b0, m, k] * %w[n, k] : memref<1x?x64xbf16>, memref<96x64xbf16> -> f32 ..

    scf.for %t = %block_x to ceil(%s0 / 64) step %grid_x {
      kernel.barrier
      (the tile at rows 64 (%t mod tiles), columns 64 %block_y)
    }

f32 operands (torch's float32 matmul precision) take the same shared K slices and pipeline
(`_StagedGemmBuilder`), multiplied one of two ways:

- `atom mma_sync m16n8k8`: tf32 tensor cores (`kernel.mma_sync m16n8k8 tf32`); ldmatrix moves
  16-bit elements, so each lane loads its fragments' f32 elements one by one (A's at rows g,
  g + 8 and columns t, t + 4, B's at K t, t + 4 and N g), which the swizzle keeps free of
  bank conflicts in tiles whose rows run along K.
- `atom fma`: a register-tiled SIMT GEMM. The 32 lanes of a warp lie lanes_m x lanes_n over
  its tile (`tile.fma_lane_grid`), each accumulating in f32 scalars the register tile of
  every lanes_m-th row and lanes_n-th column from its own (8 x 8 of a 32 x 64 warp tile); for
  each k of a slice it loads its rows of A and columns of B into registers and multiply-adds
  every pair (`math.fma`), then runs the epilogue of each element.

    tile.gemm %x[m, k] * %w[n, k] : memref<70x40xf32>, memref<50x40xf32> -> f32
        atom fma tile [128, 128, 8] warps [4, 2] pipeline 3 epilogue(%m, %n, %acc) {..}
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith, math, memref, scf
from xdsl.dialects import vector as vector_dialect
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerAttr,
    VectorType,
    f32,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from emmy.dialects import kernel, tile
from emmy.dialects.access import constant_index
from emmy.dialects.launch import kernel_size_argument
from emmy.dialects.target import GpuTarget

Index = SSAValue | int
"""An index the kernel computes, or one known now (emitted as a constant where used)."""

SWIZZLE_ROW_BYTES = 128
"""The widest shared row of a tile panel: the span of the widest swizzle."""

_FOLDS = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
    arith.DivUIOp: operator.floordiv,
    arith.RemUIOp: operator.mod,
}
_IDENTITIES = {arith.AddiOp: 0, arith.SubiOp: 0, arith.MuliOp: 1, arith.DivUIOp: 1}


@dataclass(frozen=True)
class OperandTiles:
    """How one operand's K slices lie in shared memory: tiles of `rows` x `columns` elements
    (`columns` along the operand's contiguous last dimension, iteration dimension
    `column_dim`; rows along `row_dim`), cut into `panels` of `width` columns."""

    operand: SSAValue
    dims: tuple[int, ...]
    row_dim: int
    column_dim: int
    rows: int
    columns: int
    width: int
    copy_elements: int
    """Elements per copy: the most (up to 16 bytes) that divide the operand's row length."""

    @property
    def panels(self) -> int:
        return self.columns // self.width


@dataclass(frozen=True)
class TilePiece:
    """What of an operand's tile one operand fills: the whole tile, or for a sibling rhs
    (`tile.GemmOp`) `extent` of its positions along N from `start`, read from
    `offset` past the output tile's first column."""

    operand: SSAValue
    start: int = 0
    offset: int = 0
    extent: int | None = None


class KernelEmitter:
    """What the tensor-core kernels of `lower-tile-to-kernel` emit alike (a tile.gemm's here,
    a tile.attention's in `emmy.passes.attention_kernel`): index arithmetic folded where it
    is known, nested blocks, swizzled shared tiles read by ldmatrix and the lanes of
    fragments; `block` is where ops go next."""

    def __init__(self, body: Block, values: dict[SSAValue, SSAValue], target: GpuTarget):
        self.body = body
        self.block = body
        self.values = values
        """Tile IR values (the kernel's arguments) -> their Kernel IR values."""
        self.target = target
        self.constants: dict[tuple[int, Attribute], SSAValue] = {}
        self.constant_ops: list[Operation] = []
        self.known: dict[SSAValue, int] = {}
        """The index constants, by value."""

    # -- emitting --

    def add_op(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def constant(self, value: int, value_type: Attribute = IndexType()) -> SSAValue:
        key = (value, value_type)
        if key not in self.constants:
            op = arith.ConstantOp(IntegerAttr(value, value_type))
            op.result.name_hint = f"c{value}" if value_type == IndexType() else f"c{value}_i32"
            self.constant_ops.append(op)
            self.constants[key] = op.result
            if value_type == IndexType():
                self.known[op.result] = value
        return self.constants[key]

    def named(self, op: Operation, name: str) -> SSAValue:
        """The result of `op`, added and named `name`."""
        op.results[0].name_hint = name
        return self.add_op(op).results[0]

    def equal(self, lhs: Index, rhs: Index) -> SSAValue:
        return self.add_op(arith.CmpiOp(self.index(lhs), self.index(rhs), "eq")).results[0]

    def index(self, value: Index) -> SSAValue:
        return self.constant(value) if isinstance(value, int) else value

    def known_value(self, value: Index) -> int | None:
        return value if isinstance(value, int) else self.known.get(value)

    def arith(self, op_type: type[Operation], lhs: Index, rhs: Index) -> Index:
        """`lhs op rhs`, folded where both are known, where one is the op's identity (x + 0,
        x * 1, x / 1) and where one absorbs it (x * 0, x % 1)."""
        left, right = self.known_value(lhs), self.known_value(rhs)
        if left is not None and right is not None:
            return _FOLDS[op_type](left, right)
        identity = _IDENTITIES.get(op_type)
        if identity is not None and right == identity:
            return lhs
        if op_type in (arith.AddiOp, arith.MuliOp) and left == identity:
            return rhs
        if (op_type is arith.MuliOp and 0 in (left, right)) or (
            op_type is arith.RemUIOp and right == 1
        ):
            return 0
        return self.add_op(op_type(self.index(lhs), self.index(rhs))).results[0]

    def add(self, lhs: Index, rhs: Index) -> Index:
        return self.arith(arith.AddiOp, lhs, rhs)

    def sub(self, lhs: Index, rhs: Index) -> Index:
        return self.arith(arith.SubiOp, lhs, rhs)

    def mul(self, lhs: Index, rhs: Index) -> Index:
        return self.arith(arith.MuliOp, lhs, rhs)

    def div(self, lhs: Index, rhs: Index) -> Index:
        return self.arith(arith.DivUIOp, lhs, rhs)

    def rem(self, lhs: Index, rhs: Index) -> Index:
        return self.arith(arith.RemUIOp, lhs, rhs)

    def ceil_div(self, size: Index, tile: int) -> Index:
        return self.div(self.add(size, tile - 1), tile)

    def point_of(self, linear: Index, sizes: Sequence[int]) -> list[Index]:
        """The point of a row-major array of `sizes` at position `linear` (the first index
        unbounded: `linear` below their product)."""
        point, stride = [], prod(sizes)
        for position, size in enumerate(sizes):
            stride //= size
            index = self.div(linear, stride)
            point.append(self.rem(index, size) if position else index)
        return point

    @staticmethod
    def overruns(extent: Index, tile: int) -> bool:
        """Whether tiles of `tile` may reach past `extent`: it is no multiple of them, or it
        is the dynamic size."""
        return not isinstance(extent, int) or extent % tile != 0

    def reduced(self, values: Sequence[SSAValue], combine: type) -> SSAValue:
        """`values` combined by the binary op `combine` in a balanced tree: its depth is the
        log2 of their count, where a chain's is the count, so that the combines of a level
        are independent."""
        level = list(values)
        while len(level) > 1:
            pairs = len(level) // 2
            combined = [
                self.add_op(combine(level[2 * i], level[2 * i + 1])).results[0]
                for i in range(pairs)
            ]
            level = combined + level[2 * pairs :]
        return level[0]

    def chained(self, values: Sequence[SSAValue], combine: type) -> SSAValue:
        """`values` combined by the binary op `combine` in order, each combine after the one
        before (see `reduced`)."""
        result = values[0]
        for value in values[1:]:
            result = self.add_op(combine(result, value)).results[0]
        return result

    def less(self, lhs: Index, rhs: Index) -> SSAValue:
        return self.add_op(arith.CmpiOp(self.index(lhs), self.index(rhs), "ult")).results[0]

    def both(self, conditions: Sequence[SSAValue]) -> SSAValue | None:
        """All of `conditions` (None for none)."""
        result = None
        for condition in conditions:
            result = (
                condition
                if result is None
                else self.add_op(arith.AndIOp(result, condition)).results[0]
            )
        return result

    def select(self, condition: SSAValue, then: Index, otherwise: Index) -> SSAValue:
        return self.add_op(
            arith.SelectOp(condition, self.index(then), self.index(otherwise))
        ).results[0]

    def nested(self, fill, arg_types: Sequence[Attribute] = ()) -> Block:
        """A block that `fill(block)` fills (it returns the values to yield, if any), ended
        by an scf.yield."""
        inner = Block(arg_types=arg_types)
        outer, self.block = self.block, inner
        yielded = fill(inner) or []
        self.add_op(scf.YieldOp(*yielded))
        self.block = outer
        return inner

    def if_then(self, condition: SSAValue | None, fill) -> None:
        """`fill()` where `condition` holds (everywhere for None)."""
        if condition is None:
            fill()
            return
        then = self.nested(lambda _: fill())
        self.add_op(scf.IfOp(condition, [], Region(then), Region()))

    def panel_column(
        self, tiles: OperandTiles, column: Index, offset: Index = 0
    ) -> tuple[Index, Index]:
        """The panel of the tile that column `column + offset` is in, and its column there;
        `offset` (a lane's, below 16) never takes a known `column` (a k-step's, a multiple
        of 16) into the next panel."""
        if tiles.panels == 1:
            return 0, self.add(column, offset)
        if isinstance(column, int):
            return column // tiles.width, self.add(column % tiles.width, offset)
        column = self.add(column, offset)
        return self.div(column, tiles.width), self.rem(column, tiles.width)

    def emit_fragment_offsets(self) -> None:
        """Each lane's offsets into the blocks ldmatrix loads (see the fragment methods):
        l % 16, 8 (l / 16), 8 (l / 16) + l % 8, 8 ((l / 8) % 2) and l % 8."""
        lane = self.lane
        eighth = self.rem(lane, 8)
        self.lane_row = self.rem(lane, 16)
        self.lane_column = self.mul(self.div(lane, 16), 8)
        self.lane_block_row = self.add(self.lane_column, eighth)
        self.lane_half = self.mul(self.rem(self.div(lane, 8), 2), 8)
        self.lane_eighth = eighth

    def ldmatrix(
        self,
        tiles: OperandTiles,
        shared: SSAValue,
        stage: Index,
        row: Index,
        column: tuple[Index, Index],
        matrices: int,
        transposed: bool,
    ) -> SSAValue:
        """ldmatrix of `matrices` 8x8 matrices, each lane at `row` and column `column[0] +
        column[1]` (a base and the lane's offset) of the stage's tile."""
        panel, within = self.panel_column(tiles, *column)
        indices = [self.index(i) for i in (stage, panel, row, within)]
        op = kernel.LdmatrixOp(shared, indices, matrices, transposed)
        return self.add_op(op).result

    def vector_of(self, values: Sequence[SSAValue]) -> SSAValue:
        """A vector of `values`, in order."""
        result = self.add_op(
            vector_dialect.BroadcastOp(values[0], VectorType(values[0].type, [len(values)]))
        ).vector
        for i, value in enumerate(values[1:], 1):
            result = self.add_op(vector_dialect.InsertOp(value, result, [i])).result
        return result

    def lanes(self, vector: SSAValue, first: int, count: int) -> SSAValue:
        """`count` lanes of `vector` from `first` on, as a vector of their own."""
        element = vector.type.get_element_type()
        return self.vector_of(
            [
                self.add_op(vector_dialect.ExtractOp(vector, [first + i], element)).result
                for i in range(count)
            ]
        )

    def place_constants(self) -> None:
        """Puts the constants used anywhere at the start of the kernel."""
        for op in reversed(self.constant_ops):
            self.body.insert_op_before(op, self.body.first_op)


class GemmEmitter(KernelEmitter):
    """What every atom's kernel for a tile.gemm emits alike: the base's, and the epilogue of
    one output element."""

    def __init__(
        self,
        gemm: tile.GemmOp,
        body: Block,
        values: dict[SSAValue, SSAValue],
        target: GpuTarget,
    ):
        super().__init__(body, values, target)
        self.gemm = gemm
        self.dynamic = gemm.dynamic_dim is not None
        size = kernel_size_argument(gemm)
        sizes: list[Index] = [
            values[size] if s == DYNAMIC_INDEX and size is not None else s for s in gemm.sizes()
        ]
        *self.batch_sizes, self.size_m, self.size_n, self.size_k = sizes
        self.batch_rank = gemm.batch_rank
        self.block_m, self.block_n, self.block_k = gemm.tile_shape
        self.warps_m, self.warps_n = gemm.warp_grid
        self.atom_m, self.atom_n, self.atom_k = gemm.mma_atom.shape
        self.stages = gemm.pipeline_depth
        self.split = gemm.split_count
        self.slices, self.split_slices = gemm.split_slices()
        self.element = gemm.lhs.type.get_element_type()
        self.element_bytes = kernel.element_bytes(self.element)
        dims = self.batch_rank
        self.m_dim, self.n_dim, self.k_dim = dims, dims + 1, dims + 2
        self.siblings = gemm.siblings
        self.output_n = gemm.sibling_tile_n
        """The output columns a tile covers (its N, shared by the siblings)."""
        self.cluster_m = self.block_m * gemm.cluster_blocks
        """The output rows a cluster's tiles cover (a tile's without a cluster)."""

    def size(self, dim: int) -> Index:
        """The extent of an iteration dimension: the kernel's size argument for the dynamic
        one."""
        sizes = (*self.batch_sizes, self.size_m, self.size_n, self.size_k)
        return sizes[dim]

    def covered(self, dim: int) -> int | None:
        """How far the blocks' tiles reach along a matrix dimension: whole tiles, and along K
        the `split` runs of K slices (which may reach past the last slice); None along the
        dynamic size, whose tiles may end anywhere."""
        extent = {self.m_dim: self.cluster_m, self.n_dim: self.output_n, self.k_dim: self.block_k}
        if dim == self.k_dim:
            return self.split * self.split_slices * self.block_k
        size = self.size(dim)
        return -(-size // extent[dim]) * extent[dim] if isinstance(size, int) else None

    def batch_count(self) -> Index:
        """How many points the batch has."""
        return functools.reduce(self.mul, self.batch_sizes, 1)

    def batch_point(self, linear: Index) -> list[Index]:
        """The batch point that is the `linear`-th in row-major order."""
        indices: list[Index] = []
        for position, size in enumerate(self.batch_sizes):
            if size == 1:
                indices.append(0)
                continue
            stride = functools.reduce(self.mul, self.batch_sizes[position + 1 :], 1)
            index = self.div(linear, stride)
            indices.append(self.rem(index, size) if position else index)
        return indices

    def epilogue_at(
        self, batch: Sequence[Index], row: Index, column: Index, value: Sequence[SSAValue]
    ):
        """The tile.gemm's epilogue for the accumulator elements `value` (one per sibling) of
        output (`row`, `column`) at batch point `batch`, under `row < M and column < N`
        where the tiles overrun."""
        body = self.gemm.epilogue.block

        def run_epilogue() -> None:
            mapping = dict(self.values)
            for arg, index in zip(body.args, [*batch, row, column]):
                mapping[arg] = self.index(index)
            mapping.update(zip(self.gemm.accumulators, value))
            for op in body.ops:
                if not isinstance(op, tile.YieldOp):
                    clone = self.add_op(op.clone(value_mapper=mapping))
                    mapping.update(zip(op.results, clone.results))

        self.if_then(self.inside_output(row, column), run_epilogue)

    def inside_output(self, row: Index, column: Index) -> SSAValue | None:
        """Whether (`row`, `column`) is in the output, where the tiles overrun it (None where
        every tile is whole)."""
        inside = []
        if self.overruns(self.size_m, self.cluster_m):
            inside.append(self.less(row, self.size_m))
        if self.size_n % self.output_n:
            inside.append(self.less(column, self.size_n))
        return self.both(inside)

    @functools.cached_property
    def pairable_store(self) -> memref.StoreOp | None:
        """The epilogue's store, if two adjacent columns' results can be stored as one vector
        of 2: the epilogue ends in its one store, along the last dimension of a buffer of rows
        of even length (so an even column is an aligned pair), at index `n` and other indices
        that do not depend on it, or at `n % D` and `n / D` for an even D (the heads of a
        [B, H, S, D] output), and N is even (so the pair is in or out of the output as one)."""
        body = self.gemm.epilogue.block
        n = body.args[self.batch_rank + 1]
        ops = [op for op in body.ops if not isinstance(op, tile.YieldOp)]
        stores = [op for op in ops if isinstance(op, memref.StoreOp)]
        if len(stores) != 1 or stores[0] is not ops[-1] or self.size_n % 2:
            return None
        store = stores[0]
        *others, last = store.indices
        if store.memref.type.get_shape()[-1] % 2:
            return None
        divisor = None if last is n else _even_divisor_of(last, n, arith.RemUIOp)
        if last is not n and divisor is None:
            return None
        for index in others:
            if divisor is not None and _even_divisor_of(index, n, arith.DivUIOp) == divisor:
                continue
            if _computed_from(index, n, body):
                return None
        return store

    def epilogue_pair(
        self,
        batch: Sequence[Index],
        row: Index,
        column: Index,
        values: Sequence[Sequence[SSAValue]],
        staged: tuple[SSAValue, Sequence[Index]] | None = None,
    ) -> None:
        """The epilogue of the accumulator elements (each one per sibling) of columns `column`
        (even) and `column + 1` of a row: one 2-element vector store where the epilogue
        allows (`pairable_store`), else each element's own; with `staged`, the pair goes to
        that shared buffer and element instead of the output."""
        store = self.pairable_store
        assert staged is None or store is not None
        if store is None:
            for offset, value in enumerate(values):
                self.epilogue_at(batch, row, self.add(column, offset), value)
            return
        body = self.gemm.epilogue.block

        def run_epilogues() -> None:
            stored = []
            for offset, value in enumerate(values):
                mapping = dict(self.values)
                point = [*batch, row, self.add(column, offset)]
                for arg, index in zip(body.args, point):
                    mapping[arg] = self.index(index)
                mapping.update(zip(self.gemm.accumulators, value))
                for op in body.ops:
                    if op is store:
                        stored.append(mapping[store.value])
                    elif not isinstance(op, tile.YieldOp):
                        clone = self.add_op(op.clone(value_mapper=mapping))
                        mapping.update(zip(op.results, clone.results))
                if offset == 0:
                    indices = [mapping[index] for index in store.indices]
            pair_type = VectorType(store.value.type, [2])
            pair = self.add_op(vector_dialect.BroadcastOp(stored[0], pair_type)).vector
            pair = self.add_op(vector_dialect.InsertOp(stored[1], pair, [1])).result
            if staged is None:
                self.add_op(kernel.VectorStoreOp(pair, mapping[store.memref], indices))
            else:
                buffer, at = staged
                self.add_op(kernel.VectorStoreOp(pair, buffer, [self.index(i) for i in at]))

        self.if_then(self.inside_output(row, column), run_epilogues)

    def epilogue_run(
        self,
        batch: Sequence[Index],
        row: Index,
        column: Index,
        values: Sequence[Sequence[SSAValue]],
    ) -> None:
        """The epilogue of the accumulator elements `values` (each one per sibling) of
        consecutive columns from `column` (even, for two) of a row."""
        if len(values) == 1:
            self.epilogue_at(batch, row, column, values[0])
        else:
            self.epilogue_pair(batch, row, column, values)


def _even_divisor_of(value: SSAValue, n: SSAValue, op: type[Operation]) -> int | None:
    """D, where `value` is `op(n, D)` (a remainder or quotient) for a constant even D."""
    owner = value.owner
    if not isinstance(owner, op) or owner.operands[0] is not n:
        return None
    divisor = constant_index(owner.operands[1])
    return divisor if divisor is not None and divisor > 0 and divisor % 2 == 0 else None


def _computed_from(value: SSAValue, argument: SSAValue, body: Block) -> bool:
    """Whether `value` is `argument` or computed from it by ops of `body`."""
    if value is argument:
        return True
    owner = value.owner
    return (
        isinstance(owner, Operation)
        and owner.parent_block() is body
        and any(_computed_from(operand, argument, body) for operand in owner.operands)
    )


class _StagedGemmBuilder(GemmEmitter):
    """What the kernels of the mma_sync and fma atoms share: K slices of both operands copied
    into shared memory by cp.async, `pipeline` deep, by a block of `warps` warps, each warp
    computing its warp tile of the block tile (see the module docstring); a subclass says
    what a thread accumulates (`initial_accumulators`), how it multiplies one slice
    (`multiply_slice`) and where its accumulators go (`epilogue`)."""

    def __init__(
        self,
        gemm: tile.GemmOp,
        body: Block,
        values: dict[SSAValue, SSAValue],
        target: GpuTarget,
    ):
        super().__init__(gemm, body, values, target)
        self.warp_m, self.warp_n = self.block_m // self.warps_m, self.block_n // self.warps_n
        self.warp_share = self.warp_n // self.siblings
        """A warp's output columns: its share of each sibling's."""
        self.threads = self.warps_m * self.warps_n * target.warp_size

    # -- the operands' tiles --

    def extent(self, dim: int) -> int:
        """The tile's extent along a matrix dimension."""
        return {self.m_dim: self.block_m, self.n_dim: self.block_n, self.k_dim: self.block_k}[dim]

    def operand_tiles(self, operand: SSAValue, dims: tuple[int, ...]) -> OperandTiles:
        column_dim = dims[-1]
        row_dim = next(d for d in dims if d >= self.batch_rank and d != column_dim)
        columns = self.extent(column_dim)
        width = min(columns, SWIZZLE_ROW_BYTES // self.element_bytes)
        row_length = operand.type.get_shape()[-1]
        # A sibling's piece of a tile along N is a run of its own copies.
        piece = self.warp_share if column_dim == self.n_dim else columns
        copy = kernel.MAX_VECTOR_BYTES // self.element_bytes
        while row_length % copy or columns % copy or piece % copy:
            copy //= 2
        return OperandTiles(
            operand, dims, row_dim, column_dim, self.extent(row_dim), columns, width, copy
        )

    def shared_tiles(self, tiles: OperandTiles, name: str, offset: int | None) -> SSAValue:
        """The operand's K slices in shared memory: static, or (beyond the static limit) a
        view of the dynamic shared memory at byte `offset`."""
        shape = [self.stages, tiles.panels, tiles.rows, tiles.width]
        span = tiles.width * self.element_bytes
        # An fma atom's narrow rows (K slices of a few elements) are not swizzled.
        layout = kernel.SwizzleAttr(span) if span in kernel.SWIZZLE_SPANS else None
        memref_type = kernel.shared_memref(shape, self.element)
        if offset is None:
            op = kernel.SharedAllocOp(memref_type, layout)
        else:
            op = kernel.DynamicSharedOp(offset, memref_type, layout)
        op.result.name_hint = name
        return self.add_op(op).results[0]

    def pieces(self, tiles: OperandTiles) -> list[TilePiece]:
        """What fills an operand's tile: the lhs, or each warp's share of each sibling rhs
        (the whole tile for one rhs)."""
        # By role, not by value: one buffer may be both operands (`bmm(a, a)`).
        if tiles is self.a_tiles:
            return [TilePiece(self.gemm.lhs)]
        if self.siblings == 1:
            return [TilePiece(self.gemm.rhs[0])]
        share = self.warp_share
        return [
            TilePiece(rhs, warp * self.warp_n + sibling * share, warp * share, share)
            for warp in range(self.warps_n)
            for sibling, rhs in enumerate(self.gemm.rhs)
        ]

    def piece_shape(self, tiles: OperandTiles, piece: TilePiece) -> tuple[int, int]:
        """The rows and columns of the operand's tile that `piece` fills."""
        if piece.extent is None:
            return tiles.rows, tiles.columns
        if tiles.row_dim == self.n_dim:
            return piece.extent, tiles.columns
        return tiles.rows, piece.extent

    def copy_slice(
        self,
        tiles: OperandTiles,
        shared: SSAValue,
        stage: Index,
        starts: dict[int, Index],
        batch: Sequence[Index],
    ) -> None:
        """The block's copies of one K slice of an operand into shared stage `stage`; the
        slice starts at `starts[dim]` along each matrix dimension."""
        for piece in self.pieces(tiles):
            self.copy_piece(tiles, piece, shared, stage, starts, batch)

    def copy_piece(
        self,
        tiles: OperandTiles,
        piece: TilePiece,
        shared: SSAValue,
        stage: Index,
        starts: dict[int, Index],
        batch: Sequence[Index],
    ) -> None:
        """The block's copies of one K slice of `piece` of an operand's tile."""
        copy = tiles.copy_elements
        rows, columns = self.piece_shape(tiles, piece)
        per_row = columns // copy
        chunks = rows * per_row
        for step in range(-(-chunks // self.threads)):
            chunk = self.add(self.thread_id, step * self.threads)
            last_partial = (step + 1) * self.threads > chunks
            guard = self.less(chunk, chunks) if last_partial else None

            def copy_chunk(chunk: Index = chunk, step: int = step) -> None:
                if self.threads % per_row == 0:
                    # The block copies whole rows a step: each thread the same column.
                    first_row, column = self.copy_origins[tiles.dims, piece.operand]
                    row = self.add(first_row, step * self.threads // per_row)
                else:
                    row = self.div(chunk, per_row)
                    column = self.mul(self.rem(chunk, per_row), copy)
                self.copy_chunk(tiles, piece, shared, stage, starts, batch, row, column)

            self.if_then(guard, copy_chunk)

    def copy_chunk(
        self,
        tiles: OperandTiles,
        piece: TilePiece,
        shared: SSAValue,
        stage: Index,
        starts: dict[int, Index],
        batch: Sequence[Index],
        row: Index,
        column: Index,
    ) -> None:
        """One copy: the `copy_elements` elements at (`row`, `column`) of the slice's
        `piece`, zeros past the ends of the operand."""
        copy = tiles.copy_elements
        global_row = self.add(starts[tiles.row_dim], row)
        global_column = self.add(starts[tiles.column_dim], column)
        if tiles.row_dim == self.n_dim:
            global_row = self.add(global_row, piece.offset)
            row = self.add(row, piece.start)
        elif tiles.column_dim == self.n_dim:
            global_column = self.add(global_column, piece.offset)
            column = self.add(column, piece.start)
        inside = []
        for dim, position in ((tiles.row_dim, global_row), (tiles.column_dim, global_column)):
            if self.covered(dim) != self.size(dim):
                inside.append(self.less(position, self.size(dim)))
        valid = self.both(inside)
        if valid is not None:
            # Past the end: read nothing, from element 0, and fill zeros.
            global_row = self.select(valid, global_row, 0)
            global_column = self.select(valid, global_column, 0)
        position = {tiles.row_dim: global_row, tiles.column_dim: global_column}
        source = [self.index(batch[d] if d < self.batch_rank else position[d]) for d in tiles.dims]
        panel, within = self.panel_column(tiles, column)
        destination = [self.index(i) for i in (stage, panel, row, within)]
        operand = self.values[piece.operand]
        size = copy * self.element_bytes
        if size in kernel.CP_ASYNC_BYTES:
            source_bytes = None
            if valid is not None:
                source_bytes = self.select(valid, self.constant(size, i32), self.constant(0, i32))
            self.add_op(kernel.CpAsyncOp(shared, destination, operand, source, size, source_bytes))
            return
        # A row of odd length leaves copies of one 2-byte element, too small for cp.async:
        # through registers.
        value = self.add_op(memref.LoadOp.get(operand, source)).results[0]
        if valid is not None:
            zero = self.add_op(arith.ConstantOp(FloatAttr(0.0, self.element))).results[0]
            value = self.select(valid, value, zero)
        self.add_op(memref.StoreOp.get(value, shared, destination))

    def shared_element(
        self,
        tiles: OperandTiles,
        shared: SSAValue,
        stage: Index,
        outer: tuple[Index, Index],
        k: tuple[Index, Index],
    ) -> SSAValue:
        """The element of the stage's tile at M (or N) `outer[0] + outer[1]` and K `k[0] +
        k[1]` (each a base and a lane's offset, as `panel_column` takes them)."""
        if tiles.column_dim == self.k_dim:
            row, column = self.add(*outer), k
        else:
            row, column = self.add(*k), outer
        panel, within = self.panel_column(tiles, *column)
        indices = [self.index(i) for i in (stage, panel, row, within)]
        return self.add_op(memref.LoadOp.get(shared, indices)).res

    # -- the kernel --

    def emit_thread_indices(self) -> None:
        """The thread's index, its lane and its warp's tile; a subclass adds its own."""
        warp_size = self.target.warp_size
        self.thread_id = self.add_op(kernel.ThreadIdOp("x")).results[0]
        self.thread_id.name_hint = "tid"
        self.lane = self.rem(self.thread_id, warp_size)
        warp = self.div(self.thread_id, warp_size)
        self.warp_row = self.mul(self.div(warp, self.warps_n), self.warp_m)
        warp_n = self.rem(warp, self.warps_n)
        self.warp_column = self.mul(warp_n, self.warp_n)
        self.warp_output_column = (
            self.warp_column if self.siblings == 1 else self.mul(warp_n, self.warp_share)
        )
        """The warp's first output column of the block's tile: its siblings' columns of the
        tile's N lie side by side, each `warp_share` wide."""

    def build(self) -> None:
        gemm = self.gemm
        self.a_tiles = self.operand_tiles(gemm.lhs, gemm.lhs_dims)
        self.b_tiles = self.operand_tiles(gemm.rhs[0], gemm.rhs_dims)
        self.emit_thread_indices()
        self.copy_origins = {}
        """(Tile's dims, operand) -> the row and column of its tile that each thread copies
        first, where the block copies whole rows at a time (by the dims too: one buffer may
        be both operands, as in `bmm(a, a)`, in tiles of other shapes)."""
        for tiles in (self.a_tiles, self.b_tiles):
            for piece in self.pieces(tiles):
                per_row = self.piece_shape(tiles, piece)[1] // tiles.copy_elements
                key = (tiles.dims, piece.operand)
                if self.threads % per_row == 0 and key not in self.copy_origins:
                    row = self.div(self.thread_id, per_row)
                    column = self.mul(self.rem(self.thread_id, per_row), tiles.copy_elements)
                    self.copy_origins[key] = (row, column)
        a_bytes = self.stages * self.a_tiles.rows * self.a_tiles.columns * self.element_bytes
        b_bytes = self.stages * self.b_tiles.rows * self.b_tiles.columns * self.element_bytes
        partial_type = kernel.shared_memref([self.block_m, self.block_n], f32)
        partial_bytes = kernel.buffer_bytes(partial_type) if self.split > 1 else 0
        dynamic = a_bytes + b_bytes + partial_bytes > self.target.static_shared_bytes_per_block
        # Both tiles' sizes are whole swizzle patterns (at most 1 KB): B's view follows A's.
        self.shared_a = self.shared_tiles(self.a_tiles, "a_tiles", 0 if dynamic else None)
        self.shared_b = self.shared_tiles(self.b_tiles, "b_tiles", a_bytes if dynamic else None)
        block_x = self.add_op(kernel.BlockIdOp("x")).results[0]
        block_y = self.add_op(kernel.BlockIdOp("y")).results[0]
        self.first_slice: Index = 0
        """The first K slice that the block multiplies."""
        if self.dynamic:
            self.dynamic_tiles(block_x, block_y)
            self.place_constants()
            return
        self.tile_row = self.mul(block_y, self.block_m)
        if self.split > 1:
            # The split's blocks of a tile are consecutive along x: a cluster.
            offset = -(-(a_bytes + b_bytes) // kernel.SHARED_ALIGNMENT)
            offset *= kernel.SHARED_ALIGNMENT
            op = (
                kernel.DynamicSharedOp(offset, partial_type)
                if dynamic
                else kernel.SharedAllocOp(partial_type)
            )
            self.partials = self.named(op, "partials")
            self.split_rank = self.rem(block_x, self.split)
            self.first_slice = self.mul(self.split_rank, self.split_slices)
            block_x = self.div(block_x, self.split)
        self.tile_column = self.mul(block_x, self.output_n)
        batches = prod(self.batch_sizes)
        if batches == 1:
            self.tile_product([0] * self.batch_rank)
        else:
            block_z = self.add_op(kernel.BlockIdOp("z")).results[0]
            grid_z = self.add_op(kernel.GridDimOp("z")).results[0]

            def batch_body(block: Block) -> None:
                # The last slice of the previous batch may still be read.
                self.add_op(kernel.BarrierOp())
                self.tile_product(self.batch_point(block.args[0]))

            body = self.nested(batch_body, [IndexType()])
            self.add_op(scf.ForOp(block_z, self.constant(batches), grid_z, [], body))
        self.place_constants()

    def dynamic_tiles(self, block_x: SSAValue, block_y: SSAValue) -> None:
        """The output tiles of a gemm over the dynamic size: block y is the N tile, and the
        blocks along x stride through the batch's M tiles (as many as the size needs, from
        the kernel's size argument)."""
        self.tile_column = self.mul(block_y, self.output_n)
        tiles_m = self.ceil_div(self.size_m, self.block_m)
        tiles = self.mul(self.batch_count(), tiles_m)
        grid_x = self.add_op(kernel.GridDimOp("x")).results[0]

        def tile_body(block: Block) -> None:
            # The last slice of the previous tile may still be read.
            self.add_op(kernel.BarrierOp())
            linear = block.args[0]
            self.tile_row = self.mul(self.rem(linear, tiles_m), self.block_m)
            self.tile_product(self.batch_point(self.div(linear, tiles_m)))

        body = self.nested(tile_body, [IndexType()])
        self.add_op(scf.ForOp(block_x, self.index(tiles), grid_x, [], body))

    def tile_product(self, batch: Sequence[Index]) -> None:
        """The block's output tile at batch point `batch`: the pipelined K loop over its K
        slices, then the epilogue of each accumulator element (of the tile's sum over the
        split's blocks, `split_epilogue`)."""
        slices = self.split_slices
        stages = self.stages

        def load_slice(k_slice: Index) -> None:
            stage = self.rem(k_slice, stages)
            k_start = self.mul(self.add(self.first_slice, k_slice), self.block_k)
            starts = {self.m_dim: self.tile_row, self.n_dim: self.tile_column, self.k_dim: k_start}
            self.copy_slice(self.a_tiles, self.shared_a, stage, starts, batch)
            self.copy_slice(self.b_tiles, self.shared_b, stage, starts, batch)

        if stages > 1:
            for k_slice in range(stages - 1):
                if k_slice < slices:
                    load_slice(k_slice)
                self.add_op(kernel.CpAsyncCommitOp())
        zero = self.add_op(arith.ConstantOp(FloatAttr(0.0, f32))).results[0]
        initial = self.initial_accumulators(zero)

        def k_loop(block: Block) -> list[SSAValue]:
            k_slice, *accumulators = block.args
            if stages > 1:
                self.add_op(kernel.CpAsyncWaitOp(stages - 2))
                self.add_op(kernel.BarrierOp())
                ahead = self.add(k_slice, stages - 1)
                self.if_then(self.less(ahead, slices), lambda: load_slice(ahead))
                self.add_op(kernel.CpAsyncCommitOp())
            else:
                self.add_op(kernel.BarrierOp())
                load_slice(k_slice)
                self.add_op(kernel.CpAsyncCommitOp())
                self.add_op(kernel.CpAsyncWaitOp(0))
                self.add_op(kernel.BarrierOp())
            return self.multiply_slice(self.rem(k_slice, stages), accumulators)

        body = self.nested(k_loop, [IndexType()] + [value.type for value in initial])
        loop = self.add_op(
            scf.ForOp(self.constant(0), self.constant(slices), self.constant(1), initial, body)
        )
        if self.split == 1:
            siblings = self.by_sibling(list(loop.results))
            runs = self.accumulator_runs(siblings, self.tile_row, self.tile_column)
            for row, column, values in runs:
                self.epilogue_run(batch, row, column, values)
        else:
            self.split_epilogue(batch, list(loop.results))

    def split_epilogue(self, batch: Sequence[Index], accumulators: list[SSAValue]) -> None:
        """The epilogue of the sum of the split's partial tiles: each block stores its partial
        tile to its shared memory and passes a cluster barrier; then block r of the split
        sums the r-th 1/split of the tile's pairs of columns (single columns in a tile of odd
        N) over the partials of every block of the cluster, in rank order (each thread the
        pairs t, t + threads, ... of its block's share), and runs their epilogues; a second
        cluster barrier keeps every block's shared memory until the others have read it (and
        until the next batch's partials overwrite it)."""
        width = 2 if self.block_n % 2 == 0 else 1
        for row, column, values in self.accumulator_runs(self.by_sibling(accumulators), 0, 0):
            for offset in range(0, len(values), width):
                indices = [self.index(row), self.index(self.add(column, offset))]
                run = self.vector_of([value for (value,) in values[offset : offset + width]])
                self.add_op(kernel.VectorStoreOp(run, self.partials, indices))
        self.add_op(kernel.ClusterBarrierOp())
        mapped = [
            self.add_op(kernel.MapSharedRankOp(self.partials, self.constant(rank))).result
            for rank in range(self.split)
        ]
        runs_per_row = self.block_n // width
        runs = self.block_m * runs_per_row
        per_block = -(-runs // self.split)
        first = self.mul(self.split_rank, per_block)
        steps = -(-per_block // self.threads)

        def reduce_step(step: Index) -> None:
            local = self.add(self.thread_id, self.mul(step, self.threads))
            inside = []
            if steps * self.threads > per_block:
                inside.append(self.less(local, per_block))
            run = self.add(first, local)
            if self.split * per_block > runs:
                inside.append(self.less(run, runs))

            def reduce_run() -> None:
                row = self.div(run, runs_per_row)
                column = self.mul(self.rem(run, runs_per_row), width)
                indices = [self.index(row), self.index(column)]
                sums: list[SSAValue] = []
                for partials in mapped:
                    loaded = self.add_op(kernel.VectorLoadOp(partials, indices, width)).result
                    lanes = [
                        self.add_op(vector_dialect.ExtractOp(loaded, [i], f32)).result
                        for i in range(width)
                    ]
                    sums = [
                        self.add_op(arith.AddfOp(total, lane)).result
                        for total, lane in zip(sums, lanes)
                    ] or lanes
                row = self.add(self.tile_row, row)
                column = self.add(self.tile_column, column)
                self.epilogue_run(batch, row, column, [(value,) for value in sums])

            self.if_then(self.both(inside), reduce_run)

        if steps == 1:
            reduce_step(0)
        else:
            # A loop, not `steps` copies of the epilogue.
            body = self.nested(lambda block: reduce_step(block.args[0]), [IndexType()])
            self.add_op(
                scf.ForOp(self.constant(0), self.constant(steps), self.constant(1), [], body)
            )
        self.add_op(kernel.ClusterBarrierOp())

    def initial_accumulators(self, zero: SSAValue) -> list[SSAValue]:
        """The thread's accumulators before the K loop, from the f32 `zero`."""
        raise NotImplementedError

    def multiply_slice(self, stage: Index, accumulators: list[SSAValue]) -> list[SSAValue]:
        """The thread's accumulators after the K slice in shared stage `stage`."""
        raise NotImplementedError

    def by_sibling(self, accumulators: list[SSAValue]) -> list[list[SSAValue]]:
        """Each sibling's accumulators of the thread's: the thread's grid of them has
        `accumulator_columns` along N, in runs of each sibling's share of its warp's columns
        (`tile.GemmOp`), one run per sibling."""
        columns = self.accumulator_columns
        per = columns // self.siblings
        rows = len(accumulators) // columns
        return [
            [accumulators[r * columns + s * per + c] for r in range(rows) for c in range(per)]
            for s in range(self.siblings)
        ]

    @property
    def accumulator_columns(self) -> int:
        """How many accumulators a thread has along N."""
        raise NotImplementedError

    def accumulator_runs(
        self, siblings: list[list[SSAValue]], row: Index, column: Index
    ) -> Iterator[tuple[Index, Index, list[tuple[SSAValue, ...]]]]:
        """Where the elements of the thread's accumulators (`by_sibling`'s) after the K loop
        lie, the block's output tile at (`row`, `column`), a run of consecutive columns of a
        row at a time: its row, its first column and each column's values, one per sibling
        (made as they are asked for, before each run's epilogue)."""
        raise NotImplementedError


class _MmaSyncGemmBuilder(_StagedGemmBuilder):
    """The kernel of a tile.gemm on the mma_sync m16n8k16 atom (see the module docstring):
    fragments loaded with ldmatrix."""

    def emit_thread_indices(self) -> None:
        super().emit_thread_indices()
        self.group = self.div(self.lane, 4)
        self.in_group = self.rem(self.lane, 4)
        # The accumulator's rows g (+ 8) and columns 2t (+ 1), of the output.
        self.fragment_row = self.add(self.warp_row, self.group)
        self.fragment_column = self.add(self.warp_output_column, self.mul(self.in_group, 2))
        self.emit_fragment_offsets()

    # -- fragments --

    def a_fragment(self, tiles: OperandTiles, shared: SSAValue, stage: Index, k0: int, atom: int):
        """The warp's A fragment of atom row `atom` at k-step k0: ldmatrix x4 of the 16x16
        block's quarters (rows 0-7, 8-15 of k 0-7, then of k 8-15)."""
        m0 = self.add(self.warp_row, atom * self.atom_m)
        if tiles.column_dim == self.k_dim:
            # Lane l gives row l % 16 of the M x K tile, at column 8 (l / 16).
            row, column = self.add(m0, self.lane_row), (k0, self.lane_column)
            transposed = False
        else:
            # A [K, M] tile holds A's blocks transposed: lane l gives K row 8 (l / 16) + l % 8
            # at M column 8 ((l / 8) % 2).
            row, column = self.add(k0, self.lane_block_row), (m0, self.lane_half)
            transposed = True
        return self.ldmatrix(tiles, shared, stage, row, column, 4, transposed)

    def b_fragments(
        self, tiles: OperandTiles, shared: SSAValue, stage: Index, k0: int, atom: int, count: int
    ) -> list[SSAValue]:
        """The warp's B fragments of `count` (1 or 2) atom columns from `atom` on, at k-step
        k0: ldmatrix x2 of an atom's two 8x8 halves along K, or x4 of two atoms'."""
        n0 = self.add(self.warp_column, atom * self.atom_n)
        if tiles.column_dim == self.k_dim:
            # [N, K]: the blocks as they are; lane l gives N row (8 (l / 16) if x4) + l % 8 at
            # K column 8 ((l / 8) % 2).
            row_offset = self.lane_block_row if count == 2 else self.lane_eighth
            row, column = self.add(n0, row_offset), (k0, self.lane_half)
            transposed = False
        else:
            # [K, N]: transposed; lane l gives K row l % 16 at N column (8 (l / 16) if x4).
            row = self.add(k0, self.lane_row)
            column = (n0, self.lane_column if count == 2 else 0)
            transposed = True
        loaded = self.ldmatrix(tiles, shared, stage, row, column, 2 * count, transposed)
        if count == 1:
            return [loaded]
        return [self.lanes(loaded, 4 * half, 4) for half in range(2)]

    def fragments(self, stage: Index, k0: int) -> tuple[list[SSAValue], list[SSAValue]]:
        """The warp's A fragments (by atom row) and B fragments (by atom column) at k-step
        k0: ldmatrix x4 for A, and for B x4 for two atoms at a time (x2 for an odd last)."""
        atoms_m, atoms_n = self.warp_m // self.atom_m, self.warp_n // self.atom_n
        a = [
            self.a_fragment(self.a_tiles, self.shared_a, stage, k0, atom) for atom in range(atoms_m)
        ]
        b = []
        for atom in range(0, atoms_n, 2):
            pair = min(2, atoms_n - atom)
            b += self.b_fragments(self.b_tiles, self.shared_b, stage, k0, atom, pair)
        return a, b

    def mma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        return self.add_op(kernel.MmaSyncOp(kernel.MmaShape.M16N8K16, a, b, c)).result

    def initial_accumulators(self, zero: SSAValue) -> list[SSAValue]:
        zeros = self.add_op(vector_dialect.BroadcastOp(zero, VectorType(f32, [4]))).vector
        atoms = (self.warp_m // self.atom_m) * (self.warp_n // self.atom_n)
        return [zeros] * atoms

    def multiply_slice(self, stage: Index, accumulators: list[SSAValue]) -> list[SSAValue]:
        """The warp's atoms over one K slice in shared stage `stage`, k-step by k-step, each
        k-step's fragments loaded before the previous k-step's products."""
        atoms_m, atoms_n = self.warp_m // self.atom_m, self.warp_n // self.atom_n
        accumulators = list(accumulators)
        steps = list(range(0, self.block_k, self.atom_k))
        loaded = self.fragments(stage, steps[0])
        for index in range(len(steps)):
            a, b = loaded
            if index + 1 < len(steps):
                loaded = self.fragments(stage, steps[index + 1])
            for i in range(atoms_m):
                for j in range(atoms_n):
                    position = i * atoms_n + j
                    accumulators[position] = self.mma(a[i], b[j], accumulators[position])
        return accumulators

    @property
    def accumulator_columns(self) -> int:
        return self.warp_n // self.atom_n

    def accumulator_runs(
        self, siblings: list[list[SSAValue]], row: Index, column: Index
    ) -> Iterator[tuple[Index, Index, list[tuple[SSAValue, ...]]]]:
        """Element i of each atom's accumulator lies at row g + 8 (i / 2) and column 2t + i % 2
        of the atom: two columns at a time."""
        atoms_n = self.accumulator_columns // self.siblings
        row_base = self.add(row, self.fragment_row)
        column_base = self.add(column, self.fragment_column)
        for position, accumulators in enumerate(zip(*siblings)):
            atom_row, atom_column = divmod(position, atoms_n)
            for i in range(0, 4, 2):
                row = self.add(row_base, atom_row * self.atom_m + 8 * (i // 2))
                column = self.add(column_base, atom_column * self.atom_n)
                values = [
                    tuple(
                        self.add_op(vector_dialect.ExtractOp(accumulator, [i + j], f32)).result
                        for accumulator in accumulators
                    )
                    for j in range(2)
                ]
                yield row, column, values


class _Tf32MmaSyncGemmBuilder(_MmaSyncGemmBuilder):
    """The kernel of a tile.gemm on the mma_sync m16n8k8 atom of f32 operands, which it
    rounds to tf32: like m16n8k16's, with fragments of A's 4 elements at (g + 8 (i % 2), t +
    4 (i / 2)) of the atom and B's 2 at K t + 4i, N g (g = lane / 4, t = lane % 4). ldmatrix
    moves 32-bit words, so an operand whose tile rows run along K loads them as m16n8k16's
    do, 8 x 4 f32 a matrix (`kernel.LdmatrixOp`): x4 of A's (rows 0-7, 8-15 of k 0-3, then of
    k 4-7), x4 of two B atoms' (k 0-3, 4-7 of each), x2 of an odd last. Its transpose would
    split the words, so an operand whose tile rows run along M or N ([K, N] weights) loads
    each lane's elements one by one."""

    def emit_fragment_offsets(self) -> None:
        """Besides the ldmatrix offsets, each lane's rows g and g + 8 and columns t and t + 4
        of the fragments, and its K column 4 (l / 16) and 4 ((l / 8) % 2) of an ldmatrix."""
        super().emit_fragment_offsets()
        self.fragment_rows = (self.group, self.add(self.group, 8))
        self.fragment_ks = (self.in_group, self.add(self.in_group, 4))
        self.lane_quad = self.mul(self.div(self.lane, 16), 4)
        self.lane_half_quad = self.mul(self.rem(self.div(self.lane, 8), 2), 4)

    def fragments(self, stage: Index, k0: int) -> tuple[list[SSAValue], list[SSAValue]]:
        atoms_m, atoms_n = self.warp_m // self.atom_m, self.warp_n // self.atom_n
        rows, ks = self.fragment_rows, self.fragment_ks
        a = []
        for atom in range(atoms_m):
            m0 = self.add(self.warp_row, atom * self.atom_m)
            if self.a_tiles.column_dim == self.k_dim:
                row, column = self.add(m0, self.lane_row), (k0, self.lane_quad)
                a.append(self.ldmatrix(self.a_tiles, self.shared_a, stage, row, column, 4, False))
            else:
                places = [((m0, rows[i % 2]), ks[i // 2]) for i in range(4)]
                a.append(self.fragment(self.a_tiles, self.shared_a, stage, k0, places))
        b = []
        if self.b_tiles.column_dim == self.k_dim:
            for atom in range(0, atoms_n, 2):
                pair = min(2, atoms_n - atom)
                n0 = self.add(self.warp_column, atom * self.atom_n)
                row_offset = self.lane_block_row if pair == 2 else self.lane_eighth
                row, column = self.add(n0, row_offset), (k0, self.lane_half_quad)
                loaded = self.ldmatrix(
                    self.b_tiles, self.shared_b, stage, row, column, 2 * pair, False
                )
                b += [loaded] if pair == 1 else [self.lanes(loaded, 2 * i, 2) for i in range(2)]
            return a, b
        for atom in range(atoms_n):
            n0 = self.add(self.warp_column, atom * self.atom_n)
            places = [((n0, self.group), ks[i]) for i in range(2)]
            b.append(self.fragment(self.b_tiles, self.shared_b, stage, k0, places))
        return a, b

    def fragment(
        self,
        tiles: OperandTiles,
        shared: SSAValue,
        stage: Index,
        k0: int,
        places: Sequence[tuple[tuple[Index, Index], Index]],
    ) -> SSAValue:
        """The fragment of the elements at `places`: each a row (a base and the lane's offset)
        of the operand's tile and a K offset from `k0`."""
        return self.vector_of(
            [self.shared_element(tiles, shared, stage, row, (k0, k)) for row, k in places]
        )

    def mma(self, a: SSAValue, b: SSAValue, c: SSAValue) -> SSAValue:
        return self.add_op(kernel.MmaSyncOp(kernel.MmaShape.M16N8K8, a, b, c, tf32=True)).result


class _FmaGemmBuilder(_StagedGemmBuilder):
    """The kernel of a tile.gemm on the fma atom: the lanes of a warp lie over its warp tile
    as `tile.fma_lane_grid` says, lanes_m x lanes_n, and lane (i, j) of it accumulates a
    register tile of the rows i + lanes_m r and the columns j + lanes_n c of the warp tile
    (interleaved, so that the lanes of a warp read neighbouring elements of a slice and
    store neighbouring outputs). For each k of a slice it loads its rows of A and its columns
    of B from shared memory into registers, then multiply-adds every pair in f32."""

    def emit_thread_indices(self) -> None:
        super().emit_thread_indices()
        lanes_m, lanes_n = tile.fma_lane_grid(self.warp_m, self.warp_n, self.target)
        first_row = self.add(self.warp_row, self.div(self.lane, lanes_n))
        first_column = self.add(self.warp_column, self.rem(self.lane, lanes_n))
        self.rows = [self.add(first_row, lanes_m * r) for r in range(self.warp_m // lanes_m)]
        self.columns = [self.add(first_column, lanes_n * c) for c in range(self.warp_n // lanes_n)]
        self.output_columns = self.columns
        if self.siblings > 1:
            first_output = self.add(self.warp_output_column, self.rem(self.lane, lanes_n))
            shares = range(self.warp_share // lanes_n)
            self.output_columns = [self.add(first_output, lanes_n * c) for c in shares]
        # Where the register tile's rows and columns lie in the operands' shared tiles, for
        # every k: a row of the tile, or (an M or N along the tile's row) a panel and column.
        self.a_places = [self.place(self.a_tiles, row) for row in self.rows]
        self.b_places = [self.place(self.b_tiles, column) for column in self.columns]

    def place(self, tiles: OperandTiles, position: Index) -> Index | tuple[Index, Index]:
        if tiles.column_dim == self.k_dim:
            return position
        return self.panel_column(tiles, position)

    def registers(
        self,
        tiles: OperandTiles,
        shared: SSAValue,
        stage: Index,
        places: list[Index | tuple[Index, Index]],
        k: int,
    ) -> list[SSAValue]:
        """The thread's elements of an operand at `k` of the stage's slice, as f32."""
        values = []
        for place in places:
            if tiles.column_dim == self.k_dim:
                row, (panel, within) = place, self.panel_column(tiles, k)
            else:
                row, (panel, within) = k, place
            indices = [self.index(i) for i in (stage, panel, row, within)]
            value = self.add_op(memref.LoadOp.get(shared, indices)).res
            if value.type != f32:
                value = self.add_op(arith.ExtFOp(value, f32)).result
            values.append(value)
        return values

    def initial_accumulators(self, zero: SSAValue) -> list[SSAValue]:
        return [zero] * (len(self.rows) * len(self.columns))

    def multiply_slice(self, stage: Index, accumulators: list[SSAValue]) -> list[SSAValue]:
        accumulators = list(accumulators)
        for k in range(self.block_k):
            a = self.registers(self.a_tiles, self.shared_a, stage, self.a_places, k)
            b = self.registers(self.b_tiles, self.shared_b, stage, self.b_places, k)
            for r, a_value in enumerate(a):
                for c, b_value in enumerate(b):
                    position = r * len(b) + c
                    accumulators[position] = self.add_op(
                        math.FmaOp(a_value, b_value, accumulators[position])
                    ).result
        return accumulators

    @property
    def accumulator_columns(self) -> int:
        return len(self.columns)

    def accumulator_runs(
        self, siblings: list[list[SSAValue]], row: Index, column: Index
    ) -> Iterator[tuple[Index, Index, list[tuple[SSAValue, ...]]]]:
        """One element at a time, at its row and column of the register tile."""
        rows = [self.add(row, r) for r in self.rows]
        columns = [self.add(column, c) for c in self.output_columns]
        for position, values in enumerate(zip(*siblings)):
            r, c = divmod(position, len(columns))
            yield rows[r], columns[c], [values]


_BUILDERS = {tile.AtomKind.MMA_SYNC: _MmaSyncGemmBuilder, tile.AtomKind.FMA: _FmaGemmBuilder}
"""The builder of each atom's kernel (mma_sync m16n8k8 of f32 is `_Tf32MmaSyncGemmBuilder`'s)."""


def kernel_body(
    source: tile.KernelOp, extra_types: Sequence[Attribute] = ()
) -> tuple[Block, dict[SSAValue, SSAValue]]:
    """The body of the kernel.func that `source` lowers to: its arguments, named as the
    tile.kernel's, then arguments of `extra_types` (before the dynamic size, which stays
    last); and each tile.kernel argument's counterpart."""
    own = list(source.argument_types)
    sized = bool(own) and isinstance(own[-1], IndexType)
    kept = own[:-1] if sized else own
    body = Block(arg_types=[*kept, *extra_types, *own[len(kept) :]])
    values = {}
    new_args = [*body.args[: len(kept)], *body.args[len(kept) + len(extra_types) :]]
    for old, new in zip(source.body.block.args, new_args, strict=True):
        new.name_hint = old.name_hint
        values[old] = new
    return body, values


def kernel_func(source: tile.KernelOp, body: Block, cluster: int = 1) -> kernel.FuncOp:
    """The kernel.func of `source` with the built `body` (its blocks in clusters of
    `cluster`), at `source`'s location."""
    lowered = kernel.FuncOp(
        source.sym_name.data,
        [arg.type for arg in body.args],
        source.block_shape,
        Region(body),
        cluster,
    )
    lowered.location = source.location
    return lowered


def lower_gemm_kernel(source: tile.KernelOp, target: GpuTarget) -> kernel.FuncOp:
    """The kernel.func of a contraction's tile.kernel (see the module docstring)."""
    gemm = source.gemm
    assert gemm is not None
    atom = gemm.mma_atom
    builder = _Tf32MmaSyncGemmBuilder if atom.is_tf32 else _BUILDERS[atom.kind]
    body, values = kernel_body(source)
    builder(gemm, body, values, target).build()
    return kernel_func(source, body, gemm.split_count)
