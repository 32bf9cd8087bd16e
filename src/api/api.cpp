// The extern "C" boundary: every public function is here. Each one clears the thread's message, checks
// its arguments, and turns every C++ exception into a status (nothing escapes into C callers).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <new>
#include <optional>
#include <type_traits>

#include "../dispatch/device.h"
#include "../dispatch/registry.h"
#include "../dispatch/scale_repack.h"
#include "boundary.h"
#include "config.h"
#include "error.h"
#include "objects.h"
#include "one_call.h"
#include "snapshot.h"

using namespace fq;

// The internal enum classes mirror the header; these pin them together.
static_assert(int(DType::E8M0) == FQ_TYPE_E8M0 && int(DType::Int32) == FQ_TYPE_INT32, "fqDataType drifted");
#define FQ_PIN(PREFIX, Enum, Internal, value, NAME) \
    static_assert(int(Enum::Internal) == PREFIX##NAME, "enum_lists.h: " #Enum "::" #Internal " is not " #PREFIX #NAME);
#define FQ_PIN_ACTIVATION(Internal, value, NAME, ...) FQ_PIN(FQ_ACTIVATION_, Act, Internal, value, NAME)
#define FQ_PIN_SCHEME(Internal, value, NAME, ...) FQ_PIN(FQ_SCHEME_, Scheme, Internal, value, NAME)
#define FQ_PIN_SCALE_LAYOUT(Internal, value, NAME, ...) FQ_PIN(FQ_SCALE_LAYOUT_, ScaleLayout, Internal, value, NAME)
#define FQ_PIN_GATE_LAYOUT(Internal, value, NAME, ...) FQ_PIN(FQ_GATE_LAYOUT_, GateLayout, Internal, value, NAME)
FQ_PUBLIC_ACTIVATIONS(FQ_PIN_ACTIVATION)
FQ_SCHEMES(FQ_PIN_SCHEME)
FQ_PUBLIC_SCALE_LAYOUTS(FQ_PIN_SCALE_LAYOUT)
FQ_GATE_LAYOUTS(FQ_PIN_GATE_LAYOUT)
static_assert(int(Rounding::RoundBoth) == FQ_ROUNDING_ROUND_BOTH, "fqIntermediateRounding drifted");
static_assert(int(MoeLayout::Masked) == FQ_MOE_LAYOUT_MASKED, "fqMoeLayout drifted");
static_assert(int(RepackBatching::BlocksToStacked) == FQ_SCALE_REPACK_BLOCKS_TO_STACKED &&
              int(RepackBatching::StackedToBlocks) == FQ_SCALE_REPACK_STACKED_TO_BLOCKS, "fqScaleRepackBatching drifted");

namespace {

// What the dispatcher reads of a handle: the facts fqCreate cached and the handle's options.
DeviceFacts device_facts(const fqContext& h) {
    return DeviceFacts{h.arch, h.sm_count, h.allow_pdl != 0, h.wide_tile_min};
}

#define FQ_DESC_ATTR(ID, member, type, lo, hi) \
    Attr { ID, #ID, AttrType::type, offsetof(fqQuantDescOpaque, member), true, lo, hi }

const Attr kDescAttrs[] = {
    FQ_DESC_ATTR(FQ_QUANT_DESC_ACTIVATION, activation, I32, 0, kActivationCount - 1),
    FQ_DESC_ATTR(FQ_QUANT_DESC_GATE_LAYOUT, gate_layout, I32, 0, kGateLayoutCount - 1),
    FQ_DESC_ATTR(FQ_QUANT_DESC_GATE_ORDER, gate_order, I32, 0, FQ_GATE_ORDER_UP_FIRST),
    FQ_DESC_ATTR(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, gate_block_width, I32, 32, 1 << 20),
    FQ_DESC_ATTR(FQ_QUANT_DESC_INTERMEDIATE_ROUNDING, intermediate_rounding, I32, 0, FQ_ROUNDING_ROUND_BOTH),
    FQ_DESC_ATTR(FQ_QUANT_DESC_SCHEME, scheme, I32, 0, kSchemeCount - 1),
    FQ_DESC_ATTR(FQ_QUANT_DESC_GROUP_SIZE, group_size, I32, 0, 1 << 20),
    FQ_DESC_ATTR(FQ_QUANT_DESC_OUTPUT_TYPE, output_type, I32, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP4_E2M1),
    FQ_DESC_ATTR(FQ_QUANT_DESC_SCALE_TYPE, scale_type, I32, 0, FQ_TYPE_E8M0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_SCALE_LAYOUT, scale_layout, I32, 0, kScaleLayoutCount - 1),
    FQ_DESC_ATTR(FQ_QUANT_DESC_SCALE_ROUNDING, scale_rounding, I32, 0, FQ_SCALE_ROUNDING_POW2_CEIL),
    FQ_DESC_ATTR(FQ_QUANT_DESC_MX_SCALE_RULE, mx_scale_rule, I32, 0, FQ_MX_SCALE_RULE_FLOOR),
    FQ_DESC_ATTR(FQ_QUANT_DESC_SCALE_APPLY, scale_apply, I32, 0, FQ_SCALE_APPLY_MULTIPLY_RECIPROCAL),
    FQ_DESC_ATTR(FQ_QUANT_DESC_QMAX, qmax, F32, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_MIN_SCALE, min_scale, F32, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_SWIGLU_ALPHA, swiglu_alpha, F32, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_SWIGLU_BETA, swiglu_beta, F32, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_SWIGLU_LIMIT, swiglu_limit, F32, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_STATIC_SCALE_POINTER, static_scale, Ptr, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_SCALE_UB_POINTER, scale_ub, Ptr, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_ROW_PROB_POINTER, row_prob, Ptr, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_MOE_LAYOUT, moe_layout, I32, 0, FQ_MOE_LAYOUT_MASKED),
    FQ_DESC_ATTR(FQ_QUANT_DESC_MOE_NUM_EXPERTS, moe_num_experts, I32, 0, 1 << 20),
    FQ_DESC_ATTR(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, moe_offsets, Ptr, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_MOE_COUNTS_POINTER, moe_counts, Ptr, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_OUTPUTS, outputs, I32, 0, FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE),
    FQ_DESC_ATTR(FQ_QUANT_DESC_COLUMNWISE_BLOCK, columnwise_block, I32, 32, 128),
    FQ_DESC_ATTR(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, columnwise_transpose, I32, 0, 1),
    FQ_DESC_ATTR(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, columnwise_output, Ptr, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, columnwise_scales, Ptr, 0, 0),
    FQ_DESC_ATTR(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, global_amax, Ptr, 0, 0),
};

const Attr kLayoutAttrs[] = {
    {FQ_TENSOR_LAYOUT_TYPE, "FQ_TENSOR_LAYOUT_TYPE", AttrType::I32, offsetof(fqTensorLayoutOpaque, dtype), true, 0, FQ_TYPE_INT32},
    {FQ_TENSOR_LAYOUT_ROWS, "FQ_TENSOR_LAYOUT_ROWS", AttrType::I64, offsetof(fqTensorLayoutOpaque, rows), true, 0, kAny},
    {FQ_TENSOR_LAYOUT_COLS, "FQ_TENSOR_LAYOUT_COLS", AttrType::I64, offsetof(fqTensorLayoutOpaque, cols), true, 1, kAny},
    {FQ_TENSOR_LAYOUT_LD, "FQ_TENSOR_LAYOUT_LD", AttrType::I64, offsetof(fqTensorLayoutOpaque, ld), true, 1, kAny},
};

const Attr kHandleAttrs[] = {
    {FQ_HANDLE_BACKEND, "FQ_HANDLE_BACKEND", AttrType::I32, offsetof(fqContext, backend), false, 0, 0},
    {FQ_HANDLE_DEVICE, "FQ_HANDLE_DEVICE", AttrType::I32, offsetof(fqContext, device), false, 0, 0},
    {FQ_HANDLE_ARCH, "FQ_HANDLE_ARCH", AttrType::I32, offsetof(fqContext, arch), false, 0, 0},
    {FQ_HANDLE_SM_COUNT, "FQ_HANDLE_SM_COUNT", AttrType::I32, offsetof(fqContext, sm_count), false, 0, 0},
    {FQ_HANDLE_ALLOW_PDL, "FQ_HANDLE_ALLOW_PDL", AttrType::I32, offsetof(fqContext, allow_pdl), true, 0, 1},
    {FQ_HANDLE_VARIANT, "FQ_HANDLE_VARIANT", AttrType::I32, offsetof(fqContext, variant), true, -1, 1 << 20},
    {FQ_HANDLE_WIDE_TILE_MIN, "FQ_HANDLE_WIDE_TILE_MIN", AttrType::I32, offsetof(fqContext, wide_tile_min), true, -1, INT32_MAX},
};

#define FQ_PLAN_ATTR(ID, member) \
    Attr { ID, #ID, AttrType::I64, offsetof(fqPlanOpaque::Facts, member), false, 0, 0 }
const Attr kPlanAttrs[] = {
    FQ_PLAN_ATTR(FQ_PLAN_WORKSPACE_SIZE, workspace_bytes),
    FQ_PLAN_ATTR(FQ_PLAN_SCALE_BUFFER_SIZE, scale_bytes),
    FQ_PLAN_ATTR(FQ_PLAN_COLUMNWISE_SCALE_BUFFER_SIZE, col_scale_bytes),
};

void copy_name(const char* s, char* dst, size_t cap) {
    if (!dst || cap == 0) return;
    const size_t n = std::min(std::strlen(s), cap - 1);
    std::memcpy(dst, s, n);
    dst[n] = '\0';
}

// The objects of one fqQuantize-shaped call, copied once at entry (snapshot.h): validated and run from, never
// read again.
struct QuantObjects {
    fqContext handle;
    fqQuantDescOpaque desc;
    fqTensorLayoutOpaque in, out;
};

// Resolves a problem from its objects' copies: validated into the plan's configuration, no variant chosen yet.
fqStatus_t resolve(const QuantObjects& o, fqPlanOpaque* p) {
    p->handle = o.handle;
    p->in_dtype = o.in.dtype;
    p->out_dtype = o.out.dtype;
    return build_config(o.handle, o.desc, o.in, o.out, &p->config);
}

// A plan's slot for the variant of buffers of c's alignment (fqPlanOpaque::variant); kAlignedSlot: every buffer
// and row stride 16-byte aligned.
constexpr int kAlignedSlot = 3;
int variant_slot(const OpConfig& c) { return (c.vector_aligned ? 1 : 0) + (c.scales_aligned ? 2 : 0); }

// The variant that runs `c` (a resolved problem with its buffers' alignment in c.vector_aligned and
// c.scales_aligned): the plan's choice, or the dispatcher's now. The API's one call of the dispatcher.
fqStatus_t choose_variant(const fqPlanOpaque& p, const OpConfig& c, const Variant** v) {
    if (const Variant* chosen = p.variant[variant_slot(c)]) {
        *v = chosen;
        return FQ_STATUS_SUCCESS;
    }
    return select_variant(p.handle.backend, device_facts(p.handle), p.handle.variant, c, v);
}

// Chooses, where it can, the variant of a resolved problem ahead of its buffers, for 16-byte-aligned data
// buffers and row strides or for others, with a 16-byte-aligned scale buffer (the usual case; calls with another
// scale buffer choose per call). Where no variant runs it, nullptr stays, to be refused when the call gets
// there (in the order fqQuantize checks things, so with its message).
void choose_variant_ahead(fqPlanOpaque* p, bool aligned) {
    OpConfig c = p->config;
    c.vector_aligned = aligned;
    c.scales_aligned = true;
    const int slot = variant_slot(c);
    if (choose_variant(*p, c, &p->variant[slot]) != FQ_STATUS_SUCCESS) {
        p->variant[slot] = nullptr;
        clear_last_error();
    }
}

// What this thread last resolved (configure), for the same objects while no attribute was written since: the
// objects' values as the caller passed them (a value is never reused for another object) and the generation of
// the objects' contents it was copied at.
struct LastResolved {
    const void* values[4] = {};
    uint64_t generation = 0;
    bool valid = false;
    fqPlanOpaque plan;
};
static_assert(std::is_trivially_destructible_v<LastResolved>, "usable from the caller's thread_local destructors");
thread_local LastResolved t_last;

// The caller's objects, checked live and copied under one lock, then resolved with the variant for aligned
// buffers chosen ahead (the usual case; others are chosen per call, or by fqPlanCreate); a repeated call on the
// same unchanged objects takes this thread's last resolution instead (it is what resolving again would give:
// the same contents, the same immutable dispatch table).
fqStatus_t configure(fqHandle_t handle, fqQuantDesc_t desc, fqTensorLayout_t in, fqTensorLayout_t out,
                     fqPlanOpaque* p) {
    const void* const values[4] = {handle, desc, in, out};
    FQ_TRY(live_object("handle", handle, ObjectKind::Handle));
    FQ_TRY(live_object("desc", desc, ObjectKind::Desc));
    FQ_TRY(live_object("inputLayout", in, ObjectKind::Layout));
    FQ_TRY(live_object("outputLayout", out, ObjectKind::Layout));
    QuantObjects o;
    uint64_t generation = 0;
    {
        const auto lock = lock_object_contents();
        generation = object_contents_generation();
        if (t_last.valid && t_last.generation == generation && std::equal(values, values + 4, t_last.values)) {
            *p = t_last.plan;
            return FQ_STATUS_SUCCESS;
        }
        o = QuantObjects{*handle, *desc, *in, *out};
    }
    t_last.valid = false;
    FQ_TRY(resolve(o, p));
    choose_variant_ahead(p, true);
    std::copy(values, values + 4, t_last.values);
    t_last.generation = generation;
    t_last.plan = *p;
    t_last.valid = true;
    return FQ_STATUS_SUCCESS;
}

// fqTensorLayoutCreate's checks of a new layout, shared with the one-call entry points (whose layouts are
// refused with the same statuses and messages).
fqStatus_t new_layout(int32_t dtype, int64_t rows, int64_t cols, int64_t ld, fqTensorLayoutOpaque* out) {
    if (dtype < 0 || dtype > FQ_TYPE_INT32) return fail(FQ_STATUS_INVALID_VALUE, "dtype: {} is not an fqDataType value", dtype);
    if (rows < 0) return fail(FQ_STATUS_INVALID_VALUE, "rows: {} is negative", rows);
    if (cols <= 0) return fail(FQ_STATUS_INVALID_VALUE, "cols: {} must be positive", cols);
    if (ld < cols) return fail(FQ_STATUS_INVALID_VALUE, "ld: {} is smaller than cols {}", ld, cols);
    *out = fqTensorLayoutOpaque{dtype, rows, cols, ld};
    FQ_TRY(check_layout("layout", *out));  // FP4 strides, and extents that overflow
    return FQ_STATUS_SUCCESS;
}

// Bytes from the first byte of `rows` rows of `cols` elements, `ld` apart, to one past the last (0 without
// rows); the layout's bounds (check_layout) keep every product in range.
int64_t span_bytes(int32_t dtype, int64_t rows, int64_t cols, int64_t ld) {
    return rows == 0 ? 0 : layout_bytes(dtype, (rows - 1) * ld + cols);
}

bool overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
    const auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
    return a_bytes > 0 && b_bytes > 0 && pa < pb + uintptr_t(b_bytes) && pb < pa + uintptr_t(a_bytes);
}

// An execution entry point reads its inputs and writes each output into memory of its own (docs/api.md,
// "Aliasing"): any two of its buffers that share a byte are refused, the message naming both.
struct Region {
    const char* arg;
    const void* p;
    int64_t bytes;
};
template <size_t N>
fqStatus_t check_no_aliasing(const char* function, const Region (&r)[N]) {
    for (size_t i = 0; i < N; ++i)
        for (size_t j = i + 1; j < N; ++j)
            if (overlap(r[i].p, r[i].bytes, r[j].p, r[j].bytes))
                return fail(FQ_STATUS_INVALID_VALUE, "{}: overlaps {} ({} bytes at {} and {} bytes at {}); {} reads "
                            "its inputs and writes each output into memory of its own", r[j].arg, r[i].arg, r[j].bytes,
                            r[j].p, r[i].bytes, r[i].p, function);
    return FQ_STATUS_SUCCESS;
}

// Bytes of the scale buffers a call writes: `scales` (none with columnwise output only) and the columnwise ones.
int64_t rowwise_scale_bytes(const OpConfig& c) { return c.rowwise() ? c.scales.bytes * c.scale_batch : 0; }
int64_t columnwise_scale_bytes(const OpConfig& c) { return c.columnwise() ? c.col_scales.bytes * c.scale_batch : 0; }

struct NamedPointer {
    const char* arg;
    const void* p;
};

// The descriptor's pointers a call reads or writes (NULL where it uses none). The first seven hold 4-byte
// elements (fp32, or int32 at 4 and 5); the columnwise scales appear at 6 when they are fp32, else at 7.
constexpr size_t kFourBytePointers = 7;
std::array<NamedPointer, 9> descriptor_pointers(const OpConfig& c) {
    const void* col_scales = columnwise_scale_bytes(c) > 0 ? c.col_scales_ptr : nullptr;
    return {{{"FQ_QUANT_DESC_STATIC_SCALE_POINTER", c.static_scale}, {"FQ_QUANT_DESC_SCALE_UB_POINTER", c.scale_ub},
             {"FQ_QUANT_DESC_ROW_PROB_POINTER", c.row_prob}, {"FQ_QUANT_DESC_GLOBAL_AMAX_POINTER", c.global_amax},
             {"FQ_QUANT_DESC_MOE_OFFSETS_POINTER", c.moe_offsets}, {"FQ_QUANT_DESC_MOE_COUNTS_POINTER", c.moe_counts},
             {"FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER", c.col_scales.type == DType::Fp32 ? col_scales : nullptr},
             {"FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER", c.col_scales.type == DType::Fp32 ? nullptr : col_scales},
             {"FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER", c.columnwise() && c.rows ? c.col_output : nullptr}}};
}

fqStatus_t check_descriptor_alignment(const OpConfig& c) {
    const auto ptrs = descriptor_pointers(c);
    for (size_t i = 0; i < kFourBytePointers; ++i)
        if (reinterpret_cast<uintptr_t>(ptrs[i].p) & 3u)
            return fail(FQ_STATUS_MISALIGNED, "{}: {} is not 4-byte aligned ({})", ptrs[i].arg, ptrs[i].p,
                        i == 4 || i == 5 ? "int32" : "fp32");
    return FQ_STATUS_SUCCESS;
}

// On a CUDA handle, with its device current: each pointer is memory that device addresses (device.h).
template <size_t N>
fqStatus_t check_devices(const fqContext& h, const std::array<NamedPointer, N>& ptrs) {
    for (const auto& [arg, p] : ptrs)
        if (p) FQ_TRY(cuda_check_pointer(arg, p, h.device));
    return FQ_STATUS_SUCCESS;
}

// What fqPlanCreate checks once and fqQuantize on every call: the descriptor's pointers.
enum class DescriptorPointers { CheckNow, CheckedInPlan };

// fqQuantize from its resolved problem on: the buffers' checks and the launch. Every quantizing entry point
// (fqQuantize, fqPlanExecute, the one-call fqQuantizeSimple and fqQuantizeDLPack) ends here, so each refuses a
// buffer with the same status and message. A plan's execution skips only the descriptor's pointers (checked
// when the plan was made) and takes the variants chosen then.
fqStatus_t quantize(const fqPlanOpaque& p, DescriptorPointers desc_ptrs, const void* input, void* output,
                    void* scales, size_t scales_bytes, void* workspace, size_t workspace_size, fqStream_t stream) {
    const fqContext& h = p.handle;
    OpConfig c = p.config;  // gets this call's alignment (vector_aligned)
    const bool check_desc = desc_ptrs == DescriptorPointers::CheckNow;
    // The rowwise output goes to `output` and `scales`; with columnwise output only, both are unused.
    const int64_t scale_bytes = rowwise_scale_bytes(c), col_scale_bytes = columnwise_scale_bytes(c);
    if (size_t(scale_bytes) > scales_bytes)
        return fail(FQ_STATUS_INSUFFICIENT_BUFFER, "scalesSizeInBytes: {} bytes is smaller than the {} the {} layout needs for {}x{} scales{}",
                    scales_bytes, scale_bytes, name(c.scales.layout), c.scales.rows, c.scales.cols,
                    c.scale_batch > 1 ? fmt::format(" in each of {} blocks", c.scale_batch) : "");
    if (c.rows > 0) {
        if (!input) return fail(FQ_STATUS_NULL_POINTER, "input: NULL");
        if (!output && c.rowwise()) return fail(FQ_STATUS_NULL_POINTER, "output: NULL");
    }
    if (scale_bytes > 0 && !scales) return fail(FQ_STATUS_NULL_POINTER, "scales: NULL, but {} bytes of scales are written", scale_bytes);
    // Element alignment, on every backend alike: the host reads 16-bit inputs and fp32 values in place,
    // and the kernels need at least as much.
    if (c.rows > 0 && (reinterpret_cast<uintptr_t>(input) & 1u))
        return fail(FQ_STATUS_MISALIGNED, "input: {} is not 2-byte aligned (16-bit elements)", input);
    if (c.scales.type == DType::Fp32 && scale_bytes > 0 && (reinterpret_cast<uintptr_t>(scales) & 3u))
        return fail(FQ_STATUS_MISALIGNED, "scales: {} is not 4-byte aligned (fp32 scales)", scales);
    if (check_desc) FQ_TRY(check_descriptor_alignment(c));
    const int64_t values_bytes = span_bytes(p.out_dtype, c.rows, c.cols, c.out_ld);
    const int64_t col_values_bytes = !c.columnwise() ? 0
                                     : c.col_transpose ? c.cols * layout_bytes(p.out_dtype, c.rows)
                                                       : values_bytes;
    const Region regions[] = {
        {"input", input, span_bytes(p.in_dtype, c.rows, c.in_cols, c.in_ld)},
        {"output", output, c.rowwise() ? values_bytes : 0},
        {"scales", scales, scale_bytes},
        {"FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER", c.col_output, col_values_bytes},
        {"FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER", col_scale_bytes > 0 ? c.col_scales_ptr : nullptr, col_scale_bytes}};
    FQ_TRY(check_no_aliasing("fqQuantize", regions));
    if (h.backend == Backend::Cuda) {
        // Run on the handle's device only, and only from memory it addresses (src/dispatch/device.h).
        FQ_TRY(cuda_check_current_device(h.device));
        if (check_desc) FQ_TRY(check_devices(h, descriptor_pointers(c)));
        const std::array<NamedPointer, 3> buffers = {{{"input", c.rows ? input : nullptr},
                                                      {"output", c.rows && c.rowwise() ? output : nullptr},
                                                      {"scales", scale_bytes ? scales : nullptr}}};
        FQ_TRY(check_devices(h, buffers));
    }
    c.vector_aligned = aligned16(input) && aligned16(output) && (c.in_ld * 2) % 16 == 0 && c.out_ld % 16 == 0;
    c.scales_aligned = aligned16(scales);
    const Variant* v = nullptr;
    FQ_TRY(choose_variant(p, c, &v));
    // After the variant: a problem no variant runs is NOT_SUPPORTED, as fqGetWorkspaceSize says.
    const size_t needed_workspace = workspace_bytes(c, h.backend);
    if (needed_workspace > workspace_size)
        return fail(FQ_STATUS_INSUFFICIENT_WORKSPACE, "workspaceSizeInBytes: {} bytes is smaller than the {} "
                    "fqGetWorkspaceSize returns (NVFP4 on CUDA without FQ_QUANT_DESC_GLOBAL_AMAX_POINTER reduces "
                    "the global amax there)", workspace_size, needed_workspace);
    if (needed_workspace > 0 && !workspace) return fail(FQ_STATUS_NULL_POINTER, "workspace: NULL, but {} bytes are needed", needed_workspace);
    if (needed_workspace > 0 && (reinterpret_cast<uintptr_t>(workspace) & 3u))
        return fail(FQ_STATUS_MISALIGNED, "workspace: {} is not 4-byte aligned (an fp32 amax)", workspace);
    if (needed_workspace > 0) FQ_TRY(cuda_check_pointer("workspace", workspace, h.device));
    return v->run(v->form, LaunchArgs{c, input, output, scales, needed_workspace ? workspace : nullptr,
                                      reinterpret_cast<void*>(stream), h.device, h.sm_count, h.allow_pdl != 0});
}

// fqPlanCreate's work after the objects are resolved (configure, which chose the variant for aligned buffers):
// the descriptor's pointers checked, the variant for other buffers chosen, a problem no variant runs for
// aligned buffers refused (as fqQuerySupport refuses it; one only unaligned buffers have no variant for is
// refused at execution, with its message), and the plan's facts.
fqStatus_t make_plan(fqPlanOpaque* p) {
    const fqContext& h = p->handle;
    FQ_TRY(check_descriptor_alignment(p->config));
    if (h.backend == Backend::Cuda) {
        FQ_TRY(cuda_check_current_device(h.device));
        FQ_TRY(check_devices(h, descriptor_pointers(p->config)));
    }
    choose_variant_ahead(p, false);
    if (!p->variant[kAlignedSlot]) {  // refused for aligned buffers: refused outright, as fqQuerySupport says
        const Variant* v = nullptr;
        return choose_variant(*p, p->config, &v);
    }
    p->facts.workspace_bytes = int64_t(workspace_bytes(p->config, h.backend));
    p->facts.scale_bytes = rowwise_scale_bytes(p->config);
    p->facts.col_scale_bytes = columnwise_scale_bytes(p->config);
    return FQ_STATUS_SUCCESS;
}

// ---- Scale repack ----------------------------------------------------------------------------------

const char* batching_name(int32_t b) {
    switch (b) {
        case FQ_SCALE_REPACK_BLOCKS: return "FQ_SCALE_REPACK_BLOCKS";
        case FQ_SCALE_REPACK_STACKED_TO_BLOCKS: return "FQ_SCALE_REPACK_STACKED_TO_BLOCKS";
        default: return "FQ_SCALE_REPACK_BLOCKS_TO_STACKED";
    }
}

// The scale element types a repack moves: fp32 scales, E8M0 (MX) and E4M3 (NVFP4 block scales).
fqStatus_t check_repack_shape(int32_t type, int64_t batch, int64_t rows, int64_t groups) {
    if (type != FQ_TYPE_FP32 && type != FQ_TYPE_E8M0 && type != FQ_TYPE_FP8_E4M3FN)
        return fail(FQ_STATUS_INVALID_VALUE, "scaleType: {} is not a scale type: FQ_TYPE_FP32 (0), FQ_TYPE_E8M0 (8) "
                    "or FQ_TYPE_FP8_E4M3FN (3, NVFP4 block scales)", type);
    if (batch < 0) return fail(FQ_STATUS_INVALID_VALUE, "batch: {} is negative", batch);
    if (rows < 0) return fail(FQ_STATUS_INVALID_VALUE, "rows: {} is negative", rows);
    if (groups < 1) return fail(FQ_STATUS_INVALID_VALUE, "groups: {} must be positive", groups);
    return FQ_STATUS_SUCCESS;
}

// `blocks` blocks of rows x groups scales of `type` in `layout` (the argument named `layout_arg`), checked
// for a layout that holds the type and for a byte count that fits 64 bits (`shape_arg` names the extents).
fqStatus_t repack_side(const char* layout_arg, const char* shape_arg, int32_t type, int32_t layout, int64_t blocks,
                       int64_t rows, int64_t groups, RepackSide* side) {
    if (layout < 0 || layout >= kScaleLayoutCount)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: {} is not an fqScaleLayout value", layout_arg, layout);
    const auto l = ScaleLayout(layout);
    const auto t = DType(type);
    if (l == ScaleLayout::Swizzled128x4 && t == DType::Fp32)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: SWIZZLED_128X4 holds byte scales (E8M0 or FP8_E4M3FN), not FP32",
                    layout_arg);
    if (l == ScaleLayout::PackedUe8m0 && t != DType::E8M0)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: PACKED_UE8M0 holds E8M0 scales, not {}", layout_arg, name(t));
    const std::optional<ScaleGeometry> g = checked_scale_geometry(l, t, rows, groups);
    if (g && checked_mul(g->bytes, blocks) >= 0) {
        side->g = *g;
        side->blocks = blocks;
        return FQ_STATUS_SUCCESS;
    }
    return fail(FQ_STATUS_INVALID_VALUE, "{}: {} block(s) of {} x {} {} scales in {} overflow a 64-bit byte count",
                shape_arg, blocks, rows, groups, name(t), name(l));
}


}  // namespace

namespace fq {
namespace {

// A descriptor as the one-call entry points configure it: each argument set as fqQuantDescSetAttribute sets it
// (so a bad value gets its status and message), the scale type the scheme's own, everything else the defaults.
fqStatus_t one_call_desc(int32_t activation, int32_t gate_layout, int32_t scheme, int32_t output_type,
                         int32_t scale_layout, fqQuantDescOpaque* d) {
    const std::pair<int32_t, int32_t> given[] = {{FQ_QUANT_DESC_ACTIVATION, activation},
                                                 {FQ_QUANT_DESC_GATE_LAYOUT, gate_layout},
                                                 {FQ_QUANT_DESC_SCHEME, scheme}};
    for (const auto& [attr, value] : given) FQ_TRY(set_attr(kDescAttrs, "quantization descriptor", d, attr, &value, 4));
    const std::pair<int32_t, int32_t> rest[] = {{FQ_QUANT_DESC_SCALE_TYPE, int32_t(required_scale_type(Scheme(scheme)))},
                                                {FQ_QUANT_DESC_OUTPUT_TYPE, output_type},
                                                {FQ_QUANT_DESC_SCALE_LAYOUT, scale_layout}};
    for (const auto& [attr, value] : rest) FQ_TRY(set_attr(kDescAttrs, "quantization descriptor", d, attr, &value, 4));
    return FQ_STATUS_SUCCESS;
}

}  // namespace

fqStatus_t quantize_one_call(fqHandle_t handle, const OneCallProblem& p, const void* input, void* output,
                             void* scales, size_t scales_bytes, void* workspace, size_t workspace_size,
                             fqStream_t stream) {
    QuantObjects o;
    FQ_TRY(one_call_desc(p.activation, p.gate_layout, p.scheme, p.output_type, p.scale_layout, &o.desc));
    FQ_TRY(new_layout(p.output_type, p.out_rows, p.out_cols, p.out_ld, &o.out));
    FQ_TRY(new_layout(p.input_type, p.in_rows, p.in_cols, p.in_ld, &o.in));
    FQ_TRY(live_object("handle", handle, ObjectKind::Handle));
    o.handle = snapshot(handle);
    fqPlanOpaque plan;
    FQ_TRY(resolve(o, &plan));
    return quantize(plan, DescriptorPointers::CheckNow, input, output, scales, scales_bytes, workspace,
                    workspace_size, stream);
}

}  // namespace fq

extern "C" {

uint32_t fqGetVersion(void) { return FQ_VERSION_NUMBER; }

const char* fqGetStatusString(fqStatus_t s) {
    switch (s) {
        case FQ_STATUS_SUCCESS: return "FQ_STATUS_SUCCESS";
        case FQ_STATUS_INVALID_VALUE: return "FQ_STATUS_INVALID_VALUE";
        case FQ_STATUS_NULL_POINTER: return "FQ_STATUS_NULL_POINTER";
        case FQ_STATUS_INVALID_HANDLE: return "FQ_STATUS_INVALID_HANDLE";
        case FQ_STATUS_NOT_SUPPORTED: return "FQ_STATUS_NOT_SUPPORTED";
        case FQ_STATUS_MISALIGNED: return "FQ_STATUS_MISALIGNED";
        case FQ_STATUS_INSUFFICIENT_BUFFER: return "FQ_STATUS_INSUFFICIENT_BUFFER";
        case FQ_STATUS_INSUFFICIENT_WORKSPACE: return "FQ_STATUS_INSUFFICIENT_WORKSPACE";
        case FQ_STATUS_ALLOC_FAILED: return "FQ_STATUS_ALLOC_FAILED";
        case FQ_STATUS_CUDA_ERROR: return "FQ_STATUS_CUDA_ERROR";
        case FQ_STATUS_NO_DEVICE: return "FQ_STATUS_NO_DEVICE";
        case FQ_STATUS_INTERNAL_ERROR: return "FQ_STATUS_INTERNAL_ERROR";
        default: return "FQ_STATUS_UNKNOWN";
    }
}

const char* fqGetLastErrorMessage(void) { return last_error(); }

fqStatus_t fqCreate(fqHandle_t* handle, int32_t backend, int32_t device) {
    return guarded("fqCreate", [&]() -> fqStatus_t {
        if (!handle) return fail(FQ_STATUS_NULL_POINTER, "handle: NULL output pointer");
        *handle = nullptr;
        fqContext ctx;
        if (backend == FQ_BACKEND_HOST) {
            if (device != -1 && device != 0)
                return fail(FQ_STATUS_INVALID_VALUE, "device: {} given for FQ_BACKEND_HOST, which takes -1 or 0", device);
        } else if (backend == FQ_BACKEND_CUDA) {
            if (device < -1) return fail(FQ_STATUS_INVALID_VALUE, "device: {} is not a CUDA ordinal or -1", device);
            ctx.backend = Backend::Cuda;
            FQ_TRY(cuda_device_info(device, &ctx.device, &ctx.arch, &ctx.sm_count));
        } else {
            return fail(FQ_STATUS_INVALID_VALUE, "backend: {} is neither FQ_BACKEND_HOST (0) nor FQ_BACKEND_CUDA (1)", backend);
        }
        FQ_TRY(create_object("handle", handle, ObjectKind::Handle, ctx));
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqDestroy(fqHandle_t handle) {
    return guarded("fqDestroy", [&] { return destroy_object("handle", handle, ObjectKind::Handle); });
}

fqStatus_t fqHandleSetAttribute(fqHandle_t handle, int32_t attr, const void* buf, size_t size) {
    return guarded("fqHandleSetAttribute", [&]() -> fqStatus_t {
        FQ_TRY(live_object("handle", handle, ObjectKind::Handle));
        const auto lock = lock_object_contents();
        fqContext changed = *handle;  // committed only when every check passed
        FQ_TRY(set_attr(kHandleAttrs, "handle", &changed, attr, buf, size));
        const size_t variants = variants_for(changed.backend, changed.arch).size();
        if (attr == FQ_HANDLE_VARIANT && changed.variant >= 0 && size_t(changed.variant) >= variants)
            return fail(FQ_STATUS_INVALID_VALUE, "FQ_HANDLE_VARIANT: {} is outside the {} variants of this handle "
                        "(-1: the dispatcher chooses)", changed.variant, variants);
        *handle = changed;
        note_object_contents_changed();
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqHandleGetAttribute(fqHandle_t handle, int32_t attr, void* buf, size_t size, size_t* written) {
    return guarded("fqHandleGetAttribute", [&]() -> fqStatus_t {
        FQ_TRY(live_object("handle", handle, ObjectKind::Handle));
        const auto lock = lock_object_contents();
        return get_attr(kHandleAttrs, "handle", handle, attr, buf, size, written);
    });
}

fqStatus_t fqTensorLayoutCreate(fqTensorLayout_t* layout, int32_t dtype, int64_t rows, int64_t cols, int64_t ld) {
    return guarded("fqTensorLayoutCreate", [&]() -> fqStatus_t {
        if (!layout) return fail(FQ_STATUS_NULL_POINTER, "layout: NULL output pointer");
        *layout = nullptr;
        fqTensorLayoutOpaque l;
        FQ_TRY(new_layout(dtype, rows, cols, ld, &l));
        FQ_TRY(create_object("layout", layout, ObjectKind::Layout, l));
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqTensorLayoutDestroy(fqTensorLayout_t layout) {
    return guarded("fqTensorLayoutDestroy", [&] { return destroy_object("layout", layout, ObjectKind::Layout); });
}

fqStatus_t fqTensorLayoutSetAttribute(fqTensorLayout_t layout, int32_t attr, const void* buf, size_t size) {
    return guarded("fqTensorLayoutSetAttribute", [&]() -> fqStatus_t {
        FQ_TRY(live_object("layout", layout, ObjectKind::Layout));
        const auto lock = lock_object_contents();
        fqTensorLayoutOpaque changed = *layout;  // committed only when every check passed
        FQ_TRY(set_attr(kLayoutAttrs, "tensor layout", &changed, attr, buf, size));
        // Each width on its own is a byte count (the other attributes may still be on their way: ld >= cols
        // and the extent are checked at execution).
        const std::pair<const char*, int64_t> widths[] = {{"FQ_TENSOR_LAYOUT_COLS", changed.cols},
                                                          {"FQ_TENSOR_LAYOUT_LD", changed.ld}};
        for (const auto& [arg, n] : widths)
            if (layout_bytes(changed.dtype, n) < 0)
                return fail(FQ_STATUS_INVALID_VALUE, "{}: {} elements of {} overflow a 64-bit byte count", arg, n,
                            name(DType(changed.dtype)));
        *layout = changed;
        note_object_contents_changed();
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqTensorLayoutGetAttribute(fqTensorLayout_t layout, int32_t attr, void* buf, size_t size, size_t* written) {
    return guarded("fqTensorLayoutGetAttribute", [&]() -> fqStatus_t {
        FQ_TRY(live_object("layout", layout, ObjectKind::Layout));
        const auto lock = lock_object_contents();
        return get_attr(kLayoutAttrs, "tensor layout", layout, attr, buf, size, written);
    });
}

fqStatus_t fqQuantDescCreate(fqQuantDesc_t* desc) {
    return guarded("fqQuantDescCreate", [&] { return create_object("desc", desc, ObjectKind::Desc); });
}

fqStatus_t fqQuantDescDestroy(fqQuantDesc_t desc) {
    return guarded("fqQuantDescDestroy", [&] { return destroy_object("desc", desc, ObjectKind::Desc); });
}

fqStatus_t fqQuantDescSetAttribute(fqQuantDesc_t desc, int32_t attr, const void* buf, size_t size) {
    return guarded("fqQuantDescSetAttribute", [&]() -> fqStatus_t {
        FQ_TRY(live_object("desc", desc, ObjectKind::Desc));
        const auto lock = lock_object_contents();
        fqQuantDescOpaque changed = *desc;  // committed only when every check passed
        FQ_TRY(set_attr(kDescAttrs, "quantization descriptor", &changed, attr, buf, size));
        if (attr == FQ_QUANT_DESC_QMAX && changed.qmax != 0.0f && !std::isnormal(changed.qmax))
            return fail(FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_QMAX: {} is not a normal positive fp32 (0 = the output "
                        "type's largest value)", changed.qmax);
        if (attr == FQ_QUANT_DESC_GROUP_SIZE) {  // 0: unset again, the default
            changed.group_size_set = changed.group_size != 0;
            if (!changed.group_size_set) changed.group_size = fqQuantDescOpaque{}.group_size;
        }
        *desc = changed;
        note_object_contents_changed();
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqQuantDescGetAttribute(fqQuantDesc_t desc, int32_t attr, void* buf, size_t size, size_t* written) {
    return guarded("fqQuantDescGetAttribute", [&]() -> fqStatus_t {
        FQ_TRY(live_object("desc", desc, ObjectKind::Desc));
        const auto lock = lock_object_contents();
        return get_attr(kDescAttrs, "quantization descriptor", desc, attr, buf, size, written);
    });
}

fqStatus_t fqGetScaleBufferInfo(fqQuantDesc_t desc, int64_t rows, int64_t cols, int32_t which, int32_t info,
                                int64_t* value) {
    return guarded("fqGetScaleBufferInfo", [&]() -> fqStatus_t {
        FQ_TRY(live_object("desc", desc, ObjectKind::Desc));
        return scale_buffer_fact(snapshot(desc), rows, cols, which, info, value);
    });
}

fqStatus_t fqGetScaleBufferSize(fqQuantDesc_t desc, int64_t rows, int64_t cols, int32_t which, size_t* size) {
    return guarded("fqGetScaleBufferSize", [&]() -> fqStatus_t {
        if (!size) return fail(FQ_STATUS_NULL_POINTER, "sizeInBytes: NULL output pointer");
        int64_t bytes = 0;
        FQ_TRY(fqGetScaleBufferInfo(desc, rows, cols, which, FQ_SCALE_INFO_BYTES, &bytes));
        *size = size_t(bytes);
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqGetWorkspaceSize(fqHandle_t handle, fqQuantDesc_t desc, fqTensorLayout_t in, fqTensorLayout_t out,
                              size_t* size) {
    return guarded("fqGetWorkspaceSize", [&]() -> fqStatus_t {
        if (!size) return fail(FQ_STATUS_NULL_POINTER, "sizeInBytes: NULL output pointer");
        fqPlanOpaque p;
        FQ_TRY(configure(handle, desc, in, out, &p));
        const Variant* v = nullptr;  // a problem no variant runs has no workspace size either
        FQ_TRY(choose_variant(p, p.config, &v));
        *size = workspace_bytes(p.config, p.handle.backend);
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqQuerySupport(fqHandle_t handle, fqQuantDesc_t desc, fqTensorLayout_t in, fqTensorLayout_t out,
                          char* variant_name, size_t capacity) {
    return guarded("fqQuerySupport", [&]() -> fqStatus_t {
        copy_name("", variant_name, capacity);
        fqPlanOpaque p;
        FQ_TRY(configure(handle, desc, in, out, &p));
        const Variant* v = nullptr;
        FQ_TRY(choose_variant(p, p.config, &v));
        copy_name(v->name.c_str(), variant_name, capacity);
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqGetVariantCount(fqHandle_t handle, int32_t* count) {
    return guarded("fqGetVariantCount", [&]() -> fqStatus_t {
        FQ_TRY(live_object("handle", handle, ObjectKind::Handle));
        if (!count) return fail(FQ_STATUS_NULL_POINTER, "count: NULL output pointer");
        const fqContext h = snapshot(handle);
        *count = int32_t(variants_for(h.backend, h.arch).size());
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqGetVariantName(fqHandle_t handle, int32_t index, char* name_out, size_t capacity) {
    return guarded("fqGetVariantName", [&]() -> fqStatus_t {
        FQ_TRY(live_object("handle", handle, ObjectKind::Handle));
        if (!name_out) return fail(FQ_STATUS_NULL_POINTER, "name: NULL output buffer");
        if (capacity == 0) return fail(FQ_STATUS_INVALID_VALUE, "nameCapacity: 0 leaves no room for the terminating NUL");
        const fqContext h = snapshot(handle);
        const auto vs = variants_for(h.backend, h.arch);
        if (index < 0 || size_t(index) >= vs.size())
            return fail(FQ_STATUS_INVALID_VALUE, "index: {} is outside [0, {})", index, vs.size());
        copy_name(fmt::format("{}: {}", vs[size_t(index)]->name, vs[size_t(index)]->covers).c_str(), name_out, capacity);
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqQuantize(fqHandle_t handle, fqQuantDesc_t desc, fqTensorLayout_t inputLayout, const void* input,
                      fqTensorLayout_t outputLayout, void* output, void* scales, size_t scales_bytes, void* workspace,
                      size_t workspace_size, fqStream_t stream) {
    return guarded("fqQuantize", [&]() -> fqStatus_t {
        fqPlanOpaque p;  // resolved on the stack, its variant chosen when the buffers are known
        FQ_TRY(configure(handle, desc, inputLayout, outputLayout, &p));
        return quantize(p, DescriptorPointers::CheckNow, input, output, scales, scales_bytes, workspace,
                        workspace_size, stream);
    });
}

fqStatus_t fqPlanCreate(fqPlan_t* plan, fqHandle_t handle, fqQuantDesc_t desc, fqTensorLayout_t inputLayout,
                        fqTensorLayout_t outputLayout) {
    return guarded("fqPlanCreate", [&]() -> fqStatus_t {
        if (!plan) return fail(FQ_STATUS_NULL_POINTER, "plan: NULL output pointer");
        *plan = nullptr;
        fqPlanOpaque p;
        FQ_TRY(configure(handle, desc, inputLayout, outputLayout, &p));
        FQ_TRY(make_plan(&p));
        return create_object("plan", plan, ObjectKind::Plan, p);
    });
}

fqStatus_t fqPlanDestroy(fqPlan_t plan) {
    return guarded("fqPlanDestroy", [&] { return destroy_object("plan", plan, ObjectKind::Plan); });
}

fqStatus_t fqPlanGetAttribute(fqPlan_t plan, int32_t attr, void* buf, size_t size, size_t* written) {
    return guarded("fqPlanGetAttribute", [&]() -> fqStatus_t {
        FQ_TRY(live_object("plan", plan, ObjectKind::Plan));
        return get_attr(kPlanAttrs, "plan", &plan->facts, attr, buf, size, written);  // a plan never changes: no lock
    });
}

fqStatus_t fqPlanGetVariantName(fqPlan_t plan, char* name_out, size_t capacity) {
    return guarded("fqPlanGetVariantName", [&]() -> fqStatus_t {
        FQ_TRY(live_object("plan", plan, ObjectKind::Plan));
        if (!name_out) return fail(FQ_STATUS_NULL_POINTER, "name: NULL output buffer");
        if (capacity == 0) return fail(FQ_STATUS_INVALID_VALUE, "nameCapacity: 0 leaves no room for the terminating NUL");
        copy_name(plan->variant[kAlignedSlot]->name.c_str(), name_out, capacity);
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqPlanExecute(fqPlan_t plan, const void* input, void* output, void* scales, size_t scales_bytes,
                         void* workspace, size_t workspace_size, fqStream_t stream) {
    return guarded("fqPlanExecute", [&]() -> fqStatus_t {
        FQ_TRY(live_object("plan", plan, ObjectKind::Plan));
        return quantize(*plan, DescriptorPointers::CheckedInPlan, input, output, scales, scales_bytes, workspace,
                        workspace_size, stream);
    });
}

fqStatus_t fqQuantizeSimple(fqHandle_t handle, int32_t activation, int32_t gateLayout, int32_t scheme,
                            int32_t inputType, int32_t outputType, int32_t scaleLayout, int64_t rows, int64_t cols,
                            const void* input, void* output, void* scales, size_t scales_bytes, void* workspace,
                            size_t workspace_size, fqStream_t stream) {
    return guarded("fqQuantizeSimple", [&]() -> fqStatus_t {
        // The packed input of a gated problem has twice the output's columns.
        const bool gated = gateLayout != FQ_GATE_LAYOUT_NONE;
        if (gated && cols > INT64_MAX / 2)
            return fail(FQ_STATUS_INVALID_VALUE, "cols: {} output columns of a gated input need twice as many input "
                        "columns, more than a 64-bit count", cols);
        // (A negative count stays as it is: the output layout refuses it first, as fqTensorLayoutCreate would.)
        const int64_t in_cols = gated && cols >= 0 ? 2 * cols : cols;
        const OneCallProblem p{activation, gateLayout, scheme, inputType, outputType, scaleLayout,
                               rows, in_cols, in_cols, rows, cols, cols};
        return quantize_one_call(handle, p, input, output, scales, scales_bytes, workspace, workspace_size, stream);
    });
}

fqStatus_t fqGetScaleBufferSizeSimple(int32_t scheme, int32_t outputType, int32_t scaleLayout, int64_t rows,
                                      int64_t cols, size_t* size) {
    return guarded("fqGetScaleBufferSizeSimple", [&]() -> fqStatus_t {
        if (!size) return fail(FQ_STATUS_NULL_POINTER, "sizeInBytes: NULL output pointer");
        fqQuantDescOpaque d;
        FQ_TRY(one_call_desc(FQ_ACTIVATION_IDENTITY, FQ_GATE_LAYOUT_NONE, scheme, outputType, scaleLayout, &d));
        int64_t bytes = 0;
        FQ_TRY(scale_buffer_fact(d, rows, cols, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BYTES, &bytes));
        *size = size_t(bytes);
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqGetScaleRepackSize(int32_t type, int64_t batch, int64_t rows, int64_t groups, int32_t layout,
                                size_t* size) {
    return guarded("fqGetScaleRepackSize", [&]() -> fqStatus_t {
        if (!size) return fail(FQ_STATUS_NULL_POINTER, "sizeInBytes: NULL output pointer");
        FQ_TRY(check_repack_shape(type, batch, rows, groups));
        RepackSide side;
        FQ_TRY(repack_side("layout", "batch, rows, groups", type, layout, batch, rows, groups, &side));
        *size = size_t(side.bytes());
        return FQ_STATUS_SUCCESS;
    });
}

fqStatus_t fqScaleRepack(fqHandle_t handle, int32_t type, int64_t batch, int64_t rows, int64_t groups, int32_t batching,
                         const int32_t* offsets, int64_t stacked_rows, int32_t src_layout, const void* src,
                         size_t src_bytes, int32_t dst_layout, void* dst, size_t dst_bytes, fqStream_t stream) {
    return guarded("fqScaleRepack", [&]() -> fqStatus_t {
        FQ_TRY(live_object("handle", handle, ObjectKind::Handle));
        const fqContext h = snapshot(handle);
        FQ_TRY(check_repack_shape(type, batch, rows, groups));
        if (batching < FQ_SCALE_REPACK_BLOCKS || batching > FQ_SCALE_REPACK_BLOCKS_TO_STACKED)
            return fail(FQ_STATUS_INVALID_VALUE, "batching: {} is not an fqScaleRepackBatching value", batching);
        const auto mode = RepackBatching(batching);
        if (mode == RepackBatching::Blocks) {
            if (offsets)
                return fail(FQ_STATUS_INVALID_VALUE, "rowOffsets: given for FQ_SCALE_REPACK_BLOCKS, which has no "
                            "stacked side; pass NULL");
            if (stacked_rows != 0)
                return fail(FQ_STATUS_INVALID_VALUE, "stackedRows: {} given for FQ_SCALE_REPACK_BLOCKS, which has no "
                            "stacked side; pass 0", stacked_rows);
        } else {
            if (batch > INT32_MAX - 1)
                return fail(FQ_STATUS_INVALID_VALUE, "batch: {} batches need more int32 row offsets than an "
                            "int32 row can index (at most INT32_MAX - 1 batches)", batch);
            if (!offsets)
                return fail(FQ_STATUS_NULL_POINTER, "rowOffsets: NULL, but {} reads batch + 1 = {} row offsets",
                            batching_name(batching), batch + 1);
            if (reinterpret_cast<uintptr_t>(offsets) & 3u)
                return fail(FQ_STATUS_MISALIGNED, "rowOffsets: {} is not 4-byte aligned (int32)",
                            static_cast<const void*>(offsets));
            if (stacked_rows < 0) return fail(FQ_STATUS_INVALID_VALUE, "stackedRows: {} is negative", stacked_rows);
        }
        RepackPlan p;
        p.batch = batch;
        p.rows = rows;
        p.scale_bytes = type == FQ_TYPE_FP32 ? 4 : 1;
        p.offsets = mode == RepackBatching::Blocks ? nullptr : offsets;
        const bool src_stacked = mode == RepackBatching::StackedToBlocks, dst_stacked = mode == RepackBatching::BlocksToStacked;
        FQ_TRY(repack_side("srcLayout", src_stacked ? "stackedRows" : "batch, rows, groups", type, src_layout,
                           src_stacked ? 1 : batch, src_stacked ? stacked_rows : rows, groups, &p.src));
        FQ_TRY(repack_side("dstLayout", dst_stacked ? "stackedRows" : "batch, rows, groups", type, dst_layout,
                           dst_stacked ? 1 : batch, dst_stacked ? stacked_rows : rows, groups, &p.dst));
        p.src.stacked = src_stacked;
        p.dst.stacked = dst_stacked;
        const std::pair<const RepackSide*, size_t> sides[] = {{&p.src, src_bytes}, {&p.dst, dst_bytes}};
        for (const auto& [side, declared] : sides) {
            const bool is_src = side == &p.src;
            if (size_t(side->bytes()) > declared)
                return fail(FQ_STATUS_INSUFFICIENT_BUFFER, "{}SizeInBytes: {} bytes is smaller than the {} that {} {} of "
                            "{}x{} {} scales take in the {} layout", is_src ? "src" : "dst", declared, side->bytes(),
                            side->blocks, side->stacked ? "stacked block" : "block(s)", side->g.rows, side->g.cols,
                            name(side->g.type), name(side->g.layout));
        }
        if (p.src.bytes() > 0 && !src) return fail(FQ_STATUS_NULL_POINTER, "src: NULL, but {} bytes of scales are read", p.src.bytes());
        if (p.dst.bytes() > 0 && !dst) return fail(FQ_STATUS_NULL_POINTER, "dst: NULL, but {} bytes of scales are written", p.dst.bytes());
        if (type == FQ_TYPE_FP32) {
            if (p.src.bytes() > 0 && (reinterpret_cast<uintptr_t>(src) & 3u))
                return fail(FQ_STATUS_MISALIGNED, "src: {} is not 4-byte aligned (fp32 scales)", src);
            if (p.dst.bytes() > 0 && (reinterpret_cast<uintptr_t>(dst) & 3u))
                return fail(FQ_STATUS_MISALIGNED, "dst: {} is not 4-byte aligned (fp32 scales)", dst);
        }
        const Region regions[] = {{"src", src, p.src.bytes()}, {"dst", dst, p.dst.bytes()}};
        FQ_TRY(check_no_aliasing("fqScaleRepack", regions));
        if (h.backend == Backend::Cuda) {
            FQ_TRY(cuda_check_current_device(h.device));
            const std::pair<const char*, const void*> ptrs[] = {
                {"src", p.src.bytes() ? src : nullptr}, {"dst", p.dst.bytes() ? dst : nullptr}, {"rowOffsets", p.offsets}};
            for (const auto& [arg, ptr] : ptrs)
                if (ptr) FQ_TRY(cuda_check_pointer(arg, ptr, h.device));
        }
        if (p.dst.bytes() == 0) return FQ_STATUS_SUCCESS;
        return run_scale_repack(h.backend, p, src, dst, reinterpret_cast<void*>(stream));
    });
}

}  // extern "C"
