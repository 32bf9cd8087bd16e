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

}  // namespace fq::cuda
