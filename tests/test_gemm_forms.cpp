// The grouped GEMM's form choice and refusals (src/dispatch/gemm_forms.cpp) on a simulated sm_90 device of 132
// SMs: which kernel runs decode-sized, prefill, many-expert and ragged problems, with which split, cluster and
// grid; that the device is asked only what the choice needs; and that every refusal names its argument.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/gemm_forms.h"

using namespace fq;

namespace {

// An H100 SXM's 132 SMs as clusters see them: GPCs of 18, 18, 18, 18, 18, 16, 16 and 10 SMs, one CTA an SM (the
// kernels' shared memory), a cluster inside one GPC. So 66 clusters of 2, 43 of 3, 30 of 4, 15 of 8.
struct SimulatedH100 {
    static constexpr int kSms = 132;
    std::vector<std::pair<GemmKernel, int>> asked;  // every question, in order
    int row_pair_clusters = -2;                      // -2: as the others; else the answer for RowPair
    int pair_clusters = -2;                          // -2: as the model; else the answer for Persistent x 2
    int every = -2;                                  // -2: as the model; else the answer to every question

    GemmOccupancy occupancy() {
        return [this](GemmKernel k, int size) {
            asked.emplace_back(k, size);
            if (every != -2) return every;
            if (k == GemmKernel::RowPair && row_pair_clusters != -2) return row_pair_clusters;
            if (k == GemmKernel::Persistent && size == 2 && pair_clusters != -2) return pair_clusters;
            int n = 0;
            for (int gpc : {18, 18, 18, 18, 18, 16, 16, 10}) n += gpc / size;
            return n;
        };
    }
};

// A problem fqGroupedGemm would pass to the CUDA path: SwiGLU (SPLIT) over N = 2H, rowwise e4m3 PER_GROUP 128
// into ROW_MAJOR fp32 scales (the lean epilogue), aligned pointers.
struct Gemm {
    GroupedGemmConfig c;
    std::vector<int32_t> offsets;
    alignas(16) uint8_t buffer[64] = {};

    Gemm(int64_t m, int64_t h, int64_t k, int32_t groups = 1) {
        c.m = m;
        c.n = 2 * h;
        c.k = k;
        c.lda = c.ldb = k;
        c.groups = groups;
        c.a = c.b = buffer;
        c.c_out = nullptr;
        c.d_out = nullptr;
        c.output = buffer;
        c.epi.rows = m;
        c.epi.in_cols = c.epi.in_ld = 2 * h;
        c.epi.cols = c.epi.out_ld = h;
        c.epi.act = Act::Silu;
        c.epi.gate = GateLayout::Split;
        c.epi.scheme = Scheme::PerGroup;
        c.epi.group = 128;
        if (groups > 1) {  // CONTIGUOUS offsets, group g's rows ending mid-tile (the choice reads only their count)
            for (int32_t g = 0; g <= groups; ++g) offsets.push_back(int32_t(m * g / groups));
            c.offsets = offsets.data();
        }
    }
    GemmForm form(SimulatedH100& device) const {
        return choose_gemm_form(gemm_problem(c), SimulatedH100::kSms, device.occupancy());
    }
};

std::string refusal(const Gemm& g, int arch = 90) { return grouped_gemm_cuda_refusal(g.c, arch); }

}  // namespace

TEST_CASE("GEMM forms: decode-sized, one group: split K at the largest split whose clusters all fit") {
    SimulatedH100 device;
    // M = 64, H = 2048, K = 7168: 16 units; 16 clusters of 8 or 7 do not fit (15), of 6 do (20)
    const GemmForm f = Gemm(64, 2048, 7168).form(device);
    CHECK(f.kernel == GemmKernel::SplitK);
    CHECK(f.split == 6);
    CHECK(f.stages == kGemmStages);  // 56 K blocks / 6 = 9 a CTA: three stages
    CHECK(f.cluster_size == 6);
    CHECK(f.clusters == 16);
    CHECK(f.pair_cols == 16);
    CHECK(device.asked == std::vector<std::pair<GemmKernel, int>>{
                              {GemmKernel::SplitK, 8}, {GemmKernel::SplitK, 7}, {GemmKernel::SplitK, 6}});
}

TEST_CASE("GEMM forms: split K takes a fourth stage where a CTA's slice turns the ring four times") {
    SimulatedH100 device;
    // M = 256, H = 2048: 32 units, which fit only in clusters of 3 (43): 56 / 3 = 18 K blocks a CTA
    const GemmForm f = Gemm(256, 2048, 7168).form(device);
    CHECK(f.kernel == GemmKernel::SplitK);
    CHECK(f.split == 3);
    CHECK(f.stages == kGemmSplitStages);
    // every CTA needs two K blocks: K = 512 (4 blocks) allows a split of 2 at most
    SimulatedH100 short_k;
    CHECK(Gemm(64, 2048, 512).form(short_k).split == 2);
}

