#include "alloc_count.h"

#include <cstdlib>
#include <new>

namespace {
thread_local bool t_counting = false;
thread_local int64_t t_bytes = 0, t_largest = 0;
}  // namespace

// The replacement: malloc and free, with the count of this thread while an AllocationCount lives.
void* operator new(std::size_t n) {
    if (t_counting) {
        t_bytes += int64_t(n);
        if (int64_t(n) > t_largest) t_largest = int64_t(n);
    }
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace fqt {
AllocationCount::AllocationCount() {
    t_bytes = t_largest = 0;
    t_counting = true;
}
AllocationCount::~AllocationCount() { t_counting = false; }
int64_t AllocationCount::bytes() const { return t_bytes; }
int64_t AllocationCount::largest() const { return t_largest; }
}  // namespace fqt
