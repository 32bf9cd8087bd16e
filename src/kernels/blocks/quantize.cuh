// Quantizing outputs: the divisor of a scale and its exact quotient, fp8 / int8 / e2m1 encoding (hardware
// fp8 conversion on sm_89+), saturation, the scale inputs a row reads (tensor scale, upper bound), and the
// microscaling block scales (docs/spec.md §3.3).
#pragma once

#include <cuda_fp8.h>

#include "params.cuh"

namespace fq::cuda {

// ---- Quantizing 8 outputs --------------------------------------------------------------------------
// Dividing by a scale s, set up once per group (or row, or tile): r = 1/s, the IEEE reciprocal under
// MULTIPLY_RECIPROCAL (the products y * r are the result), else the reciprocal nvcc's div.rn fast path
// uses (MUFU approximation and one Newton step) for quotient() below.
struct Divisor {
    float s, r;
};

__device__ __forceinline__ Divisor divisor_of(float s, const QuantParams& q) {
    if (q.reciprocal) return {s, 1.0f / s};
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));
    return {s, __fmaf_rn(r, __fmaf_rn(-s, r, 1.0f), r)};
}

// y / s from the refined reciprocal: the quotient and one residual correction of div.rn's fast path,
// which is the IEEE quotient wherever no intermediate leaves the normal range (the caller checks that
// per group: quotient_in_range). The residual is taken as s q - y, not y - s q, so that y = -0 keeps its
// sign. Three instructions against div.rn's eight and its range check per element.
__device__ __forceinline__ float quotient(float y, const Divisor& d) {
    const float q = __fmul_rn(y, d.r);
    const float minus_residual = __fmaf_rn(d.s, q, -y);
    return __fmaf_rn(-minus_residual, d.r, q);
}

// Whether quotient() gives y / s for every y with |y| <= a (NaN elements too: any NaN encodes to the same
// code). s within 2^+-64 keeps 1/s and the products normal; quotients below 2^-64 may lose their last
// bits in a subnormal residual, but every fp8 format (and int8) encodes anything under 2^-20 as a signed
// zero, with the sign the product already has; |y| / s <= 2^64 keeps the products finite (y = Inf
// fails it: Inf / s saturates, the residual of Inf is NaN).
__device__ __forceinline__ bool quotient_in_range(float a, const Divisor& d) {
    return d.s >= 0x1p-64f && d.s <= 0x1p64f && a * d.r <= 0x1p64f;
}

// Whether a kernel built with kHwCvt converts e4m3fn / e5m2 in hardware: sm_89 on.
template <bool kHwCvt>
__host__ __device__ constexpr bool hardware_fp8() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    return kHwCvt;
#else
    return false;
#endif
}

// 8 values already divided by (or multiplied into) their scale as codes of an 8-bit format `out` (not E2M1),
// in software: element i in byte i of the little-endian pair of words.
__device__ __forceinline__ uint2 encode8_bytes_software(const float (&v)[8], DType out) {
    uint32_t w[2] = {0, 0};
#pragma unroll
    for (int i = 0; i < 8; ++i) w[i / 4] |= uint32_t(encode_scaled(out, v[i])) << (8 * (i % 4));
    return make_uint2(w[0], w[1]);
}

// N <= 4 values already divided by (or multiplied into) their scale as one little-endian word of e4m3fn or e5m2
// codes (`out` one of them), by the hardware conversion where the arch has it, two values a cvt: element i in
// byte i. The grouped GEMM's epilogue encodes 1-4 values a word with it; the row kernels 8 (encode8_fp8_hardware).
template <int N>
__device__ __forceinline__ uint32_t encode_fp8_word(const float (&v)[N], DType out) {
    static_assert(N >= 1 && N <= 4, "codes of one word");
    uint32_t word = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    const __nv_fp8_interpretation_t kind = out == DType::E4M3FN ? __NV_E4M3 : __NV_E5M2;
#pragma unroll
    for (int i = 0; i + 1 < N; i += 2)  // cvt writes element i in the low byte of its pair
        word |= uint32_t(__nv_cvt_float2_to_fp8x2(make_float2(v[i], v[i + 1]), __NV_SATFINITE, kind)) << (8 * i);
    if constexpr (N % 2 == 1) word |= uint32_t(__nv_cvt_float_to_fp8(v[N - 1], __NV_SATFINITE, kind)) << (8 * (N - 1));
#else  // the same bytes (where no kernel calls it)
#pragma unroll
    for (int i = 0; i < N; ++i) word |= uint32_t(encode_scaled(out, v[i])) << (8 * i);
#endif
    return word;
}

