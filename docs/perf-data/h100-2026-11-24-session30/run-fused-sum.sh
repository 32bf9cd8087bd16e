#!/usr/bin/env bash
# Session 30, call 9: split K with the cluster sum taken row by row by the warps that finish the rows.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
R=$OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt
date
for act in silu swiglu; do
  LAB_ACT=$act LAB_TIMEOUT=30 tools/lab/gemm_lab_checks.sh gemm_lab_fs > $R/checks-fs-$act.txt 2>&1
  echo "checks $act: $(grep -c PASS $R/checks-fs-$act.txt) PASS of $(wc -l < $R/checks-fs-$act.txt)"
done
for tool in synccheck memcheck; do
  LAB_SPLIT=3 timeout 120 compute-sanitizer --tool $tool build-lab/gemm_lab_fs 300 1024 2048 1 1 bi32 1 > $R/san-fs-$tool-split3.txt 2>&1
  echo "$tool split 3 columnwise: $(grep -E 'ERROR SUMMARY' $R/san-fs-$tool-split3.txt) $(grep -c PASS $R/san-fs-$tool-split3.txt)"
  LAB_SMALL=1 LAB_SPLIT=2 timeout 120 compute-sanitizer --tool $tool build-lab/gemm_lab_fs 256 1024 2048 1 1 inter 0 > $R/san-fs-$tool-split2-lean.txt 2>&1
  echo "$tool split 2 lean: $(grep -E 'ERROR SUMMARY' $R/san-fs-$tool-split2-lean.txt) $(grep -c PASS $R/san-fs-$tool-split2-lean.txt)"
done
date
LAB_ROUNDS=3 tools/lab/gemm_lab_ab.sh "gemm_lab_nb gemm_lab_fs" "128 4096 7168 1" "256 4096 7168 1" "512 4096 7168 1" "2048 4096 7168 1" 2>&1 | sed -E 's/(split K over [0-9]+ )+/\1/' | tee $R/ab-fused-sum.txt
date
