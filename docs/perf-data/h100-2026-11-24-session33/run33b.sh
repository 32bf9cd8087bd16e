#!/usr/bin/env bash
# Session 33, call 2: the committed tree (b037d1d: the GPU tests refactored) built for sm_90a, fq_gemm_gpu_tests.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DFQ_CUDA_ARCHS=90a > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 --target fq_gemm_gpu_tests fq_bench_gemm >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout 150 build-gpu/tests/fq_gemm_gpu_tests > "$OUT/gemm-tests.log" 2>&1; echo "rc $?"
tail -6 "$OUT/gemm-tests.log"
