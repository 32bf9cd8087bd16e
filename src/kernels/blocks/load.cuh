// Loading the raw inputs of 8 consecutive outputs: two 16-byte loads of gate and up (one when not gated),
// or element loads at a row end; where each gate layout keeps a column's inputs.
#pragma once

#include "../vec.cuh"
#include "params.cuh"

namespace fq::cuda {

// ---- Reading 8 activated outputs -------------------------------------------------------------------
// Raw inputs of 8 outputs: not gated (a), two streams (a = gate, b = up), interleaved (a, b = 16
// consecutive inputs g0 u0 g1 u1 ...).
struct Raw8 {
    Half8 a, b;
};

// How many of the 8 outputs starting at column j0 exist (8 except at a row end not divisible by 8).
__device__ __forceinline__ int outputs_left(const Params& p, int j0) { return p.cols - j0 < 8 ? p.cols - j0 : 8; }

// The same, known to be 8 on the 16-byte path (its variants require a width divisible by 8).
template <bool kVec>
__device__ __forceinline__ int outputs_at(const Params& p, int j0) { return kVec ? 8 : outputs_left(p, j0); }

template <bool kVec>
__device__ __forceinline__ Half8 load8(const uint16_t* p, int valid) {
    if constexpr (kVec) return load_half8(p);
    else return load_half8_scalar(p, valid);
}

// gate_columns (src/common/gate_layout.h) of the two-stream layouts in 32-bit arithmetic, split halves
// without a division: cols < 2^26 (refuse_common), so every column of a row fits an int. Its 64-bit
// division was most of a thread's set-up.
__device__ __forceinline__ GatePair two_stream_columns(const Params& p, int j) {
    int first = j, second = p.cols + j;
    if (p.gate == GateLayout::BlockInterleaved) {
        const int b = int(unsigned(j) / unsigned(p.gate_block));
        first = 2 * p.gate_block * b + (j - b * p.gate_block);
        second = first + p.gate_block;
    }
    return p.order == GateOrder::GateFirst ? GatePair{first, second} : GatePair{second, first};
}

// The same 16-byte loads as 32-bit words (two inputs each): what the table kernel keeps in registers (a
// Half8 costs a register per input).
struct RawWords {
    uint4 a, b;
};

// Where the 16-byte path's inputs of the 8 outputs at column j0 start in a row: `gate` the first 16 bytes
// (not gated: the only ones; interleaved: 16 consecutive inputs g0 u0 g1 u1 ... over both), `up` the second.
template <class S>
__device__ __forceinline__ GatePair input_columns(const Params& p, int j0) {
    if constexpr (S::gate == GateKind::None) return {j0, 0};
    else if constexpr (S::gate == GateKind::Interleaved) return {2 * j0, 2 * j0 + 8};
    else return two_stream_columns(p, j0);
}

// The 16-byte loads of the inputs at `at` (input_columns) of the input row `row`.
template <class S>
__device__ __forceinline__ RawWords load_words_at(const uint16_t* row, GatePair at) {
    RawWords r{};
    r.a = *reinterpret_cast<const uint4*>(row + at.gate);
    if constexpr (S::gate != GateKind::None) r.b = *reinterpret_cast<const uint4*>(row + at.up);
    return r;
}

template <class S>
__device__ __forceinline__ RawWords load_words(const Params& p, const uint16_t* row, int j0) {
    return load_words_at<S>(row, input_columns<S>(p, j0));
}

__device__ __forceinline__ Raw8 raw8_of(const RawWords& w) {
    Raw8 r;
    memcpy(&r.a, &w.a, 16);
    memcpy(&r.b, &w.b, 16);
    return r;
}

template <class S>
__device__ __forceinline__ RawWords load_words(const Params& p, int64_t m, int j0) {
    return load_words<S>(p, p.in + m * p.in_ld, j0);
}

// The inputs of the 8 outputs at column j0 of the input row `row`.
template <class S, bool kVec>
__device__ __forceinline__ Raw8 load_raw(const Params& p, const uint16_t* row, int j0) {
    if constexpr (kVec) return raw8_of(load_words<S>(p, row, j0));
    const int valid = outputs_left(p, j0);
    Raw8 r;
    if constexpr (S::gate == GateKind::None) {
        r.a = load8<kVec>(row + j0, valid);
    } else if constexpr (S::gate == GateKind::Interleaved) {
        r.a = load8<kVec>(row + 2 * j0, min(8, 2 * valid));
        r.b = load8<kVec>(row + 2 * j0 + 8, max(0, 2 * valid - 8));
    } else {
        const GatePair c = two_stream_columns(p, j0);
        r.a = load8<kVec>(row + c.gate, valid);
        r.b = load8<kVec>(row + c.up, valid);
    }
    return r;
}

template <class S, bool kVec>
__device__ __forceinline__ Raw8 load_raw(const Params& p, int64_t m, int j0) {
    return load_raw<S, kVec>(p, p.in + m * p.in_ld, j0);
}

}  // namespace fq::cuda
