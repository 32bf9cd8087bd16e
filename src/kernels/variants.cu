// The launch function of the dispatch table's CUDA entries (src/dispatch/cuda_table.cpp): the entry's kernel
// form, compiled for the problem's activation. It chooses no kernel; it only turns the form's run-time values
// into the template arguments of the one launch they name.
#include "../dispatch/cuda_table.h"
#include "block2d.h"
#include "columnwise.cuh"

namespace fq::cuda {

// The kernels of each activation of FQ_ACTIVATIONS are instantiated in their own translation unit.
#define FQ_DECLARE_EXTERN(...) extern __VA_ARGS__
#define FQ_DECLARE_FOR(Internal, ...)                            \
    FQ_FOR_EACH_LAUNCHER(FQ_DECLARE_EXTERN, Act::Internal)      \
    FQ_FOR_EACH_COLUMNWISE_LAUNCHER(FQ_DECLARE_EXTERN, Act::Internal)
FQ_ACTIVATIONS(FQ_DECLARE_FOR)

namespace {

// Calls f(std::integral_constant<Act, A>{}) for the problem's activation.
template <class F>
fqStatus_t with_activation(Act act, F&& f) {
    switch (act) {
#define FQ_ACTIVATION_CASE(Internal, ...) \
    case Act::Internal: return f(std::integral_constant<Act, Act::Internal>{});
        FQ_ACTIVATIONS(FQ_ACTIVATION_CASE)
#undef FQ_ACTIVATION_CASE
    }
    return fail(FQ_STATUS_INTERNAL_ERROR, "unknown activation {}", int(act));
}

// Calls f(Policy{}) with the architecture policy of the form's family and IO (arch_policy.cuh; the policies
// FQ_FOR_EACH_ARCH_POLICY compiles): sm90/sm100 hw cvt + PDL, sm89 hw cvt, sm80 software encoding.
template <class F>
fqStatus_t with_policy(const KernelForm& k, F&& f) {
    if (k.hw_cvt && k.pdl) return k.vec ? f(Sm90Vec{}) : f(Sm90Element{});
    if (k.hw_cvt) return k.vec ? f(Sm89Vec{}) : f(Sm89Element{});
    if (!k.pdl) return k.vec ? f(Sm80Vec{}) : f(Sm80Element{});
    return fail(FQ_STATUS_INTERNAL_ERROR, "no kernel is compiled with PDL and software fp8 encoding");
}

}  // namespace
}  // namespace fq::cuda

namespace fq {

fqStatus_t launch_cuda_kernel(const KernelForm& k, const LaunchArgs& a) {
    using namespace cuda;
    if (k.skeleton == Skeleton::Block2dGeneric) return block2d::launch_generic(a);
    return with_policy(k, [&](auto policy) {
        using P = decltype(policy);
        if (k.skeleton == Skeleton::Block2d) {
            if constexpr (P::vector_io) return block2d::launch_vec<P>(a);
        }
        return with_activation(a.cfg.act, [&](auto act) -> fqStatus_t {
            constexpr Act A = decltype(act)::value;
            switch (k.skeleton) {
                case Skeleton::PlainSwizzled:
                    if constexpr (P::vector_io) return run_group_for<Skeleton::PlainSwizzled, A, P>(a);
                    break;
                case Skeleton::PlainColumnRuns:
                    if constexpr (P::vector_io) return run_group_for<Skeleton::PlainColumnRuns, A, P>(a);
                    break;
                case Skeleton::Decode:
                    if constexpr (P::vector_io && P::pdl) return run_group_for<Skeleton::Decode, A, P>(a);
                    break;
                case Skeleton::Plain: return run_group_for<Skeleton::Plain, A, P>(a);
                case Skeleton::Group: return run_group_for<Skeleton::Group, A, P>(a);
                case Skeleton::Token: return run_token_for<A, P>(a);
                case Skeleton::TokenCluster:
                    if constexpr (P::vector_io && P::pdl) return run_token_cluster_for<A, P>(a);
                    break;
                case Skeleton::Columnwise: return run_columnwise_for<A, P>(a);
                default: break;
            }
            return fail(FQ_STATUS_INTERNAL_ERROR, "kernel skeleton {} has no {} form", int(k.skeleton),
                        P::vector_io ? "16-byte IO" : "element IO");
        });
    });
}

}  // namespace fq
