"""`fuse-prims`: groups the prim ops of each host `func.func` into `fused.kernel`s.

After the pass a host function holds only `fused.kernel` ops, dense `prim.constant`s (they
stay on the host as buffers, which kernels take as inputs) and its `func.return`. Prim ops
whose results are never used are dropped first, and a splat `prim.constant` becomes the
`prim.map` without inputs that computes it, as decompose-torch makes a splat `torch.constant`:
it fuses into the kernels that read it, where a host buffer would hold every element.

Ops fall into three classes, by the `prim.FusionClass` trait each declares (an op that declares
none is an error):
- *cheap*: `Elementwise` (`prim.map`, `prim.iota`), `View` (`prim.broadcast`,
  `prim.permute`, `prim.reshape`, `prim.slice`, `prim.gather`) and `Concatenation`
  (`prim.concat`). An element of a cheap op costs only loads of its inputs' elements, so a
  cheap op is copied into every kernel that needs its value (for one of the kernel's ops or as
  one of the kernel's results), and its inputs are computed in that kernel or loaded from the
  kernel's inputs; it is materialized for other kernels only as the end of an epilogue
  (below). Which dims of an input an element is read at comes from the view's index map;
- *expensive*: `Reduction` (`prim.reduce`) and `Contraction` (`prim.contract`), which loop
  over the axes they fold. Each one is computed in exactly one kernel, its *group*'s;
- *host*: `HostConstant` (`prim.constant`).

The *producers* of an op are the expensive ops its operands reach through cheap ops alone.
`lower-fused-to-loop` computes a value where it is read, once per index it is read at (hoisted
out of the loops its index does not depend on), so the rule below keeps every expensive op of
a kernel outside the folding loops of the other expensive ops of that kernel; each element of
an expensive value is then computed once per place the kernel reads it, given a loop order
that puts the dims it depends on outermost.

Grouping, over the expensive ops in program order:
1. A contraction starts its own kernel, which holds no other expensive op: its operands
   are kernel inputs or views and casts of them (a transpose as a layout, a widening cast),
   and a reduction or contraction that consumes it (through cheap ops) is in another kernel
   and reads it from memory. An operand that cheap ops compute with arithmetic (an RMSNorm's
   scaling of the rows a projection reads, a rotation), or whose views spread the reduction
   dim over several dims of what they view (attention's output transposed and merged to
   [B * S, H * D] for the output projection), is materialized for it, below its casts, by
   another kernel: one of the operand's producers that is not a contraction (the
   norm's reduction kernel writes the normalized rows), else an elementwise kernel of its
   own. Its result feeds an elementwise epilogue (bias, activation, residual add, dtype
   rounding) in its own kernel.
   *Siblings* share a kernel, the one exception: `prim.contract`s that read the same lhs
   (one value through the same views and casts) and rhs of one type through the same views
   and casts (the same shape and layout, so the same N and K: SwiGLU's gate and up, or
   q/k/v projections of equal widths). `loop.contract` then multiplies the lhs by each rhs
   and hands the epilogue one accumulator per rhs, which pairs them in registers (`silu(g)
   * u`) or stores each to its own output. A contraction joins the kernel of the first
   earlier sibling whose kernel it would not make depend on itself in a cycle. It applies
   only where each sibling's value, and every `prim.map` computed from it, is read by maps,
   contractions and the host's return alone (`_read_elementwise`): the epilogue of every
   sibling then lies over the products' common [.., M, N] space. Not where a view reads one
   (q reshaped to heads: the stored value would take the view's shape, which the siblings
   need not share, and the kernel's outputs then no one space), nor where a reduction does
   (a norm of a projection: that sibling is stored whole for the reduction's kernel anyway,
   so the kernel of siblings would save only the shared lhs's loads; kept out, the rule is
   that siblings meet only in elementwise epilogues), nor between products of different N
   or K or rhs layouts, nor for `prim.attention`.
   A `prim.attention` (`fuse-attention` makes it) is a contraction whose kernel holds it
   alone: each operand that cheap ops compute, views included, is materialized for it (it
   reads row-major buffers; operands of one shape that no producer's kernel is free to
   compute, such as rotated q and k, by one elementwise kernel), its value is materialized
   as it is, without an epilogue, and a returned value computed from it is computed by
   another kernel.
2. A reduction R may share a kernel with a producer P only if P is a reduce whose value is
   constant along R's folded axes (of size > 1) on every cheap path from P to R's input: P is
   a statistic that R's input reads broadcast, as in softmax's max -> exp -> sum and
   LayerNorm's mean -> variance. R joins the kernels of all such producers (merging them),
   unless a kernel holds a producer that R may not share one with (which R then reads from
   memory). Merging keeps every pair of producer and consumer in a merged kernel legal by
   this rule, and it is refused where it would make kernels depend on each other in a
   cycle; then R joins as many of those kernels as it can, the most recent first, or starts
   its own.
3. The kernels of the remaining producers of an op (values it reads from memory) merge with
   each other under the same conditions, so that they are computed by one kernel where
   possible (sibling reductions).

Results: a value that an op of another kernel reads, or that the function returns, is a
result of the kernel that computes it (materialized: computed once, then loaded by the
others). Cheap ops are not materialized for other kernels, except as an epilogue: the value of
an expensive op is materialized past the chain of cheap ops that each are the only user of the
value before them and keep or shrink its number of elements (a linear's bias, activation and
residual add; an RMSNorm's `rsqrt` of its row statistic), so the kernels that read it load the
finished value; a permute ends the chain where the product's rows and columns, split
into whole digits, no longer name the output's dims, or its last dim no longer runs along the
columns (a projection split into heads and transposed to [B, H, S, D] stores it so; see
`_cuts_product`); a cast to wider elements ends the chain (the value is stored narrow and its
readers widen it as they load it, so a product's 16-bit operand stays one that tensor cores
take). What else the chain reads, the expensive op's kernel reads too (the residual
stream, materialized by the kernel before), unless that would make kernels depend on each
other in a cycle, which ends the chain. A broadcast back to full shape ends it too: a row
statistic is materialized as a row statistic, and a kernel reading it recomputes the
normalization in its prologue. So a value that reaches back over many layers through cheap ops
alone is cut wherever it passes an expensive op's epilogue.

A returned cheap value is computed by one kernel: with producers, by the kernel of one of them
(their kernels merged where they may be; otherwise one that none of the others reads from,
which reads their results: a contraction's, as its epilogue, else the latest); without
producers, by the first reduction kernel that computes it anyway, else by a
kernel of elementwise ops of its own, shared with the other such returned values whose ops or
inputs overlap with its own. Kernels are placed in the host function so that each comes after
the kernels it reads from, the one with the earliest op in the source first.

Kernel names say where they came from: `k_` followed by the distinct `NameLoc` descriptions
(`decompose-torch` names each prim op for the torch op it came from) of the kernel's ops, the
contractions and reductions first, then the others, each in program order, at most three,
joined by `_`; an op without a `NameLoc` contributes its kind (`map`, `reduce`, `contract`,
...). Characters other than letters, digits and `_` become `_`. So a normalization is
`k_rms_norm`, a linear layer with its activation `k_linear_silu`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import CallSiteLoc, FusedLoc, ModuleOp, NameLoc
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

from emmy.dialects import dense, fused, prim
from emmy.dialects.dtypes import element_bytes
from emmy.passes.lower_fused_to_loop import reads_reduction_in_place, stores_in_place

MAX_NAME_PARTS = 3
CHEAP_CLASSES = (prim.Elementwise, prim.View, prim.Concatenation)
EXPENSIVE_CLASSES = (prim.Reduction, prim.Contraction)


def is_cheap(op: Operation | Block) -> bool:
    """Whether `op` (the owner of a value: a block for an argument) is a cheap op."""
    return isinstance(op, Operation) and isinstance(prim.fusion_class(op), CHEAP_CLASSES)


def is_expensive(op: Operation | Block) -> bool:
    return isinstance(op, Operation) and isinstance(prim.fusion_class(op), EXPENSIVE_CLASSES)


def is_contraction(op: Operation) -> bool:
    return isinstance(prim.fusion_class(op), prim.Contraction)


def is_reduction(op: Operation) -> bool:
    return isinstance(prim.fusion_class(op), prim.Reduction)


def is_host_constant(op: Operation) -> bool:
    return isinstance(prim.fusion_class(op), prim.HostConstant)


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape())


def _widens(op: Operation) -> bool:
    """Whether `op` is a map of one value to wider elements (a cast such as bf16 -> f32)."""
    if not isinstance(op, prim.MapOp) or len(op.inputs) != 1:
        return False
    source = op.inputs[0].type.get_element_type()
    return element_bytes(op.result.type.get_element_type()) > element_bytes(source)


def _cuts_product(op: Operation, views: Sequence[Operation]) -> bool:
    """Whether `views`, the views on the way from contraction `op` to its epilogue's end (the
    last a permute), have split the product's dims by a reshape into other than whole digits
    of its rows and columns, or into an order whose last dim no longer runs along its columns
    (`stores_in_place`): the output's dims then no longer name the product's rows and columns
    (or its stores would scatter), so the epilogue stops before the permute (the product is
    stored in its own layout, which its readers view permuted). A projection split into heads
    and transposed ([B*S, H*D] -> [B, H, S, D]) is stored transposed."""
    if not is_contraction(op) or len(_shape(views[-1].operands[0])) == len(_shape(op.results[0])):
        return False
    in_digits = all(isinstance(v, prim.PermuteOp | prim.ReshapeOp) for v in views)
    return not (in_digits and stores_in_place(_shape(op.results[0]), views))


def _is_cast(op: Operation) -> bool:
    """Whether `op` is a map of one value that only converts its elements' type."""
    if not isinstance(op, prim.MapOp) or len(op.inputs) != 1:
        return False
    body = [o for o in op.body.block.ops if not isinstance(o, prim.YieldOp)]
    return len(body) == 1 and isinstance(body[0], arith.ExtFOp | arith.TruncFOp)


