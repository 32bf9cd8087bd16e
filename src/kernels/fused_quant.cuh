// Fused activation + quantization on CUDA: FP8/INT8 per-group, per-token and per-tensor, and the
// microscaling schemes MXFP8, MXFP4 and NVFP4 (docs/spec.md §2-§4).
//
// The kernel skeletons share one way of reading chunks of 8 consecutive outputs (two 16-byte loads of
// gate and up, or one load when not gated) and the FQ_HD activation / quantizer code of src/common, so
// every variant writes exactly the bytes of the host reference:
//   group_quant   one thread = 8 outputs; a group of G outputs = G/8 neighbouring lanes, reduced with
//                 warp shuffles; also serves per-tensor scales (static, or dynamic after tensor_amax) and
//                 the microscaling blocks (32, NVFP4 16); scales go straight into any docs/spec.md §4 layout,
//                 padding included; any rounding mode, MoE layout (several rows a block), routing
//                 probability
//   plain_quant   the same for FP32 intermediates without a MoE layout (routing probability or not), 16
//                 outputs a thread (two chunks in one group): fewer instructions per output, where the
//                 problem fills the GPU
//   token_quant   one block per row: amax pass (outputs parked in shared memory), block reduction, quantize
//                 pass
//   tensor_amax   the amax of the whole tensor into one word (per-tensor dynamic; NVFP4's global amax)
// What the hot loop would otherwise branch on per element is a template parameter (the Shape: the
// activation, the input type, how gate and up are stored; the plain FP32 body; fp32 vs microscaling
// scales): a kernel that branches on them at run time runs far slower (docs/design-notes.md). Each
// activation's kernels are compiled in their own translation unit (instantiate_activation.cu.in).
#pragma once

#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "../common/status.h"
#include "../common/moe.h"
#include "../common/op_config.h"
#include "../dispatch/registry.h"
#include "launch.cuh"
#include "silu_fast.cuh"
#include "vec.cuh"

namespace fq::cuda {

constexpr int kThreads = 128;       // group_quant block: 128 threads x 8 = 1024 outputs of one row
constexpr int kTokenThreads = 256;  // token_quant block, where the rows fill the GPU

// How a thread finds its gate and up inputs.
enum class GateKind { None, TwoStreams /* split, block-interleaved */, Interleaved };

template <Act kAct, InType kIn, GateKind kGate>
struct Shape {
    static constexpr Act act = kAct;
    static constexpr InType in = kIn;
    static constexpr GateKind gate = kGate;
};

// OpConfig flattened to what the device reads; passed by value.
struct Params {
    const uint16_t* in;
    uint8_t* out;
    uint8_t* scales;
    int64_t rows, in_ld, out_ld;
    int cols;  // < 2^26: the launch grid bounds it (refuse_common)
    GateLayout gate;
    GateOrder order;
    int gate_block;
    Rounding rounding;
    SwigluParams swiglu;
    const float* row_prob;
    QuantParams quant;
    Scheme scheme;
    int group_shift;  // log2 of the group size (per-group)
    int lanes_per_group;
    int pair_shift;       // plain kernel: log2 of the lanes a group spans at 16 outputs a thread (G/16)
    ScaleGeometry sg;
    ScaleStrides ss;  // sg's byte offsets without a branch on the layout
    bool scale_offsets_fit_32;  // every byte offset within a row-scale block is below 2^32 (row_scale_offset)
    const float* static_scale;
    const float* scale_ub;
    unsigned* amax_bits;  // per-tensor dynamic: the amax word (the scale slot until finalized); NVFP4
                          // without a caller's global amax: the workspace word tensor_amax fills
    const float* global_amax;  // NVFP4: the caller's global amax (NULL: *amax_bits)
    int64_t scale_cols_padded;  // scale columns a row's padding runs to (packed: 4 per word)

    // MoE (docs/spec.md §5, docs/moe.md): which expert owns a row, read from the caller's device arrays and
    // clamped by the rules of src/common/moe.h. Without a MoE layout every row is expert 0's.
    MoeLayout moe;
    int experts;                  // 1 without a MoE layout
    int64_t expert_rows;          // MASKED: max_m
    const int32_t* moe_offsets;   // CONTIGUOUS: E + 1 row offsets
    const int32_t* moe_counts;    // MASKED: E counts; CONTIGUOUS: optional valid rows per slot
    int64_t scale_block_bytes;    // MASKED row scales: bytes between experts' blocks (0 otherwise)
    int64_t scale_blocks;         // row-scale blocks whose padding rows are zeroed (MASKED: E, else 1)
    int64_t rows_per_block;       // the general kernel's rows a block (1; launch_group_quant raises it for MoE)
    int64_t row_blocks;           // its blocks of rows: ceil(rows / rows_per_block); then the padding blocks

