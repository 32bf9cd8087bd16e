// A model of fqScaleRepack written from docs/spec.md §4 and the header's contract, independent of src/: where each
// layout stores S[m, k], how big a block is, and the bytes a repack must write. Host and GPU tests share it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fusedquant/fusedquant.h"

namespace repack_model {

inline int64_t up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

inline int64_t scale_size(int32_t type) { return type == FQ_TYPE_FP32 ? 4 : 1; }

inline bool layout_holds(int32_t layout, int32_t type) {
    if (layout == FQ_SCALE_LAYOUT_SWIZZLED_128X4) return type != FQ_TYPE_FP32;
    if (layout == FQ_SCALE_LAYOUT_PACKED_UE8M0) return type == FQ_TYPE_E8M0;
    return true;
}

inline const char* layout_name(int32_t l) {
    static const char* names[] = {"ROW_MAJOR", "COL_MAJOR", "COL_MAJOR_TMA", "SWIZZLED_128X4", "PACKED_UE8M0"};
    return l >= 0 && l < 5 ? names[l] : "?";
}
inline const char* type_name(int32_t t) { return t == FQ_TYPE_FP32 ? "FP32" : t == FQ_TYPE_E8M0 ? "E8M0" : "E4M3"; }

// Bytes of one block of M x K scales (docs/spec.md §4, padding included).
inline int64_t block_bytes(int32_t layout, int32_t type, int64_t M, int64_t K) {
    const int64_t s = scale_size(type);
    switch (layout) {
        case FQ_SCALE_LAYOUT_ROW_MAJOR:
        case FQ_SCALE_LAYOUT_COL_MAJOR: return M * K * s;
        case FQ_SCALE_LAYOUT_COL_MAJOR_TMA: return up(M, 16 / s) * K * s;
        case FQ_SCALE_LAYOUT_SWIZZLED_128X4: return up(M, 128) * up(K, 4);
        default: return up(M, 4) * up(K, 4);  // PACKED_UE8M0: int32 words of 4
    }
}

// Byte offset of S[m, k] in one block (docs/spec.md §4's formulas).
inline int64_t offset(int32_t layout, int32_t type, int64_t M, int64_t K, int64_t m, int64_t k) {
    const int64_t s = scale_size(type);
    switch (layout) {
        case FQ_SCALE_LAYOUT_ROW_MAJOR: return (m * K + k) * s;
        case FQ_SCALE_LAYOUT_COL_MAJOR: return (k * M + m) * s;
        case FQ_SCALE_LAYOUT_COL_MAJOR_TMA: return (k * up(M, 16 / s) + m) * s;
        case FQ_SCALE_LAYOUT_SWIZZLED_128X4:
            return (m / 128) * ((K + 3) / 4) * 512 + (k / 4) * 512 + (m % 32) * 16 + ((m % 128) / 32) * 4 + k % 4;
        default: return ((k / 4) * up(M, 4) + m) * 4 + k % 4;
    }
}

// A repack problem as the C call takes it (offsets in host memory here).
struct Problem {
    int32_t type = FQ_TYPE_E8M0;
    int64_t batch = 1, rows = 1, groups = 1;
    int32_t batching = FQ_SCALE_REPACK_BLOCKS;
    std::vector<int32_t> offsets;  // batch + 1 entries unless BLOCKS
    int64_t stacked_rows = 0;
    int32_t src_layout = FQ_SCALE_LAYOUT_ROW_MAJOR, dst_layout = FQ_SCALE_LAYOUT_ROW_MAJOR;

    bool src_stacked() const { return batching == FQ_SCALE_REPACK_STACKED_TO_BLOCKS; }
    bool dst_stacked() const { return batching == FQ_SCALE_REPACK_BLOCKS_TO_STACKED; }
    int64_t src_block() const { return block_bytes(src_layout, type, src_stacked() ? stacked_rows : rows, groups); }
    int64_t dst_block() const { return block_bytes(dst_layout, type, dst_stacked() ? stacked_rows : rows, groups); }
    int64_t src_bytes() const { return src_block() * (src_stacked() ? 1 : batch); }
    int64_t dst_bytes() const { return dst_block() * (dst_stacked() ? 1 : batch); }

