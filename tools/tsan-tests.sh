#!/usr/bin/env bash
# The thread tests (tests/test_threads.cpp, CTest label "threads") under ThreadSanitizer: the host library
# and that one test executable, nothing else (FQ_TSAN=ON, build-tsan/), so CI's time holds. Every report
# fails the run. CI runs this from tools/build-and-test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FQ_TSAN_BUILD:-build-tsan}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFQ_ENABLE_CUDA=OFF -DFQ_TSAN=ON -DFQ_BUILD_TOOLS=OFF \
  -DFQ_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fq_thread_tests
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
(cd "$build" && ctest --output-on-failure -L threads)
echo "tsan: all passed"
