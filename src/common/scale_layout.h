// Scale layouts of docs/spec.md §4: one geometry (sizes, padding, strides) and one index function per layout.
// Logical scales S[m, k]: m = row (token), k = group index along the row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "hd.h"
#include "types.h"

namespace fq {

// BLOCK_2D tiles are kBlock2D x kBlock2D values (DeepSeek-V3 weights, cuBLASLt BLK128x128_32F).
constexpr int64_t kBlock2D = 128;

FQ_HD int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
FQ_HD int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

struct ScaleGeometry {
    ScaleLayout layout = ScaleLayout::RowMajor;
    DType type = DType::Fp32;
    int64_t rows = 0, cols = 0;                // logical M x K_g
    int64_t padded_rows = 0, padded_cols = 0;  // storage extents, padding included
    int64_t ld = 0;                            // storage elements between k columns (col-major) or rows
    int64_t elem_bytes = 4;                    // bytes of one storage element
    int64_t bytes = 0;                         // the whole buffer
};

FQ_HD int64_t scale_type_bytes(DType t) { return t == DType::Fp32 ? 4 : 1; }

// a x b for a, b >= 0, or -1 when it does not fit int64_t.
inline int64_t checked_mul(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? -1 : r;
}

// Geometry for `rows` x `groups` (both >= 0) logical scales of element type `type` in `layout`: the one padding
// rule of docs/spec.md §4. Empty when a padded extent, a stride (a padded extent times the element, as
// fqGetScaleBufferInfo reports it) or the byte count does not fit int64_t.
inline std::optional<ScaleGeometry> checked_scale_geometry(ScaleLayout layout, DType type, int64_t rows,
                                                           int64_t groups) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    if (rows > kMax - 128 || groups > kMax - 4) return std::nullopt;  // no layout pads further than that
    ScaleGeometry g;
    g.layout = layout;
    g.type = type;
    g.rows = g.padded_rows = rows;
    g.cols = g.padded_cols = groups;
    g.elem_bytes = scale_type_bytes(type);
    switch (layout) {
        case ScaleLayout::RowMajor: g.ld = groups; break;
        case ScaleLayout::ColMajor: g.ld = rows; break;
        case ScaleLayout::ColMajorTma:  // TMA needs 16-byte aligned columns
            g.ld = g.padded_rows = round_up(rows, 16 / g.elem_bytes);
            break;
        case ScaleLayout::Swizzled128x4:  // 512-byte atoms of 128 rows x 4 scale columns
            g.padded_rows = round_up(rows, 128);
            g.padded_cols = round_up(groups, 4);
            g.ld = 0;
            break;
        case ScaleLayout::PackedUe8m0:  // int32 words of four E8M0, MN-major, TMA-aligned
            g.elem_bytes = 4;
            g.padded_rows = g.ld = round_up(rows, 4);
            g.padded_cols = ceil_div(groups, 4);
            break;
    }
    const int64_t cells = checked_mul(g.padded_rows, g.padded_cols);
    if (checked_mul(g.padded_rows, g.elem_bytes) < 0 || checked_mul(g.padded_cols, g.elem_bytes) < 0 || cells < 0)
        return std::nullopt;
    g.bytes = checked_mul(cells, g.elem_bytes);
    if (g.bytes < 0) return std::nullopt;
    return g;
}

// The geometry of a shape the API has checked (checked_scale_geometry is not empty for it).
inline ScaleGeometry make_scale_geometry(ScaleLayout layout, DType type, int64_t rows, int64_t groups) {
    return checked_scale_geometry(layout, type, rows, groups).value();
}

// Logical scale columns the storage covers, padding included (PACKED_UE8M0 counts words of four).
FQ_HD int64_t padded_scale_cols(const ScaleGeometry& g) {
    return g.layout == ScaleLayout::PackedUe8m0 ? 4 * g.padded_cols : g.padded_cols;
}

