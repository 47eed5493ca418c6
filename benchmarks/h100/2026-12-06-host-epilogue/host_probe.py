"""Where emmy's host time per decode call goes: timers around the layers of one synced call."""

import statistics
import sys
import time

import torch
import torch._dynamo

sys.path.insert(0, "benchmarks")
import llama

from emmy.tools import dynamo_backend as db
from emmy.tools.runtime import host

T = {}


def timed(name, fn):
    def wrapper(*a, **k):
        s = time.perf_counter()
        r = fn(*a, **k)
        T.setdefault(name, []).append(time.perf_counter() - s)
        return r

    return wrapper


host.GraphedHostProgram.__call__ = timed("graphed.__call__", host.GraphedHostProgram.__call__)
host.GraphedHostProgram._key = timed("_key", host.GraphedHostProgram._key)
db._Partition.forward = timed("partition.forward", db._Partition.forward)
orig_graph_replay = torch.cuda.CUDAGraph.replay
torch.cuda.CUDAGraph.replay = timed("CUDAGraph.replay", orig_graph_replay)
torch.manual_seed(0)
c = llama.Config()
model = llama.Llama(c).to("cuda", torch.bfloat16).eval()
prompt = torch.randint(0, c.vocab, (1, c.prefill), device="cuda")
ppos = torch.arange(c.prefill, device="cuda")


def step_inputs(i):
    return torch.tensor([[5]], device="cuda"), torch.tensor([c.prefill + i], device="cuda")


with torch.no_grad():
    comp = torch.compile(model, dynamic=False, backend="emmy", options={"fallback": False})
    comp(prompt, ppos)
    for i in range(4):
        comp(*step_inputs(i))
    torch.cuda.synchronize()
    T.clear()
    total = []
    for i in range(40):
        a = step_inputs(i)
        torch.cuda.synchronize()
        s = time.perf_counter()
        comp(*a)
        total.append(time.perf_counter() - s)
        torch.cuda.synchronize()
    print(f"host per call (returns): {statistics.median(total) * 1e6:.1f} us")
    for k, v in T.items():
        print(f"  {k:24} {statistics.median(v) * 1e6:8.1f} us x{len(v) // 40}")
    # graph replay with the GPU busy vs idle
    g = next(iter(m for m in comp._orig_mod.modules())) if False else None
