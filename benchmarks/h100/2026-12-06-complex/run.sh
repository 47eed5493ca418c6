set -o pipefail
. .scratch/env.sh
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee /tmp/o/gpu.txt
date
timeout 100 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short \
  "test/python/test_gpu_api.py::test_a_batched_attention_layer_with_a_dynamic_length_matches_eager_on_cuda" \
  "test/python/test_gpu_api.py::test_llama_prefill_fills_the_cache_and_decode_steps_match_eager_on_cuda" \
  test/python/test_gpu_programs.py -k "complex or signs or block_diag or batched or llama" \
  2>&1 | tee /tmp/o/tests.log | grep -v "^SKIPPED" | tail -15
tar -C /tmp/o -czf $OUT/r.tgz .; date
timeout 130 python3 benchmarks/llama.py --rope complex --backends eager,torch.compile,reduce-overhead,emmy --json /tmp/o/llama_complex.json 2>&1 | tee /tmp/o/llama_complex.log | tail -7
tar -C /tmp/o -czf $OUT/r.tgz .; date
