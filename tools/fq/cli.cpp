#include "cli.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "common/enum_lists.h"

namespace fqtool {

void check(fqStatus_t s, const char* what) {
    if (s != FQ_STATUS_SUCCESS)
        throw ToolError(std::string(what) + ": " + fqGetStatusString(s) + ": " + fqGetLastErrorMessage());
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
}

std::string closest(const std::string& word, const std::vector<std::string>& choices) {
    // Two rows of the dynamic-programming table of edit distances.
    auto distance = [&](const std::string& a, const std::string& b) {
        std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
        for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
        for (size_t i = 1; i <= a.size(); ++i) {
            cur[0] = i;
            for (size_t j = 1; j <= b.size(); ++j)
                cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            std::swap(prev, cur);
        }
        return prev[b.size()];
    };
    std::string best;
    size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
    for (const std::string& c : choices) {
        const size_t d = distance(word, c);
        if (d < best_d) best = c, best_d = d;
    }
    return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& choices, const std::string& prefix) {
    const std::string c = closest(word, choices);
    return c.empty() ? std::string() : " (did you mean " + prefix + c + "?)";
}

Args::Args(int argc, char** argv, const OptionSpec& spec) : Args(std::vector<std::string>(argv, argv + argc), spec) {}

Args::Args(const std::vector<std::string>& words, const OptionSpec& spec) {
    CLI::App app;
    app.set_help_flag();   // --help is a flag of the spec: each command prints its own text
    app.allow_extras();    // an unknown option is reported below, with the closest known one
    std::map<std::string, CLI::Option*> given;
    std::vector<std::string> known;
    for (const std::string& name : spec.options) {
        given[name] = app.add_option("--" + name)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
        known.push_back(name);
    }
    for (const std::string& name : spec.flags) {
        given[name] = app.add_flag("--" + name);
        known.push_back(name);
    }
    app.add_option("positional", positional_);
    std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 takes its vector last word first
    try {
        app.parse(reversed);
    } catch (const CLI::ArgumentMismatch& e) {
        for (const auto& kv : given)
            if (kv.second->count() == 0 && std::find(words.begin(), words.end(), "--" + kv.first) != words.end())
                throw ToolError("option --" + kv.first + " needs a value");
        throw ToolError(e.what());
    } catch (const CLI::ParseError& e) {
        throw ToolError(e.what());
    }
    for (const std::string& w : app.remaining()) {
        if (w.size() < 2 || w[0] != '-') continue;
        const std::string name = w.substr(w.find_first_not_of('-'), w.find('=') - w.find_first_not_of('-'));
        throw ToolError("unknown option " + w.substr(0, w.find('=')) + did_you_mean(name, known, "--") + " (see --help)");
    }
    for (const std::string& name : spec.options)
        if (given[name]->count()) values_[name] = given[name]->results().back();
    for (const std::string& name : spec.flags)
        if (given[name]->count()) values_[name] = "1";
}

std::string Args::get(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

long long Args::get_int(const std::string& name, long long fallback) const {
    if (!has(name)) return fallback;
    char* end = nullptr;
    const std::string v = get(name);
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end) throw ToolError("--" + name + ": \"" + v + "\" is not an integer");
    return x;
}

double Args::get_double(const std::string& name, double fallback) const {
    if (!has(name)) return fallback;
    char* end = nullptr;
    const std::string v = get(name);
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end) throw ToolError("--" + name + ": \"" + v + "\" is not a number");
    return x;
}

std::vector<std::string> Args::words(const std::string& name, const std::string& fallback) const {
    return split(get(name, fallback), ',');
}

std::vector<long long> Args::ints(const std::string& name, const std::string& fallback) const {
    std::vector<long long> out;
    for (const std::string& w : words(name, fallback)) {
        char* end = nullptr;
        const long long x = std::strtoll(w.c_str(), &end, 10);
        if (*end) throw ToolError("--" + name + ": \"" + w + "\" is not an integer");
        out.push_back(x);
    }
    return out;
}

