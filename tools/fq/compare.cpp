#include "compare.h"

#include <cmath>

#include "common/formats.h"
#include "fusedquant/fusedquant.h"

namespace fqtool {

float EdgeValues::operator()(std::mt19937& rng) {
    float x = normal_(rng);
    const int r = pick_(rng);
    if (r < 3) x = NAN;
    else if (r < 5) x = (r & 1) ? INFINITY : -INFINITY;
    else if (r < 12) x *= 3e4f;
    else if (r < 20) x *= 1e-6f;
    return x;
}

std::vector<uint16_t> edge_input(std::mt19937& rng, size_t n, int32_t in_type) {
    EdgeValues value;
    std::vector<uint16_t> v(n);
    for (auto& bits : v) {
        const float x = value(rng);
        bits = in_type == FQ_TYPE_BF16 ? fq::float_to_bf16(x) : fq::float_to_fp16(x);
    }
    return v;
}

std::string byte_diff(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
    if (got.size() != want.size()) return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && bad++ == 0) first = i;
    if (bad == 0) return "";
    return std::to_string(bad) + " of " + std::to_string(got.size()) + " bytes differ; first at " +
           std::to_string(first) + ": got " + std::to_string(got[first]) + " want " + std::to_string(want[first]);
}

}  // namespace fqtool
