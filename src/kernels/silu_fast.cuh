// SiLU and SwiGLU-OAI on the kernels' fast path (device only): the same bits as fq::silu and fq::swiglu_gate /
// swiglu_up of src/common/activation.h for every input they take (|x| <= 86.5; for SwiGLU-OAI |alpha g| <= 86,
// up not NaN, limit > 0), which tests/test_gpu_math.cu checks for every bf16 and fp16 input; the kernels send
// the rest down the exact path.
#pragma once

#include "../common/activation.h"

namespace fq::cuda {

// The largest |x| the fast path takes: exp(-x) stays normal (portable_exp's reconstruction without its
// overflow and subnormal branch), and silu_quotient's range holds.
constexpr float kSiluInsideLimit = 86.5f;

// SiLU's quotient x / d, d = 1 + exp(-x), without the range check and out-of-line call of the IEEE
// division: MUFU reciprocal, one Newton step, the quotient and one residual correction -- the fast path
// nvcc emits for div.rn.f32, which gives the IEEE quotient where no intermediate leaves the normal
// range. That holds for x finite and >= -87 (d < 2^126, so the reciprocal is normal), so for every
// |x| <= kSiluInsideLimit. The residual is taken as d q - x, not x - d q, so that x = -0 keeps its sign.
__device__ __forceinline__ float silu_quotient(float x, float d) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
    r = __fmaf_rn(r, __fmaf_rn(-d, r, 1.0f), r);
    const float q = __fmul_rn(x, r);
    const float minus_residual = __fmaf_rn(d, q, -x);
    return __fmaf_rn(-minus_residual, r, q);
}

// fq::silu(x) for |x| <= kSiluInsideLimit.
__device__ __forceinline__ float silu_inside(float x) {
    return silu_quotient(x, 1.0f + detail::scale_normal(detail::exp_parts(-x)));
}

// The largest magnitudes among the 16-bit inputs in the halves of w that `mask` keeps (0x7FFF per half
// taken, 0 per half ignored), as the bits of two halves: 16x2 maxima of the sign-cleared bits, which order
// like the magnitudes (NaN above Inf). Eight inputs in three instructions, not eight float compares.
__device__ __forceinline__ uint32_t max_bits2(const uint4& w, uint32_t mask) {
    return __vmaxu2(__vmaxu2(w.x & mask, w.y & mask), __vmaxu2(w.z & mask, w.w & mask));
}

// Whether the inputs (bf16 or fp16, kIn) whose max_bits2 is m all have |x| <= kSiluInsideLimit; NaN and
// Inf fail. One 16x2 maximum with the limit's bits (86.5 is exact in both formats) and one compare. (No
// __vcmpgtu2: it is emulated in ~6 instructions.)
template <InType kIn>
__device__ __forceinline__ bool silu_inside_all(uint32_t m) {
    constexpr uint32_t kLimit2 = (kIn == InType::Bf16 ? 0x42ADu : 0x5568u) * 0x10001u;  // 86.5 in both halves
    return __vmaxu2(m, kLimit2) == kLimit2;
}

// The largest magnitude of the inputs (bf16 or fp16, kIn) whose max_bits2 is m, as a float (NaN if one is).
template <InType kIn>
__device__ __forceinline__ float max_magnitude(uint32_t m) {
    return load_input(kIn, uint16_t(max(m & 0xFFFFu, m >> 16)));
}

// Whether the fast SwiGLU-OAI below serves every output whose gate has magnitude <= gate_max and whose up is
// not NaN (up_max <= Inf): the exponent -alpha min(g, limit) stays within +-86.5 (86 with room for the
// product's rounding), so exp needs no clamp and 1 + exp (< 2^125) has a normal reciprocal; and limit > 0
// (the API refuses others; tested here because the clamp's exactness rests on it), so that fminf / fmaxf
// clamp exactly as the reference's comparisons do (with a negative limit the bounds cross, and a zero limit
// meets signed zeros). NaN or Inf gates fail; a NaN up would be lost by fmaxf.
__device__ __forceinline__ bool swiglu_inside_all(float gate_max, float up_max, const SwigluParams& p) {
    return fabsf(p.alpha) * gate_max <= 86.0f && up_max <= INFINITY && p.limit > 0.0f;
}

// fq::swiglu_gate(g) where swiglu_inside_all holds: the same clamp and exponent, the sigmoid's reciprocal by
// silu_quotient (the IEEE 1 / d here) instead of the division call.
__device__ __forceinline__ float swiglu_gate_inside(float g, const SwigluParams& p) {
    const float gc = fminf(g, p.limit);
    return gc * silu_quotient(1.0f, 1.0f + detail::scale_normal(detail::exp_parts(-p.alpha * gc)));
}

// fq::swiglu_up(u) where swiglu_inside_all holds.
__device__ __forceinline__ float swiglu_up_inside(float u, const SwigluParams& p) {
    return fminf(fmaxf(u, -p.limit), p.limit) + p.beta;
}

}  // namespace fq::cuda
