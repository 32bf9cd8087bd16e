// CSV of JSON objects (fq bench --csv): one header, the union of all rows' keys in first-seen order, a
// row's missing keys left empty, so rows of different shapes (NVFP4's global_amax) keep their columns.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "json.h"

namespace fqtool {

std::string csv_quote(const std::string& s);  // RFC 4180: quoted when it holds a comma, quote or newline
void write_csv(std::ostream& out, const std::vector<Json>& rows);

}  // namespace fqtool
