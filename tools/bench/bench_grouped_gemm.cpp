// fq_bench_gemm: fqGroupedGemm (grouped block-scaled FP8 GEMM + SiLU-and-mul + per-group-128 e4m3 quantization,
// fused) against the unfused pipeline it replaces, on the shapes of a DeepSeek-V3-like MoE gate-up projection
// (N = 2 x 2048, K = 7168, E in {8, 32, 256} local experts, skewed and uniform group sizes) and dense (E = 1).
//
// Per shape, four measurements:
//   fused     fqGroupedGemm: SiLU, SPLIT gate first, PER_GROUP 128 e4m3, COL_MAJOR_TMA scales, routing prob.
//   gemm      fqGroupedGemm with QUANTIZE = 0 writing only bf16 C (the GEMM alone).
//   pipeline  cuBLASLt's block-scaled FP8 GEMM (VEC128_32F x BLK128x128_32F) once per non-empty group writing
//             bf16 C, then fqQuantize of C with the same epilogue under MoE CONTIGUOUS (the groups' offsets):
//             enqueued as it would run (the host knows the group sizes; per-group A scale buffers and
//             cuBLASLt's algorithm queries are prepared once, outside the timing). cuBLASLt has no algorithm for
//             a group whose row count is not a multiple of 16, so such a group runs padded, as an engine would pad
//             it: up to the next multiple of 16 rows (A's rows after the group with A scales 0, so those C rows
//             are 0; the next group's GEMM, later on the stream, writes its own rows over them). The pipeline's
//             time includes that work, at most 15 rows a group ("lt pad" in the output).
//   cublaslt  the per-group cuBLASLt GEMMs alone.
// Timing: CUDA events around the enqueue of one operation on one stream; 3 warm-up runs, then --reps runs
// (default 20), each preceded by an L2 flush (a 256 MB memset, outside the event window); median and minimum.
// TFLOP/s = 2 * M_valid * N * K / time; % of peak against --peak TFLOP/s (default 1979, the H100 SXM dense FP8
// peak). A device-to-device copy's bandwidth, measured in the same run, is printed for context. As a sanity
// check, the relative Frobenius distance between fqGroupedGemm's C and cuBLASLt's C, and the fraction of equal
// quantized bytes between the fused output and the pipeline's, are reported.
//
// Usage: fq_bench_gemm [--json FILE] [--csv FILE] [--reps N] [--shapes moe,dense] [--quick] [--no-cublaslt]
//                      [--peak TFLOPS]
// Exit status: 0, 1 when an fq call failed, 2 on a setup error, 77 without a GPU.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cublaslt_fp8_gemm.h"
#include "fusedquant/fusedquant.h"

