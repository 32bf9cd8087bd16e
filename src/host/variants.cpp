// The host backend's entry in the dispatch table: the reference implementation, registered exactly as
// a GPU variant is.
#include <fmt/format.h>

#include "../dispatch/registry.h"
#include "reference.h"

namespace fq {
namespace {

std::string host_refuse(const OpConfig& c) {
    if (c.moe != MoeLayout::None)
        return "MoE layouts (FQ_QUANT_DESC_MOE_LAYOUT) have no implementation in this version";
    if (c.outputs != kOutputRowwise)
        return "columnwise outputs (FQ_QUANT_DESC_OUTPUTS) have no implementation in this version";
    return {};
}

fqStatus_t host_run(const LaunchArgs& a) {
    host::quantize(a.cfg, a.input, a.output, a.scales);
    return FQ_STATUS_SUCCESS;
}

}  // namespace

void register_host_variants(std::vector<Variant>& table) {
    table.push_back({"host.reference",
                     "SPEC.md on the CPU: every activation, gate layout, fp8/int8/BLOCK_2D/MXFP8/MXFP4/NVFP4 scheme and scale layout",
                     Backend::Host, 0, 0, host_refuse, host_run});
}

}  // namespace fq
