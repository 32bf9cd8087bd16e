#!/usr/bin/env bash
# Session 30, call 4: a C tile a CTA (split_n 2) with 32 KB stages, six of them (cuBLASLt's 128x128 kernel has six).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
date
LAB_TIMEOUT=30 tools/lab/gemm_lab_checks.sh gemm_lab_sn6 > $R/checks-sn6-silu.txt 2>&1
echo "checks silu: $(grep -c PASS $R/checks-sn6-silu.txt) PASS of $(wc -l < $R/checks-sn6-silu.txt)"
LAB_ACT=swiglu LAB_TIMEOUT=30 tools/lab/gemm_lab_checks.sh gemm_lab_sn6 2>&1 | tail -5 > $R/checks-sn6-swiglu-split-n.txt
echo "checks swiglu (split_n lines): $(grep -c PASS $R/checks-sn6-swiglu-split-n.txt) PASS of $(wc -l < $R/checks-sn6-swiglu-split-n.txt)"
for tool in synccheck memcheck; do
  LAB_SPLIT_N=2 LAB_SPLIT=1 timeout 120 compute-sanitizer --tool $tool build-lab/gemm_lab_sn6 512 1024 7168 1 1 split 1 > $R/san-sn6-$tool-2x1.txt 2>&1
  echo "$tool 2x1: $(grep -E 'ERROR SUMMARY' $R/san-sn6-$tool-2x1.txt) $(grep -cE 'PASS' $R/san-sn6-$tool-2x1.txt)"
done
date
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_NO_C=1 LAB_SKIP_CHECK=1
t() { echo "$(timeout 30 "$@" 20 2>&1 | grep -oE 'split [0-9]+ x K [0-9]+|median.*' | awk '!seen[$0]++' | tr '\n' ' ')"; }
for round in 1 2 3; do
  for M in 128 256 384 512; do
    s="$M 4096 7168 1"
    echo "r$round $s nb: $(t build-lab/gemm_lab_nb $s)"
    echo "r$round $s sn6: $(t build-lab/gemm_lab_sn6 $s)"
    echo "r$round $s sn6 n1: $(LAB_SPLIT_N=1 t build-lab/gemm_lab_sn6 $s)"
    for st in 4 5; do echo "r$round $s sn6 stages $st: $(LAB_STAGES=$st t build-lab/gemm_lab_sn6 $s)"; done
    (( M == 128 )) && echo "r$round $s sn6 2x2: $(LAB_SPLIT_N=2 LAB_SPLIT=2 t build-lab/gemm_lab_sn6 $s)"
  done
done | tee $R/ab-split-n6.txt
date