namespace {

struct SetupError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

#define CK(x)                                                                                          \
    do {                                                                                               \
        const cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) throw SetupError(std::string(#x) + ": " + cudaGetErrorString(e_));       \
    } while (0)
#define FQ_SETUP(x)                                                                                    \
    do {                                                                                               \
        const fqStatus_t s_ = (x);                                                                     \
        if (s_ != FQ_STATUS_SUCCESS) throw SetupError(std::string(#x) + ": " + fqGetLastErrorMessage()); \
    } while (0)

constexpr int64_t kN = 4096, kH = kN / 2, kK = 7168, kKb = kK / 128, kNb = kN / 128;
constexpr int64_t kLtRows = 16;  // cuBLASLt's block-scaled FP8 GEMM runs groups whose row count is a multiple of this
int64_t lt_rows(int64_t rows) { return (rows + kLtRows - 1) / kLtRows * kLtRows; }

struct Dev {
    void* p = nullptr;
    size_t bytes = 0;
    explicit Dev(size_t n) : bytes(n) { CK(cudaMalloc(&p, std::max<size_t>(n, 256))); }
    ~Dev() { cudaFree(p); }
    Dev(const Dev&) = delete;
    Dev& operator=(const Dev&) = delete;
    template <class T>
    T* as() const { return static_cast<T*>(p); }
    uint8_t* at(size_t off) const { return static_cast<uint8_t*>(p) + off; }
};

template <class T>
void upload(const Dev& d, const std::vector<T>& v) {
    if (!v.empty()) CK(cudaMemcpy(d.p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// fp8 e4m3 bytes of magnitude [1/8, 8) with random signs: a 64 MB pool on the device, tiled into any buffer.
struct Fp8Pool {
    Dev pool{size_t(64) << 20};
    Fp8Pool() {
        std::mt19937 rng(123);
        std::vector<uint8_t> h(pool.bytes);
        for (uint8_t& b : h) {
            const uint32_t r = rng();
            b = uint8_t((r & 0x80) | (((4 + (r >> 8) % 6) & 0xF) << 3) | ((r >> 16) & 7));  // exponent field 4..9
        }
        upload(pool, h);
    }
    void fill(void* dst, size_t n) const {
        for (size_t off = 0; off < n; off += pool.bytes)
            CK(cudaMemcpy(static_cast<uint8_t*>(dst) + off, pool.p, std::min(pool.bytes, n - off), cudaMemcpyDeviceToDevice));
    }
};

// ---- Shapes -------------------------------------------------------------------------------------------------

struct Shape {
    std::string kind, dist;  // "moe" / "dense"; "skewed" / "uniform" / "-"
    int32_t E = 1;
    int64_t M = 0;
    std::vector<int64_t> sizes;
};

// Sizes proportional to exp(z), z ~ N(0, 1) from a fixed seed, rounded (largest remainders) to sum to M; for
// E = 256 the 8 groups of the smallest z get no rows.
std::vector<int64_t> skewed_sizes(int32_t e, int64_t m) {
    std::mt19937 rng(uint32_t(1000 + e));
    std::normal_distribution<double> z(0.0, 1.0);
    std::vector<double> w(static_cast<size_t>(e));
    for (double& x : w) x = std::exp(1.0 * z(rng));
    if (e == 256) {
        std::vector<size_t> order(w.size());
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return w[a] < w[b]; });
        for (size_t i = 0; i < 8; ++i) w[order[i]] = 0.0;
    }
    const double total = std::accumulate(w.begin(), w.end(), 0.0);
    std::vector<int64_t> sizes(static_cast<size_t>(e));
    std::vector<std::pair<double, size_t>> rest;
    int64_t used = 0;
    for (size_t g = 0; g < w.size(); ++g) {
        const double exact = double(m) * w[g] / total;
        sizes[g] = int64_t(std::floor(exact));
        used += sizes[g];
        rest.push_back({exact - std::floor(exact), g});
    }
    std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = 0; used < m; ++i, ++used) sizes[rest[i % rest.size()].second]++;
    return sizes;
}

std::vector<int64_t> uniform_sizes(int32_t e, int64_t m) {
    std::vector<int64_t> sizes(size_t(e), m / e);
    for (int64_t g = 0; g < m % e; ++g) sizes[size_t(g)]++;
    return sizes;
}

// ---- Timing ---------------------------------------------------------------------------------------------------

struct Timing {
    double median_us = NAN, min_us = NAN;
    std::string error;  // why it was not measured
};

struct Timer {
    cudaStream_t stream;
    Dev flush{size_t(256) << 20};
    cudaEvent_t a, b;
    int reps;
    Timer(cudaStream_t s, int r) : stream(s), reps(r) {
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
    }
    ~Timer() {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
    // op() enqueues one operation on `stream` and returns "" or why it failed.
    template <class Op>
    Timing time(Op&& op) {
        Timing t;
        for (int i = 0; i < 3; ++i) {
            t.error = op();
            if (!t.error.empty()) {
                cudaStreamSynchronize(stream);
                return t;
            }
        }
        CK(cudaStreamSynchronize(stream));
        CK(cudaGetLastError());
        std::vector<double> us;
        for (int r = 0; r < reps; ++r) {
            CK(cudaMemsetAsync(flush.p, r & 0xFF, flush.bytes, stream));
            CK(cudaEventRecord(a, stream));
            t.error = op();
            CK(cudaEventRecord(b, stream));
            CK(cudaEventSynchronize(b));
            if (!t.error.empty()) return t;
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, a, b));
            us.push_back(double(ms) * 1000.0);
        }
        CK(cudaGetLastError());
        std::sort(us.begin(), us.end());
        t.median_us = us[us.size() / 2];
        t.min_us = us.front();
        return t;
    }
};

std::string fq_error(fqStatus_t s) {
    return s == FQ_STATUS_SUCCESS ? "" : std::string(fqGetStatusString(s)) + ": " + fqGetLastErrorMessage();
}

// ---- fq descriptors ---------------------------------------------------------------------------------------------

struct QuantDesc {
    fqQuantDesc_t d = nullptr;
    QuantDesc() { FQ_SETUP(fqQuantDescCreate(&d)); }
    ~QuantDesc() { fqQuantDescDestroy(d); }
    QuantDesc& i32(int32_t attr, int32_t v) {
        FQ_SETUP(fqQuantDescSetAttribute(d, attr, &v, sizeof v));
        return *this;
    }
    QuantDesc& ptr(int32_t attr, const void* v) {
        FQ_SETUP(fqQuantDescSetAttribute(d, attr, &v, sizeof v));
        return *this;
    }
};

// The epilogue of every measurement: SiLU, SPLIT gate first, PER_GROUP 128 e4m3, COL_MAJOR_TMA, probability.
void configure_epilogue(QuantDesc& q, const float* prob) {
    q.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT)
        .i32(FQ_QUANT_DESC_GATE_ORDER, FQ_GATE_ORDER_GATE_FIRST).i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_GROUP)
        .i32(FQ_QUANT_DESC_GROUP_SIZE, 128).i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP8_E4M3FN)
        .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR_TMA).ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob);
}

