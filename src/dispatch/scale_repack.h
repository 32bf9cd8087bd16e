// fqScaleRepack below the API: one implementation per backend, chosen by the handle's backend.
#pragma once

#include "../common/scale_repack.h"
#include "../common/types.h"
#include "fusedquant/fusedquant.h"

namespace fq {

// Enqueued on `stream` (src/kernels/scale_repack.cu; NOT_SUPPORTED in a build without CUDA).
fqStatus_t cuda_scale_repack(const RepackPlan& p, const void* src, void* dst, void* stream);

// Runs `p` (validated by src/api) on `backend`.
fqStatus_t run_scale_repack(Backend backend, const RepackPlan& p, const void* src, void* dst, void* stream);

}  // namespace fq
