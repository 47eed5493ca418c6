"""Times the Llama benchmark's prefill products (hidden 2048, GQA 32/8 heads of 64, SwiGLU
5632, vocabulary 32000, 2048 tokens: `benchmarks/llama.py`) under each wgmma candidate
schedule without a raster or cluster variant, against eager, in one process:

    python3 benchmarks/h100/2026-12-07-eighth/prefill_products.py SCHEDULE_REGEX out.json
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from schedule_sweep import sweep_case  # noqa: E402

from emmy.tools.bench.suites import GEMM_PROGRAMS  # noqa: E402
from emmy.tools.bench.timing import device_copy_bandwidth  # noqa: E402

linear = GEMM_PROGRAMS["linear"]
CASES = [
    linear.case("linear", 2048, 512, 2048, "bfloat16"),  # wk, wv
    linear.case("linear", 2048, 2048, 2048, "bfloat16"),  # wq, wo
    linear.case("linear", 2048, 2048, 5632, "bfloat16"),  # w2
    linear.case("linear", 2048, 32000, 2048, "bfloat16"),  # the LM head
    GEMM_PROGRAMS["swiglu_mlp"].case("swiglu_mlp", 2048, 5632, 2048, "bfloat16"),
]

if __name__ == "__main__":
    schedules, out = sys.argv[1:3]
    args = argparse.Namespace(schedules=schedules, limit=0, json=out)
    copy = device_copy_bandwidth()
    results: list[dict] = []
    for case in CASES:
        sweep_case(case, args, copy, results)
