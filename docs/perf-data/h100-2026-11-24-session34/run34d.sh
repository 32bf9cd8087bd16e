#!/usr/bin/env bash
# Session 34, call 4: the row-pair kernel with each CTA loading both tiles' B itself (-DFQ_LAB_PAIR_LOCAL_B: no
# multicast, so neither CTA's stage waits for the peer's consumers; L2 reads of B doubled): checks, A/B against
# s34 at dense 512 / 384, and its timeline.
set -uo pipefail
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
LAB_ACT=silu LAB_TIMEOUT=60 tools/lab/gemm_lab_checks.sh gemm_lab_lb > $R/checks-lb-silu.txt 2>&1
echo "lb silu: $(grep -c ^PASS $R/checks-lb-silu.txt) PASS of $(wc -l < $R/checks-lb-silu.txt)"; grep -v ^PASS $R/checks-lb-silu.txt | cut -c1-300
LAB_ROUNDS=3 tools/lab/gemm_lab_ab.sh "gemm_lab_s34 gemm_lab_lb" "512 4096 7168 1" "384 4096 7168 1" > $R/ab-lb.txt 2>&1
sed 's/ (min.*//' $R/ab-lb.txt
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1 LAB_NO_C=1 LAB_TRACE=1
for M in 512 384; do
  echo "== lbtr $M"; timeout 40 build-lab/gemm_lab_lbtr $M 4096 7168 1 20 2>&1 | grep -E "median|trace:"
done | tee $R/trace-lb.txt
