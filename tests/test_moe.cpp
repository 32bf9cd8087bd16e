// MoE layouts (docs/spec.md §5) and columnwise outputs (docs/spec.md §4) through the public API on the host backend:
// hand-computed small cases for each rule of docs/moe.md, then invariants on random inputs over every
// scheme and scale layout: MASKED expert e equals a plain call on its valid rows, CONTIGUOUS equals
// per-expert plain calls, rows nobody owns keep their poison bytes, columnwise equals rowwise of the
// transposed input, transposed data is the transpose of the non-transposed one, and both outputs from
// one call equal two calls. Last, the grouped GEMM's segments (common/moe.h): the units its CUDA kernel walks.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/moe.h"
#include "common/quantize.h"
#include "common/scale_layout.h"
#include "fq_test_util.h"

using namespace fqt;

namespace {

constexpr uint8_t kPoison = 0xAB;

int32_t get_i32(const Desc& d, int32_t attr) {
    int32_t v = 0;
    size_t w = 0;
    REQUIRE(fqQuantDescGetAttribute(d.d, attr, &v, 4, &w) == FQ_STATUS_SUCCESS);
    return v;
}

int64_t info(const Desc& d, int64_t rows, int64_t cols, int32_t which, int32_t what) {
    int64_t v = -1;
    REQUIRE_MESSAGE(fqGetScaleBufferInfo(d.d, rows, cols, which, what, &v) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    return v;
}

int64_t value_bytes(int32_t out_type, int64_t elements) { return out_type == FQ_TYPE_FP4_E2M1 ? elements / 2 : elements; }

// Everything one fqQuantize call writes, each buffer poisoned first. The columnwise pointers are set on
// `d` when FQ_QUANT_DESC_OUTPUTS asks for columnwise output.
struct Run {
    std::vector<uint8_t> values, scales, col_values, col_scales;
    fqStatus_t status = FQ_STATUS_SUCCESS;
    std::string message;
};

Run run(Desc& d, const std::vector<uint16_t>& x, int64_t rows, int64_t in_cols, int64_t cols, int32_t out_type) {
    Run r;
    const int32_t outputs = get_i32(d, FQ_QUANT_DESC_OUTPUTS);
    if (outputs & FQ_OUTPUT_ROWWISE) {
        r.values.assign(size_t(value_bytes(out_type, rows * cols)), kPoison);
        r.scales.assign(size_t(info(d, rows, cols, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BYTES)), kPoison);
    }
    if (outputs & FQ_OUTPUT_COLUMNWISE) {
        r.col_values.assign(size_t(value_bytes(out_type, rows * cols)), kPoison);
        r.col_scales.assign(size_t(info(d, rows, cols, FQ_OUTPUT_COLUMNWISE, FQ_SCALE_INFO_BYTES)), kPoison);
        d.ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, r.col_values.data());
        d.ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, r.col_scales.empty() ? nullptr : r.col_scales.data());
    }
    Handle h;
    Layout li(FQ_TYPE_BF16, rows, in_cols, in_cols), lo(out_type, rows, cols, cols);
    r.status = fqQuantize(h.h, d.d, li.l, x.data(), lo.l, r.values.empty() ? nullptr : r.values.data(),
                          r.scales.empty() ? nullptr : r.scales.data(), r.scales.size(), nullptr, 0, nullptr);
    r.message = fqGetLastErrorMessage();
    return r;
}

// The bytes of logical scale (m, k) in a block holding the scales of `rows` x `cols` values of `which`.
std::vector<uint8_t> scale_at(const Desc& d, const std::vector<uint8_t>& buf, int64_t block_offset, int64_t rows,
                              int64_t cols, int32_t which, int64_t m, int64_t k) {
    const auto g = fq::make_scale_geometry(fq::ScaleLayout(get_i32(d, FQ_QUANT_DESC_SCALE_LAYOUT)),
                                           fq::DType(get_i32(d, FQ_QUANT_DESC_SCALE_TYPE)),
                                           info(d, rows, cols, which, FQ_SCALE_INFO_ROWS),
                                           info(d, rows, cols, which, FQ_SCALE_INFO_COLS));
    const size_t at = size_t(block_offset + fq::scale_offset(g, m, k)), n = size_t(fq::scale_type_bytes(g.type));
    REQUIRE(at + n <= buf.size());
    return {buf.begin() + std::ptrdiff_t(at), buf.begin() + std::ptrdiff_t(at + n)};
}

std::vector<uint8_t> row_of(const std::vector<uint8_t>& v, int32_t out_type, int64_t cols, int64_t r) {
    const int64_t n = value_bytes(out_type, cols);
    return {v.begin() + std::ptrdiff_t(r * n), v.begin() + std::ptrdiff_t((r + 1) * n)};
}

bool all_poison(const std::vector<uint8_t>& v) {
    return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == kPoison; });
}

// Random bf16 values, mostly N(0, 2) with a few large ones, one seed per call site.
std::vector<uint16_t> random_bf16(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = (i % 97 == 5) ? 40.0f * normal(rng) : normal(rng);
    return to_bf16(v);
}

