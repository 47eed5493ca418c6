"""Flash-decoding: a `tile.attention` whose keys are split across blocks (`split` of its
schedule, the blocks of the grid's y), each part's rows and log-sum-exps left in an f32
workspace and combined, in the same launch, by the last part to arrive at the rows' counter,
with the query heads that share a key/value head
packed into one block's rows. Loop IR with a hand-written schedule (split 1, 2, 4 and parts
of uneven lengths) lowered to Kernel IR and run in the SIMT emulator against PyTorch's
`F.scaled_dot_product_attention` on fresh random inputs: decode shapes (1 and 5 query rows
against 300 keys, not a multiple of the 64 a block takes, and a few thousand), causal with
fewer queries than keys (torch's top-left alignment: query i sees keys 0..i), GQA, boolean and
additive masks with rows masked whole, head dims 64 and 128, bf16 and f16; the choice of
`choose-tile-schedule` for decode shapes; the generated CUDA compiled for sm_90a."""

from dataclasses import dataclass

import numpy as np
import pytest
from test_cuda_target import NVCC, nvcc_compile
from xdsl.parser import Parser

from emmy.dialects import make_context, tile
from emmy.dialects.target import DEFAULT_TARGET
from emmy.passes.choose_tile_schedule import (
    ATTENTION_SPLIT_WARPS_PER_SM,
    ChooseTileSchedulePass,
    candidates,
)
from emmy.passes.pipelines import passes_to, run_passes
from emmy.tools.bench.differential import check_levels, lower
from emmy.tools.bench.tolerances import tolerance
from emmy.tools.cuda.target import print_cuda
from emmy.tools.frontend.program import load_program
from emmy.tools.interpreter.run import find_function, random_inputs, run_module

needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on PATH")

TYPES = {"bfloat16": "bf16", "float16": "f16"}


@dataclass(frozen=True)
class Decode:
    """An attention of `heads` query heads on `kv_heads`, `rows` queries against `keys`."""

    heads: int
    kv_heads: int
    rows: int
    keys: int
    depth: int = 64
    dtype: str = "bfloat16"
    causal: bool = False
    mask: str | None = None  # "i1": a boolean mask, "float": an additive one
    batch: int = 1

    def types(self) -> dict[str, str]:
        element = TYPES[self.dtype]
        query = f"{self.batch}x{self.heads}x{self.rows}x{self.depth}x{element}"
        keys = f"{self.batch}x{self.kv_heads}x{self.keys}x{self.depth}x{element}"
        types = {"q": f"memref<{query}>", "k": f"memref<{keys}>", "v": f"memref<{keys}>"}
        if self.mask:
            mask_element = "i1" if self.mask == "i1" else element
            types["m"] = f"memref<{self.heads}x{self.rows}x{self.keys}x{mask_element}>"
        types["o"] = f"memref<{query}>"
        return types

    def program(self, schedule: str | None) -> str:
        """Loop IR of the attention, its kernel scheduled by `schedule` (None: unscheduled)."""
        types = self.types()
        arguments = ", ".join(f"%{n}: {t}" for n, t in types.items())
        inputs = [n for n in types if n != "o"]
        mask = " mask %m" if self.mask else ""
        mask_type = f" mask {types['m']}" if self.mask else ""
        causal = " causal" if self.causal else ""
        attributes = f" attributes {{tile.schedule = {schedule}}}" if schedule else ""
        q, k, v, o = types["q"], types["k"], types["v"], types["o"]
        return f"""
loop.kernel @k({arguments}){attributes} {{
  loop.attention %q, %k, %v{mask} scale 0.125{causal} into %o
      : {q}, {k}, {v}{mask_type} into {o}
}}
func.func @forward({", ".join(f"%{n}: {types[n]}" for n in inputs)}) -> {o} {{
  %o = memref.alloc() : {o}
  loop.launch @k({", ".join(f"%{n}" for n in types)}) : {", ".join(types.values())}
  func.return %o : {o}
}}
"""


def schedule(block_q: int, depth: int, split: int) -> str:
    warps = block_q // 16
    return (
        f"#tile.schedule<block [{32 * warps}, 1, 1], loops [], tile [{block_q}, 64, {depth}], "
        f"atom mma_sync m16n8k16, warps [{warps}, 1], pipeline 2, split {split}>"
    )


def kernel_module(case: Decode, split: int, block_q: int = 16):
    ctx = make_context()
    module = Parser(ctx, case.program(schedule(block_q, case.depth, split))).parse_module()
    run_passes(ctx, module, passes_to("kernel", start="loop"), "loop-to-kernel")
    return module


