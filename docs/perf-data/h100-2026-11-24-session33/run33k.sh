#!/usr/bin/env bash
# Session 33, call 11: what the swap-AB probe's fused epilogue pays for the cluster's amax meeting: the same build
# without the exchange and its barrier (swap_ab_fused2nx: each CTA's own amax, wrong codes, timing only).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
for r in 1 2 3; do for b in swap_ab_lab1c4s8 swap_ab_fused2 swap_ab_fused2nx; do
  echo "round $r, $b: $(timeout 60 build-lab/$b 128 4096 7168 20 | grep -E 'flushed' | tr '\n' ' ')"
done; done 2>&1 | tee "$OUT/swap-ab-no-exchange.txt"
