"""`benchmarks/schedule_sweep.py` compiles and times each case under the case's own float32
matmul precision, as `emmy bench` does (a sweep of "matmul 4096x4096x4096 float32 high" ran
emmy's fma kernel and eager's true-f32 cuBLAS under "highest" before). Its GPU parts are
replaced here by recorders: what is checked is what they were handed."""

import importlib.util
import sys
from pathlib import Path

import torch

from emmy.dialects.torch import float32_matmul_precision

SWEEP = Path(__file__).parents[2] / "benchmarks" / "schedule_sweep.py"


def test_a_case_is_compiled_and_timed_under_its_float32_matmul_precision(monkeypatch):
    spec = importlib.util.spec_from_file_location("schedule_sweep", SWEEP)
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    seen = []

    def scheduled(loop_ir, name, schedule):
        seen.append(("compiled", float32_matmul_precision(loop_ir)))
        return loop_ir

    def bench_program(text, dtype, emmy_fn, backends, copy_bandwidth_gbps):
        seen.append(("timed", torch.get_float32_matmul_precision()))
        row = {"correct": True, "median_us": 1.0, "copy_fraction": 0.5}
        return {"backends": [dict(row, backend=b) for b in backends]}

    monkeypatch.setattr(sweep, "device_copy_bandwidth", lambda: 1.0)
    monkeypatch.setattr(sweep, "scheduled", scheduled)
    monkeypatch.setattr(sweep, "GraphedHostProgram", lambda module: module)
    monkeypatch.setattr(sweep, "bench_program", bench_program)
    argv = [
        "schedule_sweep.py",
        "--suite",
        "gemm",
        "--only",
        "^matmul 4096x4096x4096 float32 high$",
    ]
    monkeypatch.setattr(sys, "argv", [*argv, "--limit", "1"])
    before = torch.get_float32_matmul_precision()
    assert sweep.main() == 0
    assert seen == [("compiled", "high"), ("timed", "high")]
    assert torch.get_float32_matmul_precision() == before
