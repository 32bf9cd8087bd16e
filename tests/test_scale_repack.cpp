// fqScaleRepack and fqGetScaleRepackSize on the host backend: every layout pair x scale type x batching
// against repack_model.h (docs/spec.md §4 written out independently of src/), with random source bytes (padding
// included), poisoned destinations and guard bytes; round trips; row offsets with empty experts and
// garbage; and the two Blackwell/DeepGEMM layouts of real fqQuantize outputs read back through index
// formulas of their own: SWIZZLED_128X4 through cuDNN's / CUTLASS's 6-D view, PACKED_UE8M0 as int32 words.
#include <algorithm>
#include <cstring>
#include <random>

#include "fq_test_util.h"
#include "repack_model.h"

using namespace fqt;
namespace rm = repack_model;

namespace {

constexpr uint8_t kGuard = 0xE7, kPoison = 0xAB;
constexpr size_t kGuardBytes = 64;

// A destination of n bytes, 16-byte aligned, poisoned, between guard bytes.
class GuardedDst {
  public:
    explicit GuardedDst(size_t n) : n_(n), mem_(n + 2 * kGuardBytes + 16, kGuard) {
        const auto base = reinterpret_cast<uintptr_t>(mem_.data()) + kGuardBytes;
        off_ = size_t((base + 15) / 16 * 16 - reinterpret_cast<uintptr_t>(mem_.data()));
        std::fill_n(mem_.begin() + std::ptrdiff_t(off_), n_, kPoison);
    }
    uint8_t* p() { return mem_.data() + off_; }
    std::vector<uint8_t> bytes() const { return {mem_.begin() + std::ptrdiff_t(off_), mem_.begin() + std::ptrdiff_t(off_ + n_)}; }
    bool guards_intact() const {
        for (size_t i = 0; i < mem_.size(); ++i)
            if ((i < off_ || i >= off_ + n_) && mem_[i] != kGuard) return false;
        return true;
    }

  private:
    size_t n_, off_ = 0;
    std::vector<uint8_t> mem_;
};

fqStatus_t repack(const Handle& h, const rm::Problem& p, const void* src, size_t src_bytes, void* dst, size_t dst_bytes) {
    return fqScaleRepack(h.h, p.type, p.batch, p.rows, p.groups, p.batching, p.offsets.empty() ? nullptr : p.offsets.data(),
                         p.stacked_rows, p.src_layout, src, src_bytes, p.dst_layout, dst, dst_bytes, nullptr);
}

// Runs p on the host backend over `src` into a fresh guarded destination; checks status, guards and the
// size query; returns the destination bytes.
std::vector<uint8_t> run(const rm::Problem& p, const std::vector<uint8_t>& src) {
    Handle h;
    GuardedDst dst(size_t(p.dst_bytes()));
    const fqStatus_t s = repack(h, p, src.data(), src.size(), dst.p(), size_t(p.dst_bytes()));
    REQUIRE_MESSAGE(s == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    CHECK_MESSAGE(dst.guards_intact(), "a byte outside dst's ", p.dst_bytes(), " bytes was written");
    size_t sz = 0;
    REQUIRE(fqGetScaleRepackSize(p.type, p.dst_stacked() ? 1 : p.batch, p.dst_stacked() ? p.stacked_rows : p.rows,
                                 p.groups, p.dst_layout, &sz) == FQ_STATUS_SUCCESS);
    CHECK(int64_t(sz) == p.dst_bytes());
    return dst.bytes();
}

// Where the first difference is, for a failure message.
std::string first_difference(const rm::Problem& p, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
    if (got.size() != want.size()) return "sizes " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i])
            return "byte " + std::to_string(i) + " (" + rm::where(p, int64_t(i)) + "): got " + std::to_string(got[i]) +
                   ", want " + std::to_string(want[i]);
    return "none";
}

const int32_t kTypes[] = {FQ_TYPE_FP32, FQ_TYPE_E8M0, FQ_TYPE_FP8_E4M3FN};

}  // namespace

