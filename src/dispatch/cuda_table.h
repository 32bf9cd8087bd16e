// The CUDA entries of the dispatch table (cuda_table.cpp) and the one hook through which they launch.
#pragma once

#include "registry.h"

namespace fq {

// Launches exactly the kernel `form` names for a.cfg (src/kernels/variants.cu; src/dispatch/no_cuda.cpp in a
// build without CUDA). It chooses nothing: the dispatcher has chosen.
fqStatus_t launch_cuda_kernel(const KernelForm& form, const LaunchArgs& a);

}  // namespace fq
