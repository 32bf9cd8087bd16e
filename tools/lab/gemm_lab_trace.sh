#!/usr/bin/env bash
# The per-CTA timeline of lab binaries built with -DFQ_LAB_TRACE (tools/lab/gemm_lab.sh): for each binary and
# shape, the fused call (quantized output, no C; LAB_SMALL data, checks skipped), 20 timed launches, then the
# last launch's trace averaged over CTAs per unit (gemm_lab.cu, print_trace). Output under $OUT/trace.txt. A build
# with -DFQ_LAB_TRACE_WAITS as well also prints the time each CTA spends in the pipeline's waits (lab_trace.h).
#   tools/lab/gemm_lab_trace.sh "gemm_lab_trace ..." ["M N K E" ...]
set -uo pipefail
bins=${1:-gemm_lab_trace}
shift || true
shapes=("$@")
[ ${#shapes[@]} -eq 0 ] && shapes=("16384 4096 7168 1" "4096 4096 7168 1" "2048 4096 7168 1" "4096 4096 7168 8" "512 4096 7168 1")
export LAB_SMALL=1 LAB_SKIP_CHECK=1 LAB_NO_C=1 LAB_TRACE=1
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv
  for shape in "${shapes[@]}"; do
    for b in $bins; do
      echo "== $b $shape ${LAB_ACT:-silu}"
      timeout ${LAB_TIMEOUT:-40} build-lab/$b $shape 20 2>&1 | grep -E "median|trace|launch"
    done
  done
} 2>&1 | tee -a ${OUT:-/tmp}/trace.txt
