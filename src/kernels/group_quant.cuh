// The general per-group kernel (also per-tensor and microscaling): tiles of one row x 1024 outputs, 8 a
// thread; any rounding mode, MoE layout (several rows a block) and routing probability.
#pragma once

#include "arch_policy.cuh"
#include "blocks/activate.cuh"
#include "blocks/grid.cuh"
#include "blocks/load.cuh"
#include "blocks/moe_rows.cuh"
#include "blocks/scales.cuh"
#include "blocks/tile.cuh"

namespace fq::cuda {

// One row tile of the general kernel: 8 outputs a thread of row b (owned by o.expert) from column j0.
template <class S, bool kVec, bool kHwCvt, bool kMx>
__device__ __forceinline__ void group_row(const Params& p, const RowOwner& o, int64_t b, int j0, bool col_ok) {
    Raw8 raw;
    if (col_ok) raw = load_raw<S, kVec>(p, b, j0);
    let_consumer_start();
    float y[8];
    if (col_ok) activate8<S>(p, raw, b, y);
    const RowScaleInputs<kMx> in(p, o.expert);
    // Every lane of the warp takes part: the group amax is a warp shuffle.
    quantize_activated<kVec, kHwCvt, kMx>(p, o, b, j0, col_ok ? outputs_at<kVec>(p, j0) : 0, y, in.tensor_scale, in.bound);
}

// The general kernel: any rounding mode, MoE layout and routing probability. Block (b, t) runs output
// columns [t, t + 1) * 1024 of rows [b, b + 1) * p.rows_per_block (each thread 8 outputs a row; rows no
// expert owns skipped: for_each_owned_row). Blocks past the rows write the scale layouts' padding rows
// (zeros), kPadRowsPerBlock rows each. Io: an architecture policy's Device (arch_policy.cuh); Scales: Fp32Scales
// or BlockScales.
template <class S, class Io, class Scales>
__global__ void __launch_bounds__(kThreads, kGroupMinBlocks) group_quant(const Params p) {
    constexpr bool kVec = Io::vector_io, kHwCvt = Io::hardware_fp8, kMx = Scales::microscaling;
    wait_for_producer();
    const int j0 = tile_first_output<false>();
    const int64_t bx = block_row<false>();
    if (bx >= p.row_blocks) {
        let_consumer_start();
        zero_padding_rows<kMx>(p, p.rows + (bx - p.row_blocks), j0 - int(threadIdx.x) * 8, kThreads * 8);
        return;
    }
    const bool col_ok = j0 < p.cols;
    for_each_owned_row(p, bx, [&](const RowOwner& o, int64_t b) { group_row<S, kVec, kHwCvt, kMx>(p, o, b, j0, col_ok); });
    let_consumer_start();
}

}  // namespace fq::cuda
