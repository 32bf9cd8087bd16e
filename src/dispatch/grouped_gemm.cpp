// fqGroupedGemm's backends: on CUDA the sm_90a kernels in the form gemm_forms.cpp chooses (what they refuse is
// NOT_SUPPORTED with a sentence naming the argument); on the host the reference, which runs every epilogue.
#include "grouped_gemm.h"

#include "../common/status.h"
#include "../host/grouped_gemm.h"
#include "registry.h"

namespace fq {

fqStatus_t run_grouped_gemm(Backend backend, int arch, int sm_count, const GroupedGemmConfig& c, void* stream) {
    if (backend == Backend::Cuda) {
        const std::string refusal = grouped_gemm_cuda_refusal(c, arch);
        if (!refusal.empty()) return fail(FQ_STATUS_NOT_SUPPORTED, "{}", refusal);
        // Zero rows: the epilogues the kernel runs (fp32 scales in ROW_MAJOR, COL_MAJOR, COL_MAJOR_TMA) have no
        // byte to write, not even padding, so there is nothing to launch.
        if (c.m == 0) return FQ_STATUS_SUCCESS;
        if (!grouped_gemm_cuda_built())
            return fail(FQ_STATUS_NOT_SUPPORTED, "handle: this build of libfusedquant has no sm_90a code (FQ_CUDA_ARCHS "
                                                 "lacks 90a); the grouped GEMM kernel needs it");
        const GemmProblem p = gemm_problem(c);
        FQ_TRY(prepare_grouped_gemm_cuda(p.pairing));
        const GemmForm form = choose_gemm_form(p, sm_count, [&](GemmKernel kernel, int size) {
            return grouped_gemm_cuda_occupancy(p.pairing, kernel, size, sm_count);
        });
        return run_grouped_gemm_cuda(c, p, form, stream);
    }
    // The host backend runs every epilogue fqQuantize's host variant runs (the same refusals).
    if (c.quantize) {
        const Variant* v = nullptr;
        FQ_TRY(select_variant(Backend::Host, 0, -1, c.epi, &v));
    }
    host::grouped_gemm(c);
    return FQ_STATUS_SUCCESS;
}

}  // namespace fq
