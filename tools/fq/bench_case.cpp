#include "bench_case.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

namespace fqtool {

namespace {
const char* kBenchHelpText = R"(usage: fq bench [sweep options] [--file SWEEPS] [--json F] [--csv F] [--plot F.png] [--reps N] [--constant-input]

Every combination of the sweep options is one measurement (table on stdout, progress on stderr):
  --tokens 1,16,128,1024,4096,16384     rows T; with --moe masked: max_m, the rows of one expert's slot
                                        (input [E, max_m, W] = E*max_m rows); with --moe contiguous: M, the
                                        stacked rows of all experts
  --hidden 2048,7168,18432              output width H (a gated input is [T, 2H])
  --scheme per-group                    {schemes} (comma list)
  --group 128                           per-group sizes (comma list)
  --act silu                            {activations}
  --gated | --not-gated                 default gated; --gate-layout split|interleaved|block
  --out-type e4m3fn                     e4m3fn, e4m3fnuz, e5m2, int8, e2m1 (comma list; the scheme's
                                        natural type when the one given does not fit it: e2m1 for mxfp4/nvfp4)
  --in-type bf16                        bf16, fp16
  --layouts row,col                     {layouts} (scale layouts)
  --variants auto                       auto (the dispatcher) or variant names (fq check lists them)
  --pdl 1                               0, 1 or 0,1: FQ_HANDLE_ALLOW_PDL (1, the library default: programmatic
                                        dependent launch on sm_90+)
  --wide-tile-min -1                    FQ_HANDLE_WIDE_TILE_MIN (comma list): -1 the default, 0 always 16
                                        outputs a thread, a large value always 8
  --global-amax device                  NVFP4's global amax: device (reduced by a pre-pass over the input, in
                                        the workspace), given (FQ_QUANT_DESC_GLOBAL_AMAX_POINTER: the
                                        calibrated amax of inference, one pass) or device,given
  --pow2                                POW2_CEIL scale rounding (with --e8m0: E8M0 scales for per-group/token)
MoE layouts (docs/moe.md; comma lists too):
  --moe none                            none, masked (counts[E] on the device), contiguous (offsets[E+1] on
                                        the device: the experts' rows packed back to back, no padding, no
                                        counts)
  --experts 8                           E (with --moe masked or contiguous)
  --skew uniform                        uniform, skewed: valid rows per expert (below)
Outputs (docs/moe.md, "Columnwise output"; comma lists too):
  --outputs row                         row: rowwise only; col: columnwise only; both: one call writing both
                                        (FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE); col+row-separate: a rowwise
                                        call then a columnwise call per iteration, both in the same graph
  --col-block 32                        rows per columnwise block: 32, 128 (MXFP8/MXFP4/NVFP4 take 32)
  --transpose 0                         0, 1: columnwise data [H, M] (masked [E, H, max_m]) instead of [M, H]
--file SWEEPS: one sweep per line, written with the options above ("--tokens 1,16 --scheme mxfp8
  --layouts swizzled"); each line starts from the defaults. '#' starts a comment.
--json F, --csv F: every result (also the skipped combinations, with the reason). --plot F.png: GB/s
  against tokens per variant, one panel per hidden size (tools/fq/plot_bench.py, needs matplotlib).
A combination the library refuses is listed as skipped with its reason, not measured; so is one whose
rotated buffers would not fit in the GPU's free memory.
Inputs: bf16/fp16 normal(0, 1) values from a fixed seed (the same on every run); --constant-input fills them
with 0x3E3E (bf16 ~0.19) instead, and the table's first line and the JSON's "input" say so.
Times: the median of --reps graph replays (default 7), the fastest and slowest beside it. The reference copy
is the fastest of three, each timed the same way: cudaMemcpyAsync of the same bytes (memcpy), of them
rounded up to 64 KiB (memcpy-64k) and a 16-byte SM copy kernel (sm-copy); each row names the one that won.

Valid rows per expert, from a slot of C rows (masked: C = max_m; contiguous: C = ceil(M / E), the slots then
packed back to back from row 0, offsets clamped to M):
  uniform: every expert C rows (masked: every row valid; contiguous: all M rows valid).
  skewed:  expert e gets 0 rows when e % 8 == 7 (floor(E/8) experts); the other N = E - floor(E/8), in
           expert order r = e - floor(e/8) = 0..N-1, get C - floor(6*C*r / (7*(N-1))) rows (C when N = 1):
           C for expert 0 falling linearly to ceil(C/7), about E*C/2 rows in all (the JSON's valid_rows).
Bytes, for GB/s and the same-bytes copy, count valid rows only (rows some expert owns), each tensor once:
the input of the valid rows + the values written for them, per output (rowwise, columnwise) + each scale
buffer whole (fqGetScaleBufferSize, padding included). col+row-separate counts the bytes of `both`.
Rotated sets (enough to cover 4x the L2 with the bytes counted, at least 2) hold whole buffers: the
columnwise values and scales rotate with the rest; counts, offsets and per-expert static scales (E ones)
are uploaded once per measurement. NVFP4 reduces each expert's global amax in the workspace (--global-amax
device) or reads the caller's (given: 1.0 per expert, uploaded once).
Exit status: 0 measured, 1 a measurement failed at execution (listed as failed; the others are measured and
written), 2 usage or setup error, 77 no usable GPU (or a build without CUDA: the sweep is still parsed).
)";
}  // namespace

