/* quickstart: the main job of libfusedquant in a few dozen lines of C.
 *
 * Quantizes the gate-up output of an MLP (x = [gate | up], bf16, 64 tokens x 2*1024) with SiLU-and-mul
 * fused with FP8 e4m3 per-group-128 quantization, on the GPU when one is present and on the host
 * reference otherwise, and prints what ran, a few values decoded back, and the worst relative error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fusedquant/fusedquant.h"

#ifdef FQ_EXAMPLE_WITH_CUDA
#include <cuda_runtime.h>
#endif

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        fqStatus_t s_ = (call);                                                                       \
        if (s_ != FQ_STATUS_SUCCESS) {                                                                \
            fprintf(stderr, "%s failed: %s: %s\n", #call, fqGetStatusString(s_), fqGetLastErrorMessage()); \
            return 1;                                                                                 \
        }                                                                                             \
    } while (0)

static uint16_t to_bf16(float x) { uint32_t u; memcpy(&u, &x, 4); return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16); }
static float from_bf16(uint16_t h) { uint32_t u = (uint32_t)h << 16; float x; memcpy(&x, &u, 4); return x; }
static float decode_e4m3(uint8_t c) {
    int e = (c >> 3) & 15, m = c & 7;
    float v = e ? ldexpf(1.0f + m / 8.0f, e - 7) : ldexpf(m / 8.0f, -6);
    return (c & 0x80) ? -v : v;
}

int main(void) {
    enum { T = 64, H = 1024, G = 128 };
    uint16_t* x = malloc(sizeof(uint16_t) * T * 2 * H);
    srand(1);
    for (int i = 0; i < T * 2 * H; ++i) x[i] = to_bf16(4.0f * ((float)rand() / RAND_MAX - 0.5f));

    /* A CUDA handle when a GPU is usable, else the host backend. */
    fqHandle_t h;
    int32_t backend = FQ_BACKEND_CUDA;
    if (fqCreate(&h, FQ_BACKEND_CUDA, -1) != FQ_STATUS_SUCCESS) {
        printf("no GPU (%s): using the host backend\n", fqGetLastErrorMessage());
        backend = FQ_BACKEND_HOST;
        CHECK(fqCreate(&h, FQ_BACKEND_HOST, -1));
    }

    fqQuantDesc_t d;
    CHECK(fqQuantDescCreate(&d));
    int32_t act = FQ_ACTIVATION_SILU, gate = FQ_GATE_LAYOUT_SPLIT, group = G, layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA;
    CHECK(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_ACTIVATION, &act, sizeof act));
    CHECK(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GATE_LAYOUT, &gate, sizeof gate));
    CHECK(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GROUP_SIZE, &group, sizeof group));
    CHECK(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_SCALE_LAYOUT, &layout, sizeof layout));

    fqTensorLayout_t in, out;
    CHECK(fqTensorLayoutCreate(&in, FQ_TYPE_BF16, T, 2 * H, 2 * H));
    CHECK(fqTensorLayoutCreate(&out, FQ_TYPE_FP8_E4M3FN, T, H, H));
    size_t scale_bytes;
    int64_t ld;
    CHECK(fqGetScaleBufferSize(d, T, H, FQ_OUTPUT_ROWWISE, &scale_bytes));
    CHECK(fqGetScaleBufferInfo(d, T, H, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_COL_STRIDE, &ld));
    char variant[64];
    CHECK(fqQuerySupport(h, d, in, out, variant, sizeof variant));
    printf("backend %s, variant %s, scale buffer %zu bytes (column stride %lld bytes)\n",
           backend == FQ_BACKEND_CUDA ? "CUDA" : "host", variant, scale_bytes, (long long)ld);

    uint8_t* q = malloc(T * H);
    float* scales = malloc(scale_bytes);
#ifdef FQ_EXAMPLE_WITH_CUDA
    if (backend == FQ_BACKEND_CUDA) {
        void *dx, *dq, *ds;
        cudaMalloc(&dx, sizeof(uint16_t) * T * 2 * H);
        cudaMalloc(&dq, T * H);
        cudaMalloc(&ds, scale_bytes);
        cudaMemcpy(dx, x, sizeof(uint16_t) * T * 2 * H, cudaMemcpyHostToDevice);
        CHECK(fqQuantize(h, d, in, dx, out, dq, ds, scale_bytes, NULL, 0, NULL));
        cudaMemcpy(q, dq, T * H, cudaMemcpyDeviceToHost);
        cudaMemcpy(scales, ds, scale_bytes, cudaMemcpyDeviceToHost);
        cudaFree(dx); cudaFree(dq); cudaFree(ds);
    } else
#endif
    {
        CHECK(fqQuantize(h, d, in, x, out, q, scales, scale_bytes, NULL, 0, NULL));
    }

    /* Decode: y ~ q * scale[k * ld + m]; compare with silu(g) * u in float. */
    const int64_t col = ld / 4;
    double worst = 0;
    for (int m = 0; m < T; ++m)
        for (int j = 0; j < H; ++j) {
            const float g = from_bf16(x[m * 2 * H + j]), u = from_bf16(x[m * 2 * H + H + j]);
            const float y = g / (1.0f + expf(-g)) * u;
            const float back = decode_e4m3(q[m * H + j]) * scales[(j / G) * col + m];
            const float amax_bound = scales[(j / G) * col + m] * 448.0f;
            const double rel = fabs(back - y) / amax_bound;  /* error relative to the group's range */
            if (rel > worst) worst = rel;
        }
    printf("row 0: y[0..3] = %.4f %.4f %.4f %.4f (decoded), scale[0] = %.6f\n", decode_e4m3(q[0]) * scales[0],
           decode_e4m3(q[1]) * scales[0], decode_e4m3(q[2]) * scales[0], decode_e4m3(q[3]) * scales[0], scales[0]);
    printf("worst |decoded - silu(g)*u| / group range = %.4f (e4m3 allows 1/16)\n", worst);

    fqTensorLayoutDestroy(in);
    fqTensorLayoutDestroy(out);
    fqQuantDescDestroy(d);
    fqDestroy(h);
    free(x); free(q); free(scales);
    return worst <= 1.0 / 16 ? 0 : 1;
}
