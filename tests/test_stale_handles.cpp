// Dead objects stay dead: a destroyed handle, quantization descriptor, tensor layout or grouped GEMM descriptor
// is refused with INVALID_HANDLE by every entry point that takes it, even after many new objects of its kind
// were created (with address-keyed bookkeeping the allocator hands the dead object's memory to one of them, and
// the stale value would name that new object). The new objects keep working, and a second destroy never
// destroys one of them. Meaningful in a build without AddressSanitizer, whose quarantine delays address reuse.
#include <string>
#include <vector>

#include "fq_test_util.h"

using namespace fqt;

namespace {

constexpr int kFresh = 64;  // new objects created after the destroy; the first reuses freed memory at once
constexpr int64_t kRows = 4, kCols = 128;

void expect_invalid_handle(fqStatus_t got, const char* arg, const char* call) {
    const std::string message = fqGetLastErrorMessage();
    INFO((std::string(call) + " with a stale " + arg + ": " + fqGetStatusString(got) + ": " + message));
    CHECK(got == FQ_STATUS_INVALID_HANDLE);
    CHECK(message.find(arg) != std::string::npos);
}

// One live object of every kind, and the buffers of a small valid fqQuantize call.
struct World {
    fqHandle_t handle = nullptr;
    fqQuantDesc_t desc = nullptr;
    fqTensorLayout_t in = nullptr, out = nullptr, a = nullptr, b = nullptr, y = nullptr;
    fqGroupedGemmDesc_t gemm = nullptr;
    std::vector<uint16_t> input = std::vector<uint16_t>(size_t(kRows * kCols), 0x3F80);  // bf16 1.0
    std::vector<uint8_t> output = std::vector<uint8_t>(size_t(kRows * kCols));
    std::vector<uint8_t> scales = std::vector<uint8_t>(4096);

    World() {
        REQUIRE(fqCreate(&handle, FQ_BACKEND_HOST, -1) == FQ_STATUS_SUCCESS);
        REQUIRE(fqQuantDescCreate(&desc) == FQ_STATUS_SUCCESS);
        REQUIRE(fqGroupedGemmDescCreate(&gemm) == FQ_STATUS_SUCCESS);
        REQUIRE(fqTensorLayoutCreate(&in, FQ_TYPE_BF16, kRows, kCols, kCols) == FQ_STATUS_SUCCESS);
        REQUIRE(fqTensorLayoutCreate(&out, FQ_TYPE_FP8_E4M3FN, kRows, kCols, kCols) == FQ_STATUS_SUCCESS);
        REQUIRE(fqTensorLayoutCreate(&a, FQ_TYPE_FP8_E4M3FN, kRows, kCols, kCols) == FQ_STATUS_SUCCESS);
        REQUIRE(fqTensorLayoutCreate(&b, FQ_TYPE_FP8_E4M3FN, kCols, kCols, kCols) == FQ_STATUS_SUCCESS);
        REQUIRE(fqTensorLayoutCreate(&y, FQ_TYPE_FP8_E4M3FN, kRows, kCols, kCols) == FQ_STATUS_SUCCESS);
    }
    ~World() {
        fqDestroy(handle);
        fqQuantDescDestroy(desc);
        fqGroupedGemmDescDestroy(gemm);
        for (fqTensorLayout_t l : {in, out, a, b, y}) fqTensorLayoutDestroy(l);
    }
    fqStatus_t quantize(fqHandle_t h, fqQuantDesc_t d, fqTensorLayout_t i, fqTensorLayout_t o) {
        return fqQuantize(h, d, i, input.data(), o, output.data(), scales.data(), scales.size(), nullptr, 0, nullptr);
    }
    // The data pointers are never reached: the objects are checked first.
    fqStatus_t gemm_call(fqHandle_t h, fqGroupedGemmDesc_t g, fqQuantDesc_t e, fqTensorLayout_t la, fqTensorLayout_t lb,
                         fqTensorLayout_t ly) {
        return fqGroupedGemm(h, g, e, la, nullptr, nullptr, lb, nullptr, nullptr, ly, nullptr, nullptr, 0, nullptr);
    }
};

// Creates `kFresh` objects of one kind with `create` after `stale` was destroyed; reports whether the stale
// value was handed out again (it is with address-keyed objects, never with the fix).
template <class T, class Create>
std::vector<T> create_fresh(T stale, Create create) {
    std::vector<T> fresh(kFresh);
    bool reused = false;
    for (T& f : fresh) {
        REQUIRE(create(&f) == FQ_STATUS_SUCCESS);
        reused |= f == stale;
    }
    MESSAGE((std::string("the stale value was handed out again: ") + (reused ? "yes" : "no")));
    return fresh;
}

}  // namespace

