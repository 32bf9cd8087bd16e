// The block shapes of the CUDA kernels that the dispatcher's conditions read: the kernels launch with these
// (src/kernels/), and src/dispatch/cuda_table.cpp decides with them which kernel runs a problem. Plain C++,
// compiled in every build, so that selection is testable without a GPU.
#pragma once

#include <cstdint>

#include "op_config.h"

namespace fq::cuda {

constexpr int kThreads = 128;  // group_quant block: 128 threads x 8 = 1024 outputs of one row

// At least 12 resident blocks (48 warps) per SM, i.e. at most 40 registers a thread.
constexpr int kGroupMinBlocks = 12;

// One wave of group-kernel blocks: kGroupMinBlocks resident on every SM.
inline int64_t one_wave(int sm_count) { return int64_t(sm_count) * kGroupMinBlocks; }

// The plain kernel's column tile: 16 outputs a thread (src/kernels/plain_quant.cuh).
constexpr int kPlainTile = kThreads * 16;

// The per-token kernel's block (src/kernels/token_quant.cuh): 256 threads where the rows fill the GPU, up to 1024
// where they are too few (~1024 threads an SM): a row's latency is then its number of steps.
constexpr int kTokenThreads = 256;
constexpr int kTokenMaxThreads = 1024;
inline int token_block_threads(int64_t rows, int sm_count) {
    const int64_t wanted = int64_t(sm_count) * 1024 / (rows > 1 ? rows : 1);
    return wanted > 512 ? kTokenMaxThreads : wanted > 256 ? 512 : kTokenThreads;
}

// The per-token cluster kernel (src/kernels/token_cluster.cuh): a row's column tiles of kThreads x 8 outputs
// dealt over a thread-block cluster of at most kTokenClusterMaxCtas CTAs of kThreads threads, each thread holding
// `chunks` of them (8 outputs each) in registers from the load to the store.
constexpr int kTokenClusterMaxCtas = 8;    // the portable cluster size
constexpr int kTokenClusterMaxChunks = 3;  // 24576 outputs a row at most
struct TokenClusterShape {
    int chunks, ctas;  // tiles a thread holds (0: the row does not fit a cluster) and CTAs a row
};
// The fewest tiles a thread that fit the row into one cluster (fewer tiles a thread: a shorter chain a thread).
inline TokenClusterShape token_cluster_shape(int64_t cols) {
    const int64_t tiles = ceil_div(cols, int64_t(kThreads) * 8);
    for (int k = 1; k <= kTokenClusterMaxChunks; ++k)
        if (ceil_div(tiles, int64_t(k)) <= kTokenClusterMaxCtas) return {k, int(ceil_div(tiles, int64_t(k)))};
    return {0, 0};
}

// The smallest scale buffer (bytes) the column-run form of the plain kernel runs faster on than the plain
// kernel itself (src/kernels/plain_quant.cuh, docs/design-notes.md).
constexpr int64_t kColumnRunMinBytes = int64_t(6) << 20;

// The columnwise kernel's tile (src/kernels/columnwise.cuh).
constexpr int kColTileRows = 128;  // a multiple of every columnwise block (16, 32, 128)
constexpr int kColTileCols = 128;  // 16 lanes x 8 outputs

// The rows of the 2-D layout whose columnwise blocks count from their first row, on the host (the launch
// grid: runs x tiles of kColTileRows rows): each MASKED expert's max_m rows, else all rows.
struct ColumnRuns {
    int64_t runs, rows;  // how many, rows each
    int64_t tiles_per_run() const { return ceil_div(rows, int64_t(kColTileRows)); }
};
inline ColumnRuns column_runs(const OpConfig& c) {
    return c.moe == MoeLayout::Masked ? ColumnRuns{c.num_experts, c.expert_rows} : ColumnRuns{1, c.rows};
}

}  // namespace fq::cuda
