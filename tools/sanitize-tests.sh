#!/usr/bin/env bash
# The host tests under AddressSanitizer + UndefinedBehaviorSanitizer (FQ_SANITIZE=ON: library and tests
# instrumented, every UB report fatal, LeakSanitizer on), then the Python and Rust binding tests against
# that instrumented library. Host backend only (build-asan/, FQ_ENABLE_CUDA=OFF). CI runs this from
# tools/build-and-test.sh.
#
# Python and Rust are not instrumented, so the ASan runtime is preloaded into their processes (it must
# come first). CPython frees nothing at exit by design, so leak detection is off for the Python run only.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${FQ_ASAN_BUILD:-build-asan}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFQ_ENABLE_CUDA=OFF -DFQ_SANITIZE=ON -DFQ_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$build" && ctest --output-on-failure -j"$(nproc)")

asan=$(g++ -print-file-name=libasan.so)
lib=$(readlink -f "$build/libfusedquant.so")
python=$(python3 -c 'import sys; print(sys.executable)')  # the interpreter itself, not a shim script
echo "sanitize: Python tests against $lib"
# Not the torch operators' file: a C++ exception thrown inside PyTorch (its argument parser's error path, which
# opcheck takes) trips ASan's own __cxa_throw interceptor (CHECK failed in the sanitizer runtime, not in fq); the
# calls those operators make into the library are the ones the other files run here.
PYTHONPATH=bindings/python FUSEDQUANT_LIBRARY=$lib LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0 \
  "$python" -m pytest -q bindings/python/tests --ignore=bindings/python/tests/test_torch_ops.py

echo "sanitize: Rust tests against $lib"
(cd bindings/rust && FUSEDQUANT_LIB_DIR="$(dirname "$lib")" CARGO_TARGET_DIR="$PWD/../../$build/cargo" \
  CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="env LD_PRELOAD=$asan" cargo test --offline -q)
echo "sanitize: all passed"
