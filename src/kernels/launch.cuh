// Kernel launches and CUDA runtime failures whose error is the call's own.
//
// The runtime keeps one "last error" per host thread, which the caller may hold a pending error of their own
// in (a failed cudaMalloc, an earlier bad launch). fq never reads an error from that state: a launch goes
// through cudaLaunchKernelEx, whose return value is the launch's own error, and a successful fq call leaves the
// caller's pending error where it was. A failed runtime call of fq's own has just written its error there (as
// every failed runtime call does); cuda_status takes that error out again, so that it is reported once,
// through fq's status and message, and not a second time by the caller's next cudaGetLastError.
#pragma once

#include <cuda_runtime.h>

#include "../common/status.h"

namespace fq::cuda {

// kernel<<<grid, block, smem, stream>>>(args...), with programmatic dependent launch when `pdl` (sm_90: the
// kernel may start while the previous kernel on the stream finishes, and waits for its writes itself), in
// thread-block clusters of `cluster_x` CTAs along x when that is above 1 (sm_90 on; gridDim.x a multiple of it).
template <class... Params, class... Args>
cudaError_t launch_kernel_in_clusters(void (*kernel)(Params...), dim3 grid, dim3 block, unsigned cluster_x, size_t smem,
                                      cudaStream_t stream, bool pdl, Args... args) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[2];
    unsigned n = 0;
    if (pdl) {
        attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[n++].val.programmaticStreamSerializationAllowed = 1;
    }
    if (cluster_x > 1) {
        attr[n].id = cudaLaunchAttributeClusterDimension;
        attr[n].val.clusterDim.x = cluster_x;
        attr[n].val.clusterDim.y = attr[n].val.clusterDim.z = 1;
        ++n;
    }
    cfg.attrs = n ? attr : nullptr;
    cfg.numAttrs = n;
    return cudaLaunchKernelEx(&cfg, kernel, args...);
}

template <class... Params, class... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream, bool pdl,
                          Args... args) {
    return launch_kernel_in_clusters(kernel, grid, block, 1, smem, stream, pdl, args...);
}

// Takes the error `e` of a runtime call fq itself just made out of the thread's last-error state, if that state
// still holds exactly `e` (see the top of this file).
inline void forget_own_error(cudaError_t e) {
    if (e != cudaSuccess && cudaPeekAtLastError() == e) (void)cudaGetLastError();
}

// SUCCESS for cudaSuccess; otherwise CUDA_ERROR, "<what> failed: <the runtime's reason>". `e` is the return value
// of a runtime call fq itself just made (its error is forgotten, as above).
inline fqStatus_t cuda_status(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return FQ_STATUS_SUCCESS;
    forget_own_error(e);
    return fail(FQ_STATUS_CUDA_ERROR, "{} failed: {}", what, cudaGetErrorString(e));
}

}  // namespace fq::cuda
