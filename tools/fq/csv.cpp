#include "csv.h"

#include <algorithm>

namespace fqtool {

std::string csv_quote(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

void write_csv(std::ostream& out, const std::vector<Json>& rows) {
    std::vector<std::string> columns;
    for (const Json& row : rows)
        for (const auto& kv : row.items())
            if (std::find(columns.begin(), columns.end(), kv.key()) == columns.end()) columns.push_back(kv.key());
    for (size_t k = 0; k < columns.size(); ++k) out << (k ? "," : "") << csv_quote(columns[k]);
    out << "\n";
    for (const Json& row : rows) {
        for (size_t k = 0; k < columns.size(); ++k) {
            if (k) out << ",";
            const auto v = row.find(columns[k]);
            if (v != row.end()) out << (v->is_string() ? csv_quote(v->get<std::string>()) : v->dump());
        }
        out << "\n";
    }
}

}  // namespace fqtool
