#!/usr/bin/env bash
# Session 30, call 3: split K's producer asking L2 for K blocks ahead of its ring (LAB_PREFETCH=D blocks).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
v=build-lab/gemm_lab_pf
for D in 8 1000; do
  for line in "LAB_SPLIT=6 $v 128 1024 7168 1 1 split 1" "LAB_SPLIT=3 $v 300 1024 2048 1 1 bi32 1" "LAB_SPLIT=2 LAB_SMALL=1 $v 512 4096 7168 1 1 inter 0" "LAB_SPLIT=8 $v 200 1024 2048 1 1 split 1"; do
    echo "D=$D $line :: $(env LAB_PREFETCH=$D $line 2>&1 | grep -E 'bad|differ|FAIL|PASS' | tr '\n' ' ' | cut -c1-300)"
  done
done | tee $R/checks-prefetch.txt
LAB_PREFETCH=1000 LAB_SPLIT=3 timeout 120 compute-sanitizer --tool memcheck $v 300 1024 2048 1 1 bi32 1 > $R/san-memcheck-prefetch.txt 2>&1
echo "memcheck: $(grep 'ERROR SUMMARY' $R/san-memcheck-prefetch.txt)"
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_NO_C=1 LAB_SKIP_CHECK=1
t() { echo "$(timeout 30 "$@" 20 2>&1 | grep -oE 'split K over [0-9]+|median.*' | awk '!seen[$0]++' | tr '\n' ' ')"; }
for round in 1 2 3; do
  for M in 128 256 512; do
    s="$M 4096 7168 1"
    echo "r$round $s nb: $(t build-lab/gemm_lab_nb $s)"
    for D in 0 4 8 16 1000; do echo "r$round $s pf D=$D: $(LAB_PREFETCH=$D t $v $s)"; done
  done
done | tee $R/ab-prefetch.txt
