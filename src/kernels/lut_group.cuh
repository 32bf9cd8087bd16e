// Skeleton 5: per-group / per-tensor / microscaling quantization of bf16 inputs with the gate's activation
// read from a table in shared memory (SiLU, GELU erf / tanh, SwiGLU-OAI's gate factor).
//
// Why: in group_quant the portable exp and the IEEE quotient of SiLU cost ~27 instructions an output, and
// the kernel is instruction-bound there (docs/perf.md: 73% of copy bandwidth; with no activation math the
// same memory pattern reaches 94%). But a bf16 gate has only 65536 values, and act(g) is a function of
// those 16 bits: the table holds act(g) for every gate with 2^-16 <= |g| < 2^8 (24 binades x 128
// mantissas x 2 signs = 6144 floats), computed at the start of each block by the same FQ_HD code as the
// host reference, so a lookup returns exactly the bits the direct computation would. A gate outside it
// (zero, tiny, huge, Inf, NaN) sends its 8 outputs down the direct path (activate8): same bits, slower.
//
// Layout of the table: entry of gate bits b at window[b - kLutFirst], so positive gates sit at [0, span)
// and negative ones at [0x8000, 0x8000 + span): no sign arithmetic per lookup, for 140 KB of shared memory
// of which 24 KB are used. That is one block of 1024 threads per SM, persistent: the table is built once
// per SM, and each warp walks the rows of one 256-output column chunk (no division per tile). Loading the
// next row's inputs before computing the current one measured slower (335 against 308 us at 16384 x 7168).
// Measured on the H100 (docs/perf.md, tools/lab/lut_lab.sh): slower than group_quant at every shape, and
// exactly as slow with the lookups replaced by the bare gate: in this persistent shape the quantization
// and the per-tile work, at 32 warps an SM, are what limit it, not the activation. Benchmark-only.
#pragma once

#include <algorithm>
#include <atomic>

#include "fused_quant.cuh"

namespace fq::cuda {

constexpr uint32_t kLutFirst = 111u << 7;  // bf16 bits of 2^-16
constexpr uint32_t kLutSpan = 24u << 7;    // 24 binades of 128 mantissas: |g| < 2^8
constexpr int kLutThreads = 1024;
constexpr int kLutChunk = 256;             // outputs of one warp tile: 32 lanes x 8
constexpr size_t kLutSmemBytes = (0x8000u + kLutSpan) * sizeof(float);

constexpr bool has_activation_table(Act a) {
    return a == Act::Silu || a == Act::GeluErf || a == Act::GeluTanh || a == Act::SwigluOai;
}

// The table's value for gate g: what activated() computes from g alone before the up input enters (the
// gate factor of SwiGLU-OAI; act(g), rounded to bf16 where the rounding mode rounds it before the product
// or, not gated, rounds the output).
template <class S>
__device__ __forceinline__ float table_value(const Params& p, float g) {
    if constexpr (S::act == Act::SwigluOai) {
        return swiglu_gate(g, p.swiglu);
    } else {
        const float v = activate(S::act, g);
        const bool round_now = S::gate == GateKind::None ? p.rounding != Rounding::Fp32 : p.rounding == Rounding::RoundBoth;
        return round_now ? round_to_input(InType::Bf16, v) : v;
    }
}

// The output from the gate's table value t and the up input: activate_gated's remaining steps (kRounding:
// Fp32, or any mode that rounds the product; the table already holds a rounded act(g) for ROUND_BOTH).
template <class S, Rounding kRounding>
__device__ __forceinline__ float with_up(const Params& p, float t, uint16_t ub) {
    if constexpr (S::gate == GateKind::None) {
        return t;
    } else {
        const float u = bf16_to_float(ub);
        const float y = S::act == Act::SwigluOai ? t * swiglu_up(u, p.swiglu) : t * u;
        return kRounding == Rounding::Fp32 ? y : round_to_input(InType::Bf16, y);
    }
}

// Gates 2k and 2k + 1 (low and high half) and their up inputs, as 32-bit words of two bf16 each.
__device__ __forceinline__ uint32_t word_of(const uint4& v, int k) { return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w; }

template <class S>
__device__ __forceinline__ void gate_and_up_pairs(const Params& p, const RawWords& r, int k, uint32_t& g2, uint32_t& u2) {
    if constexpr (S::gate == GateKind::Interleaved) {  // g u g u: the even halves of two words, or the odd ones
        const uint4& v = k < 2 ? r.a : r.b;
        const uint32_t w0 = word_of(v, 2 * (k & 1)), w1 = word_of(v, 2 * (k & 1) + 1);
        const bool gate_first = p.order == GateOrder::GateFirst;
        g2 = __byte_perm(w0, w1, gate_first ? 0x5410 : 0x7632);
        u2 = __byte_perm(w0, w1, gate_first ? 0x7632 : 0x5410);
    } else {
        g2 = word_of(r.a, k);
        u2 = S::gate == GateKind::None ? 0u : word_of(r.b, k);
    }
}

// Whether all 8 gates lie in the table (2^-16 <= |g| < 2^8): the min and max of their magnitudes, two
// 16-bit lanes at a time (VIMNMX.U16x2 on sm_90). NaN and Inf magnitudes lie above the table.
__device__ __forceinline__ bool in_table(const uint32_t (&g2)[4]) {
    uint32_t lo = 0xFFFFFFFFu, hi = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const uint32_t mag = g2[k] & 0x7FFF7FFFu;
        lo = __vminu2(lo, mag);
        hi = __vmaxu2(hi, mag);
    }
    lo = __vminu2(lo, __byte_perm(lo, 0, 0x1032));  // both lanes: the min (max) of all 8
    hi = __vmaxu2(hi, __byte_perm(hi, 0, 0x1032));
    return (lo & 0xFFFFu) >= kLutFirst && (hi & 0xFFFFu) < kLutFirst + kLutSpan;
}

