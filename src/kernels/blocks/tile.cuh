// One tile of a row after its outputs are activated: the group amax, the scale, the codes stored and the
// scale stored (quantize_activated), for the fp32-scale and the microscaling schemes.
#pragma once

#include "amax.cuh"
#include "moe_rows.cuh"
#include "quantize.cuh"
#include "scales.cuh"

namespace fq::cuda {

// 8 codes at dst (valid of them at a row end).
template <bool kVec>
__device__ __forceinline__ void store8(uint8_t* dst, uint2 w, int valid) {
    if constexpr (kVec) {
        *reinterpret_cast<uint2*>(dst) = w;
    } else {
        uint8_t b[8];
        memcpy(b, &w, 8);
        for (int i = 0; i < valid; ++i) dst[i] = b[i];
    }
}

// The codes of 8 outputs at (m, j0) of the output: bytes, or e2m1 nibbles two a byte.
template <bool kVec>
__device__ __forceinline__ void store_codes(const Params& p, int64_t m, int j0, uint2 w, int valid) {
    if (p.quant.out != DType::E2M1) {
        store8<kVec>(p.out + m * p.out_ld + j0, w, valid);
        return;
    }
    uint8_t* dst = p.out + m * (p.out_ld / 2) + j0 / 2;  // validation keeps FP4 widths and strides even
    if (kVec) {
        *reinterpret_cast<unsigned*>(dst) = w.x;
    } else {
        for (int i = 0; i < (valid + 1) / 2; ++i) dst[i] = uint8_t(w.x >> (8 * i));
    }
}

// The microscaling half of a tile (see quantize_activated): the group's block scale byte, which every lane of
// the group returns (the caller stores it), and the thread's codes, stored.
template <int kChunks, bool kVec, bool kHwCvt>
__device__ __forceinline__ uint8_t microscale_tile(const Params& p, int64_t m, const int (&j)[kChunks], const int (&valid)[kChunks],
                                                   const float (&y)[kChunks][8], int lanes, float s_enc) {
    float mul;
    const uint8_t sbyte = microscale<kHwCvt>(p, group_amax(lanes, lane_amax_of(valid, y)), s_enc, mul);
    float v[kChunks][8];
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int i = 0; i < 8; ++i) v[c][i] = y[c][i] * mul;
    saturate_in_place(v, p.quant);
    uint2 codes[kChunks];
    encode<kHwCvt>(v, p.quant.out, codes);
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
        if (valid[c] > 0) store_codes<kVec>(p, m, j[c], codes[c], valid[c]);
    return sbyte;
}

// The fp32-scale half: the group's scale (per-tensor schemes: tensor_scale), which every lane of the group
// returns (the caller stores it), and the thread's codes, stored.
template <int kChunks, bool kVec, bool kHwCvt>
__device__ __forceinline__ float scaled_tile(const Params& p, int64_t m, const int (&j)[kChunks], const int (&valid)[kChunks],
                                             const float (&y)[kChunks][8], int lanes, float tensor_scale, float scale_bound) {
    const float lane_amax = lane_amax_of(valid, y);
    const float s = is_per_tensor(p.scheme) ? tensor_scale : group_scale(group_amax(lanes, lane_amax), scale_bound, p.quant);
    uint2 codes[kChunks];
    quantize<kHwCvt>(y, lane_amax, divisor_of(s, p.quant), p.quant, codes);
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
        if (valid[c] > 0) store8<kVec>(p.out + m * p.out_ld + j[c], codes[c], valid[c]);
    return s;
}

// Everything of one tile of a row after its outputs are activated: group amax, scale, values. The thread
// holds kChunks chunks of 8 outputs y[c], starting at columns j[c] (valid[c] of them exist; 0: the chunk is
// past the row), all in the same group (its scale is S[m, j[0] >> group_shift]); the group spans `lanes`
// neighbouring lanes, the first of which writes the scale. Every lane of the warp calls this (the group amax
// is a warp shuffle); a lane with valid[0] == 0 (or a row no expert owns) has no outputs. kMx: the
// microscaling schemes (E8M0 / E4M3 block scales; tensor_scale holds NVFP4's S_enc), else the fp32-scale
// schemes; a template parameter so that neither kernel carries the other's registers.
template <int kChunks, bool kVec, bool kHwCvt, bool kMx>
__device__ __forceinline__ void quantize_activated(const Params& p, const RowOwner& o, int64_t m, const int (&j)[kChunks],
                                                   const int (&valid)[kChunks], const float (&y)[kChunks][8], int lanes,
                                                   float tensor_scale, float scale_bound) {
    const bool active = valid[0] > 0;
    const bool leader = (threadIdx.x & (lanes - 1)) == 0 && active;
    const int64_t k = j[0] >> p.group_shift;
    if constexpr (kMx) {
        const uint8_t sbyte = microscale_tile<kChunks, kVec, kHwCvt>(p, m, j, valid, y, lanes, tensor_scale);
        if (leader) {
            p.scales[o.block + row_scale_offset(p, o.scale_row, k)] = sbyte;
            zero_scale_padding(p, p.scales + o.block, o.scale_row, k);
        }
    } else {
        const float s = scaled_tile<kChunks, kVec, kHwCvt>(p, m, j, valid, y, lanes, tensor_scale, scale_bound);
        if (leader && !is_per_tensor(p.scheme)) {
            store_scale(p.sg, p.scales + o.block + row_scale_offset(p, o.scale_row, k), s);
            zero_scale_padding(p, p.scales + o.block, o.scale_row, k);
        }
    }
}

// One chunk of 8 outputs a thread; a group spans p.lanes_per_group lanes.
template <bool kVec, bool kHwCvt, bool kMx>
__device__ __forceinline__ void quantize_activated(const Params& p, const RowOwner& o, int64_t m, int j0, int valid,
                                                   const float (&y)[8], float tensor_scale, float scale_bound) {
    const int j[1] = {j0}, n[1] = {valid};
    const float(&y1)[1][8] = *reinterpret_cast<const float(*)[1][8]>(&y);
    quantize_activated<1, kVec, kHwCvt, kMx>(p, o, m, j, n, y1, p.lanes_per_group, tensor_scale, scale_bound);
}

}  // namespace fq::cuda
