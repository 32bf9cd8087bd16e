#!/usr/bin/env bash
# Lab (one device call, after tools/gpu-check.sh built build-gpu): sm90.group.lut rebuilt with each
# measurement macro of src/kernels/lut_group.cuh (only the files that include it recompile), silu + fp8
# g128 at 16384 x 7168 timed against sm90.group. Leaves lut_group.cuh as it found it.
set -u
out=${1:-${OUT:-$PWD/gpu-out}}
h=src/kernels/lut_group.cuh
cp $h /tmp/lut_group.cuh.orig
for mode in NONE FQ_LUT_LAB_NO_TABLE; do
  cp /tmp/lut_group.cuh.orig $h
  [[ $mode != NONE ]] && sed -i "0,/^#pragma once/s//#pragma once\n#define $mode 1/" $h
  cmake --build build-gpu -j16 --target fq >/dev/null 2>&1 || { echo "build $mode failed"; continue; }
  echo "== $mode" | tee -a "$out/lab.txt"
  ./build-gpu/tools/fq bench --tokens 16384 --hidden 7168 --layouts row --variants sm90.group,sm90.group.lut 2>/dev/null |
    tail -2 | cut -c90-220 | tee -a "$out/lab.txt"
done
cp /tmp/lut_group.cuh.orig $h
