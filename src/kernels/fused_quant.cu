// Fused activation + FP8/INT8 quantization on CUDA: per-group, per-token and per-tensor (SPEC §2-§4).
//
// Three kernel skeletons share one way of reading a thread's 8 consecutive outputs (two 16-byte loads
// of gate and up, or one load when not gated) and the FQ_HD activation / quantizer code of src/common,
// so every variant writes exactly the bytes of the host reference:
//   group_quant   one thread = 8 outputs; a group of G outputs = G/8 neighbouring lanes, reduced with
//                 warp shuffles; also serves per-tensor scales (static, or dynamic after tensor_amax)
//   token_quant   one block per row: amax pass, block reduction, quantize pass (re-reads from L2)
//   tensor_amax   the amax of the whole tensor into one word (atomicMax on the float's bits)
// Template switches: kVec (16-byte IO, or element IO for unaligned rows), kHwCvt (sm_89+ cvt to fp8),
// kRows (rows per block, more loads in flight when the grid is large).
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "../api/error.h"
#include "../common/op_config.h"
#include "../dispatch/registry.h"
#include "vec.cuh"

namespace fq::cuda {

constexpr int kThreads = 128;         // group_quant block: 128 threads x 8 = 1024 outputs of a row
constexpr int kTokenThreads = 256;    // token_quant block

// OpConfig flattened to what the device reads; passed by value.
struct Params {
    const uint16_t* in;
    uint8_t* out;
    uint8_t* scales;
    int64_t rows, cols, in_ld, out_ld;
    InType in_type;
    Act act;
    GateLayout gate;
    GateOrder order;
    int64_t gate_block;
    Rounding rounding;
    SwigluParams swiglu;
    const float* row_prob;
    QuantParams quant;
    Scheme scheme;
    int64_t group;
    int lanes_per_group;
    ScaleGeometry sg;
    const float* static_scale;
    const float* scale_ub;
    unsigned* amax_bits;  // per-tensor dynamic: the amax word (the scale slot until finalized)
    bool hardware_exp;    // benchmark-only: SiLU with the MUFU exponential (breaks SPEC §0 on purpose)
};

// ---- Programmatic dependent launch (sm_90+; no-ops when launched without the attribute) ----------
__device__ __forceinline__ void wait_for_producer() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void let_consumer_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

// ---- Reading 8 activated outputs -------------------------------------------------------------------
// Raw inputs of 8 outputs: not gated (a), split / block-interleaved (a = gate, b = up), interleaved
// (a, b = 16 consecutive inputs g0 u0 g1 u1 ...).
struct Raw8 {
    Half8 a, b;
};

// How many of the 8 outputs starting at column j0 exist (8 except at a row end not divisible by 8).
__device__ __forceinline__ int outputs_left(const Params& p, int64_t j0) {
    return p.cols - j0 < 8 ? int(p.cols - j0) : 8;
}

template <bool kVec>
__device__ __forceinline__ Half8 load8(const uint16_t* p, int valid) {
    if constexpr (kVec) return load_half8(p);
    else return load_half8_scalar(p, valid);
}

template <bool kVec>
__device__ __forceinline__ Raw8 load_raw(const Params& p, int64_t m, int64_t j0) {
    const uint16_t* row = p.in + m * p.in_ld;
    const int valid = int(outputs_left(p, j0));
    Raw8 r;
    if (p.gate == GateLayout::None) {
        r.a = load8<kVec>(row + j0, valid);
    } else if (p.gate == GateLayout::Interleaved) {
        r.a = load8<kVec>(row + 2 * j0, min(8, 2 * valid));
        r.b = load8<kVec>(row + 2 * j0 + 8, max(0, 2 * valid - 8));
    } else {
        const GatePair c = gate_columns(p.gate, p.order, p.cols, p.gate_block, j0);
        r.a = load8<kVec>(row + c.gate, valid);
        r.b = load8<kVec>(row + c.up, valid);
    }
    return r;
}

// kAct is a template parameter so each kernel carries the code of one activation only (all of them
// inlined into one kernel overflow the instruction cache).
template <Act kAct>
__device__ __forceinline__ void activate8(const Params& p, const Raw8& r, float prob, float y[8]) {
    const bool gate_first = p.order == GateOrder::GateFirst;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        float v;
        if (p.gate == GateLayout::None) {
            v = activate(kAct, load_input(p.in_type, r.a.h[i]));
            if (p.rounding != Rounding::Fp32) v = round_to_input(p.in_type, v);
        } else {
            uint16_t g = r.a.h[i], u = r.b.h[i];
            if (p.gate == GateLayout::Interleaved) {  // constant indices only: a runtime one spills to local memory
                const Half8& h = i < 4 ? r.a : r.b;
                const uint16_t even = h.h[2 * (i & 3)], odd = h.h[2 * (i & 3) + 1];
                g = gate_first ? even : odd;
                u = gate_first ? odd : even;
            }
            if (p.hardware_exp) {
                const float gf = load_input(p.in_type, g);
                v = gf / (1.0f + __expf(-gf)) * load_input(p.in_type, u);
            } else {
                v = activate_gated(kAct, load_input(p.in_type, g), load_input(p.in_type, u), p.rounding, p.in_type,
                                   p.swiglu);
            }
        }
        y[i] = p.row_prob ? prob * v : v;
    }
}

