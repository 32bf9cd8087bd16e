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
#define FQ_NAME_CASE(Internal, value, NAME, ...) \
    case Scheme::Internal: return #NAME;
        FQ_SCHEMES(FQ_NAME_CASE)
#undef FQ_NAME_CASE
    }
    return "?";
}

const char* name(ScaleLayout l) {
    switch (l) {
#define FQ_NAME_CASE(Internal, value, NAME, ...) \
    case ScaleLayout::Internal: return #NAME;
        FQ_SCALE_LAYOUTS(FQ_NAME_CASE)
#undef FQ_NAME_CASE
    }
    return "?";
}

const char* name(GateLayout g) {
    switch (g) {
#define FQ_NAME_CASE(Internal, value, NAME, ...) \
    case GateLayout::Internal: return #NAME;
        FQ_GATE_LAYOUTS(FQ_NAME_CASE)
#undef FQ_NAME_CASE
    }
    return "?";
}

const char* name(Act a) {
    switch (a) {
#define FQ_NAME_CASE(Internal, value, NAME, ...) \
    case Act::Internal: return #NAME;
        FQ_ACTIVATIONS(FQ_NAME_CASE)
#undef FQ_NAME_CASE
    }
    return "?";
}

}  // namespace fq
