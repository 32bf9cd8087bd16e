// Host reference of the grouped FP8 GEMM with the fused activation + quantization epilogue (fqGroupedGemm;
// docs/gemm.md states the numerics, src/common/grouped_gemm.h the layouts).
//
//   for each group g and each valid row m of g (docs/spec.md §5 CONTIGUOUS rows, common/moe.h), each column n < N:
//     acc      = sum_kb  (double) sa[m, kb] * (double) sb[g, n/128, kb] * sum_{k in kb} (double) A[m, k] * B[g*N + n, k]
//     C[m, n]  = bf16(float(alpha[g] * acc))          every product and sum in fp64; one rounding to fp32, one to bf16
//     D[m, :]  = bf16(prob[m] * act(C[m, :]))         the fused reference's activation, in fp32 (docs/spec.md §2)
//     output, scales = host::quantize(epi, C)          fqQuantize of the epilogue descriptor applied to C, by construction
//
// The fp64 sums of fp8 products are exact for K < 2^30 or so (each product has at most 8 significant bits), so the
// only roundings are the scale products and the final fp32 and bf16 ones: an oracle independent of the order a
// GPU sums in. Rows no group owns are neither read nor written; in the bf16 C handed to the epilogue they are 0,
// and the epilogue skips them as fqQuantize skips rows no expert owns.
#include "grouped_gemm.h"

#include <algorithm>
#include <array>
#include <vector>

#include "../common/activate_column.h"
#include "../common/formats.h"
#include "reference.h"

namespace fq::host {
namespace {

// Every e4m3fn code decoded once (docs/spec.md §1; 0x7F / 0xFF are NaN).
std::array<double, 256> e4m3_table() {
    std::array<double, 256> t{};
    for (uint32_t code = 0; code < 256; ++code) t[code] = double(decode_minifloat(kE4M3FN, code));
    return t;
}

// C[m, n] of a valid row m of group g, before rounding.
double gemm_element(const GroupedGemmConfig& c, const std::array<double, 256>& dec, int64_t m, int64_t g, int64_t n) {
    const uint8_t* a = c.a + m * c.lda;
    const uint8_t* b = c.b + (g * c.n + n) * c.ldb;
    double acc = 0.0;
    for (int64_t kb = 0; kb < c.k_blocks(); ++kb) {
        const int64_t k0 = kb * kGemmScaleBlock, k1 = std::min(c.k, k0 + kGemmScaleBlock);
        double block = 0.0;
        for (int64_t k = k0; k < k1; ++k) block += dec[a[k]] * dec[b[k]];
        const double sa = c.a_scales[c.a_scale_index(m, kb)];
        const double sb = c.b_scales[c.b_scale_index(g, n / kGemmScaleBlock, kb)];
        acc += sa * sb * block;
    }
    const double alpha = c.alpha ? double(c.alpha[g]) : 1.0;
    return alpha * acc;
}

}  // namespace

void grouped_gemm(const GroupedGemmConfig& c) {
    static const std::array<double, 256> dec = e4m3_table();
    // The group of every row: the epilogue's CONTIGUOUS experts are the groups (one without offsets), so the
    // rows the GEMM computes are exactly the rows the epilogue quantizes.
    const std::vector<int32_t> group = expert_of_rows(c.epi);

    // C as bf16 [m, n] (row stride n): the epilogue's input, zero in rows no group owns.
    std::vector<uint16_t> cb(size_t(c.m * c.n), 0);
    for (int64_t m = 0; m < c.m; ++m) {
        const int32_t g = group[size_t(m)];
        if (g < 0) continue;
        uint16_t* row = cb.data() + m * c.n;
        for (int64_t n = 0; n < c.n; ++n) row[n] = float_to_bf16(float(gemm_element(c, dec, m, g, n)));
        if (c.c_out) std::copy(row, row + c.n, c.c_out + m * c.n);
    }

    // D: the activation output y of the epilogue, as the fused reference computes it (docs/spec.md §2), rounded to bf16.
    if (c.d_out) {
        const ActivationParams a = activation_params(c.epi);
        for (int64_t m = 0; m < c.m; ++m) {
            if (group[size_t(m)] < 0) continue;
            const uint16_t* in = cb.data() + m * c.n;
            const float prob = c.epi.row_prob ? c.epi.row_prob[m] : 1.0f;
            for (int64_t j = 0; j < c.epi.cols; ++j) {
                const float v = activate_column(a, in, j);
                c.d_out[m * c.epi.cols + j] = float_to_bf16(c.epi.row_prob ? prob * v : v);
            }
        }
    }

    // The quantized outputs: fqQuantize's reference on C, with the groups as MoE CONTIGUOUS experts.
    if (c.quantize) quantize(c.epi, cb.data(), c.output, c.scales);
}

}  // namespace fq::host
