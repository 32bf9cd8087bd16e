/* A program built against the PREVIOUS release's header (abi/previous/fusedquant.h, docs/abi.md) and run
 * against this library: what a user's old binary does. It uses a broad set of the old API with the old
 * numbers (status codes, enum values, attribute ids and their sizes, FQ_SCALE_INFO ids) and checks the
 * statuses and the exact bytes against values worked out by hand from the spec (docs/spec.md):
 *   - version, status names, errors and their messages, handle and layout attributes;
 *   - every descriptor attribute's size and the documented defaults;
 *   - fqQuantize: per-group 32 e4m3fn (scales 1 and 0.5), gated ReLU per-token int8, MXFP8 with E8M0 scales in
 *     SWIZZLED_128X4 (padding zero), the scale-buffer facts;
 *   - fqScaleRepack ROW_MAJOR -> COL_MAJOR, and a grouped GEMM on the host backend writing C and D.
 * C99, no C++; exit status 0 when everything holds. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fusedquant.h" /* abi/previous/fusedquant.h: the only include directory with this name */

static int failures = 0;

#define EXPECT(cond, ...)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            ++failures;                                                        \
            fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, " (last message: %s)\n", fqGetLastErrorMessage()); \
        }                                                                      \
    } while (0)
#define OK(call) EXPECT((call) == FQ_STATUS_SUCCESS, "%s", #call)

static void set_i32(fqQuantDesc_t d, int32_t attr, int32_t v) {
    EXPECT(fqQuantDescSetAttribute(d, attr, &v, sizeof v) == FQ_STATUS_SUCCESS, "attribute %d = %d", attr, v);
}

static void expect_bytes(const char* what, const uint8_t* got, const uint8_t* want, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        if (got[i] != want[i]) {
            EXPECT(got[i] == want[i], "%s: byte %zu is 0x%02X, expected 0x%02X", what, i, got[i], want[i]);
            return;
        }
    }
}

/* bf16 bit patterns of the exact values used below. */
enum { B0 = 0x0000, B05 = 0x3F00, B1 = 0x3F80, B2 = 0x4000, B3 = 0x4040, B5 = 0x40A0, BM05 = 0xBF00, BM1 = 0xBF80,
       BM4 = 0xC080, B127 = 0x42FE, B224 = 0x4360, B448 = 0x43E0 };

static void status_and_errors(void) {
    static const char* names[] = {"FQ_STATUS_SUCCESS", "FQ_STATUS_INVALID_VALUE", "FQ_STATUS_NULL_POINTER",
                                  "FQ_STATUS_INVALID_HANDLE", "FQ_STATUS_NOT_SUPPORTED", "FQ_STATUS_MISALIGNED",
                                  "FQ_STATUS_INSUFFICIENT_BUFFER", "FQ_STATUS_INSUFFICIENT_WORKSPACE",
                                  "FQ_STATUS_ALLOC_FAILED", "FQ_STATUS_CUDA_ERROR", "FQ_STATUS_NO_DEVICE",
                                  "FQ_STATUS_INTERNAL_ERROR"};
    const int32_t codes[] = {FQ_STATUS_SUCCESS, FQ_STATUS_INVALID_VALUE, FQ_STATUS_NULL_POINTER, FQ_STATUS_INVALID_HANDLE,
                             FQ_STATUS_NOT_SUPPORTED, FQ_STATUS_MISALIGNED, FQ_STATUS_INSUFFICIENT_BUFFER,
                             FQ_STATUS_INSUFFICIENT_WORKSPACE, FQ_STATUS_ALLOC_FAILED, FQ_STATUS_CUDA_ERROR,
                             FQ_STATUS_NO_DEVICE, FQ_STATUS_INTERNAL_ERROR};
    size_t i;
    fqQuantDesc_t d = NULL;
    int32_t v = 0;
    const uint32_t version = fqGetVersion();

    EXPECT(version / 10000 == FQ_VERSION_MAJOR && version >= FQ_VERSION_NUMBER, "library version %u, header %d",
           (unsigned)version, FQ_VERSION_NUMBER);
    for (i = 0; i < sizeof codes / sizeof codes[0]; ++i)
        EXPECT(strcmp(fqGetStatusString(codes[i]), names[i]) == 0, "status %d is named %s", codes[i],
               fqGetStatusString(codes[i]));
    EXPECT(fqCreate(NULL, FQ_BACKEND_HOST, 0) == FQ_STATUS_NULL_POINTER, "fqCreate(NULL)");
    EXPECT(fqGetLastErrorMessage()[0] != '\0', "a failure has a message");
    EXPECT(fqQuantDescSetAttribute(NULL, FQ_QUANT_DESC_SCHEME, &v, 4) == FQ_STATUS_INVALID_HANDLE, "NULL descriptor");
    OK(fqQuantDescCreate(&d));
    EXPECT(fqQuantDescSetAttribute(d, 9999, &v, 4) == FQ_STATUS_INVALID_VALUE, "unknown attribute");
    EXPECT(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_SCHEME, &v, 8) == FQ_STATUS_INVALID_VALUE, "wrong size");
    OK(fqQuantDescDestroy(d));
    EXPECT(fqGetLastErrorMessage()[0] == '\0', "no message after a success");
}

