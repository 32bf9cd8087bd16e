/*
 * libfusedquant for C++17: a header-only layer over the C API of fusedquant.h, adding no behaviour.
 *
 *   - fq::Handle, fq::QuantDesc, fq::TensorLayout, fq::GroupedGemmDesc own one C object each (RAII, move-only;
 *     a moved-from object owns nothing and its destructor does nothing).
 *   - Every attribute has a typed setter (set_x, returning *this for chaining) and a getter (x). Enum-typed
 *     attributes take the C enum type itself (fqActivation, fqQuantScheme, ...), so an int or a value of
 *     another enum does not compile, and each value stays defined once, in fusedquant.h.
 *   - A failing call throws fq::Error, carrying the fqStatus_t and fqGetLastErrorMessage()'s sentence.
 *   - Host buffers are passed as contiguous containers (std::vector, std::array, fq::Span) whose byte size
 *     the library checks; device buffers as pointers, the scale buffer sized by the descriptor's own query.
 *
 *     fq::Handle h(FQ_BACKEND_HOST);
 *     fq::QuantDesc d;
 *     d.set_activation(FQ_ACTIVATION_SILU).set_gate_layout(FQ_GATE_LAYOUT_SPLIT).set_group_size(128);
 *     fq::TensorLayout in(FQ_TYPE_BF16, tokens, 2 * hidden), out(FQ_TYPE_FP8_E4M3FN, tokens, hidden);
 *     std::vector<float> scales(d.scale_buffer_size(tokens, hidden) / sizeof(float));
 *     h.quantize(d, in, x, out, q, scales);
 */
#ifndef FUSEDQUANT_HPP
#define FUSEDQUANT_HPP

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "fusedquant/fusedquant.h"

namespace fq {

/* ---- Errors ---------------------------------------------------------------------------------------- */

/** A failed call: the library's status and its sentence (fqGetLastErrorMessage at the time of the failure).
 *  what() reads "FQ_STATUS_...: <message>". */
class Error : public std::runtime_error {
public:
    Error(fqStatus_t status, const std::string& message)
        : std::runtime_error(std::string(fqGetStatusString(status)) + ": " + message),
          status_(status), message_(message) {}
    fqStatus_t status() const noexcept { return status_; }
    const std::string& message() const noexcept { return message_; }

private:
    fqStatus_t status_;
    std::string message_;
};

/** Throws fq::Error for any status but FQ_STATUS_SUCCESS. */
inline void check(fqStatus_t status) {
    if (status != FQ_STATUS_SUCCESS) throw Error(status, fqGetLastErrorMessage());
}

/** The version of the library loaded at run time (MAJOR*10000 + MINOR*100 + PATCH). */
inline uint32_t version() noexcept { return fqGetVersion(); }

/* ---- Host buffer views ----------------------------------------------------------------------------- */

/** A view of `size` contiguous elements (what std::span is in C++20): from a pointer and a count, or from
 *  any container with data() and size() (std::vector, std::array, std::string, a C array). */
template <class T>
class Span {
public:
    constexpr Span() noexcept = default;
    constexpr Span(T* data, std::size_t size) noexcept : data_(data), size_(size) {}
    template <std::size_t N>
    constexpr Span(T (&array)[N]) noexcept : data_(array), size_(N) {}
    template <class C, class = std::enable_if_t<
                           std::is_convertible_v<decltype(std::data(std::declval<C&>())), T*> &&
                           !std::is_array_v<std::remove_reference_t<C>>>>
    constexpr Span(C&& container) noexcept : data_(std::data(container)), size_(std::size(container)) {}

    constexpr T* data() const noexcept { return data_; }
    constexpr std::size_t size() const noexcept { return size_; }
    constexpr std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
    constexpr bool empty() const noexcept { return size_ == 0; }
    constexpr T* begin() const noexcept { return data_; }
    constexpr T* end() const noexcept { return data_ + size_; }
    constexpr T& operator[](std::size_t i) const noexcept { return data_[i]; }

private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

namespace detail {

/** Owns one C object of type T, destroyed by Destroy: the move-only core of every RAII type below. */
template <class T, fqStatus_t (*Destroy)(T)>
class Unique {
public:
    Unique() noexcept = default;
    explicit Unique(T raw) noexcept : raw_(raw) {}
    Unique(Unique&& other) noexcept : raw_(std::exchange(other.raw_, nullptr)) {}
    Unique& operator=(Unique&& other) noexcept {
        if (this != &other) {
            reset();
            raw_ = std::exchange(other.raw_, nullptr);
        }
        return *this;
    }
    ~Unique() { reset(); }

