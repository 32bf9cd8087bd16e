// The columnwise skeleton's blocks (columnwise.cuh; docs/spec.md §4): the tile's shape, the rows a thread
// requests by cp.async into its parked slots and activates, the 8 x 8 transposes and stores of the codes, and a
// columnwise block's scale slot, scale and encoders.
#pragma once

#include "activate.cuh"
#include "amax.cuh"
#include "grid.cuh"
#include "load.cuh"
#include "moe_rows.cuh"
#include "parked.cuh"
#include "quantize.cuh"
#include "scales.cuh"

namespace fq::cuda {

constexpr int kColThreads = 256;
constexpr int kColWarps = kColThreads / 32;
// kColTileRows x kColTileCols: src/common/kernel_shapes.h.
constexpr int kColThreadRows = 8;  // rows a thread holds

// Dynamic shared memory of a block: the parked outputs, kColThreadRows x 2 float4 a thread.
constexpr size_t kColParkedBytes = size_t(kColThreadRows) * 2 * kColThreads * sizeof(float4);

// The rows of the 2-D layout whose columnwise blocks count from their first row: each MASKED expert's
// max_m rows, else all rows.
__device__ __forceinline__ int64_t run_rows_of(const Params& p) {
    return p.moe == MoeLayout::Masked ? p.expert_rows : p.rows;
}

// The same runs on the host: column_runs (src/common/kernel_shapes.h; the dispatcher bounds its grid).

// An 8 x 8 matrix of bytes (fp8 codes) or nibbles (FP4 codes) transposed in registers: row r in m[r] (the
// element of column c at byte c, or nibble c, of the little-endian word), column c in the result's m[c].
// Three stages of exchanges between rows r and r + 4, r + 2, r + 1 (each swapping the off-diagonal halves
// of 2 x 2 blocks of sub-blocks); byte permutes where the elements are whole bytes.
__device__ __forceinline__ void transpose8x8_bytes(uint2 (&m)[8]) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {  // 4 x 4 blocks: the words themselves
        const uint32_t t = m[r].y;
        m[r].y = m[r + 4].x;
        m[r + 4].x = t;
    }
#pragma unroll
    for (int r : {0, 1, 4, 5}) {  // 2 x 2 blocks of bytes: 16-bit halves
        const uint2 a = m[r], b = m[r + 2];
        m[r] = make_uint2(__byte_perm(a.x, b.x, 0x5410), __byte_perm(a.y, b.y, 0x5410));
        m[r + 2] = make_uint2(__byte_perm(a.x, b.x, 0x7632), __byte_perm(a.y, b.y, 0x7632));
    }
#pragma unroll
    for (int r : {0, 2, 4, 6}) {  // single bytes
        const uint2 a = m[r], b = m[r + 1];
        m[r] = make_uint2(__byte_perm(a.x, b.x, 0x6240), __byte_perm(a.y, b.y, 0x6240));
        m[r + 1] = make_uint2(__byte_perm(a.x, b.x, 0x7351), __byte_perm(a.y, b.y, 0x7351));
    }
}

__device__ __forceinline__ void transpose8x8_nibbles(uint2 (&m)[8]) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {  // 4 x 4 blocks: 16-bit halves
        const uint32_t a = m[r].x, b = m[r + 4].x;
        m[r].x = __byte_perm(a, b, 0x5410);
        m[r + 4].x = __byte_perm(a, b, 0x7632);
    }
#pragma unroll
    for (int r : {0, 1, 4, 5}) {  // 2 x 2 blocks: bytes
        const uint32_t a = m[r].x, b = m[r + 2].x;
        m[r].x = __byte_perm(a, b, 0x6240);
        m[r + 2].x = __byte_perm(a, b, 0x7351);
    }
#pragma unroll
    for (int r : {0, 2, 4, 6}) {  // single nibbles
        const uint32_t a = m[r].x, b = m[r + 1].x;
        m[r].x = (a & 0x0F0F0F0Fu) | ((b << 4) & 0xF0F0F0F0u);
        m[r + 1].x = ((a >> 4) & 0x0F0F0F0Fu) | (b & 0xF0F0F0F0u);
    }
}

// Up to 8 code bytes (FP4: 4 bytes of nibble pairs; `w` as encode packs them) to dst: one store where the
// destination is aligned and every byte is written, else the bytes whose `keep` bit is set.
__device__ __forceinline__ void store_code_bytes(uint8_t* dst, uint2 w, int n, unsigned keep) {
    const unsigned all = (1u << n) - 1;
    const bool whole = (keep & all) == all;
    if (n == 8 && whole && (reinterpret_cast<uintptr_t>(dst) & 7) == 0) {
        *reinterpret_cast<uint2*>(dst) = w;
    } else if (n == 4 && whole && (reinterpret_cast<uintptr_t>(dst) & 3) == 0) {
        *reinterpret_cast<uint32_t*>(dst) = w.x;
    } else {
        uint8_t b[8];
        memcpy(b, &w, 8);
        for (int i = 0; i < n; ++i)
            if (keep >> i & 1) dst[i] = b[i];
    }
}

