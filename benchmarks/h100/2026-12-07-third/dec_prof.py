"""The Llama benchmark's decode step under each backend named: its wall time and its GPU time
between CUDA events (median of 35 steps), the host's time to queue one step, then a cProfile
of 20 steps (host time by function).

    python3 benchmarks/h100/2026-12-07-third/dec_prof.py emmy,reduce-overhead
"""

import cProfile
import io
import pstats
import statistics
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
import llama  # noqa: E402

config = llama.Config()
torch.manual_seed(0)
model = llama.Llama(config).placed("cuda", torch.bfloat16).eval()
prompt = torch.randint(0, config.vocab, (1, config.prefill), device="cuda")
for name in sys.argv[1].split(","):
    torch._dynamo.reset()
    step = llama.BACKENDS[name](model)
    model.reset_caches()
    with torch.no_grad():
        step(prompt, torch.arange(config.prefill, device="cuda"))
        token = torch.tensor([[1]], device="cuda")
        walls, events = [], []
        for i in range(40):
            position = torch.tensor([config.prefill + i], device="cuda")
            torch.cuda.synchronize()
            start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            began = time.perf_counter()
            start.record()
            step(token, position)
            end.record()
            if i == 5:  # the host's time to queue one step
                host = (time.perf_counter() - began) * 1e3
            torch.cuda.synchronize()
            walls.append((time.perf_counter() - began) * 1e3)
            events.append(start.elapsed_time(end))
        wall, gpu = statistics.median(walls[5:]), statistics.median(events[5:])
        print(f"{name}: wall {wall:.3f} ms  events {gpu:.3f} ms  host-return {host:.3f} ms")
        profiler = cProfile.Profile()
        profiler.enable()
        for i in range(20):
            step(token, torch.tensor([config.prefill + i], device="cuda"))
            torch.cuda.synchronize()
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
        print(text.getvalue()[:6000])
