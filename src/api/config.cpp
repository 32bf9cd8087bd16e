#include "config.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>

#include "error.h"

namespace fq {
namespace {

float format_qmax(DType t) {
    switch (t) {
        case DType::E4M3FN: return 448.0f;
        case DType::E4M3FNUZ: return 240.0f;
        case DType::E5M2: return 57344.0f;
        case DType::Int8: return 127.0f;
        case DType::E2M1: return 6.0f;
        default: return 0.0f;
    }
}

// Which value types a scheme can produce (docs/spec.md §3.1).
bool scheme_takes_output(Scheme s, DType t) {
    switch (s) {
        case Scheme::Mxfp8: return t == DType::E4M3FN || t == DType::E5M2;
        case Scheme::Mxfp4:
        case Scheme::Nvfp4: return t == DType::E2M1;
        default: return is_fp8(t) || t == DType::Int8;
    }
}

int64_t scheme_block(Scheme s, int32_t group_size, int64_t cols) {
    switch (s) {
        case Scheme::PerGroup: return group_size;
        case Scheme::Block2D: return kBlock2D;
        case Scheme::Mxfp8:
        case Scheme::Mxfp4: return 32;
        case Scheme::Nvfp4: return 16;
        default: return cols;  // per-token and per-tensor: the whole row
    }
}

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// ceil(a / b) for a >= 0, b > 0, without forming a + b - 1.
int64_t ceil_div_exact(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Attributes that belong to some schemes only (docs/spec.md §3.3, §6). The microscaling schemes fix their block
// (32, or 16 for NVFP4; FQ_QUANT_DESC_GROUP_SIZE is PER_GROUP's) and their scale rule, so the fp32-scale
// knobs would be silently ignored there: refused instead. SCALE_APPLY is accepted and has no effect (an E8M0
// scale is a power of two, and NVFP4 multiplies by docs/spec.md §3.3's m).
fqStatus_t check_microscaling(const fqQuantDescOpaque& d, Scheme scheme) {
    const bool mx = scheme == Scheme::Mxfp8 || scheme == Scheme::Mxfp4;
    if (d.mx_scale_rule == FQ_MX_SCALE_RULE_FLOOR && !mx)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_MX_SCALE_RULE: FLOOR is a rule of the MXFP8/MXFP4 E8M0 "
                    "scales, not of scheme {}", name(scheme));
    if (d.global_amax && scheme != Scheme::Nvfp4)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_GLOBAL_AMAX_POINTER: a global amax belongs to NVFP4, not "
                    "scheme {}", name(scheme));
    if (!is_microscaling(scheme)) return FQ_STATUS_SUCCESS;
    if (d.scale_ub)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_UB_POINTER: a scale upper bound applies to the fp32-scale "
                    "fp8 schemes, not {} (docs/spec.md §3.3 fixes its scales)", name(scheme));
    if (d.min_scale > 0.0f)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_MIN_SCALE: {} has no minimum scale (docs/spec.md §3.3); leave it 0",
                    name(scheme));
    if (d.scale_rounding != FQ_SCALE_ROUNDING_NONE)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_ROUNDING: {} scales follow {} (docs/spec.md §3.3); leave it NONE",
                    name(scheme), mx ? "FQ_QUANT_DESC_MX_SCALE_RULE" : "the NVFP4 formulas");
    if (d.qmax > 0.0f && (scheme == Scheme::Nvfp4 || d.mx_scale_rule == FQ_MX_SCALE_RULE_FLOOR))
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_QMAX: {} uses no qmax (docs/spec.md §3.3: {}); leave it 0",
                    scheme == Scheme::Nvfp4 ? "NVFP4" : "the FLOOR rule",
                    scheme == Scheme::Nvfp4 ? "the constants 448 and 6" : "emax_elem");
    return FQ_STATUS_SUCCESS;
}

