// MXFP8, MXFP4 and NVFP4 (docs/spec.md §3.3) through the public API on the host backend: hand-computed blocks,
// the E8M0 rules' edge cases, the byte-scale layouts of docs/spec.md §4 read back by formulas written here (not
// scale_layout.h's), FP4 packing (docs/spec.md §1), partial blocks (docs/spec.md §6), and a round-trip bound.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/activation.h"
#include "common/quantize.h"
#include "common/scale_layout.h"
#include "fq_test_util.h"

using namespace fqt;

namespace {

// Runs d on the host backend: input [rows, in_cols] bf16 (dense) -> [rows, cols] of out_type with row stride
// out_ld elements (default cols). Output and scales start as `poison` so untouched and padding bytes show.
struct MxRun {
    std::vector<uint8_t> out, scales;
    fqStatus_t status;
    std::string message;
    MxRun(const Desc& d, const std::vector<float>& x, int64_t rows, int64_t in_cols, int64_t cols, int32_t out_type,
          int64_t out_ld = 0, uint8_t poison = 0xAB) {
        if (out_ld == 0) out_ld = cols;
        Handle h;
        Layout li(FQ_TYPE_BF16, rows, in_cols, in_cols), lo(out_type, rows, cols, out_ld);
        const std::vector<uint16_t> in = to_bf16(x);
        out.assign(size_t(rows * (out_type == FQ_TYPE_FP4_E2M1 ? out_ld / 2 : out_ld)), poison);
        scales.assign(scale_bytes(d, rows, cols), poison);
        status = fqQuantize(h.h, d.d, li.l, in.data(), lo.l, out.data(), scales.data(), scales.size(), nullptr, 0,
                            nullptr);
        message = fqGetLastErrorMessage();
    }
};

Desc& mx(Desc& d, int32_t scheme, int32_t out_type, int32_t rule = FQ_MX_SCALE_RULE_RCEIL) {
    d.i32(FQ_QUANT_DESC_SCHEME, scheme).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out_type)
        .i32(FQ_QUANT_DESC_SCALE_TYPE, scheme == FQ_SCHEME_NVFP4 ? FQ_TYPE_FP8_E4M3FN : FQ_TYPE_E8M0);
    if (scheme != FQ_SCHEME_NVFP4) d.i32(FQ_QUANT_DESC_MX_SCALE_RULE, rule);
    return d;
}

// A block of n values: the listed ones first, zeros after.
std::vector<float> block(std::vector<float> head, size_t n) {
    head.resize(n, 0.0f);
    return head;
}

uint8_t nibble(const std::vector<uint8_t>& packed, size_t i) { return uint8_t((packed[i / 2] >> (4 * (i % 2))) & 0xF); }

double e2m1_value(uint8_t code) {
    static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return (code & 8 ? -1 : 1) * mag[code & 7];
}

}  // namespace

// ---- The E8M0 rules (docs/spec.md §3.3) on their own ------------------------------------------------------

TEST_CASE("e8m0_roundup: exponent + (mantissa != 0); NaN 0xFF, Inf 0xFE, 0 and subnormals <= 2^-127 0x00, saturation") {
    CHECK(fq::e8m0_roundup(1.0f) == 127);
    CHECK(fq::e8m0_roundup(1.5f) == 128);
    CHECK(fq::e8m0_roundup(0.75f) == 127);
    CHECK(fq::e8m0_roundup(std::ldexp(1.0f, -126)) == 1);
    CHECK(fq::e8m0_roundup(std::ldexp(1.0f, 127)) == 254);
    CHECK(fq::e8m0_roundup(FLT_MAX) == 0xFE);                 // would be 255: saturates
    CHECK(fq::e8m0_roundup(INFINITY) == 0xFE);
    CHECK(fq::e8m0_roundup(NAN) == 0xFF);
    CHECK(fq::e8m0_roundup(0.0f) == 0x00);
    CHECK(fq::e8m0_roundup(std::ldexp(1.0f, -127)) == 0x00);  // the largest subnormal that E8M0 0x00 covers
    CHECK(fq::e8m0_roundup(std::ldexp(1.0f, -149)) == 0x00);
    CHECK(fq::e8m0_roundup(std::ldexp(1.5f, -127)) == 0x01);  // a subnormal above 2^-127 rounds up to 2^-126
    CHECK(fq::decode_e8m0(0x00) == std::ldexp(1.0f, -127));
}

