// GroupedGemmConfig: one validated grouped FP8 GEMM with the fused activation + quantization epilogue
// (fqGroupedGemm, docs/gemm.md). src/api builds it; the host reference (src/host/grouped_gemm.cpp) and the
// sm_90a kernel (src/kernels/gemm/) read only this.
//
//   for each group g with valid rows R_g (docs/spec.md §5 CONTIGUOUS, common/moe.h: offsets clamped, optional counts):
//     C[m, n] = alpha[g] * sum_kb  sa[m, kb] * sb[g, n/128, kb] * sum_{k in kb} A[m, k] * B[g, n, k]
//     C_bf16  = bf16(C)                                    (what an unfused pipeline's GEMM writes)
//     outputs = the fused operation `epi` applied to C_bf16 (fqQuantize of the same descriptor, byte for byte)
//
// A [m, k] fp8 e4m3 (row stride lda); its 1x128 scales sa as the library's PER_GROUP 128 quantizer writes them
// (COL_MAJOR_TMA or COL_MAJOR: sa[m, kb] at kb * a_scale_ld + m). B [groups * n, k] fp8 e4m3 (row stride ldb):
// group g's weight is rows [g*n, (g+1)*n); its 128x128 scales are the BLOCK_2D ROW_MAJOR scales of that weight,
// the groups one after the other: sb[g, nb, kb] at (g * ceil(n/128) + nb) * ceil(k/128) + kb.
#pragma once

#include <cstdint>

#include "op_config.h"
#include "scale_layout.h"

namespace fq {

// K elements (and B rows) per scale block of both operands (DeepSeek-V3's 1x128 / 128x128 recipe).
constexpr int64_t kGemmScaleBlock = 128;

struct GroupedGemmConfig {
    int64_t m = 0, n = 0, k = 0;  // A [m, k]; B [groups, n, k]; C [m, n]; D [m, n / 2] (gated) or [m, n]
    int64_t lda = 0, ldb = 0;     // elements (= bytes) between rows of A and B
    int32_t groups = 1;
    const int32_t* offsets = nullptr;  // groups + 1 row offsets; NULL only with one group (all m rows)
    const int32_t* counts = nullptr;   // optional: valid rows of each group's slot

    const uint8_t* a = nullptr;
    const float* a_scales = nullptr;
    ScaleLayout a_scale_layout = ScaleLayout::ColMajorTma;
    int64_t a_scale_ld = 0;  // floats between the scales of consecutive k-blocks
    const uint8_t* b = nullptr;
    const float* b_scales = nullptr;
    const float* alpha = nullptr;  // groups floats; NULL: 1

    uint16_t* c_out = nullptr;  // bf16 [m, n], row stride n; optional
    uint16_t* d_out = nullptr;  // bf16 y (before quantization) [m, epi.cols], row stride epi.cols; optional

    // The fused operation on C_bf16: rows m, in_cols n (in_ld n), cols = n/2 gated or n; moe CONTIGUOUS with
    // the offsets/counts above (NONE when offsets is NULL); row_prob, columnwise pointers and every quantization
    // attribute from the caller's epilogue descriptor. Used for the quantized outputs when `quantize`.
    OpConfig epi;
    bool quantize = true;
    void* output = nullptr;  // quantized D [m, epi.cols], row stride epi.out_ld
    void* scales = nullptr;  // its scales (epi.scales)

    int64_t k_blocks() const { return ceil_div(k, kGemmScaleBlock); }
    int64_t n_blocks() const { return ceil_div(n, kGemmScaleBlock); }
    // sb[g, nb, kb]
    int64_t b_scale_index(int64_t g, int64_t nb, int64_t kb) const { return (g * n_blocks() + nb) * k_blocks() + kb; }
    int64_t a_scale_index(int64_t row, int64_t kb) const { return kb * a_scale_ld + row; }
};

}  // namespace fq
