"""What a decode step can take in `emmy bench`'s timing, and whether the harness's L2 flush
slows the 32 MiB weight read after it, for issue 10's decode target: in one process, a tiny
graph-launched kernel (the floor), a 32 MiB copy, cuBLAS's 16x4096x4096 `F.linear` and emmy's,
each timed as `emmy bench` times (`emmy.tools.bench.timing.measure`) after its flush (a 256 MiB
`zero_`, which leaves the L2 full of dirty lines that a read after it must write back) and
after a flush that only reads (`amax` of the same 256 MiB).

    python3 benchmarks/decode_floor.py --json floor.json
"""

from __future__ import annotations

import argparse
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from emmy.tools.api import compile as emmy_compile
from emmy.tools.bench import timing


def graphed(fn):
    """`fn` captured in a CUDA graph, as the bench launches emmy's programs."""
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json")
    args = parser.parse_args()
    flushed = torch.empty(timing.L2_FLUSH_BYTES, dtype=torch.int8, device="cuda")
    one = torch.zeros(1, device="cuda")
    weight = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    rows = torch.randn(16, 4096, device="cuda", dtype=torch.bfloat16)
    copy = torch.empty_like(weight)
    linear = nn.Linear(4096, 4096, bias=False).to("cuda", torch.bfloat16)
    linear.weight.data.copy_(weight)
    compiled = emmy_compile(linear, rows)
    cases = {
        "tiny kernel": graphed(lambda: one.add_(1)),
        "copy 32 MiB": graphed(lambda: copy.copy_(weight)),
        "cuBLAS linear 16x4096x4096": graphed(lambda: F.linear(rows, weight)),
        "emmy linear 16x4096x4096": lambda: compiled(rows),
    }
    harness_flush = timing.flush_l2
    results = {}
    for flush_name, flush in (("zero_ flush", harness_flush), ("read flush", flushed.amax)):
        timing.flush_l2 = flush
        for name, fn in cases.items():
            median = timing.measure(fn)["median_us"]
            results[f"{name}, {flush_name}"] = median
            print(f"{name + ', ' + flush_name:45} {median:8.2f} us", flush=True)
    timing.flush_l2 = harness_flush
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"gpu": torch.cuda.get_device_name(), "median_us": results}, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
