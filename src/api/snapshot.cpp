#include "snapshot.h"

namespace fq {
namespace {
// Constant-initialized with a trivial destructor: usable from the caller's atexit handlers and static
// destructors.
std::mutex g_object_contents;
}  // namespace

std::unique_lock<std::mutex> lock_object_contents() { return std::unique_lock<std::mutex>(g_object_contents); }

}  // namespace fq
