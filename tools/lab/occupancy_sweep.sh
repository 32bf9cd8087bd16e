#!/usr/bin/env bash
# Builds the library with several register caps for the group kernel (FQ_GROUP_MIN_BLOCKS resident blocks
# per SM) and benchmarks each: how resident warps trade against spills. Run on the GPU machine; $OUT/occ.txt.
set -uo pipefail
out=${OUT:-$PWD/gpu-out}; mkdir -p "$out"
for n in ${FQ_OCC_BLOCKS:-1 10 12}; do
  b=build-occ-$n
  cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DFQ_CUDA_ARCHS=90a -DFQ_BUILD_TESTS=OFF -DFQ_BUILD_EXAMPLES=OFF \
    "-DCMAKE_CUDA_FLAGS=-DFQ_GROUP_MIN_BLOCKS=$n" >/dev/null && cmake --build $b -j"$(nproc)" --target fq >/dev/null 2>&1 || { echo "build $n failed"; continue; }
  echo "== FQ_GROUP_MIN_BLOCKS=$n" | tee -a "$out/occ.txt"
  ./$b/tools/fq bench --tokens 1,1024,16384 --hidden 7168,18432 --layouts row 2>/dev/null | tee -a "$out/occ.txt"
  ./$b/tools/fq bench --tokens 16384 --hidden 7168 --scheme mxfp8 --act identity --not-gated --layouts swizzled 2>/dev/null | tail -1 | tee -a "$out/occ.txt"
  ./$b/tools/fq bench --tokens 16384 --hidden 7168 --scheme mxfp8,nvfp4 --layouts swizzled 2>/dev/null | tail -2 | tee -a "$out/occ.txt"
done
