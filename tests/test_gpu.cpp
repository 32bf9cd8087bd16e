// GPU tests (docs/spec.md §0): every CUDA variant the dispatcher can select writes exactly the bytes of the host
// reference — values, scales and padding — on fresh random inputs with poisoned outputs. Built as its
// own executable; with no CUDA device it prints "skipped" and exits 77, which CTest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <thread>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/enum_lists.h"
#include "fq/compare.h"
#include "fq_test_util.h"
#include "gpu_buffer.h"

using namespace fqt;
using fqtool::byte_diff;

namespace {

// One problem of the matrix: a descriptor's settings and a shape.
struct Case {
    int32_t act = FQ_ACTIVATION_SILU, gate = FQ_GATE_LAYOUT_SPLIT, order = 0, block = 32, rounding = 0;
    int32_t scheme = FQ_SCHEME_PER_GROUP, group = 128, out = FQ_TYPE_FP8_E4M3FN, layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    int32_t pow2 = 0, e8m0 = 0, apply = 0, in_type = FQ_TYPE_BF16;
    int32_t mx_floor = 0, global_amax = 0;  // microscaling: the FLOOR rule; NVFP4: the caller's global amax
    bool ub = false, prob = false, qmax = false, min_scale = false;
    int64_t rows = 7, cols = 256, in_pad = 0;  // in_pad: extra elements per input row (strided rows)
    int64_t misalign = 0;                      // elements the input pointer is offset by (breaks 16B alignment)
    int64_t scale_skew = 0;                    // bytes the scale pointer is offset by (4: not 16-byte aligned)
    // MoE (docs/spec.md §5) and columnwise outputs (docs/spec.md §4): layout, experts, whether CONTIGUOUS slots have counts;
    // the outputs mask, the columnwise block and orientation.
    int32_t moe = FQ_MOE_LAYOUT_NONE, experts = 0, outputs = FQ_OUTPUT_ROWWISE, col_block = 32, transpose = 0;
    bool slot_counts = false;
    bool every_gate = false;  // the gates run through all 65536 bit patterns (split, interleaved, not gated)
    int32_t swiglu = 0;       // SwiGLU-OAI's alpha, beta, limit: kSwiglu[swiglu] (0: the defaults)
    bool extremes = false;    // every 13th input an extreme value (kExtremes: -Inf gates, -3.39e38, NaNs, ...)
    float qmax_value = 0.0f;  // the QMAX set when qmax is (0: 200, int8 100)
    int32_t global_special = 0;  // NVFP4 global amax kGlobalSpecial[global_special - 1] (S_enc = 1) when > 0

    std::string describe() const {
        char b[400];
        std::snprintf(b, sizeof b,
                      "act=%d gate=%d order=%d block=%d round=%d scheme=%d G=%d out=%d layout=%d pow2=%d e8m0=%d "
                      "floor=%d global=%d apply=%d in=%d ub=%d prob=%d qmax=%d min=%d rows=%lld cols=%lld pad=%lld mis=%lld skew=%lld "
                      "moe=%d E=%d slots=%d outputs=%d Bc=%d T=%d every_gate=%d swiglu=%d extremes=%d qmax_value=%g "
                      "global_special=%d",
                      act, gate, order, block, rounding, scheme, group, out, layout, pow2, e8m0, mx_floor, global_amax,
                      apply, in_type, ub,
                      prob, qmax, min_scale, (long long)rows, (long long)cols, (long long)in_pad, (long long)misalign, (long long)scale_skew,
                      moe, experts, int(slot_counts), outputs, col_block, transpose, int(every_gate), swiglu,
                      int(extremes), double(qmax_value), global_special);
        return b;
    }
};

// The extreme inputs of docs/spec.md §1 and §2, as bf16 and fp16 bits: -Inf, the most negative finite value
// (bf16 -3.39e38: exp overflows, silu and the SwiGLU-OAI gate factor are -0), NaNs of both signs and two
// payloads, +Inf, the largest finite value.
constexpr uint16_t kExtremesBf16[] = {0xFF80, 0xFF7F, 0x7FC0, 0xFFC0, 0x7F81, 0xFFFF, 0x7F80, 0x7F7F};
constexpr uint16_t kExtremesFp16[] = {0xFC00, 0xFBFF, 0x7E00, 0xFE00, 0x7C01, 0xFFFF, 0x7C00, 0x7BFF};

// NVFP4 global amax values whose quotient 2688 / amax is not a positive finite float: S_enc = 1 (§3.3).
constexpr float kGlobalSpecial[] = {0.0f, -1.0f, INFINITY, NAN, 1e-38f};

// Random inputs that exercise the edges: mostly normal values, plus zero rows, NaN, Inf, values past
// every format's qmax, tiny values; with c.extremes, every 13th input one of kExtremes.
std::vector<uint16_t> random_input(std::mt19937& rng, const Case& c, int64_t in_cols, int64_t ld) {
    fqtool::EdgeValues value;
    std::vector<uint16_t> v(size_t(c.rows * ld + c.misalign + 8), 0xFFFF);
    const int64_t zero_row = c.rows > 2 ? 1 : -1;
    for (int64_t m = 0; m < c.rows; ++m)
        for (int64_t j = 0; j < in_cols; ++j) {
            float x = value(rng);
            if (m == zero_row) x = 0.0f;
            uint16_t bits = c.in_type == FQ_TYPE_BF16 ? fq::float_to_bf16(x) : fq::float_to_fp16(x);
            const int64_t k = m * in_cols + j;
            if (c.extremes && k % 13 == 0) bits = (c.in_type == FQ_TYPE_BF16 ? kExtremesBf16 : kExtremesFp16)[(k / 13) % 8];
            v[size_t(c.misalign + m * ld + j)] = bits;
        }
    if (c.every_gate) {  // gate of output (m, j) = pattern m * cols + j (mod 2^16): every bf16 gate
        for (int64_t m = 0; m < c.rows; ++m)
            for (int64_t j = 0; j < c.cols; ++j) {
                const bool gate_first = c.order == FQ_GATE_ORDER_GATE_FIRST;
                const int64_t col = c.gate == FQ_GATE_LAYOUT_NONE          ? j
                                    : c.gate == FQ_GATE_LAYOUT_INTERLEAVED ? 2 * j + (gate_first ? 0 : 1)
                                                                           : j + (gate_first ? 0 : c.cols);
                v[size_t(c.misalign + m * ld + col)] = uint16_t(m * c.cols + j);
            }
    }
    return v;
}

bool microscaling(const Case& c) { return c.scheme >= FQ_SCHEME_MXFP8; }

// The device or host arrays a problem's descriptor points at.
struct Pointers {
    const float *ub, *prob, *static_scale, *global_amax;
    const int32_t *offsets, *counts;
};

// SwiGLU-OAI parameters (the API takes a positive limit or +inf): the defaults; a negative alpha; no limit; a
// steep alpha with a small limit and negative beta (the kernels' fast path takes fewer gates there: |g| <= 1.4).
constexpr float kSwiglu[][3] = {{1.702f, 1.0f, 7.0f}, {-3.0f, 0.5f, 2.0f}, {1.702f, 1.0f, INFINITY}, {60.0f, -1.0f, 0.5f}};

void configure(Desc& d, const Case& c, const Pointers& ptr) {
    const float *ub = ptr.ub, *prob = ptr.prob, *static_scale = ptr.static_scale, *global_amax = ptr.global_amax;
    d.i32(FQ_QUANT_DESC_ACTIVATION, c.act).i32(FQ_QUANT_DESC_GATE_LAYOUT, c.gate).i32(FQ_QUANT_DESC_GATE_ORDER, c.order)
        .i32(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, c.block).i32(FQ_QUANT_DESC_INTERMEDIATE_ROUNDING, c.rounding)
        .i32(FQ_QUANT_DESC_SCHEME, c.scheme).i32(FQ_QUANT_DESC_OUTPUT_TYPE, c.out)
        .i32(FQ_QUANT_DESC_SCALE_LAYOUT, c.layout).i32(FQ_QUANT_DESC_SCALE_ROUNDING, c.pow2)
        .i32(FQ_QUANT_DESC_SCALE_APPLY, c.apply);
    if (c.scheme == FQ_SCHEME_PER_GROUP) d.i32(FQ_QUANT_DESC_GROUP_SIZE, c.group);  // other schemes refuse it
    if (microscaling(c)) d.i32(FQ_QUANT_DESC_SCALE_TYPE, c.scheme == FQ_SCHEME_NVFP4 ? FQ_TYPE_FP8_E4M3FN : FQ_TYPE_E8M0);
    if (c.mx_floor) d.i32(FQ_QUANT_DESC_MX_SCALE_RULE, FQ_MX_SCALE_RULE_FLOOR);
    if (c.swiglu)
        d.f32(FQ_QUANT_DESC_SWIGLU_ALPHA, kSwiglu[c.swiglu][0]).f32(FQ_QUANT_DESC_SWIGLU_BETA, kSwiglu[c.swiglu][1])
            .f32(FQ_QUANT_DESC_SWIGLU_LIMIT, kSwiglu[c.swiglu][2]);
    if (c.global_amax) d.ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, global_amax);
    if (c.e8m0) d.i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
    if (c.ub) d.ptr(FQ_QUANT_DESC_SCALE_UB_POINTER, ub);
    if (c.prob) d.ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob);
    if (c.qmax) d.f32(FQ_QUANT_DESC_QMAX, c.qmax_value > 0.0f ? c.qmax_value : c.out == FQ_TYPE_INT8 ? 100.0f : 200.0f);
    if (c.min_scale) d.f32(FQ_QUANT_DESC_MIN_SCALE, 1e-3f);
    if (c.scheme == FQ_SCHEME_PER_TENSOR_STATIC) d.ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, static_scale);
    if (c.moe != FQ_MOE_LAYOUT_NONE) {
        d.i32(FQ_QUANT_DESC_MOE_LAYOUT, c.moe).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, c.experts);
        if (c.moe == FQ_MOE_LAYOUT_CONTIGUOUS) d.ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, ptr.offsets);
        if (c.moe == FQ_MOE_LAYOUT_MASKED || c.slot_counts) d.ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, ptr.counts);
    }
    if (c.outputs != FQ_OUTPUT_ROWWISE) {
        d.i32(FQ_QUANT_DESC_OUTPUTS, c.outputs).i32(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, c.transpose);
        if (!microscaling(c)) d.i32(FQ_QUANT_DESC_COLUMNWISE_BLOCK, c.col_block);
    }
}

// Random expert row ranges, skewed, some experts empty: CONTIGUOUS offsets (non-decreasing, not aligned to
// any block, some rows before the first and after the last expert) and slot counts; MASKED counts (some
// past max_m, some negative: the library clamps them).
void random_moe(std::mt19937& rng, const Case& c, std::vector<int32_t>& offsets, std::vector<int32_t>& counts) {
    offsets.assign(size_t(c.experts + 1), 0);
    counts.assign(size_t(c.experts), 0);
    if (c.moe == FQ_MOE_LAYOUT_NONE) return;
    std::uniform_int_distribution<int> pick(0, 99);
    if (c.moe == FQ_MOE_LAYOUT_MASKED) {
        const int32_t max_m = int32_t(c.rows / c.experts);
        for (int32_t& n : counts) {
            const int r = pick(rng);
            n = r < 20 ? 0 : r < 30 ? max_m : r < 35 ? max_m + 5 : r < 38 ? -3 : int32_t(pick(rng) * max_m / 100);
        }
        return;
    }
    std::vector<int32_t> cuts(size_t(c.experts + 1));
    for (int32_t& x : cuts) x = int32_t(std::uniform_int_distribution<int64_t>(0, c.rows)(rng));
    std::sort(cuts.begin(), cuts.end());
    if (pick(rng) < 50) cuts.front() = 0, cuts.back() = int32_t(c.rows);
    offsets = cuts;
    for (size_t e = 0; e < counts.size(); ++e) {
        const int32_t slot = offsets[e + 1] - offsets[e];
        counts[e] = pick(rng) < 30 ? slot : int32_t(std::uniform_int_distribution<int32_t>(0, slot)(rng));
    }
}