TEST_CASE("GEMM forms: the thresholds at their edges") {
    // units at most half the SMs: 66 units (M = 128, H = 66 x 128) may split, 67 may not
    SimulatedH100 d66, d67;
    CHECK(Gemm(128, 66 * 128, 7168).form(d66).split == 2);
    CHECK(Gemm(128, 67 * 128, 7168).form(d67).kernel == GemmKernel::Persistent);
    // ... by that rule, not only because their clusters would not fit: so also where every question says they fit
    SimulatedH100 ample;
    ample.every = 1000;
    CHECK(Gemm(128, 66 * 128, 7168).form(ample).split == kGemmMaxSplit);
    CHECK(Gemm(128, 67 * 128, 7168).form(ample).split == 1);
    // a fourth stage from 16 K blocks a CTA: 56 units split by 2, K = 32 blocks (4 stages) and 31 (3)
    uint16_t d[8];
    Gemm k32(128, 7168, 32 * 128), k31(128, 7168, 31 * 128);
    k32.c.d_out = k31.c.d_out = d;  // not lean: split K itself
    SimulatedH100 d32, d31;
    const GemmForm f32 = k32.form(d32), f31 = k31.form(d31);
    CHECK(f32.kernel == GemmKernel::SplitK);
    CHECK(f32.stages == kGemmSplitStages);
    CHECK(f31.stages == kGemmStages);
    // two K blocks a CTA at least: K = 3 blocks splits no unit
    SimulatedH100 d3;
    CHECK(Gemm(64, 2048, 3 * 128).form(d3).kernel == GemmKernel::Persistent);
}

TEST_CASE("GEMM forms: a split of two with the lean epilogue runs as row pairs") {
    SimulatedH100 device;
    // M = 128, H = 7168, K = 2048: 56 units, which fit in clusters of 2 (66) only
    const Gemm lean(128, 7168, 2048);
    GemmForm f = lean.form(device);
    CHECK(f.kernel == GemmKernel::RowPair);
    CHECK(f.split == 2);  // the slices of K whose sums it adds in split K's order
    CHECK(f.cluster_size == 2);
    CHECK(f.clusters == 56);
    CHECK(device.asked.back() == std::pair<GemmKernel, int>{GemmKernel::RowPair, 2});

    Gemm with_d = lean;  // D asked for: not lean
    uint16_t d[8];
    with_d.c.d_out = d;
    SimulatedH100 d2;
    CHECK(with_d.form(d2).kernel == GemmKernel::SplitK);

    Gemm narrow = lean;  // 16-byte code rows needed
    narrow.c.output = narrow.buffer + 4;
    SimulatedH100 d3;
    CHECK(narrow.form(d3).kernel == GemmKernel::SplitK);

    SimulatedH100 no_memory;  // the row-pair kernel could not be given its shared memory
    no_memory.row_pair_clusters = -1;
    CHECK(lean.form(no_memory).kernel == GemmKernel::SplitK);
}

TEST_CASE("GEMM forms: prefill runs persistent clusters of two sharing A, one wave of them") {
    SimulatedH100 device;
    // M = 4096, H = 2048: 32 tiles x 16 unit columns = 512 units, more than half the SMs
    const GemmForm f = Gemm(4096, 2048, 7168).form(device);
    CHECK(f.kernel == GemmKernel::Persistent);
    CHECK(f.split == 1);
    CHECK(f.cluster == 2);
    CHECK(f.pair_cols == 8);
    CHECK(f.clusters == 66);
    CHECK(f.cluster_size == 2);
    CHECK(device.asked == std::vector<std::pair<GemmKernel, int>>{{GemmKernel::Persistent, 2}});

    SimulatedH100 no_pairs;  // no cluster of two fits: single CTAs on every SM
    no_pairs.pair_clusters = 0;
    const GemmForm single = Gemm(4096, 2048, 7168).form(no_pairs);
    CHECK(single.cluster == 1);
    CHECK(single.pair_cols == 16);
    CHECK(single.clusters == 132);
}

TEST_CASE("GEMM forms: many experts walk segments; columnwise outputs keep tiles") {
    SimulatedH100 device;
    // E = 256 over M = 8192, H = 1024: (64 tiles + 256 segments at most) x 4 column pairs
    Gemm moe(8192, 1024, 7168, 256);
    GemmForm f = moe.form(device);
    CHECK(f.kernel == GemmKernel::Segments);
    CHECK(f.cluster == 2);
    CHECK(f.pair_cols == 4);
    CHECK(f.clusters == 66);

    moe.c.epi.outputs = kOutputRowwise | kOutputColumnwise;  // a columnwise block spans the groups of a tile
    SimulatedH100 d2;
    CHECK(moe.form(d2).kernel == GemmKernel::Persistent);
}

