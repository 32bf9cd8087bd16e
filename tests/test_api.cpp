// The bad-input matrix of the public API: each argument wrong in each way gives the documented status
// and a message naming the argument; outputs outside the declared buffers are never written.
#include <cstring>
#include <functional>
#include <string>

#include "fq_test_util.h"

using namespace fqt;

namespace {
// The message of a failure that later successful calls (destructors of RAII helpers) would clear.
thread_local std::string g_kept_message;

void expect_error(fqStatus_t got, fqStatus_t want, const char* names) {
    const std::string message = g_kept_message.empty() ? std::string(fqGetLastErrorMessage()) : g_kept_message;
    g_kept_message.clear();
    const std::string status = fqGetStatusString(got), wanted = names;
    CHECK_MESSAGE(got == want, status, " : ", message);
    CHECK_MESSAGE(message.find(wanted) != std::string::npos, "message '", message, "' should name '", wanted, "'");
}
}  // namespace

TEST_CASE("version, status strings and the error message are always valid") {
    CHECK(fqGetVersion() == FQ_VERSION_NUMBER);
    for (int s = 0; s <= FQ_STATUS_INTERNAL_ERROR; ++s) CHECK(std::string(fqGetStatusString(s)).rfind("FQ_STATUS_", 0) == 0);
    CHECK(std::string(fqGetStatusString(999)) == "FQ_STATUS_UNKNOWN");
    fqHandle_t h;
    REQUIRE(fqCreate(&h, FQ_BACKEND_HOST, -1) == FQ_STATUS_SUCCESS);
    CHECK(std::string(fqGetLastErrorMessage()).empty());
    fqDestroy(h);
}

TEST_CASE("handles: bad backend, device, NULL, destroyed and foreign objects are refused") {
    fqHandle_t h = nullptr;
    expect_error(fqCreate(nullptr, FQ_BACKEND_HOST, -1), FQ_STATUS_NULL_POINTER, "handle");
    expect_error(fqCreate(&h, 7, -1), FQ_STATUS_INVALID_VALUE, "backend");
    expect_error(fqCreate(&h, FQ_BACKEND_HOST, 3), FQ_STATUS_INVALID_VALUE, "device");
    expect_error(fqCreate(&h, FQ_BACKEND_CUDA, -5), FQ_STATUS_INVALID_VALUE, "device");
    REQUIRE(fqCreate(&h, FQ_BACKEND_HOST, 0) == FQ_STATUS_SUCCESS);
    int32_t v = 0;
    size_t n = 0;
    CHECK(fqHandleGetAttribute(h, FQ_HANDLE_BACKEND, &v, 4, &n) == FQ_STATUS_SUCCESS);
    CHECK(v == FQ_BACKEND_HOST);
    CHECK(n == 4);
    expect_error(fqHandleSetAttribute(h, FQ_HANDLE_ARCH, &v, 4), FQ_STATUS_INVALID_VALUE, "read-only");
    expect_error(fqHandleGetAttribute(h, FQ_HANDLE_ARCH, &v, 2, &n), FQ_STATUS_INVALID_VALUE, "sizeInBytes");
    expect_error(fqHandleGetAttribute(h, 99, &v, 4, &n), FQ_STATUS_INVALID_VALUE, "attr");
    fqDestroy(h);
    int32_t count = 0;
    expect_error(fqGetVariantCount(h, &count), FQ_STATUS_INVALID_HANDLE, "handle");  // destroyed
    expect_error(fqDestroy(h), FQ_STATUS_INVALID_HANDLE, "handle");                   // twice
    Desc d;
    expect_error(fqGetVariantCount(reinterpret_cast<fqHandle_t>(d.d), &count), FQ_STATUS_INVALID_HANDLE, "handle");
    CHECK(fqDestroy(nullptr) == FQ_STATUS_SUCCESS);
}

