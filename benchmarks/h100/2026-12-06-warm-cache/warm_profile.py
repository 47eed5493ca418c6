"""Where a warm (cached) emmy compile of the Llama benchmark's prefill and decode goes."""

import cProfile
import io
import pstats
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
import llama

torch.manual_seed(0)
c = llama.Config()
model = llama.Llama(c).to("cuda", torch.bfloat16).eval()
prompt = torch.randint(0, c.vocab, (1, c.prefill), device="cuda")
ppos = torch.arange(c.prefill, device="cuda")
comp = torch.compile(model, backend="emmy", dynamic=False)
profile = cProfile.Profile()
with torch.no_grad():
    start = time.perf_counter()
    profile.enable()
    comp(prompt, ppos)
    comp(torch.tensor([[5]], device="cuda"), torch.tensor([c.prefill], device="cuda"))
    torch.cuda.synchronize()
    profile.disable()
print(f"first prefill + decode: {time.perf_counter() - start:.2f} s")
if "--profile" in sys.argv:
    s = io.StringIO()
    pstats.Stats(profile, stream=s).sort_stats("cumulative").print_stats(60)
    print(s.getvalue()[:14000])
