#!/usr/bin/env bash
# Session 34, call 6: the library benchmark on HEAD (fq_bench_gemm: fused vs cuBLASLt per group + fqQuantize).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/device.txt" 2>&1
timeout 280 ./build-gpu/tools/fq_bench_gemm --json "$OUT/gemm-bench.json" > "$OUT/gemm-bench.log" 2>&1
echo "bench rc=$?"
cat "$OUT/gemm-bench.log"
