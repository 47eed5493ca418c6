"""Attention's mma_sync kernel (`tile.attention`, `emmy.passes.attention_kernel`), lowered
for sm_80 (sm_90a takes wgmma where a query head has 64 rows or more,
test_wgmma_attention.py): in the SIMT emulator against PyTorch eager on fresh random inputs
(causal and not, tails, q_len != kv_len, grouped-query heads, head dims 64 and 128, bf16 and
f16), and its CUDA compiled for sm_90a without spills. Sizes are small: the emulator runs
every thread of a block at once, each case in seconds."""

import re

import pytest
from test_cuda_target import NVCC, nvcc_compile
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Block

from emmy.dialects.target import DEFAULT_TARGET, TargetAttr
from emmy.passes.gemm_kernel import KernelEmitter
from emmy.tools.bench.differential import check_levels, lower
from emmy.tools.cuda.target import print_cuda
from emmy.tools.frontend.program import load_program

needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")


def for_sm_80(torch_ir: ModuleOp) -> ModuleOp:
    """`torch_ir`, its kernels for sm_80 (mma_sync, no wgmma)."""
    torch_ir.attributes["kernel.target"] = TargetAttr("sm_80")
    return torch_ir


def attention_program(
    heads: int,
    rows: int,
    keys: int,
    depth: int,
    causal: bool,
    kv_heads: int | None = None,
    dtype: str = "bfloat16",
) -> str:
    kv_heads = kv_heads or heads
    q, kv = f"(1, {heads}, {rows}, {depth})", f"(1, {kv_heads}, {keys}, {depth})"
    gqa = ", enable_gqa=True" if kv_heads != heads else ""
    return f"""
class Attention(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal={causal}{gqa})
Attention()(torch.randn{q[:-1]}, dtype=torch.{dtype}), torch.randn{kv[:-1]}, dtype=torch.{dtype}),
            torch.randn{kv[:-1]}, dtype=torch.{dtype}))
"""


EMULATED = {
    "causal-2x64x64-d64": attention_program(2, 64, 64, 64, causal=True),
    "2x64x64-d64": attention_program(2, 64, 64, 64, causal=False),
    "causal-tails-1x100x100-d64": attention_program(1, 100, 100, 64, causal=True),
    "tails-q50-kv100-d64": attention_program(1, 50, 100, 64, causal=False),
    "causal-q100-kv50-d64-f16": attention_program(1, 100, 50, 64, causal=True, dtype="float16"),
    "causal-gqa-4q-2kv-32x64-d64": attention_program(4, 32, 64, 64, causal=True, kv_heads=2),
    "causal-1x64x64-d128": attention_program(1, 64, 64, 128, causal=True),
    # A boolean mask broadcast over the heads that masks the whole first key block (the
    # running max stays -inf through it) and the tail; an additive mask per head.
    "bool-mask-2x50x130-d64": """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, mask):
        mask = torch.where(torch.arange(130) >= 70, mask, False)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
MaskedAttention()(torch.randn(1, 2, 50, 64, dtype=torch.bfloat16),
                  torch.randn(1, 2, 130, 64, dtype=torch.bfloat16),
                  torch.randn(1, 2, 130, 64, dtype=torch.bfloat16), torch.rand(50, 130) > 0.5)
""",
    # Rows whose every key is masked give zeros, as torch's sdpa: rows 3 and 40 by the
    # boolean mask, row 7 by -inf in the additive one.
    "rows-masked-whole-2x50x70-d64": """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, mask, bias):
        rows = torch.arange(50).unsqueeze(-1)
        mask = torch.where(rows == 3, False, torch.where(rows == 40, False, mask))
        bias = torch.where(rows == 7, float("-inf"), bias)
        return (F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
                + F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
MaskedAttention()(torch.randn(1, 2, 50, 64, dtype=torch.bfloat16),
                  torch.randn(1, 2, 70, 64, dtype=torch.bfloat16),
                  torch.randn(1, 2, 70, 64, dtype=torch.bfloat16), torch.rand(50, 70) > 0.5,
                  torch.randn(50, 70, dtype=torch.bfloat16))
""",
    "additive-mask-2x64x64-d64-f16": """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, bias):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3)
MaskedAttention()(torch.randn(1, 2, 64, 64, dtype=torch.float16),
                  torch.randn(1, 2, 64, 64, dtype=torch.float16),
                  torch.randn(1, 2, 64, 64, dtype=torch.float16),
                  torch.randn(1, 2, 64, 64, dtype=torch.float16))
""",
    # Multi-query attention (one key/value head for 4) over a batch of 2, f16.
    "causal-mqa-2x4q-1kv-20x30-d64-f16": """
class Attention(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
Attention()(torch.randn(2, 4, 20, 64, dtype=torch.float16),
            torch.randn(2, 1, 30, 64, dtype=torch.float16),
            torch.randn(2, 1, 30, 64, dtype=torch.float16))
""",
    # Written by hand: the same op, so the same kernel; also without batch dims.
    "by-hand-40x70-d64": """
class ManualAttention(nn.Module):
    def forward(self, q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1) / 8.0, dim=-1) @ v
ManualAttention()(torch.randn(40, 64, dtype=torch.bfloat16),
                  torch.randn(70, 64, dtype=torch.bfloat16),
                  torch.randn(70, 64, dtype=torch.bfloat16))
""",
    "by-hand-2x64x64-d64": """
class ManualAttention(nn.Module):
    def forward(self, q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1) * 0.125, dim=-1) @ v
ManualAttention()(torch.randn(1, 2, 64, 64, dtype=torch.bfloat16),
                  torch.randn(1, 2, 64, 64, dtype=torch.bfloat16),
                  torch.randn(1, 2, 64, 64, dtype=torch.bfloat16))
""",
}


