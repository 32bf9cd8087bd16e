#!/usr/bin/env bash
# The README's first command: build the library for this machine and run the main job (examples/quickstart.c).
# With a usable GPU (nvidia-smi answers and nvcc is installed) the CUDA kernels are compiled for that GPU's
# architecture alone; otherwise the library is built for the host reference backend only (no nvcc run), a few
# minutes on 2 cores. FQ_CUDA_ARCHS=... builds the kernels for those architectures instead. The test command,
# tools/build-and-test.sh, is the one that builds every kernel for several architectures; this one builds in
# build-run/, so that its choice never lands in the test command's build/ cache.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup-deps.sh --build

# The present GPU's architecture as FQ_CUDA_ARCHS spells it (8.9 -> 89; Hopper and Blackwell datacenter parts
# with their arch-specific features: 9.0 -> 90a, 10.0 -> 100a); nothing without a usable GPU (the kernels need
# sm_80 or newer) or without nvcc.
gpu_arch() {
  command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]] || return 0
  local cap
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' ') || return 0
  [[ $cap =~ ^([0-9]+)\.([0-9])$ ]] || return 0
  local arch=${BASH_REMATCH[1]}${BASH_REMATCH[2]}
  ((arch >= 80)) || return 0
  case $arch in 90 | 100) arch+=a ;; esac
  echo "$arch"
}

archs=${FQ_CUDA_ARCHS:-$(gpu_arch)}
if [[ -n $archs ]]; then
  echo "build-and-run: CUDA kernels for ${archs}"
  cuda=(-DFQ_ENABLE_CUDA=ON "-DFQ_CUDA_ARCHS=${archs}")
else
  echo "build-and-run: no usable GPU (or no nvcc): the host backend only"
  cuda=(-DFQ_ENABLE_CUDA=OFF)
fi
cmake -S . -B build-run -DCMAKE_BUILD_TYPE=Release "${cuda[@]}"
cmake --build build-run -j"$(nproc)" --target fq_quickstart
./build-run/fq_quickstart
