"""The kernels of 3 Llama prefills (2048 tokens) under each backend named, by GPU time.

python3 benchmarks/h100/2026-12-07-third/pre_kern.py emmy-no-graphs,torch.compile
"""

import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, "benchmarks")
import llama  # noqa: E402

config = llama.Config()
torch.manual_seed(0)
model = llama.Llama(config).placed("cuda", torch.bfloat16).eval()
prompt = torch.randint(0, config.vocab, (1, config.prefill), device="cuda")
positions = torch.arange(config.prefill, device="cuda")
for name in sys.argv[1].split(","):
    torch._dynamo.reset()
    step = llama.BACKENDS[name](model)
    with torch.no_grad():
        for _ in range(2):
            step(prompt, positions)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as profiled:
            for _ in range(3):
                step(prompt, positions)
            torch.cuda.synchronize()
    print("=====", name)
    print(profiled.key_averages().table(sort_by="cuda_time_total", row_limit=25))
