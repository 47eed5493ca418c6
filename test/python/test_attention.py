"""Attention as one op: `F.scaled_dot_product_attention` and attention written by hand
become one `prim.attention` (`fuse-attention`), one kernel of one `loop.attention`, at every
level on the CPU interpreters against PyTorch eager on fresh random inputs (causal, boolean
and additive masks, grouped-query heads, q_len != kv_len, fp32, bf16, fp16); what the
pattern does not take keeps the decomposed form."""

import pytest
from corpus import with_dtype

from emmy.tools.bench.differential import EXECUTABLE_LEVELS, check_levels, lower
from emmy.tools.frontend.program import load_program

PROGRAMS: dict[str, tuple[str, int]] = {
    # name: (program, how many attentions it holds)
    "sdpa_causal": (
        """
class Attention(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
Attention()(torch.randn(1, 2, 9, 8, dtype=DT), torch.randn(1, 2, 9, 8, dtype=DT),
            torch.randn(1, 2, 9, 8, dtype=DT))
""",
        1,
    ),
    "sdpa_masks_q_len_kv_len": (
        """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, mask, bias):
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        b = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3)
        return a + b
MaskedAttention()(torch.randn(2, 5, 8, dtype=DT), torch.randn(2, 7, 8, dtype=DT),
                  torch.randn(2, 7, 4, dtype=DT), torch.rand(5, 7) > 0.3,
                  torch.randn(5, 7, dtype=DT))
""",
        2,
    ),
    "sdpa_gqa_causal_q_len_kv_len": (
        """
class GroupedAttention(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
GroupedAttention()(torch.randn(2, 4, 5, 8, dtype=DT), torch.randn(2, 2, 7, 8, dtype=DT),
                   torch.randn(2, 2, 7, 8, dtype=DT))
""",
        1,
    ),
    "by_hand": (
        """
class ManualAttention(nn.Module):
    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1) / 4.0
        return torch.softmax(scores, dim=-1) @ v
ManualAttention()(torch.randn(2, 6, 16, dtype=DT), torch.randn(2, 6, 16, dtype=DT),
                  torch.randn(2, 6, 16, dtype=DT))
""",
        1,
    ),
    "by_hand_additive_mask": (
        """
class ManualAttention(nn.Module):
    def forward(self, q, k, v, bias):
        scores = q @ k.transpose(-2, -1) * 0.25 + bias
        return torch.softmax(scores, dim=-1) @ v
ManualAttention()(torch.randn(2, 3, 6, 16, dtype=DT), torch.randn(2, 3, 10, 16, dtype=DT),
                  torch.randn(2, 3, 10, 4, dtype=DT), torch.randn(6, 10, dtype=DT))
""",
        1,
    ),
    # The permuted [B, S, H, D] layout of a decoder layer: the query, key and value are
    # materialized row-major for the attention's kernel, and its output is read permuted.
    "sdpa_transposed_heads": (
        """
class Attention(nn.Module):
    def forward(self, q, k, v):
        q, k, v = (x.transpose(1, 2) for x in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out.transpose(1, 2).reshape(2, 6, 16)
Attention()(torch.randn(2, 6, 2, 8, dtype=DT), torch.randn(2, 6, 2, 8, dtype=DT),
            torch.randn(2, 6, 2, 8, dtype=DT))
""",
        1,
    ),
}


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_attention_is_one_op_and_matches_eager_at_every_level(name: str, dtype: str) -> None:
    source, attentions = PROGRAMS[name]
    program = load_program(with_dtype(source, dtype), "<source>")
    torch_ir = program.to_torch_ir()
    fused_ir = str(lower(torch_ir, "fused"))
    assert fused_ir.count("prim.attention") == attentions, fused_ir
    assert "prim.contract" not in fused_ir and "prim.reduce" not in fused_ir, fused_ir
    loop_ir = str(lower(torch_ir, "loop"))
    assert loop_ir.count("loop.attention") == attentions, loop_ir
    reports = check_levels(program, torch_ir, EXECUTABLE_LEVELS, seed=7)
    failed = [r for r in reports if not r.passed]
    assert not failed, "first level to disagree with eager: " + ", ".join(
        f"{r.level} (max abs {r.max_abs_error:.3g}, max rel {r.max_rel_error:.3g})" for r in failed
    )


UNFUSED = {
    # The scores are returned too: they stay a product of their own.
    "scores_returned": """
class Attention(nn.Module):
    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1) * 0.25
        return torch.softmax(scores, dim=-1) @ v, scores
Attention()(torch.randn(2, 6, 16), torch.randn(2, 6, 16), torch.randn(2, 6, 16))
""",
    # A mask added before the scale: not softmax(q k^T * scale + mask).
    "mask_before_scale": """
class Attention(nn.Module):
    def forward(self, q, k, v, bias):
        scores = (q @ k.transpose(-2, -1) + bias) * 0.25
        return torch.softmax(scores, dim=-1) @ v
Attention()(torch.randn(2, 6, 16), torch.randn(2, 6, 16), torch.randn(2, 6, 16),
            torch.randn(6, 6))
""",
    # Softmax over the queries, not the keys.
    "softmax_over_queries": """
class Attention(nn.Module):
    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1) * 0.25
        return torch.softmax(scores, dim=-2) @ v
Attention()(torch.randn(2, 6, 16), torch.randn(2, 6, 16), torch.randn(2, 6, 16))
""",
}


@pytest.mark.parametrize("name", sorted(UNFUSED))
def test_what_attention_does_not_take_stays_decomposed_and_correct(name: str) -> None:
    program = load_program(UNFUSED[name], "<source>")
    torch_ir = program.to_torch_ir()
    fused_ir = str(lower(torch_ir, "fused"))
    assert "prim.attention" not in fused_ir, fused_ir
    reports = check_levels(program, torch_ir, ("prim", "fused", "loop"), seed=3)
    assert all(r.passed for r in reports), [(r.level, r.max_abs_error) for r in reports]
