// MoE row ranges (SPEC §5, docs/moe.md): which rows of the 2-D input/output an expert owns, from the
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

// MASKED: expert e owns rows [e * max_m, e * max_m + counts[e]) of [E * max_m] rows; counts are clamped
// to [0, max_m].
FQ_HD RowRange masked_rows(const int32_t* counts, int64_t e, int64_t max_m) {
    return RowRange{e * max_m, clamp_rows(counts[e], 0, max_m), (e + 1) * max_m};
}

}  // namespace fq
