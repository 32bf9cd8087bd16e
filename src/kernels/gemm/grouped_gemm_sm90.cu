// Grouped FP8 GEMM with the activation + quantization epilogue fused, for Hopper (sm_90a).
//
// One persistent CTA per SM walks work units. A unit is 128 rows of A (a tile anchored at a multiple of 128,
// so columnwise blocks of the stacked rows lie inside it) x 128 output columns (one 1x128 quantization group,
// i.e. two 128-column C tiles of gate/up pairs). For every group that owns rows of the tile, and each of the
// two C tiles, a producer warp streams K blocks of 128 through a 4-stage TMA pipeline, and two consumer
// warpgroups (64 rows each) multiply them with wgmma m64n128k32 and promote each block's fp32 partial sum
// into their accumulators with the block's two scales (DeepGEMM's recipe: the tensor core's own accumulation
// is never trusted across more than 128 of K). Each C tile goes, rounded to bf16 (what an unfused pipeline's
// GEMM writes), into a shared stash; once the unit is complete the consumers write C, apply the gated
// activation and routing probability, and quantize rowwise and columnwise with the same shared functions the
// fused kernels and the host reference call, so the bytes equal fqQuantize of C. (Measured limits and the
// next steps: docs/perf.md, session 16.)
#include <cuda.h>
#include <cuda_runtime.h>

#include <mutex>

#include "../../api/error.h"
#include "../../common/activation.h"
#include "../../common/grouped_gemm.h"
#include "../../common/moe.h"
#include "../../common/quantize.h"
#include "../../dispatch/grouped_gemm.h"
#include "sm90.cuh"