std::string bench_help() {
    std::string help = kBenchHelpText;
    const std::pair<const char*, std::string> lists[] = {
        {"{schemes}", scheme_names()}, {"{activations}", activation_names()}, {"{layouts}", layout_names()}};
    for (const auto& [key, names] : lists) help.replace(help.find(key), std::strlen(key), names);
    return help;
}

const char* kSkewFormula =
    "slot C = max_m (masked) or ceil(M/E) (contiguous, slots packed from row 0, offsets clamped to M); "
    "uniform: C rows per expert; skewed: 0 rows when e % 8 == 7, else C - floor(6*C*r / (7*(N-1))) with "
    "N = E - floor(E/8), r = e - floor(e/8) (C when N = 1)";

namespace {

template <class T>
struct Named {
    const char* name;
    T value;
};

template <class T, size_t N>
T lookup(const Named<T> (&table)[N], const std::string& s, const char* option) {
    std::string choices;
    for (const auto& e : table) {
        if (s == e.name) return e.value;
        choices += std::string(choices.empty() ? "" : ", ") + e.name;
    }
    throw ToolError(std::string("--") + option + ": \"" + s + "\" is not one of " + choices);
}

template <class T, size_t N>
std::string name_of(const Named<T> (&table)[N], T v) {
    for (const auto& e : table)
        if (e.value == v) return e.name;
    return "?";
}

const Named<int32_t> kMoeLayouts[] = {{"none", FQ_MOE_LAYOUT_NONE}, {"masked", FQ_MOE_LAYOUT_MASKED},
                                      {"contiguous", FQ_MOE_LAYOUT_CONTIGUOUS}};
const Named<Skew> kSkews[] = {{"uniform", Skew::Uniform}, {"skewed", Skew::Skewed}};
const Named<Outputs> kOutputs[] = {{"row", Outputs::Row}, {"col", Outputs::Col}, {"both", Outputs::Both},
                                   {"col+row-separate", Outputs::Separate}};

// The values of one sweep line, each a list.
struct Sweep {
    std::vector<long long> tokens, hidden, groups, pdl, wide_tile_min, experts, col_blocks, transposes;
    std::vector<int32_t> schemes, acts, outs, layouts, moe;
    std::vector<Skew> skews;
    std::vector<Outputs> outputs;
    std::vector<std::string> variants;
    std::vector<bool> given_global_amax;
    int32_t gate = FQ_GATE_LAYOUT_SPLIT, in_type = FQ_TYPE_BF16;
    bool pow2 = false, e8m0 = false;
};

template <class T, size_t N>
std::vector<T> named_list(const Args& a, const char* option, const char* fallback, const Named<T> (&table)[N]) {
    std::vector<T> out;
    for (const auto& w : a.words(option, fallback)) out.push_back(lookup(table, w, option));
    return out;
}

std::vector<long long> bounded_ints(const Args& a, const char* option, const char* fallback, long long lo, long long hi) {
    std::vector<long long> v = a.ints(option, fallback);
    for (long long x : v)
        if (x < lo || x > hi)
            throw ToolError(std::string("--") + option + ": " + std::to_string(x) + " is outside [" + std::to_string(lo) +
                            ", " + std::to_string(hi) + "]");
    return v;
}

Sweep parse_sweep(const Args& a) {
    Sweep s;
    s.tokens = bounded_ints(a, "tokens", "1,16,128,1024,4096,16384", 0, INT32_MAX);
    s.hidden = a.ints("hidden", "2048,7168,18432");
    s.groups = a.ints("group", "128");
    s.pdl = a.ints("pdl", "1");
    s.wide_tile_min = bounded_ints(a, "wide-tile-min", "-1", -1, INT32_MAX);
    for (const auto& w : a.words("scheme", "per-group")) s.schemes.push_back(parse_scheme(w));
    for (const auto& w : a.words("act", "silu")) s.acts.push_back(parse_activation(w));
    for (const auto& w : a.words("out-type", "e4m3fn")) s.outs.push_back(parse_out_type(w));
    for (const auto& w : a.words("layouts", "row,col")) s.layouts.push_back(parse_layout(w));
    s.variants = a.words("variants", "auto");
    if (a.has("gated") && a.has("not-gated")) throw ToolError("--gated and --not-gated together");
    s.gate = a.has("not-gated") ? FQ_GATE_LAYOUT_NONE : parse_gate_layout(a.get("gate-layout", "split"));
    s.in_type = parse_out_type(a.get("in-type", "bf16"));
    if (s.in_type != FQ_TYPE_BF16 && s.in_type != FQ_TYPE_FP16) throw ToolError("--in-type: bf16 or fp16");
    s.pow2 = a.has("pow2");
    s.e8m0 = a.has("e8m0");
    s.moe = named_list(a, "moe", "none", kMoeLayouts);
    s.experts = bounded_ints(a, "experts", "8", 1, 1 << 20);
    s.skews = named_list(a, "skew", "uniform", kSkews);
    s.outputs = named_list(a, "outputs", "row", kOutputs);
    s.col_blocks = a.ints("col-block", "32");  // the library refuses (skipped, with its reason) what it does not run
    s.transposes = bounded_ints(a, "transpose", "0", 0, 1);
    for (const auto& w : a.words("global-amax", "device")) {
        if (w != "device" && w != "given") throw ToolError("--global-amax: device or given, not " + w);
        s.given_global_amax.push_back(w == "given");
    }
    return s;
}

// The output type a scheme takes when the one asked for does not fit it.
int32_t fit_out_type(int32_t scheme, int32_t out) {
    if (scheme == FQ_SCHEME_MXFP4 || scheme == FQ_SCHEME_NVFP4) return FQ_TYPE_FP4_E2M1;
    if (out == FQ_TYPE_FP4_E2M1) return FQ_TYPE_FP8_E4M3FN;
    if (scheme == FQ_SCHEME_MXFP8 && out != FQ_TYPE_FP8_E5M2) return FQ_TYPE_FP8_E4M3FN;
    return out;
}

// Every case of `cases` once per value, set by set(case, value), the first dimension varied outermost. Cases
// the dimension does not apply to (applies(case) false: experts without a MoE layout, the columnwise block of
// a rowwise-only case) pass through once, unchanged.
template <class T, class Set, class Applies>
void vary(std::vector<BenchCase>& cases, const std::vector<T>& values, Set set, Applies applies) {
    std::vector<BenchCase> out;
    for (const BenchCase& c : cases) {
        if (!applies(c)) {
            out.push_back(c);
            continue;
        }
        for (const T& v : values) {
            out.push_back(c);
            set(out.back(), v);
        }
    }
    cases.swap(out);
}
template <class T, class Set>
void vary(std::vector<BenchCase>& cases, const std::vector<T>& values, Set set) {
    vary(cases, values, set, [](const BenchCase&) { return true; });
}

bool has_moe(const BenchCase& c) { return c.moe != FQ_MOE_LAYOUT_NONE; }
bool has_columnwise(const BenchCase& c) { return c.columnwise(); }
bool has_nvfp4(const BenchCase& c) { return c.p.scheme == FQ_SCHEME_NVFP4; }

// The rows of the 2-D layouts and the fields that follow from the others.
void finish(BenchCase& c, const Sweep& s) {
    Problem& p = c.p;
    p.rows = c.moe == FQ_MOE_LAYOUT_MASKED ? c.experts * c.tokens : c.tokens;
    p.gate = p.act == FQ_ACTIVATION_SWIGLU_OAI && s.gate == FQ_GATE_LAYOUT_NONE ? FQ_GATE_LAYOUT_SPLIT : s.gate;
    p.in_type = s.in_type;
    p.out = fit_out_type(p.scheme, p.out);
    p.pow2 = s.pow2 ? FQ_SCALE_ROUNDING_POW2_CEIL : 0;
    if (s.e8m0) p.scale_type = FQ_TYPE_E8M0;
}

std::vector<std::string> shell_words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string s; in >> s;) w.push_back(s);
    return w;
}

}  // namespace

