"""Benchmark suites: `emmy bench --suite NAME` checks, then times, each case of a suite under
eager PyTorch, torch.compile (max-autotune) and emmy.

    $ emmy bench --suite memory-bound --only rms_norm --json rms_norm.json
    $ emmy bench --suite gemm --only 'linear 16x4096x4096 bfloat16'
    $ emmy bench --suite attention --only 'sdpa_causal 4x32x4096x4096x128'

A suite is a list of `Case`s: an `emmy compile -c` source in which `DT` stands for the dtype,
with what the reports count for it declared beside it (its matrix products, so its flops; the
float32 matmul precision it runs under). The memory-bound suite is a cross product of
programs (`SHAPE` in a source is the input shape, its last dim the normalized or activated
one), shapes and dtypes; the gemm and attention suites list their cases, since their shapes
are not one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from emmy.tools.bench.programs import ROTARY_ATTENTION, SWIGLU_DECODER_LAYER, SWIGLU_MLP

DECODE_ROWS = 64
"""A case whose products all have at most this many rows (M) is a decode step: bound by
reading its weights, so its report adds the fraction of copy bandwidth they are read at."""


@dataclass(frozen=True)
class Case:
    """One program at one shape and dtype; `name` is what `emmy bench --only` matches."""

    program: str
    shape: str
    dtype: str
    source: str
    """`DT` stands for the dtype."""
    products: tuple[tuple[int, int, int], ...] = ()
    """(M, N, K) of each matrix product the program computes; none for a memory-bound one."""
    float32_matmul_precision: str | None = None
    """`torch.set_float32_matmul_precision` for compiling, checking and timing every backend."""
    tolerance: tuple[float, float] | None = None
    """(rtol, atol) that every backend's outputs must be within of eager's, where the dtype's
    (`emmy.tools.bench.tolerances.TOLERANCES`) does not hold for the program."""
    flop_count: int | None = None
    """Its flops where they are not its products' 2·M·N·K (causal attention counts the
    products' half that the mask keeps)."""
    streamed_elements: int | None = None
    """For a step bound by reading what it was given once (decode attention's KV cache), how
    many elements that is; decode products count their weights without it."""

    @property
    def name(self) -> str:
        """'rms_norm 8192x4096 bfloat16', 'matmul 4096x4096x4096 float32 high'."""
        words = (self.program, self.shape, self.dtype, self.float32_matmul_precision)
        return " ".join(word for word in words if word)

    @property
    def flops(self) -> int | None:
        """`flop_count`, else 2·M·N·K summed over the products (a multiply and an add per
        term)."""
        if self.flop_count is not None:
            return self.flop_count
        return sum(2 * m * n * k for m, n, k in self.products) if self.products else None

    @property
    def streamed_bytes(self) -> int | None:
        """For a decode step, the bytes it must read once: its `streamed_elements`, else its
        products' N×K weights; None otherwise."""
        if self.streamed_elements is not None:
            elements = self.streamed_elements
        elif self.products and max(m for m, _, _ in self.products) <= DECODE_ROWS:
            elements = sum(n * k for _, n, k in self.products)
        else:
            return None
        import torch  # here: `emmy bench --help` lists the suites without loading PyTorch

        return elements * getattr(torch, self.dtype).itemsize

    @property
    def copy_bound(self) -> bool:
        """Whether its time is measured against the copy bandwidth: a memory-bound program,
        or a decode step."""
        return not self.products or self.streamed_bytes is not None


MEMORY_BOUND_PROGRAMS = {
    "rms_norm": "nn.RMSNorm(SHAPE[-1]).to(DT)(torch.randn(SHAPE, dtype=DT))",
    "layer_norm": "nn.LayerNorm(SHAPE[-1]).to(DT)(torch.randn(SHAPE, dtype=DT))",
    "softmax": "nn.Softmax(dim=-1)(torch.randn(SHAPE, dtype=DT))",
    "add_rms_norm": """
class AddRMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.RMSNorm(dim)
    def forward(self, x, residual):
        h = x + residual
        return self.norm(h), h
AddRMSNorm(SHAPE[-1]).to(DT)(torch.randn(SHAPE, dtype=DT), torch.randn(SHAPE, dtype=DT))
""",
    "silu_and_mul": """
class SiluAndMul(nn.Module):
    def forward(self, x):
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up
SiluAndMul()(torch.randn(*SHAPE[:-1], 2 * SHAPE[-1], dtype=DT))
""",
    "gelu": "nn.GELU()(torch.randn(SHAPE, dtype=DT))",
}


def cross_product(
    programs: dict[str, str], shapes: list[tuple[int, ...]], dtypes: list[str]
) -> list[Case]:
    """Every program at every shape (`SHAPE` in its source) and dtype, shape by shape."""
    return [
        Case(program, "x".join(map(str, shape)), dtype, source.replace("SHAPE", repr(shape)))
        for shape in shapes
        for program, source in programs.items()
        for dtype in dtypes
    ]


