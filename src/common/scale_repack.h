// Scale repack (fqScaleRepack): for every scale a destination buffer stores, where the source stores the
// same logical scale S_b[r, k] (batch b, row r, group k), or that none exists and the byte is 0. Written
// once for the host backend and the CUDA kernel, so both write the same bytes whatever the row offsets.
#pragma once

#include <cstdint>

#include "hd.h"
#include "scale_layout.h"

namespace fq {

enum class RepackBatching : int32_t { Blocks = 0, StackedToBlocks = 1, BlocksToStacked = 2 };

// One side of a repack: `blocks` consecutive buffers of geometry `g`; a stacked side is one block whose
// rows are every batch's rows, delimited by the row offsets.
struct RepackSide {
    ScaleGeometry g;
    int64_t blocks = 0;
    bool stacked = false;
    const char* name = "";  // "src" or "dst", for messages
    int64_t bytes() const { return g.bytes * blocks; }
};

// A validated repack (src/api checks every extent against 64-bit overflow before building one).
struct RepackPlan {
    int64_t batch = 0, rows = 0;       // batches, and rows of one per-batch block
    int64_t scale_bytes = 1;           // 4 for fp32, else 1
    const int32_t* offsets = nullptr;  // batch + 1 row offsets into the stacked side, or NULL
    RepackSide src, dst;
};

// The batch b and row r within it of row `row` of a stacked destination: the last b whose offset is at or
// below `row` (binary search, so an empty batch is skipped), if its rows reach `row` and r < rows.
FQ_HD bool batch_of_stacked_row(const RepackPlan& p, int64_t row, int64_t* b, int64_t* r) {
    if (p.batch == 0) return false;
    int64_t lo = 0, hi = p.batch;
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (int64_t(p.offsets[mid]) <= row) lo = mid;
        else hi = mid;
    }
    const int64_t start = p.offsets[lo], end = p.offsets[lo + 1];
    if (row < start || row >= end || row - start >= p.rows) return false;
    *b = lo;
    *r = row - start;
    return true;
}

// Byte offset in the source of the scale the destination stores at byte `offset` (a multiple of
// scale_bytes below dst.bytes()), or -1: the destination holds 0 there.
FQ_HD int64_t repack_source(const RepackPlan& p, int64_t offset) {
    const int64_t block = offset / p.dst.g.bytes;
    const ScaleIndex at = scale_at_offset(p.dst.g, offset - block * p.dst.g.bytes);
    if (!at.valid) return -1;  // layout padding
    int64_t b = block, r = at.m;
    if (p.dst.stacked && !batch_of_stacked_row(p, at.m, &b, &r)) return -1;  // a row of no batch
    int64_t src_block = b, src_row = r;
    if (p.src.stacked) {
        // Differences in 64 bits: int32 offsets may be anything the caller wrote.
        if (r >= int64_t(p.offsets[b + 1]) - int64_t(p.offsets[b])) return -1;  // past the batch's rows
        src_block = 0;
        src_row = int64_t(p.offsets[b]) + r;
        if (src_row < 0 || src_row >= p.src.g.rows) return -1;
    }
    return src_block * p.src.g.bytes + scale_offset(p.src.g, src_row, at.k);
}

}  // namespace fq
