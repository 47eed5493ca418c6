"""`predicate-write-backs`: a store that writes back, where a condition fails, what it loaded
from the same place is done only where the condition holds.

    %old = kernel.vector_load %c[%p, %d]          scf.if %found {
    %o0 = vector.extract %old[0]                    %n0 = memref.load %k[..]
    %n0 = memref.load %k[..]                        ..
    %s0 = arith.select %found, %n0, %o0    ->       %v = vector.broadcast %n0
    ..                                              %v1 = vector.insert %n1, %v [1]
    %v = vector.broadcast %s0                       kernel.vector_store %v1, %c[%p, %d]
    %v1 = vector.insert %s1, %v [1]               }
    kernel.vector_store %v1, %c[%p, %d]

An in-place update of a few places of a large buffer (a KV cache's `index_copy_`, written as
`where(found, new, cache)` into the cache itself by `place-results-in-arguments`) then reads
and writes only those places, not the whole buffer: the load of the old value goes once
nothing else uses it, and the new value's ops that only the store uses move into the branch.
Lanes of a vector store must all take the one condition. Only where nothing between the load
and the store writes the buffer (where the original would put back the loaded value over such
a write, the rewritten store would leave it); the kernel's other parameters are other buffers
(kernel.launch's verifier: no launch passes one buffer to a kernel twice where it writes one),
so a write to one of them may lie between (a k and a v cache updated by one kernel).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects import vector as vector_dialect
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from emmy.dialects import kernel
from emmy.dialects.effects import read_values, written_values


def _lanes(value: SSAValue, width: int) -> list[SSAValue] | None:
    """The scalars of each lane of a vector built by a broadcast and inserts at constant
    positions (how `lower-tile-to-kernel` assembles a vector store's value); None otherwise."""
    lanes: dict[int, SSAValue] = {}
    while isinstance(insert := value.owner, vector_dialect.InsertOp):
        if insert.dynamic_position or len(insert.static_position.get_values()) != 1:
            return None
        lanes.setdefault(insert.static_position.get_values()[0], insert.source)
        value = insert.dest
    if not isinstance(broadcast := value.owner, vector_dialect.BroadcastOp):
        return None
    return [lanes.get(lane, broadcast.source) for lane in range(width)]


def _loaded_lane(value: SSAValue, store: Operation, lane: int | None) -> Operation | None:
    """The load at `store`'s place that `value` is (lane `lane` of, for a vector store)."""
    if lane is not None:
        extract = value.owner
        if not (
            isinstance(extract, vector_dialect.ExtractOp)
            and not extract.dynamic_position
            and extract.static_position.get_values() == (lane,)
        ):
            return None
        value = extract.vector
    load = value.owner
    kinds = {memref.StoreOp: memref.LoadOp, kernel.VectorStoreOp: kernel.VectorLoadOp}
    if not isinstance(load, kinds[type(store)]) or load.memref is not store.memref:
        return None
    if tuple(load.indices) != tuple(store.indices):
        return None
    if lane is not None and load.result.type != store.value.type:
        return None
    return load


def _new_values(
    store: memref.StoreOp | kernel.VectorStoreOp,
) -> tuple[SSAValue, bool, list[SSAValue], Operation] | None:
    """(condition, whether the store keeps the old value where it holds, each lane's new
    value, the load of the old) of a store of `select(condition, new, old)` (or of
    `select(condition, old, new)`), old loaded from the store's own place."""
    vector = isinstance(store, kernel.VectorStoreOp)
    width = store.value.type.get_shape()[0] if vector else None
    lanes = [store.value] if width is None else _lanes(store.value, width)
    if lanes is None:
        return None
    condition, keeps_where_true, new, loads = None, None, [], set()
    for lane, value in enumerate(lanes):
        select = value.owner
        if not isinstance(select, arith.SelectOp):
            return None
        if condition not in (None, select.cond):
            return None
        condition = select.cond
        at = None if width is None else lane
        for old, fresh, keeps in (
            (select.rhs, select.lhs, False),
            (select.lhs, select.rhs, True),
        ):
            load = _loaded_lane(old, store, at)
            if load is not None and keeps_where_true in (None, keeps):
                keeps_where_true = keeps
                new.append(fresh)
                loads.add(load)
                break
        else:
            return None
    if len(loads) != 1 or condition is None or keeps_where_true is None:
        return None
    return condition, keeps_where_true, new, loads.pop()


def _parameter(buffer: SSAValue) -> bool:
    return isinstance(buffer, BlockArgument) and isinstance(buffer.owner.parent_op(), kernel.FuncOp)


def _writes_between(first: Operation, last: Operation, buffer: SSAValue | None = None) -> bool:
    """Whether an op after `first` and before `last` (in their block) writes memory: any,
    or where `buffer` is a kernel parameter, `buffer` or a buffer that is not another
    parameter (a launch passes each written parameter a buffer of its own: kernel.launch's
    verifier)."""
    op = first.next_op
    while op is not None and op is not last:
        written = written_values(op)
        if buffer is None or not _parameter(buffer):
            if written:
                return True
        elif any(w is buffer or not _parameter(w) for w in written):
            return True
        op = op.next_op
    return False


def _sink_into(block: Block, branch: scf.IfOp, rewriter: PatternRewriter) -> None:
    """Moves into `block` (a region of `branch`) each op before `branch` whose results only
    ops in `block` use: ops without regions that write nothing and read no buffer that an
    op between them and the branch writes."""
    op = branch.prev_op
    while op is not None:
        earlier = op.prev_op
        used_inside = all(
            branch.is_ancestor(use.operation) and use.operation is not branch
            for result in op.results
            for use in result.uses
        )
        movable = (
            op.results
            and not op.regions
            and not isinstance(op, arith.ConstantOp)
            and not written_values(op)
        )
        if movable and used_inside and not (read_values(op) and _writes_between(op, branch)):
            op.detach()
            rewriter.insert(op, InsertPoint.at_start(block))
        op = earlier


class PredicateWriteBack(RewritePattern):
    """A store of `select(c, new, old)`, `old` loaded from the store's place with no write
    between, becomes `scf.if c { store new }` (the store in the else branch where `old` is
    the select's true value)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.StoreOp | kernel.VectorStoreOp, rewriter: PatternRewriter
    ) -> None:
        found = _new_values(op)
        if found is None:
            return
        condition, keeps_where_true, new, load = found
        if load.parent is not op.parent or not load.is_before_in_block(op):
            return
        if _writes_between(load, op, op.memref):
            return
        built: list[Operation] = []
        if isinstance(op, kernel.VectorStoreOp):
            value = vector_dialect.BroadcastOp(new[0], op.value.type)
            built.append(value)
            for lane, scalar in enumerate(new[1:], 1):
                if scalar is not new[0]:
                    built.append(vector_dialect.InsertOp(scalar, built[-1].results[0], [lane]))
            stored = kernel.VectorStoreOp(built[-1].results[0], op.memref, op.indices)
        else:
            stored = memref.StoreOp.get(new[0], op.memref, op.indices)
        store_block = Block([*built, stored, scf.YieldOp()])
        regions = [Region(Block([scf.YieldOp()])), Region(store_block)]
        if not keeps_where_true:
            regions.reverse()
        branch = scf.IfOp(condition, [], *regions)
        rewriter.replace(op, branch)
        # The old value's selects, lanes and load, dead now, would keep the new value's ops
        # from moving into the branch.
        earlier = branch.prev_op
        while earlier is not None:
            before = earlier.prev_op
            if is_trivially_dead(earlier):
                rewriter.erase(earlier)
            earlier = before
        _sink_into(store_block, branch, rewriter)


@dataclass(frozen=True)
class PredicateWriteBacksPass(ModulePass):
    """Stores each value that a select keeps as loaded from the store's own place only where
    the select takes the other (see the module docstring)."""

    name = "predicate-write-backs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(PredicateWriteBack()).rewrite_module(op)
