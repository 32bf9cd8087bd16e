// Correctly rounded fp32 division for 8 elements at a time, without a branch per element.
//
// nvcc's a / b is a fast path (reciprocal estimate, one Newton step, one residual correction) plus an
// FCHK test per division that branches to a slow path for operands where the fast path could be
// wrong (zero/denormal/huge exponents). That branch splits an unrolled loop into one basic block per
// element, so the 8 independent element chains of a thread no longer interleave (measured on the H100:
// the kernel ran latency-bound). Here the fast path runs for all 8, a conservative range test decides
// for all 8 together whether it is known to be exact, and only then (rarely) the 8 are redone with
// IEEE division. The result equals a / b bit for bit (tests/test_gpu_divide.cu checks ~10^9 operand
// pairs across the whole float range against the hardware's IEEE division).
#pragma once

#include <cstdint>

namespace fq::cuda {

__device__ __forceinline__ float rcp_estimate(float b) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(b));
    return r;
}

// The fast path: q = RN(a / b) whenever fast_division_exact(a, b) holds.
__device__ __forceinline__ float fast_divide(float a, float b, float r /* refined 1/b */) {
    const float q0 = a * r;  // a multiply, not an FMA with +0, so that -0 / b keeps its sign
    const float rem = fmaf(-b, q0, a);
    return fmaf(r, rem, q0);
}

__device__ __forceinline__ float refined_reciprocal(float b) {
    const float r0 = rcp_estimate(b);
    return fmaf(r0, fmaf(-b, r0, 1.0f), r0);
}

// Biased exponent field.
__device__ __forceinline__ uint32_t exponent_field(float x) { return (__float_as_uint(x) >> 23) & 0xFFu; }

// Operands for which the fast path is exact: b and a normal with exponents well inside the range (or a
// zero), and a quotient whose exponent is too. Conservative on purpose: it is checked, not proven here,
// that every pair it admits divides exactly (the device test), and anything else takes the IEEE path.
__device__ __forceinline__ bool fast_division_exact(float a, float b) {
    const uint32_t ea = exponent_field(a), eb = exponent_field(b);
    const bool a_zero = (__float_as_uint(a) << 1) == 0u;
    const bool b_ok = eb - 3u <= 248u;                 // eb in [3, 251]
    const bool a_ok = ea - 3u <= 248u;                 // ea in [3, 251]
    const bool q_ok = (ea - eb + 120u) <= 240u;         // ea - eb in [-120, 120]
    return b_ok && (a_zero || (a_ok && q_ok));
}

// q[i] = a[i] / b[i], IEEE round-to-nearest.
__device__ __forceinline__ void divide8(const float a[8], const float b[8], float q[8]) {
    bool exact = true;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        q[i] = fast_divide(a[i], b[i], refined_reciprocal(b[i]));
        exact &= fast_division_exact(a[i], b[i]);
    }
    if (!exact) {
#pragma unroll
        for (int i = 0; i < 8; ++i) q[i] = a[i] / b[i];
    }
}

// q[i] = a[i] / b, IEEE round-to-nearest, one divisor for all 8.
__device__ __forceinline__ void divide8_by(const float a[8], float b, float q[8]) {
    const float r = refined_reciprocal(b);
    bool exact = true;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        q[i] = fast_divide(a[i], b, r);
        exact &= fast_division_exact(a[i], b);
    }
    if (!exact) {
#pragma unroll
        for (int i = 0; i < 8; ++i) q[i] = a[i] / b;
    }
}

}  // namespace fq::cuda
