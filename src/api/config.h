// Turning the caller's descriptor and layouts into one validated OpConfig (docs/spec.md §6). Every rule broken
// becomes a specific status and a sentence naming the argument and the rule.
#pragma once

#include "../common/op_config.h"
#include "objects.h"

namespace fq {

// Bytes of `elements` elements of fqDataType `dtype` (FP4: two per byte), or -1 when they overflow int64_t.
int64_t layout_bytes(int32_t dtype, int64_t elements);

// The scale type scheme `s` needs (docs/spec.md §6): E8M0 for MXFP8/MXFP4, E4M3FN for NVFP4, FP32 for the others
// (which also take E8M0 with power-of-two rounding, when asked for).
DType required_scale_type(Scheme s);

// Validates one tensor layout on its own: known type, rows >= 0, cols > 0, ld >= cols (even for FP4), a row
// stride whose bytes fit in 64 bits whatever the rows, and a byte extent (rows x ld elements) that fits too.
// `arg` starts the message.
fqStatus_t check_layout(const char* arg, const fqTensorLayoutOpaque& l);

// Validates the quantization and MoE parts of `d` for an output of rows x cols and fills the scheme, quant
// parameters, MoE facts, scale batch and the scale geometry of `which`: `c->scales` for FQ_OUTPUT_ROWWISE,
// `c->col_scales` (and `c->col_block`) for FQ_OUTPUT_COLUMNWISE. Needs no pointer.
fqStatus_t resolve_quantization(const fqQuantDescOpaque& d, int64_t rows, int64_t cols, int32_t which,
                                OpConfig* c);

// One fact (fqScaleInfo `info`) about the `which` scale buffer of `d` for an output of rows x cols: what
// fqGetScaleBufferInfo returns, and fqGroupedGemmGetScaleBufferInfo for the epilogue as the GEMM runs it.
fqStatus_t scale_buffer_fact(const fqQuantDescOpaque& d, int64_t rows, int64_t cols, int32_t which, int32_t info,
                             int64_t* value);

// Validates everything fqQuantize needs except buffer pointers and fills `c`.
fqStatus_t build_config(const fqContext& h, const fqQuantDescOpaque& d, const fqTensorLayoutOpaque& in,
                        const fqTensorLayoutOpaque& out, OpConfig* c);

}  // namespace fq
