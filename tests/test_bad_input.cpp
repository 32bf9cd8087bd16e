// The bad-input matrix: every argument of every entry point of fusedquant.h, each wrong in each way
// (NULL, zero, negative, extreme, overflowing products, misaligned, too small a buffer, unsupported or
// inconsistent combinations, a wrong, foreign or destroyed object), gives the documented status and a
// message naming what is wrong; the call changes no object, writes nothing into the caller's outputs when
// it fails, and never writes outside them (guard bytes on both sides of every output are checked after
// every call). A last test parses the header and fails when an argument of an entry point has no case.
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "alloc_count.h"
#include "fq_test_util.h"

namespace {

constexpr uint8_t kGuard = 0xE7;   // bytes around every output
constexpr uint8_t kPoison = 0x5A;  // the initial content of every output
constexpr size_t kGuardBytes = 64;

// A caller's output buffer of `n` bytes, 16-byte aligned, with guard bytes on both sides.
class Guarded {
  public:
    explicit Guarded(size_t n) : n_(n), mem_(n + 2 * kGuardBytes + 16, kGuard) {
        const auto base = reinterpret_cast<uintptr_t>(mem_.data()) + kGuardBytes;
        offset_ = size_t((base + 15) / 16 * 16 - reinterpret_cast<uintptr_t>(mem_.data()));
        std::fill_n(mem_.begin() + std::ptrdiff_t(offset_), n_, kPoison);
    }
    uint8_t* p() { return mem_.data() + offset_; }
    size_t size() const { return n_; }
    uint8_t at(size_t i) const { return mem_[offset_ + i]; }
    bool guards_intact() const {
        for (size_t i = 0; i < mem_.size(); ++i)
            if ((i < offset_ || i >= offset_ + n_) && mem_[i] != kGuard) return false;
        return true;
    }
    bool untouched_from(size_t first) const {
        for (size_t i = first; i < n_; ++i)
            if (at(i) != kPoison) return false;
        return true;
    }
    bool all_zero() const {
        for (size_t i = 0; i < n_; ++i)
            if (at(i) != 0) return false;
        return true;
    }

  private:
    size_t n_, offset_ = 0;
    std::vector<uint8_t> mem_;
};

// A valid problem (SiLU-and-mul, split gate, per-group 32, bf16 [4, 128] -> e4m3fn [4, 64], 32 bytes of
// fp32 scales), live objects of every kind, destroyed ones, and guarded outputs for every kind of result.
constexpr int64_t kRows = 4, kCols = 64, kScaleBytes = 4 * 2 * 4;

struct World {
    fqHandle_t h = nullptr;
    fqQuantDesc_t d = nullptr;
    fqTensorLayout_t in = nullptr, out = nullptr;
    fqHandle_t dead_h = nullptr;
    fqQuantDesc_t dead_d = nullptr;
    fqTensorLayout_t dead_l = nullptr;
    int wild = 0;  // its address poses as an object that was never created (never dereferenced)
    std::vector<uint16_t> x = std::vector<uint16_t>(size_t(kRows * 2 * kCols) + 8, 0x3F80);  // 1.0 in bf16
    float one = 1.0f;
    // Exactly the valid problem's extents: the guard bytes start right after the last byte a call may write.
    // A case whose call may write elsewhere (an odd address, fewer rows) sizes them itself (Case::fit).
    Guarded values{size_t(kRows * kCols)}, scales{size_t(kScaleBytes)};
    Guarded attr{16}, written{sizeof(size_t)}, name{64}, value{sizeof(int64_t)}, count{sizeof(int32_t)};
    Guarded size{sizeof(size_t)}, obj{sizeof(void*)};
    // fqScaleRepack: a source, host row offsets (3 stacked rows: batch 0 = row 0, batch 1 = rows 1-2) and a
    // destination of exactly the valid problem's 1024 bytes (two 128x4 SWIZZLED_128X4 blocks).
    std::vector<uint8_t> repack_src = std::vector<uint8_t>(256, 0x11);
    std::vector<int32_t> repack_offsets = {0, 1, 3};
    Guarded repacked{1024};
    // Columnwise outputs of the valid problem: [4, 64] values and S_col[64 columns, 1 block] fp32.
    Guarded col_values{size_t(kRows * kCols)}, col_scales{size_t(kCols * 4)};
    int32_t offsets[5] = {0, 2, 4, 4, 4}, counts[4] = {1, 1, 1, 1};  // valid MoE arrays for up to 4 experts
    // fqGroupedGemm: A [4, 128] and B [2 x 128, 128] e4m3fn (all 1.0), unit scales, 2 groups of 2 rows (offsets
    // above), the epilogue `d` (SwiGLU, H = 64) into `values` and `scales`; C [4, 128] and D [4, 64] bf16.
    fqGroupedGemmDesc_t gd = nullptr, dead_gd = nullptr;
    fqTensorLayout_t la = nullptr, lb = nullptr;
    std::vector<uint8_t> gemm_a = std::vector<uint8_t>(4 * 128, 0x38), gemm_b = std::vector<uint8_t>(256 * 128, 0x38);
    std::vector<float> gemm_sa = std::vector<float>(8, 1.0f), gemm_sb = std::vector<float>(4, 1.0f);
    float alpha[2] = {1.0f, 0.5f};
    Guarded gemm_c{4 * 128 * 2}, gemm_d{4 * 64 * 2};
    std::vector<void*> holds;  // keep freed objects' addresses from being reused by a new object
    fqPlan_t plan = nullptr, dead_plan = nullptr;  // of the valid problem
    bool via_plan = false;  // fqQuantize's cases run as fqPlanCreate + fqPlanExecute (plan_cases)

    World() {
        REQUIRE(fqCreate(&h, FQ_BACKEND_HOST, -1) == FQ_STATUS_SUCCESS);
        REQUIRE(fqQuantDescCreate(&d) == FQ_STATUS_SUCCESS);
        set(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU);
        set(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
        set(FQ_QUANT_DESC_GROUP_SIZE, 32);
        world_group = true;
        REQUIRE(fqTensorLayoutCreate(&in, FQ_TYPE_BF16, kRows, 2 * kCols, 2 * kCols) == FQ_STATUS_SUCCESS);
        REQUIRE(fqTensorLayoutCreate(&out, FQ_TYPE_FP8_E4M3FN, kRows, kCols, kCols) == FQ_STATUS_SUCCESS);
        REQUIRE(fqGroupedGemmDescCreate(&gd) == FQ_STATUS_SUCCESS);
        gset(FQ_GEMM_DESC_NUM_GROUPS, 2);
        gsetp(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, offsets);
        gsetp(FQ_GEMM_DESC_C_OUTPUT_POINTER, gemm_c.p());
        gsetp(FQ_GEMM_DESC_D_OUTPUT_POINTER, gemm_d.p());
        REQUIRE(fqTensorLayoutCreate(&la, FQ_TYPE_FP8_E4M3FN, kRows, 128, 128) == FQ_STATUS_SUCCESS);
        REQUIRE(fqTensorLayoutCreate(&lb, FQ_TYPE_FP8_E4M3FN, 256, 128, 128) == FQ_STATUS_SUCCESS);
        holds.reserve(32);
        REQUIRE(fqGroupedGemmDescCreate(&dead_gd) == FQ_STATUS_SUCCESS);
        REQUIRE(fqCreate(&dead_h, FQ_BACKEND_HOST, -1) == FQ_STATUS_SUCCESS);
        REQUIRE(fqQuantDescCreate(&dead_d) == FQ_STATUS_SUCCESS);
        REQUIRE(fqTensorLayoutCreate(&dead_l, FQ_TYPE_BF16, 1, 1, 1) == FQ_STATUS_SUCCESS);
        REQUIRE(fqDestroy(dead_h) == FQ_STATUS_SUCCESS);
        REQUIRE(fqQuantDescDestroy(dead_d) == FQ_STATUS_SUCCESS);
        REQUIRE(fqTensorLayoutDestroy(dead_l) == FQ_STATUS_SUCCESS);
        REQUIRE(fqGroupedGemmDescDestroy(dead_gd) == FQ_STATUS_SUCCESS);
        REQUIRE(fqPlanCreate(&plan, h, d, in, out) == FQ_STATUS_SUCCESS);
        REQUIRE(fqPlanCreate(&dead_plan, h, d, in, out) == FQ_STATUS_SUCCESS);
        REQUIRE(fqPlanDestroy(dead_plan) == FQ_STATUS_SUCCESS);
        for (size_t bytes : {size_t(24), size_t(32), size_t(48), size_t(56), size_t(160), size_t(192)})
            for (int i = 0; i < 4; ++i) holds.push_back(::operator new(bytes));
    }
    ~World() {
        fqPlanDestroy(plan);
        fqTensorLayoutDestroy(lb);
        fqTensorLayoutDestroy(la);
        fqGroupedGemmDescDestroy(gd);
        fqTensorLayoutDestroy(out);
        fqTensorLayoutDestroy(in);
        fqQuantDescDestroy(d);
        fqDestroy(h);
        for (void* p : holds) ::operator delete(p);
    }
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    // The valid problem's GROUP_SIZE 32 is PER_GROUP's: a case that switches to another scheme unsets it, unless
    // the case set GROUP_SIZE itself (docs/spec.md §3.4 refuses it elsewhere).
    void set(int32_t attr, int32_t v) {
        REQUIRE(fqQuantDescSetAttribute(d, attr, &v, 4) == FQ_STATUS_SUCCESS);
        if (attr == FQ_QUANT_DESC_GROUP_SIZE) world_group = false;
        if (attr == FQ_QUANT_DESC_SCHEME && v != FQ_SCHEME_PER_GROUP && world_group) {
            const int32_t unset = 0;
            REQUIRE(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GROUP_SIZE, &unset, 4) == FQ_STATUS_SUCCESS);
        }
    }
    bool world_group = false;
    void gset(int32_t attr, int32_t v) { REQUIRE(fqGroupedGemmDescSetAttribute(gd, attr, &v, 4) == FQ_STATUS_SUCCESS); }
    void gsetp(int32_t attr, const void* v) {
        REQUIRE(fqGroupedGemmDescSetAttribute(gd, attr, &v, sizeof v) == FQ_STATUS_SUCCESS);
    }
    // Asks for the columnwise output only, into the guarded columnwise buffers.
    void columnwise() {
        set(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE);
        setp(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, col_values.p());
        setp(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, col_scales.p());
    }
    // A valid problem the host backend does not run: BLOCK_2D over a MASKED MoE layout of 2 experts.
    void unsupported_on_host() {
        set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_BLOCK_2D);
        set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED);
        set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2);
        setp(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
    }
    // The descriptor's output type and the output layout's together (so only the rule under test breaks).
    void output_type(int32_t t) { set(FQ_QUANT_DESC_OUTPUT_TYPE, t); set_layout(out, FQ_TENSOR_LAYOUT_TYPE, t); }
    void setf(int32_t attr, float v) { REQUIRE(fqQuantDescSetAttribute(d, attr, &v, 4) == FQ_STATUS_SUCCESS); }
    void setp(int32_t attr, const void* v) { REQUIRE(fqQuantDescSetAttribute(d, attr, &v, sizeof v) == FQ_STATUS_SUCCESS); }
    void set_layout(fqTensorLayout_t l, int32_t attr, int64_t v) {
        if (attr == FQ_TENSOR_LAYOUT_TYPE) {
            const int32_t t = int32_t(v);
            REQUIRE(fqTensorLayoutSetAttribute(l, attr, &t, 4) == FQ_STATUS_SUCCESS);
        } else {
            REQUIRE(fqTensorLayoutSetAttribute(l, attr, &v, 8) == FQ_STATUS_SUCCESS);
        }
    }

    // Every attribute of every live object, as bytes: a failing call must leave this unchanged.
    std::vector<uint8_t> snapshot() const {
        std::vector<uint8_t> s;
        auto grab = [&](auto get, int32_t n) {
            for (int32_t a = 0; a < n; ++a) {
                uint8_t b[8] = {};
                size_t w = 0;
                const fqStatus_t st = get(a, b, &w);
                s.push_back(uint8_t(st));
                s.insert(s.end(), b, b + (st == FQ_STATUS_SUCCESS ? w : 0));
            }
        };
        grab([&](int32_t a, uint8_t* b, size_t* w) { return fqHandleGetAttribute(h, a, b, a <= FQ_HANDLE_WIDE_TILE_MIN ? 4 : 0, w); }, 7);
        grab([&](int32_t a, uint8_t* b, size_t* w) {
            size_t need = 0;
            fqQuantDescGetAttribute(d, a, nullptr, 0, &need);
            return fqQuantDescGetAttribute(d, a, b, need, w);
        }, 31);
        grab([&](int32_t a, uint8_t* b, size_t* w) {
            size_t need = 0;
            fqGroupedGemmDescGetAttribute(gd, a, nullptr, 0, &need);
            return fqGroupedGemmDescGetAttribute(gd, a, b, need, w);
        }, 8);
        for (fqTensorLayout_t l : {in, out, la, lb})
            grab([&](int32_t a, uint8_t* b, size_t* w) { return fqTensorLayoutGetAttribute(l, a, b, a == 0 ? 4 : 8, w); }, 4);
        return s;
    }
};

// The ways an object argument is wrong.
enum class Bad { Null, Destroyed, Foreign, Wild };
const Bad kBadObjects[] = {Bad::Null, Bad::Destroyed, Bad::Foreign, Bad::Wild};
const char* bad_name(Bad b) {
    switch (b) {
        case Bad::Null: return "NULL";
        case Bad::Destroyed: return "destroyed";
        case Bad::Foreign: return "an object of another kind";
        case Bad::Wild: return "a pointer that was never an object";
    }
    return "?";
}
fqHandle_t bad_handle(World& w, Bad b) {
    switch (b) {
        case Bad::Null: return nullptr;
        case Bad::Destroyed: return w.dead_h;
        case Bad::Foreign: return reinterpret_cast<fqHandle_t>(w.d);
        case Bad::Wild: return reinterpret_cast<fqHandle_t>(&w.wild);
    }
    return nullptr;
}
fqQuantDesc_t bad_desc(World& w, Bad b) {
    switch (b) {
        case Bad::Null: return nullptr;
        case Bad::Destroyed: return w.dead_d;
        case Bad::Foreign: return reinterpret_cast<fqQuantDesc_t>(w.in);
        case Bad::Wild: return reinterpret_cast<fqQuantDesc_t>(&w.wild);
    }
    return nullptr;
}
fqGroupedGemmDesc_t bad_gemm_desc(World& w, Bad b) {
    switch (b) {
        case Bad::Null: return nullptr;
        case Bad::Destroyed: return w.dead_gd;
        case Bad::Foreign: return reinterpret_cast<fqGroupedGemmDesc_t>(w.d);
        case Bad::Wild: return reinterpret_cast<fqGroupedGemmDesc_t>(&w.wild);
    }
    return nullptr;
}
fqPlan_t bad_plan(World& w, Bad b) {
    switch (b) {
        case Bad::Null: return nullptr;
        case Bad::Destroyed: return w.dead_plan;
        case Bad::Foreign: return reinterpret_cast<fqPlan_t>(w.d);
        case Bad::Wild: return reinterpret_cast<fqPlan_t>(&w.wild);
    }
    return nullptr;
}
fqTensorLayout_t bad_layout(World& w, Bad b) {
    switch (b) {
        case Bad::Null: return nullptr;
        case Bad::Destroyed: return w.dead_l;
        case Bad::Foreign: return reinterpret_cast<fqTensorLayout_t>(w.h);
        case Bad::Wild: return reinterpret_cast<fqTensorLayout_t>(&w.wild);
    }
    return nullptr;
}

struct Case {
    std::string fn, arg, how;
    std::vector<fqStatus_t> want;      // the accepted statuses (more than one only where the build decides)
    std::string names;                 // what the message must contain (failures)
    std::function<fqStatus_t(World&)> call;
    std::function<void(World&)> setup;       // before the snapshot: builds the wrong combination
    std::function<bool(World&)> after;       // extra check of what was written
    bool sets_message = true;                // false for fqGetStatusString, which keeps the thread's message
    // Where a call may write other than the valid problem's extents (an output at an odd address, fewer rows,
    // another scale type): the bytes values, scales and repacked get, so that their guards start right
    // after the last byte the call may write.
    struct Fit {
        std::optional<size_t> values, scales, repacked;
    } fit;
};

// All arguments of fqQuantize, valid by default; a case spoils one.
struct QArgs {
    fqHandle_t h;
    fqQuantDesc_t d;
    fqTensorLayout_t in;
    const void* x;
    fqTensorLayout_t out;
    void* y;
    void* s;
    size_t sbytes;
    void* ws;
    size_t wsbytes;
    fqStream_t stream;
    fqPlan_t* plan;  // where the plan goes when the call runs as fqPlanCreate + fqPlanExecute; NULL: fqQuantize
};
QArgs valid_args(World& w) {
    return QArgs{w.h, w.d, w.in, w.x.data(), w.out, w.values.p(), w.scales.p(), size_t(kScaleBytes), nullptr, 0, nullptr,
                 w.via_plan ? reinterpret_cast<fqPlan_t*>(w.obj.p()) : nullptr};
}
// fqQuantize, or the same problem as a plan created into *a.plan and executed once (run_case destroys it).
fqStatus_t quantize(const QArgs& a) {
    if (!a.plan) return fqQuantize(a.h, a.d, a.in, a.x, a.out, a.y, a.s, a.sbytes, a.ws, a.wsbytes, a.stream);
    const fqStatus_t created = fqPlanCreate(a.plan, a.h, a.d, a.in, a.out);
    if (created != FQ_STATUS_SUCCESS) return created;
    return fqPlanExecute(*a.plan, a.x, a.y, a.s, a.sbytes, a.ws, a.wsbytes, a.stream);
}

// ---- The attribute tables, as the header documents them ----------------------------------------------

enum class T { I32, I64, F32, Ptr };
size_t bytes_of(T t) { return t == T::I32 || t == T::F32 ? 4 : (t == T::I64 ? 8 : sizeof(void*)); }

struct AttrSpec {
    int32_t id;
    const char* name;
    T type;
    int64_t lo, hi;  // accepted integer values
    bool writable = true;
};

