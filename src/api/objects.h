// The opaque objects behind the public handles, and the registry that turns the values callers hold into
// objects, telling a live object from a NULL, destroyed or foreign value without dereferencing it.
#pragma once

#include <cstdint>
#include <cmath>

#include "../common/op_config.h"
#include "../common/types.h"
#include "fusedquant/fusedquant.h"

namespace fq {
struct Variant;  // src/dispatch/registry.h
}

struct fqContext {
    fq::Backend backend = fq::Backend::Host;
    int32_t device = -1;
    int32_t arch = 0;
    int32_t sm_count = 1;
    int32_t allow_pdl = 1;
    int32_t variant = -1;  // pinned variant index, -1 = dispatcher's choice
    int32_t wide_tile_min = -1;  // FQ_HANDLE_WIDE_TILE_MIN; -1 = one wave
};

struct fqTensorLayoutOpaque {
    int32_t dtype = FQ_TYPE_BF16;
    int64_t rows = 0, cols = 0, ld = 0;
};

// Descriptor attribute values exactly as the caller set them; defaults resolved in build_config().
struct fqQuantDescOpaque {
    int32_t activation = FQ_ACTIVATION_IDENTITY;
    int32_t gate_layout = FQ_GATE_LAYOUT_NONE;
    int32_t gate_order = FQ_GATE_ORDER_GATE_FIRST;
    int32_t gate_block_width = 32;
    int32_t intermediate_rounding = FQ_ROUNDING_FP32;
    int32_t scheme = FQ_SCHEME_PER_GROUP;
    int32_t group_size = 128;
    bool group_size_set = false;  // by the caller: other schemes refuse a value not their own (docs/spec.md §3.4)
    int32_t output_type = FQ_TYPE_FP8_E4M3FN;
    int32_t scale_type = FQ_TYPE_FP32;
    int32_t scale_layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    int32_t scale_rounding = FQ_SCALE_ROUNDING_NONE;
    int32_t mx_scale_rule = FQ_MX_SCALE_RULE_RCEIL;
    int32_t scale_apply = FQ_SCALE_APPLY_DIVIDE;
    float qmax = 0.0f;
    float min_scale = 0.0f;
    float swiglu_alpha = 1.702f, swiglu_beta = 1.0f, swiglu_limit = 7.0f;
    const float* static_scale = nullptr;
    const float* scale_ub = nullptr;
    const float* row_prob = nullptr;
    int32_t moe_layout = FQ_MOE_LAYOUT_NONE;
    int32_t moe_num_experts = 0;
    const int32_t* moe_offsets = nullptr;
    const int32_t* moe_counts = nullptr;
    int32_t outputs = FQ_OUTPUT_ROWWISE;
    int32_t columnwise_block = 32;
    int32_t columnwise_transpose = 0;
    void* columnwise_output = nullptr;
    void* columnwise_scales = nullptr;
    const float* global_amax = nullptr;
};

// Grouped GEMM descriptor attribute values exactly as the caller set them (fqGroupedGemmDescAttribute).
struct fqGroupedGemmDescOpaque {
    int32_t num_groups = 1;
    const int32_t* group_offsets = nullptr;
    const int32_t* group_counts = nullptr;
    const float* alpha = nullptr;
    int32_t a_scale_layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA;
    void* c_output = nullptr;
    void* d_output = nullptr;
    int32_t quantize = 1;
};

// A quantization problem resolved once (fqPlanCreate): copies of the objects it came from, its validated
// configuration and the variants chosen for it. fqQuantize resolves one on its stack, without choosing the
// variants ahead (src/api/api.cpp). Never changed after creation, so it is read without a lock.
struct fqPlanOpaque {
    fqContext handle;
    int32_t in_dtype = FQ_TYPE_BF16, out_dtype = FQ_TYPE_FP8_E4M3FN;
    fq::OpConfig config;
    // The variants chosen ahead, by the buffers' alignment (variant_slot in src/api/api.cpp: +1 for 16-byte-
    // aligned data buffers and row strides, +2 for a 16-byte-aligned scale buffer); nullptr: chosen when the call
    // runs (fqQuantize, a scale buffer not 16-byte aligned, or a problem whose unaligned case no variant runs:
    // refused then).
    const fq::Variant* variant[4] = {nullptr, nullptr, nullptr, nullptr};
    // FQ_PLAN_* facts (fqPlanGetAttribute reads them by offset).
    struct Facts {
        int64_t workspace_bytes = 0, scale_bytes = 0, col_scale_bytes = 0;
    } facts;
};

namespace fq {

// The library's objects and the values callers hold for them (include/fusedquant/fusedquant.h, "Object
// lifetime"). Objects live in slots, one pool of slots per kind, that are never returned to the allocator.
// The caller gets an opaque value naming the object's kind, its slot and the slot's generation, never the
// object's address; destroying an object retires its slot and the next object placed in that slot gets the
// next generation, so a value of a destroyed object never names a live one. A slot whose generation counter
// is exhausted is retired for good. The pools are never destroyed, so every entry point works from the
// caller's atexit handlers and static or thread_local destructors.
enum class ObjectKind : uint32_t { Handle = 1, Desc = 2, Layout = 3, GemmDesc = 4, Plan = 5 };

// A new live object, a copy of `init`, and the value its creator gets; nullptr when every slot of its kind
// is taken. Throws std::bad_alloc when a pool cannot grow.
template <class T>
T* add_object(const T& init);

// The address of the live object `value` names, or nullptr for any other value (NULL, destroyed, another
// kind, not made by add_object). Never dereferences `value`; takes no lock.
template <class T>
T* find_object(const T* value);

// Destroys the live object `value` names; false (and nothing changes) for any other value.
template <class T>
bool remove_object(const T* value);

}  // namespace fq
