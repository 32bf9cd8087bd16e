// The grouped GEMM's epilogue values: C as bf16, the gate / up inputs of a C tile's outputs, act(g) * u, the
// rowwise group amax and the codes of a group's values, as the fused kernels and the host reference compute them.
#pragma once

#include "../blocks/amax.cuh"
#include "../blocks/quantize.cuh"
#include "../silu_fast.cuh"
#include "scheduler.cuh"
#include "sm90.cuh"

namespace fq::gemm {

#ifdef FQ_SM90A
using sm90::named_barrier;

// Two floats as bf16 (round to nearest even), lo in the low half: one cvt, the bits of float_to_bf16 for
// every non-NaN value.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
// The same by float_to_bf16 (the host reference's bits, NaN included).
__device__ __forceinline__ uint32_t pack_bf16x2_exact(float lo, float hi) {
    return uint32_t(float_to_bf16(lo)) | (uint32_t(float_to_bf16(hi)) << 16);
}
// float_to_bf16's bits of a pair: the hardware conversion unless one is NaN (its NaN differs from float_to_bf16's).
__device__ __forceinline__ uint32_t pack_bf16x2_reference(float lo, float hi) {
    return lo == lo && hi == hi ? pack_bf16x2(lo, hi) : pack_bf16x2_exact(lo, hi);
}

// ---- The epilogue: one unit from its two slots ---------------------------------------------------------------

// The gate and up inputs (bf16 C) of the four outputs i0 .. i0+3 of a C tile (i0 a multiple of 4), from the
// tile's slot row: two 8-byte reads, or one 16-byte read for adjacent pairs.
template <Pairing P>
__device__ __forceinline__ void gate_up4(const Params& p, const uint32_t* srow, int row, int i0, float (&g)[4],
                                         float (&u)[4]) {
    // The order is chosen once for the four outputs (which half of a word, or which word, is the gate), not
    // per value. A bf16 word half as a float: the low half shifted up (byte_perm 0x1044), the high half kept.
    const bool gate_first = p.order == GateOrder::GateFirst;
    auto lo = [](uint32_t w) { return __uint_as_float(w << 16); };
    auto hi = [](uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); };
    if constexpr (P == Pairing::Adjacent) {  // output i <- columns 2i, 2i + 1: words i0 .. i0+3
        const uint4 w = *reinterpret_cast<const uint4*>(srow + slot_word(row, i0));
        const uint32_t ws[4] = {w.x, w.y, w.z, w.w};
        const uint32_t gate_half = gate_first ? 0x1044u : 0x3244u, up_half = gate_first ? 0x3244u : 0x1044u;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            g[k] = __uint_as_float(__byte_perm(ws[k], 0, gate_half));
            u[k] = __uint_as_float(__byte_perm(ws[k], 0, up_half));
        }
    } else {  // Halves: columns i and 64 + i; Blocks32: 64b + r and 64b + 32 + r (four never cross a block)
        const int c0 = P == Pairing::Halves ? i0 : (i0 / 32) * 64 + i0 % 32;
        const int c1 = c0 + (P == Pairing::Halves ? kHalfN : 32);
        const uint2 a = *reinterpret_cast<const uint2*>(srow + slot_word(row, (gate_first ? c0 : c1) / 2));
        const uint2 b = *reinterpret_cast<const uint2*>(srow + slot_word(row, (gate_first ? c1 : c0) / 2));
        g[0] = lo(a.x); g[1] = hi(a.x); g[2] = lo(a.y); g[3] = hi(a.y);
        u[0] = lo(b.x); u[1] = hi(b.x); u[2] = lo(b.y); u[3] = hi(b.y);
    }
}

