// GPU tests of fqGroupedGemm (docs/gemm.md): the grouped block-scaled FP8 GEMM with the activation +
// quantization epilogue, on the CUDA backend, against
//   - the fp64 reference of C computed here (and the host backend's C, which must be that value rounded):
//       |C_gpu - C_ref| <= 2^-8 |C_ref| + 2^-9 S,   S = |alpha_g| sum_kb sa sb sum_k |a b|
//   - the fused outputs, byte for byte: D = bf16(prob * act(C_gpu)) (common/activate_column.h) and the
//     quantized values and scales (rowwise, columnwise) = the host backend's fqQuantize of the GPU's own C
//     with the same epilogue descriptor under MoE CONTIGUOUS with the GEMM's groups;
//   - cuBLASLt's block-scaled FP8 GEMM run per group (VEC128_32F x BLK128x128_32F, examples/cublaslt_fp8_gemm.h).
// Every output buffer is poisoned (0xAB) with guard bytes on both sides; rows no group owns hold fp8 NaN in A
// (and NaN scales and probabilities) and their outputs must stay poison. Also: refusals (NOT_SUPPORTED), CUDA
// graph replay with new groups and data at the same addresses, A past 2^31 bytes, and no host synchronisation.
// Own executable; exits 77 (CTest: skipped) without a GPU, and on a GPU other than sm_90 after checking that
// the call is refused there.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/activate_column.h"
#include "common/formats.h"
#include "common/moe.h"
#include "cublaslt_fp8_gemm.h"
#include "fq_test_util.h"
#include "gemm_test_data.h"
#include "gpu_buffer.h"

using namespace fqt;

namespace {

int32_t g_arch = 0;
constexpr uint8_t kPoison = 0xAB;
constexpr uint16_t kPoison16 = 0xABAB;
constexpr size_t kGuard = 256;  // guard bytes before and after every output buffer (keeps 256-byte alignment)
const double kRel = std::ldexp(1.0, -8), kAbsS = std::ldexp(1.0, -9);  // the contract's tolerance

// ---- Small RAII helpers ---------------------------------------------------------------------------------

// A device buffer of `bytes` bytes with kGuard poison bytes on either side.
struct Guarded {
    size_t bytes;
    DeviceBuffer<uint8_t> mem;
    explicit Guarded(size_t n) : bytes(n), mem(n + 2 * kGuard) { poison(); }
    void* p() const { return mem.p + kGuard; }
    void poison() { CUDA_OK(cudaMemset(mem.p, kPoison, mem.n)); }
    // Only the guards: CHECKs that they are still poison.
    void check_guards(const char* what) const {
        std::vector<uint8_t> g(kGuard);
        for (size_t at : {size_t(0), kGuard + bytes}) {
            CUDA_OK(cudaMemcpy(g.data(), mem.p + at, kGuard, cudaMemcpyDeviceToHost));
            const size_t bad = size_t(std::count_if(g.begin(), g.end(), [](uint8_t b) { return b != kPoison; }));
            CHECK_MESSAGE(bad == 0, what, ": ", bad, " guard bytes ", at == 0 ? "before" : "after", " the buffer were written");
        }
    }
    // The body; the guards are checked.
    std::vector<uint8_t> download(const char* what) const {
        check_guards(what);
        std::vector<uint8_t> v(bytes);
        CUDA_OK(cudaMemcpy(v.data(), p(), bytes, cudaMemcpyDeviceToHost));
        return v;
    }
};

std::vector<uint16_t> as_u16(const std::vector<uint8_t>& b) {
    std::vector<uint16_t> v(b.size() / 2);
    std::memcpy(v.data(), b.data(), v.size() * 2);
    return v;
}

const std::array<float, 256>& e4m3_values() {
    static const std::array<float, 256> t = [] {
        std::array<float, 256> v{};
        for (uint32_t c = 0; c < 256; ++c) v[c] = fq::decode_minifloat(fq::kE4M3FN, c);
        return v;
    }();
    return t;
}

// ---- Problems --------------------------------------------------------------------------------------------

// One grouped GEMM's operands on the host, the rows each group owns, and the fp64 reference of C.
struct Problem {
    int32_t E = 1;
    int64_t M = 0, N = 0, K = 0, lda = 0;
    bool has_offsets = true, has_counts = false, has_alpha = false;
    int32_t a_layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA;
    std::vector<int32_t> offsets, counts;
    std::vector<float> alpha, prob;
    std::vector<uint8_t> a, b;   // a [M, lda]; b [E*N, K]
    std::vector<float> sa, sb;   // sa[kb * a_ld() + m]; sb[(g * nb + nb_i) * kb + kb_i]
    std::vector<int32_t> owner;  // the group of each row, -1: no group's
    std::vector<double> c, s;    // [M, N] reference C and S (rows the reference was asked for)

