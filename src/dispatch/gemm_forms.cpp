// Which grouped GEMMs the sm_90a kernels run, and in which form (gemm_forms.h): the refusals, the thresholds and
// their order, in one place.
#include "gemm_forms.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "../common/activation.h"
#include "../common/quantize.h"

namespace fq {
namespace {

bool aligned(const void* p, uintptr_t bytes) { return (reinterpret_cast<uintptr_t>(p) % bytes) == 0; }

}  // namespace

std::string grouped_gemm_cuda_refusal(const GroupedGemmConfig& c, int arch) {
    const OpConfig& e = c.epi;
    if (arch != 90)
        return fmt::format("handle: the grouped GEMM kernel is written for sm_90 (Hopper: TMA, wgmma); this device is "
                           "sm_{} (run the GEMM elsewhere and fqQuantize its C, or use the host backend)", arch);
    if (!e.gated())
        return "epilogueDesc: FQ_QUANT_DESC_GATE_LAYOUT is NONE; the CUDA grouped GEMM fuses gated activations only "
               "(the host backend runs ungated epilogues)";
    if (e.cols % 64 != 0)
        return fmt::format("bLayout: N = {} gives H = N/2 = {}, not a multiple of 64 (the kernel's output tile)", c.n,
                           e.cols);
    if (e.gate == GateLayout::BlockInterleaved && e.gate_block != 32 && e.gate_block % 64 != 0)
        return fmt::format("epilogueDesc: FQ_QUANT_DESC_GATE_BLOCK_WIDTH {} is neither 32 nor a multiple of 64",
                           e.gate_block);
    if (c.m >= (int64_t(1) << 31) || int64_t(c.groups) * c.n >= (int64_t(1) << 31) || c.k >= (int64_t(1) << 31))
        return "aLayout: M, E*N and K must each be below 2^31 (TMA coordinates are 32-bit)";
    if (!aligned(c.a, 16) || !aligned(c.b, 16) || c.lda % 16 != 0 || c.ldb % 16 != 0)
        return "a, b: TMA needs 16-byte aligned operands and row strides";
    if (!aligned(c.c_out, 16) || !aligned(c.d_out, 8))
        return "FQ_GEMM_DESC_C_OUTPUT_POINTER / D_OUTPUT_POINTER: the kernel stores 16 (C) and 8 (D) bytes at a time; "
               "align them so";
    if (!c.quantize) return "";
    if (e.scheme != Scheme::PerGroup || (e.group != 32 && e.group != 64 && e.group != 128))
        return fmt::format("epilogueDesc: scheme {} (group {}): the CUDA grouped GEMM quantizes PER_GROUP 32, 64 or 128 "
                           "(fqQuantize of its bf16 C serves the other schemes)", name(e.scheme), e.group);
    if (e.scales.type != DType::Fp32 || (e.columnwise() && e.col_scales.type != DType::Fp32))
        return "epilogueDesc: FQ_QUANT_DESC_SCALE_TYPE: the CUDA grouped GEMM writes fp32 scales";
    const auto row_layout_ok = [](ScaleLayout l) {
        return l == ScaleLayout::RowMajor || l == ScaleLayout::ColMajor || l == ScaleLayout::ColMajorTma;
    };
    if (!row_layout_ok(e.scales.layout))
        return fmt::format("epilogueDesc: FQ_QUANT_DESC_SCALE_LAYOUT {}: the CUDA grouped GEMM writes ROW_MAJOR, "
                           "COL_MAJOR or COL_MAJOR_TMA fp32 scales", name(e.scales.layout));
    if (!is_fp8(e.quant.out) && e.quant.out != DType::Int8)
        return fmt::format("epilogueDesc: FQ_QUANT_DESC_OUTPUT_TYPE {}: the CUDA grouped GEMM writes one byte per value",
                           name(e.quant.out));
    if (e.columnwise() && e.col_block != 32 && e.col_block != 128)
        return fmt::format("epilogueDesc: FQ_QUANT_DESC_COLUMNWISE_BLOCK {}: the kernel's tiles hold blocks of 32 or 128",
                           e.col_block);
    if (e.rowwise() && (!aligned(c.output, 4) || e.out_ld % 4 != 0))
        return "output: the kernel stores 4 quantized values at a time; align it and its row stride to 4 bytes";
    return "";
}

const char* name(GemmKernel k) {
    switch (k) {
        case GemmKernel::Persistent: return "sm90.gemm.persistent";
        case GemmKernel::Segments: return "sm90.gemm.segments";
        case GemmKernel::SplitK: return "sm90.gemm.split_k";
        case GemmKernel::RowPair: return "sm90.gemm.row_pair";
    }
    return "?";
}

const char* name(GemmPairing p) {
    switch (p) {
        case GemmPairing::Halves: return "halves";
        case GemmPairing::Adjacent: return "adjacent";
        case GemmPairing::Blocks32: return "blocks32";
    }
    return "?";
}

GemmProblem gemm_problem(const GroupedGemmConfig& c) {
    const OpConfig& e = c.epi;
    GemmProblem p;
    p.m_tiles = ceil_div(c.m, int64_t(kGemmTileRows));
    p.unit_cols_tiles = ceil_div(e.cols, int64_t(kGemmUnitCols));
    p.k_blocks = c.k_blocks();
    p.h = e.cols;
    p.groups = c.groups;
    p.group = int32_t(e.group);
    p.out_ld = e.out_ld;
    p.out_aligned16 = reinterpret_cast<uintptr_t>(c.output) % 16 == 0;
    p.rowwise = c.quantize && e.rowwise();
    p.columnwise = c.quantize && e.columnwise();
    p.stash = c.quantize || c.d_out || c.c_out;
    p.lean = p.rowwise && !p.columnwise && !c.c_out && !c.d_out && e.rounding == Rounding::Fp32 &&
             (e.act == Act::Silu || e.act == Act::SwigluOai) && !e.quant.reciprocal && !has_saturation_bound(e.quant) &&
             (e.quant.out == DType::E4M3FN || e.quant.out == DType::E5M2);
    p.segments = c.offsets && c.groups > 1 && !p.columnwise;
    p.pairing = e.gate == GateLayout::Interleaved                                ? GemmPairing::Adjacent
                : e.gate == GateLayout::BlockInterleaved && e.gate_block == 32 ? GemmPairing::Blocks32
                                                                              : GemmPairing::Halves;
    return p;
}

namespace {

// Rule 1: the split of K for a one-group GEMM with fewer units than half the SMs (1: none).
int32_t split_of(const GemmProblem& p, int64_t units, int sm_count, const GemmOccupancy& occupancy) {
    if (p.groups != 1 || !p.stash || 2 * units > sm_count) return 1;
    for (int split = kGemmMaxSplit; split >= 2; --split)
        if (p.k_blocks >= kGemmMinSplitBlocks * split && units <= occupancy(GemmKernel::SplitK, split)) return split;
    return 1;
}

// Rule 2: whether the row-pair kernel takes a GEMM split K would take.
bool takes_row_pair(const GemmProblem& p, int32_t split, int64_t units, const GemmOccupancy& occupancy) {
    const bool epilogue_fits = p.lean && p.groups == 1 && split > 1 && p.group >= 32 && p.group <= kGemmUnitCols &&
                               p.h % 16 == 0 && p.out_ld % 16 == 0 && p.out_aligned16;
    return epilogue_fits && split <= kGemmRowPairMaxSplit && units <= occupancy(GemmKernel::RowPair, 2);
}

}  // namespace

GemmForm choose_gemm_form(const GemmProblem& p, int sm_count, const GemmOccupancy& occupancy) {
    GemmForm f;
    f.pairing = p.pairing;
    const int64_t units = p.m_tiles * p.unit_cols_tiles;
    f.split = split_of(p, units, sm_count, occupancy);
    if (f.split > 1) {
        f.cluster = 1;
        f.pair_cols = p.unit_cols_tiles;
        f.stages = p.k_blocks / f.split >= kGemmFourStageTurns * kGemmSplitStages ? kGemmSplitStages : kGemmStages;
        f.clusters = units;
        const bool row_pair = takes_row_pair(p, f.split, units, occupancy);
        f.kernel = row_pair ? GemmKernel::RowPair : GemmKernel::SplitK;
        f.cluster_size = row_pair ? 2 : f.split;
        return f;
    }
    // Rule 3.
    const int max_pairs = occupancy(GemmKernel::Persistent, 2);
    f.cluster = p.unit_cols_tiles >= 2 && max_pairs > 0 ? 2 : 1;
    f.pair_cols = ceil_div(p.unit_cols_tiles, int64_t(f.cluster));
    // Segments: at most one per group more than the tiles, for offsets in order (this sizes the grid only).
    const int64_t pairs = (p.m_tiles + (p.segments ? p.groups : 0)) * f.pair_cols;
    const int64_t slots = f.cluster == 2 ? max_pairs : sm_count;
    f.clusters = std::min(pairs, slots);
    f.cluster_size = f.cluster;
    f.kernel = p.segments ? GemmKernel::Segments : GemmKernel::Persistent;
    return f;
}

}  // namespace fq
