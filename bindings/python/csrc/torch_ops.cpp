// The C++ kernel of torch.ops.fusedquant.quantize for CPU and CUDA tensors, on PyTorch's stable ABI (one build
// serves torch 2.10 and later). A call whose configuration, input geometry and pointer arguments (their tensors'
// addresses) the Python layer has planned (fusedquant/torch_ops.py hands the plan over to fusedquant::_remember)
// runs as one fqPlanExecute into new outputs, without Python; a call of the same configuration and pointer
// arguments on a new geometry (another token count) is planned here, from the descriptor handed over with the
// first plan. Every other call (the first of its family, a columnwise output, NVFP4's amax computed on the
// device, an execution the library refuses) goes to the Python kernel, fusedquant::quantize_general, through the
// dispatcher, which gives the same outputs or raises the library's error.
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>

#include "fusedquant/fusedquant.h"

namespace fq_torch {

using torch::headeronly::ScalarType;
using torch::stable::Tensor;
using Outputs = std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor>;

// ---- The planned calls: LRUs of plans, keyed by configuration, input geometry and pointer arguments ---------

// The pointer arguments (static_scale, scale_ub, row_prob, global_amax, moe_offsets, moe_counts), in the schema's
// order: a plan holds their addresses, so a call matches it only with the same tensors' memory.
constexpr int kPointers = 6;

struct Key {
    std::string config;
    int32_t device_index;  // -1: host memory
    int32_t dtype;         // the input's dtype_code
    std::vector<int64_t> sizes, strides;
    // Per pointer argument: address, dtype_code, elements, device index (-1: host; -2: absent).
    std::array<int64_t, 4 * kPointers> pointers;
    // The out= form's buffers (outputs_of); empty for the functional operator.
    std::vector<int64_t> outputs = {};
    bool operator==(const Key& o) const {
        return device_index == o.device_index && dtype == o.dtype && sizes == o.sizes && strides == o.strides &&
               pointers == o.pointers && outputs == o.outputs && config == o.config;
    }
};

struct KeyHash {
    size_t operator()(const Key& k) const {
        size_t h = std::hash<std::string>()(k.config) ^ (size_t(k.device_index + 1) << 20) ^ size_t(k.dtype);
        for (int64_t v : k.sizes) h = h * 1000003u ^ size_t(v);
        for (int64_t v : k.strides) h = h * 1000003u ^ size_t(v);
        for (int64_t v : k.pointers) h = h * 1000003u ^ size_t(v);
        for (int64_t v : k.outputs) h = h * 1000003u ^ size_t(v);
        return h;
    }
};

// A plan's owner: the cache entry and every call running it, so that an eviction or fusedquant.clear_cache() on
// another thread destroys it only after the last execution.
using PlanRef = std::shared_ptr<std::remove_pointer_t<fqPlan_t>>;

// How a configuration's outputs are made, whatever the geometry: empty tensors of the values' and the scale
// storage's dtypes on x's device (new outputs are made like them), whether the library leaves bytes of them
// unwritten (MoE rows no expert owns, a static scale's slot: zero-filled first), and the empty tensors returned
// for the outputs a planned call does not write (columnwise values and scales, global amax): the same ones every
// call, as the Python kernel does.
struct OutputForm {
    Tensor values_like, scales_like;
    int64_t scale_element_bytes;
    bool zero_values, zero_scales;
    std::array<Tensor, 3> unwritten;
};

// What a planned call allocates and runs.
struct Planned {
    PlanRef plan;
    std::vector<int64_t> values_shape;
    int64_t scale_elements;
    size_t scale_bytes;
    int64_t workspace;
    std::shared_ptr<const OutputForm> form;
};

// A bounded map, least recently used entries dropped first, safe to share between threads.
template <class Value>
class Lru {
public:
    explicit Lru(size_t capacity) : capacity_(capacity) {}

    std::optional<Value> find(const Key& key) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = index_.find(key);
        if (it == index_.end()) return std::nullopt;
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
    }

    void insert(Key key, Value value) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = index_.find(key);
        if (it != index_.end()) {
            order_.erase(it->second);
            index_.erase(it);
        }
        order_.emplace_front(std::move(key), std::move(value));
        index_.emplace(order_.front().first, order_.begin());
        if (order_.size() > capacity_) {
            index_.erase(order_.back().first);
            order_.pop_back();
        }
    }

    void clear() {
        std::lock_guard<std::mutex> lock(mutex_);
        order_.clear();
        index_.clear();
    }

