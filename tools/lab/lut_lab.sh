#!/usr/bin/env bash
# One device call: rebuild the table kernels with each lab macro and time silu g128 16384x7168 + swiglu mxfp8.
set -u
out=$1
for mode in "" "-DFQ_LUT_LAB_NO_TABLE" "-DFQ_LUT_LAB_NO_PREFETCH"; do
  cmake -S . -B build-gpu "-DCMAKE_CUDA_FLAGS=$mode" >/dev/null 2>&1
  cmake --build build-gpu -j16 --target fq >/dev/null 2>&1 || { echo "build $mode failed"; continue; }
  echo "== mode '$mode'" | tee -a $out/lab.txt
  ./build-gpu/tools/fq bench --tokens 16384 --hidden 7168 --layouts row --variants sm90.group,sm90.group.lut 2>/dev/null | tail -2 | cut -c90-220 | tee -a $out/lab.txt
done
cmake -S . -B build-gpu "-DCMAKE_CUDA_FLAGS=" >/dev/null 2>&1