std::string moe_name(int32_t layout) { return name_of(kMoeLayouts, layout); }
std::string skew_name(Skew s) { return name_of(kSkews, s); }
std::string outputs_name(Outputs o) { return name_of(kOutputs, o); }

std::vector<int32_t> BenchCase::calls() const {
    switch (outputs) {
        case Outputs::Row: return {FQ_OUTPUT_ROWWISE};
        case Outputs::Col: return {FQ_OUTPUT_COLUMNWISE};
        case Outputs::Both: return {FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE};
        case Outputs::Separate: break;
    }
    return {FQ_OUTPUT_ROWWISE, FQ_OUTPUT_COLUMNWISE};
}

std::string BenchCase::describe() const {
    std::string s = p.describe();
    if (moe != FQ_MOE_LAYOUT_NONE)
        s += " " + moe_name(moe) + " E=" + std::to_string(experts) + " " + skew_name(skew) +
             (moe == FQ_MOE_LAYOUT_MASKED ? " max_m=" : " M=") + std::to_string(tokens);
    if (outputs != Outputs::Row)
        s += " " + outputs_name(outputs) + " block " + std::to_string(col_block) + (col_transpose ? " transposed" : "");
    if (given_global_amax) s += " given global amax";
    return s;
}

std::vector<int32_t> expert_counts(int64_t experts, int64_t cap, Skew skew) {
    std::vector<int32_t> counts(static_cast<size_t>(experts), static_cast<int32_t>(cap));
    if (skew == Skew::Uniform) return counts;
    const int64_t nonempty = experts - experts / 8;
    for (int64_t e = 0; e < experts; ++e) {
        const int64_t r = e - e / 8;  // rank among the experts with rows
        counts[size_t(e)] = e % 8 == 7 ? 0 : int32_t(nonempty == 1 ? cap : cap - 6 * cap * r / (7 * (nonempty - 1)));
    }
    return counts;
}