@dataclass(frozen=True)
class GemmProgram:
    """A contraction program at sizes m, n, k (`{m}`, `{n}`, `{k}` in its source), with the
    (M, N, K) of the products it computes there."""

    source: str
    products: Callable[[int, int, int], list[tuple[int, int, int]]]

    def case(
        self,
        name: str,
        m: int,
        n: int,
        k: int,
        dtype: str,
        precision: str | None = None,
        tolerance: tuple[float, float] | None = None,
    ) -> Case:
        """The case at these sizes; its shape reads MxNxK."""
        return Case(
            name,
            f"{m}x{n}x{k}",
            dtype,
            self.source.format(m=m, n=n, k=k),
            tuple(self.products(m, n, k)),
            precision,
            tolerance,
        )


GEMM_PROGRAMS = {
    # A[M, K] @ B[K, N], both inputs.
    "matmul": GemmProgram(
        """
class MatMul(nn.Module):
    def forward(self, a, b):
        return a @ b
MatMul()(torch.randn({m}, {k}, dtype=DT), torch.randn({k}, {n}, dtype=DT))
""",
        lambda m, n, k: [(m, n, k)],
    ),
    # x[M, K] times a weight in nn.Linear's [N, K] layout.
    "linear": GemmProgram(
        "nn.Linear({k}, {n}, bias=False).to(DT)(torch.randn({m}, {k}, dtype=DT))",
        lambda m, n, k: [(m, n, k)],
    ),
    # dim k, hidden n: gate and up (k -> n) share their input, down takes n back to k.
    "swiglu_mlp": GemmProgram(
        SWIGLU_MLP + "MLP({k}, {n}).to(DT)(torch.randn({m}, {k}, dtype=DT))\n",
        lambda m, n, k: [(m, n, k), (m, n, k), (m, k, n)],
    ),
    "linear_bias_gelu": GemmProgram(
        "nn.Sequential(nn.Linear({k}, {n}), nn.GELU()).to(DT)(torch.randn({m}, {k}, dtype=DT))",
        lambda m, n, k: [(m, n, k)],
    ),
}


FLOAT32_4096_TOLERANCES = {"highest": (1e-4, 1e-3), "high": (1e-2, 0.25)}
"""(rtol, atol) of an fp32 product of 4096-term sums of standard normal products (outputs of
about ±64), by float32 matmul precision. Measured against float64 (512×1024 outputs): true
fp32 sums err by up to 1e-4 where the output is near 0, past the fp32 default's 1e-5, so two
summation orders differ by up to about 2e-4; under "high", eager (the reference) may round
its inputs to TF32's 10 fraction bits, which errs by up to 0.084 (a 3e-4 relative norm)."""


def gemm_cases() -> list[Case]:
    """Square and tail products; Llama-7B's projections on 2048 rows (fused QKV, MLP up,
    MLP down); decode steps on 4096->4096 and 4096->11008; SwiGLU and Linear+bias+GELU as
    fused programs; all in bf16 and fp16. Then fp32 at 4096³ under both float32 matmul
    precisions ("highest": true fp32, "high": TF32 tensor cores allowed), nn.Linear's under
    "high", and a bf16 Llama
    decoder layer (dim 1024, 8 heads, hidden 2816) on 2 sequences of 512 tokens."""
    matmul, linear = GEMM_PROGRAMS["matmul"], GEMM_PROGRAMS["linear"]
    cases = []
    for dtype in ("bfloat16", "float16"):
        for m, n, k in ((4096, 4096, 4096), (8192, 8192, 8192), (3000, 5120, 5120)):
            cases.append(matmul.case("matmul", m, n, k, dtype))
        for n, k in ((12288, 4096), (11008, 4096), (4096, 11008)):
            cases.append(linear.case("linear", 2048, n, k, dtype))
        for m in (1, 16, DECODE_ROWS):
            for n in (4096, 11008):
                cases.append(linear.case("linear", m, n, 4096, dtype))
        cases.append(GEMM_PROGRAMS["swiglu_mlp"].case("swiglu_mlp", 1024, 5632, 2048, dtype))
        cases.append(
            GEMM_PROGRAMS["linear_bias_gelu"].case("linear_bias_gelu", 2048, 4096, 4096, dtype)
        )
    for precision, tolerance in FLOAT32_4096_TOLERANCES.items():
        cases.append(matmul.case("matmul", 4096, 4096, 4096, "float32", precision, tolerance))
    # nn.Linear's K-major weight, which tf32 wgmma reads (a [K, N] rhs stays on mma_sync).
    tolerance = FLOAT32_4096_TOLERANCES["high"]
    cases.append(linear.case("linear", 4096, 4096, 4096, "float32", "high", tolerance))
    cases.append(decoder_layer_case(2, 512, 1024, 8, 2816, "bfloat16"))
    return cases


