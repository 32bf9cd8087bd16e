#!/usr/bin/env bash
# Session 34, call 2: the row-pair kernel's candidates. po: the warpgroups take turns issuing their MMAs
# (-DFQ_LAB_PAIR_ORDER); e2: the epilogue's two rows side by side; po2: both. Checks of po2 (SiLU, SwiGLU-OAI),
# sanitizers on its row-pair runs, A/B against s34 (HEAD), and po2's timeline.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
for act in silu swiglu; do
  LAB_ACT=$act LAB_TIMEOUT=30 tools/lab/gemm_lab_checks.sh gemm_lab_po2 > $R/checks-po2-$act.txt 2>&1
  echo "po2 $act: $(grep -c ^PASS $R/checks-po2-$act.txt) PASS of $(wc -l < $R/checks-po2-$act.txt)"
  grep -v ^PASS $R/checks-po2-$act.txt | cut -c1-300
done
for tool in synccheck memcheck racecheck; do
  { LAB_SMALL=1 timeout 120 compute-sanitizer --tool $tool build-lab/gemm_lab_po2 512 1024 2048 1 0 split 0
    LAB_SPLIT=2 LAB_GROUP=32 timeout 120 compute-sanitizer --tool $tool build-lab/gemm_lab_po2 100 640 1024 1 0 inter 0; } > $R/san-po2-$tool.txt 2>&1
  echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-po2-$tool.txt | tr '\n' ' ')"
done
LAB_ROUNDS=3 tools/lab/gemm_lab_ab.sh "gemm_lab_s34 gemm_lab_po gemm_lab_e2 gemm_lab_po2" "512 4096 7168 1" "384 4096 7168 1" "256 4096 7168 1" "128 4096 7168 1" > $R/ab.txt 2>&1
cat $R/ab.txt | sed 's/ us (min/ (min/'
export LAB_BENCH_DATA=1 LAB_FLUSH=1 LAB_SKIP_CHECK=1 LAB_NO_C=1 LAB_TRACE=1
for M in 512 384; do
  echo "== po2tr $M"; timeout 40 build-lab/gemm_lab_po2tr $M 4096 7168 1 20 2>&1 | grep -E "median|trace"
done | tee $R/trace-po2.txt
