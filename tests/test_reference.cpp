// Hand-computed quantization cases through the public API on the host backend (docs/spec.md §3, §4, §6).
#include <cfloat>
#include <cmath>

#include "common/activation.h"
#include "common/quantize.h"
#include "fq_test_util.h"

using namespace fqt;

TEST_CASE("per-token e4m3fn of [0.5, -1, 2, 4] gives codes 0x66 0xEE 0x76 0x7E and scale 4/448") {
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN);
    HostRun r(d, to_bf16({0.5f, -1.0f, 2.0f, 4.0f}), 1, 4, 4, 4);
    REQUIRE(r.status == FQ_STATUS_SUCCESS);
    CHECK(r.out == std::vector<uint8_t>{0x66, 0xEE, 0x76, 0x7E});
    CHECK(scale_at(r.scales, 0) == 4.0f / 448.0f);
}

TEST_CASE("silu gated per-group: y = silu(g) * u, scale = amax / 448") {
    Desc d;
    d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT)
        .i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
    // gate = [1, -2], up = [3, 0.5]
    HostRun r(d, to_bf16({1.0f, -2.0f, 3.0f, 0.5f}), 1, 4, 4, 2);
    REQUIRE(r.status == FQ_STATUS_SUCCESS);
    const float y0 = fq::silu(1.0f) * 3.0f, y1 = fq::silu(-2.0f) * 0.5f;
    const float s = std::fabs(y0) / 448.0f;
    CHECK(scale_at(r.scales, 0) == s);
    CHECK(r.out[0] == 0x7E);  // the amax element lands exactly on qmax
    CHECK(r.out[1] == fq::encode_minifloat(fq::kE4M3FN, y1 / s));
    CHECK(fq::decode_minifloat(fq::kE4M3FN, r.out[1]) * s == doctest::Approx(y1).epsilon(0.07));
}

TEST_CASE("a partial last group uses the amax of its valid elements only") {
    const int64_t H = 160;  // groups of 128: one full, one of 32
    std::vector<float> x(H);
    for (int64_t j = 0; j < H; ++j) x[size_t(j)] = j < 128 ? 100.0f : float(j - 127) / 8.0f;  // tail amax 4
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 128);
    HostRun r(d, to_bf16(x), 1, H, H, H);
    REQUIRE(r.status == FQ_STATUS_SUCCESS);
    REQUIRE(r.scales.size() == 8);
    CHECK(scale_at(r.scales, 0) == 100.0f / 448.0f);
    CHECK(scale_at(r.scales, 1) == 4.0f / 448.0f);
    CHECK(r.out[size_t(H - 1)] == 0x7E);
}

TEST_CASE("an all-zero group gets min_scale 1/(qmax*512) and zero codes; int8 gets FLT_EPSILON") {
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
    HostRun r(d, to_bf16(std::vector<float>(32, 0.0f)), 1, 32, 32, 32);
    CHECK(scale_at(r.scales, 0) == 1.0f / (448.0f * 512.0f));
    CHECK(r.out == std::vector<uint8_t>(32, 0));
    Desc d8;
    d8.i32(FQ_QUANT_DESC_GROUP_SIZE, 32).i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_INT8);
    HostRun r8(d8, to_bf16(std::vector<float>(32, 0.0f)), 1, 32, 32, 32, FQ_TYPE_INT8);
    CHECK(scale_at(r8.scales, 0) == FLT_EPSILON);
}

TEST_CASE("NaN elements are ignored by amax and encode to the format's NaN; Inf saturates") {
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
    std::vector<float> x(32, 1.0f);
    x[3] = NAN;
    x[4] = -2.0f;
    HostRun r(d, to_bf16(x), 1, 32, 32, 32);
    CHECK(scale_at(r.scales, 0) == 2.0f / 448.0f);
    CHECK(r.out[3] == 0x7F);
    CHECK(r.out[4] == 0xFE);
}

TEST_CASE("a scale upper bound caps the scale and values saturate at qmax") {
    float ub = 0.01f;
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32).ptr(FQ_QUANT_DESC_SCALE_UB_POINTER, &ub);
    std::vector<float> x(32, 1.0f);
    x[0] = 100.0f;  // amax/448 = 0.223 > ub
    HostRun r(d, to_bf16(x), 1, 32, 32, 32);
    CHECK(scale_at(r.scales, 0) == 0.01f);
    CHECK(r.out[0] == 0x7E);
    CHECK(r.out[1] == fq::encode_minifloat(fq::kE4M3FN, 1.0f / 0.01f));
}

