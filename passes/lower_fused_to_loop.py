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
- `prim.reduce` becomes reduction `loop.for`s over the reduced axes (nested when several);
  `prim.multi_reduce` the same, the loops carrying one accumulator per input and a copy of
  its combiner region.
- `prim.scan` becomes, for each element, a reduction `loop.for` over the whole scanned dim
  whose contributions past the element's position are the combiner's identity: O(n) work
  per element, O(n^2) per row, but every element in parallel and no loop-carried value,
  which the loop dialect has no form for (`decompose-torch` blocks a long scan, so that
  its scans are short; a work-efficient scan is later).

Every op is placed in the outermost loop where its operands exist, so a row reduction in an
RMSNorm lands in the row loop before the column loop instead of being recomputed per element,
and a value needed twice at the same index (softmax's row max) is computed once. A value that
depends only on an inner output dim is still recomputed for each outer index: loop order
follows the output's dims.

A kernel around a matrix product stays structured: its outputs are stored by the epilogue
of one `loop.contract` over the outputs' shape (or a reshape of it), which reads the
product's operands in place, and whose accumulated value is the `prim.contract`'s element
at the epilogue's index (the epilogue is built as above, from the outputs backwards):

    %c = prim.contract %xf, %wt : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
    // with %xf = extf(%x), %wt = extf(permute(%w)), stored as %c + %bias, becomes
    loop.contract (%i0, %i1) in [16, 32], k in 64, %acc = sum %x[d0, k] * %w[d1, k] : ... {
      %b = loop.load %bias[%i1] : memref<32xf32>
      %r = arith.addf %acc, %b : f32
      loop.store %r, %out[%i0, %i1] : memref<16x32xf32>
    }

That takes all of these (`_structured_contraction`); otherwise the product is a scalar
reduction `loop.for` over k per output element, as any other reduction:
- the kernel holds one `prim.contract`, or several siblings (`fuse-prims`: one lhs, rhs of
  one shape and layout), each of which takes all of these with the outputs computed from it,
  in one space, at one lhs map and one rhs map: they become one loop.contract of several rhs,
  whose epilogue takes an accumulated value of each (`%acc0`, `%acc1`, ...);
- its outputs all have one shape (but see the permuted space below);
- an iteration space [batch.., m, n] in which the product's element that each output
  element reads is known: the outputs' shape, of rank >= 2, where the outputs read the
  product through elementwise ops and views at one element each (nn.Linear on a 3-d input:
  the input reshaped to [B*S, K], the product reshaped back to [B, S, N], and the space is
  [B, S, N]); or, where they read it through elementwise ops and reshapes only, so at the
  same row-major position, the product's own shape (a [B*S, K] input stored as [B, S, N]:
  the epilogue stores at the row-major position; a matrix-vector product) or the lhs
  input's with n in place of k (a [B, S, K] input whose product is stored as [B*S, N]);
  or, where each output reads it through elementwise ops, permutes and reshapes, one
  element per element, the product's own shape or the lhs input's, the epilogue storing
  each element where the views carry it (attention's [B, H, S, D] output transposed back
  and merged to [B*S, H*D]; a projection split into heads and transposed to [B, H, S, D],
  whose reshape splits the rows and columns into whole digits, `_DigitIndices`; outputs of
  any shapes). A product sliced or broadcast on the way to an output has none;
- in that space each operand is a kernel input read in place: through views that index it
  at iteration dims (permutes, broadcasts, reshapes that split or merge dims to match the
  space) and at most one elementwise `arith.extf` to the product's element type. Not a
  computed operand (the normalized input of a norm fused before a Linear, attention's
  softmax probabilities), a gather, a slice or a concatenation;
- the lhs is read along k and not n, the rhs along k and not m, each dim at most once.

Of the spaces that take the product, the one with the most rows (its m extent), then the
fewest dims: a decode step's [B, 1, N] output is one product of B rows, not B of one row.

