// One transformer MLP in FP8 on the GPU, with fq writing every scale in the layout cuBLASLt reads:
//
//   x [T, H] bf16 --fq--> x8 e4m3 + per-group-128 scales, COL_MAJOR_TMA   (cuBLASLt VEC128_32F)
//   h [T, 2I] bf16 = x8 . Wgu^T                 cuBLASLt, Wgu [2I, H] e4m3 + BLOCK_2D scales (BLK128x128_32F)
//   a [T, I] e4m3 + scales = quant(silu(h_gate) * h_up)      fq, fused, COL_MAJOR_TMA   (VEC128_32F)
//   y [T, H] bf16 = a . Wd^T                    cuBLASLt, Wd [H, I] e4m3 + BLOCK_2D scales
//
// Scale layouts (examples/cublaslt_fp8_gemm.h): VEC128_32F reads (token t, k-block kb) at
// kb * round_up(T, 4) + t, fq's COL_MAJOR_TMA (= COL_MAJOR when T % 4 == 0); BLK128x128_32F reads (row-block rb,
// kb) at rb * round_up(ceil(K/128), 4) + kb, fq's BLOCK_2D ROW_MAJOR, re-strided once after the weights are
// quantized when ceil(K/128) % 4 != 0 (not COL_MAJOR, which this example first used: relative error 0.97).
//
// The weights are quantized once by fq (BLOCK_2D). cuBLASLt gets each weight as its A operand and the
// activation as B (TN, as TransformerEngine calls it), so its column-major output is the row-major [T, n]
// the next step reads. Where cuBLASLt has no algorithm for that operand order, the example uses the one
// docs/spec.md §4 measured (activation as A) and transposes each GEMM's output with cublasLtMatrixTransform, an
// extra step it prints. The result is checked against a bf16 model of the same MLP (fp32 accumulation, h and
// a rounded to bf16) computed by a plain CUDA kernel, and the time of each step is printed.
//
// Usage: fq_mlp_cublaslt [--tokens T] [--hidden H] [--inter I] [--iters N]     (defaults 256 2048 4096 50)
// Exit status: 0 when the relative error is within the bound, 1 when not, 2 on a setup error, 77 without a
// GPU or where cuBLASLt has no block-scaled FP8 GEMM (it has them on Hopper, sm_90).
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <random>
#include <vector>

#include "cublaslt_fp8_gemm.h"
#include "fusedquant/fusedquant.h"

namespace {

constexpr double kErrorBound = 0.08;  // FP8 e4m3 operands in both GEMMs: a few percent is expected

#define CUDA_CHECK(x)                                                                                    \
    do {                                                                                                 \
        cudaError_t e_ = (x);                                                                            \
        if (e_ != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); std::exit(2); } \
    } while (0)
