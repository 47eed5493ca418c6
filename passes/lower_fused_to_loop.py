"""`lower-fused-to-loop`: each `fused.kernel` becomes a `loop.kernel` and its launch.

The host function switches from value tensors to buffers: its arguments and results become
memrefs, every kernel result gets a `memref.alloc`, and each `fused.kernel` becomes a
`loop.launch` of a module-level `loop.kernel` that takes the input buffers, then the output
buffers.

Inside a kernel, outputs of one shape share one parallel loop nest over that shape. The
value stored at an output index is built by walking the prim graph backwards from the
yielded value, so producers are fused into their consumers and no intermediate tensor
becomes a buffer:
- a kernel input is a `loop.load` at the index;
- `prim.map` clones its scalar body onto the scalars of its inputs at the same index;
- a view (`prim.View`: broadcast, permute, reshape, slice, gather) is its input's element at
  the index its index map computes, with the index arithmetic built here (a broadcast reads
  its input at index 0 along expanded dims);
- `prim.reduce` becomes reduction `loop.for`s over the reduced axes (nested when several).

Every op is placed in the outermost loop where its operands exist, so a row reduction in an
RMSNorm lands in the row loop before the column loop instead of being recomputed per element,
and a value needed twice at the same index (softmax's row max) is computed once. A value that
depends only on an inner output dim is still recomputed for each outer index: loop order
follows the output's dims.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from emmy.dialects import fused, loop, prim
from emmy.dialects.combiner import combine, identity


def buffer_type(tensor_type: TensorType) -> MemRefType:
    return MemRefType(tensor_type.get_element_type(), tensor_type.get_shape())


@dataclass
class _Scope:
    """One level of the loop nest under construction.

    `anchor` is the child loop currently being filled: ops placed at this level go before it,
    so they are computed before the child runs. `known` memoizes what has been computed at
    this level, keyed by what was computed and at which index.
    """

    block: Block
    anchor: Operation | None = None
    known: dict[tuple, SSAValue] = field(default_factory=dict)

    def insert(self, op: Operation) -> None:
        if self.anchor is not None:
            self.block.insert_op_before(op, self.anchor)
        elif (last := self.block.last_op) is not None and isinstance(last, loop.YieldOp):
            self.block.insert_op_before(op, last)
        else:
            self.block.add_op(op)


class _KernelBodyBuilder:
    """Builds the loop nests of one kernel: see the module docstring."""

    def __init__(self, body: Block, inputs: dict[SSAValue, SSAValue], keep_unit_dims: bool):
        self.scopes = [_Scope(body)]
        self.inputs = inputs
        self.keep_unit_dims = keep_unit_dims
        self.depth: dict[SSAValue, int] = {}
        self._zero: SSAValue | None = None

    @property
    def zero(self) -> SSAValue:
        """Index 0, created on first use at the top of the kernel."""
        if self._zero is None:
            zero = arith.ConstantOp.from_int_and_width(0, IndexType())
            zero.result.name_hint = "c0"
            self._place(zero, 0)
            self._zero = zero.result
        return self._zero

    def _place(self, op: Operation, depth: int) -> None:
        self.scopes[depth].insert(op)
        for result in op.results:
            self.depth[result] = depth

    def _depth_of(self, values) -> int:
        return max((self.depth.get(v, 0) for v in values), default=0)

    def _memoized(self, key: tuple, depth: int, build) -> SSAValue:
        for scope in self.scopes[: depth + 1]:
            if key in scope.known:
                return scope.known[key]
        value = build()
        self.scopes[self.depth[value]].known[key] = value
        return value

    def _scalar_op(self, op: Operation) -> SSAValue:
        """Places a pure scalar op at the depth of its operands, reusing an identical one."""
        key = (
            op.name,
            tuple(op.operands),
            tuple(op.result_types),
            tuple(op.properties.items()),
            tuple(op.attributes.items()),
        )
        depth = self._depth_of(op.operands)

        def build() -> SSAValue:
            self._place(op, depth)
            return op.results[0]

        value = self._memoized(key, depth, build)
        if value is not op.results[0]:
            op.erase()
        return value

    def _open_loop(self, extent: int, name: str, reduction=None) -> loop.ForOp:
        """Opens a loop as the innermost scope; ops placed below go into its body."""
        parent = len(self.scopes) - 1
        for_op = loop.ForOp.empty(0, extent, reduction)
        self._place(for_op, parent)
        self.scopes[parent].anchor = for_op
        for_op.induction_var.name_hint = name
        self.depth[for_op.induction_var] = parent + 1
        self.scopes.append(_Scope(for_op.body.block))
        return for_op

    def _index_dim(self, extent: int, name: str) -> SSAValue:
        """The index along a dim: a new loop's induction variable, or 0 for a dropped
        size-1 dim."""
        if extent == 1 and not self.keep_unit_dims:
            return self.zero
        return self._open_loop(extent, name).induction_var

    def store_outputs(self, outputs: list[tuple[SSAValue, SSAValue]]) -> None:
        """One parallel loop nest over the shared shape of `outputs`, storing each one."""
        shape = outputs[0][0].type.get_shape()
        base = len(self.scopes)
        index = tuple(self._index_dim(n, f"i{d}") for d, n in enumerate(shape))
        for value, buffer in outputs:
            scalar = self.element(value, index)
            self.scopes[-1].insert(loop.StoreOp(scalar, buffer, index))
        del self.scopes[base:]
        self.scopes[-1].anchor = None

    def finish(self) -> None:
        # Index 0 also keys the memo for size-1 dims, so it may exist without a use.
        if self._zero is not None and not self._zero.uses:
            self.scopes[0].block.erase_op(self._zero.owner)

    def element(self, value: SSAValue, index: tuple[SSAValue, ...]) -> SSAValue:
        """The scalar `value[index]`, computed at the outermost possible loop level."""
        depth = self._depth_of(index)
        return self._memoized((value, index), depth, lambda: self._compute(value, index))

    def _compute(self, value: SSAValue, index: tuple[SSAValue, ...]) -> SSAValue:
        if value in self.inputs:
            load = loop.LoadOp(self.inputs[value], index)
            self._place(load, self._depth_of(index))
            return load.result
        op = value.owner
        fusion = prim.fusion_class(op)
        if isinstance(fusion, prim.View):
            source, source_index = fusion.index_map(op, index, self)
            return self.element(source, source_index)
        if isinstance(fusion, prim.Concatenation):
            return self._concat(op, index)
        lowering = self._LOWERINGS.get(type(op))
        if lowering is None:
            raise PassFailedException(
                f"cannot lower '{op.name}' inside a fused.kernel to loops", op
            )
        return lowering(self, op, index)

    # The index algebra (`prim.IndexAlgebra`) that views' index maps compute with, folded
    # where an operand is a constant 0 or 1 so that plain views print as plain indices.

    def constant(self, value: int) -> SSAValue:
        if value == 0:
            return self.zero
        return self._scalar_op(arith.ConstantOp.from_int_and_width(value, IndexType()))

    def add(self, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        if rhs is self.zero:
            return lhs
        if lhs is self.zero:
            return rhs
        return self._scalar_op(arith.AddiOp(lhs, rhs))

    def mul(self, lhs: SSAValue, factor: int) -> SSAValue:
        if factor == 1 or lhs is self.zero:
            return lhs
        return self._scalar_op(arith.MuliOp(lhs, self.constant(factor)))

    def div_mod(self, lhs: SSAValue, divisor: int, modulus: int) -> SSAValue:
        if lhs is self.zero:
            return self.zero
        if divisor != 1:
            lhs = self._scalar_op(arith.DivUIOp(lhs, self.constant(divisor)))
        if modulus == 0:
            return lhs
        return self._scalar_op(arith.RemUIOp(lhs, self.constant(modulus)))

    def index_at(self, value: SSAValue, index: Sequence[SSAValue]) -> SSAValue:
        element = self.element(value, tuple(index))
        return self._scalar_op(arith.IndexCastOp(element, IndexType()))

    def _map(self, op: prim.MapOp, index: tuple[SSAValue, ...]) -> SSAValue:
        mapping = {
            arg: self.element(value, index) for arg, value in zip(op.body.block.args, op.inputs)
        }
        *body_ops, terminator = op.body.block.ops
        for body_op in body_ops:
            (result,) = body_op.results
            mapping[result] = self._scalar_op(body_op.clone(value_mapper=mapping))
        return mapping[terminator.arguments[0]]

    def _concat(self, op: Operation, index: tuple[SSAValue, ...]) -> SSAValue:
        """Every piece is read at an index clamped into its bounds and the right one is
        selected, so no read goes out of bounds."""
        concatenation = prim.fusion_class(op)
        assert isinstance(concatenation, prim.Concatenation)
        d, pieces = concatenation.pieces(op)
        offsets, offset = [], 0
        for piece in pieces:
            offsets.append(offset)
            offset += piece.type.get_shape()[d]
        result = None
        for piece, start in reversed(list(zip(pieces, offsets))):
            size = piece.type.get_shape()[d]
            local = index[d]
            if start:
                local = self._scalar_op(arith.SubiOp(local, self.constant(start)))
                local = self._scalar_op(arith.MaxSIOp(local, self.zero))
            local = self._scalar_op(arith.MinSIOp(local, self.constant(size - 1)))
            value = self.element(piece, (*index[:d], local, *index[d + 1 :]))
            if result is None:
                result = value
                continue
            inside = self._scalar_op(arith.CmpiOp(index[d], self.constant(start + size), "ult"))
            result = self._scalar_op(arith.SelectOp(inside, value, result))
        return result

    def _iota(self, op: prim.IotaOp, index: tuple[SSAValue, ...]) -> SSAValue:
        position = index[op.dim.value.data]
        return self._scalar_op(arith.IndexCastOp(position, op.result.type.get_element_type()))

    def _reduce(self, op: prim.ReduceOp, index: tuple[SSAValue, ...]) -> SSAValue:
        shape = op.input.type.get_shape()
        axes = op.axis_list
        kept = iter(index)
        source_index: list[SSAValue] = []
        for d in range(len(shape)):
            if d in axes:
                if op.keepdim is not None:
                    next(kept)
                source_index.append(self.zero)
            else:
                source_index.append(next(kept))

        def contribution(reduction_index: list[SSAValue]) -> SSAValue:
            for d, position in zip(axes, reduction_index):
                source_index[d] = position
            return self.element(op.input, tuple(source_index))

        extents = [(shape[d], f"r{d}") for d in axes]
        return self._reduction(op.kind.data, op.init, extents, index, contribution)

    def _contract(self, op: prim.ContractOp, index: tuple[SSAValue, ...]) -> SSAValue:
        *batch, m, n = index
        extent = op.lhs.type.get_shape()[-1]
        element_type = op.result.type.get_element_type()

        def contribution(reduction_index: list[SSAValue]) -> SSAValue:
            (k,) = reduction_index
            lhs = self.element(op.lhs, (*batch, m, k))
            rhs = self.element(op.rhs, (*batch, k, n))
            product = arith.MulfOp if isinstance(element_type, AnyFloat) else arith.MuliOp
            return self._scalar_op(product(lhs, rhs))

        init = identity("add", element_type)
        return self._reduction("add", init, [(extent, "k")], index, contribution)

    def _reduction(self, kind, init, extents, index, contribution) -> SSAValue:
        """Nested reduction loops over `extents`, placed in the outermost loop where `index`
        exists (beside the deeper loops being built now); the outermost starts from `init`,
        inner ones from the combiner's identity."""
        home = self._depth_of(index)
        saved = self.scopes[home + 1 :]
        saved_anchor = self.scopes[home].anchor
        del self.scopes[home + 1 :]
        element_type = init.type
        loops: list[loop.ForOp] = []
        reduction_index: list[SSAValue] = []
        for extent, name in extents:
            if extent == 1 and not self.keep_unit_dims:
                reduction_index.append(self.zero)
                continue
            start = init if not loops else identity(kind, element_type)
            loops.append(self._open_loop(extent, name, (kind, start)))
            reduction_index.append(loops[-1].induction_var)
        result = contribution(reduction_index)
        for for_op in reversed(loops):
            for_op.body.block.erase_op(for_op.body.block.last_op)
            for_op.body.block.add_op(loop.YieldOp(result))
            result = for_op.accumulator[0]
            self.scopes.pop()
        if not loops and init != identity(kind, element_type):
            start = arith.ConstantOp(init)
            self._place(start, 0)
            result = self._scalar_op(combine(kind, start.result, result))
        self.scopes[home].anchor = saved_anchor
        self.scopes.extend(saved)
        return result

    _LOWERINGS = {
        prim.MapOp: _map,
        prim.IotaOp: _iota,
        prim.ReduceOp: _reduce,
        prim.ContractOp: _contract,
    }


