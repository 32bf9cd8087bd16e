// Host reference of docs/spec.md. Each step is named after the section it implements; the order of
// floating-point operations is the one the shared FQ_HD functions fix, so GPU kernels that call the
// same functions produce the same bytes.
//
// One group quantizer serves every scheme and both directions: activate the rows (docs/spec.md §2), then for each
// group of elements (rowwise: `c.group` consecutive elements of a row; columnwise: `c.col_block` rows of one
// column) decide its scale from its amax and encode its elements (quantize_group). MoE layouts (docs/spec.md §5,
// docs/moe.md) only decide which rows are valid, which expert's tensor scalars they use, and which scale
// block they write: expert_of_rows() says it once for both directions.
// BLOCK_2D (weights) has its own loop over bands of 128 rows (quantize_block2d).
// Scratch (docs/spec.md §6): at most min(rows, block) rows of the output width, so a call allocates about as much as
// its own data and a zero-row call nothing sized by the width.
#include "reference.h"

#include "../common/activate_column.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "../common/moe.h"

namespace fq::host {
namespace {

// docs/spec.md §2: the activation output y (fp32) of one row, with the routing probability applied.
void activate_row(const OpConfig& c, const uint16_t* in, float prob, float* y) {
    const ActivationParams a = activation_params(c);
    for (int64_t j = 0; j < c.cols; ++j) {
        const float v = activate_column(a, in, j);
        y[j] = c.row_prob ? prob * v : v;
    }
}

// y of input row r (the probability is indexed by the row of the 2-D layout, MoE or not).
void activate_input_row(const OpConfig& c, const uint16_t* in, int64_t r, float* y) {
    activate_row(c, in + r * c.in_ld, c.row_prob ? c.row_prob[r] : 1.0f, y);
}

// docs/spec.md §3.2: amax, every NaN ignored. A comparison, not fmaxf: glibc's fmaxf answers NaN when an
// argument is a signalling NaN, after which the running max restarts (seen with GCC 13's code).
float amax_of(const float* y, int64_t n) {
    float a = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        const float m = fabsf(y[i]);
        a = m > a ? m : a;
    }
    return a;
}

// Values fixed for one expert (for the whole tensor without a MoE layout).
struct TensorScalars {
    float ub = std::numeric_limits<float>::quiet_NaN();  // scale upper bound (NaN: none; fminf ignores it)
    float tensor_scale = 1.0f;                           // per-tensor schemes: the one scale
    float s_enc = 1.0f;                                  // NVFP4: S_enc of docs/spec.md §3.3
};

// One group: its scale from its amax (stored at `scale_dst` unless NULL), and the codes of its n
// elements, one byte each (fp4 codes in the low nibble). Both directions share the scale type.
void quantize_group(const OpConfig& c, const TensorScalars& t, const float* y, int64_t n, uint8_t* codes,
                    uint8_t* scale_dst) {
    const QuantParams& q = c.quant;
    const float amax = amax_of(y, n);  // a partial last group: its valid elements only (docs/spec.md §6)
    switch (c.scheme) {
        case Scheme::Mxfp8:
        case Scheme::Mxfp4: {  // docs/spec.md §3.3: E8M0 scale e, q_i = enc(y_i * 2^(127-e))
            const uint8_t e = mx_scale(amax, q);
            const float mul = e8m0_reciprocal(e);
            for (int64_t i = 0; i < n; ++i) codes[i] = encode_value(y[i] * mul, q);
            *scale_dst = e;
            return;
        }
        case Scheme::Nvfp4: {  // docs/spec.md §3.3: E4M3 S_blk, q_i = e2m1(y_i * m)
            const uint8_t sb = nvfp4_block_scale(amax, t.s_enc);
            const float m = nvfp4_multiplier(sb, t.s_enc);
            for (int64_t i = 0; i < n; ++i) codes[i] = encode_value(y[i] * m, q);
            *scale_dst = sb;
            return;
        }
        default: {  // docs/spec.md §3.2: fp32 scale (E8M0 when POW2_CEIL), q_i = enc(y_i / s) or enc(y_i * (1/s))
            const float s = is_per_tensor(c.scheme) ? t.tensor_scale : group_scale(amax, t.ub, q);
            const float inv = 1.0f / s;
            for (int64_t i = 0; i < n; ++i) codes[i] = quantize_value(y[i], s, inv, q);
            if (!scale_dst) return;
            if (c.scales.type == DType::E8M0) *scale_dst = e8m0_of_pow2(s);
            else std::memcpy(scale_dst, &s, sizeof s);
        }
    }
}

// Writes a row of codes: one byte per element, or for FP4 two per byte, element 2i in the low nibble
// (docs/spec.md §1; validation guarantees an even width).
void store_row(const OpConfig& c, const uint8_t* codes, uint8_t* out) {
    if (c.quant.out != DType::E2M1) {
        std::memcpy(out, codes, size_t(c.cols));
        return;
    }
    for (int64_t j = 0; j < c.cols; j += 2) out[j / 2] = uint8_t((codes[j] & 0xF) | (codes[j + 1] << 4));
}

// Bytes between consecutive rows of an output of `ld` elements per row.
int64_t row_bytes(const OpConfig& c, int64_t ld) { return c.quant.out == DType::E2M1 ? ld / 2 : ld; }

// docs/spec.md §3.1 BLOCK_2D: one scale per 128x128 tile, from the amax over the tile's valid elements (a tile at the
// bottom or right edge is partial), stored at S[tile row, tile column]; elements quantized as in §3.2.
void quantize_block2d(const OpConfig& c, const uint16_t* in, uint8_t* out, uint8_t* scales) {
    const QuantParams& q = c.quant;
    const float ub = c.scale_ub ? *c.scale_ub : std::numeric_limits<float>::quiet_NaN();
    std::vector<float> y(size_t(std::min(kBlock2D, c.rows) * c.cols));  // one band of up to 128 activated rows
    for (int64_t mb = 0; mb * kBlock2D < c.rows; ++mb) {
        const int64_t r0 = mb * kBlock2D, nr = std::min(kBlock2D, c.rows - r0);
        for (int64_t r = 0; r < nr; ++r)
            activate_row(c, in + (r0 + r) * c.in_ld, c.row_prob ? c.row_prob[r0 + r] : 1.0f, y.data() + r * c.cols);
        for (int64_t kb = 0; kb * kBlock2D < c.cols; ++kb) {
            const int64_t j0 = kb * kBlock2D, nc = std::min(kBlock2D, c.cols - j0);
            float amax = 0.0f;
            for (int64_t r = 0; r < nr; ++r) amax = fmaxf(amax, amax_of(y.data() + r * c.cols + j0, nc));
            const float s = group_scale(amax, ub, q), inv = 1.0f / s;
            std::memcpy(scales + scale_offset(c.scales, mb, kb), &s, sizeof s);
            for (int64_t r = 0; r < nr; ++r)
                for (int64_t j = j0; j < j0 + nc; ++j)
                    out[(r0 + r) * c.out_ld + j] = quantize_value(y[size_t(r * c.cols + j)], s, inv, q);
        }
    }
}

// ---- MoE (docs/spec.md §5) ------------------------------------------------------------------------------------

// Per expert: the per-tensor scale (static: the caller's e-th; dynamic: from the amax of the expert's
// valid rows) and NVFP4's S_enc (from the caller's e-th global amax, or the expert's amax). The rows are
// activated once more rather than held.
std::vector<TensorScalars> tensor_scalars(const OpConfig& c, const uint16_t* in, const std::vector<int32_t>& expert) {
    std::vector<TensorScalars> t(size_t(c.experts()));
    std::vector<float> amax(t.size(), 0.0f), y;
    if (c.rows > 0 && (c.scheme == Scheme::PerTensorDynamic || (c.scheme == Scheme::Nvfp4 && !c.global_amax))) {
        y.resize(size_t(c.cols));
        for (int64_t r = 0; r < c.rows; ++r) {
            if (expert[size_t(r)] < 0) continue;
            activate_input_row(c, in, r, y.data());
            float& a = amax[size_t(expert[size_t(r)])];
            a = fmaxf(a, amax_of(y.data(), c.cols));
        }
    }
    for (size_t e = 0; e < t.size(); ++e) {
        if (c.scale_ub) t[e].ub = *c.scale_ub;
        if (c.scheme == Scheme::PerTensorStatic) t[e].tensor_scale = c.static_scale[e];
        if (c.scheme == Scheme::PerTensorDynamic) t[e].tensor_scale = group_scale(amax[e], t[e].ub, c.quant);
        // NVFP4's S_enc is not written anywhere (the API has no output for it): a caller that decodes needs
        // the global amax it passed, or must recompute the amax of y itself (docs/spec.md §3.3: y ~ q * S_blk / S_enc).
        if (c.scheme == Scheme::Nvfp4) t[e].s_enc = nvfp4_encode_scale(c.global_amax ? c.global_amax[e] : amax[e]);
    }
    return t;
}

// ---- Scale blocks and their padding (docs/spec.md §0, §4) --------------------------------------------------------

void zero_slot(const ScaleGeometry& g, uint8_t* block, int64_t m, int64_t k) {
    std::memset(block + scale_offset(g, m, k), 0, size_t(scale_type_bytes(g.type)));
}

// Padding rows of a block (past its logical rows) are zero in every column. Column padding belongs to its
// row: written with zero when the row is written (zero_padding_cols), left alone when the row is not valid.
void zero_padding_rows(const ScaleGeometry& g, uint8_t* block) {
    for (int64_t m = g.rows; m < g.padded_rows; ++m)
        for (int64_t k = 0; k < padded_scale_cols(g); ++k) zero_slot(g, block, m, k);
}

void zero_padding_cols(const ScaleGeometry& g, uint8_t* block, int64_t m) {
    for (int64_t k = g.cols; k < padded_scale_cols(g); ++k) zero_slot(g, block, m, k);
}

// Per-tensor dynamic: the scale of expert e is float e of the buffer (one float without MoE).
void store_tensor_scales(const std::vector<TensorScalars>& t, uint8_t* scales) {
    for (size_t e = 0; e < t.size(); ++e) std::memcpy(scales + 4 * e, &t[e].tensor_scale, sizeof(float));
}

// ---- Rowwise output: groups of c.group elements along each valid row ----------------------------------

void quantize_rowwise(const OpConfig& c, const uint16_t* in, uint8_t* out, uint8_t* scales,
                      const std::vector<int32_t>& expert, const std::vector<TensorScalars>& t) {
    const ScaleGeometry& g = c.scales;
    const bool masked = c.moe == MoeLayout::Masked;
    if (is_per_tensor(c.scheme)) {
        if (c.scheme == Scheme::PerTensorDynamic) store_tensor_scales(t, scales);
    } else if (g.bytes > 0) {
        for (int64_t b = 0; b < c.scale_batch; ++b) zero_padding_rows(g, scales + b * g.bytes);
    }
    if (c.rows == 0) return;
    std::vector<float> y(size_t(c.cols));
    std::vector<uint8_t> codes(size_t(c.cols));
    for (int64_t r = 0; r < c.rows; ++r) {
        const int32_t e = expert[size_t(r)];
        if (e < 0) continue;
        // MASKED: expert e's own block, indexed by the row within the expert; else the stacked row. Per-tensor
        // schemes have no per-row slot (and static ones may have no buffer at all).
        const bool row_scales = !is_per_tensor(c.scheme);
        uint8_t* block = row_scales ? scales + (masked ? e * g.bytes : 0) : nullptr;
        const int64_t m = masked ? r - e * c.expert_rows : r;
        activate_input_row(c, in, r, y.data());
        for (int64_t k = 0; k * c.group < c.cols; ++k) {
            const int64_t lo = k * c.group, n = std::min(c.group, c.cols - lo);
            uint8_t* dst = row_scales ? block + scale_offset(g, m, k) : nullptr;
            quantize_group(c, t[size_t(e)], y.data() + lo, n, codes.data() + lo, dst);
        }
        if (row_scales) zero_padding_cols(g, block, m);
        store_row(c, codes.data(), out + r * row_bytes(c, c.out_ld));
    }
}

// ---- Columnwise output: blocks of c.col_block rows down each column (docs/spec.md §4, roles swapped) -------------

// The runs of rows whose column blocks are counted from their first row: each MASKED expert's max_m rows,
// else all rows (CONTIGUOUS blocks are those of the stacked rows, as a grouped GEMM reading one tensor sees
// them).
struct RowRun {
    int64_t first, rows, index;  // index: which scale block and transposed [H, rows] slab
};

std::vector<RowRun> columnwise_runs(const OpConfig& c) {
    if (c.moe != MoeLayout::Masked) return {RowRun{0, c.rows, 0}};
    std::vector<RowRun> runs;
    for (int64_t e = 0; e < c.num_experts; ++e) runs.push_back(RowRun{e * c.expert_rows, c.expert_rows, e});
    return runs;
}

// Writes the codes of rows [lo, hi) of a run (`codes[i * cols + h]`, valid rows only) as columnwise data:
// the rowwise orientation [M, H] with the output layout's stride, or transposed [H, run rows] with stride
// `run.rows`. Transposed FP4 pairs rows 2i, 2i+1 of the run in a byte (low nibble first); a byte whose rows
// are both invalid is not written, and an invalid row's nibble beside a valid one is 0.
void store_columnwise(const OpConfig& c, const RowRun& run, int64_t lo, int64_t hi, const std::vector<uint8_t>& codes,
                      const std::vector<char>& valid, uint8_t* out) {
    if (!c.col_transpose) {
        for (int64_t r = lo; r < hi; ++r)
            if (valid[size_t(r - lo)]) store_row(c, codes.data() + (r - lo) * c.cols, out + r * row_bytes(c, c.out_ld));
        return;
    }
    const int64_t t_ld = row_bytes(c, run.rows);  // bytes of one transposed row (one column of the output)
    uint8_t* slab = out + run.index * c.cols * t_ld;
    for (int64_t h = 0; h < c.cols; ++h) {
        uint8_t* dst = slab + h * t_ld;
        if (c.quant.out != DType::E2M1) {
            for (int64_t r = lo; r < hi; ++r)
                if (valid[size_t(r - lo)]) dst[r - run.first] = codes[size_t((r - lo) * c.cols + h)];
            continue;
        }
        for (int64_t r = lo; r < hi; r += 2) {  // runs and blocks have even lengths here (validated)
            const size_t i0 = size_t(r - lo), i1 = i0 + 1;
            if (!valid[i0] && !valid[i1]) continue;
            const uint8_t q0 = valid[i0] ? codes[i0 * size_t(c.cols) + size_t(h)] & 0xF : 0;
            const uint8_t q1 = valid[i1] ? codes[i1 * size_t(c.cols) + size_t(h)] & 0xF : 0;
            dst[(r - run.first) / 2] = uint8_t(q0 | (q1 << 4));
        }
    }
}

void quantize_columnwise(const OpConfig& c, const uint16_t* in, uint8_t* out, uint8_t* scales,
                         const std::vector<int32_t>& expert, const std::vector<TensorScalars>& t) {
    const ScaleGeometry& g = c.col_scales;
    if (is_per_tensor(c.scheme)) {
        if (c.scheme == Scheme::PerTensorDynamic) store_tensor_scales(t, scales);
    } else if (g.bytes > 0) {
        for (int64_t b = 0; b < c.scale_batch; ++b) zero_padding_rows(g, scales + b * g.bytes);
    }
    if (c.rows == 0) return;  // no block: no data, and no scale column to pad
    const int64_t block = c.col_block;
    const auto per_block = static_cast<size_t>(std::min(block, c.rows));  // the rows of a block that exist
    std::vector<float> y(per_block * size_t(c.cols)), column(per_block);
    std::vector<uint8_t> codes(per_block * size_t(c.cols)), column_codes(per_block);
    std::vector<char> valid(per_block);
    std::vector<int64_t> valid_rows;
    valid_rows.reserve(per_block);
    for (const RowRun& run : columnwise_runs(c)) {
        uint8_t* scale_block = scales ? scales + run.index * g.bytes : nullptr;
        for (int64_t b = 0; b * block < run.rows; ++b) {
            const int64_t lo = run.first + b * block, hi = std::min(lo + block, run.first + run.rows);
            valid_rows.clear();
            for (int64_t r = lo; r < hi; ++r) {
                valid[size_t(r - lo)] = expert[size_t(r)] >= 0;
                if (!valid[size_t(r - lo)]) continue;
                valid_rows.push_back(r);
                activate_input_row(c, in, r, y.data() + (r - lo) * c.cols);
            }
            if (valid_rows.empty()) continue;  // no valid row: neither data nor scale of this block is written
            // A block straddling two CONTIGUOUS experts (offsets not a multiple of the block) takes the tensor
            // scalars (NVFP4 S_enc) of the expert of its first valid row; per-tensor values keep their row's.
            const TensorScalars& block_t = t[size_t(expert[size_t(valid_rows[0])])];
            const auto n = int64_t(valid_rows.size());
            for (int64_t h = 0; h < c.cols; ++h) {
                for (int64_t i = 0; i < n; ++i) column[size_t(i)] = y[size_t((valid_rows[size_t(i)] - lo) * c.cols + h)];
                if (is_per_tensor(c.scheme)) {  // no block: each element with its own row's tensor scale
                    for (int64_t i = 0; i < n; ++i)
                        quantize_group(c, t[size_t(expert[size_t(valid_rows[size_t(i)])])], &column[size_t(i)], 1,
                                       &column_codes[size_t(i)], nullptr);
                } else {
                    quantize_group(c, block_t, column.data(), n, column_codes.data(), scale_block + scale_offset(g, h, b));
                }
                for (int64_t i = 0; i < n; ++i) codes[size_t((valid_rows[size_t(i)] - lo) * c.cols + h)] = column_codes[size_t(i)];
            }
            store_columnwise(c, run, lo, hi, codes, valid, out);
        }
        if (!is_per_tensor(c.scheme))
            for (int64_t h = 0; h < c.cols; ++h) zero_padding_cols(g, scale_block, h);
    }
}

}  // namespace

