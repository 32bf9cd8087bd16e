// The one-call entry points (fqQuantizeSimple, fqQuantizeDLPack) against the descriptor route they stand for:
// the same bytes for good inputs, the same status and message for bad ones; and the checks DLPack tensors add.
#ifdef FQ_OWN_DLPACK_LAYOUT  // no DLPack header on the build machine: the library's own declarations
#include "api/dlpack_layout.h"
#else
#include <dlpack/dlpack.h>
#endif

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "fq_test_util.h"
#include "fusedquant/fusedquant_dlpack.h"

using namespace fqt;

namespace {

// One problem as fqQuantizeSimple takes it.
struct Problem {
    int32_t act = FQ_ACTIVATION_SILU, gate = FQ_GATE_LAYOUT_SPLIT, scheme = FQ_SCHEME_PER_GROUP;
    int32_t in_type = FQ_TYPE_BF16, out_type = FQ_TYPE_FP8_E4M3FN, layout = FQ_SCALE_LAYOUT_ROW_MAJOR;
    int64_t rows = 5, cols = 256;
    int64_t in_cols() const { return gate == FQ_GATE_LAYOUT_NONE ? cols : 2 * cols; }
};

int32_t natural_scale_type(int32_t scheme) {
    if (scheme == FQ_SCHEME_MXFP8 || scheme == FQ_SCHEME_MXFP4) return FQ_TYPE_E8M0;
    return scheme == FQ_SCHEME_NVFP4 ? FQ_TYPE_FP8_E4M3FN : FQ_TYPE_FP32;
}

// What a call returned, with the thread's message taken right away.
struct Result {
    fqStatus_t status;
    std::string message;
    std::vector<uint8_t> values, scales;
};

// Buffers for one run: a random bf16/fp16 input, poisoned outputs.
struct Buffers {
    std::vector<uint16_t> x;
    std::vector<uint8_t> y, s;
    explicit Buffers(const Problem& p, size_t scale_bytes = 4096) {
        std::mt19937 rng(7);
        std::normal_distribution<float> dist(0.0f, 2.0f);
        const size_t n = size_t(std::max<int64_t>(p.rows, 0) * std::max<int64_t>(p.in_cols(), 0));
        for (size_t i = 0; i < std::min<size_t>(n, 1 << 20); ++i) x.push_back(fq::float_to_bf16(dist(rng)));
        if (x.empty()) x.resize(8);
        y.assign(size_t(std::max<int64_t>(p.rows, 0) * std::max<int64_t>(p.cols, 0)) + 64, 0xAB);
        s.assign(scale_bytes, 0xAB);
    }
};

// The descriptor route fqQuantizeSimple documents, step by step; the first failure is the result.
Result descriptor_route(fqHandle_t h, const Problem& p, const void* x, void* y, void* s, size_t sbytes, Buffers& b) {
    fqQuantDesc_t d = nullptr;
    fqTensorLayout_t in = nullptr, out = nullptr;
    REQUIRE(fqQuantDescCreate(&d) == FQ_STATUS_SUCCESS);
    auto finish = [&](fqStatus_t st) {
        Result r{st, fqGetLastErrorMessage(), b.y, b.s};
        fqTensorLayoutDestroy(in);
        fqTensorLayoutDestroy(out);
        fqQuantDescDestroy(d);
        return r;
    };
    const int32_t steps[][2] = {{FQ_QUANT_DESC_ACTIVATION, p.act}, {FQ_QUANT_DESC_GATE_LAYOUT, p.gate},
                                {FQ_QUANT_DESC_SCHEME, p.scheme}, {FQ_QUANT_DESC_SCALE_TYPE, natural_scale_type(p.scheme)},
                                {FQ_QUANT_DESC_OUTPUT_TYPE, p.out_type}, {FQ_QUANT_DESC_SCALE_LAYOUT, p.layout}};
    for (const auto& step : steps)
        if (fqStatus_t st = fqQuantDescSetAttribute(d, step[0], &step[1], 4)) return finish(st);
    if (fqStatus_t st = fqTensorLayoutCreate(&out, p.out_type, p.rows, p.cols, p.cols)) return finish(st);
    if (fqStatus_t st = fqTensorLayoutCreate(&in, p.in_type, p.rows, p.in_cols(), p.in_cols())) return finish(st);
    return finish(fqQuantize(h, d, in, x, out, y, s, sbytes, nullptr, 0, nullptr));
}

Result simple(fqHandle_t h, const Problem& p, const void* x, void* y, void* s, size_t sbytes, Buffers& b) {
    const fqStatus_t st = fqQuantizeSimple(h, p.act, p.gate, p.scheme, p.in_type, p.out_type, p.layout, p.rows, p.cols,
                                           x, y, s, sbytes, nullptr, 0, nullptr);
    return Result{st, fqGetLastErrorMessage(), b.y, b.s};
}

size_t simple_scale_bytes(const Problem& p) {
    size_t n = 0;
    REQUIRE_MESSAGE(fqGetScaleBufferSizeSimple(p.scheme, p.out_type, p.layout, p.rows, p.cols, &n) == 0,
                    fqGetLastErrorMessage());
    return n;
}

std::vector<std::pair<const char*, Problem>> good_problems() {
    std::vector<std::pair<const char*, Problem>> v;
    Problem p;
    v.push_back({"SiLU split, per-group 128 e4m3, row-major", p});
    p.layout = FQ_SCALE_LAYOUT_COL_MAJOR_TMA;
    v.push_back({"SiLU split, per-group 128 e4m3, COL_MAJOR_TMA (vLLM / DeepGEMM)", p});
    p = Problem{};
    p.scheme = FQ_SCHEME_MXFP8;
    p.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4;
    v.push_back({"SiLU split, MXFP8 swizzled", p});
    p = Problem{};
    p.scheme = FQ_SCHEME_NVFP4;
    p.out_type = FQ_TYPE_FP4_E2M1;
    p.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4;
    v.push_back({"SiLU split, NVFP4 swizzled", p});
    p = Problem{};
    p.act = FQ_ACTIVATION_GELU_TANH;
    p.gate = FQ_GATE_LAYOUT_INTERLEAVED;
    p.scheme = FQ_SCHEME_PER_TOKEN;
    p.out_type = FQ_TYPE_INT8;
    v.push_back({"GELU-tanh interleaved, per-token int8", p});
    p = Problem{};
    p.act = FQ_ACTIVATION_IDENTITY;
    p.gate = FQ_GATE_LAYOUT_NONE;
    p.scheme = FQ_SCHEME_MXFP4;
    p.out_type = FQ_TYPE_FP4_E2M1;
    p.in_type = FQ_TYPE_FP16;
    p.layout = FQ_SCALE_LAYOUT_PACKED_UE8M0;
    v.push_back({"identity fp16, MXFP4 packed UE8M0", p});
    p = Problem{};
    p.scheme = FQ_SCHEME_PER_TENSOR_DYNAMIC;
    p.out_type = FQ_TYPE_FP8_E5M2;
    v.push_back({"SiLU split, per-tensor dynamic e5m2", p});
    return v;
}

}  // namespace

