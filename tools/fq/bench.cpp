// fq bench: effective bandwidth of fqQuantize over a sweep of shapes, problems and variants, each beside a
// device-to-device copy of the same number of bytes measured the same way in the same run.
//
// Method (docs/perf.md): per problem, enough input/output sets rotate from call to call that together they
// cover 4x the L2 (at least 2), so no call finds its data in L2; N calls (N = 4 GB / bytes, 2..20000) are
// captured in one CUDA graph, the graph is replayed --reps times (default 7) and the median replay time / N is
// the time per call (the fastest and slowest replays beside it). Inputs are bf16/fp16 normal(0, 1) values from
// a fixed seed (bench_kernels.cu), or with --constant-input the constant 0x3E3E (bf16 ~0.19), labelled so.
// Effective bandwidth = (bytes read + bytes written, each tensor once) / time. The reference copy moves the
// same total (half read, half written), captured, rotated and replayed alike, three ways: cudaMemcpyAsync of
// the exact bytes, cudaMemcpyAsync of the bytes rounded up to 64 KiB (its speed depends on the byte count),
// and an SM copy kernel (16-byte loads and stores); the fastest is "the copy", and each result names it.
// Under a MoE layout only valid rows count (bench_case.h: count_bytes); col+row-separate captures two calls
// per iteration and counts the bytes of one call writing both outputs.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_case.h"
#include "bench_kernels.h"
#include "cli.h"
#include "csv.h"
#include "device.h"
#include "json.h"
#include "plot.h"