TEST_CASE("repack: every layout pair x scale type x batching writes each batch's scales where dst's layout "
          "puts them and 0 everywhere else, nothing outside dst") {
    std::mt19937 rng(20261121);
    struct Shape { int64_t batch, rows, groups; };
    const Shape shapes[] = {{1, 1, 1}, {1, 5, 3}, {3, 130, 9}, {2, 0, 5}, {0, 4, 2}, {4, 17, 4}};
    int runs = 0;
    for (int32_t type : kTypes)
        for (int32_t from = 0; from < 5; ++from)
            for (int32_t to = 0; to < 5; ++to) {
                if (!rm::layout_holds(from, type) || !rm::layout_holds(to, type)) continue;
                for (const Shape& sh : shapes)
                    for (int32_t batching : {FQ_SCALE_REPACK_BLOCKS, FQ_SCALE_REPACK_STACKED_TO_BLOCKS,
                                             FQ_SCALE_REPACK_BLOCKS_TO_STACKED}) {
                        rm::Problem p;
                        p.type = type;
                        p.batch = sh.batch;
                        p.rows = sh.rows;
                        p.groups = sh.groups;
                        p.batching = batching;
                        p.src_layout = from;
                        p.dst_layout = to;
                        if (batching != FQ_SCALE_REPACK_BLOCKS) p.offsets = rm::moe_offsets(rng, p.batch, p.rows, &p.stacked_rows);
                        CAPTURE(p.describe());
                        const std::vector<uint8_t> src = rm::random_bytes(rng, size_t(p.src_bytes()));  // padding too
                        const std::vector<uint8_t> got = run(p, src), want = rm::expected(p, src);
                        CHECK_MESSAGE(got == want, "first difference: ", first_difference(p, got, want));
                        ++runs;
                    }
            }
    MESSAGE(runs, " repacks compared with the model");
    CHECK(runs == 50 * 6 * 3);
}

TEST_CASE("repack round trip: A -> B -> A gives A's scales back with A's padding zeroed") {
    std::mt19937 rng(7);
    for (int32_t type : kTypes)
        for (int32_t a = 0; a < 5; ++a)
            for (int32_t b = 0; b < 5; ++b) {
                if (!rm::layout_holds(a, type) || !rm::layout_holds(b, type)) continue;
                rm::Problem there;
                there.type = type;
                there.batch = 3;
                there.rows = 131;
                there.groups = 7;
                there.src_layout = a;
                there.dst_layout = b;
                rm::Problem back = there, same = there;
                back.src_layout = b;
                back.dst_layout = a;
                same.dst_layout = a;
                CAPTURE(there.describe());
                const std::vector<uint8_t> src = rm::random_bytes(rng, size_t(there.src_bytes()));
                const std::vector<uint8_t> returned = run(back, run(there, src));
                CHECK_MESSAGE(returned == rm::expected(same, src), first_difference(same, returned, rm::expected(same, src)));
            }
}

TEST_CASE("repack MoE: stacked row-major MXFP8 scales of 4 experts (one empty) become per-expert SWIZZLED_128X4 "
          "blocks identical to quantizing each expert alone, and go back") {
    const int64_t H = 6 * 32, capacity = 128;
    const std::vector<int64_t> counts = {37, 0, 128, 5};
    std::vector<int32_t> offsets = {0};
    for (int64_t c : counts) offsets.push_back(offsets.back() + int32_t(c));
    const int64_t total = offsets.back();
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 4.0f);
    std::vector<float> x(size_t(total * H));
    for (float& v : x) v = normal(rng);
    Desc stacked, swizzled;
    for (Desc* d : {&stacked, &swizzled})
        d->i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8).i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
    swizzled.i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4);
    const std::vector<uint16_t> in = to_bf16(x);
    HostRun all(stacked, in, total, H, H, H);
    REQUIRE(all.status == FQ_STATUS_SUCCESS);

    rm::Problem p;
    p.batch = int64_t(counts.size());
    p.rows = capacity;
    p.groups = H / 32;
    p.batching = FQ_SCALE_REPACK_STACKED_TO_BLOCKS;
    p.offsets = offsets;
    p.stacked_rows = total;
    p.src_layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    p.dst_layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4;
    const std::vector<uint8_t> blocks = run(p, all.scales);
    const size_t block = size_t(capacity * 8);  // 128 rows x round_up(6, 4) groups
    REQUIRE(blocks.size() == counts.size() * block);
    for (size_t e = 0; e < counts.size(); ++e) {
        CAPTURE(e);
        const std::vector<uint8_t> got(blocks.begin() + std::ptrdiff_t(e * block), blocks.begin() + std::ptrdiff_t((e + 1) * block));
        if (counts[e] == 0) {
            CHECK(got == std::vector<uint8_t>(block, 0));
            continue;
        }
        const std::vector<uint16_t> expert(in.begin() + offsets[e] * H, in.begin() + offsets[e + 1] * H);
        HostRun alone(swizzled, expert, counts[e], H, H, H);
        REQUIRE(alone.status == FQ_STATUS_SUCCESS);
        CHECK(got == alone.scales);
    }
    // And back: the blocks stacked into row-major again give the original scales.
    rm::Problem back = p;
    back.batching = FQ_SCALE_REPACK_BLOCKS_TO_STACKED;
    std::swap(back.src_layout, back.dst_layout);
    CHECK(run(back, blocks) == all.scales);
}

