"""Attention on Hopper's warp-group tensor cores (`tile.attention ... atom wgmma`,
`emmy.passes.wgmma_attention_kernel`, FlashAttention-3's loop): in the SIMT emulator, which
runs its TMA copies, mbarriers, wgmmas and warp-specialised roles and checks their races,
against PyTorch eager on fresh random inputs (causal and not, tails, q_len != kv_len,
grouped-query heads, both mask kinds, rows masked whole, head dims 64 and 128, bf16 and f16),
and its CUDA compiled for sm_90a without spills. Sizes are small: the emulator runs every
thread of a block at once, each case in seconds."""

import re
from dataclasses import replace

import pytest
from test_attention_kernel import attention_program
from test_cuda_target import NVCC, nvcc_compile, parse

from emmy.dialects import target, tile
from emmy.dialects.target import DEFAULT_TARGET
from emmy.passes.choose_tile_schedule import candidates, choose_schedule
from emmy.passes.wgmma_attention_kernel import (
    ITEM_OVERHEAD_BLOCKS,
    lower_wgmma_attention_kernel,
    output_slots,
)
from emmy.tools.bench.differential import check_levels, lower
from emmy.tools.cuda.target import print_cuda
from emmy.tools.frontend.program import load_program

needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")

EMULATED = {
    # A tail of rows (100 of a 128-row block: one consumer warp group's rows all past the
    # end) and of keys (130: two blocks of 128, the second 2 keys).
    "causal-tails-2x100x130-d64": attention_program(2, 100, 130, 64, causal=True),
    "tails-2x100x130-d64": attention_program(2, 100, 130, 64, causal=False),
    # Two consumer warp groups, two blocks of rows, the second crossing the diagonal.
    "causal-1x200x200-d128": attention_program(1, 200, 200, 128, causal=True),
    "1x64x64-d128-f16": attention_program(1, 64, 64, 128, causal=False, dtype="float16"),
    # q_len != kv_len both ways, causal (top-left aligned as torch's).
    "causal-q70-kv200-d64-f16": attention_program(1, 70, 200, 64, causal=True, dtype="float16"),
    "causal-q150-kv70-d64": attention_program(1, 150, 70, 64, causal=True),
    # Grouped-query heads: 4 query heads read 2 key/value heads, a block per query head.
    "causal-gqa-4q-2kv-64x96-d64": attention_program(4, 64, 96, 64, causal=True, kv_heads=2),
    # A boolean mask broadcast over the heads that masks the whole first key block's keys
    # (the running max stays -inf through it) and the tail; an additive mask per head.
    "bool-mask-2x64x200-d64": """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, mask):
        mask = torch.where(torch.arange(200) >= 130, mask, False)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
MaskedAttention()(torch.randn(1, 2, 64, 64, dtype=torch.bfloat16),
                  torch.randn(1, 2, 200, 64, dtype=torch.bfloat16),
                  torch.randn(1, 2, 200, 64, dtype=torch.bfloat16), torch.rand(64, 200) > 0.5)
""",
    # Rows whose every key is masked give zeros, as torch's sdpa: rows 3 and 40 by the
    # boolean mask, row 7 by -inf in the additive one (f16, head dim 128).
    "rows-masked-whole-2x64x70-d128-f16": """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, mask, bias):
        rows = torch.arange(64).unsqueeze(-1)
        mask = torch.where(rows == 3, False, torch.where(rows == 40, False, mask))
        bias = torch.where(rows == 7, float("-inf"), bias)
        return (F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
                + F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
MaskedAttention()(torch.randn(1, 2, 64, 128, dtype=torch.float16),
                  torch.randn(1, 2, 70, 128, dtype=torch.float16),
                  torch.randn(1, 2, 70, 128, dtype=torch.float16), torch.rand(64, 70) > 0.5,
                  torch.randn(2, 64, 70, dtype=torch.float16))
""",
    # The mask summary (`attention_mask_summary`): a causal boolean mask whose rows past 128
    # keep no key (their row blocks list no key block and store zeros; the last is a tail
    # of 8 rows), blocks of 64 rows skipping the key block above their diagonal; then a
    # key-padding mask [2, 1, 1, 192] whose second batch keeps 100 keys (its second key
    # block is skipped), at head dim 128, where the summary's one word a row leaves
    # registers for the overlap.
    "summarised-causal-mask-2x200x256-d64": """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, mask):
        rows = torch.arange(200).unsqueeze(-1)
        keys = torch.arange(256)
        mask = torch.where(keys <= rows, torch.where(rows < 128, mask, False), False)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
MaskedAttention()(torch.randn(1, 2, 200, 64, dtype=torch.bfloat16),
                  torch.randn(1, 2, 256, 64, dtype=torch.bfloat16),
                  torch.randn(1, 2, 256, 64, dtype=torch.bfloat16), torch.rand(200, 256) > 0.3)
""",
    "summarised-key-padding-2x2x128x192-d128": """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, lengths):
        mask = (torch.arange(192) < lengths.unsqueeze(-1)).view(2, 1, 1, 192)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
MaskedAttention()(torch.randn(2, 2, 128, 128, dtype=torch.bfloat16),
                  torch.randn(2, 2, 192, 128, dtype=torch.bfloat16),
                  torch.randn(2, 2, 192, 128, dtype=torch.bfloat16), torch.tensor([192, 100]))
""",
    # A last key block of 32 keys (2 of its 8 chunks): every lane of a quad still stores
    # its word (lanes 2 and 3 hold no chunk of it); a mask per query head, broadcast over the
    # batch, on grouped-query heads.
    "summarised-tail-of-32-keys-per-head-gqa": """
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
MaskedAttention()(torch.randn(2, 4, 128, 64, dtype=torch.bfloat16),
                  torch.randn(2, 2, 160, 64, dtype=torch.bfloat16),
                  torch.randn(2, 2, 160, 64, dtype=torch.bfloat16),
                  torch.rand(1, 4, 128, 160) > 0.5)
""",
    # Written by hand, without batch dims: the same op, so the same kernel (2-D tensor maps).
    "by-hand-100x70-d64": """
class ManualAttention(nn.Module):
    def forward(self, q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1) / 8.0, dim=-1) @ v
ManualAttention()(torch.randn(100, 64, dtype=torch.bfloat16),
                  torch.randn(70, 64, dtype=torch.bfloat16),
                  torch.randn(70, 64, dtype=torch.bfloat16))
""",
}


