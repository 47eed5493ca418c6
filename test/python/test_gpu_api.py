"""`emmy.compile` and `torch.compile(backend="emmy")` on CUDA tensors: emmy's kernels give
eager's results, also replayed from a CUDA graph captured by hand, and under
`mode="reduce-overhead"`. Skipped without a GPU (CI has none)."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F
from test_python_api import CachedStep

import emmy
from emmy.tools.dynamo_backend import FallbackWarning

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.RMSNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


def block(dtype: torch.dtype) -> nn.Module:
    return Block(64).to("cuda", dtype).eval()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_emmy_compile_runs_emmys_kernels_on_cuda_tensors(dtype):
    model = block(dtype)
    compiled = emmy.compile(model, torch.randn(8, 64, device="cuda", dtype=dtype))
    x = torch.randn(8, 64, device="cuda", dtype=dtype)
    got = compiled(x)
    assert got.is_cuda
    tolerance = 1e-4 if dtype == torch.float32 else 3e-2
    with torch.no_grad():
        torch.testing.assert_close(got, model(x), rtol=tolerance, atol=tolerance)


def test_emmy_compile_writes_a_cuda_cache_back_as_eager_does():
    """The CUDA form of `test_mutated_buffers_and_inputs_are_written_back_as_in_eager`."""
    eager = CachedStep(64, 16).cuda()
    compiled_model = CachedStep(64, 16).cuda()
    compiled_model.load_state_dict(eager.state_dict())
    example = (torch.randn(2, 64), torch.tensor([0, 1]), torch.zeros(64))
    compiled = emmy.compile(compiled_model, *(t.cuda() for t in example))
    eager_total, compiled_total = torch.zeros(64, device="cuda"), torch.zeros(64, device="cuda")
    with torch.no_grad():
        for positions in ([9, 2], [0, 15], [2, 3]):
            x, at = torch.randn(2, 64, device="cuda"), torch.tensor(positions, device="cuda")
            got, want = compiled(x, at, compiled_total), eager(x, at, eager_total)
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(compiled_model.cache, eager.cache, rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(compiled_total, eager_total)


def test_backend_outputs_replay_from_a_manual_cuda_graph():
    """Compiled and warmed up first, the backend's program only allocates from PyTorch's
    pool and launches on the current stream: it can be captured."""
    torch._dynamo.reset()
    model = block(torch.float32)
    compiled = torch.compile(model, backend="emmy")
    static_x = torch.randn(8, 64, device="cuda")
    with torch.no_grad():
        compiled(static_x)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            compiled(static_x)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = compiled(static_x)
        for _ in range(2):
            static_x.copy_(torch.randn(8, 64, device="cuda"))
            graph.replay()
            torch.testing.assert_close(static_y, model(static_x), rtol=1e-4, atol=1e-4)


def test_backend_under_reduce_overhead_and_with_fallback():
    torch._dynamo.reset()
    model = block(torch.bfloat16)

    def program(x):
        return torch.i0(model(x).float()).mean(-1)

    compiled = torch.compile(program, backend="emmy", mode="reduce-overhead")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        for _ in range(3):
            x = torch.randn(8, 64, device="cuda", dtype=torch.bfloat16)
            torch.testing.assert_close(compiled(x), program(x), rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_one_compile_with_a_dynamic_dim_serves_every_size_on_cuda(dtype):
    """The size is read at run time: its kernels launch the blocks each size needs, and a
    size outside the declared range is refused, never run."""
    from torch.export import Dim

    model = block(dtype)
    rows = Dim("rows", min=1, max=512)
    compiled = emmy.compile(
        model, torch.randn(8, 64, device="cuda", dtype=dtype), dynamic_shapes=({0: rows},)
    )
    tolerance = 1e-4 if dtype == torch.float32 else 3e-2
    with torch.no_grad():
        for size in (1, 7, 300, 512):
            x = torch.randn(size, 64, device="cuda", dtype=dtype)
            torch.testing.assert_close(compiled(x), model(x), rtol=tolerance, atol=tolerance)
        with pytest.raises(ValueError, match=r"= 513 is outside the range \[1, 512\]"):
            compiled(torch.randn(513, 64, device="cuda", dtype=dtype))


class LinearGelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(256, 384)

    def forward(self, x):
        return F.gelu(self.linear(x))


class CausalAttention(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_dynamic_linear_runs_its_gemm_at_every_size_on_cuda(dtype):
    """nn.Linear over a dynamic number of tokens is one tile.gemm (wgmma for bf16 on sm_90a)
    whose launch runs the blocks each size needs, tails of its tiles among them."""
    from torch.export import Dim

    model = LinearGelu().to("cuda", dtype).eval()
    tokens = Dim("tokens", min=1, max=2048)
    example = torch.randn(1, 8, 256, device="cuda", dtype=dtype)
    compiled = emmy.compile(model, example, dynamic_shapes=({1: tokens},))
    assert "tile.gemm" in compiled.ir("tile")
    tolerance = 1e-4 if dtype == torch.float32 else 3e-2
    with torch.no_grad():
        for size in (1, 7, 130, 2048):
            x = torch.randn(1, size, 256, device="cuda", dtype=dtype)
            torch.testing.assert_close(compiled(x), model(x), rtol=tolerance, atol=tolerance)


def test_a_dynamic_causal_attention_runs_at_every_sequence_length_on_cuda():
    """Causal SDPA over a dynamic sequence length is one tile.attention whose launch runs
    the query blocks each length needs."""
    from torch.export import Dim

    model = CausalAttention()
    seq = Dim("seq", min=1, max=2048)

    def inputs(length: int) -> list[torch.Tensor]:
        return [torch.randn(2, 8, length, 64, device="cuda", dtype=torch.bfloat16) for _ in "qkv"]

    compiled = emmy.compile(model, *inputs(16), dynamic_shapes=({2: seq}, {2: seq}, {2: seq}))
    assert "tile.attention" in compiled.ir("tile")
    with torch.no_grad():
        for length in (1, 7, 130, 2048):
            q, k, v = inputs(length)
            torch.testing.assert_close(compiled(q, k, v), model(q, k, v), rtol=3e-2, atol=3e-2)


def test_a_batched_attention_layer_with_a_dynamic_length_matches_eager_on_cuda():
    """Batch 2, bf16, under torch.compile with the length marked dynamic: compiled once,
    nothing left to PyTorch, eager's result at every length."""
    from test_dynamic_shapes import _BatchedAttention

    model = _BatchedAttention(dim=256, heads=4).to("cuda", torch.bfloat16).eval()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="emmy", options={"fallback": False})
    with torch.no_grad():
        for length in (7, 300, 64):
            x = torch.randn(2, length, 256, device="cuda", dtype=torch.bfloat16)
            torch._dynamo.mark_dynamic(x, 1)
            torch.testing.assert_close(compiled(x), model(x), rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("rope", ["halves", "complex"])
def test_llama_prefill_fills_the_cache_and_decode_steps_match_eager_on_cuda(llama, rope):
    """The benchmark's model (GQA heads of 64, a KV cache written in place, rotary embeddings
    of either form) through `backend="emmy"` on CUDA: after the prefill the caches hold
    eager's keys and values, and each decode step, fed eager's tokens, gives eager's logits."""
    config = llama.Config(
        dim=256, layers=2, heads=4, kv_heads=2, ffn=512, vocab=64, prefill=300, decode=4, rope=rope
    )
    torch.manual_seed(0)
    model = llama.Llama(config).placed("cuda", torch.bfloat16).eval()
    prompt = torch.randint(0, config.vocab, (1, config.prefill), device="cuda")
    tokens = torch.randint(0, config.vocab, (config.decode,), device="cuda")
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="emmy", dynamic=False, options={"fallback": False})

    def run(step) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        model.reset_caches()
        with torch.no_grad():
            logits = [step(prompt, torch.arange(config.prefill, device="cuda"))[0, -1]]
            caches = [
                t.clone() for b in model.blocks for t in (b.attention.k_cache, b.attention.v_cache)
            ]
            for offset, token in enumerate(tokens):
                position = torch.tensor([config.prefill + offset], device="cuda")
                logits.append(step(token.view(1, 1), position)[0, -1])
        return logits, caches

    expected_logits, expected_caches = run(model)
    logits, caches = run(compiled)
    for number, (got, want) in enumerate(zip(caches, expected_caches)):
        assert torch.allclose(got.float(), want.float(), atol=0.05), f"cache {number}"
    for number, (got, want) in enumerate(zip(logits, expected_logits)):
        assert torch.allclose(got.float(), want.float(), atol=0.1), f"step {number}"
