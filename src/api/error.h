// The API's side of errors (fqGetLastErrorMessage): the thread-local sentence that fail() (src/common/status.h)
// writes from any layer, cleared at every entry point and read by the caller.
#pragma once

#include "../common/status.h"

namespace fq {

void clear_last_error();
const char* last_error();

}  // namespace fq
