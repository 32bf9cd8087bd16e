// CUDA runtime facts the API needs (src/dispatch/device.h).
#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "../common/status.h"
#include "../dispatch/device.h"
#include "launch.cuh"

namespace fq {

fqStatus_t cuda_device_info(int32_t device, int32_t* ordinal, int32_t* arch, int32_t* sm_count) {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    cuda::forget_own_error(e);
    if (e != cudaSuccess || count == 0)
        return fail(FQ_STATUS_NO_DEVICE, "backend: FQ_BACKEND_CUDA asked for, but no CUDA device is usable ({})",
                    e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    int dev = device;
    if (dev == -1) FQ_TRY(cuda::cuda_status(cudaGetDevice(&dev), "device: cudaGetDevice"));
    if (dev >= count) return fail(FQ_STATUS_INVALID_VALUE, "device: ordinal {} but only {} CUDA devices exist", dev, count);
    int major = 0, minor = 0, sms = 0;
    const std::pair<int*, cudaDeviceAttr> attrs[] = {{&major, cudaDevAttrComputeCapabilityMajor},
                                                     {&minor, cudaDevAttrComputeCapabilityMinor},
                                                     {&sms, cudaDevAttrMultiProcessorCount}};
    for (const auto& [value, attr] : attrs)
        FQ_TRY(cuda::cuda_status(cudaDeviceGetAttribute(value, attr, dev), "device: cudaDeviceGetAttribute"));
    *ordinal = dev;
    *arch = major * 10 + minor;
    *sm_count = sms;
    return FQ_STATUS_SUCCESS;
}

fqStatus_t cuda_check_current_device(int32_t device) {
    int current = -1;
    FQ_TRY(cuda::cuda_status(cudaGetDevice(&current), "handle: cudaGetDevice"));
    if (current == device) return FQ_STATUS_SUCCESS;
    return fail(FQ_STATUS_INVALID_VALUE, "handle: created for CUDA device {}, but the calling thread's current device is "
                "{}; call cudaSetDevice({}) first (a CUDA handle runs on its own device only, as a cuBLAS handle does)",
                device, current, device);
}

fqStatus_t cuda_check_pointer(const char* arg, const void* ptr, int32_t device) {
    cudaPointerAttributes a{};
    const cudaError_t e = cudaPointerGetAttributes(&a, ptr);
    if (e != cudaSuccess) {
        cuda::forget_own_error(e);
        return fail(FQ_STATUS_INVALID_VALUE, "{}: {} is not memory CUDA device {} can address (cudaPointerGetAttributes: {})",
                    arg, ptr, device, cudaGetErrorString(e));
    }
    switch (a.type) {
        case cudaMemoryTypeManaged: return FQ_STATUS_SUCCESS;
        case cudaMemoryTypeDevice:
            if (a.device == device) return FQ_STATUS_SUCCESS;
            return fail(FQ_STATUS_INVALID_VALUE, "{}: {} is device memory of CUDA device {}, but the handle runs on CUDA "
                        "device {} (memory of another device is refused, peer-accessible or not)", arg, ptr, a.device, device);
        case cudaMemoryTypeHost:
            if (a.devicePointer == ptr) return FQ_STATUS_SUCCESS;
            return fail(FQ_STATUS_INVALID_VALUE, "{}: {} is page-locked host memory that CUDA device {} {}", arg, ptr, device,
                        a.devicePointer ? fmt::format("maps at another address ({}; cudaHostGetDevicePointer gives it)", a.devicePointer)
                                        : std::string("does not map (register it with cudaHostRegisterMapped | cudaHostRegisterPortable)"));
        default:
            return fail(FQ_STATUS_INVALID_VALUE, "{}: {} is pageable host memory, which CUDA device {} cannot address "
                        "(allocate with cudaMalloc, cudaMallocManaged or cudaMallocHost, or cudaHostRegister it)", arg, ptr, device);
    }
}

}  // namespace fq