@pytest.mark.parametrize("name", sorted(EMULATED))
def test_attention_kernel_in_the_emulator_matches_eager(name: str) -> None:
    program = load_program(EMULATED[name], "<source>")
    torch_ir = for_sm_80(program.to_torch_ir())
    tile_ir = str(lower(torch_ir, "tile"))
    attentions = max(1, EMULATED[name].count("F.scaled_dot_product_attention"))
    mma_sync = re.findall(r"tile\.attention .* atom mma_sync m16n8k16 ", tile_ir)
    assert len(mma_sync) == attentions, tile_ir
    reports = check_levels(program, torch_ir, ("tile", "kernel"), seed=17)
    failed = [r for r in reports if not r.passed]
    assert not failed, "disagrees with eager: " + ", ".join(
        f"{r.level} (max abs {r.max_abs_error:.3g}, max rel {r.max_rel_error:.3g})" for r in failed
    )


COMPILED = {
    "causal-d64": attention_program(2, 100, 100, 64, causal=True),
    "gqa-d128": attention_program(4, 100, 100, 128, causal=False, kv_heads=2),
}


@needs_nvcc
@pytest.mark.parametrize("name", sorted(COMPILED))
def test_attention_kernel_compiles_for_sm_90a_without_spills(name: str, tmp_path) -> None:
    kernel_ir = lower(for_sm_80(load_program(COMPILED[name], "<source>").to_torch_ir()), "kernel")
    assert "kernel.mma_sync" in str(kernel_ir)
    report = nvcc_compile(print_cuda(kernel_ir), tmp_path, ptxas_report=True)
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in report


@pytest.mark.parametrize("count, depth", [(1, 0), (2, 1), (5, 3), (44, 6)])
def test_reduced_combines_in_a_balanced_tree(count: int, depth: int) -> None:
    """`KernelEmitter.reduced`, which the online softmax's row maxima and sums take: each
    value combined once, in count - 1 ops, whose longest chain is ceil(log2(count)) long
    (a chain of count - 1 leaves the scheduler nothing to interleave)."""
    block = Block(arg_types=[f32] * count)
    result = KernelEmitter(block, {}, DEFAULT_TARGET).reduced(list(block.args), arith.AddfOp)
    ops = list(block.ops)
    assert len(ops) == count - 1
    combined = [o for op in ops for o in op.operands if o in block.args]
    assert sorted(a.index for a in combined) == (list(range(count)) if count > 1 else [])

    def chain(value) -> int:
        owner = value.owner
        return 0 if owner is block else 1 + max(chain(o) for o in owner.operands)

    assert chain(result) == depth
