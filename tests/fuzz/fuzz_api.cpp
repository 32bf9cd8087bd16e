// libFuzzer target over the public C API on the host backend. The input is a program: a sequence of
// operations (one opcode byte, then that operation's operands) creating and destroying handles,
// descriptors and layouts, setting and getting attributes with arbitrary ids, sizes and values, asking
// the scale, workspace and support queries with arbitrary shapes, running fqQuantize (rowwise, columnwise
// or both) with buffers sized from the queries (capped at a few MB) or deliberately wrong, and running
// fqGetScaleRepackSize / fqScaleRepack over arbitrary scale types, layouts, shapes, batchings and MoE row
// offsets, fqGroupedGemm on small problems (opcode byte 0xFF), and the one-call entry points (0xFD). Every
// rowwise fqQuantize runs again as a plan (fqPlanCreate, its facts, fqPlanExecute, fqPlanDestroy). Bytes past the end read as zero, so every byte string is a program. tests/fuzz/make_corpus.py
// writes the seed corpus in this format.
//
// Besides ASan and UBSan, the target aborts when the library breaks one of its promises:
//   - a status outside fqStatus, or a message that is empty on failure or set after success;
//   - an attribute that does not read back as set;
//   - fqGetScaleBufferSize disagreeing with FQ_SCALE_INFO_BYTES, padded extents smaller than logical;
//   - a plan (fqPlanCreate + fqPlanExecute) of a rowwise fqQuantize's objects and buffers disagreeing with it on
//     the status or the bytes, running a problem fqQuerySupport refused, or writing its outputs when it fails;
//   - fqQuantize succeeding where fqQuerySupport failed, or failing on buffers sized by the queries
//     (columnwise ones included: fqGetScaleBufferSize(.., FQ_OUTPUT_COLUMNWISE) and the output layout);
//   - fqQuantize accepting a wrong buffer (misaligned, short, NULL; columnwise: NULL or misaligned fp32);
//   - a failing fqQuantize or fqScaleRepack writing any byte of its outputs; a columnwise-only fqQuantize
//     writing `output` or `scales`; fqScaleRepack writing its source;
//   - fqScaleRepack failing on a valid problem with buffers of the sizes fqGetScaleRepackSize gives, or
//     accepting an invalid one; fqGetScaleRepackSize of `batch` blocks other than batch x one block;
//   - fqScaleRepack leaving a byte of dst unwritten (two runs over differently filled destinations differ),
//     or a repack A -> B -> A differing from A -> A;
//   - two runs of the same problem writing different bytes;
//   - fqGroupedGemm accepting a wrong buffer (a / b / aScales misaligned, a or output NULL, scales short), a
//     failing one writing C, D, the output, its scales or the columnwise buffers, or two runs differing.
// Every output buffer is a heap block of exactly the declared size, so a write past it is an ASan error;
// the columnwise and repack buffers also lie between guard bytes (poisoned under ASan) that are checked
// after every call.
//
// The descriptor's pointer attributes are only ever set to NULL, to this target's own pools (floats and
// int32s, aligned or deliberately misaligned) or, during one fqQuantize, to its guarded columnwise buffers;
// fqQuantize is skipped where a pool is too short for what the problem would read, and fqScaleRepack gets
// row offsets only where it has batch + 1 of them: the fuzzer looks for the library's bugs, not the caller's.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "fusedquant/fusedquant.h"
#include "fusedquant/fusedquant_dlpack.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define FQ_FUZZ_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define FQ_FUZZ_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#endif
#endif
#ifndef FQ_FUZZ_POISON
#define FQ_FUZZ_POISON(p, n) ((void)(p), (void)(n))
#define FQ_FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace {

[[noreturn]] void broken(const char* what, long a = 0, long b = 0) {
    std::fprintf(stderr, "fuzz_api: broken promise: %s (%ld, %ld); last message: %s\n", what, a, b, fqGetLastErrorMessage());
    std::abort();
}

// Reads the program; past its end every read is 0.
class Reader {
  public:
    Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
    bool more() const { return i_ < n_; }
    uint8_t u8() { return i_ < n_ ? p_[i_++] : 0; }
    uint32_t u32() { uint32_t v = 0; for (int k = 0; k < 4; ++k) v |= uint32_t(u8()) << (8 * k); return v; }
    uint64_t u64() { uint64_t v = 0; for (int k = 0; k < 8; ++k) v |= uint64_t(u8()) << (8 * k); return v; }
    void bytes(void* dst, size_t n) { for (size_t k = 0; k < n; ++k) static_cast<uint8_t*>(dst)[k] = u8(); }

    // Integers biased towards what matters: small values, multiples of 32, and the extremes.
    int64_t i64() {
        static const int64_t extremes[] = {0, 1, -1, 2, 3, 15, 16, 17, 31, 32, 33, 127, 128, 129, 4096,
                                           INT32_MAX, INT32_MIN, int64_t(1) << 31, int64_t(1) << 32,
                                           INT64_MAX, INT64_MIN, INT64_MAX / 2, INT64_MAX / 2 + 1,
                                           INT64_MAX / 4 + 1, INT64_MAX - 127, int64_t(1) << 62,
                                           int64_t(1) << 40, -(int64_t(1) << 40)};
        switch (u8() % 8) {
            case 0: case 1: return u8() % 9;                  // 0..8
            case 2: return int64_t(u8() % 17) * 16;          // 0..256, multiples of 16
            case 3: return 1 + u8() + (int64_t(u8() % 8) << 8);  // 1..2303
            case 4: return int8_t(u8());                      // -128..127
            case 5: return extremes[u8() % (sizeof extremes / sizeof extremes[0])];
            case 6: return int64_t(u64());
            default: return (int64_t(1) << (u8() % 63)) + int8_t(u8() % 5) - 2;  // 2^k - 2 .. 2^k + 2
        }
    }
    int32_t i32() {
        const int64_t v = i64();
        return (v < INT32_MIN || v > INT32_MAX) ? int32_t(uint32_t(uint64_t(v))) : int32_t(v);
    }
    // Attribute sizes: mostly the right one, else 0, one off, or absurd.
    size_t size(size_t right) {
        switch (u8() % 8) {
            case 0: case 1: case 2: case 3: return right;
            case 4: return u8() % 17;
            case 5: return right + 1;
            case 6: return right - 1;
            default: return u8() & 1 ? SIZE_MAX : size_t(u64());
        }
    }

  private:
    const uint8_t* p_;
    size_t n_, i_ = 0;
};

// FQ_FUZZ_TRACE=1: one line per checked call (to read what a corpus file does).
const bool g_trace = std::getenv("FQ_FUZZ_TRACE") != nullptr;

bool known_status(fqStatus_t s) { return s >= FQ_STATUS_SUCCESS && s <= FQ_STATUS_INTERNAL_ERROR; }

// Every guarded call: a known status, a message exactly when it failed.
fqStatus_t check(fqStatus_t s, const char* call = "") {
    if (!known_status(s)) broken("unknown status", s);
    const char* m = fqGetLastErrorMessage();
    if (g_trace && call[0]) std::fprintf(stderr, "  %-26s %-30s %s\n", call, fqGetStatusString(s), m ? m : "(null)");
    if (!m) broken("NULL message");
    if (s == FQ_STATUS_SUCCESS && m[0] != '\0') broken("message after success");
    if (s != FQ_STATUS_SUCCESS && m[0] == '\0') broken("failure without a message", s);
    if (std::strcmp(fqGetStatusString(s), "FQ_STATUS_UNKNOWN") == 0) broken("status without a name", s);
    return s;
}

// A heap block of exactly n bytes (at least one allocated), so ASan sees a write past n.
struct Block {
    std::unique_ptr<uint8_t[]> p;
    size_t n;
    explicit Block(size_t n_, uint8_t fill = 0xA5) : p(new uint8_t[n_ ? n_ : 1]), n(n_) { std::memset(p.get(), fill, n_ ? n_ : 1); }
    uint8_t* get() { return p.get(); }
    const uint8_t* get() const { return p.get(); }
    bool holds(uint8_t fill) const {
        for (size_t i = 0; i < n; ++i) if (p[i] != fill) return false;
        return true;
    }
};

// n bytes, `shift` bytes past a 16-byte boundary, between guard bytes on either side: poisoned under ASan
// (a write there stops at once) and checked by intact() in any build.
class Guarded {
  public:
    static constexpr size_t kGuard = 64;
    static constexpr uint8_t kGuardByte = 0xE7;
    Guarded(size_t n, uint8_t fill, size_t shift = 0) : n_(n), total_(n + 2 * kGuard + 32), mem_(new uint8_t[total_]) {
        const auto base = reinterpret_cast<uintptr_t>(mem_.get());
        off_ = size_t((base + kGuard + 15) / 16 * 16 - base) + shift % 16;
        std::memset(mem_.get(), kGuardByte, total_);
        std::memset(mem_.get() + off_, fill, n_);
        FQ_FUZZ_POISON(mem_.get(), off_);
        FQ_FUZZ_POISON(mem_.get() + off_ + n_, total_ - off_ - n_);
    }
    ~Guarded() { FQ_FUZZ_UNPOISON(mem_.get(), total_); }
    Guarded(const Guarded&) = delete;
    Guarded& operator=(const Guarded&) = delete;
    uint8_t* get() { return mem_.get() + off_; }
    const uint8_t* get() const { return mem_.get() + off_; }
    size_t size() const { return n_; }
    bool intact() const {
        FQ_FUZZ_UNPOISON(mem_.get(), total_);
        bool ok = true;
        for (size_t i = 0; i < total_ && ok; ++i) ok = (i >= off_ && i < off_ + n_) || mem_[i] == kGuardByte;
        FQ_FUZZ_POISON(mem_.get(), off_);
        FQ_FUZZ_POISON(mem_.get() + off_ + n_, total_ - off_ - n_);
        return ok;
    }
    bool holds(uint8_t fill) const {
        for (size_t i = 0; i < n_; ++i) if (get()[i] != fill) return false;
        return true;
    }
    bool same(const Guarded& o) const { return n_ == o.n_ && std::memcmp(get(), o.get(), n_) == 0; }
    void fill_random(uint8_t seed) {
        uint32_t x = 0x2545F491u ^ (uint32_t(seed) * 0x9E3779B9u);
        for (size_t i = 0; i < n_; ++i) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; get()[i] = uint8_t(x >> 11); }
    }

  private:
    size_t n_, total_, off_ = 0;
    std::unique_ptr<uint8_t[]> mem_;
};

