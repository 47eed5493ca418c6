"""Benchmark suites: `emmy bench --suite NAME` times each program of a suite, at each of its
shapes and dtypes, under eager PyTorch, torch.compile (max-autotune) and emmy.

    $ emmy bench --suite memory-bound --only rms_norm --json rms_norm.json

A program is an `emmy compile -c` source in which `DT` stands for the dtype and `SHAPE` for
the input shape (its last dim is the normalized or activated one).
"""

from __future__ import annotations

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

SUITES = {
    "memory-bound": {
        "programs": MEMORY_BOUND_PROGRAMS,
        "shapes": [(8192, 4096), (16, 4096), (1, 32, 2048)],
        "dtypes": ["float32", "bfloat16"],
    },
}


def suite_cases(name: str) -> list[tuple[str, str, str, str]]:
    """(program name, shape text, dtype, source with SHAPE filled in) for every case."""
    suite = SUITES[name]
    cases = []
    for shape in suite["shapes"]:
        for program, source in suite["programs"].items():
            for dtype in suite["dtypes"]:
                shape_text = "x".join(map(str, shape))
                cases.append(
                    (program, shape_text, dtype, source.replace("SHAPE", repr(tuple(shape))))
                )
    return cases
