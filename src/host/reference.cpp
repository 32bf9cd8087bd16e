// Host reference of SPEC.md. Each step is named after the SPEC section it implements; the order of
// floating-point operations is the one the shared FQ_HD functions fix, so GPU kernels that call the
// same functions produce the same bytes.
//
// One row loop serves every scheme but BLOCK_2D (quantize_block2d: bands of 128 rows): activate the row (SPEC §2), then for each group of `c.group`
// elements (the whole row for per-token and per-tensor, 32 for MXFP8/MXFP4, 16 for NVFP4) decide its
// scale from its amax and encode its elements (quantize_group), then store the row's codes (fp4: packed).
#include "reference.h"

#include "../common/activate_column.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace fq::host {
namespace {

// SPEC §2: the activation output y (fp32) of one row, with the routing probability applied.
void activate_row(const OpConfig& c, const uint16_t* in, float prob, float* y) {
    const ActivationParams a = activation_params(c);
    for (int64_t j = 0; j < c.cols; ++j) {
        const float v = activate_column(a, in, j);
        y[j] = c.row_prob ? prob * v : v;
    }
}

// SPEC §3.2: amax with fmaxf semantics (NaN ignored).
float amax_of(const float* y, int64_t n) {
    float a = 0.0f;
    for (int64_t i = 0; i < n; ++i) a = fmaxf(a, fabsf(y[i]));
    return a;
}

// Values fixed for the whole call.
struct CallScalars {
    float ub = std::numeric_limits<float>::quiet_NaN();  // scale upper bound (NaN: none; fminf ignores it)
    float tensor_scale = 1.0f;                           // per-tensor schemes: the one scale
    float s_enc = 1.0f;                                  // NVFP4: S_enc of SPEC §3.3
};

// One group: its scale from its amax (stored at `scale_dst` unless NULL), and the codes of its n
// elements, one byte each (fp4 codes in the low nibble).
void quantize_group(const OpConfig& c, const CallScalars& t, const float* y, int64_t n, uint8_t* codes,
                    uint8_t* scale_dst) {
    const QuantParams& q = c.quant;
    const float amax = amax_of(y, n);  // a partial last group: its valid elements only (SPEC §6)
    switch (c.scheme) {
        case Scheme::Mxfp8:
        case Scheme::Mxfp4: {  // SPEC §3.3: E8M0 scale e, q_i = enc(y_i * 2^(127-e))
            const uint8_t e = mx_scale(amax, q);
            const float mul = e8m0_reciprocal(e);
            for (int64_t i = 0; i < n; ++i) codes[i] = encode_scaled(q.out, y[i] * mul);
            *scale_dst = e;
            return;
        }
        case Scheme::Nvfp4: {  // SPEC §3.3: E4M3 S_blk, q_i = e2m1(y_i * m)
            const uint8_t sb = nvfp4_block_scale(amax, t.s_enc);
            const float m = nvfp4_multiplier(sb, t.s_enc);
            for (int64_t i = 0; i < n; ++i) codes[i] = encode_scaled(q.out, y[i] * m);
            *scale_dst = sb;
            return;
        }
        default: {  // SPEC §3.2: fp32 scale (E8M0 when POW2_CEIL), q_i = enc(y_i / s) or enc(y_i * (1/s))
            const float s = is_per_tensor(c.scheme) ? t.tensor_scale : group_scale(amax, t.ub, q);
            const float inv = 1.0f / s;
            for (int64_t i = 0; i < n; ++i) codes[i] = quantize_value(y[i], s, inv, q);
            if (!scale_dst) return;
            if (c.scales.type == DType::E8M0) *scale_dst = e8m0_of_pow2(s);
            else std::memcpy(scale_dst, &s, sizeof s);
        }
    }
}

// Writes a row of codes: one byte per element, or for FP4 two per byte, element 2i in the low nibble
// (SPEC §1; validation guarantees an even width).
void store_row(const OpConfig& c, const uint8_t* codes, uint8_t* out) {
    if (c.quant.out != DType::E2M1) {
        std::memcpy(out, codes, size_t(c.cols));
        return;
    }
    for (int64_t j = 0; j < c.cols; j += 2) out[j / 2] = uint8_t((codes[j] & 0xF) | (codes[j + 1] << 4));
}

// SPEC §3.1 BLOCK_2D: one scale per 128x128 tile, from the amax over the tile's valid elements (a tile at the
// bottom or right edge is partial), stored at S[tile row, tile column]; elements quantized as in §3.2.
void quantize_block2d(const OpConfig& c, const uint16_t* in, uint8_t* out, uint8_t* scales) {
    const QuantParams& q = c.quant;
    const float ub = c.scale_ub ? *c.scale_ub : std::numeric_limits<float>::quiet_NaN();
    std::vector<float> y(size_t(kBlock2D * c.cols));  // one band of up to 128 activated rows
    for (int64_t mb = 0; mb * kBlock2D < c.rows; ++mb) {
        const int64_t r0 = mb * kBlock2D, nr = std::min(kBlock2D, c.rows - r0);
        for (int64_t r = 0; r < nr; ++r)
            activate_row(c, in + (r0 + r) * c.in_ld, c.row_prob ? c.row_prob[r0 + r] : 1.0f, y.data() + r * c.cols);
        for (int64_t kb = 0; kb * kBlock2D < c.cols; ++kb) {
            const int64_t j0 = kb * kBlock2D, nc = std::min(kBlock2D, c.cols - j0);
            float amax = 0.0f;
            for (int64_t r = 0; r < nr; ++r) amax = fmaxf(amax, amax_of(y.data() + r * c.cols + j0, nc));
            const float s = group_scale(amax, ub, q), inv = 1.0f / s;
            std::memcpy(scales + scale_offset(c.scales, mb, kb), &s, sizeof s);
            for (int64_t r = 0; r < nr; ++r)
                for (int64_t j = j0; j < j0 + nc; ++j)
                    out[(r0 + r) * c.out_ld + j] = quantize_value(y[size_t(r * c.cols + j)], s, inv, q);
        }
    }
}

}  // namespace