def _unique_symbol(requested: str, taken: set[str]) -> str:
    """`requested`, or with the first numeric suffix that no other symbol has."""
    name, suffix = requested, 1
    while name in taken:
        name, suffix = f"{requested}_{suffix}", suffix + 1
    taken.add(name)
    return name


def _lower_kernel(
    op: fused.KernelOp,
    buffers: list[SSAValue],
    outputs: list[SSAValue],
    name: str,
    keep_unit_dims: bool,
) -> loop.KernelOp:
    types = [b.type for b in (*buffers, *outputs)]
    body = Block(arg_types=types)
    for arg, source in zip(body.args, op.body.block.args):
        arg.name_hint = source.name_hint
    out_args = body.args[len(buffers) :]
    for position, arg in enumerate(out_args):
        arg.name_hint = "out" if len(out_args) == 1 else f"out{position}"
    builder = _KernelBodyBuilder(body, dict(zip(op.body.block.args, body.args)), keep_unit_dims)
    terminator = op.body.block.last_op
    assert isinstance(terminator, fused.YieldOp)
    by_shape: dict[tuple[int, ...], list[tuple[SSAValue, SSAValue]]] = {}
    for value, buffer in zip(terminator.arguments, out_args):
        by_shape.setdefault(tuple(value.type.get_shape()), []).append((value, buffer))
    for group in by_shape.values():
        builder.store_outputs(group)
    builder.finish()
    kernel = loop.KernelOp(name, types, Region(body))
    kernel.location = op.location
    return kernel