struct Tally {
    int runs = 0, refused = 0;
    // Per variant, indexed by FQ_HANDLE_VARIANT + 1 (0: the dispatcher's choice): runs compared with the host,
    // (problem, tile rule) pairs it refused.
    struct PerVariant {
        int runs = 0, refused = 0;
    };
    std::vector<PerVariant> per_variant;
};

// The 8 outputs around the first differing byte (one byte a value), with the input words they are computed
// from: enough to tell from a log alone which element or rule differs.
std::string around_first_difference(const Case& c, const std::vector<uint16_t>& input, const std::vector<uint8_t>& got,
                                    const std::vector<uint8_t>& want) {
    size_t i = 0;
    while (i < got.size() && got[i] == want[i]) ++i;
    const int64_t row = int64_t(i) / c.cols, col0 = (int64_t(i) % c.cols) / 8 * 8;
    const bool gated = c.gate != FQ_GATE_LAYOUT_NONE;
    const int64_t in_cols = gated ? 2 * c.cols : c.cols, ld = in_cols + c.in_pad;
    std::string s = "row " + std::to_string(row) + ", outputs " + std::to_string(col0) + "..:";
    char cell[64];
    for (int64_t j = col0; j < std::min(col0 + 8, c.cols); ++j) {
        const size_t o = size_t(row * c.cols + j);
        const size_t x = size_t(c.misalign + row * ld + j);  // the first input word of output j (split: the gate)
        std::snprintf(cell, sizeof cell, " [%lld in 0x%04x got 0x%02x want 0x%02x]", static_cast<long long>(j),
                      unsigned(input[x]), unsigned(got[o]), unsigned(want[o]));
        s += cell;
    }
    return s;
}

// Runs `c` on the host and on every CUDA variant of `gpu` that accepts it; each must match byte for byte.
void check_case(fqHandle_t gpu, const Case& c, std::mt19937& rng, Tally& tally) {
    CAPTURE(c.describe());
    const bool gated = c.gate != FQ_GATE_LAYOUT_NONE;
    const int64_t in_cols = gated ? 2 * c.cols : c.cols, ld = in_cols + c.in_pad;
    const std::vector<uint16_t> input = random_input(rng, c, in_cols, ld);
    std::vector<float> prob(size_t(std::max<int64_t>(c.rows, 1)));
    std::uniform_real_distribution<float> u01(0.0f, 1.0f);
    for (float& p : prob) p = u01(rng);
    // Per-expert tensor scalars (one without MoE); a global amax of 0 checks NVFP4's fallback.
    const size_t n_experts = size_t(std::max(c.experts, 1));
    std::vector<float> static_h(n_experts), global_h(n_experts);
    for (size_t e = 0; e < n_experts; ++e) {
        static_h[e] = 0.125f * float(e + 1);
        global_h[e] = c.global_special > 0                 ? kGlobalSpecial[c.global_special - 1]
                      : (c.rows + int64_t(e)) % 2 ? 37.5f * float(e + 1) : 0.0f;
    }
    const float ub_h = 0.05f;
    std::vector<int32_t> offsets, counts;
    random_moe(rng, c, offsets, counts);

    // Host reference. Outputs and their scale buffers poisoned alike on both sides: bytes a backend must
    // not touch (rows no expert owns, blocks with no valid row) compare equal only if both left them.
    Desc dh;
    configure(dh, c, {&ub_h, prob.data(), static_h.data(), global_h.data(), offsets.data(), counts.data()});
    const bool rowwise = c.outputs & FQ_OUTPUT_ROWWISE, columnwise = c.outputs & FQ_OUTPUT_COLUMNWISE;
    const size_t sbytes = rowwise ? scale_bytes(dh, c.rows, c.cols) : 0;
    size_t col_sbytes = 0;
    if (columnwise) REQUIRE(fqGetScaleBufferSize(dh.d, c.rows, c.cols, FQ_OUTPUT_COLUMNWISE, &col_sbytes) == 0);
    const size_t out_bytes = size_t(c.rows * c.cols);
    Handle host;
    Layout li(c.in_type, c.rows, in_cols, ld), lo(c.out, c.rows, c.cols, c.cols);
    std::vector<uint8_t> want_out(out_bytes, 0xAB), want_scales(sbytes, 0xAB);
    std::vector<uint8_t> want_col(columnwise ? out_bytes : 0, 0xAB), want_col_scales(col_sbytes, 0xAB);
    if (columnwise)
        dh.ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, want_col.data())
            .ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, col_sbytes ? want_col_scales.data() : nullptr);
    REQUIRE_MESSAGE(fqQuantize(host.h, dh.d, li.l, input.data() + c.misalign, lo.l, rowwise ? want_out.data() : nullptr,
                               sbytes ? want_scales.data() : nullptr, sbytes, nullptr, 0, nullptr) == FQ_STATUS_SUCCESS,
                    std::string(fqGetLastErrorMessage()));

    // Device copies of everything the descriptor points at.
    DeviceBuffer<uint16_t> d_in(input.size());
    d_in.upload(input);
    DeviceBuffer<float> d_prob(prob.size()), d_ub(1), d_static(n_experts), d_global(n_experts), d_workspace(4 * n_experts);
    DeviceBuffer<int32_t> d_offsets(offsets.size()), d_counts(std::max<size_t>(counts.size(), 1));
    d_prob.upload(prob);
    d_ub.upload({ub_h});
    d_static.upload(static_h);
    d_global.upload(global_h);
    d_offsets.upload(offsets);
    if (!counts.empty()) d_counts.upload(counts);
    Desc dd;
    configure(dd, c, {d_ub.p, d_prob.p, d_static.p, d_global.p, d_offsets.p, d_counts.p});

    int32_t n = 0;
    REQUIRE(fqGetVariantCount(gpu, &n) == FQ_STATUS_SUCCESS);
    // Every variant (-1: the dispatcher's own choice), each with the tile rules that pick 8 or 16 outputs a
    // thread for plain problems: the default (these small problems: 8), 1 (16) and 0 (16, and the column-major
    // scales' 8-row kernel, which the default keeps for scale buffers past 6 MB).
    for (int32_t run = 0; run < 3 * (n + 1); ++run) {
        const int32_t v = run / 3 - 1, wide_tile_min = run % 3 - 1;
        REQUIRE(fqHandleSetAttribute(gpu, FQ_HANDLE_VARIANT, &v, 4) == FQ_STATUS_SUCCESS);
        REQUIRE(fqHandleSetAttribute(gpu, FQ_HANDLE_WIDE_TILE_MIN, &wide_tile_min, 4) == FQ_STATUS_SUCCESS);
        // The scales at c.scale_skew bytes into their buffer: the bytes before them must stay poisoned.
        DeviceBuffer<uint8_t> d_out(want_out.size()), d_scales(sbytes + size_t(c.scale_skew)), d_col(want_col.size()),
            d_col_scales(col_sbytes);
        for (auto* b : {&d_out, &d_scales, &d_col, &d_col_scales})  // poison
            CUDA_OK(cudaMemset(b->p, 0xAB, std::max<size_t>(b->n, 1)));
        if (columnwise)
            dd.ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, d_col.p)
                .ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, col_sbytes ? d_col_scales.p : nullptr);
        size_t workspace = 0;  // NVFP4 without a global amax reduces it in 4 bytes per expert of workspace
        if (fqGetWorkspaceSize(gpu, dd.d, li.l, lo.l, &workspace) == FQ_STATUS_SUCCESS) REQUIRE(workspace <= 4 * n_experts);
        const fqStatus_t s = fqQuantize(gpu, dd.d, li.l, d_in.p + c.misalign, lo.l, rowwise ? d_out.p : nullptr,
                                        sbytes ? d_scales.p + c.scale_skew : nullptr, sbytes, workspace ? d_workspace.p : nullptr,
                                        workspace, nullptr);
        const std::string message = fqGetLastErrorMessage();  // before any other call clears it
        if (tally.per_variant.size() < size_t(n + 1)) tally.per_variant.resize(size_t(n + 1));
        Tally::PerVariant& mine = tally.per_variant[size_t(v + 1)];
        if (s == FQ_STATUS_NOT_SUPPORTED && v >= 0) {
            ++tally.refused;
            ++mine.refused;
            continue;
        }
        char name[256] = "auto";
        if (v >= 0) REQUIRE(fqGetVariantName(gpu, v, name, sizeof name) == FQ_STATUS_SUCCESS);
        const std::string variant_name = name;  // CAPTURE keeps a reference: never a temporary
        CAPTURE(variant_name);
        CAPTURE(wide_tile_min);
        REQUIRE_MESSAGE(s == FQ_STATUS_SUCCESS, message);
        CUDA_OK(cudaDeviceSynchronize());
        ++tally.runs;
        ++mine.runs;
        const std::vector<uint8_t> got_out = d_out.download(), got_scales = d_scales.download();
        std::string diff = byte_diff(got_out, want_out);
        CHECK_MESSAGE(diff.empty(), "values: ", diff);
        if (!diff.empty() && c.out != FQ_TYPE_FP4_E2M1) MESSAGE(around_first_difference(c, input, got_out, want_out));
        std::vector<uint8_t> want_skewed(size_t(c.scale_skew), 0xAB);
        want_skewed.insert(want_skewed.end(), want_scales.begin(), want_scales.end());
        CHECK_MESSAGE(got_scales == want_skewed, "scale bytes differ");
        if (columnwise) {
            const std::vector<uint8_t> got_col = d_col.download(), got_col_scales = d_col_scales.download();
            diff = byte_diff(got_col, want_col);
            CHECK_MESSAGE(diff.empty(), "columnwise values: ", diff);
            CHECK_MESSAGE(got_col_scales == want_col_scales, "columnwise scale bytes differ");
        }
    }
    int32_t automatic = -1;
    fqHandleSetAttribute(gpu, FQ_HANDLE_VARIANT, &automatic, 4);
    fqHandleSetAttribute(gpu, FQ_HANDLE_WIDE_TILE_MIN, &automatic, 4);
}

bool g_has_gpu = false;

}  // namespace

namespace {

#define FQ_LISTED_VALUE(Internal, value, ...) value,
const int32_t kListedActivations[] = {FQ_ACTIVATIONS(FQ_LISTED_VALUE)};
const int32_t kListedScaleLayouts[] = {FQ_SCALE_LAYOUTS(FQ_LISTED_VALUE)};
#undef FQ_LISTED_VALUE

// Whether `layout` holds fp32 scales (the API's answer).
bool layout_holds_fp32(int32_t layout) {
    size_t bytes = 0;
    return fqGetScaleRepackSize(FQ_TYPE_FP32, 1, 4, 4, layout, &bytes) == FQ_STATUS_SUCCESS;
}

}  // namespace

