// The C++17 header fusedquant.hpp: each RAII type and attribute against the C API, errors as fq::Error, host
// buffers as containers and spans, and byte-equal results with the C API. Built with the public include
// directory only, as a user's program is.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "fusedquant/fusedquant.hpp"

namespace {

// Every type owns one C object: movable, never copyable, moves cannot throw.
template <class T>
constexpr bool move_only_v = !std::is_copy_constructible_v<T> && !std::is_copy_assignable_v<T> &&
                             std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>;
static_assert(move_only_v<fq::Handle> && move_only_v<fq::QuantDesc> && move_only_v<fq::TensorLayout> &&
              move_only_v<fq::GroupedGemmDesc> && move_only_v<fq::Plan>);
static_assert(std::is_base_of_v<std::runtime_error, fq::Error>);
// Enum-typed setters take their own enum only: an int, or another attribute's enum, does not convert.
static_assert(!std::is_invocable_v<decltype(&fq::QuantDesc::set_activation), fq::QuantDesc&, int>);
static_assert(!std::is_invocable_v<decltype(&fq::QuantDesc::set_activation), fq::QuantDesc&, fqGateLayout>);

// Is the C object still alive? (A destroyed object's value is refused with FQ_STATUS_INVALID_HANDLE.)
bool alive(fqQuantDesc_t d) {
    size_t size = 0;
    return fqQuantDescGetAttribute(d, FQ_QUANT_DESC_ACTIVATION, nullptr, 0, &size) == FQ_STATUS_SUCCESS;
}

std::vector<uint16_t> random_bf16(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<uint16_t> v(n);
    for (auto& x : v) {
        const float f = normal(rng);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        x = static_cast<uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
    }
    return v;
}

// The status the C API's last call answered must be SUCCESS.
void ok(fqStatus_t s) { REQUIRE_MESSAGE(s == FQ_STATUS_SUCCESS, fqGetLastErrorMessage()); }

}  // namespace

TEST_CASE("fq::Handle creates a host handle and reads and writes its attributes") {
    fq::Handle h(FQ_BACKEND_HOST);
    REQUIRE(h.get() != nullptr);
    CHECK(h.backend() == FQ_BACKEND_HOST);
    CHECK(h.device() == -1);
    CHECK(h.arch() == 0);
    CHECK(h.sm_count() >= 1);
    CHECK(h.set_allow_pdl(true).allow_pdl());
    CHECK(h.set_wide_tile_min(3).wide_tile_min() == 3);
    REQUIRE(h.variant_count() >= 1);
    CHECK(!h.variant_name(0).empty());
    CHECK(h.set_variant(0).variant() == 0);
    CHECK(h.set_variant(-1).variant() == -1);
    CHECK(fq::version() == FQ_VERSION_NUMBER);
}

TEST_CASE("fq::TensorLayout holds type, rows, columns and stride (ld 0: packed rows)") {
    fq::TensorLayout t(FQ_TYPE_BF16, 4, 6);
    CHECK(t.type() == FQ_TYPE_BF16);
    CHECK(t.rows() == 4);
    CHECK(t.cols() == 6);
    CHECK(t.ld() == 6);
    t.set_ld(8).set_cols(8).set_rows(2).set_type(FQ_TYPE_FP16);
    CHECK(t.type() == FQ_TYPE_FP16);
    CHECK(t.rows() == 2);
    CHECK(t.cols() == 8);
    CHECK(t.ld() == 8);
    CHECK(fq::TensorLayout(FQ_TYPE_FP8_E4M3FN, 3, 5, 16).ld() == 16);
}

