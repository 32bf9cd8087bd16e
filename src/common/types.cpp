#include "types.h"

namespace fq {

const char* name(DType t) {
    switch (t) {
        case DType::Fp32: return "FP32";
        case DType::Fp16: return "FP16";
        case DType::Bf16: return "BF16";
        case DType::E4M3FN: return "FP8_E4M3FN";
        case DType::E4M3FNUZ: return "FP8_E4M3FNUZ";
        case DType::E5M2: return "FP8_E5M2";
        case DType::Int8: return "INT8";
        case DType::E2M1: return "FP4_E2M1";
        case DType::E8M0: return "E8M0";
        case DType::Int32: return "INT32";
    }
    return "?";
}

const char* name(Scheme s) {
    switch (s) {
        case Scheme::PerTensorStatic: return "PER_TENSOR_STATIC";
        case Scheme::PerTensorDynamic: return "PER_TENSOR_DYNAMIC";
        case Scheme::PerToken: return "PER_TOKEN";
        case Scheme::PerGroup: return "PER_GROUP";
        case Scheme::Block2D: return "BLOCK_2D";
        case Scheme::Mxfp8: return "MXFP8";
        case Scheme::Mxfp4: return "MXFP4";
        case Scheme::Nvfp4: return "NVFP4";
    }
    return "?";
}

const char* name(ScaleLayout l) {
    switch (l) {
        case ScaleLayout::RowMajor: return "ROW_MAJOR";
        case ScaleLayout::ColMajor: return "COL_MAJOR";
        case ScaleLayout::ColMajorTma: return "COL_MAJOR_TMA";
        case ScaleLayout::Swizzled128x4: return "SWIZZLED_128X4";
        case ScaleLayout::PackedUe8m0: return "PACKED_UE8M0";
    }
    return "?";
}

const char* name(GateLayout g) {
    switch (g) {
        case GateLayout::None: return "NONE";
        case GateLayout::Split: return "SPLIT";
        case GateLayout::Interleaved: return "INTERLEAVED";
        case GateLayout::BlockInterleaved: return "BLOCK_INTERLEAVED";
    }
    return "?";
}

}  // namespace fq
