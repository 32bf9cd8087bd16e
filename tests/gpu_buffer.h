// Device memory for the GPU tests: a typed cudaMalloc'ed buffer with upload and download, and CUDA_OK,
// which fails the test with the call's text.
#pragma once

#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#define CUDA_OK(x) REQUIRE_MESSAGE((x) == cudaSuccess, #x)

namespace fqt {

// Compute capability x10 of device 0, or 0 when this machine has no CUDA device (the GPU test programs then
// report "skipped", exit code 77).
inline int cuda_arch_of_device0() {
    int count = 0, major = 0, minor = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    return major * 10 + minor;
}

template <class T>
struct DeviceBuffer {
    T* p = nullptr;
    size_t n = 0;
    explicit DeviceBuffer(size_t count) : n(count) { CUDA_OK(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T))); }
    ~DeviceBuffer() { cudaFree(p); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    void upload(const std::vector<T>& v) { CUDA_OK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice)); }
    std::vector<T> download() const {
        std::vector<T> v(n);
        CUDA_OK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
        return v;
    }
};

}  // namespace fqt
