// Number formats of docs/spec.md §1: decoding and encoding of the 8-bit and 4-bit types, and of the 16-bit
// inputs. Written once for the host reference and for device code (FQ_HD).
//
// Encoding contract (docs/spec.md §1): round to nearest, ties to even, subnormals included; satfinite (|x| > qmax
// and +-Inf give +-qmax); NaN gives the format's positive NaN code whatever its sign (e4m3fn 0x7F, e5m2
// 0x7F, e4m3fnuz 0x80): the sign of a NaN that arithmetic produces differs between x86 (negative default
// NaN) and GPUs (positive canonical NaN), so a signed NaN code could not be identical on every backend;
// the sm_89+ cvt writes 0x7F for the GPU's NaN, which this matches. fp4 has no NaN and encodes NaN as
// +0. INT8: RNE, saturate to [-128, 127], NaN -> 0.
#pragma once

#include <cstdint>
#include <cstring>

#include "bits.h"
#include "hd.h"

#if defined(__CUDACC__)
#  include <cuda_bf16.h>
#  include <cuda_fp16.h>
#endif
#include <cmath>

namespace fq {

FQ_HD bool is_nan(float x) { return (float_bits(x) & 0x7FFFFFFFu) > 0x7F800000u; }

// 2^e for e in [-149, 127], exactly, without libm.
FQ_HD float exp2i(int e) {
    if (e >= -126) return bits_float(uint32_t(e + 127) << 23);
    return bits_float(1u << (e + 149));  // subnormal
}

// ------------------------------------------------------------------------------------------------
// Small floats: sign, E exponent bits, M mantissa bits, bias B. Described by a struct of constants so
// one encoder serves e4m3fn, e4m3fnuz, e5m2 and e2m1.
// ------------------------------------------------------------------------------------------------
struct MiniFloat {
    int exp_bits, man_bits, bias;
    uint8_t max_code;    // magnitude code of qmax
    uint8_t nan_code;    // code written for NaN (sign bit added where the format has signed NaNs)
    bool signed_nan;     // codes past qmax are NaN/Inf of either sign when decoding (e4m3fn, e5m2)
    bool has_neg_zero;   // fnuz formats have none: -0 encodes as 0x00 (0x80 is NaN)
};

constexpr MiniFloat kE4M3FN{4, 3, 7, 0x7E, 0x7F, true, true};
constexpr MiniFloat kE4M3FNUZ{4, 3, 8, 0x7F, 0x80, false, false};
constexpr MiniFloat kE5M2{5, 2, 15, 0x7B, 0x7F, true, true};
constexpr MiniFloat kE2M1{2, 1, 1, 0x7, 0x0, false, true};

// Decodes the magnitude bits (no sign) of a finite code.
FQ_HD float minifloat_magnitude(const MiniFloat& f, uint32_t mag) {
    const uint32_t e = mag >> f.man_bits, m = mag & ((1u << f.man_bits) - 1);
    if (e == 0) return float(m) * exp2i(1 - f.bias - f.man_bits);  // subnormal
    return float((1u << f.man_bits) | m) * exp2i(int(e) - f.bias - f.man_bits);
}

FQ_HD float decode_minifloat(const MiniFloat& f, uint32_t code) {
    const int width = 1 + f.exp_bits + f.man_bits;
    const uint32_t sign = (code >> (width - 1)) & 1u, mag = code & ((1u << (width - 1)) - 1);
    const float nan = bits_float(0x7FC00000u);
    if (!f.has_neg_zero && code == f.nan_code) return nan;               // fnuz NaN is 0x80
    if (f.signed_nan && mag > f.max_code) {                              // beyond qmax: NaN or Inf
        if (f.exp_bits == 5 && mag == 0x7C) return sign ? -INFINITY : INFINITY;  // e5m2 Inf
        return nan;
    }
    const float v = minifloat_magnitude(f, mag);
    return sign ? -v : v;
}

// float -> small float, RNE, satfinite. Works on the magnitude: find the quantum (spacing of the
// target's grid at |x|), round |x| / quantum to an integer with rintf (RNE), rebuild the code.
FQ_HD uint8_t encode_minifloat(const MiniFloat& f, float x) {
    const uint32_t bits = float_bits(x);
    const uint32_t sign_bit = 1u << (f.exp_bits + f.man_bits);
    const uint32_t sign = (bits >> 31) ? sign_bit : 0u;
    if (is_nan(x)) return f.nan_code;  // sign dropped: see the contract above
    const float a = bits_float(bits & 0x7FFFFFFFu);
    const float qmax = minifloat_magnitude(f, f.max_code);
    uint32_t mag;
    if (a >= qmax) {  // also +-Inf
        mag = f.max_code;
    } else {
        const int min_normal_exp = 1 - f.bias;
        int e = int((float_bits(a) >> 23) & 0xFF) - 127;  // floor(log2 a) for normal floats
        if (e < min_normal_exp) e = min_normal_exp;       // subnormal targets share one quantum
        const float quantum = exp2i(e - f.man_bits);
        // a / quantum is exact (power-of-two scaling within float range); rintf rounds it RNE.
        const uint32_t n = uint32_t(rintf(a / quantum));
        // n counts quanta of 2^(e - M); n may reach 2^(M+1) when rounding carries into the next binade.
        if (n == 0) {
            mag = 0;
        } else if (e == min_normal_exp && n < (1u << f.man_bits)) {
            mag = n;  // subnormal: exponent field 0
        } else if (n >= (2u << f.man_bits)) {
            mag = uint32_t(e + 1 + f.bias) << f.man_bits;  // carried: 1.0 x 2^(e+1)
        } else {
            mag = (uint32_t(e + f.bias) << f.man_bits) | (n - (1u << f.man_bits));
        }
        if (mag > f.max_code) mag = f.max_code;  // rounded past qmax: satfinite
    }
    if (mag == 0 && !f.has_neg_zero) return 0;
    return uint8_t(mag | sign);
}

// FP4 e2m1 by one float addition: the same code as encode_minifloat(E2M1, x) (tests/test_formats.cpp checks
// it), without its branches and in under half its instructions. The e2m1 grid 0, 0.5, 1, 1.5, 2, 3, 4, 6 has
// the spacing q = 0.5 below 2, 1 in [2, 4), 2 in [4, 8). |x| is capped at 6 (past it everything saturates to
// code 7, Inf too). Adding M = 1.5 * 2^23 * q, whose float spacing is q, rounds |x| to a multiple k of q
// (RNE; M / q is even, so ties go to even k, i.e. to the even e2m1 code) and leaves k in the sum's low bits;
// M is taken 2 spacings further per binade above [0, 2), so those bits hold the code itself. NaN -> +0; the
// sign bit is kept for -0 and small negatives (e2m1 has -0).
FQ_HD uint8_t encode_e2m1(float x) {
    const uint32_t bits = float_bits(x), a = bits & 0x7FFFFFFFu;
    const uint32_t capped = a < 0x40C00000u ? a : 0x40C00000u;  // min(|x|, 6)
    const uint32_t binade = capped & 0x7F800000u;
    // M's bits: the binade's exponent + 22, its bit 22 (the 1.5), and 2 per binade above [1, 2); at least
    // 0x4AC00000 (q = 0.5) below 2.
    const uint32_t m = binade + (binade >> 22) + (0x0B400000u - 0xFEu);
    const uint32_t magic = m > 0x4AC00000u ? m : 0x4AC00000u;
    const uint32_t sum = float_bits(bits_float(capped) + bits_float(magic));
    // The code from the sum's last 3 bits, the sign from bit 3 of bits >> 28 (which is below 16).
    const uint32_t nibble = (sum & 0x7u) | ((bits >> 28) & ~0x7u);
    return a > 0x7F800000u ? 0 : uint8_t(nibble);
}

// ------------------------------------------------------------------------------------------------
// INT8 and E8M0
// ------------------------------------------------------------------------------------------------
FQ_HD int8_t encode_int8(float x) {
    if (is_nan(x)) return 0;
    float r = rintf(x);
    r = r < -128.0f ? -128.0f : (r > 127.0f ? 127.0f : r);
    return int8_t(r);
}

FQ_HD float decode_e8m0(uint8_t b) {
    if (b == 0xFF) return bits_float(0x7FC00000u);
    return exp2i(int(b) - 127);
}

// ------------------------------------------------------------------------------------------------
// 16-bit inputs
// ------------------------------------------------------------------------------------------------
FQ_HD float bf16_to_float(uint16_t h) { return bits_float(uint32_t(h) << 16); }

// RNE float -> bf16 (NaN stays a quiet NaN).
FQ_HD uint16_t float_to_bf16(float x) {
    const uint32_t u = float_bits(x);
    if (is_nan(x)) return uint16_t((u >> 16) | 0x40);
    return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

FQ_HD float fp16_to_float(uint16_t h) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(h));  // exact, as the software path below
#endif
    const uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1F, m = h & 0x3FF;
    if (e == 0x1F) return bits_float(sign | 0x7F800000u | (m << 13));  // Inf / NaN
    const float v = (e == 0) ? float(m) * exp2i(-24) : float(0x400 | m) * exp2i(int(e) - 25);
    return sign ? -v : v;
}

// RNE float -> fp16 with IEEE overflow to Inf (this is a value-preserving rounding of an intermediate,
// not a saturating quantization).
FQ_HD uint16_t float_to_fp16(float x) {
#if defined(__CUDA_ARCH__)
    return __half_as_ushort(__float2half_rn(x));  // IEEE RNE, overflow to Inf: as the software path below
#endif
    const uint32_t u = float_bits(x);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
    if (is_nan(x)) return uint16_t(sign | 0x7E00u);
    const float a = bits_float(u & 0x7FFFFFFFu);
    if (a >= 65520.0f) return uint16_t(sign | 0x7C00u);  // rounds to Inf
    int e = int((float_bits(a) >> 23) & 0xFF) - 127;
    if (e < -14) e = -14;
    const uint32_t n = uint32_t(rintf(a / exp2i(e - 10)));  // quanta of 2^(e-10)
    uint32_t mag;
    if (e == -14 && n < 0x400u) mag = n;                                  // subnormal or zero
    else if (n >= 0x800u) mag = uint32_t(e + 1 + 15) << 10;              // carried
    else mag = (uint32_t(e + 15) << 10) | (n - 0x400u);
    return uint16_t(sign | mag);
}

}  // namespace fq
