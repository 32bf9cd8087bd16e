// BLOCK_2D on the GPU (docs/spec.md §0, §3.1): every CUDA variant that runs a BLOCK_2D problem writes exactly the
// host reference's bytes (values, scales, scale padding) on random inputs with NaN, Inf, huge and tiny
// values, partial edge tiles, strided rows and poisoned outputs. Part of fq_gpu_tests (its main skips
// with 77 when there is no GPU).
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "fq/compare.h"
#include "fq_test_util.h"
#include "gpu_buffer.h"

using namespace fqt;

namespace {

struct Block2dCase {
    int64_t rows, cols, in_pad = 0;
    int32_t layout = FQ_SCALE_LAYOUT_COL_MAJOR, out = FQ_TYPE_FP8_E4M3FN, pow2 = 0, apply = 0;
    int32_t act = FQ_ACTIVATION_IDENTITY, gate = FQ_GATE_LAYOUT_NONE, in_type = FQ_TYPE_BF16;
    bool prob = false, ub = false;
    float qmax = 0.0f;  // FQ_QUANT_DESC_QMAX when > 0: also the saturation bound (docs/spec.md §3.4)

    std::string describe() const {
        return "rows=" + std::to_string(rows) + " cols=" + std::to_string(cols) + " pad=" + std::to_string(in_pad) +
               " layout=" + std::to_string(layout) + " out=" + std::to_string(out) + " pow2=" + std::to_string(pow2) +
               " apply=" + std::to_string(apply) + " act=" + std::to_string(act) + " gate=" + std::to_string(gate) +
               " in=" + std::to_string(in_type) + " prob=" + std::to_string(prob) + " ub=" + std::to_string(ub) +
               " qmax=" + std::to_string(qmax);
    }
};

void configure(Desc& d, const Block2dCase& c, const float* prob, const float* ub) {
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_BLOCK_2D).i32(FQ_QUANT_DESC_SCALE_LAYOUT, c.layout)
        .i32(FQ_QUANT_DESC_OUTPUT_TYPE, c.out).i32(FQ_QUANT_DESC_SCALE_ROUNDING, c.pow2)
        .i32(FQ_QUANT_DESC_SCALE_APPLY, c.apply).i32(FQ_QUANT_DESC_ACTIVATION, c.act)
        .i32(FQ_QUANT_DESC_GATE_LAYOUT, c.gate);
    if (c.prob) d.ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob);
    if (c.ub) d.ptr(FQ_QUANT_DESC_SCALE_UB_POINTER, ub);
    if (c.qmax > 0.0f) d.f32(FQ_QUANT_DESC_QMAX, c.qmax);
}

// Returns the number of variant runs compared.
int check_block2d(fqHandle_t gpu, const Block2dCase& c, std::mt19937& rng) {
    CAPTURE(c.describe());
    const int64_t in_cols = c.gate != FQ_GATE_LAYOUT_NONE ? 2 * c.cols : c.cols, ld = in_cols + c.in_pad;
    const std::vector<uint16_t> in = fqtool::edge_input(rng, size_t(std::max<int64_t>(c.rows * ld, 1)), c.in_type);
    std::vector<float> prob(size_t(std::max<int64_t>(c.rows, 1)));
    std::uniform_real_distribution<float> u01(0.0f, 2.0f);
    for (float& p : prob) p = u01(rng);
    const float ub_h = 0.01f;

    Handle host;
    Desc dh;
    configure(dh, c, prob.data(), &ub_h);
    Layout li(c.in_type, c.rows, in_cols, ld), lo(c.out, c.rows, c.cols, c.cols);
    const size_t sbytes = scale_bytes(dh, c.rows, c.cols);
    std::vector<uint8_t> want(size_t(c.rows * c.cols), 0xAB), want_s(sbytes, 0xAB);
    REQUIRE_MESSAGE(fqQuantize(host.h, dh.d, li.l, in.data(), lo.l, want.data(), want_s.data(), sbytes, nullptr, 0,
                               nullptr) == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));

    DeviceBuffer<uint16_t> d_in(in.size());
    d_in.upload(in);
    DeviceBuffer<float> d_prob(prob.size()), d_ub(1);
    d_prob.upload(prob);
    d_ub.upload({ub_h});
    Desc dd;
    configure(dd, c, d_prob.p, d_ub.p);
    int32_t n = 0, runs = 0;
    REQUIRE(fqGetVariantCount(gpu, &n) == FQ_STATUS_SUCCESS);
    for (int32_t v = -1; v < n; ++v) {
        REQUIRE(fqHandleSetAttribute(gpu, FQ_HANDLE_VARIANT, &v, 4) == FQ_STATUS_SUCCESS);
        DeviceBuffer<uint8_t> d_out(want.size()), d_s(sbytes);
        CUDA_OK(cudaMemset(d_out.p, 0xAB, std::max<size_t>(want.size(), 1)));  // poison: an unwritten byte fails
        CUDA_OK(cudaMemset(d_s.p, 0xAB, std::max<size_t>(sbytes, 1)));
        const fqStatus_t s = fqQuantize(gpu, dd.d, li.l, d_in.p, lo.l, d_out.p, d_s.p, sbytes, nullptr, 0, nullptr);
        if (s == FQ_STATUS_NOT_SUPPORTED && v >= 0) continue;
        char name[160] = "auto";
        if (v >= 0) fqGetVariantName(gpu, v, name, sizeof name);
        CAPTURE(std::string(name));
        REQUIRE_MESSAGE(s == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
        CUDA_OK(cudaDeviceSynchronize());
        ++runs;
        const std::vector<uint8_t> got = d_out.download(), got_s = d_s.download();
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < got.size(); ++i)
            if (got[i] != want[i] && bad++ == 0) first = i;
        CHECK_MESSAGE(bad == 0, bad, " value bytes differ; first at row ", first / size_t(c.cols), " col ",
                      first % size_t(c.cols), ": got ", int(got[first]), " want ", int(want[first]));
        size_t bad_s = 0, first_s = 0;
        for (size_t i = 0; i < got_s.size(); ++i)
            if (got_s[i] != want_s[i] && bad_s++ == 0) first_s = i;
        CHECK_MESSAGE(bad_s == 0, bad_s, " scale bytes differ; first at byte ", first_s, " (fp32 scale ", first_s / 4,
                      ")");
    }
    const int32_t automatic = -1;
    fqHandleSetAttribute(gpu, FQ_HANDLE_VARIANT, &automatic, 4);
    return runs;
}

}  // namespace

