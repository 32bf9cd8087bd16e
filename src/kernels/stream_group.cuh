// group_quant's tiles with their inputs streamed by the bulk-copy engine (sm_90): sm90.group.stream.
//
// The same tile as group_quant (one row x 1024 outputs, 8 a thread, activate8 + quantize_activated, so the
// same bytes), run by a persistent grid: block b walks tiles b, b + grid, b + 2 grid, ... (row-major over
// rows x column tiles, so the resident blocks sweep one band of rows), and one thread keeps the next
// kStreamStages tiles' inputs in flight in shared memory, one bulk copy per input span, completing on a
// barrier per stage. group_quant has each thread load its own 32 bytes and then compute: the bytes in
// flight per SM are bounded by the resident warps, and a warp has none in flight while it computes. Here
// they are bounded by the stages (up to 16 KB a block), whatever the threads are doing.
// Plain problems only (FP32 intermediates, no MoE layout, 16-byte aligned rows, gate split, interleaved or
// absent); the others run in group_quant.
#pragma once

#include <algorithm>

#include "bulk_copy.cuh"
#include "fused_quant.cuh"

namespace fq::cuda {

constexpr int kTileOutputs = kThreads * 8;      // outputs of a tile (one row x 1024 columns)
constexpr int kStreamSpan = kTileOutputs * 2;   // bytes of one input stream of a tile: 1024 16-bit inputs
constexpr int kStreamStages = 4;
constexpr int kStreamMinBlocks = 8;             // 64 registers: under a lower cap ptxas spills the loop state around the division slow paths

template <class S>
constexpr int stream_stage_bytes() { return S::gate == GateKind::None ? kStreamSpan : 2 * kStreamSpan; }

// Dynamic shared memory: the stage barriers (128 bytes reserved), then the stages.
template <class S>
constexpr size_t stream_smem_bytes() { return 128 + size_t(kStreamStages) * stream_stage_bytes<S>(); }

// Tile `tile` = (row m, column tile t) of a grid of col_tiles column tiles.
struct TileIndex {
    int64_t m;
    int j;  // its first output column
};

__device__ __forceinline__ TileIndex tile_index(int64_t tile, int64_t col_tiles) {
    const int64_t m = tile / col_tiles;
    return {m, int(tile - m * col_tiles) * kTileOutputs};
}

// Starts the copies of a tile's inputs into `stage`: not gated, its 1024 inputs; interleaved, 2048; split,
// the gate's span at 0 and the up's at kStreamSpan. The last column tile of a row may be shorter (widths
// are multiples of 8, so every span is a multiple of 16 bytes).
template <class S>
__device__ __forceinline__ void start_tile_copy(const Params& p, TileIndex t, uint8_t* stage, uint64_t* bar,
                                                uint64_t policy) {
    const int n = min(kTileOutputs, p.cols - t.j);
    const uint16_t* row = p.in + t.m * p.in_ld;
    if constexpr (S::gate == GateKind::None) {
        barrier_expect_bytes(bar, 2 * n);
        bulk_load(stage, row + t.j, 2 * n, bar, policy);
    } else if constexpr (S::gate == GateKind::Interleaved) {
        barrier_expect_bytes(bar, 4 * n);
        bulk_load(stage, row + 2 * t.j, 4 * n, bar, policy);
    } else {  // split halves (refuse_group_stream)
        const bool gate_first = p.order == GateOrder::GateFirst;
        barrier_expect_bytes(bar, 4 * n);
        bulk_load(stage, row + t.j + (gate_first ? 0 : p.cols), 2 * n, bar, policy);
        bulk_load(stage + kStreamSpan, row + t.j + (gate_first ? p.cols : 0), 2 * n, bar, policy);
    }
}

// This thread's inputs of a staged tile, as load_raw reads them from global memory.
template <class S>
__device__ __forceinline__ Raw8 staged_raw(const uint8_t* stage) {
    const int t = int(threadIdx.x);
    RawWords w{};
    if constexpr (S::gate == GateKind::None) {
        w.a = *reinterpret_cast<const uint4*>(stage + 16 * t);
    } else if constexpr (S::gate == GateKind::Interleaved) {
        w.a = *reinterpret_cast<const uint4*>(stage + 32 * t);
        w.b = *reinterpret_cast<const uint4*>(stage + 32 * t + 16);
    } else {
        w.a = *reinterpret_cast<const uint4*>(stage + 16 * t);
        w.b = *reinterpret_cast<const uint4*>(stage + kStreamSpan + 16 * t);
    }
    return raw8_of(w);
}

// `t` advanced by `step` tiles given as a TileIndex (row and column steps): no 64-bit division per tile.
__device__ __forceinline__ TileIndex advance(TileIndex t, TileIndex step, int row_span) {
    t.m += step.m;
    t.j += step.j;
    if (t.j >= row_span) t.j -= row_span, ++t.m;
    return t;
}

template <class S, bool kHwCvt, bool kMx>
__global__ void __launch_bounds__(kThreads, kStreamMinBlocks) group_quant_stream(const Params p) {
    extern __shared__ __align__(128) uint8_t smem[];
    uint64_t* full = reinterpret_cast<uint64_t*>(smem);
    uint8_t* stages = smem + 128;
    constexpr int kStage = stream_stage_bytes<S>();
    const int64_t col_tiles = (p.cols + kTileOutputs - 1) / kTileOutputs;
    const int row_span = int(col_tiles) * kTileOutputs;  // a row's tiles in output columns
    const bool producer = threadIdx.x == 0;
    if (producer) {
        for (int s = 0; s < kStreamStages; ++s) barrier_init(&full[s]);
        barrier_init_fence();
    }
    __syncthreads();
    wait_for_producer();  // before the first read of the input
    // Block b runs tiles b, b + grid, ...; `ahead` is the tile kStreamStages steps on, the producer's.
    const TileIndex step = tile_index(gridDim.x, col_tiles);
    TileIndex t = tile_index(blockIdx.x, col_tiles), ahead = t;
    if (producer)
        for (int s = 0; s < kStreamStages; ++s, ahead = advance(ahead, step, row_span))
            if (ahead.m < p.rows) start_tile_copy<S>(p, ahead, stages + s * kStage, &full[s], evict_first_policy());
    let_consumer_start();
    int s = 0;
    uint32_t phase = 0;
    for (; t.m < p.rows; t = advance(t, step, row_span)) {
        const int j0 = t.j + int(threadIdx.x) * 8;
        const bool col_ok = j0 < p.cols;
        barrier_wait(&full[s], phase);
        float y[8];
        if (col_ok) activate8<S, true>(p, staged_raw<S>(stages + s * kStage), t.m, y);
        __syncthreads();  // every thread has read stage s: refill it with the tile kStreamStages ahead
        if (producer) {
            if (ahead.m < p.rows) start_tile_copy<S>(p, ahead, stages + s * kStage, &full[s], evict_first_policy());
            ahead = advance(ahead, step, row_span);
        }
        quantize_activated<true, kHwCvt, kMx>(p, RowOwner{0, t.m, 0}, t.m, j0, col_ok ? 8 : 0, y, col_ok,
                                              tensor_scale_of(p, 0), upper_bound(p));
        if (++s == kStreamStages) s = 0, phase ^= 1u;
    }
    // The scale layouts' padding rows, slot by slot over the whole grid.
    const int64_t slots = padding_rows_total(p) * p.sg.cols;
    for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < slots; i += int64_t(gridDim.x) * kThreads)
        zero_scale_slot<kMx>(p, padding_row(p, i / p.sg.cols), i % p.sg.cols);
}

