#!/usr/bin/env bash
# The README's first command: build the library and run the main job (examples/quickstart.c), on the
# GPU when one is usable and on the host reference backend otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "-DFQ_CUDA_ARCHS=${FQ_CUDA_ARCHS:-80;89;90a;100a}"
cmake --build build -j"$(nproc)" --target fq_quickstart
./build/fq_quickstart
