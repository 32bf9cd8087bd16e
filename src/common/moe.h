// MoE row ranges (docs/spec.md §5, docs/moe.md): which rows of the 2-D input/output an expert owns, from the
// caller's device arrays. Those arrays cannot be validated without a host synchronisation, so every
// value is clamped into the buffers here, once, for the host reference and the kernels alike: no value
// of offsets[] or counts[] makes any backend read or write outside the caller's buffers.
#pragma once

#include <cstdint>

#include "hd.h"

namespace fq {

struct RowRange {
    int64_t first = 0, count = 0;  // rows [first, first + count) of the 2-D layouts
    int64_t slot_end = 0;          // the end of the expert's slot: rows [first + count, slot_end) are its padding
};

FQ_HD int64_t clamp_rows(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// CONTIGUOUS: expert e owns [offsets[e], offsets[e+1]) of `rows` stacked rows; with counts (optional),
// only the first counts[e] rows of that slot are valid and the rest of the slot is padding. Offsets are
// clamped to [0, rows] and a slot that would end before it starts is empty.
FQ_HD RowRange contiguous_rows(const int32_t* offsets, const int32_t* counts, int64_t e, int64_t rows) {
    const int64_t lo = clamp_rows(offsets[e], 0, rows);
    const int64_t hi = clamp_rows(offsets[e + 1], lo, rows);
    const int64_t n = counts ? clamp_rows(counts[e], 0, hi - lo) : hi - lo;
    return RowRange{lo, n, hi};
}

// Segments of CONTIGUOUS experts: expert e's rows of one tile of the stacked rows (tiles of tile_rows rows,
// anchored at multiples of it), in expert order, each expert's tiles ascending. The grouped GEMM's kernel takes
// them as its units of work (src/kernels/gemm/scheduler.cuh: one pass over K each); a cursor (expert,
// tile) walks them forward without a table.
struct SegmentCursor {
    int32_t g, tile;  // {-1, 0}: before the first segment
};

// The tiles [first, end) that expert e's valid rows touch (first == end: none).
FQ_HD void contiguous_tiles(const int32_t* offsets, const int32_t* counts, int32_t e, int64_t rows, int32_t tile_rows,
                            int32_t& first, int32_t& end) {
    const RowRange r = contiguous_rows(offsets, counts, e, rows);
    first = int32_t(r.first / tile_rows);
    end = r.count > 0 ? int32_t((r.first + r.count + tile_rows - 1) / tile_rows) : first;
}

// Moves c by k >= 0 segments of `experts` experts (from {-1, 0}: onto segment k); false past the last.
FQ_HD bool advance_segments(const int32_t* offsets, const int32_t* counts, int32_t experts, int64_t rows,
                            int32_t tile_rows, SegmentCursor& c, int64_t k) {
    int32_t first = 0, end = 0;  // c.g < 0: an empty expert before expert 0
    if (c.g >= 0) contiguous_tiles(offsets, counts, c.g, rows, tile_rows, first, end);
    while (c.tile + k >= end) {  // past expert c.g: its end - tile segments from here reach the next one's first
        k -= end - c.tile;
        do {
            if (++c.g >= experts) return false;
            contiguous_tiles(offsets, counts, c.g, rows, tile_rows, first, end);
        } while (first == end);
        c.tile = first;
    }
    c.tile += int32_t(k);
    return true;
}

// MASKED: expert e owns rows [e * max_m, e * max_m + counts[e]) of [E * max_m] rows; counts are clamped
// to [0, max_m].
FQ_HD RowRange masked_rows(const int32_t* counts, int64_t e, int64_t max_m) {
    return RowRange{e * max_m, clamp_rows(counts[e], 0, max_m), (e + 1) * max_m};
}

}  // namespace fq
