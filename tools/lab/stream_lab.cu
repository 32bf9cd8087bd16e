// Lab: which kernel *shape* lets a streaming quantizer reach the device-to-device copy rate on this GPU?
// Not the library's numerics (fast exp, reciprocal scales): the same loads, stores, shuffles and about the
// same instruction mix as the library's plain MXFP8 and silu + fp8 g128 kernels, in several shapes:
//   2d      the library's shape: one block = one row x TPB*EPT outputs, grid (rows, column tiles)
//   flat    one block = TPB*EPT consecutive outputs of the flattened [M, K] (row = e / K by a constant)
//   persist grid = resident blocks, each looping over tiles with U tiles' loads issued first
// x load hints (ld / ld.cs / ld.L2::256B) and 8- or 16-byte stores, beside cudaMemcpyAsync and copy kernels.
// Build and run on the device:
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a tools/lab/stream_lab.cu -o /tmp/stream_lab && /tmp/stream_lab
// and `ncu ... /tmp/stream_lab once` (each kernel launched once).
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lab_timing.h"

constexpr int M = 16384, K = 7168;  // outputs [M, K]; gated input [M, 2K] (split halves), plain [M, K]

// ---- loads and stores -----------------------------------------------------------------------------
template <int LD>
__device__ __forceinline__ uint4 ld16(const void* p) {
    uint4 v;
    if constexpr (LD == 0)
        asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    else if constexpr (LD == 1)
        asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    else if constexpr (LD == 2)
        asm volatile("ld.global.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    else
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
template <int ST>
__device__ __forceinline__ void st8(void* p, uint2 v) {
    if constexpr (ST == 0) asm volatile("st.global.v2.u32 [%0], {%1,%2};" ::"l"(p), "r"(v.x), "r"(v.y) : "memory");
    else asm volatile("st.global.cs.v2.u32 [%0], {%1,%2};" ::"l"(p), "r"(v.x), "r"(v.y) : "memory");
}
template <int ST>
__device__ __forceinline__ void st16(void* p, uint4 v) {
    if constexpr (ST == 0) asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
    else asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); }

template <int N>
__device__ __forceinline__ void unpack(const uint4 (&raw)[N / 8], float (&x)[N]) {
#pragma unroll
    for (int i = 0; i < N / 8; ++i) {
        const uint32_t w[4] = {raw[i].x, raw[i].y, raw[i].z, raw[i].w};
#pragma unroll
        for (int k = 0; k < 4; ++k) x[8 * i + 2 * k] = bf16_lo(w[k]), x[8 * i + 2 * k + 1] = bf16_hi(w[k]);
    }
}

template <int N>
__device__ __forceinline__ void encode(const float (&v)[N], uint32_t (&w)[N / 4]) {
#pragma unroll
    for (int i = 0; i < N / 4; ++i) {
        const uint32_t lo = __nv_cvt_float2_to_fp8x2(make_float2(v[4 * i], v[4 * i + 1]), __NV_SATFINITE, __NV_E4M3);
        const uint32_t hi = __nv_cvt_float2_to_fp8x2(make_float2(v[4 * i + 2], v[4 * i + 3]), __NV_SATFINITE, __NV_E4M3);
        w[i] = lo | (hi << 16);
    }
}

template <int ST, int N>
__device__ __forceinline__ void store_codes(uint8_t* dst, const uint32_t (&w)[N / 4]) {
    if constexpr (N == 8) st8<ST>(dst, make_uint2(w[0], w[1]));
    else {
#pragma unroll
        for (int i = 0; i < N / 16; ++i) st16<ST>(dst + 16 * i, make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]));
    }
}