TEST_CASE("every CUDA variant matches the host reference bit for bit over a random matrix of problems") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(std::random_device{}());
    const unsigned seed = rng();
    MESSAGE("seed ", seed);
    rng.seed(seed);
    Tally tally;

    // Fixed cases first: the benchmark's problem and the edges the issue names.
    std::vector<Case> cases;
    cases.push_back(Case{});                                         // silu split, group 128, e4m3fn
    { Case c; c.layout = FQ_SCALE_LAYOUT_COL_MAJOR; cases.push_back(c); }
    { Case c; c.layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA; c.rows = 5; cases.push_back(c); }
    { Case c; c.rows = 0; c.layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA; cases.push_back(c); }
    { Case c; c.rows = 1; cases.push_back(c); }
    { Case c; c.cols = 192; c.group = 128; cases.push_back(c); }     // partial last group
    { Case c; c.cols = 100; c.group = 32; cases.push_back(c); }      // width not divisible by 8
    { Case c; c.in_pad = 24; cases.push_back(c); }                   // strided rows
    { Case c; c.misalign = 1; cases.push_back(c); }                  // unaligned pointer
    { Case c; c.scheme = FQ_SCHEME_PER_TOKEN; c.cols = 3000; cases.push_back(c); }
    // Per-token: the widest parked row, past it (re-read), unaligned past it; few rows take 1024-thread blocks, 600
    // rows (on an H100's 132 SMs) 256-thread ones.
    { Case c; c.scheme = FQ_SCHEME_PER_TOKEN; c.rows = 3; c.cols = 24576; cases.push_back(c); }
    { Case c; c.scheme = FQ_SCHEME_PER_TOKEN; c.rows = 3; c.cols = 24584; cases.push_back(c); }
    { Case c; c.scheme = FQ_SCHEME_PER_TOKEN; c.rows = 2; c.cols = 24589; cases.push_back(c); }
    { Case c; c.scheme = FQ_SCHEME_PER_TOKEN; c.rows = 600; c.cols = 24584; cases.push_back(c); }
    { Case c; c.scheme = FQ_SCHEME_PER_TOKEN; c.rows = 600; c.cols = 5000; cases.push_back(c); }
    { Case c; c.scheme = FQ_SCHEME_PER_TENSOR_DYNAMIC; c.rows = 33; cases.push_back(c); }
    { Case c; c.scheme = FQ_SCHEME_PER_TENSOR_STATIC; cases.push_back(c); }
    { Case c; c.rows = 300; c.cols = 2048; cases.push_back(c); }     // the 4-rows-per-block path
    { Case c; c.act = 0; c.gate = 0; c.scheme = FQ_SCHEME_MXFP8; c.cols = 2048; cases.push_back(c); }  // plain MXFP8
    { Case c; c.scheme = FQ_SCHEME_MXFP8; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; c.rows = 130; c.cols = 200; cases.push_back(c); }
    { Case c; c.scheme = FQ_SCHEME_MXFP8; c.layout = FQ_SCALE_LAYOUT_PACKED_UE8M0; c.out = FQ_TYPE_FP8_E5M2; c.mx_floor = 1; cases.push_back(c); }
    { Case c; c.scheme = FQ_SCHEME_MXFP4; c.out = FQ_TYPE_FP4_E2M1; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; cases.push_back(c); }
    { Case c; c.scheme = FQ_SCHEME_NVFP4; c.out = FQ_TYPE_FP4_E2M1; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; c.rows = 33; cases.push_back(c); }
    { Case c; c.scheme = FQ_SCHEME_NVFP4; c.out = FQ_TYPE_FP4_E2M1; c.global_amax = 1; c.cols = 96; cases.push_back(c); }
    // MoE layouts and columnwise outputs (issue 5).
    { Case c; c.moe = FQ_MOE_LAYOUT_MASKED; c.experts = 4; c.rows = 4 * 33; cases.push_back(c); }
    { Case c; c.moe = FQ_MOE_LAYOUT_CONTIGUOUS; c.experts = 5; c.rows = 200; c.slot_counts = true; c.scheme = FQ_SCHEME_MXFP8;
      c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; cases.push_back(c); }
    { Case c; c.outputs = 3; c.col_block = 128; c.transpose = 1; c.rows = 130; c.layout = FQ_SCALE_LAYOUT_COL_MAJOR; cases.push_back(c); }
    { Case c; c.outputs = 2; c.col_block = 32; c.rows = 70; c.cols = 200; c.layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA; cases.push_back(c); }
    { Case c; c.moe = FQ_MOE_LAYOUT_MASKED; c.experts = 3; c.rows = 3 * 40; c.outputs = 3; c.transpose = 1;
      c.scheme = FQ_SCHEME_NVFP4; c.out = FQ_TYPE_FP4_E2M1; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; cases.push_back(c); }
    { Case c; c.moe = FQ_MOE_LAYOUT_CONTIGUOUS; c.experts = 3; c.rows = 50; c.outputs = 3;
      c.scheme = FQ_SCHEME_PER_TENSOR_DYNAMIC; cases.push_back(c); }
    { Case c; c.outputs = 3; c.scheme = FQ_SCHEME_PER_TOKEN; c.rows = 33; c.cols = 1000; cases.push_back(c); }
    // Larger problems: a column tile partly past the row end, the swizzled layout's padding rows after the
    // data blocks, per-tensor dynamic over many blocks, MoE layouts over many rows.
    { Case c; c.rows = 131; c.cols = 2056; c.scheme = FQ_SCHEME_MXFP8; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; cases.push_back(c); }
    { Case c; c.rows = 131; c.cols = 2056; c.scheme = FQ_SCHEME_MXFP8; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; c.scale_skew = 4;
      cases.push_back(c); }  // swizzled scales not 16-byte aligned: the plain kernel's byte stores
    { Case c; c.rows = 500; c.cols = 3072; c.layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA; c.prob = true; cases.push_back(c); }
    { Case c; c.act = 0; c.gate = 0; c.rows = 301; c.cols = 1032; c.scheme = FQ_SCHEME_NVFP4; c.out = FQ_TYPE_FP4_E2M1; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; cases.push_back(c); }
    { Case c; c.rows = 333; c.cols = 2048; c.scheme = FQ_SCHEME_PER_TENSOR_DYNAMIC; c.layout = 0; cases.push_back(c); }
    { Case c; c.moe = FQ_MOE_LAYOUT_MASKED; c.experts = 8; c.rows = 8 * 40; c.cols = 1024; c.rounding = 1; cases.push_back(c); }
    { Case c; c.moe = FQ_MOE_LAYOUT_CONTIGUOUS; c.experts = 8; c.rows = 400; c.cols = 2048; c.slot_counts = true; cases.push_back(c); }
    // MASKED over more valid rows than one wave of the persistent grid holds (units of 512 outputs wrap around
    // the grid several times), many experts (the prefix scan over several chunks of 128), H = 2880 (a partial
    // group and a partial unit), swizzled MX scales with padding rows, per-tensor dynamic per expert.
    { Case c; c.moe = FQ_MOE_LAYOUT_MASKED; c.experts = 8; c.rows = 8 * 1000; c.cols = 2048; cases.push_back(c); }
    { Case c; c.moe = FQ_MOE_LAYOUT_MASKED; c.experts = 300; c.rows = 300 * 7; c.cols = 2880; cases.push_back(c); }
    { Case c; c.moe = FQ_MOE_LAYOUT_MASKED; c.experts = 6; c.rows = 6 * 300; c.cols = 2880; c.scheme = FQ_SCHEME_MXFP8;
      c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; cases.push_back(c); }
    { Case c; c.moe = FQ_MOE_LAYOUT_MASKED; c.experts = 5; c.rows = 5 * 600; c.cols = 1536;
      c.scheme = FQ_SCHEME_PER_TENSOR_DYNAMIC; cases.push_back(c); }

    // Every entry of the activation and scale-layout lists (src/common/enum_lists.h; with FQ_TEST_EXTENSIONS the
    // test-only ones of CONTRIBUTING.md too): each activation ungated and gated, per-group and MXFP8; each layout
    // under MXFP8 rowwise, rowwise + columnwise and MoE, and under fp32 per-group scales where it holds them.
    for (int32_t act : kListedActivations)
        for (int32_t gate : {FQ_GATE_LAYOUT_NONE, FQ_GATE_LAYOUT_SPLIT, FQ_GATE_LAYOUT_INTERLEAVED}) {
            if (act == FQ_ACTIVATION_SWIGLU_OAI && gate == FQ_GATE_LAYOUT_NONE) continue;  // gated only
            { Case c; c.act = act; c.gate = gate; c.rows = 33; c.cols = 512; cases.push_back(c); }
            { Case c; c.act = act; c.gate = gate; c.rows = 33; c.cols = 192; c.group = 32; c.rounding = 2; c.prob = true; cases.push_back(c); }
            { Case c; c.act = act; c.gate = gate; c.scheme = FQ_SCHEME_MXFP8; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; cases.push_back(c); }
        }
    for (int32_t layout : kListedScaleLayouts) {
        { Case c; c.scheme = FQ_SCHEME_MXFP8; c.layout = layout; c.rows = 130; c.cols = 224; cases.push_back(c); }
        { Case c; c.scheme = FQ_SCHEME_MXFP8; c.layout = layout; c.rows = 70; c.cols = 224; c.outputs = 3; cases.push_back(c); }
        { Case c; c.scheme = FQ_SCHEME_MXFP8; c.layout = layout; c.moe = FQ_MOE_LAYOUT_MASKED; c.experts = 3; c.rows = 3 * 40;
          cases.push_back(c); }
        if (layout_holds_fp32(layout)) { Case c; c.layout = layout; c.rows = 130; c.cols = 448; c.group = 64; cases.push_back(c); }
    }

    // docs/spec.md's edges (issue 45): extreme gates (-Inf, -3.39e38 / -65504), NaNs of both signs, a qmax override
    // as the saturation bound, NVFP4 global amaxes that give S_enc = 1; every variant against the host.
    for (int32_t act : {FQ_ACTIVATION_SILU, FQ_ACTIVATION_SWIGLU_OAI, FQ_ACTIVATION_IDENTITY})
        for (int32_t in_type : {FQ_TYPE_BF16, FQ_TYPE_FP16}) {
            Case base;
            base.act = act, base.in_type = in_type, base.extremes = true, base.rows = 33, base.cols = 256;
            base.gate = act == FQ_ACTIVATION_IDENTITY ? FQ_GATE_LAYOUT_NONE : FQ_GATE_LAYOUT_SPLIT;
            { Case c = base; c.group = 32; cases.push_back(c); }
            { Case c = base; c.gate = act == FQ_ACTIVATION_IDENTITY ? c.gate : FQ_GATE_LAYOUT_INTERLEAVED; c.scheme = FQ_SCHEME_PER_TOKEN;
              c.out = FQ_TYPE_FP8_E5M2; cases.push_back(c); }
            { Case c = base; c.scheme = FQ_SCHEME_PER_TENSOR_DYNAMIC; c.out = FQ_TYPE_INT8; cases.push_back(c); }
            { Case c = base; c.scheme = FQ_SCHEME_MXFP8; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; cases.push_back(c); }
            { Case c = base; c.scheme = FQ_SCHEME_NVFP4; c.out = FQ_TYPE_FP4_E2M1; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4;
              cases.push_back(c); }
            { Case c = base; c.group = 32; c.outputs = 3; c.col_block = 32; c.rows = 64; cases.push_back(c); }
            { Case c = base; c.rounding = 2; c.group = 64; c.prob = true; cases.push_back(c); }
        }
    {
        Case q;  // qmax overrides: static scales of 0.125 push |y / s| past every bound
        q.extremes = true, q.qmax = true, q.rows = 33, q.cols = 256;
        { Case c = q; c.scheme = FQ_SCHEME_PER_TENSOR_STATIC; c.out = FQ_TYPE_FP8_E4M3FNUZ; c.qmax_value = 224.0f; cases.push_back(c); }
        { Case c = q; c.scheme = FQ_SCHEME_PER_TENSOR_STATIC; c.qmax_value = 200.0f; cases.push_back(c); }
        { Case c = q; c.scheme = FQ_SCHEME_PER_TENSOR_STATIC; c.out = FQ_TYPE_FP8_E5M2; c.qmax_value = 50000.0f; cases.push_back(c); }
        { Case c = q; c.scheme = FQ_SCHEME_PER_TENSOR_STATIC; c.out = FQ_TYPE_INT8; c.qmax_value = 100.4f; cases.push_back(c); }
        { Case c = q; c.group = 32; c.ub = true; cases.push_back(c); }
        { Case c = q; c.group = 32; c.ub = true; c.outputs = 3; c.col_block = 32; c.rows = 64; cases.push_back(c); }
        { Case c = q; c.scheme = FQ_SCHEME_PER_TENSOR_STATIC; c.outputs = 3; c.col_block = 128; c.rows = 130; cases.push_back(c); }
        { Case c = q; c.scheme = FQ_SCHEME_MXFP8; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; c.qmax_value = 202.0f; cases.push_back(c); }
        { Case c = q; c.scheme = FQ_SCHEME_MXFP4; c.out = FQ_TYPE_FP4_E2M1; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; c.qmax_value = 5.0f;
          cases.push_back(c); }
    }
    for (int32_t g = 1; g <= 5; ++g) {
        Case c;
        c.scheme = FQ_SCHEME_NVFP4, c.out = FQ_TYPE_FP4_E2M1, c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4, c.global_amax = 1;
        c.global_special = g, c.rows = 33, c.cols = 96, c.extremes = g == 1;
        cases.push_back(c);
        c.outputs = 3, c.rows = 34;  // columnwise: an even run of rows for fp4
        cases.push_back(c);
    }

    // Every bf16 gate bit pattern through each transcendental activation, rounding mode and gate arrangement
    // (64 rows x 1024 outputs = 2^16 gates).
    for (int32_t act : {FQ_ACTIVATION_SILU, FQ_ACTIVATION_GELU_ERF, FQ_ACTIVATION_GELU_TANH, FQ_ACTIVATION_SWIGLU_OAI})
        for (int32_t rounding : {0, 1, 2})
            for (int32_t gate : {FQ_GATE_LAYOUT_SPLIT, FQ_GATE_LAYOUT_INTERLEAVED, FQ_GATE_LAYOUT_NONE}) {
                if (act == FQ_ACTIVATION_SWIGLU_OAI && gate == FQ_GATE_LAYOUT_NONE) continue;
                Case c;
                c.act = act, c.rounding = rounding, c.gate = gate, c.order = rounding == 1;
                c.rows = 64, c.cols = 1024, c.every_gate = true, c.prob = rounding == 2;
                if (rounding == 1) c.scheme = FQ_SCHEME_MXFP8, c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4;
                cases.push_back(c);
            }

    // Then a random sample of the whole space.
    auto one = [&](std::initializer_list<int32_t> xs) {
        std::vector<int32_t> v(xs);
        return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
    };
    const char* n_env = std::getenv("FQ_GPU_TEST_RANDOM_CASES");
    const int n_random = n_env ? std::atoi(n_env) : 400;
    for (int i = 0; i < n_random; ++i) {
        Case c;
        c.act = kListedActivations[std::uniform_int_distribution<size_t>(0, std::size(kListedActivations) - 1)(rng)];
        c.gate = c.act == FQ_ACTIVATION_SWIGLU_OAI ? one({1, 2, 3}) : one({0, 1, 2, 3});
        c.swiglu = c.act == FQ_ACTIVATION_SWIGLU_OAI ? one({0, 0, 1, 2, 3}) : 0;
        c.order = one({0, 1});
        c.block = one({32, 64});
        c.rounding = one({0, 1, 2});
        c.scheme = one({0, 1, 2, 3, 3, 3, 5, 5, 6, 7});
        c.group = one({32, 64, 128});
        c.out = one({FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP8_E4M3FNUZ, FQ_TYPE_FP8_E5M2, FQ_TYPE_INT8});
        const bool per_tensor = c.scheme <= 1, mx = microscaling(c);
        c.layout = per_tensor ? 0 : one({0, 1, 2});
        c.pow2 = mx ? 0 : one({0, 1});
        c.e8m0 = c.pow2 && (c.scheme == 2 || c.scheme == 3) ? one({0, 1}) : 0;
        if (mx) {  // docs/spec.md §3.3: fixed blocks and scale types; every layout of byte scales
            c.out = c.scheme == FQ_SCHEME_MXFP8 ? one({FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP8_E5M2}) : FQ_TYPE_FP4_E2M1;
            c.layout = c.scheme == FQ_SCHEME_NVFP4 ? one({0, 1, 2, 3}) : one({0, 1, 2, 3, 4});
            c.mx_floor = c.scheme != FQ_SCHEME_NVFP4 && one({0, 1});
            c.global_amax = c.scheme == FQ_SCHEME_NVFP4 && one({0, 1});
        }
        c.apply = one({0, 1});
        c.in_type = one({FQ_TYPE_BF16, FQ_TYPE_FP16});
        c.ub = !mx && c.out != FQ_TYPE_INT8 && one({0, 0, 1});
        c.prob = one({0, 1});
        c.qmax = !c.mx_floor && c.out != FQ_TYPE_FP4_E2M1 && one({0, 0, 1});
        c.min_scale = !mx && one({0, 0, 1});
        c.rows = one({0, 1, 2, 3, 7, 16, 33, 130});
        c.cols = c.gate == FQ_GATE_LAYOUT_BLOCK_INTERLEAVED ? c.block * one({1, 2, 3, 5})
                                                            : one({8, 32, 64, 96, 128, 136, 192, 200, 1024, 1032, 2056});
        c.in_pad = one({0, 0, 8, 5});
        c.misalign = one({0, 0, 0, 1});
        c.scale_skew = one({0, 0, 0, 4});
        const int kind = one({0, 0, 1, 2, 3});  // plain, MoE rowwise, columnwise, MoE + columnwise
        if (kind == 1 || kind == 3) {
            c.moe = one({FQ_MOE_LAYOUT_CONTIGUOUS, FQ_MOE_LAYOUT_MASKED});
            c.experts = one({1, 3, 8});
            if (c.moe == FQ_MOE_LAYOUT_MASKED) c.rows = c.experts * one({1, 2, 7, 16, 33, 40});
            else c.rows = one({5, 33, 130, 200}), c.slot_counts = one({0, 1});
        }
        if (kind >= 2) {
            c.outputs = one({FQ_OUTPUT_COLUMNWISE, FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE});
            c.col_block = one({32, 128});
            c.transpose = one({0, 1});
            const bool masked = c.moe == FQ_MOE_LAYOUT_MASKED;
            const int64_t run = masked ? c.rows / c.experts : c.rows;
            if (c.out == FQ_TYPE_FP4_E2M1 && c.transpose && run % 2) c.rows = masked ? (run + 1) * c.experts : run + 1;
        }
        cases.push_back(c);
    }
    for (const Case& c : cases) check_case(gpu.h, c, rng, tally);
    MESSAGE(tally.runs, " variant runs compared, ", tally.refused, " (variant, problem) pairs refused by a variant");
    CHECK(tally.runs > int(cases.size()));
    // Per variant (each problem runs under 3 tile rules): what sanitizer logs of this test report per variant.
    std::string table = "per variant: runs compared / refused, over " +
                        std::to_string(cases.size()) + " problems x 3 tile rules";
    for (size_t i = 0; i < tally.per_variant.size(); ++i) {
        char name[256] = "auto (the dispatcher's choice)";
        if (i > 0) REQUIRE(fqGetVariantName(gpu.h, int32_t(i - 1), name, sizeof name) == FQ_STATUS_SUCCESS);
        std::string shown = name;
        shown = shown.substr(0, shown.find(':'));
        const Tally::PerVariant& t = tally.per_variant[i];
        char row[400];
        std::snprintf(row, sizeof row, "\n  %-34s %7d / %7d", shown.c_str(), t.runs, t.refused);
        table += row;
    }
    MESSAGE(table);
}

