// What the API needs from the CUDA runtime, behind a CUDA-free interface (src/kernels/device.cu, or
// src/dispatch/no_cuda.cpp when the library is built without CUDA).
//
// A CUDA handle is bound to one device, as a cuBLAS handle is: the device current when it was created (or the
// ordinal given). Every call that runs work on it checks that the calling thread's current device is that
// device and that each pointer is memory that device addresses as given, and refuses the call otherwise
// (INVALID_VALUE, naming the argument and both devices); it never switches the current device itself.
#pragma once

#include <cstdint>

#include "fusedquant/fusedquant.h"

namespace fq {

// Resolves `device` (-1: current) and reads its compute capability (x10) and multiprocessor count.
fqStatus_t cuda_device_info(int32_t device, int32_t* ordinal, int32_t* arch, int32_t* sm_count);

// SUCCESS when the calling thread's current CUDA device is `device` (the handle's); INVALID_VALUE naming both
// devices otherwise.
fqStatus_t cuda_check_current_device(int32_t device);

// SUCCESS when `ptr` (the argument `arg`) is memory CUDA device `device` reads and writes at that address:
// managed memory, device memory of that device, or page-locked host memory that device maps at the same
// address. Refused with INVALID_VALUE naming the argument: device memory of another device (peer memory
// included), page-locked host memory mapped elsewhere or not at all, and pageable host memory. Call it with
// `device` current (cuda_check_current_device first).
fqStatus_t cuda_check_pointer(const char* arg, const void* ptr, int32_t device);

}  // namespace fq
