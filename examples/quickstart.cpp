// quickstart.cpp: examples/quickstart.c through the C++17 header fusedquant.hpp, on the host backend.
//
// Quantizes the gate-up output of an MLP (x = [gate | up], bf16, 64 tokens x 2*1024) with SiLU-and-mul fused
// with FP8 e4m3 per-group-128 quantization, scales column-major for a Hopper GEMM, and prints what ran, a few
// values decoded back and the worst error; then shows the exception a refused call throws.
// On a CUDA handle (fq::Handle(FQ_BACKEND_CUDA)) the same calls take device pointers and a stream:
// h.quantize(d, in, x_dev, out, q_dev, scales_dev, (fqStream_t)stream).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "fusedquant/fusedquant.hpp"

namespace {

uint16_t to_bf16(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
float from_bf16(uint16_t h) {
    const uint32_t u = static_cast<uint32_t>(h) << 16;
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}
float decode_e4m3(uint8_t c) {
    const int e = (c >> 3) & 15, m = c & 7;
    const float v = e ? std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7) : std::ldexp(static_cast<float>(m) / 8.0f, -6);
    return (c & 0x80) ? -v : v;
}

}  // namespace

int main() {
    constexpr int64_t T = 64, H = 1024, G = 128;
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
    std::vector<uint16_t> x(static_cast<size_t>(T * 2 * H));
    for (auto& v : x) v = to_bf16(uniform(rng));

    try {
        fq::Handle h(FQ_BACKEND_HOST);
        fq::QuantDesc d;
        d.set_activation(FQ_ACTIVATION_SILU)
            .set_gate_layout(FQ_GATE_LAYOUT_SPLIT)
            .set_group_size(G)
            .set_scale_layout(FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
        fq::TensorLayout in(FQ_TYPE_BF16, T, 2 * H), out(FQ_TYPE_FP8_E4M3FN, T, H);

        std::vector<uint8_t> q(static_cast<size_t>(T * H));
        std::vector<float> scales(d.scale_buffer_size(T, H) / sizeof(float));
        const int64_t col = d.scale_buffer_info(T, H, FQ_SCALE_INFO_COL_STRIDE) / 4;  // floats between columns
        std::printf("variant %s, scale buffer %zu bytes (column stride %lld floats)\n",
                    h.query_support(d, in, out).c_str(), scales.size() * sizeof(float), static_cast<long long>(col));

        h.quantize(d, in, x, out, q, scales);

        // Decode y ~ q * scale[k * col + m] and compare with silu(g) * u, relative to the group's range.
        double worst = 0;
        for (int64_t m = 0; m < T; ++m)
            for (int64_t j = 0; j < H; ++j) {
                const float g = from_bf16(x[static_cast<size_t>(m * 2 * H + j)]);
                const float u = from_bf16(x[static_cast<size_t>(m * 2 * H + H + j)]);
                const float s = scales[static_cast<size_t>((j / G) * col + m)];
                const float back = decode_e4m3(q[static_cast<size_t>(m * H + j)]) * s;
                worst = std::fmax(worst, std::fabs(back - g / (1.0f + std::exp(-g)) * u) / (s * 448.0f));
            }
        std::printf("row 0: y[0..3] = %.4f %.4f %.4f %.4f (decoded), scale[0] = %.6f\n", decode_e4m3(q[0]) * scales[0],
                    decode_e4m3(q[1]) * scales[0], decode_e4m3(q[2]) * scales[0], decode_e4m3(q[3]) * scales[0],
                    scales[0]);
        std::printf("worst |decoded - silu(g)*u| / group range = %.4f (e4m3 allows 1/16)\n", worst);

        // A refused call throws fq::Error with the library's status and sentence.
        try {
            d.set_group_size(48);
            h.quantize(d, in, x, out, q, scales);
        } catch (const fq::Error& e) {
            std::printf("group size 48 refused: %s (status %d)\n", e.what(), e.status());
        }
        return worst <= 1.0 / 16 ? 0 : 1;
    } catch (const fq::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}
