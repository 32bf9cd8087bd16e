// The grouped GEMM's forms on sm_90a and the choice among them: which kernel runs a problem, how its grid is
// cut (split K, clusters sharing A) and what the epilogue may assume. Plain C++, compiled in every build, so the
// choice is tested on the host (tests/test_gemm_forms.cpp); src/kernels/gemm/ launches the form it is given.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "../common/grouped_gemm.h"

namespace fq {

// The unit of work: 128 rows of A (a tile anchored at a multiple of 128) x 128 output columns (one 1x128
// quantization group: two 128-column C tiles of gate/up pairs). The kernels' tiles are built on these.
constexpr int kGemmTileRows = 128;
constexpr int kGemmUnitCols = 128;
// Split K: at most this many CTAs split K of one unit (a portable cluster size), each taking at least
// kGemmMinSplitBlocks K blocks; the row-pair kernel replaces a split of at most kGemmRowPairMaxSplit.
constexpr int kGemmMaxSplit = 8;
constexpr int kGemmMinSplitBlocks = 2;
constexpr int kGemmRowPairMaxSplit = 2;
// Pipeline stages: the persistent kernels' three; split K takes a fourth where a CTA's slice of K turns the ring
// at least kGemmFourStageTurns times (shorter slices run faster with three: docs/design-notes.md).
constexpr int kGemmStages = 3;
constexpr int kGemmSplitStages = 4;
constexpr int kGemmFourStageTurns = 4;

// The kernels (src/kernels/gemm/):
enum class GemmKernel {
    Persistent,  // persistent clusters walk (tile, column pair) units, every group owning rows of a tile in turn
    Segments,    // the same over MoE segments (one group's rows of a tile): one pass over K a unit
    SplitK,      // one unit a cluster, K split over its CTAs, partial sums reduced across it (DSMEM)
    RowPair      // one unit a CTA pair, 64 rows each over all of K, the lean epilogue in registers
};
// Where the gate and up columns of an output column sit in a C tile, by the gate layout (docs/spec.md §2).
enum class GemmPairing {
    Halves,    // SPLIT, BLOCK_INTERLEAVED with blocks of 64k: output i <- tile columns i and 64 + i
    Adjacent,  // INTERLEAVED: output i <- tile columns 2i and 2i + 1
    Blocks32   // BLOCK_INTERLEAVED 32: output 32b + r <- tile columns 64b + r and 64b + 32 + r
};

// Why the CUDA grouped GEMM cannot run `c` on a device of compute capability `arch` (x10), naming the
// argument or attribute; "" when it can. The status of a refusal is NOT_SUPPORTED.
std::string grouped_gemm_cuda_refusal(const GroupedGemmConfig& c, int arch);

const char* name(GemmKernel k);
const char* name(GemmPairing p);

// The facts of a validated problem (grouped_gemm_cuda_refusal passed) that the choice reads.
struct GemmProblem {
    int64_t m_tiles = 0, unit_cols_tiles = 0, k_blocks = 0;  // units: m_tiles x unit_cols_tiles
    int64_t h = 0;                                           // output columns
    int32_t groups = 1;
    int32_t group = 0;        // rowwise quantization group
    int64_t out_ld = 0;       // row stride of the quantized output
    bool out_aligned16 = false;  // the quantized output's pointer is 16-byte aligned
    bool stash = false;       // some output is written (C, D or quantized): the epilogue runs
    bool rowwise = false, columnwise = false;
    // The epilogue's common case: rowwise e4m3 / e5m2 codes alone, by division (no qmax override, no
    // MULTIPLY_RECIPROCAL), fp32 rounding, SiLU or SwiGLU-OAI, neither C nor D asked for.
    bool lean = false;
    // MoE units as segments: offsets with several groups and no columnwise block spanning groups of a tile.
    bool segments = false;
    GemmPairing pairing = GemmPairing::Halves;
};
GemmProblem gemm_problem(const GroupedGemmConfig& c);

// How many clusters of `size` CTAs of `kernel` the device holds at once (cudaOccupancyMaxActiveClusters; negative
// when the kernel cannot be given its shared memory). Asked only as the choice needs it, in the order below.
using GemmOccupancy = std::function<int(GemmKernel kernel, int size)>;

// The form that runs: the kernel and its launch.
struct GemmForm {
    GemmKernel kernel = GemmKernel::Persistent;
    GemmPairing pairing = GemmPairing::Halves;
    int32_t split = 1;         // CTAs splitting K of one unit (SplitK: 2 .. kGemmMaxSplit; RowPair: split K's slices)
    int32_t stages = kGemmStages;  // SplitK's pipeline stages (the other kernels' are fixed)
    int32_t cluster = 1;       // Persistent / Segments: CTAs sharing A (1 or 2)
    int64_t pair_cols = 0;     // column items a tile: ceil(unit_cols_tiles / cluster)
    int64_t clusters = 0;      // clusters launched ...
    int32_t cluster_size = 1;  // ... of this many CTAs, one an SM
};

// The choice, on a device of `sm_count` SMs:
//  1. one group whose units number at most half the SMs: split K, the largest split (kGemmMaxSplit down to 2)
//     giving every CTA kGemmMinSplitBlocks K blocks or more and fitting every unit's cluster at once;
//  2. such a split goes to the row-pair kernel where the epilogue is lean, its groups 32 to 128 wide, its code
//     rows 16-byte aligned, the split at most kGemmRowPairMaxSplit and every unit's pair fits at once;
//  3. otherwise persistent clusters of two sharing A where a tile has two column items and pairs fit, else one,
//     over segments (MoE, rowwise only) or tiles, no more clusters than fit at once.
GemmForm choose_gemm_form(const GemmProblem& p, int sm_count, const GemmOccupancy& occupancy);

}  // namespace fq