TEST_CASE("decode and small-prefill shapes on every variant: T 1, 3, 77, partial groups, odd strides, row and column scales, "
          "per-token rows") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(48);
    Tally tally;
    std::vector<Case> cases;
    const int32_t layouts[] = {FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR_TMA};
    for (int64_t rows : {1, 3, 77})
        for (int32_t layout : layouts)
            for (int64_t in_pad : {0, 3}) {  // 3: an odd row stride
                Case c;  // SiLU split, per-group 128: H = 2880 ends in a group of 64
                c.rows = rows, c.cols = 2880, c.layout = layout, c.in_pad = in_pad;
                cases.push_back(c);
                c.group = 32, c.cols = 2884;  // a width that is not a multiple of 8
                cases.push_back(c);
            }
    for (int64_t rows : {1, 3, 77}) {
        Case c;
        c.rows = rows, c.cols = 2880, c.scheme = FQ_SCHEME_MXFP8, c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4;
        cases.push_back(c);
        Case plain = c;
        plain.act = FQ_ACTIVATION_IDENTITY, plain.gate = FQ_GATE_LAYOUT_NONE, plain.layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
        plain.in_pad = 1;
        cases.push_back(plain);
        Case oai = c;
        oai.act = FQ_ACTIVATION_SWIGLU_OAI;
        cases.push_back(oai);
        Case nvfp4 = c;
        nvfp4.scheme = FQ_SCHEME_NVFP4, nvfp4.out = FQ_TYPE_FP4_E2M1, nvfp4.global_amax = 1;
        cases.push_back(nvfp4);
        Case nvfp4_device = nvfp4;  // the global amax reduced on the device first
        nvfp4_device.global_amax = 0, nvfp4_device.layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
        cases.push_back(nvfp4_device);
        Case mxfp4 = c;
        mxfp4.scheme = FQ_SCHEME_MXFP4, mxfp4.out = FQ_TYPE_FP4_E2M1, mxfp4.layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
        cases.push_back(mxfp4);
        Case inter;
        inter.rows = rows, inter.cols = 2880, inter.gate = FQ_GATE_LAYOUT_INTERLEAVED, inter.in_type = FQ_TYPE_FP16;
        inter.prob = true;
        cases.push_back(inter);
        Case blocks;
        blocks.rows = rows, blocks.cols = 1056, blocks.gate = FQ_GATE_LAYOUT_BLOCK_INTERLEAVED;
        blocks.group = 64, blocks.rounding = 1, blocks.misalign = 1;
        cases.push_back(blocks);
        Case int8;
        int8.rows = rows, int8.cols = 2880, int8.scheme = FQ_SCHEME_PER_TENSOR_STATIC, int8.out = FQ_TYPE_INT8;
        cases.push_back(int8);
    }
    // Per-token rows (the cluster kernel below one wave): 3 CTAs with a partial last tile (2880), 7 CTAs of 3
    // tiles with a partial last one (18440, fp16 interleaved with routing probabilities and a scale bound), 8 CTAs
    // of 3 whole tiles (24576), a cluster of one CTA (264); column-major TMA scales pad the rows to 4; an aligned
    // row stride (8 more inputs) and an odd one (3: the element-IO kernel only).
    for (int64_t rows : {1, 3, 77})
        for (int32_t layout : {FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR_TMA})
            for (int64_t in_pad : {0, 8, 3}) {
                Case c;
                c.rows = rows, c.cols = 2880, c.scheme = FQ_SCHEME_PER_TOKEN, c.layout = layout, c.in_pad = in_pad;
                cases.push_back(c);
                Case wide = c;
                wide.cols = 18440, wide.gate = FQ_GATE_LAYOUT_INTERLEAVED, wide.in_type = FQ_TYPE_FP16;
                wide.prob = true, wide.ub = true;
                cases.push_back(wide);
                Case widest = c;
                widest.cols = 24576, widest.act = FQ_ACTIVATION_GELU_TANH, widest.out = FQ_TYPE_FP8_E5M2;
                cases.push_back(widest);
                Case int8 = c;
                int8.cols = 264, int8.act = FQ_ACTIVATION_IDENTITY, int8.gate = FQ_GATE_LAYOUT_NONE, int8.out = FQ_TYPE_INT8;
                int8.qmax = true, int8.min_scale = true;
                cases.push_back(int8);
            }
    for (const Case& c : cases) check_case(gpu.h, c, rng, tally);
    MESSAGE(tally.runs, " variant runs compared, ", tally.refused, " refused");
    CHECK(tally.runs > int(cases.size()));
}

