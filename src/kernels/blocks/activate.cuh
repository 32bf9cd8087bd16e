// Activating 8 loaded outputs through the shared FQ_HD code of src/common (the host reference's bytes),
// with the fast path of SiLU and SwiGLU-OAI (silu_fast.cuh), and the routing probability.
#pragma once

#include "../silu_fast.cuh"
#include "load.cuh"

namespace fq::cuda {

// Input i of the 8 in h as fp32 (i a constant after unrolling: a runtime index goes to local memory). bf16
// straight from its 32-bit word: one shift (even i) or one mask (odd i), not an extract and a shift.
template <InType kIn>
__device__ __forceinline__ float input_at(const Half8& h, int i) {
    if constexpr (kIn == InType::Bf16) {
        uint32_t w;
        memcpy(&w, &h.h[i & ~1], 4);
        return __uint_as_float(i & 1 ? w & 0xFFFF0000u : w << 16);
    } else {
        return load_input(kIn, h.h[i]);
    }
}

// The fp32 gate and up values of output i of 8 (not gated: g only).
template <class S>
__device__ __forceinline__ void gate_and_up(const Params& p, const Raw8& r, int i, float& g, float& u) {
    if constexpr (S::gate == GateKind::Interleaved) {
        const Half8& h = i < 4 ? r.a : r.b;
        const float even = input_at<S::in>(h, 2 * (i & 3)), odd = input_at<S::in>(h, 2 * (i & 3) + 1);
        const bool gate_first = p.order == GateOrder::GateFirst;
        g = gate_first ? even : odd;
        u = gate_first ? odd : even;
    } else {
        g = input_at<S::in>(r.a, i);
        if constexpr (S::gate == GateKind::TwoStreams) u = input_at<S::in>(r.b, i);
    }
}

// The halves of the 16-bit inputs that are gates, as a mask over each 32-bit word of 8 gate inputs
// (interleaved: every other input is an up).
template <class S>
__device__ __forceinline__ uint32_t gate_halves(const Params& p) {
    if constexpr (S::gate != GateKind::Interleaved) return 0x7FFF7FFFu;
    return p.order == GateOrder::GateFirst ? 0x00007FFFu : 0x7FFF0000u;
}

// Output i of 8, before the routing probability, through the shared FQ_HD code of src/common.
template <class S, bool kPlain>
__device__ __forceinline__ float activated(const Params& p, const Raw8& r, int i) {
    const Rounding rounding = kPlain ? Rounding::Fp32 : p.rounding;
    float g, u;
    gate_and_up<S>(p, r, i, g, u);
    if constexpr (S::gate == GateKind::None) {
        const float v = activate(S::act, g);
        return rounding == Rounding::Fp32 ? v : round_to_input(S::in, v);
    } else {
        return activate_gated(S::act, g, u, rounding, S::in, p.swiglu);
    }
}

// The routing probability of row m multiplied into its 8 outputs (docs/spec.md §2), where the descriptor has one.
__device__ __forceinline__ void apply_row_prob(const Params& p, int64_t m, float y[8]) {
    if (!p.row_prob) return;
    const float prob = p.row_prob[m];
#pragma unroll
    for (int i = 0; i < 8; ++i) y[i] = prob * y[i];
}

// The activations with a fast path (silu_fast.cuh): SiLU, and SwiGLU-OAI on a gate.
template <class S>
constexpr bool has_fast_activation() { return S::act == Act::Silu || (S::act == Act::SwigluOai && S::gate != GateKind::None); }

// The fast path where every input of the 8 is inside its range (checked on the bits, all 8 at once):
// eight independent chains with no clamp, flag or branch between them, so they interleave. False, with y
// untouched, where it does not apply (rare: large magnitudes, Inf, NaN; other activations; rounded
// intermediates): the caller takes the exact path. kPlain: as activate8.
template <class S, bool kPlain = false>
__device__ __forceinline__ bool activate8_fast(const Params& p, const Raw8& r, float y[8]) {
    if constexpr (!has_fast_activation<S>()) {
        return false;
    } else {
        if (!kPlain && p.rounding != Rounding::Fp32) return false;
        uint4 a, b;
        memcpy(&a, &r.a, 16);
        memcpy(&b, &r.b, 16);
        const uint32_t gates = gate_halves<S>(p);  // interleaved: the other halves are ups, in a and b
        uint32_t gate_bits = max_bits2(a, gates);
        if constexpr (S::gate == GateKind::Interleaved) gate_bits = __vmaxu2(gate_bits, max_bits2(b, gates));
        bool fast;
        if constexpr (S::act == Act::Silu) {
            fast = silu_inside_all<S::in>(gate_bits);
        } else {
            const uint32_t ups = gates ^ 0x7FFF7FFFu;
            const uint32_t up_bits = S::gate == GateKind::Interleaved ? __vmaxu2(max_bits2(a, ups), max_bits2(b, ups))
                                                                      : max_bits2(b, 0x7FFF7FFFu);
            fast = swiglu_inside_all(max_magnitude<S::in>(gate_bits), max_magnitude<S::in>(up_bits), p.swiglu);
        }
        if (!fast) return false;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            float g, u;
            gate_and_up<S>(p, r, i, g, u);
            if constexpr (S::act == Act::Silu) {
                y[i] = silu_inside(g);
                if constexpr (S::gate != GateKind::None) y[i] = y[i] * u;
            } else {
                y[i] = swiglu_gate_inside(g, p.swiglu) * swiglu_up_inside(u, p.swiglu);
            }
        }
        return true;
    }
}

// The 8 outputs of r at row m, routing probability included (docs/spec.md §2). kPlain: the launch guarantees FP32
// intermediates. SiLU and SwiGLU-OAI with FP32 intermediates take their fast paths in either kernel
// (the general one tests the rounding mode at run time).
template <class S, bool kPlain = false>
__device__ __forceinline__ void activate8(const Params& p, const Raw8& r, int64_t m, float y[8]) {
    if (!activate8_fast<S, kPlain>(p, r, y)) {
#pragma unroll
        for (int i = 0; i < 8; ++i) y[i] = activated<S, kPlain>(p, r, i);
    }
    apply_row_prob(p, m, y);
}

}  // namespace fq::cuda