    T get() const noexcept { return raw_; }
    T release() noexcept { return std::exchange(raw_, nullptr); }

private:
    void reset() noexcept {
        if (raw_) Destroy(raw_);  // a destroy of a live object cannot fail; nothing to report from a destructor
        raw_ = nullptr;
    }
    T raw_ = nullptr;
};

/** Sets / reads one attribute of type V through a C Set/GetAttribute pair. */
template <class V, class Obj, class Attr>
void set_attribute(fqStatus_t (*set)(Obj, int32_t, const void*, size_t), Obj obj, Attr attr, V value) {
    check(set(obj, static_cast<int32_t>(attr), &value, sizeof value));
}
template <class V, class Obj, class Attr>
V get_attribute(fqStatus_t (*get)(Obj, int32_t, void*, size_t, size_t*), Obj obj, Attr attr) {
    V value{};
    size_t written = 0;
    check(get(obj, static_cast<int32_t>(attr), &value, sizeof value, &written));
    return value;
}

template <class C>
using if_contiguous = decltype(std::data(std::declval<C&>()), std::size(std::declval<C&>()));

}  // namespace detail

/* ---- Tensor layout ----------------------------------------------------------------------------------- */

/** A row-major 2-D tensor: element type, rows, columns, row stride in elements (fqTensorLayout_t). */
class TensorLayout {
public:
    /** `ld` 0: the rows are packed (ld = cols). */
    TensorLayout(fqDataType dtype, int64_t rows, int64_t cols, int64_t ld = 0) {
        fqTensorLayout_t raw = nullptr;
        check(fqTensorLayoutCreate(&raw, dtype, rows, cols, ld ? ld : cols));
        obj_ = Owner(raw);
    }

    TensorLayout& set_type(fqDataType v) { return set_attr(FQ_TENSOR_LAYOUT_TYPE, int32_t{v}); }
    TensorLayout& set_rows(int64_t v) { return set_attr(FQ_TENSOR_LAYOUT_ROWS, v); }
    TensorLayout& set_cols(int64_t v) { return set_attr(FQ_TENSOR_LAYOUT_COLS, v); }
    TensorLayout& set_ld(int64_t v) { return set_attr(FQ_TENSOR_LAYOUT_LD, v); }
    fqDataType type() const { return static_cast<fqDataType>(attr<int32_t>(FQ_TENSOR_LAYOUT_TYPE)); }
    int64_t rows() const { return attr<int64_t>(FQ_TENSOR_LAYOUT_ROWS); }
    int64_t cols() const { return attr<int64_t>(FQ_TENSOR_LAYOUT_COLS); }
    int64_t ld() const { return attr<int64_t>(FQ_TENSOR_LAYOUT_LD); }

