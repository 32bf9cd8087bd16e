#!/usr/bin/env bash
# Builds the libFuzzer target tests/fuzz/fuzz_api (clang++, ASan + UBSan, host backend) and runs it:
# first every file of the repository's corpus once (the seeds and the kept crash reproducers: a regression
# test), then fuzzing for SECONDS (default 60) starting from that corpus.
#
#   tools/fuzz.sh [SECONDS]          FQ_FUZZ_BUILD=build-fuzz  FQ_FUZZ_JOBS=1  FQ_FUZZ_ARGS="extra libFuzzer flags"
#
# New interesting inputs go to $FQ_FUZZ_BUILD/corpus (not the repository); a crash is written to
# $FQ_FUZZ_BUILD/artifacts/ and fails the script. To keep a fixed crash as a regression case, copy its file
# to tests/fuzz/corpus/crash-<what>.bin (tests/fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-${FQ_FUZZ_SECONDS:-60}}
build=${FQ_FUZZ_BUILD:-build-fuzz}
jobs=${FQ_FUZZ_JOBS:-1}

cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFQ_ENABLE_CUDA=OFF -DFQ_BUILD_FUZZERS=ON -DFQ_BUILD_TESTS=OFF -DFQ_BUILD_TOOLS=OFF -DFQ_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" --target fuzz_api -j"$(nproc)"
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
