// 16-byte vector access, the unit of every memory-bound kernel here (DESIGN §4). Plain loads and stores:
// on the H100 the streaming (evict-first, .cs) hints cost 4-5% of a streaming quantizer's bandwidth
// (tools/lab/stream_lab.cu, docs/perf.md session 6).
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

}  // namespace fq::cuda
