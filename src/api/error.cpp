#include "error.h"

namespace fq {
namespace {
thread_local std::string g_last_error;
}

void set_last_error(std::string message) { g_last_error = std::move(message); }
void clear_last_error() { g_last_error.clear(); }
const char* last_error() { return g_last_error.c_str(); }

}  // namespace fq
