#!/usr/bin/env bash
# Builds the libFuzzer target tests/fuzz/fuzz_api (clang++, ASan + UBSan, host backend) and runs it:
#   1. every file of the repository's corpus once (the seeds and the kept crash reproducers: a regression
#      test);
#   2. fuzzing for SECONDS (default 60) starting from that corpus;
#   3. coverage: a second build of the target with clang's source-based coverage (no sanitizers) replays the
#      corpus and what step 2 found, prints llvm-cov's report per source file of src/, and fails when a
#      function of the quantize, repack or GEMM paths never ran (tools/fuzz_coverage_gate.py: every function
#      of src/host/*.cpp and every fq* entry point of src/api/*.cpp).
#
#   tools/fuzz.sh [SECONDS]    FQ_FUZZ_BUILD=build-fuzz  FQ_FUZZ_COV_BUILD=build-fuzz-cov  FQ_FUZZ_JOBS=1
#                              FQ_FUZZ_ARGS="extra libFuzzer flags"  FQ_FUZZ_COVERAGE=0 (skip step 3)
#
# New interesting inputs go to $FQ_FUZZ_BUILD/corpus (not the repository); a crash is written to
# $FQ_FUZZ_BUILD/artifacts/ and fails the script. To keep a fixed crash as a regression case, copy its file
# to tests/fuzz/corpus/crash-<what>.bin (tests/fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-${FQ_FUZZ_SECONDS:-60}}
build=${FQ_FUZZ_BUILD:-build-fuzz}
jobs=${FQ_FUZZ_JOBS:-1}

configure() {  # DIR, extra cmake flags
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFQ_ENABLE_CUDA=OFF -DFQ_BUILD_FUZZERS=ON -DFQ_BUILD_TESTS=OFF -DFQ_BUILD_TOOLS=OFF -DFQ_BUILD_EXAMPLES=OFF "$@" >/dev/null
  cmake --build "$dir" --target fuzz_api -j"$(nproc)"
}
configure "$build" -DFQ_FUZZ_COVERAGE=OFF
fuzzer="$build/tests/fuzz/fuzz_api"

# 1. Regression: every corpus file runs clean.
mapfile -t seeds < <(find tests/fuzz/corpus -type f | sort)
echo "fuzz: replaying ${#seeds[@]} corpus files"
if ! "$fuzzer" -runs=0 "${seeds[@]}" >"$build/replay.log" 2>&1; then
  tail -n 40 "$build/replay.log"
  echo "fuzz: FAILED on a corpus file"
  exit 1
fi
# 2. Fuzzing, bounded in time. Inputs up to 4 KiB; one input may take at most 20 s.
mkdir -p "$build/corpus" "$build/artifacts"
parallel=()
((jobs > 1)) && parallel=(-fork="$jobs")
# shellcheck disable=SC2086
if ! "$fuzzer" -max_total_time="$seconds" -max_len=4096 -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
    "${parallel[@]}" -artifact_prefix="$build/artifacts/" ${FQ_FUZZ_ARGS:-} "$build/corpus" tests/fuzz/corpus \
    >"$build/fuzz.log" 2>&1; then
  grep -v -E '^(#[0-9]+.*(NEW|REDUCE|pulse)|[[:space:]]+NEW_FUNC)' "$build/fuzz.log" | tail -n 60
  echo "fuzz: FAILED (reproducer in $build/artifacts/)"
  exit 1
fi
grep -E '^(stat::|Done|#[0-9]+[[:space:]]+DONE)' "$build/fuzz.log" || true
echo "fuzz: no crash in ${seconds} s"
[[ ${FQ_FUZZ_COVERAGE:-1} == 0 ]] && exit 0

# 3. Coverage of the corpus and of this run's new inputs, per source file, and the gate. The LLVM tools of
# the clang that built the target (Debian: /usr/lib/llvm-<major>/bin).
cov=${FQ_FUZZ_COV_BUILD:-build-fuzz-cov}
llvm_bin=$(dirname "$(readlink -f "$(command -v clang)")")
profdata=$llvm_bin/llvm-profdata llvmcov=$llvm_bin/llvm-cov
[[ -x $profdata ]] || profdata=llvm-profdata
[[ -x $llvmcov ]] || llvmcov=llvm-cov
configure "$cov" -DFQ_FUZZ_COVERAGE=ON
rm -rf "$cov/profiles"
mkdir -p "$cov/profiles"
if ! LLVM_PROFILE_FILE="$cov/profiles/%p.profraw" "$cov/tests/fuzz/fuzz_api" -runs=0 tests/fuzz/corpus "$build/corpus" \
    >"$cov/replay.log" 2>&1; then
  tail -n 20 "$cov/replay.log"
  echo "fuzz: FAILED: the coverage build failed replaying the corpus"
  exit 1
fi
"$profdata" merge -sparse "$cov"/profiles/*.profraw -o "$cov/fuzz.profdata"
echo "fuzz: coverage of $(grep -oE '^Done [0-9]+ runs' "$cov/replay.log" | grep -oE '[0-9]+') inputs (tests/fuzz/corpus + $build/corpus), per file of src/:"
"$llvmcov" report "$cov/tests/fuzz/fuzz_api" -instr-profile="$cov/fuzz.profdata" src
"$llvmcov" export -format=text "$cov/tests/fuzz/fuzz_api" -instr-profile="$cov/fuzz.profdata" src/host src/api \
  >"$cov/coverage.json"
python3 tools/fuzz_coverage_gate.py "$cov/coverage.json"
