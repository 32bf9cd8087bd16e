#include "snapshot.h"

namespace fq {
namespace {
// Constant-initialized with a trivial destructor: usable from the caller's atexit handlers and static
// destructors.
std::mutex g_object_contents;
uint64_t g_generation = 0;  // guarded by g_object_contents
}  // namespace

uint64_t object_contents_generation() { return g_generation; }
void note_object_contents_changed() { ++g_generation; }

std::unique_lock<std::mutex> lock_object_contents() { return std::unique_lock<std::mutex>(g_object_contents); }

}  // namespace fq