// Blocks of the persistent grid: as many as are resident at once, at most one per tile (at least one when
// only padding rows are to be written).
template <class S, bool kHwCvt, bool kMx>
fqStatus_t launch_group_stream(const LaunchArgs& a, const Params& p) {
    const auto kernel = group_quant_stream<S, kHwCvt, kMx>;
    constexpr size_t smem = stream_smem_bytes<S>();  // < 48 KB: no opt-in attribute needed
    static const int per_sm = [&] {
        int n = 0;
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kThreads, smem) == cudaSuccess && n > 0 ? n : 1;
    }();
    const int64_t tiles = p.rows * ceil_div(p.cols, int64_t(kTileOutputs));
    const int64_t resident = int64_t(std::max(a.sm_count, 1)) * per_sm;
    const int64_t blocks = std::min(resident, std::max<int64_t>(tiles, padding_rows_total(p) > 0 ? 1 : 0));
    return launch_smem(kernel, dim3(unsigned(blocks)), dim3(kThreads), smem, a, true, p);
}

template <Act kAct>
fqStatus_t run_group_stream_for(const LaunchArgs& a) {
    const OpConfig& c = a.cfg;
    const Params p = make_params(a);
    return with_shape<kAct>(c, [&](auto shape) -> fqStatus_t {
        using S = decltype(shape);
        FQ_TRY((run_tensor_amax<S, true, true>(a, p, true)));
        const auto launch_stream = is_microscaling(c.scheme) ? launch_group_stream<S, true, true> : launch_group_stream<S, true, false>;
        FQ_TRY(launch_stream(a, p));
        if (c.scheme == Scheme::PerTensorDynamic) FQ_TRY(finish_tensor_scale(a, true, p));
        return FQ_STATUS_SUCCESS;
    });
}

#define FQ_FOR_EACH_STREAM_LAUNCHER(X, ACT) X(template fqStatus_t run_group_stream_for<ACT>(const LaunchArgs&);)

}  // namespace fq::cuda
