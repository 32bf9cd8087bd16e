// BLOCK_2D (docs/spec.md §3.1, §3.2, §4): one fp32 scale per 128x128 tile, amax over the tile's valid elements,
// scale grid [ceil(M/128), ceil(K/128)] in the descriptor's layout. Host backend, through the public API.
#include <cfloat>
#include <cmath>
#include <random>

#include "common/quantize.h"
#include "fq_test_util.h"

using namespace fqt;

namespace {

Desc& block2d(Desc& d, int32_t layout = FQ_SCALE_LAYOUT_ROW_MAJOR) {
    return d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_BLOCK_2D).i32(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
}

// An M x K input whose tile (mb, kb) has amax tile_amax(mb, kb), reached once at a known element.
float tile_amax(int64_t mb, int64_t kb) { return float(1 + mb * 8 + kb); }

std::vector<float> tiled_input(int64_t M, int64_t K) {
    std::vector<float> x(size_t(M * K));
    for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < K; ++k) {
            const float a = tile_amax(m / 128, k / 128);
            const bool peak = m % 128 == (k / 128) % 7 && k % 128 == 3;  // one element per tile at its amax
            x[size_t(m * K + k)] = peak ? -a : a * float((m + k) % 5) / 8.0f;
        }
    return x;
}

int64_t info(const Desc& d, int64_t M, int64_t K, int32_t what) {
    int64_t v = -1;
    REQUIRE(fqGetScaleBufferInfo(d.d, M, K, FQ_OUTPUT_ROWWISE, what, &v) == FQ_STATUS_SUCCESS);
    return v;
}

}  // namespace

TEST_CASE("BLOCK_2D scale grid is ceil(M/128) x ceil(K/128) fp32, in every affine layout") {
    for (int32_t layout : {FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR_TMA}) {
        CAPTURE(layout);
        Desc d;
        block2d(d, layout);
        CHECK(info(d, 130, 200, FQ_SCALE_INFO_ROWS) == 2);
        CHECK(info(d, 130, 200, FQ_SCALE_INFO_COLS) == 2);
        CHECK(info(d, 130, 200, FQ_SCALE_INFO_DTYPE) == FQ_TYPE_FP32);
        CHECK(info(d, 7168, 2048, FQ_SCALE_INFO_ROWS) == 56);
        CHECK(info(d, 7168, 2048, FQ_SCALE_INFO_COLS) == 16);
        const int64_t padded_rows = layout == FQ_SCALE_LAYOUT_COL_MAJOR_TMA ? 4 : 2;
        CHECK(info(d, 130, 200, FQ_SCALE_INFO_PADDED_ROWS) == padded_rows);
        CHECK(info(d, 130, 200, FQ_SCALE_INFO_BYTES) == padded_rows * 2 * 4);
        CHECK(info(d, 0, 200, FQ_SCALE_INFO_BYTES) == 0);
    }
    Desc col;
    block2d(col, FQ_SCALE_LAYOUT_COL_MAJOR);
    // COL_MAJOR: (nb, kb) at kb * ceil(N/128) + nb, column stride ceil(N/128) floats. (cuBLASLt's BLK128x128_32F
    // reads ROW_MAJOR with the row stride padded to 4: examples/cublaslt_fp8_gemm.h.)
    CHECK(info(col, 300, 1000, FQ_SCALE_INFO_ROW_STRIDE) == 4);
    CHECK(info(col, 300, 1000, FQ_SCALE_INFO_COL_STRIDE) == 3 * 4);
}

TEST_CASE("BLOCK_2D takes each tile's amax over its valid elements, partial edge tiles included") {
    const int64_t M = 300, K = 200;  // tiles of 128, 128, 44 rows x 128, 72 columns
    Desc d;
    block2d(d);
    HostRun r(d, to_bf16(tiled_input(M, K)), M, K, K, K);
    REQUIRE(r.status == FQ_STATUS_SUCCESS);
    REQUIRE(r.scales.size() == 3 * 2 * 4);
    for (int64_t mb = 0; mb < 3; ++mb)
        for (int64_t kb = 0; kb < 2; ++kb) {
            CAPTURE(mb);
            CAPTURE(kb);
            const float s = scale_at(r.scales, size_t(mb * 2 + kb));
            CHECK(s == tile_amax(mb, kb) / 448.0f);
            const int64_t m = mb * 128 + kb % 7, k = kb * 128 + 3;  // the peak lands on -qmax
            CHECK(r.out[size_t(m * K + k)] == 0xFE);
        }
}

