// The extern "C" boundary of the grouped FP8 GEMM (fqGroupedGemm*, docs/gemm.md): its descriptor, and the
// validation that turns the descriptor, the epilogue's fqQuantDesc_t and the layouts into one GroupedGemmConfig.
// The epilogue goes through the same build_config fqQuantize uses, as a MoE CONTIGUOUS problem over C whose
// experts are the GEMM's groups, so every rule of fqQuantize holds for the epilogue with its own message.
#include "../common/grouped_gemm.h"

#include <utility>

#include "../dispatch/device.h"
#include "../dispatch/grouped_gemm.h"
#include "boundary.h"
#include "config.h"
#include "error.h"
#include "objects.h"
#include "snapshot.h"

using namespace fq;

namespace {

#define FQ_GEMM_ATTR(ID, member, type, lo, hi) \
    Attr { ID, #ID, AttrType::type, offsetof(fqGroupedGemmDescOpaque, member), true, lo, hi }

const Attr kGemmAttrs[] = {
    FQ_GEMM_ATTR(FQ_GEMM_DESC_NUM_GROUPS, num_groups, I32, 1, 1 << 20),
    FQ_GEMM_ATTR(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, group_offsets, Ptr, 0, 0),
    FQ_GEMM_ATTR(FQ_GEMM_DESC_GROUP_COUNTS_POINTER, group_counts, Ptr, 0, 0),
    FQ_GEMM_ATTR(FQ_GEMM_DESC_ALPHA_POINTER, alpha, Ptr, 0, 0),
    FQ_GEMM_ATTR(FQ_GEMM_DESC_A_SCALE_LAYOUT, a_scale_layout, I32, FQ_SCALE_LAYOUT_COL_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR_TMA),
    FQ_GEMM_ATTR(FQ_GEMM_DESC_C_OUTPUT_POINTER, c_output, Ptr, 0, 0),
    FQ_GEMM_ATTR(FQ_GEMM_DESC_D_OUTPUT_POINTER, d_output, Ptr, 0, 0),
    FQ_GEMM_ATTR(FQ_GEMM_DESC_QUANTIZE, quantize, I32, 0, 1),
};

#undef FQ_GEMM_ATTR

// The epilogue with its quantization attributes at their defaults (FQ_GEMM_DESC_QUANTIZE = 0: they are ignored,
// so nothing the caller left there can fail the call): only what computes y is kept.
fqQuantDescOpaque activation_only(const fqQuantDescOpaque& d) {
    fqQuantDescOpaque a;
    a.activation = d.activation;
    a.gate_layout = d.gate_layout;
    a.gate_order = d.gate_order;
    a.gate_block_width = d.gate_block_width;
    a.intermediate_rounding = d.intermediate_rounding;
    a.swiglu_alpha = d.swiglu_alpha;
    a.swiglu_beta = d.swiglu_beta;
    a.swiglu_limit = d.swiglu_limit;
    a.row_prob = d.row_prob;
    return a;
}

// The groups belong to the GEMM descriptor: an epilogue MoE attribute would be a second, conflicting answer.
fqStatus_t check_epilogue_moe(const fqQuantDescOpaque& d) {
    const char* set = d.moe_layout != FQ_MOE_LAYOUT_NONE ? "FQ_QUANT_DESC_MOE_LAYOUT"
                      : d.moe_num_experts != 0          ? "FQ_QUANT_DESC_MOE_NUM_EXPERTS"
                      : d.moe_offsets                   ? "FQ_QUANT_DESC_MOE_OFFSETS_POINTER"
                      : d.moe_counts                    ? "FQ_QUANT_DESC_MOE_COUNTS_POINTER"
                                                        : nullptr;
    if (set)
        return fail(FQ_STATUS_INVALID_VALUE, "epilogueDesc: {} is set, but a grouped GEMM's groups come from its "
                    "descriptor (FQ_GEMM_DESC_NUM_GROUPS, FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, "
                    "FQ_GEMM_DESC_GROUP_COUNTS_POINTER); leave the epilogue's MoE attributes unset", set);
    return FQ_STATUS_SUCCESS;
}

// The epilogue as the GEMM runs it: fqQuantize of C with the groups as MoE CONTIGUOUS experts (no MoE layout for
// one group without offsets, which sizes every scale buffer alike). fqGroupedGemm and
// fqGroupedGemmGetScaleBufferInfo both go through it, so the scale sizes the query gives are the ones the call
// writes (per-tensor schemes: one scale per group), whether or not the offsets are set yet when it is asked.
fqQuantDescOpaque epilogue_over_groups(const fqGroupedGemmDescOpaque& g, fqQuantDescOpaque d) {
    if (g.group_offsets || g.num_groups > 1) {
        d.moe_layout = FQ_MOE_LAYOUT_CONTIGUOUS;
        d.moe_num_experts = g.num_groups;
        d.moe_offsets = g.group_offsets;
        d.moe_counts = g.group_counts;
    }
    return d;
}

fqStatus_t check_gemm_desc(const fqGroupedGemmDescOpaque& g) {
    if (!g.group_offsets && g.num_groups > 1)
        return fail(FQ_STATUS_NULL_POINTER, "FQ_GEMM_DESC_GROUP_OFFSETS_POINTER: NULL, but {} groups need E+1 = {} row "
                    "offsets (NULL means one group of all rows)", g.num_groups, int64_t(g.num_groups) + 1);
    if (!g.group_offsets && g.group_counts)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_GEMM_DESC_GROUP_COUNTS_POINTER: set without "
                    "FQ_GEMM_DESC_GROUP_OFFSETS_POINTER; counts are the valid rows of each offsets slot");
    if (!g.quantize && !g.c_output && !g.d_output)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_GEMM_DESC_QUANTIZE: 0 with neither FQ_GEMM_DESC_C_OUTPUT_POINTER nor "
                    "FQ_GEMM_DESC_D_OUTPUT_POINTER set: the call would write nothing");
    return FQ_STATUS_SUCCESS;
}

