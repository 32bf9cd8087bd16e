// fqGroupedGemm below the API: one implementation per backend, chosen by the handle's backend. The CUDA path
// sits behind a CUDA-free interface: which problems the sm_90a kernel runs, and its launch
// (src/kernels/gemm/grouped_gemm_sm90.cu; src/dispatch/no_cuda.cpp in a build without CUDA).
#pragma once

#include <string>

#include "../common/grouped_gemm.h"
#include "fusedquant/fusedquant.h"

namespace fq {

// Why the CUDA grouped GEMM cannot run `c` on a device of compute capability `arch` (x10), naming the
// argument or attribute; "" when it can. The status of a refusal is NOT_SUPPORTED.
std::string grouped_gemm_cuda_refusal(const GroupedGemmConfig& c, int arch);

// Enqueues the grouped GEMM on `stream` (a cudaStream_t). `c` passed grouped_gemm_cuda_refusal. Fails with
// NOT_SUPPORTED when the library holds no sm_90a code, CUDA_ERROR when a launch fails.
fqStatus_t run_grouped_gemm_cuda(const GroupedGemmConfig& c, void* stream, int sm_count);

// Runs `c` (validated by src/api) on `backend`: on CUDA (a device of compute capability `arch` x10 with
// `sm_count` multiprocessors) enqueued on `stream`, or NOT_SUPPORTED with grouped_gemm_cuda_refusal's sentence;
// on the host synchronously, refusing what fqQuantize's host variant refuses.
fqStatus_t run_grouped_gemm(Backend backend, int arch, int sm_count, const GroupedGemmConfig& c, void* stream);

}  // namespace fq
