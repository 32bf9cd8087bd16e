// Lab: raw wgmma FP8 throughput from shared memory (no loads), with the promotion, and what each further
// ingredient of the grouped GEMM's pipeline costs: rotating stages, mbarrier handshakes with a producer thread,
// scales read from global memory one block ahead. Two consumer warpgroups, m64n128k32 e4m3, a wait per 128-deep
// K block.
// Build and run (sm_90a):
//   nvcc -O3 -std=c++17 -I src -gencode arch=compute_90a,code=sm_90a tools/lab/wgmma_rate.cu -o build-lab/wgmma_rate
//   build-lab/wgmma_rate [random 0|1] [iterations]   (docs/perf.md session 18)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "kernels/gemm/sm90.cuh"
using namespace fq::sm90;

constexpr int kMaxStages = 4;
constexpr int kStageBytes = 32768;  // A (two 64-row halves) + B, 128 of K each
constexpr int kSmem = kMaxStages * kStageBytes + 1024 + 64;

template <int kStages, bool kBarriers, bool kScales>
__global__ void __launch_bounds__(384, 1) rate(int iters, float* out, const float* scales, int random) {
#ifdef FQ_SM90A
    extern __shared__ __align__(1024) uint8_t base[];
    uint64_t* full = reinterpret_cast<uint64_t*>(base + kMaxStages * kStageBytes);
    uint64_t* empty = full + kMaxStages;
    for (int i = threadIdx.x; i < kStages * kStageBytes; i += blockDim.x) {  // fp8 bytes, no NaN
        uint32_t h = uint32_t(i) * 2654435761u + blockIdx.x * 40503u;
        h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
        const uint8_t v = random ? uint8_t(h) : uint8_t((i * 37) & 0x3F);
        base[i] = (v & 0x7F) == 0x7F ? v ^ 1 : v;
    }
    if (threadIdx.x == 0) {
        for (int i = 0; i < kMaxStages; ++i) mbar_init(&full[i], 1), mbar_init(&empty[i], 8);
        fence_barrier_init();
    }
    __syncthreads();
    const int wg = threadIdx.x / 128;
    if (wg == 0) {  // the producer: hands stages over without loading them
        if (kBarriers && threadIdx.x == 0) {
            int stage = 0;
            uint32_t phase = 0;
            for (int it = 0; it < iters; ++it) {
                mbar_wait(&empty[stage], phase ^ 1);
                mbar_arrive(&full[stage]);
                if (++stage == kStages) stage = 0, phase ^= 1;
            }
        }
        return;
    }
    const int lane = threadIdx.x % 32;
    float acc[64], total[64];
    for (int i = 0; i < 64; ++i) total[i] = 0.0f;
    const uint64_t da0 = smem_descriptor_sw128(base + (wg - 1) * 8192), db0 = smem_descriptor_sw128(base + 16384);
    const uint32_t full0 = smem_addr(full), empty0 = smem_addr(empty);
    int stage = 0;
    uint32_t phase = 0;
    const float* sp = scales + threadIdx.x;
    float next = kScales ? __ldg(sp) : 1.0001f;
    for (int it = 0; it < iters; ++it) {
        const float sc = next;
        if (kScales) next = __ldg(sp += 384);
        const uint64_t da = da0 + stage * (kStageBytes >> 4), db = db0 + stage * (kStageBytes >> 4);
        if (kBarriers) mbar_wait(full0 + 8 * stage, phase);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) wgmma_m64n128k32_e4m3(acc, da + 2 * kk, db + 2 * kk, kk > 0);
        wgmma_commit();
        wgmma_wait<0>();
        fence_operands(acc);
        if (kBarriers && lane == 0) mbar_arrive_remote(empty0 + 8 * stage);
        if (++stage == kStages) stage = 0, phase ^= 1;
#pragma unroll
        for (int i = 0; i < 64; ++i) total[i] = __fmaf_rn(acc[i], sc, total[i]);  // the promotion
    }
    float s = 0.0f;
    for (int i = 0; i < 64; ++i) s += total[i] + acc[i];
    if (s == 12345.0f) out[0] = s;  // keeps the work
#endif
}

static int g_random = 1, g_iters = 100000;

template <int kStages, bool kBarriers, bool kScales>
void run(const char* name, int sms) {
    auto k = rate<kStages, kBarriers, kScales>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    float *out = nullptr, *scales = nullptr;
    const size_t scale_bytes = size_t(g_iters + 2) * 384 * sizeof(float);
    cudaMalloc(&out, 4);
    cudaMalloc(&scales, scale_bytes);
    cudaMemset(scales, 0, scale_bytes);
    k<<<sms, 384, kSmem>>>(10, out, scales, g_random);  // warm-up
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    cudaEventRecord(a);
    k<<<sms, 384, kSmem>>>(g_iters, out, scales, g_random);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    const double flop = 2.0 * 64 * 128 * 128 * double(g_iters) * 2 * sms;
    std::printf("%-34s %8.1f TFLOP/s  (%s)\n", name, flop / (ms * 1e-3) * 1e-12, cudaGetErrorString(cudaGetLastError()));
    cudaFree(out), cudaFree(scales);
}

int main(int argc, char** argv) {
    if (argc > 1) g_random = std::atoi(argv[1]);
    if (argc > 2) g_iters = std::atoi(argv[2]);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    run<1, false, false>("MMAs + promotion", sms);
    run<4, false, false>("+ 4 rotating stages", sms);
    run<4, true, false>("+ mbarrier handshakes", sms);
    run<4, false, true>("+ global scales (no handshakes)", sms);
    run<4, true, true>("+ handshakes and global scales", sms);
    run<1, false, false>("MMAs + promotion (again: clock drift)", sms);
    return 0;
}
