// Where output column j of a gated row finds its gate and up inputs (docs/spec.md §2, gate layouts).
#pragma once

#include <cstdint>

#include "hd.h"
#include "types.h"

namespace fq {

struct GatePair {
    int64_t gate, up;  // input columns
};

// h = output width, block = BLOCK_INTERLEAVED block width.
FQ_HD GatePair gate_columns(GateLayout layout, GateOrder order, int64_t h, int64_t block, int64_t j) {
    int64_t first = j, second = j;  // the column in the half / slot that comes first, and second
    switch (layout) {
        case GateLayout::Split: first = j; second = h + j; break;
        case GateLayout::Interleaved: first = 2 * j; second = 2 * j + 1; break;
        case GateLayout::BlockInterleaved: {
            const int64_t b = j / block, r = j % block;
            first = 2 * block * b + r;
            second = first + block;
            break;
        }
        default: break;  // NONE: not gated, the caller reads column j only
    }
    return order == GateOrder::GateFirst ? GatePair{first, second} : GatePair{second, first};
}

}  // namespace fq