TEST_CASE("repack with garbage row offsets (decreasing, negative, past stackedRows, INT32 extremes) writes only "
          "dst, reads only src, and writes the same bytes every time") {
    std::mt19937 rng(11);
    const std::vector<std::vector<int32_t>> garbage = {
        {5, 2, 9, 1}, {-7, -1, 3, 400}, {INT32_MAX, INT32_MIN, 0, INT32_MAX}, {0, 1000, 2000, 3000}, {3, 3, 3, -3}};
    for (const auto& off : garbage)
        for (int32_t batching : {FQ_SCALE_REPACK_STACKED_TO_BLOCKS, FQ_SCALE_REPACK_BLOCKS_TO_STACKED})
            for (int32_t layout : {FQ_SCALE_LAYOUT_COL_MAJOR, FQ_SCALE_LAYOUT_SWIZZLED_128X4, FQ_SCALE_LAYOUT_PACKED_UE8M0}) {
                rm::Problem p;
                p.batch = 3;
                p.rows = 6;
                p.groups = 5;
                p.batching = batching;
                p.offsets = off;
                p.stacked_rows = 10;
                p.src_layout = layout;
                p.dst_layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
                CAPTURE(p.describe());
                const std::vector<uint8_t> src = rm::random_bytes(rng, size_t(p.src_bytes()));
                CHECK(run(p, src) == run(p, src));
            }
}

