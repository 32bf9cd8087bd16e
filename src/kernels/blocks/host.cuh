// The host side the row kernels share: Params from LaunchArgs, kernel launches (with dynamic shared
// memory), and with_shape, which calls a launcher with the Shape of a problem.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "../../common/status.h"
#include "../launch.cuh"
#include "params.cuh"

namespace fq::cuda {

// The one struct the dispatcher hands a launch (LaunchArgs) flattened to what the device reads.
inline Params make_params(const LaunchArgs& a) {
    const OpConfig& c = a.cfg;
    Params p{};
    p.in = static_cast<const uint16_t*>(a.input);
    p.out = static_cast<uint8_t*>(a.output);
    p.scales = static_cast<uint8_t*>(a.scales);
    p.rows = c.rows;
    p.cols = int(c.cols);
    p.in_ld = c.in_ld;
    p.out_ld = c.out_ld;
    p.gate = c.gate;
    p.order = c.gate_order;
    p.gate_block = int(c.gate_block);
    p.rounding = c.rounding;
    p.swiglu = c.swiglu;
    p.row_prob = c.row_prob;
    p.quant = c.quant;
    p.scheme = c.scheme;
    // A group of G outputs (per-group 32/64/128, MX 32, NVFP4 16) spans G/8 lanes of 8 outputs each.
    const bool blocks_of_a_row = c.scheme == Scheme::PerGroup || is_microscaling(c.scheme);
    p.lanes_per_group = blocks_of_a_row ? int(c.group / 8) : 1;
    p.group_shift = c.group == 16 ? 4 : c.group == 32 ? 5 : c.group == 64 ? 6 : 7;
    // The plain kernel's 16 outputs a thread: a group spans G/16 lanes (the per-tensor schemes map like G = 64).
    p.pair_shift = blocks_of_a_row ? p.group_shift - 4 : 2;
    p.sg = c.scales;
    p.ss = scale_strides(c.scales);
    p.scale_offsets_fit_32 = c.scales.bytes < (int64_t(1) << 32);
    p.static_scale = c.static_scale;
    p.scale_ub = c.scale_ub;
    // Per expert: the tensor amax accumulates in the scale slots (per-tensor dynamic; the columnwise buffer
    // when there is no rowwise one) or, for NVFP4 without the caller's global amax, in the workspace
    // (fqGetWorkspaceSize), where the caller finds it after the call.
    p.amax_bits = reinterpret_cast<unsigned*>(c.scheme == Scheme::Nvfp4 ? a.workspace
                                              : c.rowwise()                ? a.scales
                                                                           : c.col_scales_ptr);
    p.global_amax = c.global_amax;
    p.scale_cols_padded = padded_scale_cols(c.scales);
    p.moe = c.moe;
    p.experts = int(c.experts());
    p.expert_rows = c.expert_rows;
    p.moe_offsets = c.moe_offsets;
    p.moe_counts = c.moe_counts;
    const bool masked = c.moe == MoeLayout::Masked;
    p.scale_block_bytes = masked && !is_per_tensor(c.scheme) ? c.scales.bytes : 0;
    p.scale_blocks = masked ? c.num_experts : 1;
    p.rows_per_block = 1;  // the general kernel's launch may raise it (launch_group_quant)
    p.row_blocks = c.rows;
    p.rowwise = c.rowwise();
    if (c.columnwise()) {
        p.col_out = static_cast<uint8_t*>(c.col_output);
        p.col_scales = static_cast<uint8_t*>(c.col_scales_ptr);
        p.col_sg = c.col_scales;
        p.col_ss = scale_strides(c.col_scales);
        p.col_block = int(c.col_block);
        p.col_transpose = c.col_transpose;
    }
    return p;
}

// Defined in scale_steps.cu: the tensor amax's set-up (step 1) and finalize (step 3) launches.
fqStatus_t prepare_tensor_amax(const LaunchArgs& a, const Params& p);
fqStatus_t finish_tensor_scale(const LaunchArgs& a, bool pdl, const Params& p);

// The row kernels' one launch: `smem` bytes of dynamic shared memory, thread-block clusters of `cluster_x` CTAs
// along x where that is above 1 (grid.x a multiple of it), PDL where the family has it and the handle allows it.
template <class Kernel, class... Extra>
fqStatus_t launch_in_clusters(Kernel kernel, dim3 grid, dim3 block, unsigned cluster_x, size_t smem, const LaunchArgs& a,
                              bool pdl_capable, const Params& p, Extra... extra) {
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return FQ_STATUS_SUCCESS;
    return cuda_status(launch_kernel_in_clusters(kernel, grid, block, cluster_x, smem, static_cast<cudaStream_t>(a.stream),
                                                 pdl_capable && a.allow_pdl, p, extra...),
                       "kernel launch");
}

template <class Kernel, class... Extra>
fqStatus_t launch_smem(Kernel kernel, dim3 grid, dim3 block, size_t smem, const LaunchArgs& a, bool pdl_capable,
                       const Params& p, Extra... extra) {
    return launch_in_clusters(kernel, grid, block, 1, smem, a, pdl_capable, p, extra...);
}

// Lets kKernel take up to kMaxBytes (its largest launch) of dynamic shared memory on the launch's device.
// cudaFuncSetAttribute runs once per kernel and device (a bit per device ordinal below 64; others set it on
// every call), not on every launch. (A cudaDeviceReset would drop the attribute unseen: a library in an
// engine does not outlive that.)
template <auto kKernel, size_t kMaxBytes>
fqStatus_t allow_dynamic_smem(const LaunchArgs& a) {
    static std::atomic<uint64_t> done{0};
    const uint64_t bit = a.device >= 0 && a.device < 64 ? uint64_t(1) << a.device : 0;
    if (done.load(std::memory_order_acquire) & bit) return FQ_STATUS_SUCCESS;
    FQ_TRY(cuda_status(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxBytes)),
                       "cudaFuncSetAttribute (dynamic shared memory)"));
    done.fetch_or(bit, std::memory_order_release);
    return FQ_STATUS_SUCCESS;
}

template <class Kernel, class... Extra>
fqStatus_t launch(Kernel kernel, dim3 grid, dim3 block, const LaunchArgs& a, bool pdl_capable, const Params& p,
                  Extra... extra) {
    return launch_smem(kernel, grid, block, 0, a, pdl_capable, p, extra...);
}

// Calls f(Shape<kAct, in, gate>{}) for the problem's input type and gate arrangement.
template <Act kAct, class F>
fqStatus_t with_shape(const OpConfig& c, F&& f) {
    auto with_gate = [&](auto in) -> fqStatus_t {
        constexpr InType kIn = decltype(in)::value;
        switch (c.gate) {
            case GateLayout::None:
                // SwiGLU-OAI is gated (configure refuses it without a gate): no kernel of that shape is built.
                if constexpr (kAct == Act::SwigluOai) return fail(FQ_STATUS_INTERNAL_ERROR, "SWIGLU_OAI without a gate");
                else return f(Shape<kAct, kIn, GateKind::None>{});
            case GateLayout::Interleaved: return f(Shape<kAct, kIn, GateKind::Interleaved>{});
            default: return f(Shape<kAct, kIn, GateKind::TwoStreams>{});
        }
    };
    if (c.in_type == InType::Bf16) return with_gate(std::integral_constant<InType, InType::Bf16>{});
    return with_gate(std::integral_constant<InType, InType::Fp16>{});
}

}  // namespace fq::cuda
