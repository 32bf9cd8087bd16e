// Grouped FP8 GEMM with the activation + quantization epilogue fused, for Hopper (sm_90a).
//
// Persistent CTAs, in clusters of two, walk work units (small one-group GEMMs take the split-K variant, or with
// rowwise codes alone and a split of two the row-pair kernel: see each). A unit is 128 rows of A (a tile anchored at a multiple of 128, so columnwise blocks of the
// stacked rows lie inside it; MoE without columnwise outputs: one group's rows of such a tile, a segment, so that
// every unit costs one pass over K) x 128 output columns (one 1x128 quantization group, i.e. two 128-column C tiles
// of gate/up pairs); the two CTAs of a cluster take the same rows and
// neighbouring columns, so each loads half of every A tile and TMA multicasts it to both (A is read from L2
// once per pair). Warp roles:
//  - warp 0: the producer: lane 0 issues every TMA load into a 3-stage pipeline (split K: 3 or 4; a stage: 128
//    of K of A and of both C tiles' B), and the warp copies each stage's scales beside it (cp.async,
//    completing on the same barrier), so the consumers read scales from shared memory: a global load in flight
//    would hold up their next wgmma fence;
//  - warpgroups 1 and 2: the consumers, 64 rows each: for every group owning rows of the unit, both C tiles in
//    one pass over K (each A block serves two tiles: less L2 and shared-memory traffic per MMA than a pass per
//    tile), wgmma m64n128k32, promoting each 128-deep block's fp32 partial sum with its A (per row) and B (per
//    128x128 block) scales (DeepGEMM's recipe: the tensor core's own accumulation is never trusted across
//    more than 128 of K); the two tiles go, rounded to bf16 (what an unfused pipeline's GEMM writes), into two
//    shared C-tile slots;
//  - warps 1-3: the epilogue, one unit behind: C out, the gated activation and routing probability, rowwise
//    and columnwise quantization with the same shared functions the fused kernels and the host reference
//    call, so the bytes equal fqQuantize of C. It overlaps the next unit's main loop.
// (Measured limits: docs/perf.md.)
#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <mutex>

#include "../../common/status.h"
#include "../../common/activation.h"
#include "../../common/grouped_gemm.h"
#include "../../common/moe.h"
#include "../../common/quantize.h"
#include "../../dispatch/grouped_gemm.h"
#include "../fused_quant.cuh"
#include "sm90.cuh"

namespace fq {
namespace {

constexpr int kTileM = 128;       // rows of a unit (two consumer warpgroups of 64)
constexpr int kTileN = 128;       // C columns of one tile: 64 gate/up pairs
constexpr int kTileK = 128;       // K per pipeline stage = the scale block of A and B
constexpr int kHalfN = 64;        // output columns of one C tile; rows of one B box and of one A multicast box
constexpr int kUnitCols = 128;    // output columns of a unit (two C tiles)
constexpr int kStages = 3;        // pipeline stages of the persistent kernel
constexpr int kSplitStages = 4;   // ... of the split-K kernel, at most: its fourth in the C-tile slots (SharedStorage)
constexpr int kSlots = 2;  // C-tile slots: a unit's two tiles, drained by the epilogue during the next unit's main loop
constexpr int kSlotWords = kTileN / 2;  // a slot row: 128 bf16 of C, later the 64 fp32 y of the tile
constexpr int kMaxSplit = 8;    // CTAs splitting K of one unit (a portable cluster size)
constexpr int kThreads = 384;
constexpr int kConsumerThreads = 256;
constexpr int kEpilogueThreads = 96;    // warps 1-3
constexpr int kEpilogueBarrier = 1;     // named barrier of the epilogue warps (0 is __syncthreads)
constexpr int kConsumerBarrier = 2;     // ... of the consumer warpgroups
constexpr int kFinishWarps = 11;        // warps 1-11 (epilogue and consumers) finish a CTA's last unit (split K: its one)
constexpr int kFinishRowsBarrier = 3;   // ... and meet at this named barrier before the columnwise blocks
// Registers: the launch gives every thread 168 (65536 / 384, rounded down to 8); warpgroup 0 (producer and
// epilogue) gives back enough for the consumers' 64 accumulators + 2 x 64 promoted sums (two C tiles; the row-pair
// kernel: one tile's, and the sum of the K slices before):
// kProducerRegs + 2 x kConsumerRegs = 3 x 168 (setmaxnreg's total may not exceed the launch's).
constexpr int kProducerRegs = 88, kConsumerRegs = 208;
static_assert(kProducerRegs + 2 * kConsumerRegs == 3 * 168, "the registers the launch gives");

// Where the gate and up columns of an output column sit in a C tile (docs/spec.md §2 gate layouts), decided by how the
// B tile was loaded: two 64-row boxes (the "first" and "second" columns of 64 outputs), or one 128-row run.
enum class Pairing {
    Halves,    // SPLIT, BLOCK_INTERLEAVED with blocks of 64k: output i <- tile columns i and 64 + i
    Adjacent,  // INTERLEAVED: output i <- tile columns 2i and 2i + 1
    Blocks32   // BLOCK_INTERLEAVED 32: output 32b + r <- tile columns 64b + r and 64b + 32 + r
};

// One pipeline stage's operand tiles: 128-byte swizzled K-major tiles, as TMA writes them.
struct StageTiles {
    uint8_t a[kTileM * kTileK];
    uint8_t b[2][kTileN * kTileK];  // C tile t's B: its first and second 64-row boxes
};
constexpr uint32_t kStageBytes = sizeof(StageTiles);  // what a stage's TMA loads bring
// Stage i's tiles sit at tiles + i * sizeof(StageTiles), the split-K kernel's fourth stage in the slots' bytes:
// under split K a cluster has one unit, whose slots are written only once its K loop is done, and a long enough
// slice of K, read from HBM, runs faster with more bytes in flight than three stages hold (Params::split_stages).
struct SharedStorage {
    StageTiles tiles[kStages];
    union {
        uint32_t slot[kSlots][kTileM][kSlotWords];  // word w of row r at w ^ slot_swizzle(r)
        StageTiles split_last_stage;
    };
    float a_scale[kSplitStages][kTileM];        // a stage's A scales (its rows) and B scales (tile t's first,
    float b_scale[kSplitStages][2][2];          // second box)
    uint64_t full[kSplitStages], empty[kSplitStages];  // the TMA pipeline
    uint64_t slot_full[kSlots], slot_empty[kSlots];
    uint64_t split_ready;                       // split K: the C tiles' partial sums written, cluster-wide;
    uint64_t split_y;                           // every row's y in its CTA's slots (columnwise outputs)
};
// The 128-byte swizzle repeats every 1024 bytes of shared address, so the tiles start on such a boundary: the
// dynamic shared memory is declared 1024-aligned (the kernel has no static shared memory, so nothing precedes it).
constexpr size_t kSmemBytes = sizeof(SharedStorage);
static_assert(kSmemBytes <= 227 * 1024, "the H100's shared memory per block");
static_assert(offsetof(SharedStorage, split_last_stage) == kStages * sizeof(StageTiles) && kSplitStages == kStages + 1,
              "split K's stages are contiguous");
// Stage i's tiles (i < kSplitStages under split K, else < kStages).
__device__ __forceinline__ StageTiles& stage_tiles(SharedStorage& s, int i) {
    return *reinterpret_cast<StageTiles*>(reinterpret_cast<uint8_t*>(s.tiles) + i * sizeof(StageTiles));
}

// Rows of a slot are 64 words, so a warp's eight rows of one column would share a bank: words are permuted
// within groups of four by the row (groups of four stay contiguous for 16-byte accesses).
__device__ __forceinline__ int slot_key(int row) { return (row & 7) << 2; }
__device__ __forceinline__ int slot_word(int row, int word) { return word ^ slot_key(row); }
// The same, computed where it is used: the consumers' 32 store offsets per tile are loop-invariant, and ptxas,
// hoisting them out of the unit loop into registers the accumulators need, spills them (the stash then waits on
// local memory). An xor per store is cheaper; asm volatile keeps it in place.
__device__ __forceinline__ int slot_word_here(int row, int word) {
    int r;
    asm volatile("xor.b32 %0, %1, %2;" : "=r"(r) : "r"(word), "r"(slot_key(row)));
    return r;
}

struct Params {
    int64_t m, n, h;
    int32_t groups;
    int32_t cluster;                // CTAs per cluster sharing A: 1 or 2
    int32_t split;                  // CTAs per cluster splitting K of one unit (split kernel: 2 .. kMaxSplit; else 1)
    int32_t split_stages;           // the split kernel's pipeline stages: 3 or kSplitStages
    int64_t m_tiles, unit_cols_tiles, pair_cols, k_blocks, n_blocks;
    const int32_t* offsets;
    const int32_t* counts;
    const float* a_scales;
    int64_t a_scale_ld;
    const float* alpha;
    const float* b_scales;
    uint16_t* c_out;
    uint16_t* d_out;
    // Activation (docs/spec.md §2).
    Act act;
    Rounding rounding;
    SwigluParams swiglu;
    GateLayout gate;
    GateOrder order;
    int64_t gate_block;
    const float* prob;
    // Quantization (docs/spec.md §3.2), rowwise into out/scales, columnwise into col_out/col_scales.
    QuantParams qp;
    const float* scale_ub;
    int32_t group, col_block, group_log2, col_block_log2;  // powers of two
    bool rowwise, columnwise, col_transpose, stash;
    bool lean;  // the epilogue may take lean_rows: rowwise e4m3 / e5m2 codes by division only (no qmax override), SiLU or SwiGLU-OAI
    uint8_t* out;
    int64_t out_ld;
    uint8_t* scales;
    ScaleStrides row_strides;
    uint8_t* col_out;
    uint8_t* col_scales;
    ScaleStrides col_strides;
    // Scale slots past the logical rows (COL_MAJOR_TMA padding), zeroed by CTA 0: rowwise rows [m, row_pad_end)
    // x row_groups, columnwise rows [h, col_pad_end) x col_groups.
    int64_t row_pad_end, row_groups, col_pad_end, col_groups;
};


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
// gives some CTAs several such tiles: with DeepSeek-like skewed groups the busiest cluster ran 1.1-1.45x the
// average (docs/perf.md, session 32). Segments, one group's rows of one tile each, cost one pass: the walk over
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
using sm90::named_barrier;

// Two floats as bf16 (round to nearest even), lo in the low half: one cvt, the bits of float_to_bf16 for
// every non-NaN value.
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
// The same by float_to_bf16 (the host reference's bits, NaN included).
__device__ __forceinline__ uint32_t pack_bf16x2_exact(float lo, float hi) {
    return uint32_t(float_to_bf16(lo)) | (uint32_t(float_to_bf16(hi)) << 16);
}
// float_to_bf16's bits of a pair: the hardware conversion unless one is NaN (its NaN differs from float_to_bf16's).
__device__ __forceinline__ uint32_t pack_bf16x2_reference(float lo, float hi) {
    return lo == lo && hi == hi ? pack_bf16x2(lo, hi) : pack_bf16x2_exact(lo, hi);
}

// ---- The epilogue: one unit from its two slots ---------------------------------------------------------------

// The gate and up inputs (bf16 C) of the four outputs i0 .. i0+3 of a C tile (i0 a multiple of 4), from the
// tile's slot row: two 8-byte reads, or one 16-byte read for adjacent pairs.
template <Pairing P>
__device__ __forceinline__ void gate_up4(const Params& p, const uint32_t* srow, int row, int i0, float (&g)[4],
                                         float (&u)[4]) {
    // The order is chosen once for the four outputs (which half of a word, or which word, is the gate), not
    // per value. A bf16 word half as a float: the low half shifted up (byte_perm 0x1044), the high half kept.
    const bool gate_first = p.order == GateOrder::GateFirst;
    auto lo = [](uint32_t w) { return __uint_as_float(w << 16); };
    auto hi = [](uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); };
    if constexpr (P == Pairing::Adjacent) {  // output i <- columns 2i, 2i + 1: words i0 .. i0+3
        const uint4 w = *reinterpret_cast<const uint4*>(srow + slot_word(row, i0));
        const uint32_t ws[4] = {w.x, w.y, w.z, w.w};
        const uint32_t gate_half = gate_first ? 0x1044u : 0x3244u, up_half = gate_first ? 0x3244u : 0x1044u;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            g[k] = __uint_as_float(__byte_perm(ws[k], 0, gate_half));
            u[k] = __uint_as_float(__byte_perm(ws[k], 0, up_half));
        }
    } else {  // Halves: columns i and 64 + i; Blocks32: 64b + r and 64b + 32 + r (four never cross a block)
        const int c0 = P == Pairing::Halves ? i0 : (i0 / 32) * 64 + i0 % 32;
        const int c1 = c0 + (P == Pairing::Halves ? kHalfN : 32);
        const uint2 a = *reinterpret_cast<const uint2*>(srow + slot_word(row, (gate_first ? c0 : c1) / 2));
        const uint2 b = *reinterpret_cast<const uint2*>(srow + slot_word(row, (gate_first ? c1 : c0) / 2));
        g[0] = lo(a.x); g[1] = hi(a.x); g[2] = lo(a.y); g[3] = hi(a.y);
        u[0] = lo(b.x); u[1] = hi(b.x); u[2] = lo(b.y); u[3] = hi(b.y);
    }
}

