"""Which wgmma kernels of a Llama prefill layer (benchmarks/llama.py, one layer) store their
output through TMA, compiled on the CPU."""

import re
import sys
import time
from dataclasses import replace

import torch

sys.path.insert(0, "benchmarks")
import llama  # noqa: E402

import emmy  # noqa: E402

config = replace(llama.Config(), layers=1)
torch.manual_seed(0)
model = llama.Llama(config).placed("cpu", torch.bfloat16).eval()
prompt = torch.randint(0, config.vocab, (1, config.prefill))
positions = torch.arange(config.prefill)
start = time.time()
compiled = emmy.compile(model, prompt, positions)
text = compiled.ir("kernel")
print(f"compile {time.time() - start:.1f} s")
for func in re.split(r"\n  kernel.func ", text)[1:]:
    name = func.split("(")[0]
    if "kernel.wgmma " in func:
        print(name, "TMA stores" if "kernel.tma_store " in func else "stores from registers")
