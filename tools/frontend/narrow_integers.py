"""Inputs of unsigned integer types, which Torch IR does not take (uint8 images), read as int32
where the graph only converts them: each conversion of such a value gives what it gives of
the same value held in int32.

    x: uint8[2, 3]
    y = aten._to_copy(x, dtype=float32)

becomes

    wide = aten._to_copy(x, dtype=int32)       (BOUNDARY: PyTorch makes it)
    y = aten._to_copy(wide, dtype=float32)

An input that any other op reads (arithmetic, which wraps at its own width) is left as it is,
and the ops that read it run in PyTorch. An exported program's such input (`emmy.compile`,
`emmy compile`) is imported as an i32 argument instead, which `forward_arguments` passes
converted (`only_converted`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.fx import Graph, Node

from emmy.tools.frontend.complex_pairs import BOUNDARY, KEPT_META

aten = torch.ops.aten

NARROW = (torch.uint8,)
"""The integer dtypes Torch IR has no type of, all of whose values an int32 holds (int8 and
int16 are Torch IR's i8 and i16)."""

CONVERSIONS = (aten._to_copy.default, torch.ops.prims.convert_element_type.default)


def _converts_only(node: Node, user: Node) -> bool:
    """Whether `user` only converts `node` to another dtype (a copy in the same layout)."""
    return (
        user.op == "call_function"
        and user.target in CONVERSIONS
        and user.args[0] is node
        and set(user.kwargs) <= {"dtype"}
    )


def _converts_or_checks(node: Node, user: Node) -> bool:
    """Whether `user` converts `node` as an exported program does (`x.float()` is
    `aten.to.dtype(x, float32)`), or checks its metadata without reading a value."""
    exported_forms = user.op == "call_function" and user.args and user.args[0] is node
    if exported_forms and user.target == aten._assert_tensor_metadata.default:
        return True
    if exported_forms and user.target == aten.to.dtype:
        return len(user.args) == 2 and not user.kwargs
    return _converts_only(node, user)


def _narrow_and_read_only_as(node: Node, reads: Callable[[Node, Node], bool]) -> bool:
    """Whether `node` is a narrow integer value that has users and that `reads` accepts
    every one of."""
    value = node.meta.get("val")
    return (
        isinstance(value, torch.Tensor)
        and value.dtype in NARROW
        and bool(node.users)
        and all(reads(node, user) for user in node.users)
    )


def only_converted(node: Node) -> bool:
    """Whether `node`, an exported program's input, is a narrow integer value that every user
    only converts (or checks the metadata of), so that it can be read as int32."""
    return _narrow_and_read_only_as(node, _converts_or_checks)


def widen_narrow_integers(graph: Graph) -> bool:
    """Reads each narrow integer input that the graph only converts as int32 (see the module
    docstring); whether it changed the graph."""
    changed = False
    for node in [n for n in graph.nodes if n.op == "placeholder"]:
        if not _narrow_and_read_only_as(node, _converts_only):
            continue
        value, users = node.meta["val"], list(node.users)
        with graph.inserting_after(node):
            wide = graph.call_function(aten._to_copy.default, (node,), {"dtype": torch.int32})
        with value.fake_mode:
            wide.meta["val"] = value.to(torch.int32)
        wide.meta.update({k: users[0].meta[k] for k in KEPT_META if k in users[0].meta})
        wide.meta[BOUNDARY] = f"{value.dtype} read as int32"
        for user in users:
            user.replace_input_with(node, wide)
        changed = True
    return changed
