#include "objects.h"

#include <mutex>
#include <unordered_map>

namespace fq {
namespace {
std::mutex g_mutex;
std::unordered_map<const void*, ObjectKind>& live() {
    static std::unordered_map<const void*, ObjectKind> objects;
    return objects;
}
}  // namespace

void register_object(const void* p, ObjectKind k) {
    std::lock_guard<std::mutex> lock(g_mutex);
    live()[p] = k;
}

void unregister_object(const void* p) {
    std::lock_guard<std::mutex> lock(g_mutex);
    live().erase(p);
}

bool is_live(const void* p, ObjectKind k) {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = live().find(p);
    return it != live().end() && it->second == k;
}

}  // namespace fq