// One quantization configuration of the sweeps: a name, its output type, and the attributes.
struct Scheme {
    const char* name;
    int32_t out;
    std::function<void(Desc&)> set;
    bool per_tensor = false;
};

std::vector<Scheme> schemes() {
    auto mx = [](int32_t scheme, int32_t out, int32_t layout, int32_t rule) {
        return [=](Desc& d) {
            d.i32(FQ_QUANT_DESC_SCHEME, scheme).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out)
                .i32(FQ_QUANT_DESC_SCALE_TYPE, scheme == FQ_SCHEME_NVFP4 ? FQ_TYPE_FP8_E4M3FN : FQ_TYPE_E8M0)
                .i32(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
            if (scheme != FQ_SCHEME_NVFP4) d.i32(FQ_QUANT_DESC_MX_SCALE_RULE, rule);
        };
    };
    return {
        {"per-group 32, fp32 row-major, e4m3fn", FQ_TYPE_FP8_E4M3FN, [](Desc& d) { d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32); }},
        {"per-group 128, fp32 col-major TMA, int8", FQ_TYPE_INT8, [](Desc& d) {
             d.i32(FQ_QUANT_DESC_GROUP_SIZE, 128).i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_INT8)
                 .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR_TMA); }},
        {"per-token, fp32 col-major, e5m2, reciprocal", FQ_TYPE_FP8_E5M2, [](Desc& d) {
             d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN).i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP8_E5M2)
                 .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR)
                 .i32(FQ_QUANT_DESC_SCALE_APPLY, FQ_SCALE_APPLY_MULTIPLY_RECIPROCAL); }},
        {"per-group 64, E8M0 POW2_CEIL, packed UE8M0", FQ_TYPE_FP8_E4M3FN, [](Desc& d) {
             d.i32(FQ_QUANT_DESC_GROUP_SIZE, 64).i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0)
                 .i32(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL)
                 .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_PACKED_UE8M0); }},
        {"MXFP8 e4m3, RCEIL, swizzled", FQ_TYPE_FP8_E4M3FN,
         mx(FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, FQ_SCALE_LAYOUT_SWIZZLED_128X4, FQ_MX_SCALE_RULE_RCEIL)},
        {"MXFP8 e5m2, FLOOR, packed UE8M0", FQ_TYPE_FP8_E5M2,
         mx(FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E5M2, FQ_SCALE_LAYOUT_PACKED_UE8M0, FQ_MX_SCALE_RULE_FLOOR)},
        {"MXFP4, RCEIL, row-major", FQ_TYPE_FP4_E2M1,
         mx(FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1, FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_MX_SCALE_RULE_RCEIL)},
        {"NVFP4, swizzled, computed global amax", FQ_TYPE_FP4_E2M1,
         mx(FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1, FQ_SCALE_LAYOUT_SWIZZLED_128X4, 0)},
        {"NVFP4, col-major TMA, computed global amax", FQ_TYPE_FP4_E2M1,
         mx(FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1, FQ_SCALE_LAYOUT_COL_MAJOR_TMA, 0)},
        {"per-tensor dynamic", FQ_TYPE_FP8_E4M3FN,
         [](Desc& d) { d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC); }, true},
    };
}

// SwiGLU-OAI on a split gate with a routing probability per row: the MoE activation of the issue.
void moe_activation(Desc& d, const std::vector<float>& prob) {
    d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SWIGLU_OAI).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT)
        .ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob.data());
}

std::vector<uint16_t> rows_of(const std::vector<uint16_t>& x, int64_t width, int64_t first, int64_t n) {
    return {x.begin() + std::ptrdiff_t(first * width), x.begin() + std::ptrdiff_t((first + n) * width)};
}

}  // namespace

// ---- Hand-computed cases ---------------------------------------------------------------------------------

TEST_CASE("MASKED per-token: rows past each expert's count keep their bytes, scales live in per-expert blocks") {
    // [E=2, max_m=2, H=4], counts {1, 2}: rows 0, 2, 3 valid; row 1 (expert 0's second) untouched.
    const std::vector<float> x = {1, 2, 4, -8, /*row 1*/ 9, 9, 9, 9, /*row 2*/ 0.5f, 1, 2, 4, /*row 3*/ 448, 0, 0, -224};
    int32_t counts[2] = {1, 2};
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN).i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED)
        .i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2).ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
    CHECK(info(d, 4, 4, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BATCH) == 2);
    CHECK(info(d, 4, 4, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_ROWS) == 2);  // max_m rows per block
    CHECK(info(d, 4, 4, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BATCH_STRIDE) == 8);
    CHECK(info(d, 4, 4, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BYTES) == 16);
    const Run r = run(d, to_bf16(x), 4, 4, 4, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    CHECK(row_of(r.values, FQ_TYPE_FP8_E4M3FN, 4, 0) == std::vector<uint8_t>{0x66, 0x6E, 0x76, 0xFE});  // 56,112,224,-448
    CHECK(row_of(r.values, FQ_TYPE_FP8_E4M3FN, 4, 1) == std::vector<uint8_t>(4, kPoison));
    CHECK(row_of(r.values, FQ_TYPE_FP8_E4M3FN, 4, 2) == std::vector<uint8_t>{0x66, 0x6E, 0x76, 0x7E});
    CHECK(row_of(r.values, FQ_TYPE_FP8_E4M3FN, 4, 3) == std::vector<uint8_t>{0x7E, 0x00, 0x00, 0xF6});
    CHECK(scale_at(r.scales, 0) == 8.0f / 448.0f);      // expert 0, row 0
    CHECK(r.scales[4] == kPoison);                       // expert 0, row 1: not a valid row
    CHECK(scale_at(r.scales, 2) == 4.0f / 448.0f);      // expert 1 block (byte 8), row 0
    CHECK(scale_at(r.scales, 3) == 1.0f);                // expert 1, row 1: amax 448
}

