// The grouped GEMM's epilogue over a unit: its rows from the two C-tile slots (C out, y, y out, rowwise codes and
// scales; the lean path for the common case), the scale padding, and the columnwise blocks.
#pragma once

#include "epilogue.cuh"

namespace fq::gemm {

#ifdef FQ_SM90A

// Where one epilogue lane's outputs of a unit go, at the unit's first row (row r adds r times the row stride):
// computed once a unit, so each row costs an add, not the 64-bit products of a full address. nullptr: not
// written by this lane (not asked for, or past the outputs). `in`: the lane's four outputs exist.
struct LaneOut {
    uint16_t* c;    // its eight C columns of tile lane / 16
    uint16_t* d;    // its four y
    uint8_t* q;     // its four rowwise codes
    uint8_t* scale; // its group's rowwise scale (one lane of the group writes it)
    bool in;
};
template <Pairing P>
__device__ __forceinline__ LaneOut lane_out(const Params& p, const Unit& u, int lane) {
    LaneOut o{};
    const int64_t col = u.d0 + 4 * lane, d_tile = u.d0 + kHalfN * (lane / 16);
    o.in = col < p.h;
    if (p.c_out && d_tile < p.h) {  // C: lane l holds tile columns 8(l%16) .. +7 of tile l / 16
        const BoxRows boxes = box_rows<P>(p, d_tile);
        const int jt = 8 * (lane % 16);
        o.c = p.c_out + u.t0 * p.n + (jt < kHalfN ? boxes.first + jt : boxes.second + (jt - kHalfN));
    }
    if (!o.in) return o;
    if (p.d_out) o.d = p.d_out + u.t0 * p.h + col;
    if (p.rowwise) {
        o.q = p.out + u.t0 * p.out_ld + col;
        o.scale = p.scales + scale_offset(p.row_strides, u.t0, col >> p.group_log2);  // t0: a multiple of 128
        if ((lane & (p.group / 4 - 1)) != 0) o.scale = nullptr;  // the group's first lane writes the scale
    }
    return o;
}
// The offset of a unit's row r (0 .. 127) in a scale layout from the unit's first row (a multiple of 128).
__device__ __forceinline__ int64_t scale_row_offset(const ScaleStrides& s, int r) {
    return ((r >> 5) & 3) * s.rows32 + (r & 31) * s.row;
}
// A lane's four rowwise codes of unit row r, and its group's scale where this lane writes it.
__device__ __forceinline__ void put_codes(const Params& p, const LaneOut& o, int r, uint32_t codes, float scale) {
    *reinterpret_cast<uint32_t*>(o.q + r * p.out_ld) = codes;
    if (o.scale) *reinterpret_cast<float*>(o.scale + scale_row_offset(p.row_strides, r)) = scale;
}

// kRows rows of unit u (rows[i] of the unit, all valid), by one warp, interleaved so that their latency
// chains overlap: C out, y (written back over the row as fp32 when columnwise codes follow), y out, rowwise
// codes and scales. tile0/tile1: the unit's slots holding its two C tiles; prob: the rows' routing
// probabilities; o: this lane's output addresses in the unit (lane_out, C's already at its columns).
template <Pairing P, int kRows>
__device__ __forceinline__ void epilogue_rows(const Params& p, const LaneOut& o, uint32_t* tile0, uint32_t* tile1,
                                              const int (&rows)[kRows], const float (&prob)[kRows], int lane, float ub) {
    const int t = lane / 16;
    uint32_t* srow[kRows];
    int word[kRows];  // this lane's 16 bytes of C in its row, and later its four y
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        srow[i] = (t == 0 ? tile0 : tile1) + rows[i] * kSlotWords;
        word[i] = slot_word(rows[i], 4 * (lane % 16));
    }
    if (o.c)
#pragma unroll
        for (int i = 0; i < kRows; ++i)
            *reinterpret_cast<uint4*>(o.c + rows[i] * p.n) = *reinterpret_cast<const uint4*>(srow[i] + word[i]);
    if (!p.d_out && !p.rowwise && !p.columnwise) return;
    float y[kRows][4] = {};
    if (o.in) y4_of<P>(p, srow, rows, lane, prob, y);
    if (p.columnwise) {
        __syncwarp();  // every lane has read its C
#pragma unroll
        for (int i = 0; i < kRows; ++i)
            *reinterpret_cast<float4*>(srow[i] + word[i]) = make_float4(y[i][0], y[i][1], y[i][2], y[i][3]);
    }
    if (o.d)
#pragma unroll
        for (int i = 0; i < kRows; ++i) {
            *reinterpret_cast<uint2*>(o.d + rows[i] * p.h) =
                make_uint2(pack_bf16x2_exact(y[i][0], y[i][1]), pack_bf16x2_exact(y[i][2], y[i][3]));
        }
    if (!p.rowwise) return;
    float amax[kRows];  // fmaxf from 0: NaN ignored, as docs/spec.md §3.2 says
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        amax[i] = 0.0f;
#pragma unroll
        for (int k = 0; k < 4; ++k) amax[i] = fmaxf(amax[i], fabsf(y[i][k]));
    }
    cuda::warp_group_amax(amax, p.group / 4 - 1);  // group: a power of two, 4 outputs a lane
    if (!o.in) return;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        const float sc = group_scale(amax[i], ub, p.qp);
        const cuda::Divisor d = cuda::divisor_of(sc, p.qp);
        const bool in_range = cuda::quotient_in_range(amax[i], d);
        put_codes(p, o, rows[i], quantize_codes(y[i], d, in_range, p.qp), sc);
    }
}

