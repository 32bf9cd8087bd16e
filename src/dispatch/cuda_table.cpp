// The CUDA entries of the dispatch table: every kernel skeleton of every architecture family, with the
// conditions under which it runs a problem (refuse_*) and under which the dispatcher prefers it (preferred_*).
// Plain C++ compiled in every build: which kernel runs a problem is testable without a GPU
// (tests/test_dispatch.cpp). The thresholds are the kernels' block shapes, src/common/kernel_shapes.h; why they
// are where they are: docs/design-notes.md.
#include "cuda_table.h"

#include <fmt/format.h>

#include "../common/kernel_shapes.h"

namespace fq {
namespace {

using cuda::kThreads;

// ---- What each kernel runs -----------------------------------------------------------------------------
std::string refuse_common(const OpConfig& c) {
    if (c.scheme == Scheme::Block2D) return fmt::format("scheme {} is not run by the row kernels", name(c.scheme));
    if (c.rows + c.scale_batch * c.scales.padded_rows > int64_t(INT32_MAX) || ceil_div(c.cols, int64_t(kThreads) * 8) > 65535)
        return fmt::format("{} rows x {} columns exceeds the launch grid", c.rows, c.cols);
    return {};
}

// The row kernels (plain, group, token) write the rowwise output only.
std::string refuse_rowwise_only(const OpConfig& c) {
    if (c.columnwise()) return "a columnwise output runs in the .columnwise variants";
    return refuse_common(c);
}

bool vector_io_ok(const OpConfig& c) {
    return c.vector_aligned && c.cols % 8 == 0 && c.in_ld % 8 == 0 && c.out_ld % 8 == 0;
}

constexpr const char* kNeedsVectorIo = "needs 16-byte aligned input/output pointers and row strides and a width divisible by 8";

template <bool kVec>
std::string refuse_group(const OpConfig& c) {
    if (c.scheme == Scheme::PerToken) return "runs per-group, per-tensor and microscaling schemes";
    if (kVec && !vector_io_ok(c)) return kNeedsVectorIo;
    return refuse_rowwise_only(c);
}

// The plain kernel carries no code for intermediate rounding or MoE row owners.
template <bool kVec>
std::string refuse_plain(const OpConfig& c) {
    std::string why = refuse_group<kVec>(c);
    if (why.empty() && !c.plain()) why = "runs FP32 intermediates without a MoE layout";
    return why;
}

std::string refuse_plain_swizzled(const OpConfig& c) {
    std::string why = refuse_plain<true>(c);
    if (!why.empty()) return why;
    if (!is_microscaling(c.scheme)) return "runs the microscaling schemes";
    if (c.scales.layout != ScaleLayout::Swizzled128x4) return "runs SWIZZLED_128x4 scales";
    if (!c.scales_aligned) return "needs a 16-byte aligned scale pointer";
    return {};
}

std::string refuse_plain_column_runs(const OpConfig& c) {
    std::string why = refuse_plain<true>(c);
    if (!why.empty()) return why;
    if (c.scheme != Scheme::PerGroup) return "runs the per-group scheme";
    if (c.scales.layout != ScaleLayout::ColMajor && c.scales.layout != ScaleLayout::ColMajorTma)
        return "runs COL_MAJOR and COL_MAJOR_TMA scales";
    return {};
}

// The decode kernel: a scale per group of 16-128 outputs (per-group, MXFP8, MXFP4, NVFP4), 16-byte IO.
std::string refuse_decode(const OpConfig& c) {
    std::string why = refuse_plain<true>(c);
    if (!why.empty()) return why;
    if (is_per_tensor(c.scheme)) return "runs a scale per group (per-group and microscaling schemes)";
    return {};
}

template <bool kVec>
std::string refuse_token(const OpConfig& c) {
    if (c.scheme != Scheme::PerToken) return "runs the per-token scheme only";
    if (kVec && !vector_io_ok(c)) return kNeedsVectorIo;
    return refuse_rowwise_only(c);
}

// The per-token cluster kernel: a row over one thread-block cluster (src/common/kernel_shapes.h), FP32
// intermediates, no MoE layout, 16-byte IO.
std::string refuse_token_cluster(const OpConfig& c) {
    std::string why = refuse_token<true>(c);
    if (!why.empty()) return why;
    if (!c.plain()) return "runs FP32 intermediates without a MoE layout";
    constexpr int64_t kMaxCols = int64_t(cuda::kTokenClusterMaxCtas) * cuda::kTokenClusterMaxChunks * kThreads * 8;
    if (cuda::token_cluster_shape(c.cols).chunks == 0)
        return fmt::format("a row of {} outputs exceeds one cluster's {}", c.cols, kMaxCols);
    if (c.rows + c.scales.padded_rows - c.scales.rows > 65535)
        return fmt::format("{} rows (with the scale layout's padding rows) exceed the launch grid's 65535", c.rows);
    return {};
}

template <bool kVec>
std::string refuse_columnwise(const OpConfig& c) {
    if (!c.columnwise()) return "runs problems with a columnwise output";
    if (kVec && !vector_io_ok(c)) return kNeedsVectorIo;
    const cuda::ColumnRuns r = cuda::column_runs(c);
    if (r.runs * r.tiles_per_run() > int64_t(INT32_MAX) || ceil_div(c.cols, int64_t(cuda::kColTileCols)) > 65535)
        return fmt::format("{} rows x {} columns exceeds the launch grid", c.rows, c.cols);
    return refuse_common(c);
}

std::string refuse_block2d(const OpConfig& c) {
    if (c.scheme != Scheme::Block2D) return "runs the BLOCK_2D scheme only";
    if (c.moe != MoeLayout::None) return "MoE layouts have no BLOCK_2D kernel in this version";
    if (c.outputs != kOutputRowwise) return "columnwise outputs have no BLOCK_2D kernel in this version";
    if (c.scales.padded_rows > 65535 || c.scales.cols > int64_t(INT32_MAX))
        return fmt::format("{} x {} tiles exceed the launch grid (at most 65535 tile rows)", c.scales.padded_rows,
                           c.scales.cols);
    return {};
}

std::string refuse_block2d_vec(const OpConfig& c) {
    if (c.act != Act::Identity || c.gated()) return "runs weights (no activation, not gated); .generic runs the others";
    if (!vector_io_ok(c)) return kNeedsVectorIo;
    if (c.cols >= (int64_t(1) << 26)) return fmt::format("{} columns exceed its 32-bit column index", c.cols);
    return refuse_block2d(c);
}

// ---- When the dispatcher prefers a kernel ---------------------------------------------------------------
// The plain kernels where the problem fills the GPU: at least FQ_HANDLE_WIDE_TILE_MIN tiles of kPlainTile
// outputs, by default one wave of group-kernel blocks. Below that the time is one thread's latency, and the
// general kernel's 8 outputs a thread have less of it.
bool preferred_wide(const OpConfig& c, const DeviceFacts& d) {
    const int64_t tiles = c.rows * ceil_div(c.cols, int64_t(cuda::kPlainTile));
    return tiles >= (d.wide_tile_min < 0 ? cuda::one_wave(d.sm_count) : int64_t(d.wide_tile_min));
}

// The decode kernel below that (its set-up overlaps the previous kernel: PDL families only).
bool preferred_decode(const OpConfig& c, const DeviceFacts& d) { return !preferred_wide(c, d); }

// The per-token cluster kernel where the per-token kernel's block would step over its row more than once (a row's
// latency is its number of steps; within one step the cluster's barrier and DSMEM reads cost more than they
// save) and the rows' CTAs fit one wave of group-kernel blocks (docs/design-notes.md).
bool preferred_token_cluster(const OpConfig& c, const DeviceFacts& d) {
    const int64_t step = int64_t(cuda::token_block_threads(c.rows, d.sm_count)) * 8;
    return c.cols > step && c.rows * cuda::token_cluster_shape(c.cols).ctas <= cuda::one_wave(d.sm_count);
}

// The column-run form where the scale buffer is past kColumnRunMinBytes (FQ_HANDLE_WIDE_TILE_MIN = 0: always).
bool preferred_column_runs(const OpConfig& c, const DeviceFacts& d) {
    return preferred_wide(c, d) && (c.scales.bytes > cuda::kColumnRunMinBytes || d.wide_tile_min == 0);
}

// ---- The table ---------------------------------------------------------------------------------------------
// An architecture family: the arch range it serves and how its kernels are compiled.
struct Family {
    const char* prefix;
    int min_arch, max_arch;
    bool hw_cvt, pdl;
    const char* how;  // appended to each entry's covers line
};

constexpr int kAny = 1000;
// Most specific first. sm100 runs the sm90 kernels, compiled for sm_100a (no Blackwell-specific kernel yet).
constexpr Family kFamilies[] = {
    {"sm100", 100, kAny, true, true, "the sm90 kernel compiled for sm_100a: hw fp8 cvt, PDL"},
    {"sm90", 90, 99, true, true, "hw fp8 cvt, PDL"},
    {"sm89", 89, kAny, true, false, "hw fp8 cvt"},
    {"sm80", 80, kAny, false, false, "software fp8 encoding"},
};

// A kernel skeleton in one IO form; within a family in this order, so each plain form and the decode kernel
// precede the kernel that runs the problems they are not preferred for.
struct Entry {
    const char* suffix;
    Skeleton skeleton;
    bool vec;
    bool pdl_only;  // compiled only for the families with programmatic dependent launch (sm_90 on: clusters too)
    std::string (*refuse)(const OpConfig&);
    bool (*preferred)(const OpConfig&, const DeviceFacts&);
    const char* covers;
};

constexpr Entry kEntries[] = {
    {"plain.swizzled", Skeleton::PlainSwizzled, true, false, refuse_plain_swizzled, preferred_wide,
     "MXFP8/MXFP4/NVFP4 into SWIZZLED_128x4 scales (16-byte aligned), FP32 intermediates, no MoE, at least one wave "
     "of tiles; 16 outputs a thread, 16-byte IO"},
    {"plain.column_runs", Skeleton::PlainColumnRuns, true, false, refuse_plain_column_runs, preferred_column_runs,
     "per-group into COL_MAJOR / COL_MAJOR_TMA scales past 6 MB, FP32 intermediates, no MoE, at least one wave of "
     "tiles; 8-row runs of scales, 16-byte IO"},
    {"plain", Skeleton::Plain, true, false, refuse_plain<true>, preferred_wide,
     "per-group, per-tensor and microscaling, FP32 intermediates, no MoE, at least one wave of tiles; 16 outputs a "
     "thread, 16-byte IO"},
    {"decode", Skeleton::Decode, true, true, refuse_decode, preferred_decode,
     "per-group 32/64/128, MXFP8, MXFP4, NVFP4, FP32 intermediates, no MoE, below one wave of tiles; 8 outputs a thread, "
     "set-up before the wait for the previous kernel, 16-byte IO"},
    {"group", Skeleton::Group, true, false, refuse_group<true>, nullptr,
     "per-group 32/64/128, per-tensor, MXFP8/MXFP4/NVFP4, any rounding, MoE layouts; 8 outputs a thread, 16-byte IO"},
    {"token.cluster", Skeleton::TokenCluster, true, true, refuse_token_cluster, preferred_token_cluster,
     "per-token rows of up to 24576 outputs that the per-token kernel's block steps over more than once (18432 "
     "outputs at T = 1), FP32 intermediates, no MoE, up to one wave of CTAs; a row over a thread-block cluster in "
     "registers, its amax through distributed shared memory, one pass, 16-byte IO"},
    {"token", Skeleton::Token, true, false, refuse_token<true>, nullptr, "per-token, 16-byte IO"},
    {"columnwise", Skeleton::Columnwise, true, false, refuse_columnwise<true>, nullptr,
     "columnwise output (and rowwise in the same pass), any scheme but BLOCK_2D, 16-byte IO"},
    {"block2d", Skeleton::Block2d, true, false, refuse_block2d_vec, nullptr,
     "BLOCK_2D 128x128 fp32 scales, weights (no activation, not gated), 16-byte IO"},
    {"plain.unaligned", Skeleton::Plain, false, false, refuse_plain<false>, preferred_wide,
     "per-group, per-tensor and microscaling, FP32 intermediates, no MoE, at least one wave of tiles; element IO"},
    {"group.unaligned", Skeleton::Group, false, false, refuse_group<false>, nullptr,
     "per-group, per-tensor and microscaling; element IO for unaligned rows"},
    {"token.unaligned", Skeleton::Token, false, false, refuse_token<false>, nullptr, "per-token, element IO"},
    {"columnwise.unaligned", Skeleton::Columnwise, false, false, refuse_columnwise<false>, nullptr, "columnwise output, element IO"},
};

}  // namespace

void register_cuda_variants(std::vector<Variant>& t) {
    for (const Family& f : kFamilies)
        for (const Entry& e : kEntries)
            if (f.pdl || !e.pdl_only)
                t.push_back({fmt::format("{}.{}", f.prefix, e.suffix), fmt::format("{}; {}", e.covers, f.how),
                             Backend::Cuda, f.min_arch, f.max_arch, e.refuse, e.preferred,
                             KernelForm{e.skeleton, e.vec, f.hw_cvt, f.pdl}, launch_cuda_kernel});
    // BLOCK_2D of any activation and gate layout: one element-IO kernel with software encoding for every arch.
    t.push_back({"sm80.block2d.generic", "BLOCK_2D 128x128 fp32 scales, any activation and gate layout, element IO, software encoding",
                 Backend::Cuda, 80, kAny, refuse_block2d, nullptr, KernelForm{Skeleton::Block2dGeneric}, launch_cuda_kernel});
}

}  // namespace fq