constexpr int kDescs = 4, kLayouts = 6, kHandles = 2;
constexpr size_t kPool = 4096;  // floats / int32s the descriptor's pointers may address
constexpr int64_t kMaxInputBytes = 1 << 20, kMaxOutputBytes = 1 << 19, kMaxScaleBytes = 1 << 19;

// Descriptor attributes that hold pointers, which this target only points at its own pools.
bool pointer_attr(int32_t id) {
    switch (id) {
        case FQ_QUANT_DESC_STATIC_SCALE_POINTER: case FQ_QUANT_DESC_SCALE_UB_POINTER: case FQ_QUANT_DESC_ROW_PROB_POINTER:
        case FQ_QUANT_DESC_MOE_OFFSETS_POINTER: case FQ_QUANT_DESC_MOE_COUNTS_POINTER:
        case FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER: case FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER:
        case FQ_QUANT_DESC_GLOBAL_AMAX_POINTER: return true;
        default: return false;
    }
}

struct Fuzz {
    Reader r;
    fqHandle_t h[kHandles] = {};
    fqQuantDesc_t d[kDescs] = {};
    fqTensorLayout_t l[kLayouts] = {};
    fqHandle_t dead_h = nullptr;
    fqQuantDesc_t dead_d = nullptr;
    fqTensorLayout_t dead_l = nullptr;
    int wild = 0;
    alignas(16) float fpool[kPool + 16];
    alignas(16) int32_t ipool[kPool + 16];

    Fuzz(const uint8_t* data, size_t n) : r(data, n) {
        for (size_t i = 0; i < kPool + 16; ++i) { fpool[i] = 1.0f; ipool[i] = int32_t(i); }
        if (fqGetVersion() != FQ_VERSION_NUMBER) broken("fqGetVersion differs from the header", long(fqGetVersion()), FQ_VERSION_NUMBER);
        check(fqCreate(&h[0], FQ_BACKEND_HOST, -1));
        check(fqCreate(&dead_h, FQ_BACKEND_HOST, 0));
        check(fqQuantDescCreate(&dead_d));
        check(fqTensorLayoutCreate(&dead_l, FQ_TYPE_BF16, 1, 1, 1));
        check(fqDestroy(dead_h));
        check(fqQuantDescDestroy(dead_d));
        check(fqTensorLayoutDestroy(dead_l));
    }
    ~Fuzz() {
        for (auto& x : l) check(fqTensorLayoutDestroy(x));
        for (auto& x : d) check(fqQuantDescDestroy(x));
        for (auto& x : h) check(fqDestroy(x));
    }

    // Object arguments: a slot (possibly empty), NULL, destroyed, another kind, or never an object.
    fqHandle_t handle() {
        const uint8_t k = r.u8() % 8;
        if (k < 4) return h[k % kHandles];
        if (k == 4) return nullptr;
        if (k == 5) return dead_h;
        if (k == 6) return reinterpret_cast<fqHandle_t>(d[0] ? static_cast<void*>(d[0]) : static_cast<void*>(l[0]));
        return reinterpret_cast<fqHandle_t>(&wild);
    }
    fqQuantDesc_t desc() {
        const uint8_t k = r.u8() % 10;
        if (k < kDescs + 2) return d[k % kDescs];
        if (k == 6) return nullptr;
        if (k == 7) return dead_d;
        if (k == 8) return reinterpret_cast<fqQuantDesc_t>(l[0] ? static_cast<void*>(l[0]) : static_cast<void*>(h[0]));
        return reinterpret_cast<fqQuantDesc_t>(&wild);
    }
    fqTensorLayout_t layout() {
        const uint8_t k = r.u8() % 12;
        if (k < kLayouts + 2) return l[k % kLayouts];
        if (k == 8) return nullptr;
        if (k == 9) return dead_l;
        if (k == 10) return reinterpret_cast<fqTensorLayout_t>(h[0]);
        return reinterpret_cast<fqTensorLayout_t>(&wild);
    }
    const void* pool_pointer() {
        switch (r.u8() % 6) {
            case 0: case 1: return nullptr;
            case 2: return fpool;
            case 3: return reinterpret_cast<const uint8_t*>(fpool) + 1 + r.u8() % 3;  // misaligned
            case 4: return ipool;
            default: return fpool + 16 + r.u8() % 16;
        }
    }

    // Reads a live desc/layout attribute; false when the object is not live or the call fails.
    template <class T>
    bool desc_attr(fqQuantDesc_t x, int32_t id, T* v) {
        size_t w = 0;
        return x && fqQuantDescGetAttribute(x, id, v, sizeof(T), &w) == FQ_STATUS_SUCCESS;
    }
    bool layout_facts(fqTensorLayout_t x, int32_t* type, int64_t* rows, int64_t* cols, int64_t* ld) {
        size_t w = 0;
        return fqTensorLayoutGetAttribute(x, FQ_TENSOR_LAYOUT_TYPE, type, 4, &w) == FQ_STATUS_SUCCESS &&
               fqTensorLayoutGetAttribute(x, FQ_TENSOR_LAYOUT_ROWS, rows, 8, &w) == FQ_STATUS_SUCCESS &&
               fqTensorLayoutGetAttribute(x, FQ_TENSOR_LAYOUT_COLS, cols, 8, &w) == FQ_STATUS_SUCCESS &&
               fqTensorLayoutGetAttribute(x, FQ_TENSOR_LAYOUT_LD, ld, 8, &w) == FQ_STATUS_SUCCESS;
    }

    // ---- operations -----------------------------------------------------------------------------
    void create_handle() {
        const int k = r.u8() % kHandles;
        check(fqDestroy(h[k]));
        h[k] = nullptr;
        const int32_t backend = r.u8() % 4 == 0 ? r.i32() : FQ_BACKEND_HOST, device = r.i32();
        if (check(fqCreate(&h[k], backend, device)) != FQ_STATUS_SUCCESS && h[k]) broken("fqCreate failed, handle set");
    }
    void create_desc() {
        const int k = r.u8() % kDescs;
        check(fqQuantDescDestroy(d[k]));
        d[k] = nullptr;
        check(fqQuantDescCreate(&d[k]));
    }
    void create_layout() {
        const int k = r.u8() % kLayouts;
        check(fqTensorLayoutDestroy(l[k]));
        l[k] = nullptr;
        const int32_t type = r.u8() % 4 == 0 ? r.i32() : int32_t(r.u8() % 10);
        const int64_t rows = r.i64(), cols = r.i64();
        const int64_t pad = r.u8() % 2 ? int64_t(r.u8() % 40) : -1;  // ld = cols + pad, or any value
        const int64_t ld = pad >= 0 && cols <= INT64_MAX - pad ? cols + pad : r.i64();
        const fqStatus_t s = check(fqTensorLayoutCreate(&l[k], type, rows, cols, ld), "fqTensorLayoutCreate");
        if (s != FQ_STATUS_SUCCESS && l[k]) broken("fqTensorLayoutCreate failed, layout set");
    }
    void destroy() {
        switch (r.u8() % 3) {
            case 0: { const int k = r.u8() % kHandles; check(fqDestroy(h[k])); h[k] = nullptr; break; }
            case 1: { const int k = r.u8() % kDescs; check(fqQuantDescDestroy(d[k])); d[k] = nullptr; break; }
            default: { const int k = r.u8() % kLayouts; check(fqTensorLayoutDestroy(l[k])); l[k] = nullptr; break; }
        }
        // Wrong objects given to the destroy functions: NULL is accepted, anything else not live is refused.
        const uint8_t which = r.u8() % 4;
        if (which == 1 && check(fqDestroy(reinterpret_cast<fqHandle_t>(&wild))) != FQ_STATUS_INVALID_HANDLE) broken("wild handle destroyed");
        if (which == 2 && check(fqQuantDescDestroy(dead_d)) == FQ_STATUS_SUCCESS && dead_d) {
            // the address was reused by a live descriptor of a slot: forget that slot
            for (auto& x : d) if (x == dead_d) x = nullptr;
        }
        if (which == 3 && check(fqTensorLayoutDestroy(reinterpret_cast<fqTensorLayout_t>(&wild))) != FQ_STATUS_INVALID_HANDLE) broken("wild layout destroyed");
    }

