// The host backend's entry in the dispatch table: the reference implementation, registered exactly as
// a GPU variant is.
#include <fmt/format.h>

#include "../dispatch/registry.h"
#include "reference.h"

namespace fq {
namespace {

std::string host_refuse(const OpConfig& c) {
    if (c.scheme == Scheme::Block2D && (c.moe != MoeLayout::None || c.outputs != kOutputRowwise))
        return fmt::format("scheme {} with MoE layouts or columnwise outputs has no implementation in this version",
                           name(c.scheme));
    return {};
}

fqStatus_t host_run(const KernelForm&, const LaunchArgs& a) {
    host::quantize(a.cfg, a.input, a.output, a.scales);
    return FQ_STATUS_SUCCESS;
}

}  // namespace

void register_host_variants(std::vector<Variant>& table) {
    table.push_back({"host.reference",
                     "docs/spec.md on the CPU: every activation, gate layout, fp8/int8/BLOCK_2D/MXFP8/MXFP4/NVFP4 scheme and "
                     "scale layout, MoE layouts, rowwise and columnwise outputs",
                     Backend::Host, 0, 0, host_refuse, nullptr, KernelForm{Skeleton::Host}, host_run});
}

}  // namespace fq
