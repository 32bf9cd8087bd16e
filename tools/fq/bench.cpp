// fq bench: effective bandwidth of fqQuantize over a sweep of shapes, problems and variants, each beside a
// device-to-device copy of the same number of bytes measured the same way in the same run.
//
// Method (docs/perf.md): per problem, enough input/output sets rotate from call to call that together they
// cover 4x the L2 (at least 2), so no call finds its data in L2; N calls (N = 4 GB / bytes, 2..20000) are
// captured in one CUDA graph, the graph is replayed --reps times (default 7) and the median replay time / N is
// the time per call. Effective bandwidth = (bytes read + bytes written, each tensor once) / time. The copy
// moves the same total (half read, half written) with cudaMemcpyAsync, captured, rotated and replayed alike.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "device.h"
#include "json.h"

namespace fqtool {

const char* kBenchHelp = R"(usage: fq bench [sweep options] [--file SWEEPS] [--json F] [--csv F] [--plot F.png] [--reps N]

Every combination of the sweep options is one measurement (table on stdout, progress on stderr):
  --tokens 1,16,128,1024,4096,16384     rows T
  --hidden 2048,7168,18432              output width H (a gated input is [T, 2H])
  --scheme per-group                    per-group, per-token, per-tensor, per-tensor-static, block2d, mxfp8,
                                        mxfp4, nvfp4 (comma list)
  --group 128                           per-group sizes (comma list)
  --act silu                            identity, silu, gelu_erf, gelu_tanh, relu, relu_squared, swiglu_oai
  --gated | --not-gated                 default gated; --gate-layout split|interleaved|block
  --out-type e4m3fn                     e4m3fn, e4m3fnuz, e5m2, int8, e2m1 (comma list; the scheme's
                                        natural type when the one given does not fit it: e2m1 for mxfp4/nvfp4)
  --in-type bf16                        bf16, fp16
  --layouts row,col                     row, col, tma, swizzled, packed (scale layouts)
  --variants auto                       auto (the dispatcher) or variant names (fq check lists them)
  --pdl 0                               0, 1 or 0,1: allow programmatic dependent launch
  --pow2                                POW2_CEIL scale rounding (with --e8m0: E8M0 scales for per-group/token)
--file SWEEPS: one sweep per line, written with the options above ("--tokens 1,16 --scheme mxfp8
  --layouts swizzled"); each line starts from the defaults. '#' starts a comment.
--json F, --csv F: every result (also the skipped combinations, with the reason). --plot F.png: GB/s
  against tokens per variant, one panel per hidden size (tools/fq/plot_bench.py, needs matplotlib).
A combination the library refuses is listed as skipped with its reason, not measured.
Exit status: 0 measured, 2 usage or setup error, 77 no usable GPU.
)";

namespace {

#define CK(x)                                                                                   \
    do {                                                                                        \
        const cudaError_t e_ = (x);                                                             \
        if (e_ != cudaSuccess) throw ToolError(std::string(#x) + ": " + cudaGetErrorString(e_)); \
    } while (0)

const std::vector<std::string> kSweepOptions = {"tokens", "hidden", "scheme", "group", "act", "gated", "not-gated",
                                                "gate-layout", "out-type", "in-type", "layouts", "variants", "pdl",
                                                "pow2", "e8m0"};
const std::vector<std::string> kFlags = {"gated", "not-gated", "pow2", "e8m0", "help", "quiet"};

struct Sweep {
    std::vector<long long> tokens, hidden, groups, pdl;
    std::vector<int32_t> schemes, acts, outs, layouts;
    std::vector<std::string> variants;
    int32_t gate = FQ_GATE_LAYOUT_SPLIT, in_type = FQ_TYPE_BF16;
    bool pow2 = false, e8m0 = false;
};

Sweep parse_sweep(const Args& a) {
    Sweep s;
    s.tokens = a.ints("tokens", "1,16,128,1024,4096,16384");
    s.hidden = a.ints("hidden", "2048,7168,18432");
    s.groups = a.ints("group", "128");
    s.pdl = a.ints("pdl", "0");
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
    return s;
}

// The output type a scheme takes when the one asked for does not fit it.
int32_t fit_out_type(int32_t scheme, int32_t out) {
    if (scheme == FQ_SCHEME_MXFP4 || scheme == FQ_SCHEME_NVFP4) return FQ_TYPE_FP4_E2M1;
    if (out == FQ_TYPE_FP4_E2M1) return FQ_TYPE_FP8_E4M3FN;
    if (scheme == FQ_SCHEME_MXFP8 && out != FQ_TYPE_FP8_E5M2) return FQ_TYPE_FP8_E4M3FN;
    return out;
}

struct Result {
    Problem p;
    std::string layout, variant, kernel, status = "ok";
    int pdl = 0;
    size_t bytes = 0;
    double us = 0, copy_us = 0;
    double gbps() const { return us > 0 ? double(bytes) / us * 1e-3 : 0; }
    double copy_gbps() const { return copy_us > 0 ? double(bytes) / copy_us * 1e-3 : 0; }
    double pct() const { return us > 0 ? 100.0 * copy_us / us : 0; }
};

// Median time per call of enqueue(i), i = 0..iters-1, captured in a graph and replayed `reps` times.
template <class Enqueue>
double time_per_call_us(cudaStream_t stream, int iters, int reps, Enqueue&& enqueue) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < iters; ++i) enqueue(i);
    CK(cudaStreamEndCapture(stream, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    CK(cudaGraphLaunch(exec, stream));  // warm-up
    CK(cudaStreamSynchronize(stream));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        CK(cudaEventRecord(a, stream));
        CK(cudaGraphLaunch(exec, stream));
        CK(cudaEventRecord(b, stream));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(double(ms) * 1000.0 / iters);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Device pools of `count` slots of `bytes` each, 256-byte aligned.
struct Pool {
    char* base = nullptr;
    size_t slot = 0;
    int count = 0;
    Pool(size_t bytes, int n) : slot((std::max<size_t>(bytes, 1) + 255) / 256 * 256), count(n) {
        CK(cudaMalloc(&base, slot * size_t(n)));
    }
    ~Pool() { cudaFree(base); }
    char* at(int i) const { return base + slot * size_t(i % count); }
};

class Bench {
public:
    Bench(int reps, bool quiet) : reps_(reps), quiet_(quiet) {
        check(fqCreate(&h_, FQ_BACKEND_CUDA, 0), "fqCreate(CUDA)");
        CK(cudaGetDeviceProperties(&prop_, 0));
        CK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        CK(cudaMalloc(&static_scale_, sizeof(float)));
        const float one = 1.0f;
        CK(cudaMemcpy(static_scale_, &one, sizeof one, cudaMemcpyHostToDevice));
    }
    ~Bench() {
        cudaFree(static_scale_);
        cudaStreamDestroy(stream_);
        fqDestroy(h_);
    }
    const cudaDeviceProp& prop() const { return prop_; }

    int variant_index(const std::string& name) {
        if (name == "auto") return -1;
        int32_t n = 0;
        check(fqGetVariantCount(h_, &n), "fqGetVariantCount");
        std::string names;
        for (int32_t i = 0; i < n; ++i) {
            char buf[256];
            check(fqGetVariantName(h_, i, buf, sizeof buf), "fqGetVariantName");
            const std::string s = buf;
            if (s.rfind(name + ":", 0) == 0) return i;
            names += " " + s.substr(0, s.find(':'));
        }
        throw ToolError("--variants: no variant \"" + name + "\" on this GPU; there are:" + names);
    }

    // Measures one problem (or records why it is skipped).
    Result measure(const Problem& p, const std::string& variant, int pdl) {
        Result r;
        r.p = p;
        r.layout = layout_name(p.layout);
        r.variant = variant;
        r.pdl = pdl;
        const int32_t pin = variant_index(variant), allow_pdl = pdl;
        check(fqHandleSetAttribute(h_, FQ_HANDLE_VARIANT, &pin, 4), "FQ_HANDLE_VARIANT");
        check(fqHandleSetAttribute(h_, FQ_HANDLE_ALLOW_PDL, &allow_pdl, 4), "FQ_HANDLE_ALLOW_PDL");
        fqQuantDesc_t d;
        check(fqQuantDescCreate(&d), "fqQuantDescCreate");
        std::unique_ptr<fqQuantDescOpaque, fqStatus_t (*)(fqQuantDesc_t)> desc(d, fqQuantDescDestroy);
        fqTensorLayout_t li = nullptr, lo = nullptr;
        std::unique_ptr<fqTensorLayoutOpaque, fqStatus_t (*)(fqTensorLayout_t)> lin(nullptr, fqTensorLayoutDestroy),
            lout(nullptr, fqTensorLayoutDestroy);
        auto skipped = [&](const char* what) {
            r.status = std::string("skipped: ") + what + ": " + fqGetLastErrorMessage();
            return r;
        };
        if (fqTensorLayoutCreate(&li, p.in_type, p.rows, p.in_cols(), p.in_cols()) != FQ_STATUS_SUCCESS) return skipped("input");
        lin.reset(li);
        if (fqTensorLayoutCreate(&lo, p.out, p.rows, p.cols, p.cols) != FQ_STATUS_SUCCESS) return skipped("output");
        lout.reset(lo);
        try {
            p.configure(d, static_cast<const float*>(static_scale_));
        } catch (const ToolError& e) {
            r.status = std::string("skipped: ") + e.what();
            return r;
        }
        char kernel[96] = "";
        if (fqQuerySupport(h_, d, li, lo, kernel, sizeof kernel) != FQ_STATUS_SUCCESS) return skipped("not run");
        r.kernel = kernel;
        size_t sb = 0;
        check(fqGetScaleBufferSize(d, p.rows, p.cols, FQ_OUTPUT_ROWWISE, &sb), "fqGetScaleBufferSize");
        const size_t in_bytes = size_t(p.input_bytes()), out_bytes = size_t(p.output_bytes());
        r.bytes = in_bytes + out_bytes + sb;
        const size_t target = size_t(4) * size_t(prop_.l2CacheSize);
        const int iters = int(std::max<size_t>(2, std::min<size_t>(20000, size_t(4e9) / std::max<size_t>(r.bytes, 1))));
        const int nbuf = int(std::min<size_t>(size_t(iters), std::max<size_t>(2, (target + r.bytes - 1) / r.bytes)));
        r.copy_us = copy_us(r.bytes, iters, nbuf);
        Pool in(in_bytes, nbuf), out(out_bytes, nbuf), sc(sb + 64, nbuf);
        CK(cudaMemset(in.base, 0x3E, in.slot * size_t(nbuf)));  // bf16 ~0.19: finite, non-zero activations
        size_t ws = 0;  // NVFP4 without a global amax: the amax is reduced in device workspace (a pre-pass)
        check(fqGetWorkspaceSize(h_, d, li, lo, &ws), "fqGetWorkspaceSize");
        Pool workspace(std::max<size_t>(ws, 4), 1);
        r.us = time_per_call_us(stream_, iters, reps_, [&](int i) {
            check(fqQuantize(h_, d, li, in.at(i), lo, out.at(i), sc.at(i), sb, ws ? workspace.at(0) : nullptr, ws,
                             reinterpret_cast<fqStream_t>(stream_)),
                  "fqQuantize");
        });
        return r;
    }

private:
    // The same-bytes copy, measured once per byte count in this run.
    double copy_us(size_t bytes, int iters, int nbuf) {
        auto it = copy_cache_.find(bytes);
        if (it != copy_cache_.end()) return it->second;
        const size_t half = bytes / 2;
        Pool src(half, nbuf), dst(half, nbuf);
        const double us = time_per_call_us(stream_, iters, reps_, [&](int i) {
            CK(cudaMemcpyAsync(dst.at(i), src.at(i), half, cudaMemcpyDeviceToDevice, stream_));
        });
        return copy_cache_[bytes] = us;
    }

    fqHandle_t h_ = nullptr;
    cudaDeviceProp prop_{};
    cudaStream_t stream_ = nullptr;
    void* static_scale_ = nullptr;
    int reps_;
    bool quiet_;
    std::map<size_t, double> copy_cache_;
};

std::vector<std::string> read_sweep_file(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw ToolError("--file: cannot open " + path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(f, line);) {
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
    }
    return lines;
}

std::vector<std::string> shell_words(const std::string& line) {
    std::istringstream in(line);
    std::vector<std::string> w;
    for (std::string s; in >> s;) w.push_back(s);
    return w;
}

// Every problem of a sweep, in table order: shape outermost, so one copy measurement serves a shape's rows.
struct Item {
    Problem p;
    std::string variant;
    int pdl;
};
std::vector<Item> expand(const Sweep& s) {
    std::vector<Item> items;
    for (long long t : s.tokens)
        for (long long h : s.hidden)
            for (int32_t scheme : s.schemes)
                for (long long g : s.groups)
                    for (int32_t act : s.acts)
                        for (int32_t out : s.outs)
                            for (int32_t layout : s.layouts)
                                for (const std::string& v : s.variants)
                                    for (long long pdl : s.pdl) {
                                        Problem p;
                                        p.rows = t;
                                        p.cols = h;
                                        p.scheme = scheme;
                                        p.group = int32_t(g);
                                        p.act = act;
                                        p.gate = act == FQ_ACTIVATION_SWIGLU_OAI && s.gate == FQ_GATE_LAYOUT_NONE
                                                     ? FQ_GATE_LAYOUT_SPLIT : s.gate;
                                        p.in_type = s.in_type;
                                        p.out = fit_out_type(scheme, out);
                                        p.layout = layout;
                                        p.pow2 = s.pow2 ? FQ_SCALE_ROUNDING_POW2_CEIL : 0;
                                        if (s.e8m0) p.scale_type = FQ_TYPE_E8M0;
                                        items.push_back({p, v, int(pdl)});
                                    }
    return items;
}

Json to_json_result(const Result& r) {
    Json o = Json::make_object();
    auto num = [](double v) { Json j; j.kind = Json::Kind::Number; j.number = v; return j; };
    // The first keys are the ones tools/perf_report.py has always read.
    o.set("tokens", Json::of(r.p.rows));
    o.set("hidden", Json::of(r.p.cols));
    o.set("layout", Json::of(r.layout));
    o.set("variant", Json::of(r.variant));
    o.set("kernel", Json::of(r.kernel));
    o.set("bytes", Json::of(int64_t(r.bytes)));
    o.set("us", num(r.us));
    o.set("gbps", num(r.gbps()));
    o.set("copy_us", num(r.copy_us));
    o.set("copy_gbps", num(r.copy_gbps()));
    o.set("pct_of_copy", num(r.pct()));
    o.set("scheme", Json::of(scheme_name(r.p.scheme)));
    o.set("group", Json::of(int64_t(r.p.group)));
    o.set("activation", Json::of(activation_name(r.p.act)));
    o.set("gate_layout", Json::of(gate_name(r.p.gate)));
    o.set("in_type", Json::of(type_name(r.p.in_type)));
    o.set("out_type", Json::of(type_name(r.p.out)));
    o.set("scale_type", Json::of(type_name(r.p.resolved_scale_type())));
    o.set("pdl", Json::of(int64_t(r.pdl)));
    o.set("status", Json::of(r.status));
    return o;
}

void print_header() {
    std::printf("%7s %6s %-10s %-8s %-6s %-8s %-4s %-14s %-22s %11s %9s %7s %9s %7s\n", "tokens", "hidden", "scheme", "act",
                "out", "scales", "lay", "variant", "kernel", "bytes", "us", "GB/s", "copy us", "%copy");
}

void print_row(const Result& r) {
    std::string scheme = scheme_name(r.p.scheme);
    if (r.p.scheme == FQ_SCHEME_PER_GROUP) scheme += std::to_string(r.p.group);
    std::string variant = r.variant + (r.pdl ? "+pdl" : "");
    if (r.status != "ok") {
        std::printf("%7lld %6lld %-10s %-8s %-6s %-8s %-4s %-14s %s\n", (long long)r.p.rows, (long long)r.p.cols, scheme.c_str(),
                    activation_name(r.p.act).c_str(), type_name(r.p.out).c_str(), type_name(r.p.resolved_scale_type()).c_str(),
                    r.layout.c_str(), variant.c_str(), r.status.c_str());
        return;
    }
    std::printf("%7lld %6lld %-10s %-8s %-6s %-8s %-4s %-14s %-22s %11zu %9.2f %7.0f %9.2f %6.1f%%\n", (long long)r.p.rows,
                (long long)r.p.cols, scheme.c_str(), activation_name(r.p.act).c_str(), type_name(r.p.out).c_str(),
                type_name(r.p.resolved_scale_type()).c_str(), r.layout.c_str(), variant.c_str(), r.kernel.c_str(), r.bytes,
                r.us, r.gbps(), r.copy_us, r.pct());
}

// plot_bench.py beside an installed fq (PREFIX/share/fusedquant), else in the source tree it was built from.
std::string plot_script() {
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        std::string dir(exe, size_t(n));
        dir.resize(dir.rfind('/'));
        const std::string installed = dir + "/../share/fusedquant/plot_bench.py";
        if (std::ifstream(installed)) return installed;
    }
    return FQ_PLOT_SCRIPT;
}

std::string csv_quote(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace

int bench_main(int argc, char** argv) {
    const Args args(argc, argv, kFlags);
    if (args.has("help")) {
        std::fputs(kBenchHelp, stdout);
        return 0;
    }
    std::vector<std::string> known = kSweepOptions;
    for (const char* o : {"file", "json", "csv", "plot", "reps", "help", "quiet"}) known.push_back(o);
    args.only(known);

    std::vector<Item> items;
    if (args.has("file")) {
        for (const std::string& line : read_sweep_file(args.get("file"))) {
            const Args line_args(shell_words(line), kFlags);
            line_args.only(kSweepOptions);
            const auto more = expand(parse_sweep(line_args));
            items.insert(items.end(), more.begin(), more.end());
        }
    } else {
        items = expand(parse_sweep(args));
    }
    std::string why;  // the sweep is parsed first, so a mistake in it shows on any machine
    if (!cuda_available(&why)) {
        std::printf("fq bench: %s; nothing to measure (%zu measurements parsed)\n", why.c_str(), items.size());
        return 77;
    }
    Bench bench(int(args.get_int("reps", 7)), args.has("quiet"));
    for (const Item& it : items) bench.variant_index(it.variant);  // unknown names fail before any measurement

    const cudaDeviceProp& prop = bench.prop();
    std::printf("device: %s, %d SMs, L2 %d MB; %zu measurements; copy = same-bytes cudaMemcpyAsync D2D, same run\n",
                prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, items.size());
    print_header();
    Progress progress("bench", items.size(), !args.has("quiet"));
    std::vector<Result> results;
    for (size_t i = 0; i < items.size(); ++i) {
        progress.update(i, items[i].p.describe());
        results.push_back(bench.measure(items[i].p, items[i].variant, items[i].pdl));
        progress.finish();  // the table row goes where the progress line was
        print_row(results.back());
        std::fflush(stdout);
    }
    progress.update(items.size());
    progress.finish();

    std::string json_path = args.get("json");
    if (json_path.empty() && args.has("plot")) json_path = args.get("plot") + ".json";
    if (!json_path.empty()) {
        Json doc = Json::make_object(), list = Json::make_array();
        doc.set("device", Json::of(std::string(prop.name)));
        doc.set("tool", Json::of(std::string("fq bench")));
        doc.set("method", Json::of(std::string("CUDA-graph replay over rotated inputs (4x L2), median of reps; "
                                               "copy = same-bytes cudaMemcpyAsync D2D in the same run")));
        for (const Result& r : results) list.array.push_back(to_json_result(r));
        doc.set("results", list);
        std::ofstream(json_path) << to_json(doc) << "\n";
    }
    if (args.has("csv")) {
        std::ofstream csv(args.get("csv"));
        const Json first = to_json_result(results.empty() ? Result{} : results[0]);
        for (size_t k = 0; k < first.object.size(); ++k) csv << (k ? "," : "") << first.object[k].first;
        csv << "\n";
        for (const Result& r : results) {
            const Json o = to_json_result(r);
            for (size_t k = 0; k < o.object.size(); ++k) {
                const Json& v = o.object[k].second;
                csv << (k ? "," : "") << (v.kind == Json::Kind::String ? csv_quote(v.string) : to_json(v));
            }
            csv << "\n";
        }
    }
    if (args.has("plot")) {
        const std::string cmd = "python3 \"" + plot_script() + "\" \"" + json_path + "\" \"" + args.get("plot") + "\"";
        if (std::system(cmd.c_str()) != 0)
            throw ToolError("--plot: `" + cmd + "` failed (it needs matplotlib: python3 -m pip install matplotlib)", 1);
    }
    return 0;
}

}  // namespace fqtool
