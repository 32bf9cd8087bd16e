// The grouped FP8 GEMM (fqGroupedGemm, docs/gemm.md) on the host backend: its reference against an independent
// naive computation (its own fp8 decoder, its own row ownership, long double products element by element) on
// random fp8 operands and scales, the epilogue equal byte for byte to fqQuantize of the returned C, rows no group
// owns untouched in every output, QUANTIZE = 0, zero rows, and the descriptor's attributes. The bad-input matrix
// for every argument is in test_bad_input.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fq_test_util.h"

using namespace fqt;

namespace {

constexpr uint8_t kPoison = 0xAB;
constexpr uint16_t kPoison16 = 0xABAB;

// e4m3fn decoded from its definition (OCP FP8: bias 7, 3 mantissa bits, 0x7F/0xFF NaN), not the library's code.
long double e4m3(uint8_t b) {
    const int sign = b >> 7, e = (b >> 3) & 15, m = b & 7;
    if ((b & 0x7F) == 0x7F) return NAN;
    const long double v = e == 0 ? std::ldexp((long double)m, -9) : std::ldexp((long double)(8 + m), e - 10);
    return sign ? -v : v;
}

float bf16f(uint16_t h) {
    const uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One random problem: A [M, K], B [E*N, K] (random non-NaN fp8 bytes), 1x128 / 128x128 scales, offsets with empty
// groups and gaps, optional counts and alphas.
struct Problem {
    int64_t m, k, n, e;
    int32_t a_layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA;
    std::vector<uint8_t> a, b;
    std::vector<float> sa, sb, alpha;
    std::vector<int32_t> offsets, counts;

    int64_t a_ld() const { return a_layout == FQ_SCALE_LAYOUT_COL_MAJOR_TMA ? (m + 3) / 4 * 4 : m; }

    Problem(uint32_t seed, int64_t m_, int64_t k_, int64_t n_, int64_t e_, bool with_counts, bool with_alpha,
            bool with_offsets = true)
        : m(m_), k(k_), n(n_), e(e_) {
        std::mt19937 rng(seed);
        auto byte = [&] {
            uint8_t v;
            do v = uint8_t(rng()); while ((v & 0x7F) == 0x7F);
            return v;
        };
        a.resize(size_t(m * k));
        b.resize(size_t(e * n * k));
        for (auto& v : a) v = byte();
        for (auto& v : b) v = byte();
        std::uniform_real_distribution<float> u(0.5f, 2.0f);
        sa.resize(size_t(cdiv(k, 128) * ((m + 3) / 4 * 4) + 4));
        for (auto& v : sa) v = u(rng) * 0x1p-6f;
        sb.resize(size_t(e * cdiv(n, 128) * cdiv(k, 128)));
        for (auto& v : sb) v = u(rng) * 0x1p-7f;
        if (with_alpha) {
            alpha.resize(size_t(e));
            for (auto& v : alpha) v = u(rng) * (rng() % 2 ? 1.0f : -1.0f);
        }
        if (with_offsets) {
            // Non-decreasing offsets in [0, M] with some groups empty, some rows before the first and after the last.
            std::vector<int32_t> cuts(size_t(e + 1));
            for (auto& c : cuts) c = int32_t(rng() % uint32_t(m + 1));
            std::sort(cuts.begin(), cuts.end());
            if (e > 2) cuts[2] = cuts[1];  // group 1 empty
            offsets = cuts;
            if (with_counts) {
                counts.resize(size_t(e));
                for (int64_t g = 0; g < e; ++g) {
                    const int32_t slot = offsets[size_t(g + 1)] - offsets[size_t(g)];
                    counts[size_t(g)] = int32_t(rng() % uint32_t(slot + 2));  // sometimes past the slot: clamped
                }
            }
        }
    }

    // Which group owns row r (-1: none), from the rule of docs/moe.md, written here again.
    int64_t owner(int64_t r) const {
        if (offsets.empty()) return 0;
        int64_t who = -1;
        for (int64_t g = 0; g < e; ++g) {
            const int64_t lo = std::clamp<int64_t>(offsets[size_t(g)], 0, m);
            const int64_t hi = std::clamp<int64_t>(offsets[size_t(g + 1)], lo, m);
            const int64_t cnt = counts.empty() ? hi - lo : std::clamp<int64_t>(counts[size_t(g)], 0, hi - lo);
            if (r >= lo && r < lo + cnt) who = g;
        }
        return who;
    }

    // C[r, c] element by element: alpha * sum_k (a * sa) * (b * sb), in long double.
    long double naive(int64_t r, int64_t c, long double* magnitude) const {
        const int64_t g = owner(r);
        long double s = 0, mag = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
            const long double x = e4m3(a[size_t(r * k + kk)]) * sa[size_t((kk / 128) * a_ld() + r)];
            const long double y = e4m3(b[size_t((g * n + c) * k + kk)]) *
                                  sb[size_t((g * cdiv(n, 128) + c / 128) * cdiv(k, 128) + kk / 128)];
            s += x * y;
            mag += std::fabs(x * y);
        }
        const long double al = alpha.empty() ? 1.0L : alpha[size_t(g)];
        *magnitude = std::fabs(al) * mag;
        return al * s;
    }
};

// The outputs of one fqGroupedGemm call, every buffer poisoned first.
struct GemmRun {
    std::vector<uint16_t> c, d;
    std::vector<uint8_t> out, scales, col_out, col_scales;
    fqStatus_t status = FQ_STATUS_SUCCESS;
    std::string message;
};

size_t scale_bytes_of(const Desc& d, int64_t rows, int64_t cols, int32_t which) {
    size_t b = 0;
    REQUIRE_MESSAGE(fqGetScaleBufferSize(d.d, rows, cols, which, &b) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    return b;
}

size_t gemm_scale_bytes(const GemmDesc& g, const Desc& epi, int64_t rows, int64_t cols, int32_t which) {
    size_t b = 0;
    REQUIRE_MESSAGE(fqGroupedGemmGetScaleBufferSize(g.d, epi.d, rows, cols, which, &b) == FQ_STATUS_SUCCESS,
                    fqGetLastErrorMessage());
    return b;
}

// Runs `p` with epilogue `epi` (its columnwise pointers are set here when it asks for them) on the host backend,
// its scale buffers of the sizes fqGroupedGemmGetScaleBufferSize gives.
GemmRun run_gemm(const Problem& p, Desc& epi, bool want_c, bool want_d, bool quantize, int64_t h,
                 int32_t out_type = FQ_TYPE_FP8_E4M3FN, int32_t outputs = FQ_OUTPUT_ROWWISE) {
    GemmRun r;
    GemmDesc g;
    g.i32(FQ_GEMM_DESC_NUM_GROUPS, int32_t(p.e)).i32(FQ_GEMM_DESC_A_SCALE_LAYOUT, p.a_layout);
    g.i32(FQ_GEMM_DESC_QUANTIZE, quantize ? 1 : 0);
    if (!p.offsets.empty()) g.ptr(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, p.offsets.data());
    if (!p.counts.empty()) g.ptr(FQ_GEMM_DESC_GROUP_COUNTS_POINTER, p.counts.data());
    if (!p.alpha.empty()) g.ptr(FQ_GEMM_DESC_ALPHA_POINTER, p.alpha.data());
    if (want_c) {
        r.c.assign(size_t(p.m * p.n), kPoison16);
        g.ptr(FQ_GEMM_DESC_C_OUTPUT_POINTER, r.c.data());
    }
    if (want_d) {
        r.d.assign(size_t(p.m * h), kPoison16);
        g.ptr(FQ_GEMM_DESC_D_OUTPUT_POINTER, r.d.data());
    }
    if (quantize) {
        if (outputs & FQ_OUTPUT_ROWWISE) {
            r.out.assign(size_t(p.m * h), kPoison);
            r.scales.assign(gemm_scale_bytes(g, epi, p.m, h, FQ_OUTPUT_ROWWISE), kPoison);
        }
        if (outputs & FQ_OUTPUT_COLUMNWISE) {
            r.col_out.assign(size_t(p.m * h), kPoison);
            r.col_scales.assign(gemm_scale_bytes(g, epi, p.m, h, FQ_OUTPUT_COLUMNWISE), kPoison);
            epi.ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, r.col_out.data());
            epi.ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, r.col_scales.empty() ? nullptr : r.col_scales.data());
        }
    }
    Handle hd;
    Layout la(FQ_TYPE_FP8_E4M3FN, p.m, p.k, p.k), lb(FQ_TYPE_FP8_E4M3FN, p.e * p.n, p.k, p.k);
    Layout lo(out_type, p.m, h, h);
    r.status = fqGroupedGemm(hd.h, g.d, epi.d, la.l, p.a.data(), p.sa.data(), lb.l, p.b.data(), p.sb.data(),
                             quantize ? lo.l : nullptr, r.out.empty() ? nullptr : r.out.data(),
                             r.scales.empty() ? nullptr : r.scales.data(), r.scales.size(), nullptr);
    r.message = fqGetLastErrorMessage();
    return r;
}

