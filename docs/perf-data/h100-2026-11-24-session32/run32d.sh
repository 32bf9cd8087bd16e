#!/usr/bin/env bash
# Session 32, call 5: fq_bench_gemm with cuBLASLt running groups padded to 16 rows (the skewed MoE shapes get a
# pipeline time), then torch's bf16 peers on the same sizes.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/device.txt" 2>&1
{ cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DFQ_CUDA_ARCHS=90a &&
  cmake --build build-gpu -j16 --target fq_bench_gemm; } > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
timeout 200 ./build-gpu/tools/fq_bench_gemm --json "$OUT/gemm-bench.json" --csv "$OUT/gemm-bench.csv" > "$OUT/gemm-bench.log" 2>&1
echo "bench rc=$?"
cat "$OUT/gemm-bench.log"
timeout 150 python3 tools/bench_gemm_torch.py --json "$OUT/gemm-torch.json" --sizes-from "$OUT/gemm-bench.json" > "$OUT/gemm-torch.log" 2>&1
echo "torch rc=$?"
grep -v Warning "$OUT/gemm-torch.log" | tail -30