    void set_desc_attr() {
        fqQuantDesc_t x = desc();
        const int32_t id = r.u8() % 4 == 0 ? r.i32() : int32_t(r.u8() % 32);
        const size_t right = pointer_attr(id) ? sizeof(void*) : 4;
        const size_t n = r.size(right);
        Block buf(n < 64 ? n : 64);
        const bool null_buf = r.u8() % 16 == 0;
        if (pointer_attr(id)) {
            const void* p = pool_pointer();
            std::memcpy(buf.get(), &p, buf.n < sizeof p ? buf.n : sizeof p);
        } else if (r.u8() % 2) {  // an enum-like small value, or a float
            const int32_t v = r.u8() % 3 == 0 ? int32_t(r.u32()) : r.i32();
            std::memcpy(buf.get(), &v, buf.n < 4 ? buf.n : 4);
        } else {
            r.bytes(buf.get(), buf.n);
        }
        const fqStatus_t s = check(fqQuantDescSetAttribute(x, id, null_buf ? nullptr : buf.get(), n), "fqQuantDescSetAttribute");
        if (s == FQ_STATUS_SUCCESS) {  // reads back as set (GROUP_SIZE 0 restores the default, 128: the header)
            Block back(n);
            size_t w = 0;
            int32_t group_default = 128;
            const bool unset_group = id == FQ_QUANT_DESC_GROUP_SIZE && n == 4 && std::memcmp(buf.get(), "\0\0\0\0", 4) == 0;
            if (check(fqQuantDescGetAttribute(x, id, back.get(), n, &w)) != FQ_STATUS_SUCCESS || w != n ||
                std::memcmp(back.get(), unset_group ? static_cast<const void*>(&group_default) : buf.get(), n) != 0)
                broken("descriptor attribute does not read back", id);
        }
    }
    void get_desc_attr() {
        fqQuantDesc_t x = desc();
        const int32_t id = r.u8() % 4 == 0 ? r.i32() : int32_t(r.u8() % 32);
        const size_t n = r.size(pointer_attr(id) ? sizeof(void*) : 4);
        const uint8_t mode = r.u8() % 6;
        Block buf(n < 64 ? n : 64);
        size_t w = 0;
        if (mode == 0) check(fqQuantDescGetAttribute(x, id, nullptr, 0, &w));
        else if (mode == 1) check(fqQuantDescGetAttribute(x, id, nullptr, 0, nullptr));
        else if (mode == 2) check(fqQuantDescGetAttribute(x, id, nullptr, n, &w));
        else check(fqQuantDescGetAttribute(x, id, buf.get(), n < 64 ? n : (mode == 3 ? n : 64), mode == 4 ? nullptr : &w));
    }
    void set_layout_attr() {
        fqTensorLayout_t x = layout();
        const int32_t id = r.u8() % 4 == 0 ? r.i32() : int32_t(r.u8() % 5);
        const size_t n = r.size(id == FQ_TENSOR_LAYOUT_TYPE ? 4 : 8);
        Block buf(n < 64 ? n : 64);
        const int64_t v = id == FQ_TENSOR_LAYOUT_TYPE ? int64_t(r.u8() % 12) - 1 : r.i64();
        std::memcpy(buf.get(), &v, buf.n < 8 ? buf.n : 8);
        if (check(fqTensorLayoutSetAttribute(x, id, r.u8() % 16 ? buf.get() : nullptr, n)) == FQ_STATUS_SUCCESS) {
            Block back(n);
            size_t w = 0;
            if (check(fqTensorLayoutGetAttribute(x, id, back.get(), n, &w)) != FQ_STATUS_SUCCESS ||
                std::memcmp(back.get(), buf.get(), n) != 0)
                broken("layout attribute does not read back", id);
        }
    }
    void get_layout_attr() {
        fqTensorLayout_t x = layout();
        const int32_t id = r.u8() % 4 == 0 ? r.i32() : int32_t(r.u8() % 5);
        const size_t n = r.size(id == FQ_TENSOR_LAYOUT_TYPE ? 4 : 8);
        Block buf(n < 64 ? n : 64);
        size_t w = 0;
        const uint8_t mode = r.u8() % 4;
        if (mode == 0) check(fqTensorLayoutGetAttribute(x, id, nullptr, 0, &w));
        else if (mode == 1) check(fqTensorLayoutGetAttribute(x, id, nullptr, 0, nullptr));
        else check(fqTensorLayoutGetAttribute(x, id, buf.get(), n < 64 ? n : 64, mode == 2 ? nullptr : &w));
    }
    void handle_attr() {
        fqHandle_t x = handle();
        const int32_t id = r.u8() % 4 == 0 ? r.i32() : int32_t(r.u8() % 7);
        const size_t n = r.size(4);
        Block buf(n < 64 ? n : 64);
        const int32_t v = r.i32();
        std::memcpy(buf.get(), &v, buf.n < 4 ? buf.n : 4);
        size_t w = 0;
        if (r.u8() % 2) {
            if (check(fqHandleSetAttribute(x, id, r.u8() % 16 ? buf.get() : nullptr, n), "fqHandleSetAttribute") == FQ_STATUS_SUCCESS) {
                int32_t back = 0;
                if (check(fqHandleGetAttribute(x, id, &back, 4, &w)) != FQ_STATUS_SUCCESS || back != v)
                    broken("handle attribute does not read back", id, v);
            }
        } else {
            check(fqHandleGetAttribute(x, id, r.u8() % 8 ? buf.get() : nullptr, n < 64 ? n : 64, r.u8() % 8 ? &w : nullptr));
        }
    }
    void variants() {
        fqHandle_t x = handle();
        int32_t count = -1;
        const fqStatus_t s = check(fqGetVariantCount(x, r.u8() % 16 ? &count : nullptr));
        const int32_t index = r.u8() % 2 ? int32_t(r.u8() % 4) - 1 : r.i32();
        const size_t cap = r.u8() % 4 == 0 ? r.u8() % 3 : size_t(r.u8());
        Block name(cap, 0x5A);
        const fqStatus_t t = check(fqGetVariantName(x, index, r.u8() % 16 ? reinterpret_cast<char*>(name.get()) : nullptr, cap), "fqGetVariantName");
        if (t == FQ_STATUS_SUCCESS && std::memchr(name.get(), 0, cap) == nullptr) broken("variant name not terminated");
        if (t == FQ_STATUS_SUCCESS && s == FQ_STATUS_SUCCESS && (index < 0 || index >= count)) broken("name of a variant past the count", index, count);
        if (!fqGetStatusString(r.i32())) broken("NULL status string");
    }

    void scale_queries() {
        fqQuantDesc_t x = desc();
        const int64_t rows = r.i64(), cols = r.i64();
        const int32_t which = r.u8() % 8 == 0 ? r.i32() : int32_t(1 + r.u8() % 2);
        size_t bytes = 0;
        const fqStatus_t s = check(fqGetScaleBufferSize(x, rows, cols, which, r.u8() % 16 ? &bytes : nullptr), "fqGetScaleBufferSize");
        int64_t info[11];
        fqStatus_t t = FQ_STATUS_SUCCESS;
        for (int32_t i = 0; i < 11 && t == FQ_STATUS_SUCCESS; ++i) t = check(fqGetScaleBufferInfo(x, rows, cols, which, i, &info[i]));
        int64_t any = 0;
        check(fqGetScaleBufferInfo(x, rows, cols, which, r.i32(), r.u8() % 8 ? &any : nullptr));
        if (s == FQ_STATUS_SUCCESS && t == FQ_STATUS_SUCCESS) {
            if (info[FQ_SCALE_INFO_BYTES] < 0 || uint64_t(info[FQ_SCALE_INFO_BYTES]) != bytes) broken("scale bytes disagree", long(bytes), long(info[0]));
            // PACKED_UE8M0 counts its storage columns in int32 words of four E8M0 scales.
            const int64_t per_col = info[FQ_SCALE_INFO_DTYPE] == FQ_TYPE_E8M0 && info[FQ_SCALE_INFO_ELEMENT_BYTES] == 4 ? 4 : 1;
            if (info[FQ_SCALE_INFO_PADDED_ROWS] < info[FQ_SCALE_INFO_ROWS] ||
                info[FQ_SCALE_INFO_PADDED_COLS] * per_col < info[FQ_SCALE_INFO_COLS] ||
                info[FQ_SCALE_INFO_ROWS] < 0 || info[FQ_SCALE_INFO_COLS] < 0)
                broken("padded scale extents smaller than logical");
            if (info[FQ_SCALE_INFO_ELEMENT_BYTES] != 1 && info[FQ_SCALE_INFO_ELEMENT_BYTES] != 4) broken("scale element bytes", long(info[7]));
        }
    }

    void support_queries() {
        fqHandle_t hh = handle();
        fqQuantDesc_t x = desc();
        fqTensorLayout_t in = layout(), out = layout();
        const size_t cap = r.u8() % 4 == 0 ? r.u8() % 3 : size_t(r.u8());
        Block name(cap, 0x5A);
        char* np = r.u8() % 16 ? reinterpret_cast<char*>(name.get()) : nullptr;
        const fqStatus_t s = check(fqQuerySupport(hh, x, in, out, np, cap), "fqQuerySupport");
        if (np && cap && std::memchr(np, 0, cap) == nullptr) broken("support name not terminated");
        size_t ws = 1;
        const fqStatus_t t = check(fqGetWorkspaceSize(hh, x, in, out, r.u8() % 16 ? &ws : nullptr));
        if ((s == FQ_STATUS_SUCCESS) != (t == FQ_STATUS_SUCCESS) && t != FQ_STATUS_NULL_POINTER)
            broken("fqQuerySupport and fqGetWorkspaceSize disagree", s, t);
    }

    // The columnwise outputs of one fqQuantize: guarded buffers of the sizes the queries give (scales:
    // fqGetScaleBufferSize(.., FQ_OUTPUT_COLUMNWISE); values: the output layout's bytes, or [H, M] with
    // stride M when transposed), which the descriptor's COLUMNWISE_* pointers address for the call; the
    // descriptor's own pointers are put back when it goes.
    struct Columnwise {
        fqQuantDesc_t x = nullptr;
        const void *saved_out = nullptr, *saved_scales = nullptr;
        std::unique_ptr<Guarded> data, scales;
        int32_t scale_type = FQ_TYPE_FP32;
        bool null = false;   // a NULL pointer where the problem writes: fqQuerySupport refuses it
        bool wrong = false;  // that, or misaligned fp32 scales: fqQuantize refuses it

        // mode (0-4: both buffers; 5: values NULL; 6: scales NULL; 7: scales misaligned); false: no buffers
        // (the descriptor keeps its pointers). With `gemm`, the scales are sized for fqGroupedGemm with that
        // descriptor's groups (fqGroupedGemmGetScaleBufferSize), else for fqQuantize.
        bool prepare(Fuzz& f, fqQuantDesc_t desc, fqTensorLayout_t out, uint8_t mode, fqGroupedGemmDesc_t gemm = nullptr) {
            int32_t ot = 0, transpose = 0;
            int64_t orows = 0, ocols = 0, old = 0;
            size_t sbytes = 0;
            if (!f.layout_facts(out, &ot, &orows, &ocols, &old) ||
                (gemm ? fqGroupedGemmGetScaleBufferSize(gemm, desc, orows, ocols, FQ_OUTPUT_COLUMNWISE, &sbytes)
                      : fqGetScaleBufferSize(desc, orows, ocols, FQ_OUTPUT_COLUMNWISE, &sbytes)) != FQ_STATUS_SUCCESS ||
                !f.desc_attr(desc, FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, &saved_out) ||
                !f.desc_attr(desc, FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, &saved_scales))
                return false;
            f.desc_attr(desc, FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, &transpose);
            f.desc_attr(desc, FQ_QUANT_DESC_SCALE_TYPE, &scale_type);
            const bool fp4 = ot == FQ_TYPE_FP4_E2M1;
            const __int128 bytes = transpose ? __int128(ocols) * (fp4 ? (orows + 1) / 2 : orows)
                                             : (fp4 ? (__int128(orows) * old + 1) / 2 : __int128(orows) * old);
            if (bytes > kMaxOutputBytes || sbytes > size_t(kMaxScaleBytes)) return false;
            const size_t shift = mode == 7 ? 1 + f.r.u8() % 3 : 0;
            data.reset(new Guarded(size_t(bytes), 0xA5));
            scales.reset(new Guarded(sbytes, 0xA5, shift));
            null = (mode == 5 && orows > 0) || (mode == 6 && sbytes > 0);
            wrong = null || (mode == 7 && scale_type == FQ_TYPE_FP32 && sbytes > 0);
            x = desc;
            point(mode == 5 ? nullptr : data->get(), mode == 6 ? nullptr : scales->get());
            return true;
        }
        void point(const void* values, const void* s) {
            if (fqQuantDescSetAttribute(x, FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, &values, sizeof values) != FQ_STATUS_SUCCESS ||
                fqQuantDescSetAttribute(x, FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, &s, sizeof s) != FQ_STATUS_SUCCESS)
                broken("columnwise pointers not set");
        }
        bool intact() const { return !data || (data->intact() && scales->intact()); }
        bool untouched() const { return !data || (data->holds(0xA5) && scales->holds(0xA5)); }
        ~Columnwise() {
            if (x) point(saved_out, saved_scales);
        }
    };