// ---- Quantizing 8 outputs --------------------------------------------------------------------------
template <bool kHwCvt>
__device__ __forceinline__ uint2 quantize8(const float y[8], float s, float inv_s, const QuantParams& q) {
    uint8_t b[8];
    bool done = false;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    if (kHwCvt && (q.out == DType::E4M3FN || q.out == DType::E5M2)) {
        const __nv_fp8_interpretation_t kind = q.out == DType::E4M3FN ? __NV_E4M3 : __NV_E5M2;
#pragma unroll
        for (int i = 0; i < 8; i += 2) {
            const float2 v = q.reciprocal ? make_float2(y[i] * inv_s, y[i + 1] * inv_s)
                                          : make_float2(y[i] / s, y[i + 1] / s);
            const __nv_fp8x2_storage_t pair = __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, kind);
            b[i] = uint8_t(pair & 0xFF);
            b[i + 1] = uint8_t(pair >> 8);
        }
        done = true;
    }
#endif
    if (!done) {
#pragma unroll
        for (int i = 0; i < 8; ++i) b[i] = quantize_value(y[i], s, inv_s, q);
    }
    uint2 w;
    memcpy(&w, b, 8);
    return w;
}

template <bool kVec>
__device__ __forceinline__ void store8(uint8_t* dst, uint2 w, int valid) {
    if constexpr (kVec) {
        __stcs(reinterpret_cast<uint2*>(dst), w);
    } else {
        uint8_t b[8];
        memcpy(b, &w, 8);
        for (int i = 0; i < valid; ++i) dst[i] = b[i];
    }
}

__device__ __forceinline__ void store_scale(const Params& p, int64_t m, int64_t k, float s) {
    uint8_t* dst = p.scales + scale_offset(p.sg, m, k);
    if (p.sg.type == DType::E8M0) *dst = e8m0_of_pow2(s);
    else *reinterpret_cast<float*>(dst) = s;
}

__device__ __forceinline__ float upper_bound(const Params& p) {
    return p.scale_ub ? *p.scale_ub : __int_as_float(0x7FC00000);  // NaN = no bound (fminf ignores it)
}

__device__ __forceinline__ float amax8(const float y[8], int valid) {
    float a = 0.0f;
#pragma unroll
    for (int i = 0; i < 8; ++i) a = i < valid ? fmaxf(a, fabsf(y[i])) : a;
    return a;
}

