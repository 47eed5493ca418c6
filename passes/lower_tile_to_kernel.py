"""`lower-tile-to-kernel`: realises each `tile.kernel`'s schedule with hardware primitives.

Each mapping becomes a loop over the iterations a thread owns (`scf.for`):
- `grid`: the loops of a nest mapped to the grid are linearised into one loop from
  `blockIdx.x` in steps of `gridDim.x`, and each iteration's indices are split back out;
- `thread`: from `threadIdx.x` in steps of `blockDim.x`;
- `global`: from `blockIdx.x * blockDim.x + threadIdx.x` in steps of `gridDim.x * blockDim.x`;
- `serial`: every iteration, in each thread.
A reduction mapped to threads first folds each thread's iterations into a partial result,
then combines the partials of a warp with butterfly shuffles (`kernel.shuffle xor` 16, 8, 4,
2, 1), writes one partial per warp to shared memory, and after a barrier every warp reads
the per-warp partials back and combines them the same way, so every thread holds the total;
a second barrier lets the next reduction reuse nothing stale. The host's `tile.launch`
becomes a `kernel.launch` with the kernel's grid and block.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from emmy.dialects import kernel, tile
from emmy.dialects.combiner import combine, identity

WARP = 32


class _KernelBuilder:
    """Emits one kernel.func body; `block` is where ops go next."""

    def __init__(self, body: Block, threads: int):
        self.block = body
        self.threads = threads
        self.thread_id = self._add(kernel.ThreadIdOp("x")).results[0]
        self.block_id = self._add(kernel.BlockIdOp("x")).results[0]
        self.block_dim = self._add(kernel.BlockDimOp("x")).results[0]
        self.grid_dim = self._add(kernel.GridDimOp("x")).results[0]
        self.values: dict[SSAValue, SSAValue] = {}

    def _add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def constant(self, value: int) -> SSAValue:
        op = self._add(arith.ConstantOp.from_int_and_width(value, IndexType()))
        op.result.name_hint = f"c{value}"
        return op.result

    def convert(self, source: Block) -> None:
        for op in source.ops:
            if isinstance(op, tile.ForOp):
                self._loop(op)
            elif not isinstance(op, tile.YieldOp):
                clone = self._add(op.clone(value_mapper=self.values))
                for old, new in zip(op.results, clone.results):
                    self.values[old] = new

    def _scf_for(self, start, stop, step, init: SSAValue | None, fill) -> scf.ForOp:
        """An `scf.for` whose body `fill(induction_var, accumulator)` builds and which
        returns the scalar to carry on (or None)."""
        arg_types = [IndexType()] + ([init.type] if init is not None else [])
        body = Block(arg_types=arg_types)
        outer, self.block = self.block, body
        carried = fill(body.args[0], body.args[1] if init is not None else None)
        self._add(scf.YieldOp(*([carried] if carried is not None else [])))
        self.block = outer
        return self._add(scf.ForOp(start, stop, step, [init] if init is not None else [], body))

    def _loop(self, op: tile.ForOp) -> None:
        mapping = op.mapping.data
        if mapping == "grid":
            self._grid_loops(op)
            return
        lower, upper = op.lower.data, op.upper.data
        if mapping == "thread":
            start = self._add(arith.AddiOp(self.thread_id, self.constant(lower))).results[0]
            step = self.block_dim
        elif mapping == "global":
            first = self._add(arith.MuliOp(self.block_id, self.block_dim)).results[0]
            first = self._add(arith.AddiOp(first, self.thread_id)).results[0]
            start = self._add(arith.AddiOp(first, self.constant(lower))).results[0]
            step = self._add(arith.MuliOp(self.grid_dim, self.block_dim)).results[0]
        else:
            start, step = self.constant(lower), self.constant(1)
        stop = self.constant(upper)
        if not op.is_reduction:
            self._scf_for(start, stop, step, None, lambda iv, _: self._body(op, iv))
            return
        kind = op.kind.data
        element_type = op.init.type
        start_value = identity(kind, element_type) if mapping == "thread" else op.init
        init = self._add(arith.ConstantOp(start_value)).results[0]

        def fold(iv: SSAValue, accumulator: SSAValue) -> SSAValue:
            contribution = self._body(op, iv)
            return self._add(combine(kind, accumulator, contribution)).results[0]

        partial = self._scf_for(start, stop, step, init, fold).results[0]
        if mapping == "thread":
            total = self._block_reduce(kind, partial)
            first = self._add(arith.ConstantOp(op.init)).results[0]
            partial = self._add(combine(kind, first, total)).results[0]
        self.values[op.accumulator[0]] = partial

    def _body(self, op: tile.ForOp, induction_var: SSAValue) -> SSAValue | None:
        self.values[op.induction_var] = induction_var
        self.convert(op.body.block)
        terminator = op.body.block.last_op
        return self.values[terminator.arguments[0]] if op.is_reduction else None

    def _grid_loops(self, outermost: tile.ForOp) -> None:
        chain = [outermost]
        while True:
            inner = [o for o in chain[-1].body.block.ops if isinstance(o, tile.ForOp)]
            if len(inner) != 1 or inner[0].mapping.data != "grid":
                break
            chain.append(inner[0])
        extents = [f.upper.data - f.lower.data for f in chain]

        def fill(linear: SSAValue, _) -> None:
            stride = prod(extents)
            for for_op, extent in zip(chain, extents):
                stride //= extent
                index = self._add(arith.DivUIOp(linear, self.constant(stride))).results[0]
                if for_op is not outermost:
                    index = self._add(arith.RemUIOp(index, self.constant(extent))).results[0]
                if for_op.lower.data:
                    index = self._add(arith.AddiOp(index, self.constant(for_op.lower.data)))
                    index = index.results[0]
                self.values[for_op.induction_var] = index
            for for_op in chain:
                nested = chain[chain.index(for_op) + 1] if for_op is not chain[-1] else None
                for body_op in for_op.body.block.ops:
                    if body_op is nested or isinstance(body_op, tile.YieldOp):
                        continue
                    if isinstance(body_op, tile.ForOp):
                        self._loop(body_op)
                        continue
                    clone = self._add(body_op.clone(value_mapper=self.values))
                    for old, new in zip(body_op.results, clone.results):
                        self.values[old] = new

        self._scf_for(self.block_id, self.constant(prod(extents)), self.grid_dim, None, fill)

    def _warp_reduce(self, kind: str, value: SSAValue) -> SSAValue:
        offset = WARP // 2
        while offset:
            lane_offset = self._add(arith.ConstantOp(IntegerAttr(offset, i32))).results[0]
            other = self._add(kernel.ShuffleOp("xor", value, lane_offset)).results[0]
            value = self._add(combine(kind, value, other)).results[0]
            offset //= 2
        return value

    def _block_reduce(self, kind: str, partial: SSAValue) -> SSAValue:
        element_type = partial.type
        warp_total = self._warp_reduce(kind, partial)
        if self.threads == WARP:
            return warp_total
        warps = self.threads // WARP
        shared = self._add(kernel.SharedAllocOp(kernel.shared_memref([warps], element_type)))
        shared = shared.results[0]
        lane = self._add(arith.RemUIOp(self.thread_id, self.constant(WARP))).results[0]
        warp = self._add(arith.DivUIOp(self.thread_id, self.constant(WARP))).results[0]
        is_first_lane = self._add(arith.CmpiOp(lane, self.constant(0), "eq")).results[0]
        then = Block()
        then.add_ops([memref.StoreOp.get(warp_total, shared, [warp]), scf.YieldOp()])
        self._add(scf.IfOp(is_first_lane, [], Region(then), Region(Block([scf.YieldOp()]))))
        self._add(kernel.BarrierOp())
        # Every warp reads the per-warp partials (lanes past the last warp read a neutral
        # value), so every thread ends with the total and no broadcast is needed.
        in_range = self._add(arith.CmpiOp(lane, self.constant(warps), "ult")).results[0]
        slot = self._add(arith.MinUIOp(lane, self.constant(warps - 1))).results[0]
        stored = self._add(memref.LoadOp.get(shared, [slot])).results[0]
        neutral = self._add(arith.ConstantOp(identity(kind, element_type))).results[0]
        value = self._add(arith.SelectOp(in_range, stored, neutral)).results[0]
        total = self._warp_reduce(kind, value)
        self._add(kernel.BarrierOp())
        return total


def _lower_kernel(source: tile.KernelOp) -> kernel.FuncOp:
    body = Block(arg_types=source.buffer_types)
    threads = prod(source.block_shape)
    builder = _KernelBuilder(body, threads)
    for old, new in zip(source.body.block.args, body.args):
        new.name_hint = old.name_hint
        builder.values[old] = new
    builder.convert(source.body.block)
    lowered = kernel.FuncOp(
        source.sym_name.data, source.buffer_types, source.block_shape, Region(body)
    )
    lowered.location = source.location
    return lowered


@dataclass(frozen=True)
class LowerTileToKernelPass(ModulePass):
    """Realises each tile.kernel's schedule with thread ids, strided loops, warp shuffles,
    shared memory and barriers, as a kernel.func and its kernel.launch."""

    name = "lower-tile-to-kernel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        shapes = {}
        for source in [k for k in op.body.block.ops if isinstance(k, tile.KernelOp)]:
            shapes[source.sym_name.data] = (source.grid_shape, source.block_shape)
            op.body.block.insert_op_before(_lower_kernel(source), source)
            op.body.block.erase_op(source, safe_erase=False)
        for launch in [o for o in op.walk() if isinstance(o, tile.LaunchOp)]:
            name = launch.kernel.root_reference.data
            grid, block = shapes[name]
            replacement = kernel.LaunchOp(name, launch.buffers, grid, block, 0)
            replacement.location = launch.location
            parent = launch.parent_block()
            parent.insert_op_before(replacement, launch)
            parent.erase_op(launch)