    // Columnwise output (src/kernels/columnwise.cuh): blocks of col_block rows down each column.
    uint8_t* col_out;
    uint8_t* col_scales;
    ScaleGeometry col_sg;         // one block: H x ceil(run / col_block) logical scales
    ScaleStrides col_ss;          // col_sg's byte offsets without a branch on the layout
    int col_block;
    bool col_transpose;
    bool rowwise;                 // the rowwise output is asked for (the columnwise kernel may write both)
};

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

// Padding row v of all row-scale blocks (v < scale_blocks x padded rows past the logical ones): its block
// and its row in the block.
// 32-bit division: a block pads at most 127 rows and refuse_common bounds the total (a 64-bit division here
// costs the whole kernel registers).
__device__ __forceinline__ RowOwner padding_row(const Params& p, int64_t v) {
    const int per_block = int(p.sg.padded_rows - p.sg.rows), i = int(v);
    return {0, p.sg.rows + i % per_block, int64_t(i / per_block) * p.sg.bytes};
}

// ---- Programmatic dependent launch (sm_90+; no-ops when launched without the attribute) ----------
__device__ __forceinline__ void wait_for_producer() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void let_consumer_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

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

template <class S>
__device__ __forceinline__ RawWords load_words(const Params& p, const uint16_t* row, int j0) {
    RawWords r{};
    const GatePair at = input_columns<S>(p, j0);
    r.a = *reinterpret_cast<const uint4*>(row + at.gate);
    if constexpr (S::gate != GateKind::None) r.b = *reinterpret_cast<const uint4*>(row + at.up);
    return r;
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

// Input i of the 8 in h as fp32 (i a constant after unrolling: a runtime index goes to local memory). bf16
// straight from its 32-bit word: one shift (even i) or one mask (odd i), not an extract and a shift.
template <InType kIn>
__device__ __forceinline__ float input_at(const Half8& h, int i) {
    if constexpr (kIn == InType::Bf16) {
        uint32_t w;
        memcpy(&w, &h.h[i & ~1], 4);
        return __uint_as_float(i & 1 ? w & 0xFFFF0000u : w << 16);
    } else {
        return load_input(kIn, h.h[i]);
    }
}

// The fp32 gate and up values of output i of 8 (not gated: g only).
template <class S>
__device__ __forceinline__ void gate_and_up(const Params& p, const Raw8& r, int i, float& g, float& u) {
    if constexpr (S::gate == GateKind::Interleaved) {
        const Half8& h = i < 4 ? r.a : r.b;
        const float even = input_at<S::in>(h, 2 * (i & 3)), odd = input_at<S::in>(h, 2 * (i & 3) + 1);
        const bool gate_first = p.order == GateOrder::GateFirst;
        g = gate_first ? even : odd;
        u = gate_first ? odd : even;
    } else {
        g = input_at<S::in>(r.a, i);
        if constexpr (S::gate == GateKind::TwoStreams) u = input_at<S::in>(r.b, i);
    }
}

// The halves of the 16-bit inputs that are gates, as a mask over each 32-bit word of 8 gate inputs
// (interleaved: every other input is an up).
template <class S>
__device__ __forceinline__ uint32_t gate_halves(const Params& p) {
    if constexpr (S::gate != GateKind::Interleaved) return 0x7FFF7FFFu;
    return p.order == GateOrder::GateFirst ? 0x00007FFFu : 0x7FFF0000u;
}

// Output i of 8, before the routing probability, through the shared FQ_HD code of src/common.
template <class S, bool kPlain>
__device__ __forceinline__ float activated(const Params& p, const Raw8& r, int i) {
    const Rounding rounding = kPlain ? Rounding::Fp32 : p.rounding;
    float g, u;
    gate_and_up<S>(p, r, i, g, u);
    if constexpr (S::gate == GateKind::None) {
        const float v = activate(S::act, g);
        return rounding == Rounding::Fp32 ? v : round_to_input(S::in, v);
    } else {
        return activate_gated(S::act, g, u, rounding, S::in, p.swiglu);
    }
}

// The routing probability of row m multiplied into its 8 outputs (docs/spec.md §2), where the descriptor has one.
__device__ __forceinline__ void apply_row_prob(const Params& p, int64_t m, float y[8]) {
    if (!p.row_prob) return;
    const float prob = p.row_prob[m];
#pragma unroll
    for (int i = 0; i < 8; ++i) y[i] = prob * y[i];
}

// The activations with a fast path (silu_fast.cuh): SiLU, and SwiGLU-OAI on a gate.
template <class S>
constexpr bool has_fast_activation() { return S::act == Act::Silu || (S::act == Act::SwigluOai && S::gate != GateKind::None); }

// The fast path where every input of the 8 is inside its range (checked on the bits, all 8 at once):
// eight independent chains with no clamp, flag or branch between them, so they interleave. False, with y
// untouched, where it does not apply (rare: large magnitudes, Inf, NaN; other activations; rounded
// intermediates): the caller takes the exact path. kPlain: as activate8.
template <class S, bool kPlain = false>
__device__ __forceinline__ bool activate8_fast(const Params& p, const Raw8& r, float y[8]) {
    if constexpr (!has_fast_activation<S>()) {
        return false;
    } else {
        if (!kPlain && p.rounding != Rounding::Fp32) return false;
        uint4 a, b;
        memcpy(&a, &r.a, 16);
        memcpy(&b, &r.b, 16);
        const uint32_t gates = gate_halves<S>(p);  // interleaved: the other halves are ups, in a and b
        uint32_t gate_bits = max_bits2(a, gates);
        if constexpr (S::gate == GateKind::Interleaved) gate_bits = __vmaxu2(gate_bits, max_bits2(b, gates));
        bool fast;
        if constexpr (S::act == Act::Silu) {
            fast = silu_inside_all<S::in>(gate_bits);
        } else {
            const uint32_t ups = gates ^ 0x7FFF7FFFu;
            const uint32_t up_bits = S::gate == GateKind::Interleaved ? __vmaxu2(max_bits2(a, ups), max_bits2(b, ups))
                                                                      : max_bits2(b, 0x7FFF7FFFu);
            fast = swiglu_inside_all(max_magnitude<S::in>(gate_bits), max_magnitude<S::in>(up_bits), p.swiglu);
        }
        if (!fast) return false;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            float g, u;
            gate_and_up<S>(p, r, i, g, u);
            if constexpr (S::act == Act::Silu) {
                y[i] = silu_inside(g);
                if constexpr (S::gate != GateKind::None) y[i] = y[i] * u;
            } else {
                y[i] = swiglu_gate_inside(g, p.swiglu) * swiglu_up_inside(u, p.swiglu);
            }
        }
        return true;
    }
}

// The 8 outputs of r at row m, routing probability included (docs/spec.md §2). kPlain: the launch guarantees FP32
// intermediates. SiLU and SwiGLU-OAI with FP32 intermediates take their fast paths in either kernel
// (the general one tests the rounding mode at run time).
template <class S, bool kPlain = false>
__device__ __forceinline__ void activate8(const Params& p, const Raw8& r, int64_t m, float y[8]) {
    if (!activate8_fast<S, kPlain>(p, r, y)) {
#pragma unroll
        for (int i = 0; i < 8; ++i) y[i] = activated<S, kPlain>(p, r, i);
    }
    apply_row_prob(p, m, y);
}

// ---- Quantizing 8 outputs --------------------------------------------------------------------------
// Dividing by a scale s, set up once per group (or row, or tile): r = 1/s, the IEEE reciprocal under
// MULTIPLY_RECIPROCAL (the products y * r are the result), else the reciprocal nvcc's div.rn fast path
// uses (MUFU approximation and one Newton step) for quotient() below.
struct Divisor {
    float s, r;
};

__device__ __forceinline__ Divisor divisor_of(float s, const QuantParams& q) {
    if (q.reciprocal) return {s, 1.0f / s};
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));
    return {s, __fmaf_rn(r, __fmaf_rn(-s, r, 1.0f), r)};
}

// y / s from the refined reciprocal: the quotient and one residual correction of div.rn's fast path,
// which is the IEEE quotient wherever no intermediate leaves the normal range (the caller checks that
// per group: quotient_in_range). The residual is taken as s q - y, not y - s q, so that y = -0 keeps its
// sign. Three instructions against div.rn's eight and its range check per element.
__device__ __forceinline__ float quotient(float y, const Divisor& d) {
    const float q = __fmul_rn(y, d.r);
    const float minus_residual = __fmaf_rn(d.s, q, -y);
    return __fmaf_rn(-minus_residual, d.r, q);
}

// Whether quotient() gives y / s for every y with |y| <= a (NaN elements too: any NaN encodes to the same
// code). s within 2^+-64 keeps 1/s and the products normal; quotients below 2^-64 may lose their last
// bits in a subnormal residual, but every fp8 format (and int8) encodes anything under 2^-20 as a signed
// zero, with the sign the product already has; |y| / s <= 2^64 keeps the products finite (y = Inf
// fails it: Inf / s saturates, the residual of Inf is NaN).
__device__ __forceinline__ bool quotient_in_range(float a, const Divisor& d) {
    return d.s >= 0x1p-64f && d.s <= 0x1p64f && a * d.r <= 0x1p64f;
}

// Whether a kernel built with kHwCvt converts e4m3fn / e5m2 in hardware: sm_89 on.
template <bool kHwCvt>
__host__ __device__ constexpr bool hardware_fp8() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    return kHwCvt;
#else
    return false;
#endif
}

// 8 values already divided by (or multiplied into) their scale as codes of an 8-bit format `out` (not E2M1),
// in software: element i in byte i of the little-endian pair of words.
__device__ __forceinline__ uint2 encode8_bytes_software(const float (&v)[8], DType out) {
    uint32_t w[2] = {0, 0};
#pragma unroll
    for (int i = 0; i < 8; ++i) w[i / 4] |= uint32_t(encode_scaled(out, v[i])) << (8 * (i % 4));
    return make_uint2(w[0], w[1]);
}

// 8 values already divided by (or multiplied into) their scale as e4m3fn or e5m2 codes (`out` one of them),
// by the hardware conversion where the arch has it: element i in byte i of the little-endian pair of words.
__device__ __forceinline__ uint2 encode8_fp8_hardware(const float (&v)[8], DType out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    const __nv_fp8_interpretation_t kind = out == DType::E4M3FN ? __NV_E4M3 : __NV_E5M2;
    uint32_t pairs[4];  // cvt writes element 2i in the low byte: two pairs make one little-endian word
#pragma unroll
    for (int i = 0; i < 4; ++i) pairs[i] = __nv_cvt_float2_to_fp8x2(make_float2(v[2 * i], v[2 * i + 1]), __NV_SATFINITE, kind);
    return make_uint2(pairs[0] | (pairs[1] << 16), pairs[2] | (pairs[3] << 16));
#else  // the same bytes (where no kernel calls it)
    return encode8_bytes_software(v, out);
#endif
}