MoeRows moe_rows(const BenchCase& c) {
    MoeRows m;
    if (c.moe == FQ_MOE_LAYOUT_NONE) {
        m.valid = c.p.rows;
    } else if (c.moe == FQ_MOE_LAYOUT_MASKED) {
        m.counts = expert_counts(c.experts, c.tokens, c.skew);
        for (int32_t n : m.counts) m.valid += n;
    } else {  // CONTIGUOUS: slots of ceil(M / E) rows packed back to back, clamped to the M rows there are
        const int64_t rows = c.p.rows;
        int64_t at = 0;
        m.offsets.push_back(0);
        for (int32_t n : expert_counts(c.experts, (rows + c.experts - 1) / c.experts, c.skew)) {
            at = std::min(rows, at + n);
            m.offsets.push_back(int32_t(at));
        }
        m.valid = at;
    }
    return m;
}

void configure_call(fqQuantDesc_t d, const BenchCase& c, int32_t outputs, const CaseArrays& arrays) {
    c.p.configure(d, arrays.static_scales);
    auto set = [&](int32_t attr, int32_t v, const char* what) { check(fqQuantDescSetAttribute(d, attr, &v, 4), what); };
    auto set_ptr = [&](int32_t attr, const void* p, const char* what) {
        check(fqQuantDescSetAttribute(d, attr, &p, sizeof p), what);
    };
    set(FQ_QUANT_DESC_OUTPUTS, outputs, "FQ_QUANT_DESC_OUTPUTS");
    if (c.given_global_amax) set_ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, arrays.global_amax, "FQ_QUANT_DESC_GLOBAL_AMAX_POINTER");
    if (outputs & FQ_OUTPUT_COLUMNWISE) {  // set only with columnwise output: the library refuses them otherwise
        set(FQ_QUANT_DESC_COLUMNWISE_BLOCK, c.col_block, "FQ_QUANT_DESC_COLUMNWISE_BLOCK");
        set(FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE, c.col_transpose, "FQ_QUANT_DESC_COLUMNWISE_TRANSPOSE");
    }
    if (c.moe == FQ_MOE_LAYOUT_NONE) return;
    set(FQ_QUANT_DESC_MOE_LAYOUT, c.moe, "FQ_QUANT_DESC_MOE_LAYOUT");
    set(FQ_QUANT_DESC_MOE_NUM_EXPERTS, int32_t(c.experts), "FQ_QUANT_DESC_MOE_NUM_EXPERTS");
    if (c.moe == FQ_MOE_LAYOUT_MASKED)
        set_ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, arrays.counts, "FQ_QUANT_DESC_MOE_COUNTS_POINTER");
    else
        set_ptr(FQ_QUANT_DESC_MOE_OFFSETS_POINTER, arrays.offsets, "FQ_QUANT_DESC_MOE_OFFSETS_POINTER");
}

