// CUDA runtime facts the API needs (src/dispatch/device.h).
#include <cuda_runtime.h>

#include "../api/error.h"
#include "../dispatch/device.h"

namespace fq {

fqStatus_t cuda_device_info(int32_t device, int32_t* ordinal, int32_t* arch, int32_t* sm_count) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        cudaGetLastError();
        return fail(FQ_STATUS_NO_DEVICE, "backend: FQ_BACKEND_CUDA asked for, but no CUDA device is usable ({})",
                    e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    }
    int dev = device;
    if (dev == -1 && cudaGetDevice(&dev) != cudaSuccess) return fail(FQ_STATUS_CUDA_ERROR, "device: cudaGetDevice failed");
    if (dev >= count) return fail(FQ_STATUS_INVALID_VALUE, "device: ordinal {} but only {} CUDA devices exist", dev, count);
    int major = 0, minor = 0, sms = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    *ordinal = dev;
    *arch = major * 10 + minor;
    *sm_count = sms;
    return FQ_STATUS_SUCCESS;
}

bool cuda_pointer_is_device(const void* ptr) {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ||
           (a.type == cudaMemoryTypeHost && a.devicePointer != nullptr);
}

}  // namespace fq