TEST_CASE("a destroyed handle stays dead after its memory could be reused") {
    World w;
    fqHandle_t stale = nullptr;
    REQUIRE(fqCreate(&stale, FQ_BACKEND_HOST, -1) == FQ_STATUS_SUCCESS);
    REQUIRE(fqDestroy(stale) == FQ_STATUS_SUCCESS);
    const auto fresh = create_fresh(stale, [](fqHandle_t* h) { return fqCreate(h, FQ_BACKEND_HOST, -1); });

    int32_t v = -1, count = 0;
    size_t n = 0, bytes = 0;
    char name[64];
    expect_invalid_handle(fqHandleSetAttribute(stale, FQ_HANDLE_VARIANT, &v, 4), "handle", "fqHandleSetAttribute");
    expect_invalid_handle(fqHandleGetAttribute(stale, FQ_HANDLE_BACKEND, &v, 4, &n), "handle", "fqHandleGetAttribute");
    expect_invalid_handle(fqGetVariantCount(stale, &count), "handle", "fqGetVariantCount");
    expect_invalid_handle(fqGetVariantName(stale, 0, name, sizeof name), "handle", "fqGetVariantName");
    expect_invalid_handle(fqGetWorkspaceSize(stale, w.desc, w.in, w.out, &bytes), "handle", "fqGetWorkspaceSize");
    expect_invalid_handle(fqQuerySupport(stale, w.desc, w.in, w.out, name, sizeof name), "handle", "fqQuerySupport");
    expect_invalid_handle(w.quantize(stale, w.desc, w.in, w.out), "handle", "fqQuantize");
    std::vector<uint8_t> src(64), dst(64);
    expect_invalid_handle(fqScaleRepack(stale, FQ_TYPE_FP32, 1, 4, 4, FQ_SCALE_REPACK_BLOCKS, nullptr, 0,
                                        FQ_SCALE_LAYOUT_ROW_MAJOR, src.data(), src.size(), FQ_SCALE_LAYOUT_COL_MAJOR,
                                        dst.data(), dst.size(), nullptr),
                          "handle", "fqScaleRepack");
    expect_invalid_handle(w.gemm_call(stale, w.gemm, w.desc, w.a, w.b, w.y), "handle", "fqGroupedGemm");
    expect_invalid_handle(fqDestroy(stale), "handle", "fqDestroy");

    for (fqHandle_t h : fresh) {
        CHECK(w.quantize(h, w.desc, w.in, w.out) == FQ_STATUS_SUCCESS);
        CHECK(fqDestroy(h) == FQ_STATUS_SUCCESS);
    }
}

TEST_CASE("a destroyed quantization descriptor stays dead after its memory could be reused") {
    World w;
    fqQuantDesc_t stale = nullptr;
    REQUIRE(fqQuantDescCreate(&stale) == FQ_STATUS_SUCCESS);
    REQUIRE(fqQuantDescDestroy(stale) == FQ_STATUS_SUCCESS);
    const auto fresh = create_fresh(stale, [](fqQuantDesc_t* d) { return fqQuantDescCreate(d); });

    int32_t v = 32;
    int64_t info = 0;
    size_t n = 0, bytes = 0;
    char name[64];
    expect_invalid_handle(fqQuantDescSetAttribute(stale, FQ_QUANT_DESC_GROUP_SIZE, &v, 4), "desc", "fqQuantDescSetAttribute");
    expect_invalid_handle(fqQuantDescGetAttribute(stale, FQ_QUANT_DESC_GROUP_SIZE, &v, 4, &n), "desc",
                          "fqQuantDescGetAttribute");
    expect_invalid_handle(fqGetScaleBufferSize(stale, kRows, kCols, FQ_OUTPUT_ROWWISE, &bytes), "desc", "fqGetScaleBufferSize");
    expect_invalid_handle(fqGetScaleBufferInfo(stale, kRows, kCols, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BYTES, &info), "desc",
                          "fqGetScaleBufferInfo");
    expect_invalid_handle(fqGetWorkspaceSize(w.handle, stale, w.in, w.out, &bytes), "desc", "fqGetWorkspaceSize");
    expect_invalid_handle(fqQuerySupport(w.handle, stale, w.in, w.out, name, sizeof name), "desc", "fqQuerySupport");
    expect_invalid_handle(w.quantize(w.handle, stale, w.in, w.out), "desc", "fqQuantize");
    expect_invalid_handle(fqGroupedGemmGetScaleBufferSize(w.gemm, stale, kRows, kCols, FQ_OUTPUT_ROWWISE, &bytes),
                          "epilogueDesc", "fqGroupedGemmGetScaleBufferSize");
    expect_invalid_handle(w.gemm_call(w.handle, w.gemm, stale, w.a, w.b, w.y), "epilogueDesc", "fqGroupedGemm");
    expect_invalid_handle(fqQuantDescDestroy(stale), "desc", "fqQuantDescDestroy");

    for (fqQuantDesc_t d : fresh) {
        CHECK(fqQuantDescGetAttribute(d, FQ_QUANT_DESC_GROUP_SIZE, &v, 4, &n) == FQ_STATUS_SUCCESS);
        CHECK(v == 128);  // the default: nobody else's value
        CHECK(w.quantize(w.handle, d, w.in, w.out) == FQ_STATUS_SUCCESS);
        CHECK(fqQuantDescDestroy(d) == FQ_STATUS_SUCCESS);
    }
}