private:
    const size_t capacity_;
    std::mutex mutex_;
    std::list<std::pair<Key, Value>> order_;  // most recent first
    std::unordered_map<Key, typename std::list<std::pair<Key, Value>>::iterator, KeyHash> index_;
};

// What a call's plan depends on besides its rows and row stride (a family of plans, one per geometry): the
// descriptor (pointer attributes set), the types, the outputs' columns and their form. With it a call of a new
// token count is planned here, without Python.
struct Family {
    std::shared_ptr<std::remove_pointer_t<fqQuantDesc_t>> desc;
    int32_t in_type, out_type;  // fqDataType
    int64_t cols;               // output columns (elements of out_type)
    int64_t values_last;        // the values tensor's last size (cols, or cols / 2 FP4 pairs)
    std::shared_ptr<const OutputForm> form;
};

// Never destroyed: plans outlive the process's static destructors (and torch's) without an order to keep.
Lru<Planned>& cache() {
    static auto* c = new Lru<Planned>(1024);
    return *c;
}
Lru<std::shared_ptr<const Family>>& families() {
    static auto* c = new Lru<std::shared_ptr<const Family>>(256);
    return *c;
}

// What the kernel did with its calls since the last fq_torch_forget_all (fusedquant.torch_ops.native_counts()):
// calls run as a plan, plans made here for a new geometry, calls sent to the Python kernel, and executions it
// refused (a planned call the library or the stream lookup turned down, then sent to the Python kernel), with the
// reason of the last refusal.
struct Counts {
    std::atomic<int64_t> planned{0}, planned_here{0}, general{0}, refused{0};
    std::mutex mutex;
    std::string last_refusal;
};
Counts& counts() {
    static auto* c = new Counts;
    return *c;
}
void refused(std::string reason) {
    Counts& c = counts();
    ++c.refused;
    const std::lock_guard<std::mutex> lock(c.mutex);
    c.last_refusal = std::move(reason);
}

// The family key of a call's key: its geometry reduced to the row width.
Key family_key(const Key& key) {
    return Key{key.config, key.device_index, key.dtype, {key.sizes.empty() ? 0 : key.sizes.back()}, {}, key.pointers};
}

// One handle per backend and device, for the plans made here (never destroyed, as the plans).
fqHandle_t handle_for(int32_t device_index) {
    static std::mutex mutex;
    static auto* handles = new std::unordered_map<int32_t, fqHandle_t>;
    std::lock_guard<std::mutex> lock(mutex);
    fqHandle_t& h = (*handles)[device_index];
    const int32_t backend = device_index < 0 ? FQ_BACKEND_HOST : FQ_BACKEND_CUDA;
    if (h == nullptr && fqCreate(&h, backend, device_index) != FQ_STATUS_SUCCESS) h = nullptr;
    return h;
}

int32_t device_of(const Tensor& t) { return t.is_cuda() ? int32_t(t.get_device_index()) : -1; }

// A tensor's dtype as the stable ABI's C shim numbers it: compared, never made a ScalarType, which the stable ABI
// of torch 2.10 does not do for every dtype (float8_e8m0fnu and float4_e2m1fn_x2 buffers are the out= form's).
int32_t dtype_code(const Tensor& t) {
    int32_t code = 0;
    TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(t.get(), &code));
    return code;
}

// Pointer argument i's part of a key: its address, dtype, elements and device index; an absent one's marks.
void set_pointer(Key& key, int i, const Tensor& t) {
    int64_t* k = &key.pointers[4 * i];
    k[0] = int64_t(reinterpret_cast<uintptr_t>(t.data_ptr())), k[1] = dtype_code(t), k[2] = t.numel(),
    k[3] = device_of(t);
}
constexpr int64_t kAbsent = -2;  // the device index of an absent pointer argument
void set_absent(Key& key, int i) {
    int64_t* k = &key.pointers[4 * i];
    k[0] = 0, k[1] = 0, k[2] = 0, k[3] = kAbsent;
}

// The key of a call, or nothing where a pointer argument is not contiguous (the general path takes it).
std::optional<Key> key_of(const std::string& config, const Tensor& x, const std::optional<Tensor> (&given)[kPointers]) {
    const auto sizes = x.sizes(), strides = x.strides();
    Key key{config, device_of(x), dtype_code(x), std::vector<int64_t>(sizes.begin(), sizes.end()),
            std::vector<int64_t>(strides.begin(), strides.end()), {}};
    for (int i = 0; i < kPointers; ++i) {
        if (!given[i]) {
            set_absent(key, i);
            continue;
        }
        if (!given[i]->is_contiguous()) return std::nullopt;
        set_pointer(key, i, *given[i]);
    }
    return key;
}

