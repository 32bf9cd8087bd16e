#!/usr/bin/env bash
# Session 30, call 6: our split-K fused call and the one-tile candidate (six stages) at dense M = 512 under Nsight
# Compute, a later launch than the first (skip 3), caches flushed (as the benchmark) and not.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
S="--section LaunchStats --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
export LAB_BENCH_DATA=1 LAB_NO_C=1 LAB_SKIP_CHECK=1
g='Duration|Grid Size|Cluster Size|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|SM Frequency|Issued Warp|Stall (Long|Wait|Barrier|Math|Short|No Inst|Dispatch|Not Sel|Membar|Sleep)'
for cc in all none; do
  for v in "nb" "sn6"; do
    env $( [[ $v == sn6 ]] && echo LAB_SPLIT_N=2 LAB_SPLIT=1 ) timeout 120 ncu --clock-control none --cache-control $cc -k regex:grouped_gemm --launch-skip 3 -c 1 $S build-lab/gemm_lab_$v 512 4096 7168 1 20 > $R/ncu-$v-512-cache-$cc.txt 2>&1
    echo "== $v 512, cache control $cc"; grep -E "$g" $R/ncu-$v-512-cache-$cc.txt | head -24
  done
  timeout 120 ncu --clock-control none --cache-control $cc -k regex:nvjet --launch-skip 3 -c 1 $S build-lab/cublaslt_lab 512 4096 7168 5 > $R/ncu-cublaslt-512-cache-$cc.txt 2>&1
  echo "== cuBLASLt 512, cache control $cc"; grep -E "$g" $R/ncu-cublaslt-512-cache-$cc.txt | head -24
done
