// The host reference of the grouped FP8 GEMM with its fused epilogue (fqGroupedGemm, docs/gemm.md): the oracle
// the sm_90a kernel is tested against, and the host backend's implementation.
#pragma once

#include "../common/grouped_gemm.h"

namespace fq::host {

// Runs `c` (validated by src/api) on host memory: C in fp64, rounded to fp32 and then bf16; D and the quantized
// outputs from that bf16 C by the same code fqQuantize runs. Rows no group owns are neither read nor written.
void grouped_gemm(const GroupedGemmConfig& c);

}  // namespace fq::host
