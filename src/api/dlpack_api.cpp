// fqQuantizeDLPack: DLPack tensors (DLPack 0.6's DLTensor: Debian's libdlpack-dev, or dlpack_layout.h) turned into the one-call
// problem of fqQuantizeSimple. This file checks only what a DLTensor adds (NULL tensors, device, rank, dtype,
// strides, byte offset); shapes, enums and buffers are then checked by the descriptor route (one_call.h).
#include <cstdint>
#include <string>

#ifdef FQ_OWN_DLPACK_LAYOUT  // no DLPack header on the build machine (CMakeLists.txt)
#include "dlpack_layout.h"
#endif
#include "fusedquant/fusedquant_dlpack.h"

#include "../common/types.h"
#include "boundary.h"
#include "config.h"
#include "error.h"
#include "one_call.h"
#include "snapshot.h"

using namespace fq;

// DLTensor as DLPack 0.6 lays it out (later versions keep it): what fusedquant_dlpack.h promises to read.
static_assert(DLPACK_VERSION >= 60, "fqQuantizeDLPack needs DLPack 0.6 or later (Debian: libdlpack-dev)");

namespace {

std::string dtype_text(DLDataType t) {
    return fmt::format("(code {}, bits {}, lanes {})", int(t.code), int(t.bits), int(t.lanes));
}

bool is(DLDataType t, int code, int bits) { return t.code == code && t.bits == bits && t.lanes == 1; }

const char* device_name(int type) {
    switch (type) {
        case kDLCPU: return "kDLCPU";
        case kDLCUDA: return "kDLCUDA";
        case kDLCUDAHost: return "kDLCUDAHost";
        case kDLCUDAManaged: return "kDLCUDAManaged";
        default: return "another device";
    }
}

// A tensor given, with a shape where it has dimensions, on the handle's device.
fqStatus_t check_tensor(const char* arg, const DLTensor* t, const fqContext& h) {
    if (!t) return fail(FQ_STATUS_NULL_POINTER, "{}: NULL DLTensor", arg);
    if (t->ndim < 0) return fail(FQ_STATUS_INVALID_VALUE, "{}: ndim {} is negative", arg, t->ndim);
    if (t->ndim > 0 && !t->shape) return fail(FQ_STATUS_NULL_POINTER, "{}: shape is NULL for ndim {}", arg, t->ndim);
    for (int i = 0; i < t->ndim; ++i)
        if (t->shape[i] < 0) return fail(FQ_STATUS_INVALID_VALUE, "{}: shape[{}] {} is negative", arg, i, t->shape[i]);
    const int type = t->device.device_type;
    if (h.backend == Backend::Host && type != kDLCPU)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: device type {} ({}) is not kDLCPU ({}), where the buffers of a "
                    "FQ_BACKEND_HOST handle live", arg, type, device_name(type), int(kDLCPU));
    if (h.backend == Backend::Cuda) {
        if (type != kDLCUDA && type != kDLCUDAManaged)
            return fail(FQ_STATUS_INVALID_VALUE, "{}: device type {} ({}) is not kDLCUDA ({}) or kDLCUDAManaged ({}), "
                        "where the buffers of a FQ_BACKEND_CUDA handle live", arg, type, device_name(type),
                        int(kDLCUDA), int(kDLCUDAManaged));
        if (t->device.device_id != h.device)
            return fail(FQ_STATUS_INVALID_VALUE, "{}: on CUDA device {}, but the handle is bound to device {}", arg,
                        t->device.device_id, h.device);
    }
    return FQ_STATUS_SUCCESS;
}

// The data of a tensor: its pointer advanced by byte_offset.
void* data_of(const DLTensor* t) {
    return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(t->data) + uintptr_t(t->byte_offset));
}

// A 2-D row-major tensor with a row stride: its rows, elements a row and row stride (elements).
struct Matrix {
    int64_t rows, cols, ld;
};
fqStatus_t matrix_of(const char* arg, const DLTensor* t, Matrix* m) {
    if (t->ndim != 2) return fail(FQ_STATUS_INVALID_VALUE, "{}: ndim {}, but a 2-D [rows, columns] tensor is read", arg, t->ndim);
    *m = {t->shape[0], t->shape[1], t->shape[1]};
    if (!t->strides) return FQ_STATUS_SUCCESS;  // packed row-major
    // A dimension of extent 1 is stepped over never (or once): any stride does, as DLPack producers give.
    const bool unit_cols = t->strides[1] == 1 || t->shape[1] == 1;
    const bool row_stride = t->strides[0] >= t->shape[1] || t->shape[0] <= 1;
    if (!unit_cols || !row_stride)
        return fail(FQ_STATUS_INVALID_VALUE, "{}: strides ({}, {}) for shape [{}, {}] are not row-major with a row "
                    "stride: the column stride must be 1 and the row stride at least the {} columns", arg,
                    t->strides[0], t->strides[1], t->shape[0], t->shape[1], t->shape[1]);
    if (t->shape[0] > 1) m->ld = t->strides[0];
    return FQ_STATUS_SUCCESS;
}