    int64_t kbs() const { return (K + 127) / 128; }
    int64_t nbs() const { return (N + 127) / 128; }
    int64_t a_ld() const { return a_layout == FQ_SCALE_LAYOUT_COL_MAJOR ? M : (M + 3) / 4 * 4; }
    int64_t owned_rows() const { return std::count_if(owner.begin(), owner.end(), [](int32_t g) { return g >= 0; }); }
    std::string describe() const {
        std::string t = "E=" + std::to_string(E) + " M=" + std::to_string(M) + " N=" + std::to_string(N) +
                        " K=" + std::to_string(K) + " lda=" + std::to_string(lda) +
                        " a_scales=" + (a_layout == FQ_SCALE_LAYOUT_COL_MAJOR ? "COL_MAJOR" : "COL_MAJOR_TMA") +
                        " alpha=" + std::to_string(int(has_alpha)) + " offsets=";
        if (!has_offsets) t += "NULL";
        for (size_t i = 0; i < offsets.size() && i < 12; ++i) t += (i ? "," : "") + std::to_string(offsets[i]);
        if (offsets.size() > 12) t += ",...";
        if (has_counts) {
            t += " counts=";
            for (size_t i = 0; i < counts.size() && i < 12; ++i) t += (i ? "," : "") + std::to_string(counts[i]);
            if (counts.size() > 12) t += ",...";
        }
        return t;
    }
};

uint8_t random_fp8(std::mt19937& rng) {
    uint8_t b = uint8_t(rng() >> 24);
    if ((b & 0x7F) == 0x7F) b = uint8_t(b - 1);
    return b;
}

float random_scale(std::mt19937& rng) {
    return std::ldexp(std::exp2(std::uniform_real_distribution<float>(-1.5f, 1.5f)(rng)), -9);
}

// Rows [first, first + count) of each group (common/moe.h's clamps) -> owner[].
void compute_owners(Problem& p) {
    p.owner.assign(size_t(p.M), -1);
    if (!p.has_offsets) {
        std::fill(p.owner.begin(), p.owner.end(), 0);
        return;
    }
    for (int32_t g = 0; g < p.E; ++g) {
        const fq::RowRange r = fq::contiguous_rows(p.offsets.data(), p.has_counts ? p.counts.data() : nullptr, g, p.M);
        for (int64_t m = r.first; m < r.first + r.count; ++m) p.owner[size_t(m)] = g;
    }
}

// A, its scales and the probabilities for the owned rows (NaN bytes / NaN elsewhere); B, its scales and the
// alphas unless keep_b (then those of `p` stay).
void fill_data(std::mt19937& rng, Problem& p, bool keep_b = false) {
    compute_owners(p);
    p.a.assign(size_t(p.M * p.lda), 0x7F);
    p.sa.assign(size_t(p.a_ld() * p.kbs()), NAN);
    p.prob.assign(size_t(p.M), NAN);
    std::uniform_real_distribution<float> prob(0.05f, 1.0f);
    for (int64_t m = 0; m < p.M; ++m) {
        if (p.owner[size_t(m)] < 0) continue;
        for (int64_t k = 0; k < p.K; ++k) p.a[size_t(m * p.lda + k)] = random_fp8(rng);
        for (int64_t kb = 0; kb < p.kbs(); ++kb) p.sa[size_t(kb * p.a_ld() + m)] = random_scale(rng);
        p.prob[size_t(m)] = prob(rng);
    }
    if (keep_b) return;
    p.b.resize(size_t(p.E * p.N * p.K));
    for (uint8_t& x : p.b) x = random_fp8(rng);
    p.sb.resize(size_t(p.E * p.nbs() * p.kbs()));
    for (float& x : p.sb) x = random_scale(rng);
    p.alpha.assign(size_t(p.E), 1.0f);
    if (p.has_alpha)
        for (float& x : p.alpha) {
            x = std::uniform_real_distribution<float>(0.25f, 2.0f)(rng);
            if (rng() % 5 == 0) x = -x;
        }
}

// The fp64 reference of C and S for `rows` (each owned): products of two e4m3 values are exact in fp32 and a
// k-block's sum of them exact in fp64, so the only roundings are the scale products.
void compute_reference(Problem& p, std::vector<int64_t> rows) {
    const auto& lut = e4m3_values();
    p.c.assign(size_t(p.M * p.N), 0.0);
    p.s.assign(size_t(p.M * p.N), 0.0);
    std::stable_sort(rows.begin(), rows.end(), [&](int64_t x, int64_t y) { return p.owner[size_t(x)] < p.owner[size_t(y)]; });
    std::vector<float> bdec(size_t(p.N * p.K)), arow(size_t(p.K));
    int32_t decoded = -1;
    for (int64_t m : rows) {
        const int32_t g = p.owner[size_t(m)];
        REQUIRE(g >= 0);
        if (g != decoded) {
            for (size_t i = 0; i < bdec.size(); ++i) bdec[i] = lut[p.b[size_t(g) * bdec.size() + i]];
            decoded = g;
        }
        for (int64_t k = 0; k < p.K; ++k) arow[size_t(k)] = lut[p.a[size_t(m * p.lda + k)]];
        const double alpha = p.alpha.empty() ? 1.0 : double(p.alpha[size_t(g)]);
        for (int64_t n = 0; n < p.N; ++n) {
            const float* brow = &bdec[size_t(n * p.K)];
            double c = 0.0, s = 0.0;
            for (int64_t kb = 0; kb < p.kbs(); ++kb) {
                double acc = 0.0, abs_acc = 0.0;
                for (int64_t k = kb * 128; k < std::min(p.K, kb * 128 + 128); ++k) {
                    const float prod = arow[size_t(k)] * brow[k];
                    acc += double(prod);
                    abs_acc += double(std::fabs(prod));
                }
                const double scale = double(p.sa[size_t(kb * p.a_ld() + m)]) *
                                     double(p.sb[size_t((int64_t(g) * p.nbs() + n / 128) * p.kbs() + kb)]);
                c += scale * acc;
                s += scale * abs_acc;
            }
            p.c[size_t(m * p.N + n)] = alpha * c;
            p.s[size_t(m * p.N + n)] = std::fabs(alpha) * s;
        }
    }
}

std::vector<int64_t> all_owned_rows(const Problem& p) {
    std::vector<int64_t> rows;
    for (int64_t m = 0; m < p.M; ++m)
        if (p.owner[size_t(m)] >= 0) rows.push_back(m);
    return rows;
}

// Groups: some rows before the first and after the last group (or none), the rest cut at random points,
// some groups empty; counts (when asked for) usually within the slot, sometimes past it or negative.
void random_groups(std::mt19937& rng, Problem& p) {
    p.offsets.clear();
    p.counts.clear();
    if (!p.has_offsets) return;
    auto upto = [&](int64_t hi) { return std::uniform_int_distribution<int64_t>(0, std::max<int64_t>(hi, 0))(rng); };
    const int64_t lead = rng() % 2 ? 0 : upto(p.M / 6), tail = rng() % 2 ? 0 : upto((p.M - lead) / 6);
    const int64_t rows = p.M - lead - tail;
    std::vector<int64_t> cuts(size_t(p.E - 1));
    for (int64_t& x : cuts) x = upto(rows);
    std::sort(cuts.begin(), cuts.end());
    std::vector<int64_t> sizes(size_t(p.E));
    for (int32_t g = 0; g < p.E; ++g)
        sizes[size_t(g)] = (g + 1 < p.E ? cuts[size_t(g)] : rows) - (g > 0 ? cuts[size_t(g - 1)] : 0);
    for (int32_t g = 0; g < p.E && p.E > 1; ++g)
        if (rng() % 5 == 0) {  // empty: its rows go to a neighbour
            sizes[size_t(g + 1 < p.E ? g + 1 : g - 1)] += sizes[size_t(g)];
            sizes[size_t(g)] = 0;
        }
    p.offsets.assign(size_t(p.E + 1), int32_t(lead));
    for (int32_t g = 0; g < p.E; ++g) p.offsets[size_t(g + 1)] = p.offsets[size_t(g)] + int32_t(sizes[size_t(g)]);
    if (tail == 0 && rng() % 10 == 0) p.offsets.back() += 7;  // past M: clamped
    if (!p.has_counts) return;
    p.counts.resize(size_t(p.E));
    for (int32_t g = 0; g < p.E; ++g) {
        const int32_t slot = p.offsets[size_t(g + 1)] - p.offsets[size_t(g)];
        const uint32_t r = rng() % 100;
        p.counts[size_t(g)] = r < 30 ? slot : r < 36 ? slot + 5 : r < 40 ? -2 : int32_t(upto(slot));
    }
}

// Groups of the given sizes, back to back from row 0 (no counts): the shapes of the cuBLASLt comparison.
Problem sized_problem(std::mt19937& rng, const std::vector<int64_t>& sizes, int64_t n, int64_t k) {
    Problem p;
    p.E = int32_t(sizes.size());
    p.N = n;
    p.K = k;
    p.lda = k;
    p.offsets.assign(1, 0);
    for (int64_t x : sizes) p.offsets.push_back(p.offsets.back() + int32_t(x));
    p.M = p.offsets.back();
    fill_data(rng, p);
    return p;
}

Problem random_problem(std::mt19937& rng) {
    Problem p;
    const int32_t experts[] = {1, 1, 2, 3, 8, 32};
    const int64_t hs[] = {64, 128, 192, 256, 320, 384, 512};
    const int64_t ks[] = {16, 48, 112, 128, 144, 256, 272, 384, 400, 512, 640, 1024};
    p.E = experts[rng() % 6];
    do {
        p.N = 2 * hs[rng() % 7];
        p.K = ks[rng() % 12];
    } while (p.E * p.N * p.K > (int64_t(1) << 23));
    const int64_t m_max = std::clamp<int64_t>(int64_t(1e8 / double(p.N * p.K)), 8, 1500);
    p.M = std::uniform_int_distribution<int64_t>(p.E >= 8 ? m_max / 3 : 1, m_max)(rng);
    p.lda = rng() % 5 == 0 ? p.K + 16 : p.K;
    p.a_layout = rng() % 2 ? FQ_SCALE_LAYOUT_COL_MAJOR : FQ_SCALE_LAYOUT_COL_MAJOR_TMA;  // any M
    p.has_offsets = !(p.E == 1 && rng() % 5 < 2);
    p.has_counts = p.has_offsets && rng() % 10 < 3;
    p.has_alpha = rng() % 2 == 0;
    random_groups(rng, p);
    fill_data(rng, p);
    return p;
}

// ---- The epilogue of one run --------------------------------------------------------------------------------

// SwiGLU-OAI's alpha, beta, limit (index 0: the defaults, not set).
constexpr float kSwiglu[][3] = {{1.702f, 1.0f, 7.0f}, {-2.0f, 0.5f, 3.0f}, {1.702f, 1.0f, INFINITY}, {20.0f, -1.0f, 0.75f}};

struct Variant {
    int32_t act = FQ_ACTIVATION_SILU, gate = FQ_GATE_LAYOUT_SPLIT, order = FQ_GATE_ORDER_GATE_FIRST, block = 32;
    int32_t rounding = FQ_ROUNDING_FP32, swiglu = 0;
    int32_t scheme = FQ_SCHEME_PER_GROUP, group = 128, out = FQ_TYPE_FP8_E4M3FN, layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA;
    int32_t pow2 = 0, outputs = FQ_OUTPUT_ROWWISE, col_block = 32, transpose = 0;
    bool prob = false, quantize = true, c = false, d = false;
    float qmax = 0.0f;  // FQ_QUANT_DESC_QMAX when > 0: also the codes' saturation bound (docs/spec.md §3.4)

