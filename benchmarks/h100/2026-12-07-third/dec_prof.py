import sys, time, statistics, cProfile, pstats, io, torch
sys.path.insert(0, "benchmarks")
import llama
c = llama.Config()
torch.manual_seed(0)
model = llama.Llama(c).placed("cuda", torch.bfloat16).eval()
prompt = torch.randint(0, c.vocab, (1, c.prefill), device="cuda")
for name in sys.argv[1].split(","):
    torch._dynamo.reset()
    step = llama.BACKENDS[name](model)
    model.reset_caches()
    with torch.no_grad():
        step(prompt, torch.arange(c.prefill, device="cuda"))
        tok = torch.tensor([[1]], device="cuda")
        walls, gpus = [], []
        for i in range(40):
            pos = torch.tensor([c.prefill + i], device="cuda")
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter(); e0.record()
            step(tok, pos)
            e1.record(); t1 = time.perf_counter()
            torch.cuda.synchronize(); t2 = time.perf_counter()
            walls.append((t2 - t0) * 1e3); gpus.append(e0.elapsed_time(e1))
            if i == 5:
                host = (t1 - t0) * 1e3
        print(f"{name}: wall {statistics.median(walls[5:]):.3f} ms  events {statistics.median(gpus[5:]):.3f} ms  host-return {host:.3f} ms", flush=True)
        pr = cProfile.Profile(); pr.enable()
        for i in range(20):
            pos = torch.tensor([c.prefill + i], device="cuda")
            step(tok, pos); torch.cuda.synchronize()
        pr.disable()
        s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25); print(s.getvalue()[:6000])
