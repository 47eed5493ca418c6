"""Products of rows kept unflattened where the rows count a dynamic size: AOTAutograd takes
an `nn.Linear` of a [b, s, k] input as a product of its rows flattened to [b*s, k], which
emmy cannot type where s is the dynamic size and b > 1 (`b*s` is an expression of the size,
`emmy.dialects.sizes`); the same product of the unflattened input is one `aten.matmul`.

    rows = aten.view(x, [2*s0, 64])            x: [2, s0, 64]
    y = aten.addmm(bias, rows, wt)             (or aten.mm(rows, wt))
    out = aten.view(y, [2, s0, 128])

becomes

    out = aten.add(aten.matmul(x, wt), bias)
"""

from __future__ import annotations

import math

import torch
from torch.fx import Graph, Node

aten = torch.ops.aten

VIEWS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)
PRODUCTS = (aten.mm.default, aten.addmm.default)


def _shape(node: Node) -> list:
    return list(node.meta["val"].shape)


def _is_symbolic_expression(size: object) -> bool:
    return isinstance(size, torch.SymInt) and not size.node.expr.is_symbol


def _flattened_rows(rows: Node) -> Node | None:
    """The input whose leading dims `rows` (a view to [m, k]) flattens, if m is an expression
    of symbolic sizes (else the flat product types as it is)."""
    if rows.op != "call_function" or rows.target not in VIEWS or len(rows.users) != 1:
        return None
    source = rows.args[0]
    if not isinstance(source, Node) or not isinstance(source.meta.get("val"), torch.Tensor):
        return None
    leading, (m, k) = _shape(source)[:-1], _shape(rows)
    if len(leading) < 2 or not _is_symbolic_expression(m) or _shape(source)[-1] != k:
        return None
    return source if m == math.prod(leading) else None


def unflatten_products(graph: Graph) -> bool:
    """Rewrites each flattened product of the graph (see the module docstring) whose result
    is viewed back to the input's leading dims; whether any was."""
    changed = False
    for product in list(graph.nodes):
        if product.op != "call_function" or product.target not in PRODUCTS:
            continue
        is_addmm = product.target is aten.addmm.default
        if is_addmm and (product.kwargs.get("beta", 1) != 1 or product.kwargs.get("alpha", 1) != 1):
            continue
        rows, weight = product.args[1:3] if is_addmm else product.args[:2]
        source = _flattened_rows(rows) if isinstance(rows, Node) else None
        (back,) = product.users if len(product.users) == 1 else (None,)
        if source is None or back is None or back.target not in VIEWS:
            continue
        if _shape(back) != [*_shape(source)[:-1], _shape(product)[-1]]:
            continue
        with graph.inserting_before(back):
            result = graph.call_function(aten.matmul.default, (source, weight))
            result.meta = {**product.meta, "val": back.meta["val"]}
            if is_addmm:
                result = graph.call_function(aten.add.Tensor, (result, product.args[0]))
                result.meta = {**product.meta, "val": back.meta["val"]}
        back.replace_all_uses_with(result)
        for node in (back, product, rows):
            graph.erase_node(node)
        changed = True
    return changed
