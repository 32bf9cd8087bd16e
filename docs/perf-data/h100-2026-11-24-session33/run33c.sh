#!/usr/bin/env bash
# Session 33, call 3: split K's slices interleaved (CTA r takes K blocks r, r + split, ...: gemm_lab_ik, lab flag
# FQ_LAB_INTERLEAVED_K) against contiguous slices (gemm_lab_s33, this tree without the flag). Checks, then an A/B.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
LAB_TIMEOUT=90 tools/lab/gemm_lab_checks.sh gemm_lab_ik > "$OUT/checks-ik-silu.txt" 2>&1
echo "checks (SiLU): $(grep -c ^PASS "$OUT/checks-ik-silu.txt") PASS of $(wc -l < "$OUT/checks-ik-silu.txt")"
grep -v ^PASS "$OUT/checks-ik-silu.txt" | cut -c1-300
LAB_ROUNDS=3 tools/lab/gemm_lab_ab.sh "gemm_lab_s33 gemm_lab_ik gemm_lab_s33:LAB_SPLIT=4 gemm_lab_ik:LAB_SPLIT=4" \
  "128 4096 7168 1" "256 4096 7168 1" > "$OUT/ab-ik.txt" 2>&1
cat "$OUT/ab-ik.txt"