#define FQ_ATTR(ID, ...) AttrSpec{ID, #ID, __VA_ARGS__}
const AttrSpec kDesc[] = {
    FQ_ATTR(FQ_QUANT_DESC_ACTIVATION, T::I32, 0, FQ_ACTIVATION_SWIGLU_OAI),
    FQ_ATTR(FQ_QUANT_DESC_GATE_LAYOUT, T::I32, 0, FQ_GATE_LAYOUT_BLOCK_INTERLEAVED),
    FQ_ATTR(FQ_QUANT_DESC_GATE_ORDER, T::I32, 0, FQ_GATE_ORDER_UP_FIRST),
    FQ_ATTR(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, T::I32, 32, 1 << 20),
    FQ_ATTR(FQ_QUANT_DESC_INTERMEDIATE_ROUNDING, T::I32, 0, FQ_ROUNDING_ROUND_BOTH),
    FQ_ATTR(FQ_QUANT_DESC_SCHEME, T::I32, 0, FQ_SCHEME_NVFP4),
    FQ_ATTR(FQ_QUANT_DESC_GROUP_SIZE, T::I32, 0, 1 << 20),
    FQ_ATTR(FQ_QUANT_DESC_OUTPUT_TYPE, T::I32, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP4_E2M1),
    FQ_ATTR(FQ_QUANT_DESC_SCALE_TYPE, T::I32, 0, FQ_TYPE_E8M0),
    FQ_ATTR(FQ_QUANT_DESC_SCALE_LAYOUT, T::I32, 0, FQ_SCALE_LAYOUT_PACKED_UE8M0),
    FQ_ATTR(FQ_QUANT_DESC_SCALE_ROUNDING, T::I32, 0, FQ_SCALE_ROUNDING_POW2_CEIL),
    FQ_ATTR(FQ_QUANT_DESC_MX_SCALE_RULE, T::I32, 0, FQ_MX_SCALE_RULE_FLOOR),
    FQ_ATTR(FQ_QUANT_DESC_SCALE_APPLY, T::I32, 0, FQ_SCALE_APPLY_MULTIPLY_RECIPROCAL),
    FQ_ATTR(FQ_QUANT_DESC_QMAX, T::F32, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_MIN_SCALE, T::F32, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_SWIGLU_ALPHA, T::F32, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_SWIGLU_BETA, T::F32, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_SWIGLU_LIMIT, T::F32, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_STATIC_SCALE_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_SCALE_UB_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_ROW_PROB_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_MOE_LAYOUT, T::I32, 0, FQ_MOE_LAYOUT_MASKED),
    FQ_ATTR(FQ_QUANT_DESC_MOE_NUM_EXPERTS, T::I32, 0, 1 << 20),
    FQ_ATTR(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_MOE_COUNTS_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_OUTPUTS, T::I32, 0, FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE),
    FQ_ATTR(FQ_QUANT_DESC_COLUMNWISE_BLOCK, T::I32, 32, 128),
    FQ_ATTR(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, T::I32, 0, 1),
    FQ_ATTR(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, T::Ptr, 0, 0),
};
const AttrSpec kHandle[] = {
    FQ_ATTR(FQ_HANDLE_BACKEND, T::I32, 0, 0, false),
    FQ_ATTR(FQ_HANDLE_DEVICE, T::I32, 0, 0, false),
    FQ_ATTR(FQ_HANDLE_ARCH, T::I32, 0, 0, false),
    FQ_ATTR(FQ_HANDLE_SM_COUNT, T::I32, 0, 0, false),
    FQ_ATTR(FQ_HANDLE_ALLOW_PDL, T::I32, 0, 1),
    FQ_ATTR(FQ_HANDLE_VARIANT, T::I32, -1, 0),  // the host backend has one variant
    FQ_ATTR(FQ_HANDLE_WIDE_TILE_MIN, T::I32, -1, INT32_MAX),
};
const AttrSpec kLayout[] = {
    FQ_ATTR(FQ_TENSOR_LAYOUT_TYPE, T::I32, 0, FQ_TYPE_INT32),
    FQ_ATTR(FQ_TENSOR_LAYOUT_ROWS, T::I64, 0, INT64_MAX),
    FQ_ATTR(FQ_TENSOR_LAYOUT_COLS, T::I64, 1, INT64_MAX),
    FQ_ATTR(FQ_TENSOR_LAYOUT_LD, T::I64, 1, INT64_MAX),
};
const AttrSpec kGemm[] = {
    FQ_ATTR(FQ_GEMM_DESC_NUM_GROUPS, T::I32, 1, 1 << 20),
    FQ_ATTR(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_GEMM_DESC_GROUP_COUNTS_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_GEMM_DESC_ALPHA_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_GEMM_DESC_A_SCALE_LAYOUT, T::I32, FQ_SCALE_LAYOUT_COL_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR_TMA),
    FQ_ATTR(FQ_GEMM_DESC_C_OUTPUT_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_GEMM_DESC_D_OUTPUT_POINTER, T::Ptr, 0, 0),
    FQ_ATTR(FQ_GEMM_DESC_QUANTIZE, T::I32, 0, 1),
};
#undef FQ_ATTR

const int32_t kUnknownIds[] = {-1, 1000, INT32_MIN, INT32_MAX};

// Integer values just outside [lo, hi] and at the type's extremes, each outside the range.
std::vector<int64_t> outside(const AttrSpec& a) {
    const int64_t tmin = a.type == T::I32 ? INT32_MIN : INT64_MIN, tmax = a.type == T::I32 ? INT32_MAX : INT64_MAX;
    std::set<int64_t> v;
    if (a.lo > tmin) { v.insert(a.lo - 1); v.insert(tmin); }
    if (a.hi < tmax) { v.insert(a.hi + 1); v.insert(tmax); }
    return {v.begin(), v.end()};
}

// Float values each float attribute refuses (docs/spec.md §3.4: finite; QMAX, MIN_SCALE >= 0; LIMIT > 0 or +inf).
std::vector<float> refused_floats(int32_t id) {
    std::vector<float> v = {NAN, -NAN, -INFINITY};
    if (id != FQ_QUANT_DESC_SWIGLU_LIMIT) v.push_back(INFINITY);
    if (id == FQ_QUANT_DESC_QMAX || id == FQ_QUANT_DESC_MIN_SCALE) { v.push_back(-1.0f); v.push_back(-FLT_MIN); }
    if (id == FQ_QUANT_DESC_QMAX) { v.push_back(1e-45f); v.push_back(FLT_MIN / 2); }  // subnormal: not a normal fp32
    if (id == FQ_QUANT_DESC_SWIGLU_LIMIT) { v.push_back(0.0f); v.push_back(-7.0f); }
    return v;
}

std::string str(int64_t v) { return std::to_string(v); }
std::string strf(float f) { std::ostringstream o; o << f; return o.str(); }

// Wrong-size values of an attribute: 0, one byte short, one byte over, 2 x, SIZE_MAX.
std::vector<size_t> wrong_sizes(T t) {
    const size_t n = bytes_of(t);
    std::set<size_t> v = {0, n - 1, n + 1, 2 * n, SIZE_MAX};
    if (t == T::Ptr) v.insert(4);
    return {v.begin(), v.end()};
}

// ---- The cases ------------------------------------------------------------------------------------

using S = fqStatus_t;
constexpr S OK = FQ_STATUS_SUCCESS, INVALID = FQ_STATUS_INVALID_VALUE, NULLP = FQ_STATUS_NULL_POINTER,
            HANDLE = FQ_STATUS_INVALID_HANDLE, UNSUPPORTED = FQ_STATUS_NOT_SUPPORTED, MISALIGNED = FQ_STATUS_MISALIGNED,
            SMALL = FQ_STATUS_INSUFFICIENT_BUFFER;

struct Cases {
    std::vector<Case> all;
    Case& add(std::string fn, std::string arg, std::string how, std::vector<S> want, std::string names,
              std::function<S(World&)> call) {
        all.push_back(Case{std::move(fn), std::move(arg), std::move(how), std::move(want), std::move(names), std::move(call)});
        return all.back();
    }
};

void status_and_version_cases(Cases& c) {
    for (int32_t s : {-1, 12, 100, INT32_MIN, INT32_MAX})
        c.add("fqGetStatusString", "status", "unknown value " + str(s), {OK}, "", [s](World&) {
             const char* name = fqGetStatusString(s);
             return name && std::string(name) == "FQ_STATUS_UNKNOWN" ? OK : FQ_STATUS_INTERNAL_ERROR;
         }).sets_message = false;
}

void handle_cases(Cases& c) {
    c.add("fqCreate", "handle", "NULL", {NULLP}, "handle", [](World&) { return fqCreate(nullptr, FQ_BACKEND_HOST, -1); });
    for (int32_t b : {-1, 2, 100, INT32_MIN, INT32_MAX})
        c.add("fqCreate", "backend", str(b), {INVALID}, "backend", [b](World& w) {
             return fqCreate(reinterpret_cast<fqHandle_t*>(w.obj.p()), b, -1);
         }).after = [](World& w) { return w.obj.all_zero(); };
    for (int32_t dev : {-2, 1, 2, INT32_MIN, INT32_MAX})
        c.add("fqCreate", "device", "host backend, device " + str(dev), {INVALID}, "device", [dev](World& w) {
             return fqCreate(reinterpret_cast<fqHandle_t*>(w.obj.p()), FQ_BACKEND_HOST, dev);
         }).after = [](World& w) { return w.obj.all_zero(); };
    for (int32_t dev : {-2, -100, INT32_MIN})
        c.add("fqCreate", "device", "CUDA backend, device " + str(dev), {INVALID}, "device", [dev](World& w) {
             return fqCreate(reinterpret_cast<fqHandle_t*>(w.obj.p()), FQ_BACKEND_CUDA, dev);
         }).after = [](World& w) { return w.obj.all_zero(); };
    // No such device: NO_DEVICE without CUDA (or without a GPU), INVALID_VALUE naming the ordinal with one.
    c.add("fqCreate", "device", "CUDA backend, ordinal INT32_MAX", {INVALID, FQ_STATUS_NO_DEVICE}, "", [](World& w) {
         return fqCreate(reinterpret_cast<fqHandle_t*>(w.obj.p()), FQ_BACKEND_CUDA, INT32_MAX);
     }).after = [](World& w) { return w.obj.all_zero(); };

    for (Bad b : kBadObjects) {
        c.add("fqDestroy", "handle", bad_name(b), {b == Bad::Null ? OK : HANDLE}, "handle",
              [b](World& w) { return fqDestroy(bad_handle(w, b)); });
        c.add("fqHandleSetAttribute", "handle", bad_name(b), {HANDLE}, "handle", [b](World& w) {
            const int32_t v = 1;
            return fqHandleSetAttribute(bad_handle(w, b), FQ_HANDLE_ALLOW_PDL, &v, 4);
        });
        c.add("fqHandleGetAttribute", "handle", bad_name(b), {HANDLE}, "handle", [b](World& w) {
            return fqHandleGetAttribute(bad_handle(w, b), FQ_HANDLE_BACKEND, w.attr.p(), 4, reinterpret_cast<size_t*>(w.written.p()));
        });
        c.add("fqGetVariantCount", "handle", bad_name(b), {HANDLE}, "handle", [b](World& w) {
            return fqGetVariantCount(bad_handle(w, b), reinterpret_cast<int32_t*>(w.count.p()));
        });
        c.add("fqGetVariantName", "handle", bad_name(b), {HANDLE}, "handle", [b](World& w) {
            return fqGetVariantName(bad_handle(w, b), 0, reinterpret_cast<char*>(w.name.p()), w.name.size());
        });
    }
    for (int32_t id : kUnknownIds) {
        c.add("fqHandleSetAttribute", "attr", "unknown id " + str(id), {INVALID}, "attr", [id](World& w) {
            const int32_t v = 0;
            return fqHandleSetAttribute(w.h, id, &v, 4);
        });
        c.add("fqHandleGetAttribute", "attr", "unknown id " + str(id), {INVALID}, "attr", [id](World& w) {
            return fqHandleGetAttribute(w.h, id, w.attr.p(), 4, reinterpret_cast<size_t*>(w.written.p()));
        });
    }
    c.add("fqHandleSetAttribute", "attr", "unknown id 7 (one past the last)", {INVALID}, "attr", [](World& w) {
        const int32_t v = 0;
        return fqHandleSetAttribute(w.h, 7, &v, 4);
    });
    for (const AttrSpec& a : kHandle) {
        const int32_t id = a.id;
        const std::string n = a.name;
        if (!a.writable) {
            c.add("fqHandleSetAttribute", "attr", n + " is read-only", {INVALID}, n, [id](World& w) {
                const int32_t v = 0;
                return fqHandleSetAttribute(w.h, id, &v, 4);
            });
        } else {
            c.add("fqHandleSetAttribute", "buf", "NULL for " + n, {NULLP}, "buf",
                  [id](World& w) { return fqHandleSetAttribute(w.h, id, nullptr, 4); });
            for (size_t sz : wrong_sizes(a.type))
                c.add("fqHandleSetAttribute", "sizeInBytes", str(int64_t(sz)) + " for " + n, {INVALID}, "sizeInBytes", [id, sz](World& w) {
                    const int64_t v = 0;
                    return fqHandleSetAttribute(w.h, id, &v, sz);
                });
            for (int64_t v : outside(a))
                c.add("fqHandleSetAttribute", "buf", n + " = " + str(v), {INVALID}, n, [id, v](World& w) {
                    const int32_t v32 = int32_t(v);
                    return fqHandleSetAttribute(w.h, id, &v32, 4);
                });
        }
        c.add("fqHandleGetAttribute", "buf", "NULL with a size for " + n, {NULLP}, "buf", [id](World& w) {
            return fqHandleGetAttribute(w.h, id, nullptr, 4, reinterpret_cast<size_t*>(w.written.p()));
        });
        for (size_t sz : wrong_sizes(a.type))
            c.add("fqHandleGetAttribute", "sizeInBytes", str(int64_t(sz)) + " for " + n, {INVALID}, "sizeInBytes", [id, sz](World& w) {
                return fqHandleGetAttribute(w.h, id, w.attr.p(), sz, reinterpret_cast<size_t*>(w.written.p()));
            });
        c.add("fqHandleGetAttribute", "sizeWritten", "NULL in a size query of " + n, {NULLP}, "sizeWritten",
              [id](World& w) { return fqHandleGetAttribute(w.h, id, nullptr, 0, nullptr); });
        c.add("fqHandleGetAttribute", "sizeWritten", "NULL beside a good buffer of " + n + " (allowed)", {OK}, "",
              [id](World& w) { return fqHandleGetAttribute(w.h, id, w.attr.p(), 4, nullptr); })
            .after = [](World& w) { return w.attr.untouched_from(4); };
    }
    for (int32_t i : {-1, 1, 2, INT32_MIN, INT32_MAX})
        c.add("fqGetVariantName", "index", str(i), {INVALID}, "index", [i](World& w) {
            return fqGetVariantName(w.h, i, reinterpret_cast<char*>(w.name.p()), w.name.size());
        });
    c.add("fqGetVariantName", "name", "NULL", {NULLP}, "name", [](World& w) { return fqGetVariantName(w.h, 0, nullptr, 64); });
    c.add("fqGetVariantName", "nameCapacity", "0", {INVALID}, "nameCapacity",
          [](World& w) { return fqGetVariantName(w.h, 0, reinterpret_cast<char*>(w.name.p()), 0); });
    for (size_t cap : {size_t(1), size_t(2), size_t(8)})
        c.add("fqGetVariantName", "nameCapacity", str(int64_t(cap)) + ": truncated inside the buffer", {OK}, "",
              [cap](World& w) { return fqGetVariantName(w.h, 0, reinterpret_cast<char*>(w.name.p()), cap); })
            .after = [cap](World& w) {
                return w.name.at(cap - 1) == 0 && w.name.untouched_from(cap) &&
                       std::strlen(reinterpret_cast<char*>(w.name.p())) == cap - 1;
            };
    c.add("fqGetVariantCount", "count", "NULL", {NULLP}, "count", [](World& w) { return fqGetVariantCount(w.h, nullptr); });
}

void layout_cases(Cases& c) {
    auto slot = [](World& w) { return reinterpret_cast<fqTensorLayout_t*>(w.obj.p()); };
    auto zero = [](World& w) { return w.obj.all_zero(); };
    c.add("fqTensorLayoutCreate", "layout", "NULL", {NULLP}, "layout",
          [](World&) { return fqTensorLayoutCreate(nullptr, FQ_TYPE_BF16, 1, 1, 1); });
    for (int32_t t : {-1, 10, 100, INT32_MIN, INT32_MAX})
        c.add("fqTensorLayoutCreate", "dtype", str(t), {INVALID}, "dtype",
              [=](World& w) { return fqTensorLayoutCreate(slot(w), t, 1, 1, 1); }).after = zero;
    for (int64_t r : {int64_t(-1), INT64_MIN})
        c.add("fqTensorLayoutCreate", "rows", str(r), {INVALID}, "rows",
              [=](World& w) { return fqTensorLayoutCreate(slot(w), FQ_TYPE_BF16, r, 8, 8); }).after = zero;
    for (int64_t k : {int64_t(0), int64_t(-1), INT64_MIN})
        c.add("fqTensorLayoutCreate", "cols", str(k), {INVALID}, "cols",
              [=](World& w) { return fqTensorLayoutCreate(slot(w), FQ_TYPE_BF16, 1, k, 8); }).after = zero;
    for (int64_t ld : {int64_t(7), int64_t(0), int64_t(-1), INT64_MIN})
        c.add("fqTensorLayoutCreate", "ld", str(ld) + " < cols 8", {INVALID}, "ld",
              [=](World& w) { return fqTensorLayoutCreate(slot(w), FQ_TYPE_BF16, 1, 8, ld); }).after = zero;
    c.add("fqTensorLayoutCreate", "ld", "odd for FP4", {INVALID}, "ld",
          [=](World& w) { return fqTensorLayoutCreate(slot(w), FQ_TYPE_FP4_E2M1, 2, 3, 3); }).after = zero;
    const struct { int32_t t; int64_t rows, ld; } overflowing[] = {
        {FQ_TYPE_BF16, INT64_MAX, 2}, {FQ_TYPE_BF16, INT64_MAX / 2 + 1, 1}, {FQ_TYPE_FP32, INT64_MAX / 4 + 1, 1},
        {FQ_TYPE_FP8_E4M3FN, INT64_MAX, INT64_MAX}, {FQ_TYPE_INT32, 1LL << 31, 1LL << 31}};
    for (const auto& o : overflowing)
        c.add("fqTensorLayoutCreate", "rows", "rows " + str(o.rows) + " x ld " + str(o.ld) + " bytes overflow", {INVALID}, "overflow",
              [o, slot](World& w) { return fqTensorLayoutCreate(slot(w), o.t, o.rows, 1, o.ld); }).after = zero;

    for (Bad b : kBadObjects) {
        c.add("fqTensorLayoutDestroy", "layout", bad_name(b), {b == Bad::Null ? OK : HANDLE}, "layout",
              [b](World& w) { return fqTensorLayoutDestroy(bad_layout(w, b)); });
        c.add("fqTensorLayoutSetAttribute", "layout", bad_name(b), {HANDLE}, "layout", [b](World& w) {
            const int64_t v = 1;
            return fqTensorLayoutSetAttribute(bad_layout(w, b), FQ_TENSOR_LAYOUT_ROWS, &v, 8);
        });
        c.add("fqTensorLayoutGetAttribute", "layout", bad_name(b), {HANDLE}, "layout", [b](World& w) {
            return fqTensorLayoutGetAttribute(bad_layout(w, b), FQ_TENSOR_LAYOUT_ROWS, w.attr.p(), 8,
                                              reinterpret_cast<size_t*>(w.written.p()));
        });
    }
    for (int32_t id : {-1, 4, 1000, INT32_MIN, INT32_MAX}) {
        c.add("fqTensorLayoutSetAttribute", "attr", "unknown id " + str(id), {INVALID}, "attr", [id](World& w) {
            const int64_t v = 1;
            return fqTensorLayoutSetAttribute(w.in, id, &v, 8);
        });
        c.add("fqTensorLayoutGetAttribute", "attr", "unknown id " + str(id), {INVALID}, "attr", [id](World& w) {
            return fqTensorLayoutGetAttribute(w.in, id, w.attr.p(), 8, reinterpret_cast<size_t*>(w.written.p()));
        });
    }
    for (const AttrSpec& a : kLayout) {
        const int32_t id = a.id;
        const size_t n = bytes_of(a.type);
        const std::string nm = a.name;
        c.add("fqTensorLayoutSetAttribute", "buf", "NULL for " + nm, {NULLP}, "buf",
              [=](World& w) { return fqTensorLayoutSetAttribute(w.in, id, nullptr, n); });
        for (size_t sz : wrong_sizes(a.type))
            c.add("fqTensorLayoutSetAttribute", "sizeInBytes", str(int64_t(sz)) + " for " + nm, {INVALID}, "sizeInBytes", [=](World& w) {
                const int64_t v = 1;
                return fqTensorLayoutSetAttribute(w.in, id, &v, sz);
            });
        for (int64_t v : outside(a))
            c.add("fqTensorLayoutSetAttribute", "buf", nm + " = " + str(v), {INVALID}, nm, [=](World& w) {
                const int32_t v32 = int32_t(v);
                return n == 4 ? fqTensorLayoutSetAttribute(w.in, id, &v32, 4) : fqTensorLayoutSetAttribute(w.in, id, &v, 8);
            });
        c.add("fqTensorLayoutGetAttribute", "buf", "NULL with a size for " + nm, {NULLP}, "buf", [=](World& w) {
            return fqTensorLayoutGetAttribute(w.in, id, nullptr, n, reinterpret_cast<size_t*>(w.written.p()));
        });
        for (size_t sz : wrong_sizes(a.type))
            c.add("fqTensorLayoutGetAttribute", "sizeInBytes", str(int64_t(sz)) + " for " + nm, {INVALID}, "sizeInBytes", [=](World& w) {
                return fqTensorLayoutGetAttribute(w.in, id, w.attr.p(), sz, reinterpret_cast<size_t*>(w.written.p()));
            });
        c.add("fqTensorLayoutGetAttribute", "sizeWritten", "NULL in a size query of " + nm, {NULLP}, "sizeWritten",
              [=](World& w) { return fqTensorLayoutGetAttribute(w.in, id, nullptr, 0, nullptr); });
        c.add("fqTensorLayoutGetAttribute", "sizeWritten", "NULL beside a good buffer of " + nm + " (allowed)", {OK}, "",
              [=](World& w) { return fqTensorLayoutGetAttribute(w.in, id, w.attr.p(), n, nullptr); })
            .after = [n](World& w) { return w.attr.untouched_from(n); };
    }
}

