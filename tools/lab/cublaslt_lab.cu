// Lab: cuBLASLt's block-scaled FP8 GEMM (the pipeline's GEMM, VEC128_32F activations x BLK128x128_32F weights)
// on one dense shape, for Nsight Compute: which kernel cuBLASLt picks (tile, cluster, registers, shared memory)
// and how it spends its issue slots, beside the grouped GEMM's profile (tools/lab/ncu_ab.sh).
// Build and run (on the device):
//   nvcc -O3 -std=c++17 -I examples -gencode arch=compute_90a,code=sm_90a tools/lab/cublaslt_lab.cu -lcublasLt \
//        -o build-lab/cublaslt_lab
//   ncu --clock-control none -k regex:nvjet -c 1 ... build-lab/cublaslt_lab [M] [N] [K] [reps]
// (cuBLASLt 13.1 names its kernel nvjet_sm90_...; docs/perf.md session 21)
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cublaslt_fp8_gemm.h"

#define CK(x) do { auto e_ = (x); if (e_) { std::printf("error %d at line %d\n", int(e_), __LINE__); return 1; } } while (0)

int main(int argc, char** argv) {
    const int64_t m = argc > 1 ? atoll(argv[1]) : 16384, n = argc > 2 ? atoll(argv[2]) : 4096, k = argc > 3 ? atoll(argv[3]) : 7168;
    const int reps = argc > 4 ? atoi(argv[4]) : 10;
    // Weights [n, k] as cuBLASLt's A (BLK128x128), activations [m, k] as B (VEC128): D is [m, n] row-major.
    std::vector<uint8_t> host(size_t(std::max(m, n) * k));
    for (size_t i = 0; i < host.size(); ++i) { const uint8_t v = uint8_t(i * 2654435761u >> 24); host[i] = (v & 0x7F) == 0x7F ? v ^ 1 : v; }
    void *w, *x, *d, *ws;
    float *sw, *sx;
    const size_t ws_bytes = 32u << 20;
    CK(cudaMalloc(&w, size_t(n * k))); CK(cudaMalloc(&x, size_t(m * k))); CK(cudaMalloc(&d, size_t(m * n) * 2));
    CK(cudaMalloc(&ws, ws_bytes));
    CK(cudaMalloc(&sw, lt_blk128_scale_floats(n, k) * 4)); CK(cudaMalloc(&sx, lt_vec128_scale_floats(m, k) * 4));
    CK(cudaMemcpy(w, host.data(), size_t(n * k), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(x, host.data(), size_t(m * k), cudaMemcpyHostToDevice));
    std::vector<float> s(std::max(lt_blk128_scale_floats(n, k), lt_vec128_scale_floats(m, k)), 1.0f / 448.0f);
    CK(cudaMemcpy(sw, s.data(), lt_blk128_scale_floats(n, k) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(sx, s.data(), lt_vec128_scale_floats(m, k) * 4, cudaMemcpyHostToDevice));
    cublasLtHandle_t lt;
    CK(cublasLtCreate(&lt));
    Fp8BlockScaledGemm gemm;
    CK(gemm.init(lt, n, m, k, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, ws_bytes));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0); cudaEventCreate(&e1);
    CK(gemm.run(w, sw, x, sx, d, ws, nullptr));
    cudaEventRecord(e0);
    for (int r = 0; r < reps; ++r) CK(gemm.run(w, sw, x, sx, d, ws, nullptr));
    cudaEventRecord(e1);
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    const double us = 1e3 * ms / reps;
    std::printf("cuBLASLt M=%lld N=%lld K=%lld: %.1f us (back to back, mean of %d), %.0f TFLOP/s\n", (long long)m,
                (long long)n, (long long)k, us, reps, 2.0 * m * n * k / us * 1e-6);
    return 0;
}
