// Skeleton 4: the columnwise output (SPEC §4, docs/moe.md), and the rowwise one in the same pass.
//
// A block owns a tile of Bc rows (the columnwise block: 16, 32 or 128) x 128 output columns:
//   1. 16 lanes x 8 outputs cover one row of the tile; 16 rows per pass. Each lane activates its 8 outputs
//      once, quantizes them rowwise right there when the rowwise output is asked for (a rowwise group of at
//      most 128 never leaves the tile), and parks y in shared memory.
//   2. Two threads per column reduce the column's amax over the tile's valid rows, derive its scale, and
//      encode 8 rows at a time (the same quantize8 / encode8 as the row kernels) into a code tile.
//   3. The block stores the code tile: [M, H] rows, or [H, M] columns when transposed, 16 bytes at a time
//      where the destination allows, bytes of rows no expert owns left untouched.
// Reading the input once for both outputs is the point: the bytes equal two separate calls.
#pragma once

#include "fused_quant.cuh"

namespace fq::cuda {

constexpr int kColThreads = 256;
constexpr int kColTileCols = 128;                     // 16 lanes x 8 outputs
constexpr int kColRowsPerPass = kColThreads / 16;     // rows of phase 1 per pass
constexpr int kColMaxBlock = 128;                     // the largest columnwise block
constexpr int kYStride = kColTileCols + 4;            // floats per parked row (16-byte aligned rows)

// Dynamic shared memory of one block: parked y, then the code tile.
inline size_t columnwise_smem_bytes(int block, bool transpose) {
    const size_t codes = transpose ? size_t(kColTileCols) * size_t(block + 4) : size_t(block) * (kColTileCols + 4);
    return size_t(block) * kYStride * sizeof(float) + codes;
}

// The rows of the 2-D layout whose columnwise blocks count from their first row: each MASKED expert's
// max_m rows, else all rows.
__device__ __forceinline__ int64_t run_rows_of(const Params& p) {
    return p.moe == MoeLayout::Masked ? p.expert_rows : p.rows;
}

// Up to 16 bytes of the code tile to global memory: one 16-byte store where the destination is aligned
// and every byte is to be written, else byte by byte, skipping bytes whose `keep` bit is clear.
__device__ __forceinline__ void store_chunk(uint8_t* dst, const uint8_t (&bytes)[16], int n, unsigned keep) {
    const unsigned all = (1u << n) - 1;  // n <= 16
    if (n == 16 && (keep & all) == all && (reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
        uint4 w;
        memcpy(&w, bytes, 16);
        *reinterpret_cast<uint4*>(dst) = w;
        return;
    }
    for (int i = 0; i < n; ++i)
        if (keep >> i & 1) dst[i] = bytes[i];
}

template <class S, bool kVec, bool kHwCvt>
__global__ void __launch_bounds__(kColThreads) columnwise_quant(const Params p, int64_t blocks_per_run) {
    extern __shared__ float4 smem_float4[];
    float* parked = reinterpret_cast<float*>(smem_float4);  // [Bc][kYStride]
    const int bc = p.col_block;
    uint8_t* codes = reinterpret_cast<uint8_t*>(parked + bc * kYStride);
    const int code_ld = p.col_transpose ? bc + 4 : kColTileCols + 4;  // codes[h][row] or codes[row][h]
    __shared__ int row_expert[kColMaxBlock];                      // -1: row not owned (or past the run)
    __shared__ float half_amax[2][kColTileCols];

    wait_for_producer();
    const int64_t run = int64_t(blockIdx.x) / blocks_per_run, b = int64_t(blockIdx.x) % blocks_per_run;
    const int64_t run_rows = run_rows_of(p), run_first = run * run_rows, r0 = run_first + b * bc;
    const int tile_rows = int(min(int64_t(bc), run_first + run_rows - r0));
    const int h0 = int(blockIdx.y) * kColTileCols;
    if (p.moe == MoeLayout::Masked && b * bc >= masked_rows(p.moe_counts, run, p.expert_rows).count) {
        let_consumer_start();  // wholly past the expert's count: nothing to read or write
        return;
    }

    // 1. Activate (and quantize rowwise), park y.
    const int lane16 = int(threadIdx.x) % 16;
    const int j0 = h0 + lane16 * 8;
    const bool col_ok = j0 < p.cols;
    const int valid = col_ok ? outputs_at<kVec>(p, j0) : 0;
    const bool row_groups = p.rowwise && p.scheme != Scheme::PerToken;  // per-token rows: token_quant
    const float bound = upper_bound(p);
    for (int rr = int(threadIdx.x) / 16; rr < bc; rr += kColRowsPerPass) {  // the same trip count in every lane
        const int64_t m = r0 + rr;
        const RowOwner o = rr < tile_rows ? row_owner(p, m) : RowOwner{-1, 0, 0};
        const bool active = col_ok && o.expert >= 0;
        float y[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        if (active) activate8<S>(p, load_raw<S, kVec>(p, m, j0), m, y);
        if (lane16 == 0) row_expert[rr] = o.expert;
        if (row_groups) {
            const float t = tensor_scale_of(p, o.expert < 0 ? 0 : o.expert);
            if (is_microscaling(p.scheme)) quantize_activated<kVec, kHwCvt, true>(p, o, m, j0, active ? valid : 0, y, t, bound);
            else quantize_activated<kVec, kHwCvt, false>(p, o, m, j0, active ? valid : 0, y, t, bound);
        }
        float4* dst = reinterpret_cast<float4*>(parked + rr * kYStride + lane16 * 8);
        dst[0] = make_float4(y[0], y[1], y[2], y[3]);
        dst[1] = make_float4(y[4], y[5], y[6], y[7]);
    }
    let_consumer_start();
    __syncthreads();

    // 2. Column amax over the valid rows (two halves of Bc/2 rows per column), scale, codes.
    int block_expert = -1;  // the expert of the tile's first valid row: its tensor scalars (NVFP4 S_enc)
    for (int rr = 0; rr < tile_rows && block_expert < 0; ++rr) block_expert = row_expert[rr];
    if (block_expert < 0) return;  // no valid row: neither data nor scale of this block is written
    const int hl = int(threadIdx.x) % kColTileCols, half = int(threadIdx.x) / kColTileCols;
    const int64_t h = h0 + hl;
    const int half_rows = bc / 2, first_row = half * half_rows;
    float a = 0.0f;
    for (int rr = first_row; rr < first_row + half_rows; ++rr)
        if (row_expert[rr] >= 0) a = fmaxf(a, fabsf(parked[rr * kYStride + hl]));
    half_amax[half][hl] = a;
    __syncthreads();
    a = fmaxf(half_amax[0][hl], half_amax[1][hl]);  // fmaxf of amaxes: exact, in any order

    const bool mx = is_microscaling(p.scheme), per_tensor = is_per_tensor(p.scheme);
    uint8_t* scale_block = p.col_scales + run * p.col_sg.bytes;
    float s = 0.0f, mul = 1.0f;
    if (mx) {
        const uint8_t sbyte = microscale<kHwCvt>(p, a, tensor_scale_of(p, block_expert), mul);
        if (h < p.cols && half == 0) scale_block[scale_offset(p.col_sg, h, b)] = sbyte;
    } else if (!per_tensor) {
        s = group_scale(a, bound, p.quant);
        if (h < p.cols && half == 0) store_scale(p.col_sg, scale_block + scale_offset(p.col_sg, h, b), s);
    }
    const Divisor d = divisor_of(s, p.quant);
    for (int i0 = first_row; i0 < first_row + half_rows; i0 += 8) {
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = parked[(i0 + i) * kYStride + hl];
        uint8_t c[8];
        if (per_tensor) {  // no block: each element with its own row's tensor scale
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float t = tensor_scale_of(p, max(row_expert[i0 + i], 0));
                c[i] = quantize_value(v[i], t, 1.0f / t, p.quant);
            }
        } else {
            uint2 w;
            if (mx) {
#pragma unroll
                for (int i = 0; i < 8; ++i) v[i] *= mul;
                w = encode8<kHwCvt>(v, p.quant.out);
            } else {
                w = quantize8<kHwCvt>(v, a, d, p.quant);
            }
            const bool fp4 = p.quant.out == DType::E2M1;  // encode8 packs nibbles; one code per byte here
#pragma unroll
            for (int i = 0; i < 8; ++i)
                c[i] = fp4 ? uint8_t(w.x >> (4 * i) & 0xF) : uint8_t((i < 4 ? w.x : w.y) >> (8 * (i % 4)));
        }
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int rr = i0 + i;
            codes[p.col_transpose ? hl * code_ld + rr : rr * code_ld + hl] = c[i];
        }
    }
    __syncthreads();

    // 3. Store the code tile.
    const bool fp4 = p.quant.out == DType::E2M1;
    const int tile_cols = int(min(int64_t(kColTileCols), int64_t(p.cols) - h0));
    if (!p.col_transpose) {  // [M, H]: row rr's tile_cols codes (FP4: pairs of columns in a byte)
        const int row_bytes = fp4 ? tile_cols / 2 : tile_cols, chunks = (row_bytes + 15) / 16;
        const int64_t ld = fp4 ? p.out_ld / 2 : p.out_ld;
        for (int item = int(threadIdx.x); item < tile_rows * chunks; item += kColThreads) {
            const int rr = item / chunks, c0 = (item % chunks) * 16;
            if (row_expert[rr] < 0) continue;
            const int n = min(16, row_bytes - c0);
            uint8_t bytes[16];
            for (int i = 0; i < n; ++i) {
                const uint8_t* src = codes + rr * code_ld;
                bytes[i] = fp4 ? uint8_t((src[2 * (c0 + i)] & 0xF) | (src[2 * (c0 + i) + 1] << 4)) : src[c0 + i];
            }
            store_chunk(p.col_out + (r0 + rr) * ld + (fp4 ? h0 / 2 : h0) + c0, bytes, n, ~0u);
        }
        return;
    }
    // [H, run rows] per run (MASKED: [E, H, max_m]); FP4 pairs rows 2i, 2i+1 of a column (blocks start at
    // even rows: Bc and the run are even).
    const int64_t t_ld = fp4 ? run_rows / 2 : run_rows;
    const int col_bytes = fp4 ? (tile_rows + 1) / 2 : tile_rows, chunks = (col_bytes + 15) / 16;
    for (int item = int(threadIdx.x); item < tile_cols * chunks; item += kColThreads) {
        const int c = item / chunks, c0 = (item % chunks) * 16;
        const int n = min(16, col_bytes - c0);
        const uint8_t* src = codes + c * code_ld;
        uint8_t bytes[16];
        unsigned keep = 0;
        for (int i = 0; i < n; ++i) {
            if (fp4) {
                const int rr = 2 * (c0 + i);
                const bool v0 = row_expert[rr] >= 0, v1 = rr + 1 < tile_rows && row_expert[rr + 1] >= 0;
                bytes[i] = uint8_t((v0 ? src[rr] & 0xF : 0) | (v1 ? (src[rr + 1] & 0xF) << 4 : 0));
                keep |= unsigned(v0 || v1) << i;
            } else {
                bytes[i] = src[c0 + i];
                keep |= unsigned(row_expert[c0 + i] >= 0) << i;
            }
        }
        uint8_t* dst = p.col_out + (run * p.cols + h0 + c) * t_ld + (fp4 ? (r0 - run_first) / 2 : r0 - run_first);
        store_chunk(dst + c0, bytes, n, keep);
    }
}

// Zeroes the padding slots of `blocks` scale blocks of geometry g, `block_bytes` apart: rows past the
// logical ones (every column), and, unless rows_only, the padding columns of every logical row.
__global__ void zero_scale_padding_kernel(ScaleGeometry g, uint8_t* base, int64_t blocks, int64_t cols_padded,
                                          bool rows_only);

fqStatus_t launch_zero_scale_padding(const LaunchArgs& a, const ScaleGeometry& g, uint8_t* base, int64_t blocks,
                                     bool rows_only);

// A problem with a columnwise output: the tensor amax first where the scheme needs it, per-token rows
// through token_quant, scale padding, then the tile kernel (columnwise, and rowwise groups with it).
template <Act kAct, bool kVec, bool kHwCvt, bool kPdl>
fqStatus_t run_columnwise_for(const LaunchArgs& a) {
    const OpConfig& c = a.cfg;
    const Params p = make_params(a);
    const unsigned col_tiles = unsigned(ceil_div(c.cols, int64_t(kColTileCols)));
    const bool per_tensor = is_per_tensor(c.scheme);
    return with_shape<kAct>(c, [&](auto shape) -> fqStatus_t {
        using S = decltype(shape);
        FQ_TRY((run_tensor_amax<S, kVec, kPdl>(a, p, false)));
        if (c.rowwise() && c.scheme == Scheme::PerToken)
            FQ_TRY(launch(token_quant<S, kVec, kHwCvt>, dim3(unsigned(c.rows + padding_rows_total(p))), dim3(kTokenThreads),
                          a, kPdl, p));
        if (c.rowwise() && c.scheme != Scheme::PerToken && !per_tensor)
            FQ_TRY(launch_zero_scale_padding(a, c.scales, p.scales, p.scale_blocks, true));
        if (!per_tensor) FQ_TRY(launch_zero_scale_padding(a, c.col_scales, p.col_scales, c.scale_batch, false));
        const int64_t run_rows = c.moe == MoeLayout::Masked ? c.expert_rows : c.rows;
        const int64_t blocks_per_run = ceil_div(run_rows, c.col_block);
        const int64_t runs = c.moe == MoeLayout::Masked ? c.num_experts : 1;
        const size_t smem = columnwise_smem_bytes(int(c.col_block), c.col_transpose);
        const auto kernel = columnwise_quant<S, kVec, kHwCvt>;
        if (smem > 48 * 1024 &&
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)) != cudaSuccess)
            return fail(FQ_STATUS_CUDA_ERROR, "cudaFuncSetAttribute (dynamic shared memory {} bytes) failed", smem);
        if (runs * blocks_per_run > 0)
            FQ_TRY(launch_smem(kernel, dim3(unsigned(runs * blocks_per_run), col_tiles), dim3(kColThreads), smem, a, kPdl,
                               p, blocks_per_run));
        if (c.scheme == Scheme::PerTensorDynamic) FQ_TRY(finish_tensor_scale(a, kPdl, p));
        return FQ_STATUS_SUCCESS;
    });
}

#define FQ_FOR_EACH_COLUMNWISE_LAUNCHER(X, ACT) FQ_FOR_EACH_ARCH_CONFIG(X, run_columnwise_for, ACT)

}  // namespace fq::cuda