// kChunks x 8 values already divided by (or multiplied into) their scale, encoded: per chunk, fp8 codes in
// 8 bytes, or e2m1 nibbles in 4 (element 2i in the low nibble, docs/spec.md §1). One branch on the format for all
// chunks.
template <bool kHwCvt, int kChunks>
__device__ __forceinline__ void encode(const float (&v)[kChunks][8], DType out, uint2 (&codes)[kChunks]) {
    if (out == DType::E2M1) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
            uint32_t w = 0;
#pragma unroll
            for (int i = 0; i < 8; ++i) w |= uint32_t(encode_e2m1(v[c][i])) << (4 * i);
            codes[c] = make_uint2(w, 0);
        }
        return;
    }
    if constexpr (hardware_fp8<kHwCvt>()) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) codes[c] = encode8_fp8_hardware(v[c], out);
    } else {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) codes[c] = encode8_bytes_software(v[c], out);
    }
}

template <bool kHwCvt>
__device__ __forceinline__ uint2 encode8(const float (&v)[8], DType out) {
    uint2 codes[1];
    encode<kHwCvt, 1>(*reinterpret_cast<const float(*)[1][8]>(&v), out, codes);
    return codes[0];
}

// Values divided by their scale, clamped in place to the bound of a qmax override (saturate, docs/spec.md §1,
// §3.4), which the encoders above do not know (they saturate at the format's own qmax); nothing without one.
template <int kChunks>
__device__ __forceinline__ void saturate_in_place(float (&v)[kChunks][8], const QuantParams& q) {
    if (!has_saturation_bound(q)) return;
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int i = 0; i < 8; ++i) v[c][i] = saturate(v[c][i], q);
}
__device__ __forceinline__ void saturate_in_place(float (&v)[8], const QuantParams& q) {
    saturate_in_place<1>(*reinterpret_cast<float(*)[1][8]>(&v), q);
}

// kChunks x 8 outputs y, divided by their scale, encoded. `a`: an upper bound of their magnitudes (the lane's
// amax; NaN elements need none).
template <bool kHwCvt, int kChunks>
__device__ __forceinline__ void quantize(const float (&y)[kChunks][8], float a, const Divisor& d, const QuantParams& q,
                                         uint2 (&codes)[kChunks]) {
    float v[kChunks][8];
    if (q.reciprocal) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
            for (int i = 0; i < 8; ++i) v[c][i] = y[c][i] * d.r;
    } else if (quotient_in_range(a, d)) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
            for (int i = 0; i < 8; ++i) v[c][i] = quotient(y[c][i], d);
    } else {
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
            for (int i = 0; i < 8; ++i) v[c][i] = y[c][i] / d.s;
    }
    saturate_in_place(v, q);
    // The hardware conversion knows e4m3fn and e5m2; e4m3fnuz and int8 are encoded in software.
    if (q.out == DType::E4M3FN || q.out == DType::E5M2) encode<kHwCvt>(v, q.out, codes);
    else encode<false>(v, q.out, codes);
}

template <bool kHwCvt>
__device__ __forceinline__ uint2 quantize8(const float (&y)[8], float a, const Divisor& d, const QuantParams& q) {
    uint2 codes[1];
    quantize<kHwCvt, 1>(*reinterpret_cast<const float(*)[1][8]>(&y), a, d, q, codes);
    return codes[0];
}

template <bool kVec>
__device__ __forceinline__ void store8(uint8_t* dst, uint2 w, int valid) {
    if constexpr (kVec) {
        *reinterpret_cast<uint2*>(dst) = w;
    } else {
        uint8_t b[8];
        memcpy(b, &w, 8);
        for (int i = 0; i < valid; ++i) dst[i] = b[i];
    }
}

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

__device__ __forceinline__ float upper_bound(const Params& p) {
    return p.scale_ub ? *p.scale_ub : __int_as_float(0x7FC00000);  // NaN = no bound (fminf ignores it)
}

__device__ __forceinline__ float amax8(const float y[8], int valid) {
    float a = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) a = i < valid ? fmaxf(a, fabsf(y[i])) : a;
    return a;
}

// ---- Skeleton 1: per-group (and per-tensor); tiles of one row x 1024 outputs ----------------------------
// Launch order, two of them. kMemoryOrder: the column tile is blockIdx.x, the fastest-varying index, and the
// row is blockIdx.y + blockIdx.z * gridDim.y (y alone stops at 65535), so the blocks in flight walk the
// tensor in memory order, a row's tiles and then the next row's. Otherwise the row is blockIdx.x and the tile
// blockIdx.y, which MASKED MoE problems (the general kernel) run faster (docs/design-notes.md).
template <bool kMemoryOrder>
__device__ __forceinline__ int64_t block_row() {
    if constexpr (kMemoryOrder) return int64_t(blockIdx.z) * gridDim.y + blockIdx.y;
    return blockIdx.x;
}
template <bool kMemoryOrder>
__device__ __forceinline__ int tile_first_output() {
    return (int(kMemoryOrder ? blockIdx.x : blockIdx.y) * kThreads + int(threadIdx.x)) * 8;
}

// The grid of `row_blocks` rows (blocks of rows) x `col_tiles` column tiles in either order.
inline dim3 block_grid(bool memory_order, int64_t row_blocks, int64_t col_tiles) {
    if (!memory_order) return dim3(unsigned(row_blocks), unsigned(col_tiles));
    const int64_t y = row_blocks < 65535 ? row_blocks : 65535;
    return dim3(unsigned(col_tiles), unsigned(y), unsigned(y > 0 ? ceil_div(row_blocks, y) : 0));
}

// ---- Microscaling (docs/spec.md §3.3): MXFP8, MXFP4 (E8M0 scale per 32) and NVFP4 (E4M3 scale per 16) ----------
// NVFP4's S_enc of expert e (docs/spec.md §3.3): from the caller's global amax, or the one tensor_amax reduced.
__device__ __forceinline__ float nvfp4_s_enc(const Params& p, int e) {
    return nvfp4_encode_scale(p.global_amax ? p.global_amax[e] : __uint_as_float(p.amax_bits[e]));
}

// One block scale from the group amax `a` (already reduced over the group's lanes), and the elements'
// multiplier. The same FQ_HD functions as the host reference.
template <bool kHwCvt>
__device__ __forceinline__ uint8_t microscale(const Params& p, float a, float s_enc, float& multiplier) {
    if (p.scheme == Scheme::Nvfp4) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
        // The block scale through the hardware conversion: the same byte as nvfp4_block_scale for its
        // argument, which is never NaN (amax ignores NaN; S_enc is positive and finite) and >= 0.
        const uint8_t sb = kHwCvt ? uint8_t(__nv_cvt_float_to_fp8(a * (s_enc / 6.0f), __NV_SATFINITE, __NV_E4M3))
                                  : nvfp4_block_scale(a, s_enc);
#else
        const uint8_t sb = nvfp4_block_scale(a, s_enc);
#endif
        multiplier = nvfp4_multiplier(sb, s_enc);
        return sb;
    }
    const uint8_t e = mx_scale(a, p.quant);
    multiplier = e8m0_reciprocal(e);
    return e;
}

template <bool kVec>
__device__ __forceinline__ void store_codes(const Params& p, int64_t m, int j0, uint2 w, int valid) {
    if (p.quant.out != DType::E2M1) {
        store8<kVec>(p.out + m * p.out_ld + j0, w, valid);
        return;
    }
    uint8_t* dst = p.out + m * (p.out_ld / 2) + j0 / 2;  // validation keeps FP4 widths and strides even
    if (kVec) {
        *reinterpret_cast<unsigned*>(dst) = w.x;
    } else {
        for (int i = 0; i < (valid + 1) / 2; ++i) dst[i] = uint8_t(w.x >> (8 * i));
    }
}