// The cases of a descriptor kind's four functions: create, destroy, set and get over its attribute table.
struct DescFunctions {
    std::string create, destroy, set, get;  // the entry points' names
    std::function<S(void*)> create_call;    // create into the slot (NULL: the NULL case)
    std::function<S(World&, Bad)> destroy_bad;
    std::function<void*(World&, Bad)> bad;  // a wrong object of the kind
    std::function<void*(World&)> live;      // the world's live object of the kind
    std::function<S(void*, int32_t, const void*, size_t)> set_call;
    std::function<S(void*, int32_t, void*, size_t, size_t*)> get_call;
    int32_t first_unknown_id;
};

template <size_t N>
void descriptor_cases(Cases& c, const DescFunctions& f, const AttrSpec (&table)[N]) {
    c.add(f.create, "desc", "NULL", {NULLP}, "desc", [f](World&) { return f.create_call(nullptr); });
    const int32_t first = table[0].id;
    for (Bad b : kBadObjects) {
        c.add(f.destroy, "desc", bad_name(b), {b == Bad::Null ? OK : HANDLE}, "desc",
              [f, b](World& w) { return f.destroy_bad(w, b); });
        c.add(f.set, "desc", bad_name(b), {HANDLE}, "desc", [f, b, first](World& w) {
            const int32_t v = 1;
            return f.set_call(f.bad(w, b), first, &v, 4);
        });
        c.add(f.get, "desc", bad_name(b), {HANDLE}, "desc", [f, b, first](World& w) {
            return f.get_call(f.bad(w, b), first, w.attr.p(), 4, reinterpret_cast<size_t*>(w.written.p()));
        });
    }
    for (int32_t id : {-1, f.first_unknown_id, 1000, INT32_MIN, INT32_MAX}) {
        c.add(f.set, "attr", "unknown id " + str(id), {INVALID}, "attr", [f, id](World& w) {
            const int32_t v = 0;
            return f.set_call(f.live(w), id, &v, 4);
        });
        c.add(f.get, "attr", "unknown id " + str(id), {INVALID}, "attr", [f, id](World& w) {
            return f.get_call(f.live(w), id, w.attr.p(), 4, reinterpret_cast<size_t*>(w.written.p()));
        });
    }
    for (const AttrSpec& a : table) {
        const int32_t id = a.id;
        const size_t n = bytes_of(a.type);
        const std::string nm = a.name;
        c.add(f.set, "buf", "NULL for " + nm, {NULLP}, "buf", [=](World& w) { return f.set_call(f.live(w), id, nullptr, n); });
        for (size_t sz : wrong_sizes(a.type))
            c.add(f.set, "sizeInBytes", str(int64_t(sz)) + " for " + nm, {INVALID}, "sizeInBytes", [=](World& w) {
                const uint64_t v = 0;
                return f.set_call(f.live(w), id, &v, sz);
            });
        if (a.type == T::I32)
            for (int64_t v : outside(a))
                c.add(f.set, "buf", nm + " = " + str(v), {INVALID}, nm, [=](World& w) {
                    const int32_t v32 = int32_t(v);
                    return f.set_call(f.live(w), id, &v32, 4);
                });
        if (a.type == T::F32)
            for (float x : refused_floats(id))
                c.add(f.set, "buf", nm + " = " + strf(x), {INVALID}, nm,
                      [=](World& w) { return f.set_call(f.live(w), id, &x, 4); });
        c.add(f.get, "buf", "NULL with a size for " + nm, {NULLP}, "buf", [=](World& w) {
            return f.get_call(f.live(w), id, nullptr, n, reinterpret_cast<size_t*>(w.written.p()));
        });
        for (size_t sz : wrong_sizes(a.type))
            c.add(f.get, "sizeInBytes", str(int64_t(sz)) + " for " + nm, {INVALID}, "sizeInBytes", [=](World& w) {
                return f.get_call(f.live(w), id, w.attr.p(), sz, reinterpret_cast<size_t*>(w.written.p()));
            });
        c.add(f.get, "sizeWritten", "NULL in a size query of " + nm, {NULLP}, "sizeWritten",
              [=](World& w) { return f.get_call(f.live(w), id, nullptr, 0, nullptr); });
        c.add(f.get, "sizeWritten", "NULL beside a good buffer of " + nm + " (allowed)", {OK}, "",
              [=](World& w) { return f.get_call(f.live(w), id, w.attr.p(), n, nullptr); })
            .after = [n](World& w) { return w.attr.untouched_from(n); };
    }
}

// The four functions of descriptor kind D, named `prefix`Create, ...Destroy, ...SetAttribute, ...GetAttribute.
template <class D>
DescFunctions desc_functions(const std::string& prefix, fqStatus_t (*create)(D*), fqStatus_t (*destroy)(D),
                             fqStatus_t (*set)(D, int32_t, const void*, size_t),
                             fqStatus_t (*get)(D, int32_t, void*, size_t, size_t*), D (*bad)(World&, Bad), D World::*live,
                             int32_t first_unknown_id) {
    DescFunctions f;
    f.create = prefix + "Create", f.destroy = prefix + "Destroy";
    f.set = prefix + "SetAttribute", f.get = prefix + "GetAttribute";
    f.create_call = [create](void* slot) { return create(static_cast<D*>(slot)); };
    f.destroy_bad = [destroy, bad](World& w, Bad b) { return destroy(bad(w, b)); };
    f.bad = [bad](World& w, Bad b) -> void* { return bad(w, b); };
    f.live = [live](World& w) -> void* { return w.*live; };
    f.set_call = [set](void* d, int32_t id, const void* buf, size_t n) { return set(static_cast<D>(d), id, buf, n); };
    f.get_call = [get](void* d, int32_t id, void* buf, size_t n, size_t* w) { return get(static_cast<D>(d), id, buf, n, w); };
    f.first_unknown_id = first_unknown_id;
    return f;
}

void desc_cases(Cases& c) {
    descriptor_cases(c, desc_functions("fqQuantDesc", fqQuantDescCreate, fqQuantDescDestroy, fqQuantDescSetAttribute,
                                       fqQuantDescGetAttribute, bad_desc, &World::d, 31), kDesc);
}

// Descriptor settings that are each valid alone but no valid problem (INVALID_VALUE), or valid with no
// implementation (NOT_SUPPORTED), or a pointer the execution needs (NULL_POINTER). `exec` marks those
// only execution (and the support and workspace queries) can see.
struct Combo {
    const char* how;
    S want;
    const char* names;
    std::function<void(World&)> setup;
    bool exec = false;
};
std::vector<Combo> combos() {
    static float ub = 1.0f;
    return {
        {"group size 48", INVALID, "FQ_QUANT_DESC_GROUP_SIZE", [](World& w) { w.set(FQ_QUANT_DESC_GROUP_SIZE, 48); }},
        {"group size 1", INVALID, "FQ_QUANT_DESC_GROUP_SIZE", [](World& w) { w.set(FQ_QUANT_DESC_GROUP_SIZE, 1); }},
        {"INT8 values for MXFP8", INVALID, "FQ_QUANT_DESC_OUTPUT_TYPE",
         [](World& w) { w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8); w.output_type(FQ_TYPE_INT8); }},
        {"FP4 values for PER_GROUP", INVALID, "FQ_QUANT_DESC_OUTPUT_TYPE", [](World& w) { w.output_type(FQ_TYPE_FP4_E2M1); }},
        {"e8m0 scales without POW2_CEIL", INVALID, "FQ_QUANT_DESC_SCALE_TYPE", [](World& w) { w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0); }},
        {"e8m0 scales for PER_TENSOR_DYNAMIC", INVALID, "FQ_QUANT_DESC_SCALE_TYPE", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
             w.set(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL); }},
        {"bf16 scales", INVALID, "FQ_QUANT_DESC_SCALE_TYPE", [](World& w) { w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_BF16); }},
        {"fp32 scales for MXFP8", INVALID, "FQ_QUANT_DESC_SCALE_TYPE", [](World& w) { w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8); }},
        {"e8m0 scales for NVFP4", INVALID, "FQ_QUANT_DESC_SCALE_TYPE", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4); w.output_type(FQ_TYPE_FP4_E2M1);
             w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0); }},
        {"column-major per-tensor scale", INVALID, "FQ_QUANT_DESC_SCALE_LAYOUT", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC); w.set(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR); }},
        {"swizzled fp32 scales", INVALID, "FQ_QUANT_DESC_SCALE_LAYOUT", [](World& w) { w.set(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4); }},
        {"packed fp32 scales", INVALID, "FQ_QUANT_DESC_SCALE_LAYOUT", [](World& w) { w.set(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_PACKED_UE8M0); }},
        {"packed e4m3 scales (NVFP4)", INVALID, "FQ_QUANT_DESC_SCALE_LAYOUT", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4); w.output_type(FQ_TYPE_FP4_E2M1);
             w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN); w.set(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_PACKED_UE8M0); }},
        {"scale upper bound with INT8", INVALID, "FQ_QUANT_DESC_SCALE_UB_POINTER",
         [](World& w) { w.output_type(FQ_TYPE_INT8); w.setp(FQ_QUANT_DESC_SCALE_UB_POINTER, &ub); }},
        {"qmax above e4m3fn's 448", INVALID, "FQ_QUANT_DESC_QMAX", [](World& w) { w.setf(FQ_QUANT_DESC_QMAX, 449.0f); }},
        {"qmax above INT8's 127", INVALID, "FQ_QUANT_DESC_QMAX",
         [](World& w) { w.output_type(FQ_TYPE_INT8); w.setf(FQ_QUANT_DESC_QMAX, 128.0f); }},
        {"qmax FLT_MAX", INVALID, "FQ_QUANT_DESC_QMAX", [](World& w) { w.setf(FQ_QUANT_DESC_QMAX, FLT_MAX); }},
        // Knobs of other schemes (docs/spec.md §3.3): refused rather than silently ignored.
        {"FLOOR scale rule for PER_GROUP", INVALID, "FQ_QUANT_DESC_MX_SCALE_RULE",
         [](World& w) { w.set(FQ_QUANT_DESC_MX_SCALE_RULE, FQ_MX_SCALE_RULE_FLOOR); }},
        {"global amax for PER_GROUP", INVALID, "FQ_QUANT_DESC_GLOBAL_AMAX_POINTER",
         [](World& w) { w.setp(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, &ub); }},
        {"scale upper bound for MXFP8", INVALID, "FQ_QUANT_DESC_SCALE_UB_POINTER", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
             w.setp(FQ_QUANT_DESC_SCALE_UB_POINTER, &ub); }},
        {"min scale for MXFP8", INVALID, "FQ_QUANT_DESC_MIN_SCALE", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
             w.setf(FQ_QUANT_DESC_MIN_SCALE, 1e-3f); }},
        {"POW2_CEIL scale rounding for MXFP4", INVALID, "FQ_QUANT_DESC_SCALE_ROUNDING", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP4); w.output_type(FQ_TYPE_FP4_E2M1);
             w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0); w.set(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL); }},
        {"qmax for NVFP4", INVALID, "FQ_QUANT_DESC_QMAX", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4); w.output_type(FQ_TYPE_FP4_E2M1);
             w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN); w.setf(FQ_QUANT_DESC_QMAX, 4.0f); }},
        // Attributes a scheme does not use (docs/spec.md §3.4): refused unless they hold the scheme's own value, whichever
        // order they are set in, alone or beside another refused knob.
        {"GROUP_SIZE 128 set under MXFP8 (its groups are 32)", INVALID, "FQ_QUANT_DESC_GROUP_SIZE", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
             w.set(FQ_QUANT_DESC_GROUP_SIZE, 128); }},
        {"GROUP_SIZE 3 set before the scheme MXFP8", INVALID, "FQ_QUANT_DESC_GROUP_SIZE", [](World& w) {
             w.set(FQ_QUANT_DESC_GROUP_SIZE, 3); w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8);
             w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0); }},
        {"GROUP_SIZE 4096 under NVFP4", INVALID, "FQ_QUANT_DESC_GROUP_SIZE", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4); w.output_type(FQ_TYPE_FP4_E2M1);
             w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN); w.set(FQ_QUANT_DESC_GROUP_SIZE, 4096); }},
        {"GROUP_SIZE 32 under NVFP4 (its groups are 16)", INVALID, "NVFP4", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4); w.output_type(FQ_TYPE_FP4_E2M1);
             w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN); w.set(FQ_QUANT_DESC_GROUP_SIZE, 32); }},
        {"GROUP_SIZE 3 under PER_TOKEN", INVALID, "FQ_QUANT_DESC_GROUP_SIZE",
         [](World& w) { w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN); w.set(FQ_QUANT_DESC_GROUP_SIZE, 3); }},
        {"GROUP_SIZE 32 set again under PER_TOKEN", INVALID, "PER_TOKEN", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN); w.set(FQ_QUANT_DESC_GROUP_SIZE, 32); }},
        {"GROUP_SIZE 128 set under PER_TENSOR_DYNAMIC", INVALID, "FQ_QUANT_DESC_GROUP_SIZE", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC); w.set(FQ_QUANT_DESC_GROUP_SIZE, 128); }},
        {"GROUP_SIZE 64 under BLOCK_2D (its tiles are 128)", INVALID, "FQ_QUANT_DESC_GROUP_SIZE",
         [](World& w) { w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_BLOCK_2D); w.set(FQ_QUANT_DESC_GROUP_SIZE, 64); }},
        {"GROUP_SIZE 64 and a min scale under MXFP8", INVALID, "FQ_QUANT_DESC_", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
             w.set(FQ_QUANT_DESC_GROUP_SIZE, 64); w.setf(FQ_QUANT_DESC_MIN_SCALE, 1e-3f); }},
        {"GROUP_SIZE 16 under MXFP4 with the FLOOR rule and a qmax", INVALID, "FQ_QUANT_DESC_", [](World& w) {
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP4); w.output_type(FQ_TYPE_FP4_E2M1);
             w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0); w.set(FQ_QUANT_DESC_MX_SCALE_RULE, FQ_MX_SCALE_RULE_FLOOR);
             w.set(FQ_QUANT_DESC_GROUP_SIZE, 16); w.setf(FQ_QUANT_DESC_QMAX, 4.0f); }},
        // Execution-only rules.
        {"SWIGLU_OAI without a gate", INVALID, "SWIGLU_OAI",
         [](World& w) { w.set(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_NONE); w.set(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SWIGLU_OAI); }, true},
        {"gate block width 48", INVALID, "FQ_QUANT_DESC_GATE_BLOCK_WIDTH", [](World& w) {
             w.set(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_BLOCK_INTERLEAVED); w.set(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, 48); }, true},
        {"gate block width 128 does not divide 64 columns", INVALID, "FQ_QUANT_DESC_GATE_BLOCK_WIDTH", [](World& w) {
             w.set(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_BLOCK_INTERLEAVED); w.set(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, 128); }, true},
        {"no output asked for", INVALID, "FQ_QUANT_DESC_OUTPUTS", [](World& w) { w.set(FQ_QUANT_DESC_OUTPUTS, 0); }, true},
        {"PER_TENSOR_STATIC without its scale", NULLP, "FQ_QUANT_DESC_STATIC_SCALE_POINTER",
         [](World& w) { w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC); }, true},
        {"output type differs from the output layout's", INVALID, "outputLayout",
         [](World& w) { w.set(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP8_E5M2); }, true},
        // MoE (docs/spec.md §5): what needs no pointer is refused by the queries too.
        {"CONTIGUOUS MoE layout with 0 experts", INVALID, "FQ_QUANT_DESC_MOE_NUM_EXPERTS",
         [](World& w) { w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS); }},
        {"MASKED MoE layout with 0 experts", INVALID, "FQ_QUANT_DESC_MOE_NUM_EXPERTS",
         [](World& w) { w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED); }},
        {"MASKED MoE layout: 4 rows are not a multiple of 3 experts", INVALID, "FQ_QUANT_DESC_MOE_NUM_EXPERTS", [](World& w) {
             w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 3);
             w.setp(FQ_QUANT_DESC_MOE_COUNTS_POINTER, w.counts); }},
        {"experts without a MoE layout", INVALID, "FQ_QUANT_DESC_MOE_NUM_EXPERTS",
         [](World& w) { w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2); }},
        {"MoE offsets without a MoE layout", INVALID, "FQ_QUANT_DESC_MOE_OFFSETS_POINTER",
         [](World& w) { w.setp(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, w.offsets); }},
        {"MoE counts without a MoE layout", INVALID, "FQ_QUANT_DESC_MOE_COUNTS_POINTER",
         [](World& w) { w.setp(FQ_QUANT_DESC_MOE_COUNTS_POINTER, w.counts); }},
        {"MoE offsets with the MASKED layout", INVALID, "FQ_QUANT_DESC_MOE_OFFSETS_POINTER", [](World& w) {
             w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2);
             w.setp(FQ_QUANT_DESC_MOE_COUNTS_POINTER, w.counts); w.setp(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, w.offsets); }},
        {"CONTIGUOUS MoE layout without offsets", NULLP, "FQ_QUANT_DESC_MOE_OFFSETS_POINTER", [](World& w) {
             w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2); }, true},
        {"MASKED MoE layout without counts", NULLP, "FQ_QUANT_DESC_MOE_COUNTS_POINTER", [](World& w) {
             w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2); }, true},
        // Columnwise output (docs/spec.md §4).
        {"columnwise output without its values pointer", NULLP, "FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER", [](World& w) {
             w.set(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE);
             w.setp(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, w.col_scales.p()); }, true},
        {"columnwise output without its scale pointer", NULLP, "FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER", [](World& w) {
             w.set(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE);
             w.setp(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, w.col_values.p()); }, true},
        {"columnwise values pointer without columnwise output", INVALID, "FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER",
         [](World& w) { w.setp(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, w.col_values.p()); }, true},
        {"columnwise scale pointer without columnwise output", INVALID, "FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER",
         [](World& w) { w.setp(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, w.col_scales.p()); }, true},
        {"columnwise transpose without columnwise output", INVALID, "FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE",
         [](World& w) { w.set(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, 1); }, true},
        {"columnwise block 128 without columnwise output", INVALID, "FQ_QUANT_DESC_COLUMNWISE_BLOCK",
         [](World& w) { w.set(FQ_QUANT_DESC_COLUMNWISE_BLOCK, 128); }, true},
        {"columnwise block 64", INVALID, "FQ_QUANT_DESC_COLUMNWISE_BLOCK",
         [](World& w) { w.columnwise(); w.set(FQ_QUANT_DESC_COLUMNWISE_BLOCK, 64); }, true},
        {"columnwise block 128 for MXFP8 (its blocks are 32)", INVALID, "FQ_QUANT_DESC_COLUMNWISE_BLOCK", [](World& w) {
             w.columnwise(); w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
             w.set(FQ_QUANT_DESC_COLUMNWISE_BLOCK, 128); }, true},
        {"transposed FP4 columnwise of 3 rows", INVALID, "FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE", [](World& w) {
             w.columnwise(); w.set(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, 1);
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP4); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
             w.output_type(FQ_TYPE_FP4_E2M1);
             w.set_layout(w.in, FQ_TENSOR_LAYOUT_ROWS, 3); w.set_layout(w.out, FQ_TENSOR_LAYOUT_ROWS, 3); }, true},
        {"transposed FP4 columnwise, MASKED max_m 1", INVALID, "FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE", [](World& w) {
             w.columnwise(); w.set(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, 1);
             w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP4); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
             w.output_type(FQ_TYPE_FP4_E2M1);
             w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 4);
             w.setp(FQ_QUANT_DESC_MOE_COUNTS_POINTER, w.counts); }, true},
    };
}

