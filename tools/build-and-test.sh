#!/usr/bin/env bash
# The README's test command and what CI runs: build everything (CUDA kernels included where nvcc is
# present; FQ_CUDA_ARCHS overrides the architectures), then run the C/C++ tests (CTest: doctest suites,
# the example, GPU tests that report "skipped" without a GPU), the Python tests (against the source tree,
# then against the wheel packed from this same build and installed into a fresh venv: tools/test-wheel.sh),
# the Rust tests and packages; then the reliability checks on the host: all of that again under ASan + UBSan
# (tools/sanitize-tests.sh), the thread tests under ThreadSanitizer (tools/tsan-tests.sh), the test-only list
# entries of CONTRIBUTING.md (tools/recipe-tests.sh), the API fuzzer for FQ_FUZZ_SECONDS (default 120) with
# its coverage gate (tools/fuzz.sh) and the ABI check of functions and values (tools/check-abi.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup-deps.sh
archs=${FQ_CUDA_ARCHS:-80;89;90a;100a}
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "-DFQ_CUDA_ARCHS=${archs}"
cmake --build build -j"$(nproc)"
(cd build && ctest --output-on-failure -j"$(nproc)")
PYTHONPATH=bindings/python FUSEDQUANT_LIBRARY=$PWD/build/libfusedquant.so python3 -m pytest -q bindings/python/tests
# The torch operators again with their Python kernels alone (the C++ kernel, where built, took the calls above).
FUSEDQUANT_TORCH_KERNEL=0 PYTHONPATH=bindings/python FUSEDQUANT_LIBRARY=$PWD/build/libfusedquant.so \
  python3 -m pytest -q bindings/python/tests/test_torch_ops.py
tools/test-wheel.sh build
# Rust: the tests (checked-in bindings), the checked-in bindings against the header (bindgen regenerates them),
# and both crates packaged and verified as crates.io would get them (the patch lets the safe crate's package
# resolve fusedquant-sys, which the offline registry does not hold).
(cd bindings/rust && cargo test --offline && cargo test --offline -p fusedquant-sys --features bindgen &&
  cargo package --workspace --offline --allow-dirty --registry crates-io \
    --config 'patch.crates-io.fusedquant-sys.path="fusedquant-sys"')
step() { local t=$SECONDS; "$@"; echo "== $1: $((SECONDS - t)) s"; }
step tools/sanitize-tests.sh
step tools/tsan-tests.sh
step tools/recipe-tests.sh
step tools/fuzz.sh "${FQ_FUZZ_SECONDS:-120}"
step tools/check-abi.sh
echo "all tests passed"
