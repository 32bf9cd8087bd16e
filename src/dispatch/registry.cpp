#include "registry.h"

#include "../common/status.h"

namespace fq {

// Built on first use and never destroyed, so that the entry points work from the caller's atexit handlers
// and static destructors.
const std::vector<Variant>& variant_table() {
    static const std::vector<Variant>* const table = [] {
        auto* t = new std::vector<Variant>;
        register_cuda_variants(*t);
        register_cuda_block2d_variants(*t);
        register_host_variants(*t);
        return t;
    }();
    return *table;
}

std::vector<const Variant*> variants_for(Backend b, int arch) {
    std::vector<const Variant*> out;
    for (const Variant& v : variant_table())
        if (v.backend == b && arch >= v.min_arch && arch <= v.max_arch) out.push_back(&v);
    return out;
}

fqStatus_t select_variant(Backend b, int arch, int pinned, const OpConfig& c, const Variant** chosen) {
    std::vector<const Variant*> candidates = variants_for(b, arch);
    if (pinned >= 0) {
        if (size_t(pinned) >= candidates.size())
            return fail(FQ_STATUS_INVALID_VALUE, "FQ_HANDLE_VARIANT: {} is outside the {} variants of this handle", pinned,
                        candidates.size());
        const std::string why = candidates[size_t(pinned)]->refuse(c);
        if (!why.empty())
            return fail(FQ_STATUS_NOT_SUPPORTED, "FQ_HANDLE_VARIANT: pinned variant {} does not run this problem: {}",
                        candidates[size_t(pinned)]->name, why);
        *chosen = candidates[size_t(pinned)];
        return FQ_STATUS_SUCCESS;
    }
    std::string first_reason;
    for (const Variant* v : candidates) {
        if (v->benchmark_only) continue;
        std::string why = v->refuse(c);
        if (why.empty()) {
            *chosen = v;
            return FQ_STATUS_SUCCESS;
        }
        if (first_reason.empty()) first_reason = std::move(why);
    }
    const std::string where = b == Backend::Host ? std::string("the host backend")
                                                 : fmt::format("CUDA sm_{}", arch);
    if (first_reason.empty())
        return fail(FQ_STATUS_NOT_SUPPORTED, "no kernel variant is compiled for {} in this build", where);
    return fail(FQ_STATUS_NOT_SUPPORTED, "no kernel variant on {} runs this problem: {}", where, first_reason);
}

size_t workspace_bytes(const OpConfig& c, Backend b) {
    // One word per expert (one without a MoE layout).
    return b == Backend::Cuda && c.scheme == Scheme::Nvfp4 && !c.global_amax ? sizeof(float) * size_t(c.experts()) : 0;
}

}  // namespace fq
