// A cuBLASLt FP8 GEMM with block scales, the consumer whose layout fq writes (docs/spec.md §4), shared by
// examples/mlp_cublaslt.cu and tests/test_gpu_cublaslt.cpp.
//
//   D (m x n, column-major, bf16, ld m) = sum_k deq(A)[i, k] * deq(B)[j, k]
//
// A is [m, K] and B is [n, K], both row-major FP8 e4m3 (K contiguous): cuBLASLt's "TN" form, the only one
// it runs for FP8, with A passed as K x m under TRANSA = T and B as K x n. The scales are dequantization
// scales (x ~ q * s, fq's fp32 scales; TransformerEngine's scale_inv), alpha stays 1. Scale modes, per operand
// of `rows` rows (m for A, n for B) and ceil(K/128) k-blocks:
//   CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F     fp32 scale of (row r, k-block kb) at kb * round_up(rows, 4) + r:
//                                               rows contiguous ("outer-dim major"). fq: PER_GROUP 128 in
//                                               COL_MAJOR_TMA (= COL_MAJOR when rows % 4 == 0).
//   CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F fp32 scale of (row-block rb, kb) at rb * round_up(ceil(K/128), 4) + kb:
//                                               k-blocks contiguous, like the K-contiguous data (DeepSeek-V3's
//                                               weight_scale_inv [ceil(rows/128), ceil(K/128)] row-major, padded).
//                                               fq: BLOCK_2D in ROW_MAJOR, re-strided by lt_pad_blk128_scales
//                                               when ceil(K/128) % 4 != 0. NOT COL_MAJOR (kb * ceil(rows/128) + rb),
//                                               which the first version of this header and docs/spec.md §4 claimed: that
//                                               reading gave an O(1) error on the H100 for every shape.
// The BLK128x128 layout is the one TransformerEngine (Float8BlockQuantizer, 2-D: [ceil(M/128),
// round_up(ceil(K/128), 4)]) and PyTorch's scaled_mm (BlockWise128x128) hand to cuBLASLt. It also explains
// the H100 run of the COL_MAJOR version exactly: a host model of cuBLASLt reading fq's COL_MAJOR buffers this
// way gives 1.29022, 1.15229, 1.35512 (negative control 1.35011), the H100 gave 1.29019, 1.15227, 1.3551
// (1.35007); with the k-block stride unpadded (3 for K = 384) the third would have been 0.309.
// tests/test_gpu_cublaslt.cpp checks it on the device and, on a failure, scores candidate layouts.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

// cublasGetStatusString lives in libcublas; this keeps the programs on libcublasLt alone.
inline const char* lt_status_name(cublasStatus_t s) {
    switch (s) {
        case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
        case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
        case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
        case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
        case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
        case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
        case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
        default: return "cublasStatus_t (unknown value)";
    }
}

// Leading dimension (in floats) of the scales cuBLASLt reads for an operand of `rows` rows and K = `k`.
inline int64_t lt_vec128_scale_ld(int64_t rows) { return (rows + 3) / 4 * 4; }
inline int64_t lt_blk128_scale_ld(int64_t k) { return ((k + 127) / 128 + 3) / 4 * 4; }
// Floats of an operand's scale buffer as cuBLASLt reads it (padding included).
inline size_t lt_vec128_scale_floats(int64_t rows, int64_t k) { return size_t(lt_vec128_scale_ld(rows) * ((k + 127) / 128)); }
inline size_t lt_blk128_scale_floats(int64_t rows, int64_t k) { return size_t(((rows + 127) / 128) * lt_blk128_scale_ld(k)); }

// fq's BLOCK_2D ROW_MAJOR scales ([ceil(rows/128), ceil(K/128)], row stride ceil(K/128)) -> the BLK128x128_32F
// buffer (row stride round_up(ceil(K/128), 4), padding zeroed). dst and src may not overlap; when
// ceil(K/128) is a multiple of 4 the two layouts are the same bytes and a plain copy (or none) does.
inline cudaError_t lt_pad_blk128_scales(float* dst, const float* src, int64_t rows, int64_t k, cudaStream_t stream) {
    const int64_t kb = (k + 127) / 128, rb = (rows + 127) / 128, ld = lt_blk128_scale_ld(k);
    cudaError_t e = cudaMemsetAsync(dst, 0, size_t(rb * ld) * sizeof(float), stream);
    if (e != cudaSuccess || rb == 0 || kb == 0) return e;
    return cudaMemcpy2DAsync(dst, size_t(ld) * sizeof(float), src, size_t(kb) * sizeof(float), size_t(kb) * sizeof(float),
                             size_t(rb), cudaMemcpyDeviceToDevice, stream);
}