// act(g) * u (docs/spec.md §2) of four outputs, the activation fixed at compile time. SiLU and SwiGLU-OAI take the
// fused kernels' fast path (silu_fast.cuh: the same bits) where all four inputs are inside its range and the
// intermediates are fp32; everything else goes through the shared exact code.
template <Act A>
__device__ __forceinline__ void activate4(const Params& p, const float (&g)[4], const float (&u)[4], float (&y)[4]) {
    bool fast = p.rounding == Rounding::Fp32 && (A == Act::Silu || A == Act::SwigluOai);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        if constexpr (A == Act::Silu) fast = fast && fabsf(g[k]) <= cuda::kSiluInsideLimit;  // NaN fails
        if constexpr (A == Act::SwigluOai) fast = fast && cuda::swiglu_inside_all(fabsf(g[k]), fabsf(u[k]), p.swiglu);
    }
    if (fast) {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            if constexpr (A == Act::Silu) y[k] = cuda::silu_inside(g[k]) * u[k];
            if constexpr (A == Act::SwigluOai) y[k] = cuda::swiglu_gate_inside(g[k], p.swiglu) * cuda::swiglu_up_inside(u[k], p.swiglu);
        }
        return;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) y[k] = activate_gated(A, g[k], u[k], p.rounding, InType::Bf16, p.swiglu);
}

// y of the four outputs 4l .. 4l+3 (lane l; they lie in C tile l / 16) of kRows unit rows, rows[i] of the
// unit at srow[i] of its slot.
template <Pairing P, Act A, int kRows>
__device__ __forceinline__ void y4(const Params& p, uint32_t* const (&srow)[kRows], const int (&rows)[kRows], int lane,
                                   const float (&prob)[kRows], float (&y)[kRows][4]) {
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        float g[4], u[4];
        gate_up4<P>(p, srow[i], rows[i], 4 * (lane % 16), g, u);
        activate4<A>(p, g, u, y[i]);
        if (p.prob)
#pragma unroll
            for (int k = 0; k < 4; ++k) y[i][k] = prob[i] * y[i][k];
    }
}

template <Pairing P, int kRows>
__device__ __forceinline__ void y4_of(const Params& p, uint32_t* const (&srow)[kRows], const int (&rows)[kRows], int lane,
                                      const float (&prob)[kRows], float (&y)[kRows][4]) {
    switch (p.act) {  // every activation of FQ_ACTIVATIONS (enum_lists.h)
#define FQ_Y4_CASE(Internal, ...) \
    case Act::Internal: return y4<P, Act::Internal>(p, srow, rows, lane, prob, y);
        FQ_ACTIVATIONS(FQ_Y4_CASE)
#undef FQ_Y4_CASE
    }
}

// The fp8 codes of N values (N even, <= 4), little-endian in a word: the hardware conversion, saturating.
template <int N>
__device__ __forceinline__ uint32_t fp8_codes(const float (&v)[N], __nv_fp8_interpretation_t f) {
    uint32_t code = 0;
#pragma unroll
    for (int k = 0; k < N; k += 2)
        code |= uint32_t(__nv_cvt_float2_to_fp8x2(make_float2(v[k], v[k + 1]), __NV_SATFINITE, f)) << (8 * k);
    return code;
}

// The codes of N values of one quantization group, little-endian in a word (N <= 4): y / s (or y * (1/s) under
// MULTIPLY_RECIPROCAL) as the quantizer's code (docs/spec.md §3.2), the same byte as quantize_value. The group's
// decisions are taken once for the N values: the fused kernels' three-instruction quotient where it is exact
// (`in_range`: the group's amax bounds |y|), and the hardware fp8 conversion (two values a cvt). v is overwritten.
template <int N>
__device__ __forceinline__ uint32_t quantize_codes(float (&v)[N], const cuda::Divisor& d, bool in_range,
                                                   const QuantParams& q) {
    static_assert(N >= 1 && N <= 4, "codes of one word");
    if (q.reciprocal) {
#pragma unroll
        for (int k = 0; k < N; ++k) v[k] *= d.r;
    } else if (in_range) {
#pragma unroll
        for (int k = 0; k < N; ++k) v[k] = cuda::quotient(v[k], d);
    } else {
#pragma unroll
        for (int k = 0; k < N; ++k) v[k] = v[k] / d.s;
    }
    if (has_saturation_bound(q)) {  // a qmax override bounds the codes (docs/spec.md §3.4); cvt knows the format's only
#pragma unroll
        for (int k = 0; k < N; ++k) v[k] = saturate(v[k], q);
    }
    uint32_t code = 0;
    if (q.out == DType::E4M3FN || q.out == DType::E5M2) {
        const __nv_fp8_interpretation_t f = q.out == DType::E4M3FN ? __NV_E4M3 : __NV_E5M2;
        if constexpr (N % 2 == 0) {
            code = fp8_codes(v, f);
        } else {
#pragma unroll
            for (int k = 0; k < N; ++k) code |= uint32_t(__nv_cvt_float_to_fp8(v[k], __NV_SATFINITE, f)) << (8 * k);
        }
        return code;
    }
#pragma unroll
    for (int k = 0; k < N; ++k) code |= uint32_t(encode_scaled(q.out, v[k])) << (8 * k);
    return code;
}

// Each of kRows row amaxes of one lane (>= +0, never NaN: fmaxf from 0) becomes its group's, across the group's
// group / 4 lanes (group_lanes = group / 4 - 1, a mask). A 128-wide group is the warp's row: one reduction on the
// bits, which order like the values; narrower groups: a butterfly whose offsets past the group become xor 0.
template <int kRows>
__device__ __forceinline__ void group_amax(float (&amax)[kRows], int group_lanes) {
    if (group_lanes == 31) {
#pragma unroll
        for (int i = 0; i < kRows; ++i) amax[i] = __uint_as_float(__reduce_max_sync(0xFFFFFFFFu, __float_as_uint(amax[i])));
        return;
    }
#pragma unroll
    for (int off = 16; off >= 1; off /= 2)
#pragma unroll
        for (int i = 0; i < kRows; ++i) amax[i] = fmaxf(amax[i], __shfl_xor_sync(0xFFFFFFFFu, amax[i], off & group_lanes));
}

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
    group_amax(amax, p.group / 4 - 1);  // group: a power of two
    if (!o.in) return;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        const float sc = group_scale(amax[i], ub, p.qp);
        const cuda::Divisor d = cuda::divisor_of(sc, p.qp);
        const bool in_range = cuda::quotient_in_range(amax[i], d);
        put_codes(p, o, rows[i], quantize_codes(y[i], d, in_range, p.qp), sc);
    }
}

// Whether act(g) * u (SiLU or SwiGLU-OAI) takes the fast path for this one output: activate4's test, per value (NaN
// gates fail it). lean_rows and the row-pair epilogue test each value; the rare one off it goes to gated_exact.
template <Act A>
__device__ __forceinline__ bool on_fast_path(float g, float u, const SwigluParams& sw) {
    if constexpr (A == Act::Silu) return fabsf(g) <= cuda::kSiluInsideLimit;
    else return cuda::swiglu_inside_all(fabsf(g), fabsf(u), sw);
}

