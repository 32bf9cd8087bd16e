// The CUDA handle's checks (src/dispatch/device.h, src/kernels/device.cu) against a fake CUDA runtime, on any
// machine: which current device and which pointers a handle takes, what the refusals name, and that the
// runtime's per-thread last error (a caller's pending error) is never taken by a successful check. The same
// rules are tested on real GPUs by fq_gpu_device_tests; here every branch runs, a mismatched device included,
// without a GPU. The translation unit compiles device.cu itself (it holds no device code) and defines the few
// runtime functions it calls.
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "api/error.h"
#include "kernels/device.cu"

namespace {

// The fake runtime: a current device, the known allocations, and the per-thread last-error slot that every
// failing runtime call overwrites and cudaGetLastError resets.
struct FakeRuntime {
    int current = 0;
    std::map<const void*, cudaPointerAttributes> pointers;  // anything else: unregistered host memory
    cudaError_t pointer_query = cudaSuccess;                // what cudaPointerGetAttributes returns
    cudaError_t last = cudaSuccess;
    cudaError_t record(cudaError_t e) {
        if (e != cudaSuccess) last = e;
        return e;
    }
};
FakeRuntime rt;

// One byte of each kind of memory, at distinct addresses.
char device0[1], device1[1], managed[1], host_same[1], host_elsewhere[1], host_unmapped[1], pageable[1];

void reset_runtime() {
    rt = FakeRuntime{};
    auto add = [](const void* p, cudaMemoryType type, int device, void* device_pointer) {
        cudaPointerAttributes a{};
        a.type = type;
        a.device = device;
        a.devicePointer = device_pointer;
        a.hostPointer = type == cudaMemoryTypeDevice ? nullptr : const_cast<void*>(p);
        rt.pointers[p] = a;
    };
    add(device0, cudaMemoryTypeDevice, 0, device0);
    add(device1, cudaMemoryTypeDevice, 1, device1);
    add(managed, cudaMemoryTypeManaged, 0, managed);
    add(host_same, cudaMemoryTypeHost, 0, host_same);
    add(host_elsewhere, cudaMemoryTypeHost, 0, device0);  // mapped, but at another address
    add(host_unmapped, cudaMemoryTypeHost, 0, nullptr);   // page-locked for another context, not mapped here
}

std::string message() { return fq::last_error(); }

}  // namespace

extern "C" {
cudaError_t cudaGetDevice(int* device) {
    *device = rt.current;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceCount(int* count) {
    *count = 2;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr, int) {
    *value = 9;
    return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* ptr) {
    if (rt.pointer_query != cudaSuccess) return rt.record(rt.pointer_query);
    const auto it = rt.pointers.find(ptr);
    *a = cudaPointerAttributes{};
    if (it != rt.pointers.end()) *a = it->second;
    else a->type = cudaMemoryTypeUnregistered;
    return cudaSuccess;
}
cudaError_t cudaPeekAtLastError() { return rt.last; }
cudaError_t cudaGetLastError() {
    const cudaError_t e = rt.last;
    rt.last = cudaSuccess;
    return e;
}
const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "fake runtime error"; }
}

TEST_CASE("a CUDA handle runs only with its own device current, and says which devices differ") {
    reset_runtime();
    rt.current = 1;
    CHECK(fq::cuda_check_current_device(1) == FQ_STATUS_SUCCESS);
    rt.current = 0;
    CHECK(fq::cuda_check_current_device(1) == FQ_STATUS_INVALID_VALUE);
    INFO(message());
    CHECK(message().find("handle: created for CUDA device 1") == 0);
    CHECK(message().find("current device is 0") != std::string::npos);
    CHECK(message().find("cudaSetDevice(1)") != std::string::npos);
}