@pytest.mark.parametrize("name", sorted(EMULATED))
def test_wgmma_attention_in_the_emulator_matches_eager(name: str) -> None:
    program = load_program(EMULATED[name], "<source>")
    torch_ir = program.to_torch_ir()
    tile_ir = str(lower(torch_ir, "tile"))
    attentions = max(1, EMULATED[name].count("F.scaled_dot_product_attention"))
    wgmma = re.findall(r"tile\.attention .* atom wgmma m64n128k16 ", tile_ir)
    assert len(wgmma) == attentions, tile_ir
    summaries = re.findall(r"kernel\.launch @\w+_mask\(", str(lower(torch_ir, "kernel")))
    assert len(summaries) == (attentions if name.startswith("summarised-") else 0)
    reports = check_levels(program, torch_ir, ("kernel",), seed=23)
    failed = [r for r in reports if not r.passed]
    assert not failed, "disagrees with eager: " + ", ".join(
        f"{r.level} (max abs {r.max_abs_error:.3g}, max rel {r.max_rel_error:.3g})" for r in failed
    )


def test_attentions_sharing_a_mask_share_its_summary() -> None:
    """Two attentions on one boolean mask (a model's layers): the second's summary would be
    the first's, so it is launched once (`reuse-identical-launches`), and both attentions
    read it and match eager."""
    program = load_program(
        """
class Twice(nn.Module):
    def forward(self, q, k, v, mask):
        first = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return F.scaled_dot_product_attention(first, k, v, attn_mask=mask)
Twice()(torch.randn(1, 2, 128, 64, dtype=torch.bfloat16),
        torch.randn(1, 2, 128, 64, dtype=torch.bfloat16),
        torch.randn(1, 2, 128, 64, dtype=torch.bfloat16), torch.rand(128, 128) > 0.5)
""",
        "<source>",
    )
    torch_ir = program.to_torch_ir()
    launches = re.findall(r"kernel\.launch @(\w+)\(", str(lower(torch_ir, "kernel")))
    summaries = [name for name in launches if name.endswith(("_mask", "_mask_list"))]
    assert len(summaries) == 2 and len(launches) == 4, launches
    reports = check_levels(program, torch_ir, ("kernel",), seed=31)
    assert all(r.passed for r in reports), [(r.max_abs_error, r.max_rel_error) for r in reports]