// The out= form's part of a key: the values buffer's sizes, strides, dtype and device, and the scale buffer's
// bytes, dtype and device (its address may change from call to call, not its geometry).
std::vector<int64_t> outputs_of(const Tensor& out, const Tensor& scales) {
    const auto sizes = out.sizes(), strides = out.strides();
    std::vector<int64_t> k(sizes.begin(), sizes.end());
    k.insert(k.end(), strides.begin(), strides.end());
    k.insert(k.end(), {int64_t(sizes.size()), dtype_code(out), device_of(out),
                       int64_t(scales.numel() * scales.element_size()), dtype_code(scales), device_of(scales)});
    return k;
}

// ---- A new geometry of a known family ------------------------------------------------------------------------

// x's rows as fusedquant's Python layer folds them (_api._rows): the leading sizes, their product and the row
// stride in elements; nothing where they do not fold (the general path gives the error).
struct Rows {
    std::vector<int64_t> lead;
    int64_t rows, ld;
};
std::optional<Rows> rows_of(const Tensor& x) {
    const auto sizes = x.sizes(), strides = x.strides();
    const size_t n = sizes.size();
    if (n == 0) return std::nullopt;
    Rows r{std::vector<int64_t>(sizes.begin(), sizes.end() - 1), 1, 0};
    const int64_t width = sizes[n - 1];
    bool empty = width == 0;
    for (int64_t v : r.lead) r.rows *= v, empty |= v == 0;
    if (empty) {
        r.ld = std::max<int64_t>(width, 1);
        return r;
    }
    if (strides[n - 1] != 1 && width > 1) return std::nullopt;
    int64_t stride = -1, inner_size = 0, inner_stride = 0;
    for (size_t i = n - 1; i-- > 0;) {  // the leading axes of size > 1, innermost first
        if (sizes[i] == 1) continue;
        if (stride < 0) stride = strides[i];
        else if (strides[i] != inner_stride * inner_size) return std::nullopt;
        inner_size = sizes[i], inner_stride = strides[i];
    }
    if (stride < 0) stride = width;
    if (stride < width) return std::nullopt;
    r.ld = stride;
    return r;
}

// The plan of a family's call on x's geometry (the call's key: `key`), made here. Of the pointer arguments only
// the routing probabilities are read per row: fewer of them than rows goes to the general path's error.
constexpr int kRowProb = 2;  // its index among the pointer arguments

std::optional<Planned> plan_for(const Family& f, const Tensor& x, const Key& key) {
    const std::optional<Rows> r = rows_of(x);
    if (!r) return std::nullopt;
    const int64_t* row_prob = &key.pointers[4 * kRowProb];
    if (row_prob[3] != kAbsent && row_prob[2] < r->rows) return std::nullopt;
    const int32_t device = device_of(x);
    const fqHandle_t h = handle_for(device);
    if (h == nullptr) return std::nullopt;
    fqTensorLayout_t in = nullptr, out = nullptr;
    fqPlan_t plan = nullptr;
    fqStatus_t s = fqTensorLayoutCreate(&in, f.in_type, r->rows, x.sizes().back(), r->ld);
    if (s == FQ_STATUS_SUCCESS) s = fqTensorLayoutCreate(&out, f.out_type, r->rows, f.cols, f.cols);
    if (s == FQ_STATUS_SUCCESS) {
        std::optional<torch::stable::accelerator::DeviceGuard> guard;  // a CUDA plan checks its device is current
        if (device >= 0) guard.emplace(static_cast<torch::stable::accelerator::DeviceIndex>(device));
        s = fqPlanCreate(&plan, h, f.desc.get(), in, out);
    }
    fqTensorLayoutDestroy(in);
    fqTensorLayoutDestroy(out);
    if (s != FQ_STATUS_SUCCESS) return std::nullopt;
    PlanRef ref(plan, fqPlanDestroy);
    int64_t scale_bytes = 0, workspace = 0;
    auto get = [&](int32_t attr, int64_t* value) {
        return fqPlanGetAttribute(plan, attr, value, sizeof *value, nullptr) == FQ_STATUS_SUCCESS;
    };
    if (!get(FQ_PLAN_SCALE_BUFFER_SIZE, &scale_bytes) || !get(FQ_PLAN_WORKSPACE_SIZE, &workspace))
        return std::nullopt;
    std::vector<int64_t> values_shape = r->lead;
    values_shape.push_back(f.values_last);
    const int64_t el = f.form->scale_element_bytes;
    const int64_t elements = std::max<int64_t>((scale_bytes + el - 1) / el, 1);
    return Planned{std::move(ref), std::move(values_shape), elements, size_t(scale_bytes), workspace, f.form};
}

