#!/usr/bin/env bash
# Session 31 review: the refactored launch path (gemm_lab_rv): which kernel each shape takes, and the lab checks.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
for sh in "128 4096 7168 1" "512 4096 7168 1" "2048 4096 7168 1"; do
  echo "$sh: $(LAB_NO_C=1 LAB_SKIP_CHECK=1 timeout 30 build-lab/gemm_lab_rv $sh 1 split 0 2>&1 | grep launch | sort -u | tr '\n' ' ')"
done
LAB_TIMEOUT=60 tools/lab/gemm_lab_checks.sh gemm_lab_rv > "$OUT/checks-rv.txt" 2>&1
echo "PASS lines: $(grep -c PASS "$OUT/checks-rv.txt") of $(wc -l < "$OUT/checks-rv.txt")"; grep -v PASS "$OUT/checks-rv.txt" | cut -c1-200
