#include "json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fqtool {
namespace {

struct Parser {
    const std::string& s;
    size_t i = 0;

    [[noreturn]] void error(const char* what) const {
        throw std::runtime_error("JSON: " + std::string(what) + " at offset " + std::to_string(i));
    }
    void skip_space() {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
    }
    bool eat(char c) {
        skip_space();
        if (i < s.size() && s[i] == c) { ++i; return true; }
        return false;
    }
    void expect(char c) {
        if (!eat(c)) error((std::string("expected '") + c + "'").c_str());
    }
    void literal(const char* word) {
        for (const char* p = word; *p; ++p, ++i)
            if (i >= s.size() || s[i] != *p) error("unknown literal");
    }

    static void append_utf8(std::string& out, uint32_t cp) {
        if (cp < 0x80) out += char(cp);
        else if (cp < 0x800) { out += char(0xC0 | (cp >> 6)); out += char(0x80 | (cp & 0x3F)); }
        else if (cp < 0x10000) { out += char(0xE0 | (cp >> 12)); out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F)); }
        else { out += char(0xF0 | (cp >> 18)); out += char(0x80 | ((cp >> 12) & 0x3F)); out += char(0x80 | ((cp >> 6) & 0x3F)); out += char(0x80 | (cp & 0x3F)); }
    }
    uint32_t hex4() {
        if (i + 4 > s.size()) error("short \\u escape");
        const uint32_t v = uint32_t(std::strtoul(s.substr(i, 4).c_str(), nullptr, 16));
        i += 4;
        return v;
    }
    std::string string() {
        expect('"');
        std::string out;
        while (true) {
            if (i >= s.size()) error("unterminated string");
            const char c = s[i++];
            if (c == '"') return out;
            if (c != '\\') { out += c; continue; }
            if (i >= s.size()) error("unterminated escape");
            const char e = s[i++];
            switch (e) {
                case '"': case '\\': case '/': out += e; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    uint32_t cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= s.size() && s[i] == '\\' && s[i + 1] == 'u') {
                        i += 2;
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4() - 0xDC00);
                    }
                    append_utf8(out, cp);
                    break;
                }
                default: error("bad escape");
            }
        }
    }
    Json value(int depth) {
        if (depth > 64) error("nesting deeper than 64");
        skip_space();
        if (i >= s.size()) error("unexpected end");
        Json j;
        const char c = s[i];
        if (c == '{') {
            ++i;
            j.kind = Json::Kind::Object;
            if (eat('}')) return j;
            do {
                skip_space();
                std::string key = string();
                expect(':');
                j.object.emplace_back(std::move(key), value(depth + 1));
            } while (eat(','));
            expect('}');
        } else if (c == '[') {
            ++i;
            j.kind = Json::Kind::Array;
            if (eat(']')) return j;
            do j.array.push_back(value(depth + 1));
            while (eat(','));
            expect(']');
        } else if (c == '"') {
            j.kind = Json::Kind::String;
            j.string = string();
        } else if (c == 't') { literal("true"); j.kind = Json::Kind::Bool; j.boolean = true; }
        else if (c == 'f') { literal("false"); j.kind = Json::Kind::Bool; }
        else if (c == 'n') { literal("null"); }
        else if (c == '-' || (c >= '0' && c <= '9')) {
            const size_t start = i;
            bool integral = true;
            if (s[i] == '-') ++i;
            while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == 'e' || s[i] == 'E' ||
                                    s[i] == '+' || s[i] == '-')) {
                if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') integral = false;
                ++i;
            }
            const std::string text = s.substr(start, i - start);
            j.kind = Json::Kind::Number;
            j.number = std::strtod(text.c_str(), nullptr);
            if (integral) {
                errno = 0;
                j.integer = std::strtoll(text.c_str(), nullptr, 10);
                j.is_integer = errno == 0;
            }
        } else {
            error("unexpected character");
        }
        return j;
    }
};

}  // namespace

Json parse_json(const std::string& text) {
    Parser p{text};
    Json j = p.value(0);
    p.skip_space();
    if (p.i != text.size()) p.error("trailing characters");
    return j;
}

std::string json_quote(const std::string& s) {
    std::string out = "\"";
    for (const unsigned char c : s) {
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            out += b;
        } else out += char(c);
    }
    return out + "\"";
}

std::string to_json(const Json& j) {
    switch (j.kind) {
        case Json::Kind::Null: return "null";
        case Json::Kind::Bool: return j.boolean ? "true" : "false";
        case Json::Kind::Number: {
            if (j.is_integer) return std::to_string(j.integer);
            if (!std::isfinite(j.number)) return "null";
            char b[32];
            std::snprintf(b, sizeof b, "%.17g", j.number);
            return b;
        }
        case Json::Kind::String: return json_quote(j.string);
        case Json::Kind::Array: {
            std::string out = "[";
            for (size_t i = 0; i < j.array.size(); ++i) out += (i ? "," : "") + to_json(j.array[i]);
            return out + "]";
        }
        case Json::Kind::Object: {
            std::string out = "{";
            for (size_t i = 0; i < j.object.size(); ++i)
                out += (i ? "," : "") + json_quote(j.object[i].first) + ":" + to_json(j.object[i].second);
            return out + "}";
        }
    }
    return "null";
}

}  // namespace fqtool