    // What the descriptor's pointers make a problem of `rows` rows read: false where the pools cannot back it
    // (or, with `own_columnwise`, where the descriptor's own columnwise pointers would be written). Also the
    // MoE layout, and whether a float or int32 pointer is misaligned (execution then refuses).
    bool pools_back(fqQuantDesc_t x, int64_t rows, bool own_columnwise, int32_t* moe, bool* misaligned) {
        const void *prob = nullptr, *col_out = nullptr, *col_sc = nullptr;
        int32_t experts = 0;
        desc_attr(x, FQ_QUANT_DESC_ROW_PROB_POINTER, &prob);
        desc_attr(x, FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, &col_out);
        desc_attr(x, FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, &col_sc);
        desc_attr(x, FQ_QUANT_DESC_MOE_NUM_EXPERTS, &experts);
        desc_attr(x, FQ_QUANT_DESC_MOE_LAYOUT, moe);
        if (prob && rows > int64_t(kPool) - 32) return false;  // pool_pointer() may point up to 32 floats in
        // Columnwise buffers too large for this target: the descriptor's own pointers (pools) cannot back them.
        if (own_columnwise && (col_out || col_sc)) return false;
        // Under a MoE layout the library reads E+1 offsets, E counts, E static scales, E global amaxes, from a
        // pointer up to 32 elements into a pool.
        if (*moe != FQ_MOE_LAYOUT_NONE && experts >= int32_t(kPool) - 64) return false;
        *misaligned = false;
        for (int32_t id : {FQ_QUANT_DESC_STATIC_SCALE_POINTER, FQ_QUANT_DESC_SCALE_UB_POINTER, FQ_QUANT_DESC_ROW_PROB_POINTER,
                           FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, FQ_QUANT_DESC_MOE_OFFSETS_POINTER, FQ_QUANT_DESC_MOE_COUNTS_POINTER}) {
            const void* p = nullptr;
            desc_attr(x, id, &p);
            *misaligned |= (reinterpret_cast<uintptr_t>(p) & 3u) != 0;
        }
        return true;
    }

    // fqQuantize: the support query decides; then buffers of exactly the queried sizes, or a mistake.
    // fqQuantize's call as a plan (fusedquant.h, "Plans": fqQuantize is fqPlanCreate then fqPlanExecute): made,
    // its facts and variant read, executed once on the given buffers, destroyed. A failing fqPlanCreate leaves
    // no plan; the facts of a made plan are readable.
    fqStatus_t planned(fqHandle_t hh, fqQuantDesc_t x, fqTensorLayout_t in, fqTensorLayout_t out, const void* ip, void* op,
                       void* sp, size_t sdecl, int64_t* scale_fact) {
        fqPlan_t plan = reinterpret_cast<fqPlan_t>(this);  // must be NULL after a failure
        const fqStatus_t made = check(fqPlanCreate(&plan, hh, x, in, out), "fqPlanCreate");
        if (made != FQ_STATUS_SUCCESS) {
            if (plan) broken("a failing fqPlanCreate left a plan", made);
            return made;
        }
        for (int32_t attr : {FQ_PLAN_WORKSPACE_SIZE, FQ_PLAN_SCALE_BUFFER_SIZE, FQ_PLAN_COLUMNWISE_SCALE_BUFFER_SIZE}) {
            int64_t v = -1;
            if (check(fqPlanGetAttribute(plan, attr, &v, sizeof v, nullptr), "fqPlanGetAttribute") != FQ_STATUS_SUCCESS || v < 0)
                broken("a plan's fact unreadable", attr);
            if (attr == FQ_PLAN_SCALE_BUFFER_SIZE) *scale_fact = v;
        }
        char name[64];
        if (check(fqPlanGetVariantName(plan, name, sizeof name), "fqPlanGetVariantName") != FQ_STATUS_SUCCESS)
            broken("a plan's variant name unreadable");
        const fqStatus_t s = check(fqPlanExecute(plan, ip, op, sp, sdecl, nullptr, 0, nullptr), "fqPlanExecute");
        if (check(fqPlanDestroy(plan), "fqPlanDestroy") != FQ_STATUS_SUCCESS) broken("a live plan not destroyed");
        return s;
    }

    void quantize() {
        fqHandle_t hh = handle();
        fqQuantDesc_t x = desc();
        fqTensorLayout_t in = layout(), out = layout();
        const uint8_t mistake = r.u8() % 8;  // 0-3: none
        const uint8_t seed = r.u8();          // the input's values (fill_input), not read from the program
        int32_t outputs = FQ_OUTPUT_ROWWISE;
        desc_attr(x, FQ_QUANT_DESC_OUTPUTS, &outputs);
        const bool columnwise = (outputs & FQ_OUTPUT_COLUMNWISE) != 0, rowwise = (outputs & FQ_OUTPUT_ROWWISE) != 0;
        Columnwise col;
        const bool col_ours = columnwise && col.prepare(*this, x, out, r.u8() % 8);
        const fqStatus_t support = check(fqQuerySupport(hh, x, in, out, nullptr, 0), "fqQuerySupport (quantize)");
        if (support != FQ_STATUS_SUCCESS) {
            // Whatever the buffers, execution must refuse too, before touching them.
            Block tiny(1);
            const fqStatus_t s = check(fqQuantize(hh, x, in, tiny.get(), out, tiny.get(), tiny.get(), 1, nullptr, 0, nullptr), "fqQuantize (refused)");
            if (s == FQ_STATUS_SUCCESS) broken("fqQuantize ran a problem fqQuerySupport refused", support);
            if (!tiny.holds(0xA5) || !col.untouched()) broken("a refused fqQuantize wrote its outputs", s);
            int64_t unused = 0;
            if (planned(hh, x, in, out, tiny.get(), tiny.get(), tiny.get(), 1, &unused) == FQ_STATUS_SUCCESS)
                broken("a plan ran a problem fqQuerySupport refused", support);
            if (!tiny.holds(0xA5) || !col.untouched()) broken("a refused plan wrote its outputs");
            if (!col.intact()) broken("a write outside the columnwise buffers");
            return;
        }
        if (col.null) broken("fqQuerySupport accepted a NULL columnwise pointer");
        int32_t it = 0, ot = 0;
        int64_t rows = 0, icols = 0, ild = 0, orows = 0, ocols = 0, old = 0;
        if (!layout_facts(in, &it, &rows, &icols, &ild) || !layout_facts(out, &ot, &orows, &ocols, &old)) broken("live layouts unreadable");
        size_t sbytes = 0, col_sbytes = 0;
        if (check(fqGetScaleBufferSize(x, orows, ocols, FQ_OUTPUT_ROWWISE, &sbytes)) != FQ_STATUS_SUCCESS)
            broken("a supported problem has no scale buffer size");
        if (columnwise && check(fqGetScaleBufferSize(x, orows, ocols, FQ_OUTPUT_COLUMNWISE, &col_sbytes)) != FQ_STATUS_SUCCESS)
            broken("a supported columnwise problem has no columnwise scale buffer size");
        const __int128 in_bytes = __int128(rows) * ild * 2;
        const __int128 out_bytes = ot == FQ_TYPE_FP4_E2M1 ? (__int128(orows) * old + 1) / 2 : __int128(orows) * old;
        if (in_bytes > kMaxInputBytes || out_bytes > kMaxOutputBytes || sbytes > size_t(kMaxScaleBytes)) return;
        int32_t moe = FQ_MOE_LAYOUT_NONE;
        bool misaligned_desc = false;
        if (!pools_back(x, rows, columnwise && !col_ours, &moe, &misaligned_desc)) return;

        Block input{size_t(in_bytes) + 2}, output{size_t(out_bytes)}, scales{sbytes};
        fill_input(input, seed);
        const void* ip = input.get();
        void* op = output.get();
        void* sp = scales.get();
        size_t sdecl = sbytes;
        bool must_fail = col.wrong;  // rowwise buffers count only where rowwise output is asked for
        switch (mistake) {
            case 4: ip = input.get() + 1; must_fail |= rows > 0; break;                          // misaligned input
            case 5: if (sbytes) { sdecl = sbytes - 1 - r.u8() % sbytes; must_fail |= rowwise; } break;  // short scales
            case 6:
                if (rows) {
                    if (r.u8() % 2) { ip = nullptr; must_fail = true; }
                    else { op = nullptr; must_fail |= rowwise; }
                }
                break;
            case 7: if (sbytes) { sp = nullptr; must_fail |= rowwise; } break;
            default: break;
        }
        const bool wrong = ip != input.get() || op != output.get() || sp != scales.get() || sdecl != sbytes || col.wrong;
        const fqStatus_t s = check(fqQuantize(hh, x, in, ip, out, op, sp, sdecl, nullptr, 0, nullptr),
                                   !columnwise ? "fqQuantize" : rowwise ? "fqQuantize (both)" : "fqQuantize (columnwise)");
        if (!col.intact()) broken("a write outside the columnwise buffers");
        if (must_fail && s == FQ_STATUS_SUCCESS) broken("a wrong buffer accepted", mistake);
        if (!wrong && s != FQ_STATUS_SUCCESS && !(s == FQ_STATUS_MISALIGNED && misaligned_desc))
            broken("a supported problem failed on buffers sized by the queries", s);
        if (s != FQ_STATUS_SUCCESS && (!output.holds(0xA5) || !scales.holds(0xA5) || !col.untouched()))
            broken("a failing fqQuantize wrote its outputs", s);
        if (s == FQ_STATUS_SUCCESS && !rowwise && (!output.holds(0xA5) || !scales.holds(0xA5)))
            broken("a columnwise-only fqQuantize wrote the rowwise output or scales");
        if (!columnwise) {  // the same call as a plan: the same status and, on success, the same bytes
            Block output3{size_t(out_bytes)}, scales3{sbytes};
            int64_t scale_fact = -1;
            const fqStatus_t s3 = planned(hh, x, in, out, ip, op == output.get() ? output3.get() : op,
                                          sp == scales.get() ? scales3.get() : sp, sdecl, &scale_fact);
            // (A misaligned descriptor pointer and a wrong buffer at once: the plan meets the first when it is
            // made, fqQuantize the second first.)
            if (s3 != s && !(misaligned_desc && wrong)) broken("fqPlanCreate + fqPlanExecute and fqQuantize disagree", s3);
            if (scale_fact >= 0 && size_t(scale_fact) != sbytes) broken("FQ_PLAN_SCALE_BUFFER_SIZE is not fqGetScaleBufferSize's", scale_fact);
            if (s3 != FQ_STATUS_SUCCESS && (!output3.holds(0xA5) || !scales3.holds(0xA5))) broken("a failing plan wrote its outputs", s3);
            if (s3 == FQ_STATUS_SUCCESS && op == output.get() && sp == scales.get() &&
                (std::memcmp(output.get(), output3.get(), output.n) != 0 || std::memcmp(scales.get(), scales3.get(), sbytes) != 0))
                broken("a plan wrote other bytes than fqQuantize");
        }
        const __int128 col_bytes = col_ours ? __int128(col.data->size() + col.scales->size()) : 0;
        if (s == FQ_STATUS_SUCCESS && !wrong && in_bytes + out_bytes + col_bytes < (1 << 16)) {  // the same bytes again
            // Row gaps past cols keep the fill; so do rows no MoE expert owns, and their scale slots, and the
            // rowwise buffers of a columnwise-only problem. Every other scale byte is written.
            const uint8_t scale_fill = moe == FQ_MOE_LAYOUT_NONE ? 0x3C : 0xA5;
            Block output2{size_t(out_bytes)}, scales2{sbytes, rowwise ? scale_fill : uint8_t(0xA5)};
            std::unique_ptr<Guarded> data2, col_scales2;
            if (col_ours) {
                data2.reset(new Guarded(col.data->size(), 0xA5));
                col_scales2.reset(new Guarded(col.scales->size(), scale_fill));
                col.point(data2->get(), col_scales2->get());
            }
            if (check(fqQuantize(hh, x, in, ip, out, output2.get(), scales2.get(), sbytes, nullptr, 0, nullptr)) != FQ_STATUS_SUCCESS ||
                std::memcmp(output.get(), output2.get(), output.n) != 0 || std::memcmp(scales.get(), scales2.get(), sbytes) != 0)
                broken("a second run wrote different bytes");
            if (col_ours && (!data2->intact() || !col_scales2->intact())) broken("a write outside the columnwise buffers");
            if (col_ours && (!col.data->same(*data2) || !col.scales->same(*col_scales2)))
                broken("a second run wrote different columnwise bytes");
        }
    }

