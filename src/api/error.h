// Errors: a status for programs, a thread-local sentence for people (fqGetLastErrorMessage). Every
// failing path below the API sets the sentence through fail(), naming the argument and the rule.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstring>

#include "fusedquant/fusedquant.h"

namespace fq {

// The sentence lives in a fixed thread-local buffer (longer ones are cut, ending in "..."): it outlives
// every caller, and reporting an error allocates nothing.
inline constexpr size_t kMessageCapacity = 1024;

char* last_error_buffer();  // kMessageCapacity bytes, the calling thread's
void clear_last_error();
const char* last_error();

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
