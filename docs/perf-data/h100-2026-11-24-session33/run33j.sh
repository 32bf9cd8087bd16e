#!/usr/bin/env bash
# Session 33, call 10: the swap-AB probe's fused epilogue spread over all eight warps (16 outputs a thread), with the
# library's SiLU fast path and paired fp8 conversions (swap_ab_fused2), against call 9's form and the library kernel.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1
for r in 1 2 3; do
  echo "round $r, current kernel, fused (codes, no C): $(LAB_NO_C=1 timeout 60 build-lab/gemm_lab_seg4 128 4096 7168 1 20 2>&1 | grep -oE 'median.*')"
  for b in swap_ab_lab1c4s8 swap_ab_fused_s8 swap_ab_fused2; do
    echo "round $r, $b: $(timeout 60 build-lab/$b 128 4096 7168 20 | grep -E 'bad|flushed' | tr '\n' ' ')"
  done
done 2>&1 | tee "$OUT/swap-ab-fused2.txt"