void quantize(const OpConfig& c, const void* input, void* output, void* scales_out) {
    const auto* in = static_cast<const uint16_t*>(input);
    auto* out = static_cast<uint8_t*>(output);
    auto* scales = static_cast<uint8_t*>(scales_out);
    if (scales && c.scales.bytes > 0) std::memset(scales, 0, size_t(c.scales.bytes));  // padding is 0
    if (c.scheme == Scheme::Block2D) return quantize_block2d(c, in, out, scales);

    std::vector<float> y(size_t(c.cols));
    std::vector<uint8_t> codes(size_t(c.cols));
    auto row_y = [&](int64_t m) {
        activate_row(c, in + m * c.in_ld, c.row_prob ? c.row_prob[m] : 1.0f, y.data());
    };

    CallScalars t;
    if (c.scale_ub) t.ub = *c.scale_ub;
    // A tensor-wide amax first where the scheme needs one (SPEC §3.1 dynamic per-tensor; §3.3 NVFP4 without
    // the caller's global amax): the rows are activated twice rather than held.
    float tensor_amax = 0.0f;
    if (c.scheme == Scheme::PerTensorDynamic || (c.scheme == Scheme::Nvfp4 && !c.global_amax))
        for (int64_t m = 0; m < c.rows; ++m) { row_y(m); tensor_amax = fmaxf(tensor_amax, amax_of(y.data(), c.cols)); }
    if (c.scheme == Scheme::PerTensorStatic) t.tensor_scale = *c.static_scale;
    if (c.scheme == Scheme::PerTensorDynamic) {
        t.tensor_scale = group_scale(tensor_amax, t.ub, c.quant);
        std::memcpy(scales + scale_offset(c.scales, 0, 0), &t.tensor_scale, sizeof(float));
    }
    // NVFP4's S_enc is not written anywhere (the API has no output for it): a caller that decodes needs
    // the global amax it passed, or must recompute the amax of y itself (SPEC: decode y ~ q * S_blk / S_enc).
    if (c.scheme == Scheme::Nvfp4) t.s_enc = nvfp4_encode_scale(c.global_amax ? *c.global_amax : tensor_amax);

    const int64_t row_bytes = c.quant.out == DType::E2M1 ? c.out_ld / 2 : c.out_ld;  // ld counts elements
    for (int64_t m = 0; m < c.rows; ++m) {
        row_y(m);
        for (int64_t k = 0; k * c.group < c.cols; ++k) {
            const int64_t lo = k * c.group, n = std::min(c.group, c.cols - lo);
            uint8_t* dst = is_per_tensor(c.scheme) ? nullptr : scales + scale_offset(c.scales, m, k);
            quantize_group(c, t, y.data() + lo, n, codes.data() + lo, dst);
        }
        store_row(c, codes.data(), out + m * row_bytes);
    }
}

}  // namespace fq::host
