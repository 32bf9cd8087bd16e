// The per-token cluster kernel (sm_90 on): per-token rows too few to fill the GPU (decode and small prefill), each
// row dealt over a thread-block cluster, so that its amax is reduced without a second pass over the row. CTA r of a
// row's cluster holds the row's column tiles [r k, (r + 1) k) of 1024 outputs (k = kChunks; token_cluster_shape,
// src/common/kernel_shapes.h), 8 outputs of each a thread, in registers from the load to the store: one read of
// the input, one launch, and each CTA one SM's share of a row where the per-token kernel takes one SM per row. As in
// the decode kernel, the addresses are worked out before the wait for the previous kernel.
#pragma once

#include <cooperative_groups.h>

#include "arch_policy.cuh"
#include "blocks/activate.cuh"
#include "blocks/amax.cuh"
#include "blocks/grid.cuh"
#include "blocks/host.cuh"
#include "blocks/load.cuh"
#include "blocks/quantize.cuh"
#include "blocks/scales.cuh"
#include "blocks/tile.cuh"

namespace fq::cuda {

// ---- The row amax over a cluster ------------------------------------------------------------------------------
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr int kClusterWarps = kThreads / 32;
static_assert(kTokenClusterMaxCtas * kClusterWarps <= 32, "a warp reads every warp's amax of the cluster, a lane each");

// The largest of every thread's `lane_amax` in the cluster. Each warp's amax goes to this CTA's shared memory;
// after the cluster barrier every warp reads all of them (DSMEM, a lane each) and reduces them. Arrives on the
// cluster barrier once its reads are done: the caller waits on it before exiting (until then a peer may still
// read this CTA's shared memory).
__device__ __forceinline__ float cluster_amax(float lane_amax) {
    namespace cg = cooperative_groups;
    __shared__ float warp_amax[kClusterWarps];
    const cg::cluster_group cluster = cg::this_cluster();
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    // Amaxes are >= +0 and never NaN (amax8 drops NaNs): their bits order like their values.
    const float a = __uint_as_float(__reduce_max_sync(0xFFFFFFFFu, __float_as_uint(lane_amax)));
    if (lane == 0) warp_amax[warp] = a;
    cluster.sync();  // release / acquire: every warp's amax of the cluster is visible
    const unsigned from = lane / kClusterWarps;
    const float peer = from < cluster.num_blocks() ? *cluster.map_shared_rank(&warp_amax[lane % kClusterWarps], from) : 0.0f;
    const float amax = __uint_as_float(__reduce_max_sync(0xFFFFFFFFu, __float_as_uint(peer)));
    cluster.barrier_arrive();
    return amax;
}
#endif

// ---- The kernel -------------------------------------------------------------------------------------------------
// Block (r, m): CTA r of row m's cluster (grid x = the cluster). Rows past p.rows: the scale layout's padding rows,
// written as zeros by their cluster's first thread. Io: the sm90 policy's Device (arch_policy.cuh).
template <class S, class Io, int kChunks>
__global__ void __launch_bounds__(kThreads) token_cluster_quant(const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr bool kHwCvt = Io::hardware_fp8;
    const int64_t m = blockIdx.y;
    const int rank = int(blockIdx.x);  // the cluster spans the grid's x: its rank
    if (m >= p.rows) {
        wait_for_producer();
        let_consumer_start();
        if (rank == 0 && threadIdx.x == 0) zero_scale_slot<false>(p, padding_row(p, m - p.rows), 0);
        return;
    }
    // Before the wait: where this thread's inputs and codes are.
    const uint16_t* row = p.in + m * p.in_ld;
    int j[kChunks], valid[kChunks];
    GatePair at[kChunks];
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
        j[c] = ((rank * kChunks + c) * kThreads + int(threadIdx.x)) * 8;
        valid[c] = j[c] < p.cols ? 8 : 0;  // 16-byte IO: the width is a multiple of 8
        at[c] = input_columns<S>(p, j[c]);
    }

    wait_for_producer();
    RawWords w[kChunks] = {};
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
        if (valid[c]) w[c] = load_words_at<S>(row, at[c]);
    const float bound = upper_bound(p);
    let_consumer_start();
    float y[kChunks][8] = {};
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
        if (valid[c]) activate8<S, true>(p, raw8_of(w[c]), m, y[c]);

    const float lane_amax = lane_amax_of(valid, y);
    const float s = group_scale(cluster_amax(lane_amax), bound, p.quant);
    uint2 codes[kChunks];
    quantize<kHwCvt>(y, lane_amax, divisor_of(s, p.quant), p.quant, codes);
    uint8_t* out = p.out + m * p.out_ld;
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
        if (valid[c]) store8<true>(out + j[c], codes[c], 8);
    if (rank == 0 && threadIdx.x == 0) {
        store_scale(p.sg, p.scales + row_scale_offset(p, m, 0), s);
        zero_scale_padding(p, p.scales, m, 0);
    }
    cooperative_groups::this_cluster().barrier_wait();  // every peer has read this CTA's amaxes
#else
    __trap();  // clusters exist from sm_90: the dispatch table runs this kernel on the sm90 and sm100 families only
#endif
}

// Per-token rows over clusters: the clusters of the rows, then one cluster per padding row of the scale layout.
template <class S, class Arch>
fqStatus_t launch_token_cluster(const LaunchArgs& a, const Params& p) {
    using Io = typename Arch::Device;
    const TokenClusterShape shape = token_cluster_shape(p.cols);
    const dim3 grid(unsigned(shape.ctas), unsigned(p.rows + padding_rows_total(p)));
    switch (shape.chunks) {
        case 1: return launch_in_clusters(token_cluster_quant<S, Io, 1>, grid, dim3(kThreads), unsigned(shape.ctas), 0, a, Arch::pdl, p);
        case 2: return launch_in_clusters(token_cluster_quant<S, Io, 2>, grid, dim3(kThreads), unsigned(shape.ctas), 0, a, Arch::pdl, p);
        case 3: return launch_in_clusters(token_cluster_quant<S, Io, 3>, grid, dim3(kThreads), unsigned(shape.ctas), 0, a, Arch::pdl, p);
    }
    return fail(FQ_STATUS_INTERNAL_ERROR, "per-token cluster kernel: a row of {} outputs does not fit a cluster", p.cols);
}

template <Act kAct, class Arch>
fqStatus_t run_token_cluster_for(const LaunchArgs& a) {
    const Params p = make_params(a);
    return with_shape<kAct>(a.cfg, [&](auto shape) { return launch_token_cluster<decltype(shape), Arch>(a, p); });
}

}  // namespace fq::cuda
