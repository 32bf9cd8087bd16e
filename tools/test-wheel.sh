#!/usr/bin/env bash
# The Python package as a user gets it, from a CMake build tree that is already built (CI: build/, after its
# tests): packs that tree's library and generated cdef into a wheel (scikit-build-core with
# FQ_PYTHON_PREBUILT: nothing is compiled again), installs the wheel with its dependencies from PyPI into a
# fresh venv, and runs the Python suite against the installed package from outside the source tree, with no
# FUSEDQUANT_LIBRARY. The wheel is left in BUILD_DIR/wheel/.
#   tools/test-wheel.sh [BUILD_DIR]     (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
build=$(realpath "${1:-build}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rm -rf "$build/wheel"
python3 -m pip wheel -q --no-deps -w "$build/wheel" ./bindings/python -C "cmake.define.FQ_PYTHON_PREBUILT=$build"
wheel=$(ls "$build"/wheel/fusedquant-*.whl)
echo "wheel: $wheel"
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q "$wheel[test]"
cd "$tmp"
unset FUSEDQUANT_LIBRARY FUSEDQUANT_HEADER
"$tmp/venv/bin/python" -c 'import fusedquant as fq; print("installed:", fq.__file__, "library:", fq.library_path)'
"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/bindings/python/tests"
