#!/usr/bin/env bash
# Session 33, call 1: is the last wave's idle time real? Dense M whose pairs fill whole waves of 66 clusters
# (row tiles a multiple of 33: 4224, 8448, 16896) against their neighbours (3968, 4096, 8192, 16384).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/device.txt" 2>&1; cat "$OUT/device.txt"
LAB_ROUNDS=3 tools/lab/gemm_lab_ab.sh "gemm_lab_seg4" "3968 4096 7168 1" "4096 4096 7168 1" "4224 4096 7168 1" \
  "8192 4096 7168 1" "8448 4096 7168 1" "16384 4096 7168 1" "16896 4096 7168 1" > "$OUT/tail-waves.txt" 2>&1
cat "$OUT/tail-waves.txt"