// act(g) * u (docs/spec.md §2) of four outputs, the activation fixed at compile time. SiLU and SwiGLU-OAI take the
// fused kernels' fast path (silu_fast.cuh: the same bits) where all four inputs are inside its range and the
// intermediates are fp32; everything else goes through the shared exact code.
template <Act A>
__device__ __forceinline__ void activate4(const Params& p, const float (&g)[4], const float (&u)[4], float (&y)[4]) {
    bool fast = p.rounding == Rounding::Fp32 && (A == Act::Silu || A == Act::SwigluOai);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        if constexpr (A == Act::Silu) fast = fast && fabsf(g[k]) <= cuda::kSiluInsideLimit;  // NaN fails
        if constexpr (A == Act::SwigluOai) fast = fast && cuda::swiglu_inside_all(fabsf(g[k]), fabsf(u[k]), p.swiglu);
    }
    if (fast) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            if constexpr (A == Act::Silu) y[k] = cuda::silu_inside(g[k]) * u[k];
            if constexpr (A == Act::SwigluOai) y[k] = cuda::swiglu_gate_inside(g[k], p.swiglu) * cuda::swiglu_up_inside(u[k], p.swiglu);
        }
        return;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) y[k] = activate_gated(A, g[k], u[k], p.rounding, InType::Bf16, p.swiglu);
}

// y of the four outputs 4l .. 4l+3 (lane l; they lie in C tile l / 16) of kRows unit rows, rows[i] of the
// unit at srow[i] of its slot.
template <Pairing P, Act A, int kRows>
__device__ __forceinline__ void y4(const Params& p, uint32_t* const (&srow)[kRows], const int (&rows)[kRows], int lane,
                                   const float (&prob)[kRows], float (&y)[kRows][4]) {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        float g[4], u[4];
        gate_up4<P>(p, srow[i], rows[i], 4 * (lane % 16), g, u);
        activate4<A>(p, g, u, y[i]);
        if (p.prob)
#pragma unroll
            for (int k = 0; k < 4; ++k) y[i][k] = prob[i] * y[i][k];
    }
}

template <Pairing P, int kRows>
__device__ __forceinline__ void y4_of(const Params& p, uint32_t* const (&srow)[kRows], const int (&rows)[kRows], int lane,
                                      const float (&prob)[kRows], float (&y)[kRows][4]) {
    switch (p.act) {  // every activation of FQ_ACTIVATIONS (enum_lists.h)
#define FQ_Y4_CASE(Internal, ...) \
    case Act::Internal: return y4<P, Act::Internal>(p, srow, rows, lane, prob, y);
        FQ_ACTIVATIONS(FQ_Y4_CASE)
#undef FQ_Y4_CASE
    }
}

// The codes of N values of one quantization group, little-endian in a word (N <= 4): y divided by the scale as the
// row kernels divide (cuda::divide_by_scale; `in_range`: the group's amax bounds |y| within the quotient's range),
// then the hardware fp8 conversion (two values a cvt), or the shared encoder for the other one-byte formats: the
// same byte as quantize_value. v is overwritten.
template <int N>
__device__ __forceinline__ uint32_t quantize_codes(float (&v)[N], const cuda::Divisor& d, bool in_range,
                                                   const QuantParams& q) {
    static_assert(N >= 1 && N <= 4, "codes of one word");
    auto& values = *reinterpret_cast<float(*)[1][N]>(&v);  // one chunk of N
    cuda::divide_by_scale(values, [&] { return in_range; }, d, q, values);
    if (q.out == DType::E4M3FN || q.out == DType::E5M2) return cuda::encode_fp8_word(v, q.out);
    uint32_t code = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) code |= uint32_t(encode_scaled(q.out, v[k])) << (8 * k);
    return code;
}

// Whether act(g) * u (SiLU or SwiGLU-OAI) takes the fast path for this one output: activate4's test, per value (NaN
// gates fail it). lean_rows and the row-pair epilogue test each value; the rare one off it goes to gated_exact.
template <Act A>
__device__ __forceinline__ bool on_fast_path(float g, float u, const SwigluParams& sw) {
    if constexpr (A == Act::Silu) return fabsf(g) <= cuda::kSiluInsideLimit;
    else return cuda::swiglu_inside_all(fabsf(g), fabsf(u), sw);
}

// act(g) * u off the fast path (a gate past its range, or NaN), as activate4's exact branch computes it: one
// out-of-line copy, so lean_rows stays straight-line and small.
template <Act A>
__device__ __noinline__ float gated_exact(float g, float u, SwigluParams sw) {
    return activate_gated(A, g, u, Rounding::Fp32, InType::Bf16, sw);
}

#endif  // FQ_SM90A

}  // namespace fq::gemm