    std::string describe() const {
        std::string o = "type=" + std::string(type_name(type)) + " batch=" + std::to_string(batch) +
                        " rows=" + std::to_string(rows) + " groups=" + std::to_string(groups) +
                        " batching=" + std::to_string(batching) + " stackedRows=" + std::to_string(stacked_rows) +
                        " " + layout_name(src_layout) + " -> " + layout_name(dst_layout) + " offsets=[";
        for (size_t i = 0; i < offsets.size(); ++i) o += (i ? "," : "") + std::to_string(offsets[i]);
        return o + "]";
    }
};

// The bytes dst must hold after the repack of `src`, for offsets that are non-decreasing (the contract's
// well-defined case): each batch's rows copied scale by scale, every other byte 0.
inline std::vector<uint8_t> expected(const Problem& p, const std::vector<uint8_t>& src) {
    std::vector<uint8_t> dst(size_t(p.dst_bytes()), 0);
    const int64_t s = scale_size(p.type);
    const int64_t src_rows = p.src_stacked() ? p.stacked_rows : p.rows;
    const int64_t dst_rows = p.dst_stacked() ? p.stacked_rows : p.rows;
    for (int64_t b = 0; b < p.batch; ++b) {
        int64_t count = p.rows, start = 0;
        if (p.batching != FQ_SCALE_REPACK_BLOCKS) {
            start = p.offsets[size_t(b)];
            count = std::min<int64_t>(p.rows, std::max<int64_t>(0, int64_t(p.offsets[size_t(b) + 1]) - start));
        }
        for (int64_t r = 0; r < count; ++r) {
            const int64_t stacked_row = start + r;
            if (p.batching != FQ_SCALE_REPACK_BLOCKS && (stacked_row < 0 || stacked_row >= p.stacked_rows)) continue;
            for (int64_t k = 0; k < p.groups; ++k) {
                const int64_t from = p.src_stacked() ? offset(p.src_layout, p.type, src_rows, p.groups, stacked_row, k)
                                                     : b * p.src_block() + offset(p.src_layout, p.type, src_rows, p.groups, r, k);
                const int64_t to = p.dst_stacked() ? offset(p.dst_layout, p.type, dst_rows, p.groups, stacked_row, k)
                                                   : b * p.dst_block() + offset(p.dst_layout, p.type, dst_rows, p.groups, r, k);
                std::memcpy(dst.data() + to, src.data() + from, size_t(s));
            }
        }
    }
    return dst;
}

// What destination byte `byte` holds, for failure messages: "block b, S[m, k] byte j" (a stacked destination
// has one block whose rows are stacked rows), or "padding" where no logical scale lies.
inline std::string where(const Problem& p, int64_t byte) {
    const int64_t block = p.dst_block(), s = scale_size(p.type);
    if (block == 0) return "past the end";
    const int64_t b = byte / block, in_block = byte % block;
    const int64_t rows = p.dst_stacked() ? p.stacked_rows : p.rows;
    for (int64_t m = 0; m < rows; ++m)
        for (int64_t k = 0; k < p.groups; ++k) {
            const int64_t o = offset(p.dst_layout, p.type, rows, p.groups, m, k);
            if (in_block >= o && in_block < o + s)
                return "block " + std::to_string(b) + ", S[" + std::to_string(m) + ", " + std::to_string(k) + "] byte " +
                       std::to_string(in_block - o);
        }
    return "block " + std::to_string(b) + ", padding";
}

inline std::vector<uint8_t> random_bytes(std::mt19937& rng, size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = uint8_t(rng());
    return v;
}

// Row offsets of `batch` experts over a stack, with empty experts, one expert longer than `rows` (its
// extra rows are not copied) and a gap of unused stacked rows at the start and end.
inline std::vector<int32_t> moe_offsets(std::mt19937& rng, int64_t batch, int64_t rows, int64_t* stacked_rows) {
    std::vector<int32_t> off(size_t(batch) + 1);
    int64_t at = rows > 2 ? 1 : 0;
    std::uniform_int_distribution<int64_t> count(0, rows + 2);
    for (int64_t b = 0; b < batch; ++b) {
        off[size_t(b)] = int32_t(at);
        at += (b % 3 == 1) ? 0 : count(rng);  // every third expert (from the second) is empty
    }
    off[size_t(batch)] = int32_t(at);
    *stacked_rows = at + 1;
    return off;
}

}  // namespace repack_model
