// JSON in fq is nlohmann::json (Debian's nlohmann-json3-dev), in its two forms:
//  - Json keeps keys in the order they were set or read (config.json, fq's own --json / --csv output): small
//    documents, as its objects find a key by a linear search;
//  - JsonMap sorts its keys and finds one in O(log n): safetensors headers and model.safetensors.index.json,
//    which hold up to ~10^5 names (read into an ordered object, n names cost O(n^2) comparisons).
#pragma once

#include <nlohmann/json.hpp>

namespace fqtool {
using Json = nlohmann::ordered_json;
using JsonMap = nlohmann::json;
}  // namespace fqtool
