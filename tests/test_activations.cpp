// docs/spec.md §2: each activation, evaluated in fp32 through the shared functions, against a float64
// evaluation of the same formula. Tolerances are a few fp32 ulp of the result plus a small absolute
// term where the formula cancels (gelu near -4, where 1 + erf(x) loses digits in any fp32 evaluation).
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "common/activation.h"
#include "common/gate_layout.h"

using namespace fq;

namespace {
double silu64(double x) { return x / (1.0 + std::exp(-x)); }
double gelu_erf64(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh64(double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double swiglu64(double g, double u, double a, double b, double l) {
    g = std::min(g, l);
    u = std::max(std::min(u, l), -l);
    return g / (1.0 + std::exp(-a * g)) * (u + b);
}

void check_close(float got, double want, double rel, double abs_tol) {
    CHECK(std::fabs(double(got) - want) <= rel * std::fabs(want) + abs_tol);
}
}  // namespace

TEST_CASE("silu, gelu_erf and gelu_tanh match a float64 evaluation") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-12.0f, 12.0f);
    for (int i = 0; i < 200000; ++i) {
        const float x = d(rng);
        CAPTURE(x);
        check_close(silu(x), silu64(x), 4e-7, 1e-36);
        check_close(gelu_erf(x), gelu_erf64(x), 4e-7, 4e-7);
        check_close(gelu_tanh(x), gelu_tanh64(x), 4e-7, 4e-7);
    }
    CHECK(silu(0.0f) == 0.0f);
    CHECK(std::fabs(silu(-100.0f)) < 1e-36f);  // true value -3.7e-42; below the documented 1e-36 floor
    CHECK(silu(-100.0f) <= 0.0f);
    CHECK(silu(INFINITY) == INFINITY);
    CHECK(silu(100.0f) == 100.0f);
    CHECK(std::isnan(silu(NAN)));
}

TEST_CASE("relu and relu_squared are exact and propagate NaN") {
    CHECK(activate(Act::Relu, -3.0f) == 0.0f);
    CHECK(activate(Act::Relu, 3.0f) == 3.0f);
    CHECK(activate(Act::ReluSquared, 3.0f) == 9.0f);
    CHECK(activate(Act::ReluSquared, -3.0f) == 0.0f);
    CHECK(std::isnan(activate(Act::Relu, NAN)));
    CHECK(activate(Act::Identity, -1.25f) == -1.25f);
}

TEST_CASE("swiglu_oai clamps gate above and up on both sides, then matches float64") {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> d(-12.0f, 12.0f);
    const SwigluParams p;  // 1.702, 1.0, 7.0
    for (int i = 0; i < 100000; ++i) {
        const float g = d(rng), u = d(rng);
        CAPTURE(g);
        CAPTURE(u);
        // alpha*g is rounded to fp32 before exp: exp amplifies that rounding by |alpha g| (conditioning).
        const double cond = 1.2e-7 * std::fabs(double(p.alpha) * std::min(g, p.limit));
        check_close(swiglu_oai(g, u, p), swiglu64(g, u, p.alpha, p.beta, p.limit), 8e-7 + cond, 1e-30);
    }
    CHECK(swiglu_oai(100.0f, 100.0f, p) == swiglu_oai(7.0f, 7.0f, p));
    CHECK(swiglu_oai(2.0f, -100.0f, p) == swiglu_oai(2.0f, -7.0f, p));
    const SwigluParams no_clamp{1.0f, 0.0f, INFINITY};
    check_close(swiglu_oai(20.0f, 3.0f, no_clamp), 20.0 / (1 + std::exp(-20.0)) * 3.0, 8e-7, 0);
}

TEST_CASE("gated rounding modes round the intermediates to the input type as docs/spec.md §2 says") {
    const SwigluParams p;
    const float g = 1.3f, u = 0.77f;
    const float fp32 = activate_gated(Act::Silu, g, u, Rounding::Fp32, InType::Bf16, p);
    CHECK(fp32 == silu(g) * u);
    const float prod = activate_gated(Act::Silu, g, u, Rounding::RoundProduct, InType::Bf16, p);
    CHECK(prod == bf16_to_float(float_to_bf16(silu(g) * u)));
    const float both = activate_gated(Act::Silu, g, u, Rounding::RoundBoth, InType::Fp16, p);
    const float sg = fp16_to_float(float_to_fp16(silu(g)));
    CHECK(both == fp16_to_float(float_to_fp16(sg * u)));
}

TEST_CASE("gate layouts find gate and up where docs/spec.md §2 puts them") {
    // split, gate first: [g | u]
    CHECK(gate_columns(GateLayout::Split, GateOrder::GateFirst, 8, 32, 3).gate == 3);
    CHECK(gate_columns(GateLayout::Split, GateOrder::GateFirst, 8, 32, 3).up == 11);
    CHECK(gate_columns(GateLayout::Split, GateOrder::UpFirst, 8, 32, 3).gate == 11);
    // interleaved g0 u0 g1 u1
    CHECK(gate_columns(GateLayout::Interleaved, GateOrder::GateFirst, 8, 32, 3).gate == 6);
    CHECK(gate_columns(GateLayout::Interleaved, GateOrder::GateFirst, 8, 32, 3).up == 7);
    // seeds/004: B = 32, up (linear) first: X_b = C[:, 64b : 64b+32], G_b = C[:, 64b+32 : 64b+64]
    const GatePair p = gate_columns(GateLayout::BlockInterleaved, GateOrder::UpFirst, 128, 32, 37);
    CHECK(p.up == 64 + 5);
    CHECK(p.gate == 64 + 32 + 5);
}
