// Selection over a table of entries (registry.h): the one place a kernel is chosen.
#include "../common/status.h"
#include "registry.h"

namespace fq {

std::vector<const Variant*> variants_in(const std::vector<Variant>& table, Backend b, int arch) {
    std::vector<const Variant*> out;
    for (const Variant& v : table)
        if (v.backend == b && arch >= v.min_arch && arch <= v.max_arch) out.push_back(&v);
    return out;
}

fqStatus_t select_in(const std::vector<Variant>& table, Backend b, const DeviceFacts& d, int pinned,
                     const OpConfig& c, const Variant** chosen) {
    const std::vector<const Variant*> candidates = variants_in(table, b, d.arch);
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
        std::string why = v->refuse(c);
        if (why.empty() && (!v->preferred || v->preferred(c, d))) {
            *chosen = v;
            return FQ_STATUS_SUCCESS;
        }
        if (first_reason.empty()) first_reason = std::move(why);
    }
    const std::string where = b == Backend::Host ? std::string("the host backend")
                                                 : fmt::format("CUDA sm_{}", d.arch);
    if (first_reason.empty())
        return fail(FQ_STATUS_NOT_SUPPORTED, "no kernel variant is compiled for {} in this build", where);
    return fail(FQ_STATUS_NOT_SUPPORTED, "no kernel variant on {} runs this problem: {}", where, first_reason);
}

}  // namespace fq
