"""benchmarks/llama.py at its tiny size on the CPU: emmy's logits and tokens at every step
(fed eager's tokens) are eager's, and nothing falls back to PyTorch (the KV cache's in-place
writes included), with rotary embeddings of either form (`rotate_half`'s, or Meta's complex
products)."""

import json

import pytest


@pytest.mark.parametrize("rope", ["halves", "complex"])
def test_tiny_llama_through_emmy_matches_eager(tmp_path, llama, rope):
    output = tmp_path / "llama.json"
    arguments = ["--tiny", "--device", "cpu", "--dtype", "float32", "--backends", "eager,emmy"]
    arguments += ["--rope", rope]
    assert llama.main([*arguments, "--json", str(output)]) == 0
    report = json.loads(output.read_text())
    eager, emmy = report["results"]
    assert emmy["backend"] == "emmy"
    assert emmy["max_abs_logit_difference"] < 1e-4
    steps = llama.TINY.decode + 1
    assert emmy["tokens_agreeing"] == f"{steps}/{steps}"
    assert emmy["fallback_warnings"] == []
    assert report["command"].startswith("python3 benchmarks/llama.py --tiny")
    assert report["config"]["rope"] == rope