// act(g) * u off the fast path (a gate past its range, or NaN), as activate4's exact branch computes it: one
// out-of-line copy, so lean_rows stays straight-line and small.
template <Act A>
__device__ __noinline__ float gated_exact(float g, float u, SwigluParams sw) {
    return activate_gated(A, g, u, Rounding::Fp32, InType::Bf16, sw);
}

// The two rows r0, r1 of a unit (r1 written only if write_r1) by one warp, as epilogue_rows<P, 2> writes them,
// for the common case the host marks `lean` (rowwise codes only, by division into e4m3 / e5m2, fp32 rounding)
// and activation A (SiLU or SwiGLU-OAI), in straight-line code: every value on the activation's fast path (the
// rare value off it is redone by gated_exact after one warp vote), the scale's quotient amax / qmax and the
// codes' quotients by the three-instruction form (dq: the divisor of qmax). Whether those quotients are exact for
// every lane is decided by a second vote before anything is written; false (nothing written) sends the pair down
// epilogue_rows. Why: epilogue_rows decides per value and per row, and its small basic blocks leave the epilogue
// warps latency-bound (docs/perf.md, session 26).
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
    group_amax(amax, p.group / 4 - 1);
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
    const __nv_fp8_interpretation_t f = p.qp.out == DType::E4M3FN ? __NV_E4M3 : __NV_E5M2;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        if (i == 1 && !write_r1) break;
        float v[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = cuda::quotient(y[i][k], d[i]);
        put_codes(p, o, rows[i], fp8_codes(v, f), sc[i]);
    }
    return true;
}

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
// The scales' upper bound (docs/spec.md §3.2), NaN for none.
__device__ __forceinline__ float scale_upper_bound(const Params& p) {
    return p.scale_ub ? *p.scale_ub : __int_as_float(0x7FC00000);
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
    // a second copy of the code in the loop costs every unit (docs/perf.md, session 24).
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

// Split K's cluster-wide hand-offs through an mbarrier used once (its count: one arrival per warp of the role in
// every CTA). arrive: each warp of the role tells every CTA (lane c: CTA c) after a fence that orders its
// shared-memory accesses so far before (a release at cluster scope); wait: the barrier's first phase, then the
// matching acquire.
__device__ __forceinline__ void arrive_cluster_wide(uint64_t* bar, int ctas) {
    using namespace sm90;
    fence_cluster();
    __syncwarp();
    const int lane = threadIdx.x % 32;
    if (lane < ctas) mbar_arrive_remote(cluster_address(smem_addr(bar), uint32_t(lane)));
}
__device__ __forceinline__ void wait_cluster_wide(uint64_t* bar) {
    sm90::mbar_wait(bar, 0);
    sm90::fence_cluster();
}

// Split K: CTA r of a cluster of `split` finishes unit rows [split_rows_lo(r), split_rows_lo(r + 1)); split_owner
// is the inverse (row r's CTA) in closed form, checked against it below for every split and row.
__host__ __device__ constexpr int split_rows_lo(int rank, int split) { return rank * kTileM / split; }
__host__ __device__ constexpr uint32_t split_owner(int row, int split) { return uint32_t((row * split + split - 1) / kTileM); }
constexpr bool split_owner_inverts_rows_lo() {
    for (int split = 2; split <= kMaxSplit; ++split)
        for (int r = 0; r < kTileM; ++r) {
            const int c = int(split_owner(r, split));
            if (c >= split || r < split_rows_lo(c, split) || r >= split_rows_lo(c + 1, split)) return false;
        }
    return true;
}
static_assert(split_owner_inverts_rows_lo(), "split_owner(r) is the CTA whose rows hold r");

static_assert(sizeof(SharedStorage::tiles) >= 2 * kTileM * kTileN * sizeof(float),
              "split K: the stage buffers before the slots hold both C tiles' fp32 partial sums");

// Split K, one C tile's rows [rows_lo, rows_hi) summed over the cluster's kSplit CTAs, by the consumer threads:
// item i (a row and a pair of its words) is thread i % 256's. Every CTA's partial sums of a batch of a thread's
// items are loaded (DSMEM) before any is added, so the thread waits for their latency once a batch, where a loop
// over items and CTAs waited about once an item. Batches: 16-18 loads for 2-4 CTAs (the thread's items at
// once); one item for more CTAs, where larger batches measured slower (docs/perf.md, session 27). CTAs are
// added in rank order: the sum does not depend on timing. scratch_at: the tile's partial sums in every CTA (the
// same offset); out(r, w, sum): row r's words w, w + 1 from the four sums.
template <int kSplit, class Out>
__device__ __forceinline__ void split_k_sum_tile(uint32_t scratch_at, int rows_lo, int rows_hi, int ctid, Out&& out) {
    using namespace sm90;
    constexpr int kPairs = kSlotWords / 2;  // items a row
    constexpr int kBatch = kSplit <= 4 ? (16 + kSplit - 1) / kSplit : 1;  // items whose loads are in flight together
    const int items = (rows_hi - rows_lo) * kPairs;
    uint32_t base[kSplit];
#pragma unroll
    for (int c = 0; c < kSplit; ++c) base[c] = cluster_address(scratch_at, uint32_t(c));
    // Item's row and its word pair w, w + 1 (adjacent: even w); computed again for the store rather than kept
    // for the batch, whose addresses in registers made ptxas spill (session 26's batched form).
    auto at = [&](int item, int& r, int& w) {
        r = rows_lo + item / kPairs;
        w = slot_word(r, 2 * (item % kPairs));
    };
    for (int first = ctid; first < items; first += kBatch * kConsumerThreads) {
        float4 v[kBatch][kSplit];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            // a place in the batch past the thread's items loads the batch's first again (in bounds; not stored)
            const int item = first + b * kConsumerThreads < items ? first + b * kConsumerThreads : first;
            int r, w;
            at(item, r, w);
#pragma unroll
            for (int c = 0; c < kSplit; ++c) v[b][c] = ld_cluster_f4(base[c] + uint32_t(r * kSlotWords + w) * 8);
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
            for (int c = 0; c < kSplit; ++c) {
                sum.x += v[b][c].x; sum.y += v[b][c].y; sum.z += v[b][c].z; sum.w += v[b][c].w;
            }
            if (first + b * kConsumerThreads < items) {
                int r, w;
                at(first + b * kConsumerThreads, r, w);
                out(r, w, sum);
            }
        }
    }
}

// Split K, the cluster's unit's C tiles 0 .. tiles - 1, by the consumer threads: this CTA's partial sums
// (`total[t]`: rows row_local and row_local + 8, this thread's columns) into its scratch, the stage buffers
// before the slots (the launch gives each cluster one unit, so its loads are all consumed by then); once every
// CTA of the cluster has written its own, the sum over the cluster of rows [rows_lo, rows_hi), times alpha, as
// bf16 into tile t's slot (acquire(t) first).
template <class Acquire>
__device__ __forceinline__ void split_k_reduce(const Params& p, SharedStorage& s, const float (&total)[2][64], int tiles,
                                               float alpha, int row_local, int quad, int rows_lo, int rows_hi,
                                               Acquire&& acquire) {
    using namespace sm90;
    const int ctid = threadIdx.x - (kThreads - kConsumerThreads);
    constexpr int kScratchPairs = kTileM * kTileN / 2;  // one tile's partial sums, as float2
    float2* scratch = reinterpret_cast<float2*>(&s.tiles[0]);
    // The stage buffers: both warpgroups' MMAs have read them (either may finish first), and those reads and
    // TMA's writes were the async proxy's.
    named_barrier(kConsumerBarrier, kConsumerThreads);
    fence_proxy_async_shared();
#pragma unroll
    for (int t = 0; t < 2; ++t) {
        if (t >= tiles) break;
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // a row is 64 float2 (column pairs), placed as a slot row places its words
            const int r = row_local + 8 * h;
#pragma unroll
            for (int k = 0; k < 16; ++k)
                scratch[t * kScratchPairs + r * kSlotWords + slot_word_here(r, 4 * k + quad)] =
                    make_float2(total[t][4 * k + 2 * h], total[t][4 * k + 2 * h + 1]);
        }
    }
    arrive_cluster_wide(&s.split_ready, p.split);  // "written", to every CTA
    wait_cluster_wide(&s.split_ready);
    for (int t = 0; t < tiles; ++t) {
        acquire(t);
        uint32_t(*slot)[kSlotWords] = s.slot[t];
        auto out = [&](int r, int w, float4 sum) {
            const float c4[4] = {sum.x * alpha, sum.y * alpha, sum.z * alpha, sum.w * alpha};
            uint32_t packed[2];
#pragma unroll
            for (int j = 0; j < 2; ++j) packed[j] = pack_bf16x2_reference(c4[2 * j], c4[2 * j + 1]);
            *reinterpret_cast<uint2*>(&slot[r][w]) = make_uint2(packed[0], packed[1]);
        };
        const uint32_t scratch_at = smem_addr(scratch + t * kScratchPairs);
        static_assert(kMaxSplit == 8, "a case per split");
        switch (p.split) {
            case 2: split_k_sum_tile<2>(scratch_at, rows_lo, rows_hi, ctid, out); break;
            case 3: split_k_sum_tile<3>(scratch_at, rows_lo, rows_hi, ctid, out); break;
            case 4: split_k_sum_tile<4>(scratch_at, rows_lo, rows_hi, ctid, out); break;
            case 5: split_k_sum_tile<5>(scratch_at, rows_lo, rows_hi, ctid, out); break;
            case 6: split_k_sum_tile<6>(scratch_at, rows_lo, rows_hi, ctid, out); break;
            case 7: split_k_sum_tile<7>(scratch_at, rows_lo, rows_hi, ctid, out); break;
            default: split_k_sum_tile<8>(scratch_at, rows_lo, rows_hi, ctid, out); break;
        }
    }
}

#endif  // FQ_SM90A

// ---- The kernel ------------------------------------------------------------------------------------------