    // Input values from a seed, so that a quantize does not eat the rest of the program: one repeated
    // 16-bit pattern, random bits (NaN, Inf, subnormals, huge), values near 1, or a mix.
    static void fill_input(Block& b, uint8_t seed) {
        uint32_t x = 0x9E3779B9u ^ (uint32_t(seed) * 0x85EBCA6Bu);
        auto next = [&x] { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x; };
        const uint16_t pattern = uint16_t(next());
        for (size_t i = 0; i + 1 < b.n; i += 2) {
            uint16_t v;
            switch (seed % 4) {
                case 0: v = pattern; break;
                case 1: v = uint16_t(next()); break;
                case 2: v = uint16_t((next() & 0x807F) | (uint32_t(120 + next() % 16) << 7)); break;  // |v| in [2^-7, 2^8)
                default: v = next() % 4 == 0 ? uint16_t(next()) : uint16_t((next() & 0x807F) | 0x3F80); break;
            }
            std::memcpy(b.get() + i, &v, 2);
        }
    }

    // ---- fqGetScaleRepackSize / fqScaleRepack ---------------------------------------------------------
    static constexpr int64_t kMaxRepackBytes = 1 << 18, kMaxOffsets = 4096;

    // A small value below `n` (the byte itself, so seeds can spell it), or now and then any integer.
    int64_t small_or_any(uint8_t n) { const uint8_t b = r.u8(); return b >= 0xF0 ? r.i64() : int64_t(b % n); }
    int32_t small_or_any32(uint8_t n) { const uint8_t b = r.u8(); return b >= 0xF0 ? r.i32() : int32_t(b % n); }

    // The bytes fqGetScaleRepackSize gives for one side; where it succeeds for `blocks` > 0 blocks, one block
    // must be that size over `blocks`.
    fqStatus_t repack_size(int32_t type, int64_t blocks, int64_t rows, int64_t groups, int32_t layout, size_t* bytes) {
        const fqStatus_t s = check(fqGetScaleRepackSize(type, blocks, rows, groups, layout, bytes), "fqGetScaleRepackSize");
        size_t one = 0;
        if (s == FQ_STATUS_SUCCESS && blocks > 0) {
            if (check(fqGetScaleRepackSize(type, 1, rows, groups, layout, &one)) != FQ_STATUS_SUCCESS)
                broken("fqGetScaleRepackSize: batch blocks fit, one does not", blocks);
            if (__int128(one) * blocks != __int128(*bytes)) broken("fqGetScaleRepackSize: batch blocks are not batch x one", long(*bytes), long(one));
        }
        return s;
    }

    // Scale repack: a problem from the program (scale type, batch, rows, groups, batching, layouts, row
    // offsets, stacked rows), sizes from fqGetScaleRepackSize, guarded buffers of exactly those sizes or a
    // mistake; checks the status against the documented preconditions, the guards, that src is only read,
    // that a failing call writes nothing and that a successful one writes every byte of dst the same way twice.
    void scale_repack() {
        static const int32_t kTypes[] = {FQ_TYPE_FP32, FQ_TYPE_E8M0, FQ_TYPE_FP8_E4M3FN};
        fqHandle_t hh = handle();
        const uint8_t tsel = r.u8();
        const int32_t type = tsel >= 0xF0 ? r.i32() : kTypes[tsel % 3];
        const int64_t batch = small_or_any(9), rows = r.i64(), groups = small_or_any(13);
        const int32_t batching = small_or_any32(3), src_layout = small_or_any32(5), dst_layout = small_or_any32(5);
        const bool blocks = batching == FQ_SCALE_REPACK_BLOCKS;
        const bool src_stacked = batching == FQ_SCALE_REPACK_STACKED_TO_BLOCKS, dst_stacked = batching == FQ_SCALE_REPACK_BLOCKS_TO_STACKED;

        // Row offsets, batch + 1 of them where batch allows: 0, 7 NULL; 1-3 non-decreasing; 4 any int32;
        // 5 small, any order; 6 non-decreasing at a misaligned address.
        const uint8_t omode = r.u8() % 8;
        std::unique_ptr<Block> off_block;
        const int32_t* offsets = nullptr;
        int64_t last = 0;
        if (omode != 0 && omode != 7 && batch >= 0 && batch <= kMaxOffsets) {
            const size_t n = size_t(batch) + 1, shift = omode == 6 ? 1 + r.u8() % 3 : 0;
            std::vector<int32_t> v(n);
            int32_t step[16] = {};
            for (size_t i = 0; i < n; ++i) {
                int64_t x;
                if (i < 16) {
                    if (omode == 4) x = r.i32();
                    else if (omode == 5) x = int8_t(r.u8());
                    else x = i == 0 ? r.u8() % 4 : int64_t(v[i - 1]) + r.u8();
                    step[i] = int32_t(i == 0 ? 0 : x - v[i - 1]);
                } else {  // past 16: the first steps again
                    x = int64_t(v[i - 1]) + step[1 + (i - 1) % 15];
                }
                v[i] = int32_t(x < INT32_MIN ? INT32_MIN : (x > INT32_MAX ? INT32_MAX : x));
            }
            last = v[n - 1];
            off_block.reset(new Block(n * 4 + shift));
            std::memcpy(off_block->get() + shift, v.data(), n * 4);
            offsets = reinterpret_cast<const int32_t*>(off_block->get() + shift);
        }
        int64_t stacked_rows = 0;
        switch (r.u8() % 4) {
            case 0: stacked_rows = blocks ? 0 : last; break;     // what the offsets cover
            case 1: stacked_rows = last + r.u8() % 5 - 2; break;  // a little more or less
            case 2: stacked_rows = r.i64(); break;
            default: break;
        }
        const uint8_t mistake = r.u8() % 8;  // 0-3: none
        const uint8_t seed = r.u8();          // the source's bytes

        size_t src_need = 0, dst_need = 0;
        const fqStatus_t ss = repack_size(type, src_stacked ? 1 : batch, src_stacked ? stacked_rows : rows, groups, src_layout, &src_need);
        const fqStatus_t ds = repack_size(type, dst_stacked ? 1 : batch, dst_stacked ? stacked_rows : rows, groups, dst_layout, &dst_need);
        if (seed % 32 == 31 && check(fqGetScaleRepackSize(type, batch, rows, groups, src_layout, nullptr)) != FQ_STATUS_NULL_POINTER)
            broken("fqGetScaleRepackSize wrote through a NULL size");
        // The header's preconditions, all of them.
        const bool live = hh && (hh == h[0] || hh == h[1]);
        const bool aligned_offsets = (reinterpret_cast<uintptr_t>(offsets) & 3u) == 0;
        const bool valid = live && ss == FQ_STATUS_SUCCESS && ds == FQ_STATUS_SUCCESS && batching >= 0 && batching <= 2 &&
                           (blocks ? !offsets && stacked_rows == 0
                                   : offsets && aligned_offsets && stacked_rows >= 0 && batch <= INT32_MAX - 1);

        if (ss != FQ_STATUS_SUCCESS || ds != FQ_STATUS_SUCCESS || src_need > size_t(kMaxRepackBytes) || dst_need > size_t(kMaxRepackBytes)) {
            // Sizes no query gives, or too large here: 1-byte buffers, declared as 1 byte (or, for a side whose
            // query failed, as SIZE_MAX): the call must refuse before touching them.
            Guarded src(1, 0x11), dst(1, 0xA5);
            const size_t sdecl = ss != FQ_STATUS_SUCCESS && seed % 2 ? SIZE_MAX : 1;
            const size_t ddecl = ds != FQ_STATUS_SUCCESS && seed % 4 >= 2 ? SIZE_MAX : 1;
            const fqStatus_t s = check(fqScaleRepack(hh, type, batch, rows, groups, batching, offsets, stacked_rows, src_layout,
                                                     src.get(), sdecl, dst_layout, dst.get(), ddecl, nullptr), "fqScaleRepack (refused)");
            if (s == FQ_STATUS_SUCCESS && (ss != FQ_STATUS_SUCCESS || ds != FQ_STATUS_SUCCESS || src_need > 1 || dst_need > 1))
                broken("fqScaleRepack ran a problem its size query refused, or on short buffers", long(src_need), long(dst_need));
            if (!src.intact() || !dst.intact() || !src.holds(0x11) || (s != FQ_STATUS_SUCCESS && !dst.holds(0xA5)))
                broken("a refused fqScaleRepack wrote", s);
            return;
        }

        std::unique_ptr<Guarded> src(new Guarded(src_need, 0)), dst(new Guarded(dst_need, 0xA5)), both;
        src->fill_random(seed);
        const void* sp = src->get();
        void* dp = dst->get();
        size_t sdecl = src_need, ddecl = dst_need;
        bool must_fail = !valid, mistaken = false;
        switch (mistake) {
            case 4: if (dst_need) { ddecl = dst_need - 1 - r.u8() % dst_need; must_fail = mistaken = true; } break;
            case 5: if (src_need) { sdecl = src_need - 1 - r.u8() % src_need; must_fail = mistaken = true; } break;
            case 6: {  // NULL src, NULL dst, or dst overlapping src
                const uint8_t which = r.u8() % 3;
                if (which == 0 && src_need) { sp = nullptr; must_fail = mistaken = true; }
                if (which == 1 && dst_need) { dp = nullptr; must_fail = mistaken = true; }
                if (which == 2 && src_need && dst_need) {
                    const size_t at = (r.u8() % src_need) & ~size_t(3);
                    both.reset(new Guarded(std::max(src_need, at + dst_need), 0));
                    both->fill_random(seed);
                    sp = both->get();
                    dp = both->get() + at;
                    must_fail = mistaken = true;
                }
                break;
            }
            case 7: {  // a misaligned src or dst: refused for fp32 scales, any address for byte scales
                const uint8_t b = r.u8();
                const size_t shift = 1 + b % 3;
                std::unique_ptr<Guarded>& side = b & 4 ? dst : src;
                side.reset(new Guarded(side->size(), b & 4 ? 0xA5 : 0, shift));
                if (!(b & 4)) src->fill_random(seed);
                sp = src->get();
                dp = dst->get();
                must_fail |= type == FQ_TYPE_FP32 && side->size() > 0;
                mistaken = true;
                break;
            }
            default: break;
        }
        const std::vector<uint8_t> src_before(static_cast<const uint8_t*>(both ? both->get() : src->get()),
                                              static_cast<const uint8_t*>(both ? both->get() : src->get()) + (both ? both->size() : src_need));
        const fqStatus_t s = check(fqScaleRepack(hh, type, batch, rows, groups, batching, offsets, stacked_rows, src_layout,
                                                 sp, sdecl, dst_layout, dp, ddecl, nullptr), "fqScaleRepack");
        if (!src->intact() || !dst->intact() || (both && !both->intact())) broken("a write outside fqScaleRepack's buffers");
        if (must_fail && s == FQ_STATUS_SUCCESS) broken(valid ? "fqScaleRepack accepted a wrong buffer" : "fqScaleRepack accepted an invalid problem", mistake);
        if (!must_fail && s != FQ_STATUS_SUCCESS) broken("a valid repack failed on buffers sized by fqGetScaleRepackSize", s);
        if (!src_before.empty() && std::memcmp(src_before.data(), both ? both->get() : src->get(), src_before.size()) != 0)
            broken(both ? "a failing fqScaleRepack wrote (overlapping buffers)" : "fqScaleRepack wrote its source");
        if (s != FQ_STATUS_SUCCESS && !dst->holds(0xA5)) broken("a failing fqScaleRepack wrote", s);
        if (s != FQ_STATUS_SUCCESS || mistaken) return;

        // Every byte of dst is written (scales or 0): a destination filled differently ends up the same.
        Guarded dst2(dst_need, 0x3C);
        if (check(fqScaleRepack(hh, type, batch, rows, groups, batching, offsets, stacked_rows, src_layout, sp, sdecl,
                                dst_layout, dst2.get(), dst_need, nullptr)) != FQ_STATUS_SUCCESS ||
            !dst2.intact() || !dst->same(dst2))
            broken("a second repack wrote different bytes (a byte of dst left unwritten?)");
        if (!blocks) return;
        // A -> B -> A gives what A -> A gives (A's scales with A's padding zeroed).
        Guarded back(src_need, 0xA5), same(src_need, 0x3C);
        if (check(fqScaleRepack(hh, type, batch, rows, groups, batching, nullptr, 0, dst_layout, dst->get(), dst_need,
                                src_layout, back.get(), src_need, nullptr)) != FQ_STATUS_SUCCESS ||
            check(fqScaleRepack(hh, type, batch, rows, groups, batching, nullptr, 0, src_layout, sp, src_need,
                                src_layout, same.get(), src_need, nullptr)) != FQ_STATUS_SUCCESS)
            broken("a repack back to the source layout failed");
        if (!back.intact() || !same.intact() || !back.same(same)) broken("a repack there and back differs from one in place");
    }

