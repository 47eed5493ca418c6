"""`emmy bench` without a GPU: which cases a suite has and which of them a run selects, what
each case counts (bytes, flops), the copy bandwidth and tensor-core peak measured once per run
(and only when a case needs them), the float32 matmul precision a case runs under, how the
results go into one JSON written after each case, and how a case that fails is reported. The
timing of a case itself is faked here; on a GPU host it is real (see
../shared/gpu-host/README.md). Every gemm-suite program compiles to CUDA at small sizes, and
every attention-suite form to one attention kernel."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace

import pytest
import torch
from corpus import ATTENTION_FORMS

from emmy.tools import cli
from emmy.tools.bench import timing as bench
from emmy.tools.bench.suites import GEMM_PROGRAMS, SUITES, attention_case


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr(cli, "require_gpu", lambda command: None)
    copies, peaks = [], []
    monkeypatch.setattr(bench, "device_copy_bandwidth", lambda: copies.append(1) or 4321.0)
    monkeypatch.setattr(bench, "tensor_core_peak_tflops", lambda: peaks.append(1) or 765.0)
    timed, counts = [], []

    def gpu_results(source, program, module, bench, **case):
        copy = case.get("copy_bandwidth_gbps")
        timed.append((source, copy))
        counts.append({**case, "precision": torch.get_float32_matmul_precision()})
        correct = "GELU" not in source  # this program's emmy kernels are wrong here
        dtype = "bfloat16" if "torch.bfloat16" in source else "float32"
        return {
            "program": source,
            "dtype": dtype,
            "bytes": 1,
            "copy_bandwidth_gbps": copy,
            "backends": [
                {
                    "backend": "emmy",
                    "correct": correct,
                    "median_us": 5.0,
                    "error": None if correct else "output 0 differs",
                }
            ],
        }

    monkeypatch.setattr(cli, "gpu_results", gpu_results)
    return SimpleNamespace(timed=timed, copies=copies, peaks=peaks, counts=counts)


def test_selected_cases_share_one_copy_bandwidth_and_one_json(fake_gpu, tmp_path, capsys):
    timed, copies = fake_gpu.timed, fake_gpu.copies
    path = tmp_path / "results.json"
    status = cli.main(
        ["bench", "--suite", "memory-bound", "--only", "^rms_norm 16x4096", "--json", str(path)]
    )
    assert status == 0
    assert len(copies) == 1
    assert [copy for _, copy in timed] == [4321.0, 4321.0]
    assert "dtype=torch.float32" in timed[0][0] and "dtype=torch.bfloat16" in timed[1][0]
    assert "(16, 4096)" in timed[0][0]
    document = json.loads(path.read_text())
    assert [(r["program"], r["shape"], r["dtype"]) for r in document["results"]] == [
        ("rms_norm", "16x4096", "float32"),
        ("rms_norm", "16x4096", "bfloat16"),
    ]
    assert "[2/2] rms_norm 16x4096 bfloat16" in capsys.readouterr().out


def test_a_given_copy_bandwidth_is_not_measured(fake_gpu):
    timed, copies = fake_gpu.timed, fake_gpu.copies
    assert (
        cli.main(
            [
                "bench",
                "--suite",
                "memory-bound",
                "--only",
                "^softmax 8192x4096 float32$",
                "--copy-bandwidth",
                "4000",
            ]
        )
        == 0
    )
    assert copies == [] and [copy for _, copy in timed] == [4000.0]


def test_a_failing_case_fails_the_run_and_stays_in_the_json(fake_gpu, tmp_path):
    path = tmp_path / "results.json"
    status = cli.main(
        ["bench", "--suite", "memory-bound", "--only", "^gelu 16x4096", "--json", str(path)]
    )
    assert status == 1
    results = json.loads(path.read_text())["results"]
    assert len(results) == 2
    (row,) = results[0]["backends"]
    assert row["correct"] is False and row["error"] == "output 0 differs"


def test_no_matching_case_is_an_error(capsys):
    assert cli.main(["bench", "--suite", "memory-bound", "--only", "no such case"]) == 1
    assert "no case of suite memory-bound matches --only 'no such case'" in capsys.readouterr().err


def test_memory_bound_cases_are_programs_by_shapes_by_dtypes():
    cases = SUITES["memory-bound"]
    assert len(cases) == 6 * 3 * 2
    assert [case.name for case in cases[:3]] == [
        "rms_norm 8192x4096 float32",
        "rms_norm 8192x4096 bfloat16",
        "layer_norm 8192x4096 float32",
    ]
    assert all(case.flops is None and case.copy_bound for case in cases)
    assert "(16, 4096)" in next(c.source for c in cases if c.name == "gelu 16x4096 float32")


def test_gemm_cases_declare_their_products():
    cases = {case.name: case for case in SUITES["gemm"]}
    assert len(cases) == len(SUITES["gemm"]) == 2 * 14 + 3 + 1  # no name twice
    for dtype in ("bfloat16", "float16"):
        for shape in ("4096x4096x4096", "8192x8192x8192", "3000x5120x5120"):
            case = cases[f"matmul {shape} {dtype}"]
            m, n, k = map(int, shape.split("x"))
            assert case.flops == 2 * m * n * k and case.streamed_bytes is None
            assert not case.copy_bound
        for n, k in ((12288, 4096), (11008, 4096), (4096, 11008)):
            assert cases[f"linear 2048x{n}x{k} {dtype}"].products == ((2048, n, k),)
        for m in (1, 16, 64):
            decode = cases[f"linear {m}x4096x4096 {dtype}"]
            assert decode.copy_bound and decode.streamed_bytes == 4096 * 4096 * 2
            assert cases[f"linear {m}x11008x4096 {dtype}"].streamed_bytes == 11008 * 4096 * 2
            assert (
                "nn.Linear(4096, 11008, bias=False)"
                in cases[f"linear {m}x11008x4096 {dtype}"].source
            )
        swiglu = cases[f"swiglu_mlp 1024x5632x2048 {dtype}"]
        assert swiglu.flops == 3 * 2 * 1024 * 5632 * 2048  # gate, up and down
        assert "MLP(2048, 5632)" in swiglu.source
        gelu = cases[f"linear_bias_gelu 2048x4096x4096 {dtype}"]
        assert gelu.flops == 2 * 2048 * 4096 * 4096 and "nn.Linear(4096, 4096)" in gelu.source
    layer = cases["llama_decoder_layer 2x512x1024 bfloat16"]
    projections = 4 * 1024 * 1024 + 3 * 1024 * 2816
    attention = 2 * 16 * 512 * 512 * 128  # scores and P @ V, 16 heads in all
    assert layer.flops == 2 * (1024 * projections + attention) and not layer.copy_bound
    assert "DecoderLayer(1024, 8, 2816, 512)" in layer.source
    for precision in ("highest", "high"):
        fp32 = cases[f"matmul 4096x4096x4096 float32 {precision}"]
        assert fp32.float32_matmul_precision == precision and fp32.flops == 2 * 4096**3
    linear_tf32 = cases["linear 4096x4096x4096 float32 high"]
    assert linear_tf32.float32_matmul_precision == "high" and "nn.Linear" in linear_tf32.source
    assert all("DT" in case.source for case in cases.values())


def test_a_gemm_run_measures_the_peak_once_and_counts_decode_weights(fake_gpu, tmp_path, capsys):
    copies = fake_gpu.copies
    path = tmp_path / "gemm.json"
    only = "^(linear 16x4096x4096|matmul 3000x5120x5120) bfloat16$"
    assert cli.main(["bench", "--suite", "gemm", "--only", only, "--json", str(path)]) == 0
    assert len(copies) == 1 and len(fake_gpu.peaks) == 1
    tail, decode = fake_gpu.counts
    assert tail["flops"] == 2 * 3000 * 5120 * 5120 and tail["peak_tflops"] == 765.0
    assert tail["copy_bandwidth_gbps"] is None and tail["nbytes"] is None
    assert tail["tolerance"] is None  # bf16's own
    assert decode["copy_bandwidth_gbps"] == 4321.0 and decode["nbytes"] == 4096 * 4096 * 2
    document = json.loads(path.read_text())
    assert document["suite"] == "gemm"
    assert document["tensor_core_peak_tflops"] == 765.0
    assert document["copy_bandwidth_gbps"] == 4321.0
    assert [(r["program"], r["shape"]) for r in document["results"]] == [
        ("matmul", "3000x5120x5120"),
        ("linear", "16x4096x4096"),
    ]
    assert "tensor-core peak (best cuBLAS 8192³): 765 TFLOP/s" in capsys.readouterr().out


def test_a_given_peak_is_not_measured_and_fp32_cases_run_under_their_precision(fake_gpu):
    copies = fake_gpu.copies
    before = torch.get_float32_matmul_precision()
    status = cli.main(["bench", "--suite", "gemm", "--only", "float32", "--peak-tflops", "900"])
    assert status == 0
    assert copies == [] and fake_gpu.peaks == []  # no decode case: no copy bandwidth
    assert [c["precision"] for c in fake_gpu.counts] == ["highest", "high", "high"]
    assert [c["tolerance"] for c in fake_gpu.counts] == [(1e-4, 1e-3), (1e-2, 0.25)] + [
        (1e-2, 0.25)
    ]
    assert all(c["peak_tflops"] == 900.0 for c in fake_gpu.counts)
    assert torch.get_float32_matmul_precision() == before


def test_a_memory_bound_run_does_not_measure_the_peak(fake_gpu):
    assert cli.main(["bench", "--suite", "memory-bound", "--only", "^softmax 16x4096 float32"]) == 0
    assert fake_gpu.peaks == [] and fake_gpu.counts[0]["flops"] is None


def test_attention_cases_count_causal_as_half_and_decode_by_its_kv_cache():
    cases = {case.name: case for case in SUITES["attention"]}
    assert len(cases) == len(SUITES["attention"]) == 13  # no name twice
    full = cases["sdpa 4x32x4096x4096x128 bfloat16"]
    assert full.flops == 4 * 4 * 32 * 4096 * 4096 * 128 and not full.copy_bound
    assert cases["sdpa_causal 4x32x4096x4096x128 bfloat16"].flops == full.flops // 2
    assert "is_causal=True" in cases["sdpa_causal 4x32x4096x4096x128 bfloat16"].source
    gqa = cases["sdpa_causal 1x32/8x4096x4096x128 bfloat16"]
    assert "enable_gqa=True" in gqa.source and "torch.randn(1, 8, 4096, 128" in gqa.source
    decode = cases["sdpa 1x32x1x32768x128 bfloat16"]
    assert decode.copy_bound and decode.streamed_bytes == 2 * 32 * 32768 * 128 * 2
    assert cases["sdpa 16x32x1x4096x128 bfloat16"].streamed_bytes == 2 * 16 * 32 * 4096 * 128 * 2
    written = cases["hand_written 4x32x2048x2048x128 bfloat16"]
    assert "softmax" in written.source and "scaled_dot_product" not in written.source
    assert written.flops == cases["sdpa 4x32x2048x2048x128 bfloat16"].flops
    masked = cases["sdpa_masked 1x32/8x2048x2048x64 bfloat16"]
    assert "attn_mask=mask" in masked.source and "torch.rand(2048, 2048) > 0.5" in masked.source
    assert masked.flops == 4 * 32 * 2048 * 2048 * 64


def test_an_attention_run_reports_flops_and_kv_bytes(fake_gpu):
    only = "^sdpa_causal 1x16x1024x1024x128 bfloat16$"
    assert cli.main(["bench", "--suite", "attention", "--only", only]) == 0
    (causal,) = fake_gpu.counts
    assert causal["flops"] == 2 * 16 * 1024 * 1024 * 128 and causal["peak_tflops"] == 765.0
    assert causal["nbytes"] is None and fake_gpu.copies == []


@pytest.mark.parametrize("form", sorted(ATTENTION_FORMS))
def test_attention_forms_compile_to_one_attention_kernel(form, capsys):
    case = attention_case(*ATTENTION_FORMS[form])
    source = case.source.replace("DT", "torch.bfloat16")
    assert cli.main(["compile", "-c", source, "--ir", "tile"]) == 0
    tile_ir = capsys.readouterr().out
    assert tile_ir.count("tile.attention ") == 1
    assert tile_ir.count("tile.kernel @") == 1


SMALL_SIZES = [(1, 64, 128), (48, 80, 96), (128, 128, 64)]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("size", SMALL_SIZES, ids=lambda size: "x".join(map(str, size)))
@pytest.mark.parametrize("name", sorted(GEMM_PROGRAMS))
def test_gemm_program_compiles_to_cuda_at_small_sizes(name, size, dtype, capsys):
    case = GEMM_PROGRAMS[name].case(name, *size, dtype)
    source = case.source.replace("DT", f"torch.{dtype}")
    assert cli.main(["compile", "-c", source, "--ir", "cuda"]) == 0
    cuda = capsys.readouterr().out
    kernels = len(re.findall(r"__global__", cuda))
    # One kernel per product, its epilogue fused; SwiGLU's gate and up, siblings, share one.
    assert kernels == len(case.products) - (name == "swiglu_mlp")
    if dtype != "float32" and size[0] > 1:
        # 16-bit products take the tensor cores: wgmma from 128 rows on sm_90a.
        assert ("wgmma.mma_async" if size[0] >= 128 else "mma.sync") in cuda


def round_to_tf32(x: torch.Tensor) -> torch.Tensor:
    """fp32 values rounded to TF32's 10 fraction bits (to nearest, ties away from zero)."""
    bits = x.view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def test_fp32_gemm_tolerances_hold_for_4096_term_sums():
    cases = {case.name: case for case in SUITES["gemm"]}
    highest = cases["matmul 4096x4096x4096 float32 highest"].tolerance
    high = cases["matmul 4096x4096x4096 float32 high"].tolerance
    generator = torch.Generator().manual_seed(1)
    a = torch.randn(128, 4096, generator=generator)
    b = torch.randn(4096, 256, generator=generator)
    exact = (a.double() @ b.double()).float()
    fp32, tf32 = a @ b, round_to_tf32(a) @ round_to_tf32(b)
    assert bench.check_outputs([fp32], [exact], highest)["correct"]
    assert bench.check_outputs([tf32], [fp32], high)["correct"]
    assert not bench.check_outputs([tf32], [fp32], highest)["correct"]
