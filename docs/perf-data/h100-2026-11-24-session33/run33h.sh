#!/usr/bin/env bash
# Session 33, call 8: the swap-AB probe's wide CTA (128 B rows x 64 tokens, two warpgroups of 64 B rows, 8 stages,
# A to 2 CTAs or none) against the narrow one (64 B rows x 128 tokens) and the library kernel's C-only call.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
for r in 1 2; do for m in 128 256; do
  echo "round $r, M = $m, current kernel, C only: $(LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1 LAB_NO_Q=1 timeout 60 build-lab/gemm_lab_seg4 $m 4096 7168 1 20 2>&1 | grep -oE 'median.*')"
  for b in swap_ab_lab1c2s8 swap_ab_wide_c2s8 swap_ab_wide_c1s8; do
    echo "round $r, M = $m, $b: $(timeout 60 build-lab/$b $m 4096 7168 20 | grep -E 'CTAs|bad|flushed' | sed 's/.*: \([0-9]* CTAs\)/\1/' | tr '\n' ' ')"
  done
done; done 2>&1 | tee "$OUT/swap-ab-wide.txt"
