// 16-byte vector access, the unit of every memory-bound kernel here (DESIGN §4). Streaming loads
// (evict-first) for inputs read once; stores of whole 4- or 8-byte words.
#pragma once

#include <cstdint>

namespace fq::cuda {

// Eight 16-bit inputs, loaded as one 16-byte transaction.
struct alignas(16) Half8 {
    uint16_t h[8];
};

__device__ __forceinline__ Half8 load_half8(const uint16_t* p) {
    const int4 v = __ldcs(reinterpret_cast<const int4*>(p));
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

}  // namespace fq::cuda
