#!/bin/bash
# Nsight Compute of several lab binaries (GEMM only, one shape; default M = 4096): SM clock, pipe use, warp
# stalls, one report per binary under $OUT. Run on the device with build-lab carried:
#   tools/lab/ncu_ab.sh "gemm_lab_a gemm_lab_b" [M]
export LAB_SMALL=1 LAB_SKIP_CHECK=1 LAB_GEMM_ONLY=1
for b in $1; do
  timeout 120 ncu --clock-control none -k regex:grouped_gemm -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
     build-lab/$b ${2:-4096} 4096 7168 1 1 > $OUT/ncu-$b.txt 2>&1
  echo "== $b"; grep -E "Duration|SM Frequency|Issued Warp|Tensor|Stall (Wait|Barrier|Long|Dispatch|Not Sel|Math|Short|No Inst|Branch)" $OUT/ncu-$b.txt | head -30
done
