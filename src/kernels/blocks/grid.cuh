// Where a block's tile lies and when it may start: the row kernels' block size and residency, the two
// launch orders of their grids, one wave of blocks, and programmatic dependent launch.
#pragma once

#include "../../common/kernel_shapes.h"
#include "params.cuh"

namespace fq::cuda {

// kThreads (the group_quant block) and kGroupMinBlocks (its residency): src/common/kernel_shapes.h.
// Column tiles of kThreads x 8 outputs (the general and decode kernels: a block's outputs of one row).
inline int64_t general_col_tiles(const Params& p) { return ceil_div(p.cols, int64_t(kThreads) * 8); }

// One wave of group-kernel blocks on the launch's device.
inline int64_t resident_blocks(const LaunchArgs& a) { return one_wave(a.sm_count); }

// Whether programmatic dependent launch pays for a general-kernel grid of `blocks`: it saves the launch gap where
// the grid is well below or above one wave, and costs where it fills half a wave to one (the next call's blocks
// take the free slots early; docs/design-notes.md).
inline bool pdl_pays(const LaunchArgs& a, int64_t blocks) {
    const int64_t wave = resident_blocks(a);
    return !(2 * blocks > wave && blocks <= wave);
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

// ---- Launch order ----------------------------------------------------------------------------------
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

}  // namespace fq::cuda