struct GemmDesc {
    fqGroupedGemmDesc_t d = nullptr;
    GemmDesc() { FQ_SETUP(fqGroupedGemmDescCreate(&d)); }
    ~GemmDesc() { fqGroupedGemmDescDestroy(d); }
    GemmDesc& i32(int32_t attr, int32_t v) {
        FQ_SETUP(fqGroupedGemmDescSetAttribute(d, attr, &v, sizeof v));
        return *this;
    }
    GemmDesc& ptr(int32_t attr, const void* v) {
        FQ_SETUP(fqGroupedGemmDescSetAttribute(d, attr, &v, sizeof v));
        return *this;
    }
};

struct Layout {
    fqTensorLayout_t l = nullptr;
    Layout(int32_t type, int64_t rows, int64_t cols) { FQ_SETUP(fqTensorLayoutCreate(&l, type, rows, cols, cols)); }
    ~Layout() { fqTensorLayoutDestroy(l); }
};

// ---- One shape ----------------------------------------------------------------------------------------------------

struct Result {
    Shape shape;
    int64_t groups_nonempty = 0;
    int64_t lt_padded_groups = 0, lt_pad_rows = 0;  // groups cuBLASLt ran padded to kLtRows, and the rows added
    Timing fused, gemm, pipeline, cublaslt;
    double c_rel = NAN, q_match = NAN;
    double flops() const { return 2.0 * double(shape.M) * double(kN) * double(kK); }
};

double tflops(double flops, double us) { return std::isnan(us) ? NAN : flops / us * 1e-6; }

struct Buffers {
    int32_t max_e;
    int64_t max_m;
    Dev b, sb, a, sa, sa_groups, prob, offsets, c_fq, c_lt, out_fused, out_pipe, scales_fused, scales_pipe, ws;
    // A and cuBLASLt's C have kLtRows rows more than the largest M (the last group's padding, see the header),
    // sa_groups each group's scales padded to kLtRows rows.
    Buffers(int32_t e, int64_t m, const Fp8Pool& pool)
        : max_e(e), max_m(m), b(size_t(e) * kN * kK), sb(size_t(e) * kNb * kKb * 4), a(size_t(m + kLtRows) * kK),
          sa(size_t((m + 3) / 4 * 4 + 4 * e) * kKb * 4), sa_groups(size_t(m + kLtRows * e) * kKb * 4), prob(size_t(m) * 4),
          offsets(size_t(e + 1) * 4), c_fq(size_t(m) * kN * 2), c_lt(size_t(m + kLtRows) * kN * 2), out_fused(size_t(m) * kH),
          out_pipe(size_t(m) * kH), scales_fused(size_t(m + 4) * (kH / 128) * 4), scales_pipe(size_t(m + 4) * (kH / 128) * 4),
          ws(size_t(32) << 20) {
        pool.fill(b.p, b.bytes);
        pool.fill(a.p, a.bytes);
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(0.5f, 2.0f);
        std::vector<float> sbh(sb.bytes / 4);
        for (float& x : sbh) x = u(rng) / 16;
        upload(sb, sbh);
        upload(prob, std::vector<float>(size_t(m), 0.5f));
    }
};

