// The edge cases docs/spec.md states, byte for byte on the host backend: qmax as the saturation bound (§1,
// §3.4), SiLU and SwiGLU-OAI at huge negative and infinite gates (§2), NaN codes (§1), NVFP4's S_enc (§3.3).
// tests/test_gpu.cpp runs the same inputs on every CUDA variant against this host reference.
#include <cmath>
#include <cstring>
#include <vector>

#include "common/activation.h"
#include "common/quantize.h"
#include "fq_test_util.h"

using namespace fqt;

namespace {

uint32_t bits_of(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

// Per-tensor static quantization with scale 1 of bf16 inputs x to `out`, QMAX qmax (0: not set).
std::vector<uint8_t> static_codes(const std::vector<float>& x, int32_t out, float qmax) {
    float s = 1.0f;
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out)
        .ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, &s);
    if (qmax > 0.0f) d.f32(FQ_QUANT_DESC_QMAX, qmax);
    const int64_t n = int64_t(x.size());
    HostRun r(d, to_bf16(x), 1, n, n, n, out);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    return r.out;
}

// bf16 bits: the largest finite negative value (-3.39e38) and -Inf.
constexpr uint16_t kBf16MostNegative = 0xFF7F, kBf16MinusInf = 0xFF80;

}  // namespace

TEST_CASE("qmax is the saturation bound: e4m3fnuz qmax 224 writes 0x7E for 300, e4m3fn qmax 200 writes 0x74 for 230") {
    // Without the override the format's own qmax saturates (240 = 0x7F, 448 = 0x7E); 236 rounds to 240 there.
    CHECK(static_codes({300.0f, -300.0f, 236.0f, 224.0f}, FQ_TYPE_FP8_E4M3FNUZ, 0.0f) ==
          std::vector<uint8_t>{0x7F, 0xFF, 0x7F, 0x7E});
    CHECK(static_codes({300.0f, -300.0f, 236.0f, 224.0f, 100.0f}, FQ_TYPE_FP8_E4M3FNUZ, 224.0f) ==
          std::vector<uint8_t>{0x7E, 0xFE, 0x7E, 0x7E, fq::encode_minifloat(fq::kE4M3FNUZ, 100.0f)});
    // qmax 200 is no e4m3fn value: the bound is the largest one below it, 192 (0x74); 200 itself ties to 192.
    CHECK(static_codes({230.0f, -230.0f, 200.0f, 197.0f, INFINITY, -INFINITY}, FQ_TYPE_FP8_E4M3FN, 200.0f) ==
          std::vector<uint8_t>{0x74, 0xF4, 0x74, 0x74, 0x74, 0xF4});
    CHECK(static_codes({230.0f}, FQ_TYPE_FP8_E4M3FN, 0.0f) == std::vector<uint8_t>{0x76});
    // e5m2 qmax 50000: bound 49152 (0x7A), where 50000 alone rounds to 49152 and 56000 to 57344 (0x7B).
    CHECK(static_codes({56000.0f, 50000.0f}, FQ_TYPE_FP8_E5M2, 50000.0f) == std::vector<uint8_t>{0x7A, 0x7A});
    // NaN keeps its code under an override.
    CHECK(static_codes({NAN}, FQ_TYPE_FP8_E4M3FNUZ, 224.0f) == std::vector<uint8_t>{0x80});
    CHECK(static_codes({NAN}, FQ_TYPE_FP8_E4M3FN, 200.0f) == std::vector<uint8_t>{0x7F});
}

TEST_CASE("int8 with a qmax override saturates to +-round(qmax); without one to [-128, 127]") {
    auto as_int8 = [](const std::vector<uint8_t>& v) { return std::vector<int8_t>(v.begin(), v.end()); };
    CHECK(as_int8(static_codes({300.0f, -300.0f, 99.0f, NAN}, FQ_TYPE_INT8, 100.4f)) == std::vector<int8_t>{100, -100, 99, 0});
    CHECK(as_int8(static_codes({300.0f, -300.0f}, FQ_TYPE_INT8, 127.0f)) == std::vector<int8_t>{127, -127});
    CHECK(as_int8(static_codes({300.0f, -300.0f}, FQ_TYPE_INT8, 0.0f)) == std::vector<int8_t>{127, -128});
}