    bool rowwise() const { return quantize && (outputs & FQ_OUTPUT_ROWWISE); }
    bool columnwise() const { return quantize && (outputs & FQ_OUTPUT_COLUMNWISE); }
    static Variant c_only() {
        Variant v;
        v.quantize = false;
        v.c = true;
        return v;
    }
    std::string describe() const {
        char b[320];
        std::snprintf(b, sizeof b,
                      "act=%d gate=%d order=%d block=%d round=%d swiglu=%d scheme=%d G=%d out=%d layout=%d pow2=%d "
                      "quantize=%d outputs=%d Bc=%d T=%d prob=%d C=%d D=%d qmax=%g",
                      act, gate, order, block, rounding, swiglu, scheme, group, out, layout, pow2, int(quantize), outputs,
                      col_block, transpose, int(prob), int(c), int(d), double(qmax));
        return b;
    }
};

int64_t out_cols(const Problem& p, const Variant& v) { return v.gate == FQ_GATE_LAYOUT_NONE ? p.N : p.N / 2; }

Variant random_variant(std::mt19937& rng, const Problem& p) {
    Variant v;
    const int32_t acts[] = {FQ_ACTIVATION_SILU, FQ_ACTIVATION_SILU, FQ_ACTIVATION_GELU_TANH, FQ_ACTIVATION_SWIGLU_OAI};
    v.act = acts[rng() % 4];
    v.gate = int32_t(1 + rng() % 3);
    v.order = int32_t(rng() % 2);
    if (v.gate == FQ_GATE_LAYOUT_BLOCK_INTERLEAVED) {
        do v.block = int32_t(32 << (rng() % 3));
        while (p.N / 2 % v.block != 0);
    }
    const uint32_t r = rng() % 10;
    v.rounding = r < 6 ? FQ_ROUNDING_FP32 : r < 8 ? FQ_ROUNDING_ROUND_PRODUCT : FQ_ROUNDING_ROUND_BOTH;
    if (v.act == FQ_ACTIVATION_SWIGLU_OAI) v.swiglu = int32_t(rng() % 4);
    v.group = int32_t(32 << (rng() % 3));
    v.layout = int32_t(rng() % 3);  // ROW_MAJOR, COL_MAJOR, COL_MAJOR_TMA
    v.pow2 = rng() % 10 < 3;
    const uint32_t o = rng() % 10;
    v.out = o < 6 ? FQ_TYPE_FP8_E4M3FN : o < 8 ? FQ_TYPE_FP8_E5M2 : FQ_TYPE_INT8;
    v.prob = rng() % 2;
    v.quantize = rng() % 100 < 85;
    const uint32_t w = rng() % 10;
    v.outputs = w < 5 ? FQ_OUTPUT_ROWWISE : w < 7 ? FQ_OUTPUT_COLUMNWISE : FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE;
    v.col_block = rng() % 2 ? 128 : 32;
    v.transpose = int32_t(rng() % 2);
    v.c = rng() % 10 < 4;
    v.d = rng() % 10 < 4;
    if (!v.quantize && !v.c && !v.d) (rng() % 2 ? v.c : v.d) = true;
    return v;
}

// The kernel's lean epilogue: rowwise fp8 codes alone (e4m3 or e5m2), `act` (SiLU or SwiGLU-OAI), fp32 rounding;
// the rest random.
Variant lean_variant(std::mt19937& rng, const Problem& p, int32_t act) {
    Variant v = random_variant(rng, p);
    v.act = act;
    v.rounding = FQ_ROUNDING_FP32;
    v.out = rng() % 2 ? FQ_TYPE_FP8_E4M3FN : FQ_TYPE_FP8_E5M2;
    v.quantize = true;
    v.outputs = FQ_OUTPUT_ROWWISE;
    v.c = v.d = false;
    return v;
}

// Pointer attributes are set only when given (NULL: a size query).
void configure_epilogue(Desc& d, const Variant& v, const float* prob, void* col_out, void* col_scales) {
    d.i32(FQ_QUANT_DESC_ACTIVATION, v.act).i32(FQ_QUANT_DESC_GATE_LAYOUT, v.gate).i32(FQ_QUANT_DESC_GATE_ORDER, v.order)
        .i32(FQ_QUANT_DESC_INTERMEDIATE_ROUNDING, v.rounding).i32(FQ_QUANT_DESC_SCHEME, v.scheme)
        .i32(FQ_QUANT_DESC_OUTPUT_TYPE, v.out).i32(FQ_QUANT_DESC_SCALE_LAYOUT, v.layout)
        .i32(FQ_QUANT_DESC_SCALE_ROUNDING, v.pow2);
    if (v.scheme == FQ_SCHEME_PER_GROUP) d.i32(FQ_QUANT_DESC_GROUP_SIZE, v.group);
    if (v.scheme == FQ_SCHEME_MXFP8) d.i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
    if (v.gate == FQ_GATE_LAYOUT_BLOCK_INTERLEAVED) d.i32(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, v.block);
    if (v.act == FQ_ACTIVATION_SWIGLU_OAI && v.swiglu)
        d.f32(FQ_QUANT_DESC_SWIGLU_ALPHA, kSwiglu[v.swiglu][0]).f32(FQ_QUANT_DESC_SWIGLU_BETA, kSwiglu[v.swiglu][1])
            .f32(FQ_QUANT_DESC_SWIGLU_LIMIT, kSwiglu[v.swiglu][2]);
    if (v.prob && prob) d.ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob);
    if (v.qmax > 0.0f) d.f32(FQ_QUANT_DESC_QMAX, v.qmax);
    if (v.columnwise()) {
        d.i32(FQ_QUANT_DESC_OUTPUTS, v.outputs).i32(FQ_QUANT_DESC_COLUMNWISE_BLOCK, v.col_block)
            .i32(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, v.transpose);
        if (col_out) d.ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, col_out);
        if (col_scales) d.ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, col_scales);
    }
}

struct Sizes {
    size_t values = 0, scales = 0, col_scales = 0;
};

Sizes output_sizes(const Problem& p, const Variant& v) {
    Sizes s;
    s.values = size_t(p.M * out_cols(p, v));
    Desc d;
    configure_epilogue(d, v, nullptr, nullptr, nullptr);
    if (v.rowwise())
        REQUIRE_MESSAGE(fqGetScaleBufferSize(d.d, p.M, out_cols(p, v), FQ_OUTPUT_ROWWISE, &s.scales) == 0, fqGetLastErrorMessage());
    if (v.columnwise())
        REQUIRE_MESSAGE(fqGetScaleBufferSize(d.d, p.M, out_cols(p, v), FQ_OUTPUT_COLUMNWISE, &s.col_scales) == 0,
                        fqGetLastErrorMessage());
    return s;
}

// ---- Running a GEMM -------------------------------------------------------------------------------------

struct Operands {
    const void *a, *b;
    const float *sa, *sb, *alpha, *prob;
    const int32_t *offsets, *counts;
};
struct OutPtrs {
    void *c = nullptr, *d = nullptr, *out = nullptr, *scales = nullptr, *col_out = nullptr, *col_scales = nullptr;
    size_t scale_bytes = 0;
};

Operands host_operands(const Problem& p) {
    return {p.a.data(), p.b.data(), p.sa.data(), p.sb.data(), p.alpha.data(), p.prob.data(),
            p.has_offsets ? p.offsets.data() : nullptr, p.has_counts ? p.counts.data() : nullptr};
}

template <class T>
void put(DeviceBuffer<T>& d, const std::vector<T>& v) {
    if (!v.empty()) d.upload(v);
}

// The problem on the device (uploaded again in place by upload()).
struct DeviceProblem {
    DeviceBuffer<uint8_t> a, b;
    DeviceBuffer<float> sa, sb, alpha, prob;
    DeviceBuffer<int32_t> offsets, counts;
    explicit DeviceProblem(const Problem& p)
        : a(p.a.size()), b(p.b.size()), sa(p.sa.size()), sb(p.sb.size()), alpha(p.alpha.size()), prob(p.prob.size()),
          offsets(p.offsets.size()), counts(p.counts.size()) {
        upload(p);
    }
    void upload(const Problem& p) {
        REQUIRE(p.a.size() == a.n);
        REQUIRE(p.offsets.size() == offsets.n);
        REQUIRE(p.counts.size() == counts.n);
        put(a, p.a), put(b, p.b), put(sa, p.sa), put(sb, p.sb), put(alpha, p.alpha), put(prob, p.prob);
        put(offsets, p.offsets), put(counts, p.counts);
    }
    Operands operands(const Problem& p) const {
        return {a.p, b.p, sa.p, sb.p, p.has_alpha ? alpha.p : nullptr, prob.p, p.has_offsets ? offsets.p : nullptr,
                p.has_counts ? counts.p : nullptr};
    }
};

// One fqGroupedGemm call of `p` with the epilogue `v` (descriptors built here and destroyed after the call).
// fqGetLastErrorMessage() of call_gemm's fqGroupedGemm, kept before the descriptors' destructors (successful
// calls) clear the library's copy.
thread_local std::string last_gemm_message;

fqStatus_t call_gemm(fqHandle_t h, const Problem& p, const Variant& v, const Operands& in, const OutPtrs& o,
                     cudaStream_t stream) {
    GemmDesc gd;
    gd.i32(FQ_GEMM_DESC_NUM_GROUPS, p.E).i32(FQ_GEMM_DESC_A_SCALE_LAYOUT, p.a_layout)
        .i32(FQ_GEMM_DESC_QUANTIZE, v.quantize ? 1 : 0);
    if (in.offsets) gd.ptr(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, in.offsets);
    if (in.counts) gd.ptr(FQ_GEMM_DESC_GROUP_COUNTS_POINTER, in.counts);
    if (p.has_alpha) gd.ptr(FQ_GEMM_DESC_ALPHA_POINTER, in.alpha);
    if (o.c) gd.ptr(FQ_GEMM_DESC_C_OUTPUT_POINTER, o.c);
    if (o.d) gd.ptr(FQ_GEMM_DESC_D_OUTPUT_POINTER, o.d);
    Desc epi;
    configure_epilogue(epi, v, in.prob, o.col_out, o.col_scales);
    Layout la(FQ_TYPE_FP8_E4M3FN, p.M, p.K, p.lda), lb(FQ_TYPE_FP8_E4M3FN, p.E * p.N, p.K, p.K);
    std::unique_ptr<Layout> lo;
    if (v.quantize) lo = std::make_unique<Layout>(v.out, p.M, out_cols(p, v), out_cols(p, v));
    const fqStatus_t s = fqGroupedGemm(h, gd.d, epi.d, la.l, in.a, in.sa, lb.l, in.b, in.sb, lo ? lo->l : nullptr, o.out,
                                       o.scales, o.scale_bytes, reinterpret_cast<fqStream_t>(stream));
    last_gemm_message = fqGetLastErrorMessage();
    return s;
}

