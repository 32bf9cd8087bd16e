// A cuBLASLt FP8 GEMM with block scales, the consumer whose layout fq writes (SPEC §4), shared by
// examples/mlp_cublaslt.cu and tests/test_gpu_cublaslt.cpp.
//
//   D (m x n, column-major, bf16, ld m) = sum_k deq(A)[i, k] * deq(B)[j, k]
//
// A is [m, K] and B is [n, K], both row-major FP8 e4m3 (K contiguous): cuBLASLt's "TN" form, the only one
// it runs for FP8, with A passed as K x m under TRANSA = T and B as K x n. Scale modes, per operand:
//   CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F   fp32 scale of (row r, k-block kb) at kb * rows + r
//                                             (fq: PER_GROUP 128, COL_MAJOR)
//   CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F  fp32 scale of (row-block rb, kb) at kb * ceil(rows/128) + rb
//                                             (fq: BLOCK_2D, COL_MAJOR)
// Measured on the H100 with cuBLASLt 13.1 for A = VEC128 and B = BLK128x128 (SPEC §4).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

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

    // Enqueues D = A B^T with the given operands and fp32 scale buffers.
    cublasStatus_t run(const void* a, const float* a_scales, const void* b, const float* b_scales, void* d,
                       void* workspace, cudaStream_t stream) {
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
