// GPU tests of how a CUDA handle meets the CUDA runtime (docs/api.md, "CUDA devices, pointers and errors"):
//  - cold capture: the first fqQuantize of every variant, with nothing warmed up, runs inside a stream capture
//    (global mode) and the graph replays to the host reference's bytes. CTest runs this case alone, in a
//    process of its own (gpu_cold_capture), so that its calls are the process's first;
//  - a caller's pending (non-sticky) CUDA error stays pending across successful fq calls;
//  - the pointers a handle accepts (device memory of its device, managed, page-locked host memory mapped at the
//    same address) and refuses (pageable host memory);
//  - a plan (fqPlanCreate / fqPlanExecute) of every problem: the reference's bytes, and each execution's buffers
//    checked (pageable host memory, another device's memory);
//  - two handles on two GPUs, from one thread switching devices and from two threads at once, and the refusal
//    of a current device or a pointer that is not the handle's (skipped with fewer than two GPUs).
// Every failure message names the variant, the problem and the device, so that a log alone says what broke.
// Without a CUDA device the program prints "skipped" and exits 77.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fq/compare.h"
#include "fq_test_util.h"
#include "gpu_buffer.h"

using namespace fqt;
using fqtool::byte_diff;

namespace {

// One problem: SiLU-gated (split) bf16 rows, quantized by one scheme. Together they reach every variant
// family and every kind of launch: the row kernels (per-group, per-token, per-tensor's memset, amax and
// finalize kernels, microscaling, NVFP4's workspace amax), the columnwise kernels with the scale-padding
// kernel, and BLOCK_2D.
struct Problem {
    std::string what;  // a std::string: doctest prints a const char* of a message as an address
    int32_t scheme = FQ_SCHEME_PER_GROUP, out = FQ_TYPE_FP8_E4M3FN, layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    int32_t outputs = FQ_OUTPUT_ROWWISE;
    int64_t rows = 37, cols = 256;
    bool gated = true;    // SiLU on split gate / up rows; false: weights (no activation, not gated)
    int32_t experts = 0;  // > 0: MASKED MoE of this many experts, rows = experts x max_m, counts kCounts

