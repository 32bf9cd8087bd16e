#!/usr/bin/env bash
# Session 34, call 3: split K at dense 128 with 7 and 8 CTAs a unit (8 and 7 K blocks each, no slice longer than
# another) where the dispatcher picks 6 (9 or 10 blocks): do 16 clusters of 7 or 8 run at once (the trace's
# last CTA start), and is the call faster?
set -uo pipefail
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
LAB_ROUNDS=3 tools/lab/gemm_lab_ab.sh "gemm_lab_s34 gemm_lab_s34:LAB_SPLIT=7 gemm_lab_s34:LAB_SPLIT=8 gemm_lab_s34:LAB_SPLIT=4" "128 4096 7168 1" > $R/ab-split.txt 2>&1
cat $R/ab-split.txt
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1 LAB_NO_C=1 LAB_TRACE=1
for s in 6 7 8; do
  echo "== s34tr 128 split $s"; LAB_SPLIT=$s timeout 40 build-lab/gemm_lab_s34tr 128 4096 7168 1 20 2>&1 | grep -E "median|trace|split"
done | tee $R/trace-split.txt