// ---- One planned call ----------------------------------------------------------------------------------------

// The current CUDA stream of a device, as torch's own launchers read it. The CUDA shim lives in libtorch_cuda,
// which a CPU-only torch lacks: looked up in the loaded library on first use rather than linked. Nothing where it
// cannot be read; the legacy default stream is a null handle, a stream like any other.
std::optional<void*> current_cuda_stream(int32_t device_index) {
    using Getter = int32_t (*)(int32_t, void**);
    static Getter getter = [] {
        void* lib = dlopen("libtorch_cuda.so", RTLD_NOW | RTLD_NOLOAD);
        return lib ? reinterpret_cast<Getter>(dlsym(lib, "aoti_torch_get_current_cuda_stream")) : nullptr;
    }();
    void* stream = nullptr;
    if (getter == nullptr || getter(device_index, &stream) != 0) return std::nullopt;
    return stream;
}

// One execution of `planned` on x into `values` and `scales` (of `scale_bytes`), on x's device and current stream
// (x's device made current, as torch's own CUDA kernels make it); false where the library refuses it (the general
// path then raises its error) or the stream cannot be read.
bool execute(const Planned& planned, const Tensor& x, const Tensor& values, const Tensor& scales, size_t scale_bytes) {
    using torch::stable::accelerator::DeviceGuard;
    void* stream = nullptr;
    std::optional<DeviceGuard> guard;
    if (x.is_cuda()) {
        const auto device = x.get_device_index();
        if (torch::stable::accelerator::getCurrentDeviceIndex() != device) guard.emplace(device);
        const std::optional<void*> current = current_cuda_stream(device);
        if (!current) {
            refused("the current CUDA stream of device " + std::to_string(device) + " could not be read");
            return false;
        }
        stream = *current;
    }
    std::optional<Tensor> workspace;
    if (planned.workspace > 0)
        workspace = torch::stable::empty({planned.workspace}, ScalarType::Byte, std::nullopt, x.device());
    const fqStatus_t status = fqPlanExecute(planned.plan.get(), x.data_ptr(), values.data_ptr(), scales.data_ptr(),
                                            scale_bytes, workspace ? workspace->data_ptr() : nullptr,
                                            size_t(planned.workspace), static_cast<fqStream_t>(stream));
    if (status != FQ_STATUS_SUCCESS)
        refused(std::string("fqPlanExecute: ") + fqGetStatusString(status) + ": " + fqGetLastErrorMessage());
    return status == FQ_STATUS_SUCCESS;
}

// The outputs of `planned` on x, new, or nothing where execute refuses.
std::optional<Outputs> run_planned(const Planned& planned, const Tensor& x) {
    const OutputForm& f = *planned.form;
    Tensor values = torch::stable::new_empty(f.values_like, planned.values_shape);
    Tensor scales = torch::stable::new_empty(f.scales_like, {planned.scale_elements});
    if (f.zero_values) torch::stable::zero_(values);
    if (f.zero_scales) torch::stable::zero_(scales);
    if (!execute(planned, x, values, scales, planned.scale_bytes)) return std::nullopt;
    const auto& [col_values, col_scales, amax] = f.unwritten;
    return Outputs{values, scales, col_values, col_scales, amax};
}

// The OutputForm of outputs made like `values` and `scales` (a call's, or the out= form's buffers), on x's device.
std::shared_ptr<const OutputForm> output_form(const Tensor& x, const Tensor& values, const Tensor& scales,
                                              bool zero_values, bool zero_scales) {
    auto empty = [&](ScalarType dtype) { return torch::stable::empty({0}, dtype, std::nullopt, x.device()); };
    return std::make_shared<const OutputForm>(OutputForm{
        torch::stable::new_empty(values, {0}), torch::stable::new_empty(scales, {0}), int64_t(scales.element_size()),
        zero_values, zero_scales, {empty(ScalarType::Byte), empty(ScalarType::Byte), empty(ScalarType::Float)}});
}

// ---- The operator ----------------------------------------------------------------------------------------------

// The message of the Python kernel's error on this thread, which it leaves here (fq_torch_fail) before raising:
// the dispatcher's C interface returns only a failure code.
thread_local std::string general_error;