namespace fq {
namespace {

constexpr int kTileM = 128;       // rows of a unit (two consumer warpgroups of 64)
constexpr int kTileN = 128;       // C columns of one tile: 64 gate/up pairs
constexpr int kTileK = 128;       // K per pipeline stage = the scale block of A and B
constexpr int kHalfN = 64;        // output columns of one C tile; rows of one B box
constexpr int kUnitCols = 128;    // output columns of a unit (two C tiles)
constexpr int kStages = 4;
// A stash row: the unit's two C tiles as bf16 (2 x 64 words), later y as fp32 (128 words), + 4 words so the
// bf16x2 stores of a warp (8 rows x 4 quads) hit 32 distinct banks.
constexpr int kStashWords = 2 * kTileN / 2 + 4;
constexpr int kThreads = 384;            // warpgroup 0 produces, 1 and 2 consume
[[maybe_unused]] constexpr int kConsumerThreads = 256;
[[maybe_unused]] constexpr int kStashBarrier = 1;         // named barrier of the consumers (0 is __syncthreads)
[[maybe_unused]] constexpr uint32_t kStageBytes = kTileM * kTileK + kTileN * kTileK + kTileM * sizeof(float);

// Where the gate and up columns of an output column sit in a C tile (SPEC §2 gate layouts), decided by how the
// B tile was loaded: two 64-row boxes (the "first" and "second" columns of 64 outputs), or one 128-row run.
enum class Pairing {
    Halves,    // SPLIT, BLOCK_INTERLEAVED with blocks of 64k: output i <- tile columns i and 64 + i
    Adjacent,  // INTERLEAVED: output i <- tile columns 2i and 2i + 1
    Blocks32   // BLOCK_INTERLEAVED 32: output 32b + r <- tile columns 64b + r and 64b + 32 + r
};

struct SharedStorage {
    uint8_t a[kStages][kTileM * kTileK];  // 128-byte swizzled K-major tiles, as TMA writes them
    uint8_t b[kStages][kTileN * kTileK];
    float sa[kStages][kTileM];            // A's scales of the stage's K block
    uint32_t stash[kTileM][kStashWords];  // the unit's C (bf16 pairs), then its y (fp32), row by row
    int32_t row_tag[kTileM];              // == the unit's tag where the row is valid in this unit
    float row_prob[kTileM];               // the routing probability of each valid row
    float col_amax[2][kTileN];            // columnwise 128-row blocks: the two halves' amax
    bool col_any[2][kTileN];
    uint64_t full[kStages], empty[kStages];
};
constexpr size_t kSmemBytes = sizeof(SharedStorage) + 1024;  // + the alignment of the tiles

struct Params {
    int64_t m, n, h;
    int32_t groups;
    int64_t m_tiles, unit_cols_tiles, k_blocks, n_blocks;
    const int32_t* offsets;
    const int32_t* counts;
    const float* alpha;
    const float* b_scales;
    uint16_t* c_out;
    uint16_t* d_out;
    // Activation (SPEC §2).
    Act act;
    Rounding rounding;
    SwigluParams swiglu;
    GateLayout gate;
    GateOrder order;
    int64_t gate_block;
    const float* prob;
    // Quantization (SPEC §3.2), rowwise into out/scales, columnwise into col_out/col_scales.
    QuantParams qp;
    const float* scale_ub;
    int32_t group, col_block;
    bool rowwise, columnwise, col_transpose, stash;
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

// ---- Which rows of a tile each group owns ---------------------------------------------------------------

[[maybe_unused]] __device__ __forceinline__ RowRange group_rows(const Params& p, int32_t g) {
    return p.offsets ? contiguous_rows(p.offsets, p.counts, g, p.m) : RowRange{0, p.m, p.m};
}

// Calls visit(g, lo, hi) for each group with valid rows [lo, hi) inside rows [t0, t0 + 128), in group order.
// Producer and consumers call it alike, so they agree on the work without talking. Offsets are non-decreasing
// (docs/moe.md); if they are not, some rows may be skipped, never read or written out of bounds.
template <class Visit>
__device__ __forceinline__ void for_each_group_in_tile(const Params& p, int64_t t0, Visit&& visit) {
    const int64_t t1 = min(t0 + kTileM, p.m);
    int32_t g = 0;
    if (p.offsets) {  // the first group whose slot ends past t0
        int32_t hi = p.groups;
        while (g < hi) {
            const int32_t mid = (g + hi) / 2;
            if (clamp_rows(p.offsets[mid + 1], 0, p.m) > t0) hi = mid; else g = mid + 1;
        }
    }
    for (; g < p.groups; ++g) {
        const RowRange r = group_rows(p, g);
        if (r.first >= t1) break;
        const int64_t lo = max(r.first, t0), hi = min(r.first + r.count, t1);
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

// bf16 C value at tile column `col` of tile `t` of a stash row.
[[maybe_unused]] __device__ __forceinline__ float stash_c(const uint32_t* srow, int t, int col) {
    const uint32_t w = srow[t * (kTileN / 2) + col / 2];
    return bf16_to_float(uint16_t(col & 1 ? w >> 16 : w & 0xFFFF));
}

// ---- The deferred epilogue: C rows, y, rowwise and columnwise quantization, in steps ---------------------
#ifdef FQ_SM90A
using sm90::named_barrier;

// The unit whose C sits in the stash, and how far its epilogue is.
struct Pending {
    int64_t t0 = 0, d0 = 0;
    int32_t tag = -1;
    int step = 1 << 30;  // >= kEpilogueSteps: nothing pending
};
constexpr int kRowSteps = kTileM / 8;  // a row per consumer warp per step
constexpr int kColQuarters = 4;        // columnwise: amax over 16-row slices of each thread's 64 rows, then codes
constexpr int kEpilogueSteps = kRowSteps + 2 * kColQuarters;

// A consumer thread's columnwise share: column c = ctid % 128, rows [64h, 64h + 64) with h = ctid / 128, which
// hold two 32-row blocks or half of a 128-row block.
struct ColumnState {
    float amax[2];
    bool any[2];
    float scale[2], inv[2];
};

// y of the four outputs 4l .. 4l+3 of a unit row (lane l), with the activation fixed at compile time so the four
// evaluations interleave.
template <Pairing P, Act A>
__device__ __forceinline__ void y4(const Params& p, const uint32_t* srow, int lane, float prob, float (&y)[4]) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const int o = 4 * lane + k, t = o / kHalfN, i = o % kHalfN;
        int first = i, second = kHalfN + i;  // Halves
        if constexpr (P == Pairing::Adjacent) { first = 2 * i; second = 2 * i + 1; }
        if constexpr (P == Pairing::Blocks32) { first = (i / 32) * 64 + i % 32; second = first + 32; }
        const float a = stash_c(srow, t, first), b = stash_c(srow, t, second);
        const bool gate_first = p.order == GateOrder::GateFirst;
        const float v = activate_gated(A, gate_first ? a : b, gate_first ? b : a, p.rounding, InType::Bf16, p.swiglu);
        y[k] = p.prob ? prob * v : v;
    }
}

template <Pairing P>
__device__ __forceinline__ void y4_of(const Params& p, const uint32_t* srow, int lane, float prob, float (&y)[4]) {
    switch (p.act) {
        case Act::Silu: return y4<P, Act::Silu>(p, srow, lane, prob, y);
        case Act::GeluErf: return y4<P, Act::GeluErf>(p, srow, lane, prob, y);
        case Act::GeluTanh: return y4<P, Act::GeluTanh>(p, srow, lane, prob, y);
        case Act::Relu: return y4<P, Act::Relu>(p, srow, lane, prob, y);
        case Act::ReluSquared: return y4<P, Act::ReluSquared>(p, srow, lane, prob, y);
        case Act::SwigluOai: return y4<P, Act::SwigluOai>(p, srow, lane, prob, y);
        default: return y4<P, Act::Identity>(p, srow, lane, prob, y);
    }
}

// Step `st.step` of the pending unit's epilogue, by all 256 consumer threads together (the barriers inside are
// reached by every consumer at the same step).
template <Pairing P>
__device__ __forceinline__ void epilogue_step(const Params& p, SharedStorage& s, const Pending& st, ColumnState& cs,
                                           int ctid, float ub) {
    const int lane = ctid % 32;
    if (st.step < kRowSteps) {  // ---- row r: C out, y (written back over the row as fp32), y out, rowwise codes
        const int r = ctid / 32 + 8 * st.step;
        if (s.row_tag[r] != st.tag) return;
        const int64_t row = st.t0 + r;
        uint32_t* srow = s.stash[r];
        const int64_t d_tile = st.d0 + kHalfN * (lane / 16);  // C: lane l holds tile columns 8(l%16)..+7 of tile l/16
        if (p.c_out && d_tile < p.h) {
            const BoxRows rows = box_rows<P>(p, d_tile);
            const int jt = 8 * (lane % 16);
            const int64_t col = jt < kHalfN ? rows.first + jt : rows.second + (jt - kHalfN);
            *reinterpret_cast<uint4*>(p.c_out + row * p.n + col) = *reinterpret_cast<const uint4*>(srow + 4 * lane);
        }
        const int64_t col = st.d0 + 4 * lane;
        const bool in = col < p.h;
        float y[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (in) y4_of<P>(p, srow, lane, s.row_prob[r], y);
        __syncwarp();
        *reinterpret_cast<float4*>(srow + 4 * lane) = make_float4(y[0], y[1], y[2], y[3]);
        if (p.d_out && in) {
            const uint32_t lo = uint32_t(float_to_bf16(y[0])) | (uint32_t(float_to_bf16(y[1])) << 16);
            const uint32_t hi = uint32_t(float_to_bf16(y[2])) | (uint32_t(float_to_bf16(y[3])) << 16);
            *reinterpret_cast<uint2*>(p.d_out + row * p.h + col) = make_uint2(lo, hi);
        }
        if (!p.rowwise) return;
        float amax = 0.0f;  // fmaxf from 0: NaN ignored, as SPEC §3.2 says
#pragma unroll
        for (int k = 0; k < 4; ++k) amax = fmaxf(amax, fabsf(y[k]));
        for (int off = p.group / 8; off >= 1; off /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, off));
        if (!in) return;
        const float sc = group_scale(amax, ub, p.qp), inv = 1.0f / sc;
        uint32_t q = 0;
#pragma unroll
        for (int k = 0; k < 4; ++k) q |= uint32_t(quantize_value(y[k], sc, inv, p.qp)) << (8 * k);
        *reinterpret_cast<uint32_t*>(p.out + row * p.out_ld + col) = q;
        if (lane % (p.group / 4) == 0) *reinterpret_cast<float*>(p.scales + scale_offset(p.row_strides, row, col / p.group)) = sc;
        return;
    }
    if (!p.columnwise) return;
    // ---- columnwise: thread (c, h) walks rows [64h, 64h + 64) of column c in quarters of 16 rows
    const int c = ctid % kUnitCols, h = ctid / kUnitCols;
    const int64_t col = st.d0 + c;
    const auto* ys = reinterpret_cast<const float(*)[kStashWords]>(s.stash);
    const bool wide = p.col_block == kTileM;  // one 128-row block over both halves: amax shared through smem
    int quarter = st.step - kRowSteps;
    if (quarter == 0) {
        named_barrier(kStashBarrier, kConsumerThreads);  // every row's y is in the stash
        cs.amax[0] = cs.amax[1] = 0.0f;
        cs.any[0] = cs.any[1] = false;
    }
    const bool encode = quarter >= kColQuarters;
    if (encode) quarter -= kColQuarters;
    if (encode && quarter == 0) {
        if (wide) {  // combine the halves of the one block
            float* shared_amax = s.col_amax[0];
            bool* shared_any = s.col_any[0];
            shared_amax[ctid] = cs.amax[0];
            shared_any[ctid] = cs.any[0];
            named_barrier(kStashBarrier, kConsumerThreads);
            const int other = ctid ^ kUnitCols;
            cs.amax[0] = fmaxf(cs.amax[0], shared_amax[other]);
            cs.any[0] = cs.any[0] || shared_any[other];
        }
        for (int b = 0; b < (wide ? 1 : 2); ++b) {
            if (!cs.any[b] || col >= p.h) continue;  // a block with no valid row writes neither data nor scale
            cs.scale[b] = group_scale(cs.amax[b], ub, p.qp);
            cs.inv[b] = 1.0f / cs.scale[b];
            const int r_lo = wide ? 0 : 64 * h + 32 * b;
            if (!wide || h == 0)
                *reinterpret_cast<float*>(p.col_scales + scale_offset(p.col_strides, col, (st.t0 + r_lo) / p.col_block)) = cs.scale[b];
        }
    }
    if (col >= p.h) return;
    const int r_lo = 64 * h + 16 * quarter;
    const int b = wide ? 0 : (16 * quarter) / 32;  // which of the thread's two 32-row blocks
    for (int r = r_lo; r < r_lo + 16; ++r) {
        if (s.row_tag[r] != st.tag) continue;
        const float v = ys[r][c];
        if (!encode) {
            cs.any[b] = true;
            cs.amax[b] = fmaxf(cs.amax[b], fabsf(v));
        } else {
            const int64_t row = st.t0 + r;
            p.col_out[p.col_transpose ? col * p.m + row : row * p.out_ld + col] = quantize_value(v, cs.scale[b], cs.inv[b], p.qp);
        }
    }
}

#endif  // FQ_SM90A

// ---- The kernel ------------------------------------------------------------------------------------------

template <Pairing P>
__global__ void __launch_bounds__(kThreads, 1)
    grouped_gemm_sm90(const __grid_constant__ Params p, const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b, const __grid_constant__ CUtensorMap map_sa) {
#ifdef FQ_SM90A
    using namespace sm90;
    // The 128-byte swizzle repeats every 1024 bytes of shared address: the tiles start on such a boundary (an
    // offset from the array itself, so the compiler still knows the storage is shared memory).
    extern __shared__ uint8_t smem_raw[];
    auto& s = *reinterpret_cast<SharedStorage*>(smem_raw + ((1024 - (smem_addr(smem_raw) & 1023)) & 1023));
    const int warpgroup = threadIdx.x / 128;
    const int64_t units = p.m_tiles * p.unit_cols_tiles;

    if (threadIdx.x == 0) {
        for (int i = 0; i < kStages; ++i) {
            mbar_init(&s.full[i], 1);                        // the producer's expect_tx arrival
            mbar_init(&s.empty[i], kConsumerThreads / 32);   // one arrival per consumer warp
        }
        fence_barrier_init();
    }
    for (int i = threadIdx.x; i < kTileM; i += kThreads) s.row_tag[i] = -1;
    __syncthreads();

    if (warpgroup == 0) {  // ---- producer: one thread issues every TMA load --------------------------------
        regs_release<40>();
        if (threadIdx.x != 0) return;
        tma_prefetch_descriptor(&map_a);
        tma_prefetch_descriptor(&map_b);
        tma_prefetch_descriptor(&map_sa);
        int stage = 0;
        uint32_t phase = 0;
        for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
            const int64_t t0 = (u / p.unit_cols_tiles) * kTileM, d0 = (u % p.unit_cols_tiles) * kUnitCols;
            for_each_group_in_tile(p, t0, [&](int32_t g, int64_t, int64_t) {
                for (int64_t d = d0; d < min(d0 + kUnitCols, p.h); d += kHalfN) {
                    const BoxRows rows = box_rows<P>(p, d);
                    const int32_t b0 = int32_t(g * p.n + rows.first), b1 = int32_t(g * p.n + rows.second);
                    for (int64_t kb = 0; kb < p.k_blocks; ++kb) {
                        mbar_wait(&s.empty[stage], phase ^ 1);
                        mbar_arrive_expect_tx(&s.full[stage], kStageBytes);
                        const int32_t k = int32_t(kb * kTileK);
                        tma_load_2d(s.a[stage], &map_a, &s.full[stage], k, int32_t(t0));
                        tma_load_2d(s.b[stage], &map_b, &s.full[stage], k, b0);
                        tma_load_2d(s.b[stage] + kHalfN * kTileK, &map_b, &s.full[stage], k, b1);
                        tma_load_2d(s.sa[stage], &map_sa, &s.full[stage], int32_t(t0), int32_t(kb));
                        if (++stage == kStages) { stage = 0; phase ^= 1; }
                    }
                }
            });
        }
        return;
    }