class Bench {
public:
    Bench(int reps, bool with_lt) : timer_(nullptr, reps), with_lt_(with_lt) {
        FQ_SETUP(fqCreate(&h_, FQ_BACKEND_CUDA, 0));
        if (cublasLtCreate(&lt_) != CUBLAS_STATUS_SUCCESS) throw SetupError("cublasLtCreate failed");
        CK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        timer_.stream = stream_;
    }
    ~Bench() {
        cublasLtDestroy(lt_);
        fqDestroy(h_);
        cudaStreamDestroy(stream_);
    }

    // GB/s of a device-to-device copy (bytes read + written), median of 10.
    double copy_gbps() {
        const size_t bytes = size_t(1) << 30;
        Dev x(bytes), y(bytes);
        const Timing t = timer_.time([&] {
            CK(cudaMemcpyAsync(y.p, x.p, bytes, cudaMemcpyDeviceToDevice, stream_));
            return std::string();
        });
        return 2.0 * double(bytes) / t.median_us * 1e-3;
    }

    Result run(const Shape& s, Buffers& buf) {
        Result r;
        r.shape = s;
        const int64_t m = s.M;
        std::vector<int32_t> offsets(1, 0);
        for (int64_t x : s.sizes) offsets.push_back(offsets.back() + int32_t(x));
        for (int64_t x : s.sizes) r.groups_nonempty += x > 0;
        upload(buf.offsets, offsets);

        // A's scales: COL_MAJOR_TMA [kb][round_up(M, 4)] for fqGroupedGemm, and per group [kb][lt_rows(M_g)]
        // (what cuBLASLt's VEC128_32F reads for the group's rows as it runs them) one group after the other, with
        // the same values and 0 for the padding rows.
        const int64_t ld = (m + 3) / 4 * 4;
        std::mt19937 rng(static_cast<uint32_t>(m));
        std::uniform_real_distribution<float> u(0.5f, 2.0f);
        std::vector<float> sa(size_t(ld * kKb), 0.0f), sa_groups;
        for (int64_t kb = 0; kb < kKb; ++kb)
            for (int64_t i = 0; i < m; ++i) sa[size_t(kb * ld + i)] = u(rng) / 16;
        std::vector<size_t> sa_group_at;
        for (size_t g = 0; g < s.sizes.size(); ++g) {
            const int64_t mg = s.sizes[g], ldg = lt_rows(mg);
            if (mg > 0 && ldg > mg) r.lt_padded_groups++, r.lt_pad_rows += ldg - mg;
            sa_group_at.push_back(sa_groups.size());
            for (int64_t kb = 0; kb < kKb; ++kb)
                for (int64_t i = 0; i < ldg; ++i) sa_groups.push_back(i < mg ? sa[size_t(kb * ld + offsets[g] + i)] : 0.0f);
        }
        upload(buf.sa, sa);
        upload(buf.sa_groups, sa_groups);

        const auto* prob = buf.prob.as<float>();
        const bool moe = s.E > 1;
        // (1) fused and (2) the GEMM alone.
        QuantDesc epi;
        configure_epilogue(epi, prob);
        Layout la(FQ_TYPE_FP8_E4M3FN, m, kK), lb(FQ_TYPE_FP8_E4M3FN, int64_t(s.E) * kN, kK), lo(FQ_TYPE_FP8_E4M3FN, m, kH),
            lc(FQ_TYPE_BF16, m, kN);
        size_t scale_bytes = 0;
        FQ_SETUP(fqGetScaleBufferSize(epi.d, m, kH, FQ_OUTPUT_ROWWISE, &scale_bytes));
        if (scale_bytes > buf.scales_fused.bytes) throw SetupError("scale buffer too small");
        GemmDesc fused, gemm;
        fused.i32(FQ_GEMM_DESC_NUM_GROUPS, s.E);
        gemm.i32(FQ_GEMM_DESC_NUM_GROUPS, s.E).i32(FQ_GEMM_DESC_QUANTIZE, 0).ptr(FQ_GEMM_DESC_C_OUTPUT_POINTER, buf.c_fq.p);
        if (moe) {
            fused.ptr(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, buf.offsets.p);
            gemm.ptr(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, buf.offsets.p);
        }
        const auto fs = reinterpret_cast<fqStream_t>(stream_);
        r.fused = timer_.time([&] {
            return fq_error(fqGroupedGemm(h_, fused.d, epi.d, la.l, buf.a.p, buf.sa.p, lb.l, buf.b.p, buf.sb.p, lo.l,
                                          buf.out_fused.p, buf.scales_fused.p, scale_bytes, fs));
        });
        r.gemm = timer_.time([&] {
            return fq_error(fqGroupedGemm(h_, gemm.d, epi.d, la.l, buf.a.p, buf.sa.p, lb.l, buf.b.p, buf.sb.p, nullptr,
                                          nullptr, nullptr, 0, fs));
        });
        if (!with_lt_) return r;

        // (3) the pipeline and (4) cuBLASLt alone: weight as cuBLASLt's A (BLK128x128_32F), activation as B
        // (VEC128_32F), so D (column-major N x M_g) is row-major [M_g, N] at C's row offsets[g].
        std::vector<std::unique_ptr<Fp8BlockScaledGemm>> lt(s.sizes.size());
        std::string lt_error;
        for (size_t g = 0; g < s.sizes.size() && lt_error.empty(); ++g) {
            if (s.sizes[g] == 0) continue;
            lt[g] = std::make_unique<Fp8BlockScaledGemm>();
            const cublasStatus_t st = lt[g]->init(lt_, kN, lt_rows(s.sizes[g]), kK, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F,
                                                  CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, buf.ws.bytes);
            if (st != CUBLAS_STATUS_SUCCESS)
                lt_error = "cuBLASLt: no algorithm for group " + std::to_string(g) + " (" + std::to_string(s.sizes[g]) +
                           " rows, run as " + std::to_string(lt_rows(s.sizes[g])) + "): " + lt_status_name(st);
        }
        QuantDesc q;
        configure_epilogue(q, prob);
        if (moe)
            q.i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, s.E)
                .ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, buf.offsets.p);
        auto gemms = [&]() -> std::string {
            if (!lt_error.empty()) return lt_error;
            for (size_t g = 0; g < s.sizes.size(); ++g) {
                if (!lt[g]) continue;
                const cublasStatus_t st = lt[g]->run(buf.b.at(g * size_t(kN * kK)), buf.sb.as<float>() + g * size_t(kNb * kKb),
                                                     buf.a.at(size_t(offsets[g]) * kK), buf.sa_groups.as<float>() + sa_group_at[g],
                                                     buf.c_lt.at(size_t(offsets[g]) * kN * 2), buf.ws.p, stream_);
                if (st != CUBLAS_STATUS_SUCCESS) return std::string("cublasLtMatmul: ") + lt_status_name(st);
            }
            return std::string();
        };
        r.cublaslt = timer_.time(gemms);
        r.pipeline = timer_.time([&] {
            std::string e = gemms();
            if (e.empty())
                e = fq_error(fqQuantize(h_, q.d, lc.l, buf.c_lt.p, lo.l, buf.out_pipe.p, buf.scales_pipe.p, scale_bytes,
                                        nullptr, 0, fs));
            return e;
        });

        // Sanity: fqGroupedGemm's C against cuBLASLt's, and the quantized bytes of the two paths.
        if (r.gemm.error.empty() && r.cublaslt.error.empty()) {
            std::vector<uint16_t> x(size_t(m * kN)), y(size_t(m * kN));
            CK(cudaMemcpy(x.data(), buf.c_fq.p, x.size() * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(y.data(), buf.c_lt.p, y.size() * 2, cudaMemcpyDeviceToHost));
            auto f = [](uint16_t h) {
                const uint32_t u = uint32_t(h) << 16;
                float v;
                std::memcpy(&v, &u, 4);
                return double(v);
            };
            double num = 0, den = 0;
            for (size_t i = 0; i < x.size(); ++i) {
                const double d = f(x[i]) - f(y[i]);
                num += d * d;
                den += f(y[i]) * f(y[i]);
            }
            r.c_rel = den > 0 ? std::sqrt(num / den) : NAN;
        }
        if (r.fused.error.empty() && r.pipeline.error.empty()) {
            std::vector<uint8_t> x(size_t(m * kH)), y(size_t(m * kH));
            CK(cudaMemcpy(x.data(), buf.out_fused.p, x.size(), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(y.data(), buf.out_pipe.p, y.size(), cudaMemcpyDeviceToHost));
            size_t same = 0;
            for (size_t i = 0; i < x.size(); ++i) same += x[i] == y[i];
            r.q_match = double(same) / double(x.size());
        }
        return r;
    }

private:
    fqHandle_t h_ = nullptr;
    cublasLtHandle_t lt_ = nullptr;
    cudaStream_t stream_ = nullptr;
    Timer timer_;
    bool with_lt_;
};