// The entry of gate bits b (in the table): a shared-memory load at table + 4 b, where `table` is the
// window's shared address less 4 kLutFirst.
__device__ __forceinline__ float table_entry(uint32_t table, uint32_t b) {
    float v;
    asm("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(table + 4u * b));
    return v;
}

// The direct path (activate8) for 8 outputs one of whose gates misses the table: rare, and out of line so
// that its registers do not count against the table path's.
template <class S>
__device__ __noinline__ void activate8_direct(const Params& p, uint4 a, uint4 b, int64_t m, float (&y)[8]) {
    activate8<S>(p, raw8_of(RawWords{a, b}), m, y);  // the words by value: a reference would park them in memory
}

// activate8 through the table: the same 8 outputs; the direct path for all 8 where a gate misses it.
template <class S>
__device__ __forceinline__ void activate8_table(const Params& p, uint32_t table, const RawWords& r, int64_t m,
                                                float (&y)[8]) {
    uint32_t g2[4], u2[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) gate_and_up_pairs<S>(p, r, k, g2[k], u2[k]);
    if (!in_table(g2)) {
        float direct[8];  // in local memory (its address is taken), not y
        activate8_direct<S>(p, r.a, r.b, m, direct);
#pragma unroll
        for (int i = 0; i < 8; ++i) y[i] = direct[i];
        return;
    }
    auto finish = [&](auto rounding) {  // the rounding mode as a constant: no branch per output
        constexpr Rounding kRounding = decltype(rounding)::value;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
#ifdef FQ_LUT_LAB_NO_TABLE  // measurement only (tools/lab): the gate itself instead of its table entry
            y[2 * k] = with_up<S, kRounding>(p, bf16_to_float(uint16_t(g2[k])), uint16_t(u2[k] & 0xFFFFu));
            y[2 * k + 1] = with_up<S, kRounding>(p, bf16_to_float(uint16_t(g2[k] >> 16)), uint16_t(u2[k] >> 16));
#else
            y[2 * k] = with_up<S, kRounding>(p, table_entry(table, g2[k] & 0xFFFFu), uint16_t(u2[k] & 0xFFFFu));
            y[2 * k + 1] = with_up<S, kRounding>(p, table_entry(table, g2[k] >> 16), uint16_t(u2[k] >> 16));
#endif
        }
    };
    if (S::gate == GateKind::None || p.rounding == Rounding::Fp32)
        finish(std::integral_constant<Rounding, Rounding::Fp32>{});
    else
        finish(std::integral_constant<Rounding, Rounding::RoundProduct>{});  // RoundBoth rounded t already
    apply_row_prob(p, m, y);
}

