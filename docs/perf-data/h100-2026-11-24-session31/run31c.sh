#!/usr/bin/env bash
# Session 31, call 3: the row-pair kernel with a compact epilogue (gemm_lab_rp2): checks, A/B, ncu duration.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
echo "== A/B"
LAB_ROUNDS=2 tools/lab/gemm_lab_ab.sh "gemm_lab_nb gemm_lab_rp2 gemm_lab_rp2:LAB_ROW_PAIR=0" \
  "384 4096 7168 1" "512 4096 7168 1" > "$OUT/ab-rp2.txt" 2>&1
cut -c1-150 "$OUT/ab-rp2.txt"
echo "== checks silu"
LAB_TIMEOUT=90 tools/lab/gemm_lab_checks.sh gemm_lab_rp2 > "$OUT/checks-rp2-silu.txt" 2>&1
tail -5 "$OUT/checks-rp2-silu.txt" | cut -c1-330; echo "PASS lines: $(grep -c PASS "$OUT/checks-rp2-silu.txt")"
echo "== checks swiglu"
LAB_TIMEOUT=90 LAB_ACT=swiglu tools/lab/gemm_lab_checks.sh gemm_lab_rp2 > "$OUT/checks-rp2-swiglu.txt" 2>&1
tail -5 "$OUT/checks-rp2-swiglu.txt" | cut -c1-330; echo "PASS lines: $(grep -c PASS "$OUT/checks-rp2-swiglu.txt")"