// fqQuantize of C with the epilogue descriptor, the groups as MoE CONTIGUOUS experts (none without offsets): what
// the GEMM's quantized outputs must equal byte for byte. `epi` gets its MoE attributes set.
GemmRun run_quantize_of_c(const Problem& p, Desc& epi, const std::vector<uint16_t>& c, int64_t h, int32_t out_type,
                          int32_t outputs) {
    GemmRun r;
    if (!p.offsets.empty()) {
        epi.i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, int32_t(p.e));
        epi.ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, p.offsets.data());
        if (!p.counts.empty()) epi.ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, p.counts.data());
    }
    if (outputs & FQ_OUTPUT_ROWWISE) {
        r.out.assign(size_t(p.m * h), kPoison);
        r.scales.assign(scale_bytes_of(epi, p.m, h, FQ_OUTPUT_ROWWISE), kPoison);
    }
    if (outputs & FQ_OUTPUT_COLUMNWISE) {
        r.col_out.assign(size_t(p.m * h), kPoison);
        r.col_scales.assign(scale_bytes_of(epi, p.m, h, FQ_OUTPUT_COLUMNWISE), kPoison);
        epi.ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, r.col_out.data());
        epi.ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, r.col_scales.empty() ? nullptr : r.col_scales.data());
    }
    Handle hd;
    Layout li(FQ_TYPE_BF16, p.m, p.n, p.n), lo(out_type, p.m, h, h);
    r.status = fqQuantize(hd.h, epi.d, li.l, c.data(), lo.l, r.out.empty() ? nullptr : r.out.data(),
                          r.scales.empty() ? nullptr : r.scales.data(), r.scales.size(), nullptr, 0, nullptr);
    r.message = fqGetLastErrorMessage();
    return r;
}