TEST_CASE("fq::QuantDesc sets and reads back every attribute with its C type") {
    fq::QuantDesc d;
    CHECK(d.activation() == FQ_ACTIVATION_IDENTITY);  // the C defaults
    CHECK(d.scheme() == FQ_SCHEME_PER_GROUP);
    CHECK(d.group_size() == 128);
    const float f[4] = {};
    const int32_t i = 0;
    int8_t buf[2];
    d.set_activation(FQ_ACTIVATION_SWIGLU_OAI)
        .set_gate_layout(FQ_GATE_LAYOUT_BLOCK_INTERLEAVED)
        .set_gate_order(FQ_GATE_ORDER_UP_FIRST)
        .set_gate_block_width(64)
        .set_intermediate_rounding(FQ_ROUNDING_ROUND_BOTH)
        .set_swiglu_alpha(1.5f)
        .set_swiglu_beta(0.5f)
        .set_swiglu_limit(6.0f)
        .set_row_prob(f)
        .set_scheme(FQ_SCHEME_MXFP8)
        .set_group_size(32)
        .set_output_type(FQ_TYPE_FP8_E5M2)
        .set_scale_type(FQ_TYPE_E8M0)
        .set_scale_layout(FQ_SCALE_LAYOUT_SWIZZLED_128X4)
        .set_scale_rounding(FQ_SCALE_ROUNDING_POW2_CEIL)
        .set_mx_scale_rule(FQ_MX_SCALE_RULE_FLOOR)
        .set_scale_apply(FQ_SCALE_APPLY_MULTIPLY_RECIPROCAL)
        .set_qmax(200.0f)
        .set_min_scale(1e-6f)
        .set_static_scale(f + 1)
        .set_scale_ub(f + 2)
        .set_global_amax(f + 3)
        .set_moe_layout(FQ_MOE_LAYOUT_CONTIGUOUS)
        .set_moe_num_experts(4)
        .set_moe_offsets(&i)
        .set_moe_counts(&i + 1)
        .set_outputs(FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE)
        .set_columnwise_block(128)
        .set_columnwise_transpose(true)
        .set_columnwise_output(buf)
        .set_columnwise_scale(buf + 1);
    CHECK(d.activation() == FQ_ACTIVATION_SWIGLU_OAI);
    CHECK(d.gate_layout() == FQ_GATE_LAYOUT_BLOCK_INTERLEAVED);
    CHECK(d.gate_order() == FQ_GATE_ORDER_UP_FIRST);
    CHECK(d.gate_block_width() == 64);
    CHECK(d.intermediate_rounding() == FQ_ROUNDING_ROUND_BOTH);
    CHECK(d.swiglu_alpha() == 1.5f);
    CHECK(d.swiglu_beta() == 0.5f);
    CHECK(d.swiglu_limit() == 6.0f);
    CHECK(d.row_prob() == f);
    CHECK(d.scheme() == FQ_SCHEME_MXFP8);
    CHECK(d.group_size() == 32);
    CHECK(d.output_type() == FQ_TYPE_FP8_E5M2);
    CHECK(d.scale_type() == FQ_TYPE_E8M0);
    CHECK(d.scale_layout() == FQ_SCALE_LAYOUT_SWIZZLED_128X4);
    CHECK(d.scale_rounding() == FQ_SCALE_ROUNDING_POW2_CEIL);
    CHECK(d.mx_scale_rule() == FQ_MX_SCALE_RULE_FLOOR);
    CHECK(d.scale_apply() == FQ_SCALE_APPLY_MULTIPLY_RECIPROCAL);
    CHECK(d.qmax() == 200.0f);
    CHECK(d.min_scale() == 1e-6f);
    CHECK(d.static_scale() == f + 1);
    CHECK(d.scale_ub() == f + 2);
    CHECK(d.global_amax() == f + 3);
    CHECK(d.moe_layout() == FQ_MOE_LAYOUT_CONTIGUOUS);
    CHECK(d.moe_num_experts() == 4);
    CHECK(d.moe_offsets() == &i);
    CHECK(d.moe_counts() == &i + 1);
    CHECK(d.outputs() == (FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE));
    CHECK(d.columnwise_block() == 128);
    CHECK(d.columnwise_transpose());
    CHECK(d.columnwise_output() == buf);
    CHECK(d.columnwise_scale() == buf + 1);
}

TEST_CASE("fq::GroupedGemmDesc sets and reads back every attribute with its C type") {
    fq::GroupedGemmDesc g;
    CHECK(g.num_groups() == 1);
    CHECK(g.quantize());
    const int32_t offsets[3] = {0, 4, 8};
    const float alpha[2] = {1.0f, 2.0f};
    char c[4], d[4];
    g.set_num_groups(2)
        .set_group_offsets(offsets)
        .set_group_counts(offsets + 1)
        .set_alpha(alpha)
        .set_a_scale_layout(FQ_SCALE_LAYOUT_COL_MAJOR)
        .set_c_output(c)
        .set_d_output(d)
        .set_quantize(false);
    CHECK(g.num_groups() == 2);
    CHECK(g.group_offsets() == offsets);
    CHECK(g.group_counts() == offsets + 1);
    CHECK(g.alpha() == alpha);
    CHECK(g.a_scale_layout() == FQ_SCALE_LAYOUT_COL_MAJOR);
    CHECK(g.c_output() == c);
    CHECK(g.d_output() == d);
    CHECK(!g.quantize());
}

