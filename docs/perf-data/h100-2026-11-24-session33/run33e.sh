#!/usr/bin/env bash
# Session 33, call 5: the swap-AB probe with one consumer warpgroup (swap_ab_lab1) and with two splitting K by
# block parity (swap_ab_lab2), against the library kernel's C-only call (gemm_lab_seg4, split K over 6), M = 128.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
for b in swap_ab_lab1 swap_ab_lab2; do echo "== $b"; timeout 60 build-lab/$b 128 4096 7168 20; done 2>&1 | tee "$OUT/swap-ab2.txt"
for r in 1 2 3; do
  echo "round $r, current kernel, C only, M = 128: $(LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1 LAB_NO_Q=1 timeout 60 build-lab/gemm_lab_seg4 128 4096 7168 1 20 2>&1 | grep -oE 'median.*')"
  for b in swap_ab_lab1 swap_ab_lab2; do echo "round $r, $b: $(timeout 60 build-lab/$b 128 4096 7168 20 | grep flushed)"; done
done 2>&1 | tee "$OUT/swap-ab2-vs-current.txt"
