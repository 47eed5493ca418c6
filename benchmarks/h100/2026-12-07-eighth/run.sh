# One phase of this session's GPU runs (an H100 came, no H200): bash benchmarks/h100/2026-12-07-eighth/run.sh PHASE
# (one: the tf32 GPU tests, the gemm suite's f32 cases and bf16 4096^3, the KV cache update's
# probe and the Llama model, in one call; suites: the attention and gemm suites; rest: the KV
# cache update's probe, the memory-bound suite and the Llama model;
# probe: the Llama prefill's products under the wgmma candidates, deeper rings among them).
set -o pipefail
. scripts/gpu-host-env.sh
o=$OUT
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee -a $o/gpu.txt
python3 -c "import torch; print(torch.__version__)" | tee -a $o/gpu.txt
git log --oneline -1 | tee -a $o/gpu.txt
date -u | tee -a $o/gpu.txt
case "$1" in
one)
  timeout 100 python3 -m pytest -q -n 12 -p no:cacheprovider test/python/test_gpu_programs.py -k "tf32" > $o/tests.log 2>&1
  tail -5 $o/tests.log; date -u
  timeout 100 emmy bench --suite gemm --only '(float32|matmul 4096x4096x4096 bfloat16)' --json $o/gemm.json > $o/gemm.log 2>&1
  tail -8 $o/gemm.log; date -u
  timeout 60 python3 benchmarks/h100/2026-12-07-eighth/cache_update.py $o/cache_update.json > $o/cache_update.log 2>&1
  tail -4 $o/cache_update.log; date -u
  timeout 200 python3 benchmarks/llama.py --backends eager,torch.compile,reduce-overhead,emmy --json $o/llama.json > $o/llama.log 2>&1
  tail -9 $o/llama.log; date -u ;;
suites)
  timeout 150 python3 -m pytest -q -n 12 -p no:cacheprovider test/python/test_gpu_programs.py -k "tf32 or split_decode" > $o/tests.log 2>&1
  tail -5 $o/tests.log
  timeout 200 emmy bench --suite attention --json $o/attention.json > $o/attention.log 2>&1
  tail -25 $o/attention.log; date -u
  timeout 220 emmy bench --suite gemm --only '(float32|matmul 4096x4096x4096 bfloat16|2048x11008x4096 bfloat16|linear 16x4096x4096 bfloat16)' --json $o/gemm.json > $o/gemm.log 2>&1
  tail -30 $o/gemm.log; date -u ;;
rest)
  timeout 90 python3 benchmarks/h100/2026-12-07-eighth/cache_update.py $o/cache_update.json > $o/cache_update.log 2>&1
  tail -4 $o/cache_update.log
  timeout 180 emmy bench --suite memory-bound --json $o/memory-bound.json > $o/memory-bound.log 2>&1
  tail -28 $o/memory-bound.log; date -u
  timeout 250 python3 benchmarks/llama.py --backends eager,torch.compile,reduce-overhead,emmy --json $o/llama.json > $o/llama.log 2>&1
  tail -9 $o/llama.log; date -u ;;
probe)
  timeout 300 python3 benchmarks/h100/2026-12-07-eighth/prefill_products.py '^(?!.*(raster|cluster)).*tile \[128, (64|128|256), 64\].*pipeline (4|6|8)' $o/prefill_products.json > $o/prefill_products.log 2>&1
  tail -100 $o/prefill_products.log | cut -c1-230; date -u ;;
esac