    /** The C object, still owned by this one; release() gives up ownership. */
    fqTensorLayout_t get() const noexcept { return obj_.get(); }
    fqTensorLayout_t release() noexcept { return obj_.release(); }

private:
    using Owner = detail::Unique<fqTensorLayout_t, fqTensorLayoutDestroy>;
    template <class V>
    TensorLayout& set_attr(fqTensorLayoutAttribute a, V v) {
        detail::set_attribute(fqTensorLayoutSetAttribute, get(), a, v);
        return *this;
    }
    template <class V>
    V attr(fqTensorLayoutAttribute a) const { return detail::get_attribute<V>(fqTensorLayoutGetAttribute, get(), a); }
    Owner obj_;
};

namespace detail {

template <class C>
size_t size_bytes(const C& c) { return std::size(c) * sizeof(*std::data(c)); }
template <class C>
constexpr bool is_writable_v = !std::is_const_v<std::remove_pointer_t<decltype(std::data(std::declval<C&>()))>>;

/** Bytes from a layout's first element to its last one's end (rows - 1 strides plus a row; FP4 two a byte).
 *  The library has checked that rows x ld elements are a byte count that fits int64_t. */
inline size_t extent_bytes(const TensorLayout& t) {
    if (t.rows() == 0 || t.cols() == 0) return 0;
    const int64_t elements = (t.rows() - 1) * t.ld() + t.cols();
    switch (t.type()) {
        case FQ_TYPE_FP32: case FQ_TYPE_INT32: return static_cast<size_t>(elements * 4);
        case FQ_TYPE_FP16: case FQ_TYPE_BF16: return static_cast<size_t>(elements * 2);
        case FQ_TYPE_FP4_E2M1: return static_cast<size_t>((elements + 1) / 2);
        default: return static_cast<size_t>(elements);
    }
}
/** Throws FQ_STATUS_INSUFFICIENT_BUFFER where a host buffer of `bytes` is smaller than `layout` spans. */
inline void check_holds(const char* name, size_t bytes, const TensorLayout& layout, const char* what) {
    const size_t needed = extent_bytes(layout);
    if (bytes < needed)
        throw Error(FQ_STATUS_INSUFFICIENT_BUFFER, std::string(name) + ": " + std::to_string(bytes) +
                                                       " bytes is smaller than the " + std::to_string(needed) +
                                                       " the " + what + " layout spans");
}

}  // namespace detail

/* ---- Quantization descriptor --------------------------------------------------------------------------- */

/** What fqQuantize computes (fqQuantDesc_t). A new descriptor holds the defaults of fqQuantDescCreate:
 *  identity, not gated, per-group 128, e4m3fn values, fp32 scales, row-major. Each attribute's meaning,
 *  default and valid values are documented at its FQ_QUANT_DESC_* constant in fusedquant.h. */
class QuantDesc {
public:
    QuantDesc() {
        fqQuantDesc_t raw = nullptr;
        check(fqQuantDescCreate(&raw));
        obj_ = Owner(raw);
    }