// The SwiGLU epilogue of seeds/004's shape: split gate, per-group 128 fp8 with COL_MAJOR_TMA scales.
void swiglu(Desc& d, int32_t group = 128, int32_t layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA) {
    d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, group).i32(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
}

struct Shape {
    int64_t m, k, n, e;
    bool counts, alpha, offsets;
};
const Shape kShapes[] = {
    {77, 256, 128, 1, false, false, false},  // one group, no offsets: all rows
    {77, 256, 128, 1, false, true, true},    // one group with offsets: rows outside it untouched
    {130, 208, 256, 3, false, true, true},   // K not a multiple of 128; 3 groups, one empty
    {130, 384, 192, 3, true, false, true},   // N not a multiple of 128; counts
    {301, 128, 128, 8, true, true, true},    // 8 groups, M not a multiple of 128
    {45, 64, 64, 8, false, false, true},     // K < 128, more groups than rows for some
};

}  // namespace

TEST_CASE("grouped GEMM: C is the fp64 sum of the block-scaled fp8 products, rounded to fp32 then bf16") {
    uint32_t seed = 1;
    for (const Shape& s : kShapes)
        for (int32_t layout : {FQ_SCALE_LAYOUT_COL_MAJOR_TMA, FQ_SCALE_LAYOUT_COL_MAJOR}) {
            Problem p(seed++, s.m, s.k, s.n, s.e, s.counts, s.alpha, s.offsets);
            p.a_layout = layout;
            Desc epi;
            swiglu(epi);
            const GemmRun r = run_gemm(p, epi, true, false, false, s.n / 2);
            INFO("M " << s.m << " K " << s.k << " N " << s.n << " E " << s.e << " layout " << layout);
            REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
            int64_t valid = 0, exact = 0, bad = 0;
            for (int64_t row = 0; row < p.m; ++row) {
                for (int64_t c = 0; c < p.n; ++c) {
                    const uint16_t got = r.c[size_t(row * p.n + c)];
                    if (p.owner(row) < 0) {
                        bad += got != kPoison16;  // never written
                        continue;
                    }
                    ++valid;
                    long double mag = 0;
                    const long double want = p.naive(row, c, &mag);
                    const uint16_t want_bits = fq::float_to_bf16(float(want));
                    exact += got == want_bits;
                    // One bf16 rounding of an almost exact value: within half a bf16 ulp, plus the naive sum's slack.
                    const long double err = std::fabs((long double)bf16f(got) - want);
                    if (err > std::ldexp(std::fabs(want), -8) + 1e-12L * mag) ++bad;
                }
            }
            CHECK(bad == 0);
            CHECK(valid > 0);
            // The naive sum differs from the reference's by far less than a bf16 ulp: nearly all bits agree.
            CHECK(exact >= valid - valid / 100);
        }
}

