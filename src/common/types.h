// Internal mirrors of the public enums (docs/spec.md §1-§5), as enum classes. src/api/ checks with
// static_asserts that every value equals the header's, so the header stays the one source of truth.
#pragma once

#include <cstdint>

namespace fq {

enum class DType : int32_t {
    Fp32 = 0, Fp16 = 1, Bf16 = 2, E4M3FN = 3, E4M3FNUZ = 4, E5M2 = 5, Int8 = 6, E2M1 = 7, E8M0 = 8, Int32 = 9
};
enum class Backend : int32_t { Host = 0, Cuda = 1 };
enum class GateLayout : int32_t { None = 0, Split = 1, Interleaved = 2, BlockInterleaved = 3 };
enum class GateOrder : int32_t { GateFirst = 0, UpFirst = 1 };
enum class Scheme : int32_t {
    PerTensorStatic = 0, PerTensorDynamic = 1, PerToken = 2, PerGroup = 3, Block2D = 4, Mxfp8 = 5, Mxfp4 = 6, Nvfp4 = 7
};
enum class ScaleLayout : int32_t { RowMajor = 0, ColMajor = 1, ColMajorTma = 2, Swizzled128x4 = 3, PackedUe8m0 = 4 };
enum class ScaleRounding : int32_t { None = 0, Pow2Ceil = 1 };
enum class MxScaleRule : int32_t { Rceil = 0, Floor = 1 };
enum class ScaleApply : int32_t { Divide = 0, MultiplyReciprocal = 1 };
enum class MoeLayout : int32_t { None = 0, Contiguous = 1, Masked = 2 };

constexpr int32_t kOutputRowwise = 1, kOutputColumnwise = 2;

const char* name(DType);
const char* name(Scheme);
const char* name(ScaleLayout);
const char* name(GateLayout);

constexpr bool is_fp8(DType t) { return t == DType::E4M3FN || t == DType::E4M3FNUZ || t == DType::E5M2; }
constexpr bool is_per_tensor(Scheme s) { return s == Scheme::PerTensorStatic || s == Scheme::PerTensorDynamic; }
constexpr bool is_microscaling(Scheme s) { return s == Scheme::Mxfp8 || s == Scheme::Mxfp4 || s == Scheme::Nvfp4; }

}  // namespace fq