    // Activation and gate.
    QuantDesc& set_activation(fqActivation v) { return set_attr(FQ_QUANT_DESC_ACTIVATION, int32_t{v}); }
    QuantDesc& set_gate_layout(fqGateLayout v) { return set_attr(FQ_QUANT_DESC_GATE_LAYOUT, int32_t{v}); }
    QuantDesc& set_gate_order(fqGateOrder v) { return set_attr(FQ_QUANT_DESC_GATE_ORDER, int32_t{v}); }
    QuantDesc& set_gate_block_width(int32_t v) { return set_attr(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, v); }
    QuantDesc& set_intermediate_rounding(fqIntermediateRounding v) { return set_attr(FQ_QUANT_DESC_INTERMEDIATE_ROUNDING, int32_t{v}); }
    QuantDesc& set_swiglu_alpha(float v) { return set_attr(FQ_QUANT_DESC_SWIGLU_ALPHA, v); }
    QuantDesc& set_swiglu_beta(float v) { return set_attr(FQ_QUANT_DESC_SWIGLU_BETA, v); }
    QuantDesc& set_swiglu_limit(float v) { return set_attr(FQ_QUANT_DESC_SWIGLU_LIMIT, v); }
    QuantDesc& set_row_prob(const float* v) { return set_attr(FQ_QUANT_DESC_ROW_PROB_POINTER, v); }
    // Quantization.
    QuantDesc& set_scheme(fqQuantScheme v) { return set_attr(FQ_QUANT_DESC_SCHEME, int32_t{v}); }
    QuantDesc& set_group_size(int32_t v) { return set_attr(FQ_QUANT_DESC_GROUP_SIZE, v); }
    QuantDesc& set_output_type(fqDataType v) { return set_attr(FQ_QUANT_DESC_OUTPUT_TYPE, int32_t{v}); }
    QuantDesc& set_scale_type(fqDataType v) { return set_attr(FQ_QUANT_DESC_SCALE_TYPE, int32_t{v}); }
    QuantDesc& set_scale_layout(fqScaleLayout v) { return set_attr(FQ_QUANT_DESC_SCALE_LAYOUT, int32_t{v}); }
    QuantDesc& set_scale_rounding(fqScaleRounding v) { return set_attr(FQ_QUANT_DESC_SCALE_ROUNDING, int32_t{v}); }
    QuantDesc& set_mx_scale_rule(fqMxScaleRule v) { return set_attr(FQ_QUANT_DESC_MX_SCALE_RULE, int32_t{v}); }
    QuantDesc& set_scale_apply(fqScaleApply v) { return set_attr(FQ_QUANT_DESC_SCALE_APPLY, int32_t{v}); }
    QuantDesc& set_qmax(float v) { return set_attr(FQ_QUANT_DESC_QMAX, v); }
    QuantDesc& set_min_scale(float v) { return set_attr(FQ_QUANT_DESC_MIN_SCALE, v); }
    QuantDesc& set_static_scale(const float* v) { return set_attr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, v); }
    QuantDesc& set_scale_ub(const float* v) { return set_attr(FQ_QUANT_DESC_SCALE_UB_POINTER, v); }
    QuantDesc& set_global_amax(const float* v) { return set_attr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, v); }
    // MoE.
    QuantDesc& set_moe_layout(fqMoeLayout v) { return set_attr(FQ_QUANT_DESC_MOE_LAYOUT, int32_t{v}); }
    QuantDesc& set_moe_num_experts(int32_t v) { return set_attr(FQ_QUANT_DESC_MOE_NUM_EXPERTS, v); }
    QuantDesc& set_moe_offsets(const int32_t* v) { return set_attr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, v); }
    QuantDesc& set_moe_counts(const int32_t* v) { return set_attr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, v); }
    // Outputs: `mask` is FQ_OUTPUT_ROWWISE, FQ_OUTPUT_COLUMNWISE or both OR-ed.
    QuantDesc& set_outputs(int32_t mask) { return set_attr(FQ_QUANT_DESC_OUTPUTS, mask); }
    QuantDesc& set_columnwise_block(int32_t v) { return set_attr(FQ_QUANT_DESC_COLUMNWISE_BLOCK, v); }
    QuantDesc& set_columnwise_transpose(bool v) { return set_attr(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, int32_t{v}); }
    QuantDesc& set_columnwise_output(void* v) { return set_attr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, v); }
    QuantDesc& set_columnwise_scale(void* v) { return set_attr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, v); }

    fqActivation activation() const { return enum_of<fqActivation>(FQ_QUANT_DESC_ACTIVATION); }
    fqGateLayout gate_layout() const { return enum_of<fqGateLayout>(FQ_QUANT_DESC_GATE_LAYOUT); }
    fqGateOrder gate_order() const { return enum_of<fqGateOrder>(FQ_QUANT_DESC_GATE_ORDER); }
    int32_t gate_block_width() const { return attr<int32_t>(FQ_QUANT_DESC_GATE_BLOCK_WIDTH); }
    fqIntermediateRounding intermediate_rounding() const { return enum_of<fqIntermediateRounding>(FQ_QUANT_DESC_INTERMEDIATE_ROUNDING); }
    float swiglu_alpha() const { return attr<float>(FQ_QUANT_DESC_SWIGLU_ALPHA); }
    float swiglu_beta() const { return attr<float>(FQ_QUANT_DESC_SWIGLU_BETA); }
    float swiglu_limit() const { return attr<float>(FQ_QUANT_DESC_SWIGLU_LIMIT); }
    const float* row_prob() const { return attr<const float*>(FQ_QUANT_DESC_ROW_PROB_POINTER); }
    fqQuantScheme scheme() const { return enum_of<fqQuantScheme>(FQ_QUANT_DESC_SCHEME); }
    int32_t group_size() const { return attr<int32_t>(FQ_QUANT_DESC_GROUP_SIZE); }
    fqDataType output_type() const { return enum_of<fqDataType>(FQ_QUANT_DESC_OUTPUT_TYPE); }
    fqDataType scale_type() const { return enum_of<fqDataType>(FQ_QUANT_DESC_SCALE_TYPE); }
    fqScaleLayout scale_layout() const { return enum_of<fqScaleLayout>(FQ_QUANT_DESC_SCALE_LAYOUT); }
    fqScaleRounding scale_rounding() const { return enum_of<fqScaleRounding>(FQ_QUANT_DESC_SCALE_ROUNDING); }
    fqMxScaleRule mx_scale_rule() const { return enum_of<fqMxScaleRule>(FQ_QUANT_DESC_MX_SCALE_RULE); }
    fqScaleApply scale_apply() const { return enum_of<fqScaleApply>(FQ_QUANT_DESC_SCALE_APPLY); }
    float qmax() const { return attr<float>(FQ_QUANT_DESC_QMAX); }
    float min_scale() const { return attr<float>(FQ_QUANT_DESC_MIN_SCALE); }
    const float* static_scale() const { return attr<const float*>(FQ_QUANT_DESC_STATIC_SCALE_POINTER); }
    const float* scale_ub() const { return attr<const float*>(FQ_QUANT_DESC_SCALE_UB_POINTER); }
    const float* global_amax() const { return attr<const float*>(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER); }
    fqMoeLayout moe_layout() const { return enum_of<fqMoeLayout>(FQ_QUANT_DESC_MOE_LAYOUT); }
    int32_t moe_num_experts() const { return attr<int32_t>(FQ_QUANT_DESC_MOE_NUM_EXPERTS); }
    const int32_t* moe_offsets() const { return attr<const int32_t*>(FQ_QUANT_DESC_MOE_OFFSETS_POINTER); }
    const int32_t* moe_counts() const { return attr<const int32_t*>(FQ_QUANT_DESC_MOE_COUNTS_POINTER); }
    int32_t outputs() const { return attr<int32_t>(FQ_QUANT_DESC_OUTPUTS); }
    int32_t columnwise_block() const { return attr<int32_t>(FQ_QUANT_DESC_COLUMNWISE_BLOCK); }
    bool columnwise_transpose() const { return attr<int32_t>(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE) != 0; }
    void* columnwise_output() const { return attr<void*>(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER); }
    void* columnwise_scale() const { return attr<void*>(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER); }

    /** Bytes of the scale buffer for a `rows` x `cols` output (fqGetScaleBufferSize; padding included). */
    size_t scale_buffer_size(int64_t rows, int64_t cols, fqOutputs which = FQ_OUTPUT_ROWWISE) const {
        size_t bytes = 0;
        check(fqGetScaleBufferSize(get(), rows, cols, which, &bytes));
        return bytes;
    }
    /** One fact about that scale buffer (fqGetScaleBufferInfo). */
    int64_t scale_buffer_info(int64_t rows, int64_t cols, fqScaleInfo info, fqOutputs which = FQ_OUTPUT_ROWWISE) const {
        int64_t value = 0;
        check(fqGetScaleBufferInfo(get(), rows, cols, which, info, &value));
        return value;
    }

    fqQuantDesc_t get() const noexcept { return obj_.get(); }
    fqQuantDesc_t release() noexcept { return obj_.release(); }

