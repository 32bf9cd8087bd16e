#!/usr/bin/env bash
# Session 32, call 11: the segment walk moved to common/moe.h (host-tested); the segments kernels' loops are
# unchanged (sass_loops.py), the walk outside them shorter. Lab checks of that build, synccheck of a segments run,
# and its time against the measured build (gemm_lab_seg3).
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
LAB_TIMEOUT=90 tools/lab/gemm_lab_checks.sh gemm_lab_seg4 > "$OUT/checks-seg4-silu.txt" 2>&1
echo "checks (SiLU): $(grep -c ^PASS "$OUT/checks-seg4-silu.txt") PASS of $(wc -l < "$OUT/checks-seg4-silu.txt")"
grep -v ^PASS "$OUT/checks-seg4-silu.txt" | cut -c1-300
LAB_SMALL=1 timeout 120 compute-sanitizer --tool synccheck build-lab/gemm_lab_seg4 2000 1024 1024 9 1 split 0 2>&1 | grep -E "ERROR SUMMARY|PASS|[1-9][0-9]* bad|[1-9][0-9]* differ" | tee "$OUT/san-seg4.txt"
LAB_ROUNDS=2 tools/lab/gemm_lab_ab.sh "gemm_lab_seg3 gemm_lab_seg4" "4096 4096 7168 8" "16384 4096 7168 32" "2048 4096 7168 1" > "$OUT/ab-seg4.txt" 2>&1
cat "$OUT/ab-seg4.txt"