// The outputs of one GPU run: poisoned, guarded device buffers for what the variant writes.
struct GpuOutputs {
    std::unique_ptr<Guarded> c, d, out, scales, col_out, col_scales;
    GpuOutputs(const Problem& p, const Variant& v) {
        const int64_t h = out_cols(p, v);
        if (v.c) c = std::make_unique<Guarded>(size_t(p.M * p.N * 2));
        if (v.d) d = std::make_unique<Guarded>(size_t(p.M * h * 2));
        const Sizes s = output_sizes(p, v);
        if (v.rowwise()) out = std::make_unique<Guarded>(s.values), scales = std::make_unique<Guarded>(s.scales);
        if (v.columnwise()) col_out = std::make_unique<Guarded>(s.values), col_scales = std::make_unique<Guarded>(s.col_scales);
    }
    OutPtrs ptrs() const {
        OutPtrs o;
        o.c = c ? c->p() : nullptr;
        o.d = d ? d->p() : nullptr;
        o.out = out ? out->p() : nullptr;
        o.scales = scales ? scales->p() : nullptr;
        o.scale_bytes = scales ? scales->bytes : 0;
        o.col_out = col_out ? col_out->p() : nullptr;
        o.col_scales = col_scales ? col_scales->p() : nullptr;
        return o;
    }
    std::array<Guarded*, 6> buffers() const { return {c.get(), d.get(), out.get(), scales.get(), col_out.get(), col_scales.get()}; }
    void poison() {
        for (Guarded* g : buffers())
            if (g) g->poison();
    }
    // After a refused call: every buffer still holds the poison.
    void check_untouched() const {
        for (const Guarded* g : buffers()) {
            if (!g) continue;
            const std::vector<uint8_t> b = g->download("a refused call's output");
            CHECK_MESSAGE(std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == kPoison; }), "a refused call wrote output");
        }
    }
};

// ---- Checks ---------------------------------------------------------------------------------------------

struct Stats {
    int64_t runs = 0, c_values = 0, d_values = 0, out_bytes = 0, scale_bytes = 0;
    double worst = 0.0;  // largest |C_gpu - C_ref| / tolerance seen
};

// C (bf16 [M, N]) against the reference, owned rows within `rel` |C| + `abs_s` S (the reference must hold
// them: compute_reference), unowned rows still poison.
void check_c(const Problem& p, const std::vector<uint16_t>& c, const char* what, double rel, double abs_s, Stats& st) {
    REQUIRE(c.size() == size_t(p.M * p.N));
    int64_t bad = 0, touched = 0, first_bad = -1, first_touched = -1;
    double worst = 0.0;
    for (int64_t m = 0; m < p.M; ++m) {
        const bool owned = p.owner[size_t(m)] >= 0;
        for (int64_t n = 0; n < p.N; ++n) {
            const size_t i = size_t(m * p.N + n);
            if (!owned) {
                if (c[i] != kPoison16 && touched++ == 0) first_touched = int64_t(i);
                continue;
            }
            const double got = fq::bf16_to_float(c[i]), want = p.c[i];
            const double tol = rel * std::fabs(want) + abs_s * p.s[i];
            const double err = std::fabs(got - want);
            const double ratio = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0.0);
            if (!(ratio <= 1.0) && bad++ == 0) first_bad = int64_t(i);
            if (std::isnan(ratio)) worst = INFINITY;
            else worst = std::max(worst, ratio);
        }
    }
    st.c_values += p.owned_rows() * p.N;
    st.worst = std::max(st.worst, worst);
    std::string msg;
    if (first_bad >= 0) {
        const size_t i = size_t(first_bad);
        char b[256];
        std::snprintf(b, sizeof b, "first at row %lld col %lld (group %d): got %.8g, reference %.8g, S %.6g; worst err/tol %.3g",
                      (long long)(first_bad / p.N), (long long)(first_bad % p.N), p.owner[i / size_t(p.N)],
                      double(fq::bf16_to_float(c[i])), p.c[i], p.s[i], worst);
        msg = b;
    }
    CHECK_MESSAGE(bad == 0, what, ": ", bad, " values outside the tolerance; ", msg);
    CHECK_MESSAGE(touched == 0, what, ": ", touched, " values written in rows no group owns; first at row ",
                  first_touched / std::max<int64_t>(p.N, 1));
}

// "N bytes differ, first at i (row r): got g, want w" or "".
std::string diff(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, int64_t row_bytes) {
    if (got.size() != want.size()) return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && bad++ == 0) first = i;
    if (bad == 0) return "";
    char b[200];
    std::snprintf(b, sizeof b, "%zu bytes differ; first at byte %zu (row %lld of %lld bytes): got 0x%02X want 0x%02X", bad,
                  first, (long long)(int64_t(first) / std::max<int64_t>(row_bytes, 1)), (long long)row_bytes, got[first],
                  want[first]);
    return b;
}

// D = bf16(prob * act(C)) for owned rows, poison elsewhere.
void check_d(const Problem& p, const Variant& v, const std::vector<uint16_t>& c, const std::vector<uint16_t>& d,
             Stats& st) {
    const int64_t h = out_cols(p, v);
    fq::ActivationParams ap;
    ap.act = fq::Act(v.act);
    ap.gate = fq::GateLayout(v.gate);
    ap.order = fq::GateOrder(v.order);
    ap.cols = h;
    ap.gate_block = v.block;
    ap.rounding = fq::Rounding(v.rounding);
    ap.in = fq::InType::Bf16;
    ap.swiglu = fq::SwigluParams{kSwiglu[v.swiglu][0], kSwiglu[v.swiglu][1], kSwiglu[v.swiglu][2]};
    std::vector<uint16_t> want(size_t(p.M * h), kPoison16);
    for (int64_t m = 0; m < p.M; ++m) {
        if (p.owner[size_t(m)] < 0) continue;
        for (int64_t j = 0; j < h; ++j) {
            const float y = fq::activate_column(ap, &c[size_t(m * p.N)], j);
            want[size_t(m * h + j)] = fq::float_to_bf16(v.prob ? p.prob[size_t(m)] * y : y);
        }
    }
    std::vector<uint8_t> g(d.size() * 2), w(want.size() * 2);
    std::memcpy(g.data(), d.data(), g.size());
    std::memcpy(w.data(), want.data(), w.size());
    const std::string msg = diff(g, w, h * 2);
    CHECK_MESSAGE(msg.empty(), "D (bf16 prob * act(C)): ", msg);
    st.d_values += p.owned_rows() * h;
}

struct Quantized {
    std::vector<uint8_t> out, scales, col_out, col_scales;
};

// The host backend's fqQuantize of `c` (bf16 [M, N]) with the epilogue `v` under MoE CONTIGUOUS with the
// problem's groups (none when the GEMM has no offsets), into poisoned buffers.
Quantized host_quantize(const Problem& p, const Variant& v, const std::vector<uint16_t>& c) {
    const Sizes s = output_sizes(p, v);
    Quantized q;
    if (v.rowwise()) q.out.assign(s.values, kPoison), q.scales.assign(s.scales, kPoison);
    if (v.columnwise()) q.col_out.assign(s.values, kPoison), q.col_scales.assign(s.col_scales, kPoison);
    Desc d;
    configure_epilogue(d, v, p.prob.data(), v.columnwise() ? q.col_out.data() : nullptr,
                       v.columnwise() ? q.col_scales.data() : nullptr);
    if (p.has_offsets) {
        d.i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, p.E)
            .ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, p.offsets.data());
        if (p.has_counts) d.ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, p.counts.data());
    }
    size_t moe_scales = 0;
    if (v.rowwise()) {
        REQUIRE(fqGetScaleBufferSize(d.d, p.M, out_cols(p, v), FQ_OUTPUT_ROWWISE, &moe_scales) == 0);
        REQUIRE_MESSAGE(moe_scales == s.scales, "the MoE CONTIGUOUS scale buffer differs in size from the GEMM's");
    }
    Handle h;
    Layout li(FQ_TYPE_BF16, p.M, p.N, p.N), lo(v.out, p.M, out_cols(p, v), out_cols(p, v));
    const fqStatus_t st = fqQuantize(h.h, d.d, li.l, c.data(), lo.l, v.rowwise() ? q.out.data() : nullptr,
                                     v.rowwise() ? q.scales.data() : nullptr, q.scales.size(), nullptr, 0, nullptr);
    REQUIRE_MESSAGE(st == FQ_STATUS_SUCCESS, "host fqQuantize of C: ", fqGetLastErrorMessage());
    return q;
}

// The quantized outputs (already downloaded) against host_quantize of `c`.
void check_quantized(const Problem& p, const Variant& v, const std::vector<uint16_t>& c, const Quantized& got,
                     const char* c_source, Stats& st) {
    const Quantized want = host_quantize(p, v, c);
    const int64_t h = out_cols(p, v);
    if (v.rowwise()) {
        const std::string m1 = diff(got.out, want.out, h), m2 = diff(got.scales, want.scales, 0);
        CHECK_MESSAGE(m1.empty(), "rowwise values vs fqQuantize of ", c_source, ": ", m1);
        CHECK_MESSAGE(m2.empty(), "rowwise scales vs fqQuantize of ", c_source, ": ", m2);
        st.out_bytes += int64_t(got.out.size());
        st.scale_bytes += int64_t(got.scales.size());
    }
    if (v.columnwise()) {
        const std::string m1 = diff(got.col_out, want.col_out, v.transpose ? p.M : h), m2 = diff(got.col_scales, want.col_scales, 0);
        CHECK_MESSAGE(m1.empty(), "columnwise values vs fqQuantize of ", c_source, ": ", m1);
        CHECK_MESSAGE(m2.empty(), "columnwise scales vs fqQuantize of ", c_source, ": ", m2);
        st.out_bytes += int64_t(got.col_out.size());
        st.scale_bytes += int64_t(got.col_scales.size());
    }
}

