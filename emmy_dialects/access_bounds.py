"""Buffer accesses proven in range where a kernel's loop bounds and buffer shapes are static: an
interval analysis of index expressions, which the kernel ops of the loop, tile and kernel
dialects run in their verifiers (`verify_access_bounds`).

    loop.kernel @k(%x: memref<64xf32>, %y: memref<128xf32>) {
      loop.for %j in 0 to 128 {
        %v = loop.load %x[%j] : memref<64xf32>
        // error: index %j of memref<64xf32> ranges over [0, 127], outside dimension 0 of size 64
        loop.store %v, %y[%j] : memref<128xf32>
      }
    }

Each integer value gets a `Span`: an interval and a congruence (`v = r mod m`, which keeps the
index of a vectorised loop aligned), from what bounds it: constants, the induction variables of
`loop.for`, `tile.for` and `scf.for` with their bounds, the epilogue indices of `loop.contract`
and `tile.gemm`, thread ids within the block shape and block ids within the grids the module
launches the kernel with, `arith` on these, and the conditions of the `scf.if` and
`arith.select` ops above an access (the guards of a lowered kernel's tails). Where an index
seems to reach outside, the analysis splits cases on each small leaf of its expression in turn
(`_index_span`), which recovers what intervals lose when one value reaches an index along two
paths. An access is refused only where its interval is known at both ends and reaches outside
the dimension; an index that anything unknown bounds (a loaded value, a scalar argument, a
launch the module does not hold) is accepted, so that no valid program is refused for what the
analysis does not see; but an unsigned minimum or remainder bounds even an unknown value by
its other operand (a loaded index clamped to a table's last row), and the CUDA printer checks
no index at run time that the analysis proves inside its dim (`proven_index_bounds`).

As in the C++ a kernel is printed as, where signed overflow is undefined, index arithmetic is
assumed not to wrap: an expression whose interval leaves its type's range is unknown. Index
constants themselves must fit the 64-bit index (they would wrap in the printed kernel). Besides
buffer elements, the accesses are the lanes of `vector.extract` and `vector.insert`, mbarrier
indices, and the first element of a TMA box's destination (or a TMA store's source) and of
each wgmma operand tile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from math import gcd
from typing import Any, NamedTuple

from xdsl.dialects import arith, func, memref, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    VectorType,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from emmy.dialects.dominance import VerifyExceptionAt
from emmy.dialects.dtypes import integer_range
from emmy.dialects.for_op import ForOpBase


@dataclass(frozen=True)
class Span:
    """The values an integer may take: `lo` to `hi` (None: unbounded), all congruent to
    `residue` modulo `modulus` (modulus 0: exactly `residue`; 1: no congruence known). Made by
    `span`, which keeps the bounds on the congruence; `lo > hi` is the empty span of a value
    that is never computed (in a loop that never runs, under a condition that never holds)."""

    lo: int | None
    hi: int | None
    modulus: int = 1
    residue: int = 0

    @property
    def empty(self) -> bool:
        return self.lo is not None and self.hi is not None and self.lo > self.hi

    @property
    def known(self) -> bool:
        return self.lo is not None and self.hi is not None

    @property
    def nonnegative(self) -> bool:
        return self.lo is not None and self.lo >= 0


EMPTY = Span(1, 0)
UNKNOWN = Span(None, None)


def span(lo: int | None, hi: int | None, modulus: int = 1, residue: int = 0) -> Span:
    """The values from `lo` to `hi` congruent to `residue` modulo `modulus`, with the bounds
    moved onto the congruence."""
    modulus = abs(modulus)
    if modulus == 0:
        inside = (lo is None or lo <= residue) and (hi is None or residue <= hi)
        return Span(residue, residue, 0, residue) if inside else EMPTY
    residue %= modulus
    if lo is not None:
        lo += (residue - lo) % modulus
    if hi is not None:
        hi -= (hi - residue) % modulus
    if lo is not None and hi is not None:
        if lo > hi:
            return EMPTY
        if lo == hi:
            return Span(lo, lo, 0, lo)
    return Span(lo, hi, modulus, residue if modulus > 1 else 0)


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _congruence_join(a: Span, b: Span) -> tuple[int, int]:
    return gcd(a.modulus, b.modulus, a.residue - b.residue), a.residue


def join(a: Span, b: Span) -> Span:
    """A value that is `a` or `b`."""
    if a.empty or b.empty:
        return b if a.empty else a
    lo = None if a.lo is None or b.lo is None else min(a.lo, b.lo)
    hi = None if a.hi is None or b.hi is None else max(a.hi, b.hi)
    return span(lo, hi, *_congruence_join(a, b))


def meet(a: Span, b: Span) -> Span:
    """A value that is both `a` and `b` (keeping the congruence of one of them)."""
    los = [x for x in (a.lo, b.lo) if x is not None]
    his = [x for x in (a.hi, b.hi) if x is not None]
    kept = b if a.modulus == 1 else a
    return span(max(los, default=None), min(his, default=None), kept.modulus, kept.residue)


def _add(a: Span, b: Span) -> Span:
    return span(
        _sum(a.lo, b.lo), _sum(a.hi, b.hi), gcd(a.modulus, b.modulus), a.residue + b.residue
    )


def _negate(a: Span) -> Span:
    return span(
        None if a.hi is None else -a.hi, None if a.lo is None else -a.lo, a.modulus, -a.residue
    )


def _subtract(a: Span, b: Span) -> Span:
    return _add(a, _negate(b))


def _multiply(a: Span, b: Span) -> Span:
    congruence = (
        gcd(a.modulus * b.modulus, a.modulus * b.residue, b.modulus * a.residue),
        a.residue * b.residue,
    )
    if a.known and b.known:
        products = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return span(min(products), max(products), *congruence)
    if a.nonnegative and b.nonnegative:
        return span(a.lo * b.lo, None, *congruence)
    return span(None, None, *congruence)


def _divide(a: Span, b: Span) -> Span:
    """Division of nonnegative values (where signed and unsigned agree)."""
    if not (a.nonnegative and b.nonnegative and b.lo >= 1):
        return UNKNOWN
    return span(0 if b.hi is None else a.lo // b.hi, None if a.hi is None else a.hi // b.lo)


def _remainder(a: Span, b: Span) -> Span:
    """Remainder of nonnegative values."""
    if not (a.nonnegative and b.nonnegative and b.lo >= 1):
        return UNKNOWN
    if a.hi is not None and a.hi < b.lo:
        return a
    his = [x for x in (a.hi, None if b.hi is None else b.hi - 1) if x is not None]
    divisor = b.residue if b.modulus == 0 else 1
    return span(0, min(his, default=None), gcd(a.modulus, divisor), a.residue)


def _minimum(a: Span, b: Span) -> Span:
    his = [x for x in (a.hi, b.hi) if x is not None]
    lo = None if a.lo is None or b.lo is None else min(a.lo, b.lo)
    return span(lo, min(his, default=None), *_congruence_join(a, b))


def _maximum(a: Span, b: Span) -> Span:
    return _negate(_minimum(_negate(a), _negate(b)))


def _unsigned(operation: Callable[[Span, Span], Span]) -> Callable[[Span, Span], Span]:
    """An unsigned op, which agrees with the signed one on nonnegative values."""

    def on_nonnegative(a: Span, b: Span) -> Span:
        return operation(a, b) if a.nonnegative and b.nonnegative else UNKNOWN

    return on_nonnegative


def _unsigned_remainder(a: Span, b: Span) -> Span:
    """`remui`: below a positive divisor whatever the dividend is."""
    if a.nonnegative or not (b.lo is not None and b.lo >= 1 and b.hi is not None):
        return _remainder(a, b)
    return span(0, b.hi - 1)


def _unsigned_minimum(a: Span, b: Span) -> Span:
    """`minui`: no larger, unsigned, than either operand, so within [0, hi] of one that is
    nonnegative whatever the other is (a loaded index clamped to a table's last entry)."""
    if a.nonnegative and b.nonnegative:
        return _minimum(a, b)
    bounded = [x.hi for x in (a, b) if x.nonnegative and x.hi is not None]
    return span(0, min(bounded)) if bounded else UNKNOWN


BINARY: dict[type[Operation], Callable[[Span, Span], Span]] = {
    arith.AddiOp: _add,
    arith.SubiOp: _subtract,
    arith.MuliOp: _multiply,
    arith.DivUIOp: _divide,
    arith.DivSIOp: _divide,
    arith.FloorDivSIOp: _divide,
    arith.RemUIOp: _unsigned_remainder,
    arith.RemSIOp: _remainder,
    arith.MinSIOp: _minimum,
    arith.MaxSIOp: _maximum,
    arith.MinUIOp: _unsigned_minimum,
    arith.MaxUIOp: _unsigned(_maximum),
}

# arith.cmpi predicates, by number.
EQ, NE, SLT, SLE, SGT, SGE, ULT, ULE, UGT, UGE = range(10)
NEGATED = {EQ: NE, NE: EQ, SLT: SGE, SLE: SGT, SGT: SLE, SGE: SLT, ULT: UGE, ULE: UGT}
NEGATED |= {UGT: ULE, UGE: ULT}
MIRRORED = {SGT: SLT, SGE: SLE, UGT: ULT, UGE: ULE}
"""`a > b` is `b < a`."""


def _is_integer(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, IndexType) or (isinstance(t, IntegerType) and t.width.data > 1)


def _within_type(value: SSAValue, found: Span) -> Span:
    """`found`, or unknown where it leaves the range of `value`'s type (it would wrap)."""
    values = integer_range(value.type)
    if (found.lo is not None and found.lo < values.start) or (
        found.hi is not None and found.hi >= values.stop
    ):
        return UNKNOWN
    return found


class Access(NamedTuple):
    """`count` consecutive elements along the last dimension of an array of `shape` (a buffer,
    a vector, mbarriers: `what`, for messages) from `indices` (SSA values or constant positions;
    a leading prefix of the dimensions for a staged row)."""

    what: Attribute
    shape: Sequence[int]
    indices: Sequence[SSAValue | int]
    count: int = 1

    @staticmethod
    def of(array: SSAValue, indices: Sequence[SSAValue | int], count: int = 1) -> list[Access]:
        """An access of a memref or vector `array`."""
        shaped = array.type
        if not isinstance(shaped, MemRefType | VectorType):
            return []
        return [Access(shaped, shaped.get_shape(), indices, count)]


@dataclass(frozen=True)
class _DialectFacts:
    """What the analysis reads from the ops of emmy's dialects."""

    accesses: dict[type[Operation], Callable[[Any], list[Access]]]
    thread_id: type[Operation]
    block_id: type[Operation]
    block_dim: type[Operation]
    grid_dim: type[Operation]
    launch: type[Operation]
    contract: type[Operation]
    gemm: type[Operation]


@cache
def _dialect_facts() -> _DialectFacts:
    # Imported here: the dialects import this module for their verifiers.
    from emmy.dialects import kernel, loop, tile

    def one(op: Any) -> list[Access]:
        return Access.of(op.memref, op.indices)

    def run(op: Any) -> list[Access]:
        return Access.of(op.memref, op.indices, op.width)

    def ldmatrix(op: kernel.LdmatrixOp) -> list[Access]:
        # Of an x1 or x2, lanes past the 8 or 16 that give rows give indices never read.
        return Access.of(op.memref, op.indices, op.row_elements) if op.matrices == 4 else []

    def cp_async(op: kernel.CpAsyncOp) -> list[Access]:
        return [
            *Access.of(op.destination, op.destination_indices, op.elements),
            *Access.of(op.source, op.source_indices, op.elements),
        ]

    def stage(op: tile.StageOp) -> list[Access]:
        return Access.of(op.buffer, op.indices)

    def lane(op: vector.ExtractOp | vector.InsertOp) -> list[Access]:
        array = op.vector if isinstance(op, vector.ExtractOp) else op.dest
        return Access.of(array, op.get_mixed_position())

    def mbarrier(op: Any) -> list[Access]:
        return [Access(op.barriers.type, (op.barriers.type.barriers,), (op.index,))]

    def tma_load(op: kernel.TmaLoadOp) -> list[Access]:
        # The box lands from the addressed element on; the emulator checks where it ends.
        return [*mbarrier(op), *Access.of(op.destination, op.destination_indices)]

    def tma_store(op: kernel.TmaStoreOp) -> list[Access]:
        # The box is read from the addressed element on; the emulator checks where it ends.
        return Access.of(op.source, op.source_indices)

    def wgmma(op: kernel.WgmmaOp) -> list[Access]:
        # The first element of each operand's tile; the emulator checks the rest.
        a = [] if op.a_in_registers else Access.of(op.a, op.a_indices)
        return [*a, *Access.of(op.b, op.b_indices)]

    accesses: dict[type[Operation], Callable[[Any], list[Access]]] = {
        loop.LoadOp: one,
        loop.StoreOp: one,
        memref.LoadOp: one,
        memref.StoreOp: one,
        kernel.AtomicOp: one,
        kernel.VectorLoadOp: run,
        kernel.VectorStoreOp: run,
        kernel.LdmatrixOp: ldmatrix,
        kernel.CpAsyncOp: cp_async,
        tile.StageOp: stage,
        vector.ExtractOp: lane,
        vector.InsertOp: lane,
        **dict.fromkeys(
            (
                kernel.MbarrierInitOp,
                kernel.MbarrierArriveOp,
                kernel.MbarrierArriveExpectTxOp,
                kernel.MbarrierWaitOp,
            ),
            mbarrier,
        ),
        kernel.TmaLoadOp: tma_load,
        kernel.TmaStoreOp: tma_store,
        kernel.WgmmaOp: wgmma,
    }
    return _DialectFacts(
        accesses,
        kernel.ThreadIdOp,
        kernel.BlockIdOp,
        kernel.BlockDimOp,
        kernel.GridDimOp,
        kernel.LaunchOp,
        loop.ContractOp,
        tile.GemmOp,
    )


@dataclass(frozen=True)
class _LaunchShape:
    """The block shape of a kernel.func and the grids its module launches it with (none: the
    grid is unknown)."""

    block: tuple[int, ...] = ()
    grids: tuple[tuple[int, ...], ...] = ()


def _launch_shape(kernel_op: Operation, facts: _DialectFacts) -> _LaunchShape:
    block = kernel_op.properties.get("block")
    if block is None or not hasattr(kernel_op, "block_shape"):
        return _LaunchShape()
    module, name = kernel_op.parent_op(), kernel_op.properties["sym_name"]
    grids = []
    if isinstance(module, ModuleOp):
        for host in module.body.block.ops:
            if isinstance(host, func.FuncOp):
                grids += [
                    launch.grid_shape
                    for launch in host.walk()
                    if isinstance(launch, facts.launch)
                    and launch.kernel.root_reference == name
                    and not launch.kernel.nested_references.data
                ]
    return _LaunchShape(kernel_op.block_shape, tuple(grids))


DEPTH_LIMIT = 100
"""Index expressions deeper than this are unknown (the analysis recurses along them)."""


class _Scope:
    """The spans of values at a place in a kernel, under the conditions that hold there."""

    def __init__(self, shape: _LaunchShape, facts: dict[SSAValue, Span], depth: list[int]):
        self.shape = shape
        self.facts = facts
        self.reachable = not any(s.empty for s in facts.values())
        self.depth = depth
        self.spans: dict[SSAValue, Span] = {}
        self.children: dict[tuple[SSAValue, bool], _Scope] = {}

    def span(self, value: SSAValue) -> Span:
        if value in self.spans:
            return self.spans[value]
        if not _is_integer(value) or self.depth[0] >= DEPTH_LIMIT:
            return UNKNOWN
        self.spans[value] = UNKNOWN  # a cycle (a use before its definition) is unknown
        self.depth[0] += 1
        try:
            found = _within_type(value, self._compute(value))
        finally:
            self.depth[0] -= 1
        if value in self.facts:
            found = meet(found, self.facts[value])
        self.spans[value] = found
        return found

    def assuming(self, condition: SSAValue, holds: bool) -> _Scope:
        """This scope where `condition` is `holds`."""
        key = (condition, holds)
        if key not in self.children:
            constraints: dict[SSAValue, Span] = {}
            self._constrain(condition, holds, constraints)
            self.children[key] = self.given(constraints) if constraints else self
        return self.children[key]

    def given(self, constraints: dict[SSAValue, Span]) -> _Scope:
        """This scope where each value of `constraints` is within its span."""
        facts = dict(self.facts)
        for value, constraint in constraints.items():
            facts[value] = meet(self.span(value), constraint)
        return _Scope(self.shape, facts, self.depth)

    def _constrain(self, condition: SSAValue, holds: bool, into: dict[SSAValue, Span]) -> None:
        """What `condition` being `holds` says of the values it compares."""

        def add(value: SSAValue, constraint: Span) -> None:
            into[value] = meet(into[value], constraint) if value in into else constraint

        op = condition.owner
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            if (op.value.value.data != 0) != holds:
                add(condition, EMPTY)
        elif isinstance(op, arith.AndIOp) and holds or isinstance(op, arith.OrIOp) and not holds:
            self._constrain(op.lhs, holds, into)
            self._constrain(op.rhs, holds, into)
        elif isinstance(op, arith.CmpiOp) and _is_integer(op.lhs):
            predicate = op.predicate.value.data
            predicate = predicate if holds else NEGATED[predicate]
            lhs, rhs = op.lhs, op.rhs
            if predicate in MIRRORED:
                predicate, lhs, rhs = MIRRORED[predicate], rhs, lhs
            left, right = self.span(lhs), self.span(rhs)
            if predicate == EQ:
                add(lhs, right)
                add(rhs, left)
            elif predicate == NE:
                for value, bounded, other in ((lhs, left, right), (rhs, right, left)):
                    # Not the end value of a range: the range without that end.
                    if other.modulus == 0 and other.residue in (bounded.lo, bounded.hi):
                        excluded = other.residue
                        add(
                            value,
                            span(excluded + 1, None)
                            if excluded == bounded.lo
                            else span(None, excluded - 1),
                        )
            elif predicate in (SLT, SLE):
                strict = int(predicate == SLT)
                add(lhs, span(None, _sum(right.hi, -strict)))
                add(rhs, span(_sum(left.lo, strict), None))
            elif predicate in (ULT, ULE) and right.nonnegative:
                # Below a nonnegative value as unsigned: nonnegative as signed, and below it.
                strict = int(predicate == ULT)
                add(lhs, span(0, _sum(right.hi, -strict)))
                add(rhs, span(max(left.lo or 0, 0) + strict, None))

    def _compute(self, value: SSAValue) -> Span:
        facts = _dialect_facts()
        if isinstance(value, BlockArgument):
            return self._argument(value, facts)
        op = value.owner
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return span(op.value.value.data, op.value.value.data, 0, op.value.value.data)
        if type(op) in BINARY:
            left, right = self.span(op.operands[0]), self.span(op.operands[1])
            return EMPTY if left.empty or right.empty else BINARY[type(op)](left, right)
        if isinstance(op, arith.SelectOp):
            chosen = [
                scope.span(operand) if scope.reachable else EMPTY
                for scope, operand in (
                    (self.assuming(op.cond, True), op.lhs),
                    (self.assuming(op.cond, False), op.rhs),
                )
            ]
            return join(*chosen)
        if isinstance(op, arith.IndexCastOp | arith.ExtSIOp | arith.TruncIOp):
            return self.span(op.input)
        if isinstance(op, arith.ExtUIOp):
            found = self.span(op.input)
            return (
                found if found.nonnegative else span(0, 2 * integer_range(op.input.type).stop - 1)
            )
        return self._launch_value(op, facts)

    def _launch_value(self, op: Any, facts: _DialectFacts) -> Span:
        """A thread id, block id, block or grid extent, from the launch shape."""
        ids = (facts.thread_id, facts.block_id, facts.block_dim, facts.grid_dim)
        if not isinstance(op, ids) or not self.shape.block:
            return UNKNOWN
        dimension = "xyz".index(op.dim)
        size = self.shape.block[dimension]
        extents = [grid[dimension] for grid in self.shape.grids]
        if isinstance(op, facts.thread_id):
            return span(0, size - 1)
        if isinstance(op, facts.block_dim):
            return span(size, size)
        if isinstance(op, facts.block_id):
            return span(0, max(extents) - 1 if extents else None)
        return span(min(extents, default=1), max(extents, default=None))

    def _argument(self, value: BlockArgument, facts: _DialectFacts) -> Span:
        owner = value.block.parent_op()
        if isinstance(owner, ForOpBase) and value is owner.induction_var:
            # A loop to the dynamic size has no bound known here.
            upper = None if owner.is_dynamic else owner.trip_count + owner.lower.data - 1
            return span(owner.lower.data, upper)
        if isinstance(owner, scf.ForOp) and value.index == 0:
            lower, upper, step = (self.span(v) for v in (owner.lb, owner.ub, owner.step))
            if lower.empty or upper.empty or step.empty:
                return EMPTY
            # i = lb, lb + step, ... while i < ub: the step keeps i above lb when nonnegative.
            return span(
                lower.lo if step.nonnegative else None,
                _sum(upper.hi, -1),
                gcd(lower.modulus, step.modulus, step.residue),
                lower.residue,
            )
        if isinstance(owner, facts.contract) and value.index < len(owner.parallel_extents):
            return _below_extent(owner.parallel_extents[value.index])
        if isinstance(owner, facts.gemm) and value.index < owner.batch_rank + 2:
            try:
                return _below_extent(owner.sizes()[value.index])
            except VerifyException:
                return UNKNOWN  # the tile.gemm's verifier reports its sizes
        return UNKNOWN


def _below_extent(extent: int) -> Span:
    """An index along a dim of `extent`: from 0, below it (unbounded for the dynamic size)."""
    return span(0, None if extent == DYNAMIC_INDEX else extent - 1)


SPLIT_LIMIT = 64
"""A leaf of an index expression with at most this many values may be split on (see
`_index_span`)."""


def _leaves(index: SSAValue) -> list[SSAValue]:
    """The values `index` is computed from that the analysis bounds without looking further
    (block arguments, thread and block ids), and the bounds of the scf.for loops among them."""
    leaves: list[SSAValue] = []
    seen: set[SSAValue] = set()
    pending = [index]
    while pending and len(seen) < 4 * DEPTH_LIMIT:
        value = pending.pop()
        if value in seen or not _is_integer(value):
            continue
        seen.add(value)
        if isinstance(value, BlockArgument):
            leaves.append(value)
            owner = value.block.parent_op()
            if isinstance(owner, scf.ForOp) and value.index == 0:
                pending += [owner.lb, owner.ub, owner.step]
        elif not value.owner.operands:
            leaves.append(value)
        else:
            pending += value.owner.operands
    return leaves


def _index_span(index: SSAValue, count: int, size: int, scope: _Scope) -> Span:
    """The span of `index` (of the first of `count` consecutive elements); where it reaches
    outside `size`, narrowed by case splits: one value of the expression may reach it through two
    paths (as a tile's first row does, and the rows it spans), which an interval analysis treats
    as independent, so with each small leaf fixed in turn to each of its values, the join of the
    cases is a span too."""

    def within(scope: _Scope) -> Span:
        found = scope.span(index)
        # A run of `count` starts at a multiple of `count` (see the kernel dialect).
        return meet(found, span(None, None, count, 0)) if count > 1 else found

    def outside(found: Span) -> bool:
        return found.known and (found.lo < 0 or found.hi + count - 1 >= size)

    found = within(scope)
    leaves = _leaves(index) if outside(found) else []
    for leaf in leaves:
        values = scope.span(leaf)
        if not values.known or values.modulus == 0:
            continue
        step = values.modulus
        if (values.hi - values.lo) // step >= SPLIT_LIMIT:
            continue
        cases = EMPTY
        for value in range(values.lo, values.hi + 1, step):
            case = scope.given({leaf: span(value, value)})
            if case.reachable:
                cases = join(cases, within(case))
        found = meet(found, cases)
        if not outside(found):
            break
    return found


def _out_of_range(access: Access, scope: _Scope) -> str | None:
    """Why `access` may reach outside its array, if the spans of its indices prove it can."""
    shape = access.shape
    for dimension, (index, size) in enumerate(zip(access.indices, shape)):
        if size < 0:
            continue
        count = access.count if dimension == len(shape) - 1 else 1
        if isinstance(index, int):
            found, name = span(index, index), "the position"
        else:
            found = _index_span(index, count, size, scope)
            name = f"index %{index.name_hint}" if index.name_hint else "the index"
        if found.empty:
            return None
        if not found.known:
            continue
        last = found.hi + count - 1
        if found.lo >= 0 and last < size:
            continue
        if count > 1:
            subject, verb = f"the {count} elements from {name}", ("are", "range over")
        else:
            subject, verb = name, ("is", "ranges over")
        values = f"{verb[0]} {last}" if found.lo == last else f"{verb[1]} [{found.lo}, {last}]"
        return f"{subject} of {access.what} {values}, outside dimension {dimension} of size {size}"
    return None


def _verify_index_constant(op: Operation) -> None:
    if (
        isinstance(op, arith.ConstantOp)
        and isinstance(op.value, IntegerAttr)
        and isinstance(op.value.type, IndexType)
    ):
        values = integer_range(IndexType())
        if op.value.value.data not in values:
            raise VerifyExceptionAt(
                f"index constant {op.value.value.data} does not fit the 64-bit index a kernel "
                f"computes in ({values.start} to {values.stop - 1})",
                op,
            )


def proven_index_bounds(kernel_op: Operation) -> Callable[[SSAValue, int], bool]:
    """A test of whether an index of `kernel_op`'s body is proven within [0, size), whatever
    the conditions it is computed under: what a printer needs no run-time check for."""
    root = _Scope(_launch_shape(kernel_op, _dialect_facts()), {}, [0])

    def within(index: SSAValue, size: int) -> bool:
        found = _index_span(index, 1, size, root)
        return found.known and found.lo >= 0 and found.hi < size

    return within


def verify_access_bounds(kernel_op: Operation) -> None:
    """Raises `VerifyExceptionAt` the first access of `kernel_op`'s body, in program order,
    that may reach outside its buffer (see the module docstring), or the first index constant
    that does not fit a 64-bit index."""
    facts = _dialect_facts()
    root = _Scope(_launch_shape(kernel_op, facts), {}, [0])
    # In program order: an op, then the ops of its regions, then the ops after it.
    stack: list[tuple[Operation, _Scope]] = [
        (op, root) for region in kernel_op.regions for block in region.blocks for op in block.ops
    ]
    stack.reverse()
    while stack:
        op, scope = stack.pop()
        _verify_index_constant(op)
        accessor = facts.accesses.get(type(op))
        for access in accessor(op) if accessor is not None else ():
            problem = _out_of_range(access, scope)
            if problem is not None:
                raise VerifyExceptionAt(problem, op)
        nested: list[tuple[Operation, _Scope]] = []
        for number, region in enumerate(op.regions):
            inner = scope
            if isinstance(op, scf.IfOp):
                inner = scope.assuming(op.cond, number == 0)
                if not inner.reachable:
                    continue
            nested += [(o, inner) for block in region.blocks for o in block.ops]
        stack += reversed(nested)
