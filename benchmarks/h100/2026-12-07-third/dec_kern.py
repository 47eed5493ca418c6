"""The kernels of 10 Llama decode steps under `emmy-no-graphs`, by GPU time (PyTorch profiler).

python3 benchmarks/h100/2026-12-07-third/dec_kern.py
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
step = llama.BACKENDS["emmy-no-graphs"](model)
with torch.no_grad():
    step(prompt, torch.arange(config.prefill, device="cuda"))
    token = torch.tensor([[1]], device="cuda")
    for i in range(5):
        step(token, torch.tensor([config.prefill + i], device="cuda"))
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as profiled:
        for i in range(5, 15):
            step(token, torch.tensor([config.prefill + i], device="cuda"))
        torch.cuda.synchronize()
print(profiled.key_averages().table(sort_by="cuda_time_total", row_limit=40))