// kSplitK: the split-K kernel, for GEMMs with fewer units than half the SMs (one group): a cluster of p.split
// CTAs takes one unit, CTA r the r-th slice of K; each C tile's fp32 partial sums meet in shared memory, and
// CTA r sums rows [128 r / split, 128 (r + 1) / split) of them across the cluster (DSMEM) and runs the
// epilogue's rows on those; columnwise blocks read each row's y from the CTA that holds it. A separate kernel,
// so the other's code stays as it is.
template <Pairing P, bool kSplitK, bool kSegments = false>
__global__ void __launch_bounds__(kThreads, 1)
    grouped_gemm_sm90(const __grid_constant__ Params p, const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b) {
#ifdef FQ_SM90A
    using namespace sm90;
    extern __shared__ __align__(1024) uint8_t smem_raw[];  // see kSmemBytes
    auto& s = *reinterpret_cast<SharedStorage*>(smem_raw);
    const int warp_id = threadIdx.x / 32;
    const int ctas = kSplitK ? p.split : p.cluster;  // CTAs per cluster
    const uint32_t rank = ctas > 1 ? cluster_rank() : 0;
    const uint32_t share_rank = kSplitK ? 0 : rank;
    // This CTA's K blocks, and (split K) the rows of each unit it finishes.
    const int64_t kb_lo = kSplitK ? rank * p.k_blocks / p.split : 0;
    const int64_t kb_hi = kSplitK ? (rank + 1) * p.k_blocks / p.split : p.k_blocks;
    const int my_rows_lo = kSplitK ? split_rows_lo(int(rank), p.split) : 0;
    const int my_rows_hi = kSplitK ? split_rows_lo(int(rank) + 1, p.split) : kTileM;
    const int stages = kSplitK ? p.split_stages : kStages;

    if (threadIdx.x == 0) {
        for (int i = 0; i < stages; ++i) {
            mbar_init(&s.full[i], 1 + 32);  // the producer's expect_tx arrival, its 32 lanes' scale copies
            mbar_init(&s.empty[i], 2 * kConsumerThreads / 32);  // each consumer warp of the pair (or twice, alone)
        }
        for (int i = 0; i < kSlots; ++i) {
            mbar_init(&s.slot_full[i], kConsumerThreads);
            mbar_init(&s.slot_empty[i], kEpilogueThreads);
        }
        mbar_init(&s.split_ready, ctas * kConsumerThreads / 32);  // one arrival per consumer warp of the cluster
        mbar_init(&s.split_y, ctas * kEpilogueThreads / 32);  // one arrival per epilogue warp of the cluster
        fence_barrier_init();
    }
    if (ctas > 1) cluster_sync();  // the peers' barriers exist before anything lands on them
    else __syncthreads();

    if (warp_id < 4) {
        regs_release<kProducerRegs>();
        if (warp_id == 0) {  // ---- producer: lane 0 issues the TMA loads, every lane copies scales ------------
            const int lane = threadIdx.x;
            if (lane == 0) {
                tma_prefetch_descriptor(&map_a);
                tma_prefetch_descriptor(&map_b);
            }
            int stage = 0;
            uint32_t phase = 0;
            for_each_unit<kSegments>(p, ctas, share_rank, [&](const Unit& u, bool) {
                for_each_group_in_unit(p, u, [&](int32_t g, int64_t lo, int64_t hi) {
                    // B rows of the two C tiles' boxes (a dead tile loads any B; a CTA whose whole unit is dead still
                    // loads A for its peer).
                    const int tiles = live_tiles(p, u);
                    BoxRows rows[2];
                    int32_t b_row[2][2];
#pragma unroll
                    for (int t = 0; t < 2; ++t) {
                        const int64_t d = u.d0 + kHalfN * t;
                        rows[t] = box_rows<P>(p, d < p.h ? d : 0);
                        b_row[t][0] = int32_t(g * p.n + rows[t].first);
                        b_row[t][1] = int32_t(g * p.n + rows[t].second);
                    }
                    // The scales of the unit's K blocks, walked along with them: rows lo..hi of A (the group's
                    // rows of the unit; lane l copies rows l, l + 32, ...) and the four B boxes' blocks (lane
                    // 2t + box). Pointers and predicates are set up here, so that a K block costs the copies and
                    // two adds: the producer's time per block adds to every stage's refill, and a slower loop
                    // here measured 20-27% off the main loop (docs/perf.md, session 20).
                    uint32_t a_rows = 0;  // bit j: row l + 32 j is the group's
#pragma unroll
                    for (int j = 0; j < kTileM / 32; ++j) {
                        const int64_t r = u.t0 + lane + 32 * j;
                        if (tiles > 0 && r >= lo && r < hi) a_rows |= 1u << j;
                    }
                    const int b_tile = (lane >> 1) & 1, b_box = lane & 1;
                    const bool b_lane = lane < 4 && u.d0 + kHalfN * b_tile < p.h;
                    const float* a_src = p.a_scales + u.t0 + lane + kb_lo * p.a_scale_ld;
                    const float* b_src = p.b_scales + kb_lo +
                        (g * p.n_blocks + (b_box ? rows[b_tile].second : rows[b_tile].first) / kTileK) * p.k_blocks;
                    const uint32_t a_dst0 = smem_addr(&s.a_scale[0][lane]), b_dst0 = smem_addr(&s.b_scale[0][b_tile][b_box]);
                    for (int64_t kb = kb_lo; kb < kb_hi; ++kb, a_src += p.a_scale_ld, ++b_src) {
                        mbar_wait(&s.empty[stage], phase ^ 1);
                        if (lane == 0) {  // the operands first, the longest wait (the stage completes once the
                                          // bytes and all 32 lanes' scale copies are in: 1 + 32 arrivals)
                            mbar_arrive_expect_tx(&s.full[stage], kStageBytes);
                            const int32_t k = int32_t(kb * kTileK);
                            StageTiles& tiles = stage_tiles(s, stage);
                            if (p.cluster == 1) {
                                tma_load_2d(tiles.a, &map_a, &s.full[stage], k, int32_t(u.t0));
                                tma_load_2d(tiles.a + kHalfN * kTileK, &map_a, &s.full[stage], k, int32_t(u.t0 + kHalfN));
                            } else {  // this CTA's half of A, to both
                                tma_load_2d_multicast(tiles.a + rank * kHalfN * kTileK, &map_a, &s.full[stage], k,
                                                      int32_t(u.t0 + rank * kHalfN), 0x3);
                            }
#pragma unroll
                            for (int t = 0; t < 2; ++t)
#pragma unroll
                                for (int box = 0; box < 2; ++box)
                                    tma_load_2d(tiles.b[t] + box * kHalfN * kTileK, &map_b, &s.full[stage], k, b_row[t][box]);
                        }
                        const uint32_t a_dst = a_dst0 + stage * uint32_t(sizeof(s.a_scale[0]));
#pragma unroll
                        for (int j = 0; j < kTileM / 32; ++j)
                            if (a_rows >> j & 1) cp_async_4(a_dst + 128 * j, a_src + 32 * j);
                        if (b_lane) cp_async_4(b_dst0 + stage * uint32_t(sizeof(s.b_scale[0])), b_src);
                        cp_async_arrive(&s.full[stage]);
                        if (++stage == stages) { stage = 0; phase ^= 1; }
                    }
                });
            });
        } else if (p.stash) {  // ---- epilogue warps: the scale padding here; the units after the role branches
            zero_scale_padding(p, threadIdx.x - 32);
        }
    } else {
        // ---- consumers ------------------------------------------------------------------------------------------
        regs_acquire<kConsumerRegs>();
        const int ctid = threadIdx.x - 128;             // 0..255
        // Rows 64 * half .. 64 * half + 63 of the tile; broadcast, so ptxas knows it is warp-uniform (the A descriptor
        // derived from it is then a uniform value, as wgmma wants it).
        const int half = __shfl_sync(0xFFFFFFFFu, ctid / 128, 0);
        const int warp = (ctid % 128) / 32, lane = ctid % 32, quad = lane % 4;
        const int row_local = 64 * half + 16 * warp + lane / 4;  // this thread's rows: row_local and row_local + 8
        int stage = 0;
        uint32_t phase = 0;
        int64_t filled = 0;  // C tiles put into the ring so far
        // The hot loop works on 32-bit shared addresses computed here once: stage i's full barrier is at
        // full0 + 8i, its empty barrier (in the CTA of the pair that reads each A half) at empty_at[c] + 8i, its
        // operand descriptors at desc_a0 + i * kStep and desc_b0 + i * kStep (C tile t's B: + t * kStepTileB). A
        // CTA without a peer arrives twice on its own barrier (the count is the same either way, so the loop has no
        // branch on the cluster size).
        const uint32_t full0 = smem_addr(&s.full[0]);
        const uint32_t empty_at[2] = {cluster_address(smem_addr(&s.empty[0]), p.cluster > 1 ? 0 : rank),
                                      cluster_address(smem_addr(&s.empty[0]), p.cluster > 1 ? 1 : rank)};
        const uint64_t desc_a0 = smem_descriptor_sw128(s.tiles[0].a + half * 64 * kTileK);
        const uint64_t desc_b0 = smem_descriptor_sw128(s.tiles[0].b[0]);
        constexpr uint32_t kStep = kStageBytes >> 4, kStepTileB = sizeof(StageTiles::b[0]) >> 4;  // in 16 bytes
        const int k_blocks = int(kb_hi - kb_lo);
        auto release_stage = [&] {
            if (lane == 0) {
                mbar_arrive_remote(empty_at[0] + 8 * stage);
                mbar_arrive_remote(empty_at[1] + 8 * stage);
            }
            if (++stage == stages) { stage = 0; phase ^= 1; }
        };
        for_each_unit<kSegments>(p, ctas, share_rank, [&](const Unit& u, bool) {
            bool any = false;
            uint32_t owned = 0;  // bit t: the slot of C tile t is this unit's
            auto acquire = [&](int t) {  // the slot of C tile t, once the epilogue has drained it
                if (owned >> t & 1) return;
                const int64_t k = filled + t;
                mbar_wait(&s.slot_empty[k % kSlots], (uint32_t(k / kSlots) & 1) ^ 1);
                owned |= 1u << t;
            };
            const int tiles = live_tiles(p, u);  // a CTA with none still runs the pipeline: its peer shares A
            for_each_group_in_unit(p, u, [&](int32_t g, int64_t lo, int64_t hi) {
                any = true;
                const float alpha = p.alpha ? p.alpha[g] : 1.0f;
                const int64_t r0 = u.t0 + row_local, r1 = r0 + 8;
                const bool valid0 = r0 >= lo && r0 < hi, valid1 = r1 >= lo && r1 < hi;
                if (tiles == 0) {  // the stages still pass through
                    for (int kb = 0; kb < k_blocks; ++kb) {
                        mbar_wait(full0 + 8 * stage, phase);
                        release_stage();
                    }
                    return;
                }
                // ---- main loop: both C tiles [128 x 128] over K, promoted every 128 of K -----------------------
                float total[2][64], acc[64];
#pragma unroll
                for (int i = 0; i < 64; ++i) total[0][i] = total[1][i] = 0.0f;
                for (int kb = 0; kb < k_blocks; ++kb) {
                    const uint64_t desc_a = desc_a0 + stage * kStep, desc_b = desc_b0 + stage * kStep;
                    mbar_wait(full0 + 8 * stage, phase);
                    // The stage's scales (copied in by the producer warp; shared memory, so the MMAs need not wait
                    // for a global load: wgmma's fence waits for a thread's loads in flight). Rows nobody owns
                    // were not copied: their scale is 0.
                    const float a0 = valid0 ? s.a_scale[stage][row_local] : 0.0f;
                    const float a1 = valid1 ? s.a_scale[stage][row_local + 8] : 0.0f;
#pragma unroll
                    for (int t = 0; t < 2; ++t) {
                        if (t == tiles) break;
                        // The two warpgroups issue independently. A barrier putting warpgroup 1's MMAs after 0's, tile
                        // by tile, paid while a unit was one tile (docs/perf.md, session 21); with two tiles a block
                        // it cost 2% (session 28).
                        wgmma_fence();
                        fence_operands(acc);
#pragma unroll
                        for (int kk = 0; kk < kTileK / 32; ++kk)  // +32 bytes of K = +2 in the descriptor's address
                            wgmma_m64n128k32_e4m3(acc, desc_a + 2 * kk, desc_b + t * kStepTileB + 2 * kk, kk > 0);
                        wgmma_commit();
                        const float b_first = s.b_scale[stage][t][0], b_second = s.b_scale[stage][t][1];
                        wgmma_wait<0>();
                        fence_operands(acc);
                        if (t == tiles - 1) release_stage();  // every MMA reading the stage is done
                        // scale[row half][box]: rows r0 / r1, tile columns < 64 (first box) / >= 64 (second box)
                        const float scale[2][2] = {{a0 * b_first, a0 * b_second}, {a1 * b_first, a1 * b_second}};
#pragma unroll
                        for (int i = 0; i < 64; ++i) total[t][i] = __fmaf_rn(acc[i], scale[(i >> 1) & 1][i >= 32], total[t][i]);
                    }
                }
                if (!p.stash) return;
                if constexpr (kSplitK) {
                    split_k_reduce(p, s, total, tiles, alpha, row_local, quad, my_rows_lo, my_rows_hi, acquire);
                    return;
                }
                // ---- C = alpha * total as the unfused pipeline's GEMM writes it, bf16, into each tile's slot, in
                // the tile's column order (the epilogue resolves the pairs)
#pragma unroll
                for (int t = 0; t < 2; ++t) {
                    if (t == tiles) break;
                    acquire(t);
                    uint32_t(*slot)[kSlotWords] = s.slot[(filled + t) % kSlots];
                    bool any_nan = false;  // the hardware conversion's NaN differs from float_to_bf16's (rare: software)
#pragma unroll
                    for (int i = 0; i < 64; ++i) {
                        total[t][i] *= alpha;
                        any_nan |= total[t][i] != total[t][i];
                    }
                    auto store_rows = [&](auto pack) {  // each of this thread's two rows, if some group owns it
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            if (!(h ? valid1 : valid0)) continue;
                            const int r = row_local + 8 * h;
#pragma unroll
                            for (int i = 2 * h; i < 64; i += 4) slot[r][slot_word_here(r, 4 * (i / 4) + quad)] = pack(total[t][i], total[t][i + 1]);
                        }
                    };
                    if (!any_nan) store_rows(pack_bf16x2);
                    else store_rows(pack_bf16x2_exact);
                }
            });
            if (!any || !p.stash) return;
            for (int t = 0; t < 2; ++t) {  // hand both tiles to the epilogue (a dead tile's slot passes empty)
                acquire(t);
                mbar_arrive(&s.slot_full[(filled + t) % kSlots]);
            }
            filled += 2;
        });
    }
    // ---- The epilogue's unit loop: warps 1-3 finish every unit once its two slots are full; the consumers, done
    // with their loop, join them for the CTA's last unit (split K: its one), so eleven warps finish it (nothing is
    // left to overlap it with). One copy of the code for both roles, after the role branches: a second copy for
    // the last unit, tried in session 24, made every unit 4-6% slower (and two copies made the split-K kernel
    // spill).
    if (p.stash && warp_id > 0) {
        using namespace sm90;
        const bool epilogue_warp = warp_id < 4;
        const int etid = threadIdx.x - 32, lane = threadIdx.x % 32, finisher = warp_id - 1;
        const float ub = scale_upper_bound(p);
        int64_t filled = 0;  // C tiles taken from the ring so far
        for_each_unit<kSegments, true>(p, ctas, share_rank, [&](const Unit& u, bool last) {
            RowMask valid, valid_all;  // rows of the unit some group owns (this CTA finishes: valid)
            if (!unit_rows(p, u, my_rows_lo, my_rows_hi, valid, &valid_all)) return;
            const bool is_last = kSplitK || last;
            if (epilogue_warp || is_last) {
                finish_rows<P>(p, s, u, filled, valid, finisher, is_last ? kFinishWarps : kEpilogueThreads / 32, lane, ub);
                if (p.columnwise) {
                    if (!is_last) named_barrier(kEpilogueBarrier, kEpilogueThreads);  // every row's y is in the slots
                    else if (epilogue_warp) named_barrier<kFinishRowsBarrier, 32 * kFinishWarps>();  // ... all eleven warps'
                    else named_barrier_arrive<kFinishRowsBarrier, 32 * kFinishWarps>();
                    if (epilogue_warp && !kSplitK) {
                        const uint32_t* tile0 = &s.slot[filled % kSlots][0][0];
                        const uint32_t* tile1 = &s.slot[(filled + 1) % kSlots][0][0];
                        epilogue_columns(p, u, valid_all, etid, kEpilogueThreads, ub, [&](int t, int r, int i) {
                            return reinterpret_cast<const float*>(t ? tile1 : tile0)[r * kSlotWords + slot_word(r, i)];
                        });
                    } else if (epilogue_warp) {
                        // Split K: every CTA's rows' y are in its slots (tiles 0 and 1) once all have arrived; the
                        // cluster's CTAs take turns at the columns, reading each row's y where it lies (DSMEM).
                        arrive_cluster_wide(&s.split_y, p.split);
                        wait_cluster_wide(&s.split_y);
                        const uint32_t y0 = smem_addr(&s.slot[0][0][0]), y1 = smem_addr(&s.slot[1][0][0]);
                        epilogue_columns(p, u, valid_all, etid + int(rank) * kEpilogueThreads, kEpilogueThreads * p.split, ub,
                                         [&](int t, int r, int i) {
                                             return ld_cluster_f32(cluster_address(
                                                 (t ? y1 : y0) + uint32_t(r * kSlotWords + slot_word(r, i)) * 4,
                                                 split_owner(r, p.split)));
                                         });
                    }
                }
                if (epilogue_warp && !kSplitK)
                    for (int t = 0; t < 2; ++t) mbar_arrive(&s.slot_empty[(filled + t) % kSlots]);
            }
            filled += 2;
        });
    }
    if (ctas > 1) cluster_sync();  // no CTA leaves while a peer may still signal its barriers or read its partials
