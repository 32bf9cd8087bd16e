// Activations of docs/spec.md §2, written once for the host reference and the CUDA kernels. Every value comes
// from fp32 arithmetic with explicit operation order and the library's portable exp/erf/tanh, so all
// backends produce the same bits.
#pragma once

#include "formats.h"
#include "portable_math.h"
#include "types.h"

namespace fq {

enum class Rounding : int32_t { Fp32 = 0, RoundProduct = 1, RoundBoth = 2 };
enum class InType : int32_t { Bf16 = 0, Fp16 = 1 };

struct SwigluParams {
    float alpha = 1.702f, beta = 1.0f, limit = 7.0f;
};

// Rounds an fp32 intermediate to the input dtype and back (the ROUND_* modes).
FQ_HD float round_to_input(InType t, float x) {
    return t == InType::Bf16 ? bf16_to_float(float_to_bf16(x)) : fp16_to_float(float_to_fp16(x));
}

FQ_HD float load_input(InType t, uint16_t bits) {
    return t == InType::Bf16 ? bf16_to_float(bits) : fp16_to_float(bits);
}

// x / (1 + exp(-x)), evaluated as written: past x ~ -88.72 exp(-x) is +Inf and the quotient -0. At x = -Inf
// the quotient -Inf / Inf would be NaN; the limit -0 is returned instead (docs/spec.md §2).
FQ_HD float silu(float x) { return x == -INFINITY ? -0.0f : x / (1.0f + portable_exp(-x)); }

FQ_HD float gelu_erf(float x) {
    const float kInvSqrt2 = 0.70710678118654752f;
    return 0.5f * x * (1.0f + portable_erf(x * kInvSqrt2));
}

FQ_HD float gelu_tanh(float x) {
    const float kSqrt2OverPi = 0.79788456080286536f, kCubic = 0.044715f;
    const float inner = kSqrt2OverPi * fmaf(kCubic * x * x, x, x);  // sqrt(2/pi) (x + 0.044715 x^3)
    return 0.5f * x * (1.0f + portable_tanh(inner));
}

FQ_HD float relu(float x) { return x > 0.0f ? x : (is_nan(x) ? x : 0.0f); }

FQ_HD float relu_squared(float x) {
    const float r = relu(x);
    return r * r;
}

FQ_HD float identity(float x) { return x; }

// Test-only (FQ_TEST_EXTENSIONS): softsign x / (1 + |x|).
FQ_HD float test_softsign(float x) { return x / (1.0f + fabsf(x)); }

// The ungated activation act(x): the function its line of FQ_ACTIVATIONS (enum_lists.h) names.
FQ_HD float activate(Act a, float x) {
    switch (a) {
#define FQ_ACTIVATE_CASE(Internal, value, NAME, cli, f) \
    case Act::Internal: return f(x);
        FQ_ACTIVATIONS(FQ_ACTIVATE_CASE)
#undef FQ_ACTIVATE_CASE
    }
    return x;
}

// SwiGLU-OAI (gpt-oss): g' = min(g, limit); u' = clamp(u, -limit, limit); g' * sigmoid(alpha g') * (u' + beta),
// evaluated as (g' sigmoid(alpha g')) (u' + beta): the gate factor and the up factor, each a function of one
// input (the CUDA activation tables store the gate factor).
// Written as comparisons, not fminf/fmaxf, so a NaN input propagates (as torch.clamp does).
FQ_HD float swiglu_gate(float g, const SwigluParams& p) {
    const float gc = g > p.limit ? p.limit : g;
    const float sig = 1.0f / (1.0f + portable_exp(-p.alpha * gc));
    // exp overflows to +Inf where -alpha gc is large (docs/spec.md §2), so sig is 0 and the factor is the
    // limit's zero of gc's sign: gc * 0, except at gc = -Inf, where that product would be NaN.
    return sig == 0.0f ? copysignf(0.0f, gc) : gc * sig;
}
FQ_HD float swiglu_up(float u, const SwigluParams& p) {
    const float uc = u > p.limit ? p.limit : (u < -p.limit ? -p.limit : u);
    return uc + p.beta;
}
FQ_HD float swiglu_oai(float g, float u, const SwigluParams& p) { return swiglu_gate(g, p) * swiglu_up(u, p); }

// The gated activation act(g) * u with the intermediate-rounding mode of docs/spec.md §2.
FQ_HD float activate_gated(Act a, float g, float u, Rounding r, InType t, const SwigluParams& p) {
    if (a == Act::SwigluOai) {
        const float y = swiglu_oai(g, u, p);
        return r == Rounding::Fp32 ? y : round_to_input(t, y);
    }
    float ag = activate(a, g);
    if (r == Rounding::RoundBoth) ag = round_to_input(t, ag);
    const float y = ag * u;
    return r == Rounding::Fp32 ? y : round_to_input(t, y);
}

}  // namespace fq
