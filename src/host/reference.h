// The host reference implementation of SPEC.md: the oracle every GPU kernel is tested against, and the
// backend of a handle created with FQ_BACKEND_HOST. Readable before fast.
#pragma once

#include "../common/op_config.h"

namespace fq::host {

// Runs the fused activation + quantization of `c` on host memory. `c` is validated by src/api.
void quantize(const OpConfig& c, const void* input, void* output, void* scales);

}  // namespace fq::host