// A Python kernel (`op`: fusedquant::quantize_general, quantize_out_general) on the boxed arguments `stack`;
// its error as a RuntimeError with its message (fusedquant's functional names raise the FusedQuantError itself).
void call_python(const char* op, StableIValue* stack) {
    general_error.clear();
    if (torch_call_dispatcher(op, "", stack, TORCH_ABI_VERSION) != AOTI_TORCH_SUCCESS)
        throw std::runtime_error(general_error.empty() ? std::string(op) + " failed" : general_error);
}

// fusedquant::quantize_general with the same arguments.
Outputs call_general(const Tensor& x, const std::string& config, const std::optional<Tensor> (&given)[kPointers]) {
    using torch::stable::detail::from, torch::stable::detail::to;
    StableIValue stack[2 + kPointers] = {from(x), from(config)};
    for (int i = 0; i < kPointers; ++i) stack[2 + i] = from(given[i]);
    call_python("fusedquant::quantize_general", stack);
    return Outputs{to<Tensor>(stack[0]), to<Tensor>(stack[1]), to<Tensor>(stack[2]), to<Tensor>(stack[3]),
                   to<Tensor>(stack[4])};
}

Outputs quantize(Tensor x, std::string config, std::optional<Tensor> static_scale, std::optional<Tensor> scale_ub,
                 std::optional<Tensor> row_prob, std::optional<Tensor> global_amax, std::optional<Tensor> moe_offsets,
                 std::optional<Tensor> moe_counts) {
    const std::optional<Tensor> given[kPointers] = {static_scale, scale_ub, row_prob, global_amax, moe_offsets,
                                                    moe_counts};
    if (std::optional<Key> key = key_of(config, x, given)) {
        std::optional<Planned> planned = cache().find(*key);
        if (!planned) {  // a new geometry: planned here where its family is known
            if (const auto family = families().find(family_key(*key)))
                if ((planned = plan_for(**family, x, *key))) {
                    ++counts().planned_here;
                    cache().insert(std::move(*key), *planned);
                }
        }
        if (planned)
            if (std::optional<Outputs> out = run_planned(*planned, x)) {
                ++counts().planned;
                return *out;
            }
    }
    ++counts().general;
    return call_general(x, config, given);
}

// The out= form: a planned call (rowwise buffers alone) writes the caller's buffers; others go to its Python kernel.
void quantize_out(Tensor x, std::string config, std::optional<Tensor> out, std::optional<Tensor> scales,
                  std::optional<Tensor> col_out, std::optional<Tensor> col_scales, std::optional<Tensor> static_scale,
                  std::optional<Tensor> scale_ub, std::optional<Tensor> row_prob, std::optional<Tensor> global_amax,
                  std::optional<Tensor> moe_offsets, std::optional<Tensor> moe_counts) {
    const std::optional<Tensor> given[kPointers] = {static_scale, scale_ub, row_prob, global_amax, moe_offsets,
                                                    moe_counts};
    if (out && scales && !col_out && !col_scales)
        if (std::optional<Key> key = key_of(config, x, given)) {
            key->outputs = outputs_of(*out, *scales);
            if (const std::optional<Planned> planned = cache().find(*key))
                if (execute(*planned, x, *out, *scales, size_t(scales->numel() * scales->element_size()))) {
                    ++counts().planned;
                    return;
                }
        }
    ++counts().general;
    using torch::stable::detail::from;
    StableIValue stack[6 + kPointers] = {from(x), from(config), from(out), from(scales), from(col_out),
                                         from(col_scales)};
    for (int i = 0; i < kPointers; ++i) stack[6 + i] = from(given[i]);
    call_python("fusedquant::quantize_out_general", stack);
}

// ---- The hand-over from the Python kernel -------------------------------------------------------------------