// What the column phase needs besides the outputs.
struct ColumnBlock {
    float amax_bound;  // the scale upper bound (fp32-scale schemes)
    float s_enc;       // NVFP4's S_enc of the block's expert
    uint8_t* scale0;   // where the scale of the thread's first column (j0) and this block goes
    int64_t scale_step;  // bytes from one column's scale to the next (the layout's row stride, see below)
    int valid;           // how many of the thread's 8 columns exist
    bool scale_writer;
};

// Where this thread stores column c's block scale: null unless it writes the block's scales and column c
// exists. The columnwise scales are S[j, b] (a row per output column j): within a run of 8 rows starting at
// a multiple of 8 every layout of docs/spec.md §4 is affine in the row (ScaleStrides::row), so one offset and a step serve
// the 8 columns (eight full offsets cost the writer lanes ~54 instructions a column: docs/perf.md, session 14).
__device__ __forceinline__ uint8_t* column_scale_slot(const ColumnBlock& blk, int c) {
    return blk.scale_writer && c < blk.valid ? blk.scale0 + c * blk.scale_step : nullptr;
}

// A column's block scale from its amax `a`, stored at dst (column_scale_slot) unless null. Returns the
// elements' multiplier (kMx: microscaling) or the fp32 scale. kMxfp8: the scheme is known to be MXFP8 (fp8
// codes), so NVFP4's branch is left out.
template <bool kHwCvt, bool kMx, bool kMxfp8 = false>
__device__ __forceinline__ float store_column_scale(const Params& p, const ColumnBlock& blk, uint8_t* dst, float a) {
    if constexpr (kMx) {
        float mul;
        uint8_t sbyte;
        if constexpr (kMxfp8) mul = e8m0_reciprocal(sbyte = mx_scale(a, p.quant));
        else sbyte = microscale<kHwCvt>(p, a, blk.s_enc, mul);
        if (dst) *dst = sbyte;
        return mul;
    } else {
        const float s = group_scale(a, blk.amax_bound, p.quant);
        if (dst) store_scale(p.col_sg, dst, s);
        return s;
    }
}

// The column phase's fast path: block scales (MXFP8, or fp32 scales per 16/32/128 rows) and e4m3fn / e5m2
// codes by the hardware conversion. Unrolled over the 8 columns, each 16-byte slot read once: per output a
// quarter of a shared load, a multiply (or the three-instruction quotient), half a conversion. The column
// scales are written here; the codes come back column by column (8 rows each). False where an fp32 divisor
// leaves quotient()'s range: that thread then takes encode_columns instead (its slots are untouched). Not
// taken under a qmax override (the conversion saturates at the format's own qmax).
template <bool kMx>
__device__ __forceinline__ bool encode_columns_hardware(const Params& p, const ParkedSlots& parked, const float (&amax)[8],
                                                        const ColumnBlock& blk, uint2 (&codes)[8]) {
    bool in_range = true;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float4 q[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) q[i] = parked.slot(i, h);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int c = 4 * h + k;
            float v[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) v[i] = k == 0 ? q[i].x : k == 1 ? q[i].y : k == 2 ? q[i].z : q[i].w;
            const float scale = store_column_scale<true, kMx, kMx>(p, blk, column_scale_slot(blk, c), amax[c]);
            if constexpr (kMx) {  // MXFP8 (the only microscaling scheme with fp8 codes): the multiplier
#pragma unroll
                for (int i = 0; i < 8; ++i) v[i] *= scale;
            } else {
                const Divisor d = divisor_of(scale, p.quant);
                if (p.quant.reciprocal) {
#pragma unroll
                    for (int i = 0; i < 8; ++i) v[i] *= d.r;
                } else {
                    in_range = in_range && quotient_in_range(amax[c], d);
#pragma unroll
                    for (int i = 0; i < 8; ++i) v[i] = quotient(v[i], d);
                }
            }
            codes[c] = encode8_fp8_hardware(v, p.quant.out);
        }
    }
    return in_range;
}

