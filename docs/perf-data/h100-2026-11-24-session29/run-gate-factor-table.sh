#!/usr/bin/env bash
# Session 29, call 2: the gate-factor table (lean epilogue): checks (SiLU, SwiGLU-OAI), lab synccheck, A/B against the committed kernel.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
LAB_STOP=1 LAB_TIMEOUT=30 tools/lab/gemm_lab_checks.sh gemm_lab_tab > $R/checks-table-silu.txt 2>&1
echo "silu checks: $(grep -c PASS $R/checks-table-silu.txt) PASS of $(wc -l < $R/checks-table-silu.txt)"
LAB_ACT=swiglu LAB_STOP=1 LAB_TIMEOUT=30 tools/lab/gemm_lab_checks.sh gemm_lab_tab > $R/checks-table-swiglu.txt 2>&1
echo "swiglu checks: $(grep -c PASS $R/checks-table-swiglu.txt) PASS of $(wc -l < $R/checks-table-swiglu.txt)"
LAB_SMALL=1 LAB_SKIP_CHECK=1 timeout 200 compute-sanitizer --tool synccheck build-lab/gemm_lab_tab 2000 1024 1024 3 0 split 0 > $R/san-synccheck-table.txt 2>&1
echo "synccheck: $(grep -E 'ERROR SUMMARY' $R/san-synccheck-table.txt)"
LAB_ROUNDS=2 tools/lab/gemm_lab_ab.sh "gemm_lab_nb gemm_lab_tab" "2048 4096 7168 1" "4096 4096 7168 1" "8192 4096 7168 1" "16384 4096 7168 1" "4096 4096 7168 8" "512 4096 7168 1" "128 4096 7168 1" > $R/ab-table.txt 2>&1
sed 's/split K over \([0-9]\) \(split K over [0-9] \)*/S=\1 /' $R/ab-table.txt | sed -E 's/: (S=[0-9] )?median ([0-9.]+) us.*/: \1\2/'
