// Lab: where does the time of silu-and-mul + fp8 group-128 quantization go on this GPU?
// Fully specialized kernels (bf16 split gate, e4m3fn, group 128, row-major fp32 scales), each checked
// byte for byte against V0 (the library's exact algorithm) and timed by graph replay beside a copy.
//   nvcc -O3 -std=c++17 --fmad=false --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a \
//        -I src -I include tools/lab/silu_quant_lab.cu -o lab && ./lab
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "common/activation.h"
#include "common/quantize.h"
#include "lab_timing.h"

using namespace fq;

// ---- Exact building blocks ---------------------------------------------------------------------
// exp without branches: both reconstructions computed, one selected (same bits as portable_exp).
__device__ __forceinline__ float exp_branchless(float x) {
    const float xc = fminf(fmaxf(x, -104.0f), 89.0f);
    constexpr float kLog2e = 1.442695022e+00f, kLn2Hi = 6.931471825e-01f, kLn2Lo = -1.904654212e-09f;
    const float k = rintf(xc * kLog2e);
    const float r_hi = fmaf(-k, kLn2Hi, xc);
    const float r_lo = -k * kLn2Lo;
    const float r = fmaf(-k, kLn2Lo, r_hi);
    const float em1 = r_hi + fmaf(r * r, detail::exp_q(r), r_lo);
    const float p = 1.0f + em1;
    const int ki = int(k);
    const float fast = __uint_as_float(__float_as_uint(p) + (uint32_t(ki) << 23));
    const int k1 = ki >> 1;  // floor(k/2): any split works, the product is exact until the last one
    const float slow = __fmul_rn(__fmul_rn(p, detail::pow2i(k1)), detail::pow2i(ki - k1));
    const float y = (ki >= -125 && ki <= 127) ? fast : slow;
    return x == x ? y : x;
}

// a / b correctly rounded, given rb = RN(1/b) (Markstein): q = a*rb, one residual correction.
__device__ __forceinline__ float div_by_reciprocal(float a, float b, float rb) {
    const float q = a * rb;
    const float rem = fmaf(-b, q, a);
    const float q1 = fmaf(rem, rb, q);
    const float rem1 = fmaf(-b, q1, a);
    const float q2 = fmaf(rem1, rb, q1);
    return isfinite(q) ? q2 : q;  // inf/NaN quotients: the residual would be NaN
}

// ---- Kernels -----------------------------------------------------------------------------------
enum Variant { kExact = 0, kBranchlessExp = 1, kBranchlessExpMarkstein = 2, kHwExpFastDiv = 3, kNoAct = 4 };

struct P {
    const uint16_t* in;
    uint8_t* out;
    float* scales;
    int rows, H;
};

template <int V>
__device__ __forceinline__ float act(float g, float u) {
    if constexpr (V == kExact) return silu(g) * u;
    else if constexpr (V == kBranchlessExp || V == kBranchlessExpMarkstein) return g / (1.0f + exp_branchless(-g)) * u;
    else if constexpr (V == kHwExpFastDiv) return __fdividef(g, 1.0f + __expf(-g)) * u;
    else return g * u;
}

template <int V, int kRows>
__global__ void __launch_bounds__(128) kernel(P p) {
    const int j0 = (blockIdx.y * 128 + threadIdx.x) * 8;
    const int64_t m0 = int64_t(blockIdx.x) * kRows;
    int4 g4[kRows], u4[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        const uint16_t* row = p.in + (m0 + r) * 2 * p.H;
        if (m0 + r < p.rows) { g4[r] = __ldcs(reinterpret_cast<const int4*>(row + j0)); u4[r] = __ldcs(reinterpret_cast<const int4*>(row + p.H + j0)); }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        if (m0 + r >= p.rows) break;
        const uint16_t* gh = reinterpret_cast<const uint16_t*>(&g4[r]);
        const uint16_t* uh = reinterpret_cast<const uint16_t*>(&u4[r]);
        float y[8], a = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            y[i] = act<V>(bf16_to_float(gh[i]), bf16_to_float(uh[i]));
            a = fmaxf(a, fabsf(y[i]));
        }
#pragma unroll
        for (int d = 8; d > 0; d /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
        const float s = fmaxf(a / 448.0f, 1.0f / (448.0f * 512.0f));
        const float rs = 1.0f / s;
        uint8_t b[8];
#pragma unroll
        for (int i = 0; i < 8; i += 2) {
            float2 v;
            if constexpr (V == kBranchlessExpMarkstein || V == kHwExpFastDiv || V == kNoAct)
                v = make_float2(div_by_reciprocal(y[i], s, rs), div_by_reciprocal(y[i + 1], s, rs));
            else
                v = make_float2(y[i] / s, y[i + 1] / s);
            const __nv_fp8x2_storage_t q = __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, __NV_E4M3);
            b[i] = uint8_t(q & 0xFF);
            b[i + 1] = uint8_t(q >> 8);
        }
        uint2 w;
        memcpy(&w, b, 8);
        __stcs(reinterpret_cast<uint2*>(p.out + (m0 + r) * p.H + j0), w);
        if ((threadIdx.x & 15) == 0) p.scales[(m0 + r) * (p.H / 128) + j0 / 128] = s;
    }
}