TEST_CASE("the wrapper has a setter for every attribute the C header defines") {
    // The attribute after each enum's last is unknown to the library: a new attribute in fusedquant.h fails
    // here until fusedquant.hpp has its setter and getter (and this test its round trip).
    const int64_t v = 0;
    fq::Handle h(FQ_BACKEND_HOST);
    fq::QuantDesc d;
    fq::TensorLayout t(FQ_TYPE_BF16, 1, 1);
    fq::GroupedGemmDesc g;
    for (size_t size : {size_t{4}, size_t{8}}) {
        CHECK(fqHandleSetAttribute(h.get(), FQ_HANDLE_WIDE_TILE_MIN + 1, &v, size) == FQ_STATUS_INVALID_VALUE);
        CHECK(fqQuantDescSetAttribute(d.get(), FQ_QUANT_DESC_GLOBAL_AMAX_POINTER + 1, &v, size) == FQ_STATUS_INVALID_VALUE);
        CHECK(fqTensorLayoutSetAttribute(t.get(), FQ_TENSOR_LAYOUT_LD + 1, &v, size) == FQ_STATUS_INVALID_VALUE);
        CHECK(fqGroupedGemmDescSetAttribute(g.get(), FQ_GEMM_DESC_QUANTIZE + 1, &v, size) == FQ_STATUS_INVALID_VALUE);
    }
}

TEST_CASE("a refused call throws fq::Error with the library's status and message") {
    SUBCASE("constructor") {
        fqTensorLayout_t raw = nullptr;
        const fqStatus_t c_status = fqTensorLayoutCreate(&raw, FQ_TYPE_BF16, -1, 4, 4);
        const std::string c_message = fqGetLastErrorMessage();
        REQUIRE(c_status == FQ_STATUS_INVALID_VALUE);
        REQUIRE(!c_message.empty());
        try {
            fq::TensorLayout t(FQ_TYPE_BF16, -1, 4);
            FAIL("no exception");
        } catch (const fq::Error& e) {
            CHECK(e.status() == c_status);
            CHECK(e.message() == c_message);
            CHECK(std::string(e.what()) == "FQ_STATUS_INVALID_VALUE: " + c_message);
        }
    }
    SUBCASE("setter") {
        fq::QuantDesc d;
        try {
            d.set_activation(static_cast<fqActivation>(99));  // outside the enum: refused when set
            FAIL("no exception");
        } catch (const fq::Error& e) {
            CHECK(e.status() == FQ_STATUS_INVALID_VALUE);
            CHECK(e.message().find("99") != std::string::npos);
        }
        CHECK(d.activation() == FQ_ACTIVATION_IDENTITY);
    }
    SUBCASE("execution") {
        fq::Handle h(FQ_BACKEND_HOST);
        fq::QuantDesc d;
        d.set_group_size(48);  // checked where used
        fq::TensorLayout in(FQ_TYPE_BF16, 1, 128), out(FQ_TYPE_FP8_E4M3FN, 1, 128);
        CHECK_THROWS_WITH_AS((void)h.query_support(d, in, out),
                             "FQ_STATUS_INVALID_VALUE: FQ_QUANT_DESC_GROUP_SIZE: 48 is not 32, 64 or 128", fq::Error);
    }
    SUBCASE("a use of a moved-from object") {
        fq::Handle h(FQ_BACKEND_HOST);
        fq::Handle other = std::move(h);
        try {
            (void)h.backend();  // NOLINT(bugprone-use-after-move): the point of the test
            FAIL("no exception");
        } catch (const fq::Error& e) {
            CHECK(e.status() == FQ_STATUS_INVALID_HANDLE);
            CHECK(!e.message().empty());
        }
    }
    SUBCASE("host buffers too small for the scales, the input or the output") {
        fq::Handle h(FQ_BACKEND_HOST);
        fq::QuantDesc d;
        fq::TensorLayout in(FQ_TYPE_BF16, 2, 256), out(FQ_TYPE_FP8_E4M3FN, 2, 256);
        std::vector<uint16_t> x(2 * 256, 0x3F80);
        std::vector<uint8_t> q(2 * 256, 0xEE);
        std::vector<float> scales(d.scale_buffer_size(2, 256) / 4 - 1);
        try {
            h.quantize(d, in, x, out, q, scales);
            FAIL("no exception");
        } catch (const fq::Error& e) {
            CHECK(e.status() == FQ_STATUS_INSUFFICIENT_BUFFER);
            CHECK(e.message().rfind("scalesSizeInBytes", 0) == 0);  // the library's sentence
        }
        scales.resize(scales.size() + 1);
        CHECK_THROWS_WITH_AS(h.quantize(d, in, fq::Span<const uint16_t>(x.data(), x.size() - 1), out, q, scales),
                             "FQ_STATUS_INSUFFICIENT_BUFFER: x: 1022 bytes is smaller than the 1024 the input layout spans",
                             fq::Error);
        CHECK_THROWS_WITH_AS(h.quantize(d, in, x, out, fq::Span<uint8_t>(q.data(), 511), scales),
                             "FQ_STATUS_INSUFFICIENT_BUFFER: y: 511 bytes is smaller than the 512 the output layout spans",
                             fq::Error);
        CHECK(q == std::vector<uint8_t>(2 * 256, 0xEE));  // nothing written
    }
}