TEST_CASE("fqQuantizeSimple writes the descriptor route's bytes") {
    Handle h;
    for (const auto& [name, p] : good_problems()) {
        INFO(name);
        const size_t sbytes = simple_scale_bytes(p);
        Buffers a(p, sbytes), b(p, sbytes);
        const Result want = descriptor_route(h.h, p, a.x.data(), a.y.data(), a.s.data(), sbytes, a);
        const Result got = simple(h.h, p, b.x.data(), b.y.data(), b.s.data(), sbytes, b);
        REQUIRE_MESSAGE(want.status == FQ_STATUS_SUCCESS, want.message);
        CHECK_MESSAGE(got.status == FQ_STATUS_SUCCESS, got.message);
        CHECK(got.values == want.values);
        CHECK(got.scales == want.scales);
        CHECK(got.values[0] != 0xAB);
    }
}

TEST_CASE("fqQuantizeSimple refuses bad input with the descriptor route's status and message") {
    Handle h;
    struct Bad {
        const char* how;
        std::function<void(Problem&)> problem;
        std::function<void(Buffers&, const void*&, void*&, void*&, size_t&)> buffers;
    };
    const auto none = [](Problem&) {};
    const auto keep = [](Buffers&, const void*&, void*&, void*&, size_t&) {};
    const Bad bad[] = {
        {"activation 99", [](Problem& p) { p.act = 99; }, keep},
        {"SWIGLU_OAI not gated", [](Problem& p) { p.act = FQ_ACTIVATION_SWIGLU_OAI; p.gate = FQ_GATE_LAYOUT_NONE; }, keep},
        {"gate layout -1", [](Problem& p) { p.gate = -1; }, keep},
        {"scheme 42", [](Problem& p) { p.scheme = 42; }, keep},
        {"scheme PER_TENSOR_STATIC (no scale pointer)", [](Problem& p) { p.scheme = FQ_SCHEME_PER_TENSOR_STATIC; }, keep},
        {"input type FP32", [](Problem& p) { p.in_type = FQ_TYPE_FP32; }, keep},
        {"input type 77", [](Problem& p) { p.in_type = 77; }, keep},
        {"output type BF16", [](Problem& p) { p.out_type = FQ_TYPE_BF16; }, keep},
        {"output type FP4 under PER_GROUP", [](Problem& p) { p.out_type = FQ_TYPE_FP4_E2M1; }, keep},
        {"output type INT8 under MXFP8", [](Problem& p) { p.scheme = FQ_SCHEME_MXFP8; p.out_type = FQ_TYPE_INT8; }, keep},
        {"scale layout 17", [](Problem& p) { p.layout = 17; }, keep},
        {"scale layout SWIZZLED_128X4 of fp32", [](Problem& p) { p.layout = FQ_SCALE_LAYOUT_SWIZZLED_128X4; }, keep},
        {"scale layout COL_MAJOR under per-tensor", [](Problem& p) {
             p.scheme = FQ_SCHEME_PER_TENSOR_DYNAMIC; p.layout = FQ_SCALE_LAYOUT_COL_MAJOR; }, keep},
        {"rows -1", [](Problem& p) { p.rows = -1; }, keep},
        {"cols 0", [](Problem& p) { p.cols = 0; }, keep},
        {"cols -3", [](Problem& p) { p.cols = -3; }, keep},
        {"NVFP4 cols 17 (odd FP4 row)", [](Problem& p) {
             p.scheme = FQ_SCHEME_NVFP4; p.out_type = FQ_TYPE_FP4_E2M1; p.cols = 17; }, keep},
        {"input NULL", none, [](Buffers&, const void*& x, void*&, void*&, size_t&) { x = nullptr; }},
        {"input odd address", none, [](Buffers&, const void*& x, void*&, void*&, size_t&) {
             x = static_cast<const uint8_t*>(x) + 1; }},
        {"output NULL", none, [](Buffers&, const void*&, void*& y, void*&, size_t&) { y = nullptr; }},
        {"output overlaps the input", none, [](Buffers& b, const void*&, void*& y, void*&, size_t&) { y = b.x.data(); }},
        {"scales NULL", none, [](Buffers&, const void*&, void*&, void*& s, size_t&) { s = nullptr; }},
        {"scales misaligned", none, [](Buffers&, const void*&, void*&, void*& s, size_t&) {
             s = static_cast<uint8_t*>(s) + 2; }},
        {"scale buffer one byte too small", none, [](Buffers&, const void*&, void*&, void*&, size_t& n) { n -= 1; }},
        {"scale buffer empty", none, [](Buffers&, const void*&, void*&, void*&, size_t& n) { n = 0; }},
    };
    for (const Bad& k : bad) {
        INFO(k.how);
        Problem p;
        k.problem(p);
        // One set of buffers for both calls: a message may print an address, and a failing call writes nothing.
        Buffers a(p);
        const std::vector<uint8_t> untouched = a.y;
        const void* x = a.x.data();
        void *y = a.y.data(), *s = a.s.data();
        size_t n = 5 * 2 * 4;  // the default problem's scales: 5 rows x 2 groups of fp32
        k.buffers(a, x, y, s, n);
        const Result want = descriptor_route(h.h, p, x, y, s, n, a);
        const Result got = simple(h.h, p, x, y, s, n, a);
        REQUIRE(want.status != FQ_STATUS_SUCCESS);
        CHECK(fqGetStatusString(got.status) == std::string(fqGetStatusString(want.status)));
        CHECK(got.message == want.message);
        CHECK(a.y == untouched);
        const std::string line = std::string(k.how) + " -> " + fqGetStatusString(got.status) + " \"" + got.message + "\"";
        MESSAGE(line);
    }
    // A bad handle: the route's fqQuantize and fqQuantizeSimple name it alike.
    Problem p;
    Buffers a(p), b(p);
    const Result want = descriptor_route(nullptr, p, a.x.data(), a.y.data(), a.s.data(), 40, a);
    const Result got = simple(nullptr, p, b.x.data(), b.y.data(), b.s.data(), 40, b);
    CHECK(got.status == want.status);
    CHECK(got.message == want.message);
}

