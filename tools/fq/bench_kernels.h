// The device work of `fq bench` besides the library's calls: its inputs and its reference copy kernel.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace fqtool {

// `count` bf16 (or fp16) values at p, about normal(0, 1) (Box-Muller over a counter hash of `seed` and the
// index: the same values for the same seed on every run and device), rounded to nearest even.
void fill_normal(uint16_t* p, size_t count, bool bf16, uint64_t seed, cudaStream_t stream);

// A plain SM copy of `bytes` from src to dst: 16-byte loads and stores, grid-stride (the tail byte by byte);
// the third reference copy of fq bench beside cudaMemcpyAsync.
void sm_copy(void* dst, const void* src, size_t bytes, cudaStream_t stream);

}  // namespace fqtool