def masked_gqa_program(kv_heads: int, depth: int, mask: str, rows: int = 300) -> str:
    """SDPA of 32 query heads of `rows` rows on `kv_heads` key/value heads, masked by
    `mask`."""
    return f"""
class MaskedAttention(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
MaskedAttention()(torch.randn(1, 32, {rows}, {depth}, dtype=torch.bfloat16),
                  torch.randn(1, {kv_heads}, {rows}, {depth}, dtype=torch.bfloat16),
                  torch.randn(1, {kv_heads}, {rows}, {depth}, dtype=torch.bfloat16), {mask})
"""


# Heads enough that the blocks take 128 rows (items of 64 would not run at once on 132 SMs).
COMPILED = {
    # A boolean mask at head dim 64 keeps the softmax/P V overlap (`overlaps`), as the Llama
    # benchmark's causal rows do once fuse-attention reads them as the boolean.
    "boolean-mask-gqa-d64": (masked_gqa_program(8, 64, "torch.rand(300, 300) > 0.5"), 64),
    "causal-d64": (attention_program(16, 1024, 1024, 64, causal=True), 64),
    "causal-d128": (attention_program(16, 1024, 1024, 128, causal=True), 128),
    # Keys a multiple of 16: the mask summary's bits, a word a row, keep the overlap at 128.
    "summarised-mask-gqa-d64": (masked_gqa_program(8, 64, "torch.rand(320, 320) > 0.5", 320), 64),
    "summarised-mask-gqa-d128": (
        masked_gqa_program(8, 128, "torch.rand(320, 320) > 0.5", 320),
        128,
    ),
    "masked-gqa-d128": (
        masked_gqa_program(2, 128, "torch.randn(300, 300, dtype=torch.bfloat16)"),
        128,
    ),
    # Plain at head dim 128 in several waves: 176 keys a block (WIDE_WGMMA_ATTENTION_KEYS).
    "plain-wide-keys-d128": (attention_program(16, 2048, 2048, 128, causal=False), 128),
}


TAKING_TURNS = {
    "causal-d128",
    "summarised-mask-gqa-d64",
    "summarised-mask-gqa-d128",
    "plain-wide-keys-d128",
}


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_consumers_take_turns_at_head_dim_128_and_with_a_mask_summary(name: str) -> None:
    """The consumer warp groups ping-pong (named barriers) on the overlapped path at head dim
    128, and at 64 only with a mask summary (`PING_PONG_MIN_DEPTH`: measured faster there,
    slower on causal rows); never on the path that runs a block's steps in turn (an additive
    mask at 128); the barriers of the turns are both consumer warp groups' (256 threads),
    those of a staged output each group's own (128)."""
    kernel_ir = str(lower(load_program(COMPILED[name][0], "<source>").to_torch_ir(), "kernel"))
    assert ("threads 256" in kernel_ir) == (name in TAKING_TURNS)


SPILL_BYTES = {"summarised-mask-gqa-d128": 24}
"""The bytes that ptxas spills in the kernels that spill at all, at most: at head dim 128
the consumers of a summarised mask hold a little more than 240 registers (their wgmmas
still overlap). Before the mask lists' key blocks were clamped (and their index checks,
`emmy_trap_index`, proven needless) the same kernel spilled 352 bytes and serialised its
wgmmas (C7512)."""


@needs_nvcc
@pytest.mark.parametrize("name", sorted(COMPILED))
def test_wgmma_attention_compiles_for_sm_90a_without_spills(name: str, tmp_path) -> None:
    """The kernel assembles for sm_90a (wgmma with A from registers, TMA, setmaxnreg) with
    no spills (but SPILL_BYTES') under its cap of 168 registers a thread at launch (384
    threads, one block an SM), which setmaxnreg then moves to the consumers (240), and its
    wgmmas overlap (no call among them, C7510, nor too few registers, C7512, serialises
    them)."""
    source, depth = COMPILED[name]
    kernel_ir = lower(load_program(source, "<source>").to_torch_ir(), "kernel")
    text = str(kernel_ir)
    assert "kernel.setmaxnreg inc 240" in text and "kernel.tma_load" in text
    assert f"kernel.wgmma m64n{depth}k16 %" in text and "kernel.mma_sync" not in text
    report = nvcc_compile(print_cuda(kernel_ir), tmp_path, ptxas_report=True)
    # No wgmma waits on a fence ptxas had to add between P V's wgmmas (warning C7519).
    assert "C7519" not in report and "C7512" not in report and "C7510" not in report, report
    spilled = [int(n) for n in re.findall(r"(\d+) bytes spill stores", report)]
    assert spilled and max(spilled) <= SPILL_BYTES.get(name, 0), report
    assert re.search(r"Used (\d+) registers", report), report