// Every output of a GPU run: C against the reference, and equal to `base_c` (the C-only run's of the same
// problem) where given: C does not depend on the outputs asked for, though they choose the kernel (MoE: segments
// without columnwise outputs, tiles with them; one group: split K or row pairs by size), as each promotes the same
// K blocks of a row in the same order; D and the quantized outputs against the GPU's C (this run's, or base_c
// when this run wrote none).
void check_outputs(const Problem& p, const Variant& v, const GpuOutputs& o, const std::vector<uint16_t>* base_c, Stats& st) {
    CAPTURE(v.describe());
    std::vector<uint16_t> c;
    const char* source = "this run's C";
    if (o.c) {
        c = as_u16(o.c->download("C"));
        check_c(p, c, "C", kRel, kAbsS, st);
        if (base_c) CHECK_MESSAGE(c == *base_c, "C differs from the C-only run's");
    } else {
        REQUIRE(base_c);
        c = *base_c;
        source = "the C of the C-only run (this run wrote none)";
    }
    if (o.d) check_d(p, v, c, as_u16(o.d->download("D")), st);
    if (v.quantize) {
        Quantized got;
        if (o.out) got.out = o.out->download("output"), got.scales = o.scales->download("scales");
        if (o.col_out) got.col_out = o.col_out->download("columnwise output"), got.col_scales = o.col_scales->download("columnwise scales");
        check_quantized(p, v, c, got, source, st);
    }
    ++st.runs;
}

// The host backend's C of `p` (the reference the library documents), into a poisoned [M, N].
std::vector<uint16_t> host_gemm_c(const Problem& p) {
    Handle host;
    std::vector<uint16_t> c(size_t(p.M * p.N), kPoison16);
    OutPtrs o;
    o.c = c.data();
    const fqStatus_t s = call_gemm(host.h, p, Variant::c_only(), host_operands(p), o, nullptr);
    REQUIRE_MESSAGE(s == FQ_STATUS_SUCCESS, "host backend: ", fqGetLastErrorMessage());
    return c;
}

void run_and_check(fqHandle_t gpu, const Problem& p, const DeviceProblem& dp, const Variant& v,
                   const std::vector<uint16_t>* base_c, Stats& st) {
    GpuOutputs o(p, v);
    const fqStatus_t s = call_gemm(gpu, p, v, dp.operands(p), o.ptrs(), nullptr);
    REQUIRE_MESSAGE(s == FQ_STATUS_SUCCESS, v.describe(), ": ", fqGetLastErrorMessage());
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaGetLastError());
    check_outputs(p, v, o, base_c, st);
}

// C of a C-only run: what every other set of outputs of the same problem must quantize.
std::vector<uint16_t> c_only_run(fqHandle_t gpu, const Problem& p, const DeviceProblem& dp) {
    GpuOutputs base(p, Variant::c_only());
    REQUIRE_MESSAGE(call_gemm(gpu, p, Variant::c_only(), dp.operands(p), base.ptrs(), nullptr) == FQ_STATUS_SUCCESS,
                    last_gemm_message);
    CUDA_OK(cudaDeviceSynchronize());
    return as_u16(base.c->download("C (C-only run)"));
}

std::string tally(const std::map<std::string, int>& t) {
    std::string s;
    for (const auto& [k, n] : t) s += (s.empty() ? "" : ", ") + k + " " + std::to_string(n);
    return s;
}

}  // namespace

// ---- (a) The random matrix ----------------------------------------------------------------------------------

TEST_CASE("random grouped GEMMs: C within the tolerance of the fp64 reference, D and the quantized outputs byte for "
          "byte those of the GPU's C, rows no group owns untouched") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    int problems = 60;
    if (const char* e = std::getenv("FQ_GEMM_TEST_CASES")) problems = std::max(1, std::atoi(e));
    std::mt19937 rng(20260611);
    Stats st;
    std::map<std::string, int> tallies;
    int64_t host_values = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < problems; ++i) {
        Problem p = random_problem(rng);
        if (i == 0) {  // DeepSeek-V3-like first: 8 groups, one empty, offsets off the 128 grid
            p = sized_problem(rng, {70, 0, 129, 200, 1, 64, 300, 33}, 512, 896);
            p.has_alpha = true;
            p.alpha = {1.0f, 0.5f, 2.0f, 1.0f, -1.0f, 0.75f, 1.0f, 1.25f};
        }
        CAPTURE(i);
        CAPTURE(p.describe());
        compute_reference(p, all_owned_rows(p));
        const DeviceProblem dp(p);
        // The host backend's C must be the reference rounded to bf16.
        const std::vector<uint16_t> host_c = host_gemm_c(p);
        Stats host_st;
        check_c(p, host_c, "host backend C", kRel, 0.0, host_st);
        host_values += host_st.c_values;
        // C alone on the GPU, then random epilogues.
        const std::vector<uint16_t> base_c = c_only_run(gpu.h, p, dp);
        check_c(p, base_c, "C (C-only run)", kRel, kAbsS, st);
        ++st.runs;
        std::vector<Variant> variants;
        if (i == 0) {  // the configuration the benchmark measures, with C and D too
            Variant v;
            v.prob = v.c = v.d = true;
            variants.push_back(v);
        }
        for (int j = 0; j < 3; ++j) variants.push_back(random_variant(rng, p));
        // The kernel's lean epilogue (rowwise fp8 codes alone, SiLU or SwiGLU-OAI, fp32 rounding): every problem,
        // with the rest random, so its values take the fast path or fall back to the general one.
        variants.push_back(lean_variant(rng, p, i % 2 ? FQ_ACTIVATION_SWIGLU_OAI : FQ_ACTIVATION_SILU));
        // A qmax override bounds the codes (docs/spec.md §3.4), which the lean epilogue's hardware conversion does
        // not know: a group's amax lands on qmax, and 202 (e4m3) rounds to 208, 53500 (e5m2) to 57344, past it.
        if (i % 3 == 0) {
            Variant v = lean_variant(rng, p, FQ_ACTIVATION_SILU);
            v.qmax = v.out == FQ_TYPE_FP8_E4M3FN ? 202.0f : 53500.0f;
            variants.push_back(v);
            Variant w = random_variant(rng, p);
            w.qmax = w.out == FQ_TYPE_INT8 ? 100.4f : 202.0f;
            variants.push_back(w);
        }
        for (const Variant& v : variants) {
            run_and_check(gpu.h, p, dp, v, &base_c, st);
            const char* gates[] = {"none", "split", "interleaved", "block"};
            tallies[std::string("gate ") + gates[v.gate]]++;
            tallies[v.quantize ? (v.outputs == 1 ? "rowwise" : v.outputs == 2 ? "columnwise" : "both") : "no quantize"]++;
            tallies["act " + std::to_string(v.act)]++;
        }
        tallies["E=" + std::to_string(p.E)]++;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MESSAGE("random matrix: ", problems, " problems, ", st.runs, " GPU runs; compared ", st.c_values, " C values (worst "
            "error/tolerance ", st.worst, "), ", host_values, " host-backend C values, ", st.d_values, " D values, ",
            st.out_bytes, " quantized value bytes, ", st.scale_bytes, " scale bytes; ", secs, " s");
    MESSAGE("variants: ", tally(tallies));
}

// ---- (b) cuBLASLt per group -------------------------------------------------------------------------------------

