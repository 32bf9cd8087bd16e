// Errors: a status for programs, a thread-local sentence for people (fqGetLastErrorMessage). Every
// failing path below the API sets the sentence through fail(), naming the argument and the rule.
#pragma once

#include <fmt/format.h>

#include <string>

#include "fusedquant/fusedquant.h"

namespace fq {

void set_last_error(std::string message);
void clear_last_error();
const char* last_error();

template <class... Args>
fqStatus_t fail(fqStatus_t status, fmt::format_string<Args...> format, Args&&... args) {
    set_last_error(fmt::format(format, std::forward<Args>(args)...));
    return status;
}

}  // namespace fq

// Returns from the enclosing function when `expr` yields a failure status.
#define FQ_TRY(expr)                                               \
    do {                                                           \
        const fqStatus_t fq_try_status_ = (expr);                  \
        if (fq_try_status_ != FQ_STATUS_SUCCESS) return fq_try_status_; \
    } while (0)