// docs/spec.md §3.4: FQ_QUANT_DESC_GROUP_SIZE belongs to PER_GROUP. Under another scheme a value the caller set is
// refused unless it is the scheme's own block along a row (MXFP8/MXFP4 32, NVFP4 16, BLOCK_2D 128); per-token
// and per-tensor scales have no group to size. Never set (or set to 0), it means nothing and is accepted.
fqStatus_t check_group_size(const fqQuantDescOpaque& d, Scheme scheme) {
    if (scheme == Scheme::PerGroup || !d.group_size_set) return FQ_STATUS_SUCCESS;
    const int64_t own = scheme == Scheme::Block2D ? kBlock2D : scheme == Scheme::Nvfp4 ? 16 : is_microscaling(scheme) ? 32 : 0;
    if (d.group_size == own) return FQ_STATUS_SUCCESS;
    if (own)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_GROUP_SIZE: {} is set, but scheme {} has its own block of {} "
                    "elements; set {} or leave it unset (0)", d.group_size, name(scheme), own, own);
    return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_GROUP_SIZE: {} is set, but scheme {} has no groups ({}); leave "
                "it unset (0)", d.group_size, name(scheme), scheme == Scheme::PerToken ? "one scale per row" : "one scale");
}

// docs/spec.md §5: the MoE attributes that need no pointer, for an output of `rows` rows. The arrays themselves
// live on the device and are checked only for presence, at execution (build_config).
fqStatus_t check_moe(const fqQuantDescOpaque& d, int64_t rows, OpConfig* c) {
    const auto moe = MoeLayout(d.moe_layout);
    c->moe = moe;
    if (moe == MoeLayout::None) {
        if (d.moe_num_experts != 0)
            return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_MOE_NUM_EXPERTS: {} experts without a MoE layout; set "
                        "FQ_QUANT_DESC_MOE_LAYOUT or leave it 0", d.moe_num_experts);
        if (d.moe_offsets || d.moe_counts)
            return fail(FQ_STATUS_INVALID_VALUE, "{}: set without a MoE layout (FQ_QUANT_DESC_MOE_LAYOUT is NONE)",
                        d.moe_offsets ? "FQ_QUANT_DESC_MOE_OFFSETS_POINTER" : "FQ_QUANT_DESC_MOE_COUNTS_POINTER");
        c->num_experts = 0;
        c->expert_rows = 0;
        return FQ_STATUS_SUCCESS;
    }
    const char* layout = moe == MoeLayout::Masked ? "MASKED" : "CONTIGUOUS";
    if (d.moe_num_experts <= 0)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_MOE_NUM_EXPERTS: {} experts; the {} MoE layout needs at least 1",
                    d.moe_num_experts, layout);
    if (moe == MoeLayout::Masked && d.moe_offsets)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_MOE_OFFSETS_POINTER: the MASKED layout reads counts "
                    "(FQ_QUANT_DESC_MOE_COUNTS_POINTER), not offsets");
    if (moe == MoeLayout::Masked && rows % d.moe_num_experts != 0)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_MOE_NUM_EXPERTS: MASKED input [E, max_m, W] is E x max_m "
                    "rows, but {} rows are not a multiple of {} experts", rows, d.moe_num_experts);
    c->num_experts = d.moe_num_experts;
    c->expert_rows = moe == MoeLayout::Masked ? rows / d.moe_num_experts : 0;
    return FQ_STATUS_SUCCESS;
}

// The rows of the columnwise block (docs/spec.md §4, columnwise): FQ_QUANT_DESC_COLUMNWISE_BLOCK (32 or 128) for the
// fp32-scale schemes, the scheme's own block (32, NVFP4 16) for the microscaling ones.
fqStatus_t columnwise_block(const fqQuantDescOpaque& d, Scheme scheme, int64_t* block) {
    if (d.columnwise_block != 32 && d.columnwise_block != 128)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_COLUMNWISE_BLOCK: {} rows is not 32 or 128", d.columnwise_block);
    if (is_microscaling(scheme) && d.columnwise_block != 32)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_COLUMNWISE_BLOCK: {} columnwise blocks are its own {} "
                    "rows; leave the attribute at 32", name(scheme), scheme == Scheme::Nvfp4 ? 16 : 32);
    *block = scheme == Scheme::Nvfp4 ? 16 : (is_microscaling(scheme) ? 32 : d.columnwise_block);
    return FQ_STATUS_SUCCESS;
}

}  // namespace

