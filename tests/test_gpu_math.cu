// Device arithmetic against the host (docs/spec.md §0): the portable exp / erf / tanh give the same bits when
// compiled by nvcc and run on the GPU as on the host, and the kernels' fast SiLU and SwiGLU-OAI gate equal
// fq::silu and fq::swiglu_gate (IEEE division) for every bf16 and fp16 input they claim. Part of fq_gpu_tests (skipped without a GPU).
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <ios>
#include <vector>

#include "common/activation.h"
#include "kernels/silu_fast.cuh"

namespace {

#define CUDA_CHECK(x) REQUIRE_MESSAGE((x) == cudaSuccess, #x)

enum class Fn { Exp, Erf, Tanh };

// out[i] = f(bits_float(first + i * stride)).
__global__ void portable_on_device(Fn fn, uint32_t first, uint32_t stride, uint32_t n, float* out) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float x = fq::bits_float(first + i * stride);
    out[i] = fn == Fn::Exp ? fq::portable_exp(x) : fn == Fn::Erf ? fq::portable_erf(x) : fq::portable_tanh(x);
}

// For each 16-bit input: the kernels' fast SiLU (silu_inside), whether the kernels' bit test
// (silu_inside_all, here on 8 copies of the input) sends it there, and the IEEE-division SiLU.
template <fq::InType kIn>
__global__ void silu_both_ways(float* fast, float* exact, uint8_t* outside_flags) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 65536) return;
    const float x = fq::load_input(kIn, uint16_t(i));
    const uint32_t pair = i * 0x10001u;
    const bool inside = fq::cuda::silu_inside_all<kIn>(fq::cuda::max_bits2(make_uint4(pair, pair, pair, pair), 0x7FFF7FFFu));
    fast[i] = inside ? fq::cuda::silu_inside(x) : 0.0f;
    exact[i] = fq::silu(x);
    outside_flags[i] = !inside;
}

// The same for SwiGLU-OAI under parameters p, one input x as both gate and up: fast (where the kernels' range
// test on 8 copies of the input claims it), exact, and the claim.
template <fq::InType kIn>
__global__ void swiglu_both_ways(fq::SwigluParams p, float* fast, float* exact, uint8_t* outside_flags) {
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 65536) return;
    const float x = fq::load_input(kIn, uint16_t(i));
    const uint32_t pair = i * 0x10001u;
    const float x_max = fq::cuda::max_magnitude<kIn>(fq::cuda::max_bits2(make_uint4(pair, pair, pair, pair), 0x7FFF7FFFu));
    const bool inside = fq::cuda::swiglu_inside_all(x_max, x_max, p);
    fast[i] = inside ? fq::cuda::swiglu_gate_inside(x, p) * fq::cuda::swiglu_up_inside(x, p) : 0.0f;
    exact[i] = fq::swiglu_oai(x, x, p);
    outside_flags[i] = !inside;
}

template <class T>
struct Device {
    T* p = nullptr;
    explicit Device(size_t n) { CUDA_CHECK(cudaMalloc(&p, n * sizeof(T))); }
    ~Device() { cudaFree(p); }
    std::vector<T> get(size_t n) const {
        std::vector<T> v(n);
        CUDA_CHECK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
        return v;
    }
};

uint32_t bits(float f) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
}

}  // namespace

TEST_CASE("portable exp / erf / tanh: device bits equal host bits (every 61st float bit pattern)") {
    // 61 is odd and prime: the sample visits every exponent and a spread of mantissas, 70M inputs.
    constexpr uint32_t kStride = 61, kN = uint32_t((uint64_t(1) << 32) / kStride);
    Device<float> out(kN);
    for (Fn fn : {Fn::Exp, Fn::Erf, Fn::Tanh}) {
        portable_on_device<<<(kN + 255) / 256, 256>>>(fn, 0u, kStride, kN, out.p);
        CUDA_CHECK(cudaGetLastError());
        const std::vector<float> device = out.get(kN);
        uint64_t differ = 0;
        uint32_t first_x = 0, first_host = 0, first_device = 0;
        for (uint32_t i = 0; i < kN; ++i) {
            const float x = fq::bits_float(i * kStride);
            const float host = fn == Fn::Exp ? fq::portable_exp(x) : fn == Fn::Erf ? fq::portable_erf(x) : fq::portable_tanh(x);
            if (bits(host) != bits(device[i]) && differ++ == 0)
                first_x = i * kStride, first_host = bits(host), first_device = bits(device[i]);
        }
        INFO("function " << int(fn) << ": first difference at x bits 0x" << std::hex << first_x << " host 0x"
                         << first_host << " device 0x" << first_device);
        CHECK(differ == 0);
    }
}

