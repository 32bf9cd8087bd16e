// Exhaustive accuracy of the portable exp / erf / tanh against glibc's double functions, over all 2^32
// float inputs (the numbers quoted in src/common/portable_math.h). Build and run (a few minutes a core):
//   g++ -O2 -std=c++17 -ffp-contract=off -pthread -Isrc/common tools/exhaustive_math.cpp -o /tmp/em && /tmp/em
// The same function, compiled by nvcc and run on a GPU, must give the same bits (tests/test_gpu.cpp).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <thread>
#include <vector>

#include "portable_math.h"

namespace {

// Error of f against the exact value d, in ulps of the correctly rounded float of d.
double ulp_error(float f, double d) {
    if (std::isnan(d)) return std::isnan(f) ? 0.0 : INFINITY;
    const float rounded = static_cast<float>(d);
    if (std::isinf(rounded)) return f == rounded ? 0.0 : INFINITY;
    const double ulp = std::ldexp(1.0, std::max(std::ilogb(rounded == 0.0f ? FLT_MIN : rounded), -126) - 23);
    return std::fabs(static_cast<double>(f) - d) / ulp;
}

struct Tally {
    double max_ulp = 0;
    uint32_t worst = 0;
    uint64_t exact = 0, total = 0;
};

template <class F, class G>
Tally sweep(F portable, G reference, uint64_t begin, uint64_t end) {
    Tally t;
    for (uint64_t i = begin; i < end; ++i) {
        float x;
        const uint32_t b = static_cast<uint32_t>(i);
        std::memcpy(&x, &b, 4);
        if (std::isnan(x)) continue;
        const double d = reference(static_cast<double>(x));
        const float f = portable(x);
        const double e = ulp_error(f, d);
        ++t.total;
        t.exact += f == static_cast<float>(d);
        if (e > t.max_ulp) t.max_ulp = e, t.worst = b;
    }
    return t;
}

template <class F, class G>
void report(const char* name, F portable, G reference) {
    const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    std::vector<Tally> parts(n);
    std::vector<std::thread> pool;
    const uint64_t chunk = (uint64_t(1) << 32) / n + 1;
    for (unsigned i = 0; i < n; ++i)
        pool.emplace_back([&, i] {
            parts[i] = sweep(portable, reference, i * chunk, std::min((i + 1) * chunk, uint64_t(1) << 32));
        });
    Tally all;
    for (unsigned i = 0; i < n; ++i) {
        pool[i].join();
        if (parts[i].max_ulp > all.max_ulp) all.max_ulp = parts[i].max_ulp, all.worst = parts[i].worst;
        all.exact += parts[i].exact;
        all.total += parts[i].total;
    }
    float w;
    std::memcpy(&w, &all.worst, 4);
    std::printf("%-14s max %.3f ulp at %a; %.2f%% correctly rounded\n", name, all.max_ulp, w,
                100.0 * double(all.exact) / double(all.total));
}

}  // namespace

int main() {
    report("portable_exp", fq::portable_exp, [](double x) { return std::exp(x); });
    report("portable_erf", fq::portable_erf, [](double x) { return std::erf(x); });
    report("portable_tanh", fq::portable_tanh, [](double x) { return std::tanh(x); });
}
