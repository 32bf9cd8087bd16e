// Failure below the API: a status for programs, and a sentence for people naming the argument and the rule,
// which fqGetLastErrorMessage returns. Every layer reports through fail(); the sentence is kept by the API
// (src/api/error.cpp), which declares the rest of its life (cleared at entry, read by the caller).
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include "fusedquant/fusedquant.h"

namespace fq {

// The sentence lives in a fixed thread-local buffer (longer ones are cut, ending in "..."): it outlives
// every caller, and reporting an error allocates nothing.
inline constexpr size_t kMessageCapacity = 1024;

char* last_error_buffer();  // kMessageCapacity bytes, the calling thread's (defined in src/api/error.cpp)

// Writes the sentence and returns `status`, so a failing path reads `return fail(STATUS, "arg: why", ...)`.
template <class... Args>
fqStatus_t fail(fqStatus_t status, fmt::format_string<Args...> format, Args&&... args) {
    char* message = last_error_buffer();
    const auto written = fmt::format_to_n(message, kMessageCapacity - 1, format, std::forward<Args>(args)...);
    *written.out = '\0';
    if (written.size > kMessageCapacity - 1) std::memcpy(written.out - 3, "...", 3);
    return status;
}

}  // namespace fq

// Returns from the enclosing function when `expr` yields a failure status.
#define FQ_TRY(expr)                                               \
    do {                                                           \
        const fqStatus_t fq_try_status_ = (expr);                  \
        if (fq_try_status_ != FQ_STATUS_SUCCESS) return fq_try_status_; \
    } while (0)
