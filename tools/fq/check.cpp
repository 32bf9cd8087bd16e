// fq check: every kernel variant this build has for this machine's GPU, pinned one at a time
// (FQ_HANDLE_VARIANT), against the host reference on random problems of every kind the API describes.
// A variant passes when every problem it accepts gives the host's bytes exactly (values, scales, padding;
// outputs poisoned first). What a user runs after installing to trust the build.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>

#include "cli.h"
#include "common/enum_lists.h"
#include "compare.h"
#include "device.h"

namespace fqtool {

const char* kCheckHelp = R"(usage: fq check [--cases N] [--seed S] [--variants NAME,...] [--verbose]

Runs N random problems (default 300: every scheme, activation, gate layout, scale layout, input and output
type, partial groups, NaN/Inf inputs) on the host reference and on each CUDA variant that accepts them,
and N random scale repacks (fqScaleRepack: scale types, layout pairs, batchings, row offsets) on both
backends, and prints a pass/fail table. Exit status: 0 all passed, 1 a variant wrote different bytes or failed,
2 usage or setup error, 77 no usable GPU (nothing to compare).
)";

namespace {

struct Tally {
    int runs = 0, refused = 0, mismatched = 0, errors = 0;
    std::string first_problem;
};

template <class T>
T pick(std::mt19937& rng, std::initializer_list<T> xs) {
    std::vector<T> v(xs);
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

Problem random_problem(std::mt19937& rng) {
    Problem p;
    p.scheme = pick(rng, {FQ_SCHEME_PER_TENSOR_STATIC, FQ_SCHEME_PER_TENSOR_DYNAMIC, FQ_SCHEME_PER_TOKEN, FQ_SCHEME_PER_GROUP,
                          FQ_SCHEME_PER_GROUP, FQ_SCHEME_PER_GROUP, FQ_SCHEME_BLOCK_2D, FQ_SCHEME_MXFP8, FQ_SCHEME_MXFP4,
                          FQ_SCHEME_NVFP4});
#define FQ_ACTIVATION_VALUE(Internal, value, ...) value,
    p.act = pick(rng, {FQ_ACTIVATIONS(FQ_ACTIVATION_VALUE)});
#undef FQ_ACTIVATION_VALUE
    p.gate = p.act == FQ_ACTIVATION_SWIGLU_OAI ? pick(rng, {1, 2, 3}) : pick(rng, {0, 1, 2, 3});
    p.order = pick(rng, {0, 1});
    p.gate_block = pick(rng, {32, 64});
    p.rounding = pick(rng, {0, 0, 1, 2});
    p.in_type = pick(rng, {FQ_TYPE_BF16, FQ_TYPE_FP16});
    p.apply = pick(rng, {0, 1});
    p.group = pick(rng, {32, 64, 128});
    const int32_t all_layouts[] = {FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR, FQ_SCALE_LAYOUT_COL_MAJOR_TMA,
                                   FQ_SCALE_LAYOUT_SWIZZLED_128X4, FQ_SCALE_LAYOUT_PACKED_UE8M0};
    auto any_layout = [&](int n) { return all_layouts[std::uniform_int_distribution<int>(0, n - 1)(rng)]; };
    switch (p.scheme) {
        case FQ_SCHEME_MXFP8: p.out = pick(rng, {FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP8_E5M2}); p.layout = any_layout(5); break;
        case FQ_SCHEME_MXFP4: p.out = FQ_TYPE_FP4_E2M1; p.layout = any_layout(5); break;
        case FQ_SCHEME_NVFP4: p.out = FQ_TYPE_FP4_E2M1; p.layout = any_layout(4); break;
        default: {
            p.out = pick(rng, {FQ_TYPE_FP8_E4M3FN, FQ_TYPE_FP8_E4M3FNUZ, FQ_TYPE_FP8_E5M2, FQ_TYPE_INT8});
            p.pow2 = pick(rng, {0, 1});
            const bool e8m0 = p.pow2 && (p.scheme == FQ_SCHEME_PER_GROUP || p.scheme == FQ_SCHEME_PER_TOKEN) && pick(rng, {0, 1});
            p.scale_type = e8m0 ? FQ_TYPE_E8M0 : FQ_TYPE_FP32;
            const bool per_tensor = p.scheme == FQ_SCHEME_PER_TENSOR_STATIC || p.scheme == FQ_SCHEME_PER_TENSOR_DYNAMIC;
            p.layout = per_tensor ? FQ_SCALE_LAYOUT_ROW_MAJOR : any_layout(e8m0 ? 5 : 3);
        }
    }
    p.rows = pick<int64_t>(rng, {0, 1, 3, 7, 33, 130, 300});
    p.cols = p.gate == FQ_GATE_LAYOUT_BLOCK_INTERLEAVED
                 ? p.gate_block * pick<int64_t>(rng, {1, 2, 3, 5})
                 : pick<int64_t>(rng, {8, 32, 64, 96, 128, 136, 192, 200, 1024, 1032, 2056});
    return p;
}

struct Desc {
    fqQuantDesc_t d = nullptr;
    Desc() { check(fqQuantDescCreate(&d), "fqQuantDescCreate"); }
    ~Desc() { fqQuantDescDestroy(d); }
};
struct Layout {
    fqTensorLayout_t l = nullptr;
    Layout(int32_t t, int64_t r, int64_t c) { check(fqTensorLayoutCreate(&l, t, r, c, c), "fqTensorLayoutCreate"); }
    ~Layout() { fqTensorLayoutDestroy(l); }
};

struct Variant {
    int32_t index;
    std::string name, covers;
    Tally tally;
};

// fqScaleRepack on the GPU against the host backend: random scale types, layout pairs, batchings and row
// offsets, random source bytes, poisoned destinations. Returns the tally of the "scale repack" row.
Tally check_repack(fqHandle_t gpu, fqHandle_t host, std::mt19937& rng, int cases) {
    Tally t;
    std::uniform_int_distribution<int> byte(0, 255);
    for (int c = 0; c < cases; ++c) {
        const int32_t type = pick(rng, {FQ_TYPE_FP32, FQ_TYPE_E8M0, FQ_TYPE_FP8_E4M3FN});
        const int n_layouts = type == FQ_TYPE_FP32 ? 3 : (type == FQ_TYPE_E8M0 ? 5 : 4);  // what each type may use
        const int32_t src_layout = std::uniform_int_distribution<int32_t>(0, n_layouts - 1)(rng);
        const int32_t dst_layout = std::uniform_int_distribution<int32_t>(0, n_layouts - 1)(rng);
        const int64_t batch = pick<int64_t>(rng, {0, 1, 2, 3}), rows = pick<int64_t>(rng, {0, 1, 5, 33, 128, 130});
        const int64_t groups = pick<int64_t>(rng, {1, 3, 4, 7, 16});
        const int32_t batching = batch > 0 ? pick(rng, {FQ_SCALE_REPACK_BLOCKS, FQ_SCALE_REPACK_STACKED_TO_BLOCKS,
                                                         FQ_SCALE_REPACK_BLOCKS_TO_STACKED})
                                           : FQ_SCALE_REPACK_BLOCKS;
        std::vector<int32_t> offsets;
        int64_t stacked = 0;
        if (batching != FQ_SCALE_REPACK_BLOCKS) {
            offsets.push_back(0);
            for (int64_t b = 0; b < batch; ++b)
                offsets.push_back(offsets.back() + int32_t(std::uniform_int_distribution<int64_t>(0, rows)(rng)));
            stacked = offsets.back();
        }
        const bool src_stacked = batching == FQ_SCALE_REPACK_STACKED_TO_BLOCKS;
        const bool dst_stacked = batching == FQ_SCALE_REPACK_BLOCKS_TO_STACKED;
        size_t src_bytes = 0, dst_bytes = 0;
        if (fqGetScaleRepackSize(type, src_stacked ? 1 : batch, src_stacked ? stacked : rows, groups, src_layout,
                                 &src_bytes) != FQ_STATUS_SUCCESS ||
            fqGetScaleRepackSize(type, dst_stacked ? 1 : batch, dst_stacked ? stacked : rows, groups, dst_layout,
                                 &dst_bytes) != FQ_STATUS_SUCCESS)
            continue;  // a layout that does not hold this scale type
        std::vector<uint8_t> src(src_bytes), want(dst_bytes, 0xAB), got(dst_bytes);
        for (auto& b : src) b = uint8_t(byte(rng));
        const int32_t* host_offsets = offsets.empty() ? nullptr : offsets.data();
        const std::string what = "repack " + type_name(type) + " " + layout_name(src_layout) + "->" +
                                 layout_name(dst_layout) + " batch " + std::to_string(batch) + " rows " +
                                 std::to_string(rows) + " groups " + std::to_string(groups) + " batching " +
                                 std::to_string(batching);
        if (fqScaleRepack(host, type, batch, rows, groups, batching, host_offsets, stacked, src_layout,
                          src_bytes ? src.data() : nullptr, src_bytes, dst_layout, dst_bytes ? want.data() : nullptr,
                          dst_bytes, nullptr) != FQ_STATUS_SUCCESS)
            continue;  // a combination the API refuses (the library's own tests cover those)
        DeviceBuffer d_src(src_bytes), d_dst(dst_bytes), d_off(offsets.size() * 4);
        copy_to_device(d_src.p, src.data(), src_bytes);
        copy_to_device(d_off.p, offsets.data(), offsets.size() * 4);
        device_fill(d_dst.p, 0xAB, dst_bytes);
        const fqStatus_t s = fqScaleRepack(gpu, type, batch, rows, groups, batching,
                                           offsets.empty() ? nullptr : static_cast<const int32_t*>(d_off.p), stacked,
                                           src_layout, src_bytes ? d_src.p : nullptr, src_bytes, dst_layout,
                                           dst_bytes ? d_dst.p : nullptr, dst_bytes, nullptr);
        ++t.runs;
        if (s != FQ_STATUS_SUCCESS) {
            if (t.errors++ == 0 && t.first_problem.empty()) t.first_problem = what + ": " + fqGetLastErrorMessage();
            continue;
        }
        device_synchronize();
        copy_to_host(got.data(), d_dst.p, dst_bytes);
        const std::string diff = byte_diff(got, want);
        if (!diff.empty() && t.mismatched++ == 0 && t.first_problem.empty()) t.first_problem = what + ": dst: " + diff;
    }
    return t;
}

}  // namespace

int check_main(int argc, char** argv) {
    const Args args(argc, argv, {{"cases", "seed", "variants"}, {"verbose", "help"}});
    if (args.has("help")) {
        std::fputs(kCheckHelp, stdout);
        return 0;
    }
    std::string why;
    if (!cuda_available(&why)) {
        std::printf("fq check: %s; nothing to compare with the host reference\n", why.c_str());
        return 77;
    }
    const int cases = int(args.get_int("cases", 300));
    const unsigned seed = unsigned(args.get_int("seed", std::random_device{}()));
    const std::vector<std::string> only = args.words("variants", "");
    const bool verbose = args.has("verbose");

    fqHandle_t gpu, host;
    check(fqCreate(&gpu, FQ_BACKEND_CUDA, 0), "fqCreate(CUDA)");
    std::unique_ptr<fqContext, fqStatus_t (*)(fqHandle_t)> gpu_owner(gpu, fqDestroy);
    check(fqCreate(&host, FQ_BACKEND_HOST, -1), "fqCreate(HOST)");
    std::unique_ptr<fqContext, fqStatus_t (*)(fqHandle_t)> host_owner(host, fqDestroy);
    int32_t arch = 0, n = 0;
    check(fqHandleGetAttribute(gpu, FQ_HANDLE_ARCH, &arch, 4, nullptr), "FQ_HANDLE_ARCH");
    check(fqGetVariantCount(gpu, &n), "fqGetVariantCount");

    std::vector<Variant> variants;
    variants.push_back({-1, "auto", "the dispatcher's choice", {}});
    for (int32_t i = 0; i < n; ++i) {
        char buf[256];
        check(fqGetVariantName(gpu, i, buf, sizeof buf), "fqGetVariantName");
        const std::string s = buf;
        const size_t colon = s.find(':');
        Variant v{i, s.substr(0, colon), colon == std::string::npos ? "" : s.substr(colon + 2), {}};
        if (!only.empty() && std::find(only.begin(), only.end(), v.name) == only.end()) continue;
        variants.push_back(v);
    }
    const uint32_t version = fqGetVersion();
    std::printf("fq check: libfusedquant %u.%u.%u, GPU sm_%d, %d variants, %d random problems, seed %u\n",
                version / 10000, version / 100 % 100, version % 100, arch, n, cases, seed);

    std::mt19937 rng(seed);
    Progress progress("check", uint64_t(cases));
    int invalid = 0;
    const float static_scale = 0.125f;
    DeviceBuffer d_static(sizeof(float)), d_ws(16);  // workspace: 4 bytes for NVFP4 on CUDA
    copy_to_device(d_static.p, &static_scale, sizeof static_scale);
    for (int c = 0; c < cases; ++c) {
        progress.update(uint64_t(c));
        const Problem p = random_problem(rng);
        const std::vector<uint16_t> input = edge_input(rng, size_t(std::max<int64_t>(p.rows * p.in_cols(), 1)), p.in_type);
        Desc dh, dd;
        p.configure(dh.d, &static_scale);
        p.configure(dd.d, static_cast<const float*>(d_static.p));
        Layout li(p.in_type, p.rows, p.in_cols()), lo(p.out, p.rows, p.cols);
        size_t sbytes = 0;
        if (fqGetScaleBufferSize(dh.d, p.rows, p.cols, FQ_OUTPUT_ROWWISE, &sbytes) != FQ_STATUS_SUCCESS ||
            fqQuerySupport(host, dh.d, li.l, lo.l, nullptr, 0) != FQ_STATUS_SUCCESS) {
            ++invalid;  // a combination the API refuses (checked by the library's own tests)
            if (verbose) std::fprintf(stderr, "invalid: %s: %s\n", p.describe().c_str(), fqGetLastErrorMessage());
            continue;
        }
        const size_t out_bytes = size_t(p.output_bytes());
        std::vector<uint8_t> want(out_bytes, 0xAB), want_s(sbytes, 0xAB);
        check(fqQuantize(host, dh.d, li.l, input.data(), lo.l, want.data(), want_s.data(), sbytes, nullptr, 0, nullptr),
              ("host reference: " + p.describe()).c_str());
        DeviceBuffer d_in(input.size() * 2), d_out(out_bytes), d_s(sbytes);
        copy_to_device(d_in.p, input.data(), input.size() * 2);
        std::vector<uint8_t> got(out_bytes), got_s(sbytes);
        for (Variant& v : variants) {
            check(fqHandleSetAttribute(gpu, FQ_HANDLE_VARIANT, &v.index, 4), "FQ_HANDLE_VARIANT");
            if (fqQuerySupport(gpu, dd.d, li.l, lo.l, nullptr, 0) != FQ_STATUS_SUCCESS) {
                ++v.tally.refused;
                continue;
            }
            device_fill(d_out.p, 0xAB, out_bytes);  // poison: an unwritten byte shows
            device_fill(d_s.p, 0xAB, sbytes);
            size_t workspace = 0;  // NVFP4 without a global amax reduces it in device workspace
            check(fqGetWorkspaceSize(gpu, dd.d, li.l, lo.l, &workspace), "fqGetWorkspaceSize");
            if (workspace > d_ws.bytes) throw ToolError("fqGetWorkspaceSize asks for more than fq check holds");
            const fqStatus_t s = fqQuantize(gpu, dd.d, li.l, d_in.p, lo.l, d_out.p, d_s.p, sbytes,
                                            workspace ? d_ws.p : nullptr, workspace, nullptr);
            if (s == FQ_STATUS_NOT_SUPPORTED && v.index >= 0) {  // e.g. a 16-byte IO variant, rows not aligned
                ++v.tally.refused;
                continue;
            }
            ++v.tally.runs;
            if (s != FQ_STATUS_SUCCESS) {
                if (v.tally.errors++ == 0 && v.tally.first_problem.empty())
                    v.tally.first_problem = p.describe() + ": " + fqGetLastErrorMessage();
                continue;
            }
            device_synchronize();
            copy_to_host(got.data(), d_out.p, out_bytes);
            copy_to_host(got_s.data(), d_s.p, sbytes);
            const std::string diff = got != want     ? "values: " + byte_diff(got, want)
                                     : got_s != want_s ? "scales: " + byte_diff(got_s, want_s)
                                                       : "";
            if (!diff.empty() && v.tally.mismatched++ == 0 && v.tally.first_problem.empty())
                v.tally.first_problem = p.describe() + ": " + diff;
        }
    }
    const int32_t automatic = -1;
    fqHandleSetAttribute(gpu, FQ_HANDLE_VARIANT, &automatic, 4);
    progress.update(uint64_t(cases));
    progress.finish();
    // The other kernel of the library: fqScaleRepack (not in the fqQuantize variant table).
    variants.push_back({-2, "scale-repack", "fqScaleRepack, every layout pair and batching", check_repack(gpu, host, rng, cases)});

    bool failed = false;
    // "#": the entry's FQ_HANDLE_VARIANT index (its place in the selection order).
    std::printf("\n%4s %-28s %8s %8s %10s %7s  %s\n", "#", "variant", "problems", "refused", "mismatched", "result", "covers");
    for (const Variant& v : variants) {
        const Tally& t = v.tally;
        const bool bad = t.mismatched > 0 || t.errors > 0;
        failed |= bad;
        const char* result = bad ? "FAIL" : t.runs ? "pass" : "untested";
        const std::string index = v.index >= 0 ? std::to_string(v.index) : "-";
        std::printf("%4s %-28s %8d %8d %10d %7s  %s\n", index.c_str(), v.name.c_str(), t.runs, t.refused,
                    t.mismatched + t.errors, result, v.covers.c_str());
    }
    for (const Variant& v : variants)
        if (!v.tally.first_problem.empty()) std::printf("  %s, first failure: %s\n", v.name.c_str(), v.tally.first_problem.c_str());
    std::printf("\n%d problems (%d combinations the API refuses skipped); %s\n", cases, invalid,
                failed ? "FAILED: some variant does not match the host reference" : "every variant matches the host reference");
    return failed ? 1 : 0;
}

}  // namespace fqtool