TEST_CASE("CONTIGUOUS per-tensor static: expert e uses static_scale[e]; rows outside every expert keep their bytes") {
    // 5 rows, offsets {1, 2, 4}: expert 0 owns row 1, expert 1 rows 2-3; rows 0 and 4 are padding.
    const std::vector<float> x(5 * 2, 2.0f);
    int32_t offsets[3] = {1, 2, 4};
    float scale[2] = {1.0f, 2.0f};
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, scale)
        .i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2)
        .ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, offsets);
    const Run r = run(d, to_bf16(x), 5, 2, 2, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    // 2 / 1 = 2 is e4m3 0x40; 2 / 2 = 1 is 0x38.
    CHECK(r.values == std::vector<uint8_t>{kPoison, kPoison, 0x40, 0x40, 0x38, 0x38, 0x38, 0x38, kPoison, kPoison});
}

TEST_CASE("CONTIGUOUS with counts: only the first counts[e] rows of each slot are valid, the rest is padding") {
    // Slots of 4 rows (offsets {0, 4, 8}), counts {3, 1}: rows 3, 5, 6, 7 are padding.
    const std::vector<float> x(8 * 32, 1.0f);
    int32_t offsets[3] = {0, 4, 8}, counts[2] = {3, 1};
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32).i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS)
        .i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2).ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, offsets)
        .ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
    CHECK(info(d, 8, 32, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BATCH) == 1);  // one layout over the stacked rows
    const Run r = run(d, to_bf16(x), 8, 32, 32, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    for (int64_t row = 0; row < 8; ++row) {
        const bool valid = row < 3 || row == 4;
        INFO("row ", row);
        CHECK(all_poison(row_of(r.values, FQ_TYPE_FP8_E4M3FN, 32, row)) == !valid);
        CHECK((r.scales[size_t(4 * row)] == kPoison) == !valid);
        if (valid) CHECK(scale_at(r.scales, size_t(row)) == 1.0f / 448.0f);
    }
}

TEST_CASE("per-tensor dynamic under MoE writes one scale per expert, from the amax of its valid rows") {
    // MASKED [3, 2, 2]; counts {2, 0, 1}; expert 0 amax 8 (row 1), expert 1 empty, expert 2 amax 3.
    const std::vector<float> x = {1, 2, -8, 4, /*e1*/ 100, 100, 100, 100, /*e2*/ 3, 1, 500, 500};
    int32_t counts[3] = {2, 0, 1};
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC).i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED)
        .i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 3).ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
    CHECK(info(d, 6, 2, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BATCH) == 3);
    const Run r = run(d, to_bf16(x), 6, 2, 2, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    REQUIRE(r.scales.size() == 12);
    CHECK(scale_at(r.scales, 0) == 8.0f / 448.0f);
    CHECK(scale_at(r.scales, 1) == 1.0f / (448.0f * 512.0f));  // no valid row: amax 0 -> min_scale
    CHECK(scale_at(r.scales, 2) == 3.0f / 448.0f);
    CHECK(r.values[2 * 2 * 2 + 2] == kPoison);  // expert 2's second row
}

TEST_CASE("MASKED swizzled MXFP8: expert e's block starts at e x round_up(max_m,128) x round_up(K_g,4) bytes") {
    // [2, 3, 64]: K_g = 2, blocks of 128 x 4 = 512 bytes; counts {3, 1}.
    std::vector<float> x(6 * 64, 1.0f);
    // Amax 1: 1/448 = 1.14 x 2^-9 rounds up to E8M0 119; amax 3 (expert 1, row 0, block 1): 1.71 x 2^-8 -> 120.
    x[size_t(3 * 64 + 40)] = 3.0f;
    int32_t counts[2] = {3, 1};
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8).i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0)
        .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4).i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED)
        .i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2).ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
    CHECK(info(d, 6, 64, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BATCH_STRIDE) == 512);
    const Run r = run(d, to_bf16(x), 6, 64, 64, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    REQUIRE(r.scales.size() == 1024);
    // Row m, column k of a block sit at (m%32)*16 + ((m%128)/32)*4 + k for M, K_g < 128, 4.
    for (int64_t e = 0; e < 2; ++e)
        for (int64_t m = 0; m < 128; ++m)
            for (int64_t k = 0; k < 4; ++k) {
                const uint8_t got = r.scales[size_t(512 * e + (m % 32) * 16 + (m / 32) * 4 + k)];
                INFO("expert ", e, " row ", m, " column ", k);
                if (m >= 3) CHECK(got == 0);                                // padding rows of the block
                else if (m >= counts[e]) CHECK(got == kPoison);             // past the count, padding columns too
                else if (k >= 2) CHECK(got == 0);                           // padding columns of a valid row
                else CHECK(got == (e == 1 && k == 1 ? 120 : 119));
            }
}

