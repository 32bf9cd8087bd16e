#!/usr/bin/env bash
# Session 34, call 5: HEAD built for sm_90a (library flags), fq_gemm_gpu_tests.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/device.txt" 2>&1
t0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DFQ_CUDA_ARCHS=90a > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 --target fq_gemm_gpu_tests fq_bench_gemm >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
timeout 140 build-gpu/tests/fq_gemm_gpu_tests > "$OUT/gemm-tests.log" 2>&1; echo "rc $?"
tail -4 "$OUT/gemm-tests.log"
