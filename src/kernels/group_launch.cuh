// The per-group launch: at run time, the plain kernels where the problem fills the GPU (swizzled or column-run
// forms by scale layout), else the general kernel; with the tensor amax and finalize steps around it.
#pragma once

#include <algorithm>

#include "blocks/host.cuh"
#include "decode_quant.cuh"
#include "group_quant.cuh"
#include "plain_quant.cuh"
#include "tensor_amax.cuh"

namespace fq::cuda {

// Grid: one block per row, then the padding-row blocks; column blocks of 1024 outputs (general kernel,
// rows fastest) or 2048 (plain kernel, memory order; see block_grid).
template <class S, bool kVec, bool kHwCvt, bool kPlain, bool kPdl, bool kMx>
fqStatus_t launch_group_quant(const LaunchArgs& a, const Params& p) {
    const int64_t padding_blocks = ceil_div(padding_rows_total(p), kPadRowsPerBlock);
    if constexpr (kPlain) {
        // Scale layouts whose runs span rows: blocks over several rows (plain_quant.cuh; a plain problem has no
        // MoE layout, so one scale block).
        const int64_t tiles512 = ceil_div(p.cols, int64_t(512));
        const ScaleLayout layout = p.sg.layout;
        if constexpr (kMx && kVec) {
            if (layout == ScaleLayout::Swizzled128x4 && reinterpret_cast<uintptr_t>(p.scales) % 16 == 0)
                return launch(plain_quant_swizzled<S, kHwCvt>, block_grid(true, p.sg.padded_rows / 4, tiles512), dim3(kThreads), a, kPdl, p);
        }
        if constexpr (!kMx && kVec) {
            if ((layout == ScaleLayout::ColMajor || layout == ScaleLayout::ColMajorTma) && p.scheme == Scheme::PerGroup &&
                (p.sg.bytes > kColumnRunMinBytes || a.wide_tile_min == 0))
                return launch(plain_quant_column_runs<S, kHwCvt>, block_grid(true, ceil_div(p.sg.padded_rows, int64_t(kColumnRunRows)), tiles512),
                              dim3(kColumnRunThreads), a, kPdl, p);
        }
        const int threads = plain_block_threads(p.cols, S::gate != GateKind::None);
        return launch(plain_quant<S, kVec, kHwCvt, kMx>, block_grid(true, p.rows + padding_blocks, ceil_div(p.cols, int64_t(threads) * 16)),
                      dim3(threads), a, kPdl, p);
    } else {
        // Several rows a block for MoE problems, as many as keep 4 waves of blocks (at most 16).
        const int64_t col_tiles = ceil_div(p.cols, int64_t(kThreads) * 8);
        Params q = p;
        q.rows_per_block = p.moe == MoeLayout::None ? 1 : std::max<int64_t>(1, std::min<int64_t>(16, p.rows * col_tiles / (4 * resident_blocks(a))));
        q.row_blocks = ceil_div(p.rows, q.rows_per_block);
        const int64_t blocks = (q.row_blocks + padding_blocks) * col_tiles;
        return launch(group_quant<S, kVec, kHwCvt, kMx>, block_grid(false, q.row_blocks + padding_blocks, col_tiles), dim3(kThreads), a,
                      kPdl && pdl_pays(a, blocks), q);
    }
}

template <Act kAct, bool kVec, bool kHwCvt, bool kPdl>
fqStatus_t run_group_for(const LaunchArgs& a) {
    const OpConfig& c = a.cfg;
    const Params p = make_params(a);
    // The plain kernel where it fills the GPU (FQ_HANDLE_WIDE_TILE_MIN tiles, default one wave); below that the
    // time is one thread's latency, and the general kernel's 8 outputs a thread have less of it
    // (docs/design-notes.md).
    const int64_t wave = resident_blocks(a);
    const bool wide = c.rows * ceil_div(c.cols, int64_t(kPlainTile)) >= (a.wide_tile_min < 0 ? wave : a.wide_tile_min);
    const bool plain_kernel = c.plain() && wide;
    // Below that, on sm_90 (programmatic dependent launch) the decode kernel where it runs the problem.
    const bool decode_kernel = kVec && kPdl && !wide && decode_runs(c);
    return with_shape<kAct>(c, [&](auto shape) -> fqStatus_t {
        using S = decltype(shape);
        FQ_TRY((run_tensor_amax<S, kVec, kPdl>(a, p, c.fp32_intermediates())));
        const bool mx = is_microscaling(c.scheme);
        if constexpr (kVec && kPdl) {
            if (decode_kernel) return mx ? launch_decode_quant<S, kHwCvt, true>(a, p) : launch_decode_quant<S, kHwCvt, false>(a, p);
        }
        const auto launch_quant = plain_kernel ? (mx ? launch_group_quant<S, kVec, kHwCvt, true, kPdl, true>
                                                     : launch_group_quant<S, kVec, kHwCvt, true, kPdl, false>)
                                               : (mx ? launch_group_quant<S, kVec, kHwCvt, false, kPdl, true>
                                                     : launch_group_quant<S, kVec, kHwCvt, false, kPdl, false>);
        FQ_TRY(launch_quant(a, p));
        if (c.scheme == Scheme::PerTensorDynamic) FQ_TRY(finish_tensor_scale(a, kPdl, p));
        return FQ_STATUS_SUCCESS;
    });
}

}  // namespace fq::cuda