// ---- DLPack ------------------------------------------------------------------------------------------------

namespace {

// A DLTensor over caller-owned storage; shape and strides live in the object.
struct Tensor {
    DLTensor t{};
    int64_t shape[4] = {}, strides[4] = {};
    Tensor(void* data, DLDataType dtype, std::vector<int64_t> dims, std::vector<int64_t> st = {}) {
        t.data = data;
        t.device = DLDevice{kDLCPU, 0};
        t.ndim = int32_t(dims.size());
        t.dtype = dtype;
        for (size_t i = 0; i < dims.size(); ++i) shape[i] = dims[i];
        t.shape = shape;
        if (!st.empty()) {
            for (size_t i = 0; i < st.size(); ++i) strides[i] = st[i];
            t.strides = strides;
        }
    }
};
constexpr DLDataType kBf16{kDLBfloat, 16, 1}, kF16{kDLFloat, 16, 1}, kF32{kDLFloat, 32, 1}, kU8{kDLUInt, 8, 1};

}  // namespace

TEST_CASE("fqQuantizeDLPack writes fqQuantizeSimple's bytes, packed, strided and at a byte offset") {
    Handle h;
    for (const auto& [name, p] : good_problems()) {
        INFO(name);
        const size_t sbytes = simple_scale_bytes(p);
        Buffers a(p, sbytes), b(p, sbytes);
        const Result want = simple(h.h, p, a.x.data(), a.y.data(), a.s.data(), sbytes, a);
        REQUIRE_MESSAGE(want.status == FQ_STATUS_SUCCESS, want.message);
        const bool fp4 = p.out_type == FQ_TYPE_FP4_E2M1;
        const DLDataType in_t = p.in_type == FQ_TYPE_BF16 ? kBf16 : kF16;
        const DLDataType out_t = p.out_type == FQ_TYPE_INT8 ? DLDataType{kDLInt, 8, 1} : kU8;
        const DLDataType s_t = natural_scale_type(p.scheme) == FQ_TYPE_FP32 ? kF32 : kU8;
        const int64_t s_elems = int64_t(sbytes) / (s_t.bits / 8);
        const int64_t out_cols = fp4 ? p.cols / 2 : p.cols;
        {  // packed (strides NULL)
            Tensor in(b.x.data(), in_t, {p.rows, p.in_cols()}), out(b.y.data(), out_t, {p.rows, out_cols});
            Tensor s(b.s.data(), s_t, {s_elems});
            const fqStatus_t st = fqQuantizeDLPack(h.h, p.act, p.gate, p.scheme, p.out_type, p.layout, &in.t, &out.t, &s.t,
                                                   nullptr, 0, nullptr);
            CHECK_MESSAGE(st == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
            CHECK(b.y == want.values);
            CHECK(b.s == want.scales);
        }
        {  // the input as rows 1.. of a wider tensor (row stride, byte offset), the output with explicit strides
            const int64_t ld = p.in_cols() + 8;
            std::vector<uint16_t> wide(size_t((p.rows + 1) * ld), 0x7FC0);  // NaN outside the problem
            for (int64_t r = 0; r < p.rows; ++r)
                std::memcpy(&wide[size_t((r + 1) * ld)], &b.x[size_t(r * p.in_cols())], size_t(p.in_cols()) * 2);
            std::vector<uint8_t> y(b.y.size(), 0xAB), s(b.s.size(), 0xAB);
            Tensor in(wide.data(), in_t, {p.rows, p.in_cols()}, {ld, 1}), out(y.data(), out_t, {p.rows, out_cols}, {out_cols, 1});
            in.t.byte_offset = uint64_t(ld) * 2;
            Tensor sc(s.data(), s_t, {s_elems}, {1});
            const fqStatus_t st = fqQuantizeDLPack(h.h, p.act, p.gate, p.scheme, p.out_type, p.layout, &in.t, &out.t, &sc.t,
                                                   nullptr, 0, nullptr);
            CHECK_MESSAGE(st == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
            CHECK(y == want.values);
            CHECK(s == want.scales);
        }
    }
}

TEST_CASE("fqQuantizeDLPack refuses a tensor of the wrong dtype, rank, strides or device, naming the argument") {
    Handle h;
    Problem p;  // SiLU split, per-group 128: bf16 [5, 512] -> e4m3 [5, 256], 5 x 2 fp32 scales
    Buffers b(p);
    struct Bad {
        const char* how;
        fqStatus_t want;
        const char* names;
        std::function<void(Tensor&, Tensor&, Tensor&)> spoil;
    };
    const Bad bad[] = {
        {"input float32", FQ_STATUS_INVALID_VALUE, "input: dtype", [](Tensor& i, Tensor&, Tensor&) { i.t.dtype = kF32; }},
        {"input 2 lanes", FQ_STATUS_INVALID_VALUE, "input: dtype", [](Tensor& i, Tensor&, Tensor&) { i.t.dtype.lanes = 2; }},
        {"output float16", FQ_STATUS_INVALID_VALUE, "output: dtype", [](Tensor&, Tensor& o, Tensor&) { o.t.dtype = kF16; }},
        {"output int8 for e4m3", FQ_STATUS_INVALID_VALUE, "output: dtype",
         [](Tensor&, Tensor& o, Tensor&) { o.t.dtype = DLDataType{kDLInt, 8, 1}; }},
        {"scales uint8 for fp32 scales", FQ_STATUS_INVALID_VALUE, "scales: dtype", [](Tensor&, Tensor&, Tensor& s) {
             s.t.dtype = kU8; }},
        {"input 3-D", FQ_STATUS_INVALID_VALUE, "input: ndim 3", [](Tensor& i, Tensor&, Tensor&) {
             i.t.ndim = 3; i.shape[2] = 1; }},
        {"output 1-D", FQ_STATUS_INVALID_VALUE, "output: ndim 1", [](Tensor&, Tensor& o, Tensor&) { o.t.ndim = 1; }},
        {"input column-major", FQ_STATUS_INVALID_VALUE, "input: strides", [](Tensor& i, Tensor&, Tensor&) {
             i.strides[0] = 1; i.strides[1] = 5; i.t.strides = i.strides; }},
        {"input column stride 2", FQ_STATUS_INVALID_VALUE, "input: strides", [](Tensor& i, Tensor&, Tensor&) {
             i.strides[0] = 1024; i.strides[1] = 2; i.t.strides = i.strides; }},
        {"output row stride below its width", FQ_STATUS_INVALID_VALUE, "output: strides", [](Tensor&, Tensor& o, Tensor&) {
             o.strides[0] = 100; o.strides[1] = 1; o.t.strides = o.strides; }},
        {"scales not packed", FQ_STATUS_INVALID_VALUE, "scales: stride", [](Tensor&, Tensor&, Tensor& s) {
             s.strides[0] = 2; s.t.strides = s.strides; }},
        {"input on CUDA", FQ_STATUS_INVALID_VALUE, "input: device type 2", [](Tensor& i, Tensor&, Tensor&) {
             i.t.device = DLDevice{kDLCUDA, 0}; }},
        {"scales in CUDA host memory", FQ_STATUS_INVALID_VALUE, "scales: device type 3", [](Tensor&, Tensor&, Tensor& s) {
             s.t.device = DLDevice{kDLCUDAHost, 0}; }},
        {"input rows differ from the output's", FQ_STATUS_INVALID_VALUE, "outputLayout: 4 rows",
         [](Tensor&, Tensor& o, Tensor&) { o.shape[0] = 4; }},
        {"input not twice the output's width", FQ_STATUS_INVALID_VALUE, "inputLayout: 510 columns",
         [](Tensor& i, Tensor&, Tensor&) { i.shape[1] = 510; }},
        {"scales too small", FQ_STATUS_INSUFFICIENT_BUFFER, "scalesSizeInBytes: 36 bytes",
         [](Tensor&, Tensor&, Tensor& s) { s.shape[0] = 1; s.shape[1] = 9; }},
        {"shape NULL", FQ_STATUS_NULL_POINTER, "input: shape is NULL", [](Tensor& i, Tensor&, Tensor&) { i.t.shape = nullptr; }},
        {"negative extent", FQ_STATUS_INVALID_VALUE, "output: shape[1] -256", [](Tensor&, Tensor& o, Tensor&) {
             o.shape[1] = -256; }},
    };
    for (const Bad& k : bad) {
        INFO(k.how);
        std::vector<uint8_t> y(b.y.size(), 0xAB), s(b.s.size(), 0xAB);
        Tensor in(b.x.data(), kBf16, {5, 512}), out(y.data(), kU8, {5, 256}), sc(s.data(), kF32, {5, 2});
        k.spoil(in, out, sc);
        const fqStatus_t st = fqQuantizeDLPack(h.h, p.act, p.gate, p.scheme, p.out_type, p.layout, &in.t, &out.t, &sc.t,
                                               nullptr, 0, nullptr);
        const std::string message = fqGetLastErrorMessage();
        const std::string line = std::string(k.how) + " -> " + fqGetStatusString(st) + " \"" + message + "\"";
        MESSAGE(line);
        CHECK(st == k.want);
        CHECK_MESSAGE(message.find(k.names) != std::string::npos, message);
        CHECK(y == std::vector<uint8_t>(b.y.size(), 0xAB));
        CHECK(s == std::vector<uint8_t>(b.s.size(), 0xAB));
    }
    std::vector<uint8_t> y(b.y.size()), s(b.s.size());
    Tensor in(b.x.data(), kBf16, {5, 512}), out(y.data(), kU8, {5, 256}), sc(s.data(), kF32, {10});
    CHECK(fqQuantizeDLPack(h.h, p.act, p.gate, p.scheme, p.out_type, p.layout, nullptr, &out.t, &sc.t, nullptr, 0, nullptr) ==
          FQ_STATUS_NULL_POINTER);
    CHECK(std::string(fqGetLastErrorMessage()) == "input: NULL DLTensor");
    CHECK(fqQuantizeDLPack(nullptr, p.act, p.gate, p.scheme, p.out_type, p.layout, &in.t, &out.t, &sc.t, nullptr, 0,
                           nullptr) == FQ_STATUS_INVALID_HANDLE);
    CHECK(fqQuantizeDLPack(h.h, 99, p.gate, p.scheme, p.out_type, p.layout, &in.t, &out.t, &sc.t, nullptr, 0, nullptr) ==
          FQ_STATUS_INVALID_VALUE);
    CHECK(std::string(fqGetLastErrorMessage()).find("FQ_QUANT_DESC_ACTIVATION") == 0);
    // A row of extent 1 and a column of extent 1 may carry any stride (as DLPack producers give them).
    Tensor one_in(b.x.data(), kBf16, {1, 512}, {7, 1}), one_out(y.data(), kU8, {1, 256}, {3, 1}), one_s(s.data(), kF32, {2});
    CHECK_MESSAGE(fqQuantizeDLPack(h.h, p.act, p.gate, p.scheme, p.out_type, p.layout, &one_in.t, &one_out.t, &one_s.t,
                                   nullptr, 0, nullptr) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
}
