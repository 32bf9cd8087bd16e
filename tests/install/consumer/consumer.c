/* A program of a user of the installed library: built against the installed header and library only (through
 * pkg-config or find_package), it quantizes 2 x 128 bf16 values on the host backend and checks the result. */
#include <stdio.h>

#include <fusedquant/fusedquant.h>

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        fqStatus_t s_ = (call);                                                                              \
        if (s_ != FQ_STATUS_SUCCESS) {                                                                       \
            fprintf(stderr, "%s: %s: %s\n", #call, fqGetStatusString(s_), fqGetLastErrorMessage());         \
            return 1;                                                                                        \
        }                                                                                                    \
    } while (0)

int main(void) {
    enum { M = 2, N = 128 };
    uint16_t x[M * N];
    uint8_t q[M * N];
    float scales[M];
    for (int i = 0; i < M * N; ++i) x[i] = 0x3F80; /* 1.0 in bf16 */
    fqHandle_t h;
    fqQuantDesc_t d;
    fqTensorLayout_t in, out;
    CHECK(fqCreate(&h, FQ_BACKEND_HOST, -1));
    CHECK(fqQuantDescCreate(&d));
    CHECK(fqTensorLayoutCreate(&in, FQ_TYPE_BF16, M, N, N));
    CHECK(fqTensorLayoutCreate(&out, FQ_TYPE_FP8_E4M3FN, M, N, N));
    CHECK(fqQuantize(h, d, in, x, out, q, scales, sizeof scales, NULL, 0, NULL));
    /* 1.0 with scale 1/448 encodes as 448: e4m3 0x7E. */
    if (q[0] != 0x7E || q[M * N - 1] != 0x7E || scales[1] != 1.0f / 448.0f) {
        fprintf(stderr, "unexpected output: q[0] = 0x%02X, scales[1] = %g\n", q[0], scales[1]);
        return 1;
    }
    printf("fusedquant %u (header %d): 2x128 values quantized on the host backend\n", fqGetVersion(),
           FQ_VERSION_NUMBER);
    fqTensorLayoutDestroy(in);
    fqTensorLayoutDestroy(out);
    fqQuantDescDestroy(d);
    fqDestroy(h);
    return 0;
}