TEST_CASE("sizes past 2^31 elements use 64-bit indexing (last rows checked against the host)") {
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    const int64_t H = 4096, rows = (int64_t(1) << 31) / H + 3;  // 2^31 + 3H outputs
    const size_t in_bytes = size_t(rows * 2 * H) * 2, out_bytes = size_t(rows * H);
    if (free_bytes < in_bytes + out_bytes + (size_t(1) << 30)) {
        MESSAGE("skipped: needs ", (in_bytes + out_bytes) >> 30, " GiB of device memory");
        return;
    }
    Handle gpu(FQ_BACKEND_CUDA, 0);
    Desc d;
    d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
    DeviceBuffer<uint16_t> in(size_t(rows * 2 * H));
    DeviceBuffer<uint8_t> out(out_bytes);
    const size_t sbytes = scale_bytes(d, rows, H);
    DeviceBuffer<uint8_t> scales(sbytes);
    CUDA_OK(cudaMemset(in.p, 0x3F, in_bytes));
    CUDA_OK(cudaMemset(out.p, 0xAB, out_bytes));
    // Random values in the last 4 rows, the ones whose offsets pass 2^31.
    const int64_t tail = 4;
    std::mt19937 rng(99);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<uint16_t> tail_in(size_t(tail * 2 * H));
    for (auto& x : tail_in) x = fq::float_to_bf16(normal(rng));
    CUDA_OK(cudaMemcpy(in.p + (rows - tail) * 2 * H, tail_in.data(), tail_in.size() * 2, cudaMemcpyHostToDevice));
    Layout li(FQ_TYPE_BF16, rows, 2 * H, 2 * H), lo(FQ_TYPE_FP8_E4M3FN, rows, H, H);
    HostRun want(d, tail_in, tail, 2 * H, 2 * H, H);
    REQUIRE(want.status == FQ_STATUS_SUCCESS);
    CUDA_OK(cudaMemset(scales.p, 0xAB, sbytes));
    REQUIRE_MESSAGE(fqQuantize(gpu.h, d.d, li.l, in.p, lo.l, out.p, scales.p, sbytes, nullptr, 0, nullptr) == 0,
                    std::string(fqGetLastErrorMessage()));
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<uint8_t> got(size_t(tail * H)), got_s(size_t(tail * H / 128 * 4));
    CUDA_OK(cudaMemcpy(got.data(), out.p + (rows - tail) * H, got.size(), cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(got_s.data(), scales.p + (rows - tail) * (H / 128) * 4, got_s.size(), cudaMemcpyDeviceToHost));
    CHECK(got == want.out);
    CHECK(got_s == want.scales);
}

TEST_CASE("NaN of either sign encodes to the positive NaN code 0x7F on the device (e4m3fn, e5m2)") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    for (int32_t out : {FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP8_E5M2}) {
        Desc d;
        float s = 1.0f;
        DeviceBuffer<float> d_s(1);
        d_s.upload({s});
        d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out)
            .ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, d_s.p);
        const std::vector<uint16_t> x = {0x7FC0, 0xFFC0, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x0000, 0x8000};
        DeviceBuffer<uint16_t> in(8);
        in.upload(x);
        DeviceBuffer<uint8_t> o(8);
        Layout li(FQ_TYPE_BF16, 1, 8, 8), lo(out, 1, 8, 8);
        REQUIRE(fqQuantize(gpu.h, d.d, li.l, in.p, lo.l, o.p, nullptr, 0, nullptr, 0, nullptr) == 0);
        const auto got = o.download();
        MESSAGE("type ", out, ": NaN -> ", int(got[0]), ", -NaN -> ", int(got[1]));
        CHECK(got[0] == 0x7F);
        CHECK(got[1] == 0x7F);
    }
}

TEST_CASE("every 16-bit input divided by non-power-of-two static scales encodes as on the host (fp8 DIVIDE rule)") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    Handle host;
    std::vector<uint16_t> all(65536);
    for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
    DeviceBuffer<uint16_t> d_in(all.size());
    d_in.upload(all);
    int compared = 0;
    for (int32_t in_type : {FQ_TYPE_BF16, FQ_TYPE_FP16})
        for (int32_t out : {FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP8_E5M2})
            for (float scale : {0.3f, 0.7f, 1.1f, 3.3f, 0.07f, 1e-3f, 123.4f}) {
                CAPTURE(in_type);
                CAPTURE(out);
                CAPTURE(scale);
                DeviceBuffer<float> d_s(1);
                d_s.upload({scale});
                Desc dh, dd;
                dh.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out)
                    .ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, &scale);
                dd.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out)
                    .ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, d_s.p);
                Layout li(in_type, 64, 1024, 1024), lo(out, 64, 1024, 1024);
                std::vector<uint8_t> want(65536);
                REQUIRE(fqQuantize(host.h, dh.d, li.l, all.data(), lo.l, want.data(), nullptr, 0, nullptr, 0, nullptr) == 0);
                DeviceBuffer<uint8_t> d_out(65536);
                CUDA_OK(cudaMemset(d_out.p, 0xAB, 65536));
                REQUIRE(fqQuantize(gpu.h, dd.d, li.l, d_in.p, lo.l, d_out.p, nullptr, 0, nullptr, 0, nullptr) == 0);
                const std::vector<uint8_t> got = d_out.download();
                size_t bad = 0;
                for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
                CHECK_MESSAGE(bad == 0, bad, " codes differ");
                compared += 65536;
            }
    MESSAGE(compared, " encodings compared");
}

namespace {
// Host result of silu-gated per-group quantization of `input` (rows x 2h bf16) under `configure_desc`.
struct Expected {
    std::vector<uint8_t> out, scales;
};
Expected host_result(const std::vector<uint16_t>& input, int64_t rows, int64_t h, int32_t scheme, const float* static_scale) {
    Desc d;
    d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT)
        .i32(FQ_QUANT_DESC_SCHEME, scheme);
    if (scheme == FQ_SCHEME_PER_TENSOR_STATIC) d.ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, static_scale);
    HostRun r(d, input, rows, 2 * h, 2 * h, h);
    REQUIRE(r.status == FQ_STATUS_SUCCESS);
    return {r.out, r.scales};
}

// Finite bf16 values (normal, sigma 2) times `factor`: no Inf or NaN.
std::vector<uint16_t> random_bf16(std::mt19937& rng, size_t n, float factor = 1.0f) {
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<uint16_t> v(n);
    for (auto& x : v) x = fq::float_to_bf16(normal(rng) * factor);
    return v;
}
}  // namespace

TEST_CASE("a captured CUDA graph replays with new data and a new static scale at the same addresses") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    const int64_t rows = 37, h = 1024;
    std::mt19937 rng(5);
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int32_t scheme : {FQ_SCHEME_PER_GROUP, FQ_SCHEME_PER_TENSOR_DYNAMIC, FQ_SCHEME_PER_TENSOR_STATIC, FQ_SCHEME_PER_TOKEN}) {
        CAPTURE(scheme);
        DeviceBuffer<uint16_t> in(size_t(rows * 2 * h));
        DeviceBuffer<float> d_scale(1);
        Desc d;
        d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT)
            .i32(FQ_QUANT_DESC_SCHEME, scheme).ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, d_scale.p);
        const size_t sbytes = scale_bytes(d, rows, h);
        DeviceBuffer<uint8_t> out(size_t(rows * h)), sc(std::max<size_t>(sbytes, 4));
        CUDA_OK(cudaMemset(sc.p, 0, sc.n));  // a static scale writes no scales: keep initcheck's reads defined
        Layout li(FQ_TYPE_BF16, rows, 2 * h, 2 * h), lo(FQ_TYPE_FP8_E4M3FN, rows, h, h);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        const fqStatus_t st = fqQuantize(gpu.h, d.d, li.l, in.p, lo.l, out.p, sc.p, sbytes, nullptr, 0,
                                         reinterpret_cast<fqStream_t>(stream));
        CUDA_OK(cudaStreamEndCapture(stream, &graph));
        REQUIRE_MESSAGE(st == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        for (int replay = 0; replay < 3; ++replay) {
            const std::vector<uint16_t> x = random_bf16(rng, size_t(rows * 2 * h));
            const float s = 0.01f * float(replay + 1);
            in.upload(x);
            d_scale.upload({s});
            CUDA_OK(cudaMemset(out.p, 0xAB, out.n));
            CUDA_OK(cudaDeviceSynchronize());  // the legacy stream's memset before the non-blocking stream's work
            CUDA_OK(cudaGraphLaunch(exec, stream));
            CUDA_OK(cudaStreamSynchronize(stream));
            const Expected want = host_result(x, rows, h, scheme, &s);
            CHECK(out.download() == want.out);
            std::vector<uint8_t> got_scales = sc.download();
            got_scales.resize(want.scales.size());
            CHECK(got_scales == want.scales);
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    cudaStreamDestroy(stream);
}

TEST_CASE("a captured CUDA graph replays MXFP8, NVFP4 (workspace amax), MoE layouts (new offsets / counts) and "
          "columnwise outputs with new data, bit for bit against the host") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(17);
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::vector<std::pair<const char*, Case>> problems;
    { Case c; c.scheme = FQ_SCHEME_MXFP8; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; c.rows = 130; c.cols = 512;
      problems.push_back({"MXFP8, SWIZZLED_128X4", c}); }
    { Case c; c.scheme = FQ_SCHEME_NVFP4; c.out = FQ_TYPE_FP4_E2M1; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; c.rows = 33;
      c.cols = 256; problems.push_back({"NVFP4 without a global amax (amax reduced in the workspace)", c}); }
    { Case c; c.moe = FQ_MOE_LAYOUT_CONTIGUOUS; c.experts = 4; c.rows = 200; c.cols = 256; c.slot_counts = true;
      c.layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA; problems.push_back({"CONTIGUOUS MoE, device offsets and slot counts", c}); }
    { Case c; c.moe = FQ_MOE_LAYOUT_MASKED; c.experts = 3; c.rows = 3 * 40; c.cols = 256;
      problems.push_back({"MASKED MoE, device counts", c}); }
    { Case c; c.moe = FQ_MOE_LAYOUT_MASKED; c.experts = 3; c.rows = 3 * 40; c.cols = 256; c.scheme = FQ_SCHEME_NVFP4;
      c.out = FQ_TYPE_FP4_E2M1; c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4;
      problems.push_back({"MASKED MoE NVFP4, device counts, per-expert amax in the workspace", c}); }
    { Case c; c.outputs = FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE; c.scheme = FQ_SCHEME_MXFP8;
      c.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; c.rows = 130; c.cols = 256;
      problems.push_back({"rowwise + columnwise MXFP8", c}); }
    { Case c; c.outputs = FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE; c.col_block = 128; c.transpose = 1; c.rows = 130;
      c.cols = 256; c.layout = FQ_SCALE_LAYOUT_COL_MAJOR;
      problems.push_back({"rowwise + columnwise per-group 128, transposed", c}); }
    int replays = 0;
    for (const auto& problem : problems) {
        const std::string what = problem.first;
        const Case& c = problem.second;
        CAPTURE(what);
        const int64_t in_cols = 2 * c.cols;
        const bool columnwise = c.outputs & FQ_OUTPUT_COLUMNWISE;
        const size_t n_experts = size_t(std::max(c.experts, 1));
        // Device arrays at fixed addresses; each replay uploads new contents.
        DeviceBuffer<uint16_t> d_in(size_t(c.rows * in_cols));
        DeviceBuffer<float> d_unused(n_experts);  // ub, prob, static scale, global amax: not asked for here
        DeviceBuffer<int32_t> d_offsets(n_experts + 1), d_counts(n_experts);
        Desc dd;
        configure(dd, c, {d_unused.p, d_unused.p, d_unused.p, d_unused.p, d_offsets.p, d_counts.p});
        Layout li(FQ_TYPE_BF16, c.rows, in_cols, in_cols), lo(c.out, c.rows, c.cols, c.cols);
        const size_t out_bytes = size_t(c.rows * c.cols), sbytes = scale_bytes(dd, c.rows, c.cols);
        size_t col_sbytes = 0;
        if (columnwise) REQUIRE(fqGetScaleBufferSize(dd.d, c.rows, c.cols, FQ_OUTPUT_COLUMNWISE, &col_sbytes) == 0);
        DeviceBuffer<uint8_t> d_out(out_bytes), d_scales(sbytes), d_col(columnwise ? out_bytes : 0), d_col_scales(col_sbytes);
        if (columnwise)
            dd.ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, d_col.p).ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, d_col_scales.p);
        size_t workspace = 0;
        REQUIRE_MESSAGE(fqGetWorkspaceSize(gpu.h, dd.d, li.l, lo.l, &workspace) == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
        const bool workspace_amax = c.scheme == FQ_SCHEME_NVFP4 && !c.global_amax;
        CHECK(workspace == (workspace_amax ? 4 * n_experts : 0));  // the workspace path is the one under test
        DeviceBuffer<uint8_t> d_workspace(workspace);

        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        const fqStatus_t st = fqQuantize(gpu.h, dd.d, li.l, d_in.p, lo.l, d_out.p, d_scales.p, sbytes,
                                         workspace ? d_workspace.p : nullptr, workspace, reinterpret_cast<fqStream_t>(stream));
        const std::string message = fqGetLastErrorMessage();
        CUDA_OK(cudaStreamEndCapture(stream, &graph));
        REQUIRE_MESSAGE(st == FQ_STATUS_SUCCESS, message);
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));

        // The host reference of a replay's data under the given offsets and counts (and, for NVFP4, a given
        // global amax per expert instead of the computed one), outputs poisoned as the device's are.
        struct Want {
            std::vector<uint8_t> out, scales, col, col_scales;
            bool operator==(const Want& o) const { return out == o.out && scales == o.scales && col == o.col && col_scales == o.col_scales; }
        };
        auto reference = [&](const std::vector<uint16_t>& x, const std::vector<int32_t>& offsets,
                             const std::vector<int32_t>& counts, const float* global_amax) {
            Case ch = c;
            ch.global_amax = global_amax != nullptr;
            const std::vector<float> zeros(n_experts, 0.0f);
            Desc dh;
            configure(dh, ch, {zeros.data(), zeros.data(), zeros.data(), global_amax, offsets.data(), counts.data()});
            Want w{std::vector<uint8_t>(out_bytes, 0xAB), std::vector<uint8_t>(sbytes, 0xAB),
                   std::vector<uint8_t>(columnwise ? out_bytes : 0, 0xAB), std::vector<uint8_t>(col_sbytes, 0xAB)};
            if (columnwise)
                dh.ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, w.col.data()).ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, w.col_scales.data());
            Handle host;
            REQUIRE_MESSAGE(fqQuantize(host.h, dh.d, li.l, x.data(), lo.l, w.out.data(), w.scales.data(), sbytes, nullptr, 0,
                                       nullptr) == FQ_STATUS_SUCCESS,
                            std::string(fqGetLastErrorMessage()));
            return w;
        };

        // Large values first, then small: a replay that kept the previous replay's amax (workspace, dynamic
        // scales) or offsets / counts would differ from the host reference of its own data (checked below:
        // the previous replay's offsets, counts or amax give other bytes).
        std::vector<int32_t> prev_offsets, prev_counts;
        std::vector<float> prev_amax;
        for (const float factor : {64.0f, 1.0f / 64, 1.0f}) {
            CAPTURE(factor);
            const std::vector<uint16_t> x = random_bf16(rng, size_t(c.rows * in_cols), factor);
            std::vector<int32_t> offsets, counts;
            // New expert rows every replay: CONTIGUOUS offsets, MASKED counts.
            auto changed = [&] {
                return c.moe == FQ_MOE_LAYOUT_NONE || (c.moe == FQ_MOE_LAYOUT_CONTIGUOUS ? offsets != prev_offsets : counts != prev_counts);
            };
            for (int attempt = 0; attempt < 100; ++attempt) {
                random_moe(rng, c, offsets, counts);
                if (changed()) break;
            }
            REQUIRE(changed());
            d_in.upload(x);
            d_offsets.upload(offsets);
            d_counts.upload(counts);
            for (auto* b : {&d_out, &d_scales, &d_col, &d_col_scales}) CUDA_OK(cudaMemset(b->p, 0xAB, std::max<size_t>(b->n, 1)));
            // cudaMemset runs on the legacy stream, which a non-blocking stream does not wait for.
            CUDA_OK(cudaDeviceSynchronize());
            CUDA_OK(cudaGraphLaunch(exec, stream));
            CUDA_OK(cudaStreamSynchronize(stream));

            const Want want = reference(x, offsets, counts, nullptr);
            std::string diff = byte_diff(d_out.download(), want.out);
            CHECK_MESSAGE(diff.empty(), "values: ", diff);
            diff = byte_diff(d_scales.download(), want.scales);
            CHECK_MESSAGE(diff.empty(), "scales: ", diff);
            if (columnwise) {
                diff = byte_diff(d_col.download(), want.col);
                CHECK_MESSAGE(diff.empty(), "columnwise values: ", diff);
                diff = byte_diff(d_col_scales.download(), want.col_scales);
                CHECK_MESSAGE(diff.empty(), "columnwise scales: ", diff);
            }
            if (c.moe != FQ_MOE_LAYOUT_NONE && !prev_offsets.empty())
                CHECK_MESSAGE(!(reference(x, prev_offsets, prev_counts, nullptr) == want),
                              "the previous replay's offsets / counts give the same bytes: stale ones would go unseen");
            if (workspace_amax) {  // the workspace holds each expert's amax after the call (fqGetWorkspaceSize)
                std::vector<float> amax(n_experts);
                CUDA_OK(cudaMemcpy(amax.data(), d_workspace.p, workspace, cudaMemcpyDeviceToHost));
                CHECK_MESSAGE(reference(x, offsets, counts, amax.data()) == want,
                              "the workspace does not hold the global amax the values were scaled by");
                if (!prev_amax.empty())
                    CHECK_MESSAGE(!(reference(x, offsets, counts, prev_amax.data()) == want),
                                  "the previous replay's amax gives the same bytes: a stale one would go unseen");
                prev_amax = amax;
            }
            prev_offsets = offsets;
            prev_counts = counts;
            ++replays;
        }
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaGraphDestroy(graph));
    }
    CUDA_OK(cudaStreamDestroy(stream));
    MESSAGE(replays, " graph replays compared over ", problems.size(), " captured problems");
    CHECK(replays == 3 * int(problems.size()));
}