TEST_CASE("descriptor attributes: unknown id, wrong size, NULL buffer and out-of-range values are refused") {
    Desc d;
    int32_t v = 5;
    expect_error(fqQuantDescSetAttribute(d.d, 1000, &v, 4), FQ_STATUS_INVALID_VALUE, "attr");
    expect_error(fqQuantDescSetAttribute(d.d, FQ_QUANT_DESC_ACTIVATION, &v, 8), FQ_STATUS_INVALID_VALUE, "sizeInBytes");
    expect_error(fqQuantDescSetAttribute(d.d, FQ_QUANT_DESC_ACTIVATION, nullptr, 4), FQ_STATUS_NULL_POINTER, "buf");
    v = 42;
    expect_error(fqQuantDescSetAttribute(d.d, FQ_QUANT_DESC_ACTIVATION, &v, 4), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_ACTIVATION");
    v = -1;
    expect_error(fqQuantDescSetAttribute(d.d, FQ_QUANT_DESC_SCHEME, &v, 4), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCHEME");
    float f = NAN;
    expect_error(fqQuantDescSetAttribute(d.d, FQ_QUANT_DESC_QMAX, &f, 4), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_QMAX");
    f = -1.0f;
    expect_error(fqQuantDescSetAttribute(d.d, FQ_QUANT_DESC_MIN_SCALE, &f, 4), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_MIN_SCALE");
    f = INFINITY;
    CHECK(fqQuantDescSetAttribute(d.d, FQ_QUANT_DESC_SWIGLU_LIMIT, &f, 4) == FQ_STATUS_SUCCESS);
    expect_error(fqQuantDescSetAttribute(d.d, FQ_QUANT_DESC_SWIGLU_ALPHA, &f, 4), FQ_STATUS_INVALID_VALUE, "ALPHA");
    // Round trip of every attribute's default size and value survives get.
    size_t n = 0;
    CHECK(fqQuantDescGetAttribute(d.d, FQ_QUANT_DESC_STATIC_SCALE_POINTER, nullptr, 0, &n) == FQ_STATUS_SUCCESS);
    CHECK(n == sizeof(void*));
    int32_t g = 64, back = 0;
    REQUIRE(fqQuantDescSetAttribute(d.d, FQ_QUANT_DESC_GROUP_SIZE, &g, 4) == FQ_STATUS_SUCCESS);
    REQUIRE(fqQuantDescGetAttribute(d.d, FQ_QUANT_DESC_GROUP_SIZE, &back, 4, &n) == FQ_STATUS_SUCCESS);
    CHECK(back == 64);
    float limit = 0;
    REQUIRE(fqQuantDescGetAttribute(d.d, FQ_QUANT_DESC_SWIGLU_LIMIT, &limit, 4, &n) == FQ_STATUS_SUCCESS);
    CHECK(std::isinf(limit));
}

TEST_CASE("tensor layouts: bad dtype, negative rows, zero cols and ld < cols are refused") {
    fqTensorLayout_t l = nullptr;
    expect_error(fqTensorLayoutCreate(nullptr, FQ_TYPE_BF16, 1, 1, 1), FQ_STATUS_NULL_POINTER, "layout");
    expect_error(fqTensorLayoutCreate(&l, 77, 1, 1, 1), FQ_STATUS_INVALID_VALUE, "dtype");
    expect_error(fqTensorLayoutCreate(&l, FQ_TYPE_BF16, -1, 1, 1), FQ_STATUS_INVALID_VALUE, "rows");
    expect_error(fqTensorLayoutCreate(&l, FQ_TYPE_BF16, 1, 0, 1), FQ_STATUS_INVALID_VALUE, "cols");
    expect_error(fqTensorLayoutCreate(&l, FQ_TYPE_BF16, 1, 8, 4), FQ_STATUS_INVALID_VALUE, "ld");
    Layout ok(FQ_TYPE_BF16, 2, 8, 8);
    int64_t ld = 2;
    expect_error(fqTensorLayoutSetAttribute(ok.l, FQ_TENSOR_LAYOUT_LD, &ld, 4), FQ_STATUS_INVALID_VALUE, "sizeInBytes");
}

namespace {
// One execute with everything valid except what `spoil` changes.
struct Problem {
    Handle h;
    Desc d;
    int64_t M = 4, H = 64;
    std::vector<uint16_t> in = std::vector<uint16_t>(size_t(4 * 128), 0x3F80);
    std::vector<uint8_t> out = std::vector<uint8_t>(size_t(4 * 64) + 64, 0xCD);  // 64 guard bytes
    std::vector<uint8_t> scales = std::vector<uint8_t>(4 * 2 * 4 + 64, 0xCD);
    Problem() { d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT).i32(FQ_QUANT_DESC_GROUP_SIZE, 32); }
    fqStatus_t run(int32_t in_type = FQ_TYPE_BF16, int64_t in_cols = 128, int32_t out_type = FQ_TYPE_FP8_E4M3FN,
                   int64_t out_rows = 4, size_t scale_bytes = 32, const void* input = nullptr, void* output = nullptr,
                   void* sc = nullptr) {
        Layout li(in_type, M, in_cols, in_cols), lo(out_type, out_rows, H, H);
        const fqStatus_t s = fqQuantize(h.h, d.d, li.l, input ? input : in.data(), lo.l, output ? output : out.data(),
                                        sc ? sc : scales.data(), scale_bytes, nullptr, 0, nullptr);
        g_kept_message = fqGetLastErrorMessage();
        return s;
    }
    bool guards_intact() const {
        for (size_t i = size_t(M * H); i < out.size(); ++i) if (out[i] != 0xCD) return false;
        for (size_t i = 32; i < scales.size(); ++i) if (scales[i] != 0xCD) return false;
        return true;
    }
};
}  // namespace

TEST_CASE("fqQuantize: each argument wrong gives its status, names it, and leaves guard bytes alone") {
    { Problem p; CHECK(p.run() == FQ_STATUS_SUCCESS); CHECK(p.guards_intact()); }
    { Problem p; expect_error(p.run(FQ_TYPE_FP32), FQ_STATUS_INVALID_VALUE, "inputLayout"); }
    { Problem p; expect_error(p.run(FQ_TYPE_BF16, 100), FQ_STATUS_INVALID_VALUE, "inputLayout"); }
    { Problem p; expect_error(p.run(FQ_TYPE_BF16, 128, FQ_TYPE_INT8), FQ_STATUS_INVALID_VALUE, "outputLayout"); }
    { Problem p; expect_error(p.run(FQ_TYPE_BF16, 128, FQ_TYPE_FP8_E4M3FN, 3), FQ_STATUS_INVALID_VALUE, "rows"); }
    { Problem p; expect_error(p.run(FQ_TYPE_BF16, 128, FQ_TYPE_FP8_E4M3FN, 4, 31), FQ_STATUS_INSUFFICIENT_BUFFER, "scalesSizeInBytes"); CHECK(p.guards_intact()); }
    { Problem p; Layout li(FQ_TYPE_BF16, 4, 128, 128), lo(FQ_TYPE_FP8_E4M3FN, 4, 64, 64);
      expect_error(fqQuantize(p.h.h, p.d.d, li.l, nullptr, lo.l, p.out.data(), p.scales.data(), 32, nullptr, 0, nullptr), FQ_STATUS_NULL_POINTER, "input");
      expect_error(fqQuantize(p.h.h, p.d.d, li.l, p.in.data(), lo.l, nullptr, p.scales.data(), 32, nullptr, 0, nullptr), FQ_STATUS_NULL_POINTER, "output");
      expect_error(fqQuantize(p.h.h, p.d.d, li.l, p.in.data(), lo.l, p.out.data(), nullptr, 32, nullptr, 0, nullptr), FQ_STATUS_NULL_POINTER, "scales");
      expect_error(fqQuantize(nullptr, p.d.d, li.l, p.in.data(), lo.l, p.out.data(), p.scales.data(), 32, nullptr, 0, nullptr), FQ_STATUS_INVALID_HANDLE, "handle");
      expect_error(fqQuantize(p.h.h, nullptr, li.l, p.in.data(), lo.l, p.out.data(), p.scales.data(), 32, nullptr, 0, nullptr), FQ_STATUS_INVALID_HANDLE, "desc");
      expect_error(fqQuantize(p.h.h, p.d.d, lo.l == nullptr ? nullptr : reinterpret_cast<fqTensorLayout_t>(p.d.d), p.in.data(), lo.l, p.out.data(), p.scales.data(), 32, nullptr, 0, nullptr), FQ_STATUS_INVALID_HANDLE, "inputLayout"); }
    { Problem p; p.d.i32(FQ_QUANT_DESC_GROUP_SIZE, 48); expect_error(p.run(), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_GROUP_SIZE"); }
    { Problem p; p.d.i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0); expect_error(p.run(), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_TYPE"); }
    { Problem p; p.d.i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4); expect_error(p.run(), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_LAYOUT"); }
    { Problem p; p.d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).i32(FQ_QUANT_DESC_GROUP_SIZE, 0); expect_error(p.run(), FQ_STATUS_NULL_POINTER, "FQ_QUANT_DESC_STATIC_SCALE_POINTER"); }
    { Problem p; float ub = 1; p.d.i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_INT8).ptr(FQ_QUANT_DESC_SCALE_UB_POINTER, &ub); expect_error(p.run(FQ_TYPE_BF16, 128, FQ_TYPE_INT8), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_UB_POINTER"); }
    { Problem p; p.d.f32(FQ_QUANT_DESC_QMAX, 500.0f); expect_error(p.run(), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_QMAX"); }
    { Problem p; p.d.i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_NONE).i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SWIGLU_OAI); expect_error(p.run(), FQ_STATUS_INVALID_VALUE, "SWIGLU_OAI"); }
    { Problem p; p.d.i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_BLOCK_INTERLEAVED).i32(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, 48); expect_error(p.run(), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_GATE_BLOCK_WIDTH"); }
    { Problem p; p.d.i32(FQ_QUANT_DESC_OUTPUTS, 0); expect_error(p.run(), FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_OUTPUTS"); }
}

TEST_CASE("combinations with no implementation yet answer NOT_SUPPORTED and name what is missing") {
    Handle h;
    Layout li(FQ_TYPE_BF16, 4, 64, 64), lo(FQ_TYPE_FP8_E4M3FN, 4, 64, 64);
    char name[64];
    {
        Desc d;
        const int32_t counts[2] = {1, 2};
        d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_BLOCK_2D).i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED);
        d.i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2).ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
        expect_error(fqQuerySupport(h.h, d.d, li.l, lo.l, name, sizeof name), FQ_STATUS_NOT_SUPPORTED, "BLOCK_2D");
    }
    Desc ok;
    CHECK(fqQuerySupport(h.h, ok.d, li.l, lo.l, name, sizeof name) == FQ_STATUS_SUCCESS);
    CHECK(std::string(name) == "host.reference");
}

TEST_CASE("scale buffer queries return sizes, padding and strides of each layout") {
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 128).i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
    auto info = [&](int32_t what) { int64_t v = -1; REQUIRE(fqGetScaleBufferInfo(d.d, 7, 300, FQ_OUTPUT_ROWWISE, what, &v) == 0); return v; };
    CHECK(info(FQ_SCALE_INFO_COLS) == 3);
    CHECK(info(FQ_SCALE_INFO_ROWS) == 7);
    CHECK(info(FQ_SCALE_INFO_PADDED_ROWS) == 8);
    CHECK(info(FQ_SCALE_INFO_BYTES) == 3 * 8 * 4);
    CHECK(info(FQ_SCALE_INFO_ROW_STRIDE) == 4);
    CHECK(info(FQ_SCALE_INFO_COL_STRIDE) == 32);
    int64_t v;
    expect_error(fqGetScaleBufferInfo(d.d, -1, 300, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BYTES, &v), FQ_STATUS_INVALID_VALUE, "rows");
    expect_error(fqGetScaleBufferInfo(d.d, 7, 300, 5, FQ_SCALE_INFO_BYTES, &v), FQ_STATUS_INVALID_VALUE, "which");
    expect_error(fqGetScaleBufferInfo(d.d, 7, 300, FQ_OUTPUT_ROWWISE, 99, &v), FQ_STATUS_INVALID_VALUE, "info");
    expect_error(fqGetScaleBufferInfo(d.d, 7, 300, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BYTES, nullptr), FQ_STATUS_NULL_POINTER, "value");
    size_t bytes = 0;
    CHECK(fqGetScaleBufferSize(d.d, 7, 300, FQ_OUTPUT_ROWWISE, &bytes) == 0);
    CHECK(bytes == 96);
    Desc st;  // a static per-tensor scale lives in the caller's pointer: no buffer, and no pointer needed to ask
    st.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC);
    CHECK(fqGetScaleBufferSize(st.d, 7, 300, FQ_OUTPUT_ROWWISE, &bytes) == FQ_STATUS_SUCCESS);
    CHECK(bytes == 0);
}

TEST_CASE("the dispatch table lists the host variant on a host handle") {
    Handle h;
    int32_t n = 0;
    REQUIRE(fqGetVariantCount(h.h, &n) == FQ_STATUS_SUCCESS);
    REQUIRE(n == 1);
    char name[256];
    REQUIRE(fqGetVariantName(h.h, 0, name, sizeof name) == FQ_STATUS_SUCCESS);
    CHECK(std::string(name).rfind("host.reference", 0) == 0);
    expect_error(fqGetVariantName(h.h, 1, name, sizeof name), FQ_STATUS_INVALID_VALUE, "index");
}

TEST_CASE("overflowing products are refused, never computed: scale extents, gated widths, layout extents") {
    Desc d;
    size_t bytes = 7;
    int64_t v = 7;
    // Per-group scales of INT64_MAX x INT64_MAX values: rows x groups overflows.
    expect_error(fqGetScaleBufferSize(d.d, INT64_MAX, INT64_MAX, FQ_OUTPUT_ROWWISE, &bytes), FQ_STATUS_INVALID_VALUE, "overflow");
    CHECK(bytes == 7);
    // Padding of the TMA layout (round_up(rows, 4)) would overflow before any product.
    Desc tma;
    tma.i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
    expect_error(fqGetScaleBufferInfo(tma.d, INT64_MAX, 1, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_PADDED_ROWS, &v), FQ_STATUS_INVALID_VALUE, "overflow");
    CHECK(v == 7);
    // ceil(cols / G) near INT64_MAX.
    Desc tok;
    tok.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN);
    expect_error(fqGetScaleBufferSize(tok.d, INT64_MAX / 2, INT64_MAX, FQ_OUTPUT_ROWWISE, &bytes), FQ_STATUS_INVALID_VALUE, "overflow");
    CHECK(fqGetScaleBufferSize(d.d, 1, INT64_MAX, FQ_OUTPUT_ROWWISE, &bytes) == FQ_STATUS_SUCCESS);  // 2^56 groups fit
    // A gated input is twice as wide as the output: 2 x cols must not be formed when it overflows.
    Handle h;
    Desc g;
    g.i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
    Layout li(FQ_TYPE_BF16, 1, 2, 2), lo(FQ_TYPE_FP8_E4M3FN, 1, INT64_MAX / 2 + 2, INT64_MAX / 2 + 2);
    expect_error(fqQuerySupport(h.h, g.d, li.l, lo.l, nullptr, 0), FQ_STATUS_INVALID_VALUE, "inputLayout");
    // rows x ld x element bytes must be a 64-bit byte count, at creation and after attribute changes.
    fqTensorLayout_t l = nullptr;
    expect_error(fqTensorLayoutCreate(&l, FQ_TYPE_BF16, INT64_MAX / 2, 1, 2), FQ_STATUS_INVALID_VALUE, "overflow");
    expect_error(fqTensorLayoutCreate(&l, FQ_TYPE_FP32, INT64_MAX / 4 + 1, 1, 1), FQ_STATUS_INVALID_VALUE, "overflow");
    CHECK(l == nullptr);
    CHECK(fqTensorLayoutCreate(&l, FQ_TYPE_FP8_E4M3FN, INT64_MAX / 2, 1, 2) == FQ_STATUS_SUCCESS);
    fqTensorLayoutDestroy(l);
    Layout grow(FQ_TYPE_BF16, 4, 64, 64);
    const int64_t huge = INT64_MAX / 64;
    REQUIRE(fqTensorLayoutSetAttribute(grow.l, FQ_TENSOR_LAYOUT_ROWS, &huge, 8) == FQ_STATUS_SUCCESS);
    Layout out(FQ_TYPE_FP8_E4M3FN, huge, 64, 64);
    Desc plain;
    expect_error(fqQuerySupport(h.h, plain.d, grow.l, out.l, nullptr, 0), FQ_STATUS_INVALID_VALUE, "inputLayout");
}

TEST_CASE("FP4 layouts need an even row stride at creation") {
    fqTensorLayout_t l = nullptr;
    expect_error(fqTensorLayoutCreate(&l, FQ_TYPE_FP4_E2M1, 2, 3, 3), FQ_STATUS_INVALID_VALUE, "ld");
    CHECK(l == nullptr);
    REQUIRE(fqTensorLayoutCreate(&l, FQ_TYPE_FP4_E2M1, 2, 3, 4) == FQ_STATUS_SUCCESS);
    fqTensorLayoutDestroy(l);
}

TEST_CASE("misaligned pointers are refused on the host backend as on the GPU") {
    Handle h;
    Desc d;
    Layout li(FQ_TYPE_BF16, 2, 32, 32), lo(FQ_TYPE_FP8_E4M3FN, 2, 32, 32);
    alignas(16) uint8_t in[2 * 32 * 2 + 2] = {};
    alignas(16) uint8_t out[2 * 32 + 1], sc[8 + 4];
    std::memset(out, 0xCD, sizeof out);
    std::memset(sc, 0xCD, sizeof sc);
    auto untouched = [&] { for (uint8_t b : out) if (b != 0xCD) return false; for (uint8_t b : sc) if (b != 0xCD) return false; return true; };
    expect_error(fqQuantize(h.h, d.d, li.l, in + 1, lo.l, out, sc, 8, nullptr, 0, nullptr), FQ_STATUS_MISALIGNED, "input");
    expect_error(fqQuantize(h.h, d.d, li.l, in, lo.l, out, sc + 2, 8, nullptr, 0, nullptr), FQ_STATUS_MISALIGNED, "scales");
    CHECK(untouched());
    alignas(4) float f[2] = {1.0f, 1.0f};
    const void* odd = reinterpret_cast<const uint8_t*>(f) + 1;
    for (int32_t attr : {FQ_QUANT_DESC_SCALE_UB_POINTER, FQ_QUANT_DESC_ROW_PROB_POINTER}) {
        Desc p;
        p.ptr(attr, odd);
        expect_error(fqQuantize(h.h, p.d, li.l, in, lo.l, out, sc, 8, nullptr, 0, nullptr), FQ_STATUS_MISALIGNED, "_POINTER");
    }
    Desc st;
    st.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, odd);
    expect_error(fqQuantize(h.h, st.d, li.l, in, lo.l, out, sc, 8, nullptr, 0, nullptr), FQ_STATUS_MISALIGNED, "FQ_QUANT_DESC_STATIC_SCALE_POINTER");
    CHECK(untouched());
    // Values are bytes and E8M0 scales are bytes: any address is fine for them.
    Desc e8;
    e8.i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0).i32(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL).i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
    CHECK(fqQuantize(h.h, e8.d, li.l, in, lo.l, out + 1, sc + 1, 2, nullptr, 0, nullptr) == FQ_STATUS_SUCCESS);
    CHECK(out[0] == 0xCD);
    CHECK(sc[0] == 0xCD);
    CHECK(sc[3] == 0xCD);
}

TEST_CASE("FQ_HANDLE_VARIANT: an index past the handle's variants is refused when set, and changes nothing") {
    Handle h;
    int32_t n = 0, v = 0;
    REQUIRE(fqGetVariantCount(h.h, &n) == FQ_STATUS_SUCCESS);
    expect_error(fqHandleSetAttribute(h.h, FQ_HANDLE_VARIANT, &n, 4), FQ_STATUS_INVALID_VALUE, "FQ_HANDLE_VARIANT");
    size_t w = 0;
    REQUIRE(fqHandleGetAttribute(h.h, FQ_HANDLE_VARIANT, &v, 4, &w) == FQ_STATUS_SUCCESS);
    CHECK(v == -1);
    v = n - 1;
    CHECK(fqHandleSetAttribute(h.h, FQ_HANDLE_VARIANT, &v, 4) == FQ_STATUS_SUCCESS);
}

TEST_CASE("fqGetVariantName: a NULL name is NULL_POINTER, a zero capacity INVALID_VALUE, truncation stays inside") {
    Handle h;
    char name[16];
    std::memset(name, 0x5A, sizeof name);
    expect_error(fqGetVariantName(h.h, 0, nullptr, 8), FQ_STATUS_NULL_POINTER, "name");
    expect_error(fqGetVariantName(h.h, 0, name, 0), FQ_STATUS_INVALID_VALUE, "nameCapacity");
    CHECK(static_cast<unsigned char>(name[0]) == 0x5A);
    REQUIRE(fqGetVariantName(h.h, 0, name, 5) == FQ_STATUS_SUCCESS);
    CHECK(std::string(name) == "host");
    for (size_t i = 5; i < sizeof name; ++i) CHECK(static_cast<unsigned char>(name[i]) == 0x5A);
}

TEST_CASE("fqGetWorkspaceSize answers NOT_SUPPORTED, as fqQuerySupport does, for a problem no variant runs") {
    Handle h;
    Desc d;
    const int32_t counts[2] = {1, 2};
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_BLOCK_2D).i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED);
    d.i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2).ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
    Layout li(FQ_TYPE_BF16, 4, 64, 64), lo(FQ_TYPE_FP8_E4M3FN, 4, 64, 64);
    size_t ws = 77;
    expect_error(fqGetWorkspaceSize(h.h, d.d, li.l, lo.l, &ws), FQ_STATUS_NOT_SUPPORTED, "BLOCK_2D");
    CHECK(ws == 77);
    Desc ok;
    CHECK(fqGetWorkspaceSize(h.h, ok.d, li.l, lo.l, &ws) == FQ_STATUS_SUCCESS);
    CHECK(ws == 0);
}
