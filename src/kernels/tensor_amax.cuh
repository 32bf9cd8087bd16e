// The amax of the whole tensor into one word per expert (per-tensor dynamic, step 1 of 3; NVFP4's global
// amax), the finalize kernel's declaration (step 3), and the launch of step 1.
#pragma once

#include "blocks/activate.cuh"
#include "blocks/amax.cuh"
#include "blocks/grid.cuh"
#include "blocks/host.cuh"
#include "blocks/load.cuh"
#include "blocks/moe_rows.cuh"

namespace fq::cuda {

// ---- Skeleton 3: amax of the whole tensor (per-tensor dynamic, step 1 of 3) -------------------------
template <class S, bool kVec, bool kPlain>
__global__ void __launch_bounds__(kThreads) tensor_amax(const Params p) {
    wait_for_producer();
    const int j0 = tile_first_output<kPlain>();
    const int64_t m = block_row<kPlain>();
    if (m >= p.rows) return;
    const int e = row_owner(p, m).expert;  // the same for the whole block
    if (e < 0) return;
    float a = 0.0f;
    if (j0 < p.cols) {
        float y[8];
        activate8<S, kPlain>(p, load_raw<S, kVec>(p, m, j0), m, y);
        a = amax8(y, outputs_left(p, j0));
    }
    for (int d = 16; d > 0; d /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    __shared__ float warp_amax[kThreads / 32];
    if ((threadIdx.x & 31) == 0) warp_amax[threadIdx.x / 32] = a;
    __syncthreads();
    if (threadIdx.x != 0) return;
#pragma unroll
    for (int w = 1; w < kThreads / 32; ++w) a = fmaxf(a, warp_amax[w]);
    // One atomic per block, and none where the word already holds as much: a single word updated by
    // every warp serialises the pass (docs/design-notes.md). Non-negative floats
    // order like their bit patterns, so an unsigned max is a float max; the plain read may be stale,
    // which only costs an atomic.
    const unsigned bits = __float_as_uint(a);
    if (a > 0.0f && bits > *reinterpret_cast<volatile unsigned*>(p.amax_bits + e)) atomicMax(p.amax_bits + e, bits);
}

// Step 3 of per-tensor dynamic: each expert's amax word becomes its scale (step 2, the quantize kernel,
// read the amax); the columnwise scale buffer gets the same scales.
__global__ void finalize_tensor_scale(const Params p);

// Step 1 of per-tensor dynamic, and of NVFP4 without the caller's global amax: each expert's amax into its
// word (kPlain: the FP32 activation body, for problems with neither intermediate rounding nor MoE).
// (The kernel takes only the IO form: its code does not depend on the fp8 encoding.)
template <class S, class Arch>
fqStatus_t run_tensor_amax(const LaunchArgs& a, const Params& p, bool plain) {
    constexpr bool kVec = Arch::vector_io;
    const OpConfig& c = a.cfg;
    if (c.scheme != Scheme::PerTensorDynamic && (c.scheme != Scheme::Nvfp4 || c.global_amax)) return FQ_STATUS_SUCCESS;
    FQ_TRY(prepare_tensor_amax(a, p));
    const auto kernel = plain ? tensor_amax<S, kVec, true> : tensor_amax<S, kVec, false>;
    const unsigned col_tiles = unsigned(ceil_div(c.cols, int64_t(kThreads) * 8));
    return launch(kernel, block_grid(plain, c.rows, col_tiles), dim3(kThreads), a, Arch::pdl, p);
}

}  // namespace fq::cuda
