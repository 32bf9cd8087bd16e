// Internal mirrors of the public enums (docs/spec.md §1-§5), as enum classes. src/api/ checks with
// static_asserts that every value equals the header's. Activations, schemes, scale layouts and gate layouts
// are expanded from their one list in enum_lists.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "enum_lists.h"

namespace fq {

enum class DType : int32_t {
    Fp32 = 0, Fp16 = 1, Bf16 = 2, E4M3FN = 3, E4M3FNUZ = 4, E5M2 = 5, Int8 = 6, E2M1 = 7, E8M0 = 8, Int32 = 9
};
enum class Backend : int32_t { Host = 0, Cuda = 1 };
enum class Act : int32_t { FQ_ACTIVATIONS(FQ_ENUM_MEMBER) };
enum class GateLayout : int32_t { FQ_GATE_LAYOUTS(FQ_ENUM_MEMBER) };
enum class GateOrder : int32_t { GateFirst = 0, UpFirst = 1 };
enum class Scheme : int32_t { FQ_SCHEMES(FQ_ENUM_MEMBER) };
enum class ScaleLayout : int32_t { FQ_SCALE_LAYOUTS(FQ_ENUM_MEMBER) };
enum class ScaleRounding : int32_t { None = 0, Pow2Ceil = 1 };
enum class MxScaleRule : int32_t { Rceil = 0, Floor = 1 };
enum class ScaleApply : int32_t { Divide = 0, MultiplyReciprocal = 1 };
enum class MoeLayout : int32_t { None = 0, Contiguous = 1, Masked = 2 };

// Entries of each list: their values are 0 .. count - 1 (checked below), so a count bounds an attribute.
constexpr int32_t kActivationCount = 0 FQ_ACTIVATIONS(FQ_ENUM_COUNT);
constexpr int32_t kSchemeCount = 0 FQ_SCHEMES(FQ_ENUM_COUNT);
constexpr int32_t kScaleLayoutCount = 0 FQ_SCALE_LAYOUTS(FQ_ENUM_COUNT);
constexpr int32_t kGateLayoutCount = 0 FQ_GATE_LAYOUTS(FQ_ENUM_COUNT);

namespace detail {
template <size_t N>
constexpr bool consecutive(const int32_t (&values)[N]) {
    for (size_t i = 0; i < N; ++i)
        if (values[i] != int32_t(i)) return false;
    return true;
}
#define FQ_ENUM_VALUE(Internal, value, ...) value,
constexpr int32_t kActivationValues[] = {FQ_ACTIVATIONS(FQ_ENUM_VALUE)};
constexpr int32_t kSchemeValues[] = {FQ_SCHEMES(FQ_ENUM_VALUE)};
constexpr int32_t kScaleLayoutValues[] = {FQ_SCALE_LAYOUTS(FQ_ENUM_VALUE)};
constexpr int32_t kGateLayoutValues[] = {FQ_GATE_LAYOUTS(FQ_ENUM_VALUE)};
#undef FQ_ENUM_VALUE
static_assert(consecutive(kActivationValues) && consecutive(kSchemeValues) && consecutive(kScaleLayoutValues) &&
                  consecutive(kGateLayoutValues),
              "enum_lists.h: each list's values are 0, 1, 2, ... in list order");
}  // namespace detail

constexpr int32_t kOutputRowwise = 1, kOutputColumnwise = 2;

const char* name(DType);
const char* name(Scheme);
const char* name(ScaleLayout);
const char* name(GateLayout);
const char* name(Act);

constexpr bool is_fp8(DType t) { return t == DType::E4M3FN || t == DType::E4M3FNUZ || t == DType::E5M2; }
constexpr bool is_per_tensor(Scheme s) { return s == Scheme::PerTensorStatic || s == Scheme::PerTensorDynamic; }
constexpr bool is_microscaling(Scheme s) { return s == Scheme::Mxfp8 || s == Scheme::Mxfp4 || s == Scheme::Nvfp4; }

}  // namespace fq
