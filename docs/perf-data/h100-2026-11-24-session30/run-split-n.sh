#!/usr/bin/env bash
# Session 30, call 2: the split kernel with a C tile a CTA (split_n 2): checks, sanitizers, timing against HEAD's.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
date; for act in silu swiglu; do
  LAB_ACT=$act LAB_TIMEOUT=30 tools/lab/gemm_lab_checks.sh gemm_lab_sn > $R/checks-sn-$act.txt 2>&1
  echo "checks $act: $(grep -c PASS $R/checks-sn-$act.txt) PASS of $(wc -l < $R/checks-sn-$act.txt)"
done
for tool in synccheck memcheck; do
  LAB_SPLIT_N=2 LAB_SPLIT=2 LAB_GROUP=64 timeout 120 compute-sanitizer --tool $tool build-lab/gemm_lab_sn 200 896 2048 1 1 split 1 > $R/san-$tool-2x2.txt 2>&1
  echo "$tool 2x2: $(grep -E 'ERROR SUMMARY' $R/san-$tool-2x2.txt) $(grep -E 'PASS|FAIL' $R/san-$tool-2x2.txt | tr '\n' ' ' | cut -c1-200)"
  LAB_SMALL=1 LAB_SPLIT_N=2 LAB_SPLIT=1 timeout 120 compute-sanitizer --tool $tool build-lab/gemm_lab_sn 512 1024 7168 1 1 inter 0 > $R/san-$tool-2x1.txt 2>&1
  echo "$tool 2x1 lean: $(grep -E 'ERROR SUMMARY' $R/san-$tool-2x1.txt) $(grep -E 'PASS|FAIL' $R/san-$tool-2x1.txt | tr '\n' ' ' | cut -c1-200)"
done
date; export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_NO_C=1 LAB_SKIP_CHECK=1
t() { echo "$(timeout 30 "$@" 20 2>&1 | grep -oE 'split [0-9]+ x K [0-9]+|median.*' | awk '!seen[$0]++' | tr '\n' ' ')"; }
for round in 1 2 3; do
  for M in 128 256 384 512 2048; do
    s="$M 4096 7168 1"
    echo "r$round $s nb: $(t build-lab/gemm_lab_nb $s)"
    echo "r$round $s sn: $(t build-lab/gemm_lab_sn $s)"
    [[ $M -le 512 ]] || continue
    echo "r$round $s sn n1: $(LAB_SPLIT_N=1 t build-lab/gemm_lab_sn $s)"
    for k in 1 2 3 4; do
      (( M * k <= 512 )) || continue
      echo "r$round $s sn 2x$k: $(LAB_SPLIT_N=2 LAB_SPLIT=$k t build-lab/gemm_lab_sn $s)"
    done
  done
done | tee $R/ab-split-n.txt
