#!/usr/bin/env bash
# Session 34, call 1: where the row-pair kernel's time goes at dense M = 512 (and 384), beside split K's at 128 and
# 256: per-CTA timelines (FQ_LAB_TRACE, benchmark data, L2 flush, fused call), then Nsight Compute of the fused
# call (later launch, caches flushed) with per-SASS stall samples, and cuBLASLt's kernel at 512 for its counters.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee $R/device.txt
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1 LAB_NO_C=1
{
for M in 512 384 128 256; do
  echo "== s34 $M (no trace)"; timeout 40 build-lab/gemm_lab_s34 $M 4096 7168 1 20 2>&1 | grep -E "median"
  echo "== s34tr $M"; LAB_TRACE=1 timeout 40 build-lab/gemm_lab_s34tr $M 4096 7168 1 20 2>&1 | grep -E "median|trace"
done
} 2>&1 | tee $R/trace.txt
S="--section LaunchStats --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section SourceCounters --section InstructionStats"
g='Duration|Elapsed Cycles|SM Active Cycles|Grid Size|Cluster Size|DRAM Throughput|L2 Cache Throughput|SM Frequency|Issued Warp|Stall (Long|Wait|Barrier|Math|Short|No Inst|Dispatch|Not Sel|Membar|Sleep|Branch)'
for spec in "512:row_pair" "384:row_pair" "128:grouped_gemm"; do
  M=${spec%%:*}; k=${spec##*:}
  timeout 150 ncu --clock-control none --cache-control all -k regex:$k --launch-skip 3 -c 1 $S -f -o /tmp/p$M build-lab/gemm_lab_s34 $M 4096 7168 1 20 > $R/ncu-$M.log 2>&1
  ncu -i /tmp/p$M.ncu-rep --print-details all > $R/ncu-$M.txt 2>&1
  ncu -i /tmp/p$M.ncu-rep --page source --csv --print-source sass > $R/ncu-$M-sass.csv 2>&1
  echo "== ours $M ($k)"; grep -E "$g" $R/ncu-$M.txt | head -30
done
timeout 120 ncu --clock-control none --cache-control all -k regex:nvjet --launch-skip 3 -c 1 $S build-lab/cublaslt_lab 512 4096 7168 5 > $R/ncu-cublaslt-512.txt 2>&1
echo "== cuBLASLt 512"; grep -E "$g" $R/ncu-cublaslt-512.txt | head -30
gzip -f $R/*.csv
