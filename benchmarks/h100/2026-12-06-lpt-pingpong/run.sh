set -o pipefail
. .scratch/env.sh
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
bench() {  # tree suite regex seconds name
  tree=$PWD; [ $1 != cur ] && tree=$PWD/.scratch/$1
  (cd $tree && EMMY_CACHE_DIR=/tmp/cache_$1 PYTHONPATH=$tree:/tmp/site timeout $4 emmy bench --suite $2 --only "$3" --json $OUT/$5_$1.json 2>&1 | tee $OUT/$5_$1.log | grep -v "^\[" | grep -E "sdpa|matmul" | tail -6)
}
echo "== attention cur"; bench cur attention '^sdpa_causal (4x32x4096|8x32x2048)' 60 attention
echo "== attention t0"; bench t0 attention '^sdpa_causal (4x32x4096|8x32x2048)' 55 attention
timeout 170 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short test/python/test_gpu_api.py test/python/test_gpu_programs.py test/python/test_gpu_runtime.py 2>&1 | tee $OUT/tests.log | tail -8
