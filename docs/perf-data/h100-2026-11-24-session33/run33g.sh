#!/usr/bin/env bash
# Session 33, call 7: the swap-AB probe (one consumer warpgroup) with 8 stages and with A multicast to 2 or 1 CTAs
# instead of 4, M = 128: what holds its K loop back.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
for r in 1 2; do for b in swap_ab_lab1 swap_ab_lab1s8 swap_ab_lab1c2 swap_ab_lab1c2s8 swap_ab_lab1c1s8; do
  echo "round $r, $b: $(timeout 60 build-lab/$b 128 4096 7168 20 | grep -E 'stages|bad|flushed' | tr '\n' ' ')"
done; done 2>&1 | tee "$OUT/swap-ab-stages-cluster.txt"
