#!/usr/bin/env bash
# What a fused grouped-GEMM call is made of, per lab binary (build-lab/, built by tools/lab/gemm_lab.sh): the
# same shape timed with no outputs (the main loop; LAB_GEMM_ONLY: the mean of back-to-back launches), again with
# no outputs but timed as the others are (each launch between its own events, the median of 20: the "per-launch"
# column; the same kernel work as the first, so the two differ only by how they are timed; sessions 22-24 read
# it as the C stash, which it is not: no output, no stash), with y as bf16 (+ the stash and the activation), and
# quantized (the benchmark's fused call, no C). LAB_SMALL data, checks skipped. Run on the device with build-lab
# carried:
#   tools/lab/gemm_lab_modes.sh "gemm_lab_a gemm_lab_b" [M N K E, default "16384 4096 7168 1"]
# (docs/perf.md session 22)
set -uo pipefail
export LAB_SMALL=1 LAB_SKIP_CHECK=1
L="timeout ${LAB_TIMEOUT:-20}"
shape=${2:-16384 4096 7168 1}
for b in $1; do
  g=$(LAB_GEMM_ONLY=1 $L build-lab/$b $shape 2>/dev/null | grep -o "GEMM only[^,]*")
  s=$(LAB_NO_C=1 LAB_NO_Q=1 $L build-lab/$b $shape 20 2>/dev/null | grep -o "median [0-9.]* us")
  d=$(LAB_NO_C=1 LAB_NO_Q=1 LAB_D=1 $L build-lab/$b $shape 20 2>/dev/null | grep -o "median [0-9.]* us")
  q=$(LAB_NO_C=1 $L build-lab/$b $shape 20 2>/dev/null | grep -o "median [0-9.]* us")
  echo "$b ($shape): $g | no outputs, per launch $s | y bf16 $d | quantized $q"
done