TEST_CASE("grouped GEMM: the quantized epilogue is fqQuantize of the returned C, byte for byte") {
    struct Epi {
        const char* name;
        int32_t act, gate, scheme, group, layout, out_type, scale_type, outputs;
    };
    const Epi epis[] = {
        {"swiglu per-group 128 TMA", FQ_ACTIVATION_SILU, FQ_GATE_LAYOUT_SPLIT, FQ_SCHEME_PER_GROUP, 128,
         FQ_SCALE_LAYOUT_COL_MAJOR_TMA, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP32, FQ_OUTPUT_ROWWISE},
        {"swiglu per-group 32 row-major int8", FQ_ACTIVATION_SILU, FQ_GATE_LAYOUT_SPLIT, FQ_SCHEME_PER_GROUP, 32,
         FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_TYPE_INT8, FQ_TYPE_FP32, FQ_OUTPUT_ROWWISE},
        {"gelu interleaved per-group 64 col-major, rowwise + columnwise", FQ_ACTIVATION_GELU_TANH,
         FQ_GATE_LAYOUT_INTERLEAVED, FQ_SCHEME_PER_GROUP, 64, FQ_SCALE_LAYOUT_COL_MAJOR, FQ_TYPE_FP8_E4M3FN,
         FQ_TYPE_FP32, FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE},
        {"identity (not gated) per-token", FQ_ACTIVATION_IDENTITY, FQ_GATE_LAYOUT_NONE, FQ_SCHEME_PER_TOKEN, 128,
         FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP32, FQ_OUTPUT_ROWWISE},
        {"swiglu MXFP8 swizzled", FQ_ACTIVATION_SILU, FQ_GATE_LAYOUT_SPLIT, FQ_SCHEME_MXFP8, 128,
         FQ_SCALE_LAYOUT_SWIZZLED_128X4, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_E8M0, FQ_OUTPUT_ROWWISE},
        {"swiglu per-tensor dynamic (one scale per group)", FQ_ACTIVATION_SILU, FQ_GATE_LAYOUT_SPLIT,
         FQ_SCHEME_PER_TENSOR_DYNAMIC, 128, FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP32,
         FQ_OUTPUT_ROWWISE},
    };
    uint32_t seed = 100;
    for (const Epi& x : epis)
        for (const Shape& s : kShapes) {
            Problem p(seed++, s.m, s.k, s.n, s.e, s.counts, s.alpha, s.offsets);
            const bool gated = x.gate != FQ_GATE_LAYOUT_NONE;
            const int64_t h = gated ? s.n / 2 : s.n;
            std::vector<float> prob(size_t(p.m));
            for (size_t i = 0; i < prob.size(); ++i) prob[i] = 0.25f + float(i % 7) * 0.125f;
            auto make = [&](Desc& d) {
                d.i32(FQ_QUANT_DESC_ACTIVATION, x.act).i32(FQ_QUANT_DESC_GATE_LAYOUT, x.gate);
                d.i32(FQ_QUANT_DESC_SCHEME, x.scheme);
                if (x.scheme == FQ_SCHEME_PER_GROUP) d.i32(FQ_QUANT_DESC_GROUP_SIZE, x.group);
                d.i32(FQ_QUANT_DESC_SCALE_LAYOUT, x.layout).i32(FQ_QUANT_DESC_OUTPUT_TYPE, x.out_type);
                d.i32(FQ_QUANT_DESC_SCALE_TYPE, x.scale_type).i32(FQ_QUANT_DESC_OUTPUTS, x.outputs);
                if (x.outputs & FQ_OUTPUT_COLUMNWISE) d.i32(FQ_QUANT_DESC_COLUMNWISE_BLOCK, 32);
                d.ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob.data());
            };
            Desc epi, ref;
            make(epi);
            make(ref);
            INFO(std::string(x.name) << ": M " << s.m << " K " << s.k << " N " << s.n << " E " << s.e);
            const GemmRun g = run_gemm(p, epi, true, true, true, h, x.out_type, x.outputs);
            REQUIRE_MESSAGE(g.status == FQ_STATUS_SUCCESS, g.message);
            // C's invalid rows hold poison; fqQuantize never reads them (rows no expert owns), so C serves as is.
            const GemmRun q = run_quantize_of_c(p, ref, g.c, h, x.out_type, x.outputs);
            REQUIRE_MESSAGE(q.status == FQ_STATUS_SUCCESS, q.message);
            CHECK(g.out == q.out);
            CHECK(g.scales == q.scales);
            CHECK(g.col_out == q.col_out);
            CHECK(g.col_scales == q.col_scales);
            // D: y = prob * act(C) in bf16, valid rows only.
            for (int64_t row = 0; row < p.m; ++row)
                for (int64_t j = 0; j < h; ++j) {
                    const uint16_t got = g.d[size_t(row * h + j)];
                    if (p.owner(row) < 0) {
                        CHECK(got == kPoison16);
                        CHECK(g.out[size_t(row * h + j)] == kPoison);
                        continue;
                    }
                    if (x.act != FQ_ACTIVATION_IDENTITY || gated) continue;  // checked below for SiLU
                    CHECK(got == fq::float_to_bf16(prob[size_t(row)] * bf16f(g.c[size_t(row * p.n + j)])));
                }
        }
}

