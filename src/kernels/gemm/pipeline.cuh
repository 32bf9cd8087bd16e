// The grouped GEMM's operand pipeline: a ring of shared-memory stages that the producer warp fills (TMA loads of
// the A and B tiles, cp.async copies of their scales) and the consumer warps drain (wgmma). Stage i has a full
// barrier (the producer's expect-tx arrival and its lanes' scale copies) and an empty barrier (the consumer warps
// that read it, in both CTAs of a pair where A or B is shared). A position in the ring is a stage and the parity
// of the passes around it so far, the phase its barriers wait on.
#pragma once

#include "sm90.cuh"

namespace fq::gemm {

struct StageRing {
    int stage = 0;
    uint32_t phase = 0;

    // The next stage of a ring of `stages` (the phase flips at the wrap).
    __device__ __forceinline__ void advance(int stages) {
        if (++stage == stages) {
            stage = 0;
            phase ^= 1;
        }
    }
};

#ifdef FQ_SM90A
// Producer: waits until the consumers have read the ring's stage in the previous pass (the first pass: at once).
__device__ __forceinline__ void wait_stage_empty(uint64_t* empty, const StageRing& r) {
    sm90::mbar_wait(&empty[r.stage], r.phase ^ 1);
}

// Consumer: waits until the stage's operands and scales have landed; full0: the shared address of stage 0's full
// barrier (stage i's is 8 bytes on).
__device__ __forceinline__ void wait_stage_full(uint32_t full0, const StageRing& r) { sm90::mbar_wait(full0 + 8 * r.stage, r.phase); }

// Consumer: the warp's MMAs have read the stage: lane 0 arrives on its empty barrier in both CTAs of the pair
// (empty_at: their stage-0 barriers' cluster addresses; a CTA without a peer names itself twice), then the ring
// moves on.
__device__ __forceinline__ void release_stage(const uint32_t (&empty_at)[2], StageRing& r, int lane, int stages) {
    if (lane == 0) {
        sm90::mbar_arrive_remote(empty_at[0] + 8 * r.stage);
        sm90::mbar_arrive_remote(empty_at[1] + 8 * r.stage);
    }
    r.advance(stages);
}
#endif  // FQ_SM90A

}  // namespace fq::gemm