// ---- Skeleton 1: per-group (and per-tensor) ---------------------------------------------------------
template <Act kAct, bool kVec, bool kHwCvt, int kRows>
__global__ void __launch_bounds__(kThreads) group_quant(const Params p) {
    wait_for_producer();
    const int64_t j0 = (int64_t(blockIdx.y) * kThreads + threadIdx.x) * 8;
    const int64_t m0 = int64_t(blockIdx.x) * kRows;
    const bool col_ok = j0 < p.cols;
    const int valid = col_ok ? int(outputs_left(p, j0)) : 0;

    Raw8 raw[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r)  // every load in flight before the first use
        if (col_ok && m0 + r < p.rows) raw[r] = load_raw<kVec>(p, m0 + r, j0);
    let_consumer_start();

    const bool per_tensor = is_per_tensor(p.scheme);
    float tensor_s = 0.0f;
    if (p.scheme == Scheme::PerTensorStatic) tensor_s = *p.static_scale;
    if (p.scheme == Scheme::PerTensorDynamic) tensor_s = group_scale(__uint_as_float(*p.amax_bits), upper_bound(p), p.quant);
    const float ub = per_tensor ? 0.0f : upper_bound(p);
    const int lane = threadIdx.x & 31;
    const bool leader = lane % p.lanes_per_group == 0;

#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        const int64_t m = m0 + r;
        const bool row_ok = m < p.rows;
        float y[8];
        if (row_ok && col_ok) activate8<kAct>(p, raw[r], p.row_prob ? p.row_prob[m] : 1.0f, y);
        float s = tensor_s;
        if (!per_tensor) {
            float a = (row_ok && col_ok) ? amax8(y, valid) : 0.0f;
            for (int d = p.lanes_per_group / 2; d > 0; d /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
            s = group_scale(a, ub, p.quant);
            const int64_t k = j0 / p.group;
            if (leader && col_ok && m < p.sg.padded_rows) store_scale(p, m, k, row_ok ? s : 0.0f);  // 0 = padding
        }
        if (row_ok && col_ok) store8<kVec>(p.out + m * p.out_ld + j0, quantize8<kHwCvt>(y, s, 1.0f / s, p.quant), valid);
    }
}

