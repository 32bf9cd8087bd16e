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
    int64_t padded_rows = 0, padded_cols = 0;  // storage extents, padding included (columns in storage elements)
    int64_t elem_bytes = 4;                    // bytes of one storage element
    int64_t bytes = 0;                         // the whole buffer
};

FQ_HD int64_t scale_type_bytes(DType t) { return t == DType::Fp32 ? 4 : 1; }

// The index functions of the layouts: the byte offset of S[m, k] in a buffer of geometry g (docs/spec.md §4).
// FQ_SCALE_LAYOUTS (enum_lists.h) names one for each layout; its padding sets g's extents.
FQ_HD int64_t row_major_offset(const ScaleGeometry& g, int64_t m, int64_t k) {
    return (m * g.padded_cols + k) * g.elem_bytes;
}
// COL_MAJOR and COL_MAJOR_TMA (whose padded rows make each column 16-byte aligned).
FQ_HD int64_t col_major_offset(const ScaleGeometry& g, int64_t m, int64_t k) {
    return (k * g.padded_rows + m) * g.elem_bytes;
}
// 512-byte atoms of 128 rows x 4 byte scales (Blackwell tcgen05, cuBLASLt VEC32_UE8M0 / VEC16_UE4M3).
FQ_HD int64_t swizzled_128x4_offset(const ScaleGeometry& g, int64_t m, int64_t k) {
    return (m / 128) * g.padded_cols * 128 + (k / 4) * 512 + (m % 32) * 16 + ((m % 128) / 32) * 4 + (k % 4);
}
// int32 words of four E8M0, byte j (LSB first) = column 4 (k / 4) + j; words MN-major (DeepGEMM sm100).
FQ_HD int64_t packed_ue8m0_offset(const ScaleGeometry& g, int64_t m, int64_t k) {
    return ((k / 4) * g.padded_rows + m) * 4 + (k % 4);
}
// Test-only (FQ_TEST_EXTENSIONS): tiles of 32 rows x 4 columns, row-major within a tile and across tiles.
FQ_HD int64_t test_tiled_32x4_offset(const ScaleGeometry& g, int64_t m, int64_t k) {
    return (((m / 32) * (g.padded_cols / 4) + k / 4) * 128 + (m % 32) * 4 + k % 4) * g.elem_bytes;
}

// The padding of a layout's line in FQ_SCALE_LAYOUTS, for scales of `eb` bytes.
struct ScalePadding {
    int64_t rows = 1, cols = 1, per_word = 1;  // row / column multiples; scales in one storage element
};

FQ_HD ScalePadding scale_padding(ScaleLayout layout, int64_t eb) {
    switch (layout) {
#define FQ_PADDING_CASE(Internal, value, NAME, cli, row_pad, col_pad, per_word, offset) \
    case ScaleLayout::Internal: return ScalePadding{row_pad, col_pad, per_word};
        FQ_SCALE_LAYOUTS(FQ_PADDING_CASE)
#undef FQ_PADDING_CASE
    }
    return {};
}

// a x b for a, b >= 0, or -1 when it does not fit int64_t.
inline int64_t checked_mul(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? -1 : r;
}

// Geometry for `rows` x `groups` (both >= 0) logical scales of element type `type` in `layout`: the padding of
// its line in FQ_SCALE_LAYOUTS. Empty when a padded extent, a stride (a padded extent times the element, as
// fqGetScaleBufferInfo reports it) or the byte count does not fit int64_t.
inline std::optional<ScaleGeometry> checked_scale_geometry(ScaleLayout layout, DType type, int64_t rows,
                                                           int64_t groups) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    const ScalePadding pad = scale_padding(layout, scale_type_bytes(type));
    if (rows > kMax - pad.rows || groups > kMax - pad.cols) return std::nullopt;
    ScaleGeometry g;
    g.layout = layout;
    g.type = type;
    g.rows = rows;
    g.cols = groups;
    g.elem_bytes = scale_type_bytes(type) * pad.per_word;
    g.padded_rows = round_up(rows, pad.rows);
    g.padded_cols = round_up(groups, pad.cols) / pad.per_word;
    const int64_t cells = checked_mul(g.padded_rows, g.padded_cols);
    if (checked_mul(g.padded_rows, g.elem_bytes) < 0 || checked_mul(g.padded_cols, g.elem_bytes) < 0 || cells < 0)
        return std::nullopt;
    g.bytes = checked_mul(cells, g.elem_bytes);
    if (g.bytes < 0) return std::nullopt;
    return g;
}