TEST_CASE("C agrees with cuBLASLt's block-scaled FP8 GEMM (VEC128_32F x BLK128x128_32F) run group by group") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    cublasLtHandle_t lt;
    REQUIRE(cublasLtCreate(&lt) == CUBLAS_STATUS_SUCCESS);
    std::mt19937 rng(77);
    struct Shape {
        std::vector<int64_t> sizes;
        int64_t n, k;
    };
    const Shape shapes[] = {{{256}, 4096, 7168}, {{128, 0, 48, 256}, 512, 1024}, {{64, 16, 0, 192}, 4096, 7168}, {{512}, 512, 1024}};
    DeviceBuffer<uint8_t> ws(size_t(32) << 20);
    int compared_groups = 0;
    for (const Shape& sh : shapes) {
        Problem p = sized_problem(rng, sh.sizes, sh.n, sh.k);
        CAPTURE(p.describe());
        // The reference on a few rows of each group (the whole of C is 2 * M * N * K on the host).
        std::vector<int64_t> sample;
        for (int32_t g = 0; g < p.E; ++g) {
            const int64_t lo = p.offsets[size_t(g)], hi = p.offsets[size_t(g + 1)];
            for (int64_t m : {lo, lo + 1, (lo + hi) / 2, hi - 1})
                if (m >= lo && m < hi && std::find(sample.begin(), sample.end(), m) == sample.end()) sample.push_back(m);
        }
        compute_reference(p, sample);
        const DeviceProblem dp(p);
        GpuOutputs o(p, Variant::c_only());
        REQUIRE_MESSAGE(call_gemm(gpu.h, p, Variant::c_only(), dp.operands(p), o.ptrs(), nullptr) == FQ_STATUS_SUCCESS,
                        fqGetLastErrorMessage());
        CUDA_OK(cudaDeviceSynchronize());
        const std::vector<uint16_t> ours = as_u16(o.c->download("C"));

        std::vector<uint16_t> theirs(ours.size(), kPoison16);
        std::vector<bool> done(size_t(p.E), false);
        for (int32_t g = 0; g < p.E; ++g) {
            const int64_t lo = p.offsets[size_t(g)], mg = p.offsets[size_t(g + 1)] - lo;
            if (mg == 0) continue;
            // A's scales of the group as cuBLASLt's VEC128_32F reads them: column-major, ld M_g (a multiple of 4).
            std::vector<float> sa_g(size_t(mg * p.kbs()));
            for (int64_t kb = 0; kb < p.kbs(); ++kb)
                for (int64_t i = 0; i < mg; ++i) sa_g[size_t(kb * mg + i)] = p.sa[size_t(kb * p.a_ld() + lo + i)];
            DeviceBuffer<float> d_sa(sa_g.size()), d_sb(lt_blk128_scale_floats(p.N, p.K));
            d_sa.upload(sa_g);
            CUDA_OK(lt_pad_blk128_scales(d_sb.p, dp.sb.p + size_t(g) * size_t(p.nbs() * p.kbs()), p.N, p.K, nullptr));
            const uint8_t* a_g = dp.a.p + size_t(lo * p.lda);
            const uint8_t* b_g = dp.b.p + size_t(g) * size_t(p.N * p.K);
            const int32_t vec = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, blk = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
            DeviceBuffer<uint16_t> d(size_t(mg * p.N));
            bool weight_as_a = true;
            cublasStatus_t s;
            {
                Fp8BlockScaledGemm gemm;  // weight as A: D column-major N x M_g = row-major [M_g, N]
                s = gemm.init(lt, p.N, mg, p.K, blk, vec, ws.n);
                if (s == CUBLAS_STATUS_SUCCESS) s = gemm.run(b_g, d_sb.p, a_g, d_sa.p, d.p, ws.p, nullptr);
            }
            if (s != CUBLAS_STATUS_SUCCESS) {
                weight_as_a = false;
                Fp8BlockScaledGemm gemm;  // activation as A: D column-major M_g x N
                s = gemm.init(lt, mg, p.N, p.K, vec, blk, ws.n);
                if (s == CUBLAS_STATUS_SUCCESS) s = gemm.run(a_g, d_sa.p, b_g, d_sb.p, d.p, ws.p, nullptr);
            }
            if (s != CUBLAS_STATUS_SUCCESS) {
                MESSAGE("cuBLASLt ran no block-scaled FP8 GEMM for group ", g, " (", mg, " x ", p.N, " x ", p.K, "): ",
                        lt_status_name(s));
                continue;
            }
            CUDA_OK(cudaDeviceSynchronize());
            const std::vector<uint16_t> dg = d.download();
            for (int64_t i = 0; i < mg; ++i)
                for (int64_t n = 0; n < p.N; ++n)
                    theirs[size_t((lo + i) * p.N + n)] = dg[size_t(weight_as_a ? i * p.N + n : n * mg + i)];
            done[size_t(g)] = true;
            ++compared_groups;
        }
        // Everywhere: relative Frobenius distance and the largest relative difference (of |C| >= 2^-6 max|C|).
        double num = 0, den = 0, cmax = 0, worst_rel = 0;
        for (int64_t m = 0; m < p.M; ++m)
            if (done[size_t(p.owner[size_t(m)])])
                for (int64_t n = 0; n < p.N; ++n) cmax = std::max(cmax, double(std::fabs(fq::bf16_to_float(theirs[size_t(m * p.N + n)]))));
        for (int64_t m = 0; m < p.M; ++m) {
            if (!done[size_t(p.owner[size_t(m)])]) continue;
            for (int64_t n = 0; n < p.N; ++n) {
                const double a = fq::bf16_to_float(ours[size_t(m * p.N + n)]), b = fq::bf16_to_float(theirs[size_t(m * p.N + n)]);
                num += (a - b) * (a - b);
                den += b * b;
                if (std::fabs(b) >= cmax / 64) worst_rel = std::max(worst_rel, std::fabs(a - b) / std::fabs(b));
            }
        }
        const double frob = den > 0 ? std::sqrt(num / den) : 0.0;
        // On the sampled rows: |ours - cuBLASLt| <= 2^-7 |C_ref| + 2^-8 S (each within 2^-8 |C| + 2^-9 S of C_ref),
        // and each against the reference.
        int64_t bad = 0, checked = 0;
        double worst_pair = 0, worst_ours = 0, worst_lt = 0;
        for (int64_t m : sample) {
            if (!done[size_t(p.owner[size_t(m)])]) continue;
            for (int64_t n = 0; n < p.N; ++n) {
                const size_t i = size_t(m * p.N + n);
                const double a = fq::bf16_to_float(ours[i]), b = fq::bf16_to_float(theirs[i]), r = p.c[i], s = p.s[i];
                const double tol = kRel * std::fabs(r) + kAbsS * s;
                worst_pair = std::max(worst_pair, std::fabs(a - b) / (2 * tol));
                worst_ours = std::max(worst_ours, std::fabs(a - r) / tol);
                worst_lt = std::max(worst_lt, std::fabs(b - r) / tol);
                bad += !(std::fabs(a - b) <= 2 * tol);
                ++checked;
            }
        }
        MESSAGE(p.describe(), ": fq vs cuBLASLt relative Frobenius ", frob, ", largest relative difference ", worst_rel,
                "; on ", checked, " sampled values error/tolerance: fq vs cuBLASLt ", worst_pair, ", fq vs fp64 ", worst_ours,
                ", cuBLASLt vs fp64 ", worst_lt);
        CHECK(bad == 0);
        CHECK(worst_ours <= 1.0);
        CHECK(frob < std::ldexp(1.0, -7));
    }
    CHECK_MESSAGE(compared_groups > 0, "cuBLASLt ran none of the groups");
    cublasLtDestroy(lt);
}

// ---- (c) Refusals -----------------------------------------------------------------------------------------------

TEST_CASE("CUDA refuses ungated activations, H % 64 != 0 and MXFP8 (NOT_SUPPORTED, a message, nothing written); the "
          "host backend runs them") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(5);
    struct Refused {
        const char* what;
        int64_t n;
        Variant v;
    };
    Variant ungated, odd_h, mxfp8, identity;
    ungated.gate = FQ_GATE_LAYOUT_NONE;
    identity.act = FQ_ACTIVATION_IDENTITY, identity.gate = FQ_GATE_LAYOUT_NONE;
    mxfp8.scheme = FQ_SCHEME_MXFP8, mxfp8.layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    for (Variant* v : {&ungated, &odd_h, &mxfp8, &identity}) v->c = v->d = v->prob = true;
    const Refused cases[] = {{"SiLU not gated", 256, ungated}, {"identity not gated", 256, identity},
                             {"H = 96 (not a multiple of 64)", 192, odd_h}, {"MXFP8", 512, mxfp8}};
    for (const Refused& r : cases) {
        CAPTURE(r.what);
        Problem p = sized_problem(rng, {50, 0, 77, 73}, r.n, 256);
        compute_reference(p, all_owned_rows(p));
        const DeviceProblem dp(p);
        GpuOutputs o(p, r.v);
        const fqStatus_t s = call_gemm(gpu.h, p, r.v, dp.operands(p), o.ptrs(), nullptr);
        const std::string msg = last_gemm_message;
        CHECK_MESSAGE(s == FQ_STATUS_NOT_SUPPORTED, fqGetStatusString(s), ": ", msg);
        CHECK(!msg.empty());
        MESSAGE(r.what, ": ", msg);
        CUDA_OK(cudaDeviceSynchronize());
        o.check_untouched();
        // The host backend runs it: C the reference rounded, D and the quantized outputs those of its C.
        std::vector<uint8_t> c(size_t(p.M * p.N * 2), kPoison), d(size_t(p.M * out_cols(p, r.v) * 2), kPoison);
        const Sizes sz = output_sizes(p, r.v);
        Quantized got;
        got.out.assign(sz.values, kPoison);
        got.scales.assign(sz.scales, kPoison);
        OutPtrs ho;
        ho.c = c.data(), ho.d = d.data(), ho.out = got.out.data(), ho.scales = got.scales.data(), ho.scale_bytes = sz.scales;
        const fqStatus_t hs = call_gemm(Handle().h, p, r.v, host_operands(p), ho, nullptr);
        REQUIRE_MESSAGE(hs == FQ_STATUS_SUCCESS, "host backend: ", fqGetLastErrorMessage());
        Stats st;
        const std::vector<uint16_t> c16 = as_u16(c);
        check_c(p, c16, "host backend C", kRel, 0.0, st);
        check_d(p, r.v, c16, as_u16(d), st);
        check_quantized(p, r.v, c16, got, "the host backend's C", st);
    }
}

