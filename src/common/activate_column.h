// The activation output y of one column of one row (docs/spec.md §2), for code that visits outputs one at a time:
// the host reference and the 2-D block kernel. Same calls, same order, so both give the same bits.
#pragma once

#include "activation.h"
#include "gate_layout.h"
#include "op_config.h"

namespace fq {

// What the per-element activation needs from an OpConfig, small enough to pass to a kernel by value.
struct ActivationParams {
    Act act = Act::Identity;
    GateLayout gate = GateLayout::None;
    GateOrder order = GateOrder::GateFirst;
    int64_t cols = 0, gate_block = 32;  // cols: output width H
    Rounding rounding = Rounding::Fp32;
    InType in = InType::Bf16;
    SwigluParams swiglu;
};

// y of output column j of the input row `in`, before the routing probability.
FQ_HD float activate_column(const ActivationParams& a, const uint16_t* in, int64_t j) {
    if (a.gate != GateLayout::None) {
        const GatePair p = gate_columns(a.gate, a.order, a.cols, a.gate_block, j);
        return activate_gated(a.act, load_input(a.in, in[p.gate]), load_input(a.in, in[p.up]), a.rounding, a.in,
                              a.swiglu);
    }
    const float v = activate(a.act, load_input(a.in, in[j]));
    return a.rounding == Rounding::Fp32 ? v : round_to_input(a.in, v);
}

inline ActivationParams activation_params(const OpConfig& c) {
    return {c.act, c.gate, c.gate_order, c.cols, c.gate_block, c.rounding, c.in_type, c.swiglu};
}

}  // namespace fq
