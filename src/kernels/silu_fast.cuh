// SiLU without the IEEE division's range check (device only): the same bits as fq::silu of
// src/common/activation.h wherever it claims its result, which tests/test_gpu_math.cu checks for every
// bf16 and fp16 input.
#pragma once

#include "../common/activation.h"

namespace fq::cuda {

// SiLU's quotient x / d, d = 1 + exp(-x), without the range check and out-of-line call of the IEEE
// division: MUFU reciprocal, one Newton step, the quotient and one residual correction -- the fast path
// nvcc emits for div.rn.f32, which gives the IEEE quotient where no intermediate leaves the normal
// range. That holds for x finite and >= -87 (d < 2^126, so the reciprocal is normal); anything else
// sets `outside` and the caller divides exactly. The residual is taken as d q - x, not x - d q, so that
// x = -0 keeps its sign. tests/test_gpu_math.cu checks every bf16 and fp16 x against the IEEE division.
__device__ __forceinline__ float silu_quotient(float x, float d, bool& outside) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
    r = __fmaf_rn(r, __fmaf_rn(-d, r, 1.0f), r);
    const float q = __fmul_rn(x, r);
    const float minus_residual = __fmaf_rn(d, q, -x);
    outside |= !(x >= -87.0f && x <= 3.40282347e38f);
    return __fmaf_rn(-minus_residual, r, q);
}

__device__ __forceinline__ float silu_fast(float x, bool& outside) {
    return silu_quotient(x, 1.0f + portable_exp_normal_range(-x), outside);
}

// silu_fast for |x| <= kSiluInsideLimit, where it needs neither the clamp of portable_exp_normal_range
// (exp(-x) stays normal) nor the range flag (silu_quotient's range holds): the same bits there.
constexpr float kSiluInsideLimit = 86.5f;

// x / d for |x| <= kSiluInsideLimit (silu_quotient without the range flag).
__device__ __forceinline__ float silu_quotient_inside(float x, float d) {
    bool unused = false;
    return silu_quotient(x, d, unused);
}

__device__ __forceinline__ float silu_inside(float x) {
    return silu_quotient_inside(x, 1.0f + detail::scale_normal(detail::exp_parts(-x)));
}

// Whether the 16-bit inputs (bf16 or fp16, kIn) in the halves of w that `mask` keeps (0x7FFF per half
// taken, 0 per half ignored) all have |x| <= kSiluInsideLimit; NaN and Inf fail. On the bits, two halves
// at a time: sign cleared, 16x2 maxima, one compare against the limit's bits (86.5 is exact in both
// formats), instead of two float compares and two clamps per input.
template <InType kIn>
__device__ __forceinline__ bool silu_inside_all(const uint4& w, uint32_t mask) {
    constexpr uint32_t kLimitBits = kIn == InType::Bf16 ? 0x42ADu : 0x5568u;  // 86.5
    const uint32_t m = __vmaxu2(__vmaxu2(w.x & mask, w.y & mask), __vmaxu2(w.z & mask, w.w & mask));
    return __vcmpgtu2(m, kLimitBits * 0x10001u) == 0;
}

}  // namespace fq::cuda