// The scale buffer: packed, any shape, of the scale type's DLPack dtype; its size in bytes.
fqStatus_t scale_bytes_of(const DLTensor* t, int32_t scheme, int32_t scale_layout, size_t* bytes) {
    if (scheme >= 0 && scheme < kSchemeCount) {  // an unknown scheme is the descriptor route's to refuse
        const DType need = required_scale_type(Scheme(scheme));
        const bool ok = need == DType::Fp32 ? is(t->dtype, kDLFloat, 32)
                        : is(t->dtype, kDLUInt, 8) || (scale_layout == FQ_SCALE_LAYOUT_PACKED_UE8M0 && is(t->dtype, kDLInt, 32));
        if (!ok)
            return fail(FQ_STATUS_INVALID_VALUE, "scales: dtype {} is not {} for the {} scales of scheme {}",
                        dtype_text(t->dtype), need == DType::Fp32 ? "float32 (kDLFloat 32)" : "uint8 (kDLUInt 8)",
                        name(need), name(Scheme(scheme)));
    }
    if (t->dtype.lanes != 1 || t->dtype.bits % 8 != 0)
        return fail(FQ_STATUS_INVALID_VALUE, "scales: dtype {} is not whole bytes in one lane", dtype_text(t->dtype));
    int64_t elements = 1, expected_stride = 1;
    for (int i = t->ndim - 1; i >= 0; --i) {
        if (t->strides && t->shape[i] != 1 && t->strides[i] != expected_stride)
            return fail(FQ_STATUS_INVALID_VALUE, "scales: stride[{}] {} is not that of a packed tensor ({}); the scale "
                        "buffer is one run of bytes", i, t->strides[i], expected_stride);
        elements = checked_mul(elements, t->shape[i]);
        if (elements < 0) return fail(FQ_STATUS_INVALID_VALUE, "scales: its shape overflows a 64-bit element count");
        expected_stride = elements;
    }
    const int64_t n = checked_mul(elements, t->dtype.bits / 8);
    if (n < 0) return fail(FQ_STATUS_INVALID_VALUE, "scales: its shape overflows a 64-bit byte count");
    *bytes = size_t(n);
    return FQ_STATUS_SUCCESS;
}

// The DLPack dtype that holds values of fqDataType `type` (DLPack 0.6 has no fp8 or fp4 code: bytes).
bool output_dtype_ok(int32_t type, DLDataType t) {
    return type == FQ_TYPE_INT8 ? is(t, kDLInt, 8) : is(t, kDLUInt, 8);
}

}  // namespace

extern "C" fqStatus_t fqQuantizeDLPack(fqHandle_t handle, int32_t activation, int32_t gateLayout, int32_t scheme,
                                       int32_t outputType, int32_t scaleLayout, const DLTensor* input,
                                       DLTensor* output, DLTensor* scales, void* workspace, size_t workspace_size,
                                       fqStream_t stream) {
    return guarded("fqQuantizeDLPack", [&]() -> fqStatus_t {
        fqHandle_t live = handle;
        FQ_TRY(live_object("handle", live, ObjectKind::Handle));
        const fqContext h = snapshot(live);
        FQ_TRY(check_tensor("input", input, h));
        FQ_TRY(check_tensor("output", output, h));
        FQ_TRY(check_tensor("scales", scales, h));

        int32_t in_type = -1;
        if (is(input->dtype, kDLBfloat, 16)) in_type = FQ_TYPE_BF16;
        else if (is(input->dtype, kDLFloat, 16)) in_type = FQ_TYPE_FP16;
        else return fail(FQ_STATUS_INVALID_VALUE, "input: dtype {} is not bfloat16 (kDLBfloat 16) or float16 "
                         "(kDLFloat 16)", dtype_text(input->dtype));
        const bool known_output = outputType >= FQ_TYPE_FP8_E4M3FN && outputType <= FQ_TYPE_FP4_E2M1;
        if (known_output && !output_dtype_ok(outputType, output->dtype))
            return fail(FQ_STATUS_INVALID_VALUE, "output: dtype {} does not hold {} values: {}", dtype_text(output->dtype),
                        name(DType(outputType)), outputType == FQ_TYPE_INT8 ? "int8 (kDLInt 8)" : "uint8 (kDLUInt 8)");
        Matrix in, out;
        FQ_TRY(matrix_of("input", input, &in));
        FQ_TRY(matrix_of("output", output, &out));
        if (outputType == FQ_TYPE_FP4_E2M1) {  // bytes of two values each
            if (out.cols > INT64_MAX / 2 || out.ld > INT64_MAX / 2)
                return fail(FQ_STATUS_INVALID_VALUE, "output: {} bytes a row hold more FP4 values than a 64-bit count",
                            out.ld);
            out.cols *= 2;
            out.ld *= 2;
        }
        size_t scale_bytes = 0;
        FQ_TRY(scale_bytes_of(scales, scheme, scaleLayout, &scale_bytes));
        const OneCallProblem p{activation, gateLayout, scheme, in_type, outputType, scaleLayout,
                               in.rows, in.cols, in.ld, out.rows, out.cols, out.ld};
        return quantize_one_call(handle, p, data_of(input), data_of(output), data_of(scales), scale_bytes,
                                 workspace, workspace_size, stream);
    });
}