def _lower_host(host: func.FuncOp, module: ModuleOp, taken: set[str], keep_unit_dims: bool):
    def converted(t):
        return buffer_type(t) if isinstance(t, TensorType) else t

    inputs = [converted(t) for t in host.function_type.inputs.data]
    outputs = [converted(t) for t in host.function_type.outputs.data]
    block = Block(arg_types=inputs)
    values: dict[SSAValue, SSAValue] = {}
    for old, new in zip(host.body.block.args, block.args):
        new.name_hint = old.name_hint
        values[old] = new
    for op in host.body.block.ops:
        if isinstance(op, func.ReturnOp):
            block.add_op(func.ReturnOp(*(values[v] for v in op.arguments)))
        elif isinstance(op, fused.KernelOp):
            allocs = [memref.AllocOp([], [], buffer_type(r.type)) for r in op.outputs]
            block.add_ops(allocs)
            for alloc, result in zip(allocs, op.outputs):
                alloc.memref.name_hint = result.name_hint
                values[result] = alloc.memref
            name = _unique_symbol(op.kernel_name.data, taken)
            buffers = [values[v] for v in op.inputs]
            outs = [a.memref for a in allocs]
            module.body.block.insert_op_before(
                _lower_kernel(op, buffers, outs, name, keep_unit_dims), host
            )
            block.add_op(loop.LaunchOp(name, [*buffers, *outs]))
        elif isinstance(op, prim.ConstantOp):
            name = _unique_symbol(op.result.name_hint or "cst", taken)
            constant = memref.GlobalOp.get(
                StringAttr(name), buffer_type(op.result.type), op.value, constant=UnitAttr()
            )
            module.body.block.insert_op_before(constant, host)
            get = memref.GetGlobalOp(name, buffer_type(op.result.type))
            get.memref.name_hint = op.result.name_hint
            block.add_op(get)
            values[op.result] = get.memref
        else:
            raise PassFailedException(
                f"'{op.name}' in host function @{host.sym_name.data}: a host function holds "
                "only fused.kernel launches, dense prim.constants and func.return at this level",
                op,
            )
    lowered = func.FuncOp(host.sym_name.data, (inputs, outputs), Region(block))
    lowered.location = host.location
    module.body.block.insert_op_before(lowered, host)
    module.body.block.erase_op(host, safe_erase=False)


@dataclass(frozen=True)
class LowerFusedToLoopPass(ModulePass):
    """Lowers each fused.kernel to a loop.kernel of loop nests over buffers, and its launch."""

    name = "lower-fused-to-loop"

    keep_unit_dims: bool = False
    """Give size-1 dims their own one-trip loop instead of indexing them at 0."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        taken = {
            o.sym_name.data
            for o in op.body.block.ops
            if isinstance(o, loop.KernelOp | memref.GlobalOp | func.FuncOp)
        }
        hosts = [f for f in op.body.block.ops if isinstance(f, func.FuncOp)]
        for host in hosts:
            _lower_host(host, op, taken, self.keep_unit_dims)