#endif
}

// ---- The row-pair kernel: split K's GEMMs with the lean epilogue, no partial sums crossing the cluster ------

// Split K's pair pays ~7 us after its K loop at dense M = 512 (the CTAs' fp32 partial sums cross the cluster
// through DSMEM, 64 KB a CTA, then the epilogue rows run from the slots: docs/perf.md, session 30). Here a cluster of
// two CTAs takes the same unit (128 rows x 128 outputs), but CTA r computes rows 64 r .. 64 r + 63 of both C tiles
// over all of K: its consumer warpgroup t computes tile t (wgmma m64n128k32), and the CTA loads tile r's B and
// multicasts it, so the pair reads B from L2 once. That is split K's L2 traffic and MMA count per CTA, with
// nothing to sum across the cluster; the epilogue (rowwise codes only: Params::lean) runs in the consumers'
// registers. C's bits are split K's, so the codes equal fqQuantize of the C a call asking for C gets: the K
// blocks are promoted in the slices split K would give its CTAs (p.split), each slice from 0, and the slices'
// sums added in order from 0, as split_k_sum_tile adds them.
constexpr int kPairStages = 5;
constexpr int kCodesStride = 80;  // bytes of a staged row of a tile's 64 codes (16-byte aligned, banks spread)
struct PairStageTiles {
    uint8_t a[kHalfN * kTileK];     // this CTA's 64 rows of A
    uint8_t b[2][kTileN * kTileK];  // C tile t's B, its first and second 64-row boxes (tile `rank` loaded here)
};
struct PairStorage {
    PairStageTiles tiles[kPairStages];
    uint8_t codes[2][kHalfN][kCodesStride];  // tile t's codes of the CTA's rows, on their way out in 16-byte stores
    float a_scale[kPairStages][kHalfN];
    float b_scale[kPairStages][2][2];
    float row_amax[2][kHalfN];  // tile t's amax of each row: a 128-wide group spans both tiles
    uint64_t full[kPairStages], empty[kPairStages];
};
constexpr size_t kPairSmemBytes = sizeof(PairStorage);
static_assert(kPairSmemBytes <= 227 * 1024, "the H100's shared memory per block");
static_assert(sizeof(PairStageTiles) % 1024 == 0 && sizeof(PairStageTiles::a) % 1024 == 0,
              "every operand tile starts on the 128-byte swizzle's 1024-byte period");