    // ---- consumers ------------------------------------------------------------------------------------------
    regs_acquire<232>();
    const int ctid = threadIdx.x - 128;             // 0..255
    const int half = ctid / 128;                    // rows 64*half .. 64*half + 63 of the tile
    const int warp = (ctid % 128) / 32, lane = ctid % 32, quad = lane % 4;
    const int row_local = 64 * half + 16 * warp + lane / 4;  // this thread's rows: row_local and row_local + 8
    const float ub = p.scale_ub ? *p.scale_ub : __int_as_float(0x7FC00000);  // NaN: no upper bound

    if (blockIdx.x == 0) {  // scale padding (rows past the logical ones) is written with 0, as fqQuantize does
        if (p.rowwise)
            for (int64_t i = ctid; i < (p.row_pad_end - p.m) * p.row_groups; i += kConsumerThreads)
                *reinterpret_cast<float*>(p.scales + scale_offset(p.row_strides, p.m + i / p.row_groups, i % p.row_groups)) = 0.0f;
        if (p.columnwise)
            for (int64_t i = ctid; i < (p.col_pad_end - p.h) * p.col_groups; i += kConsumerThreads)
                *reinterpret_cast<float*>(p.col_scales + scale_offset(p.col_strides, p.h + i / p.col_groups, i % p.col_groups)) = 0.0f;
    }

