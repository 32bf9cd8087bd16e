/* The header as a user includes it, without FQ_EXPERIMENTAL_API: the stable API only (docs/abi.md,
 * "Experimental"). The experimental names are free here, so declaring them again compiles only if the header
 * kept them behind the fence; the program then uses the stable API through the library. */
#undef FQ_EXPERIMENTAL_API
#include "fusedquant/fusedquant.h"

#include <stdio.h>

enum { FQ_HANDLE_VARIANT = -5, FQ_HANDLE_WIDE_TILE_MIN = -6, FQ_GEMM_DESC_NUM_GROUPS = -7 };
typedef struct { int unused; } fqGroupedGemmDesc_t;
static int fqGroupedGemm(void) { return FQ_HANDLE_VARIANT + FQ_HANDLE_WIDE_TILE_MIN + FQ_GEMM_DESC_NUM_GROUPS; }

int main(void) {
    fqHandle_t h = NULL;
    int32_t pdl = 1, got = 0;
    size_t written = 0;
    fqGroupedGemmDesc_t mine = {0};
    if (fqCreate(&h, FQ_BACKEND_HOST, -1) != FQ_STATUS_SUCCESS) return 1;
    if (fqHandleSetAttribute(h, FQ_HANDLE_ALLOW_PDL, &pdl, sizeof pdl) != FQ_STATUS_SUCCESS) return 2;
    if (fqHandleGetAttribute(h, FQ_HANDLE_ALLOW_PDL, &got, sizeof got, &written) != FQ_STATUS_SUCCESS || got != 1) return 3;
    fqDestroy(h);
    printf("stable header: the experimental names are free (%d)\n", fqGroupedGemm() + mine.unused);
    return 0;
}
