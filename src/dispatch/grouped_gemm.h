// fqGroupedGemm below the API: one implementation per backend, chosen by the handle's backend. The CUDA path
// sits behind a CUDA-free interface: which problems the sm_90a kernels run, which form runs one (gemm_forms.h),
// and the kernels' launch (src/kernels/gemm/; src/dispatch/no_cuda.cpp in a build without CUDA).
#pragma once

#include "../common/grouped_gemm.h"
#include "fusedquant/fusedquant.h"
#include "gemm_forms.h"

namespace fq {

// The kernel layer's side of the CUDA path (src/kernels/gemm/grouped_gemm_sm90.cu):
// whether the library holds the kernels' sm_90a code;
bool grouped_gemm_cuda_built();
// gives the Persistent, SplitK and Segments kernels of `pairing` their shared memory on the current device
// (CUDA_ERROR naming the call when it fails);
fqStatus_t prepare_grouped_gemm_cuda(GemmPairing pairing);
// GemmOccupancy on a device of `sm_count` SMs: clusters of `size` CTAs of `kernel` (of `pairing`) the device
// holds at once; RowPair, which prepare_grouped_gemm_cuda leaves out, -1 when it cannot be given its shared memory;
int grouped_gemm_cuda_occupancy(GemmPairing pairing, GemmKernel kernel, int size, int sm_count);
// enqueues `form` of problem `c` (`p` its facts; `c` passed grouped_gemm_cuda_refusal, m > 0) on `stream` (a
// cudaStream_t), CUDA_ERROR when the tensor maps or the launch fail.
fqStatus_t run_grouped_gemm_cuda(const GroupedGemmConfig& c, const GemmProblem& p, const GemmForm& form, void* stream);

// Runs `c` (validated by src/api) on `backend`: on CUDA (a device of compute capability `arch` x10 with
// `sm_count` multiprocessors) enqueued on `stream`, or NOT_SUPPORTED with grouped_gemm_cuda_refusal's sentence;
// on the host synchronously, refusing what fqQuantize's host variant refuses.
fqStatus_t run_grouped_gemm(Backend backend, int arch, int sm_count, const GroupedGemmConfig& c, void* stream);

}  // namespace fq
