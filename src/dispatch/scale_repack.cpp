#include "scale_repack.h"

#include "../host/scale_repack.h"

namespace fq {

fqStatus_t run_scale_repack(Backend backend, const RepackPlan& p, const void* src, void* dst, void* stream) {
    if (backend == Backend::Cuda) return cuda_scale_repack(p, src, dst, stream);
    host::scale_repack(p, src, dst);
    return FQ_STATUS_SUCCESS;
}

}  // namespace fq