/* Every attribute of the old header has the size its type states, and the documented default. */
static void attributes(fqHandle_t h) {
    static const struct { int32_t id; size_t size; } desc_attrs[] = {
        {FQ_QUANT_DESC_ACTIVATION, 4}, {FQ_QUANT_DESC_GATE_LAYOUT, 4}, {FQ_QUANT_DESC_GATE_ORDER, 4},
        {FQ_QUANT_DESC_GATE_BLOCK_WIDTH, 4}, {FQ_QUANT_DESC_INTERMEDIATE_ROUNDING, 4}, {FQ_QUANT_DESC_SCHEME, 4},
        {FQ_QUANT_DESC_GROUP_SIZE, 4}, {FQ_QUANT_DESC_OUTPUT_TYPE, 4}, {FQ_QUANT_DESC_SCALE_TYPE, 4},
        {FQ_QUANT_DESC_SCALE_LAYOUT, 4}, {FQ_QUANT_DESC_SCALE_ROUNDING, 4}, {FQ_QUANT_DESC_MX_SCALE_RULE, 4},
        {FQ_QUANT_DESC_SCALE_APPLY, 4}, {FQ_QUANT_DESC_QMAX, sizeof(float)}, {FQ_QUANT_DESC_MIN_SCALE, sizeof(float)},
        {FQ_QUANT_DESC_SWIGLU_ALPHA, sizeof(float)}, {FQ_QUANT_DESC_SWIGLU_BETA, sizeof(float)},
        {FQ_QUANT_DESC_SWIGLU_LIMIT, sizeof(float)}, {FQ_QUANT_DESC_STATIC_SCALE_POINTER, sizeof(void*)},
        {FQ_QUANT_DESC_SCALE_UB_POINTER, sizeof(void*)}, {FQ_QUANT_DESC_ROW_PROB_POINTER, sizeof(void*)},
        {FQ_QUANT_DESC_MOE_LAYOUT, 4}, {FQ_QUANT_DESC_MOE_NUM_EXPERTS, 4},
        {FQ_QUANT_DESC_MOE_OFFSETS_POINTER, sizeof(void*)}, {FQ_QUANT_DESC_MOE_COUNTS_POINTER, sizeof(void*)},
        {FQ_QUANT_DESC_OUTPUTS, 4}, {FQ_QUANT_DESC_COLUMNWISE_BLOCK, 4}, {FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, 4},
        {FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, sizeof(void*)}, {FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, sizeof(void*)},
        {FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, sizeof(void*)}};
    static const struct { int32_t id; size_t size; } gemm_attrs[] = {
        {FQ_GEMM_DESC_NUM_GROUPS, 4}, {FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, sizeof(void*)},
        {FQ_GEMM_DESC_GROUP_COUNTS_POINTER, sizeof(void*)}, {FQ_GEMM_DESC_ALPHA_POINTER, sizeof(void*)},
        {FQ_GEMM_DESC_A_SCALE_LAYOUT, 4}, {FQ_GEMM_DESC_C_OUTPUT_POINTER, sizeof(void*)},
        {FQ_GEMM_DESC_D_OUTPUT_POINTER, sizeof(void*)}, {FQ_GEMM_DESC_QUANTIZE, 4}};
    static const struct { int32_t id; int32_t value; } int_defaults[] = {
        {FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_IDENTITY}, {FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_NONE},
        {FQ_QUANT_DESC_GATE_ORDER, FQ_GATE_ORDER_GATE_FIRST}, {FQ_QUANT_DESC_GATE_BLOCK_WIDTH, 32},
        {FQ_QUANT_DESC_INTERMEDIATE_ROUNDING, FQ_ROUNDING_FP32}, {FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_GROUP},
        {FQ_QUANT_DESC_GROUP_SIZE, 128}, {FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP8_E4M3FN},
        {FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP32}, {FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_ROW_MAJOR},
        {FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_NONE}, {FQ_QUANT_DESC_MX_SCALE_RULE, FQ_MX_SCALE_RULE_RCEIL},
        {FQ_QUANT_DESC_SCALE_APPLY, FQ_SCALE_APPLY_DIVIDE}, {FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_NONE},
        {FQ_QUANT_DESC_MOE_NUM_EXPERTS, 0}, {FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_ROWWISE},
        {FQ_QUANT_DESC_COLUMNWISE_BLOCK, 32}, {FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, 0}};
    fqQuantDesc_t d = NULL;
    fqGroupedGemmDesc_t g = NULL;
    fqTensorLayout_t l = NULL;
    size_t i, w = 0;
    int32_t v = -7;
    int64_t v64 = 0;
    float f = 0.0f;

    OK(fqQuantDescCreate(&d));
    for (i = 0; i < sizeof desc_attrs / sizeof desc_attrs[0]; ++i) {
        w = 0;
        OK(fqQuantDescGetAttribute(d, desc_attrs[i].id, NULL, 0, &w));
        EXPECT(w == desc_attrs[i].size, "descriptor attribute %d has %zu bytes, expected %zu", desc_attrs[i].id, w,
               desc_attrs[i].size);
    }
    for (i = 0; i < sizeof int_defaults / sizeof int_defaults[0]; ++i) {
        OK(fqQuantDescGetAttribute(d, int_defaults[i].id, &v, sizeof v, &w));
        EXPECT(v == int_defaults[i].value, "attribute %d defaults to %d, expected %d", int_defaults[i].id, v,
               int_defaults[i].value);
    }
    OK(fqQuantDescGetAttribute(d, FQ_QUANT_DESC_SWIGLU_ALPHA, &f, sizeof f, &w));
    EXPECT(f == 1.702f, "SWIGLU_ALPHA defaults to %g", f);
    OK(fqQuantDescGetAttribute(d, FQ_QUANT_DESC_SWIGLU_LIMIT, &f, sizeof f, &w));
    EXPECT(f == 7.0f, "SWIGLU_LIMIT defaults to %g", f);
    OK(fqQuantDescDestroy(d));

    OK(fqGroupedGemmDescCreate(&g));
    for (i = 0; i < sizeof gemm_attrs / sizeof gemm_attrs[0]; ++i) {
        w = 0;
        OK(fqGroupedGemmDescGetAttribute(g, gemm_attrs[i].id, NULL, 0, &w));
        EXPECT(w == gemm_attrs[i].size, "GEMM attribute %d has %zu bytes, expected %zu", gemm_attrs[i].id, w,
               gemm_attrs[i].size);
    }
    OK(fqGroupedGemmDescDestroy(g));

    OK(fqHandleGetAttribute(h, FQ_HANDLE_BACKEND, &v, sizeof v, &w));
    EXPECT(v == FQ_BACKEND_HOST && w == 4, "FQ_HANDLE_BACKEND %d (%zu bytes)", v, w);
    OK(fqHandleGetAttribute(h, FQ_HANDLE_DEVICE, &v, sizeof v, &w));
    EXPECT(v == -1, "FQ_HANDLE_DEVICE %d on the host", v);
    OK(fqHandleGetAttribute(h, FQ_HANDLE_ARCH, &v, sizeof v, &w));
    EXPECT(v == 0, "FQ_HANDLE_ARCH %d on the host", v);
    OK(fqHandleGetAttribute(h, FQ_HANDLE_VARIANT, &v, sizeof v, &w));
    EXPECT(v == -1, "FQ_HANDLE_VARIANT defaults to %d", v);

    OK(fqTensorLayoutCreate(&l, FQ_TYPE_BF16, 3, 40, 48));
    OK(fqTensorLayoutGetAttribute(l, FQ_TENSOR_LAYOUT_TYPE, &v, sizeof v, &w));
    EXPECT(v == FQ_TYPE_BF16 && w == 4, "layout type %d (%zu bytes)", v, w);
    OK(fqTensorLayoutGetAttribute(l, FQ_TENSOR_LAYOUT_ROWS, &v64, sizeof v64, &w));
    EXPECT(v64 == 3 && w == 8, "layout rows %lld (%zu bytes)", (long long)v64, w);
    OK(fqTensorLayoutGetAttribute(l, FQ_TENSOR_LAYOUT_COLS, &v64, sizeof v64, &w));
    EXPECT(v64 == 40, "layout cols %lld", (long long)v64);
    OK(fqTensorLayoutGetAttribute(l, FQ_TENSOR_LAYOUT_LD, &v64, sizeof v64, &w));
    EXPECT(v64 == 48, "layout ld %lld", (long long)v64);
    OK(fqTensorLayoutDestroy(l));
}