A `?` dim (the program's dynamic size, `emmy.dialects.sizes`) is a loop to the kernel's size
argument, its last, which the host function reads off the first of its arguments with that
dim and passes to each launch of a kernel with `?` buffers, as it gives the `memref.alloc`
of each `?` buffer:

    %s0 = memref.dim %x, %c0 : memref<?x64xf32>
    %y = memref.alloc(%s0) : memref<?x64xf32>
    loop.launch @k(%x, %y, %s0) : memref<?x64xf32>, memref<?x64xf32>, index
    loop.kernel @k(%x: memref<?x64xf32>, %out: memref<?x64xf32>, %s0: index) {
      loop.for %i0 in 0 to %s0 { ... }

A view whose index arithmetic would multiply or divide by the dynamic size (a reshape that
merges it with another dim) is refused for now. A product stays structured where the dynamic
dim is one of its batch dims or m (tokens, a batch), its loop.contract's extent there the
kernel's size argument:

    loop.contract (%i0, %i1) in [%s0, 96], k in 64, %acc = sum %x[d0, k] * %w[d1, k]
        : memref<?x64xf32>, memref<96x64xf32> -> f32 { ... }

A dynamic n or k (attention's scores over the keys, their product with the values) is a
reduction loop per output element, as an unstructured product is: the tensor-core kernels
tile n and k at sizes they know, and a product whose n or k is the sequence is attention's,
which `fuse-attention` keeps whole.

A kernel of one `prim.attention` (on its inputs, yielding its value, as `fuse-prims` makes
it) becomes one `loop.attention` over the input buffers, storing into the output buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import PassFailedException

from emmy.dialects import dense, fused, loop, prim
from emmy.dialects.access import constant_index
from emmy.dialects.combiner import StateReduction, combine, copy_combiner, identity
from emmy.dialects.for_op import Reduction
from emmy.dialects.sizes import DynamicSize, is_dynamic


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

    def __init__(
        self,
        body: Block,
        inputs: dict[SSAValue, SSAValue],
        keep_unit_dims: bool,
        size: SSAValue | None,
    ):
        self.scopes = [_Scope(body)]
        self.size = size
        """The kernel's dynamic size argument, the bound of the loops over `?` dims."""
        self.inputs = inputs
        self.keep_unit_dims = keep_unit_dims
        self.depth: dict[SSAValue, int] = {}
        self.given: dict[SSAValue, SSAValue] = {}
        """Tensors whose element at every index read is a known scalar (a loop.contract's
        accumulated value)."""
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
        if extent == DYNAMIC_INDEX:
            assert self.size is not None, "a kernel with ? dims takes the dynamic size"
        upper = self.size if extent == DYNAMIC_INDEX and self.size is not None else extent
        for_op = loop.ForOp.empty(0, upper, reduction)
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

    def store_contraction(
        self, contraction: _StructuredContraction, outputs: list[tuple[SSAValue, SSAValue]]
    ) -> None:
        """One loop.contract whose epilogue stores every output (see the module docstring);
        ops that depend on no index go before it."""
        products = contraction.products
        shape = contraction.space
        accumulator_type = products[0].result.type.get_element_type()
        epilogue = loop.ContractOp.empty_epilogue(len(shape), accumulator_type, len(products))
        contract = loop.ContractOp(
            self.inputs[contraction.lhs],
            contraction.lhs_dims,
            [self.inputs[rhs] for rhs in contraction.rhs],
            contraction.rhs_dims,
            shape,
            products[0].lhs.type.get_shape()[-1],
            epilogue,
            self.size if is_dynamic(shape) else None,
        )
        self._place(contract, 0)
        self.scopes[0].anchor = contract
        for d, arg in enumerate(contract.indices):
            arg.name_hint = f"i{d}"
        for position, (product, accumulator) in enumerate(zip(products, contract.accumulators)):
            accumulator.name_hint = "acc" if len(products) == 1 else f"acc{position}"
            self.given[product.result] = accumulator
        for arg in epilogue.block.args:
            self.depth[arg] = 1
        self.scopes.append(_Scope(epilogue.block))
        for value, buffer in outputs:
            output_index = contraction.store_index(value, contract.indices, self)
            scalar = self.element(value, output_index)
            self.scopes[-1].insert(loop.StoreOp(scalar, buffer, output_index))
        del self.scopes[1:]
        self.scopes[0].anchor = None

    def finish(self) -> None:
        # Index 0 also keys the memo for size-1 dims, so it may exist without a use.
        if self._zero is not None and not self._zero.uses:
            self.scopes[0].block.erase_op(self._zero.owner)

    def element(self, value: SSAValue, index: tuple[SSAValue, ...]) -> SSAValue:
        """The scalar `value[index]`, computed at the outermost possible loop level. The
        elements it is computed from are computed first, depth first from a stack rather than
        by recursion, so that a chain of elementwise ops and views of any length lowers."""
        # What this call computed, whatever scope memoizes it in.
        computed: dict[tuple, SSAValue] = {}

        def known(key: tuple) -> SSAValue | None:
            if key in computed:
                return computed[key]
            for scope in self.scopes[: self._depth_of(key[1]) + 1]:
                if key in scope.known:
                    return scope.known[key]
            return None

        pending = [(value, index)]
        while pending:
            key = pending[-1]
            if known(key) is not None:
                pending.pop()
                continue
            missing = [read for read in self._read_elements(*key) if known(read) is None]
            if missing:
                pending.extend(reversed(missing))
                continue
            pending.pop()
            current, current_index = key
            computed[key] = self._memoized(
                key, self._depth_of(current_index), lambda: self._compute(current, current_index)
            )
        return computed.get((value, index)) or known((value, index))

    def _read_elements(
        self, value: SSAValue, index: tuple[SSAValue, ...]
    ) -> list[tuple[SSAValue, tuple[SSAValue, ...]]]:
        """The elements that computing `value[index]` reads of other values of the kernel,
        where the op that makes it is elementwise or a view (others read theirs as they
        build their loops)."""
        if value in self.given or value in self.inputs:
            return []
        op = value.owner
        fusion = prim.fusion_class(op)
        if isinstance(fusion, prim.View):
            source, source_index = fusion.index_map(op, index, self)
            return [(source, tuple(source_index))]
        if isinstance(op, prim.MapOp):
            return [(operand, index) for operand in op.inputs]
        return []

    def _compute(self, value: SSAValue, index: tuple[SSAValue, ...]) -> SSAValue:
        if value in self.given:
            return self.given[value]
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
        lowered = lowering(self, op, index)
        if isinstance(lowered, SSAValue):
            return lowered
        # An op of several results computes them together: the others are known now too.
        for result, scalar in zip(op.results, lowered):
            self.scopes[self.depth.get(scalar, 0)].known[(result, index)] = scalar
        return lowered[op.results.index(value)]

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
        whole = _rejoined(lhs, rhs) or _rejoined(rhs, lhs)
        return whole or self._scalar_op(arith.AddiOp(lhs, rhs))

    def mul(self, lhs: SSAValue, factor: int) -> SSAValue:
        if factor == 1 or lhs is self.zero:
            return lhs
        _refuse_dynamic_factor(factor)
        return self._scalar_op(arith.MuliOp(lhs, self.constant(factor)))

    def div_mod(self, lhs: SSAValue, divisor: int, modulus: int) -> SSAValue:
        if lhs is self.zero:
            return self.zero
        _refuse_dynamic_factor(divisor)
        _refuse_dynamic_factor(modulus)
        if divisor != 1:
            lhs = self._scalar_op(arith.DivUIOp(lhs, self.constant(divisor)))
        if modulus == 0:
            return lhs
        return self._scalar_op(arith.RemUIOp(lhs, self.constant(modulus)))

    def index_at(self, value: SSAValue, index: Sequence[SSAValue]) -> SSAValue:
        element = self.element(value, tuple(index))
        return self._scalar_op(arith.IndexCastOp(element, IndexType()))

    def one_element(self, index: SSAValue) -> SSAValue:
        return index

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
        (result,) = self._fold(op, [op.input], (op.kind.data, op.init), index)
        return result

    def _multi_reduce(self, op: prim.MultiReduceOp, index: tuple[SSAValue, ...]) -> list[SSAValue]:
        return self._fold(op, list(op.inputs), (op.init_values, op.combiner), index)

    def _fold(
        self,
        op: prim.ReduceOp | prim.MultiReduceOp,
        inputs: list[SSAValue],
        reduction: Reduction | StateReduction,
        index: tuple[SSAValue, ...],
    ) -> list[SSAValue]:
        """Reduction loops over the folded axes of `inputs`, whose elements at each
        iteration are what it contributes."""
        shape = inputs[0].type.get_shape()
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

        def contribution(reduction_index: list[SSAValue]) -> list[SSAValue]:
            for d, position in zip(axes, reduction_index):
                source_index[d] = position
            return [self.element(value, tuple(source_index)) for value in inputs]

        extents = [(shape[d], f"r{d}") for d in axes]
        return self._reduction(reduction, extents, index, contribution)

    def _scan(self, op: prim.ScanOp, index: tuple[SSAValue, ...]) -> SSAValue:
        d = op.dim.value.data
        kind, element_type = op.kind.data, op.result.type.get_element_type()
        init = identity(kind, element_type)

        def contribution(reduction_index: list[SSAValue]) -> list[SSAValue]:
            (position,) = reduction_index
            value = self.element(op.input, (*index[:d], position, *index[d + 1 :]))
            within = self._scalar_op(arith.CmpiOp(position, index[d], "ule"))
            return [
                self._scalar_op(
                    arith.SelectOp(within, value, self._scalar_op(arith.ConstantOp(init)))
                )
            ]

        extent = op.input.type.get_shape()[d]
        (result,) = self._reduction((kind, init), [(extent, f"r{d}")], index, contribution)
        return result

    def _contract(self, op: prim.ContractOp, index: tuple[SSAValue, ...]) -> SSAValue:
        *batch, m, n = index
        extent = op.lhs.type.get_shape()[-1]
        element_type = op.result.type.get_element_type()

        def contribution(reduction_index: list[SSAValue]) -> list[SSAValue]:
            (k,) = reduction_index
            lhs = self.element(op.lhs, (*batch, m, k))
            rhs = self.element(op.rhs, (*batch, k, n))
            product = arith.MulfOp if isinstance(element_type, AnyFloat) else arith.MuliOp
            return [self._scalar_op(product(lhs, rhs))]

        init = identity("add", element_type)
        (result,) = self._reduction(("add", init), [(extent, "k")], index, contribution)
        return result

    def _reduction(
        self, reduction: Reduction | StateReduction, extents, index, contribution
    ) -> list[SSAValue]:
        """Nested reduction loops over `extents`, placed in the outermost loop where `index`
        exists (beside the deeper loops being built now), an inner loop's accumulators being
        what the loop around it folds in; the outermost starts from the init, inner ones from
        the combiner's identity (every loop of a combiner region from its inits, which are)."""
        home = self._depth_of(index)
        saved = self.scopes[home + 1 :]
        saved_anchor = self.scopes[home].anchor
        del self.scopes[home + 1 :]
        loops: list[loop.ForOp] = []
        reduction_index: list[SSAValue] = []
        for extent, name in extents:
            if extent == 1 and not self.keep_unit_dims:
                reduction_index.append(self.zero)
                continue
            loops.append(self._open_loop(extent, name, _loop_reduction(reduction, not loops)))
            reduction_index.append(loops[-1].induction_var)
        results = contribution(reduction_index)
        for for_op in reversed(loops):
            for_op.body.block.erase_op(for_op.body.block.last_op)
            for_op.body.block.add_op(loop.YieldOp(*results))
            results = list(for_op.accumulator)
            self.scopes.pop()
        if not loops and isinstance(reduction[0], str):
            kind, init = reduction
            if init != identity(kind, init.type):
                start = arith.ConstantOp(init)
                self._place(start, 0)
                results = [self._scalar_op(combine(kind, start.result, *results))]
        self.scopes[home].anchor = saved_anchor
        self.scopes.extend(saved)
        return results

    _LOWERINGS = {
        prim.MapOp: _map,
        prim.IotaOp: _iota,
        prim.ReduceOp: _reduce,
        prim.MultiReduceOp: _multi_reduce,
        prim.ScanOp: _scan,
        prim.ContractOp: _contract,
    }


def _rejoined(scaled: SSAValue, remainder: SSAValue) -> SSAValue | None:
    """x, where `scaled` is (x / c) * c and `remainder` x % c: an index that one view split
    and another joined again (a row of heads viewed back as a row) is the index it was, and
    stays one (a contraction's epilogue then stores at its own place)."""
    product, rest = scaled.owner, remainder.owner
    if not (isinstance(product, arith.MuliOp) and isinstance(rest, arith.RemUIOp)):
        return None
    quotient = product.lhs.owner
    if not (isinstance(quotient, arith.DivUIOp) and quotient.lhs is rest.lhs):
        return None
    factors = {constant_index(v) for v in (product.rhs, quotient.rhs, rest.rhs)}
    return rest.lhs if len(factors) == 1 and None not in factors else None


def _refuse_dynamic_factor(factor: int) -> None:
    # A product of sizes with the dynamic one in it holds DYNAMIC_INDEX (-2**63) as a factor.
    if abs(factor) >= -DYNAMIC_INDEX:
        raise PassFailedException(
            "a view that merges or splits the dynamic dim (?) with another dim is not supported yet"
        )


def _loop_reduction(
    reduction: Reduction | StateReduction, outermost: bool
) -> Reduction | StateReduction:
    """The reduction of one loop of a nest that folds several axes: a named combiner's
    outermost loop starts from the init, the others from its identity; a combiner region's
    loops each get a copy of it."""
    if isinstance(reduction[0], str):
        kind, init = reduction
        return kind, init if outermost else identity(kind, init.type)
    inits, combiner = reduction
    return inits, copy_combiner(combiner, loop.YieldOp)


class _NotStructured(Exception):
    """The kernel's product is not one a loop.contract expresses."""


@dataclass(frozen=True)
class _Affine:
    """An index as an integer combination of iteration dims: sum of dim * coefficient, plus
    a constant."""

    terms: tuple[tuple[int, int], ...]
    constant: int = 0


class _IterationIndices:
    """The index algebra (`prim.IndexAlgebra`) of views read at iteration dims: it follows
    an output's index back to the product and the product's operand indices back to kernel
    inputs, and fails (`_NotStructured`) where an index is not an affine form it can
    simplify, or that multiplies or divides by the dynamic size."""

    def __init__(self, extents: Sequence[int]):
        self.extents = tuple(extents)

    def dim(self, d: int) -> _Affine:
        return _Affine(((d, 1),))

    def constant(self, value: int) -> _Affine:
        return _Affine((), value)

    def add(self, lhs: _Affine, rhs: _Affine) -> _Affine:
        terms = dict(lhs.terms)
        for d, c in rhs.terms:
            terms[d] = terms.get(d, 0) + c
        return _Affine(
            tuple(sorted((d, c) for d, c in terms.items() if c)), lhs.constant + rhs.constant
        )

    def mul(self, lhs: _Affine, factor: int) -> _Affine:
        if factor == 0 or not lhs.terms and lhs.constant == 0:
            return self.constant(0)
        if factor == DYNAMIC_INDEX:
            raise _NotStructured
        return _Affine(tuple((d, c * factor) for d, c in lhs.terms), lhs.constant * factor)

    def _below(self, form: _Affine, bound: int) -> bool:
        """Whether `form` stays in [0, bound) over every iteration (not known for a dim of
        the dynamic size)."""
        if form.constant < 0 or any(
            c < 0 or self.extents[d] == DYNAMIC_INDEX for d, c in form.terms
        ):
            return False
        return form.constant + sum(c * (self.extents[d] - 1) for d, c in form.terms) < bound

    def div_mod(self, lhs: _Affine, divisor: int, modulus: int) -> _Affine:
        """Exact where the dims below `divisor` (and those at or above `modulus` after the
        division) are whole digits of a mixed-radix number, as a reshape's are."""
        if DYNAMIC_INDEX in (divisor, modulus):
            raise _NotStructured
        low = _Affine(tuple((d, c) for d, c in lhs.terms if c % divisor), lhs.constant)
        if not self._below(low, divisor):
            raise _NotStructured
        quotient = _Affine(tuple((d, c // divisor) for d, c in lhs.terms if not c % divisor))
        if modulus == 0:
            return quotient
        remainder = _Affine(tuple((d, c) for d, c in quotient.terms if c % modulus))
        if not self._below(remainder, modulus):
            raise _NotStructured
        return remainder

    def index_at(self, value: SSAValue, index: Sequence[_Affine]) -> _Affine:
        raise _NotStructured

    def one_element(self, index: _Affine) -> _Affine:
        return self.constant(0)

    def iteration_dim(self, form: _Affine, size: int) -> loop.IterationDim:
        """The iteration dim a buffer dim of `size` is read at, or None for index 0."""
        if form.constant == 0:
            # A dim of extent 1 adds nothing to an index along another dim.
            terms = [(d, c) for d, c in form.terms if self.extents[d] != 1] or form.terms
            if not terms:
                if size == 1:
                    return None
            elif len(terms) == 1 and terms[0][1] == 1 and self.extents[terms[0][0]] == size:
                return terms[0][0]
        raise _NotStructured


class _DigitIndices(_IterationIndices):
    """`_IterationIndices` that also follows a reshape which splits an iteration dim (a
    product's 1024 rows viewed as [2, 512]): where a division would cut a dim, the dim is
    written as two new dims, its digits above and below that place, and `iteration_dim` joins
    digits back into their dim. So a permute of a split product (q projected to [B, S, H, D]
    and stored as [B, H, S, D]) still stores each element at an index the product's rows and
    columns name."""

    def __init__(self, extents: Sequence[int]):
        super().__init__(extents)
        self.digit_dims: dict[tuple[int, int], tuple[int, int]] = {}
        """(dim, place) -> the dims of its digits (high, low)."""
        self.split_dims: dict[int, tuple[int, int, int]] = {}
        """high digit -> (the dim it is a digit of, the place, the low digit)."""

    def _digits(self, d: int, place: int) -> tuple[int, int]:
        if (d, place) not in self.digit_dims:
            high, low = len(self.extents), len(self.extents) + 1
            self.extents = (*self.extents, self.extents[d] // place, place)
            self.digit_dims[d, place] = (high, low)
            self.split_dims[high] = (d, place, low)
        return self.digit_dims[d, place]

    def _split_at(self, form: _Affine, boundary: int) -> _Affine:
        """`form` with each dim whose multiples cross `boundary` written as its digits
        there, where the dim's extent is a whole number of the digit below."""
        terms: dict[int, int] = {}
        for d, c in form.terms:
            place = boundary // c if c > 0 and boundary % c == 0 else 0
            extent = self.extents[d]
            if 1 < place < extent != DYNAMIC_INDEX and extent % place == 0:
                high, low = self._digits(d, place)
                terms[high] = terms.get(high, 0) + c * place
                terms[low] = terms.get(low, 0) + c
            else:
                terms[d] = terms.get(d, 0) + c
        return _Affine(tuple(sorted(terms.items())), form.constant)

    def div_mod(self, lhs: _Affine, divisor: int, modulus: int) -> _Affine:
        if DYNAMIC_INDEX not in (divisor, modulus):
            lhs = self._split_at(lhs, divisor)
            if modulus:
                lhs = self._split_at(lhs, divisor * modulus)
        return super().div_mod(lhs, divisor, modulus)

    def joined(self, form: _Affine) -> _Affine:
        """`form` with each pair of digits of one dim written as that dim."""
        terms = dict(form.terms)
        joined = True
        while joined:
            joined = False
            for high, (d, place, low) in self.split_dims.items():
                c = terms.get(low, 0)
                if c and terms.get(high) == c * place:
                    del terms[high], terms[low]
                    terms[d] = terms.get(d, 0) + c
                    joined = True
        return _Affine(tuple(sorted(terms.items())), form.constant)

    def iteration_dim(self, form: _Affine, size: int) -> loop.IterationDim:
        return super().iteration_dim(self.joined(form), size)

    def runs_along(self, form: _Affine, d: int) -> bool:
        """Whether `form` is dim `d` or its lowest digit: consecutive values of it are
        consecutive values of `d`."""
        if form.constant or len(form.terms) != 1 or form.terms[0][1] != 1:
            return False
        digit = form.terms[0][0]
        parents = {low: dim for dim, _, low in self.split_dims.values()}
        while digit in parents:
            digit = parents[digit]
        return digit == d


def stores_in_place(product_shape: Sequence[int], views: Sequence[Operation]) -> bool:
    """Whether permutes and reshapes `views` of a product carry each of its elements to an
    index from which the same views read it back, in the product's own iteration space (the
    permuted store `_permuted_space` lowers): their reshapes split or merge its dims into
    whole digits only. And whether the last dim they store along runs along the product's
    columns, so that an epilogue's stores stay as contiguous as the product's own."""
    algebra = _DigitIndices(product_shape)
    identity = tuple(map(algebra.dim, range(len(product_shape))))
    try:
        index = _forward_index(views, identity, algebra)
        if not algebra.runs_along(index[-1], len(product_shape) - 1):
            return False
        for view in reversed(views):
            fusion = prim.fusion_class(view)
            assert isinstance(fusion, prim.View)
            _, index = fusion.index_map(view, index, algebra)
        dims = [algebra.iteration_dim(form, n) for form, n in zip(index, product_shape)]
    except _NotStructured:
        return False
    return dims == list(range(len(product_shape)))


@dataclass(frozen=True)
class _StructuredContraction:
    """A kernel's products as a loop.contract takes them: which kernel inputs they read, at
    which iteration dims (the products are siblings, of one lhs, each of its own rhs)."""

    products: tuple[prim.ContractOp, ...]
    space: tuple[int, ...]
    """The parallel iteration space: the outputs' shape, or a reshape of the product (the
    outputs are then stored at the same row-major position)."""
    lhs: SSAValue
    lhs_dims: tuple[loop.IterationDim, ...]
    rhs: tuple[SSAValue, ...]
    rhs_dims: tuple[loop.IterationDim, ...]
    store_views: dict[SSAValue, tuple[Operation, ...]] | None = None
    """Where the space is the product's own shape and an output permutes it: for each output,
    the permutes and reshapes from the product to it, which carry the epilogue's index to the
    output's."""

    def store_index(self, output: SSAValue, index: tuple, algebra: prim.IndexAlgebra) -> tuple:
        """The index of `output` that the epilogue at `index` stores."""
        if self.store_views is not None:
            product_shape = tuple(self.products[0].result.type.get_shape())
            if product_shape != self.space:
                index = prim.reshape_source_index(product_shape, self.space, index, algebra)
            return _forward_index(self.store_views[output], index, algebra)
        if (shape := tuple(output.type.get_shape())) != self.space:
            return prim.reshape_source_index(shape, self.space, index, algebra)
        return index


def _is_widening(op: Operation, element_type) -> bool:
    """A `prim.map` of one input whose body only extends it to `element_type`."""
    if not isinstance(op, prim.MapOp) or len(op.inputs) != 1:
        return False
    extend, *rest = op.body.block.ops
    return (
        isinstance(extend, arith.ExtFOp)
        and extend.input is op.body.block.args[0]
        and extend.result.type == element_type
        and len(rest) == 1
        and tuple(rest[0].operands) == (extend.result,)
    )


def _depending_on(product: prim.ContractOp) -> set[SSAValue]:
    """The product and the values of its kernel computed from it."""
    depends = {product.result}
    for op in product.parent_block().ops:
        if any(v in depends for v in op.operands):
            depends.update(op.results)
    return depends


def _product_index(
    product: prim.ContractOp,
    outputs: Sequence[SSAValue],
    index: tuple[_Affine, ...],
    algebra: _IterationIndices,
) -> tuple[_Affine, ...]:
    """The one index of the product that the outputs read at `index`."""
    depends = _depending_on(product)
    reads: set[tuple[_Affine, ...]] = set()
    visited: set[tuple[SSAValue, tuple[_Affine, ...]]] = set()

    def visit(value: SSAValue, index: tuple[_Affine, ...]) -> None:
        if value not in depends or (value, index) in visited:
            return
        visited.add((value, index))
        if value is product.result:
            reads.add(index)
            return
        op = value.owner
        fusion = prim.fusion_class(op)
        if isinstance(fusion, prim.Elementwise):
            for operand in op.operands:
                visit(operand, index)
        elif isinstance(fusion, prim.View):
            source, source_index = fusion.index_map(op, index, algebra)
            visit(source, source_index)
        else:
            raise _NotStructured

    for output in outputs:
        visit(output, index)
    if len(reads) != 1:
        raise _NotStructured
    return reads.pop()


def _reshaped_product(product: prim.ContractOp) -> bool:
    """Whether the outputs read the product only through elementwise ops and reshapes, so
    each output element reads it at the same row-major position."""
    return all(
        isinstance(prim.fusion_class(v.owner), prim.Elementwise)
        or isinstance(v.owner, prim.ReshapeOp)
        for v in _depending_on(product) - {product.result}
    )


def _operand_source(
    value: SSAValue, index: tuple[_Affine, ...], algebra: _IterationIndices, element_type
) -> tuple[SSAValue, tuple[_Affine, ...]]:
    """The kernel input an operand of the product is, and its index there."""
    widened = False
    while not isinstance(value, BlockArgument):
        op = value.owner
        fusion = prim.fusion_class(op)
        if isinstance(fusion, prim.View):
            value, index = fusion.index_map(op, index, algebra)
        elif not widened and _is_widening(op, element_type):
            value, widened = op.inputs[0], True
        else:
            raise _NotStructured
    return value, index


def reads_reduction_in_place(operand: SSAValue, reduction_dim: int) -> bool:
    """Whether every value that `operand`, a product's operand, is computed from through views
    and elementwise ops is read with the reduction dim (`reduction_dim` of the operand) at one
    dim of its own, of the same extent, and nowhere else. Without it no iteration space makes
    the product structured (the module docstring's condition on k): attention's [B, H, S, D]
    output transposed to [B, S, H, D] and merged to [B * S, H * D] reads k across two dims.
    The other dims are pinned to 0 (an extent of 1), so only the reduction dim's reads are
    followed (a choice of iteration space settles theirs), and a dim that is read with it
    must be one of size 1."""
    shape = operand.type.get_shape()
    extent = shape[reduction_dim]
    extents = [1] * len(shape)
    extents[reduction_dim] = extent
    algebra = _IterationIndices(extents)
    k = reduction_dim % len(shape)
    stack = [(operand, tuple(map(algebra.dim, range(len(shape)))))]
    # A value that several elementwise ops read at one index is followed once, not once a path.
    seen: set[tuple[SSAValue, tuple[_Affine, ...]]] = set()
    try:
        while stack:
            value, index = stack.pop()
            if (value, index) in seen:
                continue
            seen.add((value, index))
            fusion = prim.fusion_class(value.owner) if isinstance(value, OpResult) else None
            if isinstance(fusion, prim.View):
                stack.append(fusion.index_map(value.owner, index, algebra))
                continue
            if isinstance(fusion, prim.Elementwise):
                stack.extend((source, index) for source in value.owner.operands)
                continue
            reads = [
                (tuple((d, c) for d, c in form.terms if shape[d] != 1), form.constant, size)
                for form, size in zip(index, value.type.get_shape())
                if any(d == k for d, _ in form.terms)
            ]
            if reads != [(((k, 1),), 0, extent)]:
                return False
    except _NotStructured:
        return False
    return True


def _operand_dims(
    value: SSAValue, index: tuple[_Affine, ...], algebra: _IterationIndices, element_type
) -> tuple[SSAValue, tuple[loop.IterationDim, ...]]:
    """The kernel input an operand of the product is, and the dims it is read at."""
    value, index = _operand_source(value, index, algebra, element_type)
    shape = value.type.get_shape()
    dims = [algebra.iteration_dim(form, size) for form, size in zip(index, shape)]
    used = [d for d in dims if d is not None]
    if len(set(used)) != len(used):
        raise _NotStructured
    # A size-1 dim read at 0 is read at a batch dim of extent 1 where the space has one the
    # operand does not read (nn.Linear's [1, S, K] input in the space [1, S, N]): a tile.gemm's
    # operand maps name an iteration dim for every dim.
    units = [d for d in range(len(algebra.extents) - 3) if algebra.extents[d] == 1]
    for position, dim in enumerate(dims):
        free = [d for d in units if d not in dims]
        if dim is None and free:
            dims[position] = free[0]
    return value, tuple(dims)


def _store_views(product: prim.ContractOp, output: SSAValue) -> tuple[Operation, ...] | None:
    """The permutes and reshapes from the product to `output`, where `output` reads it
    through those and elementwise ops only (attention's output transposed back to [B, S, H,
    D] and merged to [B*S, H*D]); None otherwise. Where an elementwise op reads the product
    along two paths, this follows one; `_product_index` checks that both read one element."""
    depends = _depending_on(product)
    views: list[Operation] = []
    value = output
    while value is not product.result:
        op = value.owner
        if isinstance(op, prim.PermuteOp | prim.ReshapeOp):
            views.append(op)
            value = op.input
        elif isinstance(prim.fusion_class(op), prim.Elementwise):
            dependent = [v for v in op.operands if v in depends]
            if not dependent:
                return None
            value = dependent[0]
        else:
            return None
    return tuple(reversed(views))


def _forward_index(views: Sequence[Operation], index: tuple, algebra: prim.IndexAlgebra) -> tuple:
    """The index that the element at `index` of the first view's input has after `views`."""
    for view in views:
        if isinstance(view, prim.PermuteOp):
            index = tuple(index[d] for d in view.permutation)
        else:
            source = tuple(view.input.type.get_shape())
            result = tuple(view.result.type.get_shape())
            index = prim.reshape_source_index(result, source, index, algebra)
    return index


def _permuted_space(
    product: prim.ContractOp,
    outputs: Sequence[SSAValue],
    read: tuple[_Affine, ...],
    algebra: _DigitIndices,
) -> dict[SSAValue, tuple[Operation, ...]] | None:
    """Each output's views from the product, where an iteration space that reads the product
    at `read` (its own shape, or a reshape of it) has an epilogue storing each output at its
    views' image of that index: every output reads the product there, through elementwise
    ops, permutes and reshapes."""
    chains: dict[SSAValue, tuple[Operation, ...]] = {}
    for output in outputs:
        views = _store_views(product, output)
        if views is None or not any(isinstance(v, prim.PermuteOp) for v in views):
            return None
        try:
            stored = _forward_index(views, read, algebra)
            read_back = _product_index(product, [output], stored, algebra)
        except _NotStructured:
            return None
        if list(map(algebra.joined, read_back)) != list(map(algebra.joined, read)):
            return None
        chains[output] = views
    return chains


def _lhs_space(product: prim.ContractOp, element_type) -> tuple[int, ...] | None:
    """The lhs input's dims with n in place of its last, k: the iteration space that reads
    a [B, S, K] input reshaped to a [B*S, K] lhs in place; None where that is no reshape of
    the product."""
    origin = (_Affine((), 0),) * len(product.lhs.type.get_shape())
    try:
        buffer, _ = _operand_source(product.lhs, origin, _IterationIndices(()), element_type)
    except _NotStructured:
        return None
    *rows, k = buffer.type.get_shape()
    *product_rows, n = product.result.type.get_shape()
    if not rows or k != product.lhs.type.get_shape()[-1] or prod(rows) != prod(product_rows):
        return None
    return (*rows, n)


def _structured_contraction(kernel: fused.KernelOp) -> _StructuredContraction | None:
    """The kernel's products as one loop.contract takes them, or None where the module
    docstring's conditions do not hold: each product as the only one of its kernel, read by
    the outputs computed from it, all of them in one space, of one lhs read at one map, their
    rhs read at one map."""
    block = kernel.body.block
    products = [op for op in block.ops if isinstance(op, prim.ContractOp)]
    terminator = block.last_op
    assert isinstance(terminator, fused.YieldOp)
    outputs = terminator.arguments
    if not products:
        return None
    found = []
    for product in products:
        depends = _depending_on(product)
        structured = _structured_product(product, [v for v in outputs if v in depends])
        if structured is None:
            return None
        found.append(structured)
    first, *others = found
    if any(
        (o.space, o.lhs, o.lhs_dims, o.rhs_dims)
        != (first.space, first.lhs, first.lhs_dims, first.rhs_dims)
        for o in others
    ):
        return None
    if len({s.store_views is None for s in found}) != 1:
        return None
    views = None
    if first.store_views is not None:
        views = {o: v for s in found for o, v in s.store_views.items()}
    return _StructuredContraction(
        tuple(products),
        first.space,
        first.lhs,
        first.lhs_dims,
        tuple(rhs for s in found for rhs in s.rhs),
        first.rhs_dims,
        views,
    )


def _structured_product(
    product: prim.ContractOp, outputs: Sequence[SSAValue]
) -> _StructuredContraction | None:
    """One product as a loop.contract takes it, stored through `outputs`."""
    if not outputs:
        return None
    extent = product.lhs.type.get_shape()[-1]
    if extent == DYNAMIC_INDEX:
        return None
    element_type = product.result.type.get_element_type()
    product_shape = tuple(product.result.type.get_shape())
    # The product's own shape and the lhs input's (a [B, S, K] input merged to [B*S, K]) are
    # spaces that read the product through a reshape, each at its index there.
    reads = []
    for space in dict.fromkeys((product_shape, _lhs_space(product, element_type))):
        if space is None:
            continue
        space_algebra = _IterationIndices((*space, extent))
        index = tuple(map(space_algebra.dim, range(len(space))))
        with suppress(_NotStructured):
            read = prim.reshape_source_index(product_shape, space, index, space_algebra)
            reads.append((space, read))
    # (space, the product's index there, the outputs' views from it where they permute it)
    spaces: list[tuple[tuple[int, ...], tuple[_Affine, ...], dict | None]] = []
    for space, read in reads:
        if views := _permuted_space(product, outputs, read, _DigitIndices((*space, extent))):
            spaces.append((space, read, views))
    shapes = {tuple(v.type.get_shape()) for v in outputs}
    if not spaces and len(shapes) != 1:
        return None
    (shape, *_) = shapes
    algebra = _IterationIndices((*shape, extent))
    try:
        index = tuple(map(algebra.dim, range(len(shape))))
        if len(shape) >= 2 and len(shapes) == 1:
            spaces.append((shape, _product_index(product, outputs, index, algebra), None))
    except _NotStructured:
        pass
    if _reshaped_product(product):
        # The outputs are the product reshaped, so a reshape of the product is an iteration
        # space too, in which the epilogue stores at the same row-major position: the
        # product's own shape (a [B*S, K] input stored as [B, S, N], a matrix-vector
        # product [M, 1] stored as [M]) or the lhs input's (a [B, S, K] input whose
        # product is stored as [B*S, N]).
        spaces.extend((space, read, None) for space, read in reads if space != shape)
    structured = []
    for space, (*batch, m, n), views in spaces:
        if space[-1] == DYNAMIC_INDEX:
            continue
        algebra = _IterationIndices((*space, extent))
        rank = len(space)
        k = algebra.dim(rank)
        try:
            lhs, lhs_dims = _operand_dims(product.lhs, (*batch, m, k), algebra, element_type)
            rhs, rhs_dims = _operand_dims(product.rhs, (*batch, k, n), algebra, element_type)
        except _NotStructured:
            continue
        if rank in lhs_dims and rank - 1 not in lhs_dims and rank in rhs_dims:
            if rank - 2 not in rhs_dims:
                structured.append(
                    _StructuredContraction(
                        (product,), space, lhs, lhs_dims, (rhs,), rhs_dims, views
                    )
                )
    # The space with the most rows per matrix product (a dynamic m counts as the most), then
    # the fewest batch dims: a decode step's [B, 1, N] output is better one [B, N] product
    # than B products of one row, and a [1, S, N] output one [S, N] product.
    return max(
        structured,
        key=lambda c: (is_dynamic(c.space[-2:-1]), c.space[-2], -len(c.space)),
        default=None,
    )


def _unique_symbol(requested: str, taken: set[str]) -> str:
    """`requested`, or with the first numeric suffix that no other symbol has."""
    name, suffix = requested, 1
    while name in taken:
        name, suffix = f"{requested}_{suffix}", suffix + 1
    taken.add(name)
    return name


def _attention(
    kernel: fused.KernelOp,
    inputs: dict[SSAValue, SSAValue],
    outputs: list[tuple[SSAValue, SSAValue]],
) -> loop.AttentionOp:
    """The loop.attention of a kernel that holds a prim.attention on its inputs alone and
    yields its value, as `fuse-prims` makes it."""
    ops = [o for o in kernel.body.block.ops if not isinstance(o, fused.YieldOp)]
    attention = ops[0]
    if (
        len(ops) != 1
        or not isinstance(attention, prim.AttentionOp)
        or any(value not in inputs for value in attention.operands)
        or [value for value, _ in outputs] != [attention.result]
    ):
        raise PassFailedException(
            f"kernel @{kernel.kernel_name.data} holds a prim.attention, so it holds it alone, on "
            "its inputs, and yields its value",
            kernel,
        )
    query, key, value, *mask = (inputs[v] for v in attention.operands)
    return loop.AttentionOp(
        query,
        key,
        value,
        mask[0] if mask else None,
        outputs[0][1],
        attention.scale.value.data,
        attention.causal is not None,
    )


def _lower_kernel(
    op: fused.KernelOp,
    buffers: list[SSAValue],
    outputs: list[SSAValue],
    name: str,
    keep_unit_dims: bool,
    size: SSAValue | None,
) -> loop.KernelOp:
    """The kernel of `op`, taking `buffers` and `outputs`, then `size` (the host's dynamic
    size) if any of them has a `?` dim."""
    if not any(is_dynamic(b.type.get_shape()) for b in (*buffers, *outputs)):
        size = None
    types = [b.type for b in (*buffers, *outputs)]
    if size is not None:
        types.append(IndexType())
    body = Block(arg_types=types)
    region = Region(body)
    for arg, source in zip(body.args, op.body.block.args):
        arg.name_hint = source.name_hint
    out_args = body.args[len(buffers) : len(buffers) + len(outputs)]
    for position, arg in enumerate(out_args):
        arg.name_hint = "out" if len(out_args) == 1 else f"out{position}"
    size_arg = body.args[-1] if size is not None else None
    if size_arg is not None:
        size_arg.name_hint = size.name_hint
    builder = _KernelBodyBuilder(
        body, dict(zip(op.body.block.args, body.args)), keep_unit_dims, size_arg
    )
    terminator = op.body.block.last_op
    assert isinstance(terminator, fused.YieldOp)
    outputs = list(zip(terminator.arguments, out_args))
    contraction = _structured_contraction(op)
    if any(isinstance(o, prim.AttentionOp) for o in op.body.block.ops):
        body.add_op(_attention(op, builder.inputs, outputs))
    elif contraction is not None:
        builder.store_contraction(contraction, outputs)
    else:
        by_shape: dict[tuple[int, ...], list[tuple[SSAValue, SSAValue]]] = {}
        for value, buffer in outputs:
            by_shape.setdefault(tuple(value.type.get_shape()), []).append((value, buffer))
        for group in by_shape.values():
            builder.store_outputs(group)
    builder.finish()
    if contraction is not None:
        # The index arithmetic of views between the product and the outputs (a reshape's)
        # computed the product's index, which the accumulated value stands for.
        region_dce(region)
    kernel = loop.KernelOp(name, types, region)
    kernel.location = op.location
    return kernel


def _lower_host(host: func.FuncOp, module: ModuleOp, taken: set[str], keep_unit_dims: bool):
    if host.is_declaration:
        raise PassFailedException(
            f"@{host.sym_name.data} is a declaration: a program's functions have bodies (a "
            "host function is the kernel launches it runs)",
            host,
        )

    def converted(t):
        return buffer_type(t) if isinstance(t, TensorType) else t

    inputs = [converted(t) for t in host.function_type.inputs.data]
    outputs = [converted(t) for t in host.function_type.outputs.data]
    block = Block(arg_types=inputs)
    values: dict[SSAValue, SSAValue] = {}
    for old, new in zip(host.body.block.args, block.args):
        new.name_hint = old.name_hint
        values[old] = new
    size = _dynamic_size(block, module)

    def allocate(memref_type: MemRefType) -> memref.AllocOp:
        if not is_dynamic(memref_type.get_shape()):
            return memref.AllocOp([], [], memref_type)
        if size is None:
            raise PassFailedException(
                f"@{host.sym_name.data} makes a {memref_type} buffer but has no argument of "
                "the dynamic size to read it from",
                host,
            )
        dims = sum(d == DYNAMIC_INDEX for d in memref_type.get_shape())
        return memref.AllocOp([size] * dims, [], memref_type)

    def launch(kernel: fused.KernelOp, results: Sequence[SSAValue]) -> None:
        """Allocates the kernel's outputs, which stand for `results`, and launches it."""
        allocs = [allocate(buffer_type(r.type)) for r in results]
        block.add_ops(allocs)
        for alloc, result in zip(allocs, results):
            alloc.memref.name_hint = result.name_hint
            values[result] = alloc.memref
        name = _unique_symbol(kernel.kernel_name.data, taken)
        buffers = [values[v] for v in kernel.inputs]
        outs = [a.memref for a in allocs]
        lowered = _lower_kernel(kernel, buffers, outs, name, keep_unit_dims, size)
        module.body.block.insert_op_before(lowered, host)
        takes_size = isinstance(lowered.argument_types[-1], IndexType)
        assert size is not None or not takes_size
        block.add_op(loop.LaunchOp(name, [*buffers, *outs, *([size] if takes_size else [])]))

    for op in host.body.block.ops:
        if isinstance(op, func.ReturnOp):
            block.add_op(func.ReturnOp(*(values[v] for v in op.arguments)))
        elif isinstance(op, fused.KernelOp):
            launch(op, op.outputs)
        elif isinstance(op, prim.ConstantOp) and dense.is_splat(op.value, op.result.type):
            # A kernel fills its buffer, where a global would hold every element.
            fill = op.splat_map()
            body = Region(Block([fill, fused.YieldOp(fill.result)]))
            launch(fused.KernelOp("k_constant", [], [op.result.type], body), [op.result])
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


def _dynamic_size(block: Block, module: ModuleOp) -> SSAValue | None:
    """The dynamic size, read at the start of the host function from the first argument
    with a `?` dim and named after its symbol; None if no argument has one."""
    declared = DynamicSize.of(module)
    for argument in block.args:
        if isinstance(argument.type, MemRefType) and is_dynamic(argument.type.get_shape()):
            dim = arith.ConstantOp.from_int_and_width(
                argument.type.get_shape().index(DYNAMIC_INDEX), IndexType()
            )
            dim.result.name_hint = f"c{dim.value.value.data}"
            size = memref.DimOp(argument, dim)
            block.add_ops([dim, size])
            size.result.name_hint = declared.symbol if declared is not None else "size"
            return size.result
    return None


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
