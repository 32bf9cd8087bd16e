#!/usr/bin/env bash
# Session 31, call 1: the row-pair kernel in the lab: which launch each small shape takes, the bit-exact checks
# (SiLU, SwiGLU-OAI), sanitizers on two row-pair lines, and an A/B against HEAD and against its own split K.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > "$OUT/device.txt" 2>&1
echo "== launch choice"
for sh in "128 4096 7168 1" "256 4096 7168 1" "384 4096 7168 1" "512 4096 7168 1"; do
  echo "$sh: $(LAB_NO_C=1 LAB_SKIP_CHECK=1 LAB_BENCH_DATA=1 timeout 30 build-lab/gemm_lab_rp $sh 1 split 0 2>&1 | grep -E "launch" | sort -u | tr '\n' ' ')"
done | tee "$OUT/launch-choice.txt"
echo "== checks silu"
LAB_STOP=1 tools/lab/gemm_lab_checks.sh gemm_lab_rp > "$OUT/checks-rp-silu.txt" 2>&1
tail -6 "$OUT/checks-rp-silu.txt" | cut -c1-250; echo "PASS lines: $(grep -c PASS "$OUT/checks-rp-silu.txt")"
echo "== checks swiglu"
LAB_ACT=swiglu LAB_STOP=1 tools/lab/gemm_lab_checks.sh gemm_lab_rp > "$OUT/checks-rp-swiglu.txt" 2>&1
tail -3 "$OUT/checks-rp-swiglu.txt" | cut -c1-250; echo "PASS lines: $(grep -c PASS "$OUT/checks-rp-swiglu.txt")"
echo "== A/B"
LAB_ROUNDS=2 tools/lab/gemm_lab_ab.sh "gemm_lab_nb gemm_lab_rp gemm_lab_rp:LAB_ROW_PAIR=0 gemm_lab_rp:LAB_ROW_PAIR=1" \
  "128 4096 7168 1" "256 4096 7168 1" "384 4096 7168 1" "512 4096 7168 1" > "$OUT/ab-rp.txt" 2>&1
cat "$OUT/ab-rp.txt" | cut -c1-200
echo "== sanitizers"
for tool in memcheck synccheck; do
  LAB_SKIP_CHECK=1 LAB_NO_C=1 LAB_ROW_PAIR=1 LAB_SPLIT=3 timeout 120 compute-sanitizer --tool $tool build-lab/gemm_lab_rp 300 1024 2048 1 1 bi32 0 > "$OUT/san-rp-$tool.txt" 2>&1
  tail -2 "$OUT/san-rp-$tool.txt"
done
