#!/usr/bin/env bash
# Session 29, call 3: silu_wide (SiLU's fast path widened upwards): checks, lab synccheck, A/B against the committed kernel.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
LAB_STOP=1 LAB_TIMEOUT=30 tools/lab/gemm_lab_checks.sh gemm_lab_wide > $R/checks-wide-silu.txt 2>&1
echo "silu checks: $(grep -c PASS $R/checks-wide-silu.txt) PASS of $(wc -l < $R/checks-wide-silu.txt)"
LAB_BENCH_DATA=1 LAB_STOP=1 LAB_TIMEOUT=30 tools/lab/gemm_lab_checks.sh gemm_lab_wide > $R/checks-wide-silu-benchdata.txt 2>&1
echo "silu checks, bench data: $(grep -c PASS $R/checks-wide-silu-benchdata.txt) PASS of $(wc -l < $R/checks-wide-silu-benchdata.txt)"
LAB_ROUNDS=3 tools/lab/gemm_lab_ab.sh "gemm_lab_nb gemm_lab_wide" "2048 4096 7168 1" "4096 4096 7168 1" "8192 4096 7168 1" "16384 4096 7168 1" "4096 4096 7168 8" "512 4096 7168 1" "128 4096 7168 1" > $R/ab-wide.txt 2>&1
sed 's/split K over \([0-9]\) \(split K over [0-9] \)*/S=\1 /' $R/ab-wide.txt | sed -E 's/: (S=[0-9] )?median ([0-9.]+) us.*/: \1\2/'
