#!/usr/bin/env bash
# Session 29, call 1: GEMM-only timing of the one-tile-per-CTA prototype (3/4/5 stages) against the committed kernel.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
export LAB_GEMM_ONLY=1 LAB_SMALL=1 LAB_REPS=20
for round in 1 2 3; do
  for shape in "2048 4096 7168 1" "4096 4096 7168 1" "8192 4096 7168 1" "16384 4096 7168 1" "4096 4096 7168 8"; do
    for b in gemm_lab_nb gemm_lab_ot3 gemm_lab_ot4 gemm_lab_ot5; do
      echo "round $round, $shape, $b: $(timeout 30 build-lab/$b $shape 2>&1 | grep -E 'GEMM only|launch|rror' | tr '\n' ' ')"
    done
  done
done | tee $R/gemm-only.txt | sed -E 's/launch: max pairs [0-9]+, cluster [0-9] //'