def _widening_cast(op: Operation) -> bool:
    return _is_cast(op) and _widens(op)


def staged_operand(operand: SSAValue, reduction_dim: int) -> SSAValue | None:
    """The value a contraction's operand must be read from memory as, if it is computed by
    more than a layout of loaded values: the operand below its trailing widening casts, when
    the cheap ops that make it do arithmetic (a normalization's scaling, a rotation), not
    only views and casts, or when its views read the reduction dim (`reduction_dim` of the
    operand) across several dims (`reads_reduction_in_place`: attention's output transposed
    and merged back to [B * S, H * D] for the output projection). A tile of tensor cores
    reads its operands' tiles from memory, each many times, and takes them in the narrow type
    they are stored in: a computed value rounded to 16 bits (attention's probabilities) is
    staged rounded."""
    value = operand
    while is_cheap(value.owner) and _widening_cast(value.owner):
        value = value.owner.inputs[0]
    if is_cheap(value.owner) and not reads_reduction_in_place(value, reduction_dim):
        return value
    stack, seen = [value], set()
    while stack:
        current = stack.pop()
        owner = current.owner
        if current in seen or not is_cheap(owner):
            continue
        seen.add(current)
        if not (isinstance(prim.fusion_class(owner), prim.View) or _is_cast(owner)):
            return value
        stack.extend(owner.operands)
    return None