private:
    using Owner = detail::Unique<fqQuantDesc_t, fqQuantDescDestroy>;
    template <class V>
    QuantDesc& set_attr(fqQuantDescAttribute a, V v) {
        detail::set_attribute(fqQuantDescSetAttribute, get(), a, v);
        return *this;
    }
    template <class V>
    V attr(fqQuantDescAttribute a) const { return detail::get_attribute<V>(fqQuantDescGetAttribute, get(), a); }
    template <class E>
    E enum_of(fqQuantDescAttribute a) const { return static_cast<E>(attr<int32_t>(a)); }
    Owner obj_;
};

#ifdef FQ_EXPERIMENTAL_API  // FQ_EXPERIMENTAL (fusedquant.h): not covered by the ABI promise
/* ---- Grouped GEMM descriptor ------------------------------------------------------------------------- */

/** The groups, alphas, A-scale layout and outputs of fqGroupedGemm (fqGroupedGemmDesc_t); its epilogue is a
 *  QuantDesc. Attributes as documented at FQ_GEMM_DESC_* in fusedquant.h. */
class GroupedGemmDesc {
public:
    GroupedGemmDesc() {
        fqGroupedGemmDesc_t raw = nullptr;
        check(fqGroupedGemmDescCreate(&raw));
        obj_ = Owner(raw);
    }

