// The launches around the quantize kernels: the tensor amax's set-up (step 1 of per-tensor dynamic and of NVFP4
// without the caller's global amax) and finalize (step 3), and the zeroing of scale padding before the
// columnwise kernel.
#include "columnwise.cuh"

namespace fq::cuda {

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

fqStatus_t prepare_tensor_amax(const LaunchArgs& a, const Params& p) {  // one word per expert
    return cuda_status(cudaMemsetAsync(p.amax_bits, 0, sizeof(float) * size_t(p.experts), static_cast<cudaStream_t>(a.stream)),
                       "cudaMemsetAsync of the tensor amax");
}

fqStatus_t finish_tensor_scale(const LaunchArgs& a, bool pdl, const Params& p) {
    return launch(finalize_tensor_scale, dim3(1), dim3(256), a, pdl, p);
}

}  // namespace fq::cuda
