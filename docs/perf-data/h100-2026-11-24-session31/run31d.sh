#!/usr/bin/env bash
# Session 31, call 4: the library's grouped GEMM GPU tests with the row-pair kernel, and the lab's new line.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
LAB_TIMEOUT=60 bash -c 'source <(sed -n "/^v=/,/^}/p" tools/lab/gemm_lab_checks.sh); r env LAB_SPLIT=2 LAB_GROUP=32 build-lab/gemm_lab_rp2 100 640 1024 1 1 inter 0' 2>&1 | cut -c1-300 | tee "$OUT/check-640.txt"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DFQ_CUDA_ARCHS=90a > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 --target fq_gemm_gpu_tests >> "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "built"
for tc in "row pairs*" "split K*"; do
  timeout 150 ./build-gpu/tests/fq_gemm_gpu_tests -tc="$tc" 2>&1 | tail -6 | tee -a "$OUT/gemm-tests-focus.log"
done
timeout 200 ./build-gpu/tests/fq_gemm_gpu_tests 2>&1 | tail -8 | tee "$OUT/gemm-tests-all.log"
