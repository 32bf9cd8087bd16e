// BLOCK_2D on CUDA (docs/spec.md §3.1, §3.2): one fp32 scale per 128x128 tile, for weights (DeepSeek-V3 FP8
// checkpoints, cuBLASLt BLK128x128_32F; training engines quantize every weight this way every step). One CTA
// per tile, in two forms that share one shape: each of 256 threads holds 8 rows x 8 columns of the tile in
// registers, the tile's amax is reduced with warp shuffles and one shared-memory step, then the values are
// quantized from those registers.
//   block2d_vec      weights (no activation, not gated) with 16-byte rows: the load / quantize / store blocks
//                    of the row kernels (kernels/blocks/), hardware fp8 conversion on sm_89+; all of a thread's
//                    loads are in flight before the first is used, and the raw inputs stay in registers (the
//                    amax pass and the quantize pass each activate them).
//   block2d_generic  any activation and gate layout, element IO: the FQ_HD code the host reference calls
//                    (activate_column, group_scale, quantize_value: software RNE encoding).
// Both write the host reference's bytes (docs/spec.md §0).
#include <cuda_runtime.h>

#include "../common/status.h"
#include "../common/activate_column.h"
#include "../dispatch/registry.h"
#include "block2d.h"
#include "fused_quant.cuh"
#include "launch.cuh"

namespace fq::block2d {
namespace {

constexpr int kThreads = 256;
constexpr int kCols = 8;                               // consecutive columns per thread
constexpr int kThreadsPerRow = int(kBlock2D) / kCols;  // 16 threads span the tile's 128 columns
constexpr int kRowStep = kThreads / kThreadsPerRow;    // 16 rows per pass of the CTA
constexpr int kRows = int(kBlock2D) / kRowStep;        // 8 rows per thread
constexpr int kVecMinBlocks = 4;                       // block2d_vec: 4 tiles an SM (64 registers a thread)

// ---- Blocks both forms share -----------------------------------------------------------------------------
// Where thread t's 8 x 8 values sit in tile (mb, kb): columns c0 .. c0 + 7 of rows r0 + 16 i.
struct TileSpot {
    int64_t r0, c0;
};
__device__ __forceinline__ TileSpot tile_spot(int64_t mb, int64_t kb) {
    return {mb * kBlock2D + int64_t(threadIdx.x / kThreadsPerRow), kb * kBlock2D + int64_t(threadIdx.x % kThreadsPerRow) * kCols};
}

// The tile's amax from every thread's own (docs/spec.md §3.2: fmaxf, NaN ignored): warp shuffles, then one
// shared-memory step; every thread gets it.
__device__ __forceinline__ float tile_amax(float a) {
    for (int d = 16; d > 0; d /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    __shared__ float warp_amax[kThreads / 32];
    if (threadIdx.x % 32 == 0) warp_amax[threadIdx.x / 32] = a;
    __syncthreads();
    a = 0.0f;
#pragma unroll
    for (int w = 0; w < kThreads / 32; ++w) a = fmaxf(a, warp_amax[w]);
    return a;
}

// Tiles at or past the matrix's tile rows are padding of the scale grid (COL_MAJOR_TMA): zero, never left as
// they were. True when (mb, kb) is one (thread 0 wrote its zero).
__device__ __forceinline__ bool padding_tile(uint8_t* scales, const ScaleGeometry& sg, int64_t mb,
                                             int64_t kb) {
    if (mb < sg.rows) return false;  // sg.rows = ceil(rows / 128) tile rows
    if (threadIdx.x == 0) *reinterpret_cast<float*>(scales + scale_offset(sg, mb, kb)) = 0.0f;
    return true;
}

// ---- block2d_vec: weights with 16-byte rows ----------------------------------------------------------------
// S is Shape<Identity, in, None>; p.cols is a multiple of 8 and every row 16-byte aligned (refuse_vec), so a
// thread's 8 columns are all inside the matrix or all outside it. Io: a 16-byte IO policy's Device.
template <class S, class Io>
__global__ void __launch_bounds__(kThreads, kVecMinBlocks) block2d_vec(const cuda::Params p) {
    using namespace cuda;
    constexpr bool kHwCvt = Io::hardware_fp8;
    wait_for_producer();
    const int64_t mb = blockIdx.y, kb = blockIdx.x;
    if (padding_tile(p.scales, p.sg, mb, kb)) return;
    const TileSpot at = tile_spot(mb, kb);
    const int j0 = int(at.c0);
    const bool col_ok = j0 < p.cols;
    auto row_ok = [&](int i) { return col_ok && at.r0 + int64_t(i) * kRowStep < p.rows; };

    Raw8 raw[kRows];  // load: every row's 16 bytes in flight before the first is used
#pragma unroll
    for (int i = 0; i < kRows; ++i)
        if (row_ok(i)) raw[i] = load_raw<S, true>(p, at.r0 + int64_t(i) * kRowStep, j0);
    // The tile's amax, then the codes, each activating the raw inputs again: the inputs take half the registers
    // of their activated values, which leaves room for more tiles an SM to keep the loads coming.
    float a = 0.0f;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        if (row_ok(i)) {
            float y[8];
            activate8<S>(p, raw[i], at.r0 + int64_t(i) * kRowStep, y);
            a = fmaxf(a, amax8(y, 8));
        }
    }
    a = tile_amax(a);
    const float s = group_scale(a, upper_bound(p), p.quant);
    if (threadIdx.x == 0) *reinterpret_cast<float*>(p.scales + scale_offset(p.sg, mb, kb)) = s;
    const Divisor d = divisor_of(s, p.quant);
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        const int64_t m = at.r0 + int64_t(i) * kRowStep;
        if (row_ok(i)) {
            float y[8];
            activate8<S>(p, raw[i], m, y);
            store8<true>(p.out + m * p.out_ld + j0, quantize8<kHwCvt>(y, a, d, p.quant), 8);
        }
    }
}

// ---- block2d_generic: any activation, element IO ------------------------------------------------------------
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
};