/* Per-group 32, e4m3fn, fp32 row-major scales: row 0 has amax 448 (scale 1), row 1 amax 224 (scale 0.5). */
static void per_group_e4m3(fqHandle_t h) {
    uint16_t x[2][32];
    uint8_t y[2][32], want[2][32];
    float s[2] = {-1.0f, -1.0f};
    int64_t info[FQ_SCALE_INFO_BATCH_STRIDE + 1];
    const int64_t want_info[] = {8, 2, 1, 2, 1, 4, 4, 4, FQ_TYPE_FP32, 1, 8};
    fqQuantDesc_t d = NULL;
    fqTensorLayout_t in = NULL, out = NULL;
    size_t bytes = 0, ws = 1;
    char name[64];
    int32_t i;

    memset(x, 0, sizeof x);
    memset(want, 0, sizeof want);
    x[0][0] = B448; want[0][0] = 0x7E;
    x[0][1] = B1;   want[0][1] = 0x38;
    x[0][2] = B2;   want[0][2] = 0x40;
    x[0][3] = BM05; want[0][3] = 0xB0;
    x[1][5] = B224; want[1][5] = 0x7E;
    x[1][6] = B05;  want[1][6] = 0x38;
    x[1][7] = B1;   want[1][7] = 0x40;
    x[1][8] = BM1;  want[1][8] = 0xC0;
    OK(fqQuantDescCreate(&d));
    set_i32(d, FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_GROUP);
    set_i32(d, FQ_QUANT_DESC_GROUP_SIZE, 32);
    set_i32(d, FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP8_E4M3FN);
    OK(fqTensorLayoutCreate(&in, FQ_TYPE_BF16, 2, 32, 32));
    OK(fqTensorLayoutCreate(&out, FQ_TYPE_FP8_E4M3FN, 2, 32, 32));
    OK(fqGetScaleBufferSize(d, 2, 32, FQ_OUTPUT_ROWWISE, &bytes));
    EXPECT(bytes == sizeof s, "scale bytes %zu", bytes);
    for (i = 0; i <= FQ_SCALE_INFO_BATCH_STRIDE; ++i) {
        OK(fqGetScaleBufferInfo(d, 2, 32, FQ_OUTPUT_ROWWISE, i, &info[i]));
        EXPECT(info[i] == want_info[i], "FQ_SCALE_INFO %d is %lld, expected %lld", i, (long long)info[i],
               (long long)want_info[i]);
    }
    OK(fqQuerySupport(h, d, in, out, name, sizeof name));
    OK(fqGetWorkspaceSize(h, d, in, out, &ws));
    EXPECT(ws == 0, "workspace %zu on the host", ws);
    OK(fqQuantize(h, d, in, x, out, y, s, sizeof s, NULL, 0, NULL));
    expect_bytes("per-group e4m3fn codes", &y[0][0], &want[0][0], sizeof y);
    EXPECT(s[0] == 1.0f && s[1] == 0.5f, "scales %g %g, expected 1 0.5", s[0], s[1]);
    /* A short scale buffer is refused and nothing written. */
    memset(y, 0xA5, sizeof y);
    EXPECT(fqQuantize(h, d, in, x, out, y, s, sizeof s - 1, NULL, 0, NULL) == FQ_STATUS_INSUFFICIENT_BUFFER,
           "a short scale buffer");
    EXPECT(y[0][0] == 0xA5 && y[1][31] == 0xA5, "a failing call wrote");
    OK(fqTensorLayoutDestroy(in));
    OK(fqTensorLayoutDestroy(out));
    OK(fqQuantDescDestroy(d));
}

