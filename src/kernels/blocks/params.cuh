// The row kernels' parameters: Params (OpConfig flattened to what the device reads, passed by value) and
// Shape, the compile-time part of a problem (activation, input type, how gate and up are stored).
#pragma once

#include <cstdint>

#include "../../common/moe.h"
#include "../../common/op_config.h"
#include "../../dispatch/registry.h"

namespace fq::cuda {

// How a thread finds its gate and up inputs.
enum class GateKind { None, TwoStreams /* split, block-interleaved */, Interleaved };

template <Act kAct, InType kIn, GateKind kGate>
struct Shape {
    static constexpr Act act = kAct;
    static constexpr InType in = kIn;
    static constexpr GateKind gate = kGate;
};

// OpConfig flattened to what the device reads; passed by value.
struct Params {
    const uint16_t* in;
    uint8_t* out;
    uint8_t* scales;
    int64_t rows, in_ld, out_ld;
    int cols;  // < 2^26: the launch grid bounds it (refuse_common)
    GateLayout gate;
    GateOrder order;
    int gate_block;
    Rounding rounding;
    SwigluParams swiglu;
    const float* row_prob;
    QuantParams quant;
    Scheme scheme;
    int group_shift;  // log2 of the group size (per-group)
    int lanes_per_group;
    int pair_shift;       // plain kernel: log2 of the lanes a group spans at 16 outputs a thread (G/16)
    ScaleGeometry sg;
    ScaleStrides ss;  // sg's byte offsets without a branch on the layout
    bool scale_offsets_fit_32;  // every byte offset within a row-scale block is below 2^32 (row_scale_offset)
    const float* static_scale;
    const float* scale_ub;
    unsigned* amax_bits;  // per-tensor dynamic: the amax word (the scale slot until finalized); NVFP4
                          // without a caller's global amax: the workspace word tensor_amax fills
    const float* global_amax;  // NVFP4: the caller's global amax (NULL: *amax_bits)
    int64_t scale_cols_padded;  // scale columns a row's padding runs to (packed: 4 per word)

    // MoE (docs/spec.md §5, docs/moe.md): which expert owns a row, read from the caller's device arrays and
    // clamped by the rules of src/common/moe.h. Without a MoE layout every row is expert 0's.
    MoeLayout moe;
    int experts;                  // 1 without a MoE layout
    int64_t expert_rows;          // MASKED: max_m
    const int32_t* moe_offsets;   // CONTIGUOUS: E + 1 row offsets
    const int32_t* moe_counts;    // MASKED: E counts; CONTIGUOUS: optional valid rows per slot
    int64_t scale_block_bytes;    // MASKED row scales: bytes between experts' blocks (0 otherwise)
    int64_t scale_blocks;         // row-scale blocks whose padding rows are zeroed (MASKED: E, else 1)
    int64_t rows_per_block;       // the general kernel's rows a block (1; launch_group_quant raises it for MoE)
    int64_t row_blocks;           // its blocks of rows: ceil(rows / rows_per_block); then the padding blocks

    // Columnwise output (src/kernels/columnwise.cuh): blocks of col_block rows down each column.
    uint8_t* col_out;
    uint8_t* col_scales;
    ScaleGeometry col_sg;         // one block: H x ceil(run / col_block) logical scales
    ScaleStrides col_ss;          // col_sg's byte offsets without a branch on the layout
    int col_block;
    bool col_transpose;
    bool rowwise;                 // the rowwise output is asked for (the columnwise kernel may write both)
};

}  // namespace fq::cuda
