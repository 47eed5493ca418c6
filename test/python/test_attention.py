"""Attention as one op: `F.scaled_dot_product_attention` and attention written by hand
become one `prim.attention` (`fuse-attention`), one kernel of one `loop.attention`, at every
level on the CPU interpreters against PyTorch eager on fresh random inputs (causal, boolean
and additive masks, grouped-query heads, q_len != kv_len, fp32, bf16, fp16); what the
pattern does not take keeps the decomposed form."""

import numpy as np
import pytest
from corpus import assert_every_level_matches_eager, with_dtype
from xdsl.parser import Parser

from emmy.dialects import make_context
from emmy.passes.expand_loop_attention import ExpandLoopAttentionPass
from emmy.tools.bench.differential import check_levels, lower
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter.run import find_function, random_inputs, run_module

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
    # Rows whose every key is masked (row 2 by the boolean mask, row 4 by -inf in the
    # additive one): torch's sdpa gives them zeros.
    "sdpa_rows_masked_whole": (
        """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, mask, bias):
        rows = torch.arange(5).unsqueeze(-1)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.where(rows == 2, False, mask))
        bias = torch.where(rows == 4, float("-inf"), bias)
        b = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, is_causal=False)
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
    assert_every_level_matches_eager(program, torch_ir, seed=7)


def test_operands_of_one_shape_are_materialized_by_one_kernel() -> None:
    """The transposed query, key and value of `sdpa_transposed_heads` (no producer computes
    them) are written by one launch, not three, before the attention's kernel."""
    source, _ = PROGRAMS["sdpa_transposed_heads"]
    program = load_program(with_dtype(source, "bfloat16"), "<source>")
    loop_ir = str(lower(program.to_torch_ir(), "loop"))
    kernels = [line.split("(")[0].strip() for line in loop_ir.splitlines() if "loop.kernel" in line]
    assert kernels == [
        "loop.kernel @k_transpose",
        "loop.kernel @k_sdpa",
        "loop.kernel @k_transpose_reshape",
    ]
    assert "%out0: memref<2x2x6x8xbf16>, %out1: memref<2x2x6x8xbf16>, %out2:" in loop_ir


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


# Grouped-query heads, a boolean mask broadcast along the batch, causal, q_len != kv_len,
# fp16 inputs and an f32 output.
LOOP_ATTENTION = """
loop.kernel @k(%q: memref<2x4x5x8xf16>, %k: memref<2x2x7x8xf16>, %v: memref<2x2x7x6xf16>,
               %m: memref<4x5x7xi1>, %o: memref<2x4x5x6xf32>) {
  loop.attention %q, %k, %v mask %m scale 0.3 causal into %o
      : memref<2x4x5x8xf16>, memref<2x2x7x8xf16>, memref<2x2x7x6xf16> mask memref<4x5x7xi1>
        into memref<2x4x5x6xf32>
}
func.func @forward(%q: memref<2x4x5x8xf16>, %k: memref<2x2x7x8xf16>, %v: memref<2x2x7x6xf16>,
                   %m: memref<4x5x7xi1>) -> memref<2x4x5x6xf32> {
  %o = memref.alloc() : memref<2x4x5x6xf32>
  loop.launch @k(%q, %k, %v, %m, %o) : memref<2x4x5x8xf16>, memref<2x2x7x8xf16>,
      memref<2x2x7x6xf16>, memref<4x5x7xi1>, memref<2x4x5x6xf32>
  func.return %o : memref<2x4x5x6xf32>
}
"""


def test_loop_attention_and_its_expansion_match_torch() -> None:
    import torch
    import torch.nn.functional as F

    ctx = make_context()
    module = Parser(ctx, LOOP_ATTENTION).parse_module()
    module.verify()
    inputs = random_inputs(find_function(module, "forward"), seed=11)
    # Row 0 keeps key 0 alone (causal): where the mask drops it too, the row is masked
    # whole, and gives zeros as eager does.
    inputs[3][0, 0, 0] = False
    q, k, v, m = (torch.from_numpy(x) for x in inputs)
    causal = torch.ones(5, 7, dtype=torch.bool).tril()
    expected = F.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), attn_mask=m & causal, scale=0.3, enable_gqa=True
    ).numpy()
    (attention,) = run_module(module, inputs)
    ExpandLoopAttentionPass().apply(ctx, module)
    module.verify()
    assert "loop.attention" not in str(module)
    (expanded,) = run_module(module, inputs)
    # Probabilities rounded to f16 before the second product, as eager's flash kernels do.
    for value in (attention, expanded):
        np.testing.assert_allclose(value, expected, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(attention, expanded, rtol=1e-5, atol=1e-6)
