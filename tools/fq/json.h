// A minimal JSON value, parser and writer: enough for safetensors headers and fq's own JSON output.
// Objects keep their keys' order (a safetensors header is written back in the order it was read).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fqtool {

struct Json {
    enum class Kind { Null, Bool, Number, String, Array, Object };
    Kind kind = Kind::Null;
    bool boolean = false;
    double number = 0.0;
    int64_t integer = 0;   // exact value when `is_integer` (byte offsets past 2^53 stay exact)
    bool is_integer = false;
    std::string string;
    std::vector<Json> array;
    std::vector<std::pair<std::string, Json>> object;

    static Json of(std::string s) { Json j; j.kind = Kind::String; j.string = std::move(s); return j; }
    static Json of(int64_t v) { Json j; j.kind = Kind::Number; j.integer = v; j.number = double(v); j.is_integer = true; return j; }
    static Json make_array() { Json j; j.kind = Kind::Array; return j; }
    static Json make_object() { Json j; j.kind = Kind::Object; return j; }

    const Json* find(const std::string& key) const {
        for (const auto& kv : object)
            if (kv.first == key) return &kv.second;
        return nullptr;
    }
    const Json& at(const std::string& key) const {
        const Json* j = find(key);
        if (!j) throw std::runtime_error("JSON: missing key \"" + key + "\"");
        return *j;
    }
    int64_t as_int() const {
        if (kind != Kind::Number || !is_integer) throw std::runtime_error("JSON: expected an integer");
        return integer;
    }
    const std::string& as_string() const {
        if (kind != Kind::String) throw std::runtime_error("JSON: expected a string");
        return string;
    }
    void set(const std::string& key, Json v) {
        for (auto& kv : object)
            if (kv.first == key) { kv.second = std::move(v); return; }
        object.emplace_back(key, std::move(v));
    }
};

Json parse_json(const std::string& text);  // throws std::runtime_error with the offset of the problem
std::string to_json(const Json& j);        // compact, no spaces
std::string json_quote(const std::string& s);

}  // namespace fqtool