TEST_CASE("aScales and bScales need 4-byte alignment only: one float into their buffers the outputs match; 2 bytes "
          "in: MISALIGNED naming the argument, nothing written") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(53);
    Problem p = sized_problem(rng, {130, 0, 211, 159}, 512, 640);  // (the kernel copies scales 4 bytes at a time)
    p.a_layout = FQ_SCALE_LAYOUT_COL_MAJOR;                           // ld = M = 500: columns 4-byte aligned only
    fill_data(rng, p);
    compute_reference(p, all_owned_rows(p));
    Variant v;
    v.prob = v.c = true;
    v.outputs = FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE;
    v.col_block = 128;
    const DeviceProblem dp(p);
    DeviceBuffer<float> sa(p.sa.size() + 1), sb(p.sb.size() + 1);
    CUDA_OK(cudaMemcpy(sa.p + 1, p.sa.data(), p.sa.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(sb.p + 1, p.sb.data(), p.sb.size() * sizeof(float), cudaMemcpyHostToDevice));
    Operands in = dp.operands(p);
    in.sa = sa.p + 1, in.sb = sb.p + 1;
    GpuOutputs o(p, v);
    REQUIRE_MESSAGE(call_gemm(gpu.h, p, v, in, o.ptrs(), nullptr) == FQ_STATUS_SUCCESS, last_gemm_message);
    CUDA_OK(cudaDeviceSynchronize());
    Stats st;
    CAPTURE(p.describe());
    check_outputs(p, v, o, nullptr, st);
    MESSAGE("scales 4 bytes in: ", st.c_values, " C values, ", st.out_bytes, " quantized bytes checked");
    for (const char* arg : {"aScales", "bScales"}) {
        Operands bad = in;
        const float*& sc = arg[0] == 'a' ? bad.sa : bad.sb;
        sc = reinterpret_cast<const float*>(reinterpret_cast<const char*>(sc) + 2);
        o.poison();
        const fqStatus_t s = call_gemm(gpu.h, p, v, bad, o.ptrs(), nullptr);
        CHECK_MESSAGE(s == FQ_STATUS_MISALIGNED, fqGetStatusString(s), ": ", last_gemm_message);
        CHECK(last_gemm_message.find(arg) != std::string::npos);
        CUDA_OK(cudaDeviceSynchronize());
        o.check_untouched();
    }
}

// One group of m rows (offsets and alpha given), with its fp64 reference for every row.
Problem one_group_problem(std::mt19937& rng, int64_t m, int64_t n, int64_t k, bool offsets) {
    Problem p = sized_problem(rng, {m}, n, k);
    p.has_offsets = offsets;
    p.has_alpha = true;
    fill_data(rng, p);
    compute_reference(p, all_owned_rows(p));
    return p;
}

// For each shape (m, n, k, offsets) a one-group problem on the GPU and its C-only run's C: run(shape, problem,
// device problem, base C).
template <class Shape, size_t N, class Run>
void for_each_one_group_problem(fqHandle_t gpu, std::mt19937& rng, const Shape (&shapes)[N], Run&& run) {
    for (const Shape& sh : shapes) {
        const Problem p = one_group_problem(rng, sh.m, sh.n, sh.k, sh.offsets);
        CAPTURE(p.describe());
        const DeviceProblem dp(p);
        run(sh, p, dp, c_only_run(gpu, p, dp));
    }
}

TEST_CASE("split K (one group, fewer 128 x 128-output units than half the SMs: a cluster per unit sums K slices "
          "through shared memory): every output checked, C the same whatever the outputs") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(71);
    struct Shape {
        int64_t m, n, k;
        bool offsets;
        int32_t gate, block;
    };
    // K from 4 blocks (a split of 2) to 56 (up to 8 CTAs a unit); M under, at and over one tile; every pairing;
    // slices of K shorter than 16 blocks (three pipeline stages) and longer (four: M = 256, a split of 3 on an H100).
    const Shape shapes[] = {{128, 4096, 7168, false, FQ_GATE_LAYOUT_SPLIT, 32},
                            {256, 4096, 7168, false, FQ_GATE_LAYOUT_INTERLEAVED, 32},
                            {1, 256, 512, false, FQ_GATE_LAYOUT_INTERLEAVED, 32},
                            {77, 512, 1024, true, FQ_GATE_LAYOUT_BLOCK_INTERLEAVED, 32},
                            {300, 768, 2048, false, FQ_GATE_LAYOUT_BLOCK_INTERLEAVED, 64},
                            {500, 1024, 1008, true, FQ_GATE_LAYOUT_SPLIT, 32}};  // a partial last K block
    Stats st;
    for_each_one_group_problem(gpu.h, rng, shapes, [&](const Shape& sh, const Problem& p, const DeviceProblem& dp,
                                                       const std::vector<uint16_t>& base_c) {
        for (int32_t outputs : {int32_t(FQ_OUTPUT_ROWWISE), int32_t(FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE)}) {
            Variant v;
            v.gate = sh.gate, v.block = sh.block, v.outputs = outputs, v.col_block = 128;
            v.prob = v.c = v.d = true;
            v.act = outputs == FQ_OUTPUT_ROWWISE ? FQ_ACTIVATION_SILU : FQ_ACTIVATION_SWIGLU_OAI;
            run_and_check(gpu.h, p, dp, v, &base_c, st);  // C too: equal to the C-only run's
        }
    });
    MESSAGE("split K: ", st.runs, " runs, ", st.c_values, " C values (worst error/tolerance ", st.worst, "), ", st.d_values,
            " D values, ", st.out_bytes, " quantized bytes");
}

TEST_CASE("row pairs (split K's GEMMs with rowwise fp8 codes alone, SiLU or SwiGLU-OAI): the codes and scales of "
          "quantize(C of the C-only run), every pairing, group width and scale layout") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(73);
    struct Shape {
        int64_t m, n, k;
        bool offsets;
    };
    // Split K of two (the row-pair kernel's domain): the benchmark's dense 512; K of 4-5 blocks, where no split
    // exceeds two whatever the SM count. M under one pair, with a last pair of 2 rows, not a multiple of 64; H
    // with a dead last tile (640 / 2 = 320 outputs); a partial last K block.
    const Shape shapes[] = {{512, 4096, 7168, false}, {300, 1024, 512, false}, {130, 512, 640, true},
                            {77, 640, 640, true},     {1, 256, 512, false},    {200, 768, 592, false}};
    Stats st;
    for_each_one_group_problem(gpu.h, rng, shapes, [&](const Shape& sh, const Problem& p, const DeviceProblem& dp,
                                                       const std::vector<uint16_t>& base_c) {
        for (int i = 0; i < 6; ++i) {
            Variant v = lean_variant(rng, p, i % 2 ? FQ_ACTIVATION_SWIGLU_OAI : FQ_ACTIVATION_SILU);
            v.gate = int32_t(1 + i % 3);  // split, interleaved, block
            v.block = v.gate == FQ_GATE_LAYOUT_BLOCK_INTERLEAVED && i >= 3 && sh.n / 2 % 64 == 0 ? 64 : 32;
            v.group = int32_t(32 << (i / 2 % 3));
            while (sh.n / 2 % v.group != 0) v.group /= 2;
            run_and_check(gpu.h, p, dp, v, &base_c, st);
        }
    });
    MESSAGE("row pairs: ", st.runs, " runs, ", st.out_bytes, " quantized bytes, ", st.scale_bytes, " scale bytes");
}

// ---- (d) Graph replay -------------------------------------------------------------------------------------------

