// Outputs parked in shared memory between an amax pass and a quantize pass (token_quant,
// columnwise_quant): a thread's own float4 slots, laid out so that a warp's accesses are conflict-free.
#pragma once

#include <cuda_runtime.h>

namespace fq::cuda {

// ---- Outputs parked in shared memory (token_quant, columnwise_quant) ---------------------------------
// A thread's parked fp32 outputs, 8 a row (or step) i: columns 4h .. 4h + 3 in float4 slot (i, h), slots of
// neighbouring threads adjacent (thread-minor, `stride` threads a slot row: a warp's 16-byte accesses are
// conflict-free, and a thread reads back only its own slots, so no barrier).
struct ParkedSlots {
    float4* base;  // slot (0, 0) of this thread
    int stride;    // the block's threads
    __device__ __forceinline__ float4& slot(int i, int h) const { return base[(i * 2 + h) * stride]; }
    __device__ __forceinline__ float& at(int i, int c) const { return reinterpret_cast<float*>(&slot(i, c / 4))[c % 4]; }
    __device__ __forceinline__ void park(int i, const float (&y)[8]) const {
        slot(i, 0) = make_float4(y[0], y[1], y[2], y[3]);
        slot(i, 1) = make_float4(y[4], y[5], y[6], y[7]);
    }
    __device__ __forceinline__ void unpark(int i, float (&y)[8]) const {
        const float4 lo = slot(i, 0), hi = slot(i, 1);
        y[0] = lo.x, y[1] = lo.y, y[2] = lo.z, y[3] = lo.w, y[4] = hi.x, y[5] = hi.y, y[6] = hi.z, y[7] = hi.w;
    }
};

}  // namespace fq::cuda