def _layout(value: SSAValue, below: SSAValue | None = None) -> tuple[SSAValue, tuple]:
    """The value below the views and casts of one input that `value` is read through (down
    to `below` at most), and those ops' kinds, properties and types, outermost first: two
    operands of equal layouts over one value are the same operand."""
    layout = []
    while value is not below and is_cheap(value.owner) and len(value.owner.operands) == 1:
        owner = value.owner
        if not (isinstance(prim.fusion_class(owner), prim.View) or _is_cast(owner)):
            break
        layout.append((owner.name, tuple(owner.properties.items()), value.type))
        value = owner.operands[0]
    return value, tuple(layout)


def _read_elementwise(value: SSAValue) -> bool:
    """Whether `value` and every `prim.map` computed from it are read only by maps,
    contractions and the host's return (no view, no reduction)."""
    stack, seen = [value], set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        for use in current.uses:
            user = use.operation
            if isinstance(user, prim.MapOp):
                stack.extend(user.results)
            elif not (isinstance(user, func.ReturnOp) or is_contraction(user)):
                return False
    return True


def _buffer_layout(operand: SSAValue, reduction_dim: int) -> tuple[SSAValue, tuple] | None:
    """`_layout` of a contraction operand that is a buffer read through views and casts: a
    value computed for the contraction (`staged_operand`: a normalization's rows, merged to
    [B * S, D] for a Linear on a 3-d input), or a kernel input; None for one that is
    neither."""
    staged = staged_operand(operand, reduction_dim)
    value, layout = _layout(operand, staged)
    if is_cheap(value.owner) and value is not staged:
        return None
    return value, layout


def sibling_key(op: Operation) -> tuple | None:
    """What a contraction's siblings share (see rule 1 of the module docstring): its lhs, the
    layout of its rhs and its result type; None where it takes no siblings."""
    if not isinstance(op, prim.ContractOp) or not _read_elementwise(op.result):
        return None
    lhs, rhs = _buffer_layout(op.lhs, -1), _buffer_layout(op.rhs, -2)
    if lhs is None or rhs is None:
        return None
    return (lhs, rhs[1], rhs[0].type, op.result.type)


# --- which dims of a value an index into it depends on ---------------------------------


Flags = tuple[bool, ...]
"""For each dim of a value: whether the index it is read at depends on a folded axis of the
consumer being analysed."""