def expected(case: Decode, inputs: list[np.ndarray]) -> np.ndarray:
    import torch
    import torch.nn.functional as F

    q, k, v, *mask = (torch.from_numpy(np.asarray(x)) for x in inputs)
    if mask and mask[0].dtype != torch.bool:
        mask[0] = mask[0].float()
    attention = F.scaled_dot_product_attention(
        q.float(),
        k.float(),
        v.float(),
        attn_mask=mask[0] if mask else None,
        is_causal=case.causal,
        scale=0.125,
        enable_gqa=True,
    )
    return attention.numpy()


def masked_rows_whole(case: Decode, inputs: list[np.ndarray]) -> None:
    """Masks every key of query row 0 of head 1 (and of no other row), in place."""
    mask = inputs[3]
    mask[:, :, 0] = mask[:, :, 0].dtype.type(True if mask.dtype == np.bool_ else 0.0)
    mask[1, 0] = False if mask.dtype == np.bool_ else -np.inf


EMULATED = {
    # name: (case, split, query rows a block)
    "q1-kv300-split4-gqa": (Decode(8, 2, 1, 300), 4, 16),
    # The same in a tile of 64 rows (4 warps share the copies; 60 rows are past the end).
    "q1-kv300-split4-gqa-64-rows": (Decode(8, 2, 1, 300), 4, 64),
    "q1-kv300-split2-mha-d128-f16": (Decode(2, 2, 1, 300, 128, "float16"), 2, 16),
    "q1-kv300-split1": (Decode(4, 2, 1, 300), 1, 16),
    # 5 blocks of keys in 3 parts: 1, 2 and 2 blocks; 4 query heads of 5 rows on one.
    "q5-kv300-split3-mqa-causal": (Decode(4, 1, 5, 300, causal=True), 3, 32),
    "q5-kv300-split2-causal-batch2": (Decode(2, 2, 5, 300, causal=True, batch=2), 2, 16),
    "q5-kv300-split4-bool-mask": (Decode(4, 2, 5, 300, mask="i1"), 4, 16),
    "q1-kv300-split4-additive-mask-f16": (
        Decode(4, 4, 1, 300, dtype="float16", mask="float"),
        4,
        16,
    ),
    # 2 blocks of keys in 4 parts: two parts take none (their rows' log-sum-exps are -inf).
    "q1-kv100-split4-empty-parts": (Decode(2, 2, 1, 100), 4, 16),
    # 40 blocks of keys in 16 parts of 2 or 3, 4 query heads a key/value head.
    "q1-kv2500-split16-gqa-d128": (Decode(8, 2, 1, 2500, 128), 16, 16),
    # 21 blocks of keys in 20 parts: the last part's block combines 16 parts in a loop's
    # iteration (COMBINED_AT_ONCE), then the other 4.
    "q1-kv1300-split20-gqa": (Decode(8, 2, 1, 1300), 20, 16),
}


@pytest.mark.parametrize("name", sorted(EMULATED))
def test_split_attention_in_the_emulator_matches_sdpa(name: str) -> None:
    case, split, block_q = EMULATED[name]
    module = kernel_module(case, split, block_q)
    kernel_ir = str(module)
    # The parts are combined in the same launch, by the last to arrive at its rows' counter.
    assert "_combine" not in kernel_ir
    assert ("kernel.atomic inc acq_rel" in kernel_ir) == (split > 1), kernel_ir
    inputs = random_inputs(find_function(module, "forward"), seed=23)
    if case.mask:
        masked_rows_whole(case, inputs)
    (result,) = run_module(module, inputs)
    want = expected(case, inputs)
    rtol, atol = tolerance(case.dtype, allows_tf32=False, largest=1.0)
    np.testing.assert_allclose(np.asarray(result, np.float32), want, rtol=rtol, atol=atol)
    if case.mask:
        assert not np.asarray(result)[0, 1, 0].any()


