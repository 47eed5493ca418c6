"""A Llama-style model end to end: prefill and greedy decode under eager PyTorch,
torch.compile (default, reduce-overhead and max-autotune) and `torch.compile(backend="emmy")`,
in one process.

    python3 benchmarks/llama.py --json benchmarks/h200/llama.json           # the H200 model
    python3 benchmarks/llama.py --tiny --device cpu --backends eager,emmy   # a smoke run

The model is plain PyTorch with random weights (no downloads): RMSNorm, rotary embeddings,
grouped-query attention over a static KV cache written in place (`index_copy_` at the
positions given as a tensor, so one compiled decode step serves every position) and a SwiGLU
MLP. Each backend runs a prefill of `prefill` tokens and `decode` decode steps from fresh
caches, fed eager's greedy tokens: every step's logits are compared with eager's, and so is
every step's token (argmax). Fed its own tokens, a backend would follow another sequence
from its first near-tie on (bf16 logits of random weights often tie: on the H100, emmy's
and eager's 8-layer logits were within 0.016 at every step, and eager's top two tied at the
second step). Reported: prefill tokens/s (the median of PREFILL_RUNS), decode ms/token (the
median step), and compile time (the first prefill and first decode step, less the steady
times). Under reduce-overhead and max-autotune, torch.compile replays CUDA graphs of its
own; so does emmy (`cuda_graphs`, on by default), its unsupported ops in PyTorch.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from dataclasses import asdict, dataclass

import torch
import torch._dynamo
import torch.nn as nn
import torch.nn.functional as F


@dataclass(frozen=True)
class Config:
    dim: int = 2048
    layers: int = 8
    heads: int = 32
    kv_heads: int = 8
    ffn: int = 5632
    vocab: int = 32000
    prefill: int = 2048
    decode: int = 64
    dtype: str = "bfloat16"
    rope: str = "halves"
    """Rotary embeddings by `rotate_half` (Hugging Face's) or as complex products of a
    complex table (`complex`: Meta's Llama, torchtitan)."""

    @property
    def max_seq(self) -> int:
        return self.prefill + self.decode


TINY = Config(dim=64, layers=2, heads=4, kv_heads=2, ffn=128, vocab=96, prefill=8, decode=3)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotated(x: torch.Tensor, rotary) -> torch.Tensor:
    """`x` turned by the rotary embedding: (cos, sin) of the halves, or a complex table
    turning adjacent pairs of elements."""
    if isinstance(rotary, torch.Tensor):
        pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(pairs * rotary).flatten(-2).type_as(x)
    cos, sin = rotary
    return x * cos + rotate_half(x) * sin


class Attention(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = c.heads, c.kv_heads, c.dim // c.heads
        self.wq = nn.Linear(c.dim, c.dim, bias=False)
        self.wk = nn.Linear(c.dim, c.kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(c.dim, c.kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(c.dim, c.dim, bias=False)
        cache = (1, c.kv_heads, c.max_seq, self.head_dim)
        self.register_buffer("k_cache", torch.zeros(cache), persistent=False)
        self.register_buffer("v_cache", torch.zeros(cache), persistent=False)

    def forward(self, x, rotary, mask, positions):
        batch, seq, _ = x.shape
        q = self.wq(x).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(batch, seq, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(batch, seq, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rotated(q, rotary), rotated(k, rotary)
        self.k_cache.index_copy_(2, positions, k)
        self.v_cache.index_copy_(2, positions, v)
        out = F.scaled_dot_product_attention(
            q, self.k_cache, self.v_cache, attn_mask=mask, enable_gqa=True
        )
        return self.wo(out.transpose(1, 2).reshape(batch, seq, -1))


class Block(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.attention_norm, self.ffn_norm = nn.RMSNorm(c.dim), nn.RMSNorm(c.dim)
        self.attention = Attention(c)
        self.w1 = nn.Linear(c.dim, c.ffn, bias=False)
        self.w3 = nn.Linear(c.dim, c.ffn, bias=False)
        self.w2 = nn.Linear(c.ffn, c.dim, bias=False)

    def forward(self, x, rotary, mask, positions):
        x = x + self.attention(self.attention_norm(x), rotary, mask, positions)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def rotary_angles(c: Config) -> torch.Tensor:
    """Each position's angle for each pair of a head's elements."""
    head_dim = c.dim // c.heads
    inv_freq = 1.0 / 10000 ** (torch.arange(0, head_dim, 2).float() / head_dim)
    return torch.outer(torch.arange(c.max_seq).float(), inv_freq)


class Llama(nn.Module):
    def __init__(self, c: Config):
        super().__init__()
        self.embedding = nn.Embedding(c.vocab, c.dim)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.norm = nn.RMSNorm(c.dim)
        self.output = nn.Linear(c.dim, c.vocab, bias=False)
        self.config = c
        angles = rotary_angles(c)
        if c.rope == "complex":
            table = torch.polar(torch.ones_like(angles), angles)
            self.register_buffer("freqs_cis", table, persistent=False)
        else:
            angles = torch.cat((angles, angles), dim=-1)
            self.register_buffer("cos", angles.cos(), persistent=False)
            self.register_buffer("sin", angles.sin(), persistent=False)
        causal = torch.tril(torch.ones(c.max_seq, c.max_seq, dtype=torch.bool))
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        x = self.embedding(tokens)
        if hasattr(self, "freqs_cis"):
            rotary = self.freqs_cis[positions]
        else:
            rotary = self.cos[positions].to(x.dtype), self.sin[positions].to(x.dtype)
        mask = self.causal[positions].view(1, 1, tokens.shape[1], -1)
        for block in self.blocks:
            x = block(x, rotary, mask, positions)
        return self.output(self.norm(x))

    def placed(self, device: str, dtype: torch.dtype) -> Llama:
        """The model on `device` in `dtype`, with its complex rotary table still complex
        (`Module.to` casts a complex buffer to a real dtype, dropping the imaginary parts)."""
        self.to(device)
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def reset_caches(self) -> None:
        for block in self.blocks:
            block.attention.k_cache.zero_()
            block.attention.v_cache.zero_()


def synchronize(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def timed(device: str, function, *args) -> tuple[torch.Tensor, float]:
    synchronize(device)
    start = time.perf_counter()
    result = function(*args)
    synchronize(device)
    return result, time.perf_counter() - start


PREFILL_RUNS = 3
"""Steady prefills timed after the first (their median is reported)."""


def generate(
    model: Llama, step, prompt: torch.Tensor, c: Config, device: str, tokens: list[int] | None
) -> dict:
    """A prefill then `c.decode` decode steps through `step`, each fed the next of `tokens`
    (greedy where None); the first prefill and decode calls (which compile) are timed apart
    from the steady ones. The logits are the last position's of every call."""
    model.reset_caches()
    prefill_positions = torch.arange(c.prefill, device=device)
    with torch.no_grad():
        logits, first_prefill = timed(device, step, prompt, prefill_positions)
        prefill_times = []
        for _ in range(PREFILL_RUNS):
            model.reset_caches()
            logits, seconds = timed(device, step, prompt, prefill_positions)
            prefill_times.append(seconds)
        prefill = statistics.median(prefill_times)
        steps = [logits[0, -1].float().cpu()]
        fed = tokens or [int(steps[0].argmax())]
        decode_times = []
        for offset, position in enumerate(range(c.prefill, c.prefill + c.decode)):
            token = torch.tensor([[fed[offset]]], device=device)
            positions = torch.tensor([position], device=device)
            next_logits, seconds = timed(device, step, token, positions)
            decode_times.append(seconds)
            steps.append(next_logits[0, -1].float().cpu())
            if tokens is None:
                fed.append(int(steps[-1].argmax()))
    steady_decode = statistics.median(decode_times[1:] or decode_times)
    return {
        "logits": torch.stack(steps),
        "prefill_tokens_per_s": c.prefill / prefill,
        "decode_ms_per_token": 1e3 * steady_decode,
        "compile_s": max(first_prefill - prefill, 0.0) + max(decode_times[0] - steady_decode, 0.0),
    }


BACKENDS = {
    "eager": lambda model: model,
    "torch.compile": lambda model: torch.compile(model, dynamic=False),
    "reduce-overhead": lambda model: torch.compile(model, mode="reduce-overhead", dynamic=False),
    "max-autotune": lambda model: torch.compile(model, mode="max-autotune", dynamic=False),
    "emmy": lambda model: torch.compile(model, backend="emmy", dynamic=False),
    # emmy's launches as they are, without its CUDA graphs (and without their outputs' copies)
    "emmy-no-graphs": lambda model: torch.compile(
        model, backend="emmy", dynamic=False, options={"cuda_graphs": False}
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help=f"the small model {TINY}")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=["bfloat16", "float32"], help="default: the config's")
    parser.add_argument("--rope", choices=["halves", "complex"], help="default: the config's")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated")
    parser.add_argument("--json", help="write the results here")
    arguments = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(arguments)
    config = TINY if args.tiny else Config()
    for field in ("dtype", "rope"):
        if getattr(args, field):
            config = Config(**{**asdict(config), field: getattr(args, field)})
    backends = args.backends.split(",")
    unknown = [b for b in backends if b not in BACKENDS]
    if unknown or backends[0] != "eager":
        parser.error(f"backends are {', '.join(BACKENDS)}, eager first; got {args.backends}")

    torch.manual_seed(0)
    dtype = getattr(torch, config.dtype)
    model = Llama(config).placed(args.device, dtype).eval()
    prompt = torch.randint(0, config.vocab, (1, config.prefill), device=args.device)
    results: dict[str, dict] = {}
    for name in backends:
        torch._dynamo.reset()
        tokens = None if name == "eager" else results["eager"]["logits"].argmax(1).tolist()
        with warnings.catch_warnings(record=True) as fell_back:
            warnings.simplefilter("always")
            result = generate(model, BACKENDS[name](model), prompt, config, args.device, tokens)
        result["fallback_warnings"] = sorted(
            {str(w.message) for w in fell_back if "emmy runs" in str(w.message)}
        )
        results[name] = result
        print(f"{name}: done", file=sys.stderr)

    reference = results["eager"]["logits"]
    rows = []
    for name, result in results.items():
        logits = result.pop("logits")
        agree = int((logits.argmax(1) == reference.argmax(1)).sum())
        rows.append(
            {
                "backend": name,
                **result,
                "max_abs_logit_difference": (logits - reference).abs().max().item(),
                "tokens_agreeing": f"{agree}/{len(reference)}",
            }
        )
    header = f"{'backend':<14}{'prefill tok/s':>15}{'decode ms/tok':>15}{'compile s':>11}"
    print(header + f"{'max |Δlogit|':>14}{'tokens agree':>14}")
    for row in rows:
        print(
            f"{row['backend']:<14}{row['prefill_tokens_per_s']:>15.1f}"
            f"{row['decode_ms_per_token']:>15.3f}{row['compile_s']:>11.1f}"
            f"{row['max_abs_logit_difference']:>14.3g}{row['tokens_agreeing']:>14}"
        )
    if args.json:
        device_name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
        with open(args.json, "w") as file:
            json.dump(
                {
                    "command": " ".join(
                        ["python3", "benchmarks/llama.py", *(argv or sys.argv[1:])]
                    ),
                    "config": asdict(config),
                    "device": device_name,
                    "torch": torch.__version__,
                    "results": rows,
                },
                file,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