TEST_CASE("BLOCK_2D values are per-tensor static quantization of each tile by the tile's scale") {
    const int64_t M = 260, K = 384, ld = 400;  // strided input rows
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> x(size_t(M * ld), 0.0f);
    for (float& v : x) v = normal(rng);
    x[5] = NAN;  // ignored by amax; encodes as the NaN code
    const std::vector<uint16_t> in = to_bf16(x);
    for (int32_t out : {FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP8_E5M2, FQ_TYPE_INT8}) {
        for (int32_t pow2 : {0, 1}) {
            CAPTURE(out);
            CAPTURE(pow2);
            Desc d;
            block2d(d, FQ_SCALE_LAYOUT_COL_MAJOR).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out).i32(FQ_QUANT_DESC_SCALE_ROUNDING, pow2);
            HostRun r(d, in, M, K, ld, K, out);
            REQUIRE(r.status == FQ_STATUS_SUCCESS);
            const int64_t mbs = 3, kbs = 3;
            for (int64_t mb = 0; mb < mbs; ++mb)
                for (int64_t kb = 0; kb < kbs; ++kb) {
                    const int64_t r0 = mb * 128, c0 = kb * 128, nr = std::min<int64_t>(128, M - r0);
                    float amax = 0.0f;
                    for (int64_t m = r0; m < r0 + nr; ++m)
                        for (int64_t k = c0; k < c0 + 128; ++k) amax = fmaxf(amax, std::fabs(fq::bf16_to_float(in[size_t(m * ld + k)])));
                    fq::QuantParams q;
                    q.out = fq::DType(out);
                    q.qmax = out == FQ_TYPE_INT8 ? 127.0f : (out == FQ_TYPE_FP8_E5M2 ? 57344.0f : 448.0f);
                    q.min_scale = out == FQ_TYPE_INT8 ? FLT_EPSILON : 1.0f / (q.qmax * 512.0f);
                    q.pow2_ceil = pow2;
                    const float want_s = fq::group_scale(amax, NAN, q);
                    const float s = scale_at(r.scales, size_t(kb * mbs + mb));  // COL_MAJOR: kb * ceil(M/128) + mb
                    REQUIRE(s == want_s);
                    Desc t;
                    t.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out)
                        .ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, &s);
                    std::vector<uint16_t> tile(in.begin() + r0 * ld + c0, in.end());
                    HostRun tr(t, tile, nr, 128, ld, 128, out);
                    REQUIRE(tr.status == FQ_STATUS_SUCCESS);
                    for (int64_t m = 0; m < nr; ++m)
                        for (int64_t k = 0; k < 128; ++k)
                            REQUIRE(r.out[size_t((r0 + m) * K + c0 + k)] == tr.out[size_t(m * 128 + k)]);
                }
        }
    }
}

