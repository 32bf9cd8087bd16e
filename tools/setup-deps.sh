#!/usr/bin/env bash
# Installs what the build and the tests need, from Debian's packages and PyPI only (CI runs this too).
#   tools/setup-deps.sh           everything: the build, the tests, the bindings and the checks
#   tools/setup-deps.sh --build   the library's build alone (tools/build-and-run.sh: a first build in minutes)
set -euo pipefail
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO=sudo
pkgs=(cmake g++ pkg-config libfmt-dev doctest-dev libdlpack-dev libcli11-dev nlohmann-json3-dev)
if [[ ${1:-} != --build ]]; then
  pkgs+=(librust-bindgen-dev librust-half-dev clang libclang-dev
         libclang-rt-dev abigail-tools)  # libFuzzer runtime (tools/fuzz.sh), abidw/abidiff (tools/check-abi.sh)
fi
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${missing[@]}"
fi
[[ ${1:-} == --build ]] && exit 0
command -v cargo >/dev/null || $SUDO apt-get install -y -qq cargo rustc
python3 -m pip install -q cffi numpy ml_dtypes pytest setuptools safetensors transformers