DType required_scale_type(Scheme s) {
    if (s == Scheme::Mxfp8 || s == Scheme::Mxfp4) return DType::E8M0;
    if (s == Scheme::Nvfp4) return DType::E4M3FN;
    return DType::Fp32;
}

// Bytes of `elements` elements of `dtype` (FP4: two per byte), or -1 on overflow.
int64_t layout_bytes(int32_t dtype, int64_t elements) {
    switch (dtype) {
        case FQ_TYPE_FP32:
        case FQ_TYPE_INT32: return checked_mul(elements, 4);
        case FQ_TYPE_FP16:
        case FQ_TYPE_BF16: return checked_mul(elements, 2);
        case FQ_TYPE_FP4_E2M1: return ceil_div_exact(elements, 2);
        default: return elements;
    }
}

fqStatus_t check_layout(const char* arg, const fqTensorLayoutOpaque& l) {
    if (l.dtype < 0 || l.dtype > FQ_TYPE_INT32)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: dtype {} is not an fqDataType value", arg, l.dtype);
    if (l.rows < 0) return fail(FQ_STATUS_INVALID_VALUE, "{}: rows {} is negative", arg, l.rows);
    if (l.cols <= 0) return fail(FQ_STATUS_INVALID_VALUE, "{}: cols {} must be positive", arg, l.cols);
    if (l.ld < l.cols)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: row stride (ld) {} is smaller than cols {}", arg, l.ld, l.cols);
    if (l.dtype == FQ_TYPE_FP4_E2M1 && l.ld % 2 != 0)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: FP4 elements pack two per byte; the row stride (ld) {} must be even",
                    arg, l.ld);
    // A row (ld elements, at least cols) must be a byte count on its own, whatever the rows (zero included).
    if (layout_bytes(l.dtype, l.ld) < 0)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: row stride (ld) {} elements of {} overflow a 64-bit byte count", arg,
                    l.ld, name(DType(l.dtype)));
    // The extent the tensor spans, rows x ld elements, must be a byte count a pointer can step over.
    const int64_t elements = checked_mul(l.rows, l.ld);
    if (elements < 0 || layout_bytes(l.dtype, elements) < 0)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: rows {} x ld {} elements of {} overflow a 64-bit byte count", arg,
                    l.rows, l.ld, name(DType(l.dtype)));
    return FQ_STATUS_SUCCESS;
}