TEST_CASE("e8m0_floor: clamp(floor(log2 amax) - emax_elem + 127, 0, 254); amax 0 -> 0") {
    CHECK(fq::e8m0_floor(448.0f, 8) == 127);  // e4m3: 448 = 1.75 x 2^8
    CHECK(fq::e8m0_floor(500.0f, 8) == 127);
    CHECK(fq::e8m0_floor(512.0f, 8) == 128);
    CHECK(fq::e8m0_floor(57344.0f, 15) == 127);
    CHECK(fq::e8m0_floor(6.0f, 2) == 127);
    CHECK(fq::e8m0_floor(0.0f, 8) == 0);
    CHECK(fq::e8m0_floor(std::ldexp(1.0f, -130), 2) == 0);  // subnormal: clamped at 0
    CHECK(fq::e8m0_floor(std::ldexp(1.0f, -120), 8) == 0);  // -120 - 8 + 127 < 0
    CHECK(fq::e8m0_floor(FLT_MAX, 2) == 252);
    CHECK(fq::e8m0_floor(INFINITY, 8) == 254);
    CHECK(fq::e8m0_floor(NAN, 8) == 0xFF);
    CHECK(fq::e8m0_reciprocal(127 + 3) == 0.125f);
    CHECK(fq::e8m0_reciprocal(254) == std::ldexp(1.0f, -127));
    CHECK(fq::e8m0_reciprocal(0) == std::ldexp(1.0f, 127));
}

// ---- MXFP8 -----------------------------------------------------------------------------------------

