#!/usr/bin/env bash
# Session 33, call 9: the swap-AB probe with a fused epilogue (SiLU, the amax met across the cluster of four, e4m3
# codes and a scale per token and 128-output group), M = 128, against the library kernel's fused call and C-only call.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1
for r in 1 2 3; do
  echo "round $r, current kernel, fused (codes, no C): $(LAB_NO_C=1 timeout 60 build-lab/gemm_lab_seg4 128 4096 7168 1 20 2>&1 | grep -oE 'median.*')"
  echo "round $r, current kernel, C only: $(LAB_NO_Q=1 timeout 60 build-lab/gemm_lab_seg4 128 4096 7168 1 20 2>&1 | grep -oE 'median.*')"
  for b in swap_ab_lab1c4s8 swap_ab_fused_s8; do
    echo "round $r, $b: $(timeout 60 build-lab/$b 128 4096 7168 20 | grep -E 'bad|flushed' | tr '\n' ' ')"
  done
done 2>&1 | tee "$OUT/swap-ab-fused.txt"
