// Host reference of SPEC.md. Each step is named after the SPEC section it implements; the order of
// floating-point operations is the one the shared FQ_HD functions fix, so GPU kernels that call the
// same functions produce the same bytes.
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace fq::host {
namespace {

// SPEC §2: the activation output y (fp32) of one row, with the routing probability applied.
void activate_row(const OpConfig& c, const uint16_t* in, float prob, float* y) {
    for (int64_t j = 0; j < c.cols; ++j) {
        float v;
        if (c.gated()) {
            const GatePair p = gate_columns(c.gate, c.gate_order, c.cols, c.gate_block, j);
            v = activate_gated(c.act, load_input(c.in_type, in[p.gate]), load_input(c.in_type, in[p.up]),
                               c.rounding, c.in_type, c.swiglu);
        } else {
            v = activate(c.act, load_input(c.in_type, in[j]));
            if (c.rounding != Rounding::Fp32) v = round_to_input(c.in_type, v);
        }
        y[j] = c.row_prob ? prob * v : v;
    }
}

// SPEC §3.2: amax with fmaxf semantics (NaN ignored).
float amax_of(const float* y, int64_t n) {
    float a = 0.0f;
    for (int64_t i = 0; i < n; ++i) a = fmaxf(a, fabsf(y[i]));
    return a;
}

void encode_span(const OpConfig& c, const float* y, int64_t n, float s, uint8_t* out) {
    const float inv = 1.0f / s;
    for (int64_t i = 0; i < n; ++i) out[i] = quantize_value(y[i], s, inv, c.quant);
}

void store_scale(const OpConfig& c, uint8_t* scales, int64_t m, int64_t k, float s) {
    uint8_t* dst = scales + scale_offset(c.scales, m, k);
    if (c.scales.type == DType::E8M0) *dst = e8m0_of_pow2(s);
    else std::memcpy(dst, &s, sizeof s);
}

}  // namespace

void quantize(const OpConfig& c, const void* input, void* output, void* scales_out) {
    const auto* in = static_cast<const uint16_t*>(input);
    auto* out = static_cast<uint8_t*>(output);
    auto* scales = static_cast<uint8_t*>(scales_out);
    if (scales && c.scales.bytes > 0) std::memset(scales, 0, size_t(c.scales.bytes));  // padding is 0

    const float ub = c.scale_ub ? *c.scale_ub : std::numeric_limits<float>::quiet_NaN();
    std::vector<float> y(size_t(c.cols));
    auto row_y = [&](int64_t m) {
        activate_row(c, in + m * c.in_ld, c.row_prob ? c.row_prob[m] : 1.0f, y.data());
    };

    if (is_per_tensor(c.scheme)) {
        float s;
        if (c.scheme == Scheme::PerTensorStatic) {
            s = *c.static_scale;
        } else {  // dynamic: amax over the whole tensor first (SPEC §3.1)
            float amax = 0.0f;
            for (int64_t m = 0; m < c.rows; ++m) { row_y(m); amax = fmaxf(amax, amax_of(y.data(), c.cols)); }
            s = group_scale(amax, ub, c.quant);
            store_scale(c, scales, 0, 0, s);
        }
        for (int64_t m = 0; m < c.rows; ++m) { row_y(m); encode_span(c, y.data(), c.cols, s, out + m * c.out_ld); }
        return;
    }

    // Per-token and per-group: one scale per `group` elements; the last group of a row may be partial
    // (SPEC §6: its amax covers its valid elements only).
    for (int64_t m = 0; m < c.rows; ++m) {
        row_y(m);
        for (int64_t k = 0; k * c.group < c.cols; ++k) {
            const int64_t lo = k * c.group, n = std::min(c.group, c.cols - lo);
            const float s = group_scale(amax_of(y.data() + lo, n), ub, c.quant);
            encode_span(c, y.data() + lo, n, s, out + m * c.out_ld + lo);
            store_scale(c, scales, m, k, s);
        }
    }
}

}  // namespace fq::host