TEST_CASE("fast SiLU equals the IEEE-division SiLU for every bf16 and fp16 input it claims") {
    Device<float> fast(65536), exact(65536);
    Device<uint8_t> outside(65536);
    for (bool bf16 : {true, false}) {
        if (bf16) silu_both_ways<fq::InType::Bf16><<<256, 256>>>(fast.p, exact.p, outside.p);
        else silu_both_ways<fq::InType::Fp16><<<256, 256>>>(fast.p, exact.p, outside.p);
        CUDA_CHECK(cudaGetLastError());
        const auto f = fast.get(65536), e = exact.get(65536);
        const auto o = outside.get(65536);
        int claimed = 0, differ = 0, host_differ = 0, misrouted = 0;
        for (uint32_t i = 0; i < 65536; ++i) {
            const float x = fq::load_input(bf16 ? fq::InType::Bf16 : fq::InType::Fp16, uint16_t(i));
            // Device IEEE silu == host silu; a NaN stays a NaN (the device may return another payload; the
            // encoders map every NaN to one code).
            const float h = fq::silu(x);
            host_differ += !(bits(e[i]) == bits(h) || (e[i] != e[i] && h != h));
            misrouted += !o[i] != (std::fabs(x) <= fq::cuda::kSiluInsideLimit);  // the bit test is |x| <= 86.5
            if (o[i]) continue;
            ++claimed;
            if (bits(f[i]) != bits(e[i])) {
                if (differ++ < 5)
                    MESSAGE("input 0x" << std::hex << i << ": fast 0x" << bits(f[i]) << " exact 0x" << bits(e[i]));
            }
        }
        INFO((bf16 ? "bf16" : "fp16") << ": " << claimed << " inputs on the fast path");
        CHECK(claimed > 30000);  // every |x| <= 86.5: the range test must not send ordinary inputs away
        CHECK(misrouted == 0);
        CHECK(differ == 0);
        CHECK(host_differ == 0);
    }
}

TEST_CASE("fast SwiGLU-OAI equals the IEEE-division SwiGLU-OAI for every bf16 and fp16 input it claims") {
    Device<float> fast(65536), exact(65536);
    Device<uint8_t> outside(65536);
    // gpt-oss's parameters; a steep negative alpha; no limit; a tiny alpha; a negative limit (never claimed:
    // the clamp's bounds cross).
    const struct {
        fq::SwigluParams p;
        int min_claimed;
    } cases[] = {{{1.702f, 1.0f, 7.0f}, 30000}, {{-3.0f, 0.5f, 2.0f}, 30000}, {{1.702f, 1.0f, INFINITY}, 30000},
                 {{1e-3f, 0.0f, 7.0f}, 30000}, {{1.702f, 1.0f, -2.0f}, 0}};
    for (const auto& c : cases) {
        const fq::SwigluParams& p = c.p;
        for (bool bf16 : {true, false}) {
            const fq::InType t = bf16 ? fq::InType::Bf16 : fq::InType::Fp16;
            if (bf16) swiglu_both_ways<fq::InType::Bf16><<<256, 256>>>(p, fast.p, exact.p, outside.p);
            else swiglu_both_ways<fq::InType::Fp16><<<256, 256>>>(p, fast.p, exact.p, outside.p);
            CUDA_CHECK(cudaGetLastError());
            const auto f = fast.get(65536), e = exact.get(65536);
            const auto o = outside.get(65536);
            int claimed = 0, differ = 0, host_differ = 0, wrongly_claimed = 0;
            for (uint32_t i = 0; i < 65536; ++i) {
                const float x = fq::load_input(t, uint16_t(i));
                const float h = fq::swiglu_oai(x, x, p);
                host_differ += !(bits(e[i]) == bits(h) || (e[i] != e[i] && h != h));
                if (o[i]) continue;
                ++claimed;
                wrongly_claimed += !std::isfinite(x) || !(p.limit > 0.0f);
                if (bits(f[i]) != bits(e[i]) && differ++ < 5)
                    MESSAGE("input 0x" << std::hex << i << ": fast 0x" << bits(f[i]) << " exact 0x" << bits(e[i]));
            }
            INFO((bf16 ? "bf16" : "fp16") << ", alpha " << p.alpha << ", limit " << p.limit << ": " << claimed
                                          << " inputs on the fast path");
            CHECK(claimed >= c.min_claimed);
            CHECK(wrongly_claimed == 0);
            CHECK(differ == 0);
            CHECK(host_differ == 0);
        }
    }
}
