#!/usr/bin/env bash
# A/B of lab binaries (build-lab/, carried) as fq_bench_gemm measures: its correlated data (LAB_BENCH_DATA), a
# 256 MB L2 flush before each launch (LAB_FLUSH), rowwise codes without C (the fused call), median of 20; the
# binaries alternate within each round so that clock drift falls on both.
#   tools/lab/gemm_lab_ab.sh "gemm_lab_base gemm_lab_x" ["M N K E" ...]  (LAB_ROUNDS, default 2)
set -uo pipefail
cd "$(dirname "$0")/../.."
bins=$1; shift
shapes=("$@")
[[ ${#shapes[@]} -gt 0 ]] || shapes=("128 4096 7168 1" "256 4096 7168 1" "512 4096 7168 1" "2048 4096 7168 1" "4096 4096 7168 1")
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_NO_C=1 LAB_SKIP_CHECK=1
for round in $(seq "${LAB_ROUNDS:-2}"); do
  for shape in "${shapes[@]}"; do
    order=$bins; (( round % 2 == 0 )) && order=$(echo $bins | tr ' ' '\n' | tac | tr '\n' ' ')
    for b in $order; do
      echo "round $round, $shape, $b: $(timeout ${LAB_TIMEOUT:-30} build-lab/$b $shape 20 2>&1 | grep -oE "split K over [0-9]+|median.*" | tr '\n' ' ')"
    done
  done
done
