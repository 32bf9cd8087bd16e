// The grouped GEMM's schedule: which unit (128 rows x 128 outputs) a CTA takes, in which order, and which rows
// of it each group owns. Every warp role walks the same units in the same order, so they agree without talking.
#pragma once

#include "../../common/moe.h"
#include "params.cuh"

namespace fq::gemm {

// ---- The schedule: which unit a CTA takes, which rows of it each group owns --------------------------------

// The two CTAs of a cluster sharing A take units (t0, d0) with the same rows and neighbouring 128-column blocks
// (share_rank: 0 or 1). A CTA whose block lies past the outputs still runs the pair's pipeline (its peer needs
// its half of A). The CTAs of a split-K cluster all take the same unit (share_rank 0). g: the unit's one group
// (the segments kernel), or -1: every group owning rows of the tile.
struct Unit {
    int64_t t0, d0;
    int32_t g;
};
__device__ __forceinline__ int64_t unit_d0(const Params& p, int64_t pair, uint32_t share_rank) {
    return ((pair % p.pair_cols) * p.cluster + share_rank) * kUnitCols;
}
__device__ __forceinline__ Unit unit_of(const Params& p, int64_t pair, uint32_t share_rank) {
    return {(pair / p.pair_cols) * kTileM, unit_d0(p, pair, share_rank), -1};
}
// The unit's C tiles that hold outputs: tile t holds outputs [d0 + 64 t, + 64), so tile 1 lies past them where h
// is not a multiple of 128, and both on a CTA whose block does. A dead tile has no MMAs (the producer loads any B
// for it) and its slot passes empty.
__device__ __forceinline__ int live_tiles(const Params& p, const Unit& u) {
    return u.d0 >= p.h ? 0 : u.d0 + kHalfN >= p.h ? 1 : 2;
}

[[maybe_unused]] __device__ __forceinline__ RowRange group_rows(const Params& p, int32_t g) {
    return p.offsets ? contiguous_rows(p.offsets, p.counts, g, p.m) : RowRange{0, p.m, p.m};
}

// MoE segments. A tile holding rows of k groups costs k passes over K, so with tiles as units a static walk
// gives some CTAs several such tiles: with skewed groups the busiest cluster runs well past the average
// (docs/design-notes.md). Segments, one group's rows of one tile each, cost one pass: the walk over
// (segment, column pair) items then gives every cluster nearly the same number of passes. Segments are in group
// order, each group's tiles ascending; a cursor (group, tile) only moves forward, as a CTA's items ascend (the walk
// is common/moe.h's, tested on the host). Columnwise blocks span the groups of a tile, so columnwise outputs keep
// tiles. This moves the cursor by k segments of this GEMM's groups; false past the last.
__device__ __forceinline__ bool advance_segments(const Params& p, SegmentCursor& c, int64_t k) {
    return advance_segments(p.offsets, p.counts, p.groups, p.m, kTileM, c, k);
}

// Every role walks the same units in the same order; the loop over items (one per cluster of `ctas`: a column
// pair of a tile, or with kSegments of a segment) is written once, here. body(unit, last): with kLast, `last`
// marks this CTA's last unit (the epilogue's consumers join it), found by stepping ahead before the body; without
// it, false, and the step follows the body (the consumers keep fewer registers across their K loop). One call of
// body: each role's body is long (the consumers' is their K loop).
template <bool kSegments, bool kLast = false, class Body>
__device__ __forceinline__ void for_each_unit(const Params& p, int ctas, uint32_t share_rank, Body&& body) {
    const int64_t pairs = p.m_tiles * p.pair_cols, step = gridDim.x / ctas;
    int64_t pair = blockIdx.x / ctas;
    SegmentCursor at{-1, 0};  // segments: the cursor at segment pair / pair_cols
    bool more = kSegments ? advance_segments(p, at, pair / p.pair_cols) : pair < pairs;
    while (more) {
        const Unit u = kSegments ? Unit{int64_t(at.tile) * kTileM, unit_d0(p, pair, share_rank), at.g}
                                 : unit_of(p, pair, share_rank);
        const int64_t next = pair + step;
        auto step_on = [&] {
            more = kSegments ? advance_segments(p, at, next / p.pair_cols - pair / p.pair_cols) : next < pairs;
        };
        if constexpr (kLast) step_on();
        body(u, kLast && !more);
        if constexpr (!kLast) step_on();
        pair = next;
    }
}

// Calls visit(g, lo, hi) for each group with valid rows [lo, hi) inside unit u's rows [t0, t0 + 128), in group
// order: its one group (segments), or every group owning rows of its tile. All roles call it alike, so they agree
// on the work without talking. Offsets are non-decreasing (docs/moe.md); if they are not, some rows may be
// skipped, never read or written out of bounds. One call of visit (the consumers' is their K loop).
template <class Visit>
__device__ __forceinline__ void for_each_group_in_unit(const Params& p, const Unit& u, Visit&& visit) {
    const int64_t t1 = min(u.t0 + kTileM, p.m);
    int32_t g = u.g < 0 ? 0 : u.g;
    const int32_t g_end = u.g < 0 ? p.groups : u.g + 1;
    if (u.g < 0 && p.offsets) {  // the first group whose slot ends past t0
        int32_t hi = p.groups;
        while (g < hi) {
            const int32_t mid = (g + hi) / 2;
            if (clamp_rows(p.offsets[mid + 1], 0, p.m) > u.t0) hi = mid; else g = mid + 1;
        }
    }
    for (; g < g_end; ++g) {
        const RowRange r = group_rows(p, g);
        if (r.first >= t1) break;
        const int64_t lo = max(r.first, u.t0), hi = min(r.first + r.count, t1);
        if (lo < hi) visit(g, lo, hi);
    }
}

// B rows (within a group's N) of the "first" and "second" 64 columns of the C tile holding outputs [d, d+64).
struct BoxRows {
    int64_t first, second;
};
template <Pairing P>
__device__ __forceinline__ BoxRows box_rows(const Params& p, int64_t d) {
    if constexpr (P == Pairing::Halves) {
        if (p.gate == GateLayout::Split) return {d, p.h + d};
        const int64_t b = p.gate_block, first = (d / b) * 2 * b + d % b;
        return {first, first + b};
    } else {
        return {2 * d, 2 * d + kHalfN};
    }
}


#ifdef FQ_SM90A

// Rows of a unit some group owns, as a 128-bit mask (four registers; selects rather than an indexed array,
// which would live in local memory).
struct RowMask {
    uint32_t w0 = 0, w1 = 0, w2 = 0, w3 = 0;
    __device__ __forceinline__ void add(int lo, int hi) {  // rows [lo, hi) of the unit
        uint32_t* w[4] = {&w0, &w1, &w2, &w3};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int a = max(lo, 32 * i), b = min(hi, 32 * i + 32);
            if (a < b) *w[i] |= (b - a == 32 ? ~0u : ((1u << (b - a)) - 1)) << (a - 32 * i);
        }
    }
    __device__ __forceinline__ bool operator[](int r) const {
        const uint32_t w = r < 64 ? (r < 32 ? w0 : w1) : (r < 96 ? w2 : w3);
        return w >> (r % 32) & 1;
    }
};

// The rows of unit u some group owns, those in [lo, hi) (the rows this CTA finishes) into `valid`; false if
// there are none (then no role touches the unit's slots). valid_all, if given, gets all of them.
__device__ __forceinline__ bool unit_rows(const Params& p, const Unit& u, int lo, int hi, RowMask& valid,
                                          RowMask* valid_all = nullptr) {
    bool any = false;
    for_each_group_in_unit(p, u, [&](int32_t, int64_t first, int64_t end) {
        any = true;
        valid.add(max(int(first - u.t0), lo), min(int(end - u.t0), hi));
        if (valid_all) valid_all->add(int(first - u.t0), int(end - u.t0));
    });
    return any;
}

#endif  // FQ_SM90A

}  // namespace fq::gemm