MASKS = {
    "causal-overlapped": ("is_causal=True", ""),
    "boolean-mask-overlapped": ("attn_mask=m", ", torch.rand(200, 200) > 0.2"),
    "additive-mask-in-turn": ("attn_mask=m", ", torch.randn(200, 200, dtype=torch.bfloat16)"),
}


@pytest.mark.parametrize("name", sorted(MASKS))
def test_persistent_blocks_take_items_of_different_lengths(monkeypatch, name) -> None:
    """On a GPU of 3 SMs the 3 persistent blocks take the 8 items (4 query heads on 2
    key/value heads, 2 blocks of 128 rows each) that the item table deals them: causal, in
    sections of one key/value head, block 0 takes items 1, 5 and 6, on three heads and of 2,
    2 and 1 key blocks; the producer
    waits for the consumers to release the query tile, and the key/value ring's phases run
    on across the items; with the overlap of a block's softmax and the last one's P V, and
    without (an additive mask)."""
    monkeypatch.setitem(target.TARGETS, "sm_90a", replace(target.TARGETS["sm_90a"], sm_count=3))
    keyword, mask = MASKS[name]
    masked = "m" in keyword
    program = load_program(
        f"""
class Attention(nn.Module):
    def forward(self, q, k, v{", m" if masked else ""}):
        return F.scaled_dot_product_attention(q, k, v, {keyword}, enable_gqa=True)
Attention()(torch.randn(1, 4, 200, 64, dtype=torch.bfloat16),
            torch.randn(1, 2, 200, 64, dtype=torch.bfloat16),
            torch.randn(1, 2, 200, 64, dtype=torch.bfloat16){mask})
""",
        "<source>",
    )
    torch_ir = program.to_torch_ir()
    torch_ir.attributes["kernel.target"] = target.TargetAttr("sm_90a")
    assert "grid [3, 1, 1] block [384, 1, 1]" in str(lower(torch_ir, "tile"))
    if name.startswith("causal"):
        table = "dense<[0, 3, 5, 8, 1, 5, 6, 3, 7, 0, 2, 4]>"
        assert table in str(lower(torch_ir, "kernel"))
    overlapped = "kernel.wgmma_wait 1" in str(lower(torch_ir, "kernel"))
    assert overlapped == name.endswith("-overlapped")
    reports = check_levels(program, torch_ir, ("kernel",), seed=29)
    assert all(r.passed for r in reports), [(r.max_abs_error, r.max_rel_error) for r in reports]


def item_table_of(source: str, **changes) -> list[int]:
    """The item table of the one wgmma attention of `source` on an sm_90a target with
    `changes` (e.g. fewer SMs)."""
    torch_ir = load_program(source, "<source>").to_torch_ir()
    torch_ir.attributes["kernel.target"] = target.TargetAttr("sm_90a")
    (kernel,) = [k for k in lower(torch_ir, "tile").walk() if isinstance(k, tile.KernelOp)]
    sm_90a = replace(target.TARGETS["sm_90a"], **changes)
    return lower_wgmma_attention_kernel(kernel, sm_90a)[2]


CAUSAL_8_HEADS = """
class Attention(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
Attention()(torch.randn(1, 8, 1024, 64, dtype=torch.bfloat16),
            torch.randn(1, 8, 1024, 64, dtype=torch.bfloat16),
            torch.randn(1, 8, 1024, 64, dtype=torch.bfloat16))
"""


