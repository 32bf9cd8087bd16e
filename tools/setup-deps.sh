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
# torch (>= 2.4: torch.library.custom_op, register_fake, opcheck) for the torch operators' tests
# (bindings/python/tests/test_torch_ops.py), which CI runs on the host backend with CPU tensors; the device runs
# their CUDA half. PyPI's x86_64 wheel is the CUDA build and pulls the nvidia-* / cuda-toolkit wheels (the
# CPU-only index download.pytorch.org is not reachable from CI); it imports and runs on CPU without a GPU.
# Measured 2026-11-27 on the 2-core CI machine: the 539 MB torch 2.15 wheel downloads in ~7 s, `pip install`
# with its dependencies takes 1 min 43 s and 5.4 GB of disk, `import torch` 3 s, the torch tests 12 s: about
# 2-3 minutes of CI's 90. Debian's python3-torch (1.13) is too old.
python3 -c "import torch, sys; sys.exit(not hasattr(torch.library, 'custom_op'))" 2>/dev/null || \
  python3 -m pip install -q "torch>=2.4"
