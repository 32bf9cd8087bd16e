// How much host memory a call allocates: the test executable replaces the global operator new
// (alloc_count.cpp), through which the library's own allocations go too.
#pragma once

#include <cstdint>

namespace fqt {

// Counts what operator new hands out on this thread while it lives.
class AllocationCount {
  public:
    AllocationCount();
    ~AllocationCount();
    AllocationCount(const AllocationCount&) = delete;
    AllocationCount& operator=(const AllocationCount&) = delete;
    int64_t bytes() const;    // in all
    int64_t largest() const;  // the largest single allocation
};

}  // namespace fqt