def _masked(value: SSAValue, flags: Iterable[bool]) -> Flags:
    """Size-1 dims are read at index 0, whatever the consumer's index."""
    return tuple(f and n != 1 for f, n in zip(flags, _shape(value)))


@dataclass
class _Dependence:
    """The index algebra of a view's index map on flags: an index depends on a folded axis
    when anything it is computed from does. Reads of elements that make an index (a gather's
    row) are recorded in `reads`."""

    reads: list[tuple[SSAValue, Flags]] = field(default_factory=list)

    def constant(self, value: int) -> bool:
        return False

    def add(self, lhs: bool, rhs: bool) -> bool:
        return lhs or rhs

    def mul(self, lhs: bool, factor: int) -> bool:
        return lhs

    def div_mod(self, lhs: bool, divisor: int, modulus: int) -> bool:
        return lhs

    def index_at(self, value: SSAValue, index: Sequence[bool]) -> bool:
        self.reads.append((value, tuple(index)))
        return any(index)

    def one_element(self, index: bool) -> bool:
        return False


def _operand_flags(op: Operation, flags: Flags) -> list[tuple[SSAValue, Flags]]:
    """Each operand of a cheap op with the flags of the index it is read at, given the flags
    of the index its result is read at."""
    fusion = prim.fusion_class(op)
    if isinstance(fusion, prim.View):
        dependence = _Dependence()
        source, source_flags = fusion.index_map(op, flags, dependence)
        pairs = [*dependence.reads, (source, source_flags)]
    elif isinstance(fusion, prim.Concatenation):
        # A piece's index along the dim is the result's less the piece's offset.
        _, pieces = fusion.pieces(op)
        pairs = [(piece, flags) for piece in pieces]
    elif isinstance(fusion, prim.Elementwise):
        pairs = [(value, flags) for value in op.operands]
    else:
        raise AssertionError(f"not a cheap op: {op.name}")
    return [(value, _masked(value, f)) for value, f in pairs]


def producers(op: Operation) -> dict[Operation, bool]:
    """The expensive ops that `op`'s operands reach through cheap ops, each with whether a
    reduce `op` may share a kernel with it: the producer is a reduce read at an index that
    depends on none of `op`'s folded axes (of size > 1), on any path."""
    found: dict[Operation, bool] = {}
    seen: set[tuple[SSAValue, Flags]] = set()
    fusion = prim.fusion_class(op)
    if isinstance(fusion, prim.Reduction):
        values, axes = fusion.folded(op)
        stack = [
            (value, _masked(value, (d in axes for d in range(len(_shape(value))))))
            for value in values
        ]
    else:
        stack = [(value, _masked(value, [False] * len(_shape(value)))) for value in op.operands]
    while stack:
        value, flags = stack.pop()
        if (value, flags) in seen:
            continue
        seen.add((value, flags))
        owner = value.owner
        if is_expensive(owner):
            legal = is_reduction(op) and is_reduction(owner) and not any(flags)
            found[owner] = found.get(owner, True) and legal
        elif is_cheap(owner):
            stack.extend(_operand_flags(owner, flags))
    return found


def frontier(value: SSAValue) -> set[Operation]:
    """The expensive ops that `value` reaches through cheap ops (including itself)."""
    found: set[Operation] = set()
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        owner = value.owner
        if is_expensive(owner):
            found.add(owner)
        elif is_cheap(owner):
            stack.extend(owner.operands)
    return found


# --- kernel names ------------------------------------------------------------------------


def location_name(location: Attribute) -> str | None:
    """The description of the first `NameLoc` in a location, if it has one."""
    if isinstance(location, NameLoc):
        return location.desc.data
    if isinstance(location, FusedLoc):
        for inner in location.locations:
            if (name := location_name(inner)) is not None:
                return name
    if isinstance(location, CallSiteLoc):
        return location_name(location.callee)
    return None


def _name_part(op: Operation) -> str:
    name = location_name(op.location)
    if not name:
        name = op.name.removeprefix("prim.")
    return re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or op.name.removeprefix("prim.")


def kernel_name(ops: Sequence[Operation]) -> str:
    """`k_` and the distinct names of `ops` (in program order), expensive ops first, at most
    three of them."""
    parts: list[str] = []
    for op in (*(o for o in ops if is_expensive(o)), *(o for o in ops if not is_expensive(o))):
        part = _name_part(op)
        if part not in parts:
            parts.append(part)
    return "k_" + "_".join(parts[:MAX_NAME_PARTS])


# --- grouping ----------------------------------------------------------------------------


