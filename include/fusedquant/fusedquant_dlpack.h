/*
 * libfusedquant on DLPack tensors: the one-call quantization for engines that hold DLPack tensors (PyTorch,
 * JAX, TVM-FFI, FlashInfer), with no descriptor or layout object.
 *
 * This header includes <dlpack/dlpack.h> (Debian: libdlpack-dev) and <fusedquant/fusedquant.h>; a program that
 * does not use DLPack includes fusedquant.h alone and needs no DLPack header. The library is built against
 * DLPack 0.6 (DLPACK_VERSION 60) and reads DLTensor as that version lays it out, which DLPack 1.x keeps:
 * data, device {device_type, device_id}, ndim, dtype {code, bits, lanes}, shape, strides, byte_offset.
 * DLPack 0.6 has no code for fp8 or fp4 values: quantized values are uint8 tensors (int8 for FQ_TYPE_INT8)
 * and `outputType` says what their bytes hold.
 */
#ifndef FUSEDQUANT_DLPACK_H
#define FUSEDQUANT_DLPACK_H

#ifndef FQ_DLPACK_LAYOUT_DECLARED /* defined by a build that declares DLPack's types itself */
#include <dlpack/dlpack.h>
#endif

#include "fusedquant.h"

#ifdef __cplusplus
extern "C" {
#endif

/** fqQuantizeSimple on DLPack tensors: quantizes `input` into `output` and `scales`, the problem's shapes, types
 *  and strides read from the tensors. Each tensor's data starts at data + byte_offset.
 *
 *  input    2-D [M, W], bfloat16 (kDLBfloat 16) or float16 (kDLFloat 16), lanes 1; W = 2H gated, else H.
 *  output   2-D [M, H] of outputType: uint8 (kDLUInt 8) for FP8_E4M3FN, FP8_E4M3FNUZ and FP8_E5M2, int8
 *           (kDLInt 8) for INT8, uint8 [M, H/2] for FP4_E2M1 (two values a byte, as vLLM and PyTorch's
 *           float4_e2m1fn_x2 hold them).
 *  scales   the scheme's scale buffer (fqGetScaleBufferSizeSimple bytes at least), packed (strides NULL or
 *           those of a packed tensor), any shape: float32 (kDLFloat 32) for FP32 scales, uint8 for E8M0 and
 *           E4M3 scales (and int32 words for FQ_SCALE_LAYOUT_PACKED_UE8M0); its size is shape x bits / 8 bytes.
 *  input and output are row-major with a row stride: strides NULL (packed) or {ld, 1} with ld >= the row's
 *  elements (a dimension of extent 1 may have any stride). Their rows, and the input's width against the
 *  output's, are checked as fqQuantize checks its layouts.
 *  Device: kDLCPU on a FQ_BACKEND_HOST handle; kDLCUDA or kDLCUDAManaged with device_id the handle's device on
 *  a FQ_BACKEND_CUDA handle.
 *  A tensor that breaks these rules gets FQ_STATUS_NULL_POINTER (a NULL tensor, or a NULL shape) or
 *  FQ_STATUS_INVALID_VALUE, with a message naming the argument; everything else is fqQuantizeSimple's
 *  (the same statuses, messages and bytes). */
FQ_API fqStatus_t fqQuantizeDLPack(fqHandle_t handle, int32_t activation, int32_t gateLayout, int32_t scheme,
                                   int32_t outputType, int32_t scaleLayout, const DLTensor* input, DLTensor* output,
                                   DLTensor* scales, void* workspace, size_t workspaceSizeInBytes, fqStream_t stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FUSEDQUANT_DLPACK_H */