    GroupedGemmDesc& set_num_groups(int32_t v) { return set_attr(FQ_GEMM_DESC_NUM_GROUPS, v); }
    GroupedGemmDesc& set_group_offsets(const int32_t* v) { return set_attr(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, v); }
    GroupedGemmDesc& set_group_counts(const int32_t* v) { return set_attr(FQ_GEMM_DESC_GROUP_COUNTS_POINTER, v); }
    GroupedGemmDesc& set_alpha(const float* v) { return set_attr(FQ_GEMM_DESC_ALPHA_POINTER, v); }
    GroupedGemmDesc& set_a_scale_layout(fqScaleLayout v) { return set_attr(FQ_GEMM_DESC_A_SCALE_LAYOUT, int32_t{v}); }
    GroupedGemmDesc& set_c_output(void* v) { return set_attr(FQ_GEMM_DESC_C_OUTPUT_POINTER, v); }
    GroupedGemmDesc& set_d_output(void* v) { return set_attr(FQ_GEMM_DESC_D_OUTPUT_POINTER, v); }
    GroupedGemmDesc& set_quantize(bool v) { return set_attr(FQ_GEMM_DESC_QUANTIZE, int32_t{v}); }

    int32_t num_groups() const { return attr<int32_t>(FQ_GEMM_DESC_NUM_GROUPS); }
    const int32_t* group_offsets() const { return attr<const int32_t*>(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER); }
    const int32_t* group_counts() const { return attr<const int32_t*>(FQ_GEMM_DESC_GROUP_COUNTS_POINTER); }
    const float* alpha() const { return attr<const float*>(FQ_GEMM_DESC_ALPHA_POINTER); }
    fqScaleLayout a_scale_layout() const { return static_cast<fqScaleLayout>(attr<int32_t>(FQ_GEMM_DESC_A_SCALE_LAYOUT)); }
    void* c_output() const { return attr<void*>(FQ_GEMM_DESC_C_OUTPUT_POINTER); }
    void* d_output() const { return attr<void*>(FQ_GEMM_DESC_D_OUTPUT_POINTER); }
    bool quantize() const { return attr<int32_t>(FQ_GEMM_DESC_QUANTIZE) != 0; }

    /** Bytes of a scale buffer of the GEMM's `rows` x `cols` output (fqGroupedGemmGetScaleBufferSize). */
    size_t scale_buffer_size(const QuantDesc& epilogue, int64_t rows, int64_t cols,
                             fqOutputs which = FQ_OUTPUT_ROWWISE) const {
        size_t bytes = 0;
        check(fqGroupedGemmGetScaleBufferSize(get(), epilogue.get(), rows, cols, which, &bytes));
        return bytes;
    }

    fqGroupedGemmDesc_t get() const noexcept { return obj_.get(); }
    fqGroupedGemmDesc_t release() noexcept { return obj_.release(); }

private:
    using Owner = detail::Unique<fqGroupedGemmDesc_t, fqGroupedGemmDescDestroy>;
    template <class V>
    GroupedGemmDesc& set_attr(fqGroupedGemmDescAttribute a, V v) {
        detail::set_attribute(fqGroupedGemmDescSetAttribute, get(), a, v);
        return *this;
    }
    template <class V>
    V attr(fqGroupedGemmDescAttribute a) const {
        return detail::get_attribute<V>(fqGroupedGemmDescGetAttribute, get(), a);
    }
    Owner obj_;
};
#endif

/* ---- Handle ----------------------------------------------------------------------------------------- */

/** A backend and device (fqHandle_t): queries and execution. On FQ_BACKEND_CUDA, pointers are device memory
 *  and execution is asynchronous on `stream` (a cudaStream_t cast to fqStream_t); on FQ_BACKEND_HOST,
 *  pointers are host memory and calls are synchronous. */