TEST_CASE("grouped GEMM: D is prob * silu(gate) * up of the bf16 C, as the fused reference computes y") {
    Problem p(7, 130, 256, 256, 3, true, true);
    std::vector<float> prob(size_t(p.m), 0.5f);
    Desc epi;
    swiglu(epi);
    epi.ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob.data());
    const int64_t h = p.n / 2;
    const GemmRun r = run_gemm(p, epi, true, true, false, h);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    CHECK(r.out.empty());
    int64_t checked = 0;
    for (int64_t row = 0; row < p.m; ++row)
        for (int64_t j = 0; j < h; ++j) {
            const uint16_t got = r.d[size_t(row * h + j)];
            if (p.owner(row) < 0) {
                CHECK(got == kPoison16);
                continue;
            }
            const double gte = bf16f(r.c[size_t(row * p.n + j)]), up = bf16f(r.c[size_t(row * p.n + h + j)]);
            const double want = 0.5 * gte / (1.0 + std::exp(-gte)) * up;
            CHECK(std::fabs(double(bf16f(got)) - want) <= std::ldexp(std::fabs(want), -8) + 1e-30);
            ++checked;
        }
    CHECK(checked > 0);
}

TEST_CASE("grouped GEMM: rows no group owns are never written, in any output or scale slot") {
    Problem p(11, 96, 128, 128, 2, true, false);
    p.offsets = {8, 40, 72};  // rows 0-7 and 72-95 belong to no group
    p.counts = {20, 32};      // rows 28-39 are group 0's padding
    Desc epi;
    swiglu(epi, 64, FQ_SCALE_LAYOUT_ROW_MAJOR);
    const GemmRun r = run_gemm(p, epi, true, true, true, 64);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    for (int64_t row = 0; row < p.m; ++row) {
        const bool valid = (row >= 8 && row < 28) || (row >= 40 && row < 72);
        INFO("row " << row);
        CHECK((p.owner(row) >= 0) == valid);
        for (int64_t c = 0; c < p.n; ++c) CHECK((r.c[size_t(row * p.n + c)] == kPoison16) != valid);
        for (int64_t j = 0; j < 64; ++j) {
            CHECK((r.d[size_t(row * 64 + j)] == kPoison16) != valid);
            if (!valid) CHECK(r.out[size_t(row * 64 + j)] == kPoison);
        }
        // One fp32 group scale per row (ROW_MAJOR, H 64 = one group of 64).
        for (int i = 0; i < 4; ++i) CHECK((r.scales[size_t(row * 4 + i)] == kPoison) == !valid);
    }
}

