// Skeleton 4: the columnwise output (docs/spec.md §4, docs/moe.md), and the rowwise one in the same pass.
//
// A block owns a tile of 128 rows x 128 output columns; its 8 warps take 16 rows each, and a thread 8 rows
// x 8 consecutive outputs (lane % 16 picks the 8 columns; lanes 0-15 take the warp's first 8 rows, lanes
// 16-31 the next 8). A thread's 8 rows have 8 slots of 32 bytes in shared memory, its own (thread-minor: no
// bank conflicts, no barrier):
//   0. Every row's inputs are requested at once by cp.async, each into the slot its outputs will take
//      (16-byte IO; the unaligned variants load one row ahead into registers): 256 bytes a thread in flight
//      without holding a register, where loads one row ahead left the kernel waiting on memory at 24 warps
//      an SM (docs/perf.md, session 13).
//   1. Row by row: activate, quantize rowwise right there when the rowwise output is asked for (a rowwise
//      group, at most 128 outputs, spans 16 lanes of one row, reduced with warp shuffles as in the row
//      kernels), fold into the 8 column amaxes, and park the fp32 outputs in the row's slot.
//   2. Column amax: the thread's 8 rows, the other half-warp's 8 (a shuffle), then the warps of one
//      columnwise block (16, 32 or 128 rows: 1, 2 or 8 warps) through 4 KB of shared memory.
//   3. A column's 8 parked values of a thread share a divisor: encoded as one chunk they are 8 consecutive
//      bytes of a transposed [H, M] output row; for [M, H] an 8 x 8 transpose in registers makes row chunks.
//      Block scales with hardware fp8 codes (the common case) take an unrolled path that reads each slot
//      once; the rest a rolled one (one copy of the general encoders). A block needs 68 KB of shared memory
//      and, at 80 registers a thread, 3 blocks fit an SM.
// The row loop stays rolled: unrolled, the activation code eight times over made the kernel 4-6x larger
// and its compile time 7x longer. The parked outputs live in shared memory, not local (docs/design-notes.md).
// Reading the input once for both outputs is the point: the bytes equal two separate calls.
#pragma once

#include "blocks/columns.cuh"
#include "fused_quant.cuh"

