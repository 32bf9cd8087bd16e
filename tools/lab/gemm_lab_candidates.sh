#!/usr/bin/env bash
# One device call for kernel candidates built ahead (tools/lab/gemm_lab.sh with LAB_FLAGS or a patch applied,
# carried in build-lab/), measured as sessions 28-29 measured each candidate:
#  1. checks: each candidate's bit-exact lab checks (gemm_lab_checks.sh) with SiLU and with SwiGLU-OAI, then the
#     lab synccheck of a columnwise run and of a rowwise-only one (the lean epilogue); a candidate that fails or
#     hangs any of them stops there and is not timed;
#  2. ab: the base and the passing candidates as fq_bench_gemm measures (gemm_lab_ab.sh: its data, an L2 flush,
#     the fused call, median of 20, the binaries alternating; LAB_ROUNDS rounds, default 2);
#  3. modes (only when LAB_PARTS names it): what the base's fused call is made of on the benchmark's data
#     (gemm_lab_modes.sh) for each dense shape, and the SM clock and power per mode at dense 16384.
# Results under $OUT: checks-<bin>-<act>.txt, synccheck-<bin>-<run>.txt, ab.txt, modes.txt. LAB_PARTS ("checks
# ab" by default) runs fewer (ab alone times every candidate named, checked or not).
#   tools/lab/gemm_lab_candidates.sh gemm_lab_base "gemm_lab_x gemm_lab_y" ["M N K E" ...]
# (Candidates are binaries; a binary's run-time options, "gemm_lab_x:LAB_SPLIT=3", are for gemm_lab_ab.sh alone.)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
command -v compute-sanitizer >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
base=$1 candidates=$2
shift 2
shapes=("$@")
[[ ${#shapes[@]} -gt 0 ]] || shapes=("2048 4096 7168 1" "4096 4096 7168 1" "8192 4096 7168 1" "16384 4096 7168 1"
                                     "4096 4096 7168 8" "512 4096 7168 1" "128 4096 7168 1")
parts=${LAB_PARTS:-checks ab}

# A candidate's checks and synccheck runs, stopping at the first that fails; true if all pass.
check() {
  local b=$1 act run log
  for act in silu swiglu; do
    log=$OUT/checks-$b-$act.txt
    LAB_ACT=$act LAB_STOP=1 LAB_TIMEOUT=30 tools/lab/gemm_lab_checks.sh "$b" >"$log" 2>&1
    local rc=$?
    echo "$b, $act: $(grep -c PASS "$log") PASS of $(wc -l <"$log") lines"
    ((rc == 0)) || return 1
  done
  for run in columnwise lean; do  # gemm_lab M N K E reps gate columnwise; LAB_SMALL keeps the lean path's range
    log=$OUT/synccheck-$b-$run.txt
    if [[ $run == columnwise ]]; then
      LAB_SKIP_CHECK=1 timeout 300 compute-sanitizer --tool synccheck "build-lab/$b" 2000 1024 1024 3 0 split 1 >"$log" 2>&1
    else  # checks on: the run with C, then again without it (the lean path)
      LAB_SMALL=1 timeout 300 compute-sanitizer --tool synccheck "build-lab/$b" 2000 1024 1024 3 0 split 0 >"$log" 2>&1
    fi
    echo "$b synccheck, $run: $(grep -E 'ERROR SUMMARY' "$log")"
    grep -q "ERROR SUMMARY: 0 errors" "$log" || return 1
  done
}

timed=$base
for b in $candidates; do
  if [[ $parts != *checks* ]] || check "$b"; then timed="$timed $b"; else echo "$b: not timed"; fi
done
if [[ $parts == *ab* ]]; then
  LAB_ROUNDS=${LAB_ROUNDS:-2} tools/lab/gemm_lab_ab.sh "$timed" "${shapes[@]}" >"$OUT/ab.txt" 2>&1
  # one line per launch: "round r, M N K E, bin: [S=split] median us"
  sed -E 's/split K over ([0-9]+) /S=\1 /; s/: (S=[0-9]+ )?median ([0-9.]+) us.*/: \1\2/' "$OUT/ab.txt"
fi
if [[ $parts == *modes* ]]; then
  {
    for shape in "${shapes[@]}"; do  # dense shapes (E = 1)
      [[ $shape == *" 1" ]] && LAB_BENCH_DATA=1 LAB_FLUSH=1 tools/lab/gemm_lab_modes.sh "$base" "$shape"
    done
    LAB_BENCH_DATA=1 tools/lab/gemm_lab_clocks.sh "$base" "16384 4096 7168 1"
  } 2>&1 | tee "$OUT/modes.txt"
fi
