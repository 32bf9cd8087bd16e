#!/usr/bin/env bash
# Session 30, call 1: is one C tile per CTA (no split, no reduce) a better schedule than split K at M = 256-512?
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
export LAB_BENCH_DATA=1 LAB_REPS=20
for round in 1 2 3; do
  for M in 512 384 256 128; do
    shape="$M 4096 7168 1"
    echo "round $round, $shape, nb split(default) GEMM only: $(LAB_GEMM_ONLY=1 timeout 30 build-lab/gemm_lab_nb $shape 2>&1 | grep -E 'GEMM only|split K|rror' | tr '\n' ' ')"
    echo "round $round, $shape, nb no split GEMM only: $(LAB_SPLIT=1 LAB_GEMM_ONLY=1 timeout 30 build-lab/gemm_lab_nb $shape 2>&1 | grep -E 'GEMM only|rror' | tr '\n' ' ')"
    echo "round $round, $shape, ot4 no split GEMM only: $(LAB_SPLIT=1 LAB_GEMM_ONLY=1 timeout 30 build-lab/gemm_lab_ot4 $shape 2>&1 | grep -E 'GEMM only|rror' | tr '\n' ' ')"
    echo "round $round, $shape, nb fused (flush): $(LAB_FLUSH=1 LAB_NO_C=1 LAB_SKIP_CHECK=1 timeout 30 build-lab/gemm_lab_nb $shape 20 2>&1 | grep -oE 'split K over [0-9]+|median.*' | tr '\n' ' ')"
    echo "round $round, $shape, nb fused, no flush: $(LAB_NO_C=1 LAB_SKIP_CHECK=1 timeout 30 build-lab/gemm_lab_nb $shape 20 2>&1 | grep -oE 'median.*' | tr '\n' ' ')"
  done
done | tee $R/probe.txt
