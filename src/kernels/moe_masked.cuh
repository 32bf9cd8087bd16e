// MASKED MoE rows on a persistent grid (docs/spec.md §5, docs/moe.md): expert e's valid rows are
// [e * max_m, e * max_m + counts[e]) of E x max_m slots, and a skewed batch leaves most slots empty. The
// general kernel launches a block per run of slots, so the empty ones still cost block launches; here a grid
// of at most one wave of blocks walks only the valid rows:
//   1. count   every block turns the counts into first valid row numbers (a block-wide scan into shared
//              memory): valid row v is expert e's row v - prefix[e], e the last expert with prefix[e] <= v;
//   2. walk    warp w of block b takes units b * 4 + w, + 4 x grid, ...: a unit is 512 outputs of one valid
//              row (16 a thread, the plain kernel's two chunks in one group), the next unit's loads issued
//              before the current one is quantized;
//   3. quantize each unit with the plain kernel's blocks (load_raw, activate8, quantize_activated), so the bytes are
//              the general kernel's and the host reference's.
// Blocks past the persistent ones write the scale layout's padding rows, as in the general kernel.
// FP32 intermediates and the 16-byte path only (refuse_masked); the rest take the general kernel.
#pragma once

#include <cub/block/block_scan.cuh>

#include "fused_quant.cuh"

namespace fq::cuda {

constexpr int kMaskedUnitOutputs = 512;           // a warp's outputs of one row: 32 lanes x 16
constexpr int kMaskedWarps = kThreads / 32;       // units a block runs at once
constexpr int kMaskedMaxExperts = 8192;           // prefix sums in dynamic shared memory: 32 KB
// Resident blocks an SM, and the grid: one wave of them. 4 (128 registers a thread: the current unit and the
// next one's loads, 64 bytes a lane each, without spilling; 16 warps x 4 KB in flight an SM).
constexpr int masked_min_blocks(bool) { return 4; }
constexpr int64_t kMaskedMaxUnits = INT32_MAX;    // the slots' units of 512 outputs: 32-bit unit numbers

// prefix[e] = the valid rows of experts before e (counts clamped to [0, max_m]); prefix[E] = all of them.
__device__ __forceinline__ void masked_row_prefix(const Params& p, int* prefix) {
    using Scan = cub::BlockScan<int, kThreads>;
    __shared__ typename Scan::TempStorage scan;
    int carry = 0;
    for (int base = 0; base < p.experts; base += kThreads) {
        const int e = base + int(threadIdx.x);
        const int n = e < p.experts ? int(masked_rows(p.moe_counts, e, p.expert_rows).count) : 0;
        int before, chunk;
        Scan(scan).ExclusiveSum(n, before, chunk);
        if (e < p.experts) prefix[e] = carry + before;
        carry += chunk;
        __syncthreads();  // the scan's storage is reused by the next chunk
    }
    if (threadIdx.x == 0) prefix[p.experts] = carry;
    __syncthreads();
}

// The expert owning valid row v: the last e with prefix[e] <= v (empty experts share their successor's
// prefix and are passed over).
__device__ __forceinline__ int masked_owner(const int* prefix, int experts, int v) {
    int lo = 0, hi = experts;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (prefix[mid] <= v) lo = mid;
        else hi = mid;
    }
    return lo;
}

// One unit of work: valid row v's unit t, i.e. slot row m of expert e, output columns j[0] and j[1] (the plain
// kernel's chunks A and B of this lane), and its inputs once loaded.
struct MaskedUnit {
    int e;
    int64_t m;
    int j[2], valid[2];
    Raw8 raw[2];
};

// Finds unit u's row and columns and issues its loads (they stay in flight until the unit is activated).
template <class S>
__device__ __forceinline__ void fetch_unit(const Params& p, const int* prefix, unsigned units_a_row, unsigned u,
                                           MaskedUnit& w) {
    const int v = int(u / units_a_row), t = int(u - unsigned(v) * units_a_row);
    w.e = masked_owner(prefix, p.experts, v);
    w.m = int64_t(w.e) * p.expert_rows + (v - prefix[w.e]);
    w.j[0] = plain_chunk_a(p, t * kMaskedUnitOutputs);
    w.j[1] = w.j[0] + (8 << p.pair_shift);
    const uint16_t* row = p.in + w.m * p.in_ld;
#pragma unroll
    for (int c = 0; c < 2; ++c) {
        w.valid[c] = w.j[c] < p.cols ? 8 : 0;
        if (w.valid[c] > 0) w.raw[c] = load_raw<S, true>(p, row, w.j[c]);
    }
}

