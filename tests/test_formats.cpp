// docs/spec.md §1: every code of each 8-bit type decodes to its published value, and the encoder rounds to
// nearest-even, saturates and writes NaN as the hardware does. The expected values are computed here
// from the formats' published definitions (OCP FP8 v1.0, AMD fnuz), independently of src/common.
#include <doctest/doctest.h>

#include <cmath>
#include <ios>
#include <limits>
#include <random>

#include "common/formats.h"
#include "common/quantize.h"

using namespace fq;

namespace {

struct Published {
    const char* name;
    const MiniFloat& f;
    int exp_bits, man_bits, bias;
    bool fnuz;      // AMD: 0x80 is the only NaN, no -0, no Inf, all exponents finite
    bool ieee_inf;  // e5m2: exponent all-ones is Inf (mantissa 0) or NaN
};

// The value of `code` from the published definition: (-1)^s 2^(e-bias) (1 + m/2^M), subnormals 2^(1-bias) m/2^M.
double published_value(const Published& p, unsigned code) {
    const unsigned width = 1 + p.exp_bits + p.man_bits;
    const unsigned s = code >> (width - 1), e = (code >> p.man_bits) & ((1u << p.exp_bits) - 1),
                   m = code & ((1u << p.man_bits) - 1);
    const unsigned emax = (1u << p.exp_bits) - 1;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (p.fnuz && code == 0x80) return nan;
    if (!p.fnuz && p.ieee_inf && e == emax) return m == 0 ? (s ? -INFINITY : INFINITY) : nan;
    if (!p.fnuz && !p.ieee_inf && width == 8 && e == emax && m == (1u << p.man_bits) - 1) return nan;  // e4m3fn
    const double mag = e == 0 ? std::ldexp(double(m), 1 - p.bias - p.man_bits)
                              : std::ldexp(1.0 + double(m) / (1 << p.man_bits), int(e) - p.bias);
    return s ? -mag : mag;
}

const Published kTypes[] = {
    {"e4m3fn", kE4M3FN, 4, 3, 7, false, false},
    {"e4m3fnuz", kE4M3FNUZ, 4, 3, 8, true, false},
    {"e5m2", kE5M2, 5, 2, 15, false, true},
};

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

TEST_CASE("all 256 codes of each fp8 type decode to the published values") {
    for (const Published& p : kTypes) {
        CAPTURE(p.name);
        for (unsigned c = 0; c < 256; ++c) {
            CAPTURE(c);
            CHECK(same(double(decode_minifloat(p.f, c)), published_value(p, c)));
        }
    }
    // Anchors quoted from the specifications.
    CHECK(decode_minifloat(kE4M3FN, 0x7E) == 448.0f);
    CHECK(decode_minifloat(kE4M3FN, 0x01) == 0.001953125f);  // 2^-9
    CHECK(decode_minifloat(kE4M3FNUZ, 0x7F) == 240.0f);
    CHECK(decode_minifloat(kE5M2, 0x7B) == 57344.0f);
    CHECK(std::isinf(decode_minifloat(kE5M2, 0x7C)));
    CHECK(decode_minifloat(kE5M2, 0x01) == std::ldexp(1.0f, -16));
}

TEST_CASE("all 16 fp4 e2m1 codes decode to 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives") {
    const float mags[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (unsigned c = 0; c < 16; ++c) CHECK(decode_minifloat(kE2M1, c) == (c & 8 ? -mags[c & 7] : mags[c & 7]));
}

TEST_CASE("all 256 e8m0 codes decode to 2^(code-127), 0xFF is NaN") {
    for (unsigned c = 0; c < 255; ++c) CHECK(double(decode_e8m0(uint8_t(c))) == std::ldexp(1.0, int(c) - 127));
    CHECK(std::isnan(decode_e8m0(0xFF)));
}

TEST_CASE("encoding every finite code's value gives the code back") {
    for (const Published& p : kTypes)
        for (unsigned c = 0; c < 256; ++c) {
            const double v = published_value(p, c);
            if (std::isnan(v) || std::isinf(v)) continue;
            CAPTURE(p.name);
            CAPTURE(c);
            const unsigned expect = (p.fnuz && v == 0) ? 0u : c;  // fnuz has no -0
            CHECK(encode_minifloat(p.f, float(v)) == expect);
        }
}

TEST_CASE("encoding rounds to nearest with ties to even and matches an exhaustive nearest search") {
    std::mt19937 rng(1234);
    for (const Published& p : kTypes) {
        // The finite codes sorted by value (positive half), for a brute-force nearest search.
        std::vector<std::pair<double, unsigned>> grid;
        for (unsigned c = 0; c < 128; ++c) {
            const double v = published_value(p, c);
            if (std::isfinite(v)) grid.push_back({v, c});
        }
        const double qmax = grid.back().first;
        auto nearest = [&](double a) -> unsigned {
            if (a >= qmax) return grid.back().second;  // satfinite
            for (size_t i = 0; i + 1 < grid.size(); ++i) {
                const double lo = grid[i].first, hi = grid[i + 1].first;
                if (a > hi) continue;
                const double mid = (lo + hi) / 2;
                if (a < mid) return grid[i].second;
                if (a > mid) return grid[i + 1].second;
                return (grid[i].second & 1) ? grid[i + 1].second : grid[i].second;  // tie: even code
            }
            return grid.back().second;
        };
        std::uniform_real_distribution<double> log_mag(-20, std::log2(qmax) + 1);
        for (int n = 0; n < 20000; ++n) {
            const float a = float(std::exp2(log_mag(rng)));
            CAPTURE(p.name);
            CAPTURE(a);
            CHECK(encode_minifloat(p.f, a) == nearest(double(a)));
        }
        // Every exact midpoint between neighbours goes to the even code.
        for (size_t i = 0; i + 1 < grid.size(); ++i) {
            const float mid = float((grid[i].first + grid[i + 1].first) / 2);
            const unsigned even = (grid[i].second & 1) ? grid[i + 1].second : grid[i].second;
            CAPTURE(p.name);
            CAPTURE(mid);
            CHECK(encode_minifloat(p.f, mid) == even);
            const unsigned neg = p.fnuz && even == 0 ? 0u : (even | 0x80u);
            CHECK(encode_minifloat(p.f, -mid) == neg);
        }
    }
}

TEST_CASE("encoding saturates past qmax and at infinity, and writes the hardware NaN") {
    CHECK(encode_minifloat(kE4M3FN, 449.0f) == 0x7E);
    CHECK(encode_minifloat(kE4M3FN, 1e30f) == 0x7E);
    CHECK(encode_minifloat(kE4M3FN, -INFINITY) == 0xFE);
    CHECK(encode_minifloat(kE4M3FN, NAN) == 0x7F);
    CHECK(encode_minifloat(kE4M3FN, -NAN) == 0x7F);  // NaN sign is not portable: always the positive code
    CHECK(encode_minifloat(kE5M2, -NAN) == 0x7F);
    CHECK(encode_minifloat(kE4M3FNUZ, 1000.0f) == 0x7F);
    CHECK(encode_minifloat(kE4M3FNUZ, NAN) == 0x80);
    CHECK(encode_minifloat(kE4M3FNUZ, -0.0f) == 0x00);
    CHECK(encode_minifloat(kE5M2, INFINITY) == 0x7B);
    CHECK(encode_minifloat(kE5M2, 60000.0f) == 0x7B);
    CHECK(encode_minifloat(kE5M2, NAN) == 0x7F);
    CHECK(encode_minifloat(kE2M1, 7.0f) == 0x7);
    CHECK(encode_minifloat(kE2M1, NAN) == 0x0);
    CHECK(encode_minifloat(kE2M1, 2.5f) == 0x4);   // tie between 2 (code 4) and 3 (code 5): even
    CHECK(encode_minifloat(kE2M1, 0.25f) == 0x0);  // tie between 0 and 0.5: even
    CHECK(encode_minifloat(kE4M3FN, std::ldexp(1.0f, -10)) == 0x00);  // half the smallest subnormal: tie to 0
    CHECK(encode_minifloat(kE4M3FN, std::ldexp(1.5f, -10)) == 0x01);
}

TEST_CASE("int8 encoding rounds half to even, saturates to [-128, 127] and maps NaN to 0") {
    CHECK(encode_int8(2.5f) == 2);
    CHECK(encode_int8(3.5f) == 4);
    CHECK(encode_int8(-2.5f) == -2);
    CHECK(encode_int8(127.4f) == 127);
    CHECK(encode_int8(300.0f) == 127);
    CHECK(encode_int8(-300.0f) == -128);
    CHECK(encode_int8(-INFINITY) == -128);
    CHECK(encode_int8(NAN) == 0);
}

TEST_CASE("bf16 and fp16 conversions round to nearest even") {
    CHECK(float_to_bf16(1.0f) == 0x3F80);
    CHECK(float_to_bf16(bits_float(0x3F808000u)) == 0x3F80);  // tie -> even
    CHECK(float_to_bf16(bits_float(0x3F818000u)) == 0x3F82);  // tie -> even (up)
    CHECK(float_to_fp16(1.0f) == 0x3C00);
    CHECK(float_to_fp16(65504.0f) == 0x7BFF);
    CHECK(float_to_fp16(70000.0f) == 0x7C00);
    CHECK(float_to_fp16(std::ldexp(1.0f, -24)) == 0x0001);
    CHECK(float_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);  // tie -> even (0)
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float v = fp16_to_float(uint16_t(h));
        if (std::isnan(v)) continue;
        CAPTURE(h);
        CHECK(float_to_fp16(v) == h);
    }
}

TEST_CASE("pow2_ceil rounds scales up to a power of two and clamps to [2^-126, 2^127]") {
    CHECK(pow2_ceil(1.0f) == 1.0f);
    CHECK(pow2_ceil(1.5f) == 2.0f);
    CHECK(pow2_ceil(0.3f) == 0.5f);
    CHECK(pow2_ceil(0.0f) == std::ldexp(1.0f, -126));
    CHECK(pow2_ceil(1e-40f) == std::ldexp(1.0f, -126));
    CHECK(pow2_ceil(INFINITY) == std::ldexp(1.0f, 127));
}

TEST_CASE("the e2m1 encoder (one float addition) equals the generic minifloat encoder (every 251st float pattern)") {
    const fq::MiniFloat e2m1 = fq::minifloat_of(fq::DType::E2M1);
    uint64_t checked = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 251) {
        const float x = fq::bits_float(uint32_t(u));
        const uint8_t want = fq::encode_minifloat(e2m1, x), got = fq::encode_e2m1(x);
        if (got != want) FAIL("x bits 0x" << std::hex << uint32_t(u) << ": got 0x" << int(got) << " want 0x" << int(want));
        ++checked;
    }
    // Every midpoint and its float neighbours, both signs.
    for (float m : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f})
        for (float x : {std::nextafter(m, 0.0f), m, std::nextafter(m, 10.0f)})
            for (float s : {1.0f, -1.0f}) CHECK(fq::encode_e2m1(s * x) == fq::encode_minifloat(e2m1, s * x));
    CHECK(checked > 17000000);
}
