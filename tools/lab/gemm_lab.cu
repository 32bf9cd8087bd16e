// Kernel lab for the sm_90a grouped GEMM: drives run_grouped_gemm_cuda directly (no API), checks C against an
// fp64 reference on sampled rows and the quantized outputs byte for byte against the host reference applied to
// the kernel's own C, and times a shape. For kernel iteration on the device; the tests are tests/.
//   gemm_lab M N K E [reps] [gate: split|inter|bi32|bi64] [columnwise: 0|1]
// Environment: LAB_SMALL (A scales 64x smaller, the benchmark's magnitudes), LAB_SKIP_CHECK, LAB_GEMM_ONLY /
// LAB_NO_C / LAB_NO_Q / LAB_D (what is written), and for the launch LAB_CLUSTER (1 or 2 CTAs sharing A) and
// LAB_SPLIT (CTAs splitting K of a unit; one group only); LAB_GROUP (rowwise group: 32, 64 or 128) and
// LAB_UP_FIRST (the up half of each pair first); LAB_ACT (the activation: silu, identity, gelu, swiglu); LAB_REPS
// (GEMM only: launches timed, default 10).
// Build (here or on the device): tools/lab/gemm_lab.sh
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/formats.h"
#include "common/grouped_gemm.h"
#include "common/quantize.h"
#include "dispatch/grouped_gemm.h"
#include "api/error.h"
#include "host/reference.h"

using namespace fq;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); std::exit(1); } } while (0)