#ifdef FQ_SM90A

// One consumer thread's outputs of its two rows (h = 0, 1: CTA rows row_local + 8 h) of C tile t: output j (0 ..
// 15) of a row comes from columns 8 k + 2 quad + e of the tile, the wgmma accumulator layout (sum[4 k + 2 h + e]).
// gate_k / up_k / gate_e / up_e: where output j's gate and up inputs are; out_col: its column within the tile.
template <Pairing P>
struct PairOutputs {
    static constexpr int gate_k(int j) {
        return P == Pairing::Adjacent ? j : P == Pairing::Halves ? j / 2 : 8 * (j / 8) + (j / 2) % 4;
    }
    static constexpr int up_k(int j) { return P == Pairing::Adjacent ? j : gate_k(j) + (P == Pairing::Halves ? 8 : 4); }
    static constexpr int gate_e(int j) { return P == Pairing::Adjacent ? 0 : j % 2; }
    static constexpr int up_e(int j) { return P == Pairing::Adjacent ? 1 : j % 2; }
    __device__ static int out_col(int j, int quad) { return P == Pairing::Adjacent ? 4 * j + quad : 8 * (j / 2) + 2 * quad + j % 2; }
};

// The codes of two values of a group whose division is not the quotient's (the rare out-of-range group), out of
// line so the epilogue stays small: y / s rounded, then the fp8 conversion.
__device__ __noinline__ uint32_t fp8_codes_divided(float v0, float v1, float s, bool e4m3) {
    const float2 q = make_float2(v0 / s, v1 / s);
    return e4m3 ? __nv_cvt_float2_to_fp8x2(q, __NV_SATFINITE, __NV_E4M3) : __nv_cvt_float2_to_fp8x2(q, __NV_SATFINITE, __NV_E5M2);
}

// The row-pair kernel's epilogue, by one consumer thread: its two rows of C tile t from the fp32 sums (as
// split_k_reduce rounds them: alpha x sum to bf16), y = prob x act(g) x u, the groups' amaxes (a quad holds a
// row's 64 outputs of the tile; 32-output groups are j / 8), scales and codes as the lean path's rules give them
// (Params::lean: e4m3 / e5m2 codes by division), staged per warp and stored 16 bytes a lane. One row at a time,
// in a loop, and the rare paths out of line: the code runs once a CTA, so its size is paid in instruction fetch
// (an unrolled first form measured ~2x the K loop's time, stalled on fetch). rows [lo, hi): the group's (global);
// row0: the CTA's first row.
template <Pairing P, Act A>
__device__ __forceinline__ void row_pair_epilogue(const Params& p, PairStorage& s, const float (&sum)[64], const Unit& u,
                                                  int t, int warp, int lane, int64_t row0, int64_t lo, int64_t hi) {
    using O = PairOutputs<P>;
    const int quad = lane % 4;
    const float alpha = p.alpha ? p.alpha[0] : 1.0f;
    const int64_t tile_col = u.d0 + kHalfN * t;  // the tile's first output column
    const bool gate_first = p.order == GateOrder::GateFirst, e4m3 = p.qp.out == DType::E4M3FN;
    const float ub = scale_upper_bound(p);
    auto inside = [&](float g, float up) { return on_fast_path<A>(g, up, p.swiglu); };
#pragma unroll 1
    for (int h = 0; h < 2; ++h) {
        const int row_local = 16 * warp + lane / 4 + 8 * h;
        const int64_t row = row0 + row_local;
        const bool valid = row >= lo && row < hi;
        const float prob = p.prob && valid ? p.prob[row] : 1.0f;
        // C, the bf16 the unfused GEMM writes, as floats: c[k][e] (columns 8 k + 2 quad + e)
        float c[16][2];
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            const float lo_v = (h ? sum[4 * k + 2] : sum[4 * k]) * alpha, hi_v = (h ? sum[4 * k + 3] : sum[4 * k + 1]) * alpha;
            const uint32_t w = pack_bf16x2_reference(lo_v, hi_v);
            c[k][0] = __uint_as_float(w << 16);
            c[k][1] = __uint_as_float(w & 0xFFFF0000u);
        }
        auto gate_of = [&](int j) { return gate_first ? c[O::gate_k(j)][O::gate_e(j)] : c[O::up_k(j)][O::up_e(j)]; };
        auto up_of = [&](int j) { return gate_first ? c[O::up_k(j)][O::up_e(j)] : c[O::gate_k(j)][O::gate_e(j)]; };
        float y[16];
        bool outside = false;
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            const float g = gate_of(j), up = up_of(j);
            outside |= !inside(g, up);
            if constexpr (A == Act::Silu) y[j] = cuda::silu_inside(g) * up;
            else y[j] = cuda::swiglu_gate_inside(g, p.swiglu) * cuda::swiglu_up_inside(up, p.swiglu);
        }
        if (__any_sync(0xFFFFFFFFu, outside)) {  // rare: those values again on the exact path
#pragma unroll
            for (int j = 0; j < 16; ++j)
                if (!inside(gate_of(j), up_of(j))) y[j] = gated_exact<A>(gate_of(j), up_of(j), p.swiglu);
        }
        // prob, and outputs past h out of the amaxes (they are not written)
        float amax[2] = {0.0f, 0.0f};  // per 32-output group of the tile, fmaxf from 0: NaN ignored (docs/spec.md §3.2)
#pragma unroll
        for (int j = 0; j < 16; ++j) {
            if (p.prob) y[j] = prob * y[j];
            if (tile_col + O::out_col(j, quad) >= p.h) y[j] = 0.0f;
            amax[j / 8] = fmaxf(amax[j / 8], fabsf(y[j]));
        }
#pragma unroll
        for (int off = 1; off <= 2; off *= 2)
#pragma unroll
            for (int b = 0; b < 2; ++b) amax[b] = fmaxf(amax[b], __shfl_xor_sync(0xFFFFFFFFu, amax[b], off));
        if (p.group >= 64) amax[0] = amax[1] = fmaxf(amax[0], amax[1]);
        if (p.group == 128) {  // the row's other 64 outputs are the other warpgroup's
            if (quad == 0) s.row_amax[t][row_local] = amax[0];
            sm90::named_barrier(kConsumerBarrier, kConsumerThreads);
            amax[0] = amax[1] = fmaxf(amax[0], s.row_amax[1 - t][row_local]);
        }
        uint8_t* staged = s.codes[t][row_local];
#pragma unroll
        for (int b = 0; b < 2; ++b) {
            const float sc = group_scale(amax[b], ub, p.qp);
            const cuda::Divisor d = cuda::divisor_of(sc, p.qp);
            const bool in_range = cuda::quotient_in_range(amax[b], d);
#pragma unroll
            for (int j = 8 * b; j < 8 * b + 8; j += 2) {
                uint32_t codes;
                if (in_range) {
                    const float2 q = make_float2(cuda::quotient(y[j], d), cuda::quotient(y[j + 1], d));
                    const uint32_t c4 = __nv_cvt_float2_to_fp8x2(q, __NV_SATFINITE, __NV_E4M3);
                    const uint32_t c5 = __nv_cvt_float2_to_fp8x2(q, __NV_SATFINITE, __NV_E5M2);
                    codes = e4m3 ? c4 : c5;
                } else {
                    codes = fp8_codes_divided(y[j], y[j + 1], d.s, e4m3);
                }
                if constexpr (P == Pairing::Adjacent) {
                    staged[O::out_col(j, quad)] = uint8_t(codes);
                    staged[O::out_col(j + 1, quad)] = uint8_t(codes >> 8);
                } else {
                    *reinterpret_cast<uint16_t*>(staged + O::out_col(j, quad)) = uint16_t(codes);
                }
            }
            // The group's scale, by its first quad lane: once a row for 128-wide groups (tile 0's warpgroup).
            const int64_t group_col = tile_col + 32 * b;
            if (quad == 0 && valid && group_col < p.h && (p.group == 32 || (b == 0 && (p.group == 64 || t == 0))))
                *reinterpret_cast<float*>(p.scales + scale_offset(p.row_strides, row, group_col >> p.group_log2)) = sc;
        }
    }
    __syncwarp();  // the warp's 16 rows of the tile are staged
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int chunk = lane + 32 * i, r = 16 * warp + chunk / 4, seg = chunk % 4;
        const int64_t row = row0 + r, col = tile_col + 16 * seg;
        if (row >= lo && row < hi && col < p.h)
            *reinterpret_cast<uint4*>(p.out + row * p.out_ld + col) = *reinterpret_cast<const uint4*>(s.codes[t][r] + 16 * seg);
    }
}

#endif  // FQ_SM90A

