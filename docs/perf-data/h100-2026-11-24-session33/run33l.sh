#!/usr/bin/env bash
# Session 33, call 12: lab stream-K for the tiles kernel's last partial wave (gemm_lab_sk, -DFQ_LAB_STREAM_K):
# checks on shapes that take it, then an A/B against this tree without the flag (gemm_lab_s33b) and with it off.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
chk() { echo "$* :: $(timeout 120 env "$@" 2>&1 | grep -E 'stream-K|bad|differ|refused|CUDA' | tr '\n' ' ' | cut -c1-400)"; }
{
chk LAB_SMALL=1 build-lab/gemm_lab_sk 2048 4096 7168 1 1 split 0
chk build-lab/gemm_lab_sk 5000 4096 1024 1 1 split 1
chk LAB_UP_FIRST=1 build-lab/gemm_lab_sk 5000 4096 1024 1 1 inter 0
chk LAB_GROUP=64 build-lab/gemm_lab_sk 9000 2048 2048 1 1 bi32 1
chk LAB_ACT=swiglu build-lab/gemm_lab_sk 4096 4096 7168 1 1 split 0
chk LAB_NO_C=1 build-lab/gemm_lab_sk 16384 4096 7168 1 1 split 0
} 2>&1 | tee "$OUT/checks-sk.txt"
timeout 120 compute-sanitizer --tool memcheck build-lab/gemm_lab_sk 5000 4096 1024 1 1 split 0 2>&1 | grep -E "ERROR SUMMARY|bad|differ" | tee "$OUT/san-sk.txt"
LAB_ROUNDS=3 tools/lab/gemm_lab_ab.sh "gemm_lab_s33b gemm_lab_sk gemm_lab_sk:LAB_STREAM_K=0" "2048 4096 7168 1" "4096 4096 7168 1" \
  "8192 4096 7168 1" "16384 4096 7168 1" > "$OUT/ab-sk.txt" 2>&1
cat "$OUT/ab-sk.txt"
