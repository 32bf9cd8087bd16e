// fq version and fq info: what this fq and the library it loaded are, and what they would run where. Every
// fact comes from the library's own queries (fqGetVersion, fqCreate, FQ_HANDLE_ARCH, fqQuerySupport), so the
// answer is the dispatcher's, not a copy of its rules.
#include <cstdio>
#include <memory>
#include <string>
#include <tuple>

#include "cli.h"
#include "device.h"

#ifndef FQ_TOOL_CUDA_ARCHS
#define FQ_TOOL_CUDA_ARCHS "none: host backend only"
#endif

namespace fqtool {

namespace {

std::string dotted(uint32_t v) {
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

using HandlePtr = std::unique_ptr<fqContext, fqStatus_t (*)(fqHandle_t)>;

// One representative problem per scheme (bf16 SiLU-and-mul, 256 x 2048 outputs, the scheme's usual scales), then
// three that fill a GPU (16384 rows: the plain kernels and their forms by scale layout).
std::vector<Problem> operations() {
    std::vector<Problem> ops;
    for (int32_t scheme : {FQ_SCHEME_PER_TENSOR_STATIC, FQ_SCHEME_PER_TENSOR_DYNAMIC, FQ_SCHEME_PER_TOKEN,
                           FQ_SCHEME_PER_GROUP, FQ_SCHEME_BLOCK_2D, FQ_SCHEME_MXFP8, FQ_SCHEME_MXFP4, FQ_SCHEME_NVFP4}) {
        Problem p;
        p.scheme = scheme;
        p.out = scheme == FQ_SCHEME_MXFP4 || scheme == FQ_SCHEME_NVFP4 ? FQ_TYPE_FP4_E2M1 : FQ_TYPE_FP8_E4M3FN;
        p.rows = 256;
        p.cols = 2048;
        ops.push_back(p);
    }
    for (auto [scheme, group, layout, cols] : {std::tuple{FQ_SCHEME_PER_GROUP, 128, FQ_SCALE_LAYOUT_ROW_MAJOR, 7168},
                                               std::tuple{FQ_SCHEME_PER_GROUP, 128, FQ_SCALE_LAYOUT_COL_MAJOR_TMA, 18432},
                                               std::tuple{FQ_SCHEME_MXFP8, 32, FQ_SCALE_LAYOUT_SWIZZLED_128X4, 7168}}) {
        Problem p;
        p.scheme = scheme;
        p.group = group;
        p.layout = layout;
        p.rows = 16384;
        p.cols = cols;
        ops.push_back(p);
    }
    return ops;
}

// The handle's entries of the dispatch table in selection order: FQ_HANDLE_VARIANT's index, name, what it runs.
void print_entries(fqHandle_t h) {
    int32_t n = 0;
    check(fqGetVariantCount(h, &n), "fqGetVariantCount");
    std::printf("  dispatch entries in selection order (FQ_HANDLE_VARIANT index: name: what it runs):\n");
    for (int32_t i = 0; i < n; ++i) {
        char name[512] = {0};
        check(fqGetVariantName(h, i, name, sizeof name), "fqGetVariantName");
        std::printf("    %2d  %s\n", i, name);
    }
}

// The variant fqQuerySupport names for `p` on `h`, or the status it refuses with.
std::string variant_for(fqHandle_t h, const Problem& p) {
    fqQuantDesc_t d = nullptr;
    fqTensorLayout_t in = nullptr, out = nullptr;
    check(fqQuantDescCreate(&d), "fqQuantDescCreate");
    const float one = 1.0f;
    std::string answer;
    try {
        p.configure(d, &one);
        check(fqTensorLayoutCreate(&in, p.in_type, p.rows, p.in_cols(), p.in_cols()), "fqTensorLayoutCreate");
        check(fqTensorLayoutCreate(&out, p.out, p.rows, p.cols, p.cols), "fqTensorLayoutCreate");
        char name[128] = {0};
        const fqStatus_t s = fqQuerySupport(h, d, in, out, name, sizeof name);
        answer = s == FQ_STATUS_SUCCESS ? std::string(name) : std::string("not supported (") + fqGetStatusString(s) + ")";
    } catch (const ToolError& e) {
        answer = e.what();
    }
    fqTensorLayoutDestroy(out);
    fqTensorLayoutDestroy(in);
    fqQuantDescDestroy(d);
    return answer;
}

void print_variants(fqHandle_t h) {
    std::printf("  the kernel each operation runs:\n");
    for (const Problem& p : operations())
        std::printf("    %-70s %s\n", p.describe().c_str(), variant_for(h, p).c_str());
}

const char* kInfoHelp = R"(usage: fq info

Prints the library's version (and the header's fq was built with), the CUDA architectures this build
compiled kernels for, the GPUs seen with their compute capability, and for each GPU and the host backend:
the entries of the dispatch table in selection order (the index FQ_HANDLE_VARIANT pins), and for one problem
of each scheme (and three that fill a GPU) the kernel fqQuerySupport names, which is the kernel that runs.
)";

}  // namespace

std::string version_text() {
    return "libfusedquant " + dotted(fqGetVersion()) + " (fq built with header " + dotted(FQ_VERSION_NUMBER) + ")\n";
}

int info_main(int argc, char** argv) {
    const Args args(argc, argv, {{}, {"help"}});
    if (args.has("help")) {
        std::fputs(kInfoHelp, stdout);
        return 0;
    }
    std::fputs(version_text().c_str(), stdout);
    std::printf("CUDA architectures: %s\n", FQ_TOOL_CUDA_ARCHS);
    std::string why;
    const int gpus = device_count(&why);
    if (gpus == 0) std::printf("GPUs: none (%s)\n", why.c_str());
    for (int i = 0; i < gpus; ++i) {
        fqHandle_t h = nullptr;
        const fqStatus_t s = fqCreate(&h, FQ_BACKEND_CUDA, i);
        if (s != FQ_STATUS_SUCCESS) {
            std::printf("GPU %d: fqCreate refused it: %s: %s\n", i, fqGetStatusString(s), fqGetLastErrorMessage());
            continue;
        }
        HandlePtr owner(h, fqDestroy);
        int32_t arch = 0, sms = 0;
        check(fqHandleGetAttribute(h, FQ_HANDLE_ARCH, &arch, 4, nullptr), "FQ_HANDLE_ARCH");
        check(fqHandleGetAttribute(h, FQ_HANDLE_SM_COUNT, &sms, 4, nullptr), "FQ_HANDLE_SM_COUNT");
        std::printf("GPU %d: compute capability %d.%d, %d SMs\n", i, arch / 10, arch % 10, sms);
        print_entries(h);
        print_variants(h);
    }
    fqHandle_t host = nullptr;
    check(fqCreate(&host, FQ_BACKEND_HOST, -1), "fqCreate(HOST)");
    HandlePtr owner(host, fqDestroy);
    std::printf("host backend:\n");
    print_entries(host);
    print_variants(host);
    return 0;
}

}  // namespace fqtool