TEST_CASE("one handle used from several host threads on their own streams gives the host's bytes, run after run "
          "(two descriptors shared by the threads: per-group fp32 and MXFP8 swizzled)") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    const int64_t rows = 64, h = 2048;
    constexpr int kThreads = 4, kRuns = 6, kDescs = 2;
    // Two descriptors, shared and read-only while the threads run; each thread alternates between them, so
    // both are in use on several threads at once.
    Desc group, mx;
    group.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
    mx.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT)
        .i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8).i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0)
        .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4);
    const Desc* descs[kDescs] = {&group, &mx};
    const char* desc_names[kDescs] = {"per-group 128 fp32 row-major", "MXFP8 SWIZZLED_128X4"};
    size_t sbytes[kDescs];
    for (int k = 0; k < kDescs; ++k) sbytes[k] = scale_bytes(*descs[k], rows, h);
    CHECK(sbytes[1] == size_t(128 * (h / 32)));  // 64 rows padded to one 128-row block of the swizzled layout
    std::vector<std::vector<uint16_t>> inputs;
    std::vector<std::vector<Expected>> wants(kThreads);  // [thread][descriptor]
    std::mt19937 rng(9);
    for (int t = 0; t < kThreads; ++t) {
        inputs.push_back(random_bf16(rng, size_t(rows * 2 * h)));
        for (int k = 0; k < kDescs; ++k) {
            HostRun r(*descs[k], inputs.back(), rows, 2 * h, 2 * h, h);
            REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
            wants[t].push_back({r.out, r.scales});
        }
    }
    // Every CUDA call and every fq status is checked in the threads; failures are collected (a REQUIRE would
    // throw on a thread that doctest does not run) and asserted here.
    std::vector<std::vector<std::string>> errors(kThreads);
    std::vector<int> compared(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            std::vector<std::string>& err = errors[size_t(t)];
            auto cuda = [&](cudaError_t e, const char* what) {
                if (e != cudaSuccess) err.push_back(std::string(what) + ": " + cudaGetErrorString(e));
                return e == cudaSuccess;
            };
            auto fq_ok = [&](fqStatus_t s, const char* what) {
                if (s != FQ_STATUS_SUCCESS)
                    err.push_back(std::string(what) + ": " + fqGetStatusString(s) + " " + fqGetLastErrorMessage());
                return s == FQ_STATUS_SUCCESS;
            };
            cudaStream_t stream = nullptr;
            uint16_t* in = nullptr;
            uint8_t *out = nullptr, *sc = nullptr;
            fqTensorLayout_t li = nullptr, lo = nullptr;
            const size_t out_bytes = size_t(rows * h), scale_capacity = std::max(sbytes[0], sbytes[1]);
            bool ready = cuda(cudaSetDevice(0), "cudaSetDevice") &&
                         cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags") &&
                         cuda(cudaMalloc(&in, inputs[size_t(t)].size() * 2), "cudaMalloc(input)") &&
                         cuda(cudaMalloc(&out, out_bytes), "cudaMalloc(output)") &&
                         cuda(cudaMalloc(&sc, scale_capacity), "cudaMalloc(scales)") &&
                         cuda(cudaMemcpy(in, inputs[size_t(t)].data(), inputs[size_t(t)].size() * 2, cudaMemcpyHostToDevice),
                              "cudaMemcpy(input)") &&
                         fq_ok(fqTensorLayoutCreate(&li, FQ_TYPE_BF16, rows, 2 * h, 2 * h), "fqTensorLayoutCreate(input)") &&
                         fq_ok(fqTensorLayoutCreate(&lo, FQ_TYPE_FP8_E4M3FN, rows, h, h), "fqTensorLayoutCreate(output)");
            for (int r = 0; ready && r < kRuns; ++r) {
                const int k = (t + r) % kDescs;  // threads t and t + 1 use different descriptors at each step
                const std::string run = "run " + std::to_string(r) + " (" + desc_names[k] + ")";
                std::vector<uint8_t> got(out_bytes), got_s(sbytes[k]);
                if (!cuda(cudaMemsetAsync(out, 0xAB, out_bytes, stream), "cudaMemsetAsync(output)") ||
                    !cuda(cudaMemsetAsync(sc, 0xAB, scale_capacity, stream), "cudaMemsetAsync(scales)") ||
                    !fq_ok(fqQuantize(gpu.h, descs[k]->d, li, in, lo, out, sc, sbytes[k], nullptr, 0,
                                      reinterpret_cast<fqStream_t>(stream)), ("fqQuantize, " + run).c_str()) ||
                    !cuda(cudaMemcpyAsync(got.data(), out, got.size(), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync(output)") ||
                    !cuda(cudaMemcpyAsync(got_s.data(), sc, got_s.size(), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync(scales)") ||
                    !cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize"))
                    break;
                if (got != wants[size_t(t)][size_t(k)].out) err.push_back(run + ": values differ from the host's");
                if (got_s != wants[size_t(t)][size_t(k)].scales) err.push_back(run + ": scales differ from the host's");
                ++compared[size_t(t)];
            }
            if (lo) fq_ok(fqTensorLayoutDestroy(lo), "fqTensorLayoutDestroy(output)");
            if (li) fq_ok(fqTensorLayoutDestroy(li), "fqTensorLayoutDestroy(input)");
            if (in) cuda(cudaFree(in), "cudaFree(input)");
            if (out) cuda(cudaFree(out), "cudaFree(output)");
            if (sc) cuda(cudaFree(sc), "cudaFree(scales)");
            if (stream) cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
        });
    for (auto& th : threads) th.join();
    int total = 0;
    for (int t = 0; t < kThreads; ++t) {
        std::string all;
        for (const std::string& e : errors[size_t(t)]) all += "\n  " + e;
        CHECK_MESSAGE(errors[size_t(t)].empty(), "thread ", t, ":", all);
        CHECK_MESSAGE(compared[size_t(t)] == kRuns, "thread ", t, " compared ", compared[size_t(t)], " of ", kRuns, " runs");
        total += compared[size_t(t)];
    }
    MESSAGE(total, " runs compared over ", kThreads, " threads and ", kDescs, " shared descriptors");
}

namespace {
// ---- Bad input only a CUDA handle can see (src/api/api.cpp): host pointers, the workspace, variants. ----

constexpr uint8_t kGuardByte = 0xE7, kPoisonByte = 0x5A;
constexpr size_t kGuardSpan = 256;  // keeps the buffer as aligned as cudaMalloc's own

// A device output of n bytes with guard bytes on both sides, poisoned inside.
struct GuardedDevice {
    size_t n;
    DeviceBuffer<uint8_t> mem;
    explicit GuardedDevice(size_t bytes) : n(bytes), mem(bytes + 2 * kGuardSpan) { reset(); }
    uint8_t* p() const { return mem.p + kGuardSpan; }
    std::vector<uint8_t> pristine() const {
        std::vector<uint8_t> v(mem.n, kGuardByte);
        std::fill_n(v.begin() + std::ptrdiff_t(kGuardSpan), n, kPoisonByte);
        return v;
    }
    void reset() { mem.upload(pristine()); }
    bool unchanged() const { return mem.download() == pristine(); }
    bool guards_intact() const {
        const std::vector<uint8_t> v = mem.download();
        for (size_t i = 0; i < v.size(); ++i)
            if ((i < kGuardSpan || i >= kGuardSpan + n) && v[i] != kGuardByte) return false;
        return true;
    }
};

// The problem configurations the cases spoil (silu, split gate, bf16 [4, 128] -> [4, 64]).
enum class Cfg {
    PerGroup,          // per-group 32, fp32 row-major scales
    Static,            // per-tensor static: STATIC_SCALE_POINTER
    Ub,                // per-group 32 with SCALE_UB_POINTER
    Prob,              // per-group 32 with ROW_PROB_POINTER
    Nvfp4Amax,         // NVFP4 with GLOBAL_AMAX_POINTER: no workspace
    Nvfp4,             // NVFP4 without: 4 bytes of workspace
    Contiguous,        // CONTIGUOUS MoE, 2 experts: MOE_OFFSETS_POINTER
    ContiguousCounts,  // ... and slot counts: MOE_COUNTS_POINTER
    Masked,            // MASKED MoE, 2 experts of 2 rows: MOE_COUNTS_POINTER
    MaskedNvfp4,       // MASKED NVFP4 without a global amax: 8 bytes of workspace (one word per expert)
    ColFp32,           // rowwise + columnwise per-group: fp32 COLUMNWISE_SCALE_POINTER
    ColMx,             // rowwise + columnwise MXFP8: E8M0 COLUMNWISE_SCALE_POINTER
};
bool nvfp4(Cfg c) { return c == Cfg::Nvfp4Amax || c == Cfg::Nvfp4 || c == Cfg::MaskedNvfp4; }
const char* cfg_name(Cfg c) {
    switch (c) {
        case Cfg::PerGroup: return "per-group 32";
        case Cfg::Static: return "per-tensor static";
        case Cfg::Ub: return "per-group 32 with a scale upper bound";
        case Cfg::Prob: return "per-group 32 with row probabilities";
        case Cfg::Nvfp4Amax: return "NVFP4 with a global amax";
        case Cfg::Nvfp4: return "NVFP4, workspace amax";
        case Cfg::Contiguous: return "CONTIGUOUS MoE";
        case Cfg::ContiguousCounts: return "CONTIGUOUS MoE with slot counts";
        case Cfg::Masked: return "MASKED MoE";
        case Cfg::MaskedNvfp4: return "MASKED MoE NVFP4, workspace amaxes";
        case Cfg::ColFp32: return "rowwise + columnwise per-group";
        case Cfg::ColMx: return "rowwise + columnwise MXFP8";
    }
    return "?";
}

struct BadWorld {
    static constexpr int64_t kRows = 4, kCols = 64;
    Handle gpu{FQ_BACKEND_CUDA, 0};
    DeviceBuffer<uint16_t> x{size_t(kRows * 2 * kCols)};
    DeviceBuffer<float> floats{8};  // static scales, ub, prob, global amaxes: 0.5 each
    DeviceBuffer<int32_t> offsets{3}, counts{2};
    GuardedDevice values{size_t(kRows * kCols)}, scales{512}, col_values{size_t(kRows * kCols)}, col_scales{size_t(kCols * 4)};
    GuardedDevice workspace{16}, repacked{1024};
    DeviceBuffer<uint8_t> repack_src{24};
    DeviceBuffer<int32_t> repack_offsets{3};
    // Pageable host memory (16-byte aligned, poisoned): what a CUDA handle must refuse. Also pinned host memory,
    // which the device addresses.
    std::vector<uint32_t> host = std::vector<uint32_t>(1024, 0x5A5A5A5Au);
    void* pinned = nullptr;

    BadWorld() {
        REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
        x.upload(std::vector<uint16_t>(x.n, 0x3F80));  // 1.0
        floats.upload(std::vector<float>(floats.n, 0.5f));
        offsets.upload({0, 2, 4});
        counts.upload({1, 1});
        repack_src.upload(std::vector<uint8_t>(24, 0x11));
        repack_offsets.upload({0, 1, 3});
        CUDA_OK(cudaMallocHost(&pinned, 4096));
        std::vector<uint16_t> ones(size_t(kRows * 2 * kCols), 0x3F80);
        std::memcpy(pinned, ones.data(), ones.size() * 2);
    }
    ~BadWorld() { cudaFreeHost(pinned); }
    void* h() { return host.data(); }
    std::vector<GuardedDevice*> outputs() { return {&values, &scales, &col_values, &col_scales, &workspace, &repacked}; }
};

// Every pointer fqQuantize reads or writes, valid (device memory) unless a case spoils one.
struct QPtrs {
    const void* input;
    void *output, *scales;
    const void *static_scale, *ub, *prob, *global_amax, *offsets, *counts;
    void *col_output, *col_scales, *workspace;
    size_t workspace_bytes;
};

struct Outcome {
    fqStatus_t status;
    std::string message;  // fqGetLastErrorMessage() right after the call
};
Outcome outcome(fqStatus_t s) { return {s, fqGetLastErrorMessage()}; }

Outcome quantize(BadWorld& w, Cfg cfg, const std::function<void(BadWorld&, QPtrs&)>& spoil) {
    const bool moe2 = cfg == Cfg::Contiguous || cfg == Cfg::ContiguousCounts || cfg == Cfg::Masked || cfg == Cfg::MaskedNvfp4;
    const size_t ws = cfg == Cfg::Nvfp4 ? 4 : cfg == Cfg::MaskedNvfp4 ? 8 : 0;
    QPtrs a{w.x.p, w.values.p(), w.scales.p(), w.floats.p, w.floats.p, w.floats.p, w.floats.p, w.offsets.p, w.counts.p,
            w.col_values.p(), w.col_scales.p(), ws ? w.workspace.p() : nullptr, ws};
    if (spoil) spoil(w, a);
    Desc d;
    d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
    const int32_t out_type = nvfp4(cfg) ? FQ_TYPE_FP4_E2M1 : FQ_TYPE_FP8_E4M3FN;
    if (nvfp4(cfg))
        d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out_type)
            .i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN);
    else if (cfg == Cfg::ColMx)
        d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8).i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
    else if (cfg == Cfg::Static)
        d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC).ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, a.static_scale);
    else
        d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
    if (cfg == Cfg::Ub) d.ptr(FQ_QUANT_DESC_SCALE_UB_POINTER, a.ub);
    if (cfg == Cfg::Prob) d.ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, a.prob);
    if (cfg == Cfg::Nvfp4Amax) d.ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, a.global_amax);
    if (moe2) {
        const bool masked = cfg == Cfg::Masked || cfg == Cfg::MaskedNvfp4;
        d.i32(FQ_QUANT_DESC_MOE_LAYOUT, masked ? FQ_MOE_LAYOUT_MASKED : FQ_MOE_LAYOUT_CONTIGUOUS).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2);
        if (!masked) d.ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, a.offsets);
        if (masked || cfg == Cfg::ContiguousCounts) d.ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, a.counts);
    }
    if (cfg == Cfg::ColFp32 || cfg == Cfg::ColMx)
        d.i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE)
            .ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, a.col_output).ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, a.col_scales);
    Layout li(FQ_TYPE_BF16, BadWorld::kRows, 2 * BadWorld::kCols, 2 * BadWorld::kCols),
        lo(out_type, BadWorld::kRows, BadWorld::kCols, BadWorld::kCols);
    const size_t sbytes = scale_bytes(d, BadWorld::kRows, BadWorld::kCols);
    REQUIRE(sbytes <= w.scales.n);
    if (cfg == Cfg::ColFp32 || cfg == Cfg::ColMx) {
        size_t col_sbytes = 0;
        REQUIRE(fqGetScaleBufferSize(d.d, BadWorld::kRows, BadWorld::kCols, FQ_OUTPUT_COLUMNWISE, &col_sbytes) == FQ_STATUS_SUCCESS);
        REQUIRE(col_sbytes <= w.col_scales.n);
    }
    // The workspace each configuration is said to need (a pinned variant that refuses the problem has none).
    size_t need = 0;
    const fqStatus_t ws_status = fqGetWorkspaceSize(w.gpu.h, d.d, li.l, lo.l, &need);
    REQUIRE_MESSAGE((ws_status == FQ_STATUS_SUCCESS || ws_status == FQ_STATUS_NOT_SUPPORTED), std::string(fqGetLastErrorMessage()));
    if (ws_status == FQ_STATUS_SUCCESS) REQUIRE(need == ws);
    return outcome(fqQuantize(w.gpu.h, d.d, li.l, a.input, lo.l, a.output, a.scales, sbytes, a.workspace, a.workspace_bytes, nullptr));
}

