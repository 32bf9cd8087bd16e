#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "bench_kernels.h"

namespace fqtool {

namespace {

__device__ uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__global__ void fill_normal_kernel(uint16_t* p, size_t count, bool bf16, uint64_t seed) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
        const uint64_t h = splitmix64(seed ^ splitmix64(i));
        const float u1 = (float(uint32_t(h >> 40)) + 1.0f) * 0x1p-24f;  // (0, 1]
        const float u2 = float(uint32_t(h) >> 8) * 0x1p-24f;            // [0, 1)
        const float v = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
        if (bf16) {
            const __nv_bfloat16 b = __float2bfloat16_rn(v);
            p[i] = *reinterpret_cast<const uint16_t*>(&b);
        } else {
            const __half b = __float2half_rn(v);
            p[i] = *reinterpret_cast<const uint16_t*>(&b);
        }
    }
}

__global__ void copy16_kernel(int4* dst, const int4* src, size_t n16, char* dst_tail, const char* src_tail, size_t tail) {
    const size_t stride = size_t(gridDim.x) * blockDim.x, first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (size_t i = first; i < n16; i += stride) dst[i] = src[i];
    if (first < tail) dst_tail[first] = src_tail[first];
}

}  // namespace

void fill_normal(uint16_t* p, size_t count, bool bf16, uint64_t seed, cudaStream_t stream) {
    if (count == 0) return;
    fill_normal_kernel<<<1024, 256, 0, stream>>>(p, count, bf16, seed);
}

void sm_copy(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
    // Pool slots are 256-byte aligned (16-byte loads); at most 32 blocks of 256 threads an SM of an H100.
    const size_t n16 = bytes / 16, tail = bytes % 16;
    const size_t blocks = (n16 + 255) / 256;
    const unsigned grid = unsigned(blocks < 4224 ? (blocks > 0 ? blocks : 1) : 4224);
    copy16_kernel<<<grid, 256, 0, stream>>>(static_cast<int4*>(dst), static_cast<const int4*>(src), n16,
                                            static_cast<char*>(dst) + n16 * 16, static_cast<const char*>(src) + n16 * 16, tail);
}

}  // namespace fqtool