// The column phase of every other case, rolled (one copy of the general encoders): block scales column by
// column, each column's code parked in the floats just read (rows 0 and 1 of the column); per-tensor scales
// row by row, each row's code in its first two floats. `codes` then holds columns (block scales) or rows.
template <bool kHwCvt>
__device__ __forceinline__ void encode_columns(const Params& p, const ParkedSlots& parked, const float (&amax_in)[8],
                                               const ColumnBlock& blk, const int* row_expert, uint2 (&codes)[8]) {
    const bool mx = is_microscaling(p.scheme);
    const auto park_code = [&](float& lo, float& hi, uint2 w) { lo = __uint_as_float(w.x), hi = __uint_as_float(w.y); };
    if (is_per_tensor(p.scheme)) {  // no blocks: each row with its own expert's tensor scale
#pragma unroll 1
        for (int i = 0; i < kColThreadRows; ++i) {
            float v[8];
            parked.unpark(i, v);
            const float t = tensor_scale_of(p, max(row_expert[i], 0));
            park_code(parked.at(i, 0), parked.at(i, 1), quantize8<kHwCvt>(v, amax8(v, 8), divisor_of(t, p.quant), p.quant));
        }
#pragma unroll
        for (int k = 0; k < 8; ++k) codes[k] = make_uint2(__float_as_uint(parked.at(k, 0)), __float_as_uint(parked.at(k, 1)));
        return;
    }
    float amax[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) amax[c] = amax_in[c];
#pragma unroll 1
    for (int c = 0; c < 8; ++c) {
        float v[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = parked.at(i, c);
        const float a = amax[0];  // column c's (the amaxes rotate below: a rolled loop indexes no array)
        uint8_t* const scale_at = column_scale_slot(blk, c);
        uint2 code;
        if (mx) {
            const float mul = store_column_scale<kHwCvt, true>(p, blk, scale_at, a);
#pragma unroll
            for (int i = 0; i < 8; ++i) v[i] *= mul;
            saturate_in_place(v, p.quant);
            code = encode8<kHwCvt>(v, p.quant.out);
        } else {
            const float s = store_column_scale<kHwCvt, false>(p, blk, scale_at, a);
            code = quantize8<kHwCvt>(v, a, divisor_of(s, p.quant), p.quant);
        }
        park_code(parked.at(0, c), parked.at(1, c), code);
#pragma unroll
        for (int k = 0; k < 7; ++k) amax[k] = amax[k + 1];
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) codes[k] = make_uint2(__float_as_uint(parked.at(0, k)), __float_as_uint(parked.at(1, k)));
}

// The 16-byte IO path's loads: row i's inputs (gate and up, 32 bytes; not gated, 16) copied straight into
// the slots its outputs will take, then read back from there. `at`: input_columns, the same in every row.
template <class S>
__device__ __forceinline__ void request_row(const uint16_t* row, const GatePair& at, const ParkedSlots& parked, int i) {
    cp_async16(&parked.slot(i, 0), row + at.gate);
    if constexpr (S::gate != GateKind::None) cp_async16(&parked.slot(i, 1), row + at.up);
}

template <class S>
__device__ __forceinline__ Raw8 requested_row(const ParkedSlots& parked, int i) {
    Raw8 r{};
    const float4 a = parked.slot(i, 0);
    memcpy(&r.a, &a, 16);
    if constexpr (S::gate != GateKind::None) {
        const float4 b = parked.slot(i, 1);
        memcpy(&r.b, &b, 16);
    }
    return r;
}

// Waits for row i's copies (one group a row, rows requested in order).
__device__ __forceinline__ void wait_for_row(int i) {
    switch (i) {
        case 0: cp_async_wait<7>(); break;
        case 1: cp_async_wait<6>(); break;
        case 2: cp_async_wait<5>(); break;
        case 3: cp_async_wait<4>(); break;
        case 4: cp_async_wait<3>(); break;
        case 5: cp_async_wait<2>(); break;
        case 6: cp_async_wait<1>(); break;
        default: cp_async_wait<0>(); break;
    }
}
static_assert(kColThreadRows == 8, "wait_for_row counts 8 groups");

// activate8 for row i of the thread, where the activation has a fast path: the exact path (rare inputs,
// rounded intermediates) is a rolled loop through the row's slots, one copy in the kernel, not eight
// interleaved with the hot loop's code.
template <class S>
__device__ __forceinline__ void activate_row(const Params& p, const Raw8& r, int64_t m, const ParkedSlots& parked, int i,
                                             float (&y)[8]) {
    if constexpr (!has_fast_activation<S>()) {
        activate8<S>(p, r, m, y);
    } else {
        if (!activate8_fast<S>(p, r, y)) {
            const Raw8 local = r;  // indexed at run time below
#pragma unroll 1
            for (int k = 0; k < 8; ++k) parked.at(i, k) = activated<S, false>(p, local, k);
            parked.unpark(i, y);
        }
        apply_row_prob(p, m, y);
    }
}

}  // namespace fq::cuda
