#!/usr/bin/env bash
# Session 32, call 6: MoE segments. Lab checks of the candidate (SiLU; the MoE lines take segments), synccheck and
# memcheck of a segment run, and an A/B against HEAD's kernel, on the GPU while the library builds on the CPU.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/device.txt" 2>&1
( { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DFQ_CUDA_ARCHS=90a &&
    cmake --build build-gpu -j14 --target fq_gemm_gpu_tests fq_bench_gemm; } > "$OUT/build.log" 2>&1; echo "build rc=$?" >> "$OUT/build.log" ) &
LAB_TIMEOUT=90 tools/lab/gemm_lab_checks.sh gemm_lab_seg > "$OUT/checks-seg-silu.txt" 2>&1
echo "checks (SiLU): $(grep -c ^PASS "$OUT/checks-seg-silu.txt") PASS of $(wc -l < "$OUT/checks-seg-silu.txt")"
grep -v ^PASS "$OUT/checks-seg-silu.txt" | cut -c1-300
for tool in synccheck memcheck; do
  echo "== $tool"; LAB_SMALL=1 timeout 120 compute-sanitizer --tool $tool build-lab/gemm_lab_seg 2000 1024 1024 9 1 split 0 2>&1 | grep -E "ERROR SUMMARY|PASS|[1-9][0-9]* bad|[1-9][0-9]* differ"
done > "$OUT/san-seg.txt" 2>&1
cat "$OUT/san-seg.txt"
LAB_ROUNDS=2 tools/lab/gemm_lab_ab.sh "gemm_lab_s32 gemm_lab_seg gemm_lab_seg:LAB_SEGMENTS=0" "4096 4096 7168 8" "4096 4096 7168 32" "16384 4096 7168 32" "2048 4096 7168 1" "16384 4096 7168 1" > "$OUT/ab-seg.txt" 2>&1
cat "$OUT/ab-seg.txt"
wait
tail -2 "$OUT/build.log"