fqStatus_t resolve_quantization(const fqQuantDescOpaque& d, int64_t rows, int64_t cols, int32_t which,
                                OpConfig* c) {
    if (rows < 0) return fail(FQ_STATUS_INVALID_VALUE, "rows: {} is negative", rows);
    if (cols <= 0) return fail(FQ_STATUS_INVALID_VALUE, "cols: {} must be positive", cols);
    if (which != FQ_OUTPUT_ROWWISE && which != FQ_OUTPUT_COLUMNWISE)
        return fail(FQ_STATUS_INVALID_VALUE, "which: {} is neither FQ_OUTPUT_ROWWISE (1) nor FQ_OUTPUT_COLUMNWISE (2)",
                    which);
    const auto scheme = Scheme(d.scheme);
    const auto out = DType(d.output_type);
    const auto stype = DType(d.scale_type);
    const auto layout = ScaleLayout(d.scale_layout);
    c->scheme = scheme;

    if (!scheme_takes_output(scheme, out))
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_OUTPUT_TYPE: {} is not an output type of scheme {}",
                    name(out), name(scheme));
    if (scheme == Scheme::PerGroup && d.group_size != 32 && d.group_size != 64 && d.group_size != 128)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_GROUP_SIZE: {} is not 32, 64 or 128", d.group_size);

    // Scale element type (docs/spec.md §6: E8M0 only with power-of-two rules; NVFP4 only with E4M3).
    const bool pow2 = d.scale_rounding == FQ_SCALE_ROUNDING_POW2_CEIL;
    const DType needed = required_scale_type(scheme);
    if (needed != DType::Fp32 && stype != needed)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_TYPE: scheme {} needs {} scales, not {}",
                    name(scheme), name(needed), name(stype));
    if (needed == DType::Fp32 && stype != DType::Fp32) {
        const bool e8m0_ok = stype == DType::E8M0 && pow2 && (scheme == Scheme::PerGroup || scheme == Scheme::PerToken);
        if (!e8m0_ok)
            return fail(FQ_STATUS_INVALID_VALUE,
                        "FQ_QUANT_DESC_SCALE_TYPE: {} scales are allowed for scheme {} only as E8M0 with "
                        "FQ_SCALE_ROUNDING_POW2_CEIL (PER_GROUP or PER_TOKEN); otherwise FP32",
                        name(stype), name(scheme));
    }
    if (is_per_tensor(scheme) && layout != ScaleLayout::RowMajor)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_LAYOUT: a per-tensor scale is one value; use ROW_MAJOR, not {}",
                    name(layout));
    const bool byte_scales = scale_type_bytes(stype) == 1;
    if ((layout == ScaleLayout::Swizzled128x4 || layout == ScaleLayout::PackedUe8m0) && !byte_scales)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_LAYOUT: {} holds byte scales (E8M0/E4M3), not {}",
                    name(layout), name(stype));
    if (layout == ScaleLayout::PackedUe8m0 && stype != DType::E8M0)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_LAYOUT: PACKED_UE8M0 needs E8M0 scales, not {}",
                    name(stype));
    if (d.scale_ub && !is_fp8(out))
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_UB_POINTER: a scale upper bound applies to fp8 outputs only, not {}",
                    name(out));
    FQ_TRY(check_microscaling(d, scheme));
    FQ_TRY(check_group_size(d, scheme));

    // Quantizer parameters with defaults resolved (docs/spec.md §3.2, §3.4).
    QuantParams& q = c->quant;
    q.out = out;
    const float fmax = format_qmax(out);
    q.qmax = d.qmax > 0.0f ? d.qmax : fmax;
    if (q.qmax > fmax)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_QMAX: {} exceeds the largest finite {} value {}", q.qmax,
                    name(out), fmax);
    if (d.qmax > 0.0f) q.sat = saturation_bound(out, q.qmax);  // an override also bounds the codes (docs/spec.md §3.4)
    q.min_scale = d.min_scale > 0.0f ? d.min_scale : (out == DType::Int8 ? FLT_EPSILON : 1.0f / (q.qmax * 512.0f));
    q.pow2_ceil = pow2;
    q.reciprocal = d.scale_apply == FQ_SCALE_APPLY_MULTIPLY_RECIPROCAL;
    q.mx_floor = d.mx_scale_rule == FQ_MX_SCALE_RULE_FLOOR;

    // Scale geometry (docs/spec.md §4, §5). Per-tensor schemes keep one scale per expert; MASKED keeps one block
    // per expert of its max_m rows; CONTIGUOUS indexes the stacked rows as one tensor.
    FQ_TRY(check_moe(d, rows, c));
    const bool masked = c->moe == MoeLayout::Masked;
    const int64_t block_rows = masked ? c->expert_rows : rows;  // the rows one scale block covers
    c->scale_batch = masked || (c->moe != MoeLayout::None && is_per_tensor(scheme)) ? c->num_experts : 1;
    c->group = scheme_block(scheme, d.group_size, cols);
    const int64_t tensor_scales = scheme == Scheme::PerTensorDynamic ? 1 : 0;
    int64_t srows, scols;
    if (which == FQ_OUTPUT_ROWWISE) {
        // BLOCK_2D: one scale per 128x128 tile, a scale grid of [ceil(M/128), ceil(K/128)] (docs/spec.md §3.1).
        srows = is_per_tensor(scheme) ? tensor_scales
                : scheme == Scheme::Block2D ? ceil_div_exact(block_rows, kBlock2D) : block_rows;
        scols = is_per_tensor(scheme) ? tensor_scales : ceil_div_exact(cols, c->group);
    } else {  // S_col[h, b]: one row of scales per output column, one column per block of rows
        FQ_TRY(columnwise_block(d, scheme, &c->col_block));
        srows = is_per_tensor(scheme) ? tensor_scales : cols;
        scols = is_per_tensor(scheme) ? tensor_scales : ceil_div_exact(block_rows, c->col_block);
    }
    const std::optional<ScaleGeometry> g = checked_scale_geometry(layout, stype, srows, scols);
    if (!g || checked_mul(g->bytes, c->scale_batch) < 0)
        return fail(FQ_STATUS_INVALID_VALUE, "rows, cols: {} x {} scales of {} x {} values{} overflow a 64-bit byte count",
                    srows, scols, rows, cols, c->scale_batch > 1 ? fmt::format(" in {} blocks", c->scale_batch) : "");
    (which == FQ_OUTPUT_ROWWISE ? c->scales : c->col_scales) = *g;
    return FQ_STATUS_SUCCESS;
}