TEST_CASE("columnwise per-group: S_col[h, b] is the scale of rows 32b..32b+31 of column h; partial last block") {
    // M = 40 rows (blocks of 32 and 8), H = 2. Column 0 = row index, column 1 = -1 everywhere but row 35 (= 7).
    std::vector<float> x(40 * 2);
    for (int64_t m = 0; m < 40; ++m) {
        x[size_t(2 * m)] = float(m);
        x[size_t(2 * m + 1)] = m == 35 ? 7.0f : -1.0f;
    }
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32).i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE);
    CHECK(info(d, 40, 2, FQ_OUTPUT_COLUMNWISE, FQ_SCALE_INFO_ROWS) == 2);  // one scale row per output column
    CHECK(info(d, 40, 2, FQ_OUTPUT_COLUMNWISE, FQ_SCALE_INFO_COLS) == 2);  // ceil(40 / 32) row blocks
    const Run r = run(d, to_bf16(x), 40, 2, 2, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    REQUIRE(r.col_scales.size() == 16);
    CHECK(scale_at(r.col_scales, 0) == 31.0f / 448.0f);  // S_col[0, 0]
    CHECK(scale_at(r.col_scales, 1) == 39.0f / 448.0f);  // S_col[0, 1]: rows 32..39
    CHECK(scale_at(r.col_scales, 2) == 1.0f / 448.0f);   // S_col[1, 0]
    CHECK(scale_at(r.col_scales, 3) == 7.0f / 448.0f);   // S_col[1, 1]
    // Non-transposed: the [M, H] orientation. Row 31 column 0 and row 35 column 1 are their block's amax.
    CHECK(r.col_values[size_t(2 * 31)] == 0x7E);
    CHECK(r.col_values[size_t(2 * 35 + 1)] == 0x7E);
    CHECK(r.col_values[size_t(2 * 36 + 1)] == fq::encode_minifloat(fq::kE4M3FN, -448.0f / 7.0f));
}

TEST_CASE("columnwise transposed: [H, M] data, FP4 packs rows 2i and 2i+1 of a column in one byte") {
    // MXFP4, M = 32, H = 2: column 0 = 6 (E8M0 127, code 7), column 1 = -3 (E8M0 126, -3 x 2 = -6: code 0xF).
    std::vector<float> x(32 * 2);
    for (int64_t m = 0; m < 32; ++m) { x[size_t(2 * m)] = 6.0f; x[size_t(2 * m + 1)] = -3.0f; }
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP4).i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP4_E2M1)
        .i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0).i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE)
        .i32(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, 1);
    const Run r = run(d, to_bf16(x), 32, 2, 2, FQ_TYPE_FP4_E2M1);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    REQUIRE(r.col_values.size() == 32);  // 2 transposed rows of 32 nibbles
    CHECK(std::all_of(r.col_values.begin(), r.col_values.begin() + 16, [](uint8_t b) { return b == 0x77; }));
    CHECK(std::all_of(r.col_values.begin() + 16, r.col_values.end(), [](uint8_t b) { return b == 0xFF; }));
    CHECK(r.col_scales == std::vector<uint8_t>{127, 126});  // 6/6 -> 2^0; 3/6 -> 2^-1
}

TEST_CASE("columnwise swizzled scales index S_col[h, b] with h as the row: cuDNN's SFD_col shape") {
    // H = 130 columns, M = 32 rows of MXFP8: S_col is 130 x 1, stored as 2 row tiles x 1 column tile.
    std::vector<float> x(32 * 130, 1.0f);
    x[size_t(7 * 130 + 129)] = 64.0f;  // column 129: 64/448 = 1.14 x 2^-3 rounds up to E8M0 125; amax 1 gives 119
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8).i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0)
        .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4).i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE);
    CHECK(info(d, 32, 130, FQ_OUTPUT_COLUMNWISE, FQ_SCALE_INFO_PADDED_ROWS) == 256);
    CHECK(info(d, 32, 130, FQ_OUTPUT_COLUMNWISE, FQ_SCALE_INFO_PADDED_COLS) == 4);
    const Run r = run(d, to_bf16(x), 32, 130, 130, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    REQUIRE(r.col_scales.size() == 1024);
    CHECK(r.col_scales[512 + 1 * 16] == 125);  // h = 129: tile 1, h % 32 = 1, (h % 128) / 32 = 0, b = 0
    CHECK(r.col_scales[512 + 0 * 16] == 119);  // h = 128
    CHECK(r.col_scales[0] == 119);
    CHECK(r.col_scales[512 + 2 * 16] == 0);     // h = 130: padding row
    CHECK(r.col_scales[1] == 0);                // b = 1: padding column
}

