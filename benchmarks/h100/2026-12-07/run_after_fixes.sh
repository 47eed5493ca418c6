set -o pipefail
. scripts/gpu-host-env.sh
mkdir -p /tmp/o
nvidia-smi --query-gpu=name --format=csv,noheader | tee /tmp/o/gpu_b.txt
date
timeout 200 python3 -m pytest -v -n 14 -p no:cacheprovider -p no:logging -rfE --tb=short test/python/test_gpu_programs.py -k "top_p or multilabel or fold_and_pair or scatter_reductions or bilinear_layer or embedding_bags or bool_arithmetic or merged_image or pooling_and_upsampling or histograms or bit_shifts" > /tmp/o/tests_b.log 2>&1
grep -c PASSED /tmp/o/tests_b.log; grep -E "^(FAILED|ERROR)" /tmp/o/tests_b.log | head -20; tail -2 /tmp/o/tests_b.log
tar -C /tmp/o -czf $OUT/rb.tgz .; date