// ---- Skeleton 2: per-token (one block per row) -------------------------------------------------------
template <Act kAct, bool kVec, bool kHwCvt>
__global__ void __launch_bounds__(kTokenThreads) token_quant(const Params p) {
    wait_for_producer();
    const int64_t m = blockIdx.x;
    if (m >= p.rows) {  // padding rows of a column-major TMA scale layout
        if (threadIdx.x == 0) store_scale(p, m, 0, 0.0f);
        return;
    }
    const float prob = p.row_prob ? p.row_prob[m] : 1.0f;
    const int64_t stride = int64_t(kTokenThreads) * 8;
    float a = 0.0f;
    for (int64_t j0 = threadIdx.x * 8; j0 < p.cols; j0 += stride) {
        float y[8];
        activate8<kAct>(p, load_raw<kVec>(p, m, j0), prob, y);
        a = fmaxf(a, amax8(y, int(outputs_left(p, j0))));
    }
    __shared__ float warp_amax[kTokenThreads / 32];
    for (int d = 16; d > 0; d /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    if ((threadIdx.x & 31) == 0) warp_amax[threadIdx.x / 32] = a;
    __syncthreads();
    a = 0.0f;
#pragma unroll
    for (int w = 0; w < kTokenThreads / 32; ++w) a = fmaxf(a, warp_amax[w]);
    const float s = group_scale(a, upper_bound(p), p.quant), inv_s = 1.0f / s;
    if (threadIdx.x == 0) store_scale(p, m, 0, s);
    for (int64_t j0 = threadIdx.x * 8; j0 < p.cols; j0 += stride) {  // second pass: L2-resident re-read
        float y[8];
        activate8<kAct>(p, load_raw<kVec>(p, m, j0), prob, y);
        store8<kVec>(p.out + m * p.out_ld + j0, quantize8<kHwCvt>(y, s, inv_s, p.quant), int(outputs_left(p, j0)));
    }
    let_consumer_start();
}

// ---- Skeleton 3: amax of the whole tensor (per-tensor dynamic, step 1 of 3) -------------------------
template <Act kAct, bool kVec>
__global__ void __launch_bounds__(kThreads) tensor_amax(const Params p) {
    wait_for_producer();
    const int64_t j0 = (int64_t(blockIdx.y) * kThreads + threadIdx.x) * 8;
    const int64_t m = blockIdx.x;
    float a = 0.0f;
    if (j0 < p.cols) {
        float y[8];
        activate8<kAct>(p, load_raw<kVec>(p, m, j0), p.row_prob ? p.row_prob[m] : 1.0f, y);
        a = amax8(y, int(outputs_left(p, j0)));
    }
    for (int d = 16; d > 0; d /= 2) a = fmaxf(a, __shfl_xor_sync(0xFFFFFFFFu, a, d));
    // Non-negative floats order like their bit patterns, so an unsigned max is a float max.
    if ((threadIdx.x & 31) == 0 && a > 0.0f) atomicMax(p.amax_bits, __float_as_uint(a));
}

// Step 3 of per-tensor dynamic: the amax word becomes the scale (step 2, group_quant, read the amax).
__global__ void finalize_tensor_scale(const Params p) {
    const float amax = __uint_as_float(*p.amax_bits);
    *reinterpret_cast<float*>(p.scales) = group_scale(amax, upper_bound(p), p.quant);
}

// ---- Host side: parameters, launch, variants ----------------------------------------------------------
Params make_params(const LaunchArgs& a) {
    const OpConfig& c = a.cfg;
    Params p{};
    p.in = static_cast<const uint16_t*>(a.input);
    p.out = static_cast<uint8_t*>(a.output);
    p.scales = static_cast<uint8_t*>(a.scales);
    p.rows = c.rows;
    p.cols = c.cols;
    p.in_ld = c.in_ld;
    p.out_ld = c.out_ld;
    p.in_type = c.in_type;
    p.act = c.act;
    p.gate = c.gate;
    p.order = c.gate_order;
    p.gate_block = c.gate_block;
    p.rounding = c.rounding;
    p.swiglu = c.swiglu;
    p.row_prob = c.row_prob;
    p.quant = c.quant;
    p.scheme = c.scheme;
    p.group = c.group;
    p.lanes_per_group = c.scheme == Scheme::PerGroup ? int(c.group / 8) : 1;
    p.sg = c.scales;
    p.static_scale = c.static_scale;
    p.scale_ub = c.scale_ub;
    p.amax_bits = reinterpret_cast<unsigned*>(a.scales);
    return p;
}

template <class Kernel>
fqStatus_t launch(Kernel kernel, dim3 grid, dim3 block, const LaunchArgs& a, bool pdl_capable, const Params& p) {
    if (grid.x == 0 || grid.y == 0) return FQ_STATUS_SUCCESS;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.stream = static_cast<cudaStream_t>(a.stream);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    if (pdl_capable && a.allow_pdl) {
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, p);
    if (e != cudaSuccess) return fail(FQ_STATUS_CUDA_ERROR, "kernel launch failed: {}", cudaGetErrorString(e));
    return FQ_STATUS_SUCCESS;
}

// The sm_90 heuristic (DESIGN §4: enough CTAs first): 4 rows per block once that still leaves several
// blocks per multiprocessor, else 1 row per block.
bool use_four_rows(const OpConfig& c, int64_t col_tiles, int sm_count) {
    return (c.rows / 4) * col_tiles >= int64_t(4) * sm_count;
}

// Calls f(std::integral_constant<Act, A>{}) for the problem's activation: one kernel per activation.
template <class F>
fqStatus_t with_activation(Act act, F&& f) {
    switch (act) {
        case Act::Identity: return f(std::integral_constant<Act, Act::Identity>{});
        case Act::Silu: return f(std::integral_constant<Act, Act::Silu>{});
        case Act::GeluErf: return f(std::integral_constant<Act, Act::GeluErf>{});
        case Act::GeluTanh: return f(std::integral_constant<Act, Act::GeluTanh>{});
        case Act::Relu: return f(std::integral_constant<Act, Act::Relu>{});
        case Act::ReluSquared: return f(std::integral_constant<Act, Act::ReluSquared>{});
        case Act::SwigluOai: return f(std::integral_constant<Act, Act::SwigluOai>{});
    }
    return fail(FQ_STATUS_INTERNAL_ERROR, "unknown activation {}", int(act));
}

template <Act kAct, bool kVec, bool kHwCvt, bool kPdl, bool kHardwareExp>
fqStatus_t run_group_for(const LaunchArgs& a) {
    const OpConfig& c = a.cfg;
    Params p = make_params(a);
    p.hardware_exp = kHardwareExp;
    const int64_t col_tiles = ceil_div(c.cols, int64_t(kThreads) * 8);
    const dim3 block(kThreads);
    if (c.scheme == Scheme::PerTensorDynamic) {
        cudaStream_t s = static_cast<cudaStream_t>(a.stream);
        if (cudaMemsetAsync(a.scales, 0, sizeof(float), s) != cudaSuccess)
            return fail(FQ_STATUS_CUDA_ERROR, "cudaMemsetAsync of the tensor scale failed");
        FQ_TRY(launch(tensor_amax<kAct, kVec>, dim3(unsigned(c.rows), unsigned(col_tiles)), block, a, kPdl, p));
    }
    const int64_t scale_rows = std::max(c.rows, is_per_tensor(c.scheme) ? 0 : c.scales.padded_rows);
    if (use_four_rows(c, col_tiles, a.sm_count)) {
        FQ_TRY(launch(group_quant<kAct, kVec, kHwCvt, 4>, dim3(unsigned(ceil_div(scale_rows, 4)), unsigned(col_tiles)),
                      block, a, kPdl, p));
    } else {
        FQ_TRY(launch(group_quant<kAct, kVec, kHwCvt, 1>, dim3(unsigned(scale_rows), unsigned(col_tiles)), block, a, kPdl, p));
    }
    if (c.scheme == Scheme::PerTensorDynamic) FQ_TRY(launch(finalize_tensor_scale, dim3(1), dim3(1), a, kPdl, p));
    return FQ_STATUS_SUCCESS;
}

template <bool kVec, bool kHwCvt, bool kPdl, bool kHardwareExp = false>
fqStatus_t run_group(const LaunchArgs& a) {
    if constexpr (kHardwareExp) return run_group_for<Act::Silu, kVec, kHwCvt, kPdl, true>(a);
    return with_activation(a.cfg.act, [&](auto act) { return run_group_for<act.value, kVec, kHwCvt, kPdl, false>(a); });
}

template <bool kVec, bool kHwCvt, bool kPdl>
fqStatus_t run_token(const LaunchArgs& a) {
    const Params p = make_params(a);
    const int64_t rows = std::max(a.cfg.rows, a.cfg.scales.padded_rows);
    return with_activation(a.cfg.act, [&](auto act) {
        return launch(token_quant<act.value, kVec, kHwCvt>, dim3(unsigned(rows)), dim3(kTokenThreads), a, kPdl, p);
    });
}

// ---- Which problems a CUDA variant runs ---------------------------------------------------------------
std::string refuse_common(const OpConfig& c) {
    switch (c.scheme) {
        case Scheme::Block2D:
        case Scheme::Mxfp8:
        case Scheme::Mxfp4:
        case Scheme::Nvfp4:
            return fmt::format("scheme {} has no CUDA kernel in this version", name(c.scheme));
        default: break;
    }
    if (c.moe != MoeLayout::None) return "MoE layouts have no CUDA kernel in this version";
    if (c.outputs != kOutputRowwise) return "columnwise outputs have no CUDA kernel in this version";
    if (c.scales.layout == ScaleLayout::Swizzled128x4 || c.scales.layout == ScaleLayout::PackedUe8m0)
        return fmt::format("scale layout {} has no CUDA kernel for scheme {} in this version", name(c.scales.layout),
                           name(c.scheme));
    if (c.rows > int64_t(INT32_MAX) || ceil_div(c.cols, 1024) > 65535)
        return fmt::format("{} rows x {} columns exceeds the launch grid", c.rows, c.cols);
    return {};
}

bool vector_io_ok(const OpConfig& c) {
    return c.vector_aligned && c.cols % 8 == 0 && c.in_ld % 8 == 0 && c.out_ld % 8 == 0;
}

template <bool kVec>
std::string refuse_group(const OpConfig& c) {
    if (c.scheme != Scheme::PerGroup && !is_per_tensor(c.scheme)) return "runs per-group and per-tensor schemes only";
    if (kVec && !vector_io_ok(c))
        return "needs 16-byte aligned input/output pointers and row strides and a width divisible by 8";
    return refuse_common(c);
}

std::string refuse_hardware_exp(const OpConfig& c) {
    if (c.act != Act::Silu || !c.gated() || c.rounding != Rounding::Fp32)
        return "benchmark-only: gated SiLU with FP32 intermediates only";
    return refuse_group<true>(c);
}

template <bool kVec>
std::string refuse_token(const OpConfig& c) {
    if (c.scheme != Scheme::PerToken) return "runs the per-token scheme only";
    if (kVec && !vector_io_ok(c))
        return "needs 16-byte aligned input/output pointers and row strides and a width divisible by 8";
    return refuse_common(c);
}

}  // namespace fq::cuda

