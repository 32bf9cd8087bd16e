// What `fq bench` measures, without CUDA: the sweep options, the measurements they expand to, and for each
// measurement its MoE rows (counts, offsets), its descriptors and the bytes it counts. bench.cpp measures the
// cases on a GPU; a build without CUDA parses them too (a sweep file's mistakes show anywhere), and the host
// tests check them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli.h"

namespace fqtool {

std::string bench_help();  // the sweep options, with the names of every list
// The skewed and uniform distributions of valid rows over experts, as the help text and the JSON state them.
extern const char* kSkewFormula;

enum class Skew { Uniform, Skewed };                   // --skew
enum class Outputs { Row, Col, Both, Separate };       // --outputs row|col|both|col+row-separate

std::string moe_name(int32_t layout);  // none, masked, contiguous
std::string skew_name(Skew s);
std::string outputs_name(Outputs o);   // the --outputs spelling

// One measurement.
struct BenchCase {
    Problem p;                  // p.rows: rows of the 2-D layouts (E * max_m for MASKED)
    int64_t tokens = 0;         // the --tokens value: rows; MASKED: max_m; CONTIGUOUS: M
    int32_t moe = FQ_MOE_LAYOUT_NONE;
    int64_t experts = 0;        // E (0 without a MoE layout)
    Skew skew = Skew::Uniform;
    Outputs outputs = Outputs::Row;
    int32_t col_block = 32, col_transpose = 0;  // columnwise outputs only
    std::string variant = "auto";
    int pdl = 0;
    int wide_tile_min = -1;     // FQ_HANDLE_WIDE_TILE_MIN (-1: the library's default)
    bool given_global_amax = false;  // NVFP4: the caller's global amax (a device float per expert), no pre-pass

    bool rowwise() const { return outputs != Outputs::Col; }
    bool columnwise() const { return outputs != Outputs::Row; }
    // The fqOutputs mask of each fqQuantize call of one iteration: one call, or (col+row-separate) a rowwise
    // call then a columnwise call.
    std::vector<int32_t> calls() const;
    std::string describe() const;  // the progress line's label
};

// The rows the experts own (docs/spec.md §5, docs/moe.md), as uploaded to the device once per shape.
struct MoeRows {
    std::vector<int32_t> counts;   // MASKED: E valid row counts (MOE_COUNTS_POINTER); else empty
    std::vector<int32_t> offsets;  // CONTIGUOUS: E+1 packed offsets (MOE_OFFSETS_POINTER); else empty
    int64_t valid = 0;             // rows some expert owns (all rows without a MoE layout)
};

// Valid rows of each of E experts whose slots hold up to `cap` rows (kSkewFormula).
std::vector<int32_t> expert_counts(int64_t experts, int64_t cap, Skew skew);
MoeRows moe_rows(const BenchCase& c);

// The per-shape device arrays a call's descriptor points at (NULL where the case needs none).
struct CaseArrays {
    const int32_t* counts = nullptr;
    const int32_t* offsets = nullptr;
    const float* static_scales = nullptr;  // PER_TENSOR_STATIC: max(E, 1) floats
    const float* global_amax = nullptr;    // NVFP4 with --global-amax given: max(E, 1) floats
};
// Every attribute of one call of `c` asking for `outputs` (an fqOutputs mask) except the columnwise buffers,
// which rotate from call to call (set_columnwise_buffers). Throws ToolError when the library refuses one.
void configure_call(fqQuantDesc_t d, const BenchCase& c, int32_t outputs, const CaseArrays& arrays);
void set_columnwise_buffers(fqQuantDesc_t d, void* values, void* scales);

// Bytes one iteration counts (docs/perf.md): valid rows only, each tensor once: the input of the valid rows,
// the values written for them per output, and each scale buffer whole (fqGetScaleBufferSize, padding included).
// col+row-separate counts what `both` counts: the useful bytes, so the two compare by time.
struct ByteCount {
    int64_t input = 0, row_values = 0, row_scales = 0, col_values = 0, col_scales = 0;
    int64_t total() const { return input + row_values + row_scales + col_values + col_scales; }
};
ByteCount count_bytes(const BenchCase& c, int64_t valid_rows, size_t row_scale_bytes, size_t col_scale_bytes);

// The options of one sweep (a --file line), and those of the `fq bench` command line: a sweep's and --file,
// --json, --csv, --plot, --reps, --quiet, --constant-input, --help.
const OptionSpec& sweep_options();
const OptionSpec& bench_options();
// Every case of one sweep (the options of one command line or one --file line).
std::vector<BenchCase> expand_sweep(const Args& a);
// Every case of a --file (its line number in the message of a mistake).
std::vector<BenchCase> read_sweep_file(const std::string& path);
// The cases of an `fq bench` command line (parsed with bench_options()): its sweep options, or --file's lines.
std::vector<BenchCase> bench_cases(const Args& args);

}  // namespace fqtool
