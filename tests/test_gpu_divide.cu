// divide.cuh's branch-free division must equal IEEE division bit for bit: checked on the device over
// random operand bit patterns across the whole float range (specials included) and over the operand
// ranges the kernels meet (silu denominators in [1, 2^128), scales in [2^-30, 2^10]).
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <cstdio>

#include "kernels/divide.cuh"

namespace {

__device__ uint32_t mix(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
    return uint32_t(x);
}

// mode 0: any bit patterns; 1: kernel-like (b in [1, 2^128) or [2^-30, 2^10], a moderate or tiny)
__global__ void compare(uint64_t seed, int mode, unsigned long long* mismatches, unsigned long long* fallbacks) {
    const uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    float a[8], b[8], q[8], qs[8];
    for (int i = 0; i < 8; ++i) {
        uint32_t ua = mix(seed ^ (t * 16 + 2 * i)), ub = mix(seed ^ (t * 16 + 2 * i + 1) ^ 0x9E3779B97F4A7C15ULL);
        if (mode == 1) {
            ua = (ua & 0x807FFFFFu) | ((60u + (ua >> 23) % 140u) << 23);  // |a| in [2^-67, 2^73)
            ub = (ub & 0x007FFFFFu) | ((ub & 1u) ? (127u + (ub >> 23) % 127u) << 23 : (97u + (ub >> 23) % 40u) << 23);
        }
        a[i] = __uint_as_float(ua);
        b[i] = __uint_as_float(ub);
    }
    fq::cuda::divide8(a, b, q);
    fq::cuda::divide8_by(a, b[0], qs);
    bool fell_back = false;
    for (int i = 0; i < 8; ++i) {
        const float want = a[i] / b[i], want_s = a[i] / b[0];
        const bool same = __float_as_uint(q[i]) == __float_as_uint(want) || (want != want && q[i] != q[i]);
        const bool same_s = __float_as_uint(qs[i]) == __float_as_uint(want_s) || (want_s != want_s && qs[i] != qs[i]);
        if (!same || !same_s) atomicAdd(mismatches, 1ull);
        fell_back |= !fq::cuda::fast_division_exact(a[i], b[i]);
    }
    if (fell_back) atomicAdd(fallbacks, 1ull);
}

}  // namespace

TEST_CASE("branch-free divide8 equals IEEE division bit for bit over ~10^9 random operand pairs") {
    unsigned long long* counters;
    REQUIRE(cudaMallocManaged(&counters, 4 * sizeof(unsigned long long)) == cudaSuccess);
    for (int mode = 0; mode < 2; ++mode) {
        counters[0] = counters[1] = 0;
        const int blocks = 1 << 16, threads = 256, rounds = 4;
        for (int r = 0; r < rounds; ++r) compare<<<blocks, threads>>>(0x1234567ull * (r + 1) + mode, mode, counters, counters + 1);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        const double pairs = double(blocks) * threads * rounds * 8 * 2;
        MESSAGE("mode ", mode, ": ", pairs, " divisions, ", counters[0], " mismatches, ", counters[1],
                " groups of 8 took the IEEE fallback");
        CHECK(counters[0] == 0);
    }
    cudaFree(counters);
}
