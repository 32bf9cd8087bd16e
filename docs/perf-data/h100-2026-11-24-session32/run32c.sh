#!/usr/bin/env bash
# Session 32, calls 3 and 4 (the machine of calls 1-2, build-gpu from run32a.sh): the whole GEMM test binary, then
# compute-sanitizer on its row-pair case.
export PATH=/usr/local/cuda/bin:$PATH
time timeout 570 ./build-gpu/tests/fq_gemm_gpu_tests -d > "$OUT/gemm-tests.log" 2>&1
for t in memcheck synccheck; do
  timeout 280 compute-sanitizer --tool $t ./build-gpu/tests/fq_gemm_gpu_tests -tc="row pairs*" > "$OUT/san-lib-row-pairs-$t.log" 2>&1
done