// Warps form a grid of R rows x C column chunks (C = min(chunks, warps)); warp (r, c) runs rows r, r + R,
// ... of chunks c, c + C, ...: a warp tile is 256 outputs of one row, the quantization is group_quant's
// (quantize_activated: group amax by shuffles, scales straight into the layout). Rows no expert owns are
// neither read nor written. Then the grid writes the scale layouts' padding rows.
template <class S, bool kMx>
__global__ void __launch_bounds__(kLutThreads, 1) lut_group_quant(const __grid_constant__ Params p) {
    static_assert(S::in == InType::Bf16, "the table is indexed by bf16 bits");
    extern __shared__ float window[];
    // The table reads no memory: built before waiting for the producer kernel.
    for (uint32_t i = threadIdx.x; i < 2 * kLutSpan; i += kLutThreads) {
        const uint32_t b = (i < kLutSpan ? 0u : 0x8000u) + kLutFirst + i % kLutSpan;
        window[b - kLutFirst] = table_value<S>(p, bf16_to_float(uint16_t(b)));
    }
    __syncthreads();
    const uint32_t table = uint32_t(__cvta_generic_to_shared(window)) - 4u * kLutFirst;
    wait_for_producer();
    let_consumer_start();

    constexpr int kWarps = kLutThreads / 32;
    const int lane = int(threadIdx.x) & 31;
    const int warp = int(blockIdx.x) * kWarps + int(threadIdx.x) / 32, warps = int(gridDim.x) * kWarps;
    const int chunks = int(ceil_div(int64_t(p.cols), int64_t(kLutChunk)));
    const int grid_cols = chunks < warps ? chunks : warps, grid_rows = warps / grid_cols;
    const float scale_bound = upper_bound(p);
    if (warp < grid_rows * grid_cols) {
        for (int c = warp % grid_cols; c < chunks; c += grid_cols) {
            const int j0 = c * kLutChunk + lane * 8;
            const bool col_ok = j0 < p.cols;
            for (int64_t m = warp / grid_cols; m < p.rows; m += grid_rows) {
                const RowOwner o = row_owner(p, m);
                if (o.expert < 0) continue;  // warp-uniform: the owner depends on the row only
                const RawWords raw = col_ok ? load_words<S>(p, m, j0) : RawWords{};
                float y[8];
                if (col_ok) activate8_table<S>(p, table, raw, m, y);
                quantize_activated<true, true, kMx>(p, o, m, j0, col_ok ? 8 : 0, y, tensor_scale_of(p, o.expert),
                                                    scale_bound);
            }
        }
    }
    // Padding rows of every row-scale block, slot by slot over the whole grid.
    const int64_t slots = padding_rows_total(p) * p.sg.cols;
    for (int64_t i = int64_t(blockIdx.x) * kLutThreads + threadIdx.x; i < slots; i += int64_t(gridDim.x) * kLutThreads)
        zero_scale_slot<kMx>(p, padding_row(p, i / p.sg.cols), i % p.sg.cols);
}

// Allows `kernel` its 140 KB of dynamic shared memory, once per device: `done` is the kernel's own set of
// devices (one static per kernel instantiation, in its launcher).
template <class Kernel>
fqStatus_t allow_lut_smem(Kernel kernel, int device, std::atomic<uint64_t>& done) {
    const uint64_t bit = device >= 0 && device < 64 ? uint64_t(1) << device : 0;  // others: set on every call
    if (done.load(std::memory_order_acquire) & bit) return FQ_STATUS_SUCCESS;
    FQ_TRY(cuda_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kLutSmemBytes)),
                       "cudaFuncSetAttribute (dynamic shared memory)"));
    done.fetch_or(bit, std::memory_order_acq_rel);
    return FQ_STATUS_SUCCESS;
}

// One block per SM (fewer for small problems: every warp tile of the first pass has work).
template <class S, bool kPdl, bool kMx>
fqStatus_t launch_lut_group_quant(const LaunchArgs& a, const Params& p) {
    const auto kernel = lut_group_quant<S, kMx>;
    static std::atomic<uint64_t> smem_allowed{0};
    FQ_TRY(allow_lut_smem(kernel, a.device, smem_allowed));
    const int64_t tiles = p.rows * ceil_div(int64_t(p.cols), int64_t(kLutChunk));
    const int64_t wanted = std::max<int64_t>(ceil_div(tiles, int64_t(kLutThreads / 32)), 1);
    const unsigned blocks = unsigned(std::min<int64_t>(wanted, std::max(a.sm_count, 1)));
    return launch_smem(kernel, dim3(blocks), dim3(kLutThreads), kLutSmemBytes, a, kPdl, p);
}

// run_group_for with the table kernel as the quantize step (bf16, 16-byte IO, hardware fp8 conversion).
template <Act kAct, bool kPdl>
fqStatus_t run_lut_group_for(const LaunchArgs& a) {
    static_assert(has_activation_table(kAct), "an activation with a table");
    const OpConfig& c = a.cfg;
    const Params p = make_params(a);
    return with_shape<kAct>(c, [&](auto shape) -> fqStatus_t {
        using S = decltype(shape);
        if constexpr (S::in != InType::Bf16) {
            return fail(FQ_STATUS_INTERNAL_ERROR, "sm90.group.lut launched for a non-bf16 input");
        } else {
            FQ_TRY((run_tensor_amax<S, true, kPdl>(a, p, c.fp32_intermediates())));
            const auto launch_quant = is_microscaling(c.scheme) ? launch_lut_group_quant<S, kPdl, true>
                                                                : launch_lut_group_quant<S, kPdl, false>;
            FQ_TRY(launch_quant(a, p));
            if (c.scheme == Scheme::PerTensorDynamic) FQ_TRY(finish_tensor_scale(a, kPdl, p));
            return FQ_STATUS_SUCCESS;
        }
    });
}

// The table kernels of one activation (instantiate_lut.cu.in: SiLU, GELU erf / tanh, SwiGLU-OAI).
#define FQ_FOR_EACH_LUT_LAUNCHER(X, ACT) X(template fqStatus_t run_lut_group_for<ACT, true>(const LaunchArgs&);)

}  // namespace fq::cuda