TEST_CASE("MASKED columnwise: blocks count from each expert's first row; blocks with no valid row are not written") {
    // [2, 40, 1], block 32: expert 0 has 40 valid rows (2 blocks), expert 1 has 5 (block 1 untouched).
    std::vector<float> x(80);
    for (int64_t m = 0; m < 80; ++m) x[size_t(m)] = float(m % 40 + 1);
    int32_t counts[2] = {40, 5};
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32).i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE)
        .i32(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, 1).i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED)
        .i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2).ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
    CHECK(info(d, 80, 1, FQ_OUTPUT_COLUMNWISE, FQ_SCALE_INFO_BATCH) == 2);
    const Run r = run(d, to_bf16(x), 80, 1, 1, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    REQUIRE(r.col_scales.size() == 16);
    CHECK(scale_at(r.col_scales, 0) == 32.0f / 448.0f);
    CHECK(scale_at(r.col_scales, 1) == 40.0f / 448.0f);
    CHECK(scale_at(r.col_scales, 2) == 5.0f / 448.0f);
    CHECK(std::all_of(r.col_scales.begin() + 12, r.col_scales.end(), [](uint8_t b) { return b == kPoison; }));
    // Transposed MASKED data is [E, H, max_m]: expert 1's row 4 is byte 40 + 4, its rows 5..39 untouched.
    CHECK(r.col_values[44] == 0x7E);
    CHECK(std::all_of(r.col_values.begin() + 45, r.col_values.end(), [](uint8_t b) { return b == kPoison; }));
}

TEST_CASE("CONTIGUOUS columnwise: blocks of the stacked rows; a block with no valid row is not written") {
    // 96 rows, offsets {0, 32, 64} (aligned to the block): rows 64..95 are padding, S_col[h, 2] untouched.
    std::vector<float> x(96 * 2, 1.0f);
    int32_t offsets[3] = {0, 32, 64};
    Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32).i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE)
        .i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2)
        .ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, offsets);
    const Run r = run(d, to_bf16(x), 96, 2, 2, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    REQUIRE(r.col_scales.size() == 2 * 3 * 4);
    for (size_t h = 0; h < 2; ++h) {
        CHECK(scale_at(r.col_scales, 3 * h) == 1.0f / 448.0f);
        CHECK(scale_at(r.col_scales, 3 * h + 1) == 1.0f / 448.0f);
        CHECK(r.col_scales[4 * (3 * h + 2)] == kPoison);
    }
    CHECK(std::all_of(r.col_values.begin() + 128, r.col_values.end(), [](uint8_t b) { return b == kPoison; }));
}

// ---- Invariants on random inputs ---------------------------------------------------------------------------

TEST_CASE("MASKED expert e equals a plain call on its valid rows, for every scheme and scale layout") {
    const int64_t E = 3, max_m = 37, H = 128, W = 2 * H;
    const std::vector<uint16_t> x = random_bf16(size_t(E * max_m * W), 11);
    std::vector<float> prob(size_t(E * max_m));
    for (size_t i = 0; i < prob.size(); ++i) prob[i] = 0.25f + float(i % 7) / 8.0f;
    int32_t counts[3] = {37, 0, 20};
    for (const Scheme& s : schemes()) {
        INFO(std::string(s.name));
        Desc d;
        s.set(d);
        moe_activation(d, prob);
        d.i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, int32_t(E))
            .ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
        const Run moe = run(d, x, E * max_m, W, H, s.out);
        REQUIRE_MESSAGE(moe.status == FQ_STATUS_SUCCESS, moe.message);
        const int64_t stride = info(d, E * max_m, H, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BATCH_STRIDE);
        for (int64_t e = 0; e < E; ++e) {
            INFO("expert ", e);
            const int64_t n = counts[e];
            Desc p;
            s.set(p);
            moe_activation(p, std::vector<float>());
            p.ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob.data() + e * max_m);
            const Run plain = run(p, rows_of(x, W, e * max_m, n), n, W, H, s.out);
            REQUIRE_MESSAGE(plain.status == FQ_STATUS_SUCCESS, plain.message);
            for (int64_t m = 0; m < max_m; ++m) {
                const auto got = row_of(moe.values, s.out, H, e * max_m + m);
                if (m < n) CHECK(got == row_of(plain.values, s.out, H, m));
                else CHECK(all_poison(got));
            }
            if (s.per_tensor) {
                CHECK(std::equal(plain.scales.begin(), plain.scales.end(), moe.scales.begin() + 4 * e));
                continue;
            }
            const int64_t kg = info(d, E * max_m, H, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_COLS);
            for (int64_t m = 0; m < max_m; ++m)
                for (int64_t k = 0; k < kg; ++k) {
                    const auto got = scale_at(d, moe.scales, e * stride, E * max_m, H, FQ_OUTPUT_ROWWISE, m, k);
                    if (m < n) CHECK(got == scale_at(p, plain.scales, 0, n, H, FQ_OUTPUT_ROWWISE, m, k));
                    else CHECK(all_poison(got));
                }
        }
    }
}