// Layout settings no valid problem has: (how, names, setup).
struct LayoutCombo {
    const char* how;
    const char* names;
    std::function<void(World&)> setup;
};
std::vector<LayoutCombo> layout_combos() {
    return {
        {"FP32 input", "inputLayout", [](World& w) { w.set_layout(w.in, FQ_TENSOR_LAYOUT_TYPE, FQ_TYPE_FP32); }},
        {"FP8 input", "inputLayout", [](World& w) { w.set_layout(w.in, FQ_TENSOR_LAYOUT_TYPE, FQ_TYPE_FP8_E4M3FN); }},
        {"input width not 2 x output width", "inputLayout", [](World& w) { w.set_layout(w.in, FQ_TENSOR_LAYOUT_COLS, 100); }},
        {"input ld < cols", "inputLayout", [](World& w) { w.set_layout(w.in, FQ_TENSOR_LAYOUT_LD, 64); }},
        {"input rows x ld overflow", "inputLayout", [](World& w) {
             w.set_layout(w.in, FQ_TENSOR_LAYOUT_ROWS, INT64_MAX); w.set_layout(w.out, FQ_TENSOR_LAYOUT_ROWS, INT64_MAX); }},
        {"input rows x ld x 2 bytes overflow", "inputLayout", [](World& w) {
             w.set_layout(w.in, FQ_TENSOR_LAYOUT_ROWS, INT64_MAX / 128); w.set_layout(w.out, FQ_TENSOR_LAYOUT_ROWS, INT64_MAX / 128); }},
        {"output rows differ from input rows", "outputLayout", [](World& w) { w.set_layout(w.out, FQ_TENSOR_LAYOUT_ROWS, 3); }},
        {"output type INT8 against an e4m3fn descriptor", "outputLayout",
         [](World& w) { w.set_layout(w.out, FQ_TENSOR_LAYOUT_TYPE, FQ_TYPE_INT8); }},
        {"output ld < cols", "outputLayout", [](World& w) { w.set_layout(w.out, FQ_TENSOR_LAYOUT_LD, 63); }},
        {"odd FP4 output row stride", "outputLayout", [](World& w) {
             w.output_type(FQ_TYPE_FP4_E2M1);
             w.set_layout(w.out, FQ_TENSOR_LAYOUT_LD, 65); }},
        {"output cols x 2 overflows the gated input width", "inputLayout", [](World& w) {
             w.set_layout(w.out, FQ_TENSOR_LAYOUT_ROWS, 1); w.set_layout(w.in, FQ_TENSOR_LAYOUT_ROWS, 1);
             w.set_layout(w.out, FQ_TENSOR_LAYOUT_LD, INT64_MAX / 2 + 2); w.set_layout(w.out, FQ_TENSOR_LAYOUT_COLS, INT64_MAX / 2 + 2); }},
    };
}

void query_cases(Cases& c) {
    // fqGetScaleBufferSize and fqGetScaleBufferInfo share their arguments but for the result.
    using Query = std::function<S(World&, fqQuantDesc_t, int64_t, int64_t, int32_t)>;
    const std::pair<const char*, Query> queries[] = {
        {"fqGetScaleBufferSize", [](World& w, fqQuantDesc_t d, int64_t r, int64_t k, int32_t which) {
             return fqGetScaleBufferSize(d, r, k, which, reinterpret_cast<size_t*>(w.size.p()));
         }},
        {"fqGetScaleBufferInfo", [](World& w, fqQuantDesc_t d, int64_t r, int64_t k, int32_t which) {
             return fqGetScaleBufferInfo(d, r, k, which, FQ_SCALE_INFO_BYTES, reinterpret_cast<int64_t*>(w.value.p()));
         }},
    };
    for (const auto& [fn, q] : queries) {
        const Query query = q;
        for (Bad b : kBadObjects)
            c.add(fn, "desc", bad_name(b), {HANDLE}, "desc", [=](World& w) { return query(w, bad_desc(w, b), 4, 64, FQ_OUTPUT_ROWWISE); });
        for (int64_t r : {int64_t(-1), INT64_MIN})
            c.add(fn, "rows", str(r), {INVALID}, "rows", [=](World& w) { return query(w, w.d, r, 64, FQ_OUTPUT_ROWWISE); });
        for (int64_t k : {int64_t(0), int64_t(-1), INT64_MIN})
            c.add(fn, "cols", str(k), {INVALID}, "cols", [=](World& w) { return query(w, w.d, 4, k, FQ_OUTPUT_ROWWISE); });
        for (int32_t which : {0, 3, -1, 4, INT32_MIN, INT32_MAX})
            c.add(fn, "which", str(which), {INVALID}, "which", [=](World& w) { return query(w, w.d, 4, 64, which); });
        c.add(fn, "which", "FQ_OUTPUT_COLUMNWISE (answers: 64 columns x 1 block of fp32)", {OK}, "",
              [=](World& w) { return query(w, w.d, 4, 64, FQ_OUTPUT_COLUMNWISE); });
        c.add(fn, "which", "FQ_OUTPUT_COLUMNWISE with a columnwise block of 64", {INVALID}, "FQ_QUANT_DESC_COLUMNWISE_BLOCK",
              [=](World& w) { return query(w, w.d, 4, 64, FQ_OUTPUT_COLUMNWISE); })
            .setup = [](World& w) { w.set(FQ_QUANT_DESC_COLUMNWISE_BLOCK, 64); };
        c.add(fn, "which", "FQ_OUTPUT_COLUMNWISE of NVFP4 with a columnwise block of 128", {INVALID}, "FQ_QUANT_DESC_COLUMNWISE_BLOCK",
              [=](World& w) { return query(w, w.d, 4, 64, FQ_OUTPUT_COLUMNWISE); })
            .setup = [](World& w) {
                w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4); w.output_type(FQ_TYPE_FP4_E2M1);
                w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN); w.set(FQ_QUANT_DESC_COLUMNWISE_BLOCK, 128); };
        for (int32_t layout : {FQ_SCALE_LAYOUT_COL_MAJOR, FQ_SCALE_LAYOUT_PACKED_UE8M0})
            c.add(fn, "cols", std::string("columnwise, 0 rows of 2^62 columns: the S_col stride overflows, ") +
                  (layout == FQ_SCALE_LAYOUT_COL_MAJOR ? "COL_MAJOR" : "PACKED_UE8M0"), {INVALID}, "overflow",
                  [=](World& w) { return query(w, w.d, 0, int64_t(1) << 62, FQ_OUTPUT_COLUMNWISE); })
                .setup = [layout](World& w) {  // 4-byte storage elements: fp32, or words of four E8M0
                    if (layout == FQ_SCALE_LAYOUT_PACKED_UE8M0) {
                        w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
                        w.set(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL);
                    }
                    w.set(FQ_QUANT_DESC_SCALE_LAYOUT, layout); };
        c.add(fn, "rows", "MASKED: 5 rows for 2 experts", {INVALID}, "FQ_QUANT_DESC_MOE_NUM_EXPERTS",
              [=](World& w) { return query(w, w.d, 5, 64, FQ_OUTPUT_ROWWISE); })
            .setup = [](World& w) { w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2); };
        c.add(fn, "rows", "MASKED: 2^62 rows of 2 experts, swizzled: blocks overflow", {INVALID}, "overflow",
              [=](World& w) { return query(w, w.d, int64_t(1) << 62, 64, FQ_OUTPUT_ROWWISE); })
            .setup = [](World& w) {
                w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2);
                w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
                w.set(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4); };
        const struct { const char* how; int32_t scheme, layout; int64_t rows, cols; } overflowing[] = {
            {"per-group, INT64_MAX x INT64_MAX", FQ_SCHEME_PER_GROUP, FQ_SCALE_LAYOUT_ROW_MAJOR, INT64_MAX, INT64_MAX},
            {"per-group, 2^40 x 2^40", FQ_SCHEME_PER_GROUP, FQ_SCALE_LAYOUT_ROW_MAJOR, 1LL << 40, 1LL << 40},
            {"per-token, INT64_MAX rows", FQ_SCHEME_PER_TOKEN, FQ_SCALE_LAYOUT_COL_MAJOR, INT64_MAX, 1},
            {"per-token, INT64_MAX / 4 + 1 rows", FQ_SCHEME_PER_TOKEN, FQ_SCALE_LAYOUT_ROW_MAJOR, INT64_MAX / 4 + 1, 1},
            {"TMA padding of INT64_MAX rows", FQ_SCHEME_PER_GROUP, FQ_SCALE_LAYOUT_COL_MAJOR_TMA, INT64_MAX, 1},
            {"TMA padding of INT64_MAX - 1 rows", FQ_SCHEME_PER_TOKEN, FQ_SCALE_LAYOUT_COL_MAJOR_TMA, INT64_MAX - 1, 7},
        };
        for (const auto& o : overflowing)
            c.add(fn, "rows", std::string("overflowing scale extents: ") + o.how, {INVALID}, "overflow", [=](World& w) {
                 return query(w, w.d, o.rows, o.cols, FQ_OUTPUT_ROWWISE);
             }).setup = [o](World& w) { w.set(FQ_QUANT_DESC_SCHEME, o.scheme); w.set(FQ_QUANT_DESC_SCALE_LAYOUT, o.layout); };
        c.add(fn, "cols", "overflowing scale extents: swizzled, INT64_MAX columns of MXFP8", {INVALID}, "overflow",
              [=](World& w) { return query(w, w.d, INT64_MAX / 2, INT64_MAX, FQ_OUTPUT_ROWWISE); })
            .setup = [](World& w) {
                w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
                w.set(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4); };
        for (const Combo& k : combos())
            if (!k.exec) c.add(fn, "desc", k.how, {k.want}, k.names, [=](World& w) { return query(w, w.d, 4, 64, FQ_OUTPUT_ROWWISE); }).setup = k.setup;
    }
    c.add("fqGetScaleBufferSize", "sizeInBytes", "NULL", {NULLP}, "sizeInBytes",
          [](World& w) { return fqGetScaleBufferSize(w.d, 4, 64, FQ_OUTPUT_ROWWISE, nullptr); });
    c.add("fqGetScaleBufferInfo", "value", "NULL", {NULLP}, "value",
          [](World& w) { return fqGetScaleBufferInfo(w.d, 4, 64, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BYTES, nullptr); });
    for (int32_t info : {-1, 11, 1000, INT32_MIN, INT32_MAX})
        c.add("fqGetScaleBufferInfo", "info", str(info), {INVALID}, "info", [info](World& w) {
            return fqGetScaleBufferInfo(w.d, 4, 64, FQ_OUTPUT_ROWWISE, info, reinterpret_cast<int64_t*>(w.value.p()));
        });

    // fqGetWorkspaceSize and fqQuerySupport: the four objects, then every combination fqQuantize refuses.
    using Problem = std::function<S(World&, fqHandle_t, fqQuantDesc_t, fqTensorLayout_t, fqTensorLayout_t)>;
    const std::pair<const char*, Problem> problems[] = {
        {"fqGetWorkspaceSize", [](World& w, fqHandle_t h, fqQuantDesc_t d, fqTensorLayout_t i, fqTensorLayout_t o) {
             return fqGetWorkspaceSize(h, d, i, o, reinterpret_cast<size_t*>(w.size.p()));
         }},
        {"fqQuerySupport", [](World& w, fqHandle_t h, fqQuantDesc_t d, fqTensorLayout_t i, fqTensorLayout_t o) {
             return fqQuerySupport(h, d, i, o, reinterpret_cast<char*>(w.name.p()), w.name.size());
         }},
    };
    for (const auto& [fn, p] : problems) {
        const Problem problem = p;
        for (Bad b : kBadObjects) {
            c.add(fn, "handle", bad_name(b), {HANDLE}, "handle", [=](World& w) { return problem(w, bad_handle(w, b), w.d, w.in, w.out); });
            c.add(fn, "desc", bad_name(b), {HANDLE}, "desc", [=](World& w) { return problem(w, w.h, bad_desc(w, b), w.in, w.out); });
            c.add(fn, "input", bad_name(b), {HANDLE}, "inputLayout", [=](World& w) { return problem(w, w.h, w.d, bad_layout(w, b), w.out); });
            c.add(fn, "output", bad_name(b), {HANDLE}, "outputLayout", [=](World& w) { return problem(w, w.h, w.d, w.in, bad_layout(w, b)); });
        }
        c.add(fn, "input", "the output layout twice", {INVALID}, "inputLayout", [=](World& w) { return problem(w, w.h, w.d, w.out, w.out); });
        c.add(fn, "output", "the input layout twice", {INVALID}, "outputLayout", [=](World& w) { return problem(w, w.h, w.d, w.in, w.in); });
        for (const Combo& k : combos())
            c.add(fn, "desc", k.how, {k.want}, k.names, [=](World& w) { return problem(w, w.h, w.d, w.in, w.out); }).setup = k.setup;
        for (const LayoutCombo& k : layout_combos())
            c.add(fn, std::string(k.names) == "inputLayout" ? "input" : "output", k.how, {INVALID}, k.names,
                  [=](World& w) { return problem(w, w.h, w.d, w.in, w.out); }).setup = k.setup;
    }
    c.add("fqGetWorkspaceSize", "sizeInBytes", "NULL", {NULLP}, "sizeInBytes",
          [](World& w) { return fqGetWorkspaceSize(w.h, w.d, w.in, w.out, nullptr); });
    c.add("fqQuerySupport", "variantName", "NULL (allowed)", {OK}, "",
          [](World& w) { return fqQuerySupport(w.h, w.d, w.in, w.out, nullptr, 64); });
    c.add("fqQuerySupport", "nameCapacity", "0: nothing written", {OK}, "",
          [](World& w) { return fqQuerySupport(w.h, w.d, w.in, w.out, reinterpret_cast<char*>(w.name.p()), 0); })
        .after = [](World& w) { return w.name.untouched_from(0); };
    for (size_t cap : {size_t(1), size_t(5), size_t(9)})
        c.add("fqQuerySupport", "nameCapacity", str(int64_t(cap)) + ": truncated inside the buffer", {OK}, "",
              [cap](World& w) { return fqQuerySupport(w.h, w.d, w.in, w.out, reinterpret_cast<char*>(w.name.p()), cap); })
            .after = [cap](World& w) {
                return std::strlen(reinterpret_cast<char*>(w.name.p())) == cap - 1 && w.name.untouched_from(cap);
            };
    c.add("fqQuerySupport", "handle", "pinned variant refuses the problem", {UNSUPPORTED}, "FQ_HANDLE_VARIANT",
          [](World& w) { return fqQuerySupport(w.h, w.d, w.in, w.out, reinterpret_cast<char*>(w.name.p()), w.name.size()); })
        .setup = [](World& w) {
            const int32_t v = 0;
            REQUIRE(fqHandleSetAttribute(w.h, FQ_HANDLE_VARIANT, &v, 4) == FQ_STATUS_SUCCESS);
            w.unsupported_on_host();
        };
}

// The rowwise output and scale pointers of an execution (QArgs, GArgs: members y and s), through its case adder.
template <class Args, class Add>
void output_cases(Add& add) {
    add("output", "NULL", {NULLP}, "output:", [](World&, Args& a) { a.y = nullptr; }, nullptr);
    Case& odd_output = add("output", "odd address (bytes: allowed; 256 values after 1 untouched byte)", {OK}, "",
                           [](World&, Args& a) { a.y = static_cast<uint8_t*>(a.y) + 1; }, nullptr);
    odd_output.fit.values = size_t(kRows * kCols) + 1;
    odd_output.after = [](World& w) { return w.values.at(0) == kPoison && w.values.at(size_t(kRows * kCols)) != kPoison; };
    add("scales", "NULL", {NULLP}, "scales", [](World&, Args& a) { a.s = nullptr; }, nullptr);
    // Misaligned by 1-3 bytes: refused before anything is written (a write would also hit the guard).
    for (size_t off : {size_t(1), size_t(2), size_t(3)})
        add("scales", "fp32 scales at +" + str(int64_t(off)), {MISALIGNED}, "scales",
            [off](World&, Args& a) { a.s = static_cast<uint8_t*>(a.s) + off; }, nullptr);
}