#define FQ_CHECK(x)                                                                                      \
    do {                                                                                                 \
        fqStatus_t s_ = (x);                                                                             \
        if (s_ != FQ_STATUS_SUCCESS) { std::fprintf(stderr, "%s: %s\n", #x, fqGetLastErrorMessage()); std::exit(2); } \
    } while (0)
#define LT_CHECK(x)                                                                                      \
    do {                                                                                                 \
        cublasStatus_t s_ = (x);                                                                         \
        if (s_ != CUBLAS_STATUS_SUCCESS) { std::fprintf(stderr, "%s: %s\n", #x, lt_status_name(s_)); std::exit(2); } \
    } while (0)

template <class T>
T* device_alloc(size_t count) {
    T* p = nullptr;
    CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    return p;
}

// Normal values scaled by 2^e per 128-row x 128-column tile (tiled) or per row and 128 columns, so a scale
// read from the wrong place shows in the error.
std::vector<__nv_bfloat16> random_bf16(std::mt19937& rng, int64_t rows, int64_t cols, float sigma, bool tiled) {
    std::normal_distribution<float> normal(0.0f, sigma);
    std::vector<__nv_bfloat16> v(size_t(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
            const int64_t rb = tiled ? r / 128 : r;
            const int e = int((rb * 5 + (c / 128) * 3) % 5) - 2;
            v[size_t(r * cols + c)] = __float2bfloat16(std::ldexp(normal(rng), e));
        }
    return v;
}

// ---- The bf16 reference: C[m, n] = sum_k A[m, k] B[n, k], fp32 accumulation -------------------------------
constexpr int kTile = 16;
__global__ void reference_gemm_nt(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, int m, int n, int k) {
    __shared__ float at[kTile][kTile + 1], bt[kTile][kTile + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * kTile + ty, col = blockIdx.x * kTile + tx, brow = blockIdx.x * kTile + ty;
    float acc = 0.0f;
    for (int t0 = 0; t0 < k; t0 += kTile) {
        at[ty][tx] = row < m && t0 + tx < k ? __bfloat162float(a[size_t(row) * k + t0 + tx]) : 0.0f;
        bt[ty][tx] = brow < n && t0 + tx < k ? __bfloat162float(b[size_t(brow) * k + t0 + tx]) : 0.0f;
        __syncthreads();
        for (int u = 0; u < kTile; ++u) acc += at[ty][u] * bt[tx][u];
        __syncthreads();
    }
    if (row < m && col < n) c[size_t(row) * n + col] = acc;
}

// a = bf16(silu(bf16(h_gate)) * bf16(h_up)): h [T, 2I] fp32 with gate first.
__global__ void reference_silu_mul(const float* h, __nv_bfloat16* a, int t, int inter) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= inter) return;
    const float g = __bfloat162float(__float2bfloat16(h[size_t(i) * 2 * inter + j]));
    const float u = __bfloat162float(__float2bfloat16(h[size_t(i) * 2 * inter + inter + j]));
    a[size_t(i) * inter + j] = __float2bfloat16(g / (1.0f + expf(-g)) * u);
}

// y [T, H] and h [T, 2I] (the gate-up GEMM's output, to tell which GEMM goes wrong), fp32.
void reference_mlp(const __nv_bfloat16* x, const __nv_bfloat16* wgu, const __nv_bfloat16* wd, float* y, float* h, int t,
                   int hidden, int inter) {
    __nv_bfloat16* a = device_alloc<__nv_bfloat16>(size_t(t) * inter);
    const dim3 tile(kTile, kTile);
    reference_gemm_nt<<<dim3((2 * inter + kTile - 1) / kTile, (t + kTile - 1) / kTile), tile>>>(x, wgu, h, t, 2 * inter, hidden);
    reference_silu_mul<<<dim3((inter + 127) / 128, t), 128>>>(h, a, t, inter);
    reference_gemm_nt<<<dim3((hidden + kTile - 1) / kTile, (t + kTile - 1) / kTile), tile>>>(a, wd, y, t, hidden, inter);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    cudaFree(a);
}

// ---- fq descriptors -------------------------------------------------------------------------------------
struct FqQuant {
    fqQuantDesc_t desc = nullptr;
    fqTensorLayout_t in = nullptr, out = nullptr;
    size_t scale_bytes = 0;
    char variant[64] = "";

    // rows x cols outputs, e4m3fn, fp32 scales in `layout`. gated: silu-and-mul of [rows, 2 cols] (gate first).
    FqQuant(fqHandle_t h, int32_t scheme, int32_t layout, int64_t rows, int64_t cols, bool gated) {
        FQ_CHECK(fqQuantDescCreate(&desc));
        const int32_t group = 128;
        FQ_CHECK(fqQuantDescSetAttribute(desc, FQ_QUANT_DESC_SCHEME, &scheme, 4));
        FQ_CHECK(fqQuantDescSetAttribute(desc, FQ_QUANT_DESC_GROUP_SIZE, &group, 4));
        FQ_CHECK(fqQuantDescSetAttribute(desc, FQ_QUANT_DESC_SCALE_LAYOUT, &layout, 4));
        if (gated) {
            const int32_t act = FQ_ACTIVATION_SILU, gate = FQ_GATE_LAYOUT_SPLIT;
            FQ_CHECK(fqQuantDescSetAttribute(desc, FQ_QUANT_DESC_ACTIVATION, &act, 4));
            FQ_CHECK(fqQuantDescSetAttribute(desc, FQ_QUANT_DESC_GATE_LAYOUT, &gate, 4));
        }
        const int64_t in_cols = gated ? 2 * cols : cols;
        FQ_CHECK(fqTensorLayoutCreate(&in, FQ_TYPE_BF16, rows, in_cols, in_cols));
        FQ_CHECK(fqTensorLayoutCreate(&out, FQ_TYPE_FP8_E4M3FN, rows, cols, cols));
        FQ_CHECK(fqGetScaleBufferSize(desc, rows, cols, FQ_OUTPUT_ROWWISE, &scale_bytes));
        FQ_CHECK(fqQuerySupport(h, desc, in, out, variant, sizeof variant));
    }
    ~FqQuant() {
        fqTensorLayoutDestroy(in);
        fqTensorLayoutDestroy(out);
        fqQuantDescDestroy(desc);
    }
    void run(fqHandle_t h, const void* x, void* q, float* scales, cudaStream_t s) const {
        FQ_CHECK(fqQuantize(h, desc, in, x, out, q, scales, scale_bytes, nullptr, 0, reinterpret_cast<fqStream_t>(s)));
    }
};

// out = in^T for a column-major rows x cols bf16 matrix in (= row-major [cols, rows]): out is row-major [rows, cols].
class Transpose {
public:
    Transpose(cublasLtHandle_t lt, int64_t rows, int64_t cols) : lt_(lt) {
        LT_CHECK(cublasLtMatrixTransformDescCreate(&desc_, CUDA_R_32F));
        const int32_t op = CUBLAS_OP_T;
        LT_CHECK(cublasLtMatrixTransformDescSetAttribute(desc_, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &op, sizeof op));
        LT_CHECK(cublasLtMatrixLayoutCreate(&in_, CUDA_R_16BF, uint64_t(rows), uint64_t(cols), rows));
        LT_CHECK(cublasLtMatrixLayoutCreate(&out_, CUDA_R_16BF, uint64_t(cols), uint64_t(rows), cols));
    }
    ~Transpose() {
        cublasLtMatrixLayoutDestroy(in_);
        cublasLtMatrixLayoutDestroy(out_);
        cublasLtMatrixTransformDescDestroy(desc_);
    }
    void run(const void* in, void* out, cudaStream_t s) const {
        const float one = 1.0f, zero = 0.0f;
        LT_CHECK(cublasLtMatrixTransform(lt_, desc_, &one, in, in_, &zero, nullptr, nullptr, out, out_, s));
    }

private:
    cublasLtHandle_t lt_;
    cublasLtMatrixTransformDesc_t desc_ = nullptr;
    cublasLtMatrixLayout_t in_ = nullptr, out_ = nullptr;
};

// Average microseconds of `step` over `iters` back-to-back launches (after one warm-up).
template <class Step>
double time_us(cudaStream_t s, int iters, Step&& step) {
    step();
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    CUDA_CHECK(cudaEventRecord(a, s));
    for (int i = 0; i < iters; ++i) step();
    CUDA_CHECK(cudaEventRecord(b, s));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return double(ms) * 1000.0 / iters;
}

}  // namespace

int main(int argc, char** argv) {
    int64_t tokens = 256, hidden = 2048, inter = 4096;
    int iters = 50;
    for (int i = 1; i + 1 < argc; i += 2) {
        const long v = std::atol(argv[i + 1]);
        if (!std::strcmp(argv[i], "--tokens")) tokens = v;
        else if (!std::strcmp(argv[i], "--hidden")) hidden = v;
        else if (!std::strcmp(argv[i], "--inter")) inter = v;
        else if (!std::strcmp(argv[i], "--iters")) iters = int(v);
        else { std::fprintf(stderr, "unknown option %s\n", argv[i]); return 2; }
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("skipped: no CUDA device on this machine\n");
        return 77;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("MLP: tokens %lld, hidden %lld, intermediate %lld (gate-up weight [%lld, %lld], down [%lld, %lld])\n",
                (long long)tokens, (long long)hidden, (long long)inter, (long long)(2 * inter), (long long)hidden,
                (long long)hidden, (long long)inter);
    std::printf("device: %s (sm_%d%d), cuBLASLt %zu\n", prop.name, prop.major, prop.minor, cublasLtGetVersion());

    fqHandle_t fq;
    FQ_CHECK(fqCreate(&fq, FQ_BACKEND_CUDA, 0));
    cublasLtHandle_t lt;
    LT_CHECK(cublasLtCreate(&lt));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));

    // Inputs and weights.
    std::mt19937 rng(1);
    const auto hx = random_bf16(rng, tokens, hidden, 1.0f, false);
    const auto hwgu = random_bf16(rng, 2 * inter, hidden, 1.0f / std::sqrt(float(hidden)), true);
    const auto hwd = random_bf16(rng, hidden, inter, 1.0f / std::sqrt(float(inter)), true);
    auto upload = [](const std::vector<__nv_bfloat16>& v) {
        __nv_bfloat16* p = device_alloc<__nv_bfloat16>(v.size());
        CUDA_CHECK(cudaMemcpy(p, v.data(), v.size() * 2, cudaMemcpyHostToDevice));
        return p;
    };
    __nv_bfloat16 *x = upload(hx), *wgu = upload(hwgu), *wd = upload(hwd);

    // fq problems: the two weights (BLOCK_2D, ROW_MAJOR), x and the fused activation (per-group 128, COL_MAJOR_TMA).
    const int32_t w_layout = FQ_SCALE_LAYOUT_ROW_MAJOR, a_layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA;
    const FqQuant q_wgu(fq, FQ_SCHEME_BLOCK_2D, w_layout, 2 * inter, hidden, false),
        q_wd(fq, FQ_SCHEME_BLOCK_2D, w_layout, hidden, inter, false);
    const FqQuant q_x(fq, FQ_SCHEME_PER_GROUP, a_layout, tokens, hidden, false),
        q_act(fq, FQ_SCHEME_PER_GROUP, a_layout, tokens, inter, true);
    if (q_x.scale_bytes != lt_vec128_scale_floats(tokens, hidden) * 4 ||
        q_act.scale_bytes != lt_vec128_scale_floats(tokens, inter) * 4) {
        std::fprintf(stderr, "fq's COL_MAJOR_TMA scale buffers (%zu, %zu bytes) are not the VEC128_32F size\n", q_x.scale_bytes,
                     q_act.scale_bytes);
        return 2;
    }
    uint8_t *wgu8 = device_alloc<uint8_t>(size_t(2 * inter * hidden)), *wd8 = device_alloc<uint8_t>(size_t(hidden * inter));
    uint8_t *x8 = device_alloc<uint8_t>(size_t(tokens * hidden)), *a8 = device_alloc<uint8_t>(size_t(tokens * inter));
    // The weights' scales as cuBLASLt reads them (k-blocks padded to 4), and fq's unpadded ROW_MAJOR output.
    float *s_wgu = device_alloc<float>(lt_blk128_scale_floats(2 * inter, hidden)),
          *s_wd = device_alloc<float>(lt_blk128_scale_floats(hidden, inter));
    float *s_wgu_fq = device_alloc<float>(q_wgu.scale_bytes / 4), *s_wd_fq = device_alloc<float>(q_wd.scale_bytes / 4);
    float *s_x = device_alloc<float>(q_x.scale_bytes / 4), *s_a = device_alloc<float>(q_act.scale_bytes / 4);
    __nv_bfloat16 *h = device_alloc<__nv_bfloat16>(size_t(tokens * 2 * inter)), *y = device_alloc<__nv_bfloat16>(size_t(tokens * hidden));

    // cuBLASLt: weight as A (BLK128x128_32F), activation as B (VEC128_32F); D column-major n x T = row-major [T, n].
    const size_t ws_bytes = size_t(32) << 20;
    void* ws = device_alloc<uint8_t>(ws_bytes);
    auto gate_up = std::make_unique<Fp8BlockScaledGemm>(), down = std::make_unique<Fp8BlockScaledGemm>();
    const int32_t blk = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, vec = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    bool weight_as_a = gate_up->init(lt, 2 * inter, tokens, hidden, blk, vec, ws_bytes) == CUBLAS_STATUS_SUCCESS &&
                       down->init(lt, hidden, tokens, inter, blk, vec, ws_bytes) == CUBLAS_STATUS_SUCCESS;
    std::unique_ptr<Transpose> h_transpose, y_transpose;
    __nv_bfloat16 *h_t = nullptr, *y_t = nullptr;
    if (!weight_as_a) {  // activation as A: D column-major T x n, transposed afterwards
        gate_up = std::make_unique<Fp8BlockScaledGemm>();
        down = std::make_unique<Fp8BlockScaledGemm>();
        const cublasStatus_t s1 = gate_up->init(lt, tokens, 2 * inter, hidden, vec, blk, ws_bytes);
        const cublasStatus_t s2 = down->init(lt, tokens, hidden, inter, vec, blk, ws_bytes);
        if (s1 != CUBLAS_STATUS_SUCCESS || s2 != CUBLAS_STATUS_SUCCESS) {
            std::printf("skipped: cuBLASLt has no FP8 GEMM with BLK128x128_32F and VEC128_32F scales here (%s)\n",
                        lt_status_name(s1 != CUBLAS_STATUS_SUCCESS ? s1 : s2));
            return 77;
        }
        h_t = device_alloc<__nv_bfloat16>(size_t(tokens * 2 * inter));
        y_t = device_alloc<__nv_bfloat16>(size_t(tokens * hidden));
        h_transpose = std::make_unique<Transpose>(lt, tokens, 2 * inter);
        y_transpose = std::make_unique<Transpose>(lt, tokens, hidden);
    }
    std::printf("cuBLASLt operands: %s\n", weight_as_a ? "weight as A (BLK128x128_32F), activation as B (VEC128_32F)"
                                                        : "activation as A (VEC128_32F), weight as B (BLK128x128_32F), "
                                                          "outputs transposed by cublasLtMatrixTransform");

    auto quantize_weights = [&] {
        q_wgu.run(fq, wgu, wgu8, s_wgu_fq, stream);
        q_wd.run(fq, wd, wd8, s_wd_fq, stream);
        CUDA_CHECK(lt_pad_blk128_scales(s_wgu, s_wgu_fq, 2 * inter, hidden, stream));
        CUDA_CHECK(lt_pad_blk128_scales(s_wd, s_wd_fq, hidden, inter, stream));
    };
    auto quantize_x = [&] { q_x.run(fq, x, x8, s_x, stream); };
    auto gemm_gate_up = [&] {
        if (weight_as_a) {
            LT_CHECK(gate_up->run(wgu8, s_wgu, x8, s_x, h, ws, stream));
        } else {
            LT_CHECK(gate_up->run(x8, s_x, wgu8, s_wgu, h_t, ws, stream));
            h_transpose->run(h_t, h, stream);
        }
    };
    auto act_quant = [&] { q_act.run(fq, h, a8, s_a, stream); };
    auto gemm_down = [&] {
        if (weight_as_a) {
            LT_CHECK(down->run(wd8, s_wd, a8, s_a, y, ws, stream));
        } else {
            LT_CHECK(down->run(a8, s_a, wd8, s_wd, y_t, ws, stream));
            y_transpose->run(y_t, y, stream);
        }
    };
    auto mlp = [&] { quantize_x(); gemm_gate_up(); act_quant(); gemm_down(); };

    quantize_weights();
    mlp();
    CUDA_CHECK(cudaStreamSynchronize(stream));

    // Check against the bf16 model: y, and h alone (the gate-up GEMM), so a failure names its GEMM.
    float* y_ref = device_alloc<float>(size_t(tokens * hidden));
    float* h_ref = device_alloc<float>(size_t(tokens * 2 * inter));
    reference_mlp(x, wgu, wd, y_ref, h_ref, int(tokens), int(hidden), int(inter));
    struct Compared {
        std::vector<__nv_bfloat16> got;
        std::vector<float> want;
        double rel = 0.0;
        bool finite = true;
    };
    auto compare = [](const __nv_bfloat16* got_d, const float* want_d, size_t count) {
        Compared c;
        c.got.resize(count);
        c.want.resize(count);
        CUDA_CHECK(cudaMemcpy(c.got.data(), got_d, count * 2, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(c.want.data(), want_d, count * 4, cudaMemcpyDeviceToHost));
        double num = 0.0, den = 0.0;
        for (size_t i = 0; i < count; ++i) {
            const double g = __bfloat162float(c.got[i]), w = c.want[i];
            c.finite &= std::isfinite(g);
            num += (g - w) * (g - w);
            den += w * w;
        }
        c.rel = den > 0.0 ? std::sqrt(num / den) : 0.0;
        return c;
    };
    const Compared cy = compare(y, y_ref, size_t(tokens * hidden));
    const Compared ch = compare(h, h_ref, size_t(tokens * 2 * inter));
    const double rel = cy.rel;
    const bool finite = cy.finite;

    std::printf("\n%-44s %10s\n", "step", "us");
    std::printf("%-44s %10.2f\n", "fq quantize weights, BLOCK_2D (once)", time_us(stream, iters, quantize_weights));
    std::printf("%-44s %10.2f   [%s]\n", "fq quantize x, per-group 128", time_us(stream, iters, quantize_x), q_x.variant);
    const char* plus_transpose = weight_as_a ? "" : " + transpose";
    std::printf("%-44s %10.2f\n", (std::string("cuBLASLt gate-up GEMM (FP8, block scales)") + plus_transpose).c_str(),
                time_us(stream, iters, gemm_gate_up));
    std::printf("%-44s %10.2f   [%s]\n", "fq silu-and-mul + quantize", time_us(stream, iters, act_quant), q_act.variant);
    std::printf("%-44s %10.2f\n", (std::string("cuBLASLt down GEMM (FP8, block scales)") + plus_transpose).c_str(),
                time_us(stream, iters, gemm_down));
    std::printf("%-44s %10.2f\n", "MLP total (the four steps)", time_us(stream, iters, mlp));
    std::printf("\nrelative error of h (gate-up GEMM) against the bf16 reference: %.4f%s\n", ch.rel,
                ch.finite ? "" : "; non-finite values in h");
    std::printf("relative error of y against the bf16 reference: %.4f (bound %.2f)%s\n", rel, kErrorBound,
                finite ? "" : "; non-finite values in y");
    const bool ok = finite && rel <= kErrorBound;
    if (!ok) {  // a few element pairs from different 128 x 128 tiles, for the next run's diagnosis
        const int64_t rows_y[] = {0, 0, 1, std::min<int64_t>(tokens - 1, 130), tokens / 2, tokens - 1};
        const int64_t cols_y[] = {0, 1, 0, std::min<int64_t>(hidden - 1, 130), hidden / 2, hidden - 1};
        for (int i = 0; i < 6; ++i) {
            const size_t at = size_t(rows_y[i] * hidden + cols_y[i]);
            std::printf("  y[%lld, %lld]: got %.6g, reference %.6g\n", (long long)rows_y[i], (long long)cols_y[i],
                        double(__bfloat162float(cy.got[at])), double(cy.want[at]));
        }
        for (int i = 0; i < 6; ++i) {
            const int64_t c = std::min<int64_t>(cols_y[i] * 2, 2 * inter - 1);
            const size_t at = size_t(rows_y[i] * 2 * inter + c);
            std::printf("  h[%lld, %lld]: got %.6g, reference %.6g\n", (long long)rows_y[i], (long long)c,
                        double(__bfloat162float(ch.got[at])), double(ch.want[at]));
        }
    }
    std::printf("%s\n", ok ? "PASS" : "FAIL");

    for (void* p : {(void*)x, (void*)wgu, (void*)wd, (void*)wgu8, (void*)wd8, (void*)x8, (void*)a8, (void*)s_wgu,
                    (void*)s_wd, (void*)s_wgu_fq, (void*)s_wd_fq, (void*)s_x, (void*)s_a, (void*)h, (void*)y, ws,
                    (void*)y_ref, (void*)h_ref, (void*)h_t, (void*)y_t})
        cudaFree(p);
    cublasLtDestroy(lt);
    fqDestroy(fq);
    cudaStreamDestroy(stream);
    return ok ? 0 : 1;
}
