// fq_bench: effective bandwidth of the fused activation + quantization, beside a device-to-device copy
// of the same number of bytes measured the same way in the same run.
//
// Method (docs/perf.md): per shape, NBUF input/output sets rotate so no call finds its data in L2
// (NBUF * bytes >= 4 x L2, at least 2); ITERS launches are captured in one CUDA graph; the graph is
// replayed REPS times and the median replay time / ITERS is the time per call. Effective bandwidth =
// (bytes read + bytes written, each tensor once) / time. The copy moves the same total (it reads and
// writes half of it each) with cudaMemcpyAsync, captured and replayed identically.
//
// Usage: fq_bench [--tokens 1,16,...] [--hidden 2048,...] [--layouts row,col,tma] [--variants auto,sm90.group.hwexp]
//                 [--pdl 0|1] [--json FILE]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fusedquant/fusedquant.h"

namespace {

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(1); } \
    } while (0)
#define FQ(x)                                                                                          \
    do {                                                                                               \
        fqStatus_t s_ = (x);                                                                           \
        if (s_ != FQ_STATUS_SUCCESS) { std::fprintf(stderr, "%s: %s\n", #x, fqGetLastErrorMessage()); std::exit(1); } \
    } while (0)

std::vector<long> parse_list(const char* s) {
    std::vector<long> v;
    for (const char* p = s; *p;) {
        v.push_back(std::strtol(p, const_cast<char**>(&p), 10));
        if (*p == ',') ++p;
    }
    return v;
}

std::vector<std::string> parse_words(const char* s) {
    std::vector<std::string> v;
    std::string cur;
    for (const char* p = s;; ++p) {
        if (*p == ',' || !*p) { if (!cur.empty()) v.push_back(cur); cur.clear(); if (!*p) break; }
        else cur += *p;
    }
    return v;
}

// Median time per call of `enqueue(i)` for i = 0..iters-1, captured in a graph and replayed `reps` times.
template <class Enqueue>
double time_per_call_us(cudaStream_t stream, int iters, int reps, Enqueue&& enqueue) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < iters; ++i) enqueue(i);
    CK(cudaStreamEndCapture(stream, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphLaunch(exec, stream));  // warm-up
    CK(cudaStreamSynchronize(stream));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        CK(cudaEventRecord(a, stream));
        CK(cudaGraphLaunch(exec, stream));
        CK(cudaEventRecord(b, stream));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(double(ms) * 1000.0 / iters);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int find_variant(fqHandle_t h, const std::string& name) {
    if (name == "auto") return -1;
    int32_t n = 0;
    FQ(fqGetVariantCount(h, &n));
    for (int32_t i = 0; i < n; ++i) {
        char buf[256];
        FQ(fqGetVariantName(h, i, buf, sizeof buf));
        if (std::string(buf).rfind(name + ":", 0) == 0) return i;
    }
    std::fprintf(stderr, "unknown variant %s\n", name.c_str());
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<long> tokens = {1, 16, 128, 1024, 4096, 16384}, hidden = {2048, 7168, 18432};
    std::vector<std::string> layouts = {"row", "col"}, variants = {"auto"};
    const char* json_path = nullptr;
    int32_t allow_pdl = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--tokens")) tokens = parse_list(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--hidden")) hidden = parse_list(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--layouts")) layouts = parse_words(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--variants")) variants = parse_words(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--json")) json_path = argv[i + 1];
        else if (!std::strcmp(argv[i], "--pdl")) allow_pdl = std::atoi(argv[i + 1]);
    }
    fqHandle_t h;
    FQ(fqCreate(&h, FQ_BACKEND_CUDA, 0));
    // With --pdl 1, consecutive calls overlap launch with the previous call's tail (sm_90+).
    FQ(fqHandleSetAttribute(h, FQ_HANDLE_ALLOW_PDL, &allow_pdl, 4));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::printf("device: %s, %d SMs, L2 %d MB; silu gated bf16 -> fp8 e4m3fn, group 128, fp32 scales; PDL %s\n",
                prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, allow_pdl ? "on" : "off");
    std::printf("%7s %6s %-4s %-18s %-22s %10s %10s %9s %9s %7s\n", "tokens", "hidden", "lay", "variant", "kernel",
                "bytes", "us", "GB/s", "copy us", "%copy");
    FILE* json = json_path ? std::fopen(json_path, "w") : nullptr;
    if (json) std::fprintf(json, "{\"device\": \"%s\", \"results\": [\n", prop.name);
    bool first = true;

    for (long T : tokens)
        for (long H : hidden) {
            const size_t in_bytes = size_t(T) * 2 * H * 2, out_bytes = size_t(T) * H;
            const size_t scale_bytes = size_t(T) * ((H + 127) / 128) * 4;
            const size_t bytes = in_bytes + out_bytes + scale_bytes;
            // Rotation: enough sets that together they exceed 4x L2 (capped by the graph length).
            auto slot = [](size_t n) { return (n + 255) / 256 * 256; };
            const size_t target = size_t(4) * prop.l2CacheSize;
            const int iters = int(std::max<size_t>(2, std::min<size_t>(20000, size_t(4e9) / bytes)));
            const int nbuf = int(std::min<size_t>(size_t(iters), std::max<size_t>(2, (target + bytes - 1) / bytes)));
            char *in_pool, *out_pool, *sc_pool, *src_pool, *dst_pool;
            const size_t half = bytes / 2;  // the copy moves the same total: half read, half written
            CK(cudaMalloc(&in_pool, slot(in_bytes) * nbuf));
            CK(cudaMalloc(&out_pool, slot(out_bytes) * nbuf));
            CK(cudaMalloc(&sc_pool, slot(scale_bytes + 64) * nbuf));
            CK(cudaMalloc(&src_pool, slot(half) * nbuf));
            CK(cudaMalloc(&dst_pool, slot(half) * nbuf));
            CK(cudaMemset(in_pool, 0x3E, slot(in_bytes) * nbuf));  // bf16 ~0.19: finite, non-zero activations
            auto in_at = [&](int i) { return in_pool + slot(in_bytes) * size_t(i % nbuf); };
            auto out_at = [&](int i) { return out_pool + slot(out_bytes) * size_t(i % nbuf); };
            auto sc_at = [&](int i) { return sc_pool + slot(scale_bytes + 64) * size_t(i % nbuf); };
            const double copy_us = time_per_call_us(stream, iters, 7, [&](int i) {
                CK(cudaMemcpyAsync(dst_pool + slot(half) * size_t(i % nbuf), src_pool + slot(half) * size_t(i % nbuf), half,
                                   cudaMemcpyDeviceToDevice, stream));
            });
            for (const std::string& lay : layouts)
                for (const std::string& var : variants) {
                    fqQuantDesc_t d;
                    FQ(fqQuantDescCreate(&d));
                    int32_t act = FQ_ACTIVATION_SILU, gate = FQ_GATE_LAYOUT_SPLIT, g = 128;
                    int32_t sl = lay == "col" ? FQ_SCALE_LAYOUT_COL_MAJOR : (lay == "tma" ? FQ_SCALE_LAYOUT_COL_MAJOR_TMA : FQ_SCALE_LAYOUT_ROW_MAJOR);
                    FQ(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_ACTIVATION, &act, 4));
                    FQ(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GATE_LAYOUT, &gate, 4));
                    FQ(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GROUP_SIZE, &g, 4));
                    FQ(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_SCALE_LAYOUT, &sl, 4));
                    fqTensorLayout_t li, lo;
                    FQ(fqTensorLayoutCreate(&li, FQ_TYPE_BF16, T, 2 * H, 2 * H));
                    FQ(fqTensorLayoutCreate(&lo, FQ_TYPE_FP8_E4M3FN, T, H, H));
                    const int32_t pin = find_variant(h, var);
                    FQ(fqHandleSetAttribute(h, FQ_HANDLE_VARIANT, &pin, 4));
                    char vname[64];
                    FQ(fqQuerySupport(h, d, li, lo, vname, sizeof vname));
                    size_t sb = 0;
                    FQ(fqGetScaleBufferSize(d, T, H, FQ_OUTPUT_ROWWISE, &sb));
                    const double us = time_per_call_us(stream, iters, 7, [&](int i) {
                        FQ(fqQuantize(h, d, li, in_at(i), lo, out_at(i), sc_at(i), sb, nullptr, 0,
                                      reinterpret_cast<fqStream_t>(stream)));
                    });
                    const double gbs = double(bytes) / us * 1e-3, pct = 100.0 * copy_us / us;
                    std::printf("%7ld %6ld %-4s %-18s %-22s %10zu %10.2f %9.0f %9.2f %6.1f%%\n", T, H, lay.c_str(),
                                var.c_str(), vname, bytes, us, gbs, copy_us, pct);
                    std::fflush(stdout);
                    if (json)
                        std::fprintf(json,
                                     "%s  {\"tokens\": %ld, \"hidden\": %ld, \"layout\": \"%s\", \"variant\": \"%s\", "
                                     "\"kernel\": \"%s\", \"bytes\": %zu, \"us\": %.3f, \"gbps\": %.1f, \"copy_us\": %.3f, "
                                     "\"copy_gbps\": %.1f, \"pct_of_copy\": %.1f}",
                                     first ? "" : ",\n", T, H, lay.c_str(), var.c_str(), vname, bytes, us, gbs, copy_us,
                                     double(bytes) / copy_us * 1e-3, pct);
                    first = false;
                    fqTensorLayoutDestroy(li);
                    fqTensorLayoutDestroy(lo);
                    fqQuantDescDestroy(d);
                }
            int32_t automatic = -1;
            FQ(fqHandleSetAttribute(h, FQ_HANDLE_VARIANT, &automatic, 4));
            for (char* pool : {in_pool, out_pool, sc_pool, src_pool, dst_pool}) CK(cudaFree(pool));
        }
    if (json) { std::fprintf(json, "\n]}\n"); std::fclose(json); }
    fqDestroy(h);
    return 0;
}