TEST_CASE("a captured fqGroupedGemm replays with new offsets, counts, A, A scales and probabilities at the same "
          "addresses") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(31);
    Problem p1;
    p1.E = 5, p1.M = 700, p1.N = 512, p1.K = 400, p1.lda = 400, p1.has_counts = true, p1.has_alpha = true;
    random_groups(rng, p1);
    fill_data(rng, p1);
    Problem p2 = p1;  // same B, B scales and alphas; new groups, A, A scales, probabilities
    random_groups(rng, p2);
    fill_data(rng, p2, true);
    for (Problem* p : {&p1, &p2}) compute_reference(*p, all_owned_rows(*p));
    Variant v;
    v.prob = v.c = v.d = true;
    v.outputs = FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE;
    v.col_block = 128;
    v.transpose = 1;
    DeviceProblem dp(p1);
    GpuOutputs o(p1, v);
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    Stats st;
    // Eagerly once (the first call may load code), then captured; the capture (global mode) fails on any
    // synchronising call.
    REQUIRE_MESSAGE(call_gemm(gpu.h, p1, v, dp.operands(p1), o.ptrs(), stream) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    CUDA_OK(cudaStreamSynchronize(stream));
    check_outputs(p1, v, o, nullptr, st);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const fqStatus_t s = call_gemm(gpu.h, p1, v, dp.operands(p1), o.ptrs(), stream);
    const std::string msg = fqGetLastErrorMessage();
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    REQUIRE_MESSAGE(s == FQ_STATUS_SUCCESS, msg);
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    const Problem* rounds[] = {&p2, &p1, &p2};
    for (const Problem* p : rounds) {
        dp.upload(*p);
        o.poison();
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaGraphLaunch(exec, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        CAPTURE(p->describe());
        check_outputs(*p, v, o, nullptr, st);
    }
    MESSAGE("graph: ", st.runs, " runs checked (", st.c_values, " C values, ", st.out_bytes, " quantized bytes)");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
}

// ---- (e) Past 2^31 elements -------------------------------------------------------------------------------------

TEST_CASE("A past 2^31 bytes (M = 300000, K = 7168): rows near the end and across 2^31 match the reference") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    const int64_t M = 300000, K = 7168, N = 512, H = N / 2, kbs = K / 128, unowned_from = 299990;
    const uint64_t seed_a = 11, seed_b = 12;
    Problem p;  // holds the shapes, groups, B and the small arrays; A lives only on the device
    p.E = 2, p.M = M, p.N = N, p.K = K, p.lda = K;
    p.offsets = {0, 150001, int32_t(unowned_from)};
    compute_owners(p);
    p.b.resize(size_t(2 * N * K));
    for (size_t i = 0; i < p.b.size(); ++i) p.b[i] = hash_fp8(i, seed_b);
    std::mt19937 rng(3);
    p.sb.resize(size_t(2 * p.nbs() * kbs));
    for (float& x : p.sb) x = random_scale(rng);
    p.sa.assign(size_t(p.a_ld() * kbs), NAN);
    p.prob.assign(size_t(M), NAN);
    for (int64_t m = 0; m < unowned_from; ++m) {
        for (int64_t kb = 0; kb < kbs; ++kb)
            p.sa[size_t(kb * p.a_ld() + m)] = std::ldexp(1.0f + float(mix64(uint64_t(m * kbs + kb)) & 255) / 256.0f, -9);
        p.prob[size_t(m)] = 0.25f + float(mix64(uint64_t(m) + 99) & 1023) / 1024.0f;
    }
    DeviceBuffer<uint8_t> a(size_t(M * K)), b(p.b.size());
    DeviceBuffer<float> sa(p.sa.size()), sb(p.sb.size()), prob(p.prob.size());
    DeviceBuffer<int32_t> offsets(p.offsets.size());
    CUDA_OK(fill_hash_fp8(a.p, a.n, seed_a, nullptr));
    CUDA_OK(cudaMemset(a.p + size_t(unowned_from * K), 0x7F, size_t((M - unowned_from) * K)));
    b.upload(p.b), sa.upload(p.sa), sb.upload(p.sb), prob.upload(p.prob), offsets.upload(p.offsets);
    Variant v;
    v.prob = v.c = true;
    v.layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    GpuOutputs o(p, v);
    const Operands in{a.p, b.p, sa.p, sb.p, nullptr, prob.p, offsets.p, nullptr};
    const fqStatus_t s = call_gemm(gpu.h, p, v, in, o.ptrs(), nullptr);
    REQUIRE_MESSAGE(s == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaGetLastError());
    for (Guarded* g : {o.c.get(), o.out.get(), o.scales.get()}) g->check_guards("a 2^31 output");

    // The rows checked: the first, both sides of the group boundary, the row of A that crosses 2^31 bytes, the
    // last owned rows; then the unowned tail (must stay poison).
    std::vector<int64_t> rows = {0, 1, 150000, 150001, (int64_t(1) << 31) / K - 1, (int64_t(1) << 31) / K,
                                 (int64_t(1) << 31) / K + 1};
    for (int64_t m = unowned_from - 10; m < unowned_from; ++m) rows.push_back(m);
    const size_t groups_per_row = size_t(H / 128);
    int64_t values = 0;
    Stats st;
    for (int64_t m : rows) {
        CAPTURE(m);
        const int32_t g = p.owner[size_t(m)];
        REQUIRE(g >= 0);
        // One-row problem: row m of A with its scales, group g's weight.
        Problem r;
        r.E = 1, r.M = 1, r.N = N, r.K = K, r.lda = K, r.has_offsets = false;
        r.owner = {0};
        r.a.resize(size_t(K));
        for (int64_t k = 0; k < K; ++k) r.a[size_t(k)] = hash_fp8(uint64_t(m * K + k), seed_a);
        r.sa.resize(size_t(r.a_ld() * kbs));  // a_ld() = 4 for one row (COL_MAJOR_TMA)
        for (int64_t kb = 0; kb < kbs; ++kb) r.sa[size_t(kb * r.a_ld())] = p.sa[size_t(kb * p.a_ld() + m)];
        r.b.assign(p.b.begin() + g * N * K, p.b.begin() + (g + 1) * N * K);
        r.sb.assign(p.sb.begin() + g * p.nbs() * kbs, p.sb.begin() + (g + 1) * p.nbs() * kbs);
        r.prob = {p.prob[size_t(m)]};
        compute_reference(r, {0});
        std::vector<uint16_t> c(static_cast<size_t>(N));
        CUDA_OK(cudaMemcpy(c.data(), static_cast<uint8_t*>(o.c->p()) + size_t(m * N * 2), size_t(N * 2), cudaMemcpyDeviceToHost));
        check_c(r, c, "C row", kRel, kAbsS, st);
        Quantized got;
        got.out.resize(size_t(H));
        got.scales.resize(groups_per_row * 4);
        CUDA_OK(cudaMemcpy(got.out.data(), static_cast<uint8_t*>(o.out->p()) + size_t(m * H), size_t(H), cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(got.scales.data(), static_cast<uint8_t*>(o.scales->p()) + size_t(m) * groups_per_row * 4,
                           groups_per_row * 4, cudaMemcpyDeviceToHost));
        check_quantized(r, v, c, got, "the GPU's C row", st);
        values += N;
    }
    for (int64_t m = unowned_from; m < M; ++m) {
        std::vector<uint8_t> c(static_cast<size_t>(N * 2)), out(static_cast<size_t>(H)), sc(groups_per_row * 4);
        CUDA_OK(cudaMemcpy(c.data(), static_cast<uint8_t*>(o.c->p()) + size_t(m * N * 2), c.size(), cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(out.data(), static_cast<uint8_t*>(o.out->p()) + size_t(m * H), out.size(), cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(sc.data(), static_cast<uint8_t*>(o.scales->p()) + size_t(m) * groups_per_row * 4, sc.size(),
                           cudaMemcpyDeviceToHost));
        auto poisoned = [](const std::vector<uint8_t>& x) { return std::all_of(x.begin(), x.end(), [](uint8_t b) { return b == kPoison; }); };
        CHECK_MESSAGE((poisoned(c) && poisoned(out) && poisoned(sc)), "row ", m, " (no group's) was written");
    }
    MESSAGE("2^31: ", rows.size(), " rows checked (", values, " C values, worst error/tolerance ", st.worst, "), ",
            M - unowned_from, " unowned rows untouched");
}

// ---- (f) Asynchrony ---------------------------------------------------------------------------------------------

TEST_CASE("fqGroupedGemm returns while the stream is still busy (no host synchronisation)") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(8);
    Problem p = sized_problem(rng, {300, 1000, 0, 2796}, 1024, 1024);
    const DeviceProblem dp(p);
    Variant v;
    v.prob = true;
    v.outputs = FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE;
    GpuOutputs o(p, v);
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    // Warm-up: the sleep kernel and the GEMM once each (loading code), then the measured call behind 50 ms of sleep.
    CUDA_OK(launch_sleep(stream, 1000));
    REQUIRE_MESSAGE(call_gemm(gpu.h, p, v, dp.operands(p), o.ptrs(), stream) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(launch_sleep(stream, 50'000'000));
    const auto t0 = std::chrono::steady_clock::now();
    const fqStatus_t s = call_gemm(gpu.h, p, v, dp.operands(p), o.ptrs(), stream);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const cudaError_t busy = cudaStreamQuery(stream);
    CUDA_OK(cudaStreamSynchronize(stream));
    REQUIRE_MESSAGE(s == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    MESSAGE("fqGroupedGemm returned after ", ms, " ms behind a 50 ms kernel; stream ",
            busy == cudaErrorNotReady ? "still busy" : "already idle");
    CHECK_MESSAGE(busy == cudaErrorNotReady, "the stream had drained when fqGroupedGemm returned: it waited for it");
    CHECK(ms < 25.0);
    cudaStreamDestroy(stream);
}

// ---- Other architectures ----------------------------------------------------------------------------------------

TEST_CASE("other architectures: the CUDA grouped GEMM is NOT_SUPPORTED off sm_90") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(1);
    Problem p = sized_problem(rng, {100, 28}, 256, 256);
    const DeviceProblem dp(p);
    Variant v;
    v.c = true;
    GpuOutputs o(p, v);
    const fqStatus_t s = call_gemm(gpu.h, p, v, dp.operands(p), o.ptrs(), nullptr);
    MESSAGE("sm_", g_arch, ": ", fqGetStatusString(s), ": ", fqGetLastErrorMessage());
    CHECK(s == FQ_STATUS_NOT_SUPPORTED);
    CHECK(std::string(fqGetLastErrorMessage()).size() > 0);
}

int main(int argc, char** argv) {
    g_arch = fqt::cuda_arch_of_device0();
    if (g_arch == 0) {
        std::printf("skipped: no CUDA device on this machine\n");
        return 77;
    }
    doctest::Context ctx(argc, argv);
    if (g_arch != 90) {
        std::printf("sm_%d: fqGroupedGemm runs on sm_90 only; checking that it refuses, then reporting skipped\n", g_arch);
        ctx.addFilter("test-case", "other architectures*");
        const int rc = ctx.run();
        return rc != 0 ? rc : 77;
    }
    ctx.addFilter("test-case-exclude", "other architectures*");
    return ctx.run();
}
