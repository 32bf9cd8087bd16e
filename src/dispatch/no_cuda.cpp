// The CUDA hooks of a library built without CUDA: every CUDA handle is refused clearly.
#include "../common/status.h"
#include "cuda_table.h"
#include "device.h"
#include "grouped_gemm.h"
#include "scale_repack.h"

namespace fq {

fqStatus_t cuda_device_info(int32_t, int32_t*, int32_t*, int32_t*) {
    return fail(FQ_STATUS_NO_DEVICE, "backend: this build of libfusedquant has no CUDA support (configure with "
                                     "FQ_ENABLE_CUDA=ON); use FQ_BACKEND_HOST");
}

// Unreachable likewise: both are asked only for a CUDA handle.
fqStatus_t cuda_check_current_device(int32_t) {
    return fail(FQ_STATUS_NOT_SUPPORTED, "handle: this build of libfusedquant has no CUDA support");
}

fqStatus_t cuda_check_pointer(const char*, const void*, int32_t) {
    return fail(FQ_STATUS_NOT_SUPPORTED, "handle: this build of libfusedquant has no CUDA support");
}

// Unreachable: without CUDA no CUDA handle can be created.
fqStatus_t cuda_scale_repack(const RepackPlan&, const void*, void*, void*) {
    return fail(FQ_STATUS_NOT_SUPPORTED, "handle: this build of libfusedquant has no CUDA support");
}

// Unreachable likewise: the CUDA entries of the dispatch table are selectable only on a CUDA handle.
fqStatus_t launch_cuda_kernel(const KernelForm&, const LaunchArgs&) {
    return fail(FQ_STATUS_NOT_SUPPORTED, "handle: this build of libfusedquant has no CUDA support");
}

// Unreachable likewise.
bool grouped_gemm_cuda_built() { return false; }
fqStatus_t prepare_grouped_gemm_cuda(GemmPairing) {
    return fail(FQ_STATUS_NOT_SUPPORTED, "handle: this build of libfusedquant has no CUDA support");
}
int grouped_gemm_cuda_occupancy(GemmPairing, GemmKernel, int, int) { return 0; }
fqStatus_t run_grouped_gemm_cuda(const GroupedGemmConfig&, const GemmProblem&, const GemmForm&, void*) {
    return fail(FQ_STATUS_NOT_SUPPORTED, "handle: this build of libfusedquant has no CUDA support");
}

}  // namespace fq