struct BadCase {
    std::string fn, arg, how;
    fqStatus_t want;
    std::string names;  // the message must contain it (failures)
    std::function<Outcome(BadWorld&)> call;
};
}  // namespace

TEST_CASE("bad input a CUDA handle refuses: host pointers, the workspace, variant indices; nothing written") {
    BadWorld w;
    int32_t n_variants = 0;
    REQUIRE(fqGetVariantCount(w.gpu.h, &n_variants) == FQ_STATUS_SUCCESS);
    REQUIRE(n_variants > 0);
    constexpr fqStatus_t OK = FQ_STATUS_SUCCESS, INVALID = FQ_STATUS_INVALID_VALUE, NULLP = FQ_STATUS_NULL_POINTER,
                         MISALIGNED = FQ_STATUS_MISALIGNED, WORKSPACE = FQ_STATUS_INSUFFICIENT_WORKSPACE,
                         UNSUPPORTED = FQ_STATUS_NOT_SUPPORTED;
    std::vector<BadCase> cases;
    using Spoil = std::function<void(BadWorld&, QPtrs&)>;
    auto q = [&cases](std::string arg, std::string how, fqStatus_t want, std::string names, Cfg cfg, Spoil spoil) {
        cases.push_back({"fqQuantize", std::move(arg), std::move(how), want, std::move(names),
                         [cfg, spoil](BadWorld& w) { return quantize(w, cfg, spoil); }});
    };
    const Spoil none;
    // Each configuration runs as given (control), then with one pointer in pageable host memory.
    const struct { Cfg cfg; const char* arg; Spoil spoil; } host_pointers[] = {
        {Cfg::PerGroup, "input", [](BadWorld& w, QPtrs& a) { a.input = w.h(); }},
        {Cfg::PerGroup, "output", [](BadWorld& w, QPtrs& a) { a.output = w.h(); }},
        {Cfg::PerGroup, "scales", [](BadWorld& w, QPtrs& a) { a.scales = w.h(); }},
        {Cfg::Static, "FQ_QUANT_DESC_STATIC_SCALE_POINTER", [](BadWorld& w, QPtrs& a) { a.static_scale = w.h(); }},
        {Cfg::Ub, "FQ_QUANT_DESC_SCALE_UB_POINTER", [](BadWorld& w, QPtrs& a) { a.ub = w.h(); }},
        {Cfg::Prob, "FQ_QUANT_DESC_ROW_PROB_POINTER", [](BadWorld& w, QPtrs& a) { a.prob = w.h(); }},
        {Cfg::Nvfp4Amax, "FQ_QUANT_DESC_GLOBAL_AMAX_POINTER", [](BadWorld& w, QPtrs& a) { a.global_amax = w.h(); }},
        {Cfg::Contiguous, "FQ_QUANT_DESC_MOE_OFFSETS_POINTER", [](BadWorld& w, QPtrs& a) { a.offsets = w.h(); }},
        {Cfg::ContiguousCounts, "FQ_QUANT_DESC_MOE_COUNTS_POINTER", [](BadWorld& w, QPtrs& a) { a.counts = w.h(); }},
        {Cfg::Masked, "FQ_QUANT_DESC_MOE_COUNTS_POINTER", [](BadWorld& w, QPtrs& a) { a.counts = w.h(); }},
        {Cfg::ColFp32, "FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER", [](BadWorld& w, QPtrs& a) { a.col_output = w.h(); }},
        {Cfg::ColFp32, "FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER", [](BadWorld& w, QPtrs& a) { a.col_scales = w.h(); }},
        {Cfg::ColMx, "FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER", [](BadWorld& w, QPtrs& a) { a.col_scales = w.h(); }},
        {Cfg::ColMx, "FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER", [](BadWorld& w, QPtrs& a) { a.col_output = w.h(); }},
    };
    std::vector<Cfg> controlled;
    for (const auto& k : host_pointers) {
        const std::string cfg = cfg_name(k.cfg);
        if (std::find(controlled.begin(), controlled.end(), k.cfg) == controlled.end()) {
            controlled.push_back(k.cfg);
            q(k.arg, cfg + ", every pointer in device memory (control)", OK, "", k.cfg, none);
        }
        q(k.arg, "pageable host memory (" + cfg + ")", INVALID, std::string(k.arg) + ":", k.cfg, k.spoil);
    }
    q("input", "pinned host memory (allowed: the device addresses it)", OK, "", Cfg::PerGroup,
      [](BadWorld& w, QPtrs& a) { a.input = w.pinned; });
    q("input", "pageable host memory with MASKED counts (the first pointer refused is named)", INVALID, "input:", Cfg::Masked,
      [](BadWorld& w, QPtrs& a) { a.input = w.h(); });

    // The workspace: NVFP4 without a global amax reduces it there (4 bytes, 8 for two MASKED experts).
    q("workspace", "NVFP4, 4 device bytes (control)", OK, "", Cfg::Nvfp4, none);
    q("workspace", "MASKED NVFP4, 8 device bytes (control)", OK, "", Cfg::MaskedNvfp4, none);
    q("workspaceSizeInBytes", "SIZE_MAX (more than needed: allowed)", OK, "", Cfg::Nvfp4,
      [](BadWorld&, QPtrs& a) { a.workspace_bytes = SIZE_MAX; });
    q("workspace", "pageable host memory where none is needed (allowed: unused)", OK, "", Cfg::Nvfp4Amax,
      [](BadWorld& w, QPtrs& a) { a.workspace = w.h(); a.workspace_bytes = 4; });
    q("workspaceSizeInBytes", "0 with a NULL workspace, 4 needed", WORKSPACE, "workspaceSizeInBytes:", Cfg::Nvfp4,
      [](BadWorld&, QPtrs& a) { a.workspace = nullptr; a.workspace_bytes = 0; });
    for (size_t bytes : {size_t(1), size_t(3)})
        q("workspaceSizeInBytes", std::to_string(bytes) + " bytes, 4 needed", WORKSPACE, "workspaceSizeInBytes:", Cfg::Nvfp4,
          [bytes](BadWorld&, QPtrs& a) { a.workspace_bytes = bytes; });
    q("workspaceSizeInBytes", "MASKED NVFP4: 4 bytes, 8 needed (one word per expert)", WORKSPACE, "workspaceSizeInBytes:",
      Cfg::MaskedNvfp4, [](BadWorld&, QPtrs& a) { a.workspace_bytes = 4; });
    q("workspace", "NULL with 4 bytes declared", NULLP, "workspace:", Cfg::Nvfp4, [](BadWorld&, QPtrs& a) { a.workspace = nullptr; });
    for (size_t off : {size_t(1), size_t(2), size_t(3)})
        q("workspace", "device memory at +" + std::to_string(off) + " (an fp32 amax)", MISALIGNED, "workspace:", Cfg::Nvfp4,
          [off](BadWorld& w, QPtrs& a) { a.workspace = w.workspace.p() + off; });
    q("workspace", "pageable host memory", INVALID, "workspace:", Cfg::Nvfp4, [](BadWorld& w, QPtrs& a) { a.workspace = w.h(); });
    q("workspace", "pageable host memory, MASKED NVFP4", INVALID, "workspace:", Cfg::MaskedNvfp4,
      [](BadWorld& w, QPtrs& a) { a.workspace = w.h(); });

    // Variants: FQ_HANDLE_VARIANT and fqGetVariantName's index past the CUDA handle's variants; a pinned
    // variant that refuses the problem.
    const int32_t pinned_before = n_variants - 1;  // a valid pin the refused settings must leave in place
    for (int32_t v : {n_variants, n_variants + 1, int32_t(1) << 20, (int32_t(1) << 20) + 1, -2, INT32_MIN, INT32_MAX})
        cases.push_back({"fqHandleSetAttribute", "buf", "FQ_HANDLE_VARIANT = " + std::to_string(v) + " of " +
                         std::to_string(n_variants) + " variants", INVALID, "FQ_HANDLE_VARIANT", [v, pinned_before](BadWorld& w) {
                             REQUIRE(fqHandleSetAttribute(w.gpu.h, FQ_HANDLE_VARIANT, &pinned_before, 4) == FQ_STATUS_SUCCESS);
                             const Outcome o = outcome(fqHandleSetAttribute(w.gpu.h, FQ_HANDLE_VARIANT, &v, 4));
                             int32_t now = -7;
                             size_t written = 0;
                             REQUIRE(fqHandleGetAttribute(w.gpu.h, FQ_HANDLE_VARIANT, &now, 4, &written) == FQ_STATUS_SUCCESS);
                             const int32_t automatic = -1;
                             REQUIRE(fqHandleSetAttribute(w.gpu.h, FQ_HANDLE_VARIANT, &automatic, 4) == FQ_STATUS_SUCCESS);
                             CHECK_MESSAGE(now == pinned_before, "a refused FQ_HANDLE_VARIANT changed the handle");
                             return o;
                         }});
    for (int32_t i : {n_variants, n_variants + 1, -1, INT32_MIN, INT32_MAX})
        cases.push_back({"fqGetVariantName", "index", std::to_string(i) + " of " + std::to_string(n_variants) + " variants",
                         INVALID, "index:", [i](BadWorld& w) {
                             char name[64];
                             std::memset(name, 0x5A, sizeof name);
                             const Outcome o = outcome(fqGetVariantName(w.gpu.h, i, name, sizeof name));
                             CHECK_MESSAGE(std::all_of(name, name + sizeof name, [](char ch) { return ch == 0x5A; }),
                                           "a refused fqGetVariantName wrote its name");
                             return o;
                         }});
    int32_t refusing = -1;  // a variant that does not run the per-group problem (the BLOCK_2D one, say)
    {
        Desc d;
        d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT)
            .i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
        Layout li(FQ_TYPE_BF16, BadWorld::kRows, 2 * BadWorld::kCols, 2 * BadWorld::kCols),
            lo(FQ_TYPE_FP8_E4M3FN, BadWorld::kRows, BadWorld::kCols, BadWorld::kCols);
        for (int32_t v = 0; v < n_variants && refusing < 0; ++v) {
            REQUIRE(fqHandleSetAttribute(w.gpu.h, FQ_HANDLE_VARIANT, &v, 4) == FQ_STATUS_SUCCESS);
            if (fqQuerySupport(w.gpu.h, d.d, li.l, lo.l, nullptr, 0) == FQ_STATUS_NOT_SUPPORTED) refusing = v;
        }
        const int32_t automatic = -1;
        REQUIRE(fqHandleSetAttribute(w.gpu.h, FQ_HANDLE_VARIANT, &automatic, 4) == FQ_STATUS_SUCCESS);
    }
    CHECK_MESSAGE(refusing >= 0, "no variant of this CUDA handle refuses per-group 32 (expected the BLOCK_2D one)");
    if (refusing >= 0)
        cases.push_back({"fqQuantize", "handle", "FQ_HANDLE_VARIANT pinned to " + std::to_string(refusing) +
                         ", which refuses the problem", UNSUPPORTED, "FQ_HANDLE_VARIANT", [refusing](BadWorld& w) {
                             REQUIRE(fqHandleSetAttribute(w.gpu.h, FQ_HANDLE_VARIANT, &refusing, 4) == FQ_STATUS_SUCCESS);
                             const Outcome o = quantize(w, Cfg::PerGroup, nullptr);
                             const int32_t automatic = -1;
                             REQUIRE(fqHandleSetAttribute(w.gpu.h, FQ_HANDLE_VARIANT, &automatic, 4) == FQ_STATUS_SUCCESS);
                             return o;
                         }});

    // fqScaleRepack on a CUDA handle: 2 blocks of 4 x 3 E8M0 scales, ROW_MAJOR (24 bytes) -> SWIZZLED_128X4
    // (1024 bytes); stacked: 3 rows with device row offsets.
    auto r = [&cases](std::string arg, std::string how, fqStatus_t want, std::string names, bool stacked,
                      std::function<void(BadWorld&, const void*&, void*&, const int32_t*&)> spoil) {
        cases.push_back({"fqScaleRepack", std::move(arg), std::move(how), want, std::move(names), [=](BadWorld& w) {
                             const void* src = w.repack_src.p;
                             void* dst = w.repacked.p();
                             const int32_t* offsets = stacked ? w.repack_offsets.p : nullptr;
                             if (spoil) spoil(w, src, dst, offsets);
                             return outcome(fqScaleRepack(w.gpu.h, FQ_TYPE_E8M0, 2, 4, 3,
                                                          stacked ? FQ_SCALE_REPACK_STACKED_TO_BLOCKS : FQ_SCALE_REPACK_BLOCKS,
                                                          offsets, stacked ? 3 : 0, FQ_SCALE_LAYOUT_ROW_MAJOR, src,
                                                          stacked ? 9 : 24, FQ_SCALE_LAYOUT_SWIZZLED_128X4, dst, 1024, nullptr));
                         }});
    };
    r("handle", "BLOCKS, device src and dst (control)", OK, "", false, nullptr);
    r("handle", "STACKED_TO_BLOCKS, device row offsets (control)", OK, "", true, nullptr);
    r("src", "pageable host memory", INVALID, "src:", false, [](BadWorld& w, const void*& s, void*&, const int32_t*&) { s = w.h(); });
    r("dst", "pageable host memory", INVALID, "dst:", false, [](BadWorld& w, const void*&, void*& d, const int32_t*&) { d = w.h(); });
    r("rowOffsets", "pageable host memory", INVALID, "rowOffsets:", true,
      [](BadWorld& w, const void*&, void*&, const int32_t*& o) { o = reinterpret_cast<const int32_t*>(w.h()); });

    // Each case: the exact status, a message naming the argument, no CUDA error left behind, and (failures)
    // nothing written: every device output and its guards, and the pageable host memory, as they were.
    const std::vector<uint32_t> host_before = w.host;
    int refused = 0, accepted = 0;
    for (const BadCase& k : cases) {
        const Outcome o = k.call(w);
        INFO(k.fn, "(", k.arg, "): ", k.how, " -> ", fqGetStatusString(o.status), " \"", o.message, "\"");
        CHECK(o.status == k.want);
        CUDA_OK(cudaDeviceSynchronize());
        CHECK(cudaGetLastError() == cudaSuccess);
        if (k.want == OK) {
            CHECK(o.message.empty());
            for (GuardedDevice* g : w.outputs()) CHECK(g->guards_intact());
            ++accepted;
        } else {
            CHECK(!o.message.empty());
            CHECK(o.message.find(k.names) != std::string::npos);
            for (GuardedDevice* g : w.outputs()) CHECK(g->unchanged());
            ++refused;
        }
        CHECK(w.host == host_before);
        for (GuardedDevice* g : w.outputs()) g->reset();
    }
    MESSAGE("CUDA-handle bad input: ", refused, " bad inputs refused with the documented status, ", accepted,
            " valid controls accepted");
    CHECK(refused >= 40);
}

int main(int argc, char** argv) {
    int count = 0;
    g_has_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    if (!g_has_gpu) {
        std::printf("skipped: no CUDA device on this machine\n");
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
