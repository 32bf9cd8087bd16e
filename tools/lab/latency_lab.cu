// Lab: where does the time of a one-row call go? T = 1 silu + fp8 g128 measures ~2.3 us against a 1.35 us
// same-bytes copy (docs/perf.md). This times, the way fq bench does (CUDA-graph replay of N launches,
// inputs rotated out of L2), kernels that do less and less of that call's work:
//   empty           launch only
//   touch           one 16-byte load and one store a thread, no math
//   silu-g128, N a thread   the call's work at N = 4, 8, 16 outputs a thread: gate and up, silu * up, the
//                           group's amax over 128 / N lanes, N fp8 codes and a scale
//   silu-g128 fat params    N = 8 with a Params-sized (~400 byte) argument block
// each with and without programmatic dependent launch, beside cudaMemcpyAsync and a copy kernel.
// Build and run on the device:
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a tools/lab/latency_lab.cu -o /tmp/latency_lab && /tmp/latency_lab
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "lab_timing.h"

constexpr int kThreads = 128;

struct Fat {
    const uint16_t* in;
    uint8_t* out;
    float* scales;
    int64_t cols;
    int64_t pad[46];  // ~400 bytes like the library's Params
};

__device__ __forceinline__ void pdl_wait(bool pdl) {
    if (pdl) asm volatile("griddepcontrol.wait;" ::: "memory");
}
__device__ __forceinline__ void pdl_launch(bool pdl) {
    if (pdl) asm volatile("griddepcontrol.launch_dependents;");
}

__global__ void empty_kernel(bool pdl) {
    pdl_wait(pdl);
    pdl_launch(pdl);
}

__global__ void touch_kernel(const uint4* in, uint4* out, int64_t n, bool pdl) {
    pdl_wait(pdl);
    pdl_launch(pdl);
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

__device__ __forceinline__ float bf16_lo(uint32_t w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(uint32_t w) { return __uint_as_float(w & 0xFFFF0000u); }

// One row of silu(gate) * up -> e4m3 with a g128 scale: thread t makes outputs [kOut t, kOut t + kOut); a
// group spans 128 / kOut lanes (kOut >= 4).
template <int kOut>
__device__ __forceinline__ void silu_g128(const uint16_t* in, uint8_t* out, float* scales, int64_t cols, bool pdl) {
    pdl_wait(pdl);
    pdl_launch(pdl);
    const int64_t c = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * kOut;
    if (c >= cols) return;
    constexpr int kWords = kOut / 2;
    uint32_t gw[kWords], uw[kWords];
    if constexpr (kWords == 2) {
        const uint2 g = *reinterpret_cast<const uint2*>(in + c), u = *reinterpret_cast<const uint2*>(in + cols + c);
        gw[0] = g.x, gw[1] = g.y, uw[0] = u.x, uw[1] = u.y;
    } else {
#pragma unroll
        for (int i = 0; i < kWords; i += 4) {
            const uint4 g = *reinterpret_cast<const uint4*>(in + c + 2 * i);
            const uint4 u = *reinterpret_cast<const uint4*>(in + cols + c + 2 * i);
            gw[i] = g.x, gw[i + 1] = g.y, gw[i + 2] = g.z, gw[i + 3] = g.w;
            uw[i] = u.x, uw[i + 1] = u.y, uw[i + 2] = u.z, uw[i + 3] = u.w;
        }
    }
    float y[kOut], amax = 0.f;
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
        const float g0 = bf16_lo(gw[k]), g1 = bf16_hi(gw[k]);
        y[2 * k] = g0 / (1.f + __expf(-g0)) * bf16_lo(uw[k]);
        y[2 * k + 1] = g1 / (1.f + __expf(-g1)) * bf16_hi(uw[k]);
        amax = fmaxf(amax, fmaxf(fabsf(y[2 * k]), fabsf(y[2 * k + 1])));
    }
#pragma unroll
    for (int o = 128 / kOut / 2; o >= 1; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    const float scale = fmaxf(amax / 448.f, 1e-10f), inv = 1.f / scale;
    uint32_t packed[kOut / 4];
#pragma unroll
    for (int h = 0; h < kOut / 4; ++h) {
        uint32_t w = 0;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const __nv_fp8_e4m3 q(y[4 * h + k] * inv);
            w |= uint32_t(*reinterpret_cast<const uint8_t*>(&q)) << (8 * k);
        }
        packed[h] = w;
    }
#pragma unroll
    for (int h = 0; h < kOut / 4; ++h) reinterpret_cast<uint32_t*>(out + c)[h] = packed[h];
    if ((threadIdx.x & (128 / kOut - 1)) == 0) scales[c / 128] = scale;
}

template <int kOut>
__global__ void silu_kernel(const uint16_t* in, uint8_t* out, float* scales, int64_t cols, bool pdl) {
    silu_g128<kOut>(in, out, scales, cols, pdl);
}
__global__ void silu_fat_kernel(const Fat f, bool pdl) { silu_g128<8>(f.in, f.out, f.scales, f.cols, pdl); }

template <class Kernel, class... Args>
void launch(Kernel k, int grid, cudaStream_t s, bool pdl, Args... args) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(kThreads);
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    if (pdl) cfg.attrs = attr, cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, k, args...));
}