    // fqGroupedGemmGetScaleBufferInfo for both outputs: each fact succeeds exactly where the size query does,
    // BYTES equals that size, padded extents are not smaller than logical ones; an unknown fact is refused.
    void gemm_scale_info(fqGroupedGemmDesc_t g, fqQuantDesc_t epi, int64_t rows, int64_t cols) {
        for (int32_t which : {int32_t(FQ_OUTPUT_ROWWISE), int32_t(FQ_OUTPUT_COLUMNWISE)}) {
            size_t bytes = 0;
            const fqStatus_t s = check(fqGroupedGemmGetScaleBufferSize(g, epi, rows, cols, which, &bytes));
            int64_t info[FQ_SCALE_INFO_BATCH_STRIDE + 1] = {};
            for (int32_t i = 0; i <= FQ_SCALE_INFO_BATCH_STRIDE; ++i) {
                const fqStatus_t t = check(fqGroupedGemmGetScaleBufferInfo(g, epi, rows, cols, which, i, &info[i]),
                                           "fqGroupedGemmGetScaleBufferInfo");
                if ((t == FQ_STATUS_SUCCESS) != (s == FQ_STATUS_SUCCESS)) broken("GEMM scale info and size disagree on success", s, t);
            }
            int64_t any = 0;
            if (s == FQ_STATUS_SUCCESS &&
                check(fqGroupedGemmGetScaleBufferInfo(g, epi, rows, cols, which, FQ_SCALE_INFO_BATCH_STRIDE + 1, &any)) == FQ_STATUS_SUCCESS)
                broken("an unknown fqScaleInfo accepted");
            if (s != FQ_STATUS_SUCCESS) continue;
            if (info[FQ_SCALE_INFO_BYTES] < 0 || uint64_t(info[FQ_SCALE_INFO_BYTES]) != bytes)
                broken("GEMM scale bytes disagree", long(bytes), long(info[FQ_SCALE_INFO_BYTES]));
            if (info[FQ_SCALE_INFO_PADDED_ROWS] < info[FQ_SCALE_INFO_ROWS] || info[FQ_SCALE_INFO_BATCH] < 1)
                broken("GEMM scale extents", long(info[FQ_SCALE_INFO_PADDED_ROWS]), long(info[FQ_SCALE_INFO_ROWS]));
        }
    }

