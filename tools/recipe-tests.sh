#!/usr/bin/env bash
# CONTRIBUTING.md's recipe, proven: the host library built with FQ_TEST_EXTENSIONS=ON (the test-only
# activation and scale layout of src/common/enum_lists.h, added by that recipe alone) and the tests that run
# every list entry against the host reference (tests/test_enum_lists.cpp). Host only, build-ext/; CI runs
# this from tools/build-and-test.sh. (The rest of the suite expects the public values only: the bad-input
# tests use one past the header's last value as an invalid one, which this build accepts.)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FQ_EXT_BUILD:-build-ext}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFQ_ENABLE_CUDA=OFF -DFQ_TEST_EXTENSIONS=ON -DFQ_BUILD_TOOLS=OFF \
  -DFQ_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fq_tests
"$build/tests/fq_tests" --source-file='*test_enum_lists.cpp'
echo "recipe: all passed"