template <Pairing P>
__global__ void __launch_bounds__(kThreads, 1)
    row_pair_gemm_sm90(const __grid_constant__ Params p, const __grid_constant__ CUtensorMap map_a,
                       const __grid_constant__ CUtensorMap map_b) {
#ifdef FQ_SM90A
    using namespace sm90;
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    auto& s = *reinterpret_cast<PairStorage*>(smem_raw);
    const int warp_id = threadIdx.x / 32;
    const uint32_t rank = cluster_rank();
    const Unit u = unit_of(p, blockIdx.x / 2, 0);
    const int64_t row0 = u.t0 + kHalfN * rank;  // this CTA's first row
    const RowRange group = group_rows(p, 0);    // one group: its rows [lo, hi)
    const int64_t lo = group.first, hi = min(group.first + group.count, p.m);
    const int k_blocks = int(p.k_blocks);

    if (threadIdx.x == 0) {
        for (int i = 0; i < kPairStages; ++i) {
            mbar_init(&s.full[i], 1 + 32);  // the producer's expect_tx arrival, its 32 lanes' scale copies
            mbar_init(&s.empty[i], 2 * kConsumerThreads / 32);  // every consumer warp of the pair: both write B here
        }
        fence_barrier_init();
    }
    cluster_sync();

    if (warp_id < 4) {
        regs_release<kProducerRegs>();
        if (warp_id == 0) {  // ---- producer: A's 64 rows, this CTA's tile of B to both, the scales ---------------
            const int lane = threadIdx.x;
            if (lane == 0) {
                tma_prefetch_descriptor(&map_a);
                tma_prefetch_descriptor(&map_b);
            }
            const int64_t d_mine = u.d0 + kHalfN * rank, d_lane = u.d0 + kHalfN * ((lane >> 1) & 1);
            const BoxRows mine = box_rows<P>(p, d_mine < p.h ? d_mine : 0);  // a dead tile loads any B
            const BoxRows of_lane = box_rows<P>(p, d_lane < p.h ? d_lane : 0);
            // lane l copies A scales of rows l and l + 32 (those of the group), lanes 0-3 tile (l / 2)'s box l % 2's
            const int64_t ra = row0 + lane, rb = ra + 32;
            const bool a_lo = ra >= lo && ra < hi, a_hi = rb >= lo && rb < hi;
            const float* a_src = p.a_scales + ra;
            const float* b_src = p.b_scales + ((lane & 1 ? of_lane.second : of_lane.first) / kTileK) * p.k_blocks;
            const uint32_t a_dst0 = smem_addr(&s.a_scale[0][lane]);
            const uint32_t b_dst0 = smem_addr(&s.b_scale[0][(lane >> 1) & 1][lane & 1]);
            int stage = 0;
            uint32_t phase = 0;
            for (int kb = 0; kb < k_blocks; ++kb) {
                mbar_wait(&s.empty[stage], phase ^ 1);
                if (lane == 0) {
                    mbar_arrive_expect_tx(&s.full[stage], sizeof(PairStageTiles));  // A, and both CTAs' B tiles
                    const int32_t k = kb * kTileK;
                    PairStageTiles& tiles = s.tiles[stage];
                    tma_load_2d(tiles.a, &map_a, &s.full[stage], k, int32_t(row0));
                    tma_load_2d_multicast(tiles.b[rank], &map_b, &s.full[stage], k, int32_t(mine.first), 0x3);
                    tma_load_2d_multicast(tiles.b[rank] + kHalfN * kTileK, &map_b, &s.full[stage], k, int32_t(mine.second), 0x3);
                }
                const uint32_t a_dst = a_dst0 + stage * uint32_t(sizeof(s.a_scale[0]));
                if (a_lo) cp_async_4(a_dst, a_src + kb * p.a_scale_ld);
                if (a_hi) cp_async_4(a_dst + 128, a_src + kb * p.a_scale_ld + 32);
                if (lane < 4) cp_async_4(b_dst0 + stage * uint32_t(sizeof(s.b_scale[0])), b_src + kb);
                cp_async_arrive(&s.full[stage]);
                if (++stage == kPairStages) { stage = 0; phase ^= 1; }
            }
        } else if (p.stash) {
            zero_scale_padding(p, threadIdx.x - 32);
        }
    } else {
        // ---- consumers: warpgroup t computes C tile t of the CTA's 64 rows ------------------------------------------
        regs_acquire<kConsumerRegs>();
        const int ctid = threadIdx.x - 128;
        const int t = __shfl_sync(0xFFFFFFFFu, ctid / 128, 0);  // warp-uniform (the B descriptor derives from it)
        const int warp = (ctid % 128) / 32, lane = ctid % 32;
        const int row_local = 16 * warp + lane / 4;  // this thread's rows: row_local and row_local + 8
        const bool valid0 = row0 + row_local >= lo && row0 + row_local < hi;
        const bool valid1 = row0 + row_local + 8 >= lo && row0 + row_local + 8 < hi;
        const uint32_t full0 = smem_addr(&s.full[0]);
        const uint32_t empty_at[2] = {cluster_address(smem_addr(&s.empty[0]), 0), cluster_address(smem_addr(&s.empty[0]), 1)};
        const uint64_t desc_a0 = smem_descriptor_sw128(s.tiles[0].a);
        const uint64_t desc_b0 = smem_descriptor_sw128(s.tiles[0].b[t]);
        constexpr uint32_t kStep = sizeof(PairStageTiles) >> 4;  // in 16 bytes
        float acc[64], total[64], sum[64];
#pragma unroll
        for (int i = 0; i < 64; ++i) total[i] = sum[i] = 0.0f;
        int stage = 0;
        uint32_t phase = 0;
        int slice = 0;
        int64_t slice_end = p.k_blocks / p.split;  // split K's slice boundaries: rank x k_blocks / split
        for (int kb = 0; kb < k_blocks; ++kb) {
            while (kb == slice_end) {  // a slice is done: its sum joins the slices before it, in order
#pragma unroll
                for (int i = 0; i < 64; ++i) {
                    sum[i] += total[i];
                    total[i] = 0.0f;
                }
                ++slice;
                slice_end = (slice + 1) * p.k_blocks / p.split;
            }
            const uint64_t desc_a = desc_a0 + stage * kStep, desc_b = desc_b0 + stage * kStep;
            mbar_wait(full0 + 8 * stage, phase);
            const float a0 = valid0 ? s.a_scale[stage][row_local] : 0.0f;
            const float a1 = valid1 ? s.a_scale[stage][row_local + 8] : 0.0f;
            wgmma_fence();
            fence_operands(acc);
#pragma unroll
            for (int kk = 0; kk < kTileK / 32; ++kk) wgmma_m64n128k32_e4m3(acc, desc_a + 2 * kk, desc_b + 2 * kk, kk > 0);
            wgmma_commit();
            const float b_first = s.b_scale[stage][t][0], b_second = s.b_scale[stage][t][1];
            wgmma_wait<0>();
            fence_operands(acc);
            if (lane == 0) {  // this stage is read: both CTAs may load into it again
                mbar_arrive_remote(empty_at[0] + 8 * stage);
                mbar_arrive_remote(empty_at[1] + 8 * stage);
            }
            if (++stage == kPairStages) { stage = 0; phase ^= 1; }
            const float scale[2][2] = {{a0 * b_first, a0 * b_second}, {a1 * b_first, a1 * b_second}};
#pragma unroll
            for (int i = 0; i < 64; ++i) total[i] = __fmaf_rn(acc[i], scale[(i >> 1) & 1][i >= 32], total[i]);
        }
#pragma unroll
        for (int i = 0; i < 64; ++i) sum[i] += total[i];  // the last slice
        if (p.act == Act::Silu) row_pair_epilogue<P, Act::Silu>(p, s, sum, u, t, warp, lane, row0, lo, hi);
        else row_pair_epilogue<P, Act::SwigluOai>(p, s, sum, u, t, warp, lane, row0, lo, hi);
    }
    cluster_sync();  // no CTA leaves while its peer may still write into it or signal its barriers
#endif
}

// ---- Host side: tensor maps and the launch -----------------------------------------------------------------

// cuTensorMapEncodeTiled from the driver the runtime already loaded (the library links no libcuda).
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

fqStatus_t encode_tiled_fn(EncodeTiled* fn) {
    static EncodeTiled cached = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            cached = reinterpret_cast<EncodeTiled>(p);
    });
    if (!cached) return fail(FQ_STATUS_CUDA_ERROR, "handle: the CUDA driver offers no cuTensorMapEncodeTiled (driver too old for sm_90a TMA)");
    *fn = cached;
    return FQ_STATUS_SUCCESS;
}

// A 2-D tensor map of `rows` x `cols` elements (row stride `ld` elements) read in boxes of box_rows x box_cols.
fqStatus_t make_map(EncodeTiled encode, CUtensorMap* map, const char* what, const void* base, CUtensorMapDataType type,
                    int64_t elem_bytes, int64_t rows, int64_t cols, int64_t ld, uint32_t box_rows, uint32_t box_cols,
                    CUtensorMapSwizzle swizzle) {
    const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
    const cuuint64_t strides[1] = {cuuint64_t(ld * elem_bytes)};
    const cuuint32_t box[2] = {box_cols, box_rows};
    const cuuint32_t elem_strides[2] = {1, 1};
    const CUresult r = encode(map, type, 2, const_cast<void*>(base), dims, strides, box, elem_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return fail(FQ_STATUS_CUDA_ERROR, "{}: cuTensorMapEncodeTiled failed (CUresult {}) for {} x {} elements, row stride {}",
                    what, int(r), rows, cols, ld);
    return FQ_STATUS_SUCCESS;
}

// Asks once per kernel for the shared memory it needs.
// The grouped GEMM's kernels (grouped_gemm_sm90<P, kSplitK, kSegments>, row_pair_gemm_sm90<P>) and the shared
// memory each asks for.
using GemmKernel = void (*)(Params, CUtensorMap, CUtensorMap);
// The attribute belongs to the device it was set on: set on the current device (the handle's, which
// fqGroupedGemm checked), once per kernel and device ordinal below 64 (others set it on every call).
template <GemmKernel K>
fqStatus_t prepare_kernel(size_t smem_bytes) {
    static std::atomic<uint64_t> done{0};
    int device = 0;
    FQ_TRY(cuda::cuda_status(cudaGetDevice(&device), "cudaGetDevice"));
    const uint64_t bit = device < 64 ? uint64_t(1) << device : 0;
    if (done.load(std::memory_order_acquire) & bit) return FQ_STATUS_SUCCESS;
    FQ_TRY(cuda::cuda_status(cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes)),
                             "handle: giving the grouped GEMM its shared memory (cudaFuncSetAttribute)"));
    done.fetch_or(bit, std::memory_order_release);
    return FQ_STATUS_SUCCESS;
}