// An fp8 e4m3fn operand of the GEMM: type and a row stride the 16-byte loads of the kernel can step over.
fqStatus_t check_operand(const char* arg, const fqTensorLayoutOpaque& l) {
    FQ_TRY(check_layout(arg, l));
    if (l.dtype != FQ_TYPE_FP8_E4M3FN)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: type {} is not FP8_E4M3FN", arg, name(DType(l.dtype)));
    if (l.ld % 16 != 0)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: row stride (ld) {} bytes is not a multiple of 16", arg, l.ld);
    return FQ_STATUS_SUCCESS;
}

// The objects are the caller's variables, by reference: configure_gemm resolves them in place (live_object).
struct GemmArgs {
    fqHandle_t& handle;
    fqGroupedGemmDesc_t& gemm;
    fqQuantDesc_t& epilogue;
    fqTensorLayout_t& a_layout;
    const void* a;
    const void* a_scales;
    fqTensorLayout_t& b_layout;
    const void* b;
    const void* b_scales;
    fqTensorLayout_t& out_layout;
    void* output;
    void* scales;
    size_t scales_bytes;
};

// Everything fqGroupedGemm checks, in the order its messages come; fills `c` completely, and `handle` with the
// handle as the call runs it. Every object is copied once at entry (snapshot.h) and read only as that copy.
fqStatus_t configure_gemm(const GemmArgs& x, fqContext* handle, GroupedGemmConfig* c) {
    FQ_TRY(live_object("handle", x.handle, ObjectKind::Handle));
    FQ_TRY(live_object("gemmDesc", x.gemm, ObjectKind::GemmDesc));
    FQ_TRY(live_object("epilogueDesc", x.epilogue, ObjectKind::Desc));
    FQ_TRY(live_object("aLayout", x.a_layout, ObjectKind::Layout));
    FQ_TRY(live_object("bLayout", x.b_layout, ObjectKind::Layout));
    const fqGroupedGemmDescOpaque g = snapshot(x.gemm);
    if (g.quantize || x.out_layout) FQ_TRY(live_object("outputLayout", x.out_layout, ObjectKind::Layout));
    fqQuantDescOpaque epilogue;
    fqTensorLayoutOpaque la, lb, out_layout;
    {
        const auto lock = lock_object_contents();
        *handle = *x.handle;
        epilogue = *x.epilogue;
        la = *x.a_layout;
        lb = *x.b_layout;
        if (x.out_layout) out_layout = *x.out_layout;  // live: checked above
    }
    FQ_TRY(check_gemm_desc(g));
    FQ_TRY(check_epilogue_moe(epilogue));

    // Shapes: A [M, K], B [E*N, K], C [M, N], y [M, H].
    FQ_TRY(check_operand("aLayout", la));
    FQ_TRY(check_operand("bLayout", lb));
    const int64_t m = la.rows, k = la.cols, e = g.num_groups;
    if (lb.cols != k)
        return fail(FQ_STATUS_INVALID_VALUE, "bLayout: {} columns, but aLayout has K = {}: B is [E*N, K]", lb.cols, k);
    if (lb.rows < e || lb.rows % e != 0)
        return fail(FQ_STATUS_INVALID_VALUE, "bLayout: {} rows are not E*N for FQ_GEMM_DESC_NUM_GROUPS E = {} and "
                    "some N >= 1", lb.rows, e);
    const int64_t n = lb.rows / e;
    const bool gated = epilogue.gate_layout != FQ_GATE_LAYOUT_NONE;
    if (gated && n % 2 != 0)
        return fail(FQ_STATUS_INVALID_VALUE, "bLayout: N = {} is odd, but the epilogue's gated activation reads N = 2H "
                    "columns of C", n);
    const int64_t h = gated ? n / 2 : n;
    const fqTensorLayoutOpaque cl{FQ_TYPE_BF16, m, n, n};
    FQ_TRY(check_layout("aLayout, bLayout: C [M, N]", cl));

    // The epilogue: fqQuantize's rules over C, the groups as MoE CONTIGUOUS experts (epilogue_over_groups).
    const fqQuantDescOpaque d = epilogue_over_groups(g, g.quantize ? epilogue : activation_only(epilogue));
    fqTensorLayoutOpaque out{d.output_type, m, h, h};  // QUANTIZE = 0: a stand-in no byte is written to
    if (g.quantize) {
        out = out_layout;
        if (out.rows != m)
            return fail(FQ_STATUS_INVALID_VALUE, "outputLayout: {} rows, but aLayout has M = {}", out.rows, m);
        if (out.cols != h)
            return fail(FQ_STATUS_INVALID_VALUE, "outputLayout: {} columns, but the epilogue writes H = {} ({}N = {})",
                        out.cols, h, gated ? "gated: N/2, " : "not gated: ", n);
    }
    OpConfig& epi = c->epi;
    FQ_TRY(build_config(*handle, d, cl, out, &epi));

    // Buffers: sizes, presence, alignment (docs/spec.md §6; the host reads fp32 and 16-bit values in place too).
    const int64_t scale_bytes = g.quantize && epi.rowwise() ? epi.scales.bytes * epi.scale_batch : 0;
    const int64_t col_scale_bytes = g.quantize && epi.columnwise() ? epi.col_scales.bytes * epi.scale_batch : 0;
    if (size_t(scale_bytes) > x.scales_bytes)
        return fail(FQ_STATUS_INSUFFICIENT_BUFFER, "scalesSizeInBytes: {} bytes is smaller than the {} the {} layout "
                    "needs for {}x{} scales", x.scales_bytes, scale_bytes, name(epi.scales.layout), epi.scales.rows,
                    epi.scales.cols);
    const bool rows = m > 0;
    const std::pair<const char*, const void*> operands[] = {
        {"a", x.a}, {"aScales", x.a_scales}, {"b", x.b}, {"bScales", x.b_scales}};
    for (const auto& [arg, p] : operands)
        if (rows && !p) return fail(FQ_STATUS_NULL_POINTER, "{}: NULL", arg);
    if (rows && g.quantize && epi.rowwise() && !x.output) return fail(FQ_STATUS_NULL_POINTER, "output: NULL");
    if (scale_bytes > 0 && !x.scales)
        return fail(FQ_STATUS_NULL_POINTER, "scales: NULL, but {} bytes of scales are written", scale_bytes);
    const void* col_scales = col_scale_bytes > 0 ? epi.col_scales_ptr : nullptr;
    const bool fp32_scales = epi.scales.type == DType::Fp32, fp32_col = epi.col_scales.type == DType::Fp32;
    // Every pointer the call reads or writes, with the alignment it needs (the fp8 operands: 16 bytes, the CUDA
    // kernel's TMA rule, the same contract on both backends).
    const struct {
        const char* arg;
        const void* p;
        uintptr_t align;
        const char* what;
    } ptrs[] = {
        {"a", rows ? x.a : nullptr, 16, "fp8 rows"},
        {"aScales", rows ? x.a_scales : nullptr, 4, "fp32"},
        {"b", rows ? x.b : nullptr, 16, "fp8 rows"},
        {"bScales", rows ? x.b_scales : nullptr, 4, "fp32"},
        {"FQ_GEMM_DESC_GROUP_OFFSETS_POINTER", g.group_offsets, 4, "int32"},
        {"FQ_GEMM_DESC_GROUP_COUNTS_POINTER", g.group_counts, 4, "int32"},
        {"FQ_GEMM_DESC_ALPHA_POINTER", rows ? g.alpha : nullptr, 4, "fp32"},
        {"FQ_GEMM_DESC_C_OUTPUT_POINTER", rows ? g.c_output : nullptr, 2, "bf16"},
        {"FQ_GEMM_DESC_D_OUTPUT_POINTER", rows ? g.d_output : nullptr, 2, "bf16"},
        {"FQ_QUANT_DESC_ROW_PROB_POINTER", epi.row_prob, 4, "fp32"},
        {"FQ_QUANT_DESC_STATIC_SCALE_POINTER", epi.static_scale, 4, "fp32"},
        {"FQ_QUANT_DESC_SCALE_UB_POINTER", epi.scale_ub, 4, "fp32"},
        {"FQ_QUANT_DESC_GLOBAL_AMAX_POINTER", epi.global_amax, 4, "fp32"},
        {"FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER", col_scales, fp32_col ? 4u : 1u, "fp32"},
        {"FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER", rows && g.quantize && epi.columnwise() ? epi.col_output : nullptr, 1, ""},
        {"output", rows && g.quantize && epi.rowwise() ? x.output : nullptr, 1, ""},
        {"scales", scale_bytes > 0 ? x.scales : nullptr, fp32_scales ? 4u : 1u, "fp32"},
    };
    for (const auto& p : ptrs)
        if (reinterpret_cast<uintptr_t>(p.p) & (p.align - 1))
            return fail(FQ_STATUS_MISALIGNED, "{}: {} is not {}-byte aligned ({})", p.arg, p.p, p.align, p.what);
    if (handle->backend == Backend::Cuda) {
        // Run on the handle's device only, and only from memory it addresses (src/dispatch/device.h).
        FQ_TRY(cuda_check_current_device(handle->device));
        for (const auto& p : ptrs)
            if (p.p) FQ_TRY(cuda_check_pointer(p.arg, p.p, handle->device));
    }
    epi.vector_aligned = aligned16(x.output) && epi.out_ld % 16 == 0 && (n * 2) % 16 == 0;

    c->m = m;
    c->n = n;
    c->k = k;
    c->lda = la.ld;
    c->ldb = lb.ld;
    c->groups = g.num_groups;
    c->offsets = g.group_offsets;
    c->counts = g.group_counts;
    c->a = static_cast<const uint8_t*>(x.a);
    c->a_scales = static_cast<const float*>(x.a_scales);
    c->a_scale_layout = ScaleLayout(g.a_scale_layout);
    c->a_scale_ld = c->a_scale_layout == ScaleLayout::ColMajorTma ? round_up(m, 4) : m;
    c->b = static_cast<const uint8_t*>(x.b);
    c->b_scales = static_cast<const float*>(x.b_scales);
    c->alpha = g.alpha;
    c->c_out = static_cast<uint16_t*>(g.c_output);
    c->d_out = static_cast<uint16_t*>(g.d_output);
    c->quantize = g.quantize != 0;
    c->output = g.quantize ? x.output : nullptr;
    c->scales = g.quantize ? x.scales : nullptr;
    return FQ_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

fqStatus_t fqGroupedGemmDescCreate(fqGroupedGemmDesc_t* desc) {
    return guarded("fqGroupedGemmDescCreate", [&] { return create_object("desc", desc, ObjectKind::GemmDesc); });
}

fqStatus_t fqGroupedGemmDescDestroy(fqGroupedGemmDesc_t desc) {
    return guarded("fqGroupedGemmDescDestroy", [&] { return destroy_object("desc", desc, ObjectKind::GemmDesc); });
}

fqStatus_t fqGroupedGemmDescSetAttribute(fqGroupedGemmDesc_t desc, int32_t attr, const void* buf, size_t size) {
    return guarded("fqGroupedGemmDescSetAttribute", [&]() -> fqStatus_t {
        FQ_TRY(live_object("desc", desc, ObjectKind::GemmDesc));
        const auto lock = lock_object_contents();
        return set_attr(kGemmAttrs, "grouped GEMM descriptor", desc, attr, buf, size);
    });
}

fqStatus_t fqGroupedGemmDescGetAttribute(fqGroupedGemmDesc_t desc, int32_t attr, void* buf, size_t size,
                                         size_t* written) {
    return guarded("fqGroupedGemmDescGetAttribute", [&]() -> fqStatus_t {
        FQ_TRY(live_object("desc", desc, ObjectKind::GemmDesc));
        const auto lock = lock_object_contents();
        return get_attr(kGemmAttrs, "grouped GEMM descriptor", desc, attr, buf, size, written);
    });
}

fqStatus_t fqGroupedGemmGetScaleBufferInfo(fqGroupedGemmDesc_t gemmDesc, fqQuantDesc_t epilogueDesc, int64_t rows,
                                           int64_t cols, int32_t which, int32_t info, int64_t* value) {
    return guarded("fqGroupedGemmGetScaleBufferInfo", [&]() -> fqStatus_t {
        FQ_TRY(live_object("gemmDesc", gemmDesc, ObjectKind::GemmDesc));
        FQ_TRY(live_object("epilogueDesc", epilogueDesc, ObjectKind::Desc));
        const fqGroupedGemmDescOpaque g = snapshot(gemmDesc);
        const fqQuantDescOpaque epilogue = snapshot(epilogueDesc);
        FQ_TRY(check_epilogue_moe(epilogue));
        return scale_buffer_fact(epilogue_over_groups(g, epilogue), rows, cols, which, info, value);
    });
}

fqStatus_t fqGroupedGemmGetScaleBufferSize(fqGroupedGemmDesc_t gemmDesc, fqQuantDesc_t epilogueDesc, int64_t rows,
                                           int64_t cols, int32_t which, size_t* sizeInBytes) {
    return guarded("fqGroupedGemmGetScaleBufferSize", [&]() -> fqStatus_t {
        if (!sizeInBytes) return fail(FQ_STATUS_NULL_POINTER, "sizeInBytes: NULL output pointer");
        int64_t bytes = 0;
        FQ_TRY(fqGroupedGemmGetScaleBufferInfo(gemmDesc, epilogueDesc, rows, cols, which, FQ_SCALE_INFO_BYTES, &bytes));
        *sizeInBytes = size_t(bytes);
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqGroupedGemm(fqHandle_t handle, fqGroupedGemmDesc_t gemmDesc, fqQuantDesc_t epilogueDesc,
                         fqTensorLayout_t aLayout, const void* a, const void* aScales, fqTensorLayout_t bLayout,
                         const void* b, const void* bScales, fqTensorLayout_t outputLayout, void* output, void* scales,
                         size_t scalesSizeInBytes, fqStream_t stream) {
    return guarded("fqGroupedGemm", [&]() -> fqStatus_t {
        fqContext h;
        GroupedGemmConfig c;
        FQ_TRY(configure_gemm(GemmArgs{handle, gemmDesc, epilogueDesc, aLayout, a, aScales, bLayout, b, bScales,
                                       outputLayout, output, scales, scalesSizeInBytes},
                              &h, &c));
        return run_grouped_gemm(h.backend, h.arch, h.sm_count, c, reinterpret_cast<void*>(stream));
    });
}

}  // extern "C"
