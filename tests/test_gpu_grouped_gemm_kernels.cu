// Device helpers of the grouped GEMM tests (gemm_test_data.h): a hash fill of fp8 bytes and a kernel that
// keeps a stream busy for a given time.
#include <cuda_runtime.h>

#include "gemm_test_data.h"

namespace fqt {
namespace {

__global__ void hash_fp8_kernel(uint8_t* p, size_t n, uint64_t seed) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = hash_fp8(i, seed);
}

__device__ uint64_t global_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void sleep_kernel(uint64_t ns) {
    const uint64_t t0 = global_ns();
    while (global_ns() - t0 < ns) __nanosleep(1000);
}

}  // namespace

cudaError_t fill_hash_fp8(uint8_t* p, size_t n, uint64_t seed, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    hash_fp8_kernel<<<1024, 256, 0, stream>>>(p, n, seed);
    return cudaGetLastError();
}

cudaError_t launch_sleep(cudaStream_t stream, uint64_t ns) {
    sleep_kernel<<<1, 1, 0, stream>>>(ns);
    return cudaGetLastError();
}

}  // namespace fqt
