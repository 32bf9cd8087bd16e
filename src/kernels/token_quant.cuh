// The per-token kernel: one block per row, an amax pass (outputs parked in shared memory), a block
// reduction and a quantize pass; and its launch.
#pragma once

#include <algorithm>

#include "arch_policy.cuh"
#include "blocks/activate.cuh"
#include "blocks/amax.cuh"
#include "blocks/grid.cuh"
#include "blocks/host.cuh"
#include "blocks/load.cuh"
#include "blocks/moe_rows.cuh"
#include "blocks/parked.cuh"
#include "blocks/quantize.cuh"
#include "blocks/scales.cuh"
#include "blocks/tile.cuh"

namespace fq::cuda {

// ---- Skeleton 2: per-token (one block per row) -------------------------------------------------------
// Pass 1 activates the row, a step of blockDim.x * 8 outputs at a time (8 a thread; the next step's inputs in
// flight while this one is activated), and reduces its amax over the block; pass 2 quantizes. kParked: pass 1
// parks its outputs in dynamic shared memory (ParkedSlots, a slot row per step), so the row is read from
// memory and activated once. Rows wider than kTokenParkMaxOutputs (96 KB of fp32: an sm_86/89 block may have
// 99 KB) read their inputs again in pass 2 (from L2) and activate them again, as every row once did, which is
// far slower (docs/design-notes.md).
// Blocks of 256 threads, or up to 1024 where there are too few rows to fill the GPU (token_block_threads,
// src/common/kernel_shapes.h): a row's latency is then its number of steps.
constexpr int kTokenParkMaxOutputs = 24576;
constexpr size_t kTokenParkMaxBytes = kTokenParkMaxOutputs * sizeof(float);

template <class S, class Io, bool kParked>
__global__ void __launch_bounds__(kTokenMaxThreads) token_quant(const Params p) {
    constexpr bool kVec = Io::vector_io, kHwCvt = Io::hardware_fp8;
    extern __shared__ float4 parked_quads[];  // kParked: [step][half][thread]
    wait_for_producer();
    const int64_t m = blockIdx.x;
    if (m >= p.rows) {  // padding rows of a column-major TMA or swizzled scale layout
        let_consumer_start();
        if (threadIdx.x == 0) zero_scale_slot<false>(p, padding_row(p, m - p.rows), 0);
        return;
    }
    const RowOwner o = row_owner(p, m);
    if (o.expert < 0) return;
    const int threads = int(blockDim.x), stride = threads * 8, first = int(threadIdx.x) * 8;
    const ParkedSlots parked{parked_quads + threadIdx.x, threads};
    float a = 0.0f;
    Raw8 raw;
    if (first < p.cols) raw = load_raw<S, kVec>(p, m, first);
    for (int j0 = first, step = 0; j0 < p.cols; j0 += stride, ++step) {
        Raw8 next;
        if (j0 + stride < p.cols) next = load_raw<S, kVec>(p, m, j0 + stride);
        float y[8];
        activate8<S>(p, raw, m, y);
        a = fmaxf(a, amax8(y, outputs_left(p, j0)));
        if constexpr (kParked) parked.park(step, y);
        raw = next;
    }
    let_consumer_start();
    __shared__ float warp_amax[kTokenMaxThreads / 32];
    for (int d = 16; d > 0; d /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    if ((threadIdx.x & 31) == 0) warp_amax[threadIdx.x / 32] = a;
    __syncthreads();
    a = 0.0f;
    for (int w = 0; w < threads / 32; ++w) a = fmaxf(a, warp_amax[w]);
    const float s = group_scale(a, upper_bound(p), p.quant);
    const Divisor d = divisor_of(s, p.quant);
    if (threadIdx.x == 0) {
        store_scale(p.sg, p.scales + o.block + row_scale_offset(p, o.scale_row, 0), s);
        zero_scale_padding(p, p.scales + o.block, o.scale_row, 0);
    }
    for (int j0 = first, step = 0; j0 < p.cols; j0 += stride, ++step) {
        float y[8];
        if constexpr (kParked) parked.unpark(step, y);
        else activate8<S>(p, load_raw<S, kVec>(p, m, j0), m, y);
        store8<kVec>(p.out + m * p.out_ld + j0, quantize8<kHwCvt>(y, a, d, p.quant), outputs_left(p, j0));
    }
}

// Per-token rows: a block per row and per padding row of the scale layout, the outputs parked where the row fits.
template <class S, class Arch>
fqStatus_t launch_token_quant(const LaunchArgs& a, const Params& p) {
    using Io = typename Arch::Device;
    constexpr bool kPdl = Arch::pdl;
    const dim3 grid(unsigned(p.rows + padding_rows_total(p)));
    const int threads = token_block_threads(p.rows, a.sm_count);
    if (p.cols > kTokenParkMaxOutputs) return launch(token_quant<S, Io, false>, grid, dim3(threads), a, kPdl, p);
    constexpr auto kernel = token_quant<S, Io, true>;
    FQ_TRY((allow_dynamic_smem<kernel, kTokenParkMaxBytes>(a)));
    const int64_t steps = ceil_div(int64_t(p.cols), int64_t(threads) * 8);  // a slot row (8 floats a thread) each
    return launch_smem(kernel, grid, dim3(threads), size_t(steps * threads) * 8 * sizeof(float), a, kPdl, p);
}

template <Act kAct, class Arch>
fqStatus_t run_token_for(const LaunchArgs& a) {
    const Params p = make_params(a);
    return with_shape<kAct>(a.cfg, [&](auto shape) { return launch_token_quant<decltype(shape), Arch>(a, p); });
}

}  // namespace fq::cuda
