// The CUDA entries of the dispatch table: which problems each variant runs, and how it launches.
#include "columnwise.cuh"

namespace fq::cuda {

// The kernels of each activation of FQ_ACTIVATIONS are instantiated in their own translation unit.
#define FQ_DECLARE_EXTERN(...) extern __VA_ARGS__
#define FQ_DECLARE_FOR(Internal, ...)                            \
    FQ_FOR_EACH_LAUNCHER(FQ_DECLARE_EXTERN, Act::Internal)      \
    FQ_FOR_EACH_COLUMNWISE_LAUNCHER(FQ_DECLARE_EXTERN, Act::Internal)
FQ_ACTIVATIONS(FQ_DECLARE_FOR)

__global__ void finalize_tensor_scale(const Params p) {
    // Launched with programmatic dependent launch: the quantize kernel lets it start early, but it must not
    // overwrite the amax words before every block of that kernel has read them.
    wait_for_producer();
    for (int e = int(threadIdx.x); e < p.experts; e += int(blockDim.x)) {
        const float s = group_scale(__uint_as_float(p.amax_bits[e]), upper_bound(p), p.quant);
        if (p.rowwise) reinterpret_cast<float*>(p.scales)[e] = s;
        if (p.col_scales) reinterpret_cast<float*>(p.col_scales)[e] = s;
    }
}

__global__ void zero_scale_padding_kernel(ScaleGeometry g, uint8_t* base, int64_t blocks, int64_t cols_padded,
                                          bool rows_only) {
    // Slots of one block: rows [g.rows, padded_rows) x every column, then (unless rows_only) rows [0, g.rows)
    // x columns [g.cols, cols_padded).
    const int64_t below = (g.padded_rows - g.rows) * cols_padded;
    const int64_t beside = rows_only ? 0 : g.rows * (cols_padded - g.cols);
    const int64_t per_block = below + beside;
    const int64_t bytes = scale_type_bytes(g.type);
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < blocks * per_block;
         i += int64_t(gridDim.x) * blockDim.x) {
        const int64_t blk = i / per_block, j = i % per_block;
        int64_t m, k;
        if (j < below) {
            m = g.rows + j / cols_padded;
            k = j % cols_padded;
        } else {
            m = (j - below) / (cols_padded - g.cols);
            k = g.cols + (j - below) % (cols_padded - g.cols);
        }
        uint8_t* dst = base + blk * g.bytes + scale_offset(g, m, k);
        for (int64_t byte = 0; byte < bytes; ++byte) dst[byte] = 0;
    }
}

fqStatus_t launch_zero_scale_padding(const LaunchArgs& a, const ScaleGeometry& g, uint8_t* base, int64_t blocks,
                                     bool rows_only) {
    const int64_t cols_padded = padded_scale_cols(g);
    const int64_t slots = blocks * ((g.padded_rows - g.rows) * cols_padded + (rows_only ? 0 : g.rows * (cols_padded - g.cols)));
    if (slots <= 0 || !base) return FQ_STATUS_SUCCESS;
    const unsigned grid = unsigned(std::min<int64_t>(ceil_div(slots, 256), 1024));
    return cuda_status(launch_kernel(zero_scale_padding_kernel, dim3(grid), dim3(256), 0, static_cast<cudaStream_t>(a.stream),
                                     false, g, base, blocks, cols_padded, rows_only),
                       "kernel launch");
}

Params make_params(const LaunchArgs& a) {
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
    // The tensor amax accumulates in the scale slot (per-tensor dynamic) or, for NVFP4 without the caller's
    // global amax, in the workspace (fqGetWorkspaceSize), where the caller finds it after the call.
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

fqStatus_t prepare_tensor_amax(const LaunchArgs& a, const Params& p) {  // one word per expert
    return cuda_status(cudaMemsetAsync(p.amax_bits, 0, sizeof(float) * size_t(p.experts), static_cast<cudaStream_t>(a.stream)),
                       "cudaMemsetAsync of the tensor amax");
}

fqStatus_t finish_tensor_scale(const LaunchArgs& a, bool pdl, const Params& p) {
    return launch(finalize_tensor_scale, dim3(1), dim3(256), a, pdl, p);
}

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

template <bool kVec, bool kHwCvt, bool kPdl>
fqStatus_t run_group(const LaunchArgs& a) {
    return with_activation(a.cfg.act, [&](auto act) { return run_group_for<act.value, kVec, kHwCvt, kPdl>(a); });
}

template <bool kVec, bool kHwCvt, bool kPdl>
fqStatus_t run_token(const LaunchArgs& a) {
    return with_activation(a.cfg.act, [&](auto act) { return run_token_for<act.value, kVec, kHwCvt, kPdl>(a); });
}

template <bool kVec, bool kHwCvt, bool kPdl>
fqStatus_t run_columnwise(const LaunchArgs& a) {
    return with_activation(a.cfg.act, [&](auto act) { return run_columnwise_for<act.value, kVec, kHwCvt, kPdl>(a); });
}

// ---- Which problems a CUDA variant runs ---------------------------------------------------------------
std::string refuse_common(const OpConfig& c) {
    if (c.scheme == Scheme::Block2D) return fmt::format("scheme {} is not run by the row kernels", name(c.scheme));
    if (c.rows + c.scale_batch * c.scales.padded_rows > int64_t(INT32_MAX) || ceil_div(c.cols, int64_t(kThreads) * 8) > 65535)
        return fmt::format("{} rows x {} columns exceeds the launch grid", c.rows, c.cols);
    return {};
}

// The row kernels (group_quant, token_quant) write the rowwise output only.
std::string refuse_rowwise_only(const OpConfig& c) {
    if (c.columnwise()) return "a columnwise output runs in the .columnwise variants";
    return refuse_common(c);
}

bool vector_io_ok(const OpConfig& c) {
    return c.vector_aligned && c.cols % 8 == 0 && c.in_ld % 8 == 0 && c.out_ld % 8 == 0;
}

template <bool kVec>
std::string refuse_group(const OpConfig& c) {
    if (c.scheme == Scheme::PerToken) return "runs per-group, per-tensor and microscaling schemes";
    if (kVec && !vector_io_ok(c))
        return "needs 16-byte aligned input/output pointers and row strides and a width divisible by 8";
    return refuse_rowwise_only(c);
}

template <bool kVec>
std::string refuse_token(const OpConfig& c) {
    if (c.scheme != Scheme::PerToken) return "runs the per-token scheme only";
    if (kVec && !vector_io_ok(c))
        return "needs 16-byte aligned input/output pointers and row strides and a width divisible by 8";
    return refuse_rowwise_only(c);
}

template <bool kVec>
std::string refuse_columnwise(const OpConfig& c) {
    if (!c.columnwise()) return "runs problems with a columnwise output";
    if (kVec && !vector_io_ok(c))
        return "needs 16-byte aligned input/output pointers and row strides and a width divisible by 8";
    const ColumnRuns r = column_runs(c);
    if (r.runs * r.tiles_per_run() > int64_t(INT32_MAX) ||
        ceil_div(c.cols, int64_t(kColTileCols)) > 65535)
        return fmt::format("{} rows x {} columns exceeds the launch grid", c.rows, c.cols);
    return refuse_common(c);
}

}  // namespace fq::cuda

