// sm_90's bulk-copy engine and shared-memory barriers, the few PTX instructions the streaming kernels use
// (PTX ISA: cp.async.bulk, mbarrier). Compiled to nothing below sm_90; callers launch only on sm_90+.
#pragma once

#include <cstdint>

namespace fq::cuda {

__device__ __forceinline__ uint32_t smem_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// A barrier that completes when one arrival (the thread that starts the copies) and `bytes` of copies have
// landed; the phase flips each time.
__device__ __forceinline__ void barrier_init(uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(bar)));
#endif
}

// Makes initialised barriers visible to the copy engine (the async proxy) before the first copy.
__device__ __forceinline__ void barrier_init_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

__device__ __forceinline__ void barrier_expect_bytes(uint64_t* bar, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes)
                 : "memory");
#endif
}

// Waits until the phase of parity `phase` has completed.
__device__ __forceinline__ void barrier_wait(uint64_t* bar, uint32_t phase) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t done = 0;
    do {
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
            : "=r"(done)
            : "r"(smem_address(bar)), "r"(phase)
            : "memory");
    } while (!done);
#endif
}

// `bytes` (a multiple of 16; both addresses 16-byte aligned) from global to shared memory, counted on `bar`;
// evicted from L2 first (the input is read once).
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar, uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
            smem_address(dst)),
        "l"(src), "r"(bytes), "r"(smem_address(bar)), "l"(policy)
        : "memory");
#endif
}

__device__ __forceinline__ uint64_t evict_first_policy() {
    uint64_t policy = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#endif
    return policy;
}

}  // namespace fq::cuda
