// Portable exp / erf / tanh, bit-identical on the host reference and in CUDA device code
// (docs/spec.md §0: every backend writes identical bytes).
//
// Contract
//   * Only correctly rounded IEEE-754 binary32 operations are used in the value path: +, -, *,
//     IEEE division, fmaf (always a true fused multiply-add), rintf, and bit manipulation. No
//     libm transcendental, no __expf / MUFU. Every multiply-add is an explicit fmaf and no
//     plain product ever feeds an add, so contraction (nvcc's default; g++'s under -std=gnu++*
//     on FMA targets) cannot change a result. Requires IEEE division and no flush-to-zero:
//     do NOT build with -use_fast_math / -ftz=true / -prec-div=false, nor host -ffast-math.
//   * Max error against the float64 result, in ulps of the correctly rounded float result, over
//     all 2^32 inputs (tools/exhaustive_math.cpp, against glibc's double exp/erf/tanh):
//       portable_exp  0.891 ulp  (subnormal results included; 99.75% correctly rounded)
//       portable_erf  0.986 ulp  (99.30% correctly rounded)
//       portable_tanh 0.959 ulp  (99.88% correctly rounded)
//     tests/test_gpu_math.cu checks that host (g++) and device (nvcc) give the same bits on a sweep of
//     every 61st float; tests/test_portable_math.cpp checks <= 2 ulp on dense sweeps.
//   * Special values: NaN -> the same NaN bits (no arithmetic touches it, so no backend
//     canonicalises the payload); exp(+inf) = +inf, exp(-inf) = +0, exp(x > ~88.72) = +inf,
//     exp(x < ~-103.97) = +0; erf and tanh are odd (signed zeros preserved, f(-x) == -f(x)
//     bit for bit) and saturate to exactly +-1 where the float result rounds to 1.
//
// Polynomial coefficients come from tools/fit_portable_math.py (-> portable_math_coeffs.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "bits.h"
#include "hd.h"
#include "portable_math_coeffs.h"

