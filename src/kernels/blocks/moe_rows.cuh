// MoE row ownership (docs/spec.md §5, docs/moe.md): which expert owns a row, read from the caller's
// device arrays and clamped by the rules of src/common/moe.h, and the loop over a block's owned rows.
#pragma once

#include "params.cuh"

namespace fq::cuda {

// ---- Which expert owns a row (docs/spec.md §5) ---------------------------------------------------------------
struct RowOwner {
    int expert;           // -1: no expert owns the row; it is neither read nor written
    int64_t scale_row;    // the row's index in its scale block (MASKED: within the expert)
    int64_t block;        // byte offset of its row-scale block in p.scales (an offset, not a pointer: in the
                          // plain kernel it is the constant 0 and costs no register)
    int64_t same_until = 0;  // the rows after this one up to here have the same owner (or, expert -1, none),
                             // their scale rows counting on from this one's
};

// Row r as expert e's: its row in e's scale block (MASKED: counted from the expert's first row) and that
// block's byte offset.
__device__ __forceinline__ RowOwner owned_by(const Params& p, int e, int64_t r) {
    return {e, p.moe == MoeLayout::Masked ? r - e * p.expert_rows : r, e * p.scale_block_bytes};
}

__device__ __forceinline__ RowOwner row_owner(const Params& p, int64_t r) {
    if (p.moe == MoeLayout::Masked) {
        const int e = int(unsigned(r) / unsigned(p.expert_rows));  // rows < 2^31 (refuse_common); 64-bit: ~70 instructions
        const RowRange range = masked_rows(p.moe_counts, e, p.expert_rows);
        RowOwner o = owned_by(p, e, r);
        const bool owned = o.scale_row < range.count;  // past the count, the rest of the expert's slot is unowned
        o.expert = owned ? e : -1;
        o.same_until = owned ? range.first + range.count : range.slot_end;
        return o;
    }
    if (p.moe == MoeLayout::Contiguous) {
        // The last expert whose clamped first row is <= r (offsets are non-decreasing, docs/moe.md; with
        // decreasing ones the owner of a row claimed twice is unspecified, and nothing is touched outside
        // the buffers either way).
        int lo = 0, hi = p.experts;
        while (hi - lo > 1) {
            const int mid = (lo + hi) / 2;
            if (clamp_rows(p.moe_offsets[mid], 0, p.rows) <= r) lo = mid;
            else hi = mid;
        }
        const RowRange range = contiguous_rows(p.moe_offsets, p.moe_counts, lo, p.rows);
        const bool owned = r >= range.first && r < range.first + range.count;
        if (owned) return {lo, r, 0, range.first + range.count};
        // Unowned: before the first expert's rows, or past lo's count up to its slot's end (past the last
        // expert's count: every row left). One lookup for the whole run: a buffer sized for the most tokens
        // ends in a long unowned tail, which a lookup per row would walk row by row (docs/design-notes.md).
        const int64_t next = r < range.first ? range.first : lo + 1 < p.experts ? range.slot_end : p.rows;
        return {-1, r, 0, next > r + 1 ? next : r + 1};
    }
    return {0, r, 0, p.rows};
}

// The rows of block row bx that some expert owns, each with its owner: row(owner, r). Several rows a block
// for MoE problems (p.rows_per_block, set at launch): a skewed MASKED problem is half unowned rows, and a
// block per row launched ~2x more blocks than did work (the block launch rate then bounds the kernel); each
// block looks its owners up once a run of rows, not once a row (a lookup is one or more dependent loads
// before the row's own: one row a block spends most of its time waiting on them, docs/design-notes.md).
// Unowned runs are skipped at once. One row a block (every other problem: small batches, where the time is
// one thread's latency) takes the straight path, without the loop.
template <class RowFn>
__device__ __forceinline__ void for_each_owned_row(const Params& p, int64_t bx, RowFn&& row) {
    if (p.rows_per_block == 1) {
        const RowOwner o = row_owner(p, bx);
        if (o.expert >= 0) row(o, bx);
        return;
    }
    // 32-bit row indices: refuse_common keeps rows below 2^31. The owner of rows [.., same_until) (expert -1:
    // none); a row's scale row and block come from the expert (owned_by). (Under the 40-register bound ptxas
    // keeps two words of this loop state in local memory: a few L1 loads a row, against ~400 instructions.)
    const int first = int(bx * p.rows_per_block), last = int(min(bx * p.rows_per_block + p.rows_per_block, p.rows));
    int expert = -1, same_until = first;
    for (int b = first; b < last; ++b) {
        if (b >= same_until) {
            const RowOwner o = row_owner(p, b);
            expert = o.expert, same_until = int(o.same_until);
        }
        if (expert < 0) {  // (block-uniform) skip the unowned run
            b = same_until - 1;
            continue;
        }
        row(owned_by(p, expert, b), int64_t(b));
    }
}

}  // namespace fq::cuda