TEST_CASE("GEMM forms: ragged MoE with one unit column: single CTAs, a grid of the segments") {
    SimulatedH100 device;
    // M = 1000 (8 tiles) over 8 groups, H = 64: one unit column, so no pair shares A; 8 tiles + 8 segments
    const GemmForm f = Gemm(1000, 64, 1024, 8).form(device);
    CHECK(f.kernel == GemmKernel::Segments);
    CHECK(f.cluster == 1);
    CHECK(f.pair_cols == 1);
    CHECK(f.clusters == 16);
    // several groups never split K, however few the units
    SimulatedH100 d2;
    CHECK(Gemm(64, 64, 7168, 2).form(d2).split == 1);
}

TEST_CASE("GEMM forms: the pairing follows the gate layout") {
    Gemm g(64, 2048, 7168);
    CHECK(gemm_problem(g.c).pairing == GemmPairing::Halves);
    g.c.epi.gate = GateLayout::Interleaved;
    CHECK(gemm_problem(g.c).pairing == GemmPairing::Adjacent);
    g.c.epi.gate = GateLayout::BlockInterleaved;
    g.c.epi.gate_block = 32;
    CHECK(gemm_problem(g.c).pairing == GemmPairing::Blocks32);
    g.c.epi.gate_block = 128;
    CHECK(gemm_problem(g.c).pairing == GemmPairing::Halves);
    CHECK(std::string(name(GemmKernel::RowPair)) == "sm90.gemm.row_pair");
}

TEST_CASE("GEMM forms: every refusal names its argument") {
    const Gemm ok(64, 2048, 7168);
    CHECK(refusal(ok) == "");
    CHECK(refusal(ok, 100).rfind("handle:", 0) == 0);

    auto refused = [&](auto change) {
        Gemm g = ok;
        change(g);
        return refusal(g);
    };
    auto starts = [](const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; };
    CHECK(starts(refused([](Gemm& g) { g.c.epi.gate = GateLayout::None; }), "epilogueDesc: FQ_QUANT_DESC_GATE_LAYOUT"));
    CHECK(starts(refused([](Gemm& g) { g.c.epi.cols = 96; g.c.n = 192; }), "bLayout:"));
    CHECK(starts(refused([](Gemm& g) { g.c.epi.gate = GateLayout::BlockInterleaved; g.c.epi.gate_block = 48; }),
                 "epilogueDesc: FQ_QUANT_DESC_GATE_BLOCK_WIDTH"));
    CHECK(starts(refused([](Gemm& g) { g.c.m = int64_t(1) << 31; }), "aLayout:"));
    CHECK(starts(refused([](Gemm& g) { g.c.lda = 7000; }), "a, b:"));
    CHECK(starts(refused([](Gemm& g) { g.c.c_out = reinterpret_cast<uint16_t*>(g.buffer + 2); }),
                 "FQ_GEMM_DESC_C_OUTPUT_POINTER"));
    CHECK(starts(refused([](Gemm& g) { g.c.epi.scheme = Scheme::PerToken; }), "epilogueDesc: scheme"));
    CHECK(starts(refused([](Gemm& g) { g.c.epi.group = 16; }), "epilogueDesc: scheme"));
    CHECK(starts(refused([](Gemm& g) { g.c.epi.scales.type = DType::E8M0; }), "epilogueDesc: FQ_QUANT_DESC_SCALE_TYPE"));
    CHECK(starts(refused([](Gemm& g) { g.c.epi.scales.layout = ScaleLayout::Swizzled128x4; }),
                 "epilogueDesc: FQ_QUANT_DESC_SCALE_LAYOUT"));
    CHECK(starts(refused([](Gemm& g) { g.c.epi.quant.out = DType::E2M1; }), "epilogueDesc: FQ_QUANT_DESC_OUTPUT_TYPE"));
    CHECK(starts(refused([](Gemm& g) {
                     g.c.epi.outputs = kOutputRowwise | kOutputColumnwise;
                     g.c.epi.col_block = 64;
                 }),
                 "epilogueDesc: FQ_QUANT_DESC_COLUMNWISE_BLOCK"));
    CHECK(starts(refused([](Gemm& g) { g.c.epi.out_ld = 2050; }), "output:"));
    // without quantization, its attributes are not looked at
    CHECK(refused([](Gemm& g) {
              g.c.quantize = false;
              g.c.epi.scheme = Scheme::PerToken;
          }) == "");
}
