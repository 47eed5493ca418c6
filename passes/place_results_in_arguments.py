"""`place-results-in-arguments`: a result that the caller copies into an argument once the call
returns (a KV cache's new value) is computed in that argument's buffer instead.

    // builtin.module attributes {emmy.results_in_arguments = [[0 : i64, 0 : i64]]}
    loop.kernel @k(%cache: memref<16x8xf32>, %k: memref<8xf32>, %out: memref<16x8xf32>) {
      ..  %old = loop.load %cache[%i, %j]     %new = arith.select %here, %v, %old
          loop.store %new, %out[%i, %j]
    }
    func.func @forward(%cache: .., %k: ..) -> memref<16x8xf32> {
      %r = memref.alloc()            ->      loop.launch @k(%cache, %k)
      loop.launch @k(%cache, %k, %r)         func.return %cache
      func.return %r
    }
    (the kernel then stores %new into %cache, and has no %out)

The caller names the pairs (result, argument) in the module's `RESULTS_IN_ARGUMENTS` attribute
and promises that nothing but this function reads the argument, whose old value is dead once
the call returns: `torch.compile(backend="emmy")` does for AOTAutograd's copies into mutated
inputs that a partition alone reads. The copy of the result into the argument then copies
nothing. A pair is placed when
- the result is an allocation of the function, returned once, of the argument's type, and the
  argument is not returned;
- one launch writes the result, of a kernel launched nowhere else, and every other use of the
  result is a later launch that reads it;
- every other launch that reads the argument comes before that launch;
- the kernel stores into the result once and never loads it, and loads the argument only in
  the store's block, at the store's indices: each element is read by the iteration that then
  writes it, and by no other.
The kernel's parameter for the result goes: it stores into the argument's.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ArrayAttr, FunctionType, IntegerAttr, ModuleOp
from xdsl.ir import BlockArgument, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from emmy.dialects import loop
from emmy.dialects.effects import read_where_written
from emmy.dialects.launch import KernelSymbolOp, written_arguments

RESULTS_IN_ARGUMENTS = "emmy.results_in_arguments"
"""The module attribute naming the pairs [result, argument] of its function whose result the
caller copies into the argument, which nothing else reads (see the module docstring)."""


def results_in_arguments(pairs: dict[int, int]) -> ArrayAttr:
    """The attribute value for `RESULTS_IN_ARGUMENTS` of {result: argument}."""
    return ArrayAttr(
        [ArrayAttr([IntegerAttr(r, 64), IntegerAttr(a, 64)]) for r, a in sorted(pairs.items())]
    )


def _pairs(module: ModuleOp) -> list[tuple[int, int]]:
    attribute = module.attributes.get(RESULTS_IN_ARGUMENTS)
    if not isinstance(attribute, ArrayAttr):
        return []
    return [(pair.data[0].value.data, pair.data[1].value.data) for pair in attribute.data]


def _pointwise(source: BlockArgument, target: BlockArgument) -> bool:
    """Whether a kernel stores into `target` once, never loads it, and loads `source` only in
    that store's block at its indices, before it."""
    users = [use.operation for use in target.uses]
    if len(users) != 1 or not isinstance(users[0], loop.StoreOp) or users[0].memref is not target:
        return False
    loads = [use.operation for use in source.uses]
    return all(isinstance(load, loop.LoadOp) for load in loads) and read_where_written(
        loads, users[0]
    )


def _place(
    module: ModuleOp, forward: func.FuncOp, result: int, argument: int, written: dict[str, set[int]]
) -> None:
    """Places the pair (`result`, `argument`) where safe; `written` holds each kernel's
    written argument positions, updated for a kernel the placement changes."""
    body = forward.body.block
    (returned,) = [op for op in body.ops if isinstance(op, func.ReturnOp)]
    target, source = returned.arguments[result], body.args[argument]
    allocation = target.owner
    if (
        not isinstance(allocation, memref.AllocOp)
        or target.type != source.type
        or list(returned.arguments).count(target) != 1
        or source in returned.arguments
    ):
        return
    launches = [op for op in body.ops if isinstance(op, loop.LaunchOp)]

    def writes(launch: loop.LaunchOp, buffer: SSAValue) -> bool:
        positions = written[launch.kernel.root_reference.data]
        return any(a is buffer for i, a in enumerate(launch.arguments) if i in positions)

    writers = [launch for launch in launches if writes(launch, target)]
    if len(writers) != 1:
        return
    (writer,) = writers
    name = writer.kernel.root_reference.data
    kernel = SymbolTable.lookup_symbol(module, name)
    launched = sum(launch.kernel.root_reference.data == name for launch in launches)
    if not isinstance(kernel, loop.KernelOp) or launched != 1:
        return
    for use in target.uses:
        user = use.operation
        if user in (allocation, returned, writer):
            continue
        if not isinstance(user, loop.LaunchOp) or not writer.is_before_in_block(user):
            return
        if writes(user, target):
            return
    for use in source.uses:
        user = use.operation
        if user is not writer and not (
            isinstance(user, loop.LaunchOp) and user.is_before_in_block(writer)
        ):
            return
    positions = {b: [i for i, a in enumerate(writer.arguments) if a is b] for b in (source, target)}
    if len(positions[source]) != 1 or len(positions[target]) != 1:
        return
    if positions[source][0] in written[name]:
        return
    kernel_source = kernel.body.block.args[positions[source][0]]
    kernel_target = kernel.body.block.args[positions[target][0]]
    if not _pointwise(kernel_source, kernel_target):
        return
    kernel_target.replace_all_uses_with(kernel_source)
    kernel.body.block.erase_arg(kernel_target)
    types = [a.type for a in kernel.body.block.args]
    kernel.properties["function_type"] = FunctionType.from_lists(types, [])
    writer.operands = [a for i, a in enumerate(writer.arguments) if i != positions[target][0]]
    written[name] = written_arguments(kernel)
    target.replace_all_uses_with(source)
    allocation.detach()
    allocation.erase()


@dataclass(frozen=True)
class PlaceResultsInArgumentsPass(ModulePass):
    """Computes each result the module's `RESULTS_IN_ARGUMENTS` names in its argument's buffer
    where that is safe (see the module docstring)."""

    name = "place-results-in-arguments"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pairs = _pairs(op)
        functions = [f for f in op.body.block.ops if isinstance(f, func.FuncOp)]
        if not pairs or len(functions) != 1:
            return
        written = {
            k.sym_name.data: written_arguments(k)
            for k in op.body.block.ops
            if isinstance(k, KernelSymbolOp)
        }
        for result, argument in pairs:
            _place(op, functions[0], result, argument, written)
