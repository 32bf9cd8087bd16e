#!/usr/bin/env bash
# Builds tools/lab/gemm_lab (the grouped GEMM kernel lab) into build-lab/ for sm_90a: the kernel, the host
# reference it is checked against, the dispatcher's refusals and the error plumbing, without the rest of the library.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build-lab
nvcc -O3 -DNDEBUG -DFQ_WITH_CUDA=1 -DFQ_GEMM_LAB=1 -DFMT_HEADER_ONLY=1 --expt-relaxed-constexpr --fmad=false -Xcompiler=-ffp-contract=off \
  -std=c++17 -I include -I src -gencode arch=compute_90a,code=sm_90a -Xptxas -v \
  tools/lab/gemm_lab.cu src/kernels/gemm/grouped_gemm_sm90.cu src/dispatch/grouped_gemm.cpp src/host/reference.cpp src/api/error.cpp src/common/types.cpp \
  ${LAB_FLAGS:-} -o build-lab/gemm_lab${LAB_SUFFIX:-} 2>&1 | grep -E "error|registers|spill|wgmma|Performance|warning" || true
ls -la build-lab/gemm_lab${LAB_SUFFIX:-}