// The columnwise attributes of an execution (docs/spec.md §4): the pointers when columnwise output is asked for,
// and none of them set when it is not (they would be silently ignored).
fqStatus_t check_columnwise(const fqQuantDescOpaque& d, const fqTensorLayoutOpaque& out, const OpConfig* c) {
    if (!c->columnwise()) {
        if (d.columnwise_output || d.columnwise_scales || d.columnwise_transpose || d.columnwise_block != 32)
            return fail(FQ_STATUS_INVALID_VALUE, "{}: set, but FQ_QUANT_DESC_OUTPUTS does not ask for FQ_OUTPUT_COLUMNWISE",
                        d.columnwise_output ? "FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER"
                        : d.columnwise_scales ? "FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER"
                        : d.columnwise_transpose ? "FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE" : "FQ_QUANT_DESC_COLUMNWISE_BLOCK");
        return FQ_STATUS_SUCCESS;
    }
    if (out.rows > 0 && !d.columnwise_output)
        return fail(FQ_STATUS_NULL_POINTER, "FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER: NULL, but FQ_QUANT_DESC_OUTPUTS asks "
                    "for columnwise values");
    if (c->col_scales.bytes > 0 && !d.columnwise_scales)
        return fail(FQ_STATUS_NULL_POINTER, "FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER: NULL, but {} bytes of columnwise "
                    "scales are written", c->col_scales.bytes * c->scale_batch);
    // Transposed FP4 packs two rows of a column per byte: every row run (max_m per expert) must pair up.
    const int64_t run = c->moe == MoeLayout::Masked ? c->expert_rows : out.rows;
    if (d.columnwise_transpose && out.dtype == FQ_TYPE_FP4_E2M1 && run % 2 != 0)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE: transposed FP4 packs two rows per byte; "
                    "{} {} is odd", run, c->moe == MoeLayout::Masked ? "rows per expert (max_m)" : "rows");
    return FQ_STATUS_SUCCESS;
}

