import sys, torch
sys.path.insert(0, "benchmarks")
import llama
from torch.profiler import profile, ProfilerActivity
c = llama.Config()
torch.manual_seed(0)
model = llama.Llama(c).placed("cuda", torch.bfloat16).eval()
prompt = torch.randint(0, c.vocab, (1, c.prefill), device="cuda")
step = llama.BACKENDS["emmy-no-graphs"](model)
with torch.no_grad():
    step(prompt, torch.arange(c.prefill, device="cuda"))
    tok = torch.tensor([[1]], device="cuda")
    for i in range(5):
        step(tok, torch.tensor([c.prefill + i], device="cuda"))
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(10):
            step(tok, torch.tensor([c.prefill + 5 + i], device="cuda"))
        torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=40, max_name_column_width=60))