TEST_CASE("CONTIGUOUS equals per-expert plain calls; padding rows and their scale slots keep their bytes") {
    const int64_t M = 70, H = 64, W = 2 * H;
    const std::vector<uint16_t> x = random_bf16(size_t(M * W), 12);
    std::vector<float> prob(static_cast<size_t>(M));
    for (size_t i = 0; i < prob.size(); ++i) prob[i] = 1.0f - float(i % 5) / 8.0f;
    int32_t offsets[4] = {2, 40, 40, 61};  // rows 0-1 and 61-69 belong to no expert; expert 1 is empty
    for (const Scheme& s : schemes()) {
        INFO(std::string(s.name));
        Desc d;
        s.set(d);
        moe_activation(d, prob);
        d.i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 3)
            .ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, offsets);
        const Run moe = run(d, x, M, W, H, s.out);
        REQUIRE_MESSAGE(moe.status == FQ_STATUS_SUCCESS, moe.message);
        std::vector<int> expert(size_t(M), -1);
        for (int e = 0; e < 3; ++e)
            for (int64_t m = offsets[e]; m < offsets[e + 1]; ++m) expert[size_t(m)] = e;
        const int64_t kg = info(d, M, H, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_COLS);
        for (int e = 0; e < 3; ++e) {
            const int64_t first = offsets[e], n = offsets[e + 1] - offsets[e];
            Desc p;
            s.set(p);
            moe_activation(p, std::vector<float>());
            p.ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob.data() + first);
            const Run plain = run(p, rows_of(x, W, first, n), n, W, H, s.out);
            REQUIRE_MESSAGE(plain.status == FQ_STATUS_SUCCESS, plain.message);
            if (s.per_tensor) CHECK(std::equal(plain.scales.begin(), plain.scales.end(), moe.scales.begin() + 4 * e));
            for (int64_t m = 0; m < n; ++m) {
                CHECK(row_of(moe.values, s.out, H, first + m) == row_of(plain.values, s.out, H, m));
                for (int64_t k = 0; !s.per_tensor && k < kg; ++k)
                    CHECK(scale_at(d, moe.scales, 0, M, H, FQ_OUTPUT_ROWWISE, first + m, k) ==
                          scale_at(p, plain.scales, 0, n, H, FQ_OUTPUT_ROWWISE, m, k));
            }
        }
        for (int64_t m = 0; m < M; ++m) {
            if (expert[size_t(m)] >= 0) continue;
            INFO("padding row ", m);
            CHECK(all_poison(row_of(moe.values, s.out, H, m)));
            for (int64_t k = 0; !s.per_tensor && k < kg; ++k)
                CHECK(all_poison(scale_at(d, moe.scales, 0, M, H, FQ_OUTPUT_ROWWISE, m, k)));
        }
    }
}

TEST_CASE("columnwise (not transposed) equals rowwise of the transposed input with rows and columns swapped") {
    // Identity activation: the columnwise output of X [M, H] is the rowwise output of X^T [H, M] with a group of
    // the columnwise block, stored transposed; its scale buffer is that call's, byte for byte.
    const int64_t M = 96, H = 160;
    const std::vector<uint16_t> x = random_bf16(size_t(M * H), 13);
    std::vector<uint16_t> xt(x.size());
    for (int64_t m = 0; m < M; ++m)
        for (int64_t h = 0; h < H; ++h) xt[size_t(h * M + m)] = x[size_t(m * H + h)];
    for (const Scheme& s : schemes()) {
        for (int32_t block : {32, 128}) {
            Desc d, t;
            s.set(d);
            s.set(t);
            const bool fixed_block = get_i32(d, FQ_QUANT_DESC_SCHEME) >= FQ_SCHEME_MXFP8;
            if (fixed_block && block != 32) continue;
            INFO(std::string(s.name), ", block ", block);
            d.i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE).i32(FQ_QUANT_DESC_COLUMNWISE_BLOCK, block);
            if (get_i32(t, FQ_QUANT_DESC_SCHEME) == FQ_SCHEME_PER_GROUP) t.i32(FQ_QUANT_DESC_GROUP_SIZE, block);
            if (get_i32(t, FQ_QUANT_DESC_SCHEME) == FQ_SCHEME_PER_TOKEN) {  // columnwise per-token: blocks too
                t.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_GROUP).i32(FQ_QUANT_DESC_GROUP_SIZE, block);
            }
            const Run col = run(d, x, M, H, H, s.out);
            const Run row = run(t, xt, H, M, M, s.out);
            REQUIRE_MESSAGE(col.status == FQ_STATUS_SUCCESS, col.message);
            REQUIRE_MESSAGE(row.status == FQ_STATUS_SUCCESS, row.message);
            CHECK(col.col_scales == row.scales);
            bool same = true;
            for (int64_t m = 0; m < M; ++m)
                for (int64_t h = 0; h < H; ++h) {
                    const auto code = [&](const std::vector<uint8_t>& v, int64_t i) {
                        return s.out == FQ_TYPE_FP4_E2M1 ? uint8_t((v[size_t(i / 2)] >> (4 * (i % 2))) & 0xF) : v[size_t(i)];
                    };
                    same = same && code(col.col_values, m * H + h) == code(row.values, h * M + m);
                }
            CHECK(same);
        }
    }
}

