// Which kernel the dispatcher chooses (src/dispatch/cuda_table.cpp), on simulated devices: no GPU needed. Each
// kernel skeleton is chosen for a representative problem, and the name selection returns is the kernel that
// runs (fqQuerySupport returns the same name: for the host backend checked through the API below).
#include <string>

#include "common/kernel_shapes.h"
#include "common/status.h"
#include "dispatch/cuda_table.h"
#include "fq_test_util.h"

// The table's launch hook: selection tests never launch.
fqStatus_t fq::launch_cuda_kernel(const KernelForm&, const LaunchArgs&) { return FQ_STATUS_INTERNAL_ERROR; }

namespace {

using namespace fq;

const DeviceFacts kH100{90, 132, true, -1};  // sm_90, 132 SMs: one wave = 1584 blocks
const DeviceFacts kB200{100, 148, true, -1};

// A rowwise problem: bf16 [rows, cols] (doubled for a gated activation) -> fp8 e4m3, 16-byte aligned.
OpConfig problem(int64_t rows, int64_t cols, Scheme scheme = Scheme::PerGroup, int64_t group = 128,
                 ScaleLayout layout = ScaleLayout::RowMajor, Act act = Act::Silu) {
    OpConfig c;
    c.rows = rows;
    c.cols = cols;
    c.act = act;
    c.gate = act == Act::Identity ? GateLayout::None : GateLayout::Split;
    c.in_cols = c.gated() ? 2 * cols : cols;
    c.in_ld = c.in_cols;
    c.out_ld = cols;
    c.scheme = scheme;
    const bool whole_row = scheme == Scheme::PerToken || is_per_tensor(scheme);
    c.group = whole_row ? cols : group;
    const DType type = scheme == Scheme::Nvfp4 ? DType::E4M3FN : is_microscaling(scheme) ? DType::E8M0 : DType::Fp32;
    const int64_t scale_rows = is_per_tensor(scheme) ? 1 : scheme == Scheme::Block2D ? ceil_div(rows, 128) : rows;
    c.scales = make_scale_geometry(layout, type, scale_rows, whole_row ? 1 : ceil_div(cols, group));
    return c;
}

std::string chosen(const OpConfig& c, const DeviceFacts& d = kH100, int pinned = -1) {
    std::vector<Variant> table;
    register_cuda_variants(table);
    const Variant* v = nullptr;
    const fqStatus_t s = select_in(table, Backend::Cuda, d, pinned, c, &v);
    // The sentence of fail() as compiled into this test (the library keeps its own).
    return s == FQ_STATUS_SUCCESS ? v->name : std::string("refused: ") + last_error_buffer();
}

}  // namespace

TEST_CASE("dispatch on sm_90 x 132 SMs: each kernel skeleton is chosen by name for its representative problem") {
    // Decode: one row of 7168 outputs is 4 plain tiles, far below one wave: the decode kernel.
    CHECK(chosen(problem(1, 7168)) == "sm90.decode");
    CHECK(chosen(problem(1, 7168, Scheme::Mxfp8, 32, ScaleLayout::Swizzled128x4)) == "sm90.decode");
    CHECK(chosen(problem(1, 7168, Scheme::Nvfp4, 16, ScaleLayout::Swizzled128x4)) == "sm90.decode");
    // Below one wave where the decode kernel does not run (per-tensor, MoE): the general kernel.
    CHECK(chosen(problem(1, 7168, Scheme::PerTensorDynamic)) == "sm90.group");
    // Prefill: 16384 x 7168 fills the GPU: the plain kernel.
    CHECK(chosen(problem(16384, 7168)) == "sm90.plain");
    // MXFP8 into 128x4-swizzled scales, large: the plain kernel's swizzled form.
    CHECK(chosen(problem(16384, 7168, Scheme::Mxfp8, 32, ScaleLayout::Swizzled128x4)) == "sm90.plain.swizzled");
    // Per-group 128 into column-major scales past 6 MB (16384 x 18432: 9.4 MB): the column-run form.
    CHECK(chosen(problem(16384, 18432, Scheme::PerGroup, 128, ScaleLayout::ColMajorTma)) == "sm90.plain.column_runs");
    CHECK(chosen(problem(16384, 18432, Scheme::PerGroup, 128, ScaleLayout::ColMajor)) == "sm90.plain.column_runs");
    // Per-token: a wide row over a cluster of CTAs below one wave, a block per row otherwise.
    CHECK(chosen(problem(1, 18432, Scheme::PerToken)) == "sm90.token.cluster");
    CHECK(chosen(problem(1024, 7168, Scheme::PerToken)) == "sm90.token");
    OpConfig both = problem(4096, 7168);
    both.outputs = kOutputRowwise | kOutputColumnwise;
    both.col_scales = make_scale_geometry(ScaleLayout::RowMajor, DType::Fp32, 7168, 4096 / 32);
    CHECK(chosen(both) == "sm90.columnwise");
    CHECK(chosen(problem(7168, 2048, Scheme::Block2D, 128, ScaleLayout::RowMajor, Act::Identity)) == "sm90.block2d");
    CHECK(chosen(problem(7168, 2048, Scheme::Block2D, 128, ScaleLayout::RowMajor, Act::Silu)) == "sm80.block2d.generic");
}

