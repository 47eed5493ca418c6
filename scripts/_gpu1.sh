source scripts/gpu-host-env.sh
python3 -m pytest -q -n 8 test/python/test_tile_gemm.py -k "gpu" 2>&1 | tail -15
for spec in "4096,4096,4096" "8192,8192,8192" "2048,4096,11008"; do
  IFS=, read M K N <<< "$spec"
  timeout 200 emmy run --device cuda --bench --json $OUT/linear-$M-$K-$N.json -c "nn.Linear($K,$N,bias=False).to(torch.bfloat16)(torch.randn($M,$K,dtype=torch.bfloat16))" 2>&1 | tail -6
done
