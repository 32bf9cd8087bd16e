// The grouped GEMM's row-pair kernel (GemmKernel RowPair): split K's small GEMMs with the lean epilogue, in the
// consumers' registers, and no partial sums crossing the cluster.
#pragma once

#include "epilogue.cuh"
#include "pipeline.cuh"

namespace fq::gemm {

// ---- The row-pair kernel: split K's GEMMs with the lean epilogue, no partial sums crossing the cluster ------

// Split K's pair pays for the end of its K loop: the CTAs' fp32 partial sums cross the cluster through DSMEM, 64 KB
// a CTA, then the epilogue rows run from the slots (docs/design-notes.md). Here a cluster of
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
// (docs/design-notes.md). rows [lo, hi): the group's (global);
// row0: the CTA's first row.
template <Pairing P, Act A>
__device__ __forceinline__ void row_pair_epilogue(const Params& p, PairStorage& s, const float (&sum)[64], const Unit& u,
                                                  int t, int warp, int lane, int64_t row0, int64_t lo, int64_t hi) {
    using O = PairOutputs<P>;
    const int quad = lane % 4;
    const float alpha = p.alpha ? p.alpha[0] : 1.0f;
    const int64_t tile_col = u.d0 + kHalfN * t;  // the tile's first output column
    const bool gate_first = p.order == GateOrder::GateFirst, e4m3 = p.qp.out == DType::E4M3FN;
    const float ub = cuda::upper_bound(p);
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
            StageRing ring;
            for (int kb = 0; kb < k_blocks; ++kb) {
                wait_stage_empty(s.empty, ring);
                const int stage = ring.stage;
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
                ring.advance(kPairStages);
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
        StageRing ring;
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
            const int stage = ring.stage;
            const uint64_t desc_a = desc_a0 + stage * kStep, desc_b = desc_b0 + stage * kStep;
            wait_stage_full(full0, ring);
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
            release_stage(empty_at, ring, lane, kPairStages);  // this stage is read: both CTAs may load into it again
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

}  // namespace fq::gemm