def test_choose_tile_schedule_splits_decode_to_fill_the_gpu() -> None:
    """Decode: one block of a warp per key/value head would leave most SMs idle, so the keys
    are split into parts, as many as give each SM ATTENTION_SPLIT_WARPS_PER_SM warps, but
    each part at least ATTENTION_MIN_PART_BLOCKS blocks of 64 keys (on mma_sync); a prefill
    of as many queries as keys takes wgmma, unsplit."""
    ctx = make_context()
    wanted_warps = DEFAULT_TARGET.sm_count * ATTENTION_SPLIT_WARPS_PER_SM  # 2112 on the H200
    cases = {
        # 8 blocks (the 4 query heads of a key/value head, one query each, in one block of
        # 16 rows); 64 key blocks in parts of at least 4.
        "gqa-b1-h32-kv8-q1-s4096": (Decode(32, 8, 1, 4096, 128), 16, 64 // 4),
        # 32 blocks, 512 key blocks: 2112 / 32 = 66 parts of 7 or 8 key blocks.
        "b1-h32-q1-s32768": (Decode(32, 32, 1, 32768, 128), 16, -(-wanted_warps // 32)),
        # 512 blocks: 2112 / 512, 5 parts.
        "b16-h32-q1-s4096": (Decode(32, 32, 1, 4096, 128, batch=16), 16, 5),
        # 5 queries of 4 heads on one key/value head: 20 packed rows, a tile of 32.
        "mqa-q5-s4096": (Decode(4, 1, 5, 4096, 64), 32, 64 // 4),
        # Prefill: 32 query heads x 32 blocks of 128 rows on wgmma, no split; plain at head
        # dim 128 in several waves, so 176 keys a block (WIDE_WGMMA_ATTENTION_KEYS).
        "gqa-prefill-s4096": (Decode(32, 8, 4096, 4096, 128), 128, 1),
    }
    for name, (case, block_q, split) in cases.items():
        module = Parser(ctx, case.program(None)).parse_module()
        ChooseTileSchedulePass().apply(ctx, module)
        (kernel,) = [op for op in module.body.block.ops if op.name == "loop.kernel"]
        schedule = kernel.attributes[tile.SCHEDULE_ATTRIBUTE].data
        block_kv = 176 if schedule.mma_atom.kind == tile.AtomKind.WGMMA else 64
        assert (schedule.mma_atom.kind == tile.AtomKind.WGMMA) == (case.rows >= 64), name
        assert (schedule.tile_shape, schedule.split) == ((block_q, block_kv, case.depth), split), (
            name
        )


@needs_nvcc
@pytest.mark.parametrize("depth", [64, 128])
def test_split_attention_compiles_for_sm_90a_without_spills(depth: int, tmp_path) -> None:
    case = Decode(32, 8, 1, 4096, depth, causal=False, mask="float")
    module = kernel_module(case, 8)
    cuda = print_cuda(module)
    # One kernel: its last part to arrive combines them, after an acq_rel arrival.
    assert "atom.acq_rel.gpu.inc.u32" in cuda
    report = nvcc_compile(cuda, tmp_path, ptxas_report=True)
    spills = [line for line in report.splitlines() if "spill" in line]
    assert "'k'" in report and len(spills) == 1, report
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in spills[0]


def test_sdpa_decode_is_split_and_matches_eager_at_every_level() -> None:
    """F.scaled_dot_product_attention decoding one query of 8 heads on 2 key/value heads
    against 1000 keys: choose-tile-schedule splits its 16 key blocks into 4 parts."""
    program = load_program(
        """
class Decode(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
Decode()(torch.randn(1, 8, 1, 64, dtype=torch.bfloat16),
         torch.randn(1, 2, 1000, 64, dtype=torch.bfloat16),
         torch.randn(1, 2, 1000, 64, dtype=torch.bfloat16))
""",
        "<source>",
    )
    torch_ir = program.to_torch_ir()
    tile_ir = str(lower(torch_ir, "tile"))
    assert "tile [16, 64, 64] warps [1, 1] pipeline 2 split 4" in tile_ir, tile_ir
    reports = check_levels(program, torch_ir, ("tile", "kernel"), seed=5)
    assert all(r.passed for r in reports), [(r.level, r.max_abs_error) for r in reports]


def test_candidates_offer_the_splits_that_fill_whole_waves() -> None:
    """Against 32,768 keys of head dim 128, a block of 16 rows holds 70 KB of tiles, 3 an SM
    (396 on the H200's 132 SMs), so the 32 heads' blocks fill one wave at split 12 and two
    at 24; 4 warps a block (64 rows) hold 86 KB: 2 an SM, 264 blocks, splits 8 and 16."""
    ctx = make_context()
    module = Parser(ctx, Decode(32, 32, 1, 32768, 128).program(None)).parse_module()
    (kernel,) = [op for op in module.body.block.ops if op.name == "loop.kernel"]
    offered = {
        (s.tile_shape[0], s.split) for s in candidates(kernel, DEFAULT_TARGET) if s.tile_shape
    }
    assert {(16, 12), (16, 24), (64, 8), (64, 16)} <= offered, offered
    assert (16, 13) not in offered


def test_candidates_offer_each_split_of_the_keys() -> None:
    """`emmy tune` times the heuristic's attention tile (16 rows) and one of 64 rows, each
    with every split that leaves every part a block of keys: 300 keys are 5 blocks of 64."""
    ctx = make_context()
    module = Parser(ctx, Decode(8, 2, 1, 300).program(None)).parse_module()
    (kernel,) = [op for op in module.body.block.ops if op.name == "loop.kernel"]
    offered = {
        (s.tile_shape[0], s.split) for s in candidates(kernel, DEFAULT_TARGET) if s.tile_shape
    }
    assert offered == {(rows, split) for rows in (16, 64) for split in (1, 2, 4)}, offered