def decoder_layer_case(batch: int, seq: int, dim: int, heads: int, hidden: int, dtype: str) -> Case:
    """A Llama-style decoder layer (`programs.SWIGLU_DECODER_LAYER` around rotary attention)
    on `batch` sequences of `seq` tokens: its projections (q, k, v, o; gate, up, down) and
    attention's two products per head are the products; its shape reads BATCHxSEQxDIM."""
    tokens, head_dim = batch * seq, dim // heads
    products = [(tokens, dim, dim)] * 4 + [(tokens, hidden, dim)] * 2 + [(tokens, dim, hidden)]
    products += [(batch * heads * seq, seq, head_dim), (batch * heads * seq, head_dim, seq)]
    source = (
        ROTARY_ATTENTION
        + SWIGLU_DECODER_LAYER
        + f"DecoderLayer({dim}, {heads}, {hidden}, {seq}).to(DT)"
        f"(torch.randn({batch}, {seq}, {dim}, dtype=DT))\n"
    )
    return Case("llama_decoder_layer", f"{batch}x{seq}x{dim}", dtype, source, tuple(products))


SDPA = """
class Attention(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal={causal}, enable_gqa={gqa})
"""

MASKED_SDPA = """
class Attention(nn.Module):
    def forward(self, q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa={gqa})
"""

HAND_WRITTEN_ATTENTION = """
class Attention(nn.Module):
    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1) * q.shape[-1] ** -0.5
        return torch.softmax(scores, dim=-1) @ v
"""


def attention_case(
    program: str,
    batch: int,
    heads: int,
    kv_heads: int,
    q_len: int,
    kv_len: int,
    head_dim: int,
    causal: bool = False,
) -> Case:
    """`program` (SDPA, SDPA with a boolean [q_len, kv_len] mask as an input, or attention
    written by hand) on query [batch, heads, q_len, head_dim] and key/value [batch, kv_heads,
    kv_len, head_dim]; its shape reads BxHxQxKVxD (with /KV after H for GQA). Its products
    are Q·Kᵀ and P·V per head; causal counts the half the mask keeps (as FlashAttention
    reports), a mask counts whole; a step of a few query rows is bound by reading K and V."""
    gqa = kv_heads != heads
    sources = {
        "sdpa": SDPA.format(causal=causal, gqa=gqa),
        "sdpa_masked": MASKED_SDPA.format(gqa=gqa),
        "hand_written": HAND_WRITTEN_ATTENTION,
    }
    source = sources[program]
    query = f"torch.randn({batch}, {heads}, {q_len}, {head_dim}, dtype=DT)"
    key_value = f"torch.randn({batch}, {kv_heads}, {kv_len}, {head_dim}, dtype=DT)"
    mask = f", torch.rand({q_len}, {kv_len}) > 0.5" if program == "sdpa_masked" else ""
    source += f"Attention()({query}, {key_value}, {key_value}{mask})\n"
    rows = batch * heads * q_len
    products = ((rows, kv_len, head_dim), (rows, head_dim, kv_len))
    flops = sum(2 * m * n * k for m, n, k in products) // (2 if causal else 1)
    streamed = 2 * batch * kv_heads * kv_len * head_dim if q_len <= 16 else None
    heads_shape = f"{heads}/{kv_heads}" if kv_heads != heads else f"{heads}"
    shape = f"{batch}x{heads_shape}x{q_len}x{kv_len}x{head_dim}"
    name = program + "_causal" * causal
    return Case(
        name, shape, "bfloat16", source, products, flop_count=flops, streamed_elements=streamed
    )


def attention_cases() -> list[Case]:
    """Issue 11's shapes in bf16: prefill causal and not (B1 H16 S1024 D128, B4 H32 S4096 D128,
    B8 H32 S2048 D64, GQA H32/KV8 S4096 D128), decode against a long KV cache (B16 H32 q1
    KV4096 D128, B1 H32 q1 KV32768 D128), the hand-written form beside SDPA at B4 H32 S2048
    D128, and a boolean mask given as a tensor (a random one, every block of it mixed) at the
    Llama benchmark's GQA H32/KV8 S2048 D64."""
    cases = []
    for batch, heads, kv_heads, seq, head_dim in (
        (1, 16, 16, 1024, 128),
        (4, 32, 32, 4096, 128),
        (8, 32, 32, 2048, 64),
        (1, 32, 8, 4096, 128),
    ):
        for causal in (False, True):
            cases.append(attention_case("sdpa", batch, heads, kv_heads, seq, seq, head_dim, causal))
    cases.append(attention_case("sdpa", 16, 32, 32, 1, 4096, 128))
    cases.append(attention_case("sdpa", 1, 32, 32, 1, 32768, 128))
    for program in ("sdpa", "hand_written"):
        cases.append(attention_case(program, 4, 32, 32, 2048, 2048, 128))
    cases.append(attention_case("sdpa_masked", 1, 32, 8, 2048, 2048, 64))
    return cases


SUITES: dict[str, list[Case]] = {
    "memory-bound": cross_product(
        MEMORY_BOUND_PROGRAMS,
        [(8192, 4096), (16, 4096), (1, 32, 2048)],
        ["float32", "bfloat16"],
    ),
    "gemm": gemm_cases(),
    "attention": attention_cases(),
}