void quantize_cases(Cases& c) {
    // `spoil` changes the arguments; `setup` (run before the snapshot) changes the descriptor or layouts.
    using Spoil = std::function<void(World&, QArgs&)>;
    using Setup = std::function<void(World&)>;
    auto q = [&c](std::string arg, std::string how, std::vector<S> want, std::string names, Spoil spoil,
                  Setup setup = nullptr) -> Case& {
        Case& k = c.add("fqQuantize", std::move(arg), std::move(how), std::move(want), std::move(names), [spoil](World& w) {
            QArgs a = valid_args(w);
            spoil(w, a);
            return quantize(a);
        });
        k.setup = std::move(setup);
        return k;
    };
    const Spoil none = [](World&, QArgs&) {};
    q("handle", "valid problem (control): the last value and scale byte written, the guards right after them", {OK}, "", none)
        .after = [](World& w) {
            return w.values.at(size_t(kRows * kCols) - 1) != kPoison && w.scales.at(size_t(kScaleBytes) - 1) != kPoison;
        };
    for (Bad b : kBadObjects) {
        q("handle", bad_name(b), {HANDLE}, "handle", [b](World& w, QArgs& a) { a.h = bad_handle(w, b); });
        q("desc", bad_name(b), {HANDLE}, "desc", [b](World& w, QArgs& a) { a.d = bad_desc(w, b); });
        q("inputLayout", bad_name(b), {HANDLE}, "inputLayout", [b](World& w, QArgs& a) { a.in = bad_layout(w, b); });
        q("outputLayout", bad_name(b), {HANDLE}, "outputLayout", [b](World& w, QArgs& a) { a.out = bad_layout(w, b); });
    }
    q("inputLayout", "the output layout", {INVALID}, "inputLayout", [](World& w, QArgs& a) { a.in = w.out; });
    q("outputLayout", "the input layout", {INVALID}, "outputLayout", [](World& w, QArgs& a) { a.out = w.in; });
    q("input", "NULL", {NULLP}, "input:", [](World&, QArgs& a) { a.x = nullptr; });
    q("input", "odd address", {MISALIGNED}, "input:", [](World&, QArgs& a) { a.x = static_cast<const uint8_t*>(a.x) + 1; });
    q("input", "2-byte aligned, not 16 (allowed)", {OK}, "", [](World&, QArgs& a) { a.x = static_cast<const uint16_t*>(a.x) + 1; });
    output_cases<QArgs>(q);
    Case& odd_e8m0 = q("scales", "E8M0 scales at an odd address (bytes: allowed; 8 scales after 1 untouched byte)", {OK}, "",
                       [](World&, QArgs& a) {
        a.s = static_cast<uint8_t*>(a.s) + 1;
        a.sbytes = 8;
    }, [](World& w) {
        w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
        w.set(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL);
    });
    odd_e8m0.fit.scales = 9;
    odd_e8m0.after = [](World& w) { return w.scales.at(0) == kPoison && w.scales.at(8) != kPoison; };
    for (size_t n : {size_t(0), size_t(1), size_t(kScaleBytes - 1), size_t(kScaleBytes / 2)})
        q("scalesSizeInBytes", str(int64_t(n)) + " bytes, " + str(kScaleBytes) + " needed", {SMALL}, "scalesSizeInBytes",
          [n](World&, QArgs& a) { a.sbytes = n; });
    q("scalesSizeInBytes", "SIZE_MAX (more than needed: allowed)", {OK}, "", [](World&, QArgs& a) { a.sbytes = SIZE_MAX; });
    const Setup tma3 = [](World& w) {  // 3 rows of column-major TMA scales pad to 4: 32 bytes, not 24
        w.set(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
        w.set_layout(w.in, FQ_TENSOR_LAYOUT_ROWS, 3);
        w.set_layout(w.out, FQ_TENSOR_LAYOUT_ROWS, 3);
    };
    q("scalesSizeInBytes", "exactly the TMA-padded size (control; 3 rows of values)", {OK}, "", none, tma3).fit.values =
        size_t(3 * kCols);
    q("scalesSizeInBytes", "the unpadded size of TMA scales", {SMALL}, "scalesSizeInBytes",
      [](World&, QArgs& a) { a.sbytes = 3 * 2 * 4; }, tma3);
    q("workspace", "non-NULL with no variant needing any (allowed)", {OK}, "", [](World& w, QArgs& a) { a.ws = w.attr.p(); a.wsbytes = 16; });
    q("workspaceSizeInBytes", "SIZE_MAX with a NULL workspace (ignored: none needed)", {OK}, "", [](World&, QArgs& a) { a.wsbytes = SIZE_MAX; });
    q("stream", "any value on the host backend (ignored: synchronous)", {OK}, "",
      [](World& w, QArgs& a) { a.stream = reinterpret_cast<fqStream_t>(&w.wild); });
    const Setup zero_rows = [](World& w) {
        w.set_layout(w.in, FQ_TENSOR_LAYOUT_ROWS, 0);
        w.set_layout(w.out, FQ_TENSOR_LAYOUT_ROWS, 0);
    };
    q("input", "NULL with zero rows (allowed: nothing is read)", {OK}, "", [](World&, QArgs& a) { a.x = nullptr; a.y = nullptr; }, zero_rows);
    q("scales", "NULL with zero rows of per-tensor dynamic (its one scale is still written)", {NULLP}, "scales",
      [](World&, QArgs& a) { a.s = nullptr; }, [zero_rows](World& w) {
          zero_rows(w);
          w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC);
      });
    // Aliasing (docs/api.md): the input and every output, each in its own memory; the message names both.
    q("output", "the input's memory", {INVALID}, "output: overlaps input", [](World& w, QArgs& a) { a.y = w.x.data(); });
    q("scales", "the output's memory", {INVALID}, "scales: overlaps output", [](World&, QArgs& a) { a.s = a.y; });
    q("scales", "inside the input", {INVALID}, "scales: overlaps input",
      [](World& w, QArgs& a) { a.s = w.x.data() + 8; });
    q("desc", "columnwise values on the rowwise values", {INVALID}, "FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER: overlaps output",
      none, [](World& w) {
          w.columnwise();
          w.set(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE);
          w.setp(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, w.values.p());
      });
    q("desc", "columnwise scales on the rowwise scales", {INVALID}, "FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER: overlaps scales",
      none, [](World& w) {
          w.columnwise();
          w.set(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE);
          w.setp(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, w.scales.p());
      });
    q("desc", "columnwise scales on the columnwise values", {INVALID},
      "FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER: overlaps FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER", none,
      [](World& w) { w.columnwise(); w.setp(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, w.col_values.p()); });
    q("desc", "columnwise values on the input", {INVALID}, "FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER: overlaps input",
      none, [](World& w) { w.columnwise(); w.setp(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, w.x.data()); });
    // Misaligned float pointers in the descriptor.
    for (int32_t attr : {FQ_QUANT_DESC_SCALE_UB_POINTER, FQ_QUANT_DESC_ROW_PROB_POINTER}) {
        const std::string nm = attr == FQ_QUANT_DESC_ROW_PROB_POINTER ? "FQ_QUANT_DESC_ROW_PROB_POINTER" : "FQ_QUANT_DESC_SCALE_UB_POINTER";
        q("desc", "odd " + nm, {MISALIGNED}, nm, none,
          [attr](World& w) { w.setp(attr, reinterpret_cast<const uint8_t*>(w.x.data()) + 1); });
    }
    q("desc", "odd FQ_QUANT_DESC_GLOBAL_AMAX_POINTER (NVFP4)", {MISALIGNED}, "FQ_QUANT_DESC_GLOBAL_AMAX_POINTER", none, [](World& w) {
        w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_NVFP4);
        w.output_type(FQ_TYPE_FP4_E2M1);
        w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN);
        w.setp(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, reinterpret_cast<const uint8_t*>(w.x.data()) + 1);
    });
    q("desc", "odd FQ_QUANT_DESC_STATIC_SCALE_POINTER", {MISALIGNED}, "FQ_QUANT_DESC_STATIC_SCALE_POINTER", none, [](World& w) {
        w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_STATIC);
        w.setp(FQ_QUANT_DESC_STATIC_SCALE_POINTER, reinterpret_cast<const uint8_t*>(w.x.data()) + 1);
    });
    q("handle", "pinned variant refuses the problem", {UNSUPPORTED}, "FQ_HANDLE_VARIANT", none, [](World& w) {
        const int32_t v = 0;
        REQUIRE(fqHandleSetAttribute(w.h, FQ_HANDLE_VARIANT, &v, 4) == FQ_STATUS_SUCCESS);
        w.unsupported_on_host();
    });
    // MoE and columnwise pointers (docs/spec.md §5, §4).
    const Setup contiguous = [](World& w) {
        w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2);
        w.setp(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, w.offsets);
    };
    const Setup masked = [](World& w) {  // [2 experts, 2 rows], one valid row each
        w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2);
        w.setp(FQ_QUANT_DESC_MOE_COUNTS_POINTER, w.counts);
    };
    q("desc", "CONTIGUOUS MoE layout, 2 experts (control)", {OK}, "", none, contiguous);
    q("desc", "MASKED MoE layout, rows past the counts keep their bytes (control)", {OK}, "", none, masked)
        .after = [](World& w) { return w.values.at(64) == kPoison && w.values.at(3 * 64 + 63) == kPoison; };
    q("desc", "odd FQ_QUANT_DESC_MOE_OFFSETS_POINTER", {MISALIGNED}, "FQ_QUANT_DESC_MOE_OFFSETS_POINTER", none,
      [contiguous](World& w) { contiguous(w); w.setp(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, reinterpret_cast<uint8_t*>(w.offsets) + 1); });
    q("desc", "odd FQ_QUANT_DESC_MOE_COUNTS_POINTER", {MISALIGNED}, "FQ_QUANT_DESC_MOE_COUNTS_POINTER", none,
      [masked](World& w) { masked(w); w.setp(FQ_QUANT_DESC_MOE_COUNTS_POINTER, reinterpret_cast<uint8_t*>(w.counts) + 2); });
    q("desc", "offsets far outside the rows are clamped (nothing outside the buffers)", {OK}, "", none, [contiguous](World& w) {
        contiguous(w);
        w.offsets[0] = INT32_MIN; w.offsets[1] = INT32_MAX; w.offsets[2] = -5;
    });
    q("desc", "counts far outside max_m are clamped (nothing outside the buffers)", {OK}, "", none, [masked](World& w) {
        masked(w);
        w.counts[0] = INT32_MAX; w.counts[1] = INT32_MIN;
    });
    q("scalesSizeInBytes", "MASKED swizzled MXFP8: one expert's block of two", {SMALL}, "scalesSizeInBytes",
      [](World&, QArgs& a) { a.sbytes = 512; }, [masked](World& w) {
          masked(w);
          w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8); w.set(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
          w.set(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4);
      });
    q("output", "NULL, with columnwise output only (allowed: unused)", {OK}, "", [](World&, QArgs& a) {
        a.y = nullptr; a.s = nullptr; a.sbytes = 0;
    }, [](World& w) { w.columnwise(); });
    q("desc", "odd FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER (fp32 scales)", {MISALIGNED}, "FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER",
      none, [](World& w) { w.columnwise(); w.setp(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, w.col_scales.p() + 1); });
    q("desc", "columnwise output only (control): every columnwise byte written, the rowwise buffers untouched", {OK}, "",
      none, [](World& w) { w.columnwise(); })
        .after = [](World& w) {
            return w.values.untouched_from(0) && w.scales.untouched_from(0) && w.col_values.at(255) != kPoison &&
                   w.col_scales.at(255) != kPoison;
        };
    for (const Combo& k : combos()) q("desc", k.how, {k.want}, k.names, none, k.setup);
    for (const LayoutCombo& k : layout_combos()) q(k.names, k.how, {INVALID}, k.names, none, k.setup);
}

// fqQuantize is fqPlanCreate followed by fqPlanExecute (fusedquant.h, "Plans"): every fqQuantize case runs again
// as a plan made from its objects and executed on its buffers, and must give the same status and message (under
// fqPlanCreate for the objects' arguments, fqPlanExecute for the buffers'). Then the plan's own arguments.
void plan_cases(Cases& c) {
    const std::set<std::string> create_args = {"handle", "desc", "inputLayout", "outputLayout"};
    std::vector<Case> mirrored;
    for (const Case& k : c.all) {
        if (k.fn != "fqQuantize") continue;
        Case p = k;
        p.fn = create_args.count(k.arg) || k.arg.rfind("FQ_", 0) == 0 ? "fqPlanCreate" : "fqPlanExecute";
        if (p.fn == "fqPlanCreate" && !create_args.count(k.arg)) p.how = k.arg + ": " + p.how, p.arg = "desc";
        p.call = [quantize_case = k.call](World& w) {
            w.via_plan = true;
            return quantize_case(w);
        };
        mirrored.push_back(std::move(p));
    }
    for (Case& p : mirrored) c.all.push_back(std::move(p));

    const auto out_plan = [](World& w) { return reinterpret_cast<fqPlan_t*>(w.obj.p()); };
    c.add("fqPlanCreate", "plan", "NULL", {NULLP}, "plan", [](World& w) { return fqPlanCreate(nullptr, w.h, w.d, w.in, w.out); });
    c.add("fqPlanCreate", "plan", "set to NULL when the problem is refused", {HANDLE}, "desc", [out_plan](World& w) {
         return fqPlanCreate(out_plan(w), w.h, w.dead_d, w.in, w.out);
     }).after = [](World& w) { return w.obj.all_zero(); };
    for (Bad b : kBadObjects) {
        c.add("fqPlanDestroy", "plan", bad_name(b), {b == Bad::Null ? OK : HANDLE}, "plan",
              [b](World& w) { return fqPlanDestroy(bad_plan(w, b)); });
        c.add("fqPlanExecute", "plan", bad_name(b), {HANDLE}, "plan", [b](World& w) {
            return fqPlanExecute(bad_plan(w, b), w.x.data(), w.values.p(), w.scales.p(), size_t(kScaleBytes), nullptr, 0, nullptr);
        });
        c.add("fqPlanGetAttribute", "plan", bad_name(b), {HANDLE}, "plan", [b](World& w) {
            return fqPlanGetAttribute(bad_plan(w, b), FQ_PLAN_SCALE_BUFFER_SIZE, w.value.p(), 8, reinterpret_cast<size_t*>(w.written.p()));
        });
        c.add("fqPlanGetVariantName", "plan", bad_name(b), {HANDLE}, "plan", [b](World& w) {
            return fqPlanGetVariantName(bad_plan(w, b), reinterpret_cast<char*>(w.name.p()), w.name.size());
        });
    }
    c.add("fqPlanExecute", "plan", "the plan outlives its handle, descriptor and layouts (control)", {OK}, "", [](World& w) {
         fqHandle_t h = nullptr;  // a handle, descriptor and layouts of its own, destroyed before it runs
         fqQuantDesc_t d = nullptr;
         fqTensorLayout_t in = nullptr, out = nullptr;
         REQUIRE(fqCreate(&h, FQ_BACKEND_HOST, -1) == FQ_STATUS_SUCCESS);
         REQUIRE(fqQuantDescCreate(&d) == FQ_STATUS_SUCCESS);
         const int32_t silu = FQ_ACTIVATION_SILU, split = FQ_GATE_LAYOUT_SPLIT, g32 = 32;
         fqQuantDescSetAttribute(d, FQ_QUANT_DESC_ACTIVATION, &silu, 4);
         fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GATE_LAYOUT, &split, 4);
         fqQuantDescSetAttribute(d, FQ_QUANT_DESC_GROUP_SIZE, &g32, 4);
         REQUIRE(fqTensorLayoutCreate(&in, FQ_TYPE_BF16, kRows, 2 * kCols, 2 * kCols) == FQ_STATUS_SUCCESS);
         REQUIRE(fqTensorLayoutCreate(&out, FQ_TYPE_FP8_E4M3FN, kRows, kCols, kCols) == FQ_STATUS_SUCCESS);
         fqPlan_t own = nullptr;
         REQUIRE(fqPlanCreate(&own, h, d, in, out) == FQ_STATUS_SUCCESS);
         fqDestroy(h);
         fqQuantDescDestroy(d);
         fqTensorLayoutDestroy(in);
         fqTensorLayoutDestroy(out);
         const fqStatus_t s = fqPlanExecute(own, w.x.data(), w.values.p(), w.scales.p(), size_t(kScaleBytes), nullptr, 0, nullptr);
         fqPlanDestroy(own);
         return s;
     }).after = [](World& w) { return w.values.at(size_t(kRows * kCols) - 1) != kPoison; };
    for (int32_t attr : {-1, 3, INT32_MIN, INT32_MAX})
        c.add("fqPlanGetAttribute", "attr", "unknown " + str(attr), {INVALID}, "attr", [attr](World& w) {
            return fqPlanGetAttribute(w.plan, attr, w.value.p(), 8, reinterpret_cast<size_t*>(w.written.p()));
        });
    c.add("fqPlanGetAttribute", "buf", "NULL with a size", {NULLP}, "buf", [](World& w) {
        return fqPlanGetAttribute(w.plan, FQ_PLAN_SCALE_BUFFER_SIZE, nullptr, 8, nullptr);
    });
    for (size_t n : {size_t(0), size_t(4), size_t(16), SIZE_MAX})
        c.add("fqPlanGetAttribute", "sizeInBytes", str(int64_t(n)) + " for an int64_t", {INVALID}, "sizeInBytes", [n](World& w) {
            return fqPlanGetAttribute(w.plan, FQ_PLAN_WORKSPACE_SIZE, w.value.p(), n, nullptr);
        });
    c.add("fqPlanGetAttribute", "sizeWritten", "NULL while asking for the size", {NULLP}, "sizeWritten", [](World& w) {
        return fqPlanGetAttribute(w.plan, FQ_PLAN_WORKSPACE_SIZE, nullptr, 0, nullptr);
    });
    c.add("fqPlanGetAttribute", "attr", "FQ_PLAN_SCALE_BUFFER_SIZE (control): the 32 bytes fqGetScaleBufferSize gives", {OK}, "",
          [](World& w) { return fqPlanGetAttribute(w.plan, FQ_PLAN_SCALE_BUFFER_SIZE, w.value.p(), 8, nullptr); })
        .after = [](World& w) { int64_t v; std::memcpy(&v, w.value.p(), 8); return v == kScaleBytes; };
    c.add("fqPlanGetVariantName", "name", "NULL", {NULLP}, "name", [](World& w) { return fqPlanGetVariantName(w.plan, nullptr, 8); });
    c.add("fqPlanGetVariantName", "nameCapacity", "0", {INVALID}, "nameCapacity", [](World& w) {
        return fqPlanGetVariantName(w.plan, reinterpret_cast<char*>(w.name.p()), 0);
    });
    c.add("fqPlanGetVariantName", "nameCapacity", "3: truncated inside the buffer (control)", {OK}, "", [](World& w) {
         return fqPlanGetVariantName(w.plan, reinterpret_cast<char*>(w.name.p()), 3);
     }).after = [](World& w) { return w.name.at(2) == 0 && w.name.untouched_from(3); };
}

// All arguments of fqScaleRepack, valid by default: 2 blocks of 4 x 3 E8M0 scales, ROW_MAJOR (24 bytes) to
// SWIZZLED_128X4 (1024 bytes); stacked() turns it into 2 batches over 3 stacked rows.
struct RArgs {
    fqHandle_t h;
    int32_t type;
    int64_t batch, rows, groups;
    int32_t batching;
    const int32_t* offsets;
    int64_t stacked_rows;
    int32_t src_layout;
    const void* src;
    size_t src_bytes;
    int32_t dst_layout;
    void* dst;
    size_t dst_bytes;
    fqStream_t stream;
};
RArgs valid_repack(World& w) {
    return RArgs{w.h, FQ_TYPE_E8M0, 2, 4, 3, FQ_SCALE_REPACK_BLOCKS, nullptr, 0, FQ_SCALE_LAYOUT_ROW_MAJOR,
                 w.repack_src.data(), 24, FQ_SCALE_LAYOUT_SWIZZLED_128X4, w.repacked.p(), 1024, nullptr};
}
void stacked(World& w, RArgs& a) {
    a.batching = FQ_SCALE_REPACK_STACKED_TO_BLOCKS;
    a.offsets = w.repack_offsets.data();
    a.stacked_rows = 3;
    a.src_bytes = 9;
}
void fp32(RArgs& a) {  // 2 x 4 x 3 fp32 scales: 96 bytes ROW_MAJOR -> 96 bytes COL_MAJOR
    a.type = FQ_TYPE_FP32;
    a.src_bytes = a.dst_bytes = 96;
    a.dst_layout = FQ_SCALE_LAYOUT_COL_MAJOR;
}
fqStatus_t repack(const RArgs& a) {
    return fqScaleRepack(a.h, a.type, a.batch, a.rows, a.groups, a.batching, a.offsets, a.stacked_rows, a.src_layout,
                         a.src, a.src_bytes, a.dst_layout, a.dst, a.dst_bytes, a.stream);
}

// ---- The one-call entry points ---------------------------------------------------------------------------

// All arguments of fqQuantizeSimple, valid by default (the world's problem with the default groups of 128:
// 16 bytes of fp32 scales); a case spoils one.
struct SimpleArgs {
    fqHandle_t h;
    int32_t act, gate, scheme, in_type, out_type, layout;
    int64_t rows, cols;
    const void* x;
    void* y;
    void* s;
    size_t sbytes;
    void* ws;
    size_t wsbytes;
    fqStream_t stream;
};
constexpr size_t kSimpleScaleBytes = kRows * 4;

