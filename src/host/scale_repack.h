// The host backend of fqScaleRepack (docs/spec.md §4 for the layouts): the oracle the CUDA kernel is tested against.
#pragma once

#include "../common/scale_repack.h"

namespace fq::host {

// Synchronous, on host memory: every destination scale of `p`, in storage order, from repack_source().
void scale_repack(const RepackPlan& p, const void* src, void* dst);

}  // namespace fq::host
