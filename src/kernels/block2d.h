// The launches of the BLOCK_2D kernels (block2d.cu), one per skeleton of the dispatch table.
#pragma once

#include "../dispatch/registry.h"

namespace fq::block2d {

// block2d_vec: weights with 16-byte IO; hardware fp8 conversion and PDL as the entry's family compiles them.
fqStatus_t launch_vec(const LaunchArgs& a, bool hw_cvt, bool pdl);

// block2d_generic: any activation and gate layout, element IO.
fqStatus_t launch_generic(const LaunchArgs& a);

}  // namespace fq::block2d