@dataclass(eq=False)
class _Group:
    """The ops of one future kernel: its expensive `members`, the values it yields, and what
    it computes (`cone`)."""

    members: list[Operation] = field(default_factory=list)
    roots: list[SSAValue] = field(default_factory=list)
    extra_deps: set[_Group] = field(default_factory=set)
    cone: set[Operation] = field(default_factory=set)
    inputs: set[SSAValue] = field(default_factory=set)

    @property
    def has_contraction(self) -> bool:
        return any(is_contraction(m) for m in self.members)

    @property
    def has_attention(self) -> bool:
        return any(isinstance(m, prim.AttentionOp) for m in self.members)


class _Fusion:
    """Groups the ops of one host block: see the module docstring."""

    def __init__(self, block: Block):
        self.block = block
        self.ops = [op for op in block.ops if op.dialect_name() == prim.Prim.name]
        self.position = {op: index for index, op in enumerate(block.ops)}
        self.group_of: dict[Operation, _Group] = {}
        self.groups: list[_Group] = []
        self.producers: dict[Operation, dict[Operation, bool]] = {}
        self.sunk: dict[SSAValue, _Group] = {}
        self.staged: dict[SSAValue, _Group] = {}
        """Contraction operands materialized for the contraction (`stage_contraction_operands`)."""
        self._deps: dict[_Group, set[_Group]] = {}
        self.sibling_keys: dict[Operation, tuple] = {}
        """The contractions that may take siblings, in program order, with their
        `sibling_key`."""

    # Dependencies between groups: the groups of the members' producers (an
    # over-approximation: a producer may be behind a value another kernel materializes) and
    # those added for results placed in a group. Cycle checks use them, so they err safe.

    def deps(self, group: _Group) -> set[_Group]:
        found = self._deps.get(group)
        if found is None:
            found = set(group.extra_deps)
            for member in group.members:
                found.update(self.group_of[p] for p in self.producers[member])
            found.discard(group)
            self._deps[group] = found
        return found

    def reaches(self, starts: Iterable[_Group], targets: set[_Group]) -> bool:
        """Whether a group in `targets` is one of `starts` or what they depend on."""
        seen: set[_Group] = set()
        stack = list(starts)
        while stack:
            group = stack.pop()
            if group in targets:
                return True
            if group in seen:
                continue
            seen.add(group)
            stack.extend(self.deps(group))
        return False

    def add_deps(self, group: _Group, deps: set[_Group]) -> None:
        group.extra_deps |= deps - {group}
        self._deps.clear()

    def recency(self, group: _Group) -> int:
        return max(self.position[m] for m in group.members)

    def can_merge(self, groups: set[_Group], new_op: Operation | None = None) -> bool:
        """Whether `groups` (and `new_op`) may form one kernel: at most one contraction and
        nothing else beside it, every producer and consumer in it legal, no cycle."""
        members = {m for g in groups for m in g.members}
        if new_op is not None:
            members.add(new_op)
        if len(members) > 1 and any(is_contraction(m) for m in members):
            return False
        for member in members:
            for producer, legal in self.producers[member].items():
                if producer in members and not legal:
                    return False
        outside = set().union(*(self.deps(g) for g in groups)) - groups
        if new_op is not None:
            outside |= {self.group_of[p] for p in self.producers[new_op]} - groups
        return not self.reaches(outside, groups)

    def merge(self, groups: Iterable[_Group]) -> _Group:
        self._deps.clear()
        groups = sorted(groups, key=lambda g: self.position[g.members[0]])
        target, *rest = groups
        for group in rest:
            target.members.extend(group.members)
            target.roots.extend(group.roots)
            target.extra_deps |= group.extra_deps
            for member in group.members:
                self.group_of[member] = target
            self.groups.remove(group)
        target.members.sort(key=self.position.__getitem__)
        for group in self.groups:
            if group.extra_deps & set(rest):
                group.extra_deps = (group.extra_deps - set(rest)) | {target}
        target.extra_deps.discard(target)
        return target

    def greedy_merge(self, candidates: set[_Group], new_op: Operation | None = None) -> set[_Group]:
        """The largest set of `candidates` found greedily (the most recent first) that may
        form one kernel with `new_op`; all of them when they may."""
        if self.can_merge(candidates, new_op):
            return candidates
        chosen: set[_Group] = set()
        for group in sorted(candidates, key=self.recency, reverse=True):
            if self.can_merge(chosen | {group}, new_op):
                chosen.add(group)
        return chosen

    def new_group(self, members: list[Operation]) -> _Group:
        self._deps.clear()
        group = _Group(members=list(members))
        for member in members:
            self.group_of[member] = group
        self.groups.append(group)
        return group

    def merge_siblings(self, groups: set[_Group]) -> None:
        """Merges what it can of `groups` (a contraction's group merges with none)."""
        groups = {g for g in groups if g in self.groups and not g.has_contraction}
        while len(groups) > 1:
            chosen = self.greedy_merge(groups)
            if len(chosen) > 1:
                self.merge(chosen)
            groups -= chosen or groups

    def sibling_group(self, op: Operation, key: tuple | None) -> _Group | None:
        """The kernel of the first earlier sibling of contraction `op` that it may join: one
        whose kernel does not compute what `op` reads."""
        if key is None:
            return None
        reads = {self.group_of[p] for p in self.producers[op]}
        for other, other_key in self.sibling_keys.items():
            group = self.group_of[other]
            if other_key == key and not self.reaches(reads, {group}):
                return group
        return None

    def group_expensive_ops(self) -> None:
        for op in self.ops:
            if not is_expensive(op):
                continue
            self.producers[op] = producers(op)
            if is_contraction(op):
                key = sibling_key(op)
                sibling = self.sibling_group(op, key)
                if key is not None:
                    self.sibling_keys[op] = key
                if sibling is not None:
                    sibling.members.append(op)
                    self.group_of[op] = sibling
                    self._deps.clear()
                    continue
            legal = {p for p, ok in self.producers[op].items() if ok}
            illegal = {p for p, ok in self.producers[op].items() if not ok}
            blocked = {self.group_of[p] for p in illegal}
            candidates = {self.group_of[p] for p in legal} - blocked
            chosen: set[_Group] = set()
            if is_reduction(op) and candidates:
                chosen = self.greedy_merge(candidates, op)
            if chosen:
                group = self.merge(chosen)
                group.members.append(op)
                self._deps.clear()
                self.group_of[op] = group
            else:
                self.new_group([op])
            self.merge_siblings(
                {self.group_of[p] for p in self.producers[op]} - {self.group_of[op]}
            )

    # Cones: what each group computes.

    def cone(
        self, values: Iterable[SSAValue], group: _Group | None
    ) -> tuple[set[Operation], set[SSAValue]]:
        """The ops computing `values` in `group`'s kernel and the values it loads: host
        values, and what other kernels materialize."""
        ops: set[Operation] = set()
        inputs: set[SSAValue] = set()
        stack = list(values)
        seen: set[SSAValue] = set()
        while stack:
            value = stack.pop()
            if value in seen:
                continue
            seen.add(value)
            owner = value.owner
            if value in self.sunk and self.sunk[value] is not group:
                inputs.add(value)
            elif is_cheap(owner) or (
                is_expensive(owner) and group is not None and self.group_of[owner] is group
            ):
                ops.add(owner)
                stack.extend(owner.operands)
            else:
                inputs.add(value)
        return ops, inputs

    def sink(self, op: Operation, value: SSAValue) -> SSAValue:
        """Where `value`, a result of expensive `op`, is materialized if another kernel reads
        it: past the chain of cheap ops that are each the only user of the value before them
        and keep or shrink its number of elements (an epilogue). What else the chain reads, its
        kernel reads too, unless that would make kernels depend on each other in a cycle."""
        group = self.group_of[op]
        if isinstance(op, prim.AttentionOp):
            return value  # stored as it is: loop.attention has no epilogue
        views: list[Operation] = []
        while True:
            users = {use.operation for use in value.uses}
            if len(users) != 1:
                return value
            (user,) = users
            if (
                not is_cheap(user)
                or prod(_shape(user.results[0])) > prod(_shape(value))
                or _widens(user)
                or (isinstance(user, prim.PermuteOp) and _cuts_product(op, [*views, user]))
            ):
                return value
            reads = {
                self.group_of[p]
                for operand in user.operands
                if operand is not value
                for p in frontier(operand)
            } - {group}
            if reads and self.reaches(reads, {group}):
                return value
            self.add_deps(group, reads)
            if isinstance(prim.fusion_class(user), prim.View):
                views.append(user)
            value = user.results[0]

    def member_cone(self, group: _Group) -> set[Operation]:
        ops, _ = self.cone((v for m in group.members for v in m.operands), group)
        return ops | set(group.members)

    def place_returned(self, returned: Sequence[SSAValue]) -> None:
        elementwise: list[tuple[_Group, set[Operation], set[SSAValue]]] = []
        for value in returned:
            owner = value.owner
            if is_expensive(owner):
                self.add_root(self.group_of[owner], value)
            elif not is_cheap(owner):
                continue  # a function argument or a constant, returned as it is
            elif frontier(value):
                self.place_with_producers(value)
            else:
                # Only cheap ops and host values: a reduction kernel that computes it anyway,
                # or a kernel of elementwise ops shared with the values it overlaps with.
                computing = [
                    g for g in self.groups if not g.has_contraction and owner in self.member_cone(g)
                ]
                if computing:
                    self.add_root(computing[0], value)
                    continue
                ops, inputs = self.cone([value], None)
                group = _Group()
                for other, other_ops, other_inputs in list(elementwise):
                    if other_ops & ops or other_inputs & inputs:
                        group.roots.extend(other.roots)
                        ops, inputs = ops | other_ops, inputs | other_inputs
                        elementwise.remove((other, other_ops, other_inputs))
                self.add_root(group, value)
                elementwise.append((group, ops, inputs))
        self.groups.extend(group for group, _, _ in elementwise)

    def place_with_producers(self, value: SSAValue) -> None:
        """A returned cheap value goes to the kernel of one of its producers, their kernels
        merged where they may be; otherwise to one that none of the others reads from (it
        reads their results): a contraction's, as its epilogue, else the latest."""
        self.merge_siblings({self.group_of[p] for p in frontier(value)})
        sources = {self.group_of[p] for p in frontier(value)}
        free = [g for g in sources if not self.reaches(sources - {g}, {g}) and not g.has_attention]
        if not free:
            target = _Group()
            self.groups.append(target)
        else:
            target = max(free, key=lambda g: (g.has_contraction, self.recency(g)))
        self.add_deps(target, sources)
        self.add_root(target, value)

    def stage_contraction_operands(self) -> None:
        """Each contraction operand that `staged_operand` says is computed is materialized
        by a kernel other than a contraction's (whose epilogue sees only its own output
        elements): a kernel of the operand's producers that is free to compute it, else a
        kernel of elementwise ops of its own; the contraction's kernel then loads it."""
        for contraction in [op for op in self.ops if is_contraction(op)]:
            own: list[tuple[SSAValue, _Group]] = []
            for position, operand in enumerate(contraction.operands):
                if isinstance(contraction, prim.AttentionOp):
                    # loop.attention reads row-major buffers alone
                    value = operand if is_cheap(operand.owner) else None
                else:
                    value = staged_operand(operand, (-1, -2)[position])
                if value is None or value in self.staged:
                    continue
                sources = {self.group_of[p] for p in frontier(value)}
                free = [
                    g
                    for g in sources
                    if not g.has_contraction and not self.reaches(sources - {g}, {g})
                ]
                # Attention's operands of one shape that no producer computes (q and k
                # rotated) share one elementwise kernel: one launch instead of one each.
                shared = [
                    g
                    for v, g in own
                    if _shape(v) == _shape(value) and not self.reaches(sources, {g})
                ]
                if free:
                    group = max(free, key=self.recency)
                elif shared:
                    group = shared[0]
                else:
                    group = _Group()
                    self.groups.append(group)
                    own.append((value, group))
                self.add_deps(group, sources)
                self.add_root(group, value)
                self.staged[value] = group

    @staticmethod
    def add_root(group: _Group, value: SSAValue) -> None:
        if value not in group.roots:
            group.roots.append(value)

    def materialize(self) -> None:
        """Computes each group's cone; a value another group reads becomes a result of the
        group that computes it."""
        self.sunk = dict(self.staged)
        for group in self.groups:
            for member in group.members:
                for result in member.results:
                    self.sunk[self.sink(member, result)] = group
        # A returned value that is the end of an epilogue is a result of that kernel.
        for group in self.groups:
            for value in list(group.roots):
                owner = self.sunk.get(value)
                if owner is not None and owner is not group:
                    group.roots.remove(value)
                    self.add_root(owner, value)
        # A kernel made for a staged operand that an epilogue computes instead has no work.
        self.groups = [g for g in self.groups if g.members or g.roots]
        # A new result can widen its kernel's cone, which can read new values: to a fixpoint.
        changed = True
        while changed:
            changed = False
            for group in self.groups:
                values = [*group.roots, *(v for m in group.members for v in m.operands)]
                group.cone, group.inputs = self.cone(values, group)
                group.cone |= set(group.members)
            for group in self.groups:
                for value in group.inputs:
                    source = self.sunk.get(value)
                    if source is None and is_expensive(value.owner):
                        source = self.group_of[value.owner]
                    if source is not None and value not in source.roots:
                        source.roots.append(value)
                        changed = True

    def ordered_groups(self) -> list[_Group]:
        """Groups in dependency order, the one with the earliest op first among those ready."""
        source_of = {value: group for group in self.groups for value in group.roots}
        deps = {
            id(g): {source_of[v] for v in g.inputs if v in source_of} - {g} for g in self.groups
        }
        start = {id(g): min(self.position[o] for o in g.cone) for g in self.groups}
        ordered: list[_Group] = []
        remaining = list(self.groups)
        while remaining:
            ready = [g for g in remaining if all(d in ordered for d in deps[id(g)])]
            if not ready:
                raise PassFailedException("kernels depend on each other in a cycle")
            group = min(ready, key=lambda g: (start[id(g)], self.groups.index(g)))
            ordered.append(group)
            remaining.remove(group)
        return ordered