// ---- Output -----------------------------------------------------------------------------------------------------

std::string json_string(const std::string& s) {
    std::string o = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\', o += c;
        else if (uint8_t(c) < 0x20) o += ' ';
        else o += c;
    }
    return o + "\"";
}

std::string num(double v) {
    if (std::isnan(v)) return "null";
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}

std::string cell(double v, const char* fmt) {
    if (std::isnan(v)) return "-";
    char b[32];
    std::snprintf(b, sizeof b, fmt, v);
    return b;
}

std::string sizes_summary(const std::vector<int64_t>& s) {
    if (s.size() == 1) return "-";
    const auto [lo, hi] = std::minmax_element(s.begin(), s.end());
    const int64_t empty = std::count(s.begin(), s.end(), 0);
    return std::to_string(*lo) + ".." + std::to_string(*hi) + (empty ? " (" + std::to_string(empty) + " empty)" : "");
}

}  // namespace

int main(int argc, char** argv) {
    std::string json, csv, shapes_arg = "moe,dense";
    int reps = 20;
    bool quick = false, with_lt = true;
    double peak = 1979.0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--json") json = value();
        else if (a == "--csv") csv = value();
        else if (a == "--reps") reps = std::max(10, std::atoi(value().c_str()));
        else if (a == "--shapes") shapes_arg = value();
        else if (a == "--peak") peak = std::atof(value().c_str());
        else if (a == "--quick") quick = true;
        else if (a == "--no-cublaslt") with_lt = false;
        else {
            std::fprintf(stderr, "usage: fq_bench_gemm [--json FILE] [--csv FILE] [--reps N] [--shapes moe,dense] [--quick] "
                                 "[--no-cublaslt] [--peak TFLOPS]\n");
            return 2;
        }
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("skipped: no CUDA device on this machine\n");
        return 77;
    }
    const bool want_moe = shapes_arg.find("moe") != std::string::npos, want_dense = shapes_arg.find("dense") != std::string::npos;
    std::vector<Shape> shapes;
    if (want_moe)
        for (int32_t e : quick ? std::vector<int32_t>{8} : std::vector<int32_t>{8, 32, 256})
            for (int64_t m : quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{4096, 16384})
                for (const char* dist : {"skewed", "uniform"})
                    shapes.push_back({"moe", dist, e, m, std::string(dist) == "skewed" ? skewed_sizes(e, m) : uniform_sizes(e, m)});
    if (want_dense)
        for (int64_t m : quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{128, 512, 2048, 4096, 8192, 16384})
            shapes.push_back({"dense", "-", 1, m, {m}});

    std::vector<Result> results;
    int failures = 0;
    double copy = NAN;
    cudaDeviceProp prop{};
    int clock_khz = 0, mem_clock_khz = 0;
    try {
        CK(cudaGetDeviceProperties(&prop, 0));
        CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
        CK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, 0));
        std::printf("device: %s (sm_%d%d, %d SMs, max SM clock %d MHz, memory clock %d MHz, L2 %d MB); cuBLASLt %zu; "
                    "fq %u\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount, clock_khz / 1000,
                    mem_clock_khz / 1000, prop.l2CacheSize >> 20, cublasLtGetVersion(), fqGetVersion());
        std::printf("N = %lld (2 x %lld), K = %lld; epilogue: SiLU split gate-first, PER_GROUP 128 e4m3, COL_MAJOR_TMA, "
                    "prob; %d reps after an L2 flush each, median (min); peak %.0f TFLOP/s\n",
                    (long long)kN, (long long)kH, (long long)kK, reps, peak);
        Bench bench(reps, with_lt);
        copy = bench.copy_gbps();
        std::printf("device-to-device copy (1 GiB, read + write): %.0f GB/s\n\n", copy);
        int32_t max_e = 1;
        int64_t max_m = 0;
        for (const Shape& s : shapes) max_e = std::max(max_e, s.E), max_m = std::max(max_m, s.M);
        const Fp8Pool pool;
        Buffers buf(max_e, max_m, pool);
        std::printf("%-5s %3s %6s %-7s %-18s | %9s %7s %5s | %9s %7s | %9s %9s %7s | %7s | %8s %6s\n", "kind", "E", "M", "dist",
                    "group rows", "fused us", "TF/s", "%pk", "gemm us", "TF/s", "pipe us", "lt us", "lt TF/s", "speedup",
                    "C rel", "q same");
        for (const Shape& s : shapes) {
            const Result r = bench.run(s, buf);
            results.push_back(r);
            const double f = r.flops();
            std::printf("%-5s %3d %6lld %-7s %-18s | %9s %7s %5s | %9s %7s | %9s %9s %7s | %7s | %8s %6s\n", s.kind.c_str(),
                        s.E, (long long)s.M, s.dist.c_str(), sizes_summary(s.sizes).c_str(),
                        cell(r.fused.median_us, "%.1f").c_str(), cell(tflops(f, r.fused.median_us), "%.0f").c_str(),
                        cell(100.0 * tflops(f, r.fused.median_us) / peak, "%.0f").c_str(), cell(r.gemm.median_us, "%.1f").c_str(),
                        cell(tflops(f, r.gemm.median_us), "%.0f").c_str(), cell(r.pipeline.median_us, "%.1f").c_str(),
                        cell(r.cublaslt.median_us, "%.1f").c_str(), cell(tflops(f, r.cublaslt.median_us), "%.0f").c_str(),
                        cell(r.pipeline.median_us / r.fused.median_us, "%.2fx").c_str(), cell(r.c_rel, "%.1e").c_str(),
                        cell(r.q_match, "%.3f").c_str());
            for (const auto& [what, t] : {std::pair<const char*, const Timing*>{"fused", &r.fused}, {"gemm", &r.gemm},
                                          {"pipeline", &r.pipeline}, {"cublaslt", &r.cublaslt}})
                if (!t->error.empty()) {
                    std::printf("      %s not measured: %s\n", what, t->error.c_str());
                    failures += std::string(what) == "fused" || std::string(what) == "gemm";
                }
            if (with_lt && r.lt_padded_groups > 0)
                std::printf("      lt pad: cuBLASLt ran %lld groups padded to a multiple of %lld rows (+%lld rows, %.1f%% of M)\n",
                            (long long)r.lt_padded_groups, (long long)kLtRows, (long long)r.lt_pad_rows,
                            100.0 * double(r.lt_pad_rows) / double(s.M));
            std::fflush(stdout);
        }
        std::printf("\nmin times (us): ");
        for (const Result& r : results)
            std::printf("%s/%d/%lld/%s fused %s gemm %s pipe %s;  ", r.shape.kind.c_str(), r.shape.E, (long long)r.shape.M,
                        r.shape.dist.c_str(), cell(r.fused.min_us, "%.1f").c_str(), cell(r.gemm.min_us, "%.1f").c_str(),
                        cell(r.pipeline.min_us, "%.1f").c_str());
        std::printf("\n");
    } catch (const SetupError& e) {
        std::fprintf(stderr, "setup error: %s\n", e.what());
        return 2;
    }

    if (!json.empty()) {
        FILE* f = std::fopen(json.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "cannot write %s\n", json.c_str());
            return 2;
        }
        std::fprintf(f, "{\n \"device\": %s,\n \"sm\": %d,\n \"max_sm_clock_mhz\": %d,\n \"cublaslt_version\": %zu,\n"
                        " \"n\": %lld,\n \"k\": %lld,\n \"reps\": %d,\n \"peak_tflops\": %s,\n \"copy_gbps\": %s,\n"
                        " \"method\": %s,\n \"results\": [\n",
                     json_string(prop.name).c_str(), prop.major * 10 + prop.minor, clock_khz / 1000, cublasLtGetVersion(),
                     (long long)kN, (long long)kK, reps, num(peak).c_str(), num(copy).c_str(),
                     json_string("CUDA events around one enqueue on one stream, L2 flushed (256 MB memset) before each rep, "
                                 "3 warm-up runs; median and min; TFLOP/s = 2*M*N*K/t").c_str());
        for (size_t i = 0; i < results.size(); ++i) {
            const Result& r = results[i];
            std::string sizes;
            for (int64_t x : r.shape.sizes) sizes += (sizes.empty() ? "" : ",") + std::to_string(x);
            std::fprintf(f, "  {\"kind\": %s, \"dist\": %s, \"E\": %d, \"M\": %lld, \"groups_nonempty\": %lld, \"sizes\": [%s],\n"
                            "   \"lt_padded_groups\": %lld, \"lt_pad_rows\": %lld,\n",
                         json_string(r.shape.kind).c_str(), json_string(r.shape.dist).c_str(), r.shape.E,
                         (long long)r.shape.M, (long long)r.groups_nonempty, sizes.c_str(), (long long)r.lt_padded_groups,
                         (long long)r.lt_pad_rows);
            const double fl = r.flops();
            for (const auto& [what, t] : {std::pair<const char*, const Timing*>{"fused", &r.fused}, {"gemm", &r.gemm},
                                          {"pipeline", &r.pipeline}, {"cublaslt", &r.cublaslt}})
                std::fprintf(f, "   \"%s\": {\"median_us\": %s, \"min_us\": %s, \"tflops\": %s, \"error\": %s},\n", what,
                             num(t->median_us).c_str(), num(t->min_us).c_str(), num(tflops(fl, t->median_us)).c_str(),
                             json_string(t->error).c_str());
            std::fprintf(f, "   \"speedup_fused_vs_pipeline\": %s, \"fused_pct_peak\": %s, \"c_rel_vs_cublaslt\": %s, "
                            "\"quantized_bytes_equal\": %s}%s\n",
                         num(r.pipeline.median_us / r.fused.median_us).c_str(),
                         num(100.0 * tflops(fl, r.fused.median_us) / peak).c_str(), num(r.c_rel).c_str(),
                         num(r.q_match).c_str(), i + 1 < results.size() ? "," : "");
        }
        std::fprintf(f, " ]\n}\n");
        std::fclose(f);
    }
    if (!csv.empty()) {
        FILE* f = std::fopen(csv.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "cannot write %s\n", csv.c_str());
            return 2;
        }
        std::fprintf(f, "kind,dist,E,M,N,K,fused_us,fused_min_us,fused_tflops,gemm_us,gemm_min_us,gemm_tflops,pipeline_us,"
                        "pipeline_min_us,cublaslt_us,cublaslt_min_us,cublaslt_tflops,speedup,c_rel,q_same\n");
        for (const Result& r : results) {
            const double fl = r.flops();
            std::fprintf(f, "%s,%s,%d,%lld,%lld,%lld,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", r.shape.kind.c_str(),
                         r.shape.dist.c_str(), r.shape.E, (long long)r.shape.M, (long long)kN, (long long)kK,
                         num(r.fused.median_us).c_str(), num(r.fused.min_us).c_str(), num(tflops(fl, r.fused.median_us)).c_str(),
                         num(r.gemm.median_us).c_str(), num(r.gemm.min_us).c_str(), num(tflops(fl, r.gemm.median_us)).c_str(),
                         num(r.pipeline.median_us).c_str(), num(r.pipeline.min_us).c_str(), num(r.cublaslt.median_us).c_str(),
                         num(r.cublaslt.min_us).c_str(), num(tflops(fl, r.cublaslt.median_us)).c_str(),
                         num(r.pipeline.median_us / r.fused.median_us).c_str(), num(r.c_rel).c_str(), num(r.q_match).c_str());
        }
        std::fclose(f);
    }
    return failures ? 1 : 0;
}
