import re
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from dataclasses import replace

import llama

import emmy

c = replace(llama.Config(), layers=1)
torch.manual_seed(0)
model = llama.Llama(c).placed("cpu", torch.bfloat16).eval()
prompt = torch.randint(0, c.vocab, (1, c.prefill))
pos = torch.arange(c.prefill)
t = time.time()
compiled = emmy.compile(model, prompt, pos)
text = compiled.ir("kernel")
print("compile", time.time() - t)
for func in re.split(r"\n  kernel.func ", text)[1:]:
    name = func.split("(")[0]
    if "kernel.wgmma " in func:
        print(name, "staged" if "kernel.tma_store " in func else "registers")

for line in compiled.ir("tile").splitlines():
    if "memref.store" in line and "tile.gemm" not in line:
        pass

t = compiled.ir("tile")
for m in re.finditer(r"tile.kernel @(\w+).*?\n(.*?)\n\}", t, re.S):
    body = m.group(2)
    if "tile.gemm" in body:
        stores = [l.strip() for l in body.splitlines() if "memref.store" in l or "epilogue(" in l]
        print(m.group(1), [s[:150] for s in stores])