TEST_CASE("BLOCK_2D on CUDA writes the host reference's bytes: partial tiles, NaN/Inf, every layout and type") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE(gpu.status == FQ_STATUS_SUCCESS);
    std::mt19937 rng(std::random_device{}());
    const unsigned seed = rng();
    MESSAGE("seed ", seed);
    rng.seed(seed);
    std::vector<Block2dCase> cases;
    const std::vector<std::pair<int64_t, int64_t>> shapes = {{0, 128},   {1, 1},      {7, 100},   {128, 128}, {130, 200},
                                                             {257, 129}, {300, 1000}, {512, 2048}, {129, 7}};
    for (auto [r, k] : shapes)
        for (int32_t layout : {FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR_TMA}) {
            Block2dCase c{r, k};
            c.layout = layout;
            cases.push_back(c);
        }
    {  // a qmax override with a scale upper bound: values saturate at the override's bound
        Block2dCase c{130, 200};
        c.ub = true, c.qmax = 200.0f;
        cases.push_back(c);
    }
    auto one = [&](std::initializer_list<int32_t> xs) {
        std::vector<int32_t> v(xs);
        return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
    };
    for (int i = 0; i < 60; ++i) {
        Block2dCase c{one({1, 5, 127, 128, 129, 256, 383}), one({3, 64, 128, 136, 250, 640, 1031})};
        c.layout = one({0, 1, 2});
        c.out = one({FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP8_E4M3FNUZ, FQ_TYPE_FP8_E5M2, FQ_TYPE_INT8});
        c.pow2 = one({0, 1});
        c.apply = one({0, 1});
        c.act = one({0, 0, 1, 2, 3, 4, 5});
        c.gate = c.act == FQ_ACTIVATION_IDENTITY ? 0 : one({0, 1, 2});
        c.in_type = one({FQ_TYPE_BF16, FQ_TYPE_FP16});
        c.in_pad = one({0, 0, 3, 8});
        c.prob = one({0, 1});
        c.ub = c.out != FQ_TYPE_INT8 && one({0, 0, 1});
        if (one({0, 0, 1})) c.qmax = c.out == FQ_TYPE_INT8 ? 100.4f : c.out == FQ_TYPE_FP8_E4M3FNUZ ? 224.0f : 200.0f;
        cases.push_back(c);
    }
    int runs = 0;
    for (const Block2dCase& c : cases) runs += check_block2d(gpu.h, c, rng);
    MESSAGE(runs, " BLOCK_2D variant runs compared over ", cases.size(), " problems");
    CHECK(runs >= 2 * int(cases.size()));  // the dispatcher's choice and at least one pinned variant each
}

TEST_CASE("the dispatcher runs BLOCK_2D on a CUDA variant, not refused") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_BLOCK_2D).i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR);
    Layout li(FQ_TYPE_BF16, 7168, 2048, 2048), lo(FQ_TYPE_FP8_E4M3FN, 7168, 2048, 2048);
    char name[64] = "";
    REQUIRE_MESSAGE(fqQuerySupport(gpu.h, d.d, li.l, lo.l, name, sizeof name) == FQ_STATUS_SUCCESS,
                    std::string(fqGetLastErrorMessage()));
    CHECK(std::string(name).find("block2d") != std::string::npos);
}
