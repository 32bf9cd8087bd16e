#!/usr/bin/env bash
# The SM clock and board power while a lab binary runs one mode back to back (~2 s), sampled by nvidia-smi every
# 20 ms: whether the fused call's extra time over "GEMM only" is a lower clock (power) rather than lost cycles.
# Prints the median clock (MHz) and power (W) of the samples taken while the GPU was busy, per binary and mode.
#   tools/lab/gemm_lab_clocks.sh "gemm_lab_a gemm_lab_b" [M N K E, default "16384 4096 7168 1"]
# (on the device, build-lab carried; LAB_SMALL data, checks skipped)
set -uo pipefail
export LAB_SMALL=1 LAB_SKIP_CHECK=1
shape=${2:-16384 4096 7168 1}
median() { sort -n | awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : "-"}'; }
for b in $1; do
  for mode in gemm_only per_launch y quantized; do  # per_launch: no outputs, as gemm_only (gemm_lab_modes.sh)
    log=$(mktemp)
    nvidia-smi --query-gpu=clocks.sm,power.draw,utilization.gpu --format=csv,noheader,nounits -lms 20 >"$log" &
    smi=$!
    sleep 0.5
    case $mode in  # ~2000 launches: 2 s at 1 ms each
      gemm_only) LAB_GEMM_ONLY=1 LAB_REPS=2000 timeout 60 build-lab/$b $shape >/dev/null 2>&1 ;;
      per_launch) LAB_NO_C=1 LAB_NO_Q=1 timeout 60 build-lab/$b $shape 2000 >/dev/null 2>&1 ;;
      y) LAB_NO_C=1 LAB_NO_Q=1 LAB_D=1 timeout 60 build-lab/$b $shape 2000 >/dev/null 2>&1 ;;
      quantized) LAB_NO_C=1 timeout 60 build-lab/$b $shape 2000 >/dev/null 2>&1 ;;
    esac
    kill $smi; wait $smi 2>/dev/null
    busy=$(awk -F', ' '$3 >= 90' "$log")  # samples while a kernel ran
    echo "$b $mode ($shape): $(echo "$busy" | grep -c .) samples, SM clock $(echo "$busy" | cut -d, -f1 | median) MHz," \
         "power $(echo "$busy" | cut -d, -f2 | tr -d ' ' | median) W"
    rm -f "$log"
  done
done
