// The plain per-group kernels, 16 outputs a thread, for problems with FP32 intermediates and no MoE
// layout: plain_quant, and its forms for 128x4-swizzled block scales (plain_quant_swizzled) and large
// column-major scale buffers (plain_quant_column_runs).
#pragma once

#include "arch_policy.cuh"
#include "blocks/activate.cuh"
#include "blocks/grid.cuh"
#include "blocks/load.cuh"
#include "blocks/scales.cuh"
#include "blocks/tile.cuh"

namespace fq::cuda {

// ---- The plain kernel: 16 outputs a thread ----------------------------------------------------------
// For problems with FP32 intermediates and no MoE layout (the dispatcher's condition), so it carries no code for the
// other rounding modes or row owners; the routing probability is a block-uniform branch. On the H100 the group
// kernels are bound by instruction issue, and most of a thread's instructions are per
// thread, not per output: set-up, the group amax, the scale, its address and store. So a thread here runs
// two chunks of 8 outputs in the same group, chunk B = chunk A + G/2 (G = the group, 64 for the per-tensor
// schemes), and a group spans G/16 lanes: each warp load still reads whole sectors (G/16 lanes read G/2
// consecutive outputs), and one group amax, scale and scale store serve 16 outputs.
// Block (b, t): output columns [t, t + 1) * tile of row b, blocks launched in memory order (block_grid). The
// tile is 2048 outputs (4 warps), or for gated problems 1024 (2 warps) where a row's 512-output warps divide
// by 2 and not by 4 (7168 = 14 x 512): then no block runs idle warps past the row's end, which hold their SM
// slots while the others work. Not gated, a 2-warp block has too little work: blocks finish faster than they
// launch, so those keep 4 warps (docs/design-notes.md).
// (kPlainTile, the 2048 outputs: src/common/kernel_shapes.h.)

inline int plain_block_threads(int64_t cols, bool gated) {
    const int64_t warps = ceil_div(cols, int64_t(512));
    return gated && warps % 4 != 0 && warps % 2 == 0 ? kThreads / 2 : kThreads;
}

// The first column of chunk A of this thread, whose warp covers the 512 outputs from warp_first: its lanes in
// groups of 2^pair_shift (= G/16) lanes, each group of lanes G consecutive outputs (group lane >> pair_shift
// of the warp's).
__device__ __forceinline__ int plain_chunk_a(const Params& p, int warp_first) {
    const int lane = int(threadIdx.x) & 31, s = p.pair_shift;
    return warp_first + ((lane >> s) << (s + 4)) + ((lane & ((1 << s) - 1)) << 3);
}

// Chunks A and B of this thread (columns j, valid outputs each) of row m: loaded, then activated.
template <class S, bool kVec>
__device__ __forceinline__ void plain_outputs(const Params& p, int64_t m, const int (&j)[2], const int (&valid)[2], float (&y)[2][8]) {
    const uint16_t* row = p.in + m * p.in_ld;
    Raw8 raw[2];
#pragma unroll
    for (int c = 0; c < 2; ++c)
        if (valid[c] > 0) raw[c] = load_raw<S, kVec>(p, row, j[c]);
    let_consumer_start();
#pragma unroll
    for (int c = 0; c < 2; ++c)
        if (valid[c] > 0) activate8<S, true>(p, raw[c], m, y[c]);
}

// The kernels whose blocks span rows (below): this warp's 512 outputs of row m from column tile blockIdx.x,
// chunks A and B of this thread (none past the rows or the row's end; the 16-byte path), loaded and activated.
template <class S>
__device__ __forceinline__ void row_warp_outputs(const Params& p, int64_t m, int (&j)[2], int (&valid)[2], float (&y)[2][8]) {
    j[0] = plain_chunk_a(p, int(blockIdx.x) * 512);
    j[1] = j[0] + (8 << p.pair_shift);
#pragma unroll
    for (int c = 0; c < 2; ++c) valid[c] = m < p.rows && j[c] < p.cols ? 8 : 0;
    plain_outputs<S, true>(p, m, j, valid, y);
}

// Block (b, t): output columns [t, t + 1) * tile of row b, then the padding-row blocks. No MoE layout: a
// MoE row's owner is one or more dependent loads ahead of the row's own, which one row a block cannot hide,
// and a row loop under this kernel's register bound spills (docs/design-notes.md); MoE problems take the
// general kernel.
template <class S, class Io, class Scales>
__global__ void __launch_bounds__(kThreads, kGroupMinBlocks) plain_quant(const Params p) {
    constexpr bool kVec = Io::vector_io, kHwCvt = Io::hardware_fp8, kMx = Scales::microscaling;
    wait_for_producer();
    const int64_t b = block_row<true>();  // the last z slice may run past the padding rows: they find no work
    if (b >= p.rows) {
        let_consumer_start();
        zero_padding_rows<kMx>(p, b, int(blockIdx.x * blockDim.x) * 16, int(blockDim.x) * 16);
        return;
    }
    const int ja = plain_chunk_a(p, int(blockIdx.x * blockDim.x) * 16 + (int(threadIdx.x) >> 5) * 512);
    const int jb = ja + (8 << p.pair_shift);
    const int j[2] = {ja, jb};
    const int valid[2] = {ja < p.cols ? outputs_at<kVec>(p, ja) : 0, jb < p.cols ? outputs_at<kVec>(p, jb) : 0};
    float y[2][8];
    plain_outputs<S, kVec>(p, b, j, valid, y);
    const RowScaleInputs<kMx> in(p, 0);
    quantize_activated<2, kVec, kHwCvt, kMx>(p, RowOwner{0, b, 0}, b, j, valid, y, 1 << p.pair_shift, in.tensor_scale, in.bound);
}

// ---- The plain kernel for 128x4-swizzled block scales ------------------------------------------------
// SWIZZLED_128X4 keeps scale columns 4q .. 4q + 3 of rows m, m + 32, m + 64, m + 96 (m % 128 < 32) in one
// 16-byte unit. plain_quant's warps run along one row, so a warp's 16 scale bytes went to 4 units, 4 bytes
// each, and every unit was written by 4 blocks: more L2 write sectors than row-major scales, and more time
// (docs/design-notes.md). Here warp w of
// block (t, u) runs row m0(u) + 32 w over output columns [t, t + 1) * 512; the 4 warps' scales meet in shared
// memory and leave as whole units, the layout's padding rows and columns (zeros) among them, so the grid has
// no padding blocks. Microscaling only (blocks of 16 or 32: 512 outputs are whole units of 4 scale columns);
// the 16-byte path; a 16-byte aligned scale buffer (the dispatcher's condition).
template <class S, class Io>
__global__ void __launch_bounds__(kThreads, kGroupMinBlocks) plain_quant_swizzled(const Params p) {
    constexpr bool kHwCvt = Io::hardware_fp8;
    wait_for_producer();
    const int64_t u = block_row<true>();
    const int64_t m0 = (u >> 5) * 128 + (u & 31);  // the units' first row
    const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31, s = p.pair_shift;
    const int64_t m = m0 + 32 * warp;
    int j[2], valid[2];
    float y[2][8];
    row_warp_outputs<S>(p, m, j, valid, y);
    const RowScaleInputs<true> in(p, 0);
    const uint8_t sbyte = microscale_tile<2, true, kHwCvt>(p, m, j, valid, y, 1 << s, in.tensor_scale);
    __shared__ __align__(16) uint8_t units[8][16];  // [k / 4][4 w + k % 4], k the block's scale column
    const int k = lane >> s;
    if ((lane & ((1 << s) - 1)) == 0) units[k >> 2][4 * warp + (k & 3)] = valid[0] > 0 ? sbyte : 0;
    __syncthreads();
    const int quads = (512 >> p.group_shift) / 4;  // 4 (blocks of 32) or 8 (NVFP4's 16)
    const int64_t k4 = int64_t(blockIdx.x) * (512 >> p.group_shift) + 4 * int(threadIdx.x);
    if (int(threadIdx.x) < quads && k4 < p.scale_cols_padded)
        *reinterpret_cast<uint4*>(p.scales + row_scale_offset(p, m0, k4)) = *reinterpret_cast<const uint4*>(units[threadIdx.x]);
}

// ---- The plain kernel for column-major scales ----------------------------------------------------------
// COL_MAJOR and COL_MAJOR_TMA keep the fp32 scales of 8 consecutive rows of a group column in one 32-byte
// sector. plain_quant's block (one row) writes one float of each of its groups' sectors, so each sector is
// filled by 8 blocks; with many group columns far apart (16384 x 18432: 144 columns 64 KB apart) that is
// slower than row-major scales (docs/design-notes.md), likely because partial sectors leave L2 before all
// their rows are written. Here warp w of block (t, u)
// runs row 8u + w over output columns [t, t + 1) * 512, and the block stores whole 8-row runs of each of its
// group columns (the layout's padding rows, zeros, among them). Per-group fp32-scale schemes on the 16-byte
// path (the dispatcher's conditions).
// 8 rows: whole sectors (4 rows, half sectors, do not help). Where plain_quant has no trouble this kernel is
// slightly slower, so the dispatcher takes it only for scale buffers past kColumnRunMinBytes
// (src/common/kernel_shapes.h), between the largest that run well with plain_quant and the smallest that do not
// (docs/design-notes.md).
constexpr int kColumnRunRows = 8, kColumnRunThreads = 32 * kColumnRunRows;

template <class S, class Io>
__global__ void __launch_bounds__(kColumnRunThreads, kGroupMinBlocks * 4 / kColumnRunRows) plain_quant_column_runs(const Params p) {
    constexpr bool kHwCvt = Io::hardware_fp8;
    wait_for_producer();
    const int64_t m0 = block_row<true>() * kColumnRunRows;
    const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31, s = p.pair_shift;
    const int64_t m = m0 + warp;
    int j[2], valid[2];
    float y[2][8];
    row_warp_outputs<S>(p, m, j, valid, y);
    const RowScaleInputs<false> in(p, 0);
    const float sc = scaled_tile<2, true, kHwCvt>(p, m, j, valid, y, 1 << s, in.tensor_scale, in.bound);
    __shared__ float runs[16][kColumnRunRows];  // [k][w], k the block's group column (512 / G of them: 4, 8 or 16)
    const int k = lane >> s;
    if ((lane & ((1 << s) - 1)) == 0) runs[k][warp] = valid[0] > 0 ? sc : 0.0f;
    __syncthreads();
    const int groups = 512 >> p.group_shift, kk = int(threadIdx.x) / kColumnRunRows, r = int(threadIdx.x) % kColumnRunRows;
    const int64_t kg = int64_t(blockIdx.x) * groups + kk;
    if (kk < groups && kg < p.sg.cols && m0 + r < p.sg.padded_rows)
        store_scale(p.sg, p.scales + row_scale_offset(p, m0 + r, kg), runs[kk][r]);
}

}  // namespace fq::cuda