# --- rewriting the host function -----------------------------------------------------------


def _value_position(value: SSAValue, position: dict[Operation, int]) -> tuple[int, int]:
    if isinstance(value, BlockArgument):
        return (-1, value.index)
    return (position[value.owner], value.index)


def _build_kernel(
    group: _Group, position: dict[Operation, int], host_values: dict[SSAValue, SSAValue]
) -> fused.KernelOp:
    inputs = sorted(group.inputs, key=lambda v: _value_position(v, position))
    roots = sorted(group.roots, key=lambda v: _value_position(v, position))
    body = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for arg, value in zip(body.args, inputs):
        arg.name_hint = value.name_hint
        mapping[value] = arg
    ops = sorted(group.cone, key=position.__getitem__)
    for op in ops:
        body.add_op(op.clone(value_mapper=mapping))
    body.add_op(fused.YieldOp(*(mapping[v] for v in roots)))
    kernel = fused.KernelOp(
        kernel_name(ops),
        [host_values[v] for v in inputs],
        [v.type for v in roots],
        Region(body),
    )
    primary = next((op for op in ops if is_expensive(op)), ops[0])
    kernel.location = primary.location
    for result, value in zip(kernel.outputs, roots):
        result.name_hint = value.name_hint
        host_values[value] = result
    return kernel