TEST_CASE("transposed columnwise data is the transpose of the non-transposed data; scales are the same") {
    const int64_t E = 2, max_m = 50, H = 64, W = 2 * H;
    const std::vector<uint16_t> x = random_bf16(size_t(E * max_m * W), 14);
    const std::vector<float> prob(size_t(E * max_m), 0.75f);
    int32_t counts[2] = {50, 33};
    for (const Scheme& s : schemes())
        for (bool masked : {false, true}) {
            INFO(std::string(s.name), std::string(masked ? ", MASKED" : ""));
            Desc a, b;
            for (Desc* d : {&a, &b}) {
                s.set(*d);
                moe_activation(*d, prob);
                d->i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE);
                if (masked)
                    d->i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, int32_t(E))
                        .ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
            }
            b.i32(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, 1);
            const Run plain = run(a, x, E * max_m, W, H, s.out), t = run(b, x, E * max_m, W, H, s.out);
            REQUIRE_MESSAGE(plain.status == FQ_STATUS_SUCCESS, plain.message);
            REQUIRE_MESSAGE(t.status == FQ_STATUS_SUCCESS, t.message);
            CHECK(plain.col_scales == t.col_scales);
            const bool fp4 = s.out == FQ_TYPE_FP4_E2M1;
            const auto code = [fp4](const std::vector<uint8_t>& v, int64_t i) {
                return fp4 ? uint8_t((v[size_t(i / 2)] >> (4 * (i % 2))) & 0xF) : v[size_t(i)];
            };
            const auto byte = [fp4](const std::vector<uint8_t>& v, int64_t i) { return v[size_t(fp4 ? i / 2 : i)]; };
            bool same = true;
            for (int64_t e = 0; e < E; ++e)
                for (int64_t r = 0; r < max_m; ++r)
                    for (int64_t h = 0; h < H; ++h) {
                        const int64_t m = e * max_m + r;
                        // Transposed: [E, H, max_m] for MASKED, [H, M] otherwise.
                        const int64_t at = masked ? e * H * max_m + h * max_m + r : h * E * max_m + m;
                        if (!masked || r < counts[e]) {
                            same = same && code(plain.col_values, m * H + h) == code(t.col_values, at);
                        } else {
                            same = same && byte(plain.col_values, m * H + h) == kPoison;
                            // Transposed FP4: an invalid row's nibble in a byte with a valid row is 0.
                            same = same && (fp4 && (r ^ 1) < counts[e] ? code(t.col_values, at) == 0
                                                                      : byte(t.col_values, at) == kPoison);
                        }
                    }
            CHECK(same);
        }
}

TEST_CASE("rowwise and columnwise from one call equal two calls, with and without MoE") {
    const int64_t M = 64, H = 96, W = 2 * H;
    const std::vector<uint16_t> x = random_bf16(size_t(M * W), 15);
    const std::vector<float> prob(size_t(M), 0.5f);
    int32_t offsets[3] = {0, 32, 60};
    for (const Scheme& s : schemes())
        for (bool moe : {false, true}) {
            INFO(std::string(s.name), std::string(moe ? ", CONTIGUOUS" : ""));
            Desc both, rows, cols;
            for (Desc* d : {&both, &rows, &cols}) {
                s.set(*d);
                moe_activation(*d, prob);
                if (moe)
                    d->i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2)
                        .ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, offsets);
                if (s.out != FQ_TYPE_FP4_E2M1 && d != &rows) d->i32(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, 1);
            }
            both.i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE);
            cols.i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE);
            const Run b = run(both, x, M, W, H, s.out), r = run(rows, x, M, W, H, s.out), c = run(cols, x, M, W, H, s.out);
            REQUIRE_MESSAGE(b.status == FQ_STATUS_SUCCESS, b.message);
            CHECK(b.values == r.values);
            CHECK(b.scales == r.scales);
            CHECK(b.col_values == c.col_values);
            CHECK(b.col_scales == c.col_scales);
        }
}

TEST_CASE("NVFP4 under MoE: the global amax pointer holds one value per expert") {
    const int64_t E = 2, max_m = 16, H = 32;
    const std::vector<uint16_t> x = random_bf16(size_t(E * max_m * H), 16);
    int32_t counts[2] = {16, 16};
    float amax[2] = {10.0f, 448.0f};
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4).i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP4_E2M1)
        .i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN).ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, amax)
        .i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2)
        .ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
    const Run moe = run(d, x, E * max_m, H, H, FQ_TYPE_FP4_E2M1);
    REQUIRE_MESSAGE(moe.status == FQ_STATUS_SUCCESS, moe.message);
    for (int64_t e = 0; e < E; ++e) {
        Desc p;
        p.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4).i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP4_E2M1)
            .i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN).ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, amax + e);
        const Run plain = run(p, rows_of(x, H, e * max_m, max_m), max_m, H, H, FQ_TYPE_FP4_E2M1);
        REQUIRE(plain.status == FQ_STATUS_SUCCESS);
        CHECK(std::equal(plain.values.begin(), plain.values.end(), moe.values.begin() + e * max_m * H / 2));
        CHECK(std::equal(plain.scales.begin(), plain.scales.end(), moe.scales.begin() + e * 32));
    }
}

// ---- The grouped GEMM's segments (common/moe.h), the units of its CUDA kernel for MoE ---------------------------