TEST_CASE("a CUDA handle takes its device's memory, managed memory and host memory mapped at the same address") {
    reset_runtime();
    struct Case {
        std::string kind;  // not a const char*, which doctest's messages print as an address
        const void* ptr;
        int handle_device;
        fqStatus_t want;
        std::string names;  // in the message of a refusal
    };
    const Case cases[] = {
        {"device memory of the handle's device", device1, 1, FQ_STATUS_SUCCESS, ""},
        {"device memory of device 0, handle of device 0", device0, 0, FQ_STATUS_SUCCESS, ""},
        {"managed memory (of device 0), handle of device 1", managed, 1, FQ_STATUS_SUCCESS, ""},
        {"page-locked host memory mapped at the same address", host_same, 1, FQ_STATUS_SUCCESS, ""},
        {"device memory of device 0, handle of device 1", device0, 1, FQ_STATUS_INVALID_VALUE,
         "is device memory of CUDA device 0, but the handle runs on CUDA device 1"},
        {"device memory of device 1, handle of device 0", device1, 0, FQ_STATUS_INVALID_VALUE,
         "is device memory of CUDA device 1, but the handle runs on CUDA device 0"},
        {"page-locked host memory mapped at another address", host_elsewhere, 1, FQ_STATUS_INVALID_VALUE,
         "maps at another address"},
        {"page-locked host memory the device does not map", host_unmapped, 1, FQ_STATUS_INVALID_VALUE, "does not map"},
        {"pageable host memory", pageable, 1, FQ_STATUS_INVALID_VALUE, "is pageable host memory"},
    };
    for (const Case& c : cases) {
        fq::clear_last_error();
        rt.current = c.handle_device;
        const fqStatus_t s = fq::cuda_check_pointer("input", c.ptr, c.handle_device);
        INFO(c.kind, " -> status ", int(s), " \"", message(), "\"");
        CHECK(s == c.want);
        if (c.want == FQ_STATUS_SUCCESS) {
            CHECK(message().empty());
        } else {
            CHECK(message().find("input: ") == 0);
            CHECK(message().find(c.names) != std::string::npos);
        }
        CHECK(rt.last == cudaSuccess);
    }
}

TEST_CASE("the checks leave a caller's pending CUDA error pending, and take out only an error of their own") {
    reset_runtime();
    rt.current = 1;
    rt.last = cudaErrorMemoryAllocation;  // the caller's: e.g. a failed cudaMalloc before the fq call
    CHECK(fq::cuda_check_current_device(1) == FQ_STATUS_SUCCESS);
    for (const void* p : {static_cast<const void*>(device1), static_cast<const void*>(managed),
                          static_cast<const void*>(host_same), static_cast<const void*>(device0),
                          static_cast<const void*>(pageable)})
        fq::cuda_check_pointer("input", p, 1);  // taken or refused: neither reads the last error
    CHECK(rt.last == cudaErrorMemoryAllocation);
    CHECK(fq::cuda::cuda_status(cudaSuccess, "kernel launch") == FQ_STATUS_SUCCESS);
    CHECK(rt.last == cudaErrorMemoryAllocation);
    // An fq call that failed with another error than the one pending cannot be its author: left alone.
    fq::cuda::forget_own_error(cudaErrorInvalidConfiguration);
    CHECK(rt.last == cudaErrorMemoryAllocation);

    // fq's own failing runtime call overwrote the slot (as every failing call does): reported through the
    // status and message, and taken out of the slot, so that the caller's next cudaGetLastError is clean.
    rt.pointer_query = cudaErrorInvalidValue;
    CHECK(fq::cuda_check_pointer("scales", device1, 1) == FQ_STATUS_INVALID_VALUE);
    CHECK(message().find("scales: ") == 0);
    CHECK(message().find("cudaPointerGetAttributes") != std::string::npos);
    CHECK(rt.last == cudaSuccess);
    rt.last = cudaErrorLaunchOutOfResources;  // a failed launch of fq's own
    CHECK(fq::cuda::cuda_status(cudaErrorLaunchOutOfResources, "kernel launch") == FQ_STATUS_CUDA_ERROR);
    CHECK(message() == "kernel launch failed: fake runtime error");
    CHECK(rt.last == cudaSuccess);
}