// ---- plain MXFP8 of EPT elements starting at flat element e0 (groups of 32 never cross rows: K % 32 == 0)
template <int EPT, int ST>
__device__ __forceinline__ void mx_tile(const uint4 (&raw)[EPT / 8], int64_t e0, uint8_t* out, uint8_t* sc) {
    float x[EPT];
    unpack<EPT>(raw, x);
    float a = 0.0f;
#pragma unroll
    for (int i = 0; i < EPT; ++i) a = fmaxf(a, fabsf(x[i]));
    constexpr int kLanes = 32 / EPT;  // lanes per group of 32
#pragma unroll
    for (int d = 1; d < kLanes; d *= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    const int e = min(max(int((__float_as_uint(a) >> 23) & 0xFF) - 8, 1), 254);  // E8M0 (floor rule, e4m3)
    const float mul = __uint_as_float(uint32_t(254 - e) << 23);
#pragma unroll
    for (int i = 0; i < EPT; ++i) x[i] *= mul;
    uint32_t w[EPT / 4];
    encode<EPT>(x, w);
    store_codes<ST, EPT>(out + e0, w);
    if ((threadIdx.x & (kLanes - 1)) == 0) sc[e0 / 32] = uint8_t(e);
}

// ---- silu(gate) * up + fp8 g128 (fp32 scale) of EPT outputs at (row, col) ----------------------------
template <int EPT, int ST>
__device__ __forceinline__ void silu_tile(const uint4 (&g)[EPT / 8], const uint4 (&u)[EPT / 8], int64_t row, int col,
                                          uint8_t* out, float* sc) {
    float x[EPT], y[EPT];
    unpack<EPT>(g, x);
    unpack<EPT>(u, y);
    float a = 0.0f;
#pragma unroll
    for (int i = 0; i < EPT; ++i) {
        y[i] = __fdividef(x[i], 1.0f + __expf(-x[i])) * y[i];
        a = fmaxf(a, fabsf(y[i]));
    }
    constexpr int kLanes = 128 / EPT;
#pragma unroll
    for (int d = 1; d < kLanes; d *= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    const float s = fmaxf(a / 448.0f, 1e-10f), r = 1.0f / s;
#pragma unroll
    for (int i = 0; i < EPT; ++i) y[i] *= r;
    uint32_t w[EPT / 4];
    encode<EPT>(y, w);
    store_codes<ST, EPT>(out + row * K + col, w);
    if ((threadIdx.x & (kLanes - 1)) == 0) sc[row * (K / 128) + col / 128] = s;
}

// ---- kernel shapes ---------------------------------------------------------------------------------
// One signature for all (QuantKernel): sc holds fp32 scales for the silu kernels; only the persistent
// kernels read `tiles`.
// flat: one block = TPB * EPT consecutive outputs.
template <int TPB, int EPT, int LD, int ST>
__global__ void __launch_bounds__(TPB) mx_flat(const uint16_t* in, uint8_t* out, uint8_t* sc, int64_t) {
    const int64_t e0 = (int64_t(blockIdx.x) * TPB + threadIdx.x) * EPT;
    uint4 raw[EPT / 8];
#pragma unroll
    for (int i = 0; i < EPT / 8; ++i) raw[i] = ld16<LD>(in + e0 + 8 * i);
    mx_tile<EPT, ST>(raw, e0, out, sc);
}
// 2d: the library's shape (x = row, y = column tile of TPB * EPT outputs).
template <int TPB, int EPT, int LD, int ST>
__global__ void __launch_bounds__(TPB) mx_2d(const uint16_t* in, uint8_t* out, uint8_t* sc, int64_t) {
    const int col = (int(blockIdx.y) * TPB + int(threadIdx.x)) * EPT;
    if (col >= K) return;  // whole warps (K % (32 * EPT) == 0)
    const int64_t e0 = int64_t(blockIdx.x) * K + col;
    uint4 raw[EPT / 8];
#pragma unroll
    for (int i = 0; i < EPT / 8; ++i) raw[i] = ld16<LD>(in + e0 + 8 * i);
    mx_tile<EPT, ST>(raw, e0, out, sc);
}
// persist: tiles of TPB * EPT, U at a time per block, grid-stride.
template <int TPB, int EPT, int U, int LD, int ST>
__global__ void __launch_bounds__(TPB) mx_persist(const uint16_t* in, uint8_t* out, uint8_t* sc, int64_t tiles) {
    for (int64_t t = int64_t(blockIdx.x) * U; t < tiles; t += int64_t(gridDim.x) * U) {
        uint4 raw[U][EPT / 8];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int i = 0; i < EPT / 8; ++i)
                if (t + u < tiles) raw[u][i] = ld16<LD>(in + ((t + u) * TPB + threadIdx.x) * EPT + 8 * i);
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (t + u < tiles) mx_tile<EPT, ST>(raw[u], ((t + u) * TPB + threadIdx.x) * EPT, out, sc);
    }
}

template <int TPB, int EPT, int LD, int ST>
__global__ void __launch_bounds__(TPB) silu_2d(const uint16_t* in, uint8_t* out, uint8_t* sc, int64_t) {
    const int64_t row = blockIdx.x;
    const int col = (int(blockIdx.y) * TPB + int(threadIdx.x)) * EPT;
    if (col >= K) return;  // whole warps (K % (32 * EPT) == 0)
    const uint16_t* r = in + row * 2 * K;
    uint4 g[EPT / 8], u[EPT / 8];
#pragma unroll
    for (int i = 0; i < EPT / 8; ++i) g[i] = ld16<LD>(r + col + 8 * i), u[i] = ld16<LD>(r + K + col + 8 * i);
    silu_tile<EPT, ST>(g, u, row, col, out, reinterpret_cast<float*>(sc));
}
template <int TPB, int EPT, int LD, int ST>
__global__ void __launch_bounds__(TPB) silu_flat(const uint16_t* in, uint8_t* out, uint8_t* sc, int64_t) {
    const int64_t e0 = (int64_t(blockIdx.x) * TPB + threadIdx.x) * EPT;
    const int64_t row = e0 / K;  // K is a constant: a multiply and shift
    const int col = int(e0 - row * K);
    const uint16_t* r = in + row * 2 * K;
    uint4 g[EPT / 8], u[EPT / 8];
#pragma unroll
    for (int i = 0; i < EPT / 8; ++i) g[i] = ld16<LD>(r + col + 8 * i), u[i] = ld16<LD>(r + K + col + 8 * i);
    silu_tile<EPT, ST>(g, u, row, col, out, reinterpret_cast<float*>(sc));
}
template <int TPB, int EPT, int U, int LD, int ST>
__global__ void __launch_bounds__(TPB) silu_persist(const uint16_t* in, uint8_t* out, uint8_t* sc, int64_t tiles) {
    for (int64_t t = int64_t(blockIdx.x) * U; t < tiles; t += int64_t(gridDim.x) * U) {
        uint4 g[U][EPT / 8], u[U][EPT / 8];
        int64_t rows[U];
        int cols[U];
#pragma unroll
        for (int k = 0; k < U; ++k) {
            const int64_t e0 = ((t + k) * TPB + threadIdx.x) * EPT;
            rows[k] = e0 / K;
            cols[k] = int(e0 - rows[k] * K);
            const uint16_t* r = in + rows[k] * 2 * K;
#pragma unroll
            for (int i = 0; i < EPT / 8; ++i)
                if (t + k < tiles) g[k][i] = ld16<LD>(r + cols[k] + 8 * i), u[k][i] = ld16<LD>(r + K + cols[k] + 8 * i);
        }
#pragma unroll
        for (int k = 0; k < U; ++k)
            if (t + k < tiles) silu_tile<EPT, ST>(g[k], u[k], rows[k], cols[k], out, reinterpret_cast<float*>(sc));
    }
}

template <int TPB, int VPT, int LD, int ST>
__global__ void __launch_bounds__(TPB) copy_flat(const uint4* in, uint4* out) {
    const int64_t i0 = (int64_t(blockIdx.x) * TPB + threadIdx.x) * VPT;
    uint4 v[VPT];
#pragma unroll
    for (int i = 0; i < VPT; ++i) v[i] = ld16<LD>(in + i0 + i);
#pragma unroll
    for (int i = 0; i < VPT; ++i) st16<ST>(out + i0 + i, v[i]);
}

// ---- timing: launches over rotated buffer sets (together > 4x L2), median of 7 x 10 calls -----------
struct Sets {
    std::vector<uint16_t*> in;
    std::vector<uint8_t*> out, sc;
};
static Sets make_sets(size_t in_bytes, size_t out_bytes, size_t sc_bytes, int n) {
    Sets s;
    std::vector<uint16_t> h(in_bytes / 2);
    uint32_t x = 12345;
    for (auto& v : h) {  // random bf16 in about [-8, 8]
        x = x * 1664525u + 1013904223u;
        v = uint16_t(((x >> 16) & 0x8000) | (0x3C00 + ((x >> 8) & 0x3FF)));
    }
    for (int i = 0; i < n; ++i) {
        uint16_t* a; uint8_t *b, *c;
        CK(cudaMalloc(&a, in_bytes)); CK(cudaMalloc(&b, out_bytes)); CK(cudaMalloc(&c, sc_bytes));
        CK(cudaMemcpy(a, h.data(), in_bytes, cudaMemcpyHostToDevice));
        s.in.push_back(a); s.out.push_back(b); s.sc.push_back(c);
    }
    return s;
}
static void free_sets(Sets& s) {
    for (size_t i = 0; i < s.in.size(); ++i) cudaFree(s.in[i]), cudaFree(s.out[i]), cudaFree(s.sc[i]);
}

static bool g_once = false;  // `stream_lab once`: every kernel launched once (for ncu)

static double time_us(const std::function<void(int)>& launch, int nsets) {
    if (g_once) {
        launch(0);
        CK(cudaDeviceSynchronize());
        return 1.0;
    }
    return time_stream_us(launch, nsets);
}

static int resident(const void* kernel, int tpb) {
    int n = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, tpb, 0));
    return n;
}