namespace fq::cuda {

// The kernel: block (tile t of run r, column tile), built from blocks/columns.cuh.
template <class S, class Io>
__global__ void __launch_bounds__(kColThreads, 3) columnwise_quant(const Params p, int64_t tiles_per_run) {
    constexpr bool kVec = Io::vector_io, kHwCvt = Io::hardware_fp8;
    extern __shared__ float4 parked_quads[];                   // [row i][half h][thread]
    __shared__ int row_expert[kColTileRows];                   // -1: row not owned (or past the run)
    __shared__ float4 warp_amax[kColWarps][kColTileCols / 4];  // column amax over each warp's 16 rows
    const ParkedSlots parked{parked_quads + threadIdx.x, kColThreads};

    wait_for_producer();
    const int64_t run = int64_t(blockIdx.x) / tiles_per_run, tile = int64_t(blockIdx.x) % tiles_per_run;
    const int64_t run_rows = run_rows_of(p), run_first = run * run_rows, r0 = run_first + tile * kColTileRows;
    const int tile_rows = int(min(int64_t(kColTileRows), run_first + run_rows - r0));
    if (p.moe == MoeLayout::Masked && tile * kColTileRows >= masked_rows(p.moe_counts, run, p.expert_rows).count) {
        let_consumer_start();  // wholly past the expert's count: nothing to read or write
        return;
    }
    if (threadIdx.x < kColTileRows)
        row_expert[threadIdx.x] = int(threadIdx.x) < tile_rows ? row_owner(p, r0 + threadIdx.x).expert : -1;
    __syncthreads();

    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32, lane16 = lane % 16;
    const int rr0 = warp * 16 + (lane / 16) * kColThreadRows;  // the thread's first row in the tile
    const int h0 = int(blockIdx.y) * kColTileCols, j0 = h0 + lane16 * 8;
    const bool col_ok = j0 < p.cols;
    const int valid = col_ok ? outputs_at<kVec>(p, j0) : 0;

    // 1. Activate, quantize rowwise, park (see the top of the file).
    unsigned active = 0;  // bit i: row rr0 + i is owned and the thread's columns exist
#pragma unroll
    for (int i = 0; i < kColThreadRows; ++i) active |= unsigned(col_ok && row_expert[rr0 + i] >= 0) << i;
    const uint16_t* in_row = p.in + (r0 + rr0) * p.in_ld;  // stepped a row at a time, not recomputed
    Raw8 cur, next;
    if constexpr (kVec) {
        // Every row's inputs requested at once, into the slots its outputs will take: 256 bytes a thread in
        // flight and no register held for them (loads one row ahead in registers left the kernel waiting
        // on memory at 24 warps an SM).
        const GatePair at = input_columns<S>(p, j0);
        const uint16_t* row = in_row;
#pragma unroll
        for (int i = 0; i < kColThreadRows; ++i, row += p.in_ld) {
            if (active >> i & 1) request_row<S>(row, at, parked, i);
            cp_async_commit();
        }
    } else {
        if (active & 1) cur = load_raw<S, kVec>(p, in_row, j0);
    }
    let_consumer_start();
    const bool mx = is_microscaling(p.scheme), per_tensor = is_per_tensor(p.scheme);
    const bool row_groups = p.rowwise && p.scheme != Scheme::PerToken;  // per-token rows: token_quant
    const float row_bound = upper_bound(p);  // the scale upper bound of rowwise and columnwise groups
    float amax[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // y = 0 in rows not owned: nothing added
#pragma unroll 1
    for (int i = 0; i < kColThreadRows; ++i) {
        if constexpr (kVec) {
            wait_for_row(i);
            cur = requested_row<S>(parked, i);
        } else {  // the next row's loads in flight while this one is activated
            in_row += p.in_ld;
            if (i + 1 < kColThreadRows && (active >> (i + 1) & 1)) next = load_raw<S, kVec>(p, in_row, j0);
        }
        const int64_t m = r0 + rr0 + i;
        float y[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        if (active >> i & 1) activate_row<S>(p, cur, m, parked, i, y);
        if (row_groups) {
            const int e = row_expert[rr0 + i];
            const RowOwner o = e >= 0 ? owned_by(p, e, m) : RowOwner{-1, 0, 0};
            const int n = active >> i & 1 ? valid : 0;
            const float s = tensor_scale_of(p, max(e, 0));
            if (mx) quantize_activated<kVec, kHwCvt, true>(p, o, m, j0, n, y, s, row_bound);
            else quantize_activated<kVec, kHwCvt, false>(p, o, m, j0, n, y, s, row_bound);
        }
#pragma unroll
        for (int c = 0; c < 8; ++c) amax[c] = fmaxf(amax[c], fabsf(y[c]));
        parked.park(i, y);
        if constexpr (!kVec) cur = next;
    }

    // 2. Column amax over the columnwise block's rows.
    const int bc = p.col_block, block_warps = bc / 16;
#pragma unroll
    for (int c = 0; c < 8; ++c) amax[c] = fmaxf(amax[c], __shfl_xor_sync(0xFFFFFFFFu, amax[c], 16));  // fmaxf: exact in any order
    if (block_warps > 1) {  // (block-uniform)
        if (lane < 16) {
            warp_amax[warp][2 * lane16] = make_float4(amax[0], amax[1], amax[2], amax[3]);
            warp_amax[warp][2 * lane16 + 1] = make_float4(amax[4], amax[5], amax[6], amax[7]);
        }
        __syncthreads();
        const int w0 = warp / block_warps * block_warps;
        for (int w = w0; w < w0 + block_warps; ++w) {
            const float4 a = warp_amax[w][2 * lane16], b = warp_amax[w][2 * lane16 + 1];
            amax[0] = fmaxf(amax[0], a.x), amax[1] = fmaxf(amax[1], a.y), amax[2] = fmaxf(amax[2], a.z);
            amax[3] = fmaxf(amax[3], a.w), amax[4] = fmaxf(amax[4], b.x), amax[5] = fmaxf(amax[5], b.y);
            amax[6] = fmaxf(amax[6], b.z), amax[7] = fmaxf(amax[7], b.w);
        }
    }
    // The block's first valid row: its expert's tensor scalars (NVFP4 S_enc). No valid row: neither data nor
    // scale of the block is written.
    const int block_first = warp / block_warps * bc;
    int block_expert = -1;
    for (int rr = block_first; rr < block_first + bc && rr < tile_rows && block_expert < 0; ++rr) block_expert = row_expert[rr];
    if (block_expert < 0 || !col_ok) return;

    // 3. The block's scales (one thread per column and block stores them) and the 8 x 8 codes.
    const ScaleStrides& col_strides = p.col_ss;
    const ColumnBlock blk{row_bound,
                          p.scheme == Scheme::Nvfp4 ? tensor_scale_of(p, block_expert) : 0.0f,
                          p.col_scales + run * p.col_sg.bytes + scale_offset(col_strides, j0, (r0 - run_first + block_first) / bc),
                          col_strides.row,
                          valid,
                          lane < 16 && warp % block_warps == 0};
    uint2 codes[8];
    bool encoded = false;
    if constexpr (hardware_fp8<kHwCvt>()) {
        // (block-uniform; a qmax override's saturation bound is applied by encode_columns)
        if (!per_tensor && (p.quant.out == DType::E4M3FN || p.quant.out == DType::E5M2) && !has_saturation_bound(p.quant))
            encoded = mx ? encode_columns_hardware<true>(p, parked, amax, blk, codes)
                         : encode_columns_hardware<false>(p, parked, amax, blk, codes);
    }
    if (!encoded) encode_columns<kHwCvt>(p, parked, amax, blk, row_expert + rr0, codes);

    // 3. Store: transposed, a column's 8 rows; else a row's 8 columns. `codes` holds rows (per-tensor) or
    // columns (block scales); one transpose where that is not the output's orientation.
    const bool fp4 = p.quant.out == DType::E2M1;
    if (per_tensor == p.col_transpose) {
        if (fp4) transpose8x8_nibbles(codes);
        else transpose8x8_bytes(codes);
    }
    if (!p.col_transpose) {  // [M, H]: row i's `valid` codes (FP4: nibble pairs)
        const int64_t ld = fp4 ? p.out_ld / 2 : p.out_ld;
        const int n = fp4 ? (valid + 1) / 2 : valid;
        uint8_t* dst = p.col_out + (r0 + rr0) * ld + (fp4 ? j0 / 2 : j0);
#pragma unroll
        for (int i = 0; i < kColThreadRows; ++i, dst += ld)
            if (active >> i & 1) store_code_bytes(dst, codes[i], n, ~0u);
        return;
    }
    // [H, run rows] per run (MASKED: [E, H, max_m]); FP4 pairs rows 2i, 2i + 1 of a column (rr0 is even): a
    // byte with one valid row has 0 in the other's nibble, one with none is not written.
    const int64_t t_ld = fp4 ? run_rows / 2 : run_rows, first = r0 - run_first + rr0;
    unsigned keep = active;  // (col_ok holds here)
    if (fp4) {
        keep = 0;
        uint32_t nibbles = 0;
#pragma unroll
        for (int i = 0; i < 8; ++i) nibbles |= (active >> i & 1 ? 0xFu : 0u) << (4 * i);
#pragma unroll
        for (int i = 0; i < 4; ++i) keep |= unsigned((active >> (2 * i) & 3) != 0) << i;
#pragma unroll
        for (int c = 0; c < 8; ++c) codes[c].x &= nibbles;
    }
    uint8_t* dst = p.col_out + (run * p.cols + j0) * t_ld + (fp4 ? first / 2 : first);
#pragma unroll
    for (int c = 0; c < 8; ++c, dst += t_ld)
        if (c < valid) store_code_bytes(dst, codes[c], fp4 ? 4 : 8, keep);
}

// Zeroes the padding slots of `blocks` scale blocks of geometry g, `block_bytes` apart: rows past the
// logical ones (every column), and, unless rows_only, the padding columns of every logical row.
__global__ void zero_scale_padding_kernel(ScaleGeometry g, uint8_t* base, int64_t blocks, int64_t cols_padded,
                                          bool rows_only);

fqStatus_t launch_zero_scale_padding(const LaunchArgs& a, const ScaleGeometry& g, uint8_t* base, int64_t blocks,
                                     bool rows_only);

// A problem with a columnwise output: the tensor amax first where the scheme needs it, per-token rows
// through token_quant, scale padding, then the tile kernel (columnwise, and rowwise groups with it).
template <Act kAct, class Arch>
fqStatus_t run_columnwise_for(const LaunchArgs& a) {
    constexpr bool kPdl = Arch::pdl;
    const OpConfig& c = a.cfg;
    const Params p = make_params(a);
    const unsigned col_tiles = unsigned(ceil_div(c.cols, int64_t(kColTileCols)));
    const bool per_tensor = is_per_tensor(c.scheme);
    return with_shape<kAct>(c, [&](auto shape) -> fqStatus_t {
        using S = decltype(shape);
        FQ_TRY((run_tensor_amax<S, Arch>(a, p, false)));
        if (c.rowwise() && c.scheme == Scheme::PerToken)
            FQ_TRY((launch_token_quant<S, Arch>(a, p)));
        if (c.rowwise() && c.scheme != Scheme::PerToken && !per_tensor)
            FQ_TRY(launch_zero_scale_padding(a, c.scales, p.scales, p.scale_blocks, true));
        if (!per_tensor) FQ_TRY(launch_zero_scale_padding(a, c.col_scales, p.col_scales, c.scale_batch, false));
        const ColumnRuns r = column_runs(c);
        const int64_t tiles_per_run = r.tiles_per_run(), runs = r.runs;
        constexpr auto kernel = columnwise_quant<S, typename Arch::Device>;
        FQ_TRY((allow_dynamic_smem<kernel, kColParkedBytes>(a)));
        if (runs * tiles_per_run > 0)
            FQ_TRY(launch_smem(kernel, dim3(unsigned(runs * tiles_per_run), col_tiles), dim3(kColThreads), kColParkedBytes, a,
                               kPdl, p, tiles_per_run));
        if (c.scheme == Scheme::PerTensorDynamic) FQ_TRY(finish_tensor_scale(a, kPdl, p));
        return FQ_STATUS_SUCCESS;
    });
}

#define FQ_FOR_EACH_COLUMNWISE_LAUNCHER(X, ACT) FQ_FOR_EACH_ARCH_POLICY(X, run_columnwise_for, ACT)

}  // namespace fq::cuda