TEST_CASE("grouped GEMM: NaN-poisoned outputs of invalid rows stay NaN; alpha scales C") {
    Problem p(21, 64, 128, 128, 2, false, false);
    p.offsets = {0, 16, 48};
    const std::vector<float> alphas = {2.0f, -0.5f};
    Desc epi;
    swiglu(epi);
    GemmRun plain = run_gemm(p, epi, true, false, false, 64);
    p.alpha = alphas;
    GemmRun scaled = run_gemm(p, epi, true, false, false, 64);
    REQUIRE(plain.status == FQ_STATUS_SUCCESS);
    REQUIRE(scaled.status == FQ_STATUS_SUCCESS);
    for (int64_t row = 0; row < p.m; ++row)
        for (int64_t c = 0; c < p.n; ++c) {
            const size_t i = size_t(row * p.n + c);
            if (row >= 48) {
                CHECK(scaled.c[i] == kPoison16);
                continue;
            }
            // A power-of-two alpha commutes with every rounding (no overflow or subnormal here).
            const float a = alphas[row < 16 ? 0 : 1];
            CHECK(bf16f(scaled.c[i]) == a * bf16f(plain.c[i]));
        }
    // Poisoned with bf16 NaN instead of 0xABAB: still NaN after the call.
    GemmDesc g;
    g.i32(FQ_GEMM_DESC_NUM_GROUPS, 2).ptr(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, p.offsets.data()).i32(FQ_GEMM_DESC_QUANTIZE, 0);
    std::vector<uint16_t> c(size_t(p.m * p.n), 0x7FC1);
    g.ptr(FQ_GEMM_DESC_C_OUTPUT_POINTER, c.data());
    Handle h;
    Layout la(FQ_TYPE_FP8_E4M3FN, p.m, p.k, p.k), lb(FQ_TYPE_FP8_E4M3FN, p.e * p.n, p.k, p.k);
    REQUIRE(fqGroupedGemm(h.h, g.d, epi.d, la.l, p.a.data(), p.sa.data(), lb.l, p.b.data(), p.sb.data(), nullptr,
                          nullptr, nullptr, 0, nullptr) == FQ_STATUS_SUCCESS);
    for (int64_t row = 48; row < p.m; ++row)
        for (int64_t col = 0; col < p.n; ++col) CHECK(c[size_t(row * p.n + col)] == 0x7FC1);
    CHECK(std::isnan(bf16f(c.back())));
}

TEST_CASE("grouped GEMM: the A scale layout only moves where A's scales are read") {
    Problem p(31, 70, 256, 128, 1, false, false, false);
    Desc epi;
    swiglu(epi);
    const GemmRun tma = run_gemm(p, epi, true, false, false, 64);
    // The same logical scales in COL_MAJOR (ld M = 70 instead of 72).
    Problem q = p;
    q.a_layout = FQ_SCALE_LAYOUT_COL_MAJOR;
    for (int64_t kb = 0; kb < 2; ++kb)
        for (int64_t r = 0; r < p.m; ++r) q.sa[size_t(kb * 70 + r)] = p.sa[size_t(kb * 72 + r)];
    const GemmRun col = run_gemm(q, epi, true, false, false, 64);
    REQUIRE(tma.status == FQ_STATUS_SUCCESS);
    REQUIRE(col.status == FQ_STATUS_SUCCESS);
    CHECK(tma.c == col.c);
}

TEST_CASE("grouped GEMM: zero rows is a no-op; QUANTIZE = 0 needs C or D") {
    Problem p(41, 0, 128, 128, 2, false, false);
    p.offsets = {0, 0, 0};
    Desc epi;
    swiglu(epi);
    const GemmRun r = run_gemm(p, epi, true, true, true, 64);
    CHECK_MESSAGE(r.status == FQ_STATUS_SUCCESS, r.message);
    // Zero rows: NULL operands and outputs are fine (nothing is read or written).
    GemmDesc g;
    g.i32(FQ_GEMM_DESC_NUM_GROUPS, 2).ptr(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, p.offsets.data());
    Handle h;
    Layout la(FQ_TYPE_FP8_E4M3FN, 0, 128, 128), lb(FQ_TYPE_FP8_E4M3FN, 256, 128, 128), lo(FQ_TYPE_FP8_E4M3FN, 0, 64, 64);
    CHECK(fqGroupedGemm(h.h, g.d, epi.d, la.l, nullptr, nullptr, lb.l, nullptr, nullptr, lo.l, nullptr, nullptr, 0,
                        nullptr) == FQ_STATUS_SUCCESS);
    g.i32(FQ_GEMM_DESC_QUANTIZE, 0);
    CHECK(fqGroupedGemm(h.h, g.d, epi.d, la.l, nullptr, nullptr, lb.l, nullptr, nullptr, nullptr, nullptr, nullptr, 0,
                        nullptr) == FQ_STATUS_INVALID_VALUE);
    CHECK(std::string(fqGetLastErrorMessage()).find("FQ_GEMM_DESC_QUANTIZE") != std::string::npos);
}

