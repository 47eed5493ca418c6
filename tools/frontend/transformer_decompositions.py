"""Decompositions of the fused transformer ops of PyTorch's inference fast path, which PyTorch
has none of, into the linear layers, attention and norms that emmy compiles.

    y = aten._transformer_encoder_layer_fwd(src, 32, 4, qkv_w, qkv_b, proj_w, proj_b, False,
                                            False, 1e-5, n1_w, n1_b, n2_w, n2_b, f1_w, f1_b,
                                            f2_w, f2_b, mask, 1)

becomes (norm_first False, ReLU, a key padding mask: True where a key is left out)

    q, k, v = linear(src, qkv_w[:32], qkv_b[:32]), ..., each [B, 4, T, 8]
    x = layer_norm(linear(sdpa(q, k, v, where(mask[:, None, None], -inf, 0)), proj_w, proj_b)
                   + src)
    y = layer_norm(linear(relu(linear(x, f1_w, f1_b)), f2_w, f2_b) + x)

`nn.TransformerEncoderLayer` and `nn.MultiheadAttention` take this path in eval without
gradients (`_transformer_encoder_layer_fwd`, `_native_multi_head_attention`), so a model's
encoder reaches emmy as these two ops. The semantics follow ATen's
`transformer_encoder_layer_forward` and `native_multi_head_attention_cpu`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

aten = torch.ops.aten


def _additive_mask(mask: torch.Tensor | None, mask_type: int | None, batch: int, keys: int):
    """The mask as scores to add, broadcast to [B, H, T, S]: a boolean one leaves out the keys
    where it is True (as ATen's masked softmax); mask_type 1 is a key padding mask [B, S], 0
    a mask [T, S] of every batch and head, 2 (or None) one of the scores' own shape."""
    if mask is None:
        return None
    if mask_type == 1:
        mask = mask.view(batch, 1, 1, keys)
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=torch.float32, device=mask.device).masked_fill(
            mask, -math.inf
        )
    return mask


def native_multi_head_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    embed_dim: int,
    num_head: int,
    qkv_weight: torch.Tensor,
    qkv_bias: torch.Tensor,
    proj_weight: torch.Tensor,
    proj_bias: torch.Tensor,
    mask: torch.Tensor | None = None,
    need_weights: bool = True,
    average_attn_weights: bool = True,
    mask_type: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """`aten._native_multi_head_attention`: batch-first [B, T, E] inputs, the query, key and
    value projections stacked in `qkv_weight`; the attention weights (averaged over the heads
    if asked) as the second result when `need_weights`, else an empty tensor."""
    batch, rows, _ = query.shape
    keys = key.shape[1]
    head_dim = embed_dim // num_head

    def heads(x: torch.Tensor, part: int) -> torch.Tensor:
        rows_of = slice(part * embed_dim, (part + 1) * embed_dim)
        projected = F.linear(x, qkv_weight[rows_of], qkv_bias[rows_of])
        return projected.view(batch, x.shape[1], num_head, head_dim).transpose(1, 2)

    q, k, v = heads(query, 0), heads(key, 1), heads(value, 2)
    additive = _additive_mask(mask, mask_type, batch, keys)
    if additive is not None:
        additive = additive.to(q.dtype)
    if need_weights:
        scores = q @ k.transpose(-2, -1) / math.sqrt(head_dim)
        weights = torch.softmax(scores if additive is None else scores + additive, dim=-1)
        attended = weights @ v
        if average_attn_weights:
            weights = weights.mean(dim=1)
    else:
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=additive)
        weights = query.new_empty((0,))
    merged = attended.transpose(1, 2).reshape(batch, rows, embed_dim)
    return F.linear(merged, proj_weight, proj_bias), weights


def transformer_encoder_layer(
    src: torch.Tensor,
    embed_dim: int,
    num_heads: int,
    qkv_weight: torch.Tensor,
    qkv_bias: torch.Tensor,
    proj_weight: torch.Tensor,
    proj_bias: torch.Tensor,
    use_gelu: bool,
    norm_first: bool,
    eps: float,
    norm_weight_1: torch.Tensor,
    norm_bias_1: torch.Tensor,
    norm_weight_2: torch.Tensor,
    norm_bias_2: torch.Tensor,
    ffn_weight_1: torch.Tensor,
    ffn_bias_1: torch.Tensor,
    ffn_weight_2: torch.Tensor,
    ffn_bias_2: torch.Tensor,
    mask: torch.Tensor | None = None,
    mask_type: int | None = None,
) -> torch.Tensor:
    """`aten._transformer_encoder_layer_fwd`: self-attention, then a feed-forward block, each
    added to its input and normed after it (or its input normed first, `norm_first`)."""

    def norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (embed_dim,), weight, bias, eps)

    x = norm(src, norm_weight_1, norm_bias_1) if norm_first else src
    x = src + native_multi_head_attention(
        x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, mask,
        need_weights=False, mask_type=mask_type,
    )[0]  # fmt: skip
    if not norm_first:
        x = norm(x, norm_weight_1, norm_bias_1)
    before_ffn = x
    if norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    hidden = F.linear(x, ffn_weight_1, ffn_bias_1)
    hidden = F.gelu(hidden) if use_gelu else F.relu(hidden)
    x = before_ffn + F.linear(hidden, ffn_weight_2, ffn_bias_2)
    return norm(x, norm_weight_2, norm_bias_2) if not norm_first else x


TRANSFORMER_DECOMPOSITIONS = {
    aten._native_multi_head_attention.default: native_multi_head_attention,
    aten._transformer_encoder_layer_fwd.default: transformer_encoder_layer,
}
"""The fast path's ops and their decompositions, beside PyTorch's own (`decompositions`)."""