TEST_CASE("saturation_bound: the largest format value not above qmax (int8: rint(qmax))") {
    CHECK(fq::saturation_bound(fq::DType::E4M3FN, 448.0f) == 448.0f);
    CHECK(fq::saturation_bound(fq::DType::E4M3FN, 200.0f) == 192.0f);
    CHECK(fq::saturation_bound(fq::DType::E4M3FN, 207.0f) == 192.0f);  // rounds up to 208, which is above
    CHECK(fq::saturation_bound(fq::DType::E4M3FNUZ, 224.0f) == 224.0f);
    CHECK(fq::saturation_bound(fq::DType::E4M3FNUZ, 240.0f) == 240.0f);
    CHECK(fq::saturation_bound(fq::DType::E5M2, 50000.0f) == 49152.0f);
    CHECK(fq::saturation_bound(fq::DType::E2M1, 5.0f) == 4.0f);
    CHECK(fq::saturation_bound(fq::DType::Int8, 100.5f) == 100.0f);
    CHECK(fq::saturation_bound(fq::DType::E4M3FN, 1e-4f) == 0.0f);  // below the smallest subnormal 2^-9
}

TEST_CASE("a per-group scale upper bound saturates the group at the qmax override (e4m3fn qmax 200)") {
    float ub = 0.5f;
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32).ptr(FQ_QUANT_DESC_SCALE_UB_POINTER, &ub).f32(FQ_QUANT_DESC_QMAX, 200.0f);
    std::vector<float> x(32, 1.0f);
    x[0] = 300.0f;  // amax / qmax = 1.5 > ub: the scale is 0.5 and 300 / 0.5 = 600 saturates
    HostRun r(d, to_bf16(x), 1, 32, 32, 32);
    REQUIRE(r.status == FQ_STATUS_SUCCESS);
    CHECK(scale_at(r.scales, 0) == 0.5f);
    CHECK(r.out[0] == 0x74);
    CHECK(r.out[1] == fq::encode_minifloat(fq::kE4M3FN, 2.0f));
}

TEST_CASE("silu and the SwiGLU-OAI gate factor are -0 at huge negative and -Inf inputs; exp overflows as fp32 does") {
    for (float x : {-89.0f, -100.0f, -1e30f, -3.3895314e38f, -INFINITY}) {
        CAPTURE(x);
        CHECK(bits_of(fq::silu(x)) == 0x80000000u);
        CHECK(bits_of(fq::swiglu_gate(x, fq::SwigluParams{})) == 0x80000000u);
        CHECK(bits_of(fq::swiglu_oai(x, 3.0f, fq::SwigluParams{})) == 0x80000000u);
    }
    // Just above the overflow of exp(-x) the quotient is a tiny normal number, not 1.65e38's.
    const float x = -88.5f;
    const double want = double(x) / (1.0 + std::exp(88.5));  // -3.3e-37
    CHECK(std::fabs(fq::silu(x) / want - 1.0) < 1e-6);
    CHECK(bits_of(fq::silu(INFINITY)) == bits_of(INFINITY));
    CHECK(std::isnan(fq::silu(NAN)));
    CHECK(std::isnan(fq::swiglu_gate(NAN, fq::SwigluParams{})));
}

TEST_CASE("one gate of -3.39e38 or -Inf changes no other byte of its group or row (SiLU, SwiGLU-OAI; per-group, per-token)") {
    const int64_t H = 64;  // two groups of 32
    std::vector<uint16_t> base(size_t(2 * H));
    for (int64_t j = 0; j < 2 * H; ++j) base[size_t(j)] = fq::float_to_bf16(0.25f * float(j % 11) - 1.1f);
    for (int32_t act : {FQ_ACTIVATION_SILU, FQ_ACTIVATION_SWIGLU_OAI})
        for (int32_t scheme : {FQ_SCHEME_PER_GROUP, FQ_SCHEME_PER_TOKEN})
            for (uint16_t extreme : {kBf16MostNegative, kBf16MinusInf}) {
                CAPTURE(act);
                CAPTURE(scheme);
                CAPTURE(extreme);
                Desc d;
                d.i32(FQ_QUANT_DESC_ACTIVATION, act).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT)
                    .i32(FQ_QUANT_DESC_SCHEME, scheme);
                if (scheme == FQ_SCHEME_PER_GROUP) d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
                std::vector<uint16_t> zero_gate = base, huge_gate = base;
                zero_gate[5] = 0x8000;  // -0: act(-0) = -0, the limit of act at -Inf
                huge_gate[5] = extreme;
                HostRun want(d, zero_gate, 1, 2 * H, 2 * H, H), got(d, huge_gate, 1, 2 * H, 2 * H, H);
                REQUIRE(got.status == FQ_STATUS_SUCCESS);
                CHECK(got.scales == want.scales);
                CHECK(got.out == want.out);
                CHECK((got.out[5] & 0x7F) == 0);  // act(gate) = -0: a zero code (its sign is the up factor's)
            }
}