namespace fq {

void register_cuda_variants(std::vector<Variant>& t) {
    using namespace cuda;
    constexpr int kAny = 1000;
    // Most specific first: sm_90 (hardware fp8 cvt + programmatic dependent launch), sm_89 (hardware
    // cvt), sm_80 (software RNE encoding). Each has a 16-byte IO version and an element-IO version.
    t.push_back({"sm90.group", "per-group 32/64/128, per-tensor, MXFP8/MXFP4/NVFP4, 16-byte IO, hw fp8 cvt, PDL", Backend::Cuda, 90, kAny, refuse_group<true>, run_group<true, true, true>});
    t.push_back({"sm90.token", "per-token, 16-byte IO, hw fp8 cvt, PDL", Backend::Cuda, 90, kAny, refuse_token<true>, run_token<true, true, true>});
    t.push_back({"sm90.group.unaligned", "per-group, per-tensor and microscaling, element IO for unaligned rows", Backend::Cuda, 90, kAny, refuse_group<false>, run_group<false, true, true>});
    t.push_back({"sm90.token.unaligned", "per-token, element IO for unaligned rows", Backend::Cuda, 90, kAny, refuse_token<false>, run_token<false, true, true>});
    t.push_back({"sm90.columnwise", "columnwise output (and rowwise in the same pass), any scheme but BLOCK_2D, 16-byte IO, hw fp8 cvt, PDL", Backend::Cuda, 90, kAny, refuse_columnwise<true>, run_columnwise<true, true, true>});
    t.push_back({"sm90.columnwise.unaligned", "columnwise output, element IO", Backend::Cuda, 90, kAny, refuse_columnwise<false>, run_columnwise<false, true, true>});
    t.push_back({"sm89.group", "per-group 32/64/128, per-tensor, MXFP8/MXFP4/NVFP4, 16-byte IO, hw fp8 cvt", Backend::Cuda, 89, kAny, refuse_group<true>, run_group<true, true, false>});
    t.push_back({"sm89.token", "per-token, 16-byte IO, hw fp8 cvt", Backend::Cuda, 89, kAny, refuse_token<true>, run_token<true, true, false>});
    t.push_back({"sm89.group.unaligned", "per-group, per-tensor and microscaling, element IO", Backend::Cuda, 89, kAny, refuse_group<false>, run_group<false, true, false>});
    t.push_back({"sm89.token.unaligned", "per-token, element IO", Backend::Cuda, 89, kAny, refuse_token<false>, run_token<false, true, false>});
    t.push_back({"sm89.columnwise", "columnwise output (and rowwise in the same pass), 16-byte IO, hw fp8 cvt", Backend::Cuda, 89, kAny, refuse_columnwise<true>, run_columnwise<true, true, false>});
    t.push_back({"sm89.columnwise.unaligned", "columnwise output, element IO", Backend::Cuda, 89, kAny, refuse_columnwise<false>, run_columnwise<false, true, false>});
    t.push_back({"sm80.group", "per-group 32/64/128, per-tensor, MXFP8/MXFP4/NVFP4, 16-byte IO, software fp8 encoding", Backend::Cuda, 80, kAny, refuse_group<true>, run_group<true, false, false>});
    t.push_back({"sm80.token", "per-token, 16-byte IO, software fp8 encoding", Backend::Cuda, 80, kAny, refuse_token<true>, run_token<true, false, false>});
    t.push_back({"sm80.group.unaligned", "per-group, per-tensor and microscaling, element IO, software encoding", Backend::Cuda, 80, kAny, refuse_group<false>, run_group<false, false, false>});
    t.push_back({"sm80.token.unaligned", "per-token, element IO, software encoding", Backend::Cuda, 80, kAny, refuse_token<false>, run_token<false, false, false>});
    t.push_back({"sm80.columnwise", "columnwise output (and rowwise in the same pass), 16-byte IO, software encoding", Backend::Cuda, 80, kAny, refuse_columnwise<true>, run_columnwise<true, false, false>});
    t.push_back({"sm80.columnwise.unaligned", "columnwise output, element IO, software encoding", Backend::Cuda, 80, kAny, refuse_columnwise<false>, run_columnwise<false, false, false>});
}

}  // namespace fq
