// Lab: raw wgmma FP8 throughput from shared memory (no loads), per N and per promotion pattern, and what each
// ingredient of the grouped GEMM's pipeline costs (rotating stages, mbarrier handshakes, global scale loads).
// Build and run (sm_90a):
//   nvcc -O3 -std=c++17 -I src -gencode arch=compute_90a,code=sm_90a tools/lab/wgmma_rate.cu -o build-lab/wgmma_rate
//   build-lab/wgmma_rate [random 0|1] [iterations] [pipe]   (docs/perf.md session 18)
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#include "kernels/gemm/sm90.cuh"
using namespace fq::sm90;

__device__ __forceinline__ void mma_n64(float (&d)[32], uint64_t da, uint64_t db) {
    asm volatile("{\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(da), "l"(db));
}

__device__ __forceinline__ void mma_n128(float (&d)[64], uint64_t da, uint64_t db) {
    asm volatile("{\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db));
}

__device__ __forceinline__ void mma_n256(float (&d)[128], uint64_t da, uint64_t db) {
    asm volatile("{\n"
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db));
}

template <int N, int kPromote, int kWarpgroups, int KK = 4>
__global__ void __launch_bounds__(384, 1) rate(int iters, float* out, int random) {
#ifdef FQ_SM90A
    extern __shared__ __align__(1024) uint8_t sm[];
    uint8_t* base = sm + ((1024 - (smem_addr(sm) & 1023)) & 1023);
    for (int i = threadIdx.x; i < 65536; i += blockDim.x) {
        uint32_t h = uint32_t(i) * 2654435761u + blockIdx.x * 40503u; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        uint8_t v = random ? uint8_t(h) : uint8_t((i * 37) & 0x3F);
        if ((v & 0x7F) == 0x7F) v ^= 1;  // no NaN
        base[i] = v;
    }
    __syncthreads();
    const int wg = threadIdx.x / 128;
    if (wg >= kWarpgroups) return;
    constexpr int R = N / 2;
    float acc[R], total[R];
    for (int i = 0; i < R; ++i) total[i] = 0.f;
    const uint64_t da = smem_descriptor_sw128(base + wg * 8192);
    const uint64_t db = smem_descriptor_sw128(base + 16384);
    for (int it = 0; it < iters; ++it) {
        wgmma_fence();
        #pragma unroll
        for (int q = 0; q < KK; ++q) { const int kk = q % 4;
            if constexpr (N == 64) mma_n64(acc, da + 2 * kk, db + 2 * kk);
            if constexpr (N == 128) mma_n128(acc, da + 2 * kk, db + 2 * kk);
            if constexpr (N == 256) mma_n256(acc, da + 2 * kk, db + 2 * kk);
        }
        wgmma_commit();
        wgmma_wait<0>();
        #pragma unroll
        for (int i = 0; i < R; ++i) asm volatile("" : "+f"(acc[i])::"memory");
        if (kPromote) {
            #pragma unroll
            for (int i = 0; i < R; ++i) total[i] = __fmaf_rn(acc[i], 1.0001f, total[i]);
        }
    }
    float s = 0; for (int i = 0; i < R; ++i) s += total[i] + acc[i];
    if (s == 12345.f) out[0] = s;
#endif
}

static int g_random = 0, g_iters = 20000;
template <int N, int P, int W, int KK = 4>
void run(const char* name, int sms) {
    auto k = rate<N, P, W, KK>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 70000);
    float* out; cudaMalloc(&out, 4);
    const int iters = g_iters;
    k<<<sms, 384, 70000>>>(10, out, g_random);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    cudaEventRecord(a); k<<<sms, 384, 70000>>>(iters, out, g_random); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    double flop = 2.0 * 64 * N * 32 * KK * double(iters) * W * sms;
    printf("%-28s %8.1f TFLOP/s  (%s)\n", name, flop / (ms * 1e-3) * 1e-12, cudaGetErrorString(cudaGetLastError()));
}

