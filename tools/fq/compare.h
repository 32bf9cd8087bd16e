// What `fq check` and the GPU tests (tests/test_gpu*.cpp) share to hold a CUDA run against the host reference:
// inputs that reach the edges of docs/spec.md §1 and §2, and a description of where two outputs differ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fqtool {

// Mostly N(0, 2) values, with NaN (0.3%), +-Inf (0.2%), values past every format's range (0.7%, x 3e4) and
// tiny ones (0.8%, x 1e-6). One object draws a sequence: the normal distribution keeps state between draws.
class EdgeValues {
public:
    float operator()(std::mt19937& rng);

private:
    std::normal_distribution<float> normal_{0.0f, 2.0f};
    std::uniform_int_distribution<int> pick_{0, 999};
};

// `n` EdgeValues as bf16 or fp16 bits (`in_type`: FQ_TYPE_BF16 or FQ_TYPE_FP16).
std::vector<uint16_t> edge_input(std::mt19937& rng, size_t n, int32_t in_type);

// How many bytes differ and the first of them, as a message ("" when equal).
std::string byte_diff(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want);

}  // namespace fqtool
