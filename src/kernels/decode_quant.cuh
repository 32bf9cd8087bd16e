// The decode kernel: the general kernel's tiles (one row x 1024 outputs, 8 a thread) for problems too small to
// fill the GPU (decode and small prefill batches), with FP32 intermediates, no MoE layout and a scale per group
// of 16-128 outputs (per-group, microscaling). A call of it is one thread's latency: so everything that reads
// only the parameters (the addresses of the thread's inputs and of its scale) is done before the kernel waits
// for the previous one, and the group's lanes, the rounding mode and the row owner are compile-time constants,
// which leaves one straight path from the loads to the stores.
#pragma once

#include "arch_policy.cuh"
#include "blocks/activate.cuh"
#include "blocks/grid.cuh"
#include "blocks/host.cuh"
#include "blocks/load.cuh"
#include "blocks/scales.cuh"
#include "blocks/tile.cuh"

namespace fq::cuda {

// Block (m, t): output columns [t, t + 1) * 1024 of row m, then the padding-row blocks (as group_quant).
// kLanes: the lanes a group spans (its outputs / 8). Io: a 16-byte IO policy's Device.
template <class S, class Io, class Scales, int kLanes>
__global__ void __launch_bounds__(kThreads) decode_quant(const Params p) {
    constexpr bool kHwCvt = Io::hardware_fp8, kMx = Scales::microscaling;
    const int64_t m = block_row<false>();
    const int j0 = tile_first_output<false>();
    if (m >= p.rows) {
        wait_for_producer();
        let_consumer_start();
        zero_padding_rows<kMx>(p, m, j0 - int(threadIdx.x) * 8, kThreads * 8);
        return;
    }
    // Before the wait: where this thread's inputs, codes and scale are.
    const bool has_outputs = j0 < p.cols;
    const uint16_t* row = p.in + m * p.in_ld;
    const GatePair at = input_columns<S>(p, j0);
    const int64_t k = int64_t(j0) >> p.group_shift;
    const int64_t scale_at = row_scale_offset(p, m, k);
    const bool leader = has_outputs && (threadIdx.x & (kLanes - 1)) == 0;
    const int j[1] = {j0}, valid[1] = {has_outputs ? 8 : 0};

    wait_for_producer();
    RawWords w{};
    if (has_outputs) w = load_words_at<S>(row, at);
    let_consumer_start();
    float y[1][8];
    if (has_outputs) activate8<S, true>(p, raw8_of(w), m, y[0]);
    if constexpr (kMx) {
        const float s_enc = p.scheme == Scheme::Nvfp4 ? nvfp4_s_enc(p, 0) : 0.0f;
        const uint8_t sbyte = microscale_tile<1, true, kHwCvt>(p, m, j, valid, y, kLanes, s_enc);
        if (leader) p.scales[scale_at] = sbyte;
    } else {
        const float s = scaled_tile<1, true, kHwCvt>(p, m, j, valid, y, kLanes, 0.0f, upper_bound(p));
        if (leader) store_scale(p.sg, p.scales + scale_at, s);
    }
    if (leader) zero_scale_padding(p, p.scales, m, k);
}

template <class S, class Io, class Scales, int kLanes>
fqStatus_t launch_decode_lanes(const LaunchArgs& a, const Params& p) {
    const int64_t padding_blocks = cuda::padding_blocks(p), col_tiles = general_col_tiles(p);
    const int64_t blocks = (p.rows + padding_blocks) * col_tiles;
    return launch(decode_quant<S, Io, Scales, kLanes>, block_grid(false, p.rows + padding_blocks, col_tiles), dim3(kThreads), a,
                  pdl_pays(a, blocks), p);
}

// The decode kernel of p's group: 32-128 outputs (4-16 lanes) with fp32 scales, 32 (MX) or 16 (NVFP4, 2 lanes)
// with block scales.
template <class S, class Io, class Scales>
fqStatus_t launch_decode_quant(const LaunchArgs& a, const Params& p) {
    constexpr bool kMx = Scales::microscaling;
    switch (p.lanes_per_group) {
        case 2: if constexpr (kMx) return launch_decode_lanes<S, Io, Scales, 2>(a, p); break;
        case 4: return launch_decode_lanes<S, Io, Scales, 4>(a, p);
        case 8: if constexpr (!kMx) return launch_decode_lanes<S, Io, Scales, 8>(a, p); break;
        case 16: if constexpr (!kMx) return launch_decode_lanes<S, Io, Scales, 16>(a, p); break;
    }
    return fail(FQ_STATUS_INTERNAL_ERROR, "decode kernel: a group of {} lanes", p.lanes_per_group);
}

}  // namespace fq::cuda
