// The compile-time choices a row kernel and its launch are built with, as named types instead of loose bool
// parameters: an architecture family's policy (16-byte or element IO, hardware or software fp8 encoding,
// programmatic dependent launch) and the kind of scales a scheme writes.
#pragma once

namespace fq::cuda {

// ---- Architecture policies -------------------------------------------------------------------------------
// vector_io: 16-byte loads and stores (rows 16-byte aligned; the dispatcher's condition), else element IO.
// hardware_fp8: e4m3fn / e5m2 (and NVFP4's e4m3 scale) converted by the sm_89+ instructions, else encoded in
// software. pdl: launched with programmatic dependent launch (sm_90 on).
// Device: the policy whose kernels this family runs. PDL is a launch attribute, not device code, so a family with
// PDL launches the kernels of the same policy without it: one kernel for both, one instantiation of the template.
template <bool kVectorIo, bool kHardwareFp8, bool kPdl>
struct ArchPolicy {
    static constexpr bool vector_io = kVectorIo, hardware_fp8 = kHardwareFp8, pdl = kPdl;
    using Device = ArchPolicy<kVectorIo, kHardwareFp8, false>;
};
using Sm80Vec = ArchPolicy<true, false, false>;  // software fp8 encoding
using Sm80Element = ArchPolicy<false, false, false>;
using Sm89Vec = ArchPolicy<true, true, false>;  // hardware fp8 conversion
using Sm89Element = ArchPolicy<false, true, false>;
using Sm90Vec = ArchPolicy<true, true, true>;  // and PDL; also sm_100 (the dispatch table's sm100 entries)
using Sm90Element = ArchPolicy<false, true, true>;

// Every policy the dispatch table launches (src/dispatch/cuda_table.cpp's families), X(policy) each: launcher
// L<ARGS..., policy> of the 16-byte IO forms, of the element IO forms, of both.
#define FQ_FOR_EACH_VEC_POLICY(X, L, ...)                               \
    X(template fqStatus_t L<__VA_ARGS__, Sm90Vec>(const LaunchArgs&);) \
    X(template fqStatus_t L<__VA_ARGS__, Sm89Vec>(const LaunchArgs&);) \
    X(template fqStatus_t L<__VA_ARGS__, Sm80Vec>(const LaunchArgs&);)
#define FQ_FOR_EACH_ELEMENT_POLICY(X, L, ...)                               \
    X(template fqStatus_t L<__VA_ARGS__, Sm90Element>(const LaunchArgs&);) \
    X(template fqStatus_t L<__VA_ARGS__, Sm89Element>(const LaunchArgs&);) \
    X(template fqStatus_t L<__VA_ARGS__, Sm80Element>(const LaunchArgs&);)
#define FQ_FOR_EACH_ARCH_POLICY(X, L, ...) \
    FQ_FOR_EACH_VEC_POLICY(X, L, __VA_ARGS__) FQ_FOR_EACH_ELEMENT_POLICY(X, L, __VA_ARGS__)

// ---- Scale kinds -----------------------------------------------------------------------------------------
// What a per-group kernel writes per group: an fp32 scale (per-group, per-tensor) or a scale byte of a
// microscaling scheme (MXFP8, MXFP4: E8M0; NVFP4: E4M3 under the tensor scale). A template parameter so that
// neither kernel carries the other's registers.
struct Fp32Scales {
    static constexpr bool microscaling = false;
};
struct BlockScales {
    static constexpr bool microscaling = true;
};

}  // namespace fq::cuda
