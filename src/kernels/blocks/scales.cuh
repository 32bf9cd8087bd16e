// Storing scales: one scale into any docs/spec.md §4 layout, the layout's column padding of a row, and
// the padding rows past the logical ones (zeros), written by the blocks past the rows.
#pragma once

#include "moe_rows.cuh"
#include "params.cuh"

namespace fq::cuda {

// One scale: an E8M0 byte (a power of two) or an fp32.
__device__ __forceinline__ void store_scale(const ScaleGeometry& g, uint8_t* dst, float s) {
    if (g.type == DType::E8M0) *dst = e8m0_of_pow2(s);
    else *reinterpret_cast<float*>(dst) = s;
}

// scale_offset(p.ss, m, k) in 32-bit arithmetic wherever every offset of a row-scale block fits (short of a
// 4 GB scale buffer, always; see scale_offset_as): a 64-bit product costs two or three instructions, and this
// runs for every tile.
__device__ __forceinline__ int64_t row_scale_offset(const Params& p, int64_t m, int64_t k) {
    if (!p.scale_offsets_fit_32) return scale_offset(p.ss, m, k);
    return scale_offset_as<uint32_t>(p.ss, uint32_t(m), uint32_t(k));
}

// The layout's column padding of row m (SWIZZLED_128X4 pads to 4 columns, PACKED_UE8M0 to 4 per word):
// zero, written by the thread that writes the row's last scale. Only byte scales have column padding.
__device__ __forceinline__ void zero_scale_padding(const Params& p, uint8_t* block, int64_t m, int64_t k) {
    // 32-bit compares: a row has fewer than 2^26 outputs, so fewer scale columns (refuse_common).
    if (int(p.scale_cols_padded) == int(p.sg.cols) || int(k) != int(p.sg.cols) - 1) return;
    for (int64_t c = p.sg.cols; c < p.scale_cols_padded; ++c) block[row_scale_offset(p, m, c)] = 0;
}

// Padding row v of all row-scale blocks (v < scale_blocks x padded rows past the logical ones): its block
// and its row in the block.
// 32-bit division: a block pads at most 127 rows and refuse_common bounds the total (a 64-bit division here
// costs the whole kernel registers).
__device__ __forceinline__ RowOwner padding_row(const Params& p, int64_t v) {
    const int per_block = int(p.sg.padded_rows - p.sg.rows), i = int(v);
    return {0, p.sg.rows + i % per_block, int64_t(i / per_block) * p.sg.bytes};
}

// Scale slot (m, k) of a padding row (past the block's logical rows) written as zero, and the row's column
// padding with it.
template <bool kMx>
__device__ __forceinline__ void zero_scale_slot(const Params& p, const RowOwner& o, int64_t k) {
    uint8_t* dst = p.scales + o.block + row_scale_offset(p, o.scale_row, k);
    if (kMx) *dst = 0;
    else store_scale(p.sg, dst, 0.0f);
    zero_scale_padding(p, p.scales + o.block, o.scale_row, k);
}

// Padding rows of all row-scale blocks, in blocks of this many rows per CUDA block: a swizzled layout pads
// one row to 128, which would otherwise be 127 blocks per column tile at T = 1.
constexpr int64_t kPadRowsPerBlock = 16;

__host__ __device__ inline int64_t padding_rows_total(const Params& p) {
    return is_per_tensor(p.scheme) ? 0 : p.scale_blocks * (p.sg.padded_rows - p.sg.rows);
}

// The blocks (of kPadRowsPerBlock rows) that zero them, after a grid's row blocks.
__host__ __device__ inline int64_t padding_blocks(const Params& p) { return ceil_div(padding_rows_total(p), kPadRowsPerBlock); }

// Whether four consecutive byte scales of a row, from a column divisible by 4, are one aligned 32-bit word of the
// buffer, and every row's columns pad to a multiple of 4 (SWIZZLED_128X4, PACKED_UE8M0): then padding rows are
// zeroed a word at a time (a swizzled layout pads one row to 128, which at small T is most of a call's stores).
__device__ __forceinline__ bool words_of_four(const Params& p) {
    return scale_type_bytes(p.sg.type) == 1 && p.ss.col == 1 && p.scale_cols_padded % 4 == 0 &&
           (reinterpret_cast<uintptr_t>(p.scales) & 3) == 0;
}

// Padding rows [first, last) of block row b (past the logical rows, kPadRowsPerBlock rows a block) x the
// groups of the column tile that starts at output column j_tile, spread over the block's threads.
template <bool kMx>
__device__ __forceinline__ void zero_padding_rows(const Params& p, int64_t b, int j_tile, int tile_outputs) {
    const int64_t first = (b - p.rows) * kPadRowsPerBlock;
    const int64_t total = padding_rows_total(p);
    const int64_t last = first + kPadRowsPerBlock < total ? first + kPadRowsPerBlock : total;
    const int64_t k0 = int64_t(j_tile) >> p.group_shift;
    const int tile_groups = tile_outputs >> p.group_shift;  // 32-bit index math: at most 16 x 128 slots
    const int groups = p.sg.cols - k0 < tile_groups ? int(p.sg.cols - k0) : tile_groups;
    if (kMx && words_of_four(p) && (k0 & 3) == 0) {
        // A word of four scales at a time; the row's last word covers the layout's column padding.
        const int words = (groups + 3) / 4;
        for (int i = int(threadIdx.x); i < int(last - first) * words; i += int(blockDim.x)) {
            const RowOwner o = padding_row(p, first + i / words);
            *reinterpret_cast<uint32_t*>(p.scales + o.block + row_scale_offset(p, o.scale_row, k0 + 4 * (i % words))) = 0;
        }
        return;
    }
    for (int i = int(threadIdx.x); i < int(last - first) * groups; i += int(blockDim.x))
        zero_scale_slot<kMx>(p, padding_row(p, first + i / groups), k0 + i % groups);
}

}  // namespace fq::cuda