template <class T> T* dev(const std::vector<T>& h) {
    T* d = nullptr;
    CK(cudaMalloc(&d, std::max<size_t>(1, h.size() * sizeof(T))));
    if (!h.empty()) CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <class T> std::vector<T> to_host(const T* d, size_t n) {
    std::vector<T> h(n);
    if (n) CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

#ifdef FQ_LAB_TRACE
#include "kernels/gemm/lab_trace.h"
namespace fq {
const unsigned long long* lab_trace_buffer(int* ctas);
}
// LAB_TRACE=1 (a build with -DFQ_LAB_TRACE): the last launch's timeline, averaged over CTAs per unit ordinal j:
// the consumers' K loop, their wait for the epilogue to free the slots, their stash; the epilogue warps' wait
// for the stash, their rows; then the whole CTA and its tail (epilogue end after the last stash). An interval
// with an end not stamped (split K's consumers hand over no stash) counts 0.
static void print_trace() {
    namespace lt = fq::lab_trace;
    int ctas = 0;
    const unsigned long long* d = fq::lab_trace_buffer(&ctas);
    if (!d || ctas == 0) return;
    std::vector<unsigned long long> t(size_t(ctas) * lt::kStride);
    CK(cudaMemcpy(t.data(), d, t.size() * 8, cudaMemcpyDeviceToHost));
    double sum[lt::kUnits][8] = {}, n[lt::kUnits] = {}, span = 0, mhz = 0, tail = 0, kl = 0, acq = 0, stash = 0, ew = 0, er = 0;
    double waits[lt::kWaits] = {};  // us per CTA, lab_trace.h's counters
    int nc = 0;
    unsigned long long first_start = ~0ull, last_start = 0, last_end = 0;  // global ns: the grid's ramp and span
    for (int c = 0; c < ctas; ++c) {
        const unsigned long long* r = &t[size_t(c) * lt::kStride];
        const unsigned long long c0 = r[lt::kStartClock], c1 = r[lt::kEndClock];
        if (!c0 || !c1 || r[lt::kEndNs] <= r[lt::kStartNs]) continue;
        first_start = std::min(first_start, r[lt::kStartNs]);
        last_start = std::max(last_start, r[lt::kStartNs]);
        last_end = std::max(last_end, r[lt::kEndNs]);
        const double f = double(c1 - c0) / double(r[lt::kEndNs] - r[lt::kStartNs]);  // cycles per ns
        auto us = [&](unsigned long long a, unsigned long long b) { return a && b > a ? double(b - a) / f * 1e-3 : 0.0; };
        ++nc; mhz += f * 1e3; span += us(c0, c1);
        for (int w = 0; w < lt::kWaits; ++w) waits[w] += double(r[lt::kWait + w]) / f * 1e-3;
        unsigned long long last_stash = 0;
        for (int j = 0; j < lt::kUnits; ++j) {
            const unsigned long long* cu = r + lt::unit_slot(lt::kConsumer, j, 0);
            const unsigned long long* e = r + lt::unit_slot(lt::kEpilogue, j, 0);
            if (!cu[0]) break;
            n[j] += 1;
            const double v[8] = {us(cu[0], cu[1]), us(cu[1], cu[2]), us(cu[2], cu[3]), j + 1 < lt::kUnits ? us(cu[3], cu[4]) : 0,
                                 us(e[0], e[1]), us(e[1], e[2]), us(e[2], e[3]), us(c0, cu[1])};
            for (int k = 0; k < 8; ++k) sum[j][k] += v[k];
            kl += v[0]; acq += v[1]; stash += v[2]; ew += v[4]; er += v[5];
            if (cu[3]) last_stash = cu[3];
        }
        tail += us(last_stash, c1);
    }
    if (!nc) return;
    std::printf("trace: %d CTAs, SM clock %.0f MHz, CTA span %.1f us; per CTA: K loops %.1f, slot waits %.1f, stash %.1f, "
                "epilogue waits %.1f, epilogue rows %.1f, tail after the last stash %.1f us\n",
                nc, mhz / nc, span / nc, kl / nc, acq / nc, stash / nc, ew / nc, er / nc, tail / nc);
    if (std::any_of(waits, waits + lt::kWaits, [](double w) { return w > 0; }))  // a -DFQ_LAB_TRACE_WAITS build
        std::printf("trace: waits per CTA, us: producer for empty stages %.1f; consumer warpgroups 0 / 1 for full stages %.1f / "
                    "%.1f, for their MMAs %.1f / %.1f\n",
                    waits[lt::kProducerEmpty] / nc, waits[lt::kConsumerFull] / nc, waits[lt::kConsumerFull + 1] / nc,
                    waits[lt::kConsumerMma] / nc, waits[lt::kConsumerMma + 1] / nc);
    std::printf("trace: grid span %.1f us (first CTA start to last end), last CTA started %.1f us after the first\n",
                (last_end - first_start) * 1e-3, (last_start - first_start) * 1e-3);
    std::printf("trace  j  CTAs | K loop  slot wait  stash  gap | epi wait  epi rows  epi cols | K loop end at\n");
    for (int j = 0; j < lt::kUnits && n[j] > 0; ++j) {
        const double* m = sum[j];
        const double k = n[j];
        std::printf("trace %2d %5.0f | %6.2f %9.2f %6.2f %5.2f | %8.2f %9.2f %9.2f | %8.1f\n", j, k, m[0] / k, m[1] / k, m[2] / k,
                    m[3] / k, m[4] / k, m[5] / k, m[6] / k, m[7] / k);
    }
}
#endif

int main(int argc, char** argv) {
    const int64_t M = argc > 1 ? atoll(argv[1]) : 1000, N = argc > 2 ? atoll(argv[2]) : 512, K = argc > 3 ? atoll(argv[3]) : 1024;
    const int E = argc > 4 ? atoi(argv[4]) : 3, reps = argc > 5 ? atoi(argv[5]) : 0;
    const std::string gate = argc > 6 ? argv[6] : "split";
    const bool colwise = argc > 7 && atoi(argv[7]) != 0;
    const int64_t H = N / 2, kb = (K + 127) / 128, nb = (N + 127) / 128;
    std::mt19937 rng(1234);
    std::function<std::vector<uint8_t>(size_t)> fp8 = [&](size_t n) { std::vector<uint8_t> v(n); for (auto& b : v) { do b = uint8_t(rng()); while ((b & 0x7F) == 0x7F); } return v; };
    std::uniform_real_distribution<float> U(0.5f, 2.0f);
    // LAB_BENCH_DATA: fq_bench_gemm's data instead: A and B both tiled from one 64 MB pool of fp8 magnitudes in
    // [1/8, 8) (so A's row m is B's row m: C's diagonal is large), A and B scales U(0.5, 2) / 16, probabilities 0.5
    const bool bench_data = getenv("LAB_BENCH_DATA") != nullptr;
    if (bench_data) {
        std::mt19937 pool_rng(123);
        auto pool = std::make_shared<std::vector<uint8_t>>(size_t(64) << 20);
        for (auto& b : *pool) { const uint32_t r = pool_rng(); b = uint8_t((r & 0x80) | (((4 + (r >> 8) % 6) & 0xF) << 3) | ((r >> 16) & 7)); }
        fp8 = [pool](size_t n) {
            std::vector<uint8_t> v(n);
            for (size_t i = 0; i < n; ++i) v[i] = (*pool)[i % pool->size()];
            return v;
        };
    }
    std::vector<uint8_t> A = fp8(size_t(M * K)), B = fp8(size_t(E * N * K));
    const int64_t lds = (M + 3) / 4 * 4;
    std::vector<float> SA(static_cast<size_t>(kb * lds)), SB(static_cast<size_t>(E * nb * kb)), alpha(static_cast<size_t>(E)), prob(static_cast<size_t>(M));
    // LAB_SMALL: A scales 64x smaller, so C stays where the activation takes its fast path (as the benchmark's data)
    const float sa_div = getenv("LAB_SMALL") ? 448.0f * 64.0f : 448.0f;
    for (auto& x : SA) x = U(rng) / (bench_data ? 16.0f : sa_div);
    for (auto& x : SB) x = U(rng) / (bench_data ? 16.0f : 448.0f);
    for (auto& x : alpha) x = bench_data ? 1.0f : U(rng);
    for (auto& x : prob) x = bench_data ? 0.5f : U(rng) * 0.5f;
    // groups: random cut points, one empty group when E > 2
    std::vector<int32_t> off(E + 1, 0);
    for (int g = 1; g < E; ++g) off[g] = int32_t(rng() % (M + 1));
    off[E] = int32_t(M);
    std::sort(off.begin(), off.end());
    if (E > 2) off[2] = off[1];

    GroupedGemmConfig c;
    c.m = M; c.n = N; c.k = K; c.lda = K; c.ldb = K; c.groups = E;
    int32_t* d_off = dev(off);
    c.offsets = E > 1 ? d_off : nullptr;
    uint8_t *dA = dev(A), *dB = dev(B);
    float *dSA = dev(SA), *dSB = dev(SB), *dAlpha = dev(alpha), *dProb = dev(prob);
    c.a = dA; c.b = dB; c.a_scales = dSA; c.a_scale_ld = lds; c.b_scales = dSB; c.alpha = dAlpha;
    uint16_t* dC = nullptr; CK(cudaMalloc(&dC, size_t(M * N * 2))); CK(cudaMemset(dC, 0xAB, size_t(M * N * 2)));
    c.c_out = dC;
    OpConfig& e = c.epi;
    e.rows = M; e.in_cols = N; e.in_ld = N; e.cols = H; e.out_ld = H;
    // LAB_ACT: the activation (silu, the default; identity: y = g * u, the cheapest epilogue arithmetic; gelu;
    // swiglu: SwiGLU-OAI, docs/spec.md §2's default alpha / beta / limit)
    const std::string act = getenv("LAB_ACT") ? getenv("LAB_ACT") : "silu";
    if (act != "silu" && act != "identity" && act != "gelu" && act != "swiglu") {  // not SiLU in silence
        std::fprintf(stderr, "LAB_ACT=%s: silu, identity, gelu or swiglu\n", act.c_str());
        return 2;
    }
    e.act = act == "identity" ? Act::Identity : act == "gelu" ? Act::GeluTanh : act == "swiglu" ? Act::SwigluOai : Act::Silu;
    e.gate = gate == "inter" ? GateLayout::Interleaved : gate == "split" ? GateLayout::Split : GateLayout::BlockInterleaved;
    e.gate_block = gate == "bi64" ? 64 : 32;
    e.row_prob = dProb;
    e.scheme = Scheme::PerGroup; e.group = getenv("LAB_GROUP") ? atoi(getenv("LAB_GROUP")) : 128;
    if (getenv("LAB_UP_FIRST")) e.gate_order = GateOrder::UpFirst;
    e.quant.out = DType::E4M3FN; e.quant.qmax = 448.0f; e.quant.min_scale = 1.0f / (448.0f * 512.0f);
    e.scales = make_scale_geometry(ScaleLayout::ColMajorTma, DType::Fp32, M, (H + e.group - 1) / e.group);
    if (E > 1) { e.moe = MoeLayout::Contiguous; e.num_experts = E; e.moe_offsets = d_off; }
    uint8_t *dQ = nullptr, *dS = nullptr, *dQc = nullptr, *dSc = nullptr;
    CK(cudaMalloc(&dQ, size_t(M * H))); CK(cudaMemset(dQ, 0xAB, size_t(M * H)));
    CK(cudaMalloc(&dS, size_t(e.scales.bytes))); CK(cudaMemset(dS, 0xAB, size_t(e.scales.bytes)));
    c.output = dQ; c.scales = dS;
    if (colwise) {
        e.outputs = kOutputRowwise | kOutputColumnwise; e.col_block = 128;
        e.col_scales = make_scale_geometry(ScaleLayout::ColMajorTma, DType::Fp32, H, (M + 127) / 128);
        CK(cudaMalloc(&dQc, size_t(M * H))); CK(cudaMemset(dQc, 0xAB, size_t(M * H)));
        CK(cudaMalloc(&dSc, size_t(e.col_scales.bytes))); CK(cudaMemset(dSc, 0xAB, size_t(e.col_scales.bytes)));
        e.col_output = dQc; e.col_scales_ptr = dSc;
    }
    // The lab drives the kernel below the API, so it refuses what the library refuses (H not a multiple of 64,
    // say: session 31's N = 832 line ran such a shape and read its C tile past N as a bug).
    if (const std::string refusal = grouped_gemm_cuda_refusal(c, 90); !refusal.empty()) {
        std::printf("refused (as fqGroupedGemm would refuse it): %s\n", refusal.c_str());
        return 2;
    }
    int sms = 0; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    if (getenv("LAB_GEMM_ONLY")) {  // time the main loop alone: no output at all
        GroupedGemmConfig bare = c;
        bare.c_out = nullptr; bare.quantize = false;
        for (int i = 0; i < 3; ++i) run_grouped_gemm_cuda(bare, nullptr, sms);
        cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
        const int n = getenv("LAB_REPS") ? atoi(getenv("LAB_REPS")) : 10;
        CK(cudaEventRecord(a)); for (int i = 0; i < n; ++i) run_grouped_gemm_cuda(bare, nullptr, sms); CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b)); float ms = 0; CK(cudaEventElapsedTime(&ms, a, b));
        const double us = ms * 1e3 / n;
        std::printf("GEMM only (no outputs): %.1f us, %.0f TFLOP/s\n", us, 2.0 * M * N * K / (us * 1e-6) * 1e-12);
        return 0;
    }
    fqStatus_t st = run_grouped_gemm_cuda(c, nullptr, sms);
    CK(cudaDeviceSynchronize());
    std::printf("M %lld N %lld K %lld E %d gate %s: status %d\n", (long long)M, (long long)N, (long long)K, E, gate.c_str(), st);
    if (st) { std::printf("%s\n", last_error()); return 1; }

    int64_t fails = 0;
    if (getenv("LAB_SKIP_CHECK")) goto timing;
    {
    // ---- C against fp64 on sampled rows
    const auto C = to_host(dC, size_t(M * N));
    auto dec = [](uint8_t b) { return double(decode_minifloat(minifloat_of(DType::E4M3FN), b)); };
    std::vector<int> group_of(size_t(M), -1);
    for (int g = 0; g < E; ++g) for (int64_t r = off[g]; r < off[g + 1]; ++r) group_of[size_t(r)] = g;
    if (E == 1) std::fill(group_of.begin(), group_of.end(), 0);
    const int64_t step = std::max<int64_t>(1, M / 64);
    int64_t bad = 0, checked = 0;
    double worst = 0;
    for (int64_t r = 0; r < M; r += (r % step == 0 && r + 1 < M && (r + 1) % step != 0) ? 1 : step) {
        const int g = group_of[size_t(r)];
        for (int64_t n = 0; n < N; ++n) {
            const uint16_t got = C[size_t(r * N + n)];
            if (g < 0) { bad += got != 0xABAB; continue; }
            double sum = 0, mag = 0;
            for (int64_t k0 = 0; k0 < K; k0 += 128) {
                double part = 0, pm = 0;
                for (int64_t k = k0; k < std::min(K, k0 + 128); ++k) {
                    const double t = dec(A[size_t(r * K + k)]) * dec(B[size_t((g * N + n) * K + k)]);
                    part += t; pm += std::fabs(t);
                }
                const double s = double(SA[size_t((k0 / 128) * lds + r)]) * SB[size_t((g * nb + n / 128) * kb + k0 / 128)];
                sum += part * s; mag += pm * s;
            }
            sum *= alpha[g]; mag *= alpha[g];
            const double err = std::fabs(double(bf16_to_float(got)) - sum), tol = std::ldexp(std::fabs(sum), -8) + std::ldexp(mag, -9);
            worst = std::max(worst, err / (tol + 1e-300));
            ++checked;
            if (!(err <= tol)) { if (bad < 5) std::printf("  C[%lld,%lld] got %g want %g\n", (long long)r, (long long)n, bf16_to_float(got), sum); ++bad; }
        }
    }
    std::printf("C: %lld values checked, %lld bad, worst err/tol %.3f\n", (long long)checked, (long long)bad, worst);

    // ---- quantized outputs: the host reference applied to the kernel's C
    OpConfig he = e;
    he.row_prob = prob.data();
    he.moe_offsets = off.data();
    std::vector<uint8_t> refQ(size_t(M * H), 0xAB), refS(size_t(e.scales.bytes), 0xAB), refQc, refSc;
    if (colwise) {
        refQc.assign(size_t(M * H), 0xAB); refSc.assign(size_t(e.col_scales.bytes), 0xAB);
        he.col_output = refQc.data(); he.col_scales_ptr = refSc.data();
    }
    host::quantize(he, C.data(), refQ.data(), refS.data());
    auto cmp = [](const char* what, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
        int64_t diff = 0, first = -1;
        for (size_t i = 0; i < got.size(); ++i) if (got[i] != want[i]) { if (first < 0) first = int64_t(i); ++diff; }
        std::printf("%s: %zu bytes, %lld differ (first at %lld)\n", what, got.size(), (long long)diff, (long long)first);
        return diff;
    };
    fails += bad;
    fails += cmp("rowwise q", to_host(dQ, size_t(M * H)), refQ);
    fails += cmp("rowwise scales", to_host(dS, size_t(e.scales.bytes)), refS);
    if (!colwise) {  // again without C, so the epilogue may take its lean path (rowwise codes only)
        GroupedGemmConfig q_only = c;
        q_only.c_out = nullptr;
        CK(cudaMemset(dQ, 0xAB, size_t(M * H))); CK(cudaMemset(dS, 0xAB, size_t(e.scales.bytes)));
        CK(cudaDeviceSynchronize());
        if (run_grouped_gemm_cuda(q_only, nullptr, sms) != FQ_STATUS_SUCCESS) { std::printf("q only: %s\n", last_error()); return 1; }
        CK(cudaDeviceSynchronize());
        fails += cmp("rowwise q, no C", to_host(dQ, size_t(M * H)), refQ);
        fails += cmp("rowwise scales, no C", to_host(dS, size_t(e.scales.bytes)), refS);
    }
    if (colwise) {
        fails += cmp("columnwise q", to_host(dQc, size_t(M * H)), refQc);
        fails += cmp("columnwise scales", to_host(dSc, size_t(e.col_scales.bytes)), refSc);
    }

    }
timing:
    if (reps > 0) {
        if (getenv("LAB_NO_C")) c.c_out = nullptr;      // time without the bf16 C output
        if (getenv("LAB_NO_Q")) c.quantize = false;     // ... without the quantized output
        if (getenv("LAB_D")) CK(cudaMalloc(&c.d_out, size_t(M * H * 2)));  // ... with the bf16 y output
        cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
        for (int i = 0; i < 3; ++i) run_grouped_gemm_cuda(c, nullptr, sms);
        std::vector<float> ts;
        // LAB_FLUSH: a 256 MB memset before each launch, as fq_bench_gemm flushes the L2
        void* flush = nullptr;
        if (getenv("LAB_FLUSH")) CK(cudaMalloc(&flush, size_t(256) << 20));
        for (int i = 0; i < reps; ++i) {
            if (flush) CK(cudaMemsetAsync(flush, i & 0xFF, size_t(256) << 20));
            CK(cudaEventRecord(a)); run_grouped_gemm_cuda(c, nullptr, sms); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
            float ms = 0; CK(cudaEventElapsedTime(&ms, a, b)); ts.push_back(ms);
        }
        std::sort(ts.begin(), ts.end());
        const double t = ts[ts.size() / 2] * 1e-3, flops = 2.0 * double(M) * double(N) * double(K);
        std::printf("time median %.1f us (min %.1f): %.0f TFLOP/s (%.1f%% of 1979)\n", t * 1e6, ts[0] * 1e3,
                    flops / t * 1e-12, flops / t * 1e-12 / 19.79);
    }
#ifdef FQ_LAB_TRACE
    if (getenv("LAB_TRACE")) { CK(cudaDeviceSynchronize()); print_trace(); }
#endif
    std::printf(fails ? "FAIL\n" : "PASS\n");
    return fails ? 1 : 0;
}