class Handle {
public:
    /** `device`: the CUDA ordinal, -1 for the current device (the host backend takes -1 or 0). */
    explicit Handle(fqBackend backend, int32_t device = -1) {
        fqHandle_t raw = nullptr;
        check(fqCreate(&raw, backend, device));
        obj_ = Owner(raw);
    }

    fqBackend backend() const { return static_cast<fqBackend>(attr<int32_t>(FQ_HANDLE_BACKEND)); }
    int32_t device() const { return attr<int32_t>(FQ_HANDLE_DEVICE); }
    int32_t arch() const { return attr<int32_t>(FQ_HANDLE_ARCH); }
    int32_t sm_count() const { return attr<int32_t>(FQ_HANDLE_SM_COUNT); }
    Handle& set_allow_pdl(bool v) { return set_attr(FQ_HANDLE_ALLOW_PDL, int32_t{v}); }
    bool allow_pdl() const { return attr<int32_t>(FQ_HANDLE_ALLOW_PDL) != 0; }
#ifdef FQ_EXPERIMENTAL_API  // FQ_EXPERIMENTAL (fusedquant.h): not covered by the ABI promise
    Handle& set_variant(int32_t index) { return set_attr(FQ_HANDLE_VARIANT, index); }
    Handle& set_wide_tile_min(int32_t tiles) { return set_attr(FQ_HANDLE_WIDE_TILE_MIN, tiles); }
    int32_t variant() const { return attr<int32_t>(FQ_HANDLE_VARIANT); }
    int32_t wide_tile_min() const { return attr<int32_t>(FQ_HANDLE_WIDE_TILE_MIN); }
#endif

    /** The kernel variants of this handle's backend, in the order the dispatcher tries them. */
    int32_t variant_count() const {
        int32_t n = 0;
        check(fqGetVariantCount(get(), &n));
        return n;
    }
    std::string variant_name(int32_t index) const {
        char name[256];
        check(fqGetVariantName(get(), index, name, sizeof name));
        return name;
    }
    /** The variant fqQuantize would run for this problem; throws the status and reason it would refuse with. */
    std::string query_support(const QuantDesc& desc, const TensorLayout& in, const TensorLayout& out) const {
        char name[256];
        check(fqQuerySupport(get(), desc.get(), in.get(), out.get(), name, sizeof name));
        return name;
    }
    size_t workspace_size(const QuantDesc& desc, const TensorLayout& in, const TensorLayout& out) const {
        size_t bytes = 0;
        check(fqGetWorkspaceSize(get(), desc.get(), in.get(), out.get(), &bytes));
        return bytes;
    }

    /** fqQuantize on pointers (device memory on a CUDA handle). `scales` must hold
     *  desc.scale_buffer_size(out.rows(), out.cols()) bytes: that is the size passed to the library. */
    void quantize(const QuantDesc& desc, const TensorLayout& in, const void* x, const TensorLayout& out, void* y,
                  void* scales, fqStream_t stream = nullptr, void* workspace = nullptr,
                  size_t workspace_bytes = 0) const {
        const size_t scale_bytes = desc.scale_buffer_size(out.rows(), out.cols());
        check(fqQuantize(get(), desc.get(), in.get(), x, out.get(), y, scales, scale_bytes, workspace,
                         workspace_bytes, stream));
    }
    /** fqQuantize on host buffers: contiguous containers (std::vector, std::array, fq::Span) of any element
     *  type. Each must hold what its layout spans (x the input's, y the output's unless the descriptor writes
     *  columnwise outputs alone) and scales at least desc.scale_buffer_size(out.rows(), out.cols()) bytes;
     *  else FQ_STATUS_INSUFFICIENT_BUFFER naming the buffer, before anything is read or written. */
    template <class X, class Y, class S, class = detail::if_contiguous<X>, class = detail::if_contiguous<Y>,
              class = detail::if_contiguous<S>>
    void quantize(const QuantDesc& desc, const TensorLayout& in, const X& x, const TensorLayout& out, Y&& y,
                  S&& scales) const {
        static_assert(detail::is_writable_v<Y> && detail::is_writable_v<S>, "y and scales must be writable");
        detail::check_holds("x", detail::size_bytes(x), in, "input");
        if (desc.outputs() & FQ_OUTPUT_ROWWISE) detail::check_holds("y", detail::size_bytes(y), out, "output");
        check(fqQuantize(get(), desc.get(), in.get(), std::data(x), out.get(), std::data(y), std::data(scales),
                         detail::size_bytes(scales), nullptr, 0, nullptr));
    }

#ifdef FQ_EXPERIMENTAL_API
    /** fqGroupedGemm on pointers (documented in fusedquant.h); `scales` holds
     *  gemm.scale_buffer_size(epilogue, out.rows(), out.cols()) bytes, the size passed to the library. */
    void grouped_gemm(const GroupedGemmDesc& gemm, const QuantDesc& epilogue, const TensorLayout& a_layout,
                      const void* a, const void* a_scales, const TensorLayout& b_layout, const void* b,
                      const void* b_scales, const TensorLayout& out, void* y, void* scales,
                      fqStream_t stream = nullptr) const {
        const size_t scale_bytes = gemm.quantize() ? gemm.scale_buffer_size(epilogue, out.rows(), out.cols()) : 0;
        check(fqGroupedGemm(get(), gemm.get(), epilogue.get(), a_layout.get(), a, a_scales, b_layout.get(), b,
                            b_scales, out.get(), y, scales, scale_bytes, stream));
    }
#endif

