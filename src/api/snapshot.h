// Objects read once. An execution entry point copies every object it reads (handle, descriptors, layouts)
// at entry, validates the copies and runs only from them: an object another thread changes during the call
// can give the call one configuration or the other, never a mix of a validated value and a later one.
//
// Every write of an object's attributes and every copy of it hold one lock, so the copy is never torn and is
// no data race (a plain copy of a struct another thread writes would be one). One lock for all objects keeps
// objects.h as it is; it is held only for a copy of a few hundred bytes or one attribute write, so an entry
// point pays one uncontended lock per call and threads that use different objects hardly wait for each other.
#pragma once

#include <cstdint>
#include <mutex>

namespace fq {

// Hold while writing or reading the attributes of any live object, and while copying objects for a call.
[[nodiscard]] std::unique_lock<std::mutex> lock_object_contents();

// How many attribute writes have been committed to any object; read and bumped with the lock held. A copy of
// objects taken while it was g is still what those objects hold while it is g: fqQuantize keeps what it
// resolved from them until then (src/api/api.cpp, configure).
uint64_t object_contents_generation();
void note_object_contents_changed();

// A copy of *p taken under the lock (p must be live: checked by the caller).
template <class T>
T snapshot(const T* p) {
    const auto lock = lock_object_contents();
    return *p;
}

}  // namespace fq
