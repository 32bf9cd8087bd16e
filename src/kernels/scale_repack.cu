// fqScaleRepack on CUDA: a gather. One thread per 4-byte word of the destination (an fp32 scale, a
// PACKED_UE8M0 word, or four byte scales), each scale's source found by repack_source() (the function the
// host backend runs, so both write the same bytes), assembled in a register and stored as one 32-bit word;
// a destination that is not 4-byte aligned, and the last partial word, take byte stores. 64-bit indexing
// and a grid-stride loop: any size runs in one launch, with no allocation and no host synchronisation.
#include <cuda_runtime.h>

#include <algorithm>

#include "../common/status.h"
#include "../dispatch/scale_repack.h"
#include "launch.cuh"

namespace fq::cuda {
namespace {

constexpr int kRepackThreads = 256;
constexpr int64_t kMaxRepackBlocks = 65535;  // beyond this the grid-stride loop takes over

// The 4 bytes of destination word `word` (fewer at the end: `valid`), little-endian.
template <int kScaleBytes>
__device__ __forceinline__ uint32_t gather_word(const RepackPlan& p, const uint8_t* src, int64_t word, int valid) {
    if constexpr (kScaleBytes == 4) {  // one fp32 scale; both buffers are 4-byte aligned (checked by the API)
        const int64_t from = repack_source(p, 4 * word);
        return from < 0 ? 0u : *reinterpret_cast<const uint32_t*>(src + from);
    } else {
        uint32_t v = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if (j >= valid) break;
            const int64_t from = repack_source(p, 4 * word + j);
            if (from >= 0) v |= uint32_t(src[from]) << (8 * j);
        }
        return v;
    }
}

template <int kScaleBytes, bool kWordStores>
__global__ void __launch_bounds__(kRepackThreads) scale_repack_kernel(const RepackPlan p, const uint8_t* src, uint8_t* dst) {
    const int64_t bytes = p.dst.g.bytes * p.dst.blocks;
    const int64_t words = (bytes + 3) / 4;
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t w = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += stride) {
        const int valid = bytes - 4 * w < 4 ? int(bytes - 4 * w) : 4;
        const uint32_t v = gather_word<kScaleBytes>(p, src, w, valid);
        if (kWordStores && valid == 4) {
            *reinterpret_cast<uint32_t*>(dst + 4 * w) = v;
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (j < valid) dst[4 * w + j] = uint8_t(v >> (8 * j));
        }
    }
}

template <int kScaleBytes, bool kWordStores>
fqStatus_t launch_repack(const RepackPlan& p, const void* src, void* dst, cudaStream_t stream) {
    const int64_t words = (p.dst.bytes() + 3) / 4;
    const int64_t blocks = std::min(ceil_div(words, kRepackThreads), kMaxRepackBlocks);
    return cuda_status(launch_kernel(scale_repack_kernel<kScaleBytes, kWordStores>, dim3(unsigned(blocks)),
                                     dim3(kRepackThreads), 0, stream, false, p, static_cast<const uint8_t*>(src),
                                     static_cast<uint8_t*>(dst)),
                       "fqScaleRepack: kernel launch");
}

}  // namespace
}  // namespace fq::cuda

namespace fq {

fqStatus_t cuda_scale_repack(const RepackPlan& p, const void* src, void* dst, void* stream_in) {
    using namespace cuda;
    const auto stream = static_cast<cudaStream_t>(stream_in);
    if (p.dst.bytes() == 0) return FQ_STATUS_SUCCESS;
    if (p.scale_bytes == 4) return launch_repack<4, true>(p, src, dst, stream);  // fp32: aligned (API)
    if ((reinterpret_cast<uintptr_t>(dst) & 3u) == 0) return launch_repack<1, true>(p, src, dst, stream);
    return launch_repack<1, false>(p, src, dst, stream);
}

}  // namespace fq