TEST_CASE("every NaN encodes to 0x7F in e4m3fn and e5m2 whatever its sign and payload, through the API") {
    // bf16 NaNs: quiet and signalling payloads of both signs; and NaN produced by the activation (silu(NaN)).
    const std::vector<uint16_t> nans = {0x7FC0, 0xFFC0, 0x7F81, 0xFF81, 0x7FFF, 0xFFFF};
    for (int32_t out : {FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP8_E5M2})
        for (int32_t act : {FQ_ACTIVATION_IDENTITY, FQ_ACTIVATION_SILU}) {
            CAPTURE(out);
            CAPTURE(act);
            float s = 1.0f;
            Desc d;
            d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out)
                .i32(FQ_QUANT_DESC_ACTIVATION, act).ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, &s);
            const int64_t n = int64_t(nans.size());
            HostRun r(d, nans, 1, n, n, n, out);
            REQUIRE(r.status == FQ_STATUS_SUCCESS);
            CHECK(r.out == std::vector<uint8_t>(nans.size(), 0x7F));
        }
    for (uint32_t sign : {0u, 0x80000000u})
        for (uint32_t payload : {1u, 0x400000u, 0x7FFFFFu, 0x123456u}) {
            const float x = fq::bits_float(sign | 0x7F800000u | payload);
            CHECK(fq::encode_minifloat(fq::kE4M3FN, x) == 0x7F);
            CHECK(fq::encode_minifloat(fq::kE5M2, x) == 0x7F);
        }
}

TEST_CASE("NVFP4 S_enc through the API: a global amax of 0, -1, +Inf, NaN or 2^-140 quantizes as S_enc = 1") {
    // With S_enc = 1 the block scale is e4m3(amax / 6) and the codes e2m1(y * 6 / amax): amax 6 gives S_blk 1.0
    // (0x38) and the codes of the values themselves.
    const std::vector<float> x = {6.0f, -3.0f, 1.0f, 0.5f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (float g : {0.0f, -1.0f, INFINITY, NAN, std::ldexp(1.0f, -140)}) {
        CAPTURE(g);
        Desc d;
        d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4).i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP4_E2M1)
            .i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN).ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &g);
        HostRun r(d, to_bf16(x), 1, 16, 16, 16, FQ_TYPE_FP4_E2M1);
        REQUIRE(r.status == FQ_STATUS_SUCCESS);
        CHECK(r.scales == std::vector<uint8_t>{0x38});
        CHECK(std::vector<uint8_t>(r.out.begin(), r.out.begin() + 8) == std::vector<uint8_t>{0xD7, 0x12, 0, 0, 0, 0, 0, 0});
    }
}

TEST_CASE("a group's amax ignores every NaN, signalling ones too (bf16 0x7F81, 0xFF81), wherever they stand") {
    // Identity, per-group 32, e4m3fn: the group's finite amax is 32 whatever NaNs it holds. With fmaxf the
    // host's running max restarted after a signalling NaN where glibc's fmaxf answers NaN (GCC 13's build).
    for (const uint16_t nan_bits : {uint16_t(0x7FC0), uint16_t(0x7F81), uint16_t(0xFF81), uint16_t(0xFFFF)})
        for (const size_t at : {size_t(5), size_t(30)}) {
            CAPTURE(nan_bits);
            CAPTURE(at);
            std::vector<float> x(32);
            for (int i = 0; i < 32; ++i) x[size_t(i)] = float(32 - i);  // the amax first: a restart would lose it
            std::vector<uint16_t> in = to_bf16(x);
            in[at] = nan_bits;
            Desc d;
            d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_GROUP).i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
            HostRun r(d, in, 1, 32, 32, 32);
            REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
            float scale;
            std::memcpy(&scale, r.scales.data(), 4);
            CHECK(scale == 32.0f / 448.0f);
            CHECK(r.out[at] == 0x7F);
            CHECK(r.out[0] == 0x7E);  // 32 / (32 / 448) = 448
        }
}