TEST_CASE("MXFP8 e4m3: a block of amax 500 has E8M0 128 under RCEIL and 127 under FLOOR, which saturates") {
    const std::vector<float> x = block({500.0f, 1.0f, -0.5f, 3.0f}, 32);
    Desc r, f;
    mx(r, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN);
    mx(f, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, FQ_MX_SCALE_RULE_FLOOR);
    MxRun a(r, x, 1, 32, 32, FQ_TYPE_FP8_E4M3FN), b(f, x, 1, 32, 32, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
    REQUIRE_MESSAGE(b.status == FQ_STATUS_SUCCESS, b.message);
    // RCEIL: 500/448 = 1.116 -> 2^1, e = 128; elements x 2^-1: 250 -> 256 (0x78), 0.5 (0x30), -0.25 (0xA8), 1.5 (0x3C).
    REQUIRE(a.scales.size() == 1);
    CHECK(a.scales[0] == 128);
    CHECK(std::vector<uint8_t>(a.out.begin(), a.out.begin() + 5) == std::vector<uint8_t>{0x78, 0x30, 0xA8, 0x3C, 0x00});
    // FLOOR: floor(log2 500) = 8, e = 8 - 8 + 127 = 127; elements x 1: 500 saturates to 448 (0x7E), 1 (0x38),
    // -0.5 (0xB0), 3 (0x44).
    CHECK(b.scales[0] == 127);
    CHECK(std::vector<uint8_t>(b.out.begin(), b.out.begin() + 5) == std::vector<uint8_t>{0x7E, 0x38, 0xB0, 0x44, 0x00});
}

TEST_CASE("MXFP8 e5m2: amax 1 gives E8M0 112 under both rules and 2^15 -> code 0x78") {
    const std::vector<float> x = block({1.0f, -0.25f, 0.75f}, 32);
    for (int32_t rule : {FQ_MX_SCALE_RULE_RCEIL, FQ_MX_SCALE_RULE_FLOOR}) {
        Desc d;
        mx(d, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E5M2, rule);
        MxRun a(d, x, 1, 32, 32, FQ_TYPE_FP8_E5M2);
        REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
        CHECK(a.scales[0] == 112);  // RCEIL: 1/57344 = 2^-16 x 1.14 -> 2^-15; FLOOR: 0 - 15 + 127
        // x 2^15: 32768 = 2^15 (0x78), -8192 = -2^13 (0xF0), 24576 = 1.5 x 2^14 (0x76)
        CHECK(std::vector<uint8_t>(a.out.begin(), a.out.begin() + 4) == std::vector<uint8_t>{0x78, 0xF0, 0x76, 0x00});
    }
}

TEST_CASE("MXFP8 E8M0 edge cases: zero block, NaN, Inf, subnormal amax/qmax") {
    Desc d;
    mx(d, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN);
    std::vector<float> x(5 * 32, 0.0f);
    x[32 + 0] = NAN;  // block 1: NaN ignored by amax, encodes 0x7F
    x[32 + 1] = 2.0f;
    x[64 + 0] = NAN;  // block 2: all NaN -> amax 0 -> e 0
    for (int i = 1; i < 32; ++i) x[size_t(64 + i)] = NAN;
    x[96 + 0] = INFINITY;  // block 3: amax +Inf -> 0xFE; Inf saturates, 1 x 2^-127 -> 0
    x[96 + 1] = 1.0f;
    x[96 + 2] = -INFINITY;
    x[128 + 0] = std::ldexp(1.0f, -118);  // block 4: amax/448 = 2^-126 / 1.75, a subnormal above 2^-127 -> e 1
    x[128 + 1] = std::ldexp(1.0f, -121);
    MxRun a(d, x, 1, 160, 160, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
    REQUIRE(a.scales.size() == 5);
    CHECK(a.scales[0] == 0x00);
    for (int i = 0; i < 32; ++i) CHECK(a.out[size_t(i)] == 0x00);
    CHECK(a.scales[1] == 127 - 7);  // 2/448 -> 2^-7
    CHECK(a.out[32] == 0x7F);
    CHECK(a.out[33] == 0x78);  // 2 x 2^7 = 256: RCEIL never saturates
    CHECK(a.scales[2] == 0x00);
    CHECK(a.out[64] == 0x7F);
    CHECK(a.scales[3] == 0xFE);
    CHECK(a.out[96] == 0x7E);
    CHECK(a.out[97] == 0x00);
    CHECK(a.out[98] == 0xFE);
    CHECK(a.scales[4] == 0x01);
    CHECK(a.out[128] == 0x78);  // 2^-118 x 2^126 = 256
    CHECK(a.out[129] == 0x60);  // 2^-121 x 2^126 = 32
    // An amax/qmax at or below 2^-127 gives 0x00: 2^-120 / 448 = 2^-128.8.
    MxRun s(d, block({std::ldexp(1.0f, -120)}, 32), 1, 32, 32, FQ_TYPE_FP8_E4M3FN);
    CHECK(s.scales[0] == 0x00);
    CHECK(s.out[0] == 0x70);  // 2^-120 x 2^127 = 128
}

// ---- MXFP4 and FP4 packing -------------------------------------------------------------------------

TEST_CASE("MXFP4: element 2i in the low nibble; a strided FP4 row starts at ld/2 bytes; the gap is untouched") {
    std::vector<float> x = block({0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.5f}, 32);
    const std::vector<float> row1 = block({-6.0f, 0.25f, 0.75f, 0.0f}, 32);
    x.insert(x.end(), row1.begin(), row1.end());
    Desc d;
    mx(d, FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1);
    MxRun a(d, x, 2, 32, 32, FQ_TYPE_FP4_E2M1, 40);
    REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
    REQUIRE(a.out.size() == 40);
    CHECK(a.scales == std::vector<uint8_t>{127, 127});  // 6 / 6 = 2^0
    // codes 1..7 (0.5 .. 6) and 9 (-0.5), two per byte, low nibble first
    CHECK(std::vector<uint8_t>(a.out.begin(), a.out.begin() + 5) == std::vector<uint8_t>{0x21, 0x43, 0x65, 0x97, 0x00});
    for (size_t i = 16; i < 20; ++i) CHECK(a.out[i] == 0xAB);  // between the rows: not written
    // -6 -> 0xF; 0.25 ties to 0 (even); 0.75 ties to 1.0 (code 2, even mantissa)
    CHECK(a.out[20] == 0x0F);
    CHECK(a.out[21] == 0x02);
}

TEST_CASE("MXFP4: amax 7 gives E8M0 128 under RCEIL (3.5 ties to 4) and 127 under FLOOR (7 saturates to 6)") {
    const std::vector<float> x = block({7.0f, 1.0f}, 32);
    Desc r, f;
    mx(r, FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1);
    mx(f, FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1, FQ_MX_SCALE_RULE_FLOOR);
    MxRun a(r, x, 1, 32, 32, FQ_TYPE_FP4_E2M1), b(f, x, 1, 32, 32, FQ_TYPE_FP4_E2M1);
    REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
    REQUIRE_MESSAGE(b.status == FQ_STATUS_SUCCESS, b.message);
    CHECK(a.scales[0] == 128);
    CHECK(a.out[0] == (0x6 | 0x1 << 4));  // 3.5 -> 4 (code 6), 0.5 (code 1)
    CHECK(b.scales[0] == 127);
    CHECK(b.out[0] == (0x7 | 0x2 << 4));  // 7 -> 6 (code 7), 1 (code 2)
}

// ---- NVFP4 ---------------------------------------------------------------------------------------------

TEST_CASE("NVFP4 with a given global amax 448: S_enc = 6, S_blk = e4m3(block amax), q = e2m1(y x S_enc / S_blk)") {
    float g = 448.0f;
    Desc d;
    mx(d, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1).ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &g);
    std::vector<float> x = block({3.0f, 1.0f, -0.25f, 0.75f}, 16);
    const std::vector<float> b1 = block({10.0f, 5.0f, -2.5f}, 16);
    x.insert(x.end(), b1.begin(), b1.end());
    MxRun a(d, x, 1, 32, 32, FQ_TYPE_FP4_E2M1);
    REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
    CHECK(a.scales == std::vector<uint8_t>{0x44, 0x52});  // e4m3 3 and 10
    // block 0: m = 2: 6 (7), 2 (4), -0.5 (9), 1.5 (3); block 1: m = 0.6: 6 (7), 3 (5), -1.5 (0xB)
    CHECK(std::vector<uint8_t>(a.out.begin(), a.out.begin() + 3) == std::vector<uint8_t>{0x47, 0x39, 0x00});
    CHECK(std::vector<uint8_t>(a.out.begin() + 8, a.out.begin() + 11) == std::vector<uint8_t>{0x57, 0x0B, 0x00});
}

TEST_CASE("NVFP4 without a global amax uses the tensor's amax (here 12, S_enc = 224), as passing 12 does") {
    std::vector<float> x = block({12.0f, 3.0f, -6.0f}, 16);
    const std::vector<float> b1 = block({3.0f, 1.0f, 0.5f}, 16);
    x.insert(x.end(), b1.begin(), b1.end());
    x.insert(x.end(), 32, 1.5f);  // row 1
    Desc d;
    mx(d, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1);
    MxRun a(d, x, 2, 32, 32, FQ_TYPE_FP4_E2M1);
    REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
    // S_blk = e4m3(amax x 224/6): 12 -> 448 (0x7E), 3 -> 112 (0x6E), 1.5 -> 56 (0x66)
    CHECK(a.scales == std::vector<uint8_t>{0x7E, 0x6E, 0x66, 0x66});
    CHECK(std::vector<uint8_t>(a.out.begin(), a.out.begin() + 2) == std::vector<uint8_t>{0x37, 0x0D});  // m 0.5: 6, 1.5, -3
    CHECK(std::vector<uint8_t>(a.out.begin() + 8, a.out.begin() + 10) == std::vector<uint8_t>{0x47, 0x02});  // m 2
    for (size_t i = 16; i < 32; ++i) CHECK(a.out[i] == 0x77);  // m 4: 1.5 -> 6
    float g = 12.0f;
    d.ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &g);
    MxRun b(d, x, 2, 32, 32, FQ_TYPE_FP4_E2M1);
    CHECK(b.out == a.out);
    CHECK(b.scales == a.scales);
}