// Byte offset of S[m, k] in the buffer.
FQ_HD int64_t scale_offset(ScaleLayout layout, int64_t ld, int64_t elem_bytes, int64_t groups, int64_t m,
                           int64_t k) {
    switch (layout) {
        case ScaleLayout::RowMajor: return (m * ld + k) * elem_bytes;
        case ScaleLayout::ColMajor:
        case ScaleLayout::ColMajorTma: return (k * ld + m) * elem_bytes;
        case ScaleLayout::Swizzled128x4: {
            const int64_t k_tiles = (groups + 3) / 4;
            return (m / 128) * k_tiles * 512 + (k / 4) * 512 + (m % 32) * 16 + ((m % 128) / 32) * 4 + (k % 4);
        }
        case ScaleLayout::PackedUe8m0: return ((k / 4) * ld + m) * 4 + (k % 4);
    }
    return 0;
}

FQ_HD int64_t scale_offset(const ScaleGeometry& g, int64_t m, int64_t k) {
    return scale_offset(g.layout, g.ld, g.elem_bytes, g.cols, m, k);
}

// The same offset without a switch: every layout above is affine in the digits of m (m / 128, m % 128 / 32,
// m % 32) and of k (k / 4, k % 4), so five strides describe it. Kernels take these (no branch on the layout
// per scale); tests/test_scale_repack.cpp checks them against scale_offset.
struct ScaleStrides {
    int64_t rows128, rows32, row;  // bytes per 128 rows, per 32 rows within them, per row within those
    int64_t cols4, col;            // bytes per 4 scale columns, per column within them
};

FQ_HD ScaleStrides scale_strides(const ScaleGeometry& g) {
    const int64_t eb = g.elem_bytes;
    switch (g.layout) {
        case ScaleLayout::RowMajor: return {128 * g.ld * eb, 32 * g.ld * eb, g.ld * eb, 4 * eb, eb};
        case ScaleLayout::ColMajor:
        case ScaleLayout::ColMajorTma: return {128 * eb, 32 * eb, eb, 4 * g.ld * eb, g.ld * eb};
        case ScaleLayout::Swizzled128x4: return {(g.cols + 3) / 4 * 512, 4, 16, 512, 1};
        case ScaleLayout::PackedUe8m0: return {512, 128, 4, 4 * g.ld, 1};
    }
    return {};
}

// In Index arithmetic: int64_t, or uint32_t where every offset of the buffer is below 2^32 (every term is
// non-negative and at most the sum, so none wraps; kernels use it to save 64-bit products).
template <class Index>
FQ_HD Index scale_offset_as(const ScaleStrides& s, Index m, Index k) {
    return (m >> 7) * Index(s.rows128) + ((m >> 5) & 3) * Index(s.rows32) + (m & 31) * Index(s.row) +
           (k >> 2) * Index(s.cols4) + (k & 3) * Index(s.col);
}

FQ_HD int64_t scale_offset(const ScaleStrides& s, int64_t m, int64_t k) { return scale_offset_as<int64_t>(s, m, k); }

// The inverse of scale_offset: which S[m, k] the scale starting at byte `offset` of the buffer holds, or
// none (valid false) where the layout puts padding. `offset` is a multiple of the scale's size (4 for fp32,
// else 1; a PACKED_UE8M0 word holds four byte scales).
struct ScaleIndex {
    int64_t m, k;
    bool valid;
};

FQ_HD ScaleIndex scale_at_offset(const ScaleGeometry& g, int64_t offset) {
    switch (g.layout) {
        case ScaleLayout::RowMajor: {
            const int64_t e = offset / g.elem_bytes;
            return {e / g.ld, e % g.ld, true};
        }
        case ScaleLayout::ColMajor:
        case ScaleLayout::ColMajorTma: {
            const int64_t e = offset / g.elem_bytes, m = e % g.ld;
            return {m, e / g.ld, m < g.rows};
        }
        case ScaleLayout::Swizzled128x4: {
            const int64_t k_tiles = (g.cols + 3) / 4, atom = offset / 512, in_atom = offset % 512;
            const int64_t m = (atom / k_tiles) * 128 + ((in_atom % 16) / 4) * 32 + in_atom / 16;
            const int64_t k = (atom % k_tiles) * 4 + in_atom % 4;
            return {m, k, m < g.rows && k < g.cols};
        }
        case ScaleLayout::PackedUe8m0: {
            const int64_t word = offset / 4, m = word % g.ld, k = (word / g.ld) * 4 + offset % 4;
            return {m, k, m < g.rows && k < g.cols};
        }
    }
    return {0, 0, false};
}

}  // namespace fq