namespace {

// (expert, tile) of every segment, in the order the kernel's units take them: expert order, tiles ascending.
std::vector<std::pair<int32_t, int32_t>> expected_segments(const std::vector<int32_t>& offsets, const int32_t* counts,
                                                           int64_t rows, int32_t tile_rows) {
    std::vector<std::pair<int32_t, int32_t>> s;
    for (int32_t e = 0; e + 1 < int32_t(offsets.size()); ++e) {
        const fq::RowRange r = fq::contiguous_rows(offsets.data(), counts, e, rows);
        if (r.count == 0) continue;
        for (int64_t t = r.first / tile_rows; t * tile_rows < r.first + r.count; ++t) s.push_back({e, int32_t(t)});
    }
    return s;
}

// The segments a cursor visits stepping one at a time from before the first.
std::vector<std::pair<int32_t, int32_t>> walked_segments(const std::vector<int32_t>& offsets, const int32_t* counts,
                                                         int64_t rows, int32_t tile_rows) {
    std::vector<std::pair<int32_t, int32_t>> s;
    fq::SegmentCursor c{-1, 0};
    const int32_t experts = int32_t(offsets.size()) - 1;
    for (int64_t k = 0; fq::advance_segments(offsets.data(), counts, experts, rows, tile_rows, c, k); k = 1)
        s.push_back({c.g, c.tile});
    return s;
}

}  // namespace

TEST_CASE("grouped GEMM segments: each expert's tiles once, in expert order; empty experts and unowned rows have none") {
    // Tiles of 128 rows. Expert 0: rows 0-99 (tile 0); 1: empty; 2: rows 100-299 (tiles 0, 1, 2); 3: row 300 (tile 2);
    // rows 301-399 belong to nobody.
    const std::vector<int32_t> offsets = {0, 100, 100, 300, 301};
    const std::vector<std::pair<int32_t, int32_t>> want = {{0, 0}, {2, 0}, {2, 1}, {2, 2}, {3, 2}};
    CHECK(walked_segments(offsets, nullptr, 400, 128) == want);
    CHECK(expected_segments(offsets, nullptr, 400, 128) == want);
    // counts: expert 2 keeps its first 20 rows (100-119: tile 0 only), expert 0 none.
    const std::vector<int32_t> counts = {0, 5, 20, 1};
    const std::vector<std::pair<int32_t, int32_t>> want_counts = {{2, 0}, {3, 2}};
    CHECK(walked_segments(offsets, counts.data(), 400, 128) == want_counts);
    // no segment at all: every step reports the end
    fq::SegmentCursor c{-1, 0};
    const std::vector<int32_t> none = {0, 0, 0};
    CHECK_FALSE(fq::advance_segments(none.data(), nullptr, 2, 100, 128, c, 0));
}

TEST_CASE("grouped GEMM segments: the kernel's walk (cluster c takes items c, c + clusters, ...; item i is segment "
          "i / columns) covers every (segment, column) once, on random layouts") {
    std::mt19937 rng(32);
    for (int trial = 0; trial < 2000; ++trial) {
        const int32_t experts = 1 + int32_t(rng() % 40), tile_rows = rng() % 2 ? 128 : 64;
        const int64_t rows = 1 + rng() % 3000;
        std::vector<int32_t> offsets(size_t(experts) + 1, 0), counts(static_cast<size_t>(experts), 0);
        for (int32_t e = 1; e < experts; ++e) offsets[size_t(e)] = int32_t(rng() % (rows + 1));
        offsets.back() = int32_t(rows);
        std::sort(offsets.begin(), offsets.end());
        offsets.front() = int32_t(rng() % 3 == 0 ? rng() % (offsets[1] + 1) : 0);  // leading rows nobody owns
        if (rng() % 4 == 0) offsets.back() += 7;                                     // past the rows: clamped
        for (int32_t e = 0; e < experts; ++e)
            counts[size_t(e)] = int32_t(rng() % (std::max<int64_t>(1, offsets[size_t(e) + 1] - offsets[size_t(e)] + 3)));
        const int32_t* cnt = rng() % 3 == 0 ? counts.data() : nullptr;
        CAPTURE(trial);
        const auto want = expected_segments(offsets, cnt, rows, tile_rows);
        REQUIRE(walked_segments(offsets, cnt, rows, tile_rows) == want);
        // for_each_unit's walk: per cluster, items ascending, the cursor stepping by the items' segment distance
        const int64_t columns = 1 + rng() % 8, clusters = 1 + rng() % 70;
        std::vector<int> seen(want.size() * size_t(columns), 0);
        for (int64_t cl = 0; cl < clusters; ++cl) {
            fq::SegmentCursor c{-1, 0};
            int64_t item = cl;
            bool more = fq::advance_segments(offsets.data(), cnt, experts, rows, tile_rows, c, item / columns);
            while (more) {
                const size_t s = size_t(item / columns);
                REQUIRE(s < want.size());
                CHECK(std::make_pair(c.g, c.tile) == want[s]);
                seen[s * size_t(columns) + size_t(item % columns)]++;
                const int64_t next = item + clusters;
                more = fq::advance_segments(offsets.data(), cnt, experts, rows, tile_rows, c, next / columns - item / columns);
                item = next;
            }
        }
        CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    }
}