TEST_CASE("NVFP4 S_enc is 1 when the global amax is 0, +Inf, NaN, negative, or the quotient overflows") {
    CHECK(fq::nvfp4_encode_scale(448.0f) == 6.0f);
    for (float g : {0.0f, -0.0f, INFINITY, NAN, -1.0f, std::ldexp(1.0f, -140)}) CHECK(fq::nvfp4_encode_scale(g) == 1.0f);
    CHECK(fq::nvfp4_block_scale(0.0f, 6.0f) == 0);
    CHECK(fq::nvfp4_multiplier(0, 6.0f) == 0.0f);  // an all-zero block: m = 0, every code 0
    CHECK(fq::nvfp4_block_scale(INFINITY, 6.0f) == 0x7E);
    // Through the API: a zero tensor writes zero scales and codes.
    Desc d;
    mx(d, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1);
    MxRun a(d, std::vector<float>(32, 0.0f), 1, 32, 32, FQ_TYPE_FP4_E2M1);
    CHECK(a.scales == std::vector<uint8_t>{0, 0});
    CHECK(a.out == std::vector<uint8_t>(16, 0));
}

// ---- Partial last blocks (docs/spec.md §6) -----------------------------------------------------------------------

TEST_CASE("a partial last block takes the amax of its valid elements (MXFP8 40 = 32 + 8, MXFP4, NVFP4 24 = 16 + 8)") {
    std::vector<float> x(40, 100.0f);
    for (size_t j = 32; j < 40; ++j) x[j] = 1.0f;  // tail amax 1
    Desc d8, d4;
    mx(d8, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN);
    mx(d4, FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1);
    MxRun a(d8, x, 1, 40, 40, FQ_TYPE_FP8_E4M3FN), b(d4, x, 1, 40, 40, FQ_TYPE_FP4_E2M1);
    REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
    REQUIRE_MESSAGE(b.status == FQ_STATUS_SUCCESS, b.message);
    CHECK(a.scales == std::vector<uint8_t>{127 - 2, 127 - 8});  // 100/448 -> 2^-2; 1/448 -> 2^-8
    CHECK(a.out[39] == 0x78);                                      // 1 x 2^8 = 256
    CHECK(b.scales == std::vector<uint8_t>{127 + 5, 127 - 2});   // 100/6 -> 2^5; 1/6 -> 2^-2
    CHECK(b.out[19] == 0x66);                                      // 1 x 2^2 = 4 (code 6), twice
    float g = 448.0f;
    Desc dn;
    mx(dn, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1).ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &g);
    std::vector<float> y(24, 5.0f);
    for (size_t j = 16; j < 24; ++j) y[j] = 2.0f;
    MxRun n(dn, y, 1, 24, 24, FQ_TYPE_FP4_E2M1);
    REQUIRE_MESSAGE(n.status == FQ_STATUS_SUCCESS, n.message);
    CHECK(n.scales == std::vector<uint8_t>{0x4A, 0x40});  // e4m3 5 and 2
    CHECK(n.out[11] == 0x77);                             // 2 x 6/2 = 6
}

// ---- Scale layouts of byte scales (docs/spec.md §4) ---------------------------------------------------------------

namespace {

// Inputs whose block scales differ from block to block and row to row.
std::vector<float> varied(int64_t rows, int64_t cols, int64_t block) {
    std::vector<float> x(size_t(rows * cols));
    for (int64_t m = 0; m < rows; ++m)
        for (int64_t j = 0; j < cols; ++j)
            x[size_t(m * cols + j)] = std::ldexp(1.0f + float((m + j) % 5) / 8.0f, int((m * 3 + j / block) % 13) - 6) *
                                      ((j % 3) ? 1.0f : -1.0f);
    return x;
}

}  // namespace