// The two rows r0, r1 of a unit (r1 written only if write_r1) by one warp, as epilogue_rows<P, 2> writes them,
// for the common case gemm_problem marks `lean` (src/dispatch/gemm_forms.cpp: rowwise codes only, by division into e4m3 / e5m2, fp32 rounding)
// and activation A (SiLU or SwiGLU-OAI), in straight-line code: every value on the activation's fast path (the
// rare value off it is redone by gated_exact after one warp vote), the scale's quotient amax / qmax and the
// codes' quotients by the three-instruction form (dq: the divisor of qmax). Whether those quotients are exact for
// every lane is decided by a second vote before anything is written; false (nothing written) sends the pair down
// epilogue_rows. Why: epilogue_rows decides per value and per row, and its small basic blocks leave the epilogue
// warps latency-bound (docs/design-notes.md).
template <Pairing P, Act A>
__device__ __forceinline__ bool lean_rows(const Params& p, const LaneOut& o, uint32_t* tile0, uint32_t* tile1, int r0, int r1,
                                          bool write_r1, float prob0, float prob1, int lane, float ub, const cuda::Divisor& dq) {
    uint32_t* base = lane < 16 ? tile0 : tile1;
    const int rows[2] = {r0, r1};
    const float prob[2] = {prob0, prob1};
    float g[2][4], u[2][4], y[2][4], amax[2];
    bool exact = true;  // combined with & (not &&): no branch per value
    bool outside = false;  // some value of this lane is off the activation's fast path
    auto inside = [&](float gate, float up) { return on_fast_path<A>(gate, up, p.swiglu); };
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        gate_up4<P>(p, base + rows[i] * kSlotWords, rows[i], 4 * (lane % 16), g[i], u[i]);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            outside |= !inside(g[i][k], u[i][k]);
            if constexpr (A == Act::Silu) y[i][k] = cuda::silu_inside(g[i][k]) * u[i][k];
            else y[i][k] = cuda::swiglu_gate_inside(g[i][k], p.swiglu) * cuda::swiglu_up_inside(u[i][k], p.swiglu);
        }
    }
    if (__any_sync(0xFFFFFFFFu, outside && o.in)) {  // rare: those values again on the exact path, one at a time
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if (!inside(g[i][k], u[i][k]) && o.in) y[i][k] = gated_exact<A>(g[i][k], u[i][k], p.swiglu);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        amax[i] = 0.0f;  // fmaxf from 0: NaN ignored, as docs/spec.md §3.2 says
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            y[i][k] = o.in ? prob[i] * y[i][k] : 0.0f;  // prob is 1 without routing probabilities
            amax[i] = fmaxf(amax[i], fabsf(y[i][k]));
        }
    }
    cuda::warp_group_amax(amax, p.group / 4 - 1);
    float sc[2];
    cuda::Divisor d[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        // group_scale with amax / qmax as a quotient: exact where it is in range and not below 2^-64 (amax 0 is)
        exact &= cuda::quotient_in_range(amax[i], dq) & (amax[i] == 0.0f | amax[i] >= 0x1p-50f);
        const float s = fmaxf(fminf(cuda::quotient(amax[i], dq), ub), p.qp.min_scale);
        sc[i] = p.qp.pow2_ceil ? pow2_ceil(s) : s;
        d[i] = cuda::divisor_of(sc[i], QuantParams{});  // DIVIDE's divisor (lean excludes MULTIPLY_RECIPROCAL)
        exact &= cuda::quotient_in_range(amax[i], d[i]);
    }
    if (!__all_sync(0xFFFFFFFFu, exact)) return false;
    if (!o.in) return true;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        if (i == 1 && !write_r1) break;
        float v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = cuda::quotient(y[i][k], d[i]);
        put_codes(p, o, rows[i], cuda::encode_fp8_word(v, p.qp.out), sc[i]);
    }
    return true;
}