TEST_CASE("grouped GEMM: QUANTIZE = 0 ignores the epilogue's quantization attributes") {
    Problem p(51, 40, 128, 128, 1, false, false, false);
    Desc epi, broken;
    swiglu(epi);
    swiglu(broken);
    // Each of these would fail fqQuantize; without a quantized output they are not looked at.
    broken.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP4_E2M1);
    broken.i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE);
    const GemmRun a = run_gemm(p, epi, true, true, false, 64);
    const GemmRun b = run_gemm(p, broken, true, true, false, 64);
    REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
    REQUIRE_MESSAGE(b.status == FQ_STATUS_SUCCESS, b.message);
    CHECK(a.c == b.c);
    CHECK(a.d == b.d);
}

TEST_CASE("grouped GEMM: descriptor attributes read back as set, with their defaults") {
    GemmDesc g;
    auto get = [&](int32_t attr) {
        int32_t v = -7;
        size_t w = 0;
        REQUIRE(fqGroupedGemmDescGetAttribute(g.d, attr, &v, 4, &w) == FQ_STATUS_SUCCESS);
        CHECK(w == 4);
        return v;
    };
    auto getp = [&](int32_t attr) {
        const void* v = &g;
        size_t w = 0;
        REQUIRE(fqGroupedGemmDescGetAttribute(g.d, attr, &v, sizeof v, &w) == FQ_STATUS_SUCCESS);
        CHECK(w == sizeof v);
        return v;
    };
    CHECK(get(FQ_GEMM_DESC_NUM_GROUPS) == 1);
    CHECK(get(FQ_GEMM_DESC_A_SCALE_LAYOUT) == FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
    CHECK(get(FQ_GEMM_DESC_QUANTIZE) == 1);
    for (int32_t attr : {FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, FQ_GEMM_DESC_GROUP_COUNTS_POINTER, FQ_GEMM_DESC_ALPHA_POINTER,
                         FQ_GEMM_DESC_C_OUTPUT_POINTER, FQ_GEMM_DESC_D_OUTPUT_POINTER})
        CHECK(getp(attr) == nullptr);
    int x = 0;
    g.i32(FQ_GEMM_DESC_NUM_GROUPS, 64).i32(FQ_GEMM_DESC_A_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR).i32(FQ_GEMM_DESC_QUANTIZE, 0);
    g.ptr(FQ_GEMM_DESC_ALPHA_POINTER, &x);
    CHECK(get(FQ_GEMM_DESC_NUM_GROUPS) == 64);
    CHECK(get(FQ_GEMM_DESC_A_SCALE_LAYOUT) == FQ_SCALE_LAYOUT_COL_MAJOR);
    CHECK(get(FQ_GEMM_DESC_QUANTIZE) == 0);
    CHECK(getp(FQ_GEMM_DESC_ALPHA_POINTER) == &x);
    size_t need = 0;
    CHECK(fqGroupedGemmDescGetAttribute(g.d, FQ_GEMM_DESC_C_OUTPUT_POINTER, nullptr, 0, &need) == FQ_STATUS_SUCCESS);
    CHECK(need == sizeof(void*));
    const int32_t row_major = FQ_SCALE_LAYOUT_ROW_MAJOR;
    CHECK(fqGroupedGemmDescSetAttribute(g.d, FQ_GEMM_DESC_A_SCALE_LAYOUT, &row_major, 4) == FQ_STATUS_INVALID_VALUE);
    CHECK(std::string(fqGetLastErrorMessage()).find("FQ_GEMM_DESC_A_SCALE_LAYOUT") != std::string::npos);
}

TEST_CASE("fqGroupedGemmGetScaleBufferSize: per-tensor scales are one per group (offsets set or not yet); other "
          "schemes and one group as fqGetScaleBufferSize; a MoE epilogue and NULL are refused") {
    int32_t offsets[4] = {0, 10, 10, 40};
    GemmDesc grouped, single, unset;  // unset: 3 groups, the offsets not given yet (the sizes do not need them)
    grouped.i32(FQ_GEMM_DESC_NUM_GROUPS, 3).ptr(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, offsets);
    unset.i32(FQ_GEMM_DESC_NUM_GROUPS, 3);
    for (int32_t which : {int32_t(FQ_OUTPUT_ROWWISE), int32_t(FQ_OUTPUT_COLUMNWISE)}) {
        Desc per_tensor, per_group;
        per_tensor.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC).i32(FQ_QUANT_DESC_OUTPUTS, which);
        swiglu(per_group);
        per_group.i32(FQ_QUANT_DESC_OUTPUTS, which);
        CHECK(gemm_scale_bytes(grouped, per_tensor, 40, 256, which) == 3 * 4);
        CHECK(gemm_scale_bytes(unset, per_tensor, 40, 256, which) == 3 * 4);
        CHECK(gemm_scale_bytes(single, per_tensor, 40, 256, which) == 4);
        CHECK(gemm_scale_bytes(single, per_tensor, 40, 256, which) == scale_bytes_of(per_tensor, 40, 256, which));
        CHECK(gemm_scale_bytes(grouped, per_group, 40, 256, which) == scale_bytes_of(per_group, 40, 256, which));
        int64_t batch = 0;
        CHECK(fqGroupedGemmGetScaleBufferInfo(grouped.d, per_tensor.d, 40, 256, which, FQ_SCALE_INFO_BATCH, &batch) ==
              FQ_STATUS_SUCCESS);
        CHECK(batch == 3);
    }
    Desc moe;
    moe.i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 3);
    size_t b = 0;
    CHECK(fqGroupedGemmGetScaleBufferSize(grouped.d, moe.d, 40, 256, FQ_OUTPUT_ROWWISE, &b) == FQ_STATUS_INVALID_VALUE);
    CHECK(std::string(fqGetLastErrorMessage()).find("FQ_QUANT_DESC_MOE_LAYOUT") != std::string::npos);
    Desc plain;
    CHECK(fqGroupedGemmGetScaleBufferSize(grouped.d, plain.d, 40, 256, FQ_OUTPUT_ROWWISE, nullptr) ==
          FQ_STATUS_NULL_POINTER);
    CHECK(fqGroupedGemmGetScaleBufferSize(nullptr, plain.d, 40, 256, FQ_OUTPUT_ROWWISE, &b) != FQ_STATUS_SUCCESS);
}

