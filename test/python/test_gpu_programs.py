"""Compiled programs on the GPU: every corpus program, every memory-bound suite program, every
gemm suite program and the attention suite's forms at small sizes, taken to Kernel IR,
printed as CUDA, run through the GPU runtime and compared with PyTorch eager on fresh random
inputs; and CUDA-graph replay of a host program. Skipped without a GPU (CI has none;
`../shared/gpu-host/README.md` says how to run them on a GPU host)."""

from __future__ import annotations

import re

import pytest
import torch
import torch._decomp
from corpus import ATTENTION_FORMS, PROGRAMS

from emmy.tools.bench import timing as bench
from emmy.tools.bench.differential import lower
from emmy.tools.bench.suites import (
    FLOAT32_4096_TOLERANCES,
    GEMM_PROGRAMS,
    MEMORY_BOUND_PROGRAMS,
    attention_case,
)
from emmy.tools.frontend.program import load_program
from emmy.tools.runtime.host import GraphedHostProgram, HostProgram

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

SUITE_SHAPES = [(3, 40), (16, 4096), (2, 3, 1000)]


def host_program(text: str) -> HostProgram:
    program = load_program(text, "<source>")
    return HostProgram(lower(program.to_torch_ir(), "kernel"))


def check_on_gpu(text: str, dtype: torch.dtype, runner=None, tolerance=None) -> None:
    kernels = host_program(text.replace("DT", f"torch.{str(dtype).removeprefix('torch.')}"))

    def poisoned(args):
        return kernels(args, poison=True)  # an element no kernel writes stays NaN

    result = bench.bench_program(
        text,
        dtype,
        emmy_fn=runner(kernels) if runner else poisoned,
        backends=("eager", "emmy"),
        warmup=0,
        reps=1,
        tolerance=tolerance,
    )
    for row in result["backends"]:
        assert row["correct"], f"{row['backend']}: {row.get('error')}"


