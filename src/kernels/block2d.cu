// BLOCK_2D on CUDA (docs/spec.md §3.1, §3.2): one fp32 scale per 128x128 tile, for weights (DeepSeek-V3 FP8
// checkpoints, cuBLASLt BLK128x128_32F). One CTA per tile: each thread activates 8 rows x 8 columns into
// registers, the tile's amax is reduced with warp shuffles and one shared-memory step, then the same
// registers are quantized. Values come from the FQ_HD code the host reference calls (activate_column,
// group_scale, quantize_value: software RNE encoding), so the bytes equal the host's (docs/spec.md §0).
// Weight quantization runs once per checkpoint: this kernel favours being obviously right over speed.
#include <cuda_runtime.h>

#include "../common/status.h"
#include "../common/activate_column.h"
#include "../dispatch/registry.h"
#include "launch.cuh"

namespace fq::block2d {
namespace {

constexpr int kThreads = 256;
constexpr int kCols = 8;                          // consecutive columns per thread
constexpr int kThreadsPerRow = int(kBlock2D) / kCols;  // 16 threads span the tile's 128 columns
constexpr int kRowStep = kThreads / kThreadsPerRow;    // 16 rows per pass of the CTA
constexpr int kRows = int(kBlock2D) / kRowStep;        // 8 rows per thread

struct Params {
    const uint16_t* in;
    uint8_t* out;
    uint8_t* scales;
    int64_t rows, cols, in_ld, out_ld;
    ActivationParams act;
    const float* row_prob;
    const float* scale_ub;
    QuantParams quant;
    ScaleGeometry sg;
    int64_t tile_rows;  // ceil(rows / 128): tiles at or past it are COL_MAJOR_TMA padding
};

__global__ void __launch_bounds__(kThreads) block2d_quant(const Params p) {
    const int64_t mb = blockIdx.x, kb = blockIdx.y;
    if (mb >= p.tile_rows) {  // a padding row of the scale grid: zero, never left as it was
        if (threadIdx.x == 0) *reinterpret_cast<float*>(p.scales + scale_offset(p.sg, mb, kb)) = 0.0f;
        return;
    }
    const int64_t c0 = kb * kBlock2D + int64_t(threadIdx.x % kThreadsPerRow) * kCols;
    const int64_t r0 = mb * kBlock2D + int64_t(threadIdx.x / kThreadsPerRow);
    float y[kRows][kCols];
    float amax = 0.0f;  // docs/spec.md §3.2: fmaxf, NaN ignored; elements outside the matrix do not count
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        const int64_t r = r0 + int64_t(i) * kRowStep;
        const uint16_t* row = p.in + r * p.in_ld;
        const float prob = (p.row_prob && r < p.rows) ? p.row_prob[r] : 1.0f;
#pragma unroll
        for (int e = 0; e < kCols; ++e) {
            y[i][e] = 0.0f;
            if (r < p.rows && c0 + e < p.cols) {
                const float v = activate_column(p.act, row, c0 + e);
                y[i][e] = p.row_prob ? prob * v : v;
                amax = fmaxf(amax, fabsf(y[i][e]));
            }
        }
    }
    for (int d = 16; d > 0; d /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, d));
    __shared__ float warp_amax[kThreads / 32];
    if (threadIdx.x % 32 == 0) warp_amax[threadIdx.x / 32] = amax;
    __syncthreads();
    amax = 0.0f;
#pragma unroll
    for (int w = 0; w < kThreads / 32; ++w) amax = fmaxf(amax, warp_amax[w]);

    const float ub = p.scale_ub ? *p.scale_ub : __int_as_float(0x7FC00000);  // NaN: no bound (fminf ignores it)
    const float s = group_scale(amax, ub, p.quant), inv_s = 1.0f / s;
    if (threadIdx.x == 0) *reinterpret_cast<float*>(p.scales + scale_offset(p.sg, mb, kb)) = s;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        const int64_t r = r0 + int64_t(i) * kRowStep;
        if (r >= p.rows) continue;
        uint8_t* dst = p.out + r * p.out_ld + c0;
        uint8_t code[kCols];
#pragma unroll
        for (int e = 0; e < kCols; ++e) code[e] = quantize_value(y[i][e], s, inv_s, p.quant);
        if (c0 + kCols <= p.cols && reinterpret_cast<uintptr_t>(dst) % 8 == 0) {
            uint2 w;
            memcpy(&w, code, 8);
            *reinterpret_cast<uint2*>(dst) = w;
        } else {
            for (int e = 0; e < kCols && c0 + e < p.cols; ++e) dst[e] = code[e];
        }
    }
}

std::string refuse(const OpConfig& c) {
    if (c.scheme != Scheme::Block2D) return "runs the BLOCK_2D scheme only";
    if (c.moe != MoeLayout::None) return "MoE layouts have no BLOCK_2D kernel in this version";
    if (c.outputs != kOutputRowwise) return "columnwise outputs have no BLOCK_2D kernel in this version";
    if (c.scales.padded_rows > int64_t(INT32_MAX) || c.scales.cols > 65535)
        return fmt::format("{} x {} tiles exceed the launch grid (at most 65535 tile columns)", c.scales.padded_rows,
                           c.scales.cols);
    return {};
}

fqStatus_t run(const LaunchArgs& a) {
    const OpConfig& c = a.cfg;
    Params p{};
    p.in = static_cast<const uint16_t*>(a.input);
    p.out = static_cast<uint8_t*>(a.output);
    p.scales = static_cast<uint8_t*>(a.scales);
    p.rows = c.rows;
    p.cols = c.cols;
    p.in_ld = c.in_ld;
    p.out_ld = c.out_ld;
    p.act = activation_params(c);
    p.row_prob = c.row_prob;
    p.scale_ub = c.scale_ub;
    p.quant = c.quant;
    p.sg = c.scales;
    p.tile_rows = c.scales.rows;
    const dim3 grid(unsigned(c.scales.padded_rows), unsigned(c.scales.cols));
    if (grid.x == 0 || grid.y == 0) return FQ_STATUS_SUCCESS;
    return fq::cuda::cuda_status(fq::cuda::launch_kernel(block2d_quant, grid, dim3(kThreads), 0,
                                                         static_cast<cudaStream_t>(a.stream), false, p),
                                 "BLOCK_2D kernel launch");
}

}  // namespace
}  // namespace fq::block2d

namespace fq {

void register_cuda_block2d_variants(std::vector<Variant>& t) {
    constexpr int kAny = 1000;
    t.push_back({"sm80.block2d", "BLOCK_2D 128x128 fp32 scales (weights), any activation, software fp8/int8 encoding",
                 Backend::Cuda, 80, kAny, block2d::refuse, block2d::run});
}

}  // namespace fq