TEST_CASE("BLOCK_2D COL_MAJOR and COL_MAJOR_TMA hold the ROW_MAJOR scales transposed, TMA padding zero") {
    const int64_t M = 390, K = 260;  // 4 x 3 tiles
    const auto in = to_bf16(tiled_input(M, K));
    Desc row, col, tma;
    block2d(row);
    block2d(col, FQ_SCALE_LAYOUT_COL_MAJOR);
    block2d(tma, FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
    HostRun a(row, in, M, K, K, K), b(col, in, M, K, K, K), c(tma, in, M, K, K, K);
    REQUIRE(a.status == FQ_STATUS_SUCCESS);
    REQUIRE(b.status == FQ_STATUS_SUCCESS);
    REQUIRE(c.status == FQ_STATUS_SUCCESS);
    CHECK(a.out == b.out);
    CHECK(a.out == c.out);
    REQUIRE(c.scales.size() == 4 * 3 * 4);  // ceil(390/128) = 4 rows: already a multiple of 4
    for (int64_t mb = 0; mb < 4; ++mb)
        for (int64_t kb = 0; kb < 3; ++kb) {
            CHECK(scale_at(b.scales, size_t(kb * 4 + mb)) == scale_at(a.scales, size_t(mb * 3 + kb)));
            CHECK(scale_at(c.scales, size_t(kb * 4 + mb)) == scale_at(a.scales, size_t(mb * 3 + kb)));
        }
    HostRun p(tma, in, 130, K, K, K);  // 2 tile rows padded to 4: the padding is written with zero
    REQUIRE(p.status == FQ_STATUS_SUCCESS);
    for (int64_t kb = 0; kb < 3; ++kb)
        for (int64_t mb = 2; mb < 4; ++mb) CHECK(scale_at(p.scales, size_t(kb * 4 + mb)) == 0.0f);
}

TEST_CASE("BLOCK_2D honours POW2_CEIL, the scale upper bound, gated activations and row probabilities") {
    {
        Desc d;
        block2d(d).i32(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL);
        HostRun r(d, to_bf16({3.0f, -1.0f, 0.5f, 2.0f}), 2, 2, 2, 2);
        REQUIRE(r.status == FQ_STATUS_SUCCESS);
        CHECK(scale_at(r.scales, 0) == 1.0f / 128.0f);  // 3/448 rounded up to a power of two
    }
    {
        const float ub = 1.0f / 448.0f;
        Desc d;
        block2d(d).ptr(FQ_QUANT_DESC_SCALE_UB_POINTER, &ub);
        HostRun r(d, to_bf16({3.0f, -1.0f, 0.5f, 2.0f}), 2, 2, 2, 2);
        REQUIRE(r.status == FQ_STATUS_SUCCESS);
        CHECK(scale_at(r.scales, 0) == ub);
        CHECK(r.out[0] == 0x7E);  // 3 / (1/448) saturates at qmax
    }
    {
        // silu(g) * u over two rows, scaled by a probability per row: amax over both rows.
        const float prob[2] = {0.5f, 2.0f};
        Desc d;
        block2d(d).i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_RELU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT)
            .ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob);
        HostRun r(d, to_bf16({1.0f, -2.0f, 3.0f, 4.0f, 2.0f, 1.0f, 0.25f, 1.0f}), 2, 4, 4, 2);
        REQUIRE(r.status == FQ_STATUS_SUCCESS);
        // y = prob * relu(g) * u: row 0 [1.5, 0], row 1 [1, 2]
        CHECK(scale_at(r.scales, 0) == 2.0f / 448.0f);
        CHECK(r.out[3] == 0x7E);
    }
}

TEST_CASE("BLOCK_2D scales are fp32: E8M0 scale type and byte-scale layouts are refused with the reason") {
    Handle h;
    Layout li(FQ_TYPE_BF16, 4, 64, 64), lo(FQ_TYPE_FP8_E4M3FN, 4, 64, 64);
    char name[64];
    {
        Desc d;
        block2d(d).i32(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL).i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
        CHECK(fqQuerySupport(h.h, d.d, li.l, lo.l, name, sizeof name) == FQ_STATUS_INVALID_VALUE);
        CHECK(std::string(fqGetLastErrorMessage()).find("FQ_QUANT_DESC_SCALE_TYPE") != std::string::npos);
    }
    {
        Desc d;
        block2d(d, FQ_SCALE_LAYOUT_SWIZZLED_128X4);
        CHECK(fqQuerySupport(h.h, d.d, li.l, lo.l, name, sizeof name) == FQ_STATUS_INVALID_VALUE);
    }
    Desc ok;
    block2d(ok);
    REQUIRE(fqQuerySupport(h.h, ok.d, li.l, lo.l, name, sizeof name) == FQ_STATUS_SUCCESS);
    CHECK(std::string(name) == "host.reference");
}
