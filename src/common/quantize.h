// The quantizer of docs/spec.md §3.2: the scale of a group from its amax, and the encoding of one element.
// Shared by the host reference and every CUDA kernel, so every backend makes the same decisions.
#pragma once

#include <cmath>

#include "formats.h"
#include "types.h"

namespace fq {

// Everything the element/scale math needs, resolved on the host once per call (defaults applied).
struct QuantParams {
    DType out = DType::E4M3FN;
    float qmax = 448.0f;          // the output's largest finite value, or the caller's override
    float sat = INFINITY;         // saturation bound of a qmax override (saturation_bound), +Inf without one
    float min_scale = 0.0f;       // floor of every scale
    bool pow2_ceil = false;       // POW2_CEIL scale rounding
    bool reciprocal = false;      // MULTIPLY_RECIPROCAL instead of DIVIDE
    bool mx_floor = false;        // MXFP8/MXFP4: the FLOOR E8M0 rule (OCP MX v1.0) instead of RCEIL
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

// Encodes one value already divided by its scale, saturating at the format's own qmax. fp8 and int8 codes
// are returned as a byte.
FQ_HD uint8_t encode_scaled(DType out, float v) {
    if (out == DType::Int8) return uint8_t(encode_int8(v));
    if (out == DType::E2M1) return encode_e2m1(v);
    return encode_minifloat(minifloat_of(out), v);
}

// The saturation bound of a qmax override (docs/spec.md §1, §3.4): the largest value of the output format that
// is not above qmax (qmax itself where the format holds it, e.g. 224 in e4m3fnuz; 192 for qmax 200 in e4m3fn),
// and for int8 rint(qmax). Values divided by their scale are clamped to +-this bound before encoding, so no
// code exceeds qmax in magnitude; where qmax is representable that is exactly vLLM's clamp-then-convert.
// Resolved on the host once per descriptor; qmax is positive and at most the format's own (the API checks).
FQ_HD float saturation_bound(DType out, float qmax) {
    if (out == DType::Int8) return rintf(qmax);
    const MiniFloat f = minifloat_of(out);
    const uint32_t code = encode_minifloat(f, qmax);  // the nearest value, which may lie above qmax
    const float v = minifloat_magnitude(f, code);
    return v <= qmax ? v : minifloat_magnitude(f, code - 1);  // else the next code below it
}

// Whether p has a qmax override's saturation bound (kernels whose hardware conversion saturates at the
// format's own qmax then clamp first, or leave the case to a path that does).
FQ_HD bool has_saturation_bound(const QuantParams& p) { return p.sat < INFINITY; }

// v clamped to +-p.sat (a no-op without a qmax override); comparisons, so NaN stays NaN and encodes as NaN.
FQ_HD float saturate(float v, const QuantParams& p) { return v > p.sat ? p.sat : (v < -p.sat ? -p.sat : v); }

// Encodes one value already divided by its scale under the descriptor's saturation bound (docs/spec.md §1).
FQ_HD uint8_t encode_value(float v, const QuantParams& p) { return encode_scaled(p.out, saturate(v, p)); }

// 2^ceil(log2 s) on the fp32 bit pattern: exponent + (mantissa != 0), clamped to [2^-126, 2^127].
FQ_HD float pow2_ceil(float s) {
    const uint32_t u = float_bits(s);
    int e = int((u >> 23) & 0xFF) - 127 + ((u & 0x7FFFFFu) != 0 ? 1 : 0);
    if (e < -126 || (u & 0x7F800000u) == 0) e = -126;  // zero and subnormals clamp up
    if (e > 127) e = 127;                              // including +Inf
    return exp2i(e);
}

// docs/spec.md §3.2: s = amax / qmax; s = min(s, ub); s = max(s, min_scale); optional power-of-two ceiling.
// `ub` is the caller's scale upper bound, or NaN when none was given (fminf ignores NaN).
FQ_HD float group_scale(float amax, float ub, const QuantParams& p) {
    float s = amax / p.qmax;
    s = fminf(s, ub);
    s = fmaxf(s, p.min_scale);
    return p.pow2_ceil ? pow2_ceil(s) : s;
}

// q = enc(y / s) or enc(y * inv_s): the caller passes both so a kernel computes 1/s once per group.
FQ_HD uint8_t quantize_value(float y, float s, float inv_s, const QuantParams& p) {
    return encode_value(p.reciprocal ? y * inv_s : y / s, p);
}

// The byte of an E8M0 scale holding a power of two s in [2^-126, 2^127] (POW2_CEIL guarantees it).
FQ_HD uint8_t e8m0_of_pow2(float s) { return uint8_t((float_bits(s) >> 23) & 0xFF); }

// ------------------------------------------------------------------------------------------------
// Microscaling (docs/spec.md §3.3). Amax follows §3.2 (fmaxf: NaN elements ignored), so a block's amax is never
// NaN; the NaN branches below only make each function total.
// ------------------------------------------------------------------------------------------------

// RCEIL: e8m0_roundup(v) = biased exponent of v, +1 if its mantissa is non-zero. NaN -> 0xFF, +Inf ->
// 0xFE, 0 -> 0x00; subnormals <= 2^-127 -> 0x00 (2^-127), larger subnormals round up to 2^-126 (0x01);
// saturates at 0xFE (2^127).
FQ_HD uint8_t e8m0_roundup(float v) {
    const uint32_t u = float_bits(v) & 0x7FFFFFFFu;
    if (u > 0x7F800000u) return 0xFF;
    const uint32_t e = u >> 23, man = u & 0x7FFFFFu;
    if (e == 0) return man <= 0x400000u ? 0x00 : 0x01;  // 0x400000 is 2^-127
    const uint32_t r = e + (man != 0 ? 1u : 0u);
    return uint8_t(r > 0xFEu ? 0xFEu : r);  // +Inf (e = 255) and overflow saturate
}

// FLOOR: e = clamp(floor(log2 amax) - emax_elem + 127, 0, 254); amax = 0 (and any fp32 subnormal, whose
// floor(log2) is below -126) -> 0; +Inf -> 254. NaN -> 0xFF as under RCEIL.
FQ_HD uint8_t e8m0_floor(float amax, int emax_elem) {
    const uint32_t u = float_bits(amax) & 0x7FFFFFFFu;
    if (u > 0x7F800000u) return 0xFF;
    if (u == 0x7F800000u) return 0xFE;
    const int e = int(u >> 23);  // floor(log2 amax) + 127 for normal amax
    if (e == 0) return 0x00;
    const int r = e - emax_elem;
    return uint8_t(r < 0 ? 0 : (r > 254 ? 254 : r));
}

// emax_elem of OCP MX v1.0: the exponent of the element type's largest power of two.
FQ_HD int mx_emax_elem(DType t) { return t == DType::E5M2 ? 15 : (t == DType::E2M1 ? 2 : 8); }

// The E8M0 scale byte of an MXFP8/MXFP4 block of amax `amax` under the descriptor's rule.
FQ_HD uint8_t mx_scale(float amax, const QuantParams& p) {
    return p.mx_floor ? e8m0_floor(amax, mx_emax_elem(p.out)) : e8m0_roundup(amax / p.qmax);
}

// The element multiplier 2^(127-e), exact (the reciprocal of the power of two 2^(e-127)); NaN for 0xFF.
FQ_HD float e8m0_reciprocal(uint8_t e) { return e == 0xFF ? bits_float(0x7FC00000u) : exp2i(127 - int(e)); }

// NVFP4 tensor scale S_enc = 2688 / global_amax (448 * 6), docs/spec.md §3.3: 1 unless the quotient is a
// positive finite float (global_amax 0, negative, NaN, +Inf, or so small that the quotient overflows), as
// TransformerEngine does; it keeps every block scale non-negative and finite (§1: the E4M3 block scale has
// sign bit 0).
FQ_HD float nvfp4_encode_scale(float global_amax) {
    const float q = 2688.0f / global_amax;
    return (q > 0.0f && q <= 3.402823466e38f) ? q : 1.0f;
}

// S_blk = e4m3_satfinite_rne(block_amax * (S_enc / 6)), the stored E4M3 byte.
FQ_HD uint8_t nvfp4_block_scale(float block_amax, float s_enc) {
    return encode_minifloat(minifloat_of(DType::E4M3FN), block_amax * (s_enc / 6.0f));
}

// m = 1 / (float(S_blk) * (1 / S_enc)), 0 if S_blk is 0; elements are q_i = e2m1_satfinite_rne(y_i * m).
FQ_HD float nvfp4_multiplier(uint8_t s_blk, float s_enc) {
    const float sb = decode_minifloat(minifloat_of(DType::E4M3FN), s_blk);
    return sb == 0.0f ? 0.0f : 1.0f / (sb * (1.0f / s_enc));
}

}  // namespace fq
