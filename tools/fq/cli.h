// What the fq subcommands share: argument parsing, the names of the library's enums on the command line,
// the descriptor of one problem, status checks and the progress line.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fusedquant/fusedquant.h"

namespace fqtool {

// A failure to report to the user (exit status 1 or 2) with a sentence.
struct ToolError : std::runtime_error {
    int exit_code;
    explicit ToolError(const std::string& what, int code = 2) : std::runtime_error(what), exit_code(code) {}
};

// Throws ToolError with the library's message when `s` is not SUCCESS.
void check(fqStatus_t s, const char* what);

// The options a (sub)command takes: `options` take a value, `flags` take none (both without the "--").
struct OptionSpec {
    std::vector<std::string> options, flags;
};

// A command line parsed by CLI11 against an OptionSpec: --name value, --name=value, --flag, and positional
// arguments. An option given twice keeps its last value. Throws ToolError (exit 2) for an option the spec does
// not have, naming the closest one it has ("did you mean --tokens?"), and for an option missing its value.
class Args {
public:
    Args(int argc, char** argv, const OptionSpec& spec);
    Args(const std::vector<std::string>& words, const OptionSpec& spec);
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    std::string get(const std::string& name, const std::string& fallback = "") const;
    long long get_int(const std::string& name, long long fallback) const;
    double get_double(const std::string& name, double fallback) const;
    std::vector<std::string> words(const std::string& name, const std::string& fallback) const;  // comma list
    std::vector<long long> ints(const std::string& name, const std::string& fallback) const;     // comma list
    const std::vector<std::string>& positional() const { return positional_; }

private:
    std::map<std::string, std::string> values_;
    std::vector<std::string> positional_;
};

std::vector<std::string> split(const std::string& s, char sep);

// The choice nearest `word` by edit distance (Levenshtein), or "" when none is near enough to be a typo
// (more than a third of the word's letters, at least 2, would have to change).
std::string closest(const std::string& word, const std::vector<std::string>& choices);
// " (did you mean PREFIX<closest>?)" or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& choices, const std::string& prefix);

// Command-line names of the enums (lower case, '-' or '_' alike). Throw ToolError listing the choices.
int32_t parse_activation(const std::string& s);
int32_t parse_scheme(const std::string& s);
int32_t parse_layout(const std::string& s);
int32_t parse_out_type(const std::string& s);
int32_t parse_gate_layout(const std::string& s);
std::string activation_name(int32_t a);
std::string scheme_name(int32_t s);
std::string layout_name(int32_t l);
std::string type_name(int32_t t);
std::string gate_name(int32_t g);
// Comma-separated command-line names of every activation / scheme / scale layout (enum_lists.h).
std::string activation_names();
std::string scheme_names();
std::string layout_names();

// One quantization problem as the tools describe it; defaults resolve the scale type per scheme.
struct Problem {
    int32_t act = FQ_ACTIVATION_SILU, gate = FQ_GATE_LAYOUT_SPLIT, order = FQ_GATE_ORDER_GATE_FIRST;
    int32_t gate_block = 32, rounding = FQ_ROUNDING_FP32;
    int32_t scheme = FQ_SCHEME_PER_GROUP, group = 128, out = FQ_TYPE_FP8_E4M3FN, layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    int32_t scale_type = -1;  // -1: what the scheme needs (E8M0 for MX, E4M3 for NVFP4, else FP32)
    int32_t pow2 = 0, apply = FQ_SCALE_APPLY_DIVIDE, in_type = FQ_TYPE_BF16;
    int64_t rows = 0, cols = 0;  // output rows x cols

    bool gated() const { return gate != FQ_GATE_LAYOUT_NONE; }
    int64_t in_cols() const { return gated() ? 2 * cols : cols; }
    int32_t resolved_scale_type() const;
    std::string describe() const;
    // Sets every attribute on `d`. `static_scale`: the PER_TENSOR_STATIC scale (device or host pointer).
    void configure(fqQuantDesc_t d, const float* static_scale) const;
    int64_t input_bytes() const { return rows * in_cols() * 2; }
    int64_t output_bytes() const { return out == FQ_TYPE_FP4_E2M1 ? rows * cols / 2 : rows * cols; }
};

// A one-line progress display on stderr: redrawn in place on a terminal, one line per 10% otherwise.
// `bytes`: the counts are bytes, shown as "1.2 GiB/4.0 GiB".
class Progress {
public:
    Progress(std::string what, uint64_t total, bool enabled = true, bool bytes = false);
    void update(uint64_t done, const std::string& label = "");
    void finish();

private:
    std::string what_;
    uint64_t total_;
    bool enabled_, bytes_, tty_;
    std::chrono::steady_clock::time_point start_;
    int last_percent_ = -1;
};

std::string human_bytes(double bytes);

}  // namespace fqtool
