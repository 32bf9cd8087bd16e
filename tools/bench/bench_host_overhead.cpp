// fq_bench_host_overhead: the host time one call costs, at the size where nothing else does: T = 1 token of a
// 7168-wide SiLU-and-mul quantized to e4m3 with groups of 128 (bf16 [1, 14336] -> [1, 7168], ROW_MAJOR fp32
// scales). A benchmark, not a test: it prints and writes numbers and asserts nothing about them.
//
// Measured, each as the median (and 10th / 90th percentiles) of --calls timed calls after 100 untimed ones:
//   CUDA handle (when a GPU is present), the wall time to enqueue one call on a stream:
//     empty_launch   an empty kernel's launch (<<<1, 1>>> on the same stream): the floor any kernel pays
//     fqQuantize     descriptor + layouts resolved and checked on every call, then the launch
//     fqPlanExecute  the plan made once (fqPlanCreate), each call checking only its buffers, then the launch
//   The stream is synchronised every 256 calls, outside the timed calls, so the launch queue never fills.
//   Host backend (always), the synchronous call: the same problem (the reference's compute included) and the
//   same with 0 rows (no compute: validation and dispatch alone).
// The goals (issue 47): fqPlanExecute <= 0.5 us and fqQuantize <= 1.5 us above empty_launch.
//
// Usage: fq_bench_host_overhead [--json FILE] [--calls N] [--host-only]
// Exit status: 0; 1 when an fq call failed; 2 on a usage error.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "fusedquant/fusedquant.h"

#ifdef FQ_BENCH_WITH_CUDA
#include <cuda_runtime.h>
void fq_bench_launch_empty(cudaStream_t stream);  // bench_host_overhead_kernel.cu
#endif

namespace {

constexpr int64_t kHidden = 7168, kGroup = 128;

struct Result {
    std::string backend, name;
    int64_t tokens;
    double p10_us, median_us, p90_us;
    int calls;
};

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "fq_bench_host_overhead: %s: %s\n", what, fqGetLastErrorMessage());
    std::exit(1);
}
#define FQ_OK(x) \
    do {         \
        if ((x) != FQ_STATUS_SUCCESS) die(#x); \
    } while (0)

// Times `call` `calls` times (after 100 untimed calls); `between` runs every 256 calls, untimed.
Result time_calls(const std::string& backend, const std::string& name, int64_t tokens, int calls,
                  const std::function<void()>& call, const std::function<void()>& between) {
    for (int i = 0; i < 100; ++i) call();
    between();
    std::vector<double> us(size_t(calls), 0.0);
    for (int i = 0; i < calls; ++i) {
        if (i % 256 == 0) between();
        const auto t0 = std::chrono::steady_clock::now();
        call();
        const auto t1 = std::chrono::steady_clock::now();
        us[size_t(i)] = std::chrono::duration<double, std::micro>(t1 - t0).count();
    }
    between();
    std::sort(us.begin(), us.end());
    auto at = [&](double q) { return us[size_t(q * double(us.size() - 1))]; };
    return Result{backend, name, tokens, at(0.1), at(0.5), at(0.9), calls};
}

// The problem's objects on one handle; `rows` tokens.
struct Problem {
    fqQuantDesc_t desc = nullptr;
    fqTensorLayout_t in = nullptr, out = nullptr;
    fqPlan_t plan = nullptr;
    size_t scale_bytes = 0;
    Problem(fqHandle_t h, int64_t rows) {
        FQ_OK(fqQuantDescCreate(&desc));
        const int32_t silu = FQ_ACTIVATION_SILU, split = FQ_GATE_LAYOUT_SPLIT, group = int32_t(kGroup);
        FQ_OK(fqQuantDescSetAttribute(desc, FQ_QUANT_DESC_ACTIVATION, &silu, sizeof silu));
        FQ_OK(fqQuantDescSetAttribute(desc, FQ_QUANT_DESC_GATE_LAYOUT, &split, sizeof split));
        FQ_OK(fqQuantDescSetAttribute(desc, FQ_QUANT_DESC_GROUP_SIZE, &group, sizeof group));
        FQ_OK(fqTensorLayoutCreate(&in, FQ_TYPE_BF16, rows, 2 * kHidden, 2 * kHidden));
        FQ_OK(fqTensorLayoutCreate(&out, FQ_TYPE_FP8_E4M3FN, rows, kHidden, kHidden));
        FQ_OK(fqGetScaleBufferSize(desc, rows, kHidden, FQ_OUTPUT_ROWWISE, &scale_bytes));
        FQ_OK(fqPlanCreate(&plan, h, desc, in, out));
    }
    ~Problem() {
        fqPlanDestroy(plan);
        fqTensorLayoutDestroy(out);
        fqTensorLayoutDestroy(in);
        fqQuantDescDestroy(desc);
    }
    Problem(const Problem&) = delete;
    Problem& operator=(const Problem&) = delete;
};

void host_results(int calls, std::vector<Result>* results) {
    fqHandle_t h = nullptr;
    FQ_OK(fqCreate(&h, FQ_BACKEND_HOST, -1));
    std::vector<uint16_t> x(size_t(2 * kHidden), 0x3F80);  // 1.0 in bf16
    std::vector<uint8_t> y(static_cast<size_t>(kHidden));
    for (const int64_t rows : {int64_t(1), int64_t(0)}) {
        Problem p(h, rows);
        std::vector<float> s(p.scale_bytes / sizeof(float) + 1);
        const auto none = [] {};
        results->push_back(time_calls("host", "fqQuantize", rows, calls, [&] {
            FQ_OK(fqQuantize(h, p.desc, p.in, x.data(), p.out, y.data(), s.data(), p.scale_bytes, nullptr, 0, nullptr));
        }, none));
        results->push_back(time_calls("host", "fqPlanExecute", rows, calls, [&] {
            FQ_OK(fqPlanExecute(p.plan, x.data(), y.data(), s.data(), p.scale_bytes, nullptr, 0, nullptr));
        }, none));
    }
    fqDestroy(h);
}

#ifdef FQ_BENCH_WITH_CUDA
// The CUDA results, or none (and a note on stderr) without a usable GPU.
std::string cuda_results(int calls, std::vector<Result>* results) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        std::fprintf(stderr, "fq_bench_host_overhead: no CUDA device; host backend only\n");
        return "";
    }
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    fqHandle_t h = nullptr;
    FQ_OK(fqCreate(&h, FQ_BACKEND_CUDA, -1));
    cudaStream_t stream = nullptr;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    void *x = nullptr, *y = nullptr, *s = nullptr;
    cudaMalloc(&x, size_t(2 * kHidden) * 2);
    cudaMemset(x, 0, size_t(2 * kHidden) * 2);
    cudaMalloc(&y, size_t(kHidden));
    {
        Problem p(h, 1);
        cudaMalloc(&s, p.scale_bytes);
        const auto sync = [&] { cudaStreamSynchronize(stream); };
        const auto fq_stream = reinterpret_cast<fqStream_t>(stream);
        // Two rounds of the three, the first discarded as warm-up (clocks, caches, the driver's first launches).
        for (int round = 0; round < 2; ++round) {
            const bool keep = round == 1;
            std::vector<Result> r;
            r.push_back(time_calls("cuda", "empty_launch", 1, calls, [&] { fq_bench_launch_empty(stream); }, sync));
            r.push_back(time_calls("cuda", "fqQuantize", 1, calls, [&] {
                FQ_OK(fqQuantize(h, p.desc, p.in, x, p.out, y, s, p.scale_bytes, nullptr, 0, fq_stream));
            }, sync));
            r.push_back(time_calls("cuda", "fqPlanExecute", 1, calls, [&] {
                FQ_OK(fqPlanExecute(p.plan, x, y, s, p.scale_bytes, nullptr, 0, fq_stream));
            }, sync));
            if (keep) results->insert(results->end(), r.begin(), r.end());
        }
    }
    cudaFree(s);
    cudaFree(y);
    cudaFree(x);
    cudaStreamDestroy(stream);
    fqDestroy(h);
    return prop.name;
}
#endif