TEST_CASE("a destroyed tensor layout stays dead after its memory could be reused") {
    World w;
    fqTensorLayout_t stale = nullptr;
    REQUIRE(fqTensorLayoutCreate(&stale, FQ_TYPE_BF16, kRows, kCols, kCols) == FQ_STATUS_SUCCESS);
    REQUIRE(fqTensorLayoutDestroy(stale) == FQ_STATUS_SUCCESS);
    const auto fresh = create_fresh(stale, [](fqTensorLayout_t* l) {
        return fqTensorLayoutCreate(l, FQ_TYPE_BF16, kRows, kCols, kCols);
    });

    int64_t rows = kRows;
    size_t n = 0, bytes = 0;
    char name[64];
    expect_invalid_handle(fqTensorLayoutSetAttribute(stale, FQ_TENSOR_LAYOUT_ROWS, &rows, 8), "layout",
                          "fqTensorLayoutSetAttribute");
    expect_invalid_handle(fqTensorLayoutGetAttribute(stale, FQ_TENSOR_LAYOUT_ROWS, &rows, 8, &n), "layout",
                          "fqTensorLayoutGetAttribute");
    expect_invalid_handle(fqGetWorkspaceSize(w.handle, w.desc, stale, w.out, &bytes), "input", "fqGetWorkspaceSize");
    expect_invalid_handle(fqQuerySupport(w.handle, w.desc, w.in, stale, name, sizeof name), "output", "fqQuerySupport");
    expect_invalid_handle(w.quantize(w.handle, w.desc, stale, w.out), "inputLayout", "fqQuantize");
    expect_invalid_handle(w.quantize(w.handle, w.desc, w.in, stale), "outputLayout", "fqQuantize");
    expect_invalid_handle(w.gemm_call(w.handle, w.gemm, w.desc, stale, w.b, w.y), "aLayout", "fqGroupedGemm");
    expect_invalid_handle(w.gemm_call(w.handle, w.gemm, w.desc, w.a, stale, w.y), "bLayout", "fqGroupedGemm");
    expect_invalid_handle(w.gemm_call(w.handle, w.gemm, w.desc, w.a, w.b, stale), "outputLayout", "fqGroupedGemm");
    expect_invalid_handle(fqTensorLayoutDestroy(stale), "layout", "fqTensorLayoutDestroy");

    for (fqTensorLayout_t l : fresh) {
        CHECK(w.quantize(w.handle, w.desc, l, w.out) == FQ_STATUS_SUCCESS);
        CHECK(fqTensorLayoutDestroy(l) == FQ_STATUS_SUCCESS);
    }
}

TEST_CASE("a destroyed grouped GEMM descriptor stays dead after its memory could be reused") {
    World w;
    fqGroupedGemmDesc_t stale = nullptr;
    REQUIRE(fqGroupedGemmDescCreate(&stale) == FQ_STATUS_SUCCESS);
    REQUIRE(fqGroupedGemmDescDestroy(stale) == FQ_STATUS_SUCCESS);
    const auto fresh = create_fresh(stale, [](fqGroupedGemmDesc_t* g) { return fqGroupedGemmDescCreate(g); });

    int32_t groups = 2;
    int64_t info = 0;
    size_t n = 0, bytes = 0;
    expect_invalid_handle(fqGroupedGemmDescSetAttribute(stale, FQ_GEMM_DESC_NUM_GROUPS, &groups, 4), "desc",
                          "fqGroupedGemmDescSetAttribute");
    expect_invalid_handle(fqGroupedGemmDescGetAttribute(stale, FQ_GEMM_DESC_NUM_GROUPS, &groups, 4, &n), "desc",
                          "fqGroupedGemmDescGetAttribute");
    expect_invalid_handle(fqGroupedGemmGetScaleBufferSize(stale, w.desc, kRows, kCols, FQ_OUTPUT_ROWWISE, &bytes),
                          "gemmDesc", "fqGroupedGemmGetScaleBufferSize");
    expect_invalid_handle(fqGroupedGemmGetScaleBufferInfo(stale, w.desc, kRows, kCols, FQ_OUTPUT_ROWWISE,
                                                          FQ_SCALE_INFO_BYTES, &info),
                          "gemmDesc", "fqGroupedGemmGetScaleBufferInfo");
    expect_invalid_handle(w.gemm_call(w.handle, stale, w.desc, w.a, w.b, w.y), "gemmDesc", "fqGroupedGemm");
    expect_invalid_handle(fqGroupedGemmDescDestroy(stale), "desc", "fqGroupedGemmDescDestroy");

    for (fqGroupedGemmDesc_t g : fresh) {
        CHECK(fqGroupedGemmDescGetAttribute(g, FQ_GEMM_DESC_NUM_GROUPS, &groups, 4, &n) == FQ_STATUS_SUCCESS);
        CHECK(groups == 1);  // the default: nobody else's value
        CHECK(fqGroupedGemmDescDestroy(g) == FQ_STATUS_SUCCESS);
    }
}
