"""Per-kernel GPU time and host time of the Llama benchmark's prefill and decode step: emmy vs torch.compile."""

import sys
import time

import torch
import torch._dynamo
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, "benchmarks")
import llama

torch.manual_seed(0)
c = llama.Config()
model = llama.Llama(c).to("cuda", torch.bfloat16).eval()
prompt = torch.randint(0, c.vocab, (1, c.prefill), device="cuda")
ppos = torch.arange(c.prefill, device="cuda")
tok = torch.tensor([[5]], device="cuda")
dpos = torch.tensor([c.prefill], device="cuda")


def prof(name, fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t) / reps * 1e6
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as p:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    rows = [
        (e.key, e.device_time_total / reps, e.count // reps)
        for e in p.key_averages()
        if e.device_time_total > 0 and e.device_type.name == "CUDA"
    ]
    total = sum(r[1] for r in rows)
    print(f"== {name}: wall {wall:.1f} us/call, kernel time {total:.1f} us/call")
    for k, t, n in sorted(rows, key=lambda r: -r[1])[:22]:
        print(f"{t:9.1f} us {n:4d}x  {k[:100]}")


with torch.no_grad():
    for backend in ("emmy", "inductor"):
        torch._dynamo.reset()
        model.reset_caches()
        opts = {"options": {"fallback": False}} if backend == "emmy" else {}
        comp = torch.compile(model, backend=backend, dynamic=False, **opts)
        t = time.perf_counter()
        comp(prompt, ppos)
        torch.cuda.synchronize()
        print(f"{backend} first prefill {time.perf_counter() - t:.1f} s", flush=True)
        t = time.perf_counter()
        comp(tok, dpos)
        torch.cuda.synchronize()
        print(f"{backend} first decode {time.perf_counter() - t:.1f} s", flush=True)
        prof(f"{backend} prefill", lambda: comp(prompt, ppos), 5)
        prof(f"{backend} decode", lambda: comp(tok, dpos), 20)