CPU_ONLY = {
    "constants": "its forward makes CPU tensors, which eager cannot mix with CUDA inputs",
    "trigonometric_hyperbolic": "eager's outputs hold NaN (a hypot of the log of a negative), "
    "which the check here refuses as uncheckable (the CPU corpus compares NaN's places)",
}
DECOMPOSED = {
    "pool_indices_adaptive_bucketize": torch.ops.aten.max_pool2d_with_indices.default,
    "grid_sample_pooling_3d": torch.ops.aten.max_pool3d_with_indices.default,
}
"""Programs with an op that reaches emmy through PyTorch's decomposition table, which a PyTorch
older than the pinned one (a GPU host's) may lack."""


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_corpus_program_matches_eager_on_the_gpu(name: str, dtype: torch.dtype) -> None:
    if name in CPU_ONLY:
        pytest.skip(CPU_ONLY[name])
    if name in DECOMPOSED and DECOMPOSED[name] not in torch._decomp.decomposition_table:
        pytest.skip(f"PyTorch {torch.__version__} has no decomposition of {DECOMPOSED[name]}")
    check_on_gpu(PROGRAMS[name], dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape", SUITE_SHAPES, ids=lambda shape: "x".join(map(str, shape)))
@pytest.mark.parametrize("name", sorted(MEMORY_BOUND_PROGRAMS))
def test_suite_program_matches_eager_on_the_gpu(name: str, shape, dtype: torch.dtype) -> None:
    check_on_gpu(MEMORY_BOUND_PROGRAMS[name].replace("SHAPE", repr(shape)), dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("size", [(1, 64, 128), (48, 80, 96), (128, 128, 64)], ids=str)
@pytest.mark.parametrize("name", sorted(GEMM_PROGRAMS))
def test_gemm_program_matches_eager_on_the_gpu(name: str, size, dtype: torch.dtype) -> None:
    with bench.float32_matmul_precision("highest"):  # eager's fp32 products in true fp32
        m, n, k = size
        check_on_gpu(GEMM_PROGRAMS[name].source.format(m=m, n=n, k=k), dtype)


@pytest.mark.parametrize(
    "size", [(1, 64, 128), (48, 80, 96), (128, 128, 64), (300, 200, 96)], ids=str
)
@pytest.mark.parametrize("name", ["matmul", "linear"])
def test_tf32_products_match_eager_on_the_gpu(name: str, size) -> None:
    """fp32 products under the "high" float32 matmul precision run on tf32 tensor cores, as
    eager's run on cuBLAS's TF32: nn.Linear's of 128 rows or more on wgmma m64nNk8 (the
    operands truncated to tf32 as they are read), the others on mma_sync m16n8k8 (each
    fragment rounded once, `emmy_round_tf32`); within the gemm suite's tolerance for "high"
    (a fragment in the wrong place is off by whole products)."""
    with bench.float32_matmul_precision("high"):
        m, n, k = size
        source = GEMM_PROGRAMS[name].source.format(m=m, n=n, k=k)
        torch_ir = load_program(source.replace("DT", "torch.float32"), "<s>").to_torch_ir()
        tile_ir = str(lower(torch_ir, "tile"))
        on_wgmma = name == "linear" and m >= 128
        assert re.search(r"atom wgmma m64n\d+k8" if on_wgmma else "atom mma_sync m16n8k8", tile_ir)
        check_on_gpu(source, torch.float32, tolerance=FLOAT32_4096_TOLERANCES["high"])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("form", sorted(ATTENTION_FORMS))
def test_attention_suite_form_matches_eager_on_the_gpu(form, dtype: torch.dtype) -> None:
    check_on_gpu(attention_case(*ATTENTION_FORMS[form]).source, dtype)


@pytest.mark.parametrize("name", ["rms_norm", "add_rms_norm"])
def test_graph_replay_matches_eager_and_reads_the_inputs_anew(name: str) -> None:
    text = MEMORY_BOUND_PROGRAMS[name].replace("SHAPE", "(64, 2048)")
    check_on_gpu(text, torch.bfloat16, runner=GraphedHostProgram)
    kernels = host_program(text.replace("DT", "torch.float32"))
    graphed = GraphedHostProgram(kernels)
    inputs = [torch.randn(2048, device="cuda")] + [
        torch.randn(64, 2048, device="cuda") for _ in range(len(kernels.parameters) - 1)
    ]
    first = [t.clone() for t in graphed(inputs)]
    for tensor in inputs:
        tensor.mul_(2.0)  # same addresses, new values: a replay reads them
    second = graphed(inputs)
    direct = kernels(inputs)
    for old, new, expected in zip(first, second, direct):
        torch.testing.assert_close(new, expected, rtol=1e-6, atol=1e-6)
        assert not torch.equal(old, new)


def test_split_decode_matches_eager_run_after_run() -> None:
    """A split decode's parts arrive at counters that outlive a run (a `memref.global` of the
    program), and the last part of each block of rows resets its counter: every run, direct
    or replayed in a CUDA graph, combines all of its own parts."""
    shapes = ((2, 8, 1, 128), (2, 2, 3000, 128), (2, 2, 3000, 128))
    text = f"""
class Decode(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
Decode()(torch.randn{shapes[0]}.bfloat16(), torch.randn{shapes[1]}.bfloat16(),
         torch.randn{shapes[2]}.bfloat16())
"""
    torch_ir = load_program(text, "<source>").to_torch_ir()
    assert " split " in str(lower(torch_ir, "tile"))
    kernels = HostProgram(lower(torch_ir, "kernel"))
    graphed = GraphedHostProgram(kernels)
    for _ in range(3):
        q, k, v = (torch.randn(*s, dtype=torch.bfloat16, device="cuda") for s in shapes)
        expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        for run in (kernels, graphed):
            (result,) = run([q, k, v])
            torch.testing.assert_close(result, expected, rtol=2e-2, atol=2e-2)


def test_graph_replay_copies_moving_inputs_in_and_its_outputs_out() -> None:
    """The weight is static (read in place), the rows a new tensor every call (copied into
    the graph's buffer); outputs are copies, so the next replay leaves them alone; a key is
    captured at its second call, and a static input at another address is a new key."""
    text = MEMORY_BOUND_PROGRAMS["rms_norm"].replace("SHAPE", "(64, 2048)")
    kernels = host_program(text.replace("DT", "torch.float32"))
    graphed = GraphedHostProgram(
        kernels, static=[True, False], copy_outputs=True, capture_at_second=True
    )
    weight = torch.randn(2048, device="cuda")
    results = []
    for _ in range(3):
        rows = torch.randn(64, 2048, device="cuda")
        results.append((graphed([weight, rows])[0], kernels([weight, rows])[0]))
    for got, expected in results:
        torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6)
    assert len(graphed._captures) == 1
    moved = torch.randn(2048, device="cuda")
    for captures in (1, 2):
        rows = torch.randn(64, 2048, device="cuda")
        torch.testing.assert_close(graphed([moved, rows])[0], kernels([moved, rows])[0])
        assert len(graphed._captures) == captures


def test_misaligned_views_are_copied_before_vector_access() -> None:
    kernels = host_program("nn.GELU()(torch.randn(4, 64))")
    storage = torch.randn(4 * 64 + 1, device="cuda")
    view = storage[1:].view(4, 64)  # 4 bytes past an aligned address
    (out,) = kernels([view])
    torch.testing.assert_close(out, torch.nn.functional.gelu(view), rtol=1e-5, atol=1e-5)