// The amax of a group: this thread's outputs, reduced over the group's `lanes` neighbouring lanes (a power
// of two). Unrolled (a group spans at most 16 lanes: 128 outputs); the steps past the group's lanes are
// skipped by a warp-uniform test.
__device__ __forceinline__ float group_amax(int lanes, float lane_amax) {
    float a = lane_amax;
#pragma unroll
    for (int d = 8; d > 0; d /= 2)
        if (d < lanes) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    return a;
}

// The largest magnitude among a thread's kChunks chunks of outputs (valid[c] of chunk c exist).
template <int kChunks>
__device__ __forceinline__ float lane_amax_of(const int (&valid)[kChunks], const float (&y)[kChunks][8]) {
    float a = 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c) a = fmaxf(a, amax8(y[c], valid[c]));
    return a;
}

// The microscaling half of a tile (see quantize_activated): the group's block scale byte, which every lane of
// the group returns (the caller stores it), and the thread's codes, stored.
template <int kChunks, bool kVec, bool kHwCvt>
__device__ __forceinline__ uint8_t microscale_tile(const Params& p, int64_t m, const int (&j)[kChunks], const int (&valid)[kChunks],
                                                   const float (&y)[kChunks][8], int lanes, float s_enc) {
    float mul;
    const uint8_t sbyte = microscale<kHwCvt>(p, group_amax(lanes, lane_amax_of(valid, y)), s_enc, mul);
    float v[kChunks][8];
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int i = 0; i < 8; ++i) v[c][i] = y[c][i] * mul;
    saturate_in_place(v, p.quant);
    uint2 codes[kChunks];
    encode<kHwCvt>(v, p.quant.out, codes);
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
        if (valid[c] > 0) store_codes<kVec>(p, m, j[c], codes[c], valid[c]);
    return sbyte;
}

// The fp32-scale half: the group's scale (per-tensor schemes: tensor_scale), which every lane of the group
// returns (the caller stores it), and the thread's codes, stored.
template <int kChunks, bool kVec, bool kHwCvt>
__device__ __forceinline__ float scaled_tile(const Params& p, int64_t m, const int (&j)[kChunks], const int (&valid)[kChunks],
                                             const float (&y)[kChunks][8], int lanes, float tensor_scale, float scale_bound) {
    const float lane_amax = lane_amax_of(valid, y);
    const float s = is_per_tensor(p.scheme) ? tensor_scale : group_scale(group_amax(lanes, lane_amax), scale_bound, p.quant);
    uint2 codes[kChunks];
    quantize<kHwCvt>(y, lane_amax, divisor_of(s, p.quant), p.quant, codes);
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
        if (valid[c] > 0) store8<kVec>(p.out + m * p.out_ld + j[c], codes[c], valid[c]);
    return s;
}

// Everything of one tile of a row after its outputs are activated: group amax, scale, values. The thread
// holds kChunks chunks of 8 outputs y[c], starting at columns j[c] (valid[c] of them exist; 0: the chunk is
// past the row), all in the same group (its scale is S[m, j[0] >> group_shift]); the group spans `lanes`
// neighbouring lanes, the first of which writes the scale. Every lane of the warp calls this (the group amax
// is a warp shuffle); a lane with valid[0] == 0 (or a row no expert owns) has no outputs. kMx: the
// microscaling schemes (E8M0 / E4M3 block scales; tensor_scale holds NVFP4's S_enc), else the fp32-scale
// schemes; a template parameter so that neither kernel carries the other's registers.
template <int kChunks, bool kVec, bool kHwCvt, bool kMx>
__device__ __forceinline__ void quantize_activated(const Params& p, const RowOwner& o, int64_t m, const int (&j)[kChunks],
                                                   const int (&valid)[kChunks], const float (&y)[kChunks][8], int lanes,
                                                   float tensor_scale, float scale_bound) {
    const bool active = valid[0] > 0;
    const bool leader = (threadIdx.x & (lanes - 1)) == 0 && active;
    const int64_t k = j[0] >> p.group_shift;
    if constexpr (kMx) {
        const uint8_t sbyte = microscale_tile<kChunks, kVec, kHwCvt>(p, m, j, valid, y, lanes, tensor_scale);
        if (leader) {
            p.scales[o.block + row_scale_offset(p, o.scale_row, k)] = sbyte;
            zero_scale_padding(p, p.scales + o.block, o.scale_row, k);
        }
    } else {
        const float s = scaled_tile<kChunks, kVec, kHwCvt>(p, m, j, valid, y, lanes, tensor_scale, scale_bound);
        if (leader && !is_per_tensor(p.scheme)) {
            store_scale(p.sg, p.scales + o.block + row_scale_offset(p, o.scale_row, k), s);
            zero_scale_padding(p, p.scales + o.block, o.scale_row, k);
        }
    }
}

