#!/usr/bin/env bash
# A/B of lab binaries (build-lab/, carried) as fq_bench_gemm measures: its correlated data (LAB_BENCH_DATA), a
# 256 MB L2 flush before each launch (LAB_FLUSH), rowwise codes without C (the fused call), median of 20; the
# variants alternate within each round so that clock drift falls on all. A variant is a binary, or a binary run
# with lab settings: "gemm_lab_x:LAB_SPLIT=2,LAB_STAGES=5" (so one call times a candidate's options too).
#   tools/lab/gemm_lab_ab.sh "gemm_lab_base gemm_lab_x gemm_lab_x:LAB_SPLIT=3" ["M N K E" ...]  (LAB_ROUNDS, default 2)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
variants=$1; shift
shapes=("$@")
[[ ${#shapes[@]} -gt 0 ]] || shapes=("128 4096 7168 1" "256 4096 7168 1" "512 4096 7168 1" "2048 4096 7168 1" "4096 4096 7168 1")
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_NO_C=1 LAB_SKIP_CHECK=1
# One fused-call timing of variant $1 on shape $2: the launch's split (once; the lab prints it every launch) and the median.
time_variant() {
  local bin=${1%%:*} settings=
  [[ $1 == *:* ]] && settings=${1#*:}
  # shellcheck disable=SC2086  # the shape is four words
  env ${settings//,/ } timeout "${LAB_TIMEOUT:-30}" "build-lab/$bin" $2 20 2>&1 |
    grep -oE "split K over [0-9]+|median.*" | awk '!seen[$0]++' | tr '\n' ' '
}
for round in $(seq "${LAB_ROUNDS:-2}"); do
  for shape in "${shapes[@]}"; do
    order=$variants; (( round % 2 == 0 )) && order=$(echo "$variants" | tr ' ' '\n' | tac | tr '\n' ' ')
    for v in $order; do
      echo "round $round, $shape, $v: $(time_variant "$v" "$shape")"
    done
  done
done
