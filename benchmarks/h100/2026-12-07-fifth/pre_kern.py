import sys

import torch

sys.path.insert(0, "benchmarks")
import llama
from torch.profiler import ProfilerActivity, profile

c = llama.Config()
torch.manual_seed(0)
model = llama.Llama(c).placed("cuda", torch.bfloat16).eval()
prompt = torch.randint(0, c.vocab, (1, c.prefill), device="cuda")
pos = torch.arange(c.prefill, device="cuda")
for name in sys.argv[1].split(","):
    torch._dynamo.reset()
    step = llama.BACKENDS[name](model)
    with torch.no_grad():
        for _ in range(2):
            step(prompt, pos)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for i in range(3):
                step(prompt, pos)
            torch.cuda.synchronize()
    print("=====", name)
    print(
        prof.key_averages().table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=70)
    )
