// What the API needs from the CUDA runtime, behind a CUDA-free interface (src/kernels/device.cu, or
// src/dispatch/no_cuda.cpp when the library is built without CUDA).
#pragma once

#include <cstdint>

#include "fusedquant/fusedquant.h"

namespace fq {

// Resolves `device` (-1: current) and reads its compute capability (x10) and multiprocessor count.
fqStatus_t cuda_device_info(int32_t device, int32_t* ordinal, int32_t* arch, int32_t* sm_count);

// Whether `ptr` is memory the device can address (device or managed memory, or mapped host memory).
bool cuda_pointer_is_device(const void* ptr);

}  // namespace fq