namespace fqtool {

namespace {

#define CK(x)                                                                                   \
    do {                                                                                        \
        const cudaError_t e_ = (x);                                                             \
        if (e_ != cudaSuccess) throw ToolError(std::string(#x) + ": " + cudaGetErrorString(e_)); \
    } while (0)

// Time per call over the replays of one graph: the median, the fastest and the slowest replay.
struct Timing {
    double median = 0, min = 0, max = 0;
};

// The reference copies, each timed like the library's calls; the fastest is the copy a result is compared with.
struct Copies {
    Timing memcpy_exact, memcpy_64k, kernel;
    const Timing& best() const {
        const Timing* b = &memcpy_exact;
        for (const Timing* t : {&memcpy_64k, &kernel})
            if (t->median < b->median) b = t;
        return *b;
    }
    std::string best_name() const {
        const Timing& b = best();
        return &b == &memcpy_exact ? "memcpy" : &b == &memcpy_64k ? "memcpy-64k" : "sm-copy";
    }
};

struct Result {
    BenchCase c;
    std::string layout, kernel, status = "ok";
    int64_t valid_rows = 0;
    ByteCount counted;
    size_t bytes = 0;  // counted.total()
    int sets = 0;      // rotated buffer sets
    Timing t;
    Copies copies;
    double us = 0, copy_us = 0;  // t.median, copies.best().median
    double gbps() const { return us > 0 ? double(bytes) / us * 1e-3 : 0; }
    double copy_gbps() const { return copy_us > 0 ? double(bytes) / copy_us * 1e-3 : 0; }
    double pct() const { return us > 0 ? 100.0 * copy_us / us : 0; }
};

// Time per call of enqueue(i), i = 0..iters-1, captured in a graph and replayed `reps` times. A failing
// enqueue ends the capture before the exception leaves, so the stream stays usable.
template <class Enqueue>
Timing time_per_call_us(cudaStream_t stream, int iters, int reps, Enqueue&& enqueue) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
        for (int i = 0; i < iters; ++i) enqueue(i);
    } catch (...) {
        if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
        throw;
    }
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
    return {t[t.size() / 2], t.front(), t.back()};
}

// Device pools of `count` slots of `bytes` each, 256-byte aligned; no memory (every slot NULL) for 0 bytes.
struct Pool {
    char* base = nullptr;
    size_t slot = 0;
    int count = 0;
    Pool(size_t bytes, int n) : slot(round_up(bytes)), count(n) {
        if (slot) CK(cudaMalloc(&base, slot * size_t(n)));
    }
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;
    ~Pool() { cudaFree(base); }
    char* at(int i) const { return base ? base + slot * size_t(i % count) : nullptr; }
    static size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }
};

template <class T>
void upload(Pool& p, const std::vector<T>& v) {
    if (!v.empty()) CK(cudaMemcpy(p.base, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// The per-shape arrays on the device, uploaded once (not rotated): MoE counts or offsets, and the static
// scale of PER_TENSOR_STATIC (one per expert under a MoE layout).
struct ShapeArrays {
    Pool counts, offsets, static_scales, global_amax;
    ShapeArrays(const BenchCase& c, const MoeRows& rows)
        : counts(rows.counts.size() * 4, 1), offsets(rows.offsets.size() * 4, 1),
          static_scales(c.p.scheme == FQ_SCHEME_PER_TENSOR_STATIC ? per_expert_bytes(c) : 0, 1),
          global_amax(c.given_global_amax ? per_expert_bytes(c) : 0, 1) {
        upload(counts, rows.counts);
        upload(offsets, rows.offsets);
        upload(static_scales, std::vector<float>(static_scales.slot / 4, 1.0f));
        upload(global_amax, std::vector<float>(global_amax.slot / 4, 1.0f));
    }
    static size_t per_expert_bytes(const BenchCase& c) { return size_t(std::max<int64_t>(c.experts, 1)) * 4; }
    CaseArrays pointers() const {
        return {reinterpret_cast<const int32_t*>(counts.base), reinterpret_cast<const int32_t*>(offsets.base),
                reinterpret_cast<const float*>(static_scales.base), reinterpret_cast<const float*>(global_amax.base)};
    }
};

using DescPtr = std::unique_ptr<fqQuantDescOpaque, fqStatus_t (*)(fqQuantDesc_t)>;
using LayoutPtr = std::unique_ptr<fqTensorLayoutOpaque, fqStatus_t (*)(fqTensorLayout_t)>;

// One fqQuantize call of an iteration: its descriptor, the outputs it writes, the sizes it asks for.
struct Call {
    DescPtr desc{nullptr, fqQuantDescDestroy};
    int32_t outputs = 0;
    size_t row_scales = 0, col_scales = 0, workspace = 0;
    bool rowwise() const { return (outputs & FQ_OUTPUT_ROWWISE) != 0; }
    bool columnwise() const { return (outputs & FQ_OUTPUT_COLUMNWISE) != 0; }
};

// What one rotated set holds, whole buffers (valid rows or not), and the sets of them.
struct SetSizes {
    size_t input = 0, values = 0, scales = 0, col_values = 0, col_scales = 0;
    size_t total() const {
        return Pool::round_up(input) + Pool::round_up(values) + Pool::round_up(scales) + Pool::round_up(col_values) +
               Pool::round_up(col_scales);
    }
};
// Whole buffers of the outputs `c` writes. Scale buffers get 64 bytes more, so that even an empty one
// (per-tensor static) is a real allocation.
SetSizes set_sizes(const BenchCase& c, size_t row_scales, size_t col_scales) {
    SetSizes s;
    s.input = size_t(c.p.input_bytes());
    if (c.rowwise()) s.values = size_t(c.p.output_bytes()), s.scales = row_scales + 64;
    if (c.columnwise()) s.col_values = size_t(c.p.output_bytes()), s.col_scales = col_scales + 64;
    return s;
}

struct RotatedSets {
    Pool input, values, scales, col_values, col_scales;
    RotatedSets(const SetSizes& s, int n)
        : input(s.input, n), values(s.values, n), scales(s.scales, n), col_values(s.col_values, n),
          col_scales(s.col_scales, n) {}
};

class Bench {
public:
    Bench(int reps, bool quiet, bool constant_input) : reps_(reps), quiet_(quiet), constant_input_(constant_input) {
        check(fqCreate(&h_, FQ_BACKEND_CUDA, 0), "fqCreate(CUDA)");
        CK(cudaGetDeviceProperties(&prop_, 0));
        CK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    }
    ~Bench() {
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

    // Measures one case (or records why it is skipped).
    Result measure(const BenchCase& c) {
        Result r;
        r.c = c;
        r.layout = layout_name(c.p.layout);
        const int32_t pin = variant_index(c.variant), allow_pdl = c.pdl;
        check(fqHandleSetAttribute(h_, FQ_HANDLE_VARIANT, &pin, 4), "FQ_HANDLE_VARIANT");
        check(fqHandleSetAttribute(h_, FQ_HANDLE_ALLOW_PDL, &allow_pdl, 4), "FQ_HANDLE_ALLOW_PDL");
        check(fqHandleSetAttribute(h_, FQ_HANDLE_WIDE_TILE_MIN, &c.wide_tile_min, 4), "FQ_HANDLE_WIDE_TILE_MIN");
        auto skipped = [&](const std::string& why) {
            r.status = "skipped: " + why;
            return r;
        };
        const Problem& p = c.p;
        fqTensorLayout_t li = nullptr, lo = nullptr;
        if (fqTensorLayoutCreate(&li, p.in_type, p.rows, p.in_cols(), p.in_cols()) != FQ_STATUS_SUCCESS)
            return skipped(std::string("input: ") + fqGetLastErrorMessage());
        const LayoutPtr lin(li, fqTensorLayoutDestroy);
        if (fqTensorLayoutCreate(&lo, p.out, p.rows, p.cols, p.cols) != FQ_STATUS_SUCCESS)
            return skipped(std::string("output: ") + fqGetLastErrorMessage());
        const LayoutPtr lout(lo, fqTensorLayoutDestroy);

        const MoeRows rows = moe_rows(c);
        r.valid_rows = rows.valid;
        const ShapeArrays arrays(c, rows);
        std::vector<Call> calls;
        try {
            for (int32_t outputs : c.calls()) calls.push_back(make_call(c, outputs, arrays.pointers()));
        } catch (const ToolError& e) {
            return skipped(e.what());
        }
        size_t row_scales = 0, col_scales = 0;
        for (const Call& k : calls) {
            if (k.rowwise()) row_scales = k.row_scales;
            if (k.columnwise()) col_scales = k.col_scales;
        }
        r.counted = count_bytes(c, rows.valid, row_scales, col_scales);
        r.bytes = size_t(r.counted.total());
        const SetSizes sizes = set_sizes(c, row_scales, col_scales);

        const Rotation rot = rotation(r.bytes);
        std::string why;
        r.sets = sets_that_fit(sizes, rot.sets, &why);
        if (r.sets == 0) return skipped(why);
        {
            std::unique_ptr<RotatedSets> sets;
            try {
                sets = std::make_unique<RotatedSets>(sizes, r.sets);
                r.kernel = prepare(calls, li, lo, *sets);
            } catch (const ToolError& e) {
                return skipped(e.what());
            }
            fill_inputs(sets->input, r.sets, p.in_type == FQ_TYPE_BF16);
            size_t ws = 0;
            for (const Call& k : calls) ws = std::max(ws, k.workspace);
            const Pool workspace(ws, 1);
            try {
                r.t = time_per_call_us(stream_, rot.iters, reps_, [&](int i) {
                    for (Call& k : calls) enqueue(k, li, lo, *sets, i, workspace.at(0));
                });
                r.us = r.t.median;
            } catch (const ToolError& e) {  // refused at execution: recorded, and the sweep goes on
                r.status = std::string("failed: ") + e.what();
                return r;
            }
        }  // the sets are freed before the copy's buffers are allocated
        r.copies = copies(r.bytes, rot.iters, rot.sets);
        r.copy_us = r.copies.best().median;
        return r;
    }

private:
    // A call's descriptor with every attribute but the rotating columnwise buffers, and the scale sizes.
    static Call make_call(const BenchCase& c, int32_t outputs, const CaseArrays& arrays) {
        Call k;
        fqQuantDesc_t d;
        check(fqQuantDescCreate(&d), "fqQuantDescCreate");
        k.desc.reset(d);
        k.outputs = outputs;
        configure_call(d, c, outputs, arrays);
        if (k.rowwise())
            check(fqGetScaleBufferSize(d, c.p.rows, c.p.cols, FQ_OUTPUT_ROWWISE, &k.row_scales), "fqGetScaleBufferSize");
        if (k.columnwise())
            check(fqGetScaleBufferSize(d, c.p.rows, c.p.cols, FQ_OUTPUT_COLUMNWISE, &k.col_scales),
                  "fqGetScaleBufferSize(COLUMNWISE)");
        return k;
    }

    // Calls in one graph (4 GB of counted bytes, 2..20000) and the sets to rotate so that the bytes the calls
    // touch cover 4x the L2 (at least 2; fewer fit in memory only where the sets are large, see sets_that_fit).
    struct Rotation {
        int iters, sets;
    };
    Rotation rotation(size_t bytes) const {
        bytes = std::max<size_t>(bytes, 1);
        const size_t target = size_t(4) * size_t(prop_.l2CacheSize);
        const size_t iters = std::max<size_t>(2, std::min<size_t>(20000, size_t(4e9) / bytes));
        return {int(iters), int(std::min(iters, std::max<size_t>(2, (target + bytes - 1) / bytes)))};
    }

    // Asks whether each call runs (with set 0's columnwise buffers: the library checks they are given) and
    // how much workspace it needs (NVFP4 without a global amax reduces it, per expert under MoE, in device
    // workspace: a pre-pass). Returns the kernels' names; throws ToolError("not run: ...") for a refusal.
    std::string prepare(std::vector<Call>& calls, fqTensorLayout_t li, fqTensorLayout_t lo, const RotatedSets& sets) {
        std::string kernels;
        for (Call& k : calls) {
            if (k.columnwise()) set_columnwise_buffers(k.desc.get(), sets.col_values.at(0), sets.col_scales.at(0));
            char kernel[96] = "";
            if (fqQuerySupport(h_, k.desc.get(), li, lo, kernel, sizeof kernel) != FQ_STATUS_SUCCESS)
                throw ToolError(std::string("not run: ") + fqGetLastErrorMessage());
            kernels += (kernels.empty() ? "" : "+") + std::string(kernel);
            check(fqGetWorkspaceSize(h_, k.desc.get(), li, lo, &k.workspace), "fqGetWorkspaceSize");
        }
        return kernels;
    }

    // Sets of `sizes` to rotate: `wanted`, or fewer (at least 2) where they would not fit in 80% of the free
    // device memory; 0, with the reason in *why, where 2 do not fit.
    static int sets_that_fit(const SetSizes& sizes, int wanted, std::string* why) {
        size_t free = 0, total = 0;
        CK(cudaMemGetInfo(&free, &total));
        const size_t budget = free / 10 * 8, one = sizes.total();
        const size_t fit = budget / std::max<size_t>(one, 1);
        if (fit < 2) {
            *why = "2 rotated sets need " + human_bytes(2.0 * double(one)) + "; " + human_bytes(double(free)) +
                   " of device memory is free";
            return 0;
        }
        return int(std::min<size_t>(size_t(wanted), fit));
    }

    // One call on set i: the rowwise output as arguments, the columnwise one through the descriptor (its
    // pointers are read at enqueue time, so each captured call keeps the set it was given).
    void enqueue(Call& k, fqTensorLayout_t li, fqTensorLayout_t lo, const RotatedSets& sets, int i, void* workspace) {
        if (k.columnwise()) set_columnwise_buffers(k.desc.get(), sets.col_values.at(i), sets.col_scales.at(i));
        const bool row = k.rowwise();
        check(fqQuantize(h_, k.desc.get(), li, sets.input.at(i), lo, row ? sets.values.at(i) : nullptr,
                         row ? sets.scales.at(i) : nullptr, row ? k.row_scales : 0, k.workspace ? workspace : nullptr,
                         k.workspace, reinterpret_cast<fqStream_t>(stream_)),
              "fqQuantize");
    }

    // Every rotated input: normal(0, 1) values, a seed per set (the same for every run), or the constant.
    void fill_inputs(const Pool& input, int sets, bool bf16) {
        if (constant_input_) {
            CK(cudaMemset(input.base, 0x3E, input.slot * size_t(sets)));  // bf16 ~0.19: finite, non-zero
            return;
        }
        for (int s = 0; s < sets; ++s)
            fill_normal(reinterpret_cast<uint16_t*>(input.at(s)), input.slot / 2, bf16, kSeed + uint64_t(s), stream_);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(stream_));
    }

    // The same-bytes copies, measured once per byte count in this run: half the bytes read, half written.
    Copies copies(size_t bytes, int iters, int nbuf) {
        auto it = copy_cache_.find(bytes);
        if (it != copy_cache_.end()) return it->second;
        const size_t half = bytes / 2, half_64k = (half + 65535) / 65536 * 65536;
        Pool src(half_64k, nbuf), dst(half_64k, nbuf);
        Copies c;
        c.memcpy_exact = time_per_call_us(stream_, iters, reps_, [&](int i) {
            CK(cudaMemcpyAsync(dst.at(i), src.at(i), half, cudaMemcpyDeviceToDevice, stream_));
        });
        c.memcpy_64k = time_per_call_us(stream_, iters, reps_, [&](int i) {
            CK(cudaMemcpyAsync(dst.at(i), src.at(i), half_64k, cudaMemcpyDeviceToDevice, stream_));
        });
        c.kernel = time_per_call_us(stream_, iters, reps_, [&](int i) {
            sm_copy(dst.at(i), src.at(i), half, stream_);
            CK(cudaGetLastError());
        });
        return copy_cache_[bytes] = c;
    }

    static constexpr uint64_t kSeed = 0x5EED0048;

    fqHandle_t h_ = nullptr;
    cudaDeviceProp prop_{};
    cudaStream_t stream_ = nullptr;
    int reps_;
    bool quiet_, constant_input_;
    std::map<size_t, Copies> copy_cache_;
};

Json to_json_result(const Result& r) {
    const Problem& p = r.c.p;
    const bool moe = r.c.moe != FQ_MOE_LAYOUT_NONE;
    Json o = Json::object();
    // The first keys are the ones tools/bench/perf_report.py has always read. tokens: the --tokens value (MASKED:
    // max_m; CONTIGUOUS: M); rows: the 2-D layouts' rows.
    o["tokens"] = r.c.tokens;
    o["hidden"] = p.cols;
    o["layout"] = r.layout;
    o["variant"] = r.c.variant;
    o["wide_tile_min"] = r.c.wide_tile_min;
    o["kernel"] = r.kernel;
    o["bytes"] = int64_t(r.bytes);
    o["us"] = r.us;
    o["gbps"] = r.gbps();
    o["copy_us"] = r.copy_us;
    o["copy_gbps"] = r.copy_gbps();
    o["pct_of_copy"] = r.pct();
    // The replays' range and the copy that won (memcpy, memcpy-64k, sm-copy), each copy's median beside it.
    o["us_min"] = r.t.min;
    o["us_max"] = r.t.max;
    o["copy"] = r.copy_us > 0 ? r.copies.best_name() : std::string();
    o["copy_us_min"] = r.copy_us > 0 ? r.copies.best().min : 0;
    o["copy_us_max"] = r.copy_us > 0 ? r.copies.best().max : 0;
    o["copy_memcpy_us"] = r.copies.memcpy_exact.median;
    o["copy_memcpy_64k_us"] = r.copies.memcpy_64k.median;
    o["copy_sm_us"] = r.copies.kernel.median;
    o["scheme"] = scheme_name(p.scheme);
    o["group"] = int64_t(p.group);
    o["activation"] = activation_name(p.act);
    o["gate_layout"] = gate_name(p.gate);
    o["in_type"] = type_name(p.in_type);
    o["out_type"] = type_name(p.out);
    o["scale_type"] = type_name(p.resolved_scale_type());
    o["pdl"] = int64_t(r.c.pdl);
    if (r.c.p.scheme == FQ_SCHEME_NVFP4) o["global_amax"] = std::string(r.c.given_global_amax ? "given" : "device");
    // MoE and columnwise outputs.
    o["moe"] = moe_name(r.c.moe);
    o["experts"] = r.c.experts;
    o["skew"] = moe ? skew_name(r.c.skew) : std::string();
    o["max_m"] = int64_t(r.c.moe == FQ_MOE_LAYOUT_MASKED ? r.c.tokens : 0);
    o["rows"] = p.rows;
    o["valid_rows"] = r.valid_rows;
    o["outputs"] = outputs_name(r.c.outputs);
    o["col_block"] = int64_t(r.c.columnwise() ? r.c.col_block : 0);
    o["col_transpose"] = int64_t(r.c.col_transpose);
    o["bytes_input"] = r.counted.input;
    o["bytes_rowwise"] = r.counted.row_values + r.counted.row_scales;
    o["bytes_columnwise"] = r.counted.col_values + r.counted.col_scales;
    o["sets"] = int64_t(r.sets);
    o["status"] = r.status;
    return o;
}

// Table labels of the new columns: "-" where a case has no MoE layout.
std::string moe_label(const BenchCase& c) {
    return c.moe == FQ_MOE_LAYOUT_NONE ? "-" : moe_name(c.moe) + "/" + skew_name(c.skew);
}
std::string outputs_label(const BenchCase& c) {
    if (!c.columnwise()) return "row";
    return (c.outputs == Outputs::Separate ? std::string("separate") : outputs_name(c.outputs)) + "/" +
           std::to_string(c.col_block) + (c.col_transpose ? "T" : "");
}

void print_header() {
    std::printf("%7s %6s %-18s %4s %7s %-13s %-10s %-8s %-6s %-8s %-4s %-14s %-22s %11s %9s %15s %7s %9s %-10s %7s\n", "tokens",
                "hidden", "moe", "E", "valid", "outputs", "scheme", "act", "out", "scales", "lay", "variant", "kernel",
                "bytes", "us", "us min-max", "GB/s", "copy us", "copy", "%copy");
}

void print_row(const Result& r) {
    const Problem& p = r.c.p;
    std::string scheme = scheme_name(p.scheme);
    if (p.scheme == FQ_SCHEME_PER_GROUP) scheme += std::to_string(p.group);
    if (r.c.given_global_amax) scheme += "+ga";  // NVFP4 with the caller's global amax
    const std::string variant = r.c.variant + (r.c.pdl ? "+pdl" : "") +
                                (r.c.wide_tile_min >= 0 ? "+w" + std::to_string(r.c.wide_tile_min) : "");
    const std::string experts = r.c.moe == FQ_MOE_LAYOUT_NONE ? "-" : std::to_string(r.c.experts);
    std::printf("%7lld %6lld %-18s %4s %7lld %-13s %-10s %-8s %-6s %-8s %-4s %-14s ", (long long)r.c.tokens,
                (long long)p.cols, moe_label(r.c).c_str(), experts.c_str(), (long long)r.valid_rows,
                outputs_label(r.c).c_str(), scheme.c_str(), activation_name(p.act).c_str(), type_name(p.out).c_str(),
                type_name(p.resolved_scale_type()).c_str(), r.layout.c_str(), variant.c_str());
    if (r.status != "ok") {
        std::printf("%s\n", r.status.c_str());
        return;
    }
    char range[32];
    std::snprintf(range, sizeof range, "%.2f-%.2f", r.t.min, r.t.max);
    std::printf("%-22s %11zu %9.2f %15s %7.0f %9.2f %-10s %6.1f%%\n", r.kernel.c_str(), r.bytes, r.us, range, r.gbps(), r.copy_us,
                r.copies.best_name().c_str(), r.pct());
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

std::string input_label(bool constant_input) {
    return constant_input ? "constant 0x3E3E (--constant-input)" : "normal(0,1), fixed seed";
}

void write_json(const std::string& path, const cudaDeviceProp& prop, const std::vector<Result>& results, bool constant_input) {
    Json doc = Json::object(), list = Json::array();
    doc["device"] = prop.name;
    doc["tool"] = "fq bench";
    doc["method"] = "CUDA-graph replay over rotated inputs (4x L2), median (min, max) of reps; "
                    "copy = the fastest of cudaMemcpyAsync of the same bytes, of them rounded "
                    "up to 64 KiB, and an SM copy kernel, each in the same run";
    doc["input"] = input_label(constant_input);
    doc["bytes"] = "valid rows only: input of valid rows + values written for them per "
                   "output + each scale buffer whole; col+row-separate counts both's bytes";
    doc["skew_formula"] = kSkewFormula;
    for (const Result& r : results) list.push_back(to_json_result(r));
    doc["results"] = list;
    std::ofstream(path) << doc.dump() << "\n";
}

void write_csv(const std::string& path, const std::vector<Result>& results) {
    std::vector<Json> rows;
    for (const Result& r : results) rows.push_back(to_json_result(r));
    std::ofstream csv(path);
    fqtool::write_csv(csv, rows);
}

}  // namespace

int bench_main(int argc, char** argv) {
    const Args args(argc, argv, bench_options());
    if (args.has("help")) {
        std::fputs(bench_help().c_str(), stdout);
        return 0;
    }
    const std::vector<BenchCase> cases = bench_cases(args);
    std::string why;  // the sweep is parsed first, so a mistake in it shows on any machine
    if (!cuda_available(&why)) {
        std::printf("fq bench: %s; nothing to measure (%zu measurements parsed)\n", why.c_str(), cases.size());
        return 77;
    }
    const bool constant_input = args.has("constant-input");
    Bench bench(int(args.get_int("reps", 7)), args.has("quiet"), constant_input);
    for (const BenchCase& c : cases) bench.variant_index(c.variant);  // unknown names fail before any measurement

    const cudaDeviceProp& prop = bench.prop();
    std::printf("device: %s, %d SMs, L2 %d MB; %zu measurements; input %s; us = median of %d replays; copy = the "
                "fastest of memcpy (same bytes), memcpy-64k (rounded up to 64 KiB), sm-copy (16-byte kernel)\n",
                prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, cases.size(), input_label(constant_input).c_str(),
                int(args.get_int("reps", 7)));
    print_header();
    Progress progress("bench", cases.size(), !args.has("quiet"));
    std::vector<Result> results;
    for (size_t i = 0; i < cases.size(); ++i) {
        progress.update(i, cases[i].describe());
        results.push_back(bench.measure(cases[i]));
        progress.finish();  // the table row goes where the progress line was
        print_row(results.back());
        std::fflush(stdout);
    }
    progress.update(cases.size());
    progress.finish();

    std::string json_path = args.get("json");
    if (json_path.empty() && args.has("plot")) json_path = args.get("plot") + ".json";
    if (!json_path.empty()) write_json(json_path, prop, results, constant_input);
    if (args.has("csv")) write_csv(args.get("csv"), results);
    const auto failed = std::count_if(results.begin(), results.end(),
                                      [](const Result& r) { return r.status.rfind("failed", 0) == 0; });
    if (failed) std::fprintf(stderr, "fq bench: %ld measurement(s) failed at execution (status in the table)\n", long(failed));
    if (args.has("plot")) run_plot(plot_script(), json_path, args.get("plot"));
    return failed ? 1 : 0;
}

}  // namespace fqtool
