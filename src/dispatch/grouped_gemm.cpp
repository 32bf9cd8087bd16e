// Which grouped GEMMs the sm_90a kernel runs (src/kernels/gemm/grouped_gemm_sm90.cu). Everything else is
// NOT_SUPPORTED on a CUDA handle with a sentence naming the argument; the host backend runs every epilogue.
#include "grouped_gemm.h"

#include <fmt/format.h>

#include <cstdint>

#include "../common/status.h"
#include "../host/grouped_gemm.h"
#include "registry.h"

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

fqStatus_t run_grouped_gemm(Backend backend, int arch, int sm_count, const GroupedGemmConfig& c, void* stream) {
    if (backend == Backend::Cuda) {
        const std::string refusal = grouped_gemm_cuda_refusal(c, arch);
        if (!refusal.empty()) return fail(FQ_STATUS_NOT_SUPPORTED, "{}", refusal);
        // Zero rows: the epilogues the kernel runs (fp32 scales in ROW_MAJOR, COL_MAJOR, COL_MAJOR_TMA) have no
        // byte to write, not even padding, so there is nothing to launch.
        if (c.m == 0) return FQ_STATUS_SUCCESS;
        return run_grouped_gemm_cuda(c, stream, sm_count);
    }
    // The host backend runs every epilogue fqQuantize's host variant runs (the same refusals).
    if (c.quantize) {
        const Variant* v = nullptr;
        FQ_TRY(select_variant(Backend::Host, 0, -1, c.epi, &v));
    }
    host::grouped_gemm(c);
    return FQ_STATUS_SUCCESS;
}

}  // namespace fq