TEST_CASE("dispatch: rows without 16-byte alignment choose the .unaligned form of the same skeleton") {
    auto unaligned = [](OpConfig c) {
        c.vector_aligned = false;
        return c;
    };
    CHECK(chosen(unaligned(problem(1, 7168))) == "sm90.group.unaligned");
    CHECK(chosen(unaligned(problem(16384, 7168))) == "sm90.plain.unaligned");
    // The swizzled and column-run forms have 16-byte IO only: the plain kernel's element-IO form runs those.
    CHECK(chosen(unaligned(problem(16384, 7168, Scheme::Mxfp8, 32, ScaleLayout::Swizzled128x4))) == "sm90.plain.unaligned");
    CHECK(chosen(unaligned(problem(16384, 18432, Scheme::PerGroup, 128, ScaleLayout::ColMajor))) == "sm90.plain.unaligned");
    CHECK(chosen(unaligned(problem(128, 7168, Scheme::PerToken))) == "sm90.token.unaligned");
    OpConfig both = unaligned(problem(4096, 7168));
    both.outputs = kOutputColumnwise;
    both.col_scales = make_scale_geometry(ScaleLayout::RowMajor, DType::Fp32, 7168, 4096 / 32);
    CHECK(chosen(both) == "sm90.columnwise.unaligned");
}

TEST_CASE("dispatch: the plain kernels' thresholds are one wave of tiles, the 6 MB column-run buffer, an aligned scale pointer") {
    // 2048 outputs = one plain tile a row: 1584 rows are one wave on 132 SMs (12 blocks an SM).
    CHECK(cuda::one_wave(132) == 1584);
    CHECK(chosen(problem(1584, 2048)) == "sm90.plain");
    CHECK(chosen(problem(1583, 2048)) == "sm90.decode");
    CHECK(chosen(problem(1583, 2048, Scheme::PerTensorDynamic)) == "sm90.group");
    // FQ_HANDLE_WIDE_TILE_MIN replaces the wave: 0 and 1 take the plain kernel for any problem (0 also the
    // column-run form below 6 MB).
    CHECK(chosen(problem(1, 7168), {90, 132, true, 1}) == "sm90.plain");
    CHECK(chosen(problem(1583, 2048), {90, 132, true, 2000}) == "sm90.decode");
    // 16384 x 7168 column-major: 3.7 MB of scales, below kColumnRunMinBytes: the plain kernel.
    const OpConfig col = problem(16384, 7168, Scheme::PerGroup, 128, ScaleLayout::ColMajor);
    REQUIRE(col.scales.bytes <= cuda::kColumnRunMinBytes);
    CHECK(chosen(col) == "sm90.plain");
    CHECK(chosen(col, {90, 132, true, 0}) == "sm90.plain.column_runs");
    CHECK(chosen(problem(8, 128, Scheme::PerGroup, 128, ScaleLayout::ColMajor), {90, 132, true, 0}) == "sm90.plain.column_runs");
    // A scale pointer off 16 bytes: the plain kernel instead of its swizzled form.
    OpConfig mx = problem(16384, 7168, Scheme::Mxfp8, 32, ScaleLayout::Swizzled128x4);
    mx.scales_aligned = false;
    CHECK(chosen(mx) == "sm90.plain");
    // Problems the plain kernel does not run: intermediate rounding, MoE layouts.
    OpConfig rounded = problem(16384, 7168);
    rounded.rounding = Rounding::RoundProduct;
    CHECK(chosen(rounded) == "sm90.group");
    OpConfig moe = problem(16384, 7168);
    moe.moe = MoeLayout::Contiguous;
    moe.num_experts = 8;
    CHECK(chosen(moe) == "sm90.group");
    // Per-tensor and NVFP4 run on the plain kernel too (per-tensor: no scale layout of its own).
    CHECK(chosen(problem(16384, 7168, Scheme::PerTensorDynamic)) == "sm90.plain");
    CHECK(chosen(problem(16384, 7168, Scheme::Nvfp4, 16, ScaleLayout::Swizzled128x4)) == "sm90.plain.swizzled");
}

