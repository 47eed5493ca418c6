"""benchmarks/llama.py at its tiny size on the CPU: emmy's prefill logits and greedy tokens
are eager's, and nothing falls back to PyTorch (the KV cache's in-place writes included)."""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_tiny_llama_through_emmy_matches_eager(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("llama", ROOT / "benchmarks" / "llama.py")
    llama = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "llama", llama)  # its dataclasses look their module up
    spec.loader.exec_module(llama)
    output = tmp_path / "llama.json"
    arguments = ["--tiny", "--device", "cpu", "--dtype", "float32", "--backends", "eager,emmy"]
    assert llama.main([*arguments, "--json", str(output)]) == 0
    report = json.loads(output.read_text())
    eager, emmy = report["results"]
    assert emmy["backend"] == "emmy"
    assert emmy["max_abs_logit_difference"] < 1e-4
    steps = llama.TINY.decode + 1
    assert emmy["greedy_tokens_agreeing"] == f"{steps}/{steps}"
    assert emmy["fallback_warnings"] == []
    assert report["command"].startswith("python3 benchmarks/llama.py --tiny")