// 8 values already divided by (or multiplied into) their scale as e4m3fn or e5m2 codes (`out` one of them),
// by the hardware conversion where the arch has it: element i in byte i of the little-endian pair of words.
// (The pairs of encode_fp8_word, written out: composing it from two words changes the row kernels' SASS.)
__device__ __forceinline__ uint2 encode8_fp8_hardware(const float (&v)[8], DType out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    const __nv_fp8_interpretation_t kind = out == DType::E4M3FN ? __NV_E4M3 : __NV_E5M2;
    uint32_t pairs[4];  // cvt writes element 2i in the low byte: two pairs make one little-endian word
#pragma unroll
    for (int i = 0; i < 4; ++i) pairs[i] = __nv_cvt_float2_to_fp8x2(make_float2(v[2 * i], v[2 * i + 1]), __NV_SATFINITE, kind);
    return make_uint2(pairs[0] | (pairs[1] << 16), pairs[2] | (pairs[3] << 16));
#else  // the same bytes (where no kernel calls it)
    return encode8_bytes_software(v, out);
#endif
}

// kChunks x 8 values already divided by (or multiplied into) their scale, encoded: per chunk, fp8 codes in
// 8 bytes, or e2m1 nibbles in 4 (element 2i in the low nibble, docs/spec.md §1). One branch on the format for all
// chunks.
template <bool kHwCvt, int kChunks>
__device__ __forceinline__ void encode(const float (&v)[kChunks][8], DType out, uint2 (&codes)[kChunks]) {
    if (out == DType::E2M1) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
            uint32_t w = 0;
#pragma unroll
            for (int i = 0; i < 8; ++i) w |= uint32_t(encode_e2m1(v[c][i])) << (4 * i);
            codes[c] = make_uint2(w, 0);
        }
        return;
    }
    if constexpr (hardware_fp8<kHwCvt>()) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) codes[c] = encode8_fp8_hardware(v[c], out);
    } else {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) codes[c] = encode8_bytes_software(v[c], out);
    }
}

template <bool kHwCvt>
__device__ __forceinline__ uint2 encode8(const float (&v)[8], DType out) {
    uint2 codes[1];
    encode<kHwCvt, 1>(*reinterpret_cast<const float(*)[1][8]>(&v), out, codes);
    return codes[0];
}

// Values divided by their scale, clamped in place to the bound of a qmax override (saturate, docs/spec.md §1,
// §3.4), which the encoders above do not know (they saturate at the format's own qmax); nothing without one.
template <int kChunks, int kWidth>
__device__ __forceinline__ void saturate_in_place(float (&v)[kChunks][kWidth], const QuantParams& q) {
    if (!has_saturation_bound(q)) return;
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int i = 0; i < kWidth; ++i) v[c][i] = saturate(v[c][i], q);
}
__device__ __forceinline__ void saturate_in_place(float (&v)[8], const QuantParams& q) {
    saturate_in_place<1>(*reinterpret_cast<float(*)[1][8]>(&v), q);
}

// kChunks x kWidth values y divided by their scale as the quantizer divides (docs/spec.md §3.2), into v (which may
// be y): y * (1/s) under MULTIPLY_RECIPROCAL, else quotient() where in_range() says it is exact for them (asked only
// then), else IEEE division; then saturated. One decision for all the values. The row kernels (quantize below, 8
// values a chunk) and the grouped GEMM's epilogue (kernels/gemm/epilogue.cuh, 4 a lane) divide here.
template <int kChunks, int kWidth, class InRange>
__device__ __forceinline__ void divide_by_scale(const float (&y)[kChunks][kWidth], InRange&& in_range, const Divisor& d,
                                                const QuantParams& q, float (&v)[kChunks][kWidth]) {
    if (q.reciprocal) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
            for (int i = 0; i < kWidth; ++i) v[c][i] = y[c][i] * d.r;
    } else if (in_range()) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
            for (int i = 0; i < kWidth; ++i) v[c][i] = quotient(y[c][i], d);
    } else {
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
            for (int i = 0; i < kWidth; ++i) v[c][i] = y[c][i] / d.s;
    }
    saturate_in_place(v, q);
}