TEST_CASE("dispatch: the per-token cluster kernel takes rows the per-token block steps over more than once, "
          "within one wave and one cluster") {
    // The per-token block: 1024 threads for few rows, 512, then 256 for many (~1024 threads an SM).
    CHECK(cuda::token_block_threads(1, 132) == 1024);
    CHECK(cuda::token_block_threads(263, 132) == 1024);
    CHECK(cuda::token_block_threads(300, 132) == 512);
    CHECK(cuda::token_block_threads(1024, 132) == 256);
    // H 18432: 18 tiles of 1024 outputs, 3 a thread: 6 CTAs a row; 264 rows are 1584 CTAs, one wave on 132 SMs.
    CHECK(cuda::token_cluster_shape(18432).chunks == 3);
    CHECK(cuda::token_cluster_shape(18432).ctas == 6);
    CHECK(chosen(problem(1, 18432, Scheme::PerToken)) == "sm90.token.cluster");
    CHECK(chosen(problem(264, 18432, Scheme::PerToken)) == "sm90.token.cluster");
    CHECK(chosen(problem(265, 18432, Scheme::PerToken)) == "sm90.token");
    // A row one 1024-thread step covers (8192 outputs) stays on the per-token kernel; one more tile does not.
    CHECK(cuda::token_cluster_shape(7168).ctas == 7);
    CHECK(chosen(problem(1, 7168, Scheme::PerToken)) == "sm90.token");
    CHECK(chosen(problem(1, 8192, Scheme::PerToken)) == "sm90.token");
    CHECK(cuda::token_cluster_shape(8200).chunks == 2);
    CHECK(chosen(problem(1, 8200, Scheme::PerToken)) == "sm90.token.cluster");
    // At most 3 tiles a thread of 8 CTAs (24576 outputs); past that, the per-token kernel.
    CHECK(cuda::token_cluster_shape(24576).ctas == 8);
    CHECK(cuda::token_cluster_shape(24577).chunks == 0);
    CHECK(chosen(problem(1, 24576, Scheme::PerToken)) == "sm90.token.cluster");
    CHECK(chosen(problem(1, 24584, Scheme::PerToken)) == "sm90.token");
    CHECK(cuda::token_cluster_shape(8).ctas == 1);  // one tile: a cluster of one CTA
    // Rounded intermediates, MoE layouts and sm_89 / sm_80 (no clusters): the per-token kernel.
    OpConfig rounded = problem(1, 18432, Scheme::PerToken);
    rounded.rounding = Rounding::RoundProduct;
    CHECK(chosen(rounded) == "sm90.token");
    OpConfig moe = problem(64, 18432, Scheme::PerToken);
    moe.moe = MoeLayout::Masked;
    moe.num_experts = 4;
    moe.expert_rows = 16;
    CHECK(chosen(moe) == "sm90.token");
    CHECK(chosen(problem(1, 18432, Scheme::PerToken), {89, 128, true, -1}) == "sm89.token");
    CHECK(chosen(problem(1, 18432, Scheme::PerToken), kB200) == "sm100.token.cluster");
    // Pinned, it runs any row that fits a cluster, any number of rows up to the launch grid.
    std::vector<Variant> table;
    register_cuda_variants(table);
    const std::vector<const Variant*> sm90 = variants_in(table, Backend::Cuda, 90);
    int cluster = -1;
    for (size_t i = 0; i < sm90.size(); ++i)
        if (sm90[i]->name == "sm90.token.cluster") cluster = int(i);
    REQUIRE(cluster >= 0);
    CHECK(chosen(problem(3, 8, Scheme::PerToken), kH100, cluster) == "sm90.token.cluster");
    CHECK(chosen(problem(16384, 7168, Scheme::PerToken), kH100, cluster) == "sm90.token.cluster");
    const std::string refused = chosen(problem(65536, 7168, Scheme::PerToken), kH100, cluster);
    CHECK(refused.find("65535") != std::string::npos);
}

