// JSON in fq (safetensors headers, checkpoint configs, --json output) is nlohmann::json (Debian's
// nlohmann-json3-dev); the ordered variant keeps keys in the order they were read or set, so a header or a
// config.json is written back in its own order.
#pragma once

#include <nlohmann/json.hpp>

namespace fqtool {
using Json = nlohmann::ordered_json;
}  // namespace fqtool