    fqHandle_t get() const noexcept { return obj_.get(); }
    fqHandle_t release() noexcept { return obj_.release(); }

private:
    using Owner = detail::Unique<fqHandle_t, fqDestroy>;
    template <class V>
    Handle& set_attr(fqHandleAttribute a, V v) {
        detail::set_attribute(fqHandleSetAttribute, get(), a, v);
        return *this;
    }
    template <class V>
    V attr(fqHandleAttribute a) const { return detail::get_attribute<V>(fqHandleGetAttribute, get(), a); }
    Owner obj_;
};

/* ---- Plan ------------------------------------------------------------------------------------------ */

/** A quantization problem validated once (fqPlan_t): the handle, descriptor and layouts are checked and the
 *  kernel variant chosen when it is made; run() checks only the buffers. It keeps copies of what it needs, so
 *  it outlives the objects it was made from. run() is const: several threads may run one plan at once. */
class Plan {
public:
    Plan(const Handle& handle, const QuantDesc& desc, const TensorLayout& in, const TensorLayout& out) {
        fqPlan_t raw = nullptr;
        check(fqPlanCreate(&raw, handle.get(), desc.get(), in.get(), out.get()));
        obj_ = Owner(raw);
    }

    /** Bytes of the workspace run() needs (FQ_PLAN_WORKSPACE_SIZE), of `scales` and of the columnwise scales. */
    size_t workspace_size() const { return size_t(attr(FQ_PLAN_WORKSPACE_SIZE)); }
    size_t scale_buffer_size() const { return size_t(attr(FQ_PLAN_SCALE_BUFFER_SIZE)); }
    size_t columnwise_scale_buffer_size() const { return size_t(attr(FQ_PLAN_COLUMNWISE_SCALE_BUFFER_SIZE)); }
    /** The variant it runs for 16-byte-aligned buffers. */
    std::string variant_name() const {
        char name[256];
        check(fqPlanGetVariantName(get(), name, sizeof name));
        return name;
    }

    /** fqPlanExecute on pointers (device memory on a CUDA handle); `scales` holds scale_buffer_size() bytes,
     *  the size passed to the library, and `workspace` workspace_size() bytes. */
    void run(const void* x, void* y, void* scales, fqStream_t stream = nullptr, void* workspace = nullptr) const {
        check(fqPlanExecute(get(), x, y, scales, scale_buffer_size(), workspace, workspace_size(), stream));
    }

    fqPlan_t get() const noexcept { return obj_.get(); }
    fqPlan_t release() noexcept { return obj_.release(); }

private:
    using Owner = detail::Unique<fqPlan_t, fqPlanDestroy>;
    int64_t attr(fqPlanAttribute a) const { return detail::get_attribute<int64_t>(fqPlanGetAttribute, get(), a); }
    Owner obj_;
};

}  // namespace fq

#endif /* FUSEDQUANT_HPP */
