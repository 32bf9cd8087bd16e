// Host backend of fqScaleRepack: every destination scale, in storage order, from repack_source().
#include "scale_repack.h"

#include <cstring>

namespace fq::host {

void scale_repack(const RepackPlan& p, const void* src_in, void* dst_out) {
    const auto* src = static_cast<const uint8_t*>(src_in);
    auto* dst = static_cast<uint8_t*>(dst_out);
    const auto n = size_t(p.scale_bytes);
    for (int64_t offset = 0; offset < p.dst.bytes(); offset += p.scale_bytes) {
        const int64_t from = repack_source(p, offset);
        if (from < 0) std::memset(dst + offset, 0, n);
        else std::memcpy(dst + offset, src + from, n);
    }
}

}  // namespace fq::host
