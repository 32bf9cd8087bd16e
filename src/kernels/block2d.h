// The launches of the BLOCK_2D kernels (block2d.cu), one per skeleton of the dispatch table.
#pragma once

#include "../dispatch/registry.h"
#include "arch_policy.cuh"

namespace fq::block2d {

// block2d_vec: weights with 16-byte IO, as the entry family's policy Arch compiles them (Sm90Vec, Sm89Vec, Sm80Vec).
template <class Arch>
fqStatus_t launch_vec(const LaunchArgs& a);

// block2d_generic: any activation and gate layout, element IO.
fqStatus_t launch_generic(const LaunchArgs& a);

}  // namespace fq::block2d