    bool microscaling() const { return scheme == FQ_SCHEME_MXFP8 || scheme == FQ_SCHEME_NVFP4; }
    bool columnwise() const { return outputs & FQ_OUTPUT_COLUMNWISE; }
    int64_t in_cols() const { return gated ? 2 * cols : cols; }
};

std::vector<Problem> problems() {
    std::vector<Problem> v;
    v.push_back({"per-group 128, fp32 ROW_MAJOR scales"});
    { Problem p{"per-group 128, fp32 COL_MAJOR_TMA scales (the .plain.column_runs entries run it)"};
      p.layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA; v.push_back(p); }
    { Problem p{"per-token"}; p.scheme = FQ_SCHEME_PER_TOKEN; v.push_back(p); }
    { Problem p{"per-tensor dynamic (memset, amax, quantize, finalize)"}; p.scheme = FQ_SCHEME_PER_TENSOR_DYNAMIC; v.push_back(p); }
    { Problem p{"per-tensor static (device scale)"}; p.scheme = FQ_SCHEME_PER_TENSOR_STATIC; v.push_back(p); }
    { Problem p{"MXFP8, SWIZZLED_128X4 (padding rows zeroed)"}; p.scheme = FQ_SCHEME_MXFP8; p.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4;
      v.push_back(p); }
    { Problem p{"NVFP4 without a global amax (amax in the workspace), SWIZZLED_128X4"}; p.scheme = FQ_SCHEME_NVFP4;
      p.out = FQ_TYPE_FP4_E2M1; p.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; v.push_back(p); }
    { Problem p{"rowwise + columnwise per-group 128"}; p.outputs = FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE; v.push_back(p); }
    { Problem p{"rowwise + columnwise MXFP8, SWIZZLED_128X4 (the scale-padding kernel)"}; p.scheme = FQ_SCHEME_MXFP8;
      p.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; p.outputs = FQ_OUTPUT_ROWWISE | FQ_OUTPUT_COLUMNWISE; v.push_back(p); }
    { Problem p{"BLOCK_2D"}; p.scheme = FQ_SCHEME_BLOCK_2D; v.push_back(p); }
    { Problem p{"BLOCK_2D weights (no activation, not gated)"}; p.scheme = FQ_SCHEME_BLOCK_2D; p.gated = false; v.push_back(p); }
    { Problem p{"MASKED MoE, 3 experts (counts on the device, one expert empty)"}; p.experts = 3; p.rows = 3 * 20; v.push_back(p); }
    return v;
}

constexpr float kStaticScale = 0.02f;
const int32_t kCounts[3] = {20, 0, 7};  // MASKED problems' valid rows per expert (max_m = 20)
constexpr size_t kWorkspaceBytes = 64;  // more than any problem here needs (NVFP4: 4)
constexpr uint8_t kPoison = 0xAB;

// The descriptor of `p`, its pointers (static scale, columnwise output and scales) in the handle's memory.
// `counts`: MASKED problems' counts in the handle's memory.
void configure(Desc& d, const Problem& p, const float* static_scale, void* col_out, void* col_scales,
               const int32_t* counts = kCounts) {
    d.i32(FQ_QUANT_DESC_ACTIVATION, p.gated ? FQ_ACTIVATION_SILU : FQ_ACTIVATION_IDENTITY)
        .i32(FQ_QUANT_DESC_GATE_LAYOUT, p.gated ? FQ_GATE_LAYOUT_SPLIT : FQ_GATE_LAYOUT_NONE)
        .i32(FQ_QUANT_DESC_SCHEME, p.scheme).i32(FQ_QUANT_DESC_OUTPUT_TYPE, p.out).i32(FQ_QUANT_DESC_SCALE_LAYOUT, p.layout);
    if (p.microscaling())
        d.i32(FQ_QUANT_DESC_SCALE_TYPE, p.scheme == FQ_SCHEME_NVFP4 ? FQ_TYPE_FP8_E4M3FN : FQ_TYPE_E8M0);
    if (p.scheme == FQ_SCHEME_PER_TENSOR_STATIC) d.ptr(FQ_QUANT_DESC_STATIC_SCALE_POINTER, static_scale);
    if (p.experts > 0)
        d.i32(FQ_QUANT_DESC_MOE_LAYOUT, FQ_MOE_LAYOUT_MASKED).i32(FQ_QUANT_DESC_MOE_NUM_EXPERTS, p.experts)
            .ptr(FQ_QUANT_DESC_MOE_COUNTS_POINTER, counts);
    if (p.columnwise())
        d.i32(FQ_QUANT_DESC_OUTPUTS, p.outputs).ptr(FQ_QUANT_DESC_COLUMNWISE_OUTPUT_POINTER, col_out)
            .ptr(FQ_QUANT_DESC_COLUMNWISE_SCALE_POINTER, col_scales);
}

// Everything a call writes.
struct Bytes {
    std::vector<uint8_t> out, scales, col, col_scales;
};

size_t scale_buffer(const Problem& p, int32_t which) {
    Desc d;
    configure(d, p, &kStaticScale, nullptr, nullptr);
    size_t b = 0;
    REQUIRE_MESSAGE(fqGetScaleBufferSize(d.d, p.rows, p.cols, which, &b) == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
    return b;
}

// Sizes of the buffers of `p`, poisoned.
Bytes poisoned(const Problem& p) {
    const size_t out = size_t(p.rows * p.cols);  // FP4 writes half of it; the rest stays poisoned on both sides
    return {std::vector<uint8_t>(out, kPoison), std::vector<uint8_t>(scale_buffer(p, FQ_OUTPUT_ROWWISE), kPoison),
            std::vector<uint8_t>(p.columnwise() ? out : 0, kPoison),
            std::vector<uint8_t>(p.columnwise() ? scale_buffer(p, FQ_OUTPUT_COLUMNWISE) : 0, kPoison)};
}

std::vector<uint16_t> random_input(const Problem& p, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<uint16_t> v(size_t(p.rows * p.in_cols()));
    for (auto& x : v) x = fq::float_to_bf16(normal(rng));
    return v;
}

// The host reference's bytes for `p` on `input`.
Bytes host_bytes(const Problem& p, const std::vector<uint16_t>& input) {
    Bytes b = poisoned(p);
    Desc d;
    configure(d, p, &kStaticScale, b.col.data(), b.col_scales.empty() ? nullptr : b.col_scales.data());
    Handle host;
    Layout li(FQ_TYPE_BF16, p.rows, p.in_cols(), p.in_cols()), lo(p.out, p.rows, p.cols, p.cols);
    const fqStatus_t s = fqQuantize(host.h, d.d, li.l, input.data(), lo.l, b.out.data(), b.scales.data(), b.scales.size(),
                                    nullptr, 0, nullptr);
    REQUIRE_MESSAGE(s == FQ_STATUS_SUCCESS, "host reference of ", p.what, ": ", std::string(fqGetLastErrorMessage()));
    return b;
}

// "" when equal; otherwise which buffer differs, how many bytes, and the first of them.
std::string differences(const Bytes& got, const Bytes& want) {
    std::string msg;
    auto one = [&](const char* name, const std::vector<uint8_t>& g, const std::vector<uint8_t>& w) {
        const std::string d = byte_diff(g, w);
        if (!d.empty()) msg += std::string(name) + ": " + d + "; ";
    };
    one("output", got.out, want.out);
    one("scales", got.scales, want.scales);
    one("columnwise output", got.col, want.col);
    one("columnwise scales", got.col_scales, want.col_scales);
    return msg;
}

// Raw device memory on the current device; no doctest assertion, so that threads may use it (`ok` says
// whether every CUDA call succeeded).
struct Raw {
    void* p = nullptr;
    size_t n = 0;
    bool ok = true;
    explicit Raw(size_t bytes) : n(bytes) { ok = cudaMalloc(&p, std::max<size_t>(bytes, 1)) == cudaSuccess; }
    ~Raw() { cudaFree(p); }
    Raw(const Raw&) = delete;
    Raw& operator=(const Raw&) = delete;
    bool put(const void* src, size_t bytes) { return cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess; }
    bool get(std::vector<uint8_t>& dst) const { return cudaMemcpy(dst.data(), p, dst.size(), cudaMemcpyDeviceToHost) == cudaSuccess; }
};

// One problem on the device current at construction: its input uploaded, its outputs poisoned, its descriptor.
// Built on the test's thread (doctest assertions); quantize / reset / download report through return values.
struct OnDevice {
    const Problem& p;
    int device = -1;
    Bytes shape;  // the buffer sizes (poisoned contents)
    Raw in, static_scale, counts, out, scales, col, col_scales, workspace;
    Desc d;
    Layout li, lo;
    OnDevice(const Problem& problem, const std::vector<uint16_t>& input)
        : p(problem), shape(poisoned(problem)), in(input.size() * 2), static_scale(4), counts(sizeof kCounts), out(shape.out.size()),
          scales(shape.scales.size()), col(shape.col.size()), col_scales(shape.col_scales.size()), workspace(kWorkspaceBytes),
          li(FQ_TYPE_BF16, problem.rows, problem.in_cols(), problem.in_cols()), lo(problem.out, problem.rows, problem.cols, problem.cols) {
        CUDA_OK(cudaGetDevice(&device));
        for (const Raw* r : {&in, &static_scale, &counts, &out, &scales, &col, &col_scales, &workspace})
            REQUIRE_MESSAGE(r->ok, "cudaMalloc on device ", device, " for ", p.what);
        REQUIRE(in.put(input.data(), input.size() * 2));
        REQUIRE(static_scale.put(&kStaticScale, 4));
        REQUIRE(counts.put(kCounts, sizeof kCounts));
        configure(d, p, static_cast<const float*>(static_scale.p), col.p, shape.col_scales.empty() ? nullptr : col_scales.p,
                  static_cast<const int32_t*>(counts.p));
        REQUIRE(reset());
    }
    // Poisons every output again, finished before it returns: cudaMemset runs on the legacy stream, which
    // the non-blocking streams of these tests do not wait for.
    bool reset() {
        bool ok = true;
        for (Raw* r : {&out, &scales, &col, &col_scales, &workspace}) ok &= cudaMemset(r->p, kPoison, std::max<size_t>(r->n, 1)) == cudaSuccess;
        return ok && cudaDeviceSynchronize() == cudaSuccess;
    }
    // `input`: another device's input, to hand the handle a pointer of another device.
    fqStatus_t quantize(fqHandle_t h, cudaStream_t stream, const void* input = nullptr) {
        return fqQuantize(h, d.d, li.l, input ? input : in.p, lo.l, out.p, scales.p, scales.n, workspace.p, kWorkspaceBytes,
                          reinterpret_cast<fqStream_t>(stream));
    }
    bool download(Bytes& got) const {
        got = shape;
        return out.get(got.out) && scales.get(got.scales) && col.get(got.col) && col_scales.get(got.col_scales);
    }
};

std::string variant_name(fqHandle_t h, int32_t v) {
    if (v < 0) return "the dispatcher's choice";
    char name[256] = "";
    REQUIRE(fqGetVariantName(h, v, name, sizeof name) == FQ_STATUS_SUCCESS);
    return name;
}

void pin(fqHandle_t h, int32_t v) { REQUIRE(fqHandleSetAttribute(h, FQ_HANDLE_VARIANT, &v, 4) == FQ_STATUS_SUCCESS); }

// Whether the handle, as pinned, runs the problem (no launch: selection only).
bool runs(fqHandle_t h, OnDevice& x) {
    const fqStatus_t s = fqQuerySupport(h, x.d.d, x.li.l, x.lo.l, nullptr, 0);
    REQUIRE_MESSAGE((s == FQ_STATUS_SUCCESS || s == FQ_STATUS_NOT_SUPPORTED), x.p.what, ": ", std::string(fqGetLastErrorMessage()));
    return s == FQ_STATUS_SUCCESS;
}

int device_count() {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

}  // namespace

// Runs first and alone in its process (CTest: gpu_cold_capture), so that nothing before it warmed up a kernel.
TEST_CASE("cold capture: the first fqQuantize of every variant runs inside a global-mode stream capture and the "
          "graph replays to the host reference's bytes") {
    const std::vector<Problem> ps = problems();
    std::vector<std::vector<uint16_t>> inputs;
    std::vector<Bytes> wants;
    for (size_t i = 0; i < ps.size(); ++i) {
        inputs.push_back(random_input(ps[i], unsigned(100 + i)));
        wants.push_back(host_bytes(ps[i], inputs.back()));
    }
    CUDA_OK(cudaSetDevice(0));
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE_MESSAGE(gpu.status == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    int32_t n = 0;
    REQUIRE(fqGetVariantCount(gpu.h, &n) == FQ_STATUS_SUCCESS);
    int graphs = 0;
    for (int32_t v = 0; v < n; ++v) {
        const std::string variant = variant_name(gpu.h, v);
        pin(gpu.h, v);
        int ran = 0;
        for (size_t i = 0; i < ps.size(); ++i) {
            OnDevice x(ps[i], inputs[i]);  // allocations and uploads before the capture: they are not capturable
            if (!runs(gpu.h, x)) continue;
            INFO("variant ", v, " (", variant, "), problem \"", ps[i].what, "\", the first call of this variant and "
                 "problem in the process, inside cudaStreamBeginCapture(global mode)");
            cudaGraph_t graph = nullptr;
            CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
            const fqStatus_t st = x.quantize(gpu.h, stream);
            const std::string message = fqGetLastErrorMessage();
            const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
            REQUIRE_MESSAGE(st == FQ_STATUS_SUCCESS, "fqQuantize returned ", std::string(fqGetStatusString(st)), ": ", message);
            REQUIRE_MESSAGE(ended == cudaSuccess, "cudaStreamEndCapture after fqQuantize: ", std::string(cudaGetErrorName(ended)), " (",
                            std::string(cudaGetErrorString(ended)), "): fq made a call that invalidated the capture");
            cudaGraphExec_t exec = nullptr;
            CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
            CUDA_OK(cudaGraphLaunch(exec, stream));
            CUDA_OK(cudaStreamSynchronize(stream));
            Bytes got;
            REQUIRE(x.download(got));
            const std::string diff = differences(got, wants[i]);
            CHECK_MESSAGE(diff.empty(), "replayed graph vs host reference: ", diff);
            CUDA_OK(cudaGraphExecDestroy(exec));
            CUDA_OK(cudaGraphDestroy(graph));
            ++ran;
            ++graphs;
        }
        CHECK_MESSAGE(ran > 0, "variant ", v, " (", variant, ") ran none of the cold-capture problems: add one it runs");
    }
    CHECK(cudaGetLastError() == cudaSuccess);
    cudaStreamDestroy(stream);
    MESSAGE("cold capture: ", graphs, " first calls captured and replayed over ", n, " variants");
}

TEST_CASE("a caller's pending CUDA error stays pending across successful fqQuantize and fqScaleRepack calls, on "
          "every variant") {
    CUDA_OK(cudaSetDevice(0));
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE_MESSAGE(gpu.status == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    // The caller's error: a failed allocation, which is not sticky (the context stays usable).
    auto provoke = [] {
        void* p = nullptr;
        const cudaError_t e = cudaMalloc(&p, size_t(1) << 62);
        REQUIRE_MESSAGE(e == cudaErrorMemoryAllocation, "cudaMalloc(2^62) gave ", std::string(cudaGetErrorName(e)));
        REQUIRE(cudaPeekAtLastError() == cudaErrorMemoryAllocation);
    };
    auto still_pending = [](fqStatus_t st, const std::string& message, const std::string& call) {
        const cudaError_t after = cudaGetLastError();  // takes the caller's error out, as a caller would
        CHECK_MESSAGE(st == FQ_STATUS_SUCCESS, call, " returned ", std::string(fqGetStatusString(st)), ": ", message);
        CHECK_MESSAGE(after == cudaErrorMemoryAllocation, call, ": cudaGetLastError() afterwards gave ",
                      std::string(cudaGetErrorName(after)), ", not the caller's pending cudaErrorMemoryAllocation");
    };
    const std::vector<Problem> ps = problems();
    int32_t n = 0;
    REQUIRE(fqGetVariantCount(gpu.h, &n) == FQ_STATUS_SUCCESS);
    int calls = 0;
    for (size_t i = 0; i < ps.size(); ++i) {
        const std::vector<uint16_t> input = random_input(ps[i], unsigned(200 + i));
        const Bytes want = host_bytes(ps[i], input);
        OnDevice x(ps[i], input);
        for (int32_t v = -1; v < n; ++v) {
            const std::string variant = variant_name(gpu.h, v);
            pin(gpu.h, v);
            if (!runs(gpu.h, x)) continue;
            INFO("variant ", v, " (", variant, "), problem \"", ps[i].what, "\"");
            REQUIRE(x.reset());
            provoke();
            const fqStatus_t st = x.quantize(gpu.h, stream);
            still_pending(st, std::string(fqGetLastErrorMessage()), "fqQuantize");
            CUDA_OK(cudaStreamSynchronize(stream));
            Bytes got;
            REQUIRE(x.download(got));
            const std::string diff = differences(got, want);
            CHECK_MESSAGE(diff.empty(), "vs host reference: ", diff);
            ++calls;
        }
    }
    pin(gpu.h, -1);
    // fqScaleRepack: 2 blocks of 4 x 3 E8M0 scales, ROW_MAJOR (24 bytes) -> SWIZZLED_128X4 (2 x 512 bytes).
    {
        std::vector<uint8_t> src(24);
        for (size_t k = 0; k < src.size(); ++k) src[k] = uint8_t(100 + k);
        DeviceBuffer<uint8_t> d_src(24), d_dst(1024);
        d_src.upload(src);
        provoke();
        const fqStatus_t st = fqScaleRepack(gpu.h, FQ_TYPE_E8M0, 2, 4, 3, FQ_SCALE_REPACK_BLOCKS, nullptr, 0,
                                            FQ_SCALE_LAYOUT_ROW_MAJOR, d_src.p, 24, FQ_SCALE_LAYOUT_SWIZZLED_128X4, d_dst.p, 1024,
                                            reinterpret_cast<fqStream_t>(stream));
        still_pending(st, std::string(fqGetLastErrorMessage()), "fqScaleRepack");
        CUDA_OK(cudaStreamSynchronize(stream));
        ++calls;
    }
    CHECK(cudaGetLastError() == cudaSuccess);
    cudaStreamDestroy(stream);
    MESSAGE("pending error: ", calls, " calls left the caller's error pending");
}

TEST_CASE("a CUDA handle takes device memory of its device, managed memory and page-locked host memory mapped at "
          "the same address; it refuses pageable host memory") {
    CUDA_OK(cudaSetDevice(0));
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE_MESSAGE(gpu.status == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
    const Problem p = problems()[0];
    const std::vector<uint16_t> input = random_input(p, 7);
    const Bytes want = host_bytes(p, input);
    const size_t bytes = input.size() * 2;
    OnDevice x(p, input);

    auto expect = [&](const std::string& kind, const void* in, fqStatus_t want_status) {
        INFO("input in ", kind);
        REQUIRE(x.reset());
        const fqStatus_t st = x.quantize(gpu.h, nullptr, in);
        const std::string message = fqGetLastErrorMessage();
        CUDA_OK(cudaDeviceSynchronize());
        CHECK(cudaGetLastError() == cudaSuccess);
        CHECK_MESSAGE(st == want_status, "fqQuantize returned ", std::string(fqGetStatusString(st)), ": ", message);
        Bytes got;
        REQUIRE(x.download(got));
        if (want_status == FQ_STATUS_SUCCESS) {
            const std::string diff = differences(got, want);
            CHECK_MESSAGE(diff.empty(), "vs host reference: ", diff);
        } else {
            CHECK_MESSAGE(message.rfind("input: ", 0) == 0, "the message does not start by naming the argument: ", message);
            CHECK_MESSAGE(differences(got, x.shape).empty(), "a refused call wrote its outputs");
        }
    };
    expect("device memory of the handle's device (control)", x.in.p, FQ_STATUS_SUCCESS);

    void* managed = nullptr;
    CUDA_OK(cudaMallocManaged(&managed, bytes));
    std::copy(input.begin(), input.end(), static_cast<uint16_t*>(managed));
    expect("managed memory (cudaMallocManaged)", managed, FQ_STATUS_SUCCESS);
    CUDA_OK(cudaFree(managed));

    void* pinned = nullptr;
    CUDA_OK(cudaMallocHost(&pinned, bytes));
    std::copy(input.begin(), input.end(), static_cast<uint16_t*>(pinned));
    expect("page-locked host memory (cudaMallocHost: mapped at the same address under unified addressing)", pinned,
           FQ_STATUS_SUCCESS);
    CUDA_OK(cudaFreeHost(pinned));

    // Registered pageable memory: the device reads it at the same address only where the device can use the
    // host pointer (cudaDevAttrCanUseHostPointerForRegisteredMem); elsewhere the call is refused.
    std::vector<uint16_t> registered(input);
    CUDA_OK(cudaHostRegister(registered.data(), bytes, cudaHostRegisterMapped));
    int same_address = 0;
    CUDA_OK(cudaDeviceGetAttribute(&same_address, cudaDevAttrCanUseHostPointerForRegisteredMem, 0));
    expect(same_address ? "registered host memory (cudaHostRegister, mapped at the same address)"
                        : "registered host memory (cudaHostRegister; this device maps it at another address)",
           registered.data(), same_address ? FQ_STATUS_SUCCESS : FQ_STATUS_INVALID_VALUE);
    CUDA_OK(cudaHostUnregister(registered.data()));

    std::vector<uint16_t> pageable(input);
    expect("pageable host memory", pageable.data(), FQ_STATUS_INVALID_VALUE);
}

TEST_CASE("a plan on a CUDA handle writes the host reference's bytes for every problem, and checks each call's "
          "buffers: pageable host memory and another device's memory are refused with nothing written") {
    CUDA_OK(cudaSetDevice(0));
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE_MESSAGE(gpu.status == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
    cudaStream_t stream = nullptr;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const std::vector<Problem> ps = problems();
    for (size_t i = 0; i < ps.size(); ++i) {
        const Problem& p = ps[i];
        INFO("problem \"", p.what, "\"");
        const std::vector<uint16_t> input = random_input(p, unsigned(500 + i));
        const Bytes want = host_bytes(p, input);
        OnDevice x(p, input);
        fqPlan_t plan = nullptr;
        REQUIRE_MESSAGE(fqPlanCreate(&plan, gpu.h, x.d.d, x.li.l, x.lo.l) == FQ_STATUS_SUCCESS,
                        std::string(fqGetLastErrorMessage()));
        const auto execute = [&](const void* in) {
            return fqPlanExecute(plan, in, x.out.p, x.scales.p, x.scales.n, x.workspace.p, kWorkspaceBytes,
                                 reinterpret_cast<fqStream_t>(stream));
        };
        for (int run = 0; run < 2; ++run) {
            REQUIRE(x.reset());
            const fqStatus_t st = execute(x.in.p);
            REQUIRE_MESSAGE(st == FQ_STATUS_SUCCESS, std::string(fqGetStatusString(st)), ": ",
                            std::string(fqGetLastErrorMessage()));
            CUDA_OK(cudaStreamSynchronize(stream));
            Bytes got;
            REQUIRE(x.download(got));
            const std::string diff = differences(got, want);
            CHECK_MESSAGE(diff.empty(), "run ", run, " vs host reference: ", diff);
        }
        std::vector<uint16_t> pageable(input);
        std::unique_ptr<OnDevice> other;  // the same input on device 1, when there is one
        if (device_count() >= 2) {
            CUDA_OK(cudaSetDevice(1));
            other = std::make_unique<OnDevice>(p, input);
            CUDA_OK(cudaSetDevice(0));
        }
        const void* const refused_inputs[] = {pageable.data(), other ? other->in.p : nullptr};
        for (const void* in : refused_inputs) {
            if (!in) continue;
            REQUIRE(x.reset());
            const fqStatus_t st = execute(in);
            const std::string message = fqGetLastErrorMessage();
            CHECK_MESSAGE(st == FQ_STATUS_INVALID_VALUE, std::string(fqGetStatusString(st)), ": ", message);
            CHECK_MESSAGE(message.rfind("input: ", 0) == 0, "the message does not name the argument: ", message);
            CUDA_OK(cudaDeviceSynchronize());
            Bytes got;
            REQUIRE(x.download(got));
            CHECK_MESSAGE(differences(got, x.shape).empty(), "a refused execution wrote its outputs");
        }
        CHECK(fqPlanDestroy(plan) == FQ_STATUS_SUCCESS);
        if (other) {
            CUDA_OK(cudaSetDevice(1));
            other.reset();
            CUDA_OK(cudaSetDevice(0));
        }
    }
    cudaStreamDestroy(stream);
}

TEST_CASE("two handles on two GPUs: one thread switching devices, a current device or a pointer not the handle's "
          "refused, two threads at once on their own streams") {
    if (device_count() < 2) {
        MESSAGE("skipped: fewer than 2 CUDA devices (", device_count(), ")");
        return;
    }
    // Per-group, per-tensor dynamic (several kernels), MXFP8, columnwise with the scale-padding kernel, BLOCK_2D.
    std::vector<Problem> ps;
    for (const Problem& p : problems())
        if (p.scheme != FQ_SCHEME_PER_TOKEN && p.scheme != FQ_SCHEME_PER_TENSOR_STATIC && p.scheme != FQ_SCHEME_NVFP4 &&
            !(p.columnwise() && p.scheme == FQ_SCHEME_PER_GROUP))
            ps.push_back(p);
    REQUIRE(ps.size() == 5);
    std::vector<std::vector<uint16_t>> inputs;
    std::vector<Bytes> wants;
    for (size_t i = 0; i < ps.size(); ++i) {
        inputs.push_back(random_input(ps[i], unsigned(300 + i)));
        wants.push_back(host_bytes(ps[i], inputs.back()));
    }
    constexpr int kDevices = 2;
    std::vector<fqHandle_t> handles(kDevices, nullptr);
    std::vector<cudaStream_t> streams(kDevices, nullptr);
    std::vector<std::vector<std::unique_ptr<OnDevice>>> on(kDevices);  // [device][problem]
    for (int dev = 0; dev < kDevices; ++dev) {
        CUDA_OK(cudaSetDevice(dev));
        // -1: the current device, which the handle is bound to.
        REQUIRE_MESSAGE(fqCreate(&handles[size_t(dev)], FQ_BACKEND_CUDA, -1) == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
        int32_t bound = -7;
        size_t written = 0;
        REQUIRE(fqHandleGetAttribute(handles[size_t(dev)], FQ_HANDLE_DEVICE, &bound, 4, &written) == FQ_STATUS_SUCCESS);
        CHECK_MESSAGE(bound == dev, "fqCreate(device -1) with device ", dev, " current bound the handle to device ", bound);
        CUDA_OK(cudaStreamCreateWithFlags(&streams[size_t(dev)], cudaStreamNonBlocking));
        for (size_t i = 0; i < ps.size(); ++i) on[size_t(dev)].push_back(std::make_unique<OnDevice>(ps[i], inputs[i]));
    }

    // One thread, switching the current device between calls (1, 0, 1, 0).
    for (int call = 0; call < 4; ++call) {
        const int dev = 1 - call % 2;
        CUDA_OK(cudaSetDevice(dev));
        for (size_t i = 0; i < ps.size(); ++i) {
            INFO("one thread, call ", call, ": handle of device ", dev, " with device ", dev, " current, problem \"", ps[i].what, "\"");
            OnDevice& x = *on[size_t(dev)][i];
            REQUIRE(x.reset());
            const fqStatus_t st = x.quantize(handles[size_t(dev)], streams[size_t(dev)]);
            REQUIRE_MESSAGE(st == FQ_STATUS_SUCCESS, std::string(fqGetStatusString(st)), ": ", std::string(fqGetLastErrorMessage()));
            CUDA_OK(cudaStreamSynchronize(streams[size_t(dev)]));
            Bytes got;
            REQUIRE(x.download(got));
            const std::string diff = differences(got, wants[i]);
            CHECK_MESSAGE(diff.empty(), "vs host reference: ", diff);
        }
    }

    // Refused, with nothing written: the handle of device 1 used while device 0 is current; a pointer of the
    // other device handed to each handle (its own device current).
    auto refused = [&](int handle_dev, int current, const void* input, const std::vector<std::string>& named) {
        OnDevice& x = *on[size_t(handle_dev)][0];
        CUDA_OK(cudaSetDevice(handle_dev));
        REQUIRE(x.reset());
        CUDA_OK(cudaSetDevice(current));
        const fqStatus_t st = x.quantize(handles[size_t(handle_dev)], streams[size_t(handle_dev)], input);
        const std::string message = fqGetLastErrorMessage();
        CHECK_MESSAGE(st == FQ_STATUS_INVALID_VALUE, "returned ", std::string(fqGetStatusString(st)), ": ", message);
        for (const std::string& s : named) CHECK_MESSAGE(message.find(s) != std::string::npos, "the message lacks \"", s, "\": ", message);
        CUDA_OK(cudaSetDevice(handle_dev));
        CUDA_OK(cudaDeviceSynchronize());
        CHECK(cudaGetLastError() == cudaSuccess);
        Bytes got;
        REQUIRE(x.download(got));
        CHECK_MESSAGE(differences(got, x.shape).empty(), "a refused call wrote its outputs");
    };
    {
        INFO("handle of device 1 called with device 0 current");
        refused(1, 0, nullptr, {"handle:", "device 1", "device is 0"});
    }
    {
        INFO("handle of device 0 called with device 1 current");
        refused(0, 1, nullptr, {"handle:", "device 0", "device is 1"});
    }
    {
        INFO("handle of device 1 (current) given an input in device 0's memory");
        refused(1, 1, on[0][0]->in.p, {"input:", "device memory of CUDA device 0", "device 1"});
    }
    {
        INFO("handle of device 0 (current) given an input in device 1's memory");
        refused(0, 0, on[1][0]->in.p, {"input:", "device memory of CUDA device 1", "device 0"});
    }

    // Two threads at once, each on its device with its handle and stream, every problem several times.
    constexpr int kRuns = 8;
    std::vector<std::vector<std::string>> errors(kDevices);
    std::vector<std::thread> threads;
    for (int dev = 0; dev < kDevices; ++dev)
        threads.emplace_back([&, dev] {
            std::vector<std::string>& err = errors[size_t(dev)];
            const std::string who = "thread of device " + std::to_string(dev) + ": ";
            if (cudaSetDevice(dev) != cudaSuccess) return err.push_back(who + "cudaSetDevice failed");
            for (int run = 0; run < kRuns; ++run)
                for (size_t i = 0; i < ps.size(); ++i) {
                    const std::string where = who + "run " + std::to_string(run) + ", problem \"" + ps[i].what + "\": ";
                    OnDevice& x = *on[size_t(dev)][i];
                    if (!x.reset()) err.push_back(where + "cudaMemset failed");
                    const fqStatus_t st = x.quantize(handles[size_t(dev)], streams[size_t(dev)]);
                    if (st != FQ_STATUS_SUCCESS)
                        err.push_back(where + fqGetStatusString(st) + ": " + fqGetLastErrorMessage());
                    const cudaError_t synced = cudaStreamSynchronize(streams[size_t(dev)]);
                    if (synced != cudaSuccess) err.push_back(where + "cudaStreamSynchronize: " + cudaGetErrorString(synced));
                    Bytes got;
                    if (!x.download(got)) err.push_back(where + "download failed");
                    const std::string diff = differences(got, wants[i]);
                    if (!diff.empty()) err.push_back(where + "vs host reference: " + diff);
                }
        });
    for (std::thread& t : threads) t.join();
    for (int dev = 0; dev < kDevices; ++dev)
        for (const std::string& e : errors[size_t(dev)]) FAIL_CHECK(e);

    for (int dev = 0; dev < kDevices; ++dev) {
        CUDA_OK(cudaSetDevice(dev));
        on[size_t(dev)].clear();
        cudaStreamDestroy(streams[size_t(dev)]);
        CHECK(fqDestroy(handles[size_t(dev)]) == FQ_STATUS_SUCCESS);
    }
    CUDA_OK(cudaSetDevice(0));
}

int main(int argc, char** argv) {
    if (device_count() == 0) {
        std::printf("skipped: no CUDA device on this machine\n");
        return 77;
    }
    doctest::Context ctx(argc, argv);
    return ctx.run();
}