// The kernel's launch configuration for `clusters` clusters of `size` CTAs (one per SM), written once for the
// occupancy query and the launch. Not copyable: cfg points at the cluster attribute beside it.
struct ClusterLaunch {
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute cluster{};
    ClusterLaunch(int64_t clusters, int size, cudaStream_t stream, size_t smem_bytes) {
        cfg.blockDim = dim3(kThreads);
        cfg.dynamicSmemBytes = smem_bytes;
        cfg.stream = stream;
        cfg.gridDim = dim3(unsigned(clusters * size));
        cluster.id = cudaLaunchAttributeClusterDimension;
        cluster.val.clusterDim.x = unsigned(size);
        cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
        cfg.attrs = &cluster;
        cfg.numAttrs = 1;
    }
    ClusterLaunch(const ClusterLaunch&) = delete;
    ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// How many clusters of `size` CTAs of kernel K the device holds at once (fewer than sm_count / size where its
// GPCs' SM counts are not multiples of size); asked once per kernel, SM count and size.
template <GemmKernel K>
int max_active_clusters(int sm_count, int size, size_t smem_bytes) {
    static std::mutex mu;
    static int cached_sms = -1, cached[kMaxSplit + 1] = {};
    std::lock_guard<std::mutex> lock(mu);
    if (cached_sms != sm_count) {
        for (int& c : cached) c = -1;
        cached_sms = sm_count;
    }
    if (cached[size] < 0) {
        const ClusterLaunch launch(sm_count / size, size, nullptr, smem_bytes);
        int n = 0;
        const cudaError_t e = cudaOccupancyMaxActiveClusters(&n, K, &launch.cfg);
        if (e != cudaSuccess) {
            cuda::forget_own_error(e);
            n = 0;
        }
        cached[size] = n;
    }
    return cached[size];
}

// The launch: `clusters` clusters of `size` CTAs (at most one per SM).
template <GemmKernel K>
fqStatus_t launch_kernel(const Params& p, const CUtensorMap& a, const CUtensorMap& b, int64_t clusters, int size,
                         size_t smem_bytes, cudaStream_t stream) {
    const ClusterLaunch launch(clusters, size, stream, smem_bytes);
    const cudaError_t e = cudaLaunchKernelEx(&launch.cfg, K, p, a, b);
    return cuda::cuda_status(e, "stream: the grouped GEMM kernel launch");
}

// Launches the persistent grid on at most `sm_count` SMs. A GEMM with fewer units than half the SMs (one
// group; whatever the outputs, so that C does not depend on them) takes the split-K kernel: the most CTAs per
// unit (up to kMaxSplit, each at least two K blocks) for which every unit's cluster runs at once. Otherwise
// clusters of two sharing A where the unit columns pair up and the device can co-schedule enough pairs.
// Whether a GEMM split K would take (p.split > 1, one group) goes to the row-pair kernel instead: the lean epilogue
// (rowwise codes alone) with 32- to 128-wide groups, 16-byte aligned code rows, every unit's pair at once, and a
// split of at most kRowPairMaxSplit (the row pairs are 2 CTAs a unit where split K has `split`).
constexpr int kRowPairMaxSplit = 2;
template <Pairing P>
bool takes_row_pair(const Params& p, int64_t units, int sm_count) {
    const bool epilogue_fits = p.lean && p.groups == 1 && p.split > 1 && p.group >= 32 && p.group <= kUnitCols &&
                               p.h % 16 == 0 && p.out_ld % 16 == 0 && reinterpret_cast<uintptr_t>(p.out) % 16 == 0;
    constexpr GemmKernel kernel = row_pair_gemm_sm90<P>;
    return epilogue_fits && p.split <= kRowPairMaxSplit && prepare_kernel<kernel>(kPairSmemBytes) == FQ_STATUS_SUCCESS &&
           units <= max_active_clusters<kernel>(sm_count, 2, kPairSmemBytes);
}

template <Pairing P>
fqStatus_t launch(Params& p, bool segments, const CUtensorMap& a, const CUtensorMap& b, int sm_count, cudaStream_t stream) {
    // Segments are a kernel of their own, so the tiles' kernel keeps its code (its loops measured 1% slower with
    // the segment walk compiled in beside them, docs/perf.md session 32).
    constexpr GemmKernel persistent = grouped_gemm_sm90<P, false>, split_k = grouped_gemm_sm90<P, true>,
                         segmented = grouped_gemm_sm90<P, false, true>;
    FQ_TRY(prepare_kernel<persistent>(kSmemBytes));
    FQ_TRY(prepare_kernel<split_k>(kSmemBytes));
    FQ_TRY(prepare_kernel<segmented>(kSmemBytes));
    const int64_t units = p.m_tiles * p.unit_cols_tiles;
    p.split = 1;
    if (p.groups == 1 && p.stash && 2 * units <= sm_count)
        for (int split = kMaxSplit; split >= 2 && p.split == 1; --split)
            if (p.k_blocks >= 2 * split && units <= max_active_clusters<split_k>(sm_count, split, kSmemBytes)) p.split = split;
    if (p.split > 1) {
        p.cluster = 1;
        p.pair_cols = p.unit_cols_tiles;
        // A fourth stage pays where a CTA's slice of K turns the ring four times or more (dense M = 256 and 512: 5-7%
        // faster); on shorter slices (M = 128: 9-10 K blocks a CTA) three ran 2% faster (docs/perf.md, session 27).
        p.split_stages = p.k_blocks / p.split >= 4 * kSplitStages ? kSplitStages : kStages;
        if (takes_row_pair<P>(p, units, sm_count))
            return launch_kernel<row_pair_gemm_sm90<P>>(p, a, b, units, 2, kPairSmemBytes, stream);
        return launch_kernel<split_k>(p, a, b, units, p.split, kSmemBytes, stream);
    }
    const int max_pairs = max_active_clusters<persistent>(sm_count, 2, kSmemBytes);
    p.cluster = p.unit_cols_tiles >= 2 && max_pairs > 0 ? 2 : 1;
    p.pair_cols = ceil_div(p.unit_cols_tiles, int64_t(p.cluster));
    // Segments: at most one per group more than the tiles, for offsets in order (this sizes the grid only).
    const int64_t pairs = (p.m_tiles + (segments ? p.groups : 0)) * p.pair_cols;
    const int64_t slots = p.cluster == 2 ? max_pairs : sm_count, clusters = pairs < slots ? pairs : slots;
    return segments ? launch_kernel<segmented>(p, a, b, clusters, p.cluster, kSmemBytes, stream)
                    : launch_kernel<persistent>(p, a, b, clusters, p.cluster, kSmemBytes, stream);
}

int32_t log2_of(int64_t v) {  // v a power of two (the refusal admits no other group or block)
    int32_t l = 0;
    while ((int64_t(1) << (l + 1)) <= v) ++l;
    return l;
}

constexpr bool built_with_sm90a() {
#ifdef __CUDA_ARCH_LIST__
    for (int arch : {__CUDA_ARCH_LIST__})
        if (arch == 900) return true;
#endif
    return false;
}

}  // namespace

fqStatus_t run_grouped_gemm_cuda(const GroupedGemmConfig& c, void* stream, int sm_count) {
    if (!built_with_sm90a())
        return fail(FQ_STATUS_NOT_SUPPORTED, "handle: this build of libfusedquant has no sm_90a code (FQ_CUDA_ARCHS lacks 90a); "
                                             "the grouped GEMM kernel needs it");
    if (c.m == 0) return FQ_STATUS_SUCCESS;
    const OpConfig& e = c.epi;
    Params p{};
    p.m = c.m;
    p.n = c.n;
    p.h = e.cols;
    p.groups = c.groups;
    p.m_tiles = ceil_div(c.m, kTileM);
    p.unit_cols_tiles = ceil_div(p.h, kUnitCols);
    p.k_blocks = c.k_blocks();
    p.n_blocks = c.n_blocks();
    p.offsets = c.offsets;
    p.counts = c.counts;
    p.a_scales = c.a_scales;
    p.a_scale_ld = c.a_scale_ld;
    p.alpha = c.alpha;
    p.b_scales = c.b_scales;
    p.c_out = c.c_out;
    p.d_out = c.d_out;
    p.act = e.act;
    p.rounding = e.rounding;
    p.swiglu = e.swiglu;
    p.gate = e.gate;
    p.order = e.gate_order;
    p.gate_block = e.gate_block;
    p.prob = e.row_prob;
    p.qp = e.quant;
    p.scale_ub = e.scale_ub;
    p.group = int32_t(e.group);
    p.col_block = int32_t(e.col_block);
    p.group_log2 = log2_of(p.group);
    p.col_block_log2 = log2_of(p.col_block);
    p.rowwise = c.quantize && e.rowwise();
    p.columnwise = c.quantize && e.columnwise();
    p.col_transpose = e.col_transpose;
    p.stash = c.quantize || c.d_out || c.c_out;
    p.lean = p.rowwise && !p.columnwise && !p.c_out && !p.d_out && p.rounding == Rounding::Fp32 &&
             (p.act == Act::Silu || p.act == Act::SwigluOai) && !p.qp.reciprocal && !has_saturation_bound(p.qp) &&
             (p.qp.out == DType::E4M3FN || p.qp.out == DType::E5M2);
    // MoE units as segments (for_each_unit), where no columnwise block spans the groups of a tile
    const bool segments = p.offsets && p.groups > 1 && !p.columnwise;
    p.out = static_cast<uint8_t*>(c.output);
    p.out_ld = e.out_ld;
    p.scales = static_cast<uint8_t*>(c.scales);
    p.row_strides = scale_strides(e.scales);
    p.col_out = static_cast<uint8_t*>(e.col_output);
    p.col_scales = static_cast<uint8_t*>(e.col_scales_ptr);
    p.col_strides = scale_strides(e.col_scales);
    p.row_pad_end = p.rowwise ? e.scales.padded_rows : c.m;
    p.row_groups = e.scales.cols;
    p.col_pad_end = p.columnwise ? e.col_scales.padded_rows : p.h;
    p.col_groups = e.col_scales.cols;

    EncodeTiled encode = nullptr;
    FQ_TRY(encode_tiled_fn(&encode));
    CUtensorMap map_a{}, map_b{};
    FQ_TRY(make_map(encode, &map_a, "a", c.a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, c.m, c.k, c.lda, kHalfN, kTileK,
                    CU_TENSOR_MAP_SWIZZLE_128B));
    FQ_TRY(make_map(encode, &map_b, "b", c.b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, int64_t(c.groups) * c.n, c.k, c.ldb, kHalfN,
                    kTileK, CU_TENSOR_MAP_SWIZZLE_128B));

    auto* st = static_cast<cudaStream_t>(stream);
    if (e.gate == GateLayout::Interleaved) return launch<Pairing::Adjacent>(p, segments, map_a, map_b, sm_count, st);
    if (e.gate == GateLayout::BlockInterleaved && e.gate_block == 32)
        return launch<Pairing::Blocks32>(p, segments, map_a, map_b, sm_count, st);
    return launch<Pairing::Halves>(p, segments, map_a, map_b, sm_count, st);
}

}  // namespace fq
