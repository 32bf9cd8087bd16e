// Data for the grouped GEMM tests that host and device code both generate: a counter-based hash of fp8 e4m3
// bytes (never a NaN code), so a test can fill gigabytes on the device and recompute any row on the host.
// The device helpers live in test_gpu_grouped_gemm_kernels.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/hd.h"

namespace fqt {

// splitmix64's finalizer.
FQ_HD uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Byte `i` of the stream `seed`: any e4m3fn code but the NaNs 0x7F / 0xFF (those become 0x7E / 0xFE).
FQ_HD uint8_t hash_fp8(uint64_t i, uint64_t seed) {
    uint8_t b = uint8_t(mix64(i ^ (seed * 0xD1B54A32D192ED03ull)) >> 24);
    if ((b & 0x7F) == 0x7F) b = uint8_t(b - 1);
    return b;
}

// Enqueued on `stream`: p[i] = hash_fp8(i, seed) for i < n.
cudaError_t fill_hash_fp8(uint8_t* p, size_t n, uint64_t seed, cudaStream_t stream);
// Enqueued on `stream`: one thread that spins for `ns` nanoseconds of the GPU's global timer.
cudaError_t launch_sleep(cudaStream_t stream, uint64_t ns);

}  // namespace fqt