    // fqGroupedGemm on the host backend: a small problem (M <= 48, N <= 128, K <= 256, E <= 4 groups) whose every
    // input this target allocates at the size the header gives (A [M, lda], B [E*N, K], their scales, E+1
    // offsets, E counts and alphas, M row probabilities: heap blocks of exactly that size), the GEMM
    // descriptor's values from the program (NUM_GROUPS sometimes E+1, 0 or -1; any A scale layout; QUANTIZE 0,
    // 1 or 2), an epilogue slot (its row probabilities and columnwise pointers ours for the call), an output
    // layout [M, H] of the epilogue's type (sometimes another type or width), and sometimes a mistake.
    // Promises: a mistake fails; a failing call writes nothing (C, D, output, scales, columnwise); nothing is
    // written outside the buffers; a call that succeeded writes the same bytes again.
    void grouped_gemm() {
        fqHandle_t hh = handle();
        fqQuantDesc_t epi = desc();
        const int32_t E = 1 + r.u8() % 4;
        const int64_t M = r.u8() % 49, N = 2 * (1 + r.u8() % 64);
        const uint8_t k_lo = r.u8(), k_hi = r.u8();  // (two statements' worth: the reads stay in order)
        const int64_t K = 1 + (k_lo | int64_t(k_hi) << 8) % 256;
        const int64_t ld = (K + 15) / 16 * 16, lda = ld + 16 * (r.u8() % 2);
        const uint8_t gmode = r.u8() % 8;
        const int32_t ngroups = gmode == 0 ? E + 1 : gmode == 1 ? 0 : gmode == 2 ? -1 : E;
        const uint8_t lmode = r.u8() % 8;
        const int32_t a_layout = lmode == 0 ? r.i32() : lmode < 4 ? int32_t(FQ_SCALE_LAYOUT_COL_MAJOR) : int32_t(FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
        const uint8_t q0 = r.u8(), q1 = r.u8();
        const int32_t quantize = int32_t(q0 % 4) / 2 + (q1 % 16 == 0);  // 0, 1, sometimes 2
        const uint8_t flags = r.u8(), omode = r.u8() % 4, mistake = r.u8() % 12, col_mode = r.u8() % 8, seed = r.u8();
        uint32_t x = 0x243F6A88u ^ (uint32_t(seed) * 0x9E3779B9u);
        auto next = [&x] { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x; };

        // The GEMM descriptor's group count as it took it (a refused value leaves the default, 1): the library
        // then reads B's E*N rows as that many weights of N_lib rows, and writes C [M, N_lib], D [M, H_lib].
        fqGroupedGemmDesc_t g = nullptr;
        if (check(fqGroupedGemmDescCreate(&g)) != FQ_STATUS_SUCCESS) broken("fqGroupedGemmDescCreate failed");
        check(fqGroupedGemmDescSetAttribute(g, FQ_GEMM_DESC_NUM_GROUPS, &ngroups, 4));
        int32_t groups = 0;
        size_t written = 0;
        if (check(fqGroupedGemmDescGetAttribute(g, FQ_GEMM_DESC_NUM_GROUPS, &groups, 4, &written)) != FQ_STATUS_SUCCESS || groups < 1 ||
            groups > E + 1)
            broken("NUM_GROUPS reads back outside what was set", groups);
        const int64_t n_lib = (E * N) % groups == 0 ? E * N / groups : N;  // (else refused: B's rows are not E*N)

        // The epilogue: its width, type and outputs, and its row probabilities ours (or NULL) for the call.
        int32_t gate = FQ_GATE_LAYOUT_SPLIT, out_type = FQ_TYPE_FP8_E4M3FN, outputs = FQ_OUTPUT_ROWWISE;
        desc_attr(epi, FQ_QUANT_DESC_GATE_LAYOUT, &gate);
        desc_attr(epi, FQ_QUANT_DESC_OUTPUT_TYPE, &out_type);
        desc_attr(epi, FQ_QUANT_DESC_OUTPUTS, &outputs);
        const int64_t H = gate == FQ_GATE_LAYOUT_NONE ? N : N / 2;
        const int64_t h_lib = gate == FQ_GATE_LAYOUT_NONE ? n_lib : n_lib / 2;
        if (flags & 0x80) out_type = int32_t(r.u8() % 10);
        const int64_t out_cols = flags & 0x40 ? H + 2 : H, out_ld = out_cols + 16 * (r.u8() % 2);
        const void* saved_prob = nullptr;
        const bool epi_live = desc_attr(epi, FQ_QUANT_DESC_ROW_PROB_POINTER, &saved_prob);

        // Inputs of exactly the stated sizes.
        const int64_t kb = (K + 127) / 128, nb = std::max((N + 127) / 128 * E, (n_lib + 127) / 128 * groups);
        const int64_t a_ld = a_layout == FQ_SCALE_LAYOUT_COL_MAJOR ? M : (M + 3) / 4 * 4;
        Block a(size_t(M * lda), 0x38), b(size_t(E * N * ld), 0x38);
        for (size_t i = 0; i < a.n; ++i) a.get()[i] = uint8_t(next() % 0x7E);  // finite e4m3, both signs below
        for (size_t i = 0; i < b.n; ++i) b.get()[i] = uint8_t(next() % 0x7E) | uint8_t(next() & 0x80);
        std::vector<float> sa(static_cast<size_t>(kb * a_ld)), sb(static_cast<size_t>(nb * kb)),
            alpha(static_cast<size_t>(E) + 1), prob(static_cast<size_t>(M));
        for (float& v : sa) v = float(1 + next() % 64) / 4096.0f;
        for (float& v : sb) v = float(1 + next() % 64) / 4096.0f;
        for (float& v : alpha) v = float(int(next() % 9) - 4) / 2.0f;
        for (float& v : prob) v = float(next() % 256) / 256.0f;
        // E + 2 offsets and E + 1 counts (NUM_GROUPS may be E + 1): non-decreasing in [0, M], or anything.
        std::vector<int32_t> offsets(size_t(E) + 2), counts(size_t(E) + 1);
        int32_t at = 0;
        for (int32_t& o : offsets) o = omode == 3 ? int32_t(next()) : (at = std::min<int32_t>(int32_t(M), at + int32_t(next() % (M / 2 + 2))));
        if (omode != 3) offsets[0] = 0;
        for (int32_t& c : counts) c = int32_t(next() % (M + 2)) - (omode == 3 ? 1 : 0);

        // The rest of the GEMM descriptor.
        Guarded c(size_t(M * n_lib * 2), 0xA5), dv(size_t(M * h_lib * 2), 0xA5);
        auto set = [&](int32_t id, const void* v, size_t n) {
            if (check(fqGroupedGemmDescSetAttribute(g, id, v, n)) != FQ_STATUS_SUCCESS && id != FQ_GEMM_DESC_A_SCALE_LAYOUT &&
                id != FQ_GEMM_DESC_QUANTIZE)
                broken("a pointer attribute of the GEMM descriptor refused", id);
        };
        auto set_ptr = [&](int32_t id, const void* p) { set(id, &p, sizeof p); };
        set(FQ_GEMM_DESC_A_SCALE_LAYOUT, &a_layout, 4);
        set(FQ_GEMM_DESC_QUANTIZE, &quantize, 4);
        set_ptr(FQ_GEMM_DESC_GROUP_OFFSETS_POINTER, flags & 1 ? offsets.data() : nullptr);
        set_ptr(FQ_GEMM_DESC_GROUP_COUNTS_POINTER, flags & 2 ? counts.data() : nullptr);
        set_ptr(FQ_GEMM_DESC_ALPHA_POINTER, flags & 4 ? alpha.data() : nullptr);
        set_ptr(FQ_GEMM_DESC_C_OUTPUT_POINTER, flags & 8 ? c.get() : nullptr);
        set_ptr(FQ_GEMM_DESC_D_OUTPUT_POINTER, flags & 16 ? dv.get() : nullptr);

        // Layouts, the output and its scales (sized by the query), the columnwise buffers.
        fqTensorLayout_t la = nullptr, lb = nullptr, lo = nullptr;
        check(fqTensorLayoutCreate(&la, FQ_TYPE_FP8_E4M3FN, M, K, lda));
        check(fqTensorLayoutCreate(&lb, FQ_TYPE_FP8_E4M3FN, E * N, K, ld));
        check(fqTensorLayoutCreate(&lo, out_type, M, out_cols, out_ld));
        // Scale buffers of the sizes the GEMM's own query gives (with offsets, per-tensor schemes: one per group).
        size_t sbytes = 0;
        if (!lo || fqGroupedGemmGetScaleBufferSize(g, epi, M, out_cols, FQ_OUTPUT_ROWWISE, &sbytes) != FQ_STATUS_SUCCESS ||
            sbytes > size_t(kMaxScaleBytes))
            sbytes = 1;
        gemm_scale_info(g, epi, M, out_cols);
        const bool fp4 = out_type == FQ_TYPE_FP4_E2M1;
        const size_t out_bytes = size_t(fp4 ? (M * out_ld + 1) / 2 : M * out_ld);
        Guarded out(out_bytes, 0xA5), sc(sbytes, 0xA5);
        Columnwise col;
        const bool col_ours = (outputs & FQ_OUTPUT_COLUMNWISE) && lo && col.prepare(*this, epi, lo, col_mode, g);
        if (epi_live) {
            const float* p = flags & 32 ? prob.data() : nullptr;
            if (fqQuantDescSetAttribute(epi, FQ_QUANT_DESC_ROW_PROB_POINTER, &p, sizeof p) != FQ_STATUS_SUCCESS)
                broken("row probabilities not set");
        }
        // Columnwise pointers this target cannot back (the epilogue slot's own, into the pools): skip.
        const void *own_col = nullptr, *own_col_sc = nullptr;
        desc_attr(epi, FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, &own_col);
        desc_attr(epi, FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, &own_col_sc);
        const bool skip = (outputs & FQ_OUTPUT_COLUMNWISE) && !col_ours && (own_col || own_col_sc);

        const void* ap = a.get();
        const void* bp = b.get();
        const void* sap = sa.data();
        void* op = out.get();
        size_t sdecl = sbytes;
        const bool rowwise_q = quantize == 1 && (outputs & FQ_OUTPUT_ROWWISE);
        bool must_fail = false;
        std::unique_ptr<Guarded> shifted;  // a or b 1..15 bytes past a 16-byte boundary
        switch (mistake) {
            case 6: case 7: {
                const size_t n = mistake == 6 ? a.n : b.n;
                shifted.reset(new Guarded(n, 0x38, 1 + next() % 15));
                std::memcpy(shifted->get(), mistake == 6 ? a.get() : b.get(), n);
                (mistake == 6 ? ap : bp) = shifted->get();
                must_fail = M > 0;
                break;
            }
            case 8: if (rowwise_q && sbytes > 1) { sdecl = sbytes - 1 - next() % (sbytes - 1); must_fail = true; } break;
            case 9: ap = nullptr; must_fail = M > 0; break;
            case 10: if (!sa.empty()) { sap = reinterpret_cast<const uint8_t*>(sa.data()) + 2; must_fail = M > 0; } break;
            case 11: op = nullptr; must_fail = M > 0 && rowwise_q; break;
            default: break;
        }
        must_fail |= col.wrong && M > 0 && quantize == 1;
        auto untouched = [&] {
            return c.holds(0xA5) && dv.holds(0xA5) && out.holds(0xA5) && sc.holds(0xA5) && col.untouched();
        };
        auto intact = [&] { return c.intact() && dv.intact() && out.intact() && sc.intact() && col.intact(); };
        if (!skip) {
            const fqStatus_t st = check(fqGroupedGemm(hh, g, epi, la, ap, sap, lb, bp, sb.data(), lo, op, sc.get(), sdecl, nullptr),
                                        "fqGroupedGemm");
            if (!intact()) broken("a write outside fqGroupedGemm's buffers", st);
            if (must_fail && st == FQ_STATUS_SUCCESS) broken("fqGroupedGemm accepted a wrong buffer", mistake);
            if (st != FQ_STATUS_SUCCESS && !untouched()) broken("a failing fqGroupedGemm wrote its outputs", st);
            if (st == FQ_STATUS_SUCCESS && mistake < 6 && !col_ours) {  // the same bytes again
                Guarded c2(c.size(), 0xA5), d2(dv.size(), 0xA5), out2(out.size(), 0xA5), sc2(sc.size(), 0xA5);
                set_ptr(FQ_GEMM_DESC_C_OUTPUT_POINTER, flags & 8 ? c2.get() : nullptr);
                set_ptr(FQ_GEMM_DESC_D_OUTPUT_POINTER, flags & 16 ? d2.get() : nullptr);
                if (check(fqGroupedGemm(hh, g, epi, la, ap, sap, lb, bp, sb.data(), lo, out2.get(), sc2.get(), sdecl, nullptr)) !=
                        FQ_STATUS_SUCCESS || !c2.intact() || !d2.intact() || !out2.intact() || !sc2.intact() ||
                    !c.same(c2) || !dv.same(d2) || !out.same(out2) || !sc.same(sc2))
                    broken("a second fqGroupedGemm wrote different bytes");
            }
        }
        if (epi_live && fqQuantDescSetAttribute(epi, FQ_QUANT_DESC_ROW_PROB_POINTER, &saved_prob, sizeof saved_prob) != FQ_STATUS_SUCCESS)
            broken("row probabilities not restored");
        check(fqTensorLayoutDestroy(la));
        check(fqTensorLayoutDestroy(lb));
        check(fqTensorLayoutDestroy(lo));
        check(fqGroupedGemmDescDestroy(g));
    }

    // Two threads sharing the handle, descriptor and layouts (opcode byte 0xFE): a rowwise problem the support
    // query accepts is run once, then by thread A twice more while thread B either runs it too (mode bit 0
    // set) or makes failing calls (a NULL input) and reads its own message. Promises: every run writes the
    // bytes of the first; each thread's fqGetLastErrorMessage is its own ("" after A's successes, B's
    // sentence after its failures). Columnwise problems are skipped: their buffers are the descriptor's,
    // shared by both threads, so running them concurrently would be this target's data race.
    void threads() {
        fqHandle_t hh = handle();
        fqQuantDesc_t x = desc();
        fqTensorLayout_t in = layout(), out = layout();
        const uint8_t mode = r.u8();
        int32_t outputs = 0, it = 0, ot = 0, moe = FQ_MOE_LAYOUT_NONE;
        int64_t rows = 0, icols = 0, ild = 0, orows = 0, ocols = 0, old = 0;
        bool misaligned = false;
        if (!desc_attr(x, FQ_QUANT_DESC_OUTPUTS, &outputs) || outputs != FQ_OUTPUT_ROWWISE ||
            check(fqQuerySupport(hh, x, in, out, nullptr, 0), "fqQuerySupport (threads)") != FQ_STATUS_SUCCESS)
            return;
        if (!layout_facts(in, &it, &rows, &icols, &ild) || !layout_facts(out, &ot, &orows, &ocols, &old)) broken("live layouts unreadable");
        size_t sbytes = 0;
        if (check(fqGetScaleBufferSize(x, orows, ocols, FQ_OUTPUT_ROWWISE, &sbytes)) != FQ_STATUS_SUCCESS)
            broken("a supported problem has no scale buffer size");
        const __int128 in_bytes = __int128(rows) * ild * 2;
        const __int128 out_bytes = ot == FQ_TYPE_FP4_E2M1 ? (__int128(orows) * old + 1) / 2 : __int128(orows) * old;
        if (in_bytes > kMaxInputBytes / 4 || out_bytes > kMaxOutputBytes / 4 || sbytes > size_t(kMaxScaleBytes) / 4 ||
            !pools_back(x, rows, false, &moe, &misaligned) || misaligned)
            return;
        Block input{size_t(in_bytes) + 2};
        fill_input(input, mode);
        struct Out {
            Block values, scales;
        };
        auto run = [&](Out& o) {
            return fqQuantize(hh, x, in, input.get(), out, o.values.get(), o.scales.get(), sbytes, nullptr, 0, nullptr);
        };
        Out first{Block(size_t(out_bytes)), Block(sbytes)}, a{Block(size_t(out_bytes)), Block(sbytes)},
            b{Block(size_t(out_bytes)), Block(sbytes)};
        if (check(run(first), "fqQuantize (threads, first)") != FQ_STATUS_SUCCESS) broken("a supported problem failed");
        auto same = [&](const Out& o) {
            return std::memcmp(o.values.get(), first.values.get(), o.values.n) == 0 &&
                   std::memcmp(o.scales.get(), first.scales.get(), sbytes) == 0;
        };
        const bool both_run = mode & 1;
        std::thread second([&] {
            for (int i = 0; i < 2; ++i) {
                if (both_run) {
                    if (run(b) != FQ_STATUS_SUCCESS || fqGetLastErrorMessage()[0] != '\0') broken("thread B: a run failed");
                    if (!same(b)) broken("thread B wrote other bytes than the first run");
                } else {
                    const fqStatus_t s = fqQuantize(hh, x, in, nullptr, out, b.values.get(), b.scales.get(), sbytes, nullptr, 0, nullptr);
                    if (s == FQ_STATUS_SUCCESS || fqGetLastErrorMessage()[0] == '\0') broken("thread B: a NULL input accepted, or no message", s);
                }
            }
        });
        for (int i = 0; i < 2; ++i) {
            if (run(a) != FQ_STATUS_SUCCESS) broken("thread A: a run failed");
            if (fqGetLastErrorMessage()[0] != '\0') broken("thread A: another thread's message after a success");
            if (!same(a)) broken("thread A wrote other bytes than the first run");
        }
        second.join();
    }

    // The one-call entry points (opcode byte 0xFD) on the same arguments, enums in range or not, shapes from
    // the program: fqGetScaleBufferSizeSimple sizes the scales; fqQuantizeSimple and fqQuantizeDLPack (packed
    // CPU tensors) must agree on the status and, where they succeed, on every byte; a failing call writes
    // nothing, and neither runs where the size query refused the problem.
    void one_call() {
        fqHandle_t hh = handle();
        const int32_t act = int32_t(r.u8() % 9) - 1, gate = int32_t(r.u8() % 6) - 1, scheme = int32_t(r.u8() % 10) - 1;
        const int32_t in_type = int32_t(r.u8() % 10), out_type = int32_t(r.u8() % 10), layout = int32_t(r.u8() % 7) - 1;
        const int64_t rows = r.i64(), cols = r.i64();
        const uint8_t seed = r.u8();
        size_t sbytes = 0;
        const fqStatus_t sized = check(fqGetScaleBufferSizeSimple(scheme, out_type, layout, rows, cols, &sbytes),
                                       "fqGetScaleBufferSizeSimple");
        if (sized != FQ_STATUS_SUCCESS) {
            Block tiny(1);
            const fqStatus_t s = check(fqQuantizeSimple(hh, act, gate, scheme, in_type, out_type, layout, rows, cols, tiny.get(),
                                                        tiny.get(), tiny.get(), 1, nullptr, 0, nullptr), "fqQuantizeSimple (refused)");
            if (s == FQ_STATUS_SUCCESS) broken("fqQuantizeSimple ran a problem its size query refused", sized);
            if (!tiny.holds(0xA5)) broken("a refused fqQuantizeSimple wrote its outputs", s);
            return;
        }
        const bool gated = gate > FQ_GATE_LAYOUT_NONE && gate <= FQ_GATE_LAYOUT_BLOCK_INTERLEAVED;
        if (rows < 0 || cols < 0 || rows > 4096 || cols > 65536) return;
        const int64_t in_cols = gated ? 2 * cols : cols, out_cols = out_type == FQ_TYPE_FP4_E2M1 ? (cols + 1) / 2 : cols;
        if (rows * in_cols * 2 > kMaxInputBytes || rows * out_cols > kMaxOutputBytes || sbytes > size_t(kMaxScaleBytes)) return;
        Block input{size_t(rows * in_cols * 2)}, out1{size_t(rows * out_cols)}, sc1{sbytes}, out2{size_t(rows * out_cols)}, sc2{sbytes};
        fill_input(input, seed);
        const fqStatus_t s1 = check(fqQuantizeSimple(hh, act, gate, scheme, in_type, out_type, layout, rows, cols, input.get(),
                                                     out1.get(), sc1.get(), sbytes, nullptr, 0, nullptr), "fqQuantizeSimple");
        if (s1 != FQ_STATUS_SUCCESS && (!out1.holds(0xA5) || !sc1.holds(0xA5))) broken("a failing fqQuantizeSimple wrote its outputs", s1);
        // The same problem as DLPack tensors: bf16 / fp16 input (other input types: uint16, which it refuses as the
        // one-call route refuses the type), bytes out (int8 for INT8), the scales packed in their own dtype.
        DLDataType in_dt{uint8_t(in_type == FQ_TYPE_FP16 ? kDLFloat : in_type == FQ_TYPE_BF16 ? kDLBfloat : kDLUInt), 16, 1};
        DLDataType out_dt{uint8_t(out_type == FQ_TYPE_INT8 ? kDLInt : kDLUInt), 8, 1};
        const bool fp32_scales = scheme != FQ_SCHEME_MXFP8 && scheme != FQ_SCHEME_MXFP4 && scheme != FQ_SCHEME_NVFP4;
        DLDataType sc_dt{uint8_t(fp32_scales ? kDLFloat : kDLUInt), uint8_t(fp32_scales ? 32 : 8), 1};
        int64_t in_shape[2] = {rows, in_cols}, out_shape[2] = {rows, out_cols}, sc_shape[1] = {int64_t(sbytes / (sc_dt.bits / 8))};
        DLTensor tin{input.get(), {kDLCPU, 0}, 2, in_dt, in_shape, nullptr, 0};
        DLTensor tout{out2.get(), {kDLCPU, 0}, 2, out_dt, out_shape, nullptr, 0};
        DLTensor tsc{sc2.get(), {kDLCPU, 0}, 1, sc_dt, sc_shape, nullptr, 0};
        const fqStatus_t s2 = check(fqQuantizeDLPack(hh, act, gate, scheme, out_type, layout, &tin, &tout, &tsc, nullptr, 0, nullptr),
                                    "fqQuantizeDLPack");
        if (s2 != FQ_STATUS_SUCCESS && (!out2.holds(0xA5) || !sc2.holds(0xA5))) broken("a failing fqQuantizeDLPack wrote its outputs", s2);
        const bool dtypes_natural = (in_type == FQ_TYPE_BF16 || in_type == FQ_TYPE_FP16) && sbytes % (sc_dt.bits / 8) == 0;
        if (dtypes_natural && (s1 == FQ_STATUS_SUCCESS) != (s2 == FQ_STATUS_SUCCESS)) broken("fqQuantizeSimple and fqQuantizeDLPack disagree", s2);
        if (s1 == FQ_STATUS_SUCCESS && s2 == FQ_STATUS_SUCCESS &&
            (std::memcmp(out1.get(), out2.get(), out1.n) != 0 || std::memcmp(sc1.get(), sc2.get(), sc1.n) != 0))
            broken("fqQuantizeSimple and fqQuantizeDLPack wrote different bytes");
    }

    void set_pool() {
        const size_t i = r.u8() % 32;
        uint32_t bits = r.u32();
        if (i < 16) std::memcpy(&fpool[i], &bits, 4);
        else ipool[i - 16] = int32_t(bits);
    }

    void run() {
        while (r.more()) {
            const uint8_t op = r.u8();
            // (opcode bytes of their own, so earlier corpus files keep their meaning but for them)
            if (op == 0xFF) {
                grouped_gemm();
                continue;
            }
            if (op == 0xFE) {
                threads();
                continue;
            }
            if (op == 0xFD) {
                one_call();
                continue;
            }
            switch (op % 16) {
                case 0: create_handle(); break;
                case 1: create_desc(); break;
                case 2: create_layout(); break;
                case 3: destroy(); break;
                case 4: case 5: set_desc_attr(); break;
                case 6: get_desc_attr(); break;
                case 7: set_layout_attr(); break;
                case 8: get_layout_attr(); break;
                case 9: handle_attr(); break;
                case 10: variants(); break;
                case 11: scale_queries(); break;
                case 12: support_queries(); break;
                case 13: set_pool(); break;
                case 14: quantize(); break;
                default: scale_repack(); break;
            }
        }
    }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Fuzz f(data, size);
    f.run();
    return 0;
}
