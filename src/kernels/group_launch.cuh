// The launches of the per-group kernels (plain_quant and its swizzled and column-run forms, decode_quant,
// group_quant), one per skeleton, with the tensor amax and finalize steps around them. They choose nothing: the dispatcher
// (src/dispatch/cuda_table.cpp) chose the skeleton.
#pragma once

#include <algorithm>

#include "blocks/host.cuh"
#include "decode_quant.cuh"
#include "group_quant.cuh"
#include "plain_quant.cuh"
#include "tensor_amax.cuh"

namespace fq::cuda {

// The grid of each per-group kernel of skeleton K. Plain kernels: blocks in memory order, a plain problem has no
// MoE layout, so one scale block; the swizzled and column-run forms' blocks span several rows (plain_quant.cuh).
// Decode kernel: its own launch (decode_quant.cuh). General kernel: one block per row, then the padding-row
// blocks; column blocks of 1024 outputs, rows fastest.
// Arch: the family's policy (its kernels: Arch::Device); Scales: Fp32Scales or BlockScales (arch_policy.cuh).
template <Skeleton K, class S, class Arch, class Scales>
fqStatus_t launch_group_quant(const LaunchArgs& a, const Params& p) {
    using Io = typename Arch::Device;
    constexpr bool kVec = Arch::vector_io, kPdl = Arch::pdl, kMx = Scales::microscaling;
    const int64_t padding_blocks = cuda::padding_blocks(p);
    const int64_t tiles512 = ceil_div(p.cols, int64_t(512));
    if constexpr (K == Skeleton::PlainSwizzled) {
        if constexpr (kMx && kVec)
            return launch(plain_quant_swizzled<S, Io>, block_grid(true, p.sg.padded_rows / 4, tiles512), dim3(kThreads), a, kPdl, p);
    } else if constexpr (K == Skeleton::PlainColumnRuns) {
        if constexpr (!kMx && kVec)
            return launch(plain_quant_column_runs<S, Io>, block_grid(true, ceil_div(p.sg.padded_rows, int64_t(kColumnRunRows)), tiles512),
                          dim3(kColumnRunThreads), a, kPdl, p);
    } else if constexpr (K == Skeleton::Plain) {
        const int threads = plain_block_threads(p.cols, S::gate != GateKind::None);
        return launch(plain_quant<S, Io, Scales>, block_grid(true, p.rows + padding_blocks, ceil_div(p.cols, int64_t(threads) * 16)),
                      dim3(threads), a, kPdl, p);
    } else if constexpr (K == Skeleton::Decode) {
        if constexpr (kVec && kPdl) return launch_decode_quant<S, Io, Scales>(a, p);
    } else if constexpr (K == Skeleton::Group) {
        // Several rows a block for MoE problems, as many as keep 4 waves of blocks (at most 16).
        const int64_t col_tiles = general_col_tiles(p);
        Params q = p;
        q.rows_per_block = p.moe == MoeLayout::None ? 1 : std::max<int64_t>(1, std::min<int64_t>(16, p.rows * col_tiles / (4 * resident_blocks(a))));
        q.row_blocks = ceil_div(p.rows, q.rows_per_block);
        const int64_t blocks = (q.row_blocks + padding_blocks) * col_tiles;
        return launch(group_quant<S, Io, Scales>, block_grid(false, q.row_blocks + padding_blocks, col_tiles), dim3(kThreads), a,
                      kPdl && pdl_pays(a, blocks), q);
    }
    // The dispatcher's conditions exclude the rest (the swizzled form runs microscaling schemes, the column-run
    // form per-group ones, both with 16-byte IO; the decode kernel with 16-byte IO and PDL).
    return fail(FQ_STATUS_INTERNAL_ERROR, "kernel skeleton {} does not run scheme {}", int(K), name(p.scheme));
}

// A per-group problem on skeleton K: the tensor amax first where the scheme needs it, the quantize kernel, the
// finalize step of per-tensor dynamic.
template <Skeleton K, Act kAct, class Arch>
fqStatus_t run_group_for(const LaunchArgs& a) {
    const OpConfig& c = a.cfg;
    const Params p = make_params(a);
    return with_shape<kAct>(c, [&](auto shape) -> fqStatus_t {
        using S = decltype(shape);
        FQ_TRY((run_tensor_amax<S, Arch>(a, p, c.fp32_intermediates())));
        FQ_TRY((is_microscaling(c.scheme) ? launch_group_quant<K, S, Arch, BlockScales>(a, p)
                                          : launch_group_quant<K, S, Arch, Fp32Scales>(a, p)));
        if (c.scheme == Scheme::PerTensorDynamic) FQ_TRY(finish_tensor_scale(a, Arch::pdl, p));
        return FQ_STATUS_SUCCESS;
    });
}

}  // namespace fq::cuda
