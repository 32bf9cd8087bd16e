// The host reference implementation of docs/spec.md: the oracle every GPU kernel is tested against, and the
// backend of a handle created with FQ_BACKEND_HOST. Readable before fast.
#pragma once

#include <cstdint>
#include <vector>

#include "../common/op_config.h"

namespace fq::host {

// Runs the fused activation + quantization of `c` on host memory. `c` is validated by src/api.
void quantize(const OpConfig& c, const void* input, void* output, void* scales);

// The expert of every row of the 2-D layouts of `c` (docs/spec.md §5), -1 for a row no expert owns (never read nor
// written). Experts are applied in order, so with decreasing offsets (a caller error) a row claimed twice
// belongs to the later expert. Without a MoE layout every row belongs to expert 0.
std::vector<int32_t> expert_of_rows(const OpConfig& c);

}  // namespace fq::host
