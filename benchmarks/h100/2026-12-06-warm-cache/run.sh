# The session of 2026-12-06 20:51 UTC, on one H100 (gpu.txt; PyTorch 2.11 there), emmy at
# 14baa96. One call:
python3 -m pytest -q test/python/test_dynamo_cache.py test/python/test_gpu_runtime.py \
  -k "plan or cache or runs_on_the_gpu" > quick_tests.log
export EMMY_CACHE_DIR=/tmp/emmycache      # empty at the start
python3 benchmarks/llama.py --backends eager,emmy --json llama_cold.json   # fills the caches
python3 benchmarks/llama.py --backends eager,emmy --json llama_warm.json   # a second process
python3 benchmarks/h100/2026-12-06-in-place/warm_profile.py --profile > warm_profile.log  # a third
python3 floor.py > floor.log                           # Dynamo (and AOTAutograd) alone
unset EMMY_CACHE_DIR
python3 -m pytest -q test/python/test_gpu_api.py test/python/test_gpu_runtime.py \
  test/python/test_gpu_programs.py > tests.log        # cut off by its time limit at 93%
