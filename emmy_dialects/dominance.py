"""Every operand is defined before it is used: the dominance rule of SSA, which xDSL's verifier
does not check.

    loop.for %i in 0 to 4 {
      %w = arith.addf %v, %u : f32      // error: operand #1 (%u) is used before its definition
      %u = arith.addf %v, %v : f32
    }

A value is visible after its definition in its block and in the regions of the ops after it
there (at any depth); a block argument throughout its block. A region of several blocks also
sees the values of the blocks that dominate each block; the body of a `builtin.module` is a
graph region, where order does not matter. Values from above an `IsolatedFromAbove` op are
visible here too: that trait's own verifier refuses them, with its own message. The check is one
walk of the IR, linear in its size, so `emmy.tools.diagnostics.verify` runs it first, before the
ops' verifiers (which may follow operands to their definitions) and before any pass.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.irdl.dominance import DominanceInfo
from xdsl.utils.exceptions import VerifyException


class VerifyExceptionAt(VerifyException):
    """A verify error found while checking one op, about another (`op`), where the tools
    report it: a use, an access."""

    def __init__(self, message: str, op: Operation):
        super().__init__(message, op)
        self.op = op

    def __str__(self) -> str:
        return self.args[0]


def _defined_values(block: Block) -> list[SSAValue]:
    return [*block.args, *(result for op in block.ops for result in op.results)]


def _why_not_visible(use: Operation, value: SSAValue) -> str:
    """Whether `value` comes after `use` (in its block or one around it), is a result of an op
    around it, or is defined where `use` cannot see it."""
    if isinstance(value, BlockArgument):
        return "is an argument of a block that does not enclose this use"
    if value.owner is use:
        return "is a result of this op"
    ancestor: Operation | None = use
    while ancestor is not None:
        if ancestor is value.owner:
            return f"is a result of the '{ancestor.name}' op around this use"
        if ancestor.parent_block() is value.owner.parent_block() is not None:
            return "is used before its definition"
        ancestor = ancestor.parent_op()
    return "is defined in a region that does not enclose this use"


def verify_dominance(root: Operation) -> None:
    """Raises `VerifyExceptionAt` the first op, in program order, with an operand that is not
    visible there (see the module docstring)."""
    visible: set[SSAValue] = set()
    # A stack of ops to check, blocks to enter, and values to hide again or make visible.
    stack: list[Operation | Block | tuple[bool, list[SSAValue]]] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            show, values = item
            if show:
                visible.update(values)
            else:
                visible.difference_update(values)
            continue
        if isinstance(item, Block):
            stack.extend(reversed(item.ops))
            continue
        op = item
        for number, operand in enumerate(op.operands):
            if operand not in visible:
                name = f" (%{operand.name_hint})" if operand.name_hint else ""
                raise VerifyExceptionAt(
                    f"operand #{number}{name} {_why_not_visible(op, operand)}", op
                )
        # After the op's regions, its results are visible to the ops after it.
        stack.append((True, list(op.results)))
        for region in reversed(op.regions):
            dominance = DominanceInfo(region) if len(region.blocks) > 1 else None
            for block in reversed(region.blocks):
                seen = _defined_values(block) if isinstance(op, ModuleOp) else list(block.args)
                if dominance is not None:
                    for other in region.blocks:
                        if other is not block and dominance.dominates(other, block):
                            seen += _defined_values(other)
                stack.append((False, seen + _defined_values(block)))
                stack.append(block)
                stack.append((True, seen))
