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

// Calls f(vec, hw_cvt, pdl) as std::bool_constant for the configurations the table compiles
// (FQ_FOR_EACH_ARCH_CONFIG): sm90/sm100 hw cvt + PDL, sm89 hw cvt, sm80 software encoding; each in both IOs.
template <class F>
fqStatus_t with_form(const KernelForm& k, F&& f) {
    using T = std::true_type;
    using N = std::false_type;
    if (k.hw_cvt && k.pdl) return k.vec ? f(T{}, T{}, T{}) : f(N{}, T{}, T{});
    if (k.hw_cvt) return k.vec ? f(T{}, T{}, N{}) : f(N{}, T{}, N{});
    if (!k.pdl) return k.vec ? f(T{}, N{}, N{}) : f(N{}, N{}, N{});
    return fail(FQ_STATUS_INTERNAL_ERROR, "no kernel is compiled with PDL and software fp8 encoding");
}

}  // namespace
}  // namespace fq::cuda

namespace fq {

fqStatus_t launch_cuda_kernel(const KernelForm& k, const LaunchArgs& a) {
    using namespace cuda;
    if (k.skeleton == Skeleton::Block2d) return block2d::launch_vec(a, k.hw_cvt, k.pdl);
    if (k.skeleton == Skeleton::Block2dGeneric) return block2d::launch_generic(a);
    return with_form(k, [&](auto vec, auto hw_cvt, auto pdl) {
        constexpr bool V = decltype(vec)::value, H = decltype(hw_cvt)::value, P = decltype(pdl)::value;
        return with_activation(a.cfg.act, [&](auto act) -> fqStatus_t {
            constexpr Act A = decltype(act)::value;
            switch (k.skeleton) {
                case Skeleton::PlainSwizzled:
                    if constexpr (V) return run_group_for<Skeleton::PlainSwizzled, A, V, H, P>(a);
                    break;
                case Skeleton::PlainColumnRuns:
                    if constexpr (V) return run_group_for<Skeleton::PlainColumnRuns, A, V, H, P>(a);
                    break;
                case Skeleton::Decode:
                    if constexpr (V && P) return run_group_for<Skeleton::Decode, A, V, H, P>(a);
                    break;
                case Skeleton::Plain: return run_group_for<Skeleton::Plain, A, V, H, P>(a);
                case Skeleton::Group: return run_group_for<Skeleton::Group, A, V, H, P>(a);
                case Skeleton::Token: return run_token_for<A, V, H, P>(a);
                case Skeleton::Columnwise: return run_columnwise_for<A, V, H, P>(a);
                default: break;
            }
            return fail(FQ_STATUS_INTERNAL_ERROR, "kernel skeleton {} has no {} form", int(k.skeleton),
                        V ? "16-byte IO" : "element IO");
        });
    });
}

}  // namespace fq