def test_item_table_deals_each_item_once_longest_first_and_evenly(monkeypatch) -> None:
    """8 causal heads of 8 row blocks (1 to 8 key blocks) on 12 SMs: every item is dealt
    once; the 12 blocks' first items are the 12 longest of the first section (heads 0 and
    1, whose 16 items fill the grid once: their row blocks 2 to 7); the blocks' work (key blocks
    plus ITEM_OVERHEAD_BLOCKS an item) is within 10% of an even share, where blocks that
    stride through the items head by head (as before the table) are 25% over it."""
    monkeypatch.setitem(target.TARGETS, "sm_90a", replace(target.TARGETS["sm_90a"], sm_count=12))
    table = item_table_of(CAUSAL_8_HEADS, sm_count=12)
    key_blocks = range(1, 9)
    offsets, entries = table[:13], table[13:]
    assert offsets[0] == 0 and offsets == sorted(offsets) and offsets[-1] == 64
    assert sorted(entries) == list(range(64))

    def cost(item: int) -> int:
        return key_blocks[item % 8] + ITEM_OVERHEAD_BLOCKS

    even = sum(cost(item) for item in range(64)) / 12
    work = [sum(cost(i) for i in entries[offsets[b] : offsets[b + 1]]) for b in range(12)]
    assert max(work) <= 1.1 * even, work
    strided = [sum(cost(7 - i % 8) for i in range(b, 64, 12)) for b in range(12)]
    assert max(strided) >= 1.25 * even, strided
    assert sorted(entries[offsets[b]] for b in range(12)) == [*range(2, 8), *range(10, 16)]


def test_item_table_keeps_to_sections_of_heads_whose_keys_fit_the_l2(monkeypatch) -> None:
    """With an L2 cache of 3 heads' keys and values (bf16, 1024 keys of 64 + 64: 256 KiB a
    head), half of which holds 1 head's, the sections are single heads: the 12 items that
    run first are head 0's 8 and head 1's 4 longest, not the 12 longest of all heads."""
    monkeypatch.setitem(target.TARGETS, "sm_90a", replace(target.TARGETS["sm_90a"], sm_count=12))
    table = item_table_of(CAUSAL_8_HEADS, sm_count=12, l2_bytes=768 * 1024)
    offsets, entries = table[:13], table[13:]
    firsts = sorted(entries[offsets[b]] for b in range(12))
    assert firsts == [*range(8), 12, 13, 14, 15]


def test_candidates_offer_wgmma_and_mma_sync_for_a_prefill() -> None:
    """`emmy tune` times the heuristic's wgmma schedule (128 rows a block, 2 stages) beside
    one of 64 rows and a 3-stage ring, and mma_sync's tiles with each split of the keys.
    (With 2 heads, not 80, the heuristic's blocks would take 64 rows: all 8 items of 64 rows
    run at once on the 132 SMs.)"""
    torch_ir = load_program(attention_program(80, 256, 256, 64, causal=True), "<source>")
    loop_ir = lower(torch_ir.to_torch_ir(), "loop")
    (kernel,) = [op for op in loop_ir.walk() if op.name == "loop.kernel"]
    offered = {
        (str(s.mma_atom), s.tile_shape[0], s.pipeline_depth, s.split)
        for s in candidates(kernel, DEFAULT_TARGET)
        if s.tile_shape
    }
    wgmma = {("wgmma m64n128k16", rows, depth, 1) for rows in (64, 128) for depth in (2, 3)}
    assert wgmma <= offered, offered
    assert ("mma_sync m16n8k16", 64, 2, 1) in offered, offered
    heuristic = choose_schedule(kernel, DEFAULT_TARGET)
    assert (str(heuristic.mma_atom), heuristic.tile_shape) == ("wgmma m64n128k16", (128, 128, 64))


def wgmma_atom_of(source: str) -> str:
    """The atom the heuristic gives the one attention of `source` (132 SMs)."""
    loop_ir = lower(load_program(source, "<source>").to_torch_ir(), "loop")
    (kernel,) = [op for op in loop_ir.walk() if op.name == "loop.kernel"]
    return str(choose_schedule(kernel, DEFAULT_TARGET).mma_atom)


