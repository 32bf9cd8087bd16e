// Amax blocks: of one chunk of 8 outputs, of a thread's chunks, and of a group spread over neighbouring
// lanes (warp shuffles).
#pragma once

#include <cstdint>

namespace fq::cuda {

// The largest magnitude among the first `valid` of 8 outputs.
__device__ __forceinline__ float amax8(const float y[8], int valid) {
    float a = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) a = i < valid ? fmaxf(a, fabsf(y[i])) : a;
    return a;
}

// The amax of a group: this thread's outputs, reduced over the group's `lanes` neighbouring lanes (a power
// of two). Unrolled (a group spans at most 16 lanes: 128 outputs); the steps past the group's lanes are
// skipped by a warp-uniform test.
__device__ __forceinline__ float group_amax(int lanes, float lane_amax) {
    float a = lane_amax;
#pragma unroll
    for (int d = 8; d > 0; d /= 2)
        if (d < lanes) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    return a;
}

// The amaxes of kRows groups at once, each spanning up to the whole warp (`mask` = lanes a group - 1: 7, 15 or
// 31), in straight-line code (the grouped GEMM's epilogue, 4 outputs a lane): a group of the whole warp is one
// reduction on the bits, which order like the values (amaxes are >= +0, never NaN); narrower groups a butterfly
// whose offsets past the group become xor 0. group_amax above skips those steps by a warp-uniform test instead,
// which in the GEMM's two-row epilogue adds a branch region and divergence check per step (docs/design-notes.md).
template <int kRows>
__device__ __forceinline__ void warp_group_amax(float (&amax)[kRows], int mask) {
    if (mask == 31) {
#pragma unroll
        for (int i = 0; i < kRows; ++i) amax[i] = __uint_as_float(__reduce_max_sync(0xFFFFFFFFu, __float_as_uint(amax[i])));
        return;
    }
#pragma unroll
    for (int off = 16; off >= 1; off /= 2)
#pragma unroll
        for (int i = 0; i < kRows; ++i) amax[i] = fmaxf(amax[i], __shfl_xor_sync(0xFFFFFFFFu, amax[i], off & mask));
}

// The largest magnitude among a thread's kChunks chunks of outputs (valid[c] of chunk c exist).
template <int kChunks>
__device__ __forceinline__ float lane_amax_of(const int (&valid)[kChunks], const float (&y)[kChunks][8]) {
    float a = 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) a = fmaxf(a, amax8(y[c], valid[c]));
    return a;
}

}  // namespace fq::cuda