TEST_CASE("grouped GEMM: the epilogue's MoE attributes are refused, naming the attribute") {
    Problem p(61, 32, 128, 128, 1, false, false, false);
    int32_t offs[2] = {0, 32};
    for (int32_t attr : {FQ_QUANT_DESC_MOE_LAYOUT, FQ_QUANT_DESC_MOE_NUM_EXPERTS, FQ_QUANT_DESC_MOE_OFFSETS_POINTER,
                         FQ_QUANT_DESC_MOE_COUNTS_POINTER}) {
        Desc epi;
        swiglu(epi);
        const char* name = "";
        switch (attr) {
            case FQ_QUANT_DESC_MOE_LAYOUT: epi.i32(attr, FQ_MOE_LAYOUT_CONTIGUOUS); name = "FQ_QUANT_DESC_MOE_LAYOUT"; break;
            case FQ_QUANT_DESC_MOE_NUM_EXPERTS: epi.i32(attr, 1); name = "FQ_QUANT_DESC_MOE_NUM_EXPERTS"; break;
            case FQ_QUANT_DESC_MOE_OFFSETS_POINTER: epi.ptr(attr, offs); name = "FQ_QUANT_DESC_MOE_OFFSETS_POINTER"; break;
            default: epi.ptr(attr, offs); name = "FQ_QUANT_DESC_MOE_COUNTS_POINTER"; break;
        }
        const GemmRun r = run_gemm(p, epi, true, false, false, 64);
        CHECK(r.status == FQ_STATUS_INVALID_VALUE);
        CHECK(r.message.find(name) != std::string::npos);
        CHECK(r.c == std::vector<uint16_t>(r.c.size(), kPoison16));
    }
}