class Fp8BlockScaledGemm {
public:
    Fp8BlockScaledGemm() = default;
    Fp8BlockScaledGemm(const Fp8BlockScaledGemm&) = delete;
    Fp8BlockScaledGemm& operator=(const Fp8BlockScaledGemm&) = delete;
    ~Fp8BlockScaledGemm() {
        if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
        for (cublasLtMatrixLayout_t l : {a_, b_, d_})
            if (l) cublasLtMatrixLayoutDestroy(l);
        if (op_) cublasLtMatmulDescDestroy(op_);
    }

    // Describes the problem and asks cuBLASLt for an algorithm. CUBLAS_STATUS_NOT_SUPPORTED: none runs it.
    cublasStatus_t init(cublasLtHandle_t lt, int64_t m, int64_t n, int64_t k, int32_t a_scale_mode,
                        int32_t b_scale_mode, size_t workspace_bytes) {
        lt_ = lt;
        workspace_bytes_ = workspace_bytes;
        cublasStatus_t s;
        if ((s = cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F))) return s;
        const int32_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        if ((s = set(CUBLASLT_MATMUL_DESC_TRANSA, ta)) || (s = set(CUBLASLT_MATMUL_DESC_TRANSB, tb)) ||
            (s = set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, a_scale_mode)) ||
            (s = set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, b_scale_mode)))
            return s;
        if ((s = cublasLtMatrixLayoutCreate(&a_, CUDA_R_8F_E4M3, uint64_t(k), uint64_t(m), k)) ||
            (s = cublasLtMatrixLayoutCreate(&b_, CUDA_R_8F_E4M3, uint64_t(k), uint64_t(n), k)) ||
            (s = cublasLtMatrixLayoutCreate(&d_, CUDA_R_16BF, uint64_t(m), uint64_t(n), m)))
            return s;
        if ((s = cublasLtMatmulPreferenceCreate(&pref_))) return s;
        if ((s = cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_,
                                                      sizeof workspace_bytes_)))
            return s;
        // The scale pointers are part of the problem cuBLASLt checks: set placeholders before the query.
        const void* any = reinterpret_cast<const void*>(uintptr_t(256));
        if ((s = set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, any)) || (s = set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, any)))
            return s;
        int found = 0;
        cublasLtMatmulHeuristicResult_t result{};
        s = cublasLtMatmulAlgoGetHeuristic(lt_, op_, a_, b_, d_, d_, pref_, 1, &result, &found);
        if (s) return s;
        if (found == 0) return CUBLAS_STATUS_NOT_SUPPORTED;
        algo_ = result.algo;
        return CUBLAS_STATUS_SUCCESS;
    }

    // Enqueues D = A B^T with the given operands and fp32 scale buffers (device pointers, laid out as the
    // scale modes given to init read them: see the top of this file).
    cublasStatus_t run(const void* a, const float* a_scales, const void* b, const float* b_scales, void* d,
                       void* workspace, cudaStream_t stream) {
        if (!op_ || !a_scales || !b_scales) return CUBLAS_STATUS_INVALID_VALUE;  // NULL would mean "scale 1"
        cublasStatus_t s;
        if ((s = set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(a_scales))) ||
            (s = set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(b_scales))))
            return s;
        const float alpha = 1.0f, beta = 0.0f;
        return cublasLtMatmul(lt_, op_, &alpha, a, a_, b, b_, &beta, d, d_, d, d_, &algo_, workspace, workspace_bytes_,
                              stream);
    }

private:
    template <class T>
    cublasStatus_t set(cublasLtMatmulDescAttributes_t attr, const T& v) {
        return cublasLtMatmulDescSetAttribute(op_, attr, &v, sizeof v);
    }

    cublasLtHandle_t lt_ = nullptr;
    cublasLtMatmulDesc_t op_ = nullptr;
    cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
    cublasLtMatmulPreference_t pref_ = nullptr;
    cublasLtMatmulAlgo_t algo_{};
    size_t workspace_bytes_ = 0;
};
