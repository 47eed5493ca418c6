"""Decompositions that replace PyTorch's own where these compute something other than eager's
kernels, so that what emmy compiles agrees with eager. `CORRECTED_DECOMPOSITIONS` go in the
table the importer's export path decomposes by; a decomposition PyTorch runs while AOTAutograd
traces (registered at the autograd dispatch key, ahead of any table) is avoided in Dynamo's
graph instead, by calling the corrected function there (`use_corrected_functions`).

    F.multilabel_margin_loss(x, t)    # x [B, C]; t [B, C] of class indices, -1 ending the list

PyTorch 2.13's decomposition of `multilabel_margin_loss_forward` (which Inductor uses too)
counts a term for every slot of a row of `t`, those after its first -1 included, as if each
of those named class 0; eager sums over the listed classes only. Here the slots after the
end are masked out as well as the classes that are targets:

    listed[b, j] = j < (first j with t[b, j] == -1)
    loss[b] = sum over listed j and non-target i of max(0, 1 - (x[b, t[b, j]] - x[b, i])) / C
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.fx import GraphModule

aten = torch.ops.aten

REDUCTIONS = ("none", "mean", "sum")
"""ATen's reduction numbers, as `torch.nn._reduction.get_enum` gives them."""


def multilabel_margin_loss_forward(
    input: torch.Tensor, target: torch.Tensor, reduction: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """`aten.multilabel_margin_loss_forward`: the loss and, per class, whether it is a
    target (as `input`'s dtype), both shaped as ATen's."""
    scores, labels = torch.atleast_2d(input), torch.atleast_2d(target)
    classes = scores.shape[-1]
    positions = torch.arange(classes, device=labels.device)
    end = torch.where(labels == -1, positions, classes).amin(-1, keepdim=True)
    listed = positions < end  # [B, j]
    named = scores.gather(-1, torch.where(listed, labels, 0))  # [B, j]
    is_target = (positions == torch.where(listed, labels, -1).unsqueeze(-1)).any(1)  # [B, i]
    margins = (1 - named.unsqueeze(-1) + scores.unsqueeze(1)).clamp_min(0) / classes
    counted = listed.unsqueeze(-1) & ~is_target.unsqueeze(1)  # [B, j, i]
    loss = torch.where(counted, margins, 0).sum((1, 2))
    if input.dim() < 2:
        loss = loss.reshape(())
    kind = REDUCTIONS[reduction]
    if kind != "none":
        loss = loss.mean() if kind == "mean" else loss.sum()
    return loss, is_target.to(input.dtype).reshape(target.shape)


CORRECTED_DECOMPOSITIONS = {
    aten.multilabel_margin_loss_forward.default: multilabel_margin_loss_forward,
}


def multilabel_margin_loss(
    input: torch.Tensor,
    target: torch.Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> torch.Tensor:
    """`F.multilabel_margin_loss` by `multilabel_margin_loss_forward`."""
    if size_average is not None or reduce is not None:
        reduction = torch.nn._reduction.legacy_get_string(size_average, reduce)
    return multilabel_margin_loss_forward(input, target, REDUCTIONS.index(reduction))[0]


CORRECTED_FUNCTIONS = {F.multilabel_margin_loss: multilabel_margin_loss}


def use_corrected_functions(gm: GraphModule) -> None:
    """Calls in Dynamo's graph `gm` of a function of `CORRECTED_FUNCTIONS` call its corrected
    form instead."""
    changed = False
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in CORRECTED_FUNCTIONS:
            node.target = CORRECTED_FUNCTIONS[node.target]
            changed = True
    if changed:
        gm.recompile()