void one_call_cases(Cases& c) {
    using Spoil = std::function<void(World&, SimpleArgs&)>;
    auto q = [&c](std::string arg, std::string how, std::vector<S> want, std::string names, Spoil spoil) -> Case& {
        Case& k = c.add("fqQuantizeSimple", std::move(arg), std::move(how), std::move(want), std::move(names), [spoil](World& w) {
            SimpleArgs a{w.h, FQ_ACTIVATION_SILU, FQ_GATE_LAYOUT_SPLIT, FQ_SCHEME_PER_GROUP, FQ_TYPE_BF16, FQ_TYPE_FP8_E4M3FN,
                         FQ_SCALE_LAYOUT_ROW_MAJOR, kRows, kCols, w.x.data(), w.values.p(), w.scales.p(), kSimpleScaleBytes,
                         nullptr, 0, nullptr};
            spoil(w, a);
            return fqQuantizeSimple(a.h, a.act, a.gate, a.scheme, a.in_type, a.out_type, a.layout, a.rows, a.cols, a.x,
                                    a.y, a.s, a.sbytes, a.ws, a.wsbytes, a.stream);
        });
        k.fit.scales = kSimpleScaleBytes;
        return k;
    };
    q("handle", "valid problem (control): the last value and scale byte written", {OK}, "", [](World&, SimpleArgs&) {})
        .after = [](World& w) {
            return w.values.at(size_t(kRows * kCols) - 1) != kPoison && w.scales.at(kSimpleScaleBytes - 1) != kPoison;
        };
    for (Bad b : kBadObjects) q("handle", bad_name(b), {HANDLE}, "handle", [b](World& w, SimpleArgs& a) { a.h = bad_handle(w, b); });
    for (int32_t v : {-1, 7, INT32_MAX})
        q("activation", str(v), {INVALID}, "FQ_QUANT_DESC_ACTIVATION", [v](World&, SimpleArgs& a) { a.act = v; });
    q("activation", "SWIGLU_OAI not gated", {INVALID}, "FQ_QUANT_DESC_ACTIVATION", [](World&, SimpleArgs& a) {
        a.act = FQ_ACTIVATION_SWIGLU_OAI;
        a.gate = FQ_GATE_LAYOUT_NONE;
    });
    for (int32_t v : {-1, 4})
        q("gateLayout", str(v), {INVALID}, "FQ_QUANT_DESC_GATE_LAYOUT", [v](World&, SimpleArgs& a) { a.gate = v; });
    q("gateLayout", "BLOCK_INTERLEAVED over 64 columns (blocks of 32: allowed)", {OK}, "",
      [](World&, SimpleArgs& a) { a.gate = FQ_GATE_LAYOUT_BLOCK_INTERLEAVED; });
    for (int32_t v : {-1, 8})
        q("scheme", str(v), {INVALID}, "FQ_QUANT_DESC_SCHEME", [v](World&, SimpleArgs& a) { a.scheme = v; });
    q("scheme", "PER_TENSOR_STATIC (its scale takes the descriptor API)", {NULLP}, "FQ_QUANT_DESC_STATIC_SCALE_POINTER",
      [](World&, SimpleArgs& a) { a.scheme = FQ_SCHEME_PER_TENSOR_STATIC; });
    q("inputType", "FP32", {INVALID}, "inputLayout", [](World&, SimpleArgs& a) { a.in_type = FQ_TYPE_FP32; });
    q("inputType", "99", {INVALID}, "dtype", [](World&, SimpleArgs& a) { a.in_type = 99; });
    for (int32_t v : {int32_t(FQ_TYPE_BF16), int32_t(FQ_TYPE_INT32), 99})
        q("outputType", str(v), {INVALID}, "FQ_QUANT_DESC_OUTPUT_TYPE", [v](World&, SimpleArgs& a) { a.out_type = v; });
    q("outputType", "FP4_E2M1 under PER_GROUP", {INVALID}, "FQ_QUANT_DESC_OUTPUT_TYPE",
      [](World&, SimpleArgs& a) { a.out_type = FQ_TYPE_FP4_E2M1; });
    for (int32_t v : {-1, 5})
        q("scaleLayout", str(v), {INVALID}, "FQ_QUANT_DESC_SCALE_LAYOUT", [v](World&, SimpleArgs& a) { a.layout = v; });
    q("scaleLayout", "SWIZZLED_128X4 of fp32 scales", {INVALID}, "FQ_QUANT_DESC_SCALE_LAYOUT",
      [](World&, SimpleArgs& a) { a.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; });
    q("rows", "-1", {INVALID}, "rows", [](World&, SimpleArgs& a) { a.rows = -1; });
    q("rows", "0: nothing written (allowed)", {OK}, "", [](World&, SimpleArgs& a) { a.rows = 0; })
        .after = [](World& w) { return w.values.untouched_from(0) && w.scales.untouched_from(0); };
    for (int64_t v : {int64_t(0), int64_t(-64), INT64_MIN})  // INT64_MIN: never doubled (the fuzzer's overflow)
        q("cols", str(v), {INVALID}, "cols", [v](World&, SimpleArgs& a) { a.cols = v; });
    q("cols", "INT64_MAX: a gated input twice as wide overflows", {INVALID}, "cols",
      [](World&, SimpleArgs& a) { a.cols = INT64_MAX; a.rows = 0; });
    q("cols", "48: not the world's 64", {OK}, "", [](World&, SimpleArgs& a) { a.cols = 48; });
    q("input", "NULL", {NULLP}, "input:", [](World&, SimpleArgs& a) { a.x = nullptr; });
    q("input", "odd address", {MISALIGNED}, "input:", [](World&, SimpleArgs& a) { a.x = static_cast<const uint8_t*>(a.x) + 1; });
    q("output", "NULL", {NULLP}, "output:", [](World&, SimpleArgs& a) { a.y = nullptr; });
    q("output", "the input's memory", {INVALID}, "output", [](World& w, SimpleArgs& a) { a.y = w.x.data(); });
    q("scales", "NULL", {NULLP}, "scales", [](World&, SimpleArgs& a) { a.s = nullptr; });
    q("scales", "fp32 scales at +2", {MISALIGNED}, "scales", [](World&, SimpleArgs& a) { a.s = static_cast<uint8_t*>(a.s) + 2; });
    q("scalesSizeInBytes", "one byte short", {SMALL}, "scalesSizeInBytes",
      [](World&, SimpleArgs& a) { a.sbytes = kSimpleScaleBytes - 1; });
    q("workspace", "given though none is needed (allowed)", {OK}, "",
      [](World& w, SimpleArgs& a) { a.ws = w.col_scales.p(); a.wsbytes = 4; });
    q("workspaceSizeInBytes", "given without a workspace, none needed (allowed)", {OK}, "",
      [](World&, SimpleArgs& a) { a.wsbytes = 64; });
    q("stream", "non-NULL on the host backend (ignored)", {OK}, "",
      [](World& w, SimpleArgs& a) { a.stream = reinterpret_cast<fqStream_t>(&w.wild); });

    auto z = [&c](std::string arg, std::string how, std::vector<S> want, std::string names,
                  std::function<S(World&, size_t*)> call) {
        c.add("fqGetScaleBufferSizeSimple", std::move(arg), std::move(how), std::move(want), std::move(names),
              [call](World& w) { return call(w, reinterpret_cast<size_t*>(w.size.p())); });
    };
    z("scheme", "MXFP8 swizzled (control): 128 x 4 bytes", {OK}, "", [](World&, size_t* n) {
        const S s = fqGetScaleBufferSizeSimple(FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, FQ_SCALE_LAYOUT_SWIZZLED_128X4, 4, 64, n);
        return s == OK && *n == 512 ? OK : FQ_STATUS_INTERNAL_ERROR;
    });
    z("scheme", "8", {INVALID}, "FQ_QUANT_DESC_SCHEME",
      [](World&, size_t* n) { return fqGetScaleBufferSizeSimple(8, FQ_TYPE_FP8_E4M3FN, 0, 4, 64, n); });
    z("outputType", "FP4_E2M1 under PER_GROUP", {INVALID}, "FQ_QUANT_DESC_OUTPUT_TYPE", [](World&, size_t* n) {
        return fqGetScaleBufferSizeSimple(FQ_SCHEME_PER_GROUP, FQ_TYPE_FP4_E2M1, 0, 4, 64, n);
    });
    z("scaleLayout", "-1", {INVALID}, "FQ_QUANT_DESC_SCALE_LAYOUT", [](World&, size_t* n) {
        return fqGetScaleBufferSizeSimple(FQ_SCHEME_PER_GROUP, FQ_TYPE_FP8_E4M3FN, -1, 4, 64, n);
    });
    z("rows", "-1", {INVALID}, "rows", [](World&, size_t* n) {
        return fqGetScaleBufferSizeSimple(FQ_SCHEME_PER_GROUP, FQ_TYPE_FP8_E4M3FN, 0, -1, 64, n);
    });
    z("cols", "0", {INVALID}, "cols", [](World&, size_t* n) {
        return fqGetScaleBufferSizeSimple(FQ_SCHEME_PER_GROUP, FQ_TYPE_FP8_E4M3FN, 0, 4, 0, n);
    });
    z("sizeInBytes", "NULL", {NULLP}, "sizeInBytes", [](World&, size_t*) {
        return fqGetScaleBufferSizeSimple(FQ_SCHEME_PER_GROUP, FQ_TYPE_FP8_E4M3FN, 0, 4, 64, nullptr);
    });
}

void repack_cases(Cases& c) {
    using Spoil = std::function<void(World&, RArgs&)>;
    auto r = [&c](std::string arg, std::string how, std::vector<S> want, std::string names, Spoil spoil) -> Case& {
        return c.add("fqScaleRepack", std::move(arg), std::move(how), std::move(want), std::move(names), [spoil](World& w) {
            RArgs a = valid_repack(w);
            spoil(w, a);
            return repack(a);
        });
    };
    r("handle", "valid problem (control): 1024 bytes written, the guards right after them", {OK}, "", [](World&, RArgs&) {})
        .after = [](World& w) { return w.repacked.at(0) != kPoison && w.repacked.at(1023) != kPoison; };
    for (Bad b : kBadObjects)
        r("handle", bad_name(b), {HANDLE}, "handle", [b](World& w, RArgs& a) { a.h = bad_handle(w, b); });
    for (int32_t t : {-1, int32_t(FQ_TYPE_FP16), int32_t(FQ_TYPE_BF16), int32_t(FQ_TYPE_FP8_E4M3FNUZ),
                      int32_t(FQ_TYPE_FP8_E5M2), int32_t(FQ_TYPE_INT8), int32_t(FQ_TYPE_FP4_E2M1), int32_t(FQ_TYPE_INT32),
                      10, INT32_MIN, INT32_MAX})
        r("scaleType", str(t), {INVALID}, "scaleType", [t](World&, RArgs& a) { a.type = t; });
    r("scaleType", "FP32 ROW_MAJOR -> COL_MAJOR (allowed: 96 bytes)", {OK}, "", [](World&, RArgs& a) { fp32(a); }).fit.repacked = 96;
    r("scaleType", "FP8_E4M3FN (NVFP4 block scales, allowed)", {OK}, "", [](World&, RArgs& a) { a.type = FQ_TYPE_FP8_E4M3FN; });
    for (int64_t v : {int64_t(-1), INT64_MIN})
        r("batch", str(v), {INVALID}, "batch", [v](World&, RArgs& a) { a.batch = v; });
    r("batch", "INT64_MAX blocks overflow", {INVALID}, "overflow", [](World&, RArgs& a) { a.batch = INT64_MAX; });
    r("batch", "INT32_MAX with row offsets", {INVALID}, "batch", [](World& w, RArgs& a) { stacked(w, a); a.batch = INT32_MAX; });
    r("batch", "0 (allowed: nothing written)", {OK}, "", [](World&, RArgs& a) { a.batch = 0; }).fit.repacked = 0;
    for (int64_t v : {int64_t(-1), INT64_MIN})
        r("rows", str(v), {INVALID}, "rows", [v](World&, RArgs& a) { a.rows = v; });
    r("rows", "INT64_MAX overflows", {INVALID}, "overflow", [](World&, RArgs& a) { a.rows = INT64_MAX; });
    r("rows", "INT64_MAX - 100 (the 128-row padding overflows)", {INVALID}, "overflow",
      [](World&, RArgs& a) { a.rows = INT64_MAX - 100; });
    r("rows", "0 (allowed: no scales, no bytes)", {OK}, "", [](World&, RArgs& a) { a.rows = 0; a.src = nullptr; a.dst = nullptr; });
    for (int64_t v : {int64_t(0), int64_t(-1), INT64_MIN})
        r("groups", str(v), {INVALID}, "groups", [v](World&, RArgs& a) { a.groups = v; });
    r("groups", "INT64_MAX overflows", {INVALID}, "overflow", [](World&, RArgs& a) { a.groups = INT64_MAX; });
    r("groups", "2^40 x 2^30 rows overflow", {INVALID}, "overflow", [](World&, RArgs& a) { a.groups = 1LL << 40; a.rows = 1LL << 30; });
    for (int32_t v : {-1, 3, INT32_MIN, INT32_MAX})
        r("batching", str(v), {INVALID}, "batching", [v](World&, RArgs& a) { a.batching = v; });
    r("batching", "STACKED_TO_BLOCKS (control)", {OK}, "", [](World& w, RArgs& a) { stacked(w, a); });
    Case& to_stacked = r("batching", "BLOCKS_TO_STACKED: 3 stacked rows, ROW_MAJOR 9 bytes", {OK}, "", [](World& w, RArgs& a) {
        stacked(w, a);
        a.batching = FQ_SCALE_REPACK_BLOCKS_TO_STACKED;
        a.src_bytes = 24;
        a.dst_layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
        a.dst_bytes = 9;
    });
    to_stacked.fit.repacked = 9;
    to_stacked.after = [](World& w) { return w.repacked.at(8) != kPoison; };
    r("rowOffsets", "given with FQ_SCALE_REPACK_BLOCKS", {INVALID}, "rowOffsets",
      [](World& w, RArgs& a) { a.offsets = w.repack_offsets.data(); });
    r("rowOffsets", "NULL with STACKED_TO_BLOCKS", {NULLP}, "rowOffsets", [](World& w, RArgs& a) { stacked(w, a); a.offsets = nullptr; });
    r("rowOffsets", "NULL with BLOCKS_TO_STACKED", {NULLP}, "rowOffsets", [](World& w, RArgs& a) {
        stacked(w, a);
        a.batching = FQ_SCALE_REPACK_BLOCKS_TO_STACKED;
        a.offsets = nullptr;
    });
    r("rowOffsets", "odd address", {MISALIGNED}, "rowOffsets", [](World& w, RArgs& a) {
        stacked(w, a);
        a.offsets = reinterpret_cast<const int32_t*>(reinterpret_cast<const uint8_t*>(w.repack_offsets.data()) + 1);
    });
    r("rowOffsets", "garbage values (allowed: read in range, never outside the buffers)", {OK}, "", [](World& w, RArgs& a) {
        w.repack_offsets = {INT32_MAX, -5, INT32_MIN};
        stacked(w, a);
    });
    r("stackedRows", "5 with FQ_SCALE_REPACK_BLOCKS", {INVALID}, "stackedRows", [](World&, RArgs& a) { a.stacked_rows = 5; });
    for (int64_t v : {int64_t(-1), INT64_MIN})
        r("stackedRows", str(v), {INVALID}, "stackedRows", [v](World& w, RArgs& a) { stacked(w, a); a.stacked_rows = v; });
    r("stackedRows", "INT64_MAX overflows", {INVALID}, "overflow", [](World& w, RArgs& a) { stacked(w, a); a.stacked_rows = INT64_MAX; });
    r("stackedRows", "4 rows need 12 bytes of src, 9 declared", {SMALL}, "srcSizeInBytes",
      [](World& w, RArgs& a) { stacked(w, a); a.stacked_rows = 4; });
    for (const char* side : {"src", "dst"}) {
        const bool is_src = side[0] == 's';
        const std::string arg = std::string(side) + "Layout";
        auto set = [is_src](RArgs& a, int32_t l) { (is_src ? a.src_layout : a.dst_layout) = l; };
        for (int32_t v : {-1, 5, INT32_MIN, INT32_MAX})
            r(arg, str(v), {INVALID}, arg, [=](World&, RArgs& a) { set(a, v); });
        r(arg, "SWIZZLED_128X4 with FP32 scales", {INVALID}, arg, [=](World&, RArgs& a) {
            fp32(a);
            set(a, FQ_SCALE_LAYOUT_SWIZZLED_128X4);
        });
        r(arg, "PACKED_UE8M0 with FP32 scales", {INVALID}, arg, [=](World&, RArgs& a) {
            fp32(a);
            set(a, FQ_SCALE_LAYOUT_PACKED_UE8M0);
        });
        r(arg, "PACKED_UE8M0 with FP8_E4M3FN scales", {INVALID}, arg, [=](World&, RArgs& a) {
            a.type = FQ_TYPE_FP8_E4M3FN;
            set(a, FQ_SCALE_LAYOUT_PACKED_UE8M0);
        });
    }
    r("srcLayout", "PACKED_UE8M0 (E8M0: allowed, 2 x 16 bytes)", {OK}, "", [](World&, RArgs& a) {
        a.src_layout = FQ_SCALE_LAYOUT_PACKED_UE8M0;
        a.src_bytes = 32;
    });
    r("src", "NULL", {NULLP}, "src", [](World&, RArgs& a) { a.src = nullptr; });
    for (size_t off : {size_t(1), size_t(2), size_t(3)})
        r("src", "FP32 scales at +" + str(int64_t(off)), {MISALIGNED}, "src",
          [off](World&, RArgs& a) { fp32(a); a.src = static_cast<const uint8_t*>(a.src) + off; });
    r("src", "E8M0 scales at an odd address (allowed)", {OK}, "", [](World&, RArgs& a) { a.src = static_cast<const uint8_t*>(a.src) + 1; });
    r("src", "NULL with zero batches (allowed: nothing read)", {OK}, "", [](World&, RArgs& a) { a.batch = 0; a.src = nullptr; })
        .fit.repacked = 0;
    for (size_t n : {size_t(0), size_t(1), size_t(23)})
        r("srcSizeInBytes", str(int64_t(n)) + " bytes, 24 needed", {SMALL}, "srcSizeInBytes", [n](World&, RArgs& a) { a.src_bytes = n; });
    r("srcSizeInBytes", "COL_MAJOR_TMA pads 4 rows to 16: 48 bytes, 24 declared", {SMALL}, "srcSizeInBytes",
      [](World&, RArgs& a) { a.src_layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA; });
    r("srcSizeInBytes", "SIZE_MAX (more than needed: allowed)", {OK}, "", [](World&, RArgs& a) { a.src_bytes = SIZE_MAX; });
    r("dst", "NULL", {NULLP}, "dst", [](World&, RArgs& a) { a.dst = nullptr; });
    for (size_t off : {size_t(1), size_t(2), size_t(3)})
        r("dst", "FP32 scales at +" + str(int64_t(off)), {MISALIGNED}, "dst",
          [off](World&, RArgs& a) { fp32(a); a.dst = static_cast<uint8_t*>(a.dst) + off; });
    Case& odd_dst = r("dst", "E8M0 scales at an odd address (allowed; 1024 bytes after 1 untouched byte)", {OK}, "",
                      [](World&, RArgs& a) { a.dst = static_cast<uint8_t*>(a.dst) + 1; });
    odd_dst.fit.repacked = 1025;
    odd_dst.after = [](World& w) { return w.repacked.at(0) == kPoison && w.repacked.at(1024) != kPoison; };
    r("dst", "overlapping src", {INVALID}, "overlap", [](World& w, RArgs& a) {
        a.src = w.repacked.p() + 10;  // its 24 bytes overlap dst's first 24
        a.dst_layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    });
    r("dst", "the same buffer as src (in place)", {INVALID}, "overlap", [](World& w, RArgs& a) {
        a.src = w.repacked.p();
        a.dst_layout = FQ_SCALE_LAYOUT_COL_MAJOR;
    });
    r("dst", "NULL with zero rows (allowed: no bytes)", {OK}, "", [](World&, RArgs& a) { a.rows = 0; a.dst = nullptr; });
    for (size_t n : {size_t(0), size_t(1), size_t(512), size_t(1023)})
        r("dstSizeInBytes", str(int64_t(n)) + " bytes, 1024 needed", {SMALL}, "dstSizeInBytes", [n](World&, RArgs& a) { a.dst_bytes = n; });
    r("dstSizeInBytes", "SIZE_MAX (more than needed: allowed; 1024 written, the guards right after them)", {OK}, "",
      [](World&, RArgs& a) { a.dst_bytes = SIZE_MAX; })
        .after = [](World& w) { return w.repacked.at(1023) != kPoison; };
    r("stream", "any value on the host backend (ignored: synchronous)", {OK}, "",
      [](World& w, RArgs& a) { a.stream = reinterpret_cast<fqStream_t>(&w.wild); });

    // fqGetScaleRepackSize(scaleType, batch, rows, groups, layout, sizeInBytes)
    auto q = [&c](std::string arg, std::string how, std::vector<S> want, std::string names, int32_t type, int64_t batch,
                  int64_t rows, int64_t groups, int32_t layout, size_t expect = 0) {
        const bool ok = want == std::vector<S>{OK};
        c.add("fqGetScaleRepackSize", std::move(arg), std::move(how), std::move(want), std::move(names), [=](World& w) {
             return fqGetScaleRepackSize(type, batch, rows, groups, layout, reinterpret_cast<size_t*>(w.size.p()));
         }).after = [expect, ok](World& w) {
            size_t v;
            std::memcpy(&v, w.size.p(), sizeof v);
            return ok ? v == expect : w.size.untouched_from(0);
        };
    };
    const int32_t E8 = FQ_TYPE_E8M0, SW = FQ_SCALE_LAYOUT_SWIZZLED_128X4;
    q("layout", "2 blocks of 4 x 3 E8M0 SWIZZLED_128X4 (control)", {OK}, "", E8, 2, 4, 3, SW, 1024);
    q("batch", "0 (allowed)", {OK}, "", E8, 0, 4, 3, SW, 0);
    q("rows", "0 (allowed)", {OK}, "", E8, 1, 0, 3, FQ_SCALE_LAYOUT_ROW_MAJOR, 0);
    for (int32_t t : {-1, int32_t(FQ_TYPE_BF16), int32_t(FQ_TYPE_INT8), int32_t(FQ_TYPE_INT32), INT32_MAX})
        q("scaleType", str(t), {INVALID}, "scaleType", t, 1, 4, 3, FQ_SCALE_LAYOUT_ROW_MAJOR);
    for (int64_t v : {int64_t(-1), INT64_MIN}) {
        q("batch", str(v), {INVALID}, "batch", E8, v, 4, 3, SW);
        q("rows", str(v), {INVALID}, "rows", E8, 1, v, 3, SW);
    }
    for (int64_t v : {int64_t(0), int64_t(-1), INT64_MIN}) q("groups", str(v), {INVALID}, "groups", E8, 1, 4, v, SW);
    q("batch", "INT64_MAX overflows", {INVALID}, "overflow", E8, INT64_MAX, 4, 3, SW);
    q("rows", "INT64_MAX overflows", {INVALID}, "overflow", FQ_TYPE_FP32, 1, INT64_MAX, 3, FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
    q("groups", "INT64_MAX overflows", {INVALID}, "overflow", E8, 1, 1, INT64_MAX, FQ_SCALE_LAYOUT_PACKED_UE8M0);
    for (int32_t v : {-1, 5, INT32_MIN, INT32_MAX}) q("layout", str(v), {INVALID}, "layout", E8, 1, 4, 3, v);
    q("layout", "SWIZZLED_128X4 with FP32", {INVALID}, "layout", FQ_TYPE_FP32, 1, 4, 3, SW);
    q("layout", "PACKED_UE8M0 with FP8_E4M3FN", {INVALID}, "layout", FQ_TYPE_FP8_E4M3FN, 1, 4, 3, FQ_SCALE_LAYOUT_PACKED_UE8M0);
    c.add("fqGetScaleRepackSize", "sizeInBytes", "NULL", {NULLP}, "sizeInBytes",
          [](World&) { return fqGetScaleRepackSize(FQ_TYPE_E8M0, 1, 4, 3, FQ_SCALE_LAYOUT_ROW_MAJOR, nullptr); });
}

// fqGroupedGemmGetScaleBufferSize / Info: the two descriptors, the shape and `which` as fqGetScaleBufferSize
// takes them, the epilogue's own MoE attributes (the groups are the GEMM's), the result pointer, `info`.
void gemm_query_cases(Cases& c) {
    using Query = std::function<S(World&, fqGroupedGemmDesc_t, fqQuantDesc_t, int64_t, int64_t, int32_t)>;
    const std::pair<const char*, Query> queries[] = {
        {"fqGroupedGemmGetScaleBufferSize",
         [](World& w, fqGroupedGemmDesc_t g, fqQuantDesc_t d, int64_t r, int64_t k, int32_t which) {
             return fqGroupedGemmGetScaleBufferSize(g, d, r, k, which, reinterpret_cast<size_t*>(w.size.p()));
         }},
        {"fqGroupedGemmGetScaleBufferInfo",
         [](World& w, fqGroupedGemmDesc_t g, fqQuantDesc_t d, int64_t r, int64_t k, int32_t which) {
             return fqGroupedGemmGetScaleBufferInfo(g, d, r, k, which, FQ_SCALE_INFO_BYTES,
                                                    reinterpret_cast<int64_t*>(w.value.p()));
         }},
    };
    for (const auto& [fn, q] : queries) {
        const Query query = q;
        for (Bad b : kBadObjects) {
            c.add(fn, "gemmDesc", bad_name(b), {HANDLE}, "gemmDesc",
                  [=](World& w) { return query(w, bad_gemm_desc(w, b), w.d, 4, 64, FQ_OUTPUT_ROWWISE); });
            c.add(fn, "epilogueDesc", bad_name(b), {HANDLE}, "epilogueDesc",
                  [=](World& w) { return query(w, w.gd, bad_desc(w, b), 4, 64, FQ_OUTPUT_ROWWISE); });
        }
        c.add(fn, "epilogueDesc", "FQ_QUANT_DESC_MOE_LAYOUT set (the groups are the GEMM's)", {INVALID},
              "FQ_QUANT_DESC_MOE_LAYOUT", [=](World& w) { return query(w, w.gd, w.d, 4, 64, FQ_OUTPUT_ROWWISE); })
            .setup = [](World& w) { w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2); };
        for (int64_t r : {int64_t(-1), INT64_MIN})
            c.add(fn, "rows", str(r), {INVALID}, "rows", [=](World& w) { return query(w, w.gd, w.d, r, 64, FQ_OUTPUT_ROWWISE); });
        for (int64_t k : {int64_t(0), int64_t(-1), INT64_MIN})
            c.add(fn, "cols", str(k), {INVALID}, "cols", [=](World& w) { return query(w, w.gd, w.d, 4, k, FQ_OUTPUT_ROWWISE); });
        for (int32_t which : {0, 3, -1, INT32_MIN})
            c.add(fn, "which", str(which), {INVALID}, "which", [=](World& w) { return query(w, w.gd, w.d, 4, 64, which); });
    }
    c.add("fqGroupedGemmGetScaleBufferSize", "sizeInBytes", "NULL", {NULLP}, "sizeInBytes",
          [](World& w) { return fqGroupedGemmGetScaleBufferSize(w.gd, w.d, 4, 64, FQ_OUTPUT_ROWWISE, nullptr); });
    c.add("fqGroupedGemmGetScaleBufferInfo", "value", "NULL", {NULLP}, "value", [](World& w) {
        return fqGroupedGemmGetScaleBufferInfo(w.gd, w.d, 4, 64, FQ_OUTPUT_ROWWISE, FQ_SCALE_INFO_BYTES, nullptr);
    });
    for (int32_t info : {-1, 11, INT32_MIN})
        c.add("fqGroupedGemmGetScaleBufferInfo", "info", str(info), {INVALID}, "info", [info](World& w) {
            return fqGroupedGemmGetScaleBufferInfo(w.gd, w.d, 4, 64, FQ_OUTPUT_ROWWISE, info,
                                                   reinterpret_cast<int64_t*>(w.value.p()));
        });
}

