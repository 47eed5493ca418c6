# The session of 2026-12-06 15:07 UTC, on one H100 (gpu.txt), emmy at 88de4d5.
# attention.json: the whole attention suite; tests.log: the GPU tests; llama.json: the model.
emmy bench --suite attention --json attention.json
python3 -m pytest -q test/python/test_gpu_programs.py test/python/test_gpu_runtime.py > tests.log
python3 benchmarks/llama.py --backends eager,torch.compile,reduce-overhead,emmy --json llama.json
# ab_<tree>.json: the causal cases under 88de4d5 (cur) and three variants of it, each in its
# own process with its own eager:
#   tnopp: PING_PONG_CONSUMERS = 3 (no ping-pong);
#   tsec:  item_table's sections of l2_bytes // 12 (not // 2) of keys and values;
#   tboth: both.
emmy bench --suite attention --only '^sdpa_causal (8x32x2048|4x32x4096)' --peak-tflops 800 --json ab_<tree>.json
# after.json: 7bd43fc + 8f1ff8a (ping-pong at head dim 128 only, sections of one wave of
# items), the suite but for the decode cases; before.json: 88de4d5 again, in the same session
# on the same machine, for the cases the change touched most.
emmy bench --suite attention --only '^(?!sdpa 16x32x1x|sdpa 1x32x1x)' --peak-tflops 800 --json after.json
emmy bench --suite attention --only '^(sdpa|sdpa_causal) 1x32/8x4096|^sdpa_causal 8x32x2048' --peak-tflops 800 --json before.json
# masked_[no_]ping_pong.json: the summarised boolean mask at head dim 64 on after.json's tree
# with PING_PONG_MIN_DEPTH 64 (ping-pong) and 128 (none); the tree after this run takes turns
# with a summary at every head dim.
emmy bench --suite attention --only '^sdpa_masked' --peak-tflops 800 --json masked_ping_pong.json
