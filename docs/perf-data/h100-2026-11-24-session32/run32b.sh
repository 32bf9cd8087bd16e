#!/usr/bin/env bash
# Session 32, call 2: the library benchmark (fused vs cuBLASLt per group + fqQuantize), on an idle GPU first; then
# the lab checks (verdict first) and compute-sanitizer on the row-pair kernel in the lab.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/device.txt" 2>&1
timeout 260 ./build-gpu/tools/fq_bench_gemm --json "$OUT/gemm-bench.json" --csv "$OUT/gemm-bench.csv" > "$OUT/gemm-bench.log" 2>&1
echo "bench rc=$?"
cat "$OUT/gemm-bench.log"
LAB_TIMEOUT=90 tools/lab/gemm_lab_checks.sh gemm_lab_s32 > "$OUT/checks-s32-silu.txt" 2>&1
echo "checks (SiLU): $(grep -c ^PASS "$OUT/checks-s32-silu.txt") PASS of $(wc -l < "$OUT/checks-s32-silu.txt")"
san() { local tool=$1; shift; echo "== $tool $*"; timeout 100 compute-sanitizer --tool "$tool" "$@" 2>&1 | grep -E "ERROR SUMMARY|PASS|[1-9][0-9]* bad|[1-9][0-9]* differ|row pairs"; }
for tool in memcheck synccheck; do
  san $tool env LAB_SMALL=1 LAB_SPLIT=2 build-lab/gemm_lab_s32 256 1024 2048 1 1 inter 0
  san $tool env LAB_ROW_PAIR=1 LAB_SPLIT=3 build-lab/gemm_lab_s32 300 1024 2048 1 1 bi32 0
  san $tool env LAB_SPLIT=2 LAB_GROUP=64 LAB_UP_FIRST=1 LAB_ACT=swiglu build-lab/gemm_lab_s32 200 768 1024 1 1 split 0
done > "$OUT/san-row-pair.txt" 2>&1
cat "$OUT/san-row-pair.txt"