template <class S, bool kHwCvt, bool kMx>
__global__ void __launch_bounds__(kThreads, masked_min_blocks(kHwCvt)) masked_quant(const Params p, int persistent_blocks,
                                                                                    int padding_tiles) {
    wait_for_producer();
    if (int(blockIdx.x) >= persistent_blocks) {  // padding rows: kPadRowsPerBlock rows x one 1024-output tile
        let_consumer_start();
        const int q = int(blockIdx.x) - persistent_blocks;
        zero_padding_rows<kMx>(p, p.rows + q / padding_tiles, (q % padding_tiles) * kThreads * 8, kThreads * 8);
        return;
    }
    extern __shared__ int prefix[];
    masked_row_prefix(p, prefix);
    // 32-bit unit numbers: refuse_masked keeps the slots' units below 2^31. Each warp walks its units with the
    // next one's loads in flight while it quantizes the current one (a warp has no other work to hide them).
    const unsigned units_a_row = unsigned(p.cols + kMaskedUnitOutputs - 1) / kMaskedUnitOutputs;
    const unsigned units = unsigned(prefix[p.experts]) * units_a_row, stride = gridDim.x * kMaskedWarps;
    unsigned u = blockIdx.x * kMaskedWarps + (threadIdx.x >> 5);
    MaskedUnit cur;
    if (u < units) fetch_unit<S>(p, prefix, units_a_row, u, cur);
    let_consumer_start();
    while (u < units) {
        MaskedUnit next{};
        if (u + stride < units) fetch_unit<S>(p, prefix, units_a_row, u + stride, next);
        float y[2][8];
#pragma unroll
        for (int c = 0; c < 2; ++c)
            if (cur.valid[c] > 0) activate8<S, true>(p, cur.raw[c], cur.m, y[c]);
        const RowScaleInputs<kMx> in(p, cur.e);
        quantize_activated<2, true, kHwCvt, kMx>(p, owned_by(p, cur.e, cur.m), cur.m, cur.j, cur.valid, y,
                                                 1 << p.pair_shift, in.tensor_scale, in.bound);
        u += stride;
        cur = next;
    }
}

template <class S, bool kHwCvt, bool kPdl, bool kMx>
fqStatus_t launch_masked_quant(const LaunchArgs& a, const Params& p) {
    // One wave of blocks at most (fewer where the slots hold fewer units), then the padding-row blocks.
    const int64_t slot_units = p.rows * ceil_div(int64_t(p.cols), int64_t(kMaskedUnitOutputs));
    const int64_t wave = int64_t(a.sm_count) * masked_min_blocks(kHwCvt);
    const int persistent = int(std::max<int64_t>(1, std::min(wave, ceil_div(slot_units, int64_t(kMaskedWarps)))));
    const int padding_tiles = int(ceil_div(int64_t(p.cols), int64_t(kThreads) * 8));
    const int64_t padding_blocks = ceil_div(padding_rows_total(p), kPadRowsPerBlock) * padding_tiles;
    const size_t smem = sizeof(int) * size_t(p.experts + 1);
    return launch_smem(masked_quant<S, kHwCvt, kMx>, dim3(unsigned(persistent + padding_blocks)), dim3(kThreads), smem, a,
                       kPdl, p, persistent, padding_tiles);
}

template <Act kAct, bool kHwCvt, bool kPdl>
fqStatus_t run_masked_for(const LaunchArgs& a) {
    const OpConfig& c = a.cfg;
    const Params p = make_params(a);
    return with_shape<kAct>(c, [&](auto shape) -> fqStatus_t {
        using S = decltype(shape);
        FQ_TRY((run_tensor_amax<S, true, kPdl>(a, p, true)));  // refuse_masked: FP32 intermediates
        FQ_TRY((is_microscaling(c.scheme) ? launch_masked_quant<S, kHwCvt, kPdl, true>(a, p)
                                          : launch_masked_quant<S, kHwCvt, kPdl, false>(a, p)));
        if (c.scheme == Scheme::PerTensorDynamic) FQ_TRY(finish_tensor_scale(a, kPdl, p));
        return FQ_STATUS_SUCCESS;
    });
}

// The configurations the variant table uses (16-byte IO only): sm90 hw cvt + PDL, sm89 hw cvt, sm80 software.
#define FQ_FOR_EACH_MASKED_LAUNCHER(X, ACT)                           \
    X(template fqStatus_t run_masked_for<ACT, true, true>(const LaunchArgs&);)  \
    X(template fqStatus_t run_masked_for<ACT, true, false>(const LaunchArgs&);) \
    X(template fqStatus_t run_masked_for<ACT, false, false>(const LaunchArgs&);)

}  // namespace fq::cuda
