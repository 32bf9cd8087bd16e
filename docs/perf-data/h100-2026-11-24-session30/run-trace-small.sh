#!/usr/bin/env bash
# Session 30, call 7: per-CTA timelines (FQ_LAB_TRACE) of split K and of one tile a CTA (six stages) at dense
# M = 512 and 128, benchmark data and L2 flush, the fused call; and the one-tile build in GEMM-only mode.
set -uo pipefail
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1 LAB_NO_C=1 LAB_TRACE=1
for M in 512 128; do
  echo "== nb_tr $M (split K)"; timeout 40 build-lab/gemm_lab_nb_tr $M 4096 7168 1 20 2>&1 | grep -vE "^launch" | grep -E "median|trace|split|unit|K loop|span|wait|reduce|rows|  " | head -30
  echo "== sn6_tr $M (one tile)"; LAB_SPLIT_N=2 LAB_SPLIT=$(( M == 128 ? 3 : 1 )) timeout 40 build-lab/gemm_lab_sn6_tr $M 4096 7168 1 20 2>&1 | grep -vE "^launch" | head -30
done | tee $OUT/trace-small.txt
