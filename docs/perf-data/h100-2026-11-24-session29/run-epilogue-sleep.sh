#!/usr/bin/env bash
# Session 29, call 4: the epilogue warps pacing themselves (nanosleep after each row pair, steady-state units only).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
LAB_ROUNDS=2 tools/lab/gemm_lab_ab.sh "gemm_lab_nb gemm_lab_s300 gemm_lab_s700" "2048 4096 7168 1" "4096 4096 7168 1" "8192 4096 7168 1" "16384 4096 7168 1" "4096 4096 7168 8" > $R/ab-epi-sleep.txt 2>&1
sed -E 's/: median ([0-9.]+) us.*/: \1/' $R/ab-epi-sleep.txt