TEST_CASE("fqGetScaleRepackSize of one block equals fqGetScaleBufferSize of a descriptor with that scale type and layout") {
    struct Scheme { int32_t scheme, out, type; int64_t block; };
    const Scheme schemes[] = {{FQ_SCHEME_PER_GROUP, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP32, 128},
                              {FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_E8M0, 32},
                              {FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1, FQ_TYPE_FP8_E4M3FN, 16}};
    for (const Scheme& s : schemes)
        for (int32_t layout = 0; layout < 5; ++layout) {
            if (!rm::layout_holds(layout, s.type)) continue;
            Desc d;
            d.i32(FQ_QUANT_DESC_SCHEME, s.scheme).i32(FQ_QUANT_DESC_OUTPUT_TYPE, s.out).i32(FQ_QUANT_DESC_SCALE_TYPE, s.type)
                .i32(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
            for (int64_t rows : {0, 1, 5, 130})
                for (int64_t groups : {1, 3, 9}) {
                    CAPTURE(layout);
                    CAPTURE(rows);
                    CAPTURE(groups);
                    size_t repack_size = 0, buffer_size = 0;
                    REQUIRE(fqGetScaleRepackSize(s.type, 1, rows, groups, layout, &repack_size) == FQ_STATUS_SUCCESS);
                    REQUIRE(fqGetScaleBufferSize(d.d, rows, groups * s.block, FQ_OUTPUT_ROWWISE, &buffer_size) == 0);
                    CHECK(repack_size == buffer_size);
                    size_t three = 0;
                    REQUIRE(fqGetScaleRepackSize(s.type, 3, rows, groups, layout, &three) == FQ_STATUS_SUCCESS);
                    CHECK(three == 3 * repack_size);
                }
        }
}

// ---- The Blackwell and DeepGEMM byte layouts read back through their own index formulas ------------------

namespace {

// cuDNN's / CUTLASS's view of SWIZZLED_128X4 block scales: a 6-D tensor of shape
// (32, 4, ceil(M/128), 4, ceil(K_g/4), L) whose first three modes make the row m = i0 + 32 i1 + 128 i2 and
// whose next two make the group k = i3 + 4 i4. Storage is compact in the order (i3, i1, i0, i4, i2, L)
// from fastest to slowest: a 512-byte atom holds 32 x 4 rows x 4 groups, atoms run along K first.
struct Swizzle6D {
    int64_t shape[6];
    int64_t stride[6];
    Swizzle6D(int64_t M, int64_t Kg, int64_t L) : shape{32, 4, (M + 127) / 128, 4, (Kg + 3) / 4, L} {
        const int fastest_first[6] = {3, 1, 0, 4, 2, 5};
        int64_t s = 1;
        for (int mode : fastest_first) {
            stride[mode] = s;
            s *= shape[mode];
        }
    }
    int64_t bytes() const { return shape[0] * shape[1] * shape[2] * shape[3] * shape[4] * shape[5]; }
    int64_t offset(int64_t m, int64_t k, int64_t l) const {
        const int64_t idx[6] = {m % 32, (m / 32) % 4, m / 128, k % 4, k / 4, l};
        int64_t o = 0;
        for (int d = 0; d < 6; ++d) o += idx[d] * stride[d];
        return o;
    }
};

// Reads `buf` through `view`, comparing with row-major scales `rm_scales[l]` (M x Kg each); every byte no
// logical scale maps to must be 0.
void check_swizzled(const std::vector<uint8_t>& buf, const Swizzle6D& view, int64_t M, int64_t Kg,
                    const std::vector<std::vector<uint8_t>>& rm_scales) {
    REQUIRE(int64_t(buf.size()) == view.bytes());
    std::vector<bool> logical(buf.size(), false);
    size_t wrong = 0;
    for (size_t l = 0; l < rm_scales.size(); ++l)
        for (int64_t m = 0; m < M; ++m)
            for (int64_t k = 0; k < Kg; ++k) {
                const int64_t o = view.offset(m, k, int64_t(l));
                REQUIRE(!logical[size_t(o)]);  // the view is one to one
                logical[size_t(o)] = true;
                if (buf[size_t(o)] != rm_scales[l][size_t(m * Kg + k)] && wrong++ < 5)
                    FAIL_CHECK("S[", m, ", ", k, "] of batch ", l, " at byte ", o, ": ", int(buf[size_t(o)]), " != ",
                               int(rm_scales[l][size_t(m * Kg + k)]));
            }
    size_t nonzero_padding = 0;
    for (size_t i = 0; i < buf.size(); ++i) nonzero_padding += !logical[i] && buf[i] != 0;
    CHECK(wrong == 0);
    CHECK_MESSAGE(nonzero_padding == 0, nonzero_padding, " padding bytes are not 0");
}

// Byte scale S[m, k] of a PACKED_UE8M0 buffer read as DeepGEMM does: little-endian int32 words, word
// (k / 4) of row m at word index (k / 4) * round_up(M, 4) + m, scale k in bits 8 (k % 4) .. +7.
uint8_t packed_scale(const std::vector<uint8_t>& buf, int64_t M, int64_t m, int64_t k) {
    const int64_t word = (k / 4) * ((M + 3) / 4 * 4) + m;
    uint32_t w = 0;
    for (int b = 0; b < 4; ++b) w |= uint32_t(buf[size_t(4 * word + b)]) << (8 * b);
    return uint8_t(w >> (8 * (k % 4)));
}

struct Micro { int32_t scheme, out, type; int64_t block; const char* name; };
const Micro kMicro[] = {{FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_E8M0, 32, "MXFP8"},
                        {FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1, FQ_TYPE_FP8_E4M3FN, 16, "NVFP4"}};

std::vector<uint8_t> quantized_scales(const Micro& s, int32_t layout, const std::vector<uint16_t>& in, int64_t M, int64_t H) {
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, s.scheme).i32(FQ_QUANT_DESC_OUTPUT_TYPE, s.out).i32(FQ_QUANT_DESC_SCALE_TYPE, s.type)
        .i32(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
    HostRun r(d, in, M, H, H, H, s.out);
    REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    return r.scales;
}

std::vector<uint16_t> random_activation(std::mt19937& rng, int64_t n) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> exponent(-12, 12);
    std::vector<float> x{};
    x.resize(size_t(n));
    for (float& v : x) v = std::ldexp(normal(rng), exponent(rng));  // block scales spread over many binades
    return to_bf16(x);
}

}  // namespace