// Markstein check over many random pairs against IEEE division.
__global__ void markstein_check(unsigned seed, unsigned long long* bad) {
    unsigned x = seed ^ (blockIdx.x * 9781u + threadIdx.x * 6271u);
    for (int i = 0; i < 64; ++i) {
        x = x * 1664525u + 1013904223u; const float a = __uint_as_float((x & 0x807FFFFFu) | ((x >> 8 & 0xFF) % 200 + 27) << 23);
        x = x * 1664525u + 1013904223u; const float b = __uint_as_float((x & 0x007FFFFFu) | ((x >> 8 & 0xFF) % 120 + 60) << 23);
        const float rb = 1.0f / b;
        const float want = a / b, got = div_by_reciprocal(a, b, rb);
        if (__float_as_uint(want) != __float_as_uint(got)) atomicAdd(bad, 1ull);
    }
}

int main() {
    unsigned long long* bad; CK(cudaMallocManaged(&bad, 8)); *bad = 0;
    markstein_check<<<4096, 256>>>(12345u, bad); CK(cudaDeviceSynchronize());
    printf("markstein vs IEEE division: %llu mismatches in %d pairs\n", *bad, 4096 * 256 * 64);

    cudaStream_t s; CK(cudaStreamCreate(&s));
    const int shapes[][2] = {{1024, 7168}, {16384, 7168}, {16384, 18432}};
    for (auto& sh : shapes) {
        const int T = sh[0], H = sh[1];
        const size_t in_b = size_t(T) * 2 * H * 2, out_b = size_t(T) * H, sc_b = size_t(T) * (H / 128) * 4;
        const size_t bytes = in_b + out_b + sc_b;
        const int nbuf = int(std::max<size_t>(2, (200u << 20) / bytes + 1));
        const int iters = std::max(nbuf, int(std::min<size_t>(200, size_t(3e9) / bytes)));
        std::vector<uint16_t*> ins(nbuf); std::vector<uint8_t*> outs(nbuf); std::vector<float*> scs(nbuf);
        std::vector<uint16_t> host(size_t(T) * 2 * H);
        unsigned x = 7;
        for (auto& v : host) { x = x * 1664525u + 1013904223u; v = float_to_bf16((int(x >> 9 & 0xFFFF) - 32768) / 6000.0f); }
        for (int b = 0; b < nbuf; ++b) {
            CK(cudaMalloc(&ins[b], in_b)); CK(cudaMalloc(&outs[b], out_b)); CK(cudaMalloc(&scs[b], sc_b));
            CK(cudaMemcpy(ins[b], host.data(), in_b, cudaMemcpyHostToDevice));
        }
        uint8_t *src, *dst; CK(cudaMalloc(&src, bytes / 2 * nbuf)); CK(cudaMalloc(&dst, bytes / 2 * nbuf));
        const double copy = time_graph_us(s, iters, [&](int i) { CK(cudaMemcpyAsync(dst + (bytes / 2) * (i % nbuf), src + (bytes / 2) * (i % nbuf), bytes / 2, cudaMemcpyDeviceToDevice, s)); }, 5);
        printf("T=%d H=%d bytes=%zu copy %.2f us (%.0f GB/s)\n", T, H, bytes, copy, bytes / copy * 1e-3);
        std::vector<uint8_t> ref(out_b), got(out_b);
        auto run = [&](auto kern, dim3 grid, const char* name) {
            const double us = time_graph_us(s, iters, [&](int i) { kern<<<grid, 128, 0, s>>>(P{ins[i % nbuf], outs[i % nbuf], scs[i % nbuf], T, H}); }, 5);
            CK(cudaMemcpy(got.data(), outs[(iters - 1) % nbuf], out_b, cudaMemcpyDeviceToHost));
            size_t diff = 0; for (size_t i = 0; i < out_b; ++i) diff += got[i] != ref[i];
            printf("  %-34s %9.2f us %6.0f GB/s %5.1f%% of copy, bytes != exact: %zu\n", name, us, bytes / us * 1e-3, 100 * copy / us, diff);
        };
        const dim3 g1(T, H / 1024), g2((T + 1) / 2, H / 1024), g4((T + 3) / 4, H / 1024);
        kernel<kExact, 1><<<g1, 128>>>(P{ins[0], outs[0], scs[0], T, H});
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(ref.data(), outs[0], out_b, cudaMemcpyDeviceToHost));
        run(kernel<kExact, 1>, g1, "V0 exact (IEEE div, branchy exp) r1");
        run(kernel<kExact, 4>, g4, "V0 exact r4");
        run(kernel<kBranchlessExp, 1>, g1, "V1 branchless exp r1");
        run(kernel<kBranchlessExp, 2>, g2, "V1 branchless exp r2");
        run(kernel<kBranchlessExp, 4>, g4, "V1 branchless exp r4");
        run(kernel<kBranchlessExpMarkstein, 1>, g1, "V2 V1 + markstein y/s r1");
        run(kernel<kBranchlessExpMarkstein, 2>, g2, "V2 V1 + markstein y/s r2");
        run(kernel<kBranchlessExpMarkstein, 4>, g4, "V2 V1 + markstein y/s r4");
        run(kernel<kHwExpFastDiv, 2>, g2, "V3 hw exp + fast div (inexact) r2");
        run(kernel<kNoAct, 2>, g2, "V4 g*u only (inexact) r2");
        for (int b = 0; b < nbuf; ++b) { cudaFree(ins[b]); cudaFree(outs[b]); cudaFree(scs[b]); }
        cudaFree(src); cudaFree(dst);
    }
    return 0;
}
