#!/usr/bin/env bash
# Session 29, call 5: what the committed kernel's fused call is made of, with the benchmark's data (and the lab's),
# and the SM clock / power of each mode at dense 16384.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
for round in 1 2; do
  for shape in "2048 4096 7168 1" "4096 4096 7168 1" "8192 4096 7168 1" "16384 4096 7168 1"; do
    LAB_BENCH_DATA=1 LAB_FLUSH=1 tools/lab/gemm_lab_modes.sh gemm_lab_nb "$shape"
  done
done 2>&1 | tee $R/modes-benchdata.txt
tools/lab/gemm_lab_modes.sh gemm_lab_nb "16384 4096 7168 1" 2>&1 | tee $R/modes-labdata.txt
tools/lab/gemm_lab_clocks.sh gemm_lab_nb "16384 4096 7168 1" 2>&1 | tee $R/clocks-labdata.txt
LAB_BENCH_DATA=1 tools/lab/gemm_lab_clocks.sh gemm_lab_nb "16384 4096 7168 1" 2>&1 | tee $R/clocks-benchdata.txt