TEST_CASE("SWIZZLED_128X4 read through the 6-D view (32, 4, ceil(M/128), 4, ceil(K_g/4), L): fqQuantize's MXFP8 "
          "and NVFP4 scales equal ROW_MAJOR's, every padding byte is 0, and fqScaleRepack writes the same bytes") {
    std::mt19937 rng(128);
    for (const Micro& s : kMicro) {
        CAPTURE(s.name);
        const int64_t M = 131, Kg = 9, H = Kg * s.block;  // 2 row tiles (the second nearly empty), 3 K tiles
        const std::vector<uint16_t> x0 = random_activation(rng, M * H), x1 = random_activation(rng, M * H);
        const std::vector<uint8_t> rm0 = quantized_scales(s, FQ_SCALE_LAYOUT_ROW_MAJOR, x0, M, H);
        const std::vector<uint8_t> rm1 = quantized_scales(s, FQ_SCALE_LAYOUT_ROW_MAJOR, x1, M, H);
        const std::vector<uint8_t> sw0 = quantized_scales(s, FQ_SCALE_LAYOUT_SWIZZLED_128X4, x0, M, H);
        check_swizzled(sw0, Swizzle6D(M, Kg, 1), M, Kg, {rm0});

        // Two batches (L = 2) repacked from ROW_MAJOR blocks, read through the same view.
        rm::Problem p;
        p.type = s.type;
        p.batch = 2;
        p.rows = M;
        p.groups = Kg;
        p.src_layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
        p.dst_layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4;
        std::vector<uint8_t> src = rm0;
        src.insert(src.end(), rm1.begin(), rm1.end());
        const std::vector<uint8_t> repacked = run(p, src);
        check_swizzled(repacked, Swizzle6D(M, Kg, 2), M, Kg, {rm0, rm1});
        CHECK(std::vector<uint8_t>(repacked.begin(), repacked.begin() + std::ptrdiff_t(sw0.size())) == sw0);
    }
}

TEST_CASE("PACKED_UE8M0 read as little-endian int32 words (k/4) x round_up(M,4) + m: fqQuantize's MXFP8 scales equal "
          "ROW_MAJOR's, padding is 0, and fqScaleRepack writes the same bytes") {
    std::mt19937 rng(4);
    const Micro& s = kMicro[0];
    for (int64_t M : {1, 6, 33}) {
        const int64_t Kg = 7, H = Kg * 32, Mp = (M + 3) / 4 * 4, words = 2 * Mp;  // ceil(7/4) = 2 words per row
        CAPTURE(M);
        const std::vector<uint16_t> x = random_activation(rng, M * H);
        const std::vector<uint8_t> rmaj = quantized_scales(s, FQ_SCALE_LAYOUT_ROW_MAJOR, x, M, H);
        const std::vector<uint8_t> packed = quantized_scales(s, FQ_SCALE_LAYOUT_PACKED_UE8M0, x, M, H);
        REQUIRE(int64_t(packed.size()) == 4 * words);
        for (int64_t m = 0; m < Mp; ++m)
            for (int64_t k = 0; k < 8; ++k) {
                const uint8_t want = m < M && k < Kg ? rmaj[size_t(m * Kg + k)] : 0;
                CHECK_MESSAGE(packed_scale(packed, M, m, k) == want, "m ", m, " k ", k);
            }
        rm::Problem p;
        p.rows = M;
        p.groups = Kg;
        p.src_layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
        p.dst_layout = FQ_SCALE_LAYOUT_PACKED_UE8M0;
        CHECK(run(p, rmaj) == packed);
    }
}