TEST_CASE("SWIZZLED_128X4 read back in storage order (M tiles, K tiles, 32, 4, 4): cuDNN's 6-D shape") {
    struct Case { int32_t scheme, out; int64_t block; };
    for (const Case c : {Case{FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, 32}, Case{FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1, 16}}) {
        const int64_t M = 130, Kg = 9, H = Kg * c.block;  // two row tiles, three column tiles of 4
        const std::vector<float> x = varied(M, H, c.block);
        Desc rm, sw;
        mx(rm, c.scheme, c.out);
        mx(sw, c.scheme, c.out).i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4);
        MxRun ref(rm, x, M, H, H, c.out), got(sw, x, M, H, H, c.out);
        REQUIRE_MESSAGE(got.status == FQ_STATUS_SUCCESS, got.message);
        CHECK(got.out == ref.out);
        // Logical m = 128 mt + 32 r4 + r32, k = 4 kt + c4; storage is mt, kt, r32, r4, c4 from slowest to fastest.
        std::vector<uint8_t> want;
        for (int64_t mt = 0; mt < 2; ++mt)
            for (int64_t kt = 0; kt < 3; ++kt)
                for (int64_t r32 = 0; r32 < 32; ++r32)
                    for (int64_t r4 = 0; r4 < 4; ++r4)
                        for (int64_t c4 = 0; c4 < 4; ++c4) {
                            const int64_t m = 128 * mt + 32 * r4 + r32, k = 4 * kt + c4;
                            want.push_back(m < M && k < Kg ? ref.scales[size_t(m * Kg + k)] : 0);  // padding is 0
                        }
        CHECK(got.scales == want);
    }
}

TEST_CASE("PACKED_UE8M0: word (k/4) x round_up(M,4) + m holds columns 4(k/4)+j in byte j, LSB first") {
    const int64_t M = 5, Kg = 6, H = Kg * 32, Mp = 8;
    const std::vector<float> x = varied(M, H, 32);
    Desc rm, pk;
    mx(rm, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN);
    mx(pk, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN).i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_PACKED_UE8M0);
    MxRun ref(rm, x, M, H, H, FQ_TYPE_FP8_E4M3FN), got(pk, x, M, H, H, FQ_TYPE_FP8_E4M3FN);
    REQUIRE_MESSAGE(got.status == FQ_STATUS_SUCCESS, got.message);
    REQUIRE(got.scales.size() == size_t(2 * Mp * 4));
    for (int64_t kw = 0; kw < 2; ++kw)
        for (int64_t m = 0; m < Mp; ++m) {
            uint32_t word, want = 0;
            std::memcpy(&word, got.scales.data() + 4 * (kw * Mp + m), 4);
            for (int64_t j = 0; j < 4; ++j) {
                const int64_t k = 4 * kw + j;
                if (m < M && k < Kg) want |= uint32_t(ref.scales[size_t(m * Kg + k)]) << (8 * j);
            }
            CHECK(word == want);  // rows 5..7 and columns 6, 7: zero padding
        }
}

TEST_CASE("byte scales column-major: COL_MAJOR ld = M, COL_MAJOR_TMA ld = round_up(M, 16) with zero padding") {
    const int64_t M = 5, Kg = 3, H = Kg * 16;
    const std::vector<float> x = varied(M, H, 16);
    float g = 100.0f;
    Desc rm, cm, tma;
    mx(rm, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1).ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &g);
    mx(cm, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1).ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &g)
        .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR);
    mx(tma, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1).ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &g)
        .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
    MxRun r(rm, x, M, H, H, FQ_TYPE_FP4_E2M1), c(cm, x, M, H, H, FQ_TYPE_FP4_E2M1), t(tma, x, M, H, H, FQ_TYPE_FP4_E2M1);
    REQUIRE_MESSAGE(t.status == FQ_STATUS_SUCCESS, t.message);
    REQUIRE(c.scales.size() == size_t(Kg * M));
    REQUIRE(t.scales.size() == size_t(Kg * 16));
    for (int64_t k = 0; k < Kg; ++k)
        for (int64_t m = 0; m < 16; ++m) {
            const uint8_t s = m < M ? r.scales[size_t(m * Kg + k)] : 0;
            if (m < M) CHECK(c.scales[size_t(k * M + m)] == s);
            CHECK(t.scales[size_t(k * 16 + m)] == s);
        }
}

// ---- Activation before quantization, and the round trip ----------------------------------------------

