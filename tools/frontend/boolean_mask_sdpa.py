"""`emmy::sdpa_boolean_mask`: `F.scaled_dot_product_attention` with a boolean mask kept as one
op through AOTAutograd, so that emmy reads the mask the user gave.

    sdpa = torch._C._nn.scaled_dot_product_attention(q, k, v, attn_mask=causal, enable_gqa=True)

becomes, in Dynamo's graph before AOTAutograd traces it (`keep_boolean_mask_sdpa`),

    sdpa = torch.ops.emmy.sdpa_boolean_mask(q, k, v, causal, 0.0, False, None, True)

AOTAutograd would otherwise trace PyTorch's CUDA dispatch of the op: for cuDNN that is
`where(mask, 0, -65504)`, an additive bf16 mask of a large finite value, which emmy has to add
to every score (it cannot be read as the boolean: a row that the boolean masks whole gets zeros,
the finite mask an average of every value). Kept as the boolean, the attention kernel reads one
bit a score and skips the key blocks that mask every row of a block
(`emmy.passes.attention_mask_summary`). The rows masked whole then give zeros, as sdpa's math
reference does; cuDNN's finite mask is the one backend that gives otherwise.

The op has no derivative: only graphs traced without gradients take it. Where a partition of the
graph runs in eager PyTorch, the op calls `F.scaled_dot_product_attention` itself.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.fx import GraphModule

SDPA_DEFAULTS = {
    "attn_mask": None,
    "dropout_p": 0.0,
    "is_causal": False,
    "scale": None,
    "enable_gqa": False,
}
"""F.scaled_dot_product_attention's arguments after query, key and value, with their
defaults: `sdpa_boolean_mask`'s, in order."""


@torch.library.custom_op("emmy::sdpa_boolean_mask", mutates_args=())
def sdpa_boolean_mask(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: torch.Tensor,
    dropout_p: float,
    is_causal: bool,
    scale: float | None,
    enable_gqa: bool,
) -> torch.Tensor:
    result = F.scaled_dot_product_attention(
        query, key, value, attn_mask, dropout_p, is_causal, scale=scale, enable_gqa=enable_gqa
    )
    return result.contiguous()


@sdpa_boolean_mask.register_fake
def _(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    return query.new_empty((*query.shape[:-1], value.shape[-1]))


def _arguments(node: torch.fx.Node) -> list:
    """The sdpa call's arguments, each in `sdpa_boolean_mask`'s order, defaults filled in."""
    names = ["query", "key", "value", *SDPA_DEFAULTS]
    bound = {**SDPA_DEFAULTS, **dict(zip(names, node.args)), **node.kwargs}
    return [bound[name] for name in names]


def keep_boolean_mask_sdpa(gm: GraphModule) -> None:
    """Calls of `F.scaled_dot_product_attention` with a boolean mask in Dynamo's graph `gm`
    call `sdpa_boolean_mask` instead, where gradients are off (see the module docstring)."""
    if torch.is_grad_enabled():
        return
    changed = False
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is not F.scaled_dot_product_attention:
            continue
        arguments = _arguments(node)
        mask = arguments[3]
        value = mask.meta.get("example_value") if isinstance(mask, torch.fx.Node) else None
        if not (isinstance(value, torch.Tensor) and value.dtype == torch.bool):
            continue
        node.target = torch.ops.emmy.sdpa_boolean_mask.default
        node.args, node.kwargs = tuple(arguments), {}
        changed = True
    if changed:
        gm.recompile()
