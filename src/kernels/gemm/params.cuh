// The grouped GEMM's kernels, shared shapes: the unit and its tiles, the pipeline's shared memory, the C-tile
// slots between the consumers and the epilogue, the warp roles' sizes, and Params (what the device reads).
#pragma once

#include <cuda.h>
#include <cstddef>
#include <cstdint>

#include "../../common/activation.h"
#include "../../common/quantize.h"
#include "../../common/scale_layout.h"
#include "../../dispatch/gemm_forms.h"
#include "sm90.cuh"

namespace fq::gemm {

constexpr int kTileM = kGemmTileRows;  // rows of a unit (two consumer warpgroups of 64)
constexpr int kTileN = 128;       // C columns of one tile: 64 gate/up pairs
constexpr int kTileK = 128;       // K per pipeline stage = the scale block of A and B
constexpr int kHalfN = 64;        // output columns of one C tile; rows of one B box and of one A multicast box
constexpr int kUnitCols = kGemmUnitCols;  // output columns of a unit (two C tiles)
constexpr int kStages = kGemmStages;  // pipeline stages of the persistent kernel
constexpr int kSplitStages = kGemmSplitStages;  // ... of the split-K kernel, at most: its fourth in the C-tile slots (SharedStorage)
constexpr int kSlots = 2;  // C-tile slots: a unit's two tiles, drained by the epilogue during the next unit's main loop
constexpr int kSlotWords = kTileN / 2;  // a slot row: 128 bf16 of C, later the 64 fp32 y of the tile
constexpr int kMaxSplit = kGemmMaxSplit;  // CTAs splitting K of one unit (a portable cluster size)
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
using Pairing = GemmPairing;

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
    bool lean;  // the epilogue may take lean_rows (GemmProblem::lean)
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

}  // namespace fq::gemm