// fusedquant::_remember, which the Python kernel calls after it has planned and run a call: takes over `plan` and
// `desc` (the addresses of an fqPlan_t and of its fqQuantDesc_t, pointer attributes set, which the caller no
// longer destroys) as the planned call of `config` on x's geometry with the pointer arguments given. Functional
// form: `values` and `scales` are the outputs the call returned (the next calls' outputs are made like them), and
// with the descriptor, the fqDataTypes of input and output and the output's columns they make the family that
// plans the call's other token counts here. Out= form: the caller's buffers, whose geometry joins the key. False,
// taking nothing over, where the call has no key (a pointer argument not contiguous).
bool remember(Tensor x, std::string config, std::optional<Tensor> static_scale, std::optional<Tensor> scale_ub,
              std::optional<Tensor> row_prob, std::optional<Tensor> global_amax, std::optional<Tensor> moe_offsets,
              std::optional<Tensor> moe_counts, Tensor values, Tensor scales, bool out_form, int64_t plan,
              int64_t desc, int64_t in_type, int64_t out_type, int64_t cols, int64_t workspace, bool zero_values,
              bool zero_scales) {
    const std::optional<Tensor> given[kPointers] = {static_scale, scale_ub, row_prob, global_amax, moe_offsets,
                                                    moe_counts};
    std::optional<Key> key = key_of(config, x, given);
    if (!key) return false;
    const auto shape = values.sizes();
    auto form = output_form(x, values, scales, zero_values, zero_scales);
    if (out_form) key->outputs = outputs_of(values, scales);  // the caller's buffers set the geometry: no family
    // Owned from here on, after everything that can throw (the caller destroys them if this raises).
    PlanRef owned_plan(reinterpret_cast<fqPlan_t>(plan), fqPlanDestroy);
    std::shared_ptr<std::remove_pointer_t<fqQuantDesc_t>> owned_desc(reinterpret_cast<fqQuantDesc_t>(desc),
                                                                     fqQuantDescDestroy);
    if (!out_form)
        families().insert(family_key(*key), std::make_shared<const Family>(Family{
            std::move(owned_desc), int32_t(in_type), int32_t(out_type), cols, shape.back(), form}));
    cache().insert(std::move(*key), Planned{std::move(owned_plan), std::vector<int64_t>(shape.begin(), shape.end()),
                                            scales.numel(), size_t(scales.numel() * scales.element_size()), workspace,
                                            std::move(form)});
    return true;
}

}  // namespace fq_torch

STABLE_TORCH_LIBRARY_FRAGMENT(fusedquant, m) {
    m.def("_remember(Tensor x, str config, Tensor? static_scale, Tensor? scale_ub, Tensor? row_prob, "
          "Tensor? global_amax, Tensor? moe_offsets, Tensor? moe_counts, Tensor values, Tensor scales, bool out_form, "
          "int plan, int desc, int in_type, int out_type, int cols, int workspace, bool zero_values, "
          "bool zero_scales) -> bool");
}
STABLE_TORCH_LIBRARY_IMPL(fusedquant, CPU, m) {
    m.impl("quantize", TORCH_BOX(&fq_torch::quantize));
    m.impl("quantize_out", TORCH_BOX(&fq_torch::quantize_out));
    m.impl("_remember", TORCH_BOX(&fq_torch::remember));
}
STABLE_TORCH_LIBRARY_IMPL(fusedquant, CUDA, m) {
    m.impl("quantize", TORCH_BOX(&fq_torch::quantize));
    m.impl("quantize_out", TORCH_BOX(&fq_torch::quantize_out));
    m.impl("_remember", TORCH_BOX(&fq_torch::remember));
}

// ---- What the Python layer calls (ctypes) ----------------------------------------------------------------------
extern "C" {

// The Python kernel's error message on this thread, for the RuntimeError the operator raises.
__attribute__((visibility("default"))) void fq_torch_fail(const char* message) { fq_torch::general_error = message; }

// Destroys every plan and descriptor taken over (fusedquant.clear_cache()).
__attribute__((visibility("default"))) void fq_torch_forget_all(void) {
    fq_torch::cache().clear();
    fq_torch::families().clear();
    fq_torch::Counts& c = fq_torch::counts();
    c.planned = c.planned_here = c.general = c.refused = 0;
    const std::lock_guard<std::mutex> lock(c.mutex);
    c.last_refusal.clear();
}

// The counts of fq_torch::Counts (planned, planned here, general, refused) into `out`, and the last refusal's
// reason into `reason` (`capacity` bytes, NUL-terminated, cut to fit); the reason's length.
__attribute__((visibility("default"))) size_t fq_torch_counts(int64_t out[4], char* reason, size_t capacity) {
    fq_torch::Counts& c = fq_torch::counts();
    out[0] = c.planned, out[1] = c.planned_here, out[2] = c.general, out[3] = c.refused;
    const std::lock_guard<std::mutex> lock(c.mutex);
    if (capacity > 0) {
        const size_t n = std::min(capacity - 1, c.last_refusal.size());
        std::memcpy(reason, c.last_refusal.data(), n);
        reason[n] = '\0';
    }
    return c.last_refusal.size();
}

}  // extern "C"