namespace fq {

void register_cuda_variants(std::vector<Variant>& t) {
    using namespace cuda;
    constexpr int kAny = 1000;
    // Most specific first: sm_90 (hardware fp8 cvt + programmatic dependent launch), sm_89 (hardware
    // cvt), sm_80 (software RNE encoding). Each has a 16-byte IO version and an element-IO version.
    t.push_back({"sm90.group", "per-group 32/64/128 and per-tensor, 16-byte IO, hw fp8 cvt, PDL", Backend::Cuda, 90, kAny, refuse_group<true>, run_group<true, true, true>});
    t.push_back({"sm90.token", "per-token, 16-byte IO, hw fp8 cvt, PDL", Backend::Cuda, 90, kAny, refuse_token<true>, run_token<true, true, true>});
    t.push_back({"sm90.group.unaligned", "per-group and per-tensor, element IO for unaligned rows", Backend::Cuda, 90, kAny, refuse_group<false>, run_group<false, true, true>});
    t.push_back({"sm90.token.unaligned", "per-token, element IO for unaligned rows", Backend::Cuda, 90, kAny, refuse_token<false>, run_token<false, true, true>});
    t.push_back({"sm89.group", "per-group 32/64/128 and per-tensor, 16-byte IO, hw fp8 cvt", Backend::Cuda, 89, kAny, refuse_group<true>, run_group<true, true, false>});
    t.push_back({"sm89.token", "per-token, 16-byte IO, hw fp8 cvt", Backend::Cuda, 89, kAny, refuse_token<true>, run_token<true, true, false>});
    t.push_back({"sm89.group.unaligned", "per-group and per-tensor, element IO", Backend::Cuda, 89, kAny, refuse_group<false>, run_group<false, true, false>});
    t.push_back({"sm89.token.unaligned", "per-token, element IO", Backend::Cuda, 89, kAny, refuse_token<false>, run_token<false, true, false>});
    t.push_back({"sm80.group", "per-group 32/64/128 and per-tensor, 16-byte IO, software fp8 encoding", Backend::Cuda, 80, kAny, refuse_group<true>, run_group<true, false, false>});
    t.push_back({"sm80.token", "per-token, 16-byte IO, software fp8 encoding", Backend::Cuda, 80, kAny, refuse_token<true>, run_token<true, false, false>});
    t.push_back({"sm80.group.unaligned", "per-group and per-tensor, element IO, software encoding", Backend::Cuda, 80, kAny, refuse_group<false>, run_group<false, false, false>});
    t.push_back({"sm90.group.hwexp", "benchmark-only: sm90.group with the hardware exponential in SiLU (not bit-exact)", Backend::Cuda, 90, kAny, refuse_hardware_exp, run_group<true, true, true, true>, true});
    t.push_back({"sm80.token.unaligned", "per-token, element IO, software encoding", Backend::Cuda, 80, kAny, refuse_token<false>, run_token<false, false, false>});
}

}  // namespace fq