def _check_host(function: func.FuncOp) -> bool:
    """Whether `function` has prim ops to fuse; fails on ops the pass does not know."""
    block = function.body.block
    work = False
    for op in block.ops:
        if is_host_constant(op) or isinstance(op, func.ReturnOp | fused.KernelOp):
            continue
        if is_cheap(op) or is_expensive(op):
            work = True
            continue
        if op.dialect_name() == prim.Prim.name:
            raise PassFailedException(
                f"'{op.name}' declares no fusion class (a prim.FusionClass trait), so "
                "fuse-prims cannot tell how its elements are made",
                op,
            )
        raise PassFailedException(
            f"'{op.name}' in host function @{function.sym_name.data}: a host "
            "function to fuse holds only prim ops and func.return",
            op,
        )
    if work and any(isinstance(op, fused.KernelOp) for op in block.ops):
        raise PassFailedException(
            f"host function @{function.sym_name.data} mixes fused.kernel ops with "
            "prim ops outside kernels",
            function,
        )
    return work


def _erase_dead_ops(block: Block) -> None:
    for op in reversed(list(block.ops)):
        if op.dialect_name() == prim.Prim.name and not any(r.uses for r in op.results):
            block.erase_op(op)


def fuse_function(function: func.FuncOp) -> None:
    if not function.body.blocks or not _check_host(function):
        return
    block = function.body.block
    _erase_dead_ops(block)
    for op in list(block.ops):
        if isinstance(op, prim.ConstantOp) and dense.is_splat(op.value, op.result.type):
            Rewriter.replace_op(op, op.splat_map())
    return_op = block.last_op
    assert isinstance(return_op, func.ReturnOp)
    fusion = _Fusion(block)
    fusion.group_expensive_ops()
    fusion.stage_contraction_operands()
    fusion.place_returned(list(return_op.arguments))
    fusion.materialize()
    groups = fusion.ordered_groups()

    position = fusion.position
    constants = [op for op in block.ops if is_host_constant(op)]
    host_values: dict[SSAValue, SSAValue] = {arg: arg for arg in block.args}
    for constant in constants:
        host_values[constant.result] = constant.result
    kernels = [_build_kernel(g, position, host_values) for g in groups]

    for constant in reversed(constants):  # constants first, in their order
        constant.detach()
        block.insert_op_before(constant, block.first_op)
    for kernel in kernels:
        block.insert_op_before(kernel, return_op)
    for index, value in enumerate(return_op.arguments):
        return_op.operands[index] = host_values.get(value, value)
    for op in reversed(list(block.ops)):
        if is_cheap(op) or is_expensive(op):
            block.erase_op(op)


@dataclass(frozen=True)
class FusePrimsPass(ModulePass):
    """Groups the prim ops of each host function into fused.kernels: see the module
    docstring for the fusion rule and the kernel names."""

    name = "fuse-prims"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(op.walk()):
            if isinstance(function, func.FuncOp):
                fuse_function(function)