fqStatus_t build_config(const fqContext& h, const fqQuantDescOpaque& d, const fqTensorLayoutOpaque& in,
                        const fqTensorLayoutOpaque& out, OpConfig* c) {
    FQ_TRY(check_layout("inputLayout", in));
    FQ_TRY(check_layout("outputLayout", out));
    if (in.dtype != FQ_TYPE_BF16 && in.dtype != FQ_TYPE_FP16)
        return fail(FQ_STATUS_INVALID_VALUE, "inputLayout: type {} is not BF16 or FP16", name(DType(in.dtype)));
    if (out.dtype != d.output_type)
        return fail(FQ_STATUS_INVALID_VALUE, "outputLayout: type {} differs from FQ_QUANT_DESC_OUTPUT_TYPE {}",
                    name(DType(out.dtype)), name(DType(d.output_type)));
    if (in.rows != out.rows)
        return fail(FQ_STATUS_INVALID_VALUE, "outputLayout: {} rows, but inputLayout has {}", out.rows, in.rows);

    c->gate = GateLayout(d.gate_layout);
    c->act = Act(d.activation);
    const bool gated = c->gate != GateLayout::None;
    if (c->act == Act::SwigluOai && !gated)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_ACTIVATION: SWIGLU_OAI is gated; set FQ_QUANT_DESC_GATE_LAYOUT");
    if (gated ? (in.cols % 2 != 0 || in.cols / 2 != out.cols) : in.cols != out.cols) {
        if (gated && out.cols > kInt64Max / 2)
            return fail(FQ_STATUS_INVALID_VALUE, "inputLayout: {} columns, but a gated input for {} output columns has "
                        "twice as many, more than a 64-bit count", in.cols, out.cols);
        return fail(FQ_STATUS_INVALID_VALUE, "inputLayout: {} columns, but a {} input for {} output columns has {}",
                    in.cols, gated ? "gated" : "non-gated", out.cols, gated ? 2 * out.cols : out.cols);
    }
    if (c->gate == GateLayout::BlockInterleaved) {
        if (d.gate_block_width <= 0 || d.gate_block_width % 32 != 0)
            return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_GATE_BLOCK_WIDTH: {} is not a positive multiple of 32",
                        d.gate_block_width);
        if (out.cols % d.gate_block_width != 0)
            return fail(FQ_STATUS_INVALID_VALUE,
                        "FQ_QUANT_DESC_GATE_BLOCK_WIDTH: output width {} is not a multiple of the block width {}",
                        out.cols, d.gate_block_width);
    }
    if (out.dtype == FQ_TYPE_FP4_E2M1 && out.cols % 2 != 0)
        return fail(FQ_STATUS_INVALID_VALUE, "outputLayout: FP4 values pack two per byte; cols {} must be even",
                    out.cols);

    c->outputs = d.outputs;
    if (c->outputs == 0)
        return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_OUTPUTS: asks for no output (set ROWWISE, COLUMNWISE or both)");
    // Both geometries, whichever outputs are asked for: the rowwise one carries the scheme's facts.
    FQ_TRY(resolve_quantization(d, out.rows, out.cols, FQ_OUTPUT_ROWWISE, c));
    if (c->columnwise()) FQ_TRY(resolve_quantization(d, out.rows, out.cols, FQ_OUTPUT_COLUMNWISE, c));
    // Checked here, not in resolve_quantization: a scale-buffer size query needs no pointer.
    if (c->scheme == Scheme::PerTensorStatic && !d.static_scale)
        return fail(FQ_STATUS_NULL_POINTER, "FQ_QUANT_DESC_STATIC_SCALE_POINTER: PER_TENSOR_STATIC needs the caller's scale{}",
                    c->moe != MoeLayout::None ? " (one per expert)" : "");
    if (c->moe == MoeLayout::Contiguous && !d.moe_offsets)
        return fail(FQ_STATUS_NULL_POINTER, "FQ_QUANT_DESC_MOE_OFFSETS_POINTER: the CONTIGUOUS MoE layout needs E+1 = {} "
                    "row offsets", int64_t(c->num_experts) + 1);
    if (c->moe == MoeLayout::Masked && !d.moe_counts)
        return fail(FQ_STATUS_NULL_POINTER, "FQ_QUANT_DESC_MOE_COUNTS_POINTER: the MASKED MoE layout needs E = {} valid "
                    "row counts", c->num_experts);
    FQ_TRY(check_columnwise(d, out, c));

    c->in_type = in.dtype == FQ_TYPE_BF16 ? InType::Bf16 : InType::Fp16;
    c->rows = in.rows;
    c->in_cols = in.cols;
    c->in_ld = in.ld;
    c->cols = out.cols;
    c->out_ld = out.ld;
    c->gate_order = GateOrder(d.gate_order);
    c->gate_block = d.gate_block_width;
    c->rounding = Rounding(d.intermediate_rounding);
    c->swiglu = {d.swiglu_alpha, d.swiglu_beta, d.swiglu_limit};
    c->row_prob = d.row_prob;
    c->static_scale = d.static_scale;
    c->scale_ub = d.scale_ub;
    c->global_amax = d.global_amax;
    c->moe_offsets = d.moe_offsets;
    c->moe_counts = d.moe_counts;
    c->col_transpose = d.columnwise_transpose != 0;
    c->col_output = d.columnwise_output;
    c->col_scales_ptr = d.columnwise_scales;
    (void)h;
    return FQ_STATUS_SUCCESS;
}

