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

    // Activation (docs/spec.md §2).
    Act act = Act::Identity;
    GateLayout gate = GateLayout::None;
    GateOrder gate_order = GateOrder::GateFirst;
    int64_t gate_block = 32;
    Rounding rounding = Rounding::Fp32;
    SwigluParams swiglu;
    const float* row_prob = nullptr;

    // Quantization (docs/spec.md §3).
    Scheme scheme = Scheme::PerGroup;
    int64_t group = 128;  // elements per scale along a row (the row width for per-token and per-tensor)
    QuantParams quant;
    const float* static_scale = nullptr;
    const float* scale_ub = nullptr;
    const float* global_amax = nullptr;  // NVFP4 (docs/spec.md §3.3); NULL: the amax of the whole tensor's y
    ScaleGeometry scales;  // rowwise scale buffer

    // Scale blocks of the rowwise buffer (FQ_SCALE_INFO_BATCH): E for MASKED (one `scales` geometry per
    // expert, `scales.bytes` apart) and for per-tensor schemes under either MoE layout (one scale per
    // expert); 1 otherwise.
    int64_t scale_batch = 1;

    // MoE (docs/spec.md §5, docs/moe.md). Device arrays, clamped where they are read (common/moe.h).
    MoeLayout moe = MoeLayout::None;
    int32_t num_experts = 0;              // E (0 without a MoE layout)
    int64_t expert_rows = 0;              // MASKED: max_m = rows / E
    const int32_t* moe_offsets = nullptr; // CONTIGUOUS: E+1 row offsets
    const int32_t* moe_counts = nullptr;  // MASKED: E counts; CONTIGUOUS (optional): valid rows per slot

    // Outputs (FQ_QUANT_DESC_OUTPUTS). The columnwise output quantizes blocks of `col_block` rows of one
    // column; its logical scales are S_col[h, b] (column h, row block b) in `col_scales`, the rowwise
    // formulas with the roles of rows and columns swapped (docs/spec.md §4).
    int32_t outputs = kOutputRowwise;
    int64_t col_block = 32;
    bool col_transpose = false;          // columnwise data [H, M] (ld M) instead of [M, H] (ld out_ld)
    void* col_output = nullptr;
    void* col_scales_ptr = nullptr;
    ScaleGeometry col_scales;            // one block; `scale_batch` blocks as for the rowwise buffer

    // Execution facts (not part of the descriptor): whether input/output pointers and row strides allow
    // 16-byte vector access, and whether the rowwise scale pointer is 16-byte aligned. Queries without
    // pointers assume they are.
    bool vector_aligned = true;
    bool scales_aligned = true;

    bool gated() const { return gate != GateLayout::None; }
    int64_t groups_per_row() const { return (cols + group - 1) / group; }
    bool rowwise() const { return (outputs & kOutputRowwise) != 0; }
    bool columnwise() const { return (outputs & kOutputColumnwise) != 0; }
    int64_t experts() const { return moe == MoeLayout::None ? 1 : num_experts; }
    // FP32 intermediates: what the CUDA plain activation body requires (tensor_amax's, the plain kernels').
    bool fp32_intermediates() const { return rounding == Rounding::Fp32; }
    // FP32 intermediates and no MoE layout: what the CUDA plain quantize kernels require.
    bool plain() const { return fp32_intermediates() && moe == MoeLayout::None; }
};

}  // namespace fq