namespace fq {
namespace detail {

using fq::bits_float;
using fq::float_bits;

// a * b, rounded, and never contracted with a following add into an FMA by any compiler (nvcc
// contracts a*b+c by default, g++ does under -ffp-contract=fast, the default for -std=gnu++*).
// Used where a product may flow into a caller's add, e.g. 1 + portable_exp(-x).
FQ_HD float mul_nofuse(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  volatile float p = a * b;
  return p;
#endif
}

// 2^n for n in [-126, 127], built directly from the exponent field.
FQ_HD float pow2i(int n) { return bits_float(static_cast<uint32_t>(n + 127) << 23); }

constexpr uint32_t kSignBit = 0x80000000u;

}  // namespace detail

namespace detail {

// exp(x) = p * 2^k with p in [0.70, 1.42], for x in [-104, 89] (Cody-Waite reduction + polynomial).
struct ExpParts {
  float p;
  int k;
};

FQ_HD ExpParts exp_parts(float x) {
  // Range reduction (Cody-Waite, ln2 = kLn2Hi + kLn2Lo): x = k ln2 + r, |r| <= ln2/2 (+ an ulp).
  // For k != 0, x and k*kLn2Hi are multiples of 2^-25 and differ by < 1/2: the first fmaf is exact.
  constexpr float kLog2e = 1.442695022e+00f;
  constexpr float kLn2Hi = 6.931471825e-01f;   // float(ln 2)
  constexpr float kLn2Lo = -1.904654212e-09f;  // float(ln 2 - kLn2Hi)
  // k = the integer nearest x * log2e, by the magic-number round: t + 1.5*2^23 rounds t to an integer
  // (RNE, exact for |t| < 2^22) and leaves that integer in the low mantissa bits, so k needs neither a
  // round nor a float-to-int conversion instruction (those run at 1/8 of the FMA rate on GPUs). One
  // fmaf, so x * log2e is not rounded first: k may differ from rintf(RN(x log2e)) when that product
  // sits within an ulp of a half-integer, which only moves r an ulp past ln2/2, inside the fit.
  constexpr float kRoundMagic = 12582912.0f;   // 1.5 * 2^23
  const float shifted = fmaf(x, kLog2e, kRoundMagic);
  const float k = shifted - kRoundMagic;       // in [-150, 128]
  const int k_int = static_cast<int>(float_bits(shifted) - float_bits(kRoundMagic));
  const float r_hi = fmaf(-k, kLn2Hi, x);      // exact
  const float r = fmaf(-k, kLn2Lo, r_hi);      // r_hi + r_lo, rounded once
  // exp(r) = 1 + r (1 + r Q(r)): Horner's rule to the end, so the two last steps are fmaf with 1 and
  // the whole polynomial costs one instruction per coefficient (error: the header comment).
  return {fmaf(fmaf(exp_q(r), r, 1.0f), r, 1.0f), k_int};
}

// p * 2^k for a normal result (k in [-125, 127]): add k to p's exponent field (exact).
FQ_HD float scale_normal(ExpParts e) { return bits_float(float_bits(e.p) + (static_cast<uint32_t>(e.k) << 23)); }

}  // namespace detail

// exp(x)
FQ_HD float portable_exp(float x) {
  if (!(x == x)) return x;                 // NaN: returned untouched
  // Clamp: exp(89) overflows to +inf and exp(-104) rounds to +0 in the reconstruction below.
  x = x > 89.0f ? 89.0f : x;
  x = x < -104.0f ? -104.0f : x;
  const detail::ExpParts e = detail::exp_parts(x);
  if (e.k >= -125 && e.k <= 127) return detail::scale_normal(e);  // p * 2^k is normal
  // Overflow (k = 128) and subnormal results: two exact-exponent products, so that the
  // result is rounded once, by the second one.
  const int k1 = e.k / 2;
  return detail::mul_nofuse(detail::mul_nofuse(e.p, detail::pow2i(k1)), detail::pow2i(e.k - k1));
}

// erf(x)
FQ_HD float portable_erf(float x) {
  if (!(x == x)) return x;
  const uint32_t sign = detail::float_bits(x) & detail::kSignBit;
  const float a = detail::bits_float(detail::float_bits(x) ^ sign);  // |x|
  float y;
  if (a < 1.0f) {
    // erf(a) = a + a Q(a^2): the final fmaf rounds once, exact for a = 0 and subnormal a.
    y = fmaf(a, detail::erf_small_q(a * a), a);
  } else if (a < 3.92f) {
    // erf(a) = 1 - erfc(a),  erfc(a) = exp(-a^2 + G(a)) with G a smooth fit of ln erfc(a) + a^2.
    const float g = detail::erf_large_g(a - 2.5f);
    y = 1.0f - portable_exp(fmaf(-a, a, g));
  } else {
    y = 1.0f;  // erfc(a) < 2^-25: erf rounds to 1
  }
  return detail::bits_float(detail::float_bits(y) | sign);
}

// tanh(x)
FQ_HD float portable_tanh(float x) {
  if (!(x == x)) return x;
  const uint32_t sign = detail::float_bits(x) & detail::kSignBit;
  const float a = detail::bits_float(detail::float_bits(x) ^ sign);  // |x|
  float y;
  if (a < 1.0f) {
    // tanh(a) = a + a^3 R(a^2)
    const float s = a * a;
    y = fmaf(a * s, detail::tanh_small_r(s), a);
  } else if (a < 9.1f) {
    // tanh(a) = 1 - 2 / (exp(2a) + 1); the subtracted term is < 0.24, so its error is damped.
    const float e = portable_exp(2.0f * a);
    y = 1.0f - 2.0f / (e + 1.0f);
  } else {
    y = 1.0f;  // 1 - tanh(a) < 2^-25: tanh rounds to 1
  }
  return detail::bits_float(detail::float_bits(y) | sign);
}

}  // namespace fq
