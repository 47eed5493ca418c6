"""Decode step: synchronized wall per call (as llama.py), host time per call, cProfile of emmy's."""

import cProfile
import io
import pstats
import sys
import time

import torch
import torch._dynamo

sys.path.insert(0, "benchmarks")
import llama

torch.manual_seed(0)
c = llama.Config()
model = llama.Llama(c).to("cuda", torch.bfloat16).eval()
prompt = torch.randint(0, c.vocab, (1, c.prefill), device="cuda")
ppos = torch.arange(c.prefill, device="cuda")


def step_inputs(i):
    return torch.tensor([[5]], device="cuda"), torch.tensor([c.prefill + i], device="cuda")


with torch.no_grad():
    for backend, kw in (
        ("emmy", {"backend": "emmy", "options": {"fallback": False}}),
        ("reduce-overhead", {"mode": "reduce-overhead"}),
    ):
        torch._dynamo.reset()
        model.reset_caches()
        comp = torch.compile(model, dynamic=False, **kw)
        comp(prompt, ppos)
        for i in range(4):
            comp(*step_inputs(i))
        torch.cuda.synchronize()
        walls = []
        for i in range(30):
            a = step_inputs(i)
            torch.cuda.synchronize()
            t = time.perf_counter()
            comp(*a)
            torch.cuda.synchronize()
            walls.append(time.perf_counter() - t)
        walls.sort()
        hosts = []
        for i in range(30):
            a = step_inputs(i)
            torch.cuda.synchronize()
            t = time.perf_counter()
            comp(*a)
            hosts.append(time.perf_counter() - t)
            torch.cuda.synchronize()
        hosts.sort()
        print(
            f"== {backend}: synced wall {walls[15] * 1e6:.1f} us, host (returns) {hosts[15] * 1e6:.1f} us",
            flush=True,
        )
        if backend == "emmy":
            args = [step_inputs(i) for i in range(50)]
            pr = cProfile.Profile()
            pr.enable()
            for a in args:
                comp(*a)
            torch.cuda.synchronize()
            pr.disable()
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(45)
            print(s.getvalue()[:9000])
            s = io.StringIO()
            pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25)
            print(s.getvalue()[:6000])