void gemm_desc_cases(Cases& c) {
    const DescFunctions f = desc_functions("fqGroupedGemmDesc", fqGroupedGemmDescCreate, fqGroupedGemmDescDestroy,
                                           fqGroupedGemmDescSetAttribute, fqGroupedGemmDescGetAttribute, bad_gemm_desc,
                                           &World::gd, 8);
    descriptor_cases(c, f, kGemm);
    c.add(f.destroy, "desc", "an fqQuantDesc_t (the other descriptor kind)", {HANDLE}, "desc",
          [](World& w) { return fqGroupedGemmDescDestroy(reinterpret_cast<fqGroupedGemmDesc_t>(w.d)); });
    c.add(f.set, "buf", "FQ_GEMM_DESC_A_SCALE_LAYOUT = ROW_MAJOR (A's scales are column-major)", {INVALID},
          "FQ_GEMM_DESC_A_SCALE_LAYOUT", [](World& w) {
              const int32_t v = FQ_SCALE_LAYOUT_ROW_MAJOR;
              return fqGroupedGemmDescSetAttribute(w.gd, FQ_GEMM_DESC_A_SCALE_LAYOUT, &v, 4);
          });
}

// All arguments of fqGroupedGemm, valid by default (World's GEMM problem); a case spoils one.
struct GArgs {
    fqHandle_t h;
    fqGroupedGemmDesc_t g;
    fqQuantDesc_t epi;
    fqTensorLayout_t la;
    const void* a;
    const void* sa;
    fqTensorLayout_t lb;
    const void* b;
    const void* sb;
    fqTensorLayout_t out;
    void* y;
    void* s;
    size_t sbytes;
    fqStream_t stream;
};
GArgs valid_gemm(World& w) {
    return GArgs{w.h, w.gd, w.d, w.la, w.gemm_a.data(), w.gemm_sa.data(), w.lb, w.gemm_b.data(), w.gemm_sb.data(),
                 w.out, w.values.p(), w.scales.p(), size_t(kScaleBytes), nullptr};
}

void grouped_gemm_cases(Cases& c) {
    using Spoil = std::function<void(World&, GArgs&)>;
    using Setup = std::function<void(World&)>;
    auto g = [&c](std::string arg, std::string how, std::vector<S> want, std::string names, Spoil spoil,
                  Setup setup = nullptr) -> Case& {
        Case& k = c.add("fqGroupedGemm", std::move(arg), std::move(how), std::move(want), std::move(names), [spoil](World& w) {
            GArgs a = valid_gemm(w);
            spoil(w, a);
            return fqGroupedGemm(a.h, a.g, a.epi, a.la, a.a, a.sa, a.lb, a.b, a.sb, a.out, a.y, a.s, a.sbytes, a.stream);
        });
        k.setup = std::move(setup);
        return k;
    };
    const Spoil none = [](World&, GArgs&) {};
    auto odd = [](const void* p, size_t by) { return static_cast<const uint8_t*>(p) + by; };
    g("handle", "valid problem (control): the last byte of every output written, the guards right after them", {OK}, "", none)
        .after = [](World& w) {
            return w.values.at(size_t(kRows * kCols) - 1) != kPoison && w.scales.at(size_t(kScaleBytes) - 1) != kPoison &&
                   w.gemm_c.at(w.gemm_c.size() - 1) != kPoison && w.gemm_d.at(w.gemm_d.size() - 1) != kPoison;
        };
    for (Bad b : kBadObjects) {
        g("handle", bad_name(b), {HANDLE}, "handle", [b](World& w, GArgs& a) { a.h = bad_handle(w, b); });
        g("gemmDesc", bad_name(b), {HANDLE}, "gemmDesc", [b](World& w, GArgs& a) { a.g = bad_gemm_desc(w, b); });
        g("epilogueDesc", bad_name(b), {HANDLE}, "epilogueDesc", [b](World& w, GArgs& a) { a.epi = bad_desc(w, b); });
        g("aLayout", bad_name(b), {HANDLE}, "aLayout", [b](World& w, GArgs& a) { a.la = bad_layout(w, b); });
        g("bLayout", bad_name(b), {HANDLE}, "bLayout", [b](World& w, GArgs& a) { a.lb = bad_layout(w, b); });
        g("outputLayout", bad_name(b), {HANDLE}, "outputLayout", [b](World& w, GArgs& a) { a.out = bad_layout(w, b); });
    }
    g("epilogueDesc", "the grouped GEMM descriptor", {HANDLE}, "epilogueDesc",
      [](World& w, GArgs& a) { a.epi = reinterpret_cast<fqQuantDesc_t>(w.gd); });
    // Layouts.
    g("aLayout", "BF16 A", {INVALID}, "aLayout", none, [](World& w) { w.set_layout(w.la, FQ_TENSOR_LAYOUT_TYPE, FQ_TYPE_BF16); });
    g("aLayout", "row stride 136 bytes (not a multiple of 16)", {INVALID}, "aLayout", none,
      [](World& w) { w.set_layout(w.la, FQ_TENSOR_LAYOUT_LD, 136); });
    g("aLayout", "K = 64 against B's 128", {INVALID}, "bLayout", none, [](World& w) { w.set_layout(w.la, FQ_TENSOR_LAYOUT_COLS, 64); });
    g("aLayout", "5 rows against the output's 4", {INVALID}, "outputLayout", none,
      [](World& w) { w.set_layout(w.la, FQ_TENSOR_LAYOUT_ROWS, 5); });
    g("aLayout", "rows x ld overflow", {INVALID}, "aLayout", none,
      [](World& w) { w.set_layout(w.la, FQ_TENSOR_LAYOUT_ROWS, INT64_MAX); });
    g("aLayout", "C [M, N] bf16 bytes overflow", {INVALID}, "C [M, N]", none, [](World& w) {
        w.set_layout(w.la, FQ_TENSOR_LAYOUT_ROWS, INT64_MAX / 128);
        w.set_layout(w.out, FQ_TENSOR_LAYOUT_ROWS, INT64_MAX / 128);
    });
    g("bLayout", "INT8 B", {INVALID}, "bLayout", none, [](World& w) { w.set_layout(w.lb, FQ_TENSOR_LAYOUT_TYPE, FQ_TYPE_INT8); });
    g("bLayout", "255 rows are not E*N for E = 2", {INVALID}, "bLayout", none,
      [](World& w) { w.set_layout(w.lb, FQ_TENSOR_LAYOUT_ROWS, 255); });
    g("bLayout", "1 row for 2 groups", {INVALID}, "bLayout", none, [](World& w) { w.set_layout(w.lb, FQ_TENSOR_LAYOUT_ROWS, 1); });
    g("bLayout", "0 rows", {INVALID}, "bLayout", none, [](World& w) { w.set_layout(w.lb, FQ_TENSOR_LAYOUT_ROWS, 0); });
    g("bLayout", "K = 256 against A's 128", {INVALID}, "bLayout", none, [](World& w) {
        w.set_layout(w.lb, FQ_TENSOR_LAYOUT_LD, 256);
        w.set_layout(w.lb, FQ_TENSOR_LAYOUT_COLS, 256);
    });
    g("bLayout", "row stride 136 bytes", {INVALID}, "bLayout", none, [](World& w) { w.set_layout(w.lb, FQ_TENSOR_LAYOUT_LD, 136); });
    g("bLayout", "odd N = 127 under a gated epilogue", {INVALID}, "bLayout", none,
      [](World& w) { w.set_layout(w.lb, FQ_TENSOR_LAYOUT_ROWS, 254); });
    g("bLayout", "N = 64: H = 32 against the output's 64", {INVALID}, "outputLayout", none,
      [](World& w) { w.set_layout(w.lb, FQ_TENSOR_LAYOUT_ROWS, 128); });
    g("outputLayout", "3 rows", {INVALID}, "outputLayout", none, [](World& w) { w.set_layout(w.out, FQ_TENSOR_LAYOUT_ROWS, 3); });
    g("outputLayout", "INT8 against an e4m3fn epilogue", {INVALID}, "outputLayout", none,
      [](World& w) { w.set_layout(w.out, FQ_TENSOR_LAYOUT_TYPE, FQ_TYPE_INT8); });
    g("outputLayout", "the A layout", {INVALID}, "outputLayout", [](World& w, GArgs& a) { a.out = w.la; });
    g("outputLayout", "ld 63 < cols", {INVALID}, "outputLayout", none, [](World& w) { w.set_layout(w.out, FQ_TENSOR_LAYOUT_LD, 63); });
    const Setup no_quantize = [](World& w) { w.gset(FQ_GEMM_DESC_QUANTIZE, 0); };
    g("outputLayout", "NULL with QUANTIZE = 0 (allowed: C and D only)", {OK}, "", [](World&, GArgs& a) {
        a.out = nullptr; a.y = nullptr; a.s = nullptr; a.sbytes = 0;
    }, no_quantize).after = [](World& w) {
        return w.values.untouched_from(0) && w.scales.untouched_from(0) && w.gemm_c.at(0) != kPoison && w.gemm_d.at(0) != kPoison;
    };
    // Operands.
    const std::pair<const char*, size_t> operands[] = {{"a", 0}, {"aScales", 1}, {"b", 2}, {"bScales", 3}};
    for (const auto& [name, which] : operands) {
        const std::string arg = name;
        auto at = [which = which](GArgs& a) -> const void*& { return which == 0 ? a.a : which == 1 ? a.sa : which == 2 ? a.b : a.sb; };
        g(arg, "NULL", {NULLP}, arg + ":", [at](World&, GArgs& a) { at(a) = nullptr; });
        const bool fp32 = which == 1 || which == 3;  // the scales: 4-byte alignment; the fp8 operands: 16
        const std::vector<size_t> offsets = fp32 ? std::vector<size_t>{1, 2} : std::vector<size_t>{1, 4, 8};
        for (size_t by : offsets)
            g(arg, "at +" + str(int64_t(by)) + (fp32 ? " (not 4-byte aligned)" : " (not 16-byte aligned)"), {MISALIGNED},
              arg + ":", [at, by, odd](World&, GArgs& a) { at(a) = odd(at(a), by); });
        g(arg, "NULL with zero rows (allowed: nothing read)", {OK}, "", [at](World&, GArgs& a) { at(a) = nullptr; },
          [](World& w) {
              w.set_layout(w.la, FQ_TENSOR_LAYOUT_ROWS, 0);
              w.set_layout(w.out, FQ_TENSOR_LAYOUT_ROWS, 0);
          });
    }
    // Outputs.
    output_cases<GArgs>(g);
    for (size_t n : {size_t(0), size_t(1), size_t(kScaleBytes - 1)})
        g("scalesSizeInBytes", str(int64_t(n)) + " bytes, " + str(kScaleBytes) + " needed", {SMALL}, "scalesSizeInBytes",
          [n](World&, GArgs& a) { a.sbytes = n; });
    g("scalesSizeInBytes", "SIZE_MAX (more than needed: allowed)", {OK}, "", [](World&, GArgs& a) { a.sbytes = SIZE_MAX; });
    g("scalesSizeInBytes", "per-tensor dynamic: one scale per group, 8 bytes; 4 declared", {SMALL}, "scalesSizeInBytes",
      [](World&, GArgs& a) { a.sbytes = 4; }, [](World& w) { w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC); });
    g("stream", "any value on the host backend (ignored: synchronous)", {OK}, "",
      [](World& w, GArgs& a) { a.stream = reinterpret_cast<fqStream_t>(&w.wild); });
    // The grouped GEMM descriptor's combinations.
    g("gemmDesc", "3 groups: 256 B rows are not 3 x N", {INVALID}, "bLayout", none,
      [](World& w) { w.gset(FQ_GEMM_DESC_NUM_GROUPS, 3); });
    g("gemmDesc", "2 groups without offsets", {NULLP}, "FQ_GEMM_DESC_GROUP_OFFSETS_POINTER", none,
      [](World& w) { w.gsetp(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, nullptr); });
    g("gemmDesc", "counts without offsets", {INVALID}, "FQ_GEMM_DESC_GROUP_COUNTS_POINTER", none, [](World& w) {
        w.gset(FQ_GEMM_DESC_NUM_GROUPS, 1);
        w.gsetp(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, nullptr);
        w.gsetp(FQ_GEMM_DESC_GROUP_COUNTS_POINTER, w.counts);
    });
    g("gemmDesc", "QUANTIZE = 0 with neither C nor D: nothing to write", {INVALID}, "FQ_GEMM_DESC_QUANTIZE", none, [](World& w) {
        w.gset(FQ_GEMM_DESC_QUANTIZE, 0);
        w.gsetp(FQ_GEMM_DESC_C_OUTPUT_POINTER, nullptr);
        w.gsetp(FQ_GEMM_DESC_D_OUTPUT_POINTER, nullptr);
    });
    g("gemmDesc", "one group, no offsets, B of 128 rows (control: all rows; N = 128)", {OK}, "", none, [](World& w) {
        w.gset(FQ_GEMM_DESC_NUM_GROUPS, 1);
        w.gsetp(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, nullptr);
        w.set_layout(w.lb, FQ_TENSOR_LAYOUT_ROWS, 128);
    });
    g("gemmDesc", "counts, alphas and COL_MAJOR A scales (control)", {OK}, "", none, [](World& w) {
        w.gsetp(FQ_GEMM_DESC_GROUP_COUNTS_POINTER, w.counts);
        w.gsetp(FQ_GEMM_DESC_ALPHA_POINTER, w.alpha);
        w.gset(FQ_GEMM_DESC_A_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR);
    }).after = [](World& w) { return w.gemm_c.at(2 * 128 * 2) != kPoison && w.gemm_c.at(1 * 128 * 2) == kPoison; };
    g("gemmDesc", "offsets far outside the rows are clamped (nothing outside the buffers)", {OK}, "", none, [](World& w) {
        w.offsets[0] = INT32_MIN; w.offsets[1] = INT32_MAX; w.offsets[2] = -5;
    });
    const std::pair<int32_t, const char*> odd_ptrs[] = {
        {FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, "FQ_GEMM_DESC_GROUP_OFFSETS_POINTER"},
        {FQ_GEMM_DESC_GROUP_COUNTS_POINTER, "FQ_GEMM_DESC_GROUP_COUNTS_POINTER"},
        {FQ_GEMM_DESC_ALPHA_POINTER, "FQ_GEMM_DESC_ALPHA_POINTER"},
        {FQ_GEMM_DESC_C_OUTPUT_POINTER, "FQ_GEMM_DESC_C_OUTPUT_POINTER"},
        {FQ_GEMM_DESC_D_OUTPUT_POINTER, "FQ_GEMM_DESC_D_OUTPUT_POINTER"}};
    for (const auto& [attr, nm] : odd_ptrs)
        g("gemmDesc", std::string("odd ") + nm, {MISALIGNED}, nm, none, [attr = attr](World& w) {
            const void* base = attr == FQ_GEMM_DESC_C_OUTPUT_POINTER ? static_cast<const void*>(w.gemm_c.p())
                               : attr == FQ_GEMM_DESC_D_OUTPUT_POINTER ? static_cast<const void*>(w.gemm_d.p())
                               : attr == FQ_GEMM_DESC_ALPHA_POINTER ? static_cast<const void*>(w.alpha)
                               : attr == FQ_GEMM_DESC_GROUP_COUNTS_POINTER ? static_cast<const void*>(w.counts)
                                                                           : static_cast<const void*>(w.offsets);
            w.gsetp(attr, static_cast<const uint8_t*>(base) + 1);
        });
    // The epilogue descriptor: its MoE attributes belong to the GEMM descriptor; fqQuantize's rules otherwise.
    g("epilogueDesc", "MoE layout CONTIGUOUS", {INVALID}, "FQ_QUANT_DESC_MOE_LAYOUT", none, [](World& w) {
        w.set(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_CONTIGUOUS); w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2);
        w.setp(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, w.offsets);
    });
    g("epilogueDesc", "MoE experts", {INVALID}, "FQ_QUANT_DESC_MOE_NUM_EXPERTS", none,
      [](World& w) { w.set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, 2); });
    g("epilogueDesc", "MoE offsets", {INVALID}, "FQ_QUANT_DESC_MOE_OFFSETS_POINTER", none,
      [](World& w) { w.setp(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, w.offsets); });
    g("epilogueDesc", "MoE counts", {INVALID}, "FQ_QUANT_DESC_MOE_COUNTS_POINTER", none,
      [](World& w) { w.setp(FQ_QUANT_DESC_MOE_COUNTS_POINTER, w.counts); });
    g("epilogueDesc", "BLOCK_2D over 2 groups: no host implementation", {UNSUPPORTED}, "BLOCK_2D", none,
      [](World& w) { w.set(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_BLOCK_2D); });
    g("epilogueDesc", "odd FQ_QUANT_DESC_ROW_PROB_POINTER", {MISALIGNED}, "FQ_QUANT_DESC_ROW_PROB_POINTER", none,
      [](World& w) { w.setp(FQ_QUANT_DESC_ROW_PROB_POINTER, reinterpret_cast<const uint8_t*>(w.x.data()) + 1); });
    g("epilogueDesc", "columnwise output only (control): rowwise buffers untouched", {OK}, "", [](World&, GArgs& a) {
        a.y = nullptr; a.s = nullptr; a.sbytes = 0;
    }, [](World& w) { w.columnwise(); }).after = [](World& w) {
        return w.values.untouched_from(0) && w.scales.untouched_from(0) && w.col_values.at(255) != kPoison;
    };
    g("epilogueDesc", "QUANTIZE = 0 ignores a quantization no fqQuantize runs (allowed)", {OK}, "", none, [](World& w) {
        w.gset(FQ_GEMM_DESC_QUANTIZE, 0);
        w.set(FQ_QUANT_DESC_GROUP_SIZE, 48);
    }).after = [](World& w) { return w.values.untouched_from(0) && w.gemm_d.at(0) != kPoison; };
    for (const Combo& k : combos()) {
        const std::string how = k.how;
        // Combinations over MoE layouts or other row counts are the GEMM's own cases above.
        if (how.find("MoE") != std::string::npos || how.find("MASKED") != std::string::npos ||
            how.find("experts") != std::string::npos || how.find("rows") != std::string::npos ||
            how.find("without a gate") != std::string::npos)  // a gate decides H = N/2 (its own cases above)
            continue;
        g("epilogueDesc", how, {k.want}, k.names, none, k.setup);
    }
}