TEST_CASE("MX quantizes y after the activation, gate layout, rounding and row probability (docs/spec.md §2)") {
    const int64_t M = 3, H = 64;
    std::vector<float> x(size_t(M * 2 * H));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 3.0f * std::sin(0.37f * float(i) + 1.0f);
    std::vector<float> prob = {1.0f, 0.3f, 2.5f};
    Desc d;
    mx(d, FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1).i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU)
        .i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_INTERLEAVED)
        .i32(FQ_QUANT_DESC_INTERMEDIATE_ROUNDING, FQ_ROUNDING_ROUND_BOTH).ptr(FQ_QUANT_DESC_ROW_PROB_POINTER, prob.data());
    MxRun a(d, x, M, 2 * H, H, FQ_TYPE_FP4_E2M1);
    REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
    const std::vector<uint16_t> in = to_bf16(x);
    fq::QuantParams q;
    q.out = fq::DType::E2M1;
    q.qmax = 6.0f;
    for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < 2; ++k) {
            float y[32], amax = 0.0f;
            for (int64_t i = 0; i < 32; ++i) {
                const int64_t j = 32 * k + i;
                const float g = fq::bf16_to_float(in[size_t(m * 2 * H + 2 * j)]), u = fq::bf16_to_float(in[size_t(m * 2 * H + 2 * j + 1)]);
                y[i] = prob[size_t(m)] * fq::activate_gated(fq::Act::Silu, g, u, fq::Rounding::RoundBoth, fq::InType::Bf16, {});
                amax = std::fmax(amax, std::fabs(y[i]));
            }
            const uint8_t e = fq::mx_scale(amax, q);
            CHECK(a.scales[size_t(m * 2 + k)] == e);
            for (int64_t i = 0; i < 32; ++i)
                CHECK(nibble(a.out, size_t(m * H + 32 * k + i)) == fq::encode_minifloat(fq::kE2M1, y[i] * fq::e8m0_reciprocal(e)));
        }
}

namespace {

// Half the spacing of a format (mantissa bits, smallest normal exponent) at |t|: the RNE error bound.
double half_spacing(double t, int man_bits, int min_exp) {
    const int e = std::max(int(std::floor(std::log2(std::max(std::fabs(t), 1e-300)))), min_exp);
    return std::ldexp(1.0, e - man_bits) / 2;
}

double decode(int32_t out, const std::vector<uint8_t>& q, size_t i) {
    if (out == FQ_TYPE_FP4_E2M1) return e2m1_value(nibble(q, i));
    return fq::decode_minifloat(out == FQ_TYPE_FP8_E5M2 ? fq::kE5M2 : fq::kE4M3FN, q[i]);
}

}  // namespace

TEST_CASE("round trip: q decodes to the float64 activation / scale within half a spacing (RCEIL, FLOOR, NVFP4)") {
    const int64_t M = 7, H = 96;
    std::vector<float> x(size_t(M * 2 * H));
    uint32_t s = 12345;
    for (float& v : x) {
        s = s * 1664525u + 1013904223u;
        v = std::ldexp(float(s >> 8) / float(1u << 24) - 0.5f, int(s % 7) - 1);  // |x| up to 16, mixed magnitudes
    }
    const std::vector<uint16_t> in = to_bf16(x);
    std::vector<double> y(size_t(M * H));  // silu(g) * u in float64, SPLIT layout
    for (int64_t m = 0; m < M; ++m)
        for (int64_t j = 0; j < H; ++j) {
            const double g = fq::bf16_to_float(in[size_t(m * 2 * H + j)]), u = fq::bf16_to_float(in[size_t(m * 2 * H + H + j)]);
            y[size_t(m * H + j)] = g / (1.0 + std::exp(-g)) * u;
        }
    struct Case { int32_t scheme, out, rule; double qmax; int man, min_exp; int64_t block; };
    const Case cases[] = {{FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, FQ_MX_SCALE_RULE_RCEIL, 448, 3, -6, 32},
                          {FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E5M2, FQ_MX_SCALE_RULE_RCEIL, 57344, 2, -14, 32},
                          {FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1, FQ_MX_SCALE_RULE_RCEIL, 6, 1, 0, 32},
                          {FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, FQ_MX_SCALE_RULE_FLOOR, 448, 3, -6, 32},
                          {FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1, FQ_MX_SCALE_RULE_FLOOR, 6, 1, 0, 32},
                          {FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1, 0, 6, 1, 0, 16}};
    for (const Case& c : cases) {
        CAPTURE(c.scheme);
        CAPTURE(c.out);
        CAPTURE(c.rule);
        Desc d;
        mx(d, c.scheme, c.out, c.rule).i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU)
            .i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
        MxRun a(d, x, M, 2 * H, H, c.out);
        REQUIRE_MESSAGE(a.status == FQ_STATUS_SUCCESS, a.message);
        double tensor_amax = 0;
        for (double v : y) tensor_amax = std::max(tensor_amax, std::fabs(v));
        const double s_enc = 2688.0 / double(float(tensor_amax));
        const int64_t Kg = H / c.block;
        for (int64_t m = 0; m < M; ++m)
            for (int64_t k = 0; k < Kg; ++k) {
                const uint8_t sb = a.scales[size_t(m * Kg + k)];
                double amax = 0;
                for (int64_t i = 0; i < c.block; ++i) amax = std::max(amax, std::fabs(y[size_t(m * H + k * c.block + i)]));
                // The factor that maps y onto the element grid: 2^(127-e), or S_enc / S_blk for NVFP4.
                const double mul = c.scheme == FQ_SCHEME_NVFP4 ? s_enc / fq::decode_minifloat(fq::kE4M3FN, sb)
                                                               : std::ldexp(1.0, 127 - int(sb));
                if (c.scheme != FQ_SCHEME_NVFP4 && c.rule == FQ_MX_SCALE_RULE_RCEIL) {
                    CHECK(amax * mul <= c.qmax * (1 + 1e-5));  // RCEIL: no element saturates ...
                    CHECK(amax * mul > c.qmax / 2 * (1 - 1e-5));  // ... and the scale is the smallest that does so
                }
                for (int64_t i = 0; i < c.block; ++i) {
                    const size_t j = size_t(m * H + k * c.block + i);
                    const double t = std::clamp(y[j] * mul, -c.qmax, c.qmax);  // FLOOR and NVFP4 may saturate
                    CHECK(std::fabs(decode(c.out, a.out, j) - t) <= half_spacing(t, c.man, c.min_exp) + 1e-5 * std::fabs(t) + 1e-12);
                }
            }
    }
}

