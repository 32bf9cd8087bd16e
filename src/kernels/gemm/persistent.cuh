// The grouped GEMM's persistent kernel, in its three forms (GemmKernel Persistent, Segments, SplitK): a producer
// warp feeding a TMA pipeline, two consumer warpgroups of wgmma, the epilogue warps one unit behind.
#pragma once

#include "epilogue_rows.cuh"
#include "pipeline.cuh"
#include "split_k.cuh"

namespace fq::gemm {

// The kernel's forms, each compiled on its own so that none carries another's code (docs/design-notes.md):
//  - Tiles: clusters of p.cluster CTAs walk (tile, column pair) units, every group owning rows of a tile in turn;
//  - Segments: the same over MoE segments (one group's rows of a tile, one pass over K each: scheduler.cuh);
//  - SplitK, for GEMMs with fewer units than half the SMs (one group): a cluster of p.split CTAs takes one unit,
//    CTA r the r-th slice of K; each C tile's fp32 partial sums meet in shared memory, and CTA r sums rows
//    [128 r / split, 128 (r + 1) / split) of them across the cluster (DSMEM) and runs the epilogue's rows on
//    those; columnwise blocks read each row's y from the CTA that holds it.
struct TilesForm {
    static constexpr bool split_k = false, segments = false;
};
struct SegmentsForm {
    static constexpr bool split_k = false, segments = true;
};
struct SplitKForm {
    static constexpr bool split_k = true, segments = false;
};

template <Pairing P, class Form>
__global__ void __launch_bounds__(kThreads, 1)
    grouped_gemm_sm90(const __grid_constant__ Params p, const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b) {
#ifdef FQ_SM90A
    constexpr bool kSplitK = Form::split_k, kSegments = Form::segments;
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
            StageRing ring;
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
                    // two adds: the producer's time per block adds to every stage's refill (docs/design-notes.md).
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
                        wait_stage_empty(s.empty, ring);
                        const int stage = ring.stage;
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
                        ring.advance(stages);
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
        StageRing ring;
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
                        wait_stage_full(full0, ring);
                        release_stage(empty_at, ring, lane, stages);
                    }
                    return;
                }
                // ---- main loop: both C tiles [128 x 128] over K, promoted every 128 of K -----------------------
                float total[2][64], acc[64];
#pragma unroll
                for (int i = 0; i < 64; ++i) total[0][i] = total[1][i] = 0.0f;
                for (int kb = 0; kb < k_blocks; ++kb) {
                    const int stage = ring.stage;
                    const uint64_t desc_a = desc_a0 + stage * kStep, desc_b = desc_b0 + stage * kStep;
                    wait_stage_full(full0, ring);
                    // The stage's scales (copied in by the producer warp; shared memory, so the MMAs need not wait
                    // for a global load: wgmma's fence waits for a thread's loads in flight). Rows nobody owns
                    // were not copied: their scale is 0.
                    const float a0 = valid0 ? s.a_scale[stage][row_local] : 0.0f;
                    const float a1 = valid1 ? s.a_scale[stage][row_local + 8] : 0.0f;
#pragma unroll
                    for (int t = 0; t < 2; ++t) {
                        if (t == tiles) break;
                        // The two warpgroups issue independently: with two tiles a block, a barrier ordering their
                        // MMAs costs more than it gains (docs/design-notes.md).
                        wgmma_fence();
                        fence_operands(acc);
#pragma unroll
                        for (int kk = 0; kk < kTileK / 32; ++kk)  // +32 bytes of K = +2 in the descriptor's address
                            wgmma_m64n128k32_e4m3(acc, desc_a + 2 * kk, desc_b + t * kStepTileB + 2 * kk, kk > 0);
                        wgmma_commit();
                        const float b_first = s.b_scale[stage][t][0], b_second = s.b_scale[stage][t][1];
                        wgmma_wait<0>();
                        fence_operands(acc);
                        if (t == tiles - 1) release_stage(empty_at, ring, lane, stages);  // every MMA reading it is done
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
    // the last unit slows every unit and makes the split-K kernel spill (docs/design-notes.md).
    if (p.stash && warp_id > 0) {
        using namespace sm90;
        const bool epilogue_warp = warp_id < 4;
        const int etid = threadIdx.x - 32, lane = threadIdx.x % 32, finisher = warp_id - 1;
        const float ub = cuda::upper_bound(p);
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

}  // namespace fq::gemm