TEST_CASE("SiLU + FP8 per-group-128 through fq::Handle writes the C API's bytes on the host backend") {
    const int64_t T = 37, H = 384;  // a partial scale tile of rows, three groups a row
    const std::vector<uint16_t> x = random_bf16(static_cast<size_t>(T * 2 * H), 7);

    // The C API.
    fqHandle_t ch;
    fqQuantDesc_t cd;
    fqTensorLayout_t cin, cout;
    ok(fqCreate(&ch, FQ_BACKEND_HOST, -1));
    ok(fqQuantDescCreate(&cd));
    const int32_t act = FQ_ACTIVATION_SILU, gate = FQ_GATE_LAYOUT_SPLIT, group = 128, layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA;
    ok(fqQuantDescSetAttribute(cd, FQ_QUANT_DESC_ACTIVATION, &act, sizeof act));
    ok(fqQuantDescSetAttribute(cd, FQ_QUANT_DESC_GATE_LAYOUT, &gate, sizeof gate));
    ok(fqQuantDescSetAttribute(cd, FQ_QUANT_DESC_GROUP_SIZE, &group, sizeof group));
    ok(fqQuantDescSetAttribute(cd, FQ_QUANT_DESC_SCALE_LAYOUT, &layout, sizeof layout));
    ok(fqTensorLayoutCreate(&cin, FQ_TYPE_BF16, T, 2 * H, 2 * H));
    ok(fqTensorLayoutCreate(&cout, FQ_TYPE_FP8_E4M3FN, T, H, H));
    size_t c_scale_bytes = 0;
    ok(fqGetScaleBufferSize(cd, T, H, FQ_OUTPUT_ROWWISE, &c_scale_bytes));
    std::vector<uint8_t> c_q(static_cast<size_t>(T * H));
    std::vector<uint8_t> c_scales(c_scale_bytes);
    ok(fqQuantize(ch, cd, cin, x.data(), cout, c_q.data(), c_scales.data(), c_scale_bytes, nullptr, 0, nullptr));
    fqTensorLayoutDestroy(cin);
    fqTensorLayoutDestroy(cout);
    fqQuantDescDestroy(cd);
    fqDestroy(ch);

    // The C++ header: containers, then pointers with the scale size from the descriptor.
    fq::Handle h(FQ_BACKEND_HOST);
    fq::QuantDesc d;
    d.set_activation(FQ_ACTIVATION_SILU).set_gate_layout(FQ_GATE_LAYOUT_SPLIT).set_group_size(128)
        .set_scale_layout(FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
    fq::TensorLayout in(FQ_TYPE_BF16, T, 2 * H), out(FQ_TYPE_FP8_E4M3FN, T, H);
    CHECK(!h.query_support(d, in, out).empty());
    CHECK(h.workspace_size(d, in, out) == 0);
    REQUIRE(d.scale_buffer_size(T, H) == c_scale_bytes);
    CHECK(d.scale_buffer_info(T, H, FQ_SCALE_INFO_COL_STRIDE) == 4 * 40);  // round_up(37, 4) floats

    std::vector<uint8_t> q(c_q.size(), 0xAA);
    std::vector<float> scales(c_scale_bytes / sizeof(float), -1.0f);
    h.quantize(d, in, x, out, q, scales);
    CHECK(q == c_q);
    CHECK(std::memcmp(scales.data(), c_scales.data(), c_scale_bytes) == 0);

    std::vector<uint8_t> q2(c_q.size(), 0x55);
    std::array<std::vector<float>, 1> scales2{std::vector<float>(scales.size(), -2.0f)};
    h.quantize(d, in, x.data(), out, q2.data(), scales2[0].data());
    CHECK(q2 == c_q);
    CHECK(std::memcmp(scales2[0].data(), c_scales.data(), c_scale_bytes) == 0);
}

TEST_CASE("fq::Handle::grouped_gemm writes the C API's bytes on the host backend") {
    const int64_t M = 8, N = 256, K = 128, H = N / 2;  // two groups: rows [0, 5) and [5, 8)
    std::mt19937 rng(3);
    auto fp8 = [&](size_t n) {  // e4m3 codes without the NaNs 0x7F / 0xFF
        std::vector<uint8_t> v(n);
        for (auto& b : v) b = static_cast<uint8_t>(rng() % 0x7F | (rng() & 0x80));
        return v;
    };
    const std::vector<uint8_t> a = fp8(M * K), b = fp8(2 * N * K);
    const std::vector<float> a_scales(8, 1.0f / 1024), b_scales(2 * 2, 1.0f / 512);  // A: ld round_up(M, 4)
    const int32_t offsets[3] = {0, 5, 8};

    fq::Handle h(FQ_BACKEND_HOST);
    fq::GroupedGemmDesc gemm;
    gemm.set_num_groups(2).set_group_offsets(offsets);
    fq::QuantDesc epilogue;
    epilogue.set_activation(FQ_ACTIVATION_SILU).set_gate_layout(FQ_GATE_LAYOUT_SPLIT);
    fq::TensorLayout la(FQ_TYPE_FP8_E4M3FN, M, K), lb(FQ_TYPE_FP8_E4M3FN, 2 * N, K), lo(FQ_TYPE_FP8_E4M3FN, M, H);
    const size_t scale_bytes = gemm.scale_buffer_size(epilogue, M, H);
    std::vector<uint8_t> q(M * H, 0xAA), scales(scale_bytes, 0xAA);
    h.grouped_gemm(gemm, epilogue, la, a.data(), a_scales.data(), lb, b.data(), b_scales.data(), lo, q.data(),
                   scales.data());

    std::vector<uint8_t> c_q(M * H, 0x55), c_scales(scale_bytes, 0x55);
    ok(fqGroupedGemm(h.get(), gemm.get(), epilogue.get(), la.get(), a.data(), a_scales.data(), lb.get(), b.data(),
                     b_scales.data(), lo.get(), c_q.data(), c_scales.data(), scale_bytes, nullptr));
    CHECK(q == c_q);
    CHECK(scales == c_scales);
    CHECK(std::count(q.begin(), q.end(), 0) < static_cast<long>(q.size()) / 2);  // not a trivial all-zero output
}

TEST_CASE("a moved-from object owns nothing: the C object is destroyed once, by its last owner") {
    fqQuantDesc_t raw = nullptr;
    {
        fq::QuantDesc a;
        raw = a.get();
        fq::QuantDesc b(std::move(a));
        CHECK(a.get() == nullptr);  // NOLINT(bugprone-use-after-move)
        CHECK(b.get() == raw);
        {
            fq::QuantDesc c(std::move(b));  // c dies first, with the object
            CHECK(b.get() == nullptr);      // NOLINT(bugprone-use-after-move)
            CHECK(alive(raw));
        }
        CHECK(!alive(raw));
    }  // a and b, both moved from, destroy nothing (a second destroy would be refused, not crash)

    fq::QuantDesc x, y;
    const fqQuantDesc_t x_raw = x.get(), y_raw = y.get();
    x = std::move(y);  // x's old object is destroyed, y's moves in
    CHECK(!alive(x_raw));
    CHECK(x.get() == y_raw);
    CHECK(alive(y_raw));
    CHECK(y.get() == nullptr);  // NOLINT(bugprone-use-after-move)
    auto& self = x;
    x = std::move(self);  // self-move keeps the object
    CHECK(x.get() == y_raw);
    CHECK(alive(y_raw));

    // release() hands the C object to the caller.
    fq::TensorLayout t(FQ_TYPE_BF16, 1, 8);
    fqTensorLayout_t t_raw = t.release();
    CHECK(t.get() == nullptr);
    CHECK(fqTensorLayoutDestroy(t_raw) == FQ_STATUS_SUCCESS);

    // Every type: a moved-to object works, a moved-from one is refused with INVALID_HANDLE.
    fq::Handle h(FQ_BACKEND_HOST);
    fq::Handle h2 = std::move(h);
    CHECK(h2.backend() == FQ_BACKEND_HOST);
    fq::GroupedGemmDesc g;
    fq::GroupedGemmDesc g2 = std::move(g);
    CHECK(g2.num_groups() == 1);
    CHECK_THROWS_AS((void)g.num_groups(), fq::Error);  // NOLINT(bugprone-use-after-move)
}

TEST_CASE("fq::Span views pointers, arrays and containers") {
    std::vector<float> v{1, 2, 3};
    fq::Span<float> s(v);
    CHECK(s.size() == 3);
    CHECK(s.size_bytes() == 12);
    CHECK(s[1] == 2);
    fq::Span<const float> cs(v);
    CHECK(cs.data() == v.data());
    const std::array<uint16_t, 4> a{};
    CHECK(fq::Span<const uint16_t>(a).size() == 4);
    int c_array[5] = {};
    CHECK(fq::Span<int>(c_array).size() == 5);
    CHECK(fq::Span<int>(c_array + 1, 2).end() == c_array + 3);
    CHECK(fq::Span<int>().empty());
    static_assert(!std::is_constructible_v<fq::Span<float>, const std::vector<float>&>);  // no const dropped
}

TEST_CASE("fq::Plan runs the bytes fq::Handle::quantize writes, outlives its objects, and throws what fqPlanCreate refuses") {
    fq::Handle h(FQ_BACKEND_HOST);
    const int64_t rows = 3, cols = 256;
    const std::vector<uint16_t> x = random_bf16(size_t(rows * 2 * cols), 7);
    std::vector<uint8_t> y_quantize(size_t(rows * cols)), y_plan(size_t(rows * cols));
    std::vector<uint8_t> s_quantize, s_plan;
    std::optional<fq::Plan> plan;
    {
        fq::QuantDesc d;
        d.set_activation(FQ_ACTIVATION_SILU).set_gate_layout(FQ_GATE_LAYOUT_SPLIT);
        fq::TensorLayout in(FQ_TYPE_BF16, rows, 2 * cols), out(FQ_TYPE_FP8_E4M3FN, rows, cols);
        s_quantize.resize(d.scale_buffer_size(rows, cols));
        h.quantize(d, in, x, out, y_quantize, s_quantize);
        plan.emplace(h, d, in, out);
        CHECK(plan->scale_buffer_size() == s_quantize.size());
        CHECK(plan->workspace_size() == 0);
        CHECK(plan->columnwise_scale_buffer_size() == 0);
        CHECK(plan->variant_name() == h.query_support(d, in, out));
        d.set_activation(FQ_ACTIVATION_RELU);  // later changes do not reach the plan
    }
    s_plan.resize(plan->scale_buffer_size());
    plan->run(x.data(), y_plan.data(), s_plan.data());
    CHECK(y_plan == y_quantize);
    CHECK(s_plan == s_quantize);

    fq::QuantDesc mx;
    mx.set_scheme(FQ_SCHEME_MXFP8);  // FP32 scales: MXFP8 needs E8M0
    fq::TensorLayout in(FQ_TYPE_BF16, rows, cols), out(FQ_TYPE_FP8_E4M3FN, rows, cols);
    try {
        fq::Plan refused(h, mx, in, out);
        FAIL("fqPlanCreate accepted MXFP8 with FP32 scales");
    } catch (const fq::Error& e) {
        CHECK(e.status() == FQ_STATUS_INVALID_VALUE);
        CHECK(std::string(e.what()).find("FQ_QUANT_DESC_SCALE_TYPE") != std::string::npos);
    }
}
