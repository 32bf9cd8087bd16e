// The one-call entry points (fqQuantizeSimple, and fqQuantizeDLPack in dlpack_api.cpp): a problem given as plain
// arguments becomes the descriptor and layouts the descriptor API would hold, checked by the same code in the
// same order, and runs through fqQuantize's own path, so statuses, messages and bytes are fqQuantize's.
#pragma once

#include <cstdint>

#include "fusedquant/fusedquant.h"

namespace fq {

// What a one-call entry point takes besides the buffers.
struct OneCallProblem {
    int32_t activation, gate_layout, scheme, input_type, output_type, scale_layout;
    int64_t in_rows, in_cols, in_ld;     // the input layout: elements
    int64_t out_rows, out_cols, out_ld;  // the output layout: quantized values (FP4: two a byte)
};

// The descriptor route, as one call: the descriptor's attributes set in the order activation, gate layout,
// scheme, scale type (the scheme's own), output type, scale layout (fqQuantDescSetAttribute's checks); the output
// then the input layout created (fqTensorLayoutCreate's); then fqQuantize on them.
fqStatus_t quantize_one_call(fqHandle_t handle, const OneCallProblem& p, const void* input, void* output,
                             void* scales, size_t scales_bytes, void* workspace, size_t workspace_size,
                             fqStream_t stream);

}  // namespace fq