void set_columnwise_buffers(fqQuantDesc_t d, void* values, void* scales) {
    check(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, &values, sizeof values),
          "FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER");
    check(fqQuantDescSetAttribute(d, FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, &scales, sizeof scales),
          "FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER");
}

ByteCount count_bytes(const BenchCase& c, int64_t valid_rows, size_t row_scale_bytes, size_t col_scale_bytes) {
    Problem valid = c.p;
    valid.rows = valid_rows;
    ByteCount b;
    b.input = valid.input_bytes();
    if (c.rowwise()) {
        b.row_values = valid.output_bytes();
        b.row_scales = int64_t(row_scale_bytes);
    }
    if (c.columnwise()) {
        b.col_values = valid.output_bytes();
        b.col_scales = int64_t(col_scale_bytes);
    }
    return b;
}

const OptionSpec& sweep_options() {
    static const OptionSpec spec = {{"tokens", "hidden", "scheme", "group", "act", "gate-layout", "out-type", "in-type",
                                     "layouts", "variants", "pdl", "wide-tile-min", "global-amax", "moe", "experts", "skew",
                                     "outputs", "col-block", "transpose"},
                                    {"gated", "not-gated", "pow2", "e8m0"}};
    return spec;
}

const OptionSpec& bench_options() {
    static const OptionSpec spec = [] {
        OptionSpec s = sweep_options();
        for (const char* o : {"file", "json", "csv", "plot", "reps"}) s.options.push_back(o);
        for (const char* f : {"help", "quiet", "constant-input"}) s.flags.push_back(f);
        return s;
    }();
    return spec;
}

// Table order: the MoE arrangement outermost, then the shape (one copy measurement per byte count serves
// every row of a shape), then the problem, the outputs, the variant.
std::vector<BenchCase> expand_sweep(const Args& a) {
    const Sweep s = parse_sweep(a);
    std::vector<BenchCase> cases(1);
    vary(cases, s.moe, [](BenchCase& c, int32_t m) { c.moe = m; });
    vary(cases, s.experts, [](BenchCase& c, long long e) { c.experts = e; }, has_moe);
    vary(cases, s.skews, [](BenchCase& c, Skew k) { c.skew = k; }, has_moe);
    vary(cases, s.tokens, [](BenchCase& c, long long t) { c.tokens = t; });
    vary(cases, s.hidden, [](BenchCase& c, long long h) { c.p.cols = h; });
    vary(cases, s.schemes, [](BenchCase& c, int32_t v) { c.p.scheme = v; });
    vary(cases, s.groups, [](BenchCase& c, long long g) { c.p.group = int32_t(g); });
    vary(cases, s.acts, [](BenchCase& c, int32_t v) { c.p.act = v; });
    vary(cases, s.outs, [](BenchCase& c, int32_t v) { c.p.out = v; });
    vary(cases, s.layouts, [](BenchCase& c, int32_t v) { c.p.layout = v; });
    vary(cases, s.outputs, [](BenchCase& c, Outputs o) { c.outputs = o; });
    vary(cases, s.col_blocks, [](BenchCase& c, long long b) { c.col_block = int32_t(b); }, has_columnwise);
    vary(cases, s.transposes, [](BenchCase& c, long long t) { c.col_transpose = int32_t(t); }, has_columnwise);
    vary(cases, s.variants, [](BenchCase& c, const std::string& v) { c.variant = v; });
    vary(cases, s.pdl, [](BenchCase& c, long long v) { c.pdl = int(v); });
    vary(cases, s.wide_tile_min, [](BenchCase& c, long long v) { c.wide_tile_min = int(v); });
    vary(cases, s.given_global_amax, [](BenchCase& c, bool g) { c.given_global_amax = g; }, has_nvfp4);
    for (BenchCase& c : cases) finish(c, s);
    return cases;
}

std::vector<BenchCase> read_sweep_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw ToolError("--file: cannot open " + path);
    std::vector<BenchCase> cases;
    int number = 0;
    for (std::string line; std::getline(f, line);) {
        ++number;
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        try {
            const Args line_args(shell_words(line), sweep_options());
            const auto more = expand_sweep(line_args);
            cases.insert(cases.end(), more.begin(), more.end());
        } catch (const ToolError& e) {
            throw ToolError(path + ":" + std::to_string(number) + ": " + e.what(), e.exit_code);
        }
    }
    return cases;
}

std::vector<BenchCase> bench_cases(const Args& args) {
    return args.has("file") ? read_sweep_file(args.get("file")) : expand_sweep(args);
}

}  // namespace fqtool