__global__ void __launch_bounds__(kThreads) block2d_generic(const Params p) {
    const int64_t mb = blockIdx.y, kb = blockIdx.x;
    if (padding_tile(p.scales, p.sg, mb, kb)) return;
    const TileSpot at = tile_spot(mb, kb);
    float y[kRows][kCols];
    float amax = 0.0f;  // elements outside the matrix do not count
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        const int64_t r = at.r0 + int64_t(i) * kRowStep;
        const uint16_t* row = p.in + r * p.in_ld;
        const float prob = (p.row_prob && r < p.rows) ? p.row_prob[r] : 1.0f;
#pragma unroll
        for (int e = 0; e < kCols; ++e) {
            y[i][e] = 0.0f;
            if (r < p.rows && at.c0 + e < p.cols) {
                const float v = activate_column(p.act, row, at.c0 + e);
                y[i][e] = p.row_prob ? prob * v : v;
                amax = fmaxf(amax, fabsf(y[i][e]));
            }
        }
    }
    amax = tile_amax(amax);
    const float ub = p.scale_ub ? *p.scale_ub : __int_as_float(0x7FC00000);  // NaN: no bound (fminf ignores it)
    const float s = group_scale(amax, ub, p.quant), inv_s = 1.0f / s;
    if (threadIdx.x == 0) *reinterpret_cast<float*>(p.scales + scale_offset(p.sg, mb, kb)) = s;
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
        const int64_t r = at.r0 + int64_t(i) * kRowStep;
        if (r >= p.rows) continue;
        uint8_t* dst = p.out + r * p.out_ld + at.c0;
        uint8_t code[kCols];
#pragma unroll
        for (int e = 0; e < kCols; ++e) code[e] = quantize_value(y[i][e], s, inv_s, p.quant);
        if (at.c0 + kCols <= p.cols && reinterpret_cast<uintptr_t>(dst) % 8 == 0) {
            uint2 w;
            memcpy(&w, code, 8);
            *reinterpret_cast<uint2*>(dst) = w;
        } else {
            for (int e = 0; e < kCols && at.c0 + e < p.cols; ++e) dst[e] = code[e];
        }
    }
}

// ---- The launches (the dispatcher chose the form: src/dispatch/cuda_table.cpp) -------------------------
// Tile columns fastest: the tiles in flight at once are neighbours along the rows, so together they read long
// runs of each row rather than 256 bytes of many rows.
dim3 tile_grid(const OpConfig& c) { return dim3(unsigned(c.scales.cols), unsigned(c.scales.padded_rows)); }

template <class Arch>
fqStatus_t run_vec(const LaunchArgs& a) {
    using Io = typename Arch::Device;
    const OpConfig& c = a.cfg;
    const cuda::Params p = cuda::make_params(a);
    const dim3 grid = tile_grid(c);
    if (grid.x == 0 || grid.y == 0) return FQ_STATUS_SUCCESS;
    const auto kernel = c.in_type == InType::Bf16 ? block2d_vec<cuda::Shape<Act::Identity, InType::Bf16, cuda::GateKind::None>, Io>
                                                  : block2d_vec<cuda::Shape<Act::Identity, InType::Fp16, cuda::GateKind::None>, Io>;
    return cuda::cuda_status(cuda::launch_kernel(kernel, grid, dim3(kThreads), 0, static_cast<cudaStream_t>(a.stream),
                                                 Arch::pdl && a.allow_pdl, p),
                             "BLOCK_2D kernel launch");
}

fqStatus_t run_generic(const LaunchArgs& a) {
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
    const dim3 grid = tile_grid(c);
    if (grid.x == 0 || grid.y == 0) return FQ_STATUS_SUCCESS;
    return cuda::cuda_status(cuda::launch_kernel(block2d_generic, grid, dim3(kThreads), 0,
                                                 static_cast<cudaStream_t>(a.stream), false, p),
                             "BLOCK_2D kernel launch");
}

}  // namespace

template <class Arch>
fqStatus_t launch_vec(const LaunchArgs& a) {
    return run_vec<Arch>(a);
}
template fqStatus_t launch_vec<cuda::Sm90Vec>(const LaunchArgs&);
template fqStatus_t launch_vec<cuda::Sm89Vec>(const LaunchArgs&);
template fqStatus_t launch_vec<cuda::Sm80Vec>(const LaunchArgs&);

fqStatus_t launch_generic(const LaunchArgs& a) { return run_generic(a); }

}  // namespace fq::block2d