using QuantKernel = void (*)(const uint16_t*, uint8_t*, uint8_t*, int64_t);
enum class Grid { TwoD, Flat, Persistent };  // (rows, column tiles); one block a tile; resident blocks only

// Times `kernel` (TPB threads, tiles of `tile` outputs) over the rotated sets and prints its row.
static void measure(const char* what, const std::string& name, QuantKernel kernel, Grid grid, int tpb, int tile,
                    const Sets& s, double bytes, double copy_us, int sms) {
    const int occ = resident((const void*)kernel, tpb);
    const int64_t tiles = int64_t(M) * K / tile;
    const dim3 g = grid == Grid::TwoD ? dim3(M, (K + tile - 1) / tile)
                   : grid == Grid::Flat ? dim3(unsigned(tiles))
                                        : dim3(unsigned(sms * occ));
    const double us = time_us([&](int i) { kernel<<<g, tpb>>>(s.in[i], s.out[i], s.sc[i], tiles); }, int(s.in.size()));
    printf("%-6s %-34s %9.2f us %7.0f GB/s %6.1f%% of copy  (%d blocks/SM)\n", what, name.c_str(), us,
           bytes / us * 1e-3, 100.0 * copy_us / us, occ);
}

int main(int argc, char** argv) {
    g_once = argc > 1 && std::string(argv[1]) == "once";
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    printf("device %s, %d SMs\n", prop.name, sms);
    const int64_t n = int64_t(M) * K;
    constexpr int kSets = 3;

    auto copy_time = [&](double bytes) {
        Sets c = make_sets(size_t(bytes / 2) & ~size_t(255), size_t(bytes / 2) & ~size_t(255), 256, kSets);
        const double us = time_us([&](int i) { CK(cudaMemcpyAsync(c.out[i], c.in[i], size_t(bytes / 2) & ~size_t(255), cudaMemcpyDeviceToDevice)); }, kSets);
        // the copy as a kernel: 16 bytes a thread in, 16 out, 256 threads, 1 and 2 vectors a thread
        const int64_t vecs = int64_t(bytes / 2) / 16 / 512 * 512;
        const double k1 = time_us([&](int i) { copy_flat<256, 1, 0, 0><<<unsigned(vecs / 256), 256>>>((const uint4*)c.in[i], (uint4*)c.out[i]); }, kSets);
        const double k2 = time_us([&](int i) { copy_flat<256, 2, 0, 0><<<unsigned(vecs / 512), 256>>>((const uint4*)c.in[i], (uint4*)c.out[i]); }, kSets);
        const double k2cs = time_us([&](int i) { copy_flat<256, 2, 1, 1><<<unsigned(vecs / 512), 256>>>((const uint4*)c.in[i], (uint4*)c.out[i]); }, kSets);
        free_sets(c);
        printf("copy   %.0f MB: cudaMemcpyAsync %.2f us (%.0f GB/s); kernel 1x16B %.2f us, 2x16B %.2f us, 2x16B cs %.2f us\n",
               bytes * 1e-6, us, bytes / us * 1e-3, k1, k2, k2cs);
        return us;
    };

    // ---------------- plain MXFP8 -----------------
    {
        const double bytes = double(n) * 2 + double(n) + double(n) / 32;
        const double copy = copy_time(bytes);
        Sets s = make_sets(n * 2, n, n / 32, kSets);
// CASE(what, kernel, grid, TPB, EPT, the kernel's other template arguments): one measured row.
#define CASE(WHAT, KERNEL, GRID, TPB, EPT, ...)                                                                 \
    measure(WHAT, #KERNEL "<" #TPB "," #EPT "," #__VA_ARGS__ ">", KERNEL<TPB, EPT, __VA_ARGS__>, Grid::GRID, TPB, \
            TPB * EPT, s, bytes, copy, sms)
#define MX_2D(TPB, EPT, LD, ST) CASE("mx", mx_2d, TwoD, TPB, EPT, LD, ST);
#define MX_FLAT(TPB, EPT, LD, ST) CASE("mx", mx_flat, Flat, TPB, EPT, LD, ST);
#define MX_PERSIST(TPB, EPT, U, LD, ST) CASE("mx", mx_persist, Persistent, TPB, EPT, U, LD, ST);
        MX_2D(128, 8, 1, 1)  // the library's shape and hints
        MX_2D(128, 8, 0, 0)
        MX_2D(128, 16, 1, 1)
        MX_2D(64, 16, 1, 1)
        MX_FLAT(128, 8, 1, 1)
        MX_FLAT(256, 8, 1, 1)
        MX_FLAT(512, 8, 1, 1)
        MX_FLAT(128, 16, 1, 1)
        MX_FLAT(256, 16, 1, 1)
        MX_FLAT(256, 16, 0, 0)
        MX_FLAT(256, 16, 2, 1)
        MX_FLAT(256, 16, 3, 1)
        MX_FLAT(256, 32, 1, 1)
        MX_FLAT(512, 16, 1, 1)
        MX_PERSIST(256, 16, 1, 1, 1)
        MX_PERSIST(256, 16, 2, 1, 1)
        MX_PERSIST(256, 8, 4, 1, 1)
        MX_PERSIST(512, 16, 2, 0, 0)
        free_sets(s);
    }
    // ---------------- silu gated + fp8 g128 -----------------
    {
        const double bytes = double(n) * 4 + double(n) + double(n) / 128 * 4;
        const double copy = copy_time(bytes);
        Sets s = make_sets(n * 4, n, n / 128 * 4, kSets);
#define SI_2D(TPB, EPT, LD, ST) CASE("silu", silu_2d, TwoD, TPB, EPT, LD, ST);
#define SI_FLAT(TPB, EPT, LD, ST) CASE("silu", silu_flat, Flat, TPB, EPT, LD, ST);
#define SI_PERSIST(TPB, EPT, U, LD, ST) CASE("silu", silu_persist, Persistent, TPB, EPT, U, LD, ST);
        SI_2D(128, 8, 1, 1)  // the library's shape and hints
        SI_2D(128, 8, 0, 0)
        SI_2D(256, 8, 1, 1)
        SI_FLAT(128, 8, 1, 1)
        SI_FLAT(256, 8, 1, 1)
        SI_FLAT(512, 8, 1, 1)
        SI_FLAT(256, 8, 0, 0)
        SI_FLAT(256, 8, 2, 1)
        SI_FLAT(128, 16, 1, 1)
        SI_FLAT(256, 16, 1, 1)
        SI_PERSIST(256, 8, 1, 1, 1)
        SI_PERSIST(256, 8, 2, 1, 1)
        SI_PERSIST(256, 16, 1, 1, 1)
        free_sets(s);
    }
    return 0;
}