/* Gated ReLU, [gate | up], per-token int8: y = relu(g) * u, amax 127, so the scale is 1 and the codes are y. */
static void gated_relu_per_token_int8(fqHandle_t h) {
    uint16_t x[1][64];
    int8_t y[32];
    const int8_t want[32] = {127, 6, 0, -4};
    float s = 0.0f;
    fqQuantDesc_t d = NULL;
    fqTensorLayout_t in = NULL, out = NULL;
    int j;

    for (j = 0; j < 64; ++j) x[0][j] = B0;
    x[0][0] = B127; x[0][32 + 0] = B1;  /* 127 * 1 */
    x[0][1] = B2;   x[0][32 + 1] = B3;  /* 2 * 3 */
    x[0][2] = BM1;  x[0][32 + 2] = B5;  /* relu(-1) * 5 = 0 */
    x[0][3] = B1;   x[0][32 + 3] = BM4; /* 1 * -4 */
    OK(fqQuantDescCreate(&d));
    set_i32(d, FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_RELU);
    set_i32(d, FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
    set_i32(d, FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN);
    set_i32(d, FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_INT8);
    OK(fqTensorLayoutCreate(&in, FQ_TYPE_BF16, 1, 64, 64));
    OK(fqTensorLayoutCreate(&out, FQ_TYPE_INT8, 1, 32, 32));
    OK(fqQuantize(h, d, in, x, out, y, &s, sizeof s, NULL, 0, NULL));
    expect_bytes("gated relu int8 codes", (const uint8_t*)y, (const uint8_t*)want, sizeof y);
    EXPECT(s == 1.0f, "per-token scale %g, expected 1", s);
    OK(fqTensorLayoutDestroy(in));
    OK(fqTensorLayoutDestroy(out));
    OK(fqQuantDescDestroy(d));
}

/* MXFP8: amax 448 gives the E8M0 scale 127 (2^0); SWIZZLED_128X4 pads one row of one group to 128 x 4. */
static void mxfp8_swizzled(fqHandle_t h) {
    uint16_t x[32] = {B448, B1, B2, BM05};
    uint8_t y[32], want[32] = {0x7E, 0x38, 0x40, 0xB0}, s[512], want_s[512];
    size_t bytes = 0;
    fqQuantDesc_t d = NULL;
    fqTensorLayout_t in = NULL, out = NULL;

    OK(fqQuantDescCreate(&d));
    set_i32(d, FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8);
    set_i32(d, FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
    set_i32(d, FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4);
    OK(fqGetScaleBufferSize(d, 1, 32, FQ_OUTPUT_ROWWISE, &bytes));
    EXPECT(bytes == sizeof s, "swizzled scale bytes %zu, expected 512", bytes);
    OK(fqTensorLayoutCreate(&in, FQ_TYPE_BF16, 1, 32, 32));
    OK(fqTensorLayoutCreate(&out, FQ_TYPE_FP8_E4M3FN, 1, 32, 32));
    memset(s, 0xA5, sizeof s);
    memset(want_s, 0, sizeof want_s);
    want_s[0] = 127;
    OK(fqQuantize(h, d, in, x, out, y, s, sizeof s, NULL, 0, NULL));
    expect_bytes("mxfp8 codes", y, want, sizeof y);
    expect_bytes("mxfp8 swizzled scales", s, want_s, sizeof s);
    OK(fqTensorLayoutDestroy(in));
    OK(fqTensorLayoutDestroy(out));
    OK(fqQuantDescDestroy(d));
}

/* fp32 scales [2 x 3] row-major to column-major: a transposition. */
static void repack(fqHandle_t h) {
    const float src[6] = {1, 2, 3, 4, 5, 6}, want[6] = {1, 4, 2, 5, 3, 6};
    float dst[6];
    size_t bytes = 0;
    OK(fqGetScaleRepackSize(FQ_TYPE_FP32, 1, 2, 3, FQ_SCALE_LAYOUT_COL_MAJOR, &bytes));
    EXPECT(bytes == sizeof dst, "repack bytes %zu", bytes);
    OK(fqScaleRepack(h, FQ_TYPE_FP32, 1, 2, 3, FQ_SCALE_REPACK_BLOCKS, NULL, 0, FQ_SCALE_LAYOUT_ROW_MAJOR, src,
                     sizeof src, FQ_SCALE_LAYOUT_COL_MAJOR, dst, sizeof dst, NULL));
    expect_bytes("repacked scales", (const uint8_t*)dst, (const uint8_t*)want, sizeof dst);
}

/* One group, M = 1, N = 2, K = 16: C = [1 * 2, 1 * 0.5] (A's and B's scales 1), D = identity(C). */
static void grouped_gemm(fqHandle_t h) {
    uint8_t a[16] = {0x38}, b[2][16] = {{0x40}, {0x30}};
    const float a_scales[4] = {1, 1, 1, 1}, b_scales[1] = {1};
    uint16_t c[2] = {0, 0}, dv[2] = {0, 0};
    const int32_t no_quantize = 0;
    void* cp = c;
    void* dp = dv;
    size_t bytes = 0;
    int64_t batch = 0;
    fqGroupedGemmDesc_t g = NULL;
    fqQuantDesc_t epi = NULL;
    fqTensorLayout_t la = NULL, lb = NULL;

    OK(fqGroupedGemmDescCreate(&g));
    OK(fqQuantDescCreate(&epi));
    OK(fqGroupedGemmDescSetAttribute(g, FQ_GEMM_DESC_QUANTIZE, &no_quantize, sizeof no_quantize));
    OK(fqGroupedGemmDescSetAttribute(g, FQ_GEMM_DESC_C_OUTPUT_POINTER, &cp, sizeof cp));
    OK(fqGroupedGemmDescSetAttribute(g, FQ_GEMM_DESC_D_OUTPUT_POINTER, &dp, sizeof dp));
    OK(fqGroupedGemmGetScaleBufferSize(g, epi, 1, 128, FQ_OUTPUT_ROWWISE, &bytes));
    EXPECT(bytes == 4, "GEMM scale bytes %zu for 1 x 128, group 128", bytes);
    OK(fqGroupedGemmGetScaleBufferInfo(g, epi, 1, 128, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BATCH, &batch));
    EXPECT(batch == 1, "GEMM scale batch %lld", (long long)batch);
    OK(fqTensorLayoutCreate(&la, FQ_TYPE_FP8_E4M3FN, 1, 16, 16));
    OK(fqTensorLayoutCreate(&lb, FQ_TYPE_FP8_E4M3FN, 2, 16, 16));
    OK(fqGroupedGemm(h, g, epi, la, a, a_scales, lb, b, b_scales, NULL, NULL, NULL, 0, NULL));
    EXPECT(c[0] == B2 && c[1] == B05, "C = [0x%04X 0x%04X], expected [0x%04X 0x%04X]", c[0], c[1], B2, B05);
    EXPECT(dv[0] == B2 && dv[1] == B05, "D = [0x%04X 0x%04X]", dv[0], dv[1]);
    OK(fqTensorLayoutDestroy(la));
    OK(fqTensorLayoutDestroy(lb));
    OK(fqQuantDescDestroy(epi));
    OK(fqGroupedGemmDescDestroy(g));
}

int main(void) {
    fqHandle_t h = NULL;
    int32_t count = 0;
    char name[128];

    status_and_errors();
    OK(fqCreate(&h, FQ_BACKEND_HOST, 0));
    OK(fqGetVariantCount(h, &count));
    EXPECT(count >= 1, "%d host variants", count);
    OK(fqGetVariantName(h, 0, name, sizeof name));
    attributes(h);
    per_group_e4m3(h);
    gated_relu_per_token_int8(h);
    mxfp8_swizzled(h);
    repack(h);
    grouped_gemm(h);
    OK(fqDestroy(h));
    if (failures) {
        fprintf(stderr, "abi_previous_header: %d checks failed\n", failures);
        return 1;
    }
    printf("abi_previous_header: a program built against abi/previous/fusedquant.h (version %d) runs against "
           "library %u: every check holds\n", FQ_VERSION_NUMBER, (unsigned)fqGetVersion());
    return 0;
}
