"""`lower-tile-to-kernel`: realises each `tile.kernel`'s schedule with hardware primitives.

Each mapping becomes a loop over the iterations a thread owns (`scf.for`):
- `grid` / `grid_y`: a chain of loops mapped to one grid dimension (each the only loop of
  the one around it) is linearised into one loop from `blockIdx.x` in steps of `gridDim.x`
  (`blockIdx.y` in steps of `gridDim.y` for `grid_y`), and each iteration's indices are split
  back out;
- `thread`: from the thread's linear index in its block (`threadIdx.x`, plus `threadIdx.y * bx`
  and `threadIdx.z * bx * by` for a block of more than one row) in steps of the block size (a
  constant, so that the compiler unrolls a loop of a known trip count); up to 4 steps are
  emitted one after another, so the loops over one row visit each thread's elements in the
  same index values, and a load of a staged row or of a buffer the kernel never writes that an
  earlier loop made is reused (a softmax's output pass then multiplies the exps its sum pass
  computed, once cse has merged the equal arithmetic);
- `global`: from `blockIdx.x * T + t` (T the block size, t the linear thread index) in steps
  of `gridDim.x * T`;
- `serial`: every iteration, in each thread.
A loop of `vector N` starts N times further and steps N times further, and its body is
repeated for the N consecutive iterations; the accesses along the last dimension at the
induction variable (plus a multiple of N) become one `kernel.vector_load` / `vector_store` of a
`vector<N x T>` (16 bytes at most), whose lanes `vector.extract` takes out and `vector.broadcast`
and `vector.insert` put in; the rest stay scalar. A `tile.stage` becomes a shared row
(`kernel.shared_alloc`), a barrier (the previous iteration's readers are done with it), a copy
of the row by the whole block in 16-byte pieces (`kernel.cp_async` + commit + wait, or vector
loads and stores through registers for `sync`) and a barrier; the loads of that row after it in
the grid loop read the shared row.
A reduction mapped to global (split across blocks) is reduced the same way within each
block; then one thread of the block combines the block's total into the element the result
is stored to with a `kernel.atomic`, and a small kernel `@<name>_init`, launched first, stores
the reduction's init there.
A reduction mapped to threads first folds each thread's iterations into a partial result,
then combines the partials of a warp with butterfly shuffles (`kernel.shuffle xor` by half the
target's warp size, then half that, down to 1), writes one partial per warp to shared memory,
and after a barrier every warp reads the per-warp partials back and combines them the same
way, so every thread holds the total; a second barrier lets the next reduction reuse nothing
stale. A reduction with a combiner region does the same with its region inlined at each step,
one shuffle and one shared slot per accumulator per step (never split across blocks).
A contraction's kernel (a `tile.gemm`) becomes a tensor-core kernel: cp.async K slices
pipelined through swizzled shared memory, ldmatrix fragments, mma.sync accumulators in
registers and the epilogue per accumulator element (with `split S`, a cluster of S blocks
per output tile whose partial tiles are summed through distributed shared memory before
it), see `emmy.passes.gemm_kernel`; on the wgmma atom, a warp-specialised kernel in which a
producer warp group copies the K slices with TMA, which the consumers' wgmmas multiply,
mbarriers passing the stages between them (see `emmy.passes.wgmma_gemm_kernel`), whose
launch passes the operands again for its tensor maps.
An attention's kernel (a `tile.attention`) is FlashAttention-2's loop on mma.sync (see
`emmy.passes.attention_kernel`), or on the wgmma atom FlashAttention-3's warp-specialised
loop, TMA-fed, whose launch passes the query, key and value again for its tensor maps (see
`emmy.passes.wgmma_attention_kernel`). Split (flash-decoding: `split S`, its parts of the keys
blocks of the grid's y), its blocks leave each part's normalised rows and their log-sum-exps
in an f32 workspace, which the host allocates where it launches the kernel (two
`memref.alloc`s, passed to it after the tile.kernel's arguments, as the buffers of any
program are), and arrive at a counter of their rows, the zeroed global `@<name>_arrivals`
(passed after them), whose last arrival weighs the parts' rows into the output in the same
launch and resets it:

    tile.launch @k(%q, %k, %v, %o)      %ws = memref.alloc() : memref<4x1x8x1x64xf32>
                                        %lse = memref.alloc() : memref<4x1x8x1xf32>
                                        %arrivals = memref.get_global @k_arrivals
                                        kernel.launch @k(%q, %k, %v, %o, %ws, %lse, %arrivals)
                                            grid [1, 4, 2] block [32, 1, 1] smem 0
The ops that a block runs in order (a kernel's nests, the body of a grid or serial loop) pass
data through memory across a barrier: one goes before an op that depends on an op since the
last barrier (reads or writes a buffer it wrote, or writes one it read:
`emmy.dialects.dependences`), and at the end of a loop's body where the next iteration's first
ops would depend on this one's last (except through elements each iteration has of its own);
a staged row and a block's reduction end with barriers of their own, which count. Ops that
share nothing get none:

    tile.for %i in 0 to 4 map grid {                   scf.for %i = %bid to %c4 step %gdim {
      tile.for %j ... map thread { %t[%i, %j] = .. }     ... stores %t[%i, %j] ...
      tile.for %j ... map thread { .. = %t[%i, 255 - %j] }   kernel.barrier
    }                                                    ... loads %t[%i, 255 - %j] ...
                                                       }
The host's `tile.launch` becomes a `kernel.launch` with the kernel's grid, block and dynamic
shared memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects import vector as vector_dialect
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    VectorType,
    i32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from emmy.dialects import kernel, tile
from emmy.dialects.combiner import identity
from emmy.dialects.dependences import Accessed, private_to_iterations
from emmy.dialects.dtypes import element_bytes
from emmy.dialects.effects import read_where_written, written_values
from emmy.dialects.target import GpuTarget, target_of
from emmy.passes.attention_kernel import (
    attention_workspace,
    lower_attention_kernel,
)
from emmy.passes.attention_mask_summary import (
    lower_mask_summary,
    mask_summary_launches,
    summarizes_mask,
)
from emmy.passes.gemm_kernel import kernel_body, kernel_func, lower_gemm_kernel
from emmy.passes.wgmma_attention_kernel import lower_wgmma_attention_kernel
from emmy.passes.wgmma_gemm_kernel import lower_wgmma_gemm_kernel

UNROLLED_TRIPS = 4
"""Block-strided loops of at most this many steps a thread are emitted step by step (the
schedule gives a thread 4 vectors of a row: see choose-tile-schedule)."""


@dataclass
class _Lane:
    """Which of the consecutive iterations of a vectorised loop the body is being emitted for,
    and the vector accesses its first iteration emitted (keyed by the Tile IR access)."""

    loop: tile.ForOp
    width: int
    index: int = 0
    loads: dict[Operation, SSAValue] = field(default_factory=dict)
    stores: dict[Operation, tuple[list[SSAValue], list[SSAValue]]] = field(default_factory=dict)


class _KernelBuilder:
    """Emits one kernel.func body; `block` is where ops go next, inside `open_blocks`."""

    def __init__(
        self,
        body: Block,
        block_shape: Sequence[int],
        read_only: set[SSAValue],
        target: GpuTarget,
        rows: int = 1,
    ):
        self.block = body
        self.open_blocks = [body]
        """The blocks being built, outermost first: a value defined in one of them is
        visible to every op emitted now."""
        self.numbered: dict[tuple, tuple[SSAValue, Block]] = {}
        """Index arithmetic, constants and loads of read-only data already emitted, and the
        block each is in: emitted again, they reuse the first."""
        self.read_only = read_only
        """The kernel's buffers that it never stores to (their loads can be reused)."""
        self.warp = target.warp_size
        self.rows = rows
        self.block_shape = tuple(block_shape)
        if self.rows > 1:
            # Each row of the block (threadIdx.y) takes its own iteration of the rows loops.
            self.threads = block_shape[0]
            self.thread_id = self._add(kernel.ThreadIdOp("x")).results[0]
            self.row_id = self._add(kernel.ThreadIdOp("y")).results[0]
        else:
            self.threads = prod(block_shape)
            self.thread_id = self._linear_thread_id(block_shape)
        self.block_id = self._add(kernel.BlockIdOp("x")).results[0]
        self.grid_dim = self._add(kernel.GridDimOp("x")).results[0]
        self.values: dict[SSAValue, SSAValue] = {}
        self.staged: dict[tuple[SSAValue, tuple[SSAValue, ...]], SSAValue] = {}
        """(Tile IR buffer, leading indices) -> the shared row that holds it."""
        self.lane: _Lane | None = None
        self.split_totals: dict[SSAValue, SSAValue] = {}
        """Tile IR result of a reduction split across blocks -> this block's total."""
        self.per_thread = False
        """Ops are being converted for each thread on its own (in a thread or global loop),
        not in order by the whole block."""

    def _add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def block_thread_id(self) -> SSAValue:
        """The thread's number in the whole block: `thread_id`, but in a block of several
        rows, where that counts along its row."""
        if self.rows == 1:
            return self.thread_id
        return self._numbered(
            ("block_thread_id",), lambda: self._linear_thread_id(self.block_shape)
        )

    def _linear_thread_id(self, block_shape: Sequence[int]) -> SSAValue:
        """`threadIdx.x + threadIdx.y * bx + threadIdx.z * bx * by` without the terms of
        dimensions of size 1: the number by which CUDA also groups threads into warps."""
        linear, stride = None, 1
        for dimension, size in zip(kernel.DIMENSIONS, block_shape):
            if size > 1 or linear is None:
                index = self._add(kernel.ThreadIdOp(dimension)).results[0]
                if stride > 1:
                    index = self._index(arith.MuliOp, index, self.constant(stride))
                linear = index if linear is None else self._index(arith.AddiOp, linear, index)
            stride *= size
        return linear

    def _numbered(self, key: tuple, emit: Callable[[], SSAValue], reuse: bool = True) -> SSAValue:
        """The value `emit` made for `key` before, where it is still visible (and `reuse`);
        else a new one, recorded for later."""
        known = self.numbered.get(key)
        if reuse and known is not None and any(known[1] is block for block in self.open_blocks):
            return known[0]
        value = emit()
        self.numbered[key] = (value, self.block)
        return value

    def constant(self, value: int) -> SSAValue:
        def emit() -> SSAValue:
            op = self._add(arith.ConstantOp.from_int_and_width(value, IndexType()))
            op.result.name_hint = f"c{value}"
            return op.result

        return self._numbered(("constant", value), emit)

    def _index(self, op_type, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return self._numbered((op_type, lhs, rhs), lambda: self._add(op_type(lhs, rhs)).results[0])

    def convert(self, source: Block) -> None:
        for op in source.ops:
            self.convert_op(op)

    def convert_in_order(self, ops: Sequence[Operation], loops: Sequence[tile.ForOp]) -> None:
        """Converts ops that the whole block runs in order (a kernel's nests; the body of a
        serial loop, or of the chain of grid loops `loops`), with a barrier before an op that
        depends on one after the last barrier (`emmy.dialects.dependences`), and at the end
        of a loop's body where an op of the next iteration, before its first barrier, would
        depend on another of this one after its last (not through a buffer each iteration
        has elements of its own of). A barrier that an op ends with itself (a staged row, a
        block's reduction) orders what it accessed."""
        private = private_to_iterations(loops, ops) if loops else frozenset()
        since: list[tuple[Operation, Accessed]] = []
        """The ops after the last barrier, and what they access."""
        before: list[tuple[Operation, Accessed]] = []
        """The ops before the first barrier, and what they access."""
        first_barrier = False
        for op in ops:
            accessed = Accessed.by(op)
            if any(earlier.passed_to(accessed) for _, earlier in since):
                self._add(kernel.BarrierOp())
                since, first_barrier = [], True
            last = self.block.last_op
            self.convert_op(op)
            emitted = _emitted_after(self.block, last)
            if not first_barrier and _accesses_before_barrier(emitted):
                before.append((op, accessed))
            first_barrier = first_barrier or any(isinstance(e, kernel.BarrierOp) for e in emitted)
            since = [] if _ends_in_barrier(emitted) else [*since, (op, accessed)]
        if loops and any(
            earlier.passed_to(accessed) - private
            for op, earlier in since
            for later, accessed in before
            if later is not op
        ):
            self._add(kernel.BarrierOp())

    def convert_op(self, op: Operation) -> None:
        if isinstance(op, tile.ForOp):
            self._loop(op)
        elif isinstance(op, tile.StageOp):
            self._stage(op)
        elif isinstance(op, memref.LoadOp):
            self._load(op)
        elif isinstance(op, memref.StoreOp):
            self._store(op)
        elif not isinstance(op, tile.YieldOp):
            clone = self._add(op.clone(value_mapper=self.values))
            for old, new in zip(op.results, clone.results):
                self.values[old] = new

    # -- accesses --

    def _target(self, buffer: SSAValue, indices: Sequence[SSAValue]):
        """The kernel buffer and indices an access of Tile IR reads: a staged row, or the
        buffer itself."""
        row = self.staged.get((buffer, tuple(indices[:-1])))
        if row is not None:
            return row, [self.values[indices[-1]]]
        return self.values[buffer], [self.values[i] for i in indices]

    def _is_vector_access(self, buffer: SSAValue, indices: Sequence[SSAValue], target) -> bool:
        lane = self.lane
        if lane is None:
            return False
        offset = tile.contiguous_offset(indices[-1], lane.loop.induction_var) if indices else None
        memref_type = target.type
        element = element_bytes(memref_type.get_element_type())
        return (
            offset is not None
            and offset % lane.width == 0
            and memref_type.get_shape()[-1] % lane.width == 0
            and lane.width * element <= kernel.MAX_VECTOR_BYTES
            and not any(_defined_in(index, lane.loop) for index in indices[:-1])
        )

    def _load(self, op: memref.LoadOp) -> None:
        """A load; of a staged row (written only by its tile.stage) or of a buffer the kernel
        never writes, a second load of the same element that feeds a math function reuses the
        first one's value, so that cse can merge the function too (a softmax's output pass
        then multiplies its sum pass's exps). Reuse holds the values in registers from one
        loop to the next, which only a transcendental function's recomputation is worth:
        other loads are made again, from the staged row or the cache."""
        target, indices = self._target(op.memref, op.indices)
        lane = self.lane
        if lane is not None and self._is_vector_access(op.memref, op.indices, target):
            if lane.index == 0:

                def emit_vector() -> SSAValue:
                    return self._add(kernel.VectorLoadOp(target, indices, lane.width)).result

                key = ("vector_load", target, *indices, lane.width)
                lane.loads[op] = self._read_only_load(op, target, key, emit_vector)
            self.values[op.res] = self._lane_of(lane.loads[op], lane.index)
            return

        def emit() -> SSAValue:
            return self._add(memref.LoadOp.get(target, indices)).res

        self.values[op.res] = self._read_only_load(op, target, ("load", target, *indices), emit)

    def _lane_of(self, vector: SSAValue, index: int) -> SSAValue:
        def emit() -> SSAValue:
            element = vector.type.get_element_type()
            return self._add(vector_dialect.ExtractOp(vector, [index], element)).result

        return self._numbered(("extract", vector, index), emit)

    def _vector_of(self, values: Sequence[SSAValue]) -> SSAValue:
        """A vector of `values`: the first broadcast, the others inserted."""
        vector_type = VectorType(values[0].type, [len(values)])
        vector = self._add(vector_dialect.BroadcastOp(values[0], vector_type)).vector
        for index, value in enumerate(values[1:], 1):
            vector = self._add(vector_dialect.InsertOp(value, vector, [index])).result
        return vector

    def _read_only_load(self, op: memref.LoadOp, target: SSAValue, key: tuple, emit) -> SSAValue:
        """`emit()`, numbered under `key` when `target` is a staged row or a buffer the kernel
        never writes, and reused if `op` feeds a math function (see `_load`)."""
        if target not in self.read_only and target not in self.staged.values():
            return emit()
        return self._numbered(key, emit, _feeds_math_function(op.res))

    def _store(self, op: memref.StoreOp) -> None:
        if op.value in self.split_totals:
            self._atomic_store(op)
            return
        target, indices = self._target(op.memref, op.indices)
        value = self.values[op.value]
        lane = self.lane
        # A store is held back to the last iteration, so no iteration may read its buffer
        # but at the element it then stores (a result computed in place).
        if (
            lane is not None
            and self._is_vector_access(op.memref, op.indices, target)
            and read_where_written(
                (
                    o
                    for o in lane.loop.body.walk()
                    if isinstance(o, memref.LoadOp) and o.memref is op.memref
                ),
                op,
            )
        ):
            first_indices, stored = lane.stores.setdefault(op, (indices, []))
            stored.append(value)
            if lane.index == lane.width - 1:
                self._add(kernel.VectorStoreOp(self._vector_of(stored), target, first_indices))
            return
        self._add(memref.StoreOp.get(value, target, indices))

    def _atomic_store(self, op: memref.StoreOp) -> None:
        """One thread of each block combines the block's total into the stored element."""
        reduction = op.value.owner
        first = self._index_compare(self.thread_id, 0)
        then = Block()
        atomic = kernel.AtomicOp(
            reduction.kind.data,
            self.split_totals[op.value],
            self.values[op.memref],
            [self.values[i] for i in op.indices],
        )
        then.add_ops([atomic, scf.YieldOp()])
        self._add(scf.IfOp(first, [], Region(then), Region(Block([scf.YieldOp()]))))

    def _index_compare(self, value: SSAValue, constant: int) -> SSAValue:
        return self._add(arith.CmpiOp(value, self.constant(constant), "eq")).results[0]

    def _stage(self, op: tile.StageOp) -> None:
        row_type = op.row_type
        element = row_type.get_element_type()
        size = row_type.get_shape()[-1]
        element_size = element_bytes(element)
        width = kernel.MAX_VECTOR_BYTES // element_size
        while size % width:
            width //= 2
        copy_bytes = width * element_size
        asynchronous = op.mode.data == "async" and copy_bytes in kernel.CP_ASYNC_BYTES
        row = self._add(kernel.SharedAllocOp(kernel.shared_memref([size], element))).results[0]
        row.name_hint = f"{op.buffer.name_hint or 'row'}_row"
        source = self.values[op.buffer]
        leading = [self.values[i] for i in op.indices]
        self._add(kernel.BarrierOp())

        def copy(j: SSAValue, _) -> None:
            if asynchronous:
                self._add(kernel.CpAsyncOp(row, [j], source, [*leading, j], copy_bytes))
                return
            loaded = self._add(kernel.VectorLoadOp(source, [*leading, j], width)).result
            self._add(kernel.VectorStoreOp(loaded, row, [j]))

        first = self._index(arith.MuliOp, self.thread_id, self.constant(width))
        self._block_strided(first, 0, size, self.threads * width, (), copy)
        if asynchronous:
            self._add(kernel.CpAsyncCommitOp())
            self._add(kernel.CpAsyncWaitOp(0))
        self._add(kernel.BarrierOp())
        self.staged[(op.buffer, tuple(op.indices))] = row

    # -- loops --

    def _scf_for(self, start, stop, step, init: Sequence[SSAValue], fill) -> list[SSAValue]:
        """An `scf.for` whose body `fill(induction_var, accumulators)` builds and which
        returns the scalars to carry on (or None for none); returns the loop's results."""
        body = Block(arg_types=[IndexType(), *(v.type for v in init)])
        outer, self.block = self.block, body
        self.open_blocks.append(body)
        carried = fill(body.args[0], list(body.args[1:]))
        self._add(scf.YieldOp(*(carried or [])))
        self.open_blocks.pop()
        self.block = outer
        loop_op = self._add(scf.ForOp(start, stop, step, list(init), body))
        return list(loop_op.results)

    def _block_strided(
        self, first: SSAValue, lower: int, upper: int | SSAValue, stride: int, init, fill
    ):
        """The loop over `first + lower`, `first + lower + stride`, ... below `upper`, where
        `first` is below `stride` in every thread; when `stride` divides the range into at
        most UNROLLED_TRIPS steps, those steps one after another (so that the loops of one
        row visit the same elements in the same values, and a later loop reuses what an
        earlier one loaded and computed), else a loop of that constant count (which the CUDA
        compiler unrolls, keeping every load in flight); a loop to the dynamic size `upper`
        (a value) is an `scf.for` to it. Returns the accumulators carried out."""
        if isinstance(upper, SSAValue):
            start = self._index(arith.AddiOp, first, self.constant(lower)) if lower else first
            return self._scf_for(start, upper, self.constant(stride), init, fill)
        if (upper - lower) % stride:
            start = self._index(arith.AddiOp, first, self.constant(lower)) if lower else first
            return self._scf_for(start, self.constant(upper), self.constant(stride), init, fill)
        base = self._index(arith.AddiOp, first, self.constant(lower)) if lower else first
        count = (upper - lower) // stride
        if count <= UNROLLED_TRIPS:
            accumulator = init
            for step in range(count):
                offset = (
                    self._index(arith.AddiOp, base, self.constant(step * stride)) if step else base
                )
                accumulator = fill(offset, accumulator)
            return accumulator

        def counted(step: SSAValue, accumulator: list[SSAValue]):
            offset = self._index(arith.MuliOp, step, self.constant(stride))
            return fill(self._index(arith.AddiOp, base, offset), accumulator)

        return self._scf_for(
            self.constant(0), self.constant(count), self.constant(1), init, counted
        )

    def _loop(self, op: tile.ForOp) -> None:
        mapping = op.mapping.data
        if mapping in tile.GRID_MAPPINGS:
            self._grid_loops(op)
            return
        lower, width = op.lower.data, op.vector_width
        upper = self._upper(op)
        starts = op.init_values if mapping == "serial" else _neutral(op)
        init = [self._add(arith.ConstantOp(start)).results[0] for start in starts]

        def fill(iv: SSAValue, accumulators: list[SSAValue]) -> list[SSAValue]:
            for contribution in self._body(op, iv):
                accumulators = op.combine(accumulators, contribution, self._add)
            return accumulators

        if mapping == "thread":
            first = self._index(arith.MuliOp, self.thread_id, self.constant(width))
            partial = self._block_strided(first, lower, upper, self.threads * width, init, fill)
        else:
            if mapping == "global":
                # Every thread of the block, its rows' too (a table written beside rows).
                threads = prod(self.block_shape)
                first = self._index(arith.MuliOp, self.block_id, self.constant(threads))
                first = self._index(arith.AddiOp, first, self.block_thread_id())
                first = self._index(arith.MuliOp, first, self.constant(width))
                start = self._index(arith.AddiOp, first, self.constant(lower))
                per_grid = self.constant(threads * width)
                step = self._index(arith.MuliOp, self.grid_dim, per_grid)
            else:
                start, step = self.constant(lower), self.constant(1)
            stop = upper if isinstance(upper, SSAValue) else self.constant(upper)
            partial = self._scf_for(start, stop, step, init, fill)
        if not op.is_reduction:
            return
        if mapping == "global":
            # The blocks' totals meet in the stored element, which holds the init already.
            (self.split_totals[op.accumulator[0]],) = self._block_reduce(op, partial)
            return
        if mapping == "thread":
            partial = self._block_reduce(op, partial)
            if op.kind is not None:
                first_value = self._add(arith.ConstantOp(op.init)).results[0]
                partial = op.combine([first_value], partial, self._add)
        for result, value in zip(op.accumulator, partial):
            self.values[result] = value

    def _upper(self, op: tile.ForOp) -> int | SSAValue:
        """The loop's static upper bound, or the kernel.func's dynamic size argument."""
        return self.values[op.dynamic_upper] if op.dynamic_upper is not None else op.bound

    def _body(self, op: tile.ForOp, induction_var: SSAValue) -> list[list[SSAValue]]:
        """Emits the body once per consecutive iteration a thread takes; returns what each
        iteration of a reduction contributes, a value per accumulator."""
        width = op.vector_width
        outer, per_thread = self.lane, self.per_thread
        lane = _Lane(op, width)
        self.lane = lane if width > 1 else None
        self.per_thread = per_thread or op.mapping.data in tile.VECTOR_MAPPINGS
        contributions = []
        for index in range(width):
            lane.index = index
            self.values[op.induction_var] = (
                self._index(arith.AddiOp, induction_var, self.constant(index))
                if index
                else induction_var
            )
            if self.per_thread:
                self.convert(op.body.block)
            else:
                self.convert_in_order(list(op.body.block.ops), [op])
            if op.is_reduction:
                yielded = op.body.block.last_op.arguments
                contributions.append([self.values[v] for v in yielded])
        self.lane, self.per_thread = outer, per_thread
        return contributions

    def _grid_loops(self, outermost: tile.ForOp) -> None:
        chain = [outermost]
        while True:
            inner = [o for o in chain[-1].body.block.ops if isinstance(o, tile.ForOp)]
            if len(inner) != 1 or inner[0].mapping.data != outermost.mapping.data:
                break
            chain.append(inner[0])
        # Each loop's extent, and the product of the extents inside it: constants, or values
        # where the dynamic size is one of them.
        extents = [self._upper(f) if f.is_dynamic else f.trip_count for f in chain]
        strides: list[int | SSAValue] = [1]
        for extent in reversed(extents[1:]):
            strides.insert(0, self._product(extent, strides[0]))
        total = self._product(extents[0], strides[0])

        def fill(linear: SSAValue, _) -> None:
            for for_op, extent, stride in zip(chain, extents, strides):
                index = self._index(arith.DivUIOp, linear, self._value(stride))
                if for_op is not outermost:
                    index = self._index(arith.RemUIOp, index, self._value(extent))
                if for_op.lower.data:
                    index = self._index(arith.AddiOp, index, self.constant(for_op.lower.data))
                self.values[for_op.induction_var] = index
            staged = dict(self.staged)
            ops = []
            for for_op in chain:
                nested = chain[chain.index(for_op) + 1] if for_op is not chain[-1] else None
                ops += [body_op for body_op in for_op.body.block.ops if body_op is not nested]
            self.convert_in_order(ops, chain)
            self.staged = staged  # a staged row holds this iteration's row only

        if outermost.mapping.data == tile.Mapping.ROWS:
            rows = self.constant(self.rows)
            first = self._index(arith.MuliOp, self.block_id, rows)
            first = self._index(arith.AddiOp, first, self.row_id)
            step = self._index(arith.MuliOp, self.grid_dim, rows)
        elif outermost.mapping.data == tile.Mapping.GRID:
            first, step = self.block_id, self.grid_dim
        else:
            first = self._add(kernel.BlockIdOp("y")).results[0]
            step = self._add(kernel.GridDimOp("y")).results[0]
        self._scf_for(first, self._value(total), step, (), fill)

    def _value(self, size: int | SSAValue) -> SSAValue:
        return size if isinstance(size, SSAValue) else self.constant(size)

    def _product(self, lhs: int | SSAValue, rhs: int | SSAValue) -> int | SSAValue:
        if isinstance(lhs, int) and isinstance(rhs, int):
            return lhs * rhs
        if lhs == 1 or rhs == 1:
            return rhs if lhs == 1 else lhs
        return self._index(arith.MuliOp, self._value(lhs), self._value(rhs))

    def _warp_reduce(self, op: tile.ForOp, values: list[SSAValue]) -> list[SSAValue]:
        offset = self.warp // 2
        while offset:
            lane_offset = self._add(arith.ConstantOp(IntegerAttr(offset, i32))).results[0]
            others = [
                self._add(kernel.ShuffleOp("xor", value, lane_offset)).results[0]
                for value in values
            ]
            values = op.combine(values, others, self._add)
            offset //= 2
        return values

    def _block_reduce(self, op: tile.ForOp, partials: list[SSAValue]) -> list[SSAValue]:
        """Every thread's partials combined (`op`'s combiner), in every thread: one shared
        slot per warp and accumulator."""
        warp_totals = self._warp_reduce(op, partials)
        if self.threads == self.warp:
            return warp_totals
        warps = self.threads // self.warp
        shared = [
            self._add(kernel.SharedAllocOp(kernel.shared_memref([warps], v.type))).results[0]
            for v in warp_totals
        ]
        lane = self._add(arith.RemUIOp(self.thread_id, self.constant(self.warp))).results[0]
        warp = self._add(arith.DivUIOp(self.thread_id, self.constant(self.warp))).results[0]
        is_first_lane = self._index_compare(lane, 0)
        then = Block()
        then.add_ops([memref.StoreOp.get(v, row, [warp]) for v, row in zip(warp_totals, shared)])
        then.add_op(scf.YieldOp())
        self._add(scf.IfOp(is_first_lane, [], Region(then), Region(Block([scf.YieldOp()]))))
        self._add(kernel.BarrierOp())
        # Every warp reads the per-warp partials (lanes past the last warp read a neutral
        # value), so every thread ends with the total and no broadcast is needed.
        in_range = self._add(arith.CmpiOp(lane, self.constant(warps), "ult")).results[0]
        slot = self._add(arith.MinUIOp(lane, self.constant(warps - 1))).results[0]
        values = []
        for row, neutral_value in zip(shared, _neutral(op)):
            stored = self._add(memref.LoadOp.get(row, [slot])).results[0]
            neutral = self._add(arith.ConstantOp(neutral_value)).results[0]
            values.append(self._add(arith.SelectOp(in_range, stored, neutral)).results[0])
        totals = self._warp_reduce(op, values)
        self._add(kernel.BarrierOp())
        return totals


def _neutral(op: tile.ForOp) -> tuple[Attribute, ...]:
    """What a thread's partial result starts from: the identity of a named combiner, the
    inits of a combiner region (which are its identity)."""
    if op.kind is None:
        return op.init_values
    return tuple(identity(op.kind.data, init.type) for init in op.init_values)


def _defined_in(value: SSAValue, region_op: Operation) -> bool:
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    while op is not None and op is not region_op:
        op = op.parent_op()
    return op is region_op


def _feeds_math_function(value: SSAValue) -> bool:
    """Whether a `math` op (exp, erf, ...) computes from `value`, directly or through others."""
    pending, seen = [value], set()
    while pending:
        for use in pending.pop().uses:
            user = use.operation
            if user.name.startswith("math."):
                return True
            if user not in seen:
                seen.add(user)
                pending.extend(user.results)
    return False


def _emitted_after(block: Block, last: Operation | None) -> list[Operation]:
    """The ops of `block` after `last` (all of them where it is None)."""
    op = block.first_op if last is None else last.next_op
    emitted = []
    while op is not None:
        emitted.append(op)
        op = op.next_op
    return emitted


def _touches_global_memory(op: Operation) -> bool:
    return any(
        isinstance(value.type, MemRefType) and not kernel.is_shared(value.type)
        for inner in op.walk()
        for value in inner.operands
    )


def _accesses_before_barrier(ops: Sequence[Operation]) -> bool:
    """Whether one of `ops` (in order) touches global memory before the first barrier."""
    for op in ops:
        if isinstance(op, kernel.BarrierOp):
            return False
        if _touches_global_memory(op):
            return True
    return False


def _ends_in_barrier(ops: Sequence[Operation]) -> bool:
    """Whether a barrier follows the last of `ops` (in order) that touches global memory,
    and so orders everything they access before what comes after them."""
    for op in reversed(ops):
        if isinstance(op, kernel.BarrierOp):
            return True
        if _touches_global_memory(op):
            return False
    return False


def _split_reduction_init(source: tile.KernelOp, warp: int) -> kernel.FuncOp | None:
    """The kernel that stores the init of each reduction split across blocks into the element
    its blocks combine their totals into; None when the kernel splits none."""
    stores = [
        use.operation
        for loop_op in source.walk()
        if isinstance(loop_op, tile.ForOp)
        and loop_op.is_reduction
        and loop_op.mapping.data == "global"
        for use in loop_op.accumulator[0].uses
    ]
    if not stores:
        return None
    body = Block(arg_types=source.argument_types)
    for old, new in zip(source.body.block.args, body.args):
        new.name_hint = old.name_hint
    thread = kernel.ThreadIdOp("x")
    zero = arith.ConstantOp.from_int_and_width(0, IndexType())
    first = arith.CmpiOp(thread, zero, "eq")
    then = Block()
    arguments = dict(zip(source.body.block.args, body.args))
    for store in stores:
        init = arith.ConstantOp(store.value.owner.init)
        indices = [arith.ConstantOp(i.owner.value) for i in store.indices]
        then.add_ops([init, *indices])
        then.add_op(memref.StoreOp.get(init, arguments[store.memref], indices))
    then.add_op(scf.YieldOp())
    body.add_ops([thread, zero, first])
    body.add_op(scf.IfOp(first, [], Region(then), Region(Block([scf.YieldOp()]))))
    init_kernel = kernel.FuncOp(
        f"{source.sym_name.data}_init", source.argument_types, [warp, 1, 1], Region(body)
    )
    init_kernel.location = source.location
    return init_kernel


def _lower_kernel(
    source: tile.KernelOp, target: GpuTarget
) -> tuple[kernel.FuncOp, list[int], list[int] | None]:
    """The kernel.func, the positions of the arguments its launch passes again for the
    tensor-map parameters it takes besides the tile.kernel's, and the item table its launch
    passes last (a wgmma attention's), if any."""
    attention = source.attention
    if attention is not None and attention.mma_atom.kind == tile.AtomKind.WGMMA:
        return lower_wgmma_attention_kernel(source, target)
    if attention is not None:
        return lower_attention_kernel(source, target), [], None
    gemm = source.gemm
    if gemm is not None and gemm.mma_atom.kind == tile.AtomKind.WGMMA:
        return *lower_wgmma_gemm_kernel(source, target), None
    if gemm is not None:
        return lower_gemm_kernel(source, target), [], None
    body, values = kernel_body(source)
    written = written_values(source.body)
    read_only = {new for old, new in values.items() if old not in written}
    builder = _KernelBuilder(
        body, source.block_shape, read_only, target, tile.rows_per_block(source)
    )
    builder.values.update(values)
    builder.convert_in_order(list(source.body.block.ops), [])
    return kernel_func(source, body), [], None


def _sized_grid(source: tile.KernelOp) -> tuple[int, int, int] | None:
    """How many blocks along x a launch of `source` needs for the dynamic size, as
    [factor, divisor, power] (`kernel.LaunchOp.sized`): a chain of grid loops over it needs
    one per iteration, a global loop one per block's worth of its iterations; the most of
    those (a kernel's grid-strided loops are right on any grid, so a nest that needs fewer
    blocks runs on these too); a gemm's or an attention's, its tiles' (`sized_grid`). None when
    no grid loop runs to the dynamic size."""
    contraction = source.gemm or source.attention
    if contraction is not None:
        return contraction.sized_grid()
    needs: list[tuple[int, int, int]] = []
    threads = prod(source.block_shape)
    rows = tile.rows_per_block(source)
    for for_op in source.body.walk():
        if not isinstance(for_op, tile.ForOp) or not for_op.is_dynamic:
            continue
        if for_op.mapping.data == tile.Mapping.GLOBAL:
            needs.append((1, threads * for_op.vector_width, 1))
        elif for_op.mapping.data in (tile.Mapping.GRID, tile.Mapping.ROWS):
            enclosing, parent = [], for_op.parent_op()
            while isinstance(parent, tile.ForOp):
                enclosing.append(parent)
                parent = parent.parent_op()
            chain = [
                op
                for op in (*enclosing, *for_op.body.walk())
                if isinstance(op, tile.ForOp) and op.mapping.data == for_op.mapping.data
            ]
            static = [op.trip_count for op in chain if not op.is_dynamic]
            needs.append((prod(static), rows, 1 + len(chain) - len(static)))
    return max(needs, key=lambda need: (need[2], need[0] / need[1]), default=None)


def _item_table_global(
    source: tile.KernelOp, table: list[int], module: ModuleOp
) -> memref.GlobalOp:
    """The constant `@<kernel>_items` holding a kernel's item table, placed before it."""
    table_type = MemRefType(i32, [len(table)])
    constant = memref.GlobalOp.get(
        StringAttr(f"{source.sym_name.data}_items"),
        table_type,
        DenseIntOrFPElementsAttr.from_list(TensorType(i32, [len(table)]), table),
        constant=UnitAttr(),
    )
    module.body.block.insert_op_before(constant, source)
    return constant


def _arrival_counters_global(
    source: tile.KernelOp, counters: MemRefType, module: ModuleOp
) -> memref.GlobalOp:
    """The zeroed `@<kernel>_arrivals`, placed before it: the counters a split attention's
    parts arrive at, which the last of each block of rows resets (`atom.inc`), so that they
    are 0 again for the next launch. A program's runs share them: they may not overlap."""
    (count,) = counters.get_shape()
    zeros = DenseIntOrFPElementsAttr.from_list(TensorType(i32, [count]), [0] * count)
    arrivals = memref.GlobalOp.get(StringAttr(f"{source.sym_name.data}_arrivals"), counters, zeros)
    module.body.block.insert_op_before(arrivals, source)
    return arrivals


def _passing_also(arguments: list[SSAValue], extra: Sequence[SSAValue]) -> list[SSAValue]:
    """A launch's `arguments` and then `extra`, before the dynamic size, which a kernel
    takes last."""
    sized = bool(arguments) and isinstance(arguments[-1].type, IndexType)
    kept = arguments[:-1] if sized else arguments
    return [*kept, *extra, *arguments[len(kept) :]]


@dataclass(frozen=True)
class LowerTileToKernelPass(ModulePass):
    """Realises each tile.kernel's schedule with thread ids, strided loops, warp shuffles,
    shared memory and barriers, as a kernel.func and its kernel.launch."""

    name = "lower-tile-to-kernel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        shapes = {}
        initialised = set()
        combined: dict[str, tuple[list[MemRefType], memref.GlobalOp]] = {}
        summarised: dict[str, tuple[tile.AttentionOp, int]] = {}
        tables: dict[str, memref.GlobalOp] = {}
        for source in [k for k in op.body.block.ops if isinstance(k, tile.KernelOp)]:
            init = _split_reduction_init(source, target.warp_size)
            if init is not None:
                initialised.add(source.sym_name.data)
                op.body.block.insert_op_before(init, source)
            attention = source.attention
            if attention is not None and attention.split_count > 1:
                *parts, arrivals = attention_workspace(attention)
                counters = _arrival_counters_global(source, arrivals, op)
                combined[source.sym_name.data] = (parts, counters)
            if attention is not None and summarizes_mask(attention):
                for summary in lower_mask_summary(source, target):
                    op.body.block.insert_op_before(summary, source)
                mask_at = list(source.body.block.args).index(attention.mask)
                summarised[source.sym_name.data] = (attention, mask_at)
            lowered, repeated, table = _lower_kernel(source, target)
            if table is not None:
                tables[source.sym_name.data] = _item_table_global(source, table, op)
            gemm = source.gemm
            shapes[source.sym_name.data] = (
                source.grid_shape,
                source.block_shape,
                lowered.dynamic_shared_bytes,
                repeated,
                _sized_grid(source),
                gemm is not None and gemm.mma_atom.kind == tile.AtomKind.WGMMA,
            )
            op.body.block.insert_op_before(lowered, source)
            op.body.block.erase_op(source, safe_erase=False)
        for launch in [o for o in op.walk() if isinstance(o, tile.LaunchOp)]:
            name = launch.kernel.root_reference.data
            grid, block, smem, repeated, sized, persistent = shapes[name]
            parent = launch.parent_block()
            arguments = _passing_also(
                list(launch.arguments), [launch.arguments[i] for i in repeated]
            )
            launches: list[Operation] = []
            if name in summarised:
                attention, mask_at = summarised[name]
                summarising, summary = mask_summary_launches(
                    name, attention, launch.arguments[mask_at]
                )
                arguments = _passing_also(arguments, summary)
                launches += summarising
            if name in tables:
                table = memref.GetGlobalOp(tables[name].sym_name.data, tables[name].type)
                table.memref.name_hint = "items"
                arguments = _passing_also(arguments, [table.memref])
                launches.append(table)
            if name in combined:
                types, counters = combined[name]
                allocations = [memref.AllocOp([], [], t) for t in types]
                arrivals = memref.GetGlobalOp(counters.sym_name.data, counters.type)
                arrivals.memref.name_hint = "arrivals"
                workspace = [*(a.memref for a in allocations), arrivals.memref]
                arguments = _passing_also(arguments, workspace)
                launches += [*allocations, arrivals]
            launches.append(kernel.LaunchOp(name, arguments, grid, block, smem, sized, persistent))
            if name in initialised:
                init_block = [target.warp_size, 1, 1]
                init = kernel.LaunchOp(f"{name}_init", launch.arguments, [1, 1, 1], init_block, 0)
                launches.insert(0, init)
            for replacement in launches:
                replacement.location = launch.location
                parent.insert_op_before(replacement, launch)
            parent.erase_op(launch)
