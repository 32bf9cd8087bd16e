#include "objects.h"

#include <atomic>
#include <mutex>

namespace fq {
namespace {

// A caller's value: bits 0-3 the kind, 4-31 the slot, 32-63 the slot's generation.
static_assert(sizeof(uintptr_t) >= 8, "an opaque value holds a kind, a 28-bit slot and a 32-bit generation");
constexpr unsigned kKindBits = 4, kSlotBits = 28;
constexpr uint64_t kKindMask = (uint64_t(1) << kKindBits) - 1, kSlotMask = (uint64_t(1) << kSlotBits) - 1;
constexpr uint32_t kLastGeneration = UINT32_MAX;

// Chunk c of a pool holds kFirstChunk << c slots, so slot i lies in chunk floor(log2(i + kFirstChunk)) -
// log2(kFirstChunk): a pool grows without moving a slot, and kChunks chunks hold every 28-bit slot index.
constexpr unsigned kFirstChunkLog2 = 4, kChunks = kSlotBits - kFirstChunkLog2;
constexpr uint64_t kFirstChunk = uint64_t(1) << kFirstChunkLog2;
constexpr uint64_t kCapacity = kFirstChunk * ((uint64_t(1) << kChunks) - 1);
static_assert(kCapacity <= kSlotMask + 1, "every slot index fits its field");

template <class T>
struct Slot {
    T object;
    // generation << 1 | live; written under the pool's mutex, read by lookups without it.
    std::atomic<uint64_t> state{0};
    uint32_t next_free = 0;  // the next retired slot ready for reuse, while this one is
};

template <class T>
struct Pool {
    std::mutex mutex;                         // held by add and remove, not by lookups
    std::atomic<Slot<T>*> chunks[kChunks] = {};
    uint64_t used = 0;                        // slots handed out at least once: 0 .. used-1
    uint64_t free_head = kCapacity;           // the last retired slot, kCapacity when none

    Slot<T>* slot(uint64_t i) const {
        if (i >= kCapacity) return nullptr;
        const uint64_t j = i + kFirstChunk;
        const unsigned c = unsigned(63 - __builtin_clzll(j)) - kFirstChunkLog2;
        Slot<T>* chunk = chunks[c].load(std::memory_order_acquire);
        return chunk ? chunk + (j - (kFirstChunk << c)) : nullptr;
    }
};

template <class T> constexpr ObjectKind kind_of();
template <> constexpr ObjectKind kind_of<fqContext>() { return ObjectKind::Handle; }
template <> constexpr ObjectKind kind_of<fqQuantDescOpaque>() { return ObjectKind::Desc; }
template <> constexpr ObjectKind kind_of<fqTensorLayoutOpaque>() { return ObjectKind::Layout; }
template <> constexpr ObjectKind kind_of<fqGroupedGemmDescOpaque>() { return ObjectKind::GemmDesc; }
template <> constexpr ObjectKind kind_of<fqPlanOpaque>() { return ObjectKind::Plan; }

// Never destroyed, so usable from the caller's atexit handlers and destructors.
template <class T>
Pool<T>& pool() {
    static Pool<T>* const p = new Pool<T>();
    return *p;
}

template <class T>
T* encode(uint64_t slot, uint32_t generation) {
    return reinterpret_cast<T*>(uintptr_t(uint64_t(generation) << 32 | slot << kKindBits | uint64_t(kind_of<T>())));
}

// The slot `value` names while its object is live, else nullptr.
template <class T>
Slot<T>* live_slot(const Pool<T>& p, const T* value) {
    const uint64_t v = uint64_t(reinterpret_cast<uintptr_t>(value));
    if ((v & kKindMask) != uint64_t(kind_of<T>())) return nullptr;
    Slot<T>* s = p.slot((v >> kKindBits) & kSlotMask);
    const uint64_t generation = v >> 32;
    return s && s->state.load(std::memory_order_acquire) == (generation << 1 | 1) ? s : nullptr;
}

}  // namespace

template <class T>
T* add_object(const T& init) {
    Pool<T>& p = pool<T>();
    std::lock_guard<std::mutex> lock(p.mutex);
    uint64_t i;
    uint32_t generation = 0;
    if (p.free_head != kCapacity) {
        i = p.free_head;
        Slot<T>* s = p.slot(i);
        p.free_head = s->next_free;
        generation = uint32_t(s->state.load(std::memory_order_relaxed) >> 1) + 1;
    } else {
        if (p.used == kCapacity) return nullptr;
        i = p.used;
        const unsigned c = unsigned(63 - __builtin_clzll(i + kFirstChunk)) - kFirstChunkLog2;
        if (!p.chunks[c].load(std::memory_order_relaxed))
            p.chunks[c].store(new Slot<T>[kFirstChunk << c], std::memory_order_release);
        ++p.used;
    }
    Slot<T>* s = p.slot(i);
    s->object = init;
    s->state.store(uint64_t(generation) << 1 | 1, std::memory_order_release);  // publishes the object
    return encode<T>(i, generation);
}

template <class T>
T* find_object(const T* value) {
    Slot<T>* s = live_slot(pool<T>(), value);
    return s ? &s->object : nullptr;
}

template <class T>
bool remove_object(const T* value) {
    Pool<T>& p = pool<T>();
    std::lock_guard<std::mutex> lock(p.mutex);
    Slot<T>* s = live_slot(p, value);
    if (!s) return false;
    const uint64_t generation = s->state.load(std::memory_order_relaxed) >> 1;
    s->state.store(generation << 1, std::memory_order_release);
    if (generation != kLastGeneration) {  // else retired for good: its next value would repeat an old one
        s->next_free = uint32_t(p.free_head);
        p.free_head = (uint64_t(reinterpret_cast<uintptr_t>(value)) >> kKindBits) & kSlotMask;
    }
    return true;
}

#define FQ_OBJECT_KIND(T)                          \
    template T* add_object<T>(const T&);           \
    template T* find_object<T>(const T*);          \
    template bool remove_object<T>(const T*);
FQ_OBJECT_KIND(fqContext)
FQ_OBJECT_KIND(fqQuantDescOpaque)
FQ_OBJECT_KIND(fqTensorLayoutOpaque)
FQ_OBJECT_KIND(fqGroupedGemmDescOpaque)
FQ_OBJECT_KIND(fqPlanOpaque)
#undef FQ_OBJECT_KIND

}  // namespace fq
