"""Dynamo alone, and Dynamo + AOTAutograd with a compiler that does nothing, on the Llama
benchmark's first prefill and decode step: the floor under any backend's warm compile."""

import sys
import time

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

sys.path.insert(0, "benchmarks")
import llama

from emmy.tools.frontend.importer import decompositions


def nothing(gm, inputs):
    return make_boxed_func(gm.forward)


torch.manual_seed(0)
c = llama.Config()
model = llama.Llama(c).to("cuda", torch.bfloat16).eval()
prompt = torch.randint(0, c.vocab, (1, c.prefill), device="cuda")
ppos = torch.arange(c.prefill, device="cuda")
backends = {
    "dynamo (backend=eager)": "eager",
    "dynamo + AOTAutograd (no-op compiler)": aot_autograd(
        fw_compiler=nothing, decompositions=decompositions(), keep_inference_input_mutations=True
    ),
}
for name, backend in backends.items():
    torch._dynamo.reset()
    comp = torch.compile(model, backend=backend, dynamic=False)
    with torch.no_grad():
        comp(prompt, ppos)  # warms PyTorch itself (imports, kernels) before the timed compile
        torch._dynamo.reset()
        comp = torch.compile(model, backend=backend, dynamic=False)
        torch.cuda.synchronize()
        start = time.perf_counter()
        comp(prompt, ppos)
        comp(torch.tensor([[5]], device="cuda"), torch.tensor([c.prefill], device="cuda"))
        torch.cuda.synchronize()
    print(f"{name}: first prefill + decode {time.perf_counter() - start:.2f} s")
