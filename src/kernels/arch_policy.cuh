// The compile-time choices a row kernel and its launch are built with, as named types instead of packs of bools:
// an architecture family's policy (16-byte or element IO, hardware or software fp8 encoding, programmatic
// dependent launch) and the kind of scales a scheme writes.
#pragma once

namespace fq::cuda {

// ---- Architecture policies -------------------------------------------------------------------------------
// vector_io: 16-byte loads and stores (rows 16-byte aligned; the dispatcher's condition), else element IO.
// hardware_fp8: e4m3fn / e5m2 (and NVFP4's e4m3 scale) converted by the sm_89+ instructions, else encoded in
// software. pdl: launched with programmatic dependent launch (sm_90 on).
// Device: the policy whose kernels this family runs. PDL is a launch attribute, not device code, so the sm_90
// families launch the sm_89 kernels: one kernel for both, as one instantiation of the template.
struct Sm80Vec {
    static constexpr bool vector_io = true, hardware_fp8 = false, pdl = false;
    using Device = Sm80Vec;
};
struct Sm80Element {
    static constexpr bool vector_io = false, hardware_fp8 = false, pdl = false;
    using Device = Sm80Element;
};
struct Sm89Vec {
    static constexpr bool vector_io = true, hardware_fp8 = true, pdl = false;
    using Device = Sm89Vec;
};
struct Sm89Element {
    static constexpr bool vector_io = false, hardware_fp8 = true, pdl = false;
    using Device = Sm89Element;
};
struct Sm90Vec {  // also sm_100 (the dispatch table's sm100 entries)
    static constexpr bool vector_io = true, hardware_fp8 = true, pdl = true;
    using Device = Sm89Vec;
};
struct Sm90Element {
    static constexpr bool vector_io = false, hardware_fp8 = true, pdl = true;
    using Device = Sm89Element;
};

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