const std::vector<Case>& all_cases() {
    static const std::vector<Case> cases = [] {
        Cases c;
        status_and_version_cases(c);
        handle_cases(c);
        layout_cases(c);
        desc_cases(c);
        query_cases(c);
        quantize_cases(c);
        plan_cases(c);
        one_call_cases(c);
        repack_cases(c);
        gemm_desc_cases(c);
        gemm_query_cases(c);
        grouped_gemm_cases(c);
        return c.all;
    }();
    return cases;
}

// Runs one case in a fresh world and checks the status, the message, the guards, the untouched outputs
// and objects of a failure, and the case's own check.
void run_case(const Case& k) {
    World w;
    if (k.fit.values) w.values = Guarded(*k.fit.values);
    if (k.fit.scales) w.scales = Guarded(*k.fit.scales);
    if (k.fit.repacked) w.repacked = Guarded(*k.fit.repacked);
    if (k.setup) k.setup(w);
    const std::vector<uint8_t> before = w.snapshot();
    const fqStatus_t got = k.call(w);
    const std::string message = fqGetLastErrorMessage();
    if (w.via_plan) {  // the plan an fqQuantize case made (plan_cases): a failed execution's plan is not an output
        fqPlan_t made = nullptr;
        std::memcpy(&made, w.obj.p(), sizeof made);
        if (made) REQUIRE(fqPlanDestroy(made) == FQ_STATUS_SUCCESS);
        std::fill_n(w.obj.p(), w.obj.size(), uint8_t(0));
    }
    const std::string line = k.fn + "(" + k.arg + "): " + k.how + " -> " + fqGetStatusString(got) + " \"" + message + "\"";
    INFO(line);
    CHECK(std::find(k.want.begin(), k.want.end(), got) != k.want.end());
    if (k.sets_message) {
        if (got == FQ_STATUS_SUCCESS) {
            CHECK(message.empty());
        } else {
            CHECK(!message.empty());
            CHECK(message.find(k.names) != std::string::npos);
        }
    }
    for (const Guarded* g : {&w.values, &w.scales, &w.attr, &w.written, &w.name, &w.value, &w.count, &w.size, &w.obj,
                             &w.repacked, &w.col_values, &w.col_scales, &w.gemm_c, &w.gemm_d})
        CHECK(g->guards_intact());
    if (got != FQ_STATUS_SUCCESS) {
        // A failing call writes none of the caller's outputs (fqQuerySupport clears its name first, the
        // create functions set their object to NULL, the get functions report the size they take).
        CHECK(w.values.untouched_from(0));
        CHECK(w.repacked.untouched_from(0));
        CHECK(w.scales.untouched_from(0));
        CHECK(w.col_values.untouched_from(0));
        CHECK(w.col_scales.untouched_from(0));
        CHECK(w.gemm_c.untouched_from(0));
        CHECK(w.gemm_d.untouched_from(0));
        CHECK(w.attr.untouched_from(0));
        CHECK(w.value.untouched_from(0));
        CHECK(w.count.untouched_from(0));
        CHECK(w.size.untouched_from(0));
        CHECK(w.name.untouched_from(1));
        CHECK((w.obj.untouched_from(0) || w.obj.all_zero()));
        CHECK(w.snapshot() == before);  // no object changed
    }
    if (k.after) CHECK(k.after(w));
    if (got == FQ_STATUS_SUCCESS && k.fn == "fqCreate") fqDestroy(*reinterpret_cast<fqHandle_t*>(w.obj.p()));
    if (got == FQ_STATUS_SUCCESS && k.fn == "fqTensorLayoutCreate")
        fqTensorLayoutDestroy(*reinterpret_cast<fqTensorLayout_t*>(w.obj.p()));
}

size_t run_function(const char* fn) {
    size_t n = 0;
    for (const Case& k : all_cases())
        if (k.fn == fn) {
            run_case(k);
            ++n;
        }
    return n;
}

// The header's entry points and their parameter names, parsed from the installed text.
std::map<std::string, std::vector<std::string>> header_entry_points() {
    std::ifstream f(FQ_PUBLIC_HEADER);
    REQUIRE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string raw = ss.str();
    std::string text;  // comments removed
    for (size_t i = 0; i < raw.size(); ++i) {
        if (raw.compare(i, 2, "/*") == 0) {
            const size_t e = raw.find("*/", i + 2);
            i = e == std::string::npos ? raw.size() : e + 1;
            text += ' ';
        } else if (raw.compare(i, 2, "//") == 0) {
            const size_t e = raw.find('\n', i);
            i = e == std::string::npos ? raw.size() : e - 1;
        } else {
            text += raw[i];
        }
    }
    std::map<std::string, std::vector<std::string>> out;
    const std::regex fn(R"(FQ_API\s+[\w\s\*]+?\b(fq\w+)\s*\(([^)]*)\))");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), fn); it != std::sregex_iterator(); ++it) {
        std::vector<std::string> params;
        std::stringstream ps((*it)[2].str());
        std::string p;
        while (std::getline(ps, p, ',')) {
            std::smatch m;
            if (std::regex_search(p, m, std::regex(R"((\w+)\s*$)")) && m[1] != "void") params.push_back(m[1]);
        }
        out[(*it)[1]] = params;
    }
    return out;
}

}  // namespace

#define FQ_BAD_INPUT_TEST(FN)                                                \
    TEST_CASE("bad input: " #FN) {                                           \
        const size_t n = run_function(#FN);                                  \
        MESSAGE(#FN ": ", n, " bad-input cases");                            \
        CHECK(n > 0);                                                        \
    }

FQ_BAD_INPUT_TEST(fqGetStatusString)
FQ_BAD_INPUT_TEST(fqCreate)
FQ_BAD_INPUT_TEST(fqDestroy)
FQ_BAD_INPUT_TEST(fqHandleSetAttribute)
FQ_BAD_INPUT_TEST(fqHandleGetAttribute)
FQ_BAD_INPUT_TEST(fqTensorLayoutCreate)
FQ_BAD_INPUT_TEST(fqTensorLayoutDestroy)
FQ_BAD_INPUT_TEST(fqTensorLayoutSetAttribute)
FQ_BAD_INPUT_TEST(fqTensorLayoutGetAttribute)
FQ_BAD_INPUT_TEST(fqQuantDescCreate)
FQ_BAD_INPUT_TEST(fqQuantDescDestroy)
FQ_BAD_INPUT_TEST(fqQuantDescSetAttribute)
FQ_BAD_INPUT_TEST(fqQuantDescGetAttribute)
FQ_BAD_INPUT_TEST(fqGetScaleBufferSize)
FQ_BAD_INPUT_TEST(fqGetScaleBufferInfo)
FQ_BAD_INPUT_TEST(fqGetWorkspaceSize)
FQ_BAD_INPUT_TEST(fqQuerySupport)
FQ_BAD_INPUT_TEST(fqGetVariantCount)
FQ_BAD_INPUT_TEST(fqGetVariantName)
FQ_BAD_INPUT_TEST(fqQuantize)
FQ_BAD_INPUT_TEST(fqPlanCreate)
FQ_BAD_INPUT_TEST(fqPlanDestroy)
FQ_BAD_INPUT_TEST(fqPlanGetAttribute)
FQ_BAD_INPUT_TEST(fqPlanGetVariantName)
FQ_BAD_INPUT_TEST(fqPlanExecute)
FQ_BAD_INPUT_TEST(fqQuantizeSimple)
FQ_BAD_INPUT_TEST(fqGetScaleBufferSizeSimple)
FQ_BAD_INPUT_TEST(fqGetScaleRepackSize)
FQ_BAD_INPUT_TEST(fqScaleRepack)
FQ_BAD_INPUT_TEST(fqGroupedGemmDescCreate)
FQ_BAD_INPUT_TEST(fqGroupedGemmDescDestroy)
FQ_BAD_INPUT_TEST(fqGroupedGemmDescSetAttribute)
FQ_BAD_INPUT_TEST(fqGroupedGemmDescGetAttribute)
FQ_BAD_INPUT_TEST(fqGroupedGemmGetScaleBufferSize)
FQ_BAD_INPUT_TEST(fqGroupedGemmGetScaleBufferInfo)
FQ_BAD_INPUT_TEST(fqGroupedGemm)

TEST_CASE("bad input: the matrix covers every argument of every entry point of the header") {
    const auto entry_points = header_entry_points();
    REQUIRE(entry_points.size() >= 20);
    std::map<std::string, std::set<std::string>> covered;
    std::map<std::string, size_t> per_function;
    for (const Case& k : all_cases()) {
        covered[k.fn].insert(k.arg);
        ++per_function[k.fn];
        CHECK_MESSAGE(entry_points.count(k.fn) == 1, k.fn, " is not an entry point of the header");
    }
    for (const auto& [fn, params] : entry_points)
        for (const std::string& p : params)
            CHECK_MESSAGE(covered[fn].count(p) == 1, fn, "(", p, ") has no bad-input case");
    std::string summary;
    for (const auto& [fn, n] : per_function) summary += "\n  " + fn + ": " + std::to_string(n);
    MESSAGE("bad-input matrix: ", all_cases().size(), " cases over ", per_function.size(), " entry points", summary);
}

// ---- Zero rows and absurd widths (docs/spec.md §6) ---------------------------------------------------------------

namespace {

// The descriptor settings the width cases run under: each scheme's own scratch path on the host backend.
struct WidthCase {
    const char* how;
    std::function<void(fqt::Desc&)> setup;
};
std::vector<WidthCase> width_cases() {
    return {
        {"per-group 128", [](fqt::Desc&) {}},
        {"per-token", [](fqt::Desc& d) { d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN); }},
        {"per-tensor dynamic", [](fqt::Desc& d) { d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC); }},
        {"BLOCK_2D", [](fqt::Desc& d) { d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_BLOCK_2D); }},
        {"MXFP8, swizzled", [](fqt::Desc& d) {
             d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8).i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0)
                 .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4); }},
        {"per-group 32, rowwise + columnwise", [](fqt::Desc& d) {
             static uint8_t dummy[64];
             d.i32(FQ_QUANT_DESC_GROUP_SIZE, 32).i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE)
                 .ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, dummy).ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, dummy); }},
        {"MXFP8 columnwise, swizzled", [](fqt::Desc& d) {
             static uint8_t dummy[64];
             d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8).i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0)
                 .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_SWIZZLED_128X4).i32(FQ_QUANT_DESC_OUTPUTS, FQ_OUTPUT_COLUMNWISE)
                 .ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, dummy).ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, dummy); }},
    };
}

}  // namespace

TEST_CASE("zero rows of 2^40 and 2^61 columns: SUCCESS without work or memory sized by the width") {
    for (const WidthCase& wc : width_cases())
        for (int64_t cols : {int64_t(1) << 40, int64_t(1) << 61}) {
            CAPTURE(std::string(wc.how));
            CAPTURE(cols);
            fqt::Handle h;
            fqt::Desc d;
            wc.setup(d);
            fqt::Layout in(FQ_TYPE_BF16, 0, cols, cols), out(FQ_TYPE_FP8_E4M3FN, 0, cols, cols);
            alignas(16) uint8_t scales[64] = {};
            fqStatus_t s;
            int64_t allocated;
            {
                fqt::AllocationCount count;
                s = fqQuantize(h.h, d.d, in.l, nullptr, out.l, nullptr, scales, sizeof scales, nullptr, 0, nullptr);
                allocated = count.bytes();
            }
            const std::string message = fqGetLastErrorMessage();
            INFO(message);
            // SUCCESS, or (2^61 columns of fp32 columnwise scales: a scale stride past int64) a specific refusal.
            CHECK((s == FQ_STATUS_SUCCESS || (s == FQ_STATUS_INVALID_VALUE && message.find("overflow") != std::string::npos)));
            CHECK(allocated < 4096);
        }
}

TEST_CASE("a row stride or width whose bytes overflow int64 is refused whatever the rows, at create and at set") {
    // bf16: 2^62 elements are 2^63 bytes; FP32: 2^61 elements are 2^63 bytes.
    for (const auto& [dtype, n] : {std::pair{FQ_TYPE_BF16, int64_t(1) << 62}, std::pair{FQ_TYPE_FP32, int64_t(1) << 61},
                                   std::pair{FQ_TYPE_BF16, INT64_MAX}}) {
        CAPTURE(dtype);
        CAPTURE(n);
        for (int64_t rows : {int64_t(0), int64_t(1)}) {
            fqTensorLayout_t l = nullptr;
            CHECK(fqTensorLayoutCreate(&l, dtype, rows, n, n) == FQ_STATUS_INVALID_VALUE);
            CHECK(std::string(fqGetLastErrorMessage()).find("overflow") != std::string::npos);
            CHECK(l == nullptr);
        }
        fqt::Layout l(dtype, 0, 8, 8);
        for (int32_t attr : {FQ_TENSOR_LAYOUT_LD, FQ_TENSOR_LAYOUT_COLS}) {
            CHECK(fqTensorLayoutSetAttribute(l.l, attr, &n, sizeof n) == FQ_STATUS_INVALID_VALUE);
            CHECK(std::string(fqGetLastErrorMessage()).find(attr == FQ_TENSOR_LAYOUT_LD ? "FQ_TENSOR_LAYOUT_LD" : "FQ_TENSOR_LAYOUT_COLS") != std::string::npos);
        }
    }
    // The largest bf16 stride whose bytes fit: accepted with zero rows.
    fqTensorLayout_t l = nullptr;
    CHECK(fqTensorLayoutCreate(&l, FQ_TYPE_BF16, 0, INT64_MAX / 2, INT64_MAX / 2) == FQ_STATUS_SUCCESS);
    fqTensorLayoutDestroy(l);
}

TEST_CASE("host scratch is bounded by min(rows, block) x width: one row of 2^18 columns allocates about its own data") {
    constexpr int64_t kWide = int64_t(1) << 18;
    for (const WidthCase& wc : width_cases()) {
        CAPTURE(std::string(wc.how));
        fqt::Handle h;
        fqt::Desc d;
        wc.setup(d);
        int32_t outputs = 0;
        REQUIRE(fqQuantDescGetAttribute(d.d, FQ_QUANT_DESC_OUTPUTS, &outputs, 4, nullptr) == FQ_STATUS_SUCCESS);
        const bool columnwise = outputs & FQ_OUTPUT_COLUMNWISE;
        std::vector<uint16_t> x(size_t(kWide), 0x3F80);
        const auto n = static_cast<size_t>(kWide);
        std::vector<uint8_t> y(n), col_y(n), scales(n * 4 + 1024), col_scales(n * 4 + 1024);
        if (columnwise)
            d.ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, col_y.data()).ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, col_scales.data());
        fqt::Layout in(FQ_TYPE_BF16, 1, kWide, kWide), out(FQ_TYPE_FP8_E4M3FN, 1, kWide, kWide);
        // The caller's data: the input row and each output row (scales are smaller than either).
        const int64_t data = kWide * 2 + kWide * ((outputs & FQ_OUTPUT_ROWWISE ? 1 : 0) + (columnwise ? 1 : 0));
        fqStatus_t s;
        int64_t allocated;
        {
            fqt::AllocationCount count;
            s = fqQuantize(h.h, d.d, in.l, x.data(), out.l, y.data(), scales.data(), scales.size(), nullptr, 0, nullptr);
            allocated = count.bytes();
        }
        INFO(std::string(fqGetLastErrorMessage()));
        CHECK(s == FQ_STATUS_SUCCESS);
        CHECK(allocated <= 4 * data);
    }
}

TEST_CASE("an attribute a scheme does not use is accepted at the scheme's own value, and when never set") {
    const struct {
        const char* how;
        int32_t scheme, out, scale_type, group;  // group 0: GROUP_SIZE never set
    } own[] = {
        {"MXFP8, GROUP_SIZE 32", FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_E8M0, 32},
        {"MXFP4, GROUP_SIZE 32", FQ_SCHEME_MXFP4, FQ_TYPE_FP4_E2M1, FQ_TYPE_E8M0, 32},
        {"NVFP4, GROUP_SIZE 16", FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1, FQ_TYPE_FP8_E4M3FN, 16},
        {"BLOCK_2D, GROUP_SIZE 128", FQ_SCHEME_BLOCK_2D, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP32, 128},
        {"MXFP8, GROUP_SIZE never set", FQ_SCHEME_MXFP8, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_E8M0, 0},
        {"NVFP4, GROUP_SIZE never set", FQ_SCHEME_NVFP4, FQ_TYPE_FP4_E2M1, FQ_TYPE_FP8_E4M3FN, 0},
        {"PER_TOKEN, GROUP_SIZE never set", FQ_SCHEME_PER_TOKEN, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP32, 0},
        {"PER_TENSOR_DYNAMIC, GROUP_SIZE never set", FQ_SCHEME_PER_TENSOR_DYNAMIC, FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP32, 0},
    };
    for (const auto& o : own) {
        CAPTURE(std::string(o.how));
        fqt::Desc d;
        d.i32(FQ_QUANT_DESC_SCHEME, o.scheme).i32(FQ_QUANT_DESC_OUTPUT_TYPE, o.out).i32(FQ_QUANT_DESC_SCALE_TYPE, o.scale_type);
        if (o.group) d.i32(FQ_QUANT_DESC_GROUP_SIZE, o.group);
        std::vector<uint16_t> x(4 * 64, 0x3F80);
        std::vector<uint8_t> y(4 * 64), s(4096);
        fqt::Handle h;
        fqt::Layout in(FQ_TYPE_BF16, 4, 64, 64), out(o.out, 4, 64, 64);
        CHECK_MESSAGE(fqQuantize(h.h, d.d, in.l, x.data(), out.l, y.data(), s.data(), s.size(), nullptr, 0, nullptr) ==
                          FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    }
    // Setting GROUP_SIZE 0 forgets a value set before (the default again).
    fqt::Desc d;
    d.i32(FQ_QUANT_DESC_GROUP_SIZE, 64).i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN).i32(FQ_QUANT_DESC_GROUP_SIZE, 0);
    size_t n = 0;
    CHECK(fqGetScaleBufferSize(d.d, 4, 64, FQ_OUTPUT_ROWWISE, &n) == FQ_STATUS_SUCCESS);
    int32_t g = 0;
    CHECK(fqQuantDescGetAttribute(d.d, FQ_QUANT_DESC_GROUP_SIZE, &g, 4, nullptr) == FQ_STATUS_SUCCESS);
    CHECK(g == 128);
}
