"""Times the in-place KV cache update of the Llama benchmark's layers (`index_copy_` of k and
v into bf16 caches of [1, 8, 4096, 64]) at one position (a decode step) and at 2048 (a
prefill), under eager and emmy with and without `predicate-write-backs`, each compiled in
this process (IR cache and the process's shared programs off), by CUDA events over many calls:

    python3 benchmarks/h100/2026-12-07-eighth/cache_update.py out.json
"""

import json
import os
import sys

os.environ["EMMY_NO_CACHE"] = "1"

import torch  # noqa: E402
from torch import nn  # noqa: E402

import emmy  # noqa: E402
from emmy.passes import pipelines  # noqa: E402
from emmy.passes.predicate_write_backs import PredicateWriteBacksPass  # noqa: E402
from emmy.tools import compiled_graph  # noqa: E402


class CacheUpdate(nn.Module):
    def __init__(self):
        super().__init__()
        shape = (1, 8, 4096, 64)
        self.register_buffer("k_cache", torch.zeros(shape, dtype=torch.bfloat16))
        self.register_buffer("v_cache", torch.zeros(shape, dtype=torch.bfloat16))

    def forward(self, k, v, positions):
        self.k_cache.index_copy_(2, positions, k)
        self.v_cache.index_copy_(2, positions, v)
        return positions + 1


def median_us(fn, *args, calls=200, rounds=7) -> float:
    for _ in range(10):
        fn(*args)
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn(*args)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000 / calls)
    return sorted(times)[rounds // 2]


def main() -> None:
    kernel_stage = pipelines.STAGES["kernel"]
    without = tuple(p for p in kernel_stage if not isinstance(p, PredicateWriteBacksPass))
    results = []
    for rows in (1, 2048):
        k = torch.randn(1, 8, rows, 64, dtype=torch.bfloat16, device="cuda")
        v = torch.randn_like(k)
        positions = torch.randperm(4096, device="cuda")[:rows]
        eager = CacheUpdate().cuda()
        result = {"rows": rows, "eager_us": median_us(eager, k, v, positions)}
        for name, stage in (("emmy_without_pass_us", without), ("emmy_us", kernel_stage)):
            pipelines.STAGES["kernel"] = stage
            compiled_graph._COMPILED.clear()  # one program, compiled again under each stage
            model = CacheUpdate().cuda()
            compiled = emmy.compile(model, k, v, positions)
            compiled(k, v, positions)
            eager(k, v, positions)
            assert torch.equal(model.k_cache, eager.k_cache), name
            assert torch.equal(model.v_cache, eager.v_cache), name
            result[name] = median_us(compiled, k, v, positions)
        pipelines.STAGES["kernel"] = kernel_stage
        print(result, flush=True)
        results.append(result)
    with open(sys.argv[1], "w") as out:
        json.dump({"command": " ".join(sys.argv), "results": results}, out, indent=1)


if __name__ == "__main__":
    main()