// kChunks x 8 outputs y, divided by their scale, encoded. `a`: an upper bound of their magnitudes (the lane's
// amax; NaN elements need none).
template <bool kHwCvt, int kChunks>
__device__ __forceinline__ void quantize(const float (&y)[kChunks][8], float a, const Divisor& d, const QuantParams& q,
                                         uint2 (&codes)[kChunks]) {
    float v[kChunks][8];
    divide_by_scale(y, [&] { return quotient_in_range(a, d); }, d, q, v);
    // The hardware conversion knows e4m3fn and e5m2; e4m3fnuz and int8 are encoded in software.
    if (q.out == DType::E4M3FN || q.out == DType::E5M2) encode<kHwCvt>(v, q.out, codes);
    else encode<false>(v, q.out, codes);
}

template <bool kHwCvt>
__device__ __forceinline__ uint2 quantize8(const float (&y)[8], float a, const Divisor& d, const QuantParams& q) {
    uint2 codes[1];
    quantize<kHwCvt, 1>(*reinterpret_cast<const float(*)[1][8]>(&y), a, d, q, codes);
    return codes[0];
}

// ---- The scale inputs a row reads -----------------------------------------------------------------
// The caller's scale upper bound (any kernel's parameters with a scale_ub pointer: the row kernels', the GEMM's).
template <class KernelParams>
__device__ __forceinline__ float upper_bound(const KernelParams& p) {
    return p.scale_ub ? *p.scale_ub : __int_as_float(0x7FC00000);  // NaN = no bound (fminf ignores it)
}

// ---- Microscaling (docs/spec.md §3.3): MXFP8, MXFP4 (E8M0 scale per 32) and NVFP4 (E4M3 scale per 16) ----------
// NVFP4's S_enc of expert e (docs/spec.md §3.3): from the caller's global amax, or the one tensor_amax reduced.
__device__ __forceinline__ float nvfp4_s_enc(const Params& p, int e) {
    return nvfp4_encode_scale(p.global_amax ? p.global_amax[e] : __uint_as_float(p.amax_bits[e]));
}

// One block scale from the group amax `a` (already reduced over the group's lanes), and the elements'
// multiplier. The same FQ_HD functions as the host reference.
template <bool kHwCvt>
__device__ __forceinline__ uint8_t microscale(const Params& p, float a, float s_enc, float& multiplier) {
    if (p.scheme == Scheme::Nvfp4) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
        // The block scale through the hardware conversion: the same byte as nvfp4_block_scale for its
        // argument, which is never NaN (amax ignores NaN; S_enc is positive and finite) and >= 0.
        const uint8_t sb = kHwCvt ? uint8_t(__nv_cvt_float_to_fp8(a * (s_enc / 6.0f), __NV_SATFINITE, __NV_E4M3))
                                  : nvfp4_block_scale(a, s_enc);
#else
        const uint8_t sb = nvfp4_block_scale(a, s_enc);
#endif
        multiplier = nvfp4_multiplier(sb, s_enc);
        return sb;
    }
    const uint8_t e = mx_scale(a, p.quant);
    multiplier = e8m0_reciprocal(e);
    return e;
}

// The scale every group of expert e's rows shares (per-tensor schemes), or NVFP4's S_enc of expert e.
__device__ __forceinline__ float tensor_scale_of(const Params& p, int e) {
    if (p.scheme == Scheme::Nvfp4) return nvfp4_s_enc(p, e);
    if (p.scheme == Scheme::PerTensorStatic) return p.static_scale[e];
    if (p.scheme == Scheme::PerTensorDynamic) return group_scale(__uint_as_float(p.amax_bits[e]), upper_bound(p), p.quant);
    return 0.0f;
}

// The tensor scale (or NVFP4's S_enc) and the scale upper bound, each loaded only where the scheme reads it.
template <bool kMx>
struct RowScaleInputs {
    float tensor_scale = 0.0f, bound = 0.0f;
    __device__ __forceinline__ RowScaleInputs(const Params& p, int expert) {
        const bool tensor_scaled = kMx ? p.scheme == Scheme::Nvfp4 : is_per_tensor(p.scheme);
        if (tensor_scaled) tensor_scale = tensor_scale_of(p, expert);
        if (!kMx && !tensor_scaled) bound = upper_bound(p);
    }
};

}  // namespace fq::cuda
