#include "error.h"

namespace fq {
namespace {
// Trivially destructible and constant-initialized: valid for the whole life of the thread, including its
// thread_local destructors and, on the main thread, the process's atexit handlers and static destructors.
thread_local char t_message[kMessageCapacity];
}  // namespace

char* last_error_buffer() { return t_message; }
void clear_last_error() { t_message[0] = '\0'; }
const char* last_error() { return t_message; }

}  // namespace fq
