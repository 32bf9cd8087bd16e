#!/usr/bin/env bash
# Session 32, call 1: lab checks of HEAD's kernels (SiLU, SwiGLU-OAI; the new refusal line) and sanitizers on the
# row-pair kernel in the lab, on the GPU while the library's GEMM targets build on the CPU.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/device.txt" 2>&1
( cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DFQ_CUDA_ARCHS=90a > "$OUT/build.log" 2>&1 &&
  cmake --build build-gpu -j16 --target fq_gemm_gpu_tests fq_bench_gemm >> "$OUT/build.log" 2>&1; echo "build rc=$?" >> "$OUT/build.log" ) &
build=$!
LAB_TIMEOUT=90 tools/lab/gemm_lab_checks.sh gemm_lab_s32 2>&1 | cut -c1-260 > "$OUT/checks-s32-silu.txt"
LAB_ACT=swiglu LAB_TIMEOUT=90 tools/lab/gemm_lab_checks.sh gemm_lab_s32 2>&1 | cut -c1-260 > "$OUT/checks-s32-swiglu.txt"
grep -c PASS "$OUT"/checks-s32-*.txt
san() { local tool=$1; shift; echo "== $tool $*"; timeout 150 compute-sanitizer --tool "$tool" "$@" 2>&1 | grep -E "ERROR SUMMARY|PASS|bad|launch:" | head -5; }
for tool in memcheck synccheck; do
  san $tool env LAB_SMALL=1 LAB_SPLIT=2 build-lab/gemm_lab_s32 256 1024 2048 1 1 inter 0
  san $tool env LAB_ROW_PAIR=1 LAB_SPLIT=3 build-lab/gemm_lab_s32 300 1024 2048 1 1 bi32 0
  san $tool env LAB_SPLIT=2 LAB_GROUP=64 LAB_UP_FIRST=1 LAB_ACT=swiglu build-lab/gemm_lab_s32 200 768 1024 1 1 split 0
done > "$OUT/san-row-pair.txt" 2>&1
wait $build
tail -3 "$OUT/build.log"
if [[ -x build-gpu/tests/fq_gemm_gpu_tests ]]; then
  timeout 120 ./build-gpu/tests/fq_gemm_gpu_tests -tc="row pairs*" 2>&1 | tail -4 | tee "$OUT/tests-row-pairs.log"
fi
cat "$OUT/san-row-pair.txt"
