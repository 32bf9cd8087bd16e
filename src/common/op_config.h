// OpConfig: one fully validated, defaults-resolved description of a fused activation + quantization
// call. src/api builds it from the descriptor and layouts; everything below the API reads only this.
#pragma once

#include <cstdint>

#include "activation.h"
#include "gate_layout.h"
#include "quantize.h"
#include "scale_layout.h"
#include "types.h"

namespace fq {

struct OpConfig {
    // Shape: input [rows, in_cols] with row stride in_ld -> output [rows, cols] with row stride out_ld.
    InType in_type = InType::Bf16;
    int64_t rows = 0, in_cols = 0, in_ld = 0, cols = 0, out_ld = 0;

    // Activation (SPEC §2).
    Act act = Act::Identity;
    GateLayout gate = GateLayout::None;
    GateOrder gate_order = GateOrder::GateFirst;
    int64_t gate_block = 32;
    Rounding rounding = Rounding::Fp32;
    SwigluParams swiglu;
    const float* row_prob = nullptr;

    // Quantization (SPEC §3).
    Scheme scheme = Scheme::PerGroup;
    int64_t group = 128;  // elements per scale along a row (the row width for per-token and per-tensor)
    QuantParams quant;
    const float* static_scale = nullptr;
    const float* scale_ub = nullptr;
    const float* global_amax = nullptr;  // NVFP4 (SPEC §3.3); NULL: the amax of the whole tensor's y
    ScaleGeometry scales;  // rowwise scale buffer

    // MoE and columnwise outputs (SPEC §5; executed by later versions).
    MoeLayout moe = MoeLayout::None;
    int32_t num_experts = 0;
    int32_t outputs = kOutputRowwise;

    // Execution facts (not part of the descriptor): whether input/output pointers and row strides allow
    // 16-byte vector access. Queries without pointers assume they do.
    bool vector_aligned = true;

    bool gated() const { return gate != GateLayout::None; }
    int64_t groups_per_row() const { return (cols + group - 1) / group; }
};

}  // namespace fq
