#!/usr/bin/env bash
# Session 33, call 4: the swap-AB probe (tools/lab/swap_ab_lab.cu: C transposed, a CTA per 64 B rows x 128 tokens over
# all of K, clusters of four sharing the tokens' A; GEMM with bf16 C, no epilogue) against the library kernel's
# C-only call (gemm_lab_seg4, LAB_NO_Q: split K at 128 / 256, row pairs off) on the same data sizes.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
for m in 128 256 512; do
  echo "== swap AB, M = $m"; timeout 60 build-lab/swap_ab_lab $m 4096 7168 20
done 2>&1 | tee "$OUT/swap-ab.txt"
for r in 1 2; do for m in 128 256 512; do
  echo "round $r, current kernel, C only, M = $m: $(LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1 LAB_NO_Q=1 timeout 60 build-lab/gemm_lab_seg4 $m 4096 7168 1 20 2>&1 | grep -oE 'split K over [0-9]+|median.*' | tr '\n' ' ')"
  echo "round $r, swap AB: $(timeout 60 build-lab/swap_ab_lab $m 4096 7168 20 | grep flushed)"
done; done 2>&1 | tee "$OUT/swap-ab-vs-current.txt"
