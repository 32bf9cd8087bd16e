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

// Defined in variants.cu: Params from a launch's arguments, and the tensor amax's set-up (step 1) and finalize
// (step 3) launches.
Params make_params(const LaunchArgs& a);
// Whether the 16-byte IO forms run c: aligned pointers and row strides, a width divisible by 8.
bool vector_io_ok(const OpConfig& c);
fqStatus_t prepare_tensor_amax(const LaunchArgs& a, const Params& p);
fqStatus_t finish_tensor_scale(const LaunchArgs& a, bool pdl, const Params& p);

template <class Kernel, class... Extra>
fqStatus_t launch_smem(Kernel kernel, dim3 grid, dim3 block, size_t smem, const LaunchArgs& a, bool pdl_capable,
                       const Params& p, Extra... extra) {
    if (grid.x == 0 || grid.y == 0 || grid.z == 0) return FQ_STATUS_SUCCESS;
    return cuda_status(launch_kernel(kernel, grid, block, smem, static_cast<cudaStream_t>(a.stream),
                                     pdl_capable && a.allow_pdl, p, extra...),
                       "kernel launch");
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