    // The epilogue of a unit runs in steps (a row per warp, then the columnwise blocks) once the next unit's
    // first C tile is computed, just before it overwrites the stash (and after the last unit). Issuing the steps
    // between a K block's wgmma and its wait, to overlap them with the MMAs, measured slower (docs/perf.md).
    Pending pending;
    ColumnState col_state;
    auto step = [&] {
        epilogue_step<P>(p, s, pending, col_state, ctid, ub);
        ++pending.step;
    };
    auto finish_pending = [&] {
        while (pending.step < kEpilogueSteps) step();
        named_barrier(kStashBarrier, kConsumerThreads);  // every read of the stash is done
    };

    int stage = 0;
    uint32_t phase = 0;
    int32_t tag = 0;
    for (int64_t u = blockIdx.x; u < units; u += gridDim.x) {
        const int64_t t0 = (u / p.unit_cols_tiles) * kTileM, d0 = (u % p.unit_cols_tiles) * kUnitCols;
        bool any = false;
        for_each_group_in_tile(p, t0, [&](int32_t g, int64_t lo, int64_t hi) {
            const float alpha = p.alpha ? p.alpha[g] : 1.0f;
            const int64_t r0 = t0 + row_local, r1 = r0 + 8;
            const bool valid0 = r0 >= lo && r0 < hi, valid1 = r1 >= lo && r1 < hi;
            const float prob0 = p.prob && valid0 ? p.prob[r0] : 1.0f, prob1 = p.prob && valid1 ? p.prob[r1] : 1.0f;
            for (int64_t d = d0; d < min(d0 + kUnitCols, p.h); d += kHalfN) {
                const BoxRows rows = box_rows<P>(p, d);
                const float* sb0 = p.b_scales + (g * p.n_blocks + rows.first / kTileK) * p.k_blocks;
                const float* sb1 = p.b_scales + (g * p.n_blocks + rows.second / kTileK) * p.k_blocks;

                // ---- main loop: C tile [128 x 128] over K, promoted every 128 of K -------------------------
                float total[64], acc[64];
#pragma unroll
                for (int i = 0; i < 64; ++i) total[i] = 0.0f;
                for (int64_t kb = 0; kb < p.k_blocks; ++kb) {
                    const float b_first = __ldg(sb0 + kb), b_second = __ldg(sb1 + kb);
                    mbar_wait(&s.full[stage], phase);
                    const float a0 = s.sa[stage][row_local], a1 = s.sa[stage][row_local + 8];
                    const uint64_t desc_a = smem_descriptor_sw128(s.a[stage] + half * 64 * kTileK);
                    const uint64_t desc_b = smem_descriptor_sw128(s.b[stage]);
                    wgmma_fence();
                    fence_operands(acc);
#pragma unroll
                    for (int kk = 0; kk < kTileK / 32; ++kk)  // +32 bytes of K = +2 in the descriptor's address
                        wgmma_m64n128k32_e4m3(acc, desc_a + 2 * kk, desc_b + 2 * kk, kk > 0);
                    wgmma_commit();
                    wgmma_wait<0>();
                    fence_operands(acc);
                    if (lane == 0) mbar_arrive(&s.empty[stage]);
                    if (++stage == kStages) { stage = 0; phase ^= 1; }
                    // scale[row half][box]: rows r0 / r1, tile columns < 64 (first box) / >= 64 (second box)
                    const float scale[2][2] = {{a0 * b_first, a0 * b_second}, {a1 * b_first, a1 * b_second}};
#pragma unroll
                    for (int i = 0; i < 64; ++i) total[i] = __fmaf_rn(acc[i], scale[(i >> 1) & 1][i >= 32], total[i]);
                }
                if (!p.stash) continue;
                if (!any) finish_pending();  // the unit's first tile: the stash must be free
                any = true;

                // ---- C = alpha * total as the unfused pipeline's GEMM writes it, bf16, into the stash: tile t of
                // the unit in words [64t, 64t + 64) of each row, in the tile's column order (pairs resolved later)
                const int word0 = int(d - d0);
#pragma unroll
                for (int i = 0; i < 64; i += 2) {
                    const bool second_row = (i >> 1) & 1;
                    if (second_row ? valid1 : valid0)
                        s.stash[row_local + 8 * second_row][word0 + 4 * (i / 4) + quad] =
                            uint32_t(float_to_bf16(total[i] * alpha)) | (uint32_t(float_to_bf16(total[i + 1] * alpha)) << 16);
                }
                if (quad == 0) {
                    if (valid0) { s.row_tag[row_local] = tag; s.row_prob[row_local] = prob0; }
                    if (valid1) { s.row_tag[row_local + 8] = tag; s.row_prob[row_local + 8] = prob1; }
                }
            }
        });
        if (!any) continue;
        named_barrier(kStashBarrier, kConsumerThreads);  // the unit's C is in the stash
        pending = Pending{t0, d0, tag, 0};
        ++tag;
    }
    finish_pending();
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

template <Pairing P>
fqStatus_t launch(const Params& p, const CUtensorMap& a, const CUtensorMap& b, const CUtensorMap& sa, int grid,
                  cudaStream_t stream) {
    static std::once_flag once;
    static cudaError_t attr = cudaSuccess;
    std::call_once(once, [] {
        attr = cudaFuncSetAttribute(grouped_gemm_sm90<P>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmemBytes));
    });
    if (attr != cudaSuccess)
        return fail(FQ_STATUS_CUDA_ERROR, "handle: cannot give the grouped GEMM {} bytes of shared memory: {}", kSmemBytes,
                    cudaGetErrorString(attr));
    grouped_gemm_sm90<P><<<grid, kThreads, kSmemBytes, stream>>>(p, a, b, sa);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return fail(FQ_STATUS_CUDA_ERROR, "stream: the grouped GEMM kernel did not launch: {}", cudaGetErrorString(e));
    return FQ_STATUS_SUCCESS;
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
    p.rowwise = c.quantize && e.rowwise();
    p.columnwise = c.quantize && e.columnwise();
    p.col_transpose = e.col_transpose;
    p.stash = c.quantize || c.d_out || c.c_out;
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
    CUtensorMap map_a{}, map_b{}, map_sa{};
    FQ_TRY(make_map(encode, &map_a, "a", c.a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, c.m, c.k, c.lda, kTileM, kTileK,
                    CU_TENSOR_MAP_SWIZZLE_128B));
    FQ_TRY(make_map(encode, &map_b, "b", c.b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, int64_t(c.groups) * c.n, c.k, c.ldb, kHalfN,
                    kTileK, CU_TENSOR_MAP_SWIZZLE_128B));
    FQ_TRY(make_map(encode, &map_sa, "aScales", c.a_scales, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, c.k_blocks(), c.a_scale_ld,
                    c.a_scale_ld, 1, kTileM, CU_TENSOR_MAP_SWIZZLE_NONE));

    const int64_t units = p.m_tiles * p.unit_cols_tiles;
    const int grid = int(units < sm_count ? units : sm_count);
    auto* st = static_cast<cudaStream_t>(stream);
    if (e.gate == GateLayout::Interleaved) return launch<Pairing::Adjacent>(p, map_a, map_b, map_sa, grid, st);
    if (e.gate == GateLayout::BlockInterleaved && e.gate_block == 32)
        return launch<Pairing::Blocks32>(p, map_a, map_b, map_sa, grid, st);
    return launch<Pairing::Halves>(p, map_a, map_b, map_sa, grid, st);
}

}  // namespace fq
