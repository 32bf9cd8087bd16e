// The grouped GEMM's split K: the CTAs of a cluster each sum a slice of K of one unit; their fp32 partial sums
// meet in shared memory and each CTA reduces its share of the rows across the cluster (DSMEM).
#pragma once

#include "epilogue.cuh"

namespace fq::gemm {

#ifdef FQ_SM90A

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
// once); one item for more CTAs, where larger batches are slower (docs/design-notes.md). CTAs are
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
    // for the batch, whose addresses in registers make ptxas spill.
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

}  // namespace fq::gemm