TEST_CASE("POW2_CEIL rounds each scale up to a power of two; E8M0 scales store its exponent") {
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32).i32(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL);
    std::vector<float> x(32, 3.0f);  // 3/448 = 0.0067 -> 2^-7
    HostRun r(d, to_bf16(x), 1, 32, 32, 32);
    CHECK(scale_at(r.scales, 0) == 0.0078125f);
    CHECK(r.out[0] == fq::encode_minifloat(fq::kE4M3FN, 384.0f));
    d.i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
    HostRun e(d, to_bf16(x), 1, 32, 32, 32);
    REQUIRE(e.scales.size() == 1);
    CHECK(e.scales[0] == 127 - 7);
}

TEST_CASE("per-tensor dynamic takes the amax of the whole tensor; static uses the caller's scale") {
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC);
    HostRun r(d, to_bf16({1, 2, 3, 4, -8, 5, 6, 7}), 2, 4, 4, 4);
    REQUIRE(r.status == FQ_STATUS_SUCCESS);
    REQUIRE(r.scales.size() == 4);
    CHECK(scale_at(r.scales, 0) == 8.0f / 448.0f);
    CHECK(r.out[4] == 0xFE);
    float s = 0.5f;
    Desc ds;
    ds.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, &s);
    HostRun rs(ds, to_bf16({1, 2, 3, 4}), 1, 4, 4, 4);
    CHECK(rs.scales.empty());
    CHECK(rs.out[3] == fq::encode_minifloat(fq::kE4M3FN, 8.0f));
}

TEST_CASE("column-major TMA scales: ld = round_up(M, 4), padding rows are zero") {
    const int64_t M = 5, H = 64;
    std::vector<float> x(size_t(M * H));
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 13) - 6) * 0.25f + float(i / 64);
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32).i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
    HostRun tma(d, to_bf16(x), M, H, H, H);
    REQUIRE(tma.scales.size() == 2 * 8 * 4);
    Desc rm;
    rm.i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
    HostRun row(rm, to_bf16(x), M, H, H, H);
    CHECK(tma.out == row.out);
    for (int64_t m = 0; m < 8; ++m)
        for (int64_t k = 0; k < 2; ++k) {
            const float got = scale_at(tma.scales, size_t(k * 8 + m));
            CHECK(got == (m < M ? scale_at(row.scales, size_t(m * 2 + k)) : 0.0f));
        }
}

TEST_CASE("strided input rows quantize as the same rows stored contiguously") {
    const int64_t M = 3, W = 64, ld = 100;
    std::vector<float> dense(size_t(M * W)), strided(size_t(M * ld), 1e6f);
    for (int64_t m = 0; m < M; ++m)
        for (int64_t j = 0; j < W; ++j) dense[size_t(m * W + j)] = strided[size_t(m * ld + j)] = std::sin(float(m * W + j));
    Desc d;
    d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_GELU_TANH).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_INTERLEAVED)
        .i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
    HostRun a(d, to_bf16(dense), M, W, W, W / 2), b(d, to_bf16(strided), M, W, ld, W / 2);
    CHECK(a.out == b.out);
    CHECK(a.scales == b.scales);
}

TEST_CASE("per-row probabilities multiply y before quantization") {
    std::vector<float> prob = {1.0f, 0.25f};
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN).ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob.data());
    HostRun r(d, to_bf16({1, 2, 3, 4, 1, 2, 3, 4}), 2, 4, 4, 4);
    CHECK(scale_at(r.scales, 0) == 4.0f / 448.0f);
    CHECK(scale_at(r.scales, 1) == 1.0f / 448.0f);
    CHECK(std::vector<uint8_t>(r.out.begin(), r.out.begin() + 4) == std::vector<uint8_t>(r.out.begin() + 4, r.out.end()));
}

TEST_CASE("zero rows is valid and writes only layout padding") {
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
    HostRun r(d, {}, 0, 64, 64, 64);
    CHECK(r.status == FQ_STATUS_SUCCESS);
    CHECK(r.scales.empty());
}

TEST_CASE("multiply-reciprocal equals divide when scales are powers of two") {
    std::vector<float> x(64);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(float(i)) * 37.0f;
    Desc a, b;
    a.i32(FQ_QUANT_DESC_GROUP_SIZE, 64).i32(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL);
    b.i32(FQ_QUANT_DESC_GROUP_SIZE, 64).i32(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL)
        .i32(FQ_QUANT_DESC_SCALE_APPLY, FQ_SCALE_APPLY_MULTIPLY_RECIPROCAL);
    HostRun ra(a, to_bf16(x), 1, 64, 64, 64), rb(b, to_bf16(x), 1, 64, 64, 64);
    CHECK(ra.out == rb.out);
}