int main() {
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    const int64_t pool = int64_t(256) << 20;  // 5x the H100's L2: rotated slots do not stay in L2
    char *src, *dst;
    CK(cudaMalloc(&src, pool));
    CK(cudaMalloc(&dst, pool));
    CK(cudaMemset(src, 0x3e, pool));
    const int iters = 4000;
    for (int64_t cols : {2048, 7168, 18432}) {
        const int64_t in_bytes = 2 * cols * 2, out_bytes = cols + cols / 128 * 4;
        const int64_t slot = (in_bytes + out_bytes + 4095) / 4096 * 4096;
        const int slots = int(pool / slot);
        auto in = [&](int i) { return reinterpret_cast<const uint16_t*>(src + int64_t(i % slots) * slot); };
        auto out = [&](int i) { return reinterpret_cast<uint8_t*>(dst + int64_t(i % slots) * slot); };
        auto sc = [&](int i) { return reinterpret_cast<float*>(dst + int64_t(i % slots) * slot + cols); };
        const int grid = int((cols / 8 + kThreads - 1) / kThreads);
        const int64_t half = (in_bytes + out_bytes) / 2;
        printf("cols %lld (T = 1, silu + fp8 g128: %lld bytes; %d blocks of %d)\n", (long long)cols,
               (long long)(in_bytes + out_bytes), grid, kThreads);
        printf("  %-28s %7.2f us\n", "cudaMemcpyAsync same bytes", time_graph_us(s, iters, [&](int i) {
                   CK(cudaMemcpyAsync(out(i), in(i), half, cudaMemcpyDeviceToDevice, s));
               }));
        for (bool pdl : {false, true}) {
            const char* tag = pdl ? " (PDL)" : "";
            printf("  %-22s%-6s %7.2f us\n", "empty", tag,
                   time_graph_us(s, iters, [&](int) { launch(empty_kernel, grid, s, pdl, pdl); }));
            const int64_t n16 = half / 16;
            printf("  %-22s%-6s %7.2f us\n", "touch (copy kernel)", tag, time_graph_us(s, iters, [&](int i) {
                       launch(touch_kernel, int((n16 + kThreads - 1) / kThreads), s, pdl,
                              reinterpret_cast<const uint4*>(in(i)), reinterpret_cast<uint4*>(out(i)), n16, pdl);
                   }));
            auto silu_n = [&](auto out_per_thread) {
                constexpr int kOut = decltype(out_per_thread)::value;
                const int g = int((cols / kOut + kThreads - 1) / kThreads);
                char name[64];
                snprintf(name, sizeof name, "silu-g128, %d a thread", kOut);
                printf("  %-22s%-6s %7.2f us\n", name, tag, time_graph_us(s, iters, [&](int i) {
                           launch(silu_kernel<kOut>, g, s, pdl, in(i), out(i), sc(i), cols, pdl);
                       }));
            };
            silu_n(std::integral_constant<int, 4>{});
            silu_n(std::integral_constant<int, 8>{});
            silu_n(std::integral_constant<int, 16>{});
            printf("  %-22s%-6s %7.2f us\n", "silu-g128 fat params", tag, time_graph_us(s, iters, [&](int i) {
                       Fat f{in(i), out(i), sc(i), cols, {}};
                       launch(silu_fat_kernel, grid, s, pdl, f, pdl);
                   }));
        }
        // The same in L2: one slot, no rotation.
        printf("  %-28s %7.2f us\n", "silu-g128, in L2", time_graph_us(s, iters, [&](int) {
                   launch(silu_kernel<8>, grid, s, false, in(0), out(0), sc(0), cols, false);
               }));
    }
    return 0;
}
