#!/usr/bin/env bash
# Session 32, calls 8 and 9 (the machine of run32f.sh, build-gpu from it): the GEMM test binary, memcheck and
# synccheck of its random matrix (MoE runs take the segments kernel), and fq_bench_gemm.
export PATH=/usr/local/cuda/bin:$PATH
timeout 150 ./build-gpu/tests/fq_gemm_gpu_tests > "$OUT/gemm-tests.log" 2>&1
for t in memcheck synccheck; do
  FQ_GEMM_TEST_CASES=3 timeout 200 compute-sanitizer --tool $t ./build-gpu/tests/fq_gemm_gpu_tests -tc="random*" > "$OUT/san-lib-random-$t.log" 2>&1
done
timeout 200 ./build-gpu/tools/fq_bench_gemm --json "$OUT/gemm-bench.json" --csv "$OUT/gemm-bench.csv" > "$OUT/gemm-bench.log" 2>&1
# Call 10 (a fresh machine, the committed tree): build and run the whole GEMM test binary (gemm-tests-final.log).
#   cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DFQ_CUDA_ARCHS=90a && cmake --build build-gpu -j16 --target fq_gemm_gpu_tests
#   timeout 150 ./build-gpu/tests/fq_gemm_gpu_tests > "$OUT/gemm-tests.log" 2>&1
