"""`reuse-identical-launches`: a launch that would compute again what an earlier launch
computed, from the same buffers unchanged since, is dropped, and what it wrote is read from
the earlier one's buffers.

    kernel.launch @k_sdpa_mask(%mask, %bits, %marks)
    kernel.launch @k_sdpa(%q, .., %bits)
    kernel.launch @k_sdpa_mask(%mask, %bits_1, %marks_1)      (dropped)
    kernel.launch @k_sdpa(%q_1, .., %bits_1)          ->      kernel.launch @k_sdpa(%q_1, .., %bits)

A model's layers hand one mask to every attention, whose summary (`attention_mask_summary`)
each layer's launch would compute again. A later launch is the same computation as an
earlier one when both call one kernel on one grid, block, shared memory and size, with the
same values where the kernel reads; it is dropped when
- the kernel writes only buffers it does not read, each allocated in the function for the
  launch and used by nothing before it (what the launch writes is then a function of what
  it reads alone);
- nothing between the two launches writes a buffer the kernel reads;
- nothing but the earlier launch writes the earlier launch's outputs, and nothing frees
  them, so that they still hold its results wherever the later launch's are read.
Its outputs are then the earlier launch's, and their allocations go. Launches in one block
of a host function (Loop, Tile or Kernel IR: any `LaunchOpBase`) are compared; a kernel
whose arguments the effects do not tell apart keeps every launch.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from emmy.dialects.effects import read_values, written_values
from emmy.dialects.launch import KernelSymbolOp, LaunchOpBase, written_arguments


class _Kernels:
    """What each kernel of a module writes, found once: a host function compares each
    launch with every one before it."""

    def __init__(self, module: ModuleOp):
        self.written: dict[str, set[int]] = {}
        self.write_only: set[str] = set()
        """The kernels that read none of the buffers they write."""
        for kernel in module.body.block.ops:
            if not isinstance(kernel, KernelSymbolOp):
                continue
            name = kernel.sym_name.data
            self.written[name] = written_arguments(kernel)
            read = read_values(kernel.body)
            if not any(kernel.body.block.args[i] in read for i in self.written[name]):
                self.write_only.add(name)

    def writes(self, op: Operation) -> set[SSAValue]:
        """The buffers `op` writes: a launch's by its kernel's effects, other ops' by their
        own."""
        if isinstance(op, LaunchOpBase):
            written = self.written.get(op.kernel.root_reference.data)
            if written is not None:
                return {op.arguments[i] for i in written}
        return written_values(op)

    def outputs(self, launch: LaunchOpBase) -> list[int] | None:
        """The positions of the arguments `launch` writes, where its kernel reads none of
        them and each is an allocation of the launch's block that only launches after it
        read; else None."""
        name = launch.kernel.root_reference.data
        written = self.written.get(name)
        if not written or name not in self.write_only:
            return None
        for position in written:
            buffer = launch.arguments[position]
            allocation = buffer.owner
            if not isinstance(allocation, memref.AllocOp) or allocation.parent is not launch.parent:
                return None
            for use in buffer.uses:
                user = use.operation
                if user is launch:
                    continue
                if not isinstance(user, LaunchOpBase) or user.parent is not launch.parent:
                    return None  # returned, freed or read elsewhere: it keeps its own buffer
                if user.is_before_in_block(launch) or buffer in self.writes(user):
                    return None
        return sorted(written)

    def changed_elsewhere(self, buffers: list[SSAValue], launch: LaunchOpBase) -> bool:
        """Whether an op other than `launch` writes or frees one of `buffers`."""
        return any(
            use.operation is not launch
            and (
                isinstance(use.operation, memref.DeallocOp) or buffer in self.writes(use.operation)
            )
            for buffer in buffers
            for use in buffer.uses
        )


def _alike(first: LaunchOpBase, second: LaunchOpBase, outputs: list[int]) -> bool:
    return (
        first.kernel == second.kernel
        and first.properties == second.properties
        and len(first.arguments) == len(second.arguments)
        and all(
            a is b
            for i, (a, b) in enumerate(zip(first.arguments, second.arguments, strict=True))
            if i not in outputs
        )
    )


def _reuse_in(block: Block, kernels: _Kernels) -> None:
    ops = list(block.ops)
    for index, later in enumerate(ops):
        if not isinstance(later, LaunchOpBase):
            continue
        outputs = kernels.outputs(later)
        if outputs is None:
            continue
        inputs = {v for i, v in enumerate(later.arguments) if i not in outputs}
        for earlier in reversed(ops[:index]):
            if earlier.parent is None:
                continue  # dropped already
            if isinstance(earlier, LaunchOpBase) and _alike(earlier, later, outputs):
                kept = [earlier.arguments[i] for i in outputs]
                if not kernels.changed_elsewhere(kept, earlier):
                    _replace(later, outputs, kept)
                break
            if kernels.writes(earlier) & inputs:
                break


def _replace(later: LaunchOpBase, outputs: list[int], kept: list[SSAValue]) -> None:
    dropped = [later.arguments[i] for i in outputs]
    later.detach()
    later.erase()
    for buffer, replacement in zip(dropped, kept, strict=True):
        buffer.replace_all_uses_with(replacement)
        buffer.owner.detach()
        buffer.owner.erase()


@dataclass(frozen=True)
class ReuseIdenticalLaunchesPass(ModulePass):
    """Drops each launch that an earlier one computed already (see the module docstring)."""

    name = "reuse-identical-launches"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = {launch.parent for launch in op.walk() if isinstance(launch, LaunchOpBase)}
        if not blocks:
            return
        kernels = _Kernels(op)
        for block in blocks:
            if block is not None:
                _reuse_in(block, kernels)
