// The quantizer of SPEC §3.2: the scale of a group from its amax, and the encoding of one element.
// Shared by the host reference and every CUDA kernel, so every backend makes the same decisions.
#pragma once

#include "formats.h"
#include "types.h"

namespace fq {

// Everything the element/scale math needs, resolved on the host once per call (defaults applied).
struct QuantParams {
    DType out = DType::E4M3FN;
    float qmax = 448.0f;          // the output's largest finite value, or the caller's override
    float min_scale = 0.0f;       // floor of every scale
    bool pow2_ceil = false;       // POW2_CEIL scale rounding
    bool reciprocal = false;      // MULTIPLY_RECIPROCAL instead of DIVIDE
};

// By value: namespace-scope constants of class type are not visible in device code.
FQ_HD MiniFloat minifloat_of(DType t) {
    switch (t) {
        case DType::E4M3FNUZ: return MiniFloat{4, 3, 8, 0x7F, 0x80, false, false};
        case DType::E5M2: return MiniFloat{5, 2, 15, 0x7B, 0x7F, true, true};
        case DType::E2M1: return MiniFloat{2, 1, 1, 0x7, 0x0, false, true};
        default: return MiniFloat{4, 3, 7, 0x7E, 0x7F, true, true};
    }
}

// Encodes one value already divided by its scale. fp8 and int8 codes are returned as a byte.
FQ_HD uint8_t encode_scaled(DType out, float v) {
    if (out == DType::Int8) return uint8_t(encode_int8(v));
    return encode_minifloat(minifloat_of(out), v);
}

// 2^ceil(log2 s) on the fp32 bit pattern: exponent + (mantissa != 0), clamped to [2^-126, 2^127].
FQ_HD float pow2_ceil(float s) {
    const uint32_t u = float_bits(s);
    int e = int((u >> 23) & 0xFF) - 127 + ((u & 0x7FFFFFu) != 0 ? 1 : 0);
    if (e < -126 || (u & 0x7F800000u) == 0) e = -126;  // zero and subnormals clamp up
    if (e > 127) e = 127;                              // including +Inf
    return exp2i(e);
}

// SPEC §3.2: s = amax / qmax; s = min(s, ub); s = max(s, min_scale); optional power-of-two ceiling.
// `ub` is the caller's scale upper bound, or NaN when none was given (fminf ignores NaN).
FQ_HD float group_scale(float amax, float ub, const QuantParams& p) {
    float s = amax / p.qmax;
    s = fminf(s, ub);
    s = fmaxf(s, p.min_scale);
    return p.pow2_ceil ? pow2_ceil(s) : s;
}

// q = enc(y / s) or enc(y * inv_s): the caller passes both so a kernel computes 1/s once per group.
FQ_HD uint8_t quantize_value(float y, float s, float inv_s, const QuantParams& p) {
    return encode_scaled(p.out, p.reciprocal ? y * inv_s : y / s);
}

// The byte of an E8M0 scale holding a power of two s in [2^-126, 2^127] (POW2_CEIL guarantees it).
FQ_HD uint8_t e8m0_of_pow2(float s) { return uint8_t((float_bits(s) >> 23) & 0xFF); }

}  // namespace fq
