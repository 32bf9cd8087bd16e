#!/usr/bin/env bash
# The kernel lab's correctness sweep for one lab binary ($1, in build-lab/): every gate pairing, both gate orders,
# rowwise groups 32/64/128, columnwise, split K 2, 3, 5, 6 and 8 (several units, a tile past m, short slices),
# MoE cut points, rowwise-only runs (the lean epilogue); each run checks C against the fp64 reference and the
# quantized bytes against the host quantization of the kernel's own C; the row-pair kernel (rowwise codes alone
# under split K); a shape the library refuses. 26 lines, each PASS (LAB_STOP=1: stops at the first that is not, exit 1).
#   tools/lab/gemm_lab_checks.sh gemm_lab_x   (on the device, build-lab carried)
v=build-lab/$1; L="timeout ${LAB_TIMEOUT:-20}"
# expect WORD CMD...: the run's check lines, PASS when they hold WORD; the verdict first (a log cut to a width keeps
# it); LAB_STOP=1: stop at the first line without PASS (exit 1)
expect() {
  local want=$1 out verdict=FAIL; shift
  out=$($L "$@" 2>&1 | grep -E "bad|differ|FAIL|PASS|^refused" | tr '\n' ' ')
  [[ $out == *"$want"* ]] && verdict=PASS
  echo "$verdict $* :: $out"
  if [[ -n ${LAB_STOP:-} && $verdict != PASS ]]; then exit 1; fi
}
r() { expect PASS "$@"; }
refused() { expect refused "$@"; }  # a shape fqGroupedGemm refuses: the lab refuses it too, before any launch
r $v 1000 512 1024 3 1 split 1
r $v 1000 1024 1280 4 1 bi32 1
r env LAB_CLUSTER=1 $v 700 1024 2048 5 1 inter 1
r $v 300 768 640 1 1 bi64 0
r env LAB_UP_FIRST=1 $v 1000 1024 1024 3 1 split 1
r env LAB_UP_FIRST=1 $v 1000 1024 1024 3 1 inter 0
r env LAB_UP_FIRST=1 LAB_GROUP=64 $v 900 1024 1024 4 1 bi32 1
r env LAB_GROUP=32 $v 900 512 768 2 1 inter 0
r env LAB_GROUP=64 $v 2000 512 384 9 1 split 1
r env LAB_SMALL=1 $v 129 4096 512 1 1 split 1
r env LAB_SPLIT=3 $v 300 1024 2048 1 1 split 1
r env LAB_SPLIT=5 LAB_UP_FIRST=1 LAB_GROUP=64 $v 200 768 2048 1 1 inter 1
r env LAB_SPLIT=2 $v 512 1024 2048 1 1 split 1  # four units of two CTAs
r env LAB_SPLIT=3 $v 300 1024 2048 1 1 bi32 1  # block pairing; the last unit's tile past m
r env LAB_SPLIT=8 $v 200 1024 2048 1 1 split 1  # two K blocks a CTA: fewer than the stages
r env LAB_SPLIT=6 $v 128 1024 7168 1 1 split 1  # K of the benchmark, split 6: the stage ring wraps
r env LAB_SPLIT=2 $v 128 1024 7168 1 1 inter 1  # ... split 2: 28 K blocks a CTA, four stages
r env LAB_SMALL=1 $v 1000 1024 1024 3 1 split 0  # rowwise only, fast-range data: the lean epilogue (again without C)
r env LAB_SMALL=1 LAB_GROUP=64 $v 2000 768 1024 1 1 bi32 0  # ... one group, 64-wide groups
r env LAB_SMALL=1 LAB_SPLIT=2 $v 256 1024 2048 1 1 inter 0  # ... split K
r $v 512 4096 7168 1 1 split 0  # the benchmark's dense 512 without C: row pairs, C as split K over 2
r env LAB_ROW_PAIR=1 LAB_SPLIT=3 $v 300 1024 2048 1 1 bi32 0  # ... C as split K over 3; the last pair's rows cut
r env LAB_SPLIT=2 LAB_GROUP=64 LAB_UP_FIRST=1 $v 200 768 1024 1 1 split 0  # ... 64-wide groups, up first
r env LAB_SPLIT=2 LAB_GROUP=32 $v 100 640 1024 1 1 inter 0  # ... 32-wide groups, a dead last tile (320 outputs)
r env LAB_ROW_PAIR=1 LAB_SPLIT=6 LAB_SMALL=1 $v 128 1024 7168 1 1 split 0  # ... C as split K over 6
refused env LAB_SPLIT=2 LAB_GROUP=32 $v 100 832 1024 1 1 inter 0  # H = 416, not a multiple of 64 (a C tile half past N)