// The same for extents known to fit.
inline ScaleGeometry make_scale_geometry(ScaleLayout layout, DType type, int64_t rows, int64_t groups) {
    return checked_scale_geometry(layout, type, rows, groups).value();
}

// Logical scale columns the storage covers, padding included (PACKED_UE8M0 counts words of four).
FQ_HD int64_t padded_scale_cols(const ScaleGeometry& g) {
    return g.padded_cols * scale_padding(g.layout, scale_type_bytes(g.type)).per_word;
}

// Byte offset of S[m, k] in the buffer: the layout's index function.
FQ_HD int64_t scale_offset(const ScaleGeometry& g, int64_t m, int64_t k) {
    switch (g.layout) {
#define FQ_OFFSET_CASE(Internal, value, NAME, cli, row_pad, col_pad, per_word, offset) \
    case ScaleLayout::Internal: return offset(g, m, k);
        FQ_SCALE_LAYOUTS(FQ_OFFSET_CASE)
#undef FQ_OFFSET_CASE
    }
    return 0;
}

// The same offset without a switch: every layout is affine in the digits of m (m / 128, m % 128 / 32,
// m % 32) and of k (k / 4, k % 4), so five strides, read off the index function, describe it. Kernels take
// these (no branch on the layout per scale); tests/test_enum_lists.cpp checks them for every layout.
struct ScaleStrides {
    int64_t rows128, rows32, row;  // bytes per 128 rows, per 32 rows within them, per row within those
    int64_t cols4, col;            // bytes per 4 scale columns, per column within them
};

// The bytes between S[m, k] and S[0, 0], or 0 where g's extents never reach row m or column k: a digit that
// is always 0 needs no stride, and probing past the buffer could overflow (1 row of 2^56 scales).
FQ_HD int64_t reachable_offset(const ScaleGeometry& g, int64_t m, int64_t k) {
    if (m >= g.padded_rows || k >= padded_scale_cols(g)) return 0;
    return scale_offset(g, m, k) - scale_offset(g, 0, 0);
}

FQ_HD ScaleStrides scale_strides(const ScaleGeometry& g) {
    return {reachable_offset(g, 128, 0), reachable_offset(g, 32, 0), reachable_offset(g, 1, 0),
            reachable_offset(g, 0, 4), reachable_offset(g, 0, 1)};
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
// else 1; a PACKED_UE8M0 word holds four byte scales). Read off the strides, so it serves every layout: the
// digits of m (and of k) merge into one where the layout is linear in m (in k), digits that the extents keep
// at 0 drop out, and the offset is divided by each remaining digit's stride, largest first (a layout's digits
// form a mixed-radix number; tests/test_enum_lists.cpp checks the round trip for every layout).
struct ScaleIndex {
    int64_t m, k;
    bool valid;
};

FQ_HD ScaleIndex scale_at_offset(const ScaleGeometry& g, int64_t offset) {
    struct Digit {
        int64_t stride, range, m_weight, k_weight;
    };
    const ScaleStrides s = scale_strides(g);
    const int64_t rows = g.padded_rows, cols = padded_scale_cols(g);
    Digit all[5];
    int n = 0;
    if (s.rows128 == 4 * s.rows32 && s.rows32 == 32 * s.row) {
        all[n++] = {s.row, rows, 1, 0};
    } else {
        all[n++] = {s.rows128, ceil_div(rows, 128), 128, 0};
        all[n++] = {s.rows32, rows > 32 ? 4 : 1, 32, 0};
        all[n++] = {s.row, rows < 32 ? rows : 32, 1, 0};
    }
    if (s.cols4 == 4 * s.col) {
        all[n++] = {s.col, cols, 0, 1};
    } else {
        all[n++] = {s.cols4, ceil_div(cols, 4), 0, 4};
        all[n++] = {s.col, cols < 4 ? cols : 4, 0, 1};
    }
    Digit d[5];
    int used = 0;
    for (int i = 0; i < n; ++i) {  // insertion by stride, largest first; a digit of one value is always 0
        if (all[i].range <= 1) continue;
        int j = used++;
        for (; j > 0 && d[j - 1].stride < all[i].stride; --j) d[j] = d[j - 1];
        d[j] = all[i];
    }
    int64_t rest = offset - scale_offset(g, 0, 0), m = 0, k = 0;
    for (int i = 0; i < used; ++i) {
        const int64_t digit = rest / d[i].stride;
        rest -= digit * d[i].stride;
        m += digit * d[i].m_weight;
        k += digit * d[i].k_weight;
    }
    return {m, k, rest == 0 && m < g.rows && k < g.cols && scale_offset(g, m, k) == offset};
}

}  // namespace fq
