// The extern "C" boundary's shared machinery (src/api/api.cpp, src/api/grouped_gemm_api.cpp): the guard that
// turns exceptions into statuses, the checks that tell a live object from a NULL, destroyed or foreign
// pointer, and the attribute tables that set/get are written once over.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "error.h"
#include "objects.h"

namespace fq {

// Runs `body` with the boundary's guarantees: message cleared first, no exception escapes.
template <class Body>
fqStatus_t guarded(const char* function, Body&& body) noexcept {
    try {
        clear_last_error();
        return body();
    } catch (const std::bad_alloc&) {
        return fail(FQ_STATUS_ALLOC_FAILED, "{}: out of host memory", function);
    } catch (const std::exception& e) {
        return fail(FQ_STATUS_INTERNAL_ERROR, "{}: unexpected exception: {}", function, e.what());
    } catch (...) {
        return fail(FQ_STATUS_INTERNAL_ERROR, "{}: unexpected non-standard exception", function);
    }
}

inline const char* kind_name(ObjectKind k) {
    switch (k) {
        case ObjectKind::Handle: return "fqHandle_t";
        case ObjectKind::Desc: return "fqQuantDesc_t";
        case ObjectKind::Layout: return "fqTensorLayout_t";
        case ObjectKind::GemmDesc: return "fqGroupedGemmDesc_t";
        case ObjectKind::Plan: return "fqPlan_t";
    }
    return "object";
}

inline fqStatus_t not_live(const char* arg, ObjectKind k) {
    return fail(FQ_STATUS_INVALID_HANDLE, "{}: not a live {} (destroyed, or another kind of object)", arg, kind_name(k));
}

// Checks that `value`, as the caller passed it, names a live object of kind `k`, and replaces it with the
// object's address: after FQ_TRY(live_object(...)), `value` may be dereferenced (src/api/objects.h).
template <class T>
fqStatus_t live_object(const char* arg, T*& value, ObjectKind k) {
    if (!value) return fail(FQ_STATUS_INVALID_HANDLE, "{}: NULL {}", arg, kind_name(k));
    T* object = find_object(value);
    if (!object) return not_live(arg, k);
    value = object;
    return FQ_STATUS_SUCCESS;
}

// A new object, a copy of `init`; `*out` receives the value that names it.
template <class T>
fqStatus_t create_object(const char* arg, T** out, ObjectKind k, const T& init = T()) {
    if (!out) return fail(FQ_STATUS_NULL_POINTER, "{}: NULL output pointer", arg);
    *out = nullptr;
    T* value = add_object(init);
    if (!value) return fail(FQ_STATUS_ALLOC_FAILED, "{}: every {} the library can hold is live", arg, kind_name(k));
    *out = value;
    return FQ_STATUS_SUCCESS;
}

template <class T>
fqStatus_t destroy_object(const char* arg, T* value, ObjectKind k) {
    if (!value) return FQ_STATUS_SUCCESS;
    return remove_object(value) ? FQ_STATUS_SUCCESS : not_live(arg, k);
}

// ---- Attribute tables: one row per attribute; set/get are written once over them. ---------------

enum class AttrType { I32, I64, F32, Ptr };

inline size_t attr_size(AttrType t) {
    switch (t) {
        case AttrType::I32: return sizeof(int32_t);
        case AttrType::I64: return sizeof(int64_t);
        case AttrType::F32: return sizeof(float);
        case AttrType::Ptr: return sizeof(void*);
    }
    return 0;
}

struct Attr {
    int32_t id;
    const char* name;
    AttrType type;
    size_t offset;         // of the member in the object
    bool writable;
    int64_t min, max;      // accepted range of integer values (enums: their values)
};

inline constexpr int64_t kAny = INT64_MAX;

template <size_t N>
const Attr* find_attr(const Attr (&table)[N], int32_t id) {
    for (const Attr& a : table)
        if (a.id == id) return &a;
    return nullptr;
}

template <size_t N>
fqStatus_t set_attr(const Attr (&table)[N], const char* what, void* object, int32_t id, const void* buf, size_t size) {
    const Attr* a = find_attr(table, id);
    if (!a) return fail(FQ_STATUS_INVALID_VALUE, "attr: {} is not a {} attribute", id, what);
    if (!a->writable) return fail(FQ_STATUS_INVALID_VALUE, "attr: {} is read-only", a->name);
    if (!buf) return fail(FQ_STATUS_NULL_POINTER, "buf: NULL value for {}", a->name);
    if (size != attr_size(a->type))
        return fail(FQ_STATUS_INVALID_VALUE, "sizeInBytes: {} takes {} bytes, not {}", a->name, attr_size(a->type), size);
    if (a->type == AttrType::I32 || a->type == AttrType::I64) {
        int64_t v;
        if (a->type == AttrType::I32) { int32_t v32; std::memcpy(&v32, buf, 4); v = v32; }
        else std::memcpy(&v, buf, 8);
        if (v < a->min || v > a->max)
            return fail(FQ_STATUS_INVALID_VALUE, "{}: {} is outside the accepted range [{}, {}]", a->name, v, a->min,
                        a->max == kAny ? std::string("INT64_MAX") : std::to_string(a->max));
    }
    if (a->type == AttrType::F32) {
        float v;
        std::memcpy(&v, buf, 4);
        const bool limit = id == FQ_QUANT_DESC_SWIGLU_LIMIT;  // +inf means "no clamp"
        if (std::isnan(v) || (std::isinf(v) && !(limit && v > 0)))
            return fail(FQ_STATUS_INVALID_VALUE, "{}: {} is not a finite number", a->name, v);
        const bool non_negative = id == FQ_QUANT_DESC_QMAX || id == FQ_QUANT_DESC_MIN_SCALE;
        if ((non_negative && v < 0) || (limit && v <= 0))
            return fail(FQ_STATUS_INVALID_VALUE, "{}: {} must be {}", a->name, v, limit ? "positive" : ">= 0 (0 = default)");
    }
    std::memcpy(static_cast<char*>(object) + a->offset, buf, size);
    return FQ_STATUS_SUCCESS;
}

template <size_t N>
fqStatus_t get_attr(const Attr (&table)[N], const char* what, const void* object, int32_t id, void* buf, size_t size,
                    size_t* written) {
    const Attr* a = find_attr(table, id);
    if (!a) return fail(FQ_STATUS_INVALID_VALUE, "attr: {} is not a {} attribute", id, what);
    const size_t need = attr_size(a->type);
    if (written) *written = need;
    if (!buf && size == 0) {
        if (!written) return fail(FQ_STATUS_NULL_POINTER, "sizeWritten: NULL while asking for the size of {}", a->name);
        return FQ_STATUS_SUCCESS;
    }
    if (!buf) return fail(FQ_STATUS_NULL_POINTER, "buf: NULL for {}", a->name);
    if (size != need)
        return fail(FQ_STATUS_INVALID_VALUE, "sizeInBytes: {} takes {} bytes, not {}", a->name, need, size);
    std::memcpy(buf, static_cast<const char*>(object) + a->offset, need);
    return FQ_STATUS_SUCCESS;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

}  // namespace fq
