#!/usr/bin/env bash
# Session 33, call 6: the swap-AB probe with B prefetched into L2 D blocks ahead (SWAP_PREFETCH=D), one and two
# consumer warpgroups, M = 128; the library kernel's C-only call beside it.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
timeout 60 build-lab/swap_ab_lab2 128 4096 7168 20 > /dev/null  # warm-up
for r in 1 2; do
  echo "round $r, current kernel, C only, M = 128: $(LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1 LAB_NO_Q=1 timeout 60 build-lab/gemm_lab_seg4 128 4096 7168 1 20 2>&1 | grep -oE 'median.*')"
  for d in 0 6 12 24; do for b in swap_ab_lab1 swap_ab_lab2; do
    echo "round $r, $b, prefetch $d: $(SWAP_PREFETCH=$d timeout 60 build-lab/$b 128 4096 7168 20 | grep -E 'bad|flushed' | tr '\n' ' ')"
  done; done
done 2>&1 | tee "$OUT/swap-ab-prefetch.txt"