fqStatus_t scale_buffer_fact(const fqQuantDescOpaque& d, int64_t rows, int64_t cols, int32_t which, int32_t info,
                             int64_t* value) {
    if (!value) return fail(FQ_STATUS_NULL_POINTER, "value: NULL output pointer");
    OpConfig c;
    FQ_TRY(resolve_quantization(d, rows, cols, which, &c));
    const ScaleGeometry& g = which == FQ_OUTPUT_ROWWISE ? c.scales : c.col_scales;
    // A layout linear in m and in k (per storage element) reports its two strides; the others report 0. One row
    // or one storage element on from S[0, 0] lies within the buffer's size, so these never overflow; the
    // strides of digits the extents never reach are 0 (scale_strides) and constrain nothing.
    const int64_t per_word = scale_padding(g.layout, scale_type_bytes(g.type)).per_word;
    const int64_t origin = scale_offset(g, 0, 0);
    const int64_t row_stride = scale_offset(g, 1, 0) - origin, col_stride = scale_offset(g, 0, per_word) - origin;
    const ScaleStrides st = scale_strides(g);
    const bool affine = (g.padded_rows <= 128 || st.rows128 == 128 * row_stride) &&
                        (g.padded_rows <= 32 || st.rows32 == 32 * row_stride) &&
                        (per_word == 4 || padded_scale_cols(g) <= 4 || st.cols4 == 4 * col_stride);
    switch (info) {
        case FQ_SCALE_INFO_BYTES: *value = g.bytes * c.scale_batch; break;
        case FQ_SCALE_INFO_ROWS: *value = g.rows; break;
        case FQ_SCALE_INFO_COLS: *value = g.cols; break;
        case FQ_SCALE_INFO_PADDED_ROWS: *value = g.padded_rows; break;
        case FQ_SCALE_INFO_PADDED_COLS: *value = g.padded_cols; break;
        case FQ_SCALE_INFO_ROW_STRIDE: *value = affine ? row_stride : 0; break;
        case FQ_SCALE_INFO_COL_STRIDE: *value = affine ? col_stride : 0; break;
        case FQ_SCALE_INFO_ELEMENT_BYTES: *value = g.elem_bytes; break;
        case FQ_SCALE_INFO_DTYPE: *value = int64_t(g.type); break;
        case FQ_SCALE_INFO_BATCH: *value = c.scale_batch; break;
        case FQ_SCALE_INFO_BATCH_STRIDE: *value = g.bytes; break;
        default: return fail(FQ_STATUS_INVALID_VALUE, "info: {} is not an fqScaleInfo value", info);
    }
    return FQ_STATUS_SUCCESS;
}

}  // namespace fq