def test_plain_attention_at_head_dim_128_takes_176_keys_a_block_in_several_waves() -> None:
    """FlashAttention-3's 176 keys a block where the attention is neither causal nor masked,
    at head dim 128, and its items (16 heads of 16 row blocks) take several waves of the
    SMs; 128 keys in one wave (16 heads of 8), causal, masked, or at head dim 64. The
    candidates offer 176 keys only at head dim 128 (at 64 it was 25% slower on an H100)."""
    assert wgmma_atom_of(attention_program(16, 2048, 2048, 128, causal=False)) == "wgmma m64n176k16"
    assert wgmma_atom_of(attention_program(16, 1024, 1024, 128, causal=False)) == "wgmma m64n128k16"
    assert wgmma_atom_of(attention_program(16, 2048, 2048, 128, causal=True)) == (
        "wgmma m64n128k16"
    )
    assert wgmma_atom_of(attention_program(16, 2048, 2048, 64, causal=False)) == "wgmma m64n128k16"
    masked = masked_gqa_program(8, 128, "torch.rand(2048, 2048) > 0.5", 2048)
    assert wgmma_atom_of(masked) == "wgmma m64n128k16"
    for depth, widths in ((128, {128, 176}), (64, {128})):
        source = attention_program(8, 512, 512, depth, causal=False)
        loop_ir = lower(load_program(source, "<source>").to_torch_ir(), "loop")
        (kernel,) = [op for op in loop_ir.walk() if op.name == "loop.kernel"]
        offered = {
            s.tile_shape[1]
            for s in candidates(kernel, DEFAULT_TARGET)
            if s.mma_atom is not None and s.mma_atom.kind == tile.AtomKind.WGMMA
        }
        assert offered == widths, (depth, offered)


def test_176_keys_a_block_run_in_the_emulator_across_items_and_a_tail(monkeypatch) -> None:
    """On a GPU of one SM, the one persistent block takes both heads' items at 176 keys a
    block: 400 keys are two whole blocks and a tail of 48 (masked; TMA reads zeros past the
    end), and the key/value ring's phases run on from the first item to the second."""
    monkeypatch.setitem(target.TARGETS, "sm_90a", replace(target.TARGETS["sm_90a"], sm_count=1))
    program = load_program(attention_program(2, 64, 400, 128, causal=False), "<source>")
    torch_ir = program.to_torch_ir()
    torch_ir.attributes["kernel.target"] = target.TargetAttr("sm_90a")
    assert "atom wgmma m64n176k16" in str(lower(torch_ir, "tile"))
    reports = check_levels(program, torch_ir, ("kernel",), seed=37)
    assert all(r.passed for r in reports), [(r.max_abs_error, r.max_rel_error) for r in reports]


@pytest.mark.parametrize(
    "rows, keys, depth, pipeline, element, slots",
    [
        # 32 KiB of queries and 128 KiB of stages leave room for both panels of 64 rows.
        (128, 128, 128, 2, "bf16", 2),
        # 176 keys a block: 208 KiB of tiles, room for one slot; the panels take it in turn.
        (128, 176, 128, 2, "bf16", 1),
        (128, 128, 64, 2, "f16", 1),
        # One consumer warp group (a head of 64 rows): its two panels both fit.
        (64, 176, 128, 2, "bf16", 2),
        # 3 stages at head dim 128 take 224 KiB of the 227: the lanes store from registers.
        (128, 128, 128, 3, "bf16", 0),
    ],
)
def test_output_slots_fill_the_shared_memory_the_stages_leave(
    rows, keys, depth, pipeline, element, slots
) -> None:
    """A consumer warp group stages as many of its row's panels (64 rows by 128 bytes) as
    fit beside the query tile and the key/value stages in sm_90a's 227 KiB, a divisor of
    its panels (`output_slots`)."""
    memref = f"memref<1x2x256x{depth}x{element}>"
    operands = f"%q: {memref}, %k: {memref}, %v: {memref}, %o: {memref}"
    schedule = f"tile [{rows}, {keys}, {depth}] warps [{rows // 16}, 1] pipeline {pipeline}"
    module = parse(f"""
tile.kernel @attention({operands}) grid [{512 // rows}, 1, 1] block [{2 * rows + 128}, 1, 1] {{
  tile.attention %q, %k, %v scale 0.125 into %o : {memref}, {memref}, {memref} into {memref}
    atom wgmma m64n{keys}k16 {schedule}
}}
""")
    (attention,) = [op for op in module.walk() if isinstance(op, tile.AttentionOp)]
    assert output_slots(attention, DEFAULT_TARGET) == slots