void write_json(const char* path, const std::string& device, const std::vector<Result>& results) {
    FILE* f = std::fopen(path, "w");
    if (!f) {
        std::fprintf(stderr, "fq_bench_host_overhead: cannot write %s\n", path);
        std::exit(2);
    }
    std::fprintf(f, "{\n  \"benchmark\": \"host_overhead\",\n  \"problem\": \"silu_and_mul, bf16 [T, 2x%lld] -> "
                 "e4m3fn [T, %lld], per-group %lld, row-major fp32 scales\",\n  \"device\": \"%s\",\n  \"results\": [",
                 (long long)kHidden, (long long)kHidden, (long long)kGroup, device.c_str());
    for (size_t i = 0; i < results.size(); ++i) {
        const Result& r = results[i];
        std::fprintf(f, "%s\n    {\"backend\": \"%s\", \"name\": \"%s\", \"tokens\": %lld, \"calls\": %d, "
                     "\"p10_us\": %.4f, \"median_us\": %.4f, \"p90_us\": %.4f}", i ? "," : "", r.backend.c_str(),
                     r.name.c_str(), (long long)r.tokens, r.calls, r.p10_us, r.median_us, r.p90_us);
    }
    std::fprintf(f, "\n  ]\n}\n");
    std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
    const char* json = nullptr;
    int calls = 10000;
    bool host_only = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i];
        else if (!std::strcmp(argv[i], "--calls") && i + 1 < argc) calls = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--host-only")) host_only = true;
        else {
            std::fprintf(stderr, "usage: fq_bench_host_overhead [--json FILE] [--calls N] [--host-only]\n");
            return 2;
        }
    }
    std::vector<Result> results;
    std::string device = "host only";
#ifdef FQ_BENCH_WITH_CUDA
    if (!host_only) {
        const std::string name = cuda_results(calls, &results);
        if (!name.empty()) device = name;
    }
#else
    (void)host_only;
#endif
    host_results(calls, &results);
    std::printf("host time per call, T tokens of silu_and_mul 7168 -> e4m3 g128 (%s; %d calls)\n", device.c_str(), calls);
    std::printf("%-8s %-15s %3s %10s %10s %10s\n", "backend", "call", "T", "p10 us", "median us", "p90 us");
    for (const Result& r : results)
        std::printf("%-8s %-15s %3lld %10.3f %10.3f %10.3f\n", r.backend.c_str(), r.name.c_str(), (long long)r.tokens,
                    r.p10_us, r.median_us, r.p90_us);
    double empty = 0;
    for (const Result& r : results)
        if (r.name == "empty_launch") empty = r.median_us;
    if (empty > 0)
        for (const Result& r : results)
            if (r.backend == "cuda" && r.name != "empty_launch")
                std::printf("%s: %+.3f us above the empty launch (goal: %s)\n", r.name.c_str(), r.median_us - empty,
                            r.name == "fqPlanExecute" ? "<= 0.5" : "<= 1.5");
    if (json) write_json(json, device, results);
    return 0;
}