namespace {

struct Named {
    const char* name;
    int32_t value;
};

// The command line's names come from the one list of each enumeration (src/common/enum_lists.h).
#define FQ_NAMED(Internal, value, NAME, cli, ...) {#cli, value},
const Named kActivations[] = {FQ_ACTIVATIONS(FQ_NAMED)};
const Named kSchemes[] = {FQ_SCHEMES(FQ_NAMED)};
const Named kLayouts[] = {FQ_SCALE_LAYOUTS(FQ_NAMED)};
const Named kGates[] = {FQ_GATE_LAYOUTS(FQ_NAMED)};
#undef FQ_NAMED
const Named kTypes[] = {{"e4m3fn", FQ_TYPE_FP8_E4M3FN}, {"e4m3fnuz", FQ_TYPE_FP8_E4M3FNUZ}, {"e5m2", FQ_TYPE_FP8_E5M2},
                        {"int8", FQ_TYPE_INT8},         {"e2m1", FQ_TYPE_FP4_E2M1},         {"bf16", FQ_TYPE_BF16},
                        {"fp16", FQ_TYPE_FP16},         {"fp32", FQ_TYPE_FP32},             {"e8m0", FQ_TYPE_E8M0}};

std::string normalized(std::string s) {
    for (char& c : s) c = c == '-' ? '_' : char(std::tolower(static_cast<unsigned char>(c)));
    if (s == "block_2d") s = "block2d";
    if (s == "per_tensor_dynamic") s = "per_tensor";
    if (s == "col_major") s = "col";
    if (s == "row_major") s = "row";
    return s;
}

template <size_t N>
int32_t lookup(const Named (&table)[N], const std::string& s, const char* what) {
    const std::string n = normalized(s);
    std::string choices;
    std::vector<std::string> names;
    for (const Named& e : table) {
        if (n == e.name) return e.value;
        choices += std::string(choices.empty() ? "" : ", ") + e.name;
        names.push_back(e.name);
    }
    throw ToolError(std::string(what) + ": \"" + s + "\" is not one of " + choices + did_you_mean(n, names, ""));
}

template <size_t N>
std::string name_of(const Named (&table)[N], int32_t v) {
    for (const Named& e : table)
        if (e.value == v) return e.name;
    return std::to_string(v);
}

}  // namespace

int32_t parse_activation(const std::string& s) { return lookup(kActivations, s, "activation"); }
int32_t parse_scheme(const std::string& s) { return lookup(kSchemes, s, "scheme"); }
int32_t parse_layout(const std::string& s) { return lookup(kLayouts, s, "scale layout"); }
int32_t parse_out_type(const std::string& s) { return lookup(kTypes, s, "type"); }
int32_t parse_gate_layout(const std::string& s) { return lookup(kGates, s, "gate layout"); }
std::string activation_name(int32_t a) { return name_of(kActivations, a); }
std::string scheme_name(int32_t s) { return name_of(kSchemes, s); }
std::string layout_name(int32_t l) { return name_of(kLayouts, l); }
std::string type_name(int32_t t) { return name_of(kTypes, t); }
std::string gate_name(int32_t g) { return name_of(kGates, g); }

template <size_t N>
std::string names_of(const Named (&table)[N]) {
    std::string out;
    for (const Named& e : table) out += std::string(out.empty() ? "" : ", ") + e.name;
    return out;
}
std::string activation_names() { return names_of(kActivations); }
std::string scheme_names() { return names_of(kSchemes); }
std::string layout_names() { return names_of(kLayouts); }

int32_t Problem::resolved_scale_type() const {
    if (scale_type >= 0) return scale_type;
    if (scheme == FQ_SCHEME_MXFP8 || scheme == FQ_SCHEME_MXFP4) return FQ_TYPE_E8M0;
    if (scheme == FQ_SCHEME_NVFP4) return FQ_TYPE_FP8_E4M3FN;
    return FQ_TYPE_FP32;
}

