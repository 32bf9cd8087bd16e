#!/usr/bin/env bash
# Session 31, call 2: where the row-pair kernel's time goes at dense 512 (Nsight Compute: duration, pipes, warp
# stalls, SASS counts), and its time against K.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
export LAB_BENCH_DATA=1 LAB_NO_C=1 LAB_SKIP_CHECK=1
for k in 1792 3584 7168; do
  echo "K=$k rp: $(timeout 30 build-lab/gemm_lab_rp 512 4096 $k 1 20 2>&1 | grep -oE "launch: [a-z ]+|median [0-9.]+ us" | sort -u | tr '\n' ' ')"
  echo "K=$k split: $(LAB_ROW_PAIR=0 timeout 30 build-lab/gemm_lab_rp 512 4096 $k 1 20 2>&1 | grep -oE "median [0-9.]+ us" | tr '\n' ' ')"
done | tee "$OUT/k-sweep.txt"
ncu --clock-control none -k "regex:row_pair" -c 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
  --section InstructionStats --section SourceCounters -f -o "$OUT/ncu-rp" build-lab/gemm_lab_rp 512 4096 7168 1 1 > "$OUT/ncu-rp.log" 2>&1
ncu -i "$OUT/ncu-rp.ncu-rep" --print-details all > "$OUT/ncu-rp.txt" 2>&1
ncu -i "$OUT/ncu-rp.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu-rp-sass.csv" 2>&1
rm -f "$OUT/ncu-rp.ncu-rep"
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Stall|Warp Cycles Per Issued" "$OUT/ncu-rp.txt" | head -30
