#include "registry.h"

namespace fq {

// Built on first use and never destroyed, so that the entry points work from the caller's atexit handlers
// and static destructors; first used when the library loads (below), so that no call allocates it.
const std::vector<Variant>& variant_table() {
    static const std::vector<Variant>* const table = [] {
        auto* t = new std::vector<Variant>;
        register_cuda_variants(*t);
        register_host_variants(*t);
        return t;
    }();
    return *table;
}

namespace {
[[maybe_unused]] const std::vector<Variant>& kBuiltAtLoad = variant_table();
}  // namespace

std::vector<const Variant*> variants_for(Backend b, int arch) { return variants_in(variant_table(), b, arch); }

fqStatus_t select_variant(Backend b, const DeviceFacts& d, int pinned, const OpConfig& c, const Variant** chosen) {
    return select_in(variant_table(), b, d, pinned, c, chosen);
}

size_t workspace_bytes(const OpConfig& c, Backend b) {
    // One word per expert (one without a MoE layout).
    return b == Backend::Cuda && c.scheme == Scheme::Nvfp4 && !c.global_amax ? sizeof(float) * size_t(c.experts()) : 0;
}

}  // namespace fq