// Closer to the grouped GEMM: 4 rotating stages of A+B, a producer thread handing stages over through
// full/empty mbarriers (no loads), scales read from global memory one block ahead.
template <bool kBarriers, bool kScales>
__global__ void __launch_bounds__(384, 1) rate_pipe(int iters, float* out, const float* scales) {
#ifdef FQ_SM90A
    extern __shared__ __align__(1024) uint8_t sm[];
    uint8_t* base = sm + ((1024 - (smem_addr(sm) & 1023)) & 1023);
    uint64_t* full = reinterpret_cast<uint64_t*>(base + 4 * 32768);
    uint64_t* empty = full + 4;
    for (int i = threadIdx.x; i < 4 * 32768; i += blockDim.x) {
        uint32_t h = uint32_t(i) * 2654435761u + blockIdx.x * 40503u; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        uint8_t v = uint8_t(h);
        if ((v & 0x7F) == 0x7F) v ^= 1;
        base[i] = v;
    }
    if (threadIdx.x == 0) {
        for (int i = 0; i < 4; ++i) { mbar_init(&full[i], 1); mbar_init(&empty[i], 8); }
        fence_barrier_init();
    }
    __syncthreads();
    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        if (kBarriers && threadIdx.x == 0) {
            int stage = 0; uint32_t phase = 0;
            for (int it = 0; it < iters; ++it) {
                mbar_wait(&empty[stage], phase ^ 1);
                mbar_arrive(&full[stage]);
                if (++stage == 4) { stage = 0; phase ^= 1; }
            }
        }
        return;
    }
    const int half = wg - 1, lane = threadIdx.x % 32;
    float acc[64], total[64];
    for (int i = 0; i < 64; ++i) total[i] = 0.f;
    const uint64_t da0 = smem_descriptor_sw128(base + half * 8192), db0 = smem_descriptor_sw128(base + 16384);
    const uint32_t full0 = smem_addr(full), empty0 = smem_addr(empty);
    int stage = 0; uint32_t phase = 0;
    const float* sp = scales + threadIdx.x;
    float sn = kScales ? __ldg(sp) : 1.0f;
    for (int it = 0; it < iters; ++it) {
        const float sc = sn;
        if (kScales) { sp += 384; sn = __ldg(sp); }
        const uint64_t da = da0 + stage * 2048, db = db0 + stage * 2048;
        if (kBarriers) mbar_wait(full0 + 8 * stage, phase);
        wgmma_fence();
        #pragma unroll
        for (int kk = 0; kk < 4; ++kk) mma_n128(acc, da + 2 * kk, db + 2 * kk);
        wgmma_commit();
        wgmma_wait<0>();
        #pragma unroll
        for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(acc[i])::"memory");
        if (kBarriers && lane == 0) mbar_arrive_remote(empty0 + 8 * stage);
        if (++stage == 4) { stage = 0; phase ^= 1; }
        #pragma unroll
        for (int i = 0; i < 64; ++i) total[i] = __fmaf_rn(acc[i], sc, total[i]);
    }
    float s = 0; for (int i = 0; i < 64; ++i) s += total[i] + acc[i];
    if (s == 12345.f) out[0] = s;
#endif
}
template <bool B, bool S>
void run_pipe(const char* name, int sms) {
    auto k = rate_pipe<B, S>;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 140000);
    float* out; cudaMalloc(&out, 4);
    float* sc; cudaMalloc(&sc, size_t(g_iters + 2) * 384 * 4); cudaMemset(sc, 0, size_t(g_iters + 2) * 384 * 4);
    k<<<sms, 384, 140000>>>(10, out, sc);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    cudaEventRecord(a); k<<<sms, 384, 140000>>>(g_iters, out, sc); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    double flop = 2.0 * 64 * 128 * 128 * double(g_iters) * 2 * sms;
    printf("%-28s %8.1f TFLOP/s  (%s)\n", name, flop / (ms * 1e-3) * 1e-12, cudaGetErrorString(cudaGetLastError()));
}
#include <cstdlib>
int main(int argc, char** argv) {
    if (argc > 1) g_random = atoi(argv[1]);
    if (argc > 2) g_iters = atoi(argv[2]);
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    if (argc > 3) {
        run<128, 1, 2>("n128 2wg promote", sms);
        run_pipe<false, false>("pipe: stages", sms);
        run_pipe<true, false>("pipe: stages+barriers", sms);
        run_pipe<false, true>("pipe: stages+scales", sms);
        run_pipe<true, true>("pipe: stages+barriers+scales", sms);
        run<128, 1, 2>("n128 2wg promote", sms);
        return 0;
    }
    run<128, 0, 2>("n128 2wg no-promote", sms);
    run<128, 1, 2>("n128 2wg promote", sms);
    run<128, 0, 3>("n128 3wg no-promote", sms);
    run<128, 0, 1>("n128 1wg no-promote", sms);
    run<256, 0, 2>("n256 2wg no-promote", sms);
    run<256, 0, 1>("n256 1wg no-promote", sms);
    run<64, 0, 2>("n64 2wg no-promote", sms);
    run<64, 0, 3>("n64 3wg no-promote", sms);
    run<128, 0, 2, 16>("n128 2wg 16/wait", sms);
    run<256, 0, 2, 16>("n256 2wg 16/wait", sms);
    run<128, 1, 2, 8>("n128 2wg 8/wait promote", sms);
    return 0;
}
