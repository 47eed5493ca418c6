set -o pipefail
. scripts/gpu-host-env.sh
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee /tmp/o/gpu.txt
python3 -c "import torch; print(torch.__version__)" | tee -a /tmp/o/gpu.txt
git log --oneline -1 | tee -a /tmp/o/gpu.txt
date
timeout 270 python3 -m pytest -v -n 14 -p no:cacheprovider -p no:logging -rfE --tb=short test/python/test_gpu_programs.py test/python/test_gpu_runtime.py test/python/test_gpu_api.py test/python/test_dynamo_cache.py > /tmp/o/tests.log 2>&1
grep -c PASSED /tmp/o/tests.log; grep -E "^(FAILED|ERROR)" /tmp/o/tests.log | head -40; tail -3 /tmp/o/tests.log
tar -C /tmp/o -czf $OUT/r.tgz .; date
timeout 220 python3 benchmarks/llama.py --backends eager,torch.compile,reduce-overhead,emmy,emmy-no-graphs --json /tmp/o/llama.json > /tmp/o/llama.log 2>&1
tail -9 /tmp/o/llama.log
tar -C /tmp/o -czf $OUT/r.tgz .; date