// One chunk of 8 outputs a thread; a group spans p.lanes_per_group lanes.
template <bool kVec, bool kHwCvt, bool kMx>
__device__ __forceinline__ void quantize_activated(const Params& p, const RowOwner& o, int64_t m, int j0, int valid,
                                                   const float (&y)[8], float tensor_scale, float scale_bound) {
    const int j[1] = {j0}, n[1] = {valid};
    const float(&y1)[1][8] = *reinterpret_cast<const float(*)[1][8]>(&y);
    quantize_activated<1, kVec, kHwCvt, kMx>(p, o, m, j, n, y1, p.lanes_per_group, tensor_scale, scale_bound);
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

// The scale every group of expert e's rows shares (per-tensor schemes), or NVFP4's S_enc of expert e.
__device__ __forceinline__ float tensor_scale_of(const Params& p, int e) {
    if (p.scheme == Scheme::Nvfp4) return nvfp4_s_enc(p, e);
    if (p.scheme == Scheme::PerTensorStatic) return p.static_scale[e];
    if (p.scheme == Scheme::PerTensorDynamic) return group_scale(__uint_as_float(p.amax_bits[e]), upper_bound(p), p.quant);
    return 0.0f;
}

// Padding rows of all row-scale blocks, in blocks of this many rows per CUDA block: a swizzled layout pads
// one row to 128, which would otherwise be 127 blocks per column tile at T = 1.
constexpr int64_t kPadRowsPerBlock = 16;

__host__ __device__ inline int64_t padding_rows_total(const Params& p) {
    return is_per_tensor(p.scheme) ? 0 : p.scale_blocks * (p.sg.padded_rows - p.sg.rows);
}

// At least 12 resident blocks (48 warps) per SM, i.e. at most 40 registers a thread.
constexpr int kGroupMinBlocks = 12;

// One wave of group-kernel blocks: kGroupMinBlocks resident on every SM.
inline int64_t resident_blocks(const LaunchArgs& a) { return int64_t(a.sm_count) * kGroupMinBlocks; }

// Whether programmatic dependent launch pays for a general-kernel grid of `blocks`: it saves the launch gap where
// the grid is well below or above one wave, and costs where it fills half a wave to one (the next call's blocks
// take the free slots early; docs/design-notes.md).
inline bool pdl_pays(const LaunchArgs& a, int64_t blocks) {
    const int64_t wave = resident_blocks(a);
    return !(2 * blocks > wave && blocks <= wave);
}

// The tensor scale (or NVFP4's S_enc) and the scale upper bound, each loaded only where the scheme reads it.
template <bool kMx>
struct RowScaleInputs {
    float tensor_scale = 0.0f, bound = 0.0f;
    __device__ __forceinline__ RowScaleInputs(const Params& p, int expert) {
        const bool tensor_scaled = kMx ? p.scheme == Scheme::Nvfp4 : is_per_tensor(p.scheme);
        if (tensor_scaled) tensor_scale = tensor_scale_of(p, expert);
        if (!kMx && !tensor_scaled) bound = upper_bound(p);
    }
};

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
    for (int i = int(threadIdx.x); i < int(last - first) * groups; i += int(blockDim.x))
        zero_scale_slot<kMx>(p, padding_row(p, first + i / groups), k0 + i % groups);
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

// One row tile of the general kernel: 8 outputs a thread of row b (owned by o.expert) from column j0.
template <class S, bool kVec, bool kHwCvt, bool kMx>
__device__ __forceinline__ void group_row(const Params& p, const RowOwner& o, int64_t b, int j0, bool col_ok) {
    Raw8 raw;
    if (col_ok) raw = load_raw<S, kVec>(p, b, j0);
    let_consumer_start();
    float y[8];
    if (col_ok) activate8<S>(p, raw, b, y);
    const RowScaleInputs<kMx> in(p, o.expert);
    // Every lane of the warp takes part: the group amax is a warp shuffle.
    quantize_activated<kVec, kHwCvt, kMx>(p, o, b, j0, col_ok ? outputs_at<kVec>(p, j0) : 0, y, in.tensor_scale, in.bound);
}

// The general kernel: any rounding mode, MoE layout and routing probability. Block (b, t) runs output
// columns [t, t + 1) * 1024 of rows [b, b + 1) * p.rows_per_block (each thread 8 outputs a row; rows no
// expert owns skipped: for_each_owned_row). Blocks past the rows write the scale layouts' padding rows
// (zeros), kPadRowsPerBlock rows each.
template <class S, bool kVec, bool kHwCvt, bool kMx>
__global__ void __launch_bounds__(kThreads, kGroupMinBlocks) group_quant(const Params p) {
    wait_for_producer();
    const int j0 = tile_first_output<false>();
    const int64_t bx = block_row<false>();
    if (bx >= p.row_blocks) {
        let_consumer_start();
        zero_padding_rows<kMx>(p, p.rows + (bx - p.row_blocks), j0 - int(threadIdx.x) * 8, kThreads * 8);
        return;
    }
    const bool col_ok = j0 < p.cols;
    for_each_owned_row(p, bx, [&](const RowOwner& o, int64_t b) { group_row<S, kVec, kHwCvt, kMx>(p, o, b, j0, col_ok); });
    let_consumer_start();
}

// ---- The plain kernel: 16 outputs a thread ----------------------------------------------------------
// For problems with FP32 intermediates and no MoE layout (decided at launch), so it carries no code for the
// other rounding modes or row owners; the routing probability is a block-uniform branch. On the H100 the group
// kernels are bound by instruction issue, and most of a thread's instructions are per
// thread, not per output: set-up, the group amax, the scale, its address and store. So a thread here runs
// two chunks of 8 outputs in the same group, chunk B = chunk A + G/2 (G = the group, 64 for the per-tensor
// schemes), and a group spans G/16 lanes: each warp load still reads whole sectors (G/16 lanes read G/2
// consecutive outputs), and one group amax, scale and scale store serve 16 outputs.
// Block (b, t): output columns [t, t + 1) * tile of row b, blocks launched in memory order (block_grid). The
// tile is 2048 outputs (4 warps), or for gated problems 1024 (2 warps) where a row's 512-output warps divide
// by 2 and not by 4 (7168 = 14 x 512): then no block runs idle warps past the row's end, which hold their SM
// slots while the others work. Not gated, a 2-warp block has too little work: blocks finish faster than they
// launch, so those keep 4 warps (docs/design-notes.md).
constexpr int kPlainTile = kThreads * 16;

inline int plain_block_threads(int64_t cols, bool gated) {
    const int64_t warps = ceil_div(cols, int64_t(512));
    return gated && warps % 4 != 0 && warps % 2 == 0 ? kThreads / 2 : kThreads;
}

// The first column of chunk A of this thread, whose warp covers the 512 outputs from warp_first: its lanes in
// groups of 2^pair_shift (= G/16) lanes, each group of lanes G consecutive outputs (group lane >> pair_shift
// of the warp's).
__device__ __forceinline__ int plain_chunk_a(const Params& p, int warp_first) {
    const int lane = int(threadIdx.x) & 31, s = p.pair_shift;
    return warp_first + ((lane >> s) << (s + 4)) + ((lane & ((1 << s) - 1)) << 3);
}

// Chunks A and B of this thread (columns j, valid outputs each) of row m: loaded, then activated.
template <class S, bool kVec>
__device__ __forceinline__ void plain_outputs(const Params& p, int64_t m, const int (&j)[2], const int (&valid)[2], float (&y)[2][8]) {
    const uint16_t* row = p.in + m * p.in_ld;
    Raw8 raw[2];
#pragma unroll
    for (int c = 0; c < 2; ++c)
        if (valid[c] > 0) raw[c] = load_raw<S, kVec>(p, row, j[c]);
    let_consumer_start();
#pragma unroll
    for (int c = 0; c < 2; ++c)
        if (valid[c] > 0) activate8<S, true>(p, raw[c], m, y[c]);
}

// The kernels whose blocks span rows (below): this warp's 512 outputs of row m from column tile blockIdx.x,
// chunks A and B of this thread (none past the rows or the row's end; the 16-byte path), loaded and activated.
template <class S>
__device__ __forceinline__ void row_warp_outputs(const Params& p, int64_t m, int (&j)[2], int (&valid)[2], float (&y)[2][8]) {
    j[0] = plain_chunk_a(p, int(blockIdx.x) * 512);
    j[1] = j[0] + (8 << p.pair_shift);
#pragma unroll
    for (int c = 0; c < 2; ++c) valid[c] = m < p.rows && j[c] < p.cols ? 8 : 0;
    plain_outputs<S, true>(p, m, j, valid, y);
}

// Block (b, t): output columns [t, t + 1) * tile of row b, then the padding-row blocks. No MoE layout: a
// MoE row's owner is one or more dependent loads ahead of the row's own, which one row a block cannot hide,
// and a row loop under this kernel's register bound spills (docs/design-notes.md); MoE problems take the
// general kernel.
template <class S, bool kVec, bool kHwCvt, bool kMx>
__global__ void __launch_bounds__(kThreads, kGroupMinBlocks) plain_quant(const Params p) {
    wait_for_producer();
    const int64_t b = block_row<true>();  // the last z slice may run past the padding rows: they find no work
    if (b >= p.rows) {
        let_consumer_start();
        zero_padding_rows<kMx>(p, b, int(blockIdx.x * blockDim.x) * 16, int(blockDim.x) * 16);
        return;
    }
    const int ja = plain_chunk_a(p, int(blockIdx.x * blockDim.x) * 16 + (int(threadIdx.x) >> 5) * 512);
    const int jb = ja + (8 << p.pair_shift);
    const int j[2] = {ja, jb};
    const int valid[2] = {ja < p.cols ? outputs_at<kVec>(p, ja) : 0, jb < p.cols ? outputs_at<kVec>(p, jb) : 0};
    float y[2][8];
    plain_outputs<S, kVec>(p, b, j, valid, y);
    const RowScaleInputs<kMx> in(p, 0);
    quantize_activated<2, kVec, kHwCvt, kMx>(p, RowOwner{0, b, 0}, b, j, valid, y, 1 << p.pair_shift, in.tensor_scale, in.bound);
}

// ---- The plain kernel for 128x4-swizzled block scales ------------------------------------------------
// SWIZZLED_128X4 keeps scale columns 4q .. 4q + 3 of rows m, m + 32, m + 64, m + 96 (m % 128 < 32) in one
// 16-byte unit. plain_quant's warps run along one row, so a warp's 16 scale bytes went to 4 units, 4 bytes
// each, and every unit was written by 4 blocks: more L2 write sectors than row-major scales, and more time
// (docs/design-notes.md). Here warp w of
// block (t, u) runs row m0(u) + 32 w over output columns [t, t + 1) * 512; the 4 warps' scales meet in shared
// memory and leave as whole units, the layout's padding rows and columns (zeros) among them, so the grid has
// no padding blocks. Microscaling only (blocks of 16 or 32: 512 outputs are whole units of 4 scale columns);
// the 16-byte path; a 16-byte aligned scale buffer (launch_group_quant checks).
template <class S, bool kHwCvt>
__global__ void __launch_bounds__(kThreads, kGroupMinBlocks) plain_quant_swizzled(const Params p) {
    wait_for_producer();
    const int64_t u = block_row<true>();
    const int64_t m0 = (u >> 5) * 128 + (u & 31);  // the units' first row
    const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31, s = p.pair_shift;
    const int64_t m = m0 + 32 * warp;
    int j[2], valid[2];
    float y[2][8];
    row_warp_outputs<S>(p, m, j, valid, y);
    const RowScaleInputs<true> in(p, 0);
    const uint8_t sbyte = microscale_tile<2, true, kHwCvt>(p, m, j, valid, y, 1 << s, in.tensor_scale);
    __shared__ __align__(16) uint8_t units[8][16];  // [k / 4][4 w + k % 4], k the block's scale column
    const int k = lane >> s;
    if ((lane & ((1 << s) - 1)) == 0) units[k >> 2][4 * warp + (k & 3)] = valid[0] > 0 ? sbyte : 0;
    __syncthreads();
    const int quads = (512 >> p.group_shift) / 4;  // 4 (blocks of 32) or 8 (NVFP4's 16)
    const int64_t k4 = int64_t(blockIdx.x) * (512 >> p.group_shift) + 4 * int(threadIdx.x);
    if (int(threadIdx.x) < quads && k4 < p.scale_cols_padded)
        *reinterpret_cast<uint4*>(p.scales + row_scale_offset(p, m0, k4)) = *reinterpret_cast<const uint4*>(units[threadIdx.x]);
}

// ---- The plain kernel for column-major scales ----------------------------------------------------------
// COL_MAJOR and COL_MAJOR_TMA keep the fp32 scales of 8 consecutive rows of a group column in one 32-byte
// sector. plain_quant's block (one row) writes one float of each of its groups' sectors, so each sector is
// filled by 8 blocks; with many group columns far apart (16384 x 18432: 144 columns 64 KB apart) that is
// slower than row-major scales (docs/design-notes.md), likely because partial sectors leave L2 before all
// their rows are written. Here warp w of block (t, u)
// runs row 8u + w over output columns [t, t + 1) * 512, and the block stores whole 8-row runs of each of its
// group columns (the layout's padding rows, zeros, among them). Per-group fp32-scale schemes on the 16-byte
// path (launch_group_quant).
// 8 rows: whole sectors (4 rows, half sectors, do not help). Where plain_quant has no trouble this kernel is
// slightly slower, so launch_group_quant takes it only for scale buffers past kColumnRunMinBytes, between the
// largest that run well with plain_quant and the smallest that do not (docs/design-notes.md).
constexpr int kColumnRunRows = 8, kColumnRunThreads = 32 * kColumnRunRows;
constexpr int64_t kColumnRunMinBytes = int64_t(6) << 20;

template <class S, bool kHwCvt>
__global__ void __launch_bounds__(kColumnRunThreads, kGroupMinBlocks * 4 / kColumnRunRows) plain_quant_column_runs(const Params p) {
    wait_for_producer();
    const int64_t m0 = block_row<true>() * kColumnRunRows;
    const int warp = int(threadIdx.x) >> 5, lane = int(threadIdx.x) & 31, s = p.pair_shift;
    const int64_t m = m0 + warp;
    int j[2], valid[2];
    float y[2][8];
    row_warp_outputs<S>(p, m, j, valid, y);
    const RowScaleInputs<false> in(p, 0);
    const float sc = scaled_tile<2, true, kHwCvt>(p, m, j, valid, y, 1 << s, in.tensor_scale, in.bound);
    __shared__ float runs[16][kColumnRunRows];  // [k][w], k the block's group column (512 / G of them: 4, 8 or 16)
    const int k = lane >> s;
    if ((lane & ((1 << s) - 1)) == 0) runs[k][warp] = valid[0] > 0 ? sc : 0.0f;
    __syncthreads();
    const int groups = 512 >> p.group_shift, kk = int(threadIdx.x) / kColumnRunRows, r = int(threadIdx.x) % kColumnRunRows;
    const int64_t kg = int64_t(blockIdx.x) * groups + kk;
    if (kk < groups && kg < p.sg.cols && m0 + r < p.sg.padded_rows)
        store_scale(p.sg, p.scales + row_scale_offset(p, m0 + r, kg), runs[kk][r]);
}

// ---- Outputs parked in shared memory (token_quant, columnwise_quant) ---------------------------------
// A thread's parked fp32 outputs, 8 a row (or step) i: columns 4h .. 4h + 3 in float4 slot (i, h), slots of
// neighbouring threads adjacent (thread-minor, `stride` threads a slot row: a warp's 16-byte accesses are
// conflict-free, and a thread reads back only its own slots, so no barrier).
struct ParkedSlots {
    float4* base;  // slot (0, 0) of this thread
    int stride;    // the block's threads
    __device__ __forceinline__ float4& slot(int i, int h) const { return base[(i * 2 + h) * stride]; }
    __device__ __forceinline__ float& at(int i, int c) const { return reinterpret_cast<float*>(&slot(i, c / 4))[c % 4]; }
    __device__ __forceinline__ void park(int i, const float (&y)[8]) const {
        slot(i, 0) = make_float4(y[0], y[1], y[2], y[3]);
        slot(i, 1) = make_float4(y[4], y[5], y[6], y[7]);
    }
    __device__ __forceinline__ void unpark(int i, float (&y)[8]) const {
        const float4 lo = slot(i, 0), hi = slot(i, 1);
        y[0] = lo.x, y[1] = lo.y, y[2] = lo.z, y[3] = lo.w, y[4] = hi.x, y[5] = hi.y, y[6] = hi.z, y[7] = hi.w;
    }
};

// ---- Skeleton 2: per-token (one block per row) -------------------------------------------------------
// Pass 1 activates the row, a step of blockDim.x * 8 outputs at a time (8 a thread; the next step's inputs in
// flight while this one is activated), and reduces its amax over the block; pass 2 quantizes. kParked: pass 1
// parks its outputs in dynamic shared memory (ParkedSlots, a slot row per step), so the row is read from
// memory and activated once. Rows wider than kTokenParkMaxOutputs (96 KB of fp32: an sm_86/89 block may have
// 99 KB) read their inputs again in pass 2 (from L2) and activate them again, as every row once did, which is
// far slower (docs/design-notes.md).
// Blocks of 256 threads, or up to 1024 where there are too few rows to fill the GPU (token_block_threads):
// a row's latency is then its number of steps.
constexpr int kTokenMaxThreads = 1024;
constexpr int kTokenParkMaxOutputs = 24576;
constexpr size_t kTokenParkMaxBytes = kTokenParkMaxOutputs * sizeof(float);

inline int token_block_threads(int64_t rows, int sm_count) {
    const int64_t wanted = int64_t(sm_count) * 1024 / std::max<int64_t>(rows, 1);  // ~1024 threads an SM
    return wanted > 512 ? 1024 : wanted > 256 ? 512 : kTokenThreads;
}

template <class S, bool kVec, bool kHwCvt, bool kParked>
__global__ void __launch_bounds__(kTokenMaxThreads) token_quant(const Params p) {
    extern __shared__ float4 parked_quads[];  // kParked: [step][half][thread]
    wait_for_producer();
    const int64_t m = blockIdx.x;
    if (m >= p.rows) {  // padding rows of a column-major TMA or swizzled scale layout
        let_consumer_start();
        if (threadIdx.x == 0) zero_scale_slot<false>(p, padding_row(p, m - p.rows), 0);
        return;
    }
    const RowOwner o = row_owner(p, m);
    if (o.expert < 0) return;
    const int threads = int(blockDim.x), stride = threads * 8, first = int(threadIdx.x) * 8;
    const ParkedSlots parked{parked_quads + threadIdx.x, threads};
    float a = 0.0f;
    Raw8 raw;
    if (first < p.cols) raw = load_raw<S, kVec>(p, m, first);
    for (int j0 = first, step = 0; j0 < p.cols; j0 += stride, ++step) {
        Raw8 next;
        if (j0 + stride < p.cols) next = load_raw<S, kVec>(p, m, j0 + stride);
        float y[8];
        activate8<S>(p, raw, m, y);
        a = fmaxf(a, amax8(y, outputs_left(p, j0)));
        if constexpr (kParked) parked.park(step, y);
        raw = next;
    }
    let_consumer_start();
    __shared__ float warp_amax[kTokenMaxThreads / 32];
    for (int d = 16; d > 0; d /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    if ((threadIdx.x & 31) == 0) warp_amax[threadIdx.x / 32] = a;
    __syncthreads();
    a = 0.0f;
    for (int w = 0; w < threads / 32; ++w) a = fmaxf(a, warp_amax[w]);
    const float s = group_scale(a, upper_bound(p), p.quant);
    const Divisor d = divisor_of(s, p.quant);
    if (threadIdx.x == 0) {
        store_scale(p.sg, p.scales + o.block + row_scale_offset(p, o.scale_row, 0), s);
        zero_scale_padding(p, p.scales + o.block, o.scale_row, 0);
    }
    for (int j0 = first, step = 0; j0 < p.cols; j0 += stride, ++step) {
        float y[8];
        if constexpr (kParked) parked.unpark(step, y);
        else activate8<S>(p, load_raw<S, kVec>(p, m, j0), m, y);
        store8<kVec>(p.out + m * p.out_ld + j0, quantize8<kHwCvt>(y, a, d, p.quant), outputs_left(p, j0));
    }
}

// ---- Skeleton 3: amax of the whole tensor (per-tensor dynamic, step 1 of 3) -------------------------
template <class S, bool kVec, bool kPlain>
__global__ void __launch_bounds__(kThreads) tensor_amax(const Params p) {
    wait_for_producer();
    const int j0 = tile_first_output<kPlain>();
    const int64_t m = block_row<kPlain>();
    if (m >= p.rows) return;
    const int e = row_owner(p, m).expert;  // the same for the whole block
    if (e < 0) return;
    float a = 0.0f;
    if (j0 < p.cols) {
        float y[8];
        activate8<S, kPlain>(p, load_raw<S, kVec>(p, m, j0), m, y);
        a = amax8(y, outputs_left(p, j0));
    }
    for (int d = 16; d > 0; d /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    __shared__ float warp_amax[kThreads / 32];
    if ((threadIdx.x & 31) == 0) warp_amax[threadIdx.x / 32] = a;
    __syncthreads();
    if (threadIdx.x != 0) return;
#pragma unroll
    for (int w = 1; w < kThreads / 32; ++w) a = fmaxf(a, warp_amax[w]);
    // One atomic per block, and none where the word already holds as much: a single word updated by
    // every warp serialises the pass (docs/design-notes.md). Non-negative floats
    // order like their bit patterns, so an unsigned max is a float max; the plain read may be stale,
    // which only costs an atomic.
    const unsigned bits = __float_as_uint(a);
    if (a > 0.0f && bits > *reinterpret_cast<volatile unsigned*>(p.amax_bits + e)) atomicMax(p.amax_bits + e, bits);
}

// Step 3 of per-tensor dynamic: each expert's amax word becomes its scale (step 2, the quantize kernel,
// read the amax); the columnwise scale buffer gets the same scales.
__global__ void finalize_tensor_scale(const Params p);

// ---- Host side ---------------------------------------------------------------------------------------
Params make_params(const LaunchArgs& a);
// Whether the 16-byte IO forms run c: aligned pointers and row strides, a width divisible by 8.
bool vector_io_ok(const OpConfig& c);
fqStatus_t prepare_tensor_amax(const LaunchArgs& a, const Params& p);
fqStatus_t finish_tensor_scale(const LaunchArgs& a, bool pdl, const Params& p);

template <class Kernel, class... Extra>
fqStatus_t launch_smem(Kernel kernel, dim3 grid, dim3 block, size_t smem, const LaunchArgs& a, bool pdl_capable,
                       const Params& p, Extra... extra) {
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return FQ_STATUS_SUCCESS;
    return cuda_status(launch_kernel(kernel, grid, block, smem, static_cast<cudaStream_t>(a.stream),
                                     pdl_capable && a.allow_pdl, p, extra...),
                       "kernel launch");
}

// Lets kKernel take up to kMaxBytes (its largest launch) of dynamic shared memory on the launch's device.
// cudaFuncSetAttribute runs once per kernel and device (a bit per device ordinal below 64; others set it on
// every call), not on every launch. (A cudaDeviceReset would drop the attribute unseen: a library in an
// engine does not outlive that.)
template <auto kKernel, size_t kMaxBytes>
fqStatus_t allow_dynamic_smem(const LaunchArgs& a) {
    static std::atomic<uint64_t> done{0};
    const uint64_t bit = a.device >= 0 && a.device < 64 ? uint64_t(1) << a.device : 0;
    if (done.load(std::memory_order_acquire) & bit) return FQ_STATUS_SUCCESS;
    FQ_TRY(cuda_status(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxBytes)),
                       "cudaFuncSetAttribute (dynamic shared memory)"));
    done.fetch_or(bit, std::memory_order_release);
    return FQ_STATUS_SUCCESS;
}

template <class Kernel, class... Extra>
fqStatus_t launch(Kernel kernel, dim3 grid, dim3 block, const LaunchArgs& a, bool pdl_capable, const Params& p,
                  Extra... extra) {
    return launch_smem(kernel, grid, block, 0, a, pdl_capable, p, extra...);
}

// Calls f(Shape<kAct, in, gate>{}) for the problem's input type and gate arrangement.
template <Act kAct, class F>
fqStatus_t with_shape(const OpConfig& c, F&& f) {
    auto with_gate = [&](auto in) -> fqStatus_t {
        constexpr InType kIn = decltype(in)::value;
        switch (c.gate) {
            case GateLayout::None:
                // SwiGLU-OAI is gated (configure refuses it without a gate): no kernel of that shape is built.
                if constexpr (kAct == Act::SwigluOai) return fail(FQ_STATUS_INTERNAL_ERROR, "SWIGLU_OAI without a gate");
                else return f(Shape<kAct, kIn, GateKind::None>{});
            case GateLayout::Interleaved: return f(Shape<kAct, kIn, GateKind::Interleaved>{});
            default: return f(Shape<kAct, kIn, GateKind::TwoStreams>{});
        }
    };
    if (c.in_type == InType::Bf16) return with_gate(std::integral_constant<InType, InType::Bf16>{});
    return with_gate(std::integral_constant<InType, InType::Fp16>{});
}

// Step 1 of per-tensor dynamic, and of NVFP4 without the caller's global amax: each expert's amax into its
// word (kPlain: the FP32 activation body, for problems with neither intermediate rounding nor MoE).
template <class S, bool kVec, bool kPdl>
fqStatus_t run_tensor_amax(const LaunchArgs& a, const Params& p, bool plain) {
    const OpConfig& c = a.cfg;
    if (c.scheme != Scheme::PerTensorDynamic && (c.scheme != Scheme::Nvfp4 || c.global_amax)) return FQ_STATUS_SUCCESS;
    FQ_TRY(prepare_tensor_amax(a, p));
    const auto kernel = plain ? tensor_amax<S, kVec, true> : tensor_amax<S, kVec, false>;
    const unsigned col_tiles = unsigned(ceil_div(c.cols, int64_t(kThreads) * 8));
    return launch(kernel, block_grid(plain, c.rows, col_tiles), dim3(kThreads), a, kPdl, p);
}

// Grid: one block per row, then the padding-row blocks; column blocks of 1024 outputs (general kernel,
// rows fastest) or 2048 (plain kernel, memory order; see block_grid).
template <class S, bool kVec, bool kHwCvt, bool kPlain, bool kPdl, bool kMx>
fqStatus_t launch_group_quant(const LaunchArgs& a, const Params& p) {
    const int64_t padding_blocks = ceil_div(padding_rows_total(p), kPadRowsPerBlock);
    if constexpr (kPlain) {
        // Scale layouts whose runs span rows: blocks over several rows (the kernels above; a plain problem has no
        // MoE layout, so one scale block).
        const int64_t tiles512 = ceil_div(p.cols, int64_t(512));
        const ScaleLayout layout = p.sg.layout;
        if constexpr (kMx && kVec) {
            if (layout == ScaleLayout::Swizzled128x4 && reinterpret_cast<uintptr_t>(p.scales) % 16 == 0)
                return launch(plain_quant_swizzled<S, kHwCvt>, block_grid(true, p.sg.padded_rows / 4, tiles512), dim3(kThreads), a, kPdl, p);
        }
        if constexpr (!kMx && kVec) {
            if ((layout == ScaleLayout::ColMajor || layout == ScaleLayout::ColMajorTma) && p.scheme == Scheme::PerGroup &&
                (p.sg.bytes > kColumnRunMinBytes || a.wide_tile_min == 0))
                return launch(plain_quant_column_runs<S, kHwCvt>, block_grid(true, ceil_div(p.sg.padded_rows, int64_t(kColumnRunRows)), tiles512),
                              dim3(kColumnRunThreads), a, kPdl, p);
        }
        const int threads = plain_block_threads(p.cols, S::gate != GateKind::None);
        return launch(plain_quant<S, kVec, kHwCvt, kMx>, block_grid(true, p.rows + padding_blocks, ceil_div(p.cols, int64_t(threads) * 16)),
                      dim3(threads), a, kPdl, p);
    } else {
        // Several rows a block for MoE problems, as many as keep 4 waves of blocks (at most 16).
        const int64_t col_tiles = ceil_div(p.cols, int64_t(kThreads) * 8);
        Params q = p;
        q.rows_per_block = p.moe == MoeLayout::None ? 1 : std::max<int64_t>(1, std::min<int64_t>(16, p.rows * col_tiles / (4 * resident_blocks(a))));
        q.row_blocks = ceil_div(p.rows, q.rows_per_block);
        const int64_t blocks = (q.row_blocks + padding_blocks) * col_tiles;
        return launch(group_quant<S, kVec, kHwCvt, kMx>, block_grid(false, q.row_blocks + padding_blocks, col_tiles), dim3(kThreads), a,
                      kPdl && pdl_pays(a, blocks), q);
    }
}

template <Act kAct, bool kVec, bool kHwCvt, bool kPdl>
fqStatus_t run_group_for(const LaunchArgs& a) {
    const OpConfig& c = a.cfg;
    const Params p = make_params(a);
    // The plain kernel where it fills the GPU (FQ_HANDLE_WIDE_TILE_MIN tiles, default one wave); below that the
    // time is one thread's latency, and the general kernel's 8 outputs a thread have less of it
    // (docs/design-notes.md).
    const int64_t wave = resident_blocks(a);
    const bool wide = c.rows * ceil_div(c.cols, int64_t(kPlainTile)) >= (a.wide_tile_min < 0 ? wave : a.wide_tile_min);
    const bool plain_kernel = c.plain() && wide;
    return with_shape<kAct>(c, [&](auto shape) -> fqStatus_t {
        using S = decltype(shape);
        FQ_TRY((run_tensor_amax<S, kVec, kPdl>(a, p, c.fp32_intermediates())));
        const bool mx = is_microscaling(c.scheme);
        const auto launch_quant = plain_kernel ? (mx ? launch_group_quant<S, kVec, kHwCvt, true, kPdl, true>
                                                     : launch_group_quant<S, kVec, kHwCvt, true, kPdl, false>)
                                               : (mx ? launch_group_quant<S, kVec, kHwCvt, false, kPdl, true>
                                                     : launch_group_quant<S, kVec, kHwCvt, false, kPdl, false>);
        FQ_TRY(launch_quant(a, p));
        if (c.scheme == Scheme::PerTensorDynamic) FQ_TRY(finish_tensor_scale(a, kPdl, p));
        return FQ_STATUS_SUCCESS;
    });
}

// Per-token rows: a block per row and per padding row of the scale layout, the outputs parked where the row fits.
template <class S, bool kVec, bool kHwCvt, bool kPdl>
fqStatus_t launch_token_quant(const LaunchArgs& a, const Params& p) {
    const dim3 grid(unsigned(p.rows + padding_rows_total(p)));
    const int threads = token_block_threads(p.rows, a.sm_count);
    if (p.cols > kTokenParkMaxOutputs) return launch(token_quant<S, kVec, kHwCvt, false>, grid, dim3(threads), a, kPdl, p);
    constexpr auto kernel = token_quant<S, kVec, kHwCvt, true>;
    FQ_TRY((allow_dynamic_smem<kernel, kTokenParkMaxBytes>(a)));
    const int64_t steps = ceil_div(int64_t(p.cols), int64_t(threads) * 8);  // a slot row (8 floats a thread) each
    return launch_smem(kernel, grid, dim3(threads), size_t(steps * threads) * 8 * sizeof(float), a, kPdl, p);
}

template <Act kAct, bool kVec, bool kHwCvt, bool kPdl>
fqStatus_t run_token_for(const LaunchArgs& a) {
    const Params p = make_params(a);
    return with_shape<kAct>(a.cfg, [&](auto shape) { return launch_token_quant<decltype(shape), kVec, kHwCvt, kPdl>(a, p); });
}

// Every (16-byte IO, hardware conversion, PDL) combination the variant table uses -- sm90: both IOs, hw cvt,
// PDL; sm89: both IOs, hw cvt; sm80: both IOs, software encoding -- of launcher L for one activation.
#define FQ_FOR_EACH_ARCH_CONFIG(X, L, ACT)                                \
    X(template fqStatus_t L<ACT, true, true, true>(const LaunchArgs&);)   \
    X(template fqStatus_t L<ACT, false, true, true>(const LaunchArgs&);)  \
    X(template fqStatus_t L<ACT, true, true, false>(const LaunchArgs&);)  \
    X(template fqStatus_t L<ACT, false, true, false>(const LaunchArgs&);) \
    X(template fqStatus_t L<ACT, true, false, false>(const LaunchArgs&);) \
    X(template fqStatus_t L<ACT, false, false, false>(const LaunchArgs&);)

// The row kernels of one activation; instantiated once per activation by instantiate_activation.cu.in.
#define FQ_FOR_EACH_LAUNCHER(X, ACT) FQ_FOR_EACH_ARCH_CONFIG(X, run_group_for, ACT) FQ_FOR_EACH_ARCH_CONFIG(X, run_token_for, ACT)

}  // namespace fq::cuda