TEST_CASE("dispatch: each architecture family names its own entries; sm_100 runs the sm90 kernels as sm100.*") {
    CHECK(chosen(problem(1, 7168), kB200) == "sm100.decode");
    CHECK(chosen(problem(16384, 7168), kB200) == "sm100.plain");
    CHECK(chosen(problem(16384, 7168, Scheme::Mxfp8, 32, ScaleLayout::Swizzled128x4), kB200) == "sm100.plain.swizzled");
    CHECK(chosen(problem(7168, 2048, Scheme::Block2D, 128, ScaleLayout::RowMajor, Act::Identity), kB200) == "sm100.block2d");
    CHECK(chosen(problem(16384, 7168), {89, 128, true, -1}) == "sm89.plain");
    // The decode kernel needs programmatic dependent launch: sm_89 and sm_80 run the general kernel.
    CHECK(chosen(problem(1, 7168), {89, 128, true, -1}) == "sm89.group");
    CHECK(chosen(problem(1, 7168), {80, 108, true, -1}) == "sm80.group");
    CHECK(chosen(problem(128, 7168, Scheme::PerToken), {80, 108, true, -1}) == "sm80.token");
    CHECK(chosen(problem(16384, 18432, Scheme::PerGroup, 128, ScaleLayout::ColMajor), {80, 108, true, -1}) ==
          "sm80.plain.column_runs");
    // No sm90 entry on sm_100, no sm100 entry on sm_90: each family's entries are the kernels its device runs.
    std::vector<Variant> table;
    register_cuda_variants(table);
    for (const Variant* v : variants_in(table, Backend::Cuda, 100)) CHECK(std::string(v->name).rfind("sm90.", 0) != 0);
    for (const Variant* v : variants_in(table, Backend::Cuda, 90)) CHECK(std::string(v->name).rfind("sm100.", 0) != 0);
    CHECK(variants_in(table, Backend::Cuda, 75).empty());
}

TEST_CASE("dispatch: a pinned entry runs whatever its kernel runs, whatever the thresholds; one that cannot is refused") {
    std::vector<Variant> table;
    register_cuda_variants(table);
    const std::vector<const Variant*> sm90 = variants_in(table, Backend::Cuda, 90);
    auto index_of = [&](const std::string& name) {
        for (size_t i = 0; i < sm90.size(); ++i)
            if (sm90[i]->name == name) return int(i);
        FAIL("no entry " << name);
        return -1;
    };
    CHECK(chosen(problem(1, 7168), kH100, index_of("sm90.plain")) == "sm90.plain");
    CHECK(chosen(problem(16384, 7168), kH100, index_of("sm90.group")) == "sm90.group");
    CHECK(chosen(problem(16384, 7168), kH100, index_of("sm90.decode")) == "sm90.decode");
    const std::string refused = chosen(problem(1, 7168), kH100, index_of("sm90.plain.swizzled"));
    CHECK(refused.find("FQ_HANDLE_VARIANT") != std::string::npos);
    CHECK(refused.find("sm90.plain.swizzled") != std::string::npos);
    CHECK(refused.find("microscaling") != std::string::npos);
}

TEST_CASE("dispatch: a problem no entry runs is NOT_SUPPORTED with the general kernel's reason") {
    OpConfig c = problem(16, 7168, Scheme::Block2D);
    c.moe = MoeLayout::Masked;
    c.num_experts = 2;
    const std::string why = chosen(c);
    CHECK(why.find("refused: no kernel variant on CUDA sm_90 runs this problem") == 0);
    CHECK(why.find("BLOCK_2D") != std::string::npos);
}

TEST_CASE("fqQuerySupport names the entry the dispatcher chooses: host.reference on the host backend") {
    fqt::Handle h;
    fqt::Desc d;
    d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
    fqt::Layout li(FQ_TYPE_BF16, 16384, 2 * 7168, 2 * 7168), lo(FQ_TYPE_FP8_E4M3FN, 16384, 7168, 7168);
    char name[64] = {};
    REQUIRE(fqQuerySupport(h.h, d.d, li.l, lo.l, name, sizeof name) == FQ_STATUS_SUCCESS);
    CHECK(std::string(name) == "host.reference");
    char listed[512] = {};
    REQUIRE(fqGetVariantName(h.h, 0, listed, sizeof listed) == FQ_STATUS_SUCCESS);
    CHECK(std::string(listed).rfind(std::string(name) + ": ", 0) == 0);
}
