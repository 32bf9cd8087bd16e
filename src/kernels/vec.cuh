// 16-byte vector access, the unit of every memory-bound kernel here (DESIGN §4). Plain loads and stores, without
// streaming cache hints (docs/design-notes.md).
#pragma once

#include <cstdint>

namespace fq::cuda {

// Eight 16-bit inputs, loaded as one 16-byte transaction.
struct alignas(16) Half8 {
    uint16_t h[8];
};

__device__ __forceinline__ Half8 load_half8(const uint16_t* p) {
    const int4 v = *reinterpret_cast<const int4*>(p);
    Half8 r;
    memcpy(&r, &v, 16);
    return r;
}

// The scalar path: element by element, each element checked against `valid` (for unaligned rows).
__device__ __forceinline__ Half8 load_half8_scalar(const uint16_t* p, int valid) {
    Half8 r;
#pragma unroll
    for (int i = 0; i < 8; ++i) r.h[i] = i < valid ? p[i] : uint16_t(0);
    return r;
}

// 16 bytes from global to shared memory without passing through registers (cp.async, sm_80 on): the
// copies a thread issues land while it computes; cp_async_commit closes a group of them, and
// cp_async_wait<N> returns once at most N of the thread's groups are still in flight (the thread's own
// copies are then visible to it). Both addresses 16-byte aligned.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(uint32_t(__cvta_generic_to_shared(smem))), "l"(gmem)
                 : "memory");
#else
    *reinterpret_cast<int4*>(smem) = *reinterpret_cast<const int4*>(gmem);
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

template <int kInFlight>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(kInFlight) : "memory");
#endif
}

}  // namespace fq::cuda