// ---- Validation of the microscaling attributes (docs/spec.md §6) --------------------------------------------------

namespace {

void expect_refused(const Desc& d, int64_t cols, int32_t out_type, fqStatus_t want, const char* names) {
    Handle h;
    Layout li(FQ_TYPE_BF16, 2, cols, cols), lo(out_type, 2, cols, cols + (cols % 2));
    char name[64];
    const fqStatus_t got = fqQuerySupport(h.h, d.d, li.l, lo.l, name, sizeof name);
    const std::string message = fqGetLastErrorMessage();
    CHECK_MESSAGE(got == want, message);
    CHECK_MESSAGE(message.find(names) != std::string::npos, message);
}

}  // namespace

TEST_CASE("the host backend runs MXFP8, MXFP4 and NVFP4 in every byte-scale layout") {
    Handle h;
    Layout li(FQ_TYPE_BF16, 3, 64, 64), l8(FQ_TYPE_FP8_E4M3FN, 3, 64, 64), l4(FQ_TYPE_FP4_E2M1, 3, 64, 64);
    char name[64];
    for (int32_t layout : {FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR_TMA,
                           FQ_SCALE_LAYOUT_SWIZZLED_128X4, FQ_SCALE_LAYOUT_PACKED_UE8M0}) {
        Desc a, b, c;
        mx(a, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN).i32(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
        mx(b, FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1).i32(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
        mx(c, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1).i32(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
        CHECK_MESSAGE(fqQuerySupport(h.h, a.d, li.l, l8.l, name, sizeof name) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
        CHECK_MESSAGE(fqQuerySupport(h.h, b.d, li.l, l4.l, name, sizeof name) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
        const fqStatus_t nv = fqQuerySupport(h.h, c.d, li.l, l4.l, name, sizeof name);
        CHECK(nv == (layout == FQ_SCALE_LAYOUT_PACKED_UE8M0 ? FQ_STATUS_INVALID_VALUE : FQ_STATUS_SUCCESS));  // E8M0 only
    }
}

TEST_CASE("attributes the microscaling schemes do not use are refused with a message naming them") {
    float ub = 1.0f, g = 1.0f;
    { Desc d; mx(d, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN).ptr(FQ_QUANT_DESC_SCALE_UB_POINTER, &ub);
      expect_refused(d, 64, FQ_TYPE_FP8_E4M3FN, FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_UB_POINTER"); }
    { Desc d; mx(d, FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1).ptr(FQ_QUANT_DESC_SCALE_UB_POINTER, &ub);
      expect_refused(d, 64, FQ_TYPE_FP4_E2M1, FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_UB_POINTER"); }
    { Desc d; mx(d, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1).f32(FQ_QUANT_DESC_MIN_SCALE, 1e-3f);
      expect_refused(d, 64, FQ_TYPE_FP4_E2M1, FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_MIN_SCALE"); }
    { Desc d; mx(d, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN).i32(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL);
      expect_refused(d, 64, FQ_TYPE_FP8_E4M3FN, FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_SCALE_ROUNDING"); }
    { Desc d; mx(d, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1).f32(FQ_QUANT_DESC_QMAX, 4.0f);
      expect_refused(d, 64, FQ_TYPE_FP4_E2M1, FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_QMAX"); }
    { Desc d; mx(d, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, FQ_MX_SCALE_RULE_FLOOR).f32(FQ_QUANT_DESC_QMAX, 400.0f);
      expect_refused(d, 64, FQ_TYPE_FP8_E4M3FN, FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_QMAX"); }
    { Desc d; d.i32(FQ_QUANT_DESC_MX_SCALE_RULE, FQ_MX_SCALE_RULE_FLOOR);
      expect_refused(d, 64, FQ_TYPE_FP8_E4M3FN, FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_MX_SCALE_RULE"); }
    { Desc d; mx(d, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN).ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &g);
      expect_refused(d, 64, FQ_TYPE_FP8_E4M3FN, FQ_STATUS_INVALID_VALUE, "FQ_QUANT_DESC_GLOBAL_AMAX_POINTER"); }
    { Desc d; mx(d, FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1);
      expect_refused(d, 63, FQ_TYPE_FP4_E2M1, FQ_STATUS_INVALID_VALUE, "even"); }
    // A QMAX override is the RCEIL rule's qmax: amax 3 / qmax 2 -> 2^1.
    Desc d;
    mx(d, FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN).f32(FQ_QUANT_DESC_QMAX, 2.0f);
    MxRun a(d, block({3.0f}, 32), 1, 32, 32, FQ_TYPE_FP8_E4M3FN);
    CHECK(a.scales[0] == 128);
    CHECK(a.out[0] == 0x3C);  // 1.5
}

TEST_CASE("a misaligned NVFP4 global amax pointer is refused before anything is written") {
    alignas(4) float g[2] = {1.0f, 1.0f};
    Desc d;
    mx(d, FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1)
        .ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, reinterpret_cast<const uint8_t*>(g) + 1);
    MxRun a(d, std::vector<float>(32, 1.0f), 1, 32, 32, FQ_TYPE_FP4_E2M1);
    CHECK(a.status == FQ_STATUS_MISALIGNED);
    CHECK(a.message.find("FQ_QUANT_DESC_GLOBAL_AMAX_POINTER") != std::string::npos);
    CHECK(a.out == std::vector<uint8_t>(16, 0xAB));
}

TEST_CASE("ScaleStrides (five strides, no branch on the layout) give scale_offset for every layout, type and slot") {
    using fq::ScaleLayout;
    int64_t compared = 0;
    for (ScaleLayout layout : {ScaleLayout::RowMajor, ScaleLayout::ColMajor, ScaleLayout::ColMajorTma,
                               ScaleLayout::Swizzled128x4, ScaleLayout::PackedUe8m0})
        for (fq::DType type : {fq::DType::Fp32, fq::DType::E8M0})
            for (int64_t rows : {1, 5, 31, 33, 128, 130, 300})
                for (int64_t groups : {1, 3, 4, 7, 56, 129}) {
                    if (type == fq::DType::Fp32 && (layout == ScaleLayout::Swizzled128x4 || layout == ScaleLayout::PackedUe8m0))
                        continue;  // byte scales only
                    const fq::ScaleGeometry g = fq::make_scale_geometry(layout, type, rows, groups);
                    const fq::ScaleStrides s = fq::scale_strides(g);
                    for (int64_t m = 0; m < g.padded_rows; ++m)
                        for (int64_t k = 0; k < fq::padded_scale_cols(g); ++k, ++compared) {
                            CAPTURE(int(layout));
                            CAPTURE(rows);
                            CAPTURE(groups);
                            CAPTURE(m);
                            CAPTURE(k);
                            REQUIRE(fq::scale_offset(s, m, k) == fq::scale_offset(g, m, k));
                        }
                }
    MESSAGE(compared, " slots compared");
}

TEST_CASE("checked_scale_geometry: the one padding rule, empty exactly where an extent, a stride or the bytes overflow") {
    using fq::DType;
    using fq::ScaleLayout;
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    const auto fits = [](ScaleLayout l, DType t, int64_t rows, int64_t groups) {
        return fq::checked_scale_geometry(l, t, rows, groups).has_value();
    };
    const auto g = fq::checked_scale_geometry(ScaleLayout::Swizzled128x4, DType::E8M0, 130, 5);
    REQUIRE(g.has_value());
    CHECK(g->padded_rows == 256);
    CHECK(g->padded_cols == 8);
    CHECK(g->bytes == 256 * 8);
    CHECK(fq::checked_scale_geometry(ScaleLayout::PackedUe8m0, DType::E8M0, 5, 5)->bytes == 8 * 2 * 4);
    CHECK(fq::checked_scale_geometry(ScaleLayout::ColMajorTma, DType::Fp32, 5, 3)->padded_rows == 8);  // its ld
    CHECK_FALSE(fits(ScaleLayout::RowMajor, DType::Fp32, kMax - 127, 1));             // past any padding
    CHECK_FALSE(fits(ScaleLayout::Swizzled128x4, DType::E8M0, int64_t(1) << 62, 4));  // 2^64 bytes
    CHECK_FALSE(fits(ScaleLayout::ColMajor, DType::Fp32, int64_t(1) << 61, 1));       // 2^63 bytes
    CHECK(fits(ScaleLayout::ColMajor, DType::Fp32, int64_t(1) << 60, 1));             // 2^62 bytes
    CHECK_FALSE(fits(ScaleLayout::RowMajor, DType::Fp32, int64_t(1) << 62, 0));       // 0 bytes, a 2^64-byte stride
    CHECK(fits(ScaleLayout::RowMajor, DType::Fp32, int64_t(1) << 60, 0));
}