std::vector<int32_t> expert_of_rows(const OpConfig& c) {
    std::vector<int32_t> expert(size_t(c.rows), -1);
    for (int64_t e = 0; e < c.experts(); ++e) {
        RowRange r{0, c.rows, c.rows};
        if (c.moe == MoeLayout::Contiguous) r = contiguous_rows(c.moe_offsets, c.moe_counts, e, c.rows);
        if (c.moe == MoeLayout::Masked) r = masked_rows(c.moe_counts, e, c.expert_rows);
        std::fill_n(expert.begin() + r.first, r.count, int32_t(e));
    }
    return expert;
}

void quantize(const OpConfig& c, const void* input, void* output, void* scales) {
    const auto* in = static_cast<const uint16_t*>(input);
    if (c.scheme == Scheme::Block2D) {  // plain rowwise tensors only (host_refuse)
        if (scales && c.scales.bytes > 0) std::memset(scales, 0, size_t(c.scales.bytes));  // padding is 0
        return quantize_block2d(c, in, static_cast<uint8_t*>(output), static_cast<uint8_t*>(scales));
    }
    const std::vector<int32_t> expert = expert_of_rows(c);
    const std::vector<TensorScalars> t = tensor_scalars(c, in, expert);
    if (c.rowwise()) quantize_rowwise(c, in, static_cast<uint8_t*>(output), static_cast<uint8_t*>(scales), expert, t);
    if (c.columnwise())
        quantize_columnwise(c, in, static_cast<uint8_t*>(c.col_output), static_cast<uint8_t*>(c.col_scales_ptr), expert, t);
}

}  // namespace fq::host
