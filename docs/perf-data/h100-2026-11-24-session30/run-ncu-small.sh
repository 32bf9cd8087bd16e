#!/usr/bin/env bash
# Session 30, call 5: which kernel cuBLASLt runs at dense M = 128 / 512 (grid, cluster, time), and the L2 / DRAM
# load of it and of our split-K fused call, under Nsight Compute (caches flushed before each profiled kernel).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
S="--section LaunchStats --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy"
for M in 512 128; do
  timeout 120 ncu --clock-control none -c 3 $S build-lab/cublaslt_lab $M 4096 7168 5 > $R/ncu-cublaslt-$M.txt 2>&1
  echo "== cuBLASLt M=$M"; grep -E "^  [a-z_0-9]+.*\(|Duration|Grid Size|Cluster Size|Block Size|Registers|Shared Memory Configuration Size|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|SM Frequency" $R/ncu-cublaslt-$M.txt | head -40
  LAB_BENCH_DATA=1 LAB_NO_C=1 LAB_SKIP_CHECK=1 timeout 120 ncu --clock-control none -k regex:grouped_gemm -c 1 $S build-lab/gemm_lab_nb $M 4096 7168 1 1 > $R/ncu-ours-$M.txt 2>&1
  echo "== ours M=$M"; grep -E "Duration|Grid Size|Cluster Size|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|SM Frequency" $R/ncu-ours-$M.txt | head -20
done