std::string Problem::describe() const {
    std::string s = scheme_name(scheme);
    if (scheme == FQ_SCHEME_PER_GROUP) s += "(" + std::to_string(group) + ")";
    s += " " + activation_name(act) + (gated() ? "/" + gate_name(gate) : "") + " " + type_name(in_type) + "->" +
         type_name(out) + " scales " + type_name(resolved_scale_type()) + "/" + layout_name(layout);
    if (pow2) s += " pow2";
    if (apply) s += " reciprocal";
    if (order) s += " up-first";
    if (rounding) s += " rounding=" + std::to_string(rounding);
    return s + " " + std::to_string(rows) + "x" + std::to_string(cols);
}

void Problem::configure(fqQuantDesc_t d, const float* static_scale) const {
    auto set = [&](int32_t attr, int32_t v) { check(fqQuantDescSetAttribute(d, attr, &v, 4), "fqQuantDescSetAttribute"); };
    set(FQ_QUANT_DESC_ACTIVATION, act);
    set(FQ_QUANT_DESC_GATE_LAYOUT, gate);
    set(FQ_QUANT_DESC_GATE_ORDER, order);
    set(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, gate_block);
    set(FQ_QUANT_DESC_INTERMEDIATE_ROUNDING, rounding);
    set(FQ_QUANT_DESC_SCHEME, scheme);
    if (scheme == FQ_SCHEME_PER_GROUP) set(FQ_QUANT_DESC_GROUP_SIZE, group);  // other schemes refuse it (docs/spec.md §3.4)
    set(FQ_QUANT_DESC_OUTPUT_TYPE, out);
    set(FQ_QUANT_DESC_SCALE_TYPE, resolved_scale_type());
    set(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
    set(FQ_QUANT_DESC_SCALE_ROUNDING, pow2);
    set(FQ_QUANT_DESC_SCALE_APPLY, apply);
    if (scheme == FQ_SCHEME_PER_TENSOR_STATIC)
        check(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_STATIC_SCALE_POINTER, &static_scale, sizeof static_scale),
              "FQ_QUANT_DESC_STATIC_SCALE_POINTER");
}

Progress::Progress(std::string what, uint64_t total, bool enabled, bool bytes)
    : what_(std::move(what)), total_(total), enabled_(enabled), bytes_(bytes), tty_(isatty(2) != 0),
      start_(std::chrono::steady_clock::now()) {}

void Progress::update(uint64_t done, const std::string& label) {
    if (!enabled_) return;
    const double frac = total_ ? double(done) / double(total_) : 1.0;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = frac > 0 ? elapsed * (1.0 - frac) / frac : 0.0;
    const int percent = int(frac * 100.0);
    const std::string count = bytes_ ? human_bytes(double(done)) + "/" + human_bytes(double(total_))
                                     : std::to_string(done) + "/" + std::to_string(total_);
    if (tty_) {
        constexpr int kWidth = 28;
        const int filled = int(frac * kWidth);
        std::string bar(size_t(filled), '=');
        bar += std::string(size_t(kWidth - filled), ' ');
        std::fprintf(stderr, "\r\033[K%s [%s] %3d%% %s  %.0fs left  %s", what_.c_str(), bar.c_str(), percent,
                     count.c_str(), eta, label.substr(0, 60).c_str());
        std::fflush(stderr);
    } else if (percent / 10 != last_percent_ / 10 || done == total_) {  // a log: every 10%
        std::fprintf(stderr, "%s: %3d%% (%s, %.0fs left) %s\n", what_.c_str(), percent, count.c_str(), eta, label.c_str());
    }
    last_percent_ = percent;
}

void Progress::finish() {
    if (enabled_ && tty_) std::fprintf(stderr, "\r\033[K");
}

std::string human_bytes(double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024.0 && u < 4) { b /= 1024.0; ++u; }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", b, units[u]);
    return buf;
}

}  // namespace fqtool
