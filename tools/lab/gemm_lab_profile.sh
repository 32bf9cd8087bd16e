#!/usr/bin/env bash
# One device call for the grouped GEMM kernel lab: A/B timings of the lab binaries in build-lab/ (built here with
# tools/lab/gemm_lab.sh, carried), then Nsight Compute of the first one with per-SASS-instruction stall samples
# (where the consumer warps wait), everything under $OUT as one tarball.
#   tools/lab/gemm_lab_profile.sh "gemm_lab gemm_lab_x ..." [profile shapes, default "4096"; "none"] [binary profiled]
# Timings: LAB_SMALL data (the benchmark's magnitudes), checks skipped, N = 4096, K = 7168: dense M = 16384 /
# 4096 / 2048 "GEMM only" (no output) and "fused" (quantized output, no C: the benchmark's fused call), then fused
# dense M = 512 / 128 (split K) and E = 8 x 4096 rows; median of 20 back-to-back runs.
set -uo pipefail
bins=${1:-gemm_lab}
shapes=${2:-4096}
R=$OUT; o=/tmp/o; mkdir -p $o
export LAB_SMALL=1 LAB_SKIP_CHECK=1
L="timeout ${LAB_TIMEOUT:-40}"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
  for m in 16384 4096 2048; do
    for b in $bins; do
      g=$(LAB_GEMM_ONLY=1 $L build-lab/$b $m 4096 7168 1 2>/dev/null | grep -o "GEMM only.*")
      f=$(LAB_NO_C=1 $L build-lab/$b $m 4096 7168 1 20 2>/dev/null | grep -o "median.*")
      echo "M=$m $b: $g | fused $f"
    done
  done
  for shape in "512 4096 7168 1" "128 4096 7168 1" "4096 4096 7168 8"; do  # split K; MoE (random cut points)
    for b in $bins; do
      echo "$shape $b: fused $(LAB_NO_C=1 $L build-lab/$b $shape 20 2>/dev/null | grep -o "median.*")"
    done
  done
} 2>&1 | tee $o/ab.txt
first=${3:-${bins%% *}}
for m in ${shapes/none/}; do
  for mode in GEMM_ONLY NO_C; do
    # NO_C: the lab's first launch writes C (for its checks); the launches after it are the fused call's
    skip=0; [ $mode = NO_C ] && skip=1
    env LAB_$mode=1 timeout 200 ncu --clock-control none -k regex:grouped_gemm --launch-skip $skip -c 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats \
      -f -o $o/prof-$mode-$m build-lab/$first $m 4096 7168 1 1 >$o/prof-$mode-$m.log 2>&1
    ncu -i $o/prof-$mode-$m.ncu-rep --print-details all >$o/prof-$mode-$m.txt 2>&1
    ncu -i $o/prof-$mode-$m.ncu-rep --page source --csv --print-source sass >$o/prof-$mode-$m-sass.csv 2>&1
    rm -f $o/prof-$mode-$m.ncu-rep
    grep -E "Duration|SM Frequency|L2 Cache Throughput|DRAM Throughput|L1/TEX Cache|Issued Warp" $o/prof-$mode-$m.txt | head -8
  done
done
tar czf $R/o.tgz -C $o .