// The rows of a unit's epilogue (C out, y, y out, rowwise codes and scales) once its two C tiles are in the slots
// of ring entries `filled` and `filled` + 1, by `warps` warps, this one `warp`: rows w, w + warps, ... that valid
// holds (the epilogue warps; for a CTA's last unit the consumers too, idle by then).
template <Pairing P>
__device__ __forceinline__ void finish_rows(const Params& p, SharedStorage& s, const Unit& u, int64_t filled,
                                            const RowMask& valid, int warp, int warps, int lane, float ub) {
    using namespace sm90;
    uint32_t* tile0 = &s.slot[filled % kSlots][0][0];
    uint32_t* tile1 = &s.slot[(filled + 1) % kSlots][0][0];
    // Before the unit's C is there: this lane's output addresses, and lane l loads the routing probabilities of
    // its warp's rows l and l + 32 (in that order), so no row waits on a global load.
    const LaneOut out = lane_out<P>(p, u, lane);
    const cuda::Divisor dq = cuda::divisor_of(p.qp.qmax, QuantParams{});  // lean_rows' scale quotient (DIVIDE)
    float prob[2] = {1.0f, 1.0f};
    if (p.prob)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = warp + warps * (lane + 32 * h);
            if (r < kTileM && valid[r]) prob[h] = p.prob[u.t0 + r];
        }
    mbar_wait(&s.slot_full[filled % kSlots], uint32_t(filled / kSlots) & 1);
    mbar_wait(&s.slot_full[(filled + 1) % kSlots], uint32_t((filled + 1) / kSlots) & 1);
    // Valid rows go two at a time (their latency chains interleave); an odd one out as a pair of itself, whose
    // second copy writes nothing (lean_rows) or the same bytes again (epilogue_rows). One call site of each path:
    // a second copy of the code in the loop costs every unit (docs/design-notes.md).
    int pending = -1;
    float pending_prob = 1.0f;
    for (int j = 0;; ++j) {
        const int r = warp + warps * j;
        const bool end = r >= kTileM;
        float row_prob = pending_prob;
        if (!end) {
            row_prob = __shfl_sync(0xFFFFFFFFu, j < 32 ? prob[0] : prob[1], j % 32);
            if (!valid[r]) continue;
            if (pending < 0) { pending = r; pending_prob = row_prob; continue; }
        } else if (pending < 0) {
            break;
        }
        const int second = end ? pending : r;
        bool done = false;
        if (p.lean && p.act == Act::Silu)
            done = lean_rows<P, Act::Silu>(p, out, tile0, tile1, pending, second, !end, pending_prob, row_prob, lane, ub, dq);
        else if (p.lean && p.act == Act::SwigluOai)
            done = lean_rows<P, Act::SwigluOai>(p, out, tile0, tile1, pending, second, !end, pending_prob, row_prob, lane, ub, dq);
        if (!done) epilogue_rows<P, 2>(p, out, tile0, tile1, {pending, second}, {pending_prob, row_prob}, lane, ub);
        pending = -1;
        if (end) break;
    }
}

// Scale padding (rows past the logical ones) is written with 0, as fqQuantize does: by the epilogue warps of
// CTA 0 (etid: 0 .. kEpilogueThreads - 1).
__device__ __forceinline__ void zero_scale_padding(const Params& p, int etid) {
    if (blockIdx.x != 0) return;
    if (p.rowwise)
        for (int64_t i = etid; i < (p.row_pad_end - p.m) * p.row_groups; i += kEpilogueThreads)
            *reinterpret_cast<float*>(p.scales + scale_offset(p.row_strides, p.m + i / p.row_groups, i % p.row_groups)) = 0.0f;
    if (p.columnwise)
        for (int64_t i = etid; i < (p.col_pad_end - p.h) * p.col_groups; i += kEpilogueThreads)
            *reinterpret_cast<float*>(p.col_scales + scale_offset(p.col_strides, p.h + i / p.col_groups, i % p.col_groups)) = 0.0f;
}

// Columnwise blocks of the unit (y in the slots as fp32): items (column c, block b of col_block rows) first,
// first + step, ...; y_at(t, r, i): y of row r, column i of C tile t's slot (this CTA's, or under split K the
// row's owner's).
template <class YAt>
__device__ __forceinline__ void epilogue_columns(const Params& p, const Unit& u, const RowMask& valid, int first, int step,
                                                 float ub, YAt&& y_at) {
    const int blocks = kTileM / p.col_block;
    for (int item = first; item < kUnitCols * blocks; item += step) {
        const int c = item % kUnitCols, r_lo = (item / kUnitCols) * p.col_block;
        const int64_t col = u.d0 + c;
        if (col >= p.h) continue;
        const int t = c / kHalfN, i = c % kHalfN;
        float amax = 0.0f;
        bool any = false;
        for (int r = r_lo; r < r_lo + p.col_block; ++r) {
            if (!valid[r]) continue;
            any = true;
            amax = fmaxf(amax, fabsf(y_at(t, r, i)));
        }
        if (!any) continue;  // a block with no valid row writes neither data nor scale
        const float sc = group_scale(amax, ub, p.qp);
        const cuda::Divisor d = cuda::divisor_of(sc, p.qp);
        const bool in_range = cuda::quotient_in_range(amax, d);
        *reinterpret_cast<float*>(p.col_scales + scale_offset(p.col_strides, col, (u.t0 + r_lo) >> p.col_block_log2)) = sc;
        for (int r = r_lo; r < r_lo + p.col_block; ++r) {
            if (!valid[r]) continue;
            const int64_t row = u.t0 + r;
            float v[1] = {y_at(t, r, i)};
            p.col_out[p.col_transpose ? col * p.m + row : row * p.out_ld + col] = uint8_t(quantize_codes(v, d, in_range, p.qp));
        }
    }
}

#endif  // FQ_SM90A

}  // namespace fq::gemm
