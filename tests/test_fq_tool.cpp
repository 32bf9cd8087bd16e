// The fq command line on the host backend: quantize-weights round-trips a small checkpoint made here (every
// quantized tensor equals fqQuantize's bytes, every other tensor is copied unchanged), the .safetensors
// and JSON code it is built on, and fq bench's sweeps (what each case measures and counts, no GPU needed).
#include <glob.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>

#include "../tools/fq/bench_case.h"
#include "../tools/fq/cli.h"
#include "../tools/fq/compare.h"
#include "../tools/fq/csv.h"
#include "../tools/fq/plot.h"
#include "../tools/fq/json.h"
#include "../tools/fq/safetensors.h"
#include "fq_test_util.h"

using namespace fqt;
using fqtool::Json;
using fqtool::SafetensorsReader;
using fqtool::SafetensorsWriter;

namespace {

struct Tensor {
    std::string name, dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
};

std::vector<uint8_t> random_halfs(std::mt19937& rng, int64_t n, bool bf16) {
    std::normal_distribution<float> normal(0.0f, 0.05f);
    std::vector<uint8_t> v(size_t(n * 2));
    for (int64_t i = 0; i < n; ++i) {
        float x = normal(rng);
        if (i % 997 == 5) x *= 300.0f;  // an outlier in some tiles
        const uint16_t h = bf16 ? fq::float_to_bf16(x) : fq::float_to_fp16(x);
        v[size_t(2 * i)] = uint8_t(h);
        v[size_t(2 * i + 1)] = uint8_t(h >> 8);
    }
    return v;
}

std::vector<Tensor> small_checkpoint() {
    std::mt19937 rng(3);
    std::vector<Tensor> t;
    t.push_back({"model.embed_tokens.weight", "BF16", {64, 32}, random_halfs(rng, 64 * 32, true)});
    t.push_back({"model.layers.0.mlp.down_proj.weight", "BF16", {300, 200}, random_halfs(rng, 300 * 200, true)});
    t.push_back({"model.layers.0.mlp.up_proj.weight", "F16", {128, 256}, random_halfs(rng, 128 * 256, false)});
    t.push_back({"model.layers.0.counter", "I32", {4}, {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}});
    t.push_back({"model.norm.weight", "BF16", {200}, random_halfs(rng, 200, true)});
    return t;
}

std::string temp_path(const std::string& name) {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/fq_tool_test_" + std::to_string(::getpid()) + "_" + name;
}

void write_checkpoint(const std::string& path, const std::vector<Tensor>& ts) {
    SafetensorsWriter w;
    for (const Tensor& t : ts) w.declare(t.name, t.dtype, t.shape, t.data.size());
    const fqtool::JsonMap meta = {{"format", "pt"}};
    w.begin(path, meta);
    for (const Tensor& t : ts) w.write_next(t.name, t.data.data(), t.data.size());
    w.finish();
}

int run_fq(const std::string& args) {
    const std::string cmd = std::string("\"") + FQ_TOOL_PATH + "\" quantize-weights " + args;
    return std::system(cmd.c_str());
}

// fqQuantize on the host backend of one [rows, cols] 16-bit tensor: identity, scheme, layout.
struct Expected {
    std::vector<uint8_t> values, scales;
};
Expected host_quantize(const Tensor& t, int32_t scheme, int32_t layout, int32_t out, const float* global_amax = nullptr) {
    Desc d;
    d.i32(FQ_QUANT_DESC_SCHEME, scheme).i32(FQ_QUANT_DESC_OUTPUT_TYPE, out).i32(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
    if (scheme == FQ_SCHEME_MXFP8) d.i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0);
    if (scheme == FQ_SCHEME_NVFP4) d.i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_FP8_E4M3FN).ptr(FQ_QUANT_DESC_GLOBAL_AMAX_POINTER, global_amax);
    const int64_t rows = t.shape[0], cols = t.shape[1];
    const int32_t in_type = t.dtype == "BF16" ? FQ_TYPE_BF16 : FQ_TYPE_FP16;
    Layout li(in_type, rows, cols, cols), lo(out, rows, cols, cols);
    Expected e;
    e.values.assign(size_t(out == FQ_TYPE_FP4_E2M1 ? rows * cols / 2 : rows * cols), 0xAB);
    e.scales.assign(scale_bytes(d, rows, cols), 0xAB);
    Handle h;
    REQUIRE_MESSAGE(fqQuantize(h.h, d.d, li.l, t.data.data(), lo.l, e.values.data(), e.scales.data(), e.scales.size(),
                               nullptr, 0, nullptr) == FQ_STATUS_SUCCESS, std::string(fqGetLastErrorMessage()));
    return e;
}

void check_copied(const SafetensorsReader& r, const Tensor& t) {
    const fqtool::TensorInfo* info = r.find(t.name);
    REQUIRE(info != nullptr);
    CHECK(info->dtype == t.dtype);
    CHECK(info->shape == t.shape);
    CHECK(r.read(*info) == t.data);
}

}  // namespace

TEST_CASE("fq quantize-weights (block2d) writes fqQuantize's bytes and <name>_scale_inv, copies the rest") {
    const auto ts = small_checkpoint();
    const std::string in = temp_path("in.safetensors"), out = temp_path("out.safetensors");
    write_checkpoint(in, ts);
    for (const char* layout : {"row", "col"}) {
        CAPTURE(layout);
        REQUIRE(run_fq("\"" + in + "\" \"" + out + "\" --backend host --quiet --scale-layout " + layout) == 0);
        SafetensorsReader r(out);
        CHECK(r.tensors().size() == ts.size() + 2);  // two weights quantized, each with one scale tensor
        CHECK(r.metadata().value("format", "") == "pt");
        CHECK(r.metadata().value("fq_quantization", "").find("block2d") != std::string::npos);
        check_copied(r, ts[0]);  // embed: skipped by name
        check_copied(r, ts[3]);  // int32
        check_copied(r, ts[4]);  // 1-D norm
        const bool col = std::string(layout) == "col";
        for (int i : {1, 2}) {
            const Tensor& t = ts[size_t(i)];
            CAPTURE(t.name);
            const Expected e = host_quantize(t, FQ_SCHEME_BLOCK_2D, col ? FQ_SCALE_LAYOUT_COL_MAJOR : FQ_SCALE_LAYOUT_ROW_MAJOR,
                                             FQ_TYPE_FP8_E4M3FN);
            const fqtool::TensorInfo* q = r.find(t.name);
            const fqtool::TensorInfo* s = r.find(t.name + "_scale_inv");
            REQUIRE(q != nullptr);
            REQUIRE(s != nullptr);
            CHECK(q->dtype == "F8_E4M3");
            CHECK(q->shape == t.shape);
            CHECK(s->dtype == "F32");
            const int64_t mb = (t.shape[0] + 127) / 128, kb = (t.shape[1] + 127) / 128;
            CHECK(s->shape == (col ? std::vector<int64_t>{kb, mb} : std::vector<int64_t>{mb, kb}));
            CHECK(r.read(*q) == e.values);
            CHECK(r.read(*s) == e.scales);
        }
    }
    std::remove(in.c_str());
    std::remove(out.c_str());
}

TEST_CASE("fq quantize-weights writes MXFP8 (F8_E8M0 scales) and NVFP4 (packed e2m1, e4m3 scales, scale_2)") {
    const auto ts = small_checkpoint();
    const std::string in = temp_path("in2.safetensors"), out = temp_path("out2.safetensors");
    write_checkpoint(in, ts);
    REQUIRE(run_fq("\"" + in + "\" \"" + out + "\" --backend host --quiet --scheme mxfp8") == 0);
    {
        SafetensorsReader r(out);
        const Tensor& t = ts[1];
        const Expected e = host_quantize(t, FQ_SCHEME_MXFP8, FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_TYPE_FP8_E4M3FN);
        const auto* q = r.find(t.name);
        const auto* s = r.find(t.name + "_scale");
        REQUIRE(q != nullptr);
        REQUIRE(s != nullptr);
        CHECK(s->dtype == "F8_E8M0");
        CHECK(s->shape == std::vector<int64_t>{300, 7});
        CHECK(r.read(*q) == e.values);
        CHECK(r.read(*s) == e.scales);
    }
    REQUIRE(run_fq("\"" + in + "\" \"" + out + "\" --backend host --quiet --scheme nvfp4") == 0);
    {
        SafetensorsReader r(out);
        for (int i : {1, 2}) {
            const Tensor& t = ts[size_t(i)];
            CAPTURE(t.name);
            float amax = 0.0f;
            for (size_t j = 0; j < t.data.size(); j += 2) {
                const uint16_t h = uint16_t(t.data[j] | (t.data[j + 1] << 8));
                amax = std::fmax(amax, std::fabs(t.dtype == "BF16" ? fq::bf16_to_float(h) : fq::fp16_to_float(h)));
            }
            const Expected e = host_quantize(t, FQ_SCHEME_NVFP4, FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_TYPE_FP4_E2M1, &amax);
            const auto* q = r.find(t.name);
            const auto* s = r.find(t.name + "_scale");
            const auto* s2 = r.find(t.name + "_scale_2");
            REQUIRE(q != nullptr);
            REQUIRE(s != nullptr);
            REQUIRE(s2 != nullptr);
            CHECK(q->dtype == "U8");
            CHECK(q->shape == std::vector<int64_t>{t.shape[0], t.shape[1] / 2});
            CHECK(s->dtype == "F8_E4M3");
            CHECK(r.read(*q) == e.values);
            CHECK(r.read(*s) == e.scales);
            const std::vector<uint8_t> b = r.read(*s2);
            float scale2;
            std::memcpy(&scale2, b.data(), 4);
            CHECK(scale2 == 1.0f / (2688.0f / amax));
        }
    }
    std::remove(in.c_str());
    std::remove(out.c_str());
}

TEST_CASE("fq quantize-weights refuses bad arguments and broken files with a message and a non-zero status") {
    const std::string bad = temp_path("bad.safetensors");
    {
        FILE* f = std::fopen(bad.c_str(), "wb");
        const uint8_t len[8] = {0xFF, 0xFF, 0, 0, 0, 0, 0, 0};  // a header longer than the file
        std::fwrite(len, 1, 8, f);
        std::fclose(f);
    }
    CHECK(run_fq("\"" + bad + "\" \"" + bad + ".out\" --backend host --quiet 2>/dev/null") != 0);
    CHECK_THROWS_WITH_AS(SafetensorsReader{bad}, doctest::Contains("exceeds the file"), std::runtime_error);
    CHECK(run_fq("--scheme per-token a b 2>/dev/null") != 0);
    CHECK(run_fq("only-one-file 2>/dev/null") != 0);
    std::remove(bad.c_str());
}

// ---- fq bench's sweeps (tools/fq/bench_case.*): no GPU needed ------------------------------------------------

namespace {

std::vector<fqtool::BenchCase> sweep(const std::string& line) {
    std::vector<std::string> words;
    for (const std::string& w : fqtool::split(line, ' ')) words.push_back(w);
    return fqtool::expand_sweep(fqtool::Args(words, fqtool::bench_options()));
}

int64_t sum(const std::vector<int32_t>& v) {
    int64_t s = 0;
    for (int32_t x : v) s += x;
    return s;
}

// Host stand-ins for the device arrays and buffers fq bench points a descriptor at.
struct HostArrays {
    std::vector<int32_t> counts, offsets;
    std::vector<float> static_scales;
    HostArrays(const fqtool::BenchCase& c, const fqtool::MoeRows& rows)
        : counts(rows.counts), offsets(rows.offsets), static_scales(size_t(std::max<int64_t>(c.experts, 1)), 1.0f) {}
    fqtool::CaseArrays pointers() const {
        return {counts.empty() ? nullptr : counts.data(), offsets.empty() ? nullptr : offsets.data(), static_scales.data()};
    }
};

}  // namespace

TEST_CASE("fq bench: skewed counts follow the documented formula; uniform fills every slot") {
    using fqtool::Skew;
    CHECK(fqtool::expert_counts(4, 16, Skew::Uniform) == std::vector<int32_t>{16, 16, 16, 16});
    // E = 8, C = 64: expert 7 empty; the others 64 - floor(384 r / 42), r = 0..6.
    CHECK(fqtool::expert_counts(8, 64, Skew::Skewed) == std::vector<int32_t>{64, 55, 46, 37, 28, 19, 10, 0});
    CHECK(fqtool::expert_counts(1, 5, Skew::Skewed) == std::vector<int32_t>{5});
    CHECK(fqtool::expert_counts(3, 10, Skew::Skewed) == std::vector<int32_t>{10, 6, 2});
    for (int64_t e : {8, 32, 256})
        for (int64_t cap : {1, 16, 64, 256, 1024}) {
            CAPTURE(e);
            CAPTURE(cap);
            const auto c = fqtool::expert_counts(e, cap, Skew::Skewed);
            CHECK(std::count(c.begin(), c.end(), 0) == e / 8);                  // every 8th expert has no row
            CHECK(*std::max_element(c.begin(), c.end()) == cap);                // expert 0 fills its slot
            CHECK(c[size_t(e - 2)] == (cap + 6) / 7);                           // the last non-empty: ceil(C/7)
            if (cap >= 64) CHECK(std::abs(double(sum(c)) / double(e * cap) - 0.5) < 0.02);  // about E*C/2
        }
}

TEST_CASE("fq bench: MoE rows of masked and contiguous cases, and the bytes that count") {
    auto masked = sweep("--moe masked --experts 8 --skew skewed --tokens 64 --hidden 256 --scheme per-group --layouts row");
    REQUIRE(masked.size() == 1);
    const fqtool::BenchCase& m = masked[0];
    CHECK(m.p.rows == 8 * 64);
    const fqtool::MoeRows mr = fqtool::moe_rows(m);
    CHECK(mr.counts == fqtool::expert_counts(8, 64, fqtool::Skew::Skewed));
    CHECK(mr.offsets.empty());
    CHECK(mr.valid == 259);
    // Valid rows only: the gated bf16 input (2H x 2 bytes), the e4m3 values (H), the whole scale buffer.
    const fqtool::ByteCount b = fqtool::count_bytes(m, mr.valid, 1000, 0);
    CHECK(b.input == 259 * 512 * 2);
    CHECK(b.row_values == 259 * 256);
    CHECK(b.row_scales == 1000);
    CHECK(b.col_values + b.col_scales == 0);

    // CONTIGUOUS: slots of ceil(M/E) rows packed from row 0; uniform covers all M rows.
    auto contiguous = sweep("--moe contiguous --experts 8 --skew uniform,skewed --tokens 100 --hidden 256");
    REQUIRE(contiguous.size() == 2 * 2);  // skews x the default layouts row,col
    const fqtool::MoeRows u = fqtool::moe_rows(contiguous[0]);
    CHECK(contiguous[0].p.rows == 100);
    CHECK(u.counts.empty());
    CHECK(u.offsets == std::vector<int32_t>{0, 13, 26, 39, 52, 65, 78, 91, 100});
    CHECK(u.valid == 100);
    const fqtool::MoeRows s = fqtool::moe_rows(contiguous[2]);
    CHECK(contiguous[2].skew == fqtool::Skew::Skewed);
    // C = 13: 13 - floor(78 r / 42) = 13, 12, 10, 8, 6, 4, 2, then expert 7 empty.
    CHECK(s.offsets == std::vector<int32_t>{0, 13, 25, 35, 43, 49, 53, 55, 55});
    CHECK(s.valid == 55);

    // No MoE layout: every row is valid and the bytes are what fq bench always counted.
    auto plain = sweep("--tokens 16 --hidden 2048 --layouts row");
    REQUIRE(plain.size() == 1);
    CHECK(fqtool::moe_rows(plain[0]).valid == 16);
    CHECK(fqtool::count_bytes(plain[0], 16, 64, 0).total() == 16 * 4096 * 2 + 16 * 2048 + 64);
}

TEST_CASE("fq bench: outputs, columnwise blocks and MoE options expand only where they apply") {
    auto a = sweep("--tokens 4096 --hidden 7168 --layouts row --outputs row,col,both,col+row-separate "
                   "--col-block 32,128 --transpose 0,1");
    CHECK(a.size() == 1 + 3 * 4);  // row once; each columnwise kind for 2 blocks x 2 orientations
    CHECK(a[0].calls() == std::vector<int32_t>{FQ_OUTPUT_ROWWISE});
    const auto separate = std::find_if(a.begin(), a.end(), [](const fqtool::BenchCase& c) { return c.outputs == fqtool::Outputs::Separate; });
    REQUIRE(separate != a.end());
    CHECK(separate->calls() == std::vector<int32_t>{FQ_OUTPUT_ROWWISE, FQ_OUTPUT_COLUMNWISE});
    CHECK(sweep("--tokens 16 --hidden 64 --layouts row --experts 8,32 --skew uniform,skewed").size() == 1);  // no --moe
    CHECK(sweep("--tokens 16 --hidden 64 --layouts row --moe none,masked --experts 8,32").size() == 1 + 2);
    CHECK_THROWS_AS(sweep("--moe packed"), fqtool::ToolError);
    CHECK_THROWS_AS(sweep("--skew zipf"), fqtool::ToolError);
    CHECK_THROWS_AS(sweep("--transpose 2"), fqtool::ToolError);
    CHECK_THROWS_AS(sweep("--experts 0"), fqtool::ToolError);
    // --global-amax varies NVFP4 only.
    CHECK(sweep("--tokens 16 --hidden 64 --layouts swizzled --scheme mxfp8,nvfp4 --global-amax device,given").size() == 1 + 2);
    CHECK_THROWS_AS(sweep("--global-amax host"), fqtool::ToolError);
}

TEST_CASE("fq bench: every case of the sweep files is a problem the library accepts (host backend)") {
    for (const char* file : {"/tools/fq/sweeps-moe.txt", "/tools/fq/sweeps.txt"}) {
        const auto cases = fqtool::read_sweep_file(std::string(FQ_SOURCE_DIR) + file);
        CAPTURE(file);
        CHECK(cases.size() == (std::string(file).find("moe") != std::string::npos ? 69u : 112u));
        Handle h;
        std::vector<uint8_t> stand_in(64);
        for (const fqtool::BenchCase& c : cases) {
            CAPTURE(c.describe());
            const fqtool::MoeRows rows = fqtool::moe_rows(c);
            const HostArrays arrays(c, rows);
            CHECK(rows.valid <= c.p.rows);
            for (int32_t outputs : c.calls()) {
                Desc d;
                fqtool::configure_call(d.d, c, outputs, arrays.pointers());
                if (outputs & FQ_OUTPUT_COLUMNWISE) fqtool::set_columnwise_buffers(d.d, stand_in.data(), stand_in.data());
                Layout li(c.p.in_type, c.p.rows, c.p.in_cols(), c.p.in_cols()), lo(c.p.out, c.p.rows, c.p.cols, c.p.cols);
                CHECK_MESSAGE(fqQuerySupport(h.h, d.d, li.l, lo.l, nullptr, 0) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
            }
        }
    }
}

TEST_CASE("fq bench: the two calls of col+row-separate write what one call of both writes (host backend)") {
    for (const char* scheme : {"per-group --col-block 128 --transpose 1", "mxfp8 --layouts swizzled"}) {
        CAPTURE(scheme);
        auto cases = sweep(std::string("--moe masked --experts 8 --skew skewed --tokens 40 --hidden 256 --layouts row "
                                       "--outputs both,col+row-separate --scheme ") + scheme);
        REQUIRE(cases.size() == 2);
        std::vector<std::vector<uint8_t>> written[2];
        for (int k = 0; k < 2; ++k) {
            const fqtool::BenchCase& c = cases[size_t(k)];
            const fqtool::MoeRows rows = fqtool::moe_rows(c);
            const HostArrays arrays(c, rows);
            std::mt19937 rng(5);
            const Tensor in{"x", "BF16", {c.p.rows, c.p.in_cols()}, random_halfs(rng, c.p.rows * c.p.in_cols(), true)};
            std::vector<uint8_t> values(size_t(c.p.output_bytes()), 0xAB), col_values(values), scales, col_scales;
            Handle h;
            Layout li(c.p.in_type, c.p.rows, c.p.in_cols(), c.p.in_cols()), lo(c.p.out, c.p.rows, c.p.cols, c.p.cols);
            for (int32_t outputs : c.calls()) {
                Desc d;
                fqtool::configure_call(d.d, c, outputs, arrays.pointers());
                size_t sb = 0, csb = 0;
                if (outputs & FQ_OUTPUT_ROWWISE) REQUIRE(fqGetScaleBufferSize(d.d, c.p.rows, c.p.cols, FQ_OUTPUT_ROWWISE, &sb) == 0);
                if (outputs & FQ_OUTPUT_COLUMNWISE) {
                    REQUIRE(fqGetScaleBufferSize(d.d, c.p.rows, c.p.cols, FQ_OUTPUT_COLUMNWISE, &csb) == 0);
                    col_scales.assign(csb, 0xAB);
                    fqtool::set_columnwise_buffers(d.d, col_values.data(), col_scales.data());
                }
                if (sb) scales.assign(sb, 0xAB);
                const bool row = outputs & FQ_OUTPUT_ROWWISE;
                REQUIRE_MESSAGE(fqQuantize(h.h, d.d, li.l, in.data.data(), lo.l, row ? values.data() : nullptr,
                                           row ? scales.data() : nullptr, sb, nullptr, 0, nullptr) == FQ_STATUS_SUCCESS,
                                fqGetLastErrorMessage());
            }
            written[k] = {values, scales, col_values, col_scales};
        }
        CHECK(written[0] == written[1]);
        CHECK(written[0][3].size() > 0);
    }
}

TEST_CASE("fq bench --help documents the MoE and columnwise options") {
    const std::string help = temp_path("bench-help.txt");
    REQUIRE(std::system(("\"" + std::string(FQ_TOOL_PATH) + "\" bench --help > \"" + help + "\"").c_str()) == 0);
    std::ifstream f(help);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (const char* s : {"--moe", "--experts", "--skew", "--outputs", "col+row-separate", "--col-block", "--transpose",
                          "max_m", "e % 8 == 7", "valid rows only"})
        CHECK_MESSAGE(text.find(s) != std::string::npos, s);
    std::remove(help.c_str());
}

namespace {

struct FqRun {
    int status = -1;   // exit status
    std::string out;   // stdout and stderr together
};

FqRun fq_output(const std::string& args) {
    FqRun r;
    const std::string cmd = "\"" + std::string(FQ_TOOL_PATH) + "\" " + args + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int w = ::pclose(p);
    r.status = WIFEXITED(w) ? WEXITSTATUS(w) : -1;
    return r;
}

std::string dotted(uint32_t v) {
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace

namespace {

// A .safetensors file of a literal header and `data_bytes` zero bytes: what a broken writer could leave.
void write_raw(const std::string& path, const std::string& header, size_t data_bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
    std::fwrite(len, 1, 8, f);
    std::fwrite(header.data(), 1, header.size(), f);
    const std::vector<uint8_t> zeros(data_bytes);
    std::fwrite(zeros.data(), 1, zeros.size(), f);
    std::fclose(f);
}

std::string file_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

}  // namespace

TEST_CASE("fq quantize-weights refuses, with a message and exit != 0, a file the reference safetensors refuses") {
    // Each header fails one of the checks of safetensors' Metadata::validate; the message names it.
    const std::string w = R"("w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]})";
    const struct {
        const char* what;
        std::string header;
        size_t data;
        const char* message;
    } cases[] = {
        {"duplicate key", "{" + w + "," + w + "}", 8, "tensor \"w\" appears twice in the header"},
        {"overlapping offsets", "{" + w + R"(,"v":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]}})", 8, "overlap"},
        {"a gap between tensors", "{" + w + R"(,"v":{"dtype":"U8","shape":[2],"data_offsets":[10,12]}})", 12, "leave a gap"},
        {"offsets past the end", "{" + w + "}", 6, "offsets past the end of the file"},
        {"bytes after the last tensor", "{" + w + "}", 12, "the tensors cover 8 bytes of a data section of 12"},
        {"byte count and shape disagree", R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,8]}})", 8,
         "shape and dtype need 16 bytes, data_offsets give 8"},
        {"unknown dtype", R"({"w":{"dtype":"F12","shape":[2,2],"data_offsets":[0,8]}})", 8, "unknown dtype \"F12\""},
        {"negative dimension", R"({"w":{"dtype":"U8","shape":[-8],"data_offsets":[0,8]}})", 8, "not a non-negative integer"},
        {"end before begin", R"({"w":{"dtype":"U8","shape":[0],"data_offsets":[8,0]}})", 8, "end before they begin"},
    };
    const std::string in = temp_path("broken.safetensors"), out = temp_path("broken-out.safetensors");
    for (const auto& c : cases) {
        const std::string what = c.what;
        CAPTURE(what);
        std::remove(out.c_str());
        write_raw(in, c.header, c.data);
        CHECK_THROWS_WITH_AS(SafetensorsReader{in}, doctest::Contains(c.message), std::runtime_error);
        const FqRun r = fq_output("quantize-weights \"" + in + "\" \"" + out + "\" --backend host --quiet");
        CHECK(r.status != 0);
        CHECK_MESSAGE(r.out.find(c.message) != std::string::npos, r.out);
        CHECK_FALSE(exists(out));
    }
    std::remove(in.c_str());
}

TEST_CASE("fq quantize-weights never overwrites its input: IN == OUT by path, by link, and a failed run") {
    const std::string in = temp_path("keep-in.safetensors");
    write_checkpoint(in, small_checkpoint());
    const std::string before = file_text(in);
    const std::string dir = in.substr(0, in.rfind('/'));
    const std::string hard = temp_path("keep-hard.safetensors"), sym = temp_path("keep-sym.safetensors");
    REQUIRE(::link(in.c_str(), hard.c_str()) == 0);
    REQUIRE(::symlink(in.c_str(), sym.c_str()) == 0);
    const std::string dotted_path = dir + "/../" + dir.substr(dir.rfind('/') + 1) + in.substr(in.rfind('/'));
    for (const std::string& out : {in, dotted_path, hard, sym}) {
        CAPTURE(out);
        const FqRun r = fq_output("quantize-weights \"" + in + "\" \"" + out + "\" --backend host --quiet");
        CHECK(r.status == 2);
        CHECK_MESSAGE(r.out.find("never overwrites its input") != std::string::npos, r.out);
        CHECK(file_text(in) == before);
    }
    // A run that fails leaves an existing OUT as it was and no temporary file beside it.
    const std::string bad = temp_path("keep-bad.safetensors"), out = temp_path("keep-out.safetensors");
    write_raw(bad, R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,8]}})", 8);
    {
        std::ofstream(out) << "an older output";
    }
    CHECK(fq_output("quantize-weights \"" + bad + "\" \"" + out + "\" --backend host --quiet").status != 0);
    CHECK(file_text(out) == "an older output");
    glob_t temps{};
    CHECK(::glob((out + ".fq-tmp-*").c_str(), 0, nullptr, &temps) == GLOB_NOMATCH);
    ::globfree(&temps);
    for (const std::string& p : {in, hard, sym, bad, out}) std::remove(p.c_str());
}

TEST_CASE("fq's arguments (CLI11): --name value, --name=value, the last of a repeated option, flags, positionals") {
    const fqtool::OptionSpec spec = {{"scheme", "keep"}, {"quiet"}};
    const fqtool::Args a({"in", "--scheme", "mxfp8", "--keep=a|b", "--quiet", "out", "--scheme", "nvfp4"}, spec);
    CHECK(a.get("scheme") == "nvfp4");
    CHECK(a.get("keep") == "a|b");
    CHECK(a.has("quiet"));
    CHECK(a.positional() == std::vector<std::string>{"in", "out"});
    CHECK_FALSE(fqtool::Args({"in"}, spec).has("quiet"));
    CHECK_THROWS_WITH_AS(fqtool::Args({"--scheme"}, spec), "option --scheme needs a value", fqtool::ToolError);
    CHECK_THROWS_WITH_AS(fqtool::Args({"--kep", "x"}, spec), "unknown option --kep (did you mean --keep?) (see --help)",
                         fqtool::ToolError);
    const FqRun r = fq_output("quantize-weights a b --skep embed");
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.out.find("unknown option --skep (did you mean --skip?)") != std::string::npos, r.out);
}

TEST_CASE("fq --version, -V and version print the library's version and the header's fq was built with") {
    const std::string expected =
        "libfusedquant " + dotted(fqGetVersion()) + " (fq built with header " + dotted(FQ_VERSION_NUMBER) + ")\n";
    for (const char* arg : {"--version", "-V", "version"}) {
        const FqRun r = fq_output(arg);
        CHECK_MESSAGE(r.status == 0, arg);
        CHECK_MESSAGE(r.out == expected, arg << ": " << r.out);
    }
}

TEST_CASE("fq info: version, the build's CUDA architectures, the GPUs seen and the host backend's variants") {
    const FqRun r = fq_output("info");
    CHECK(r.status == 0);
    INFO(r.out);
    CHECK(r.out.find("libfusedquant " + dotted(fqGetVersion())) != std::string::npos);
    CHECK(r.out.find("CUDA architectures: ") != std::string::npos);
    // A host-only build lists no architectures; either build says which GPUs it sees, or why none.
    int32_t gpus = 0;
    {
        fqHandle_t probe = nullptr;
        if (fqCreate(&probe, FQ_BACKEND_CUDA, -1) == FQ_STATUS_SUCCESS) gpus = 1, fqDestroy(probe);
    }
    if (r.out.find("CUDA architectures: none") != std::string::npos)
        CHECK(r.out.find("CUDA architectures: none: host backend only") != std::string::npos);
    CHECK(r.out.find(gpus ? "GPU 0: compute capability " : "GPUs: none (") != std::string::npos);
    CHECK(r.out.find("host backend:\n") != std::string::npos);
    // The handle's dispatch entries with their FQ_HANDLE_VARIANT index, then the kernel each operation runs.
    CHECK(r.out.find("     0  host.reference: ") != std::string::npos);
    CHECK(r.out.find("  the kernel each operation runs:") != std::string::npos);
    // One line per scheme, each naming the variant fqQuerySupport gives on the host backend.
    fqHandle_t host = nullptr;
    REQUIRE(fqCreate(&host, FQ_BACKEND_HOST, -1) == FQ_STATUS_SUCCESS);
    for (const char* scheme : {"per_tensor_static", "per_tensor", "per_token", "per_group(128)", "block2d", "mxfp8",
                               "mxfp4", "nvfp4"})
        CHECK_MESSAGE(r.out.find(std::string("    ") + scheme + " ") != std::string::npos, scheme);
    CHECK(r.out.find("not supported") == std::string::npos);
    fqDestroy(host);
}

TEST_CASE("fq check --help prints its help and exits 0 on a machine without a GPU") {
    const FqRun r = fq_output("check --help");
    CHECK(r.status == 0);
    CHECK(r.out.find("usage: fq check") != std::string::npos);
}

TEST_CASE("a mistyped option, value or command suggests the closest valid one") {
    CHECK(fqtool::closest("tokns", {"tokens", "hidden", "scheme"}) == "tokens");
    CHECK(fqtool::closest("xyzzy", {"tokens", "hidden", "scheme"}).empty());
    CHECK(fqtool::closest("cases", {"cases", "seed"}) == "cases");

    FqRun r = fq_output("bench --tokns 16");
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.out.find("unknown option --tokns (did you mean --tokens?)") != std::string::npos, r.out);
    r = fq_output("check --case 3");
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.out.find("(did you mean --cases?)") != std::string::npos, r.out);
    r = fq_output("bench --scheme nvfp 4");
    CHECK_MESSAGE(r.out.find("(did you mean nvfp4?)") != std::string::npos, r.out);
    r = fq_output("chek");
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.out.find("unknown command \"chek\" (did you mean check?)") != std::string::npos, r.out);
}

TEST_CASE("fq bench --csv: rows of different keys (NVFP4's global_amax) share one header, the union of keys") {
    // Rows as fq bench writes them: a per-group row, an NVFP4 row with global_amax, another per-group row.
    auto row = [](const std::string& scheme, bool nvfp4) {
        Json o = {{"tokens", 256}, {"scheme", scheme}, {"pdl", 0}};
        if (nvfp4) o["global_amax"] = "device";
        o["moe"] = "none";
        o["status"] = "ok, \"quoted\"";
        return o;
    };
    std::ostringstream out;
    fqtool::write_csv(out, {row("per_group", false), row("nvfp4", true), row("per_group", false)});
    std::istringstream in(out.str());
    std::string line;
    std::vector<std::string> lines;
    while (std::getline(in, line)) lines.push_back(line);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == "tokens,scheme,pdl,moe,status,global_amax");
    CHECK(lines[1] == "256,per_group,0,none,\"ok, \"\"quoted\"\"\",");
    CHECK(lines[2] == "256,nvfp4,0,none,\"ok, \"\"quoted\"\"\",device");
    CHECK(lines[3] == lines[1]);
    // Equal column counts (commas outside quotes) on every line.
    auto columns = [](const std::string& l) {
        size_t n = 1;
        bool quoted = false;
        for (char c : l) {
            if (c == '"') quoted = !quoted;
            else if (c == ',' && !quoted) ++n;
        }
        return n;
    };
    for (const std::string& l : lines) CHECK_MESSAGE(columns(l) == 6, l);
}

TEST_CASE("fq bench --plot: the interpreter that has matplotlib, and how to get it when none has") {
    CHECK(fqtool::python_with_matplotlib({"/nonexistent/python3"}).empty());
    const bool has = std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
    CHECK(fqtool::python_with_matplotlib({"/nonexistent/python3", "python3"}) == (has ? "python3" : ""));
    if (!has && fqtool::python_with_matplotlib({"python"}).empty()) {
        try {
            fqtool::run_plot("plot_bench.py", "bench.json", "bench.png");
            FAIL("run_plot ran without matplotlib");
        } catch (const fqtool::ToolError& e) {
            CHECK(e.exit_code == 1);
            CHECK(std::string(e.what()).find("python3 -m pip install matplotlib") != std::string::npos);
        }
    }
    // plot_bench.py on its own, matplotlib hidden: a sentence naming its interpreter's pip, no traceback.
    const std::string script = std::string(FQ_SOURCE_DIR) + "/tools/fq/plot_bench.py";
    const std::string cmd = "python3 -c \"import runpy, sys; sys.modules['matplotlib'] = None; "
                            "sys.argv = ['plot_bench.py', 'in.json', 'out.png']; "
                            "runpy.run_path('" + script + "', run_name='__main__')\" 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[1024];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int w = ::pclose(p);
    CHECK(WIFEXITED(w));
    CHECK(WEXITSTATUS(w) == 1);
    CHECK_MESSAGE(out.find("-m pip install matplotlib") != std::string::npos, out);
    CHECK_MESSAGE(out.find("Traceback") == std::string::npos, out);
}

TEST_CASE("the comparison fq check and the GPU tests share: edge inputs reach every edge, byte_diff names the first") {
    std::mt19937 rng(5);
    const std::vector<uint16_t> in = fqtool::edge_input(rng, 20000, FQ_TYPE_BF16);
    int nan = 0, inf = 0, huge = 0, tiny = 0;
    for (uint16_t b : in) {
        const float x = fq::bf16_to_float(b);
        nan += std::isnan(x), inf += std::isinf(x);
        huge += std::isfinite(x) && std::fabs(x) > 448.0f;  // past e4m3's range
        tiny += x != 0.0f && std::fabs(x) < 1e-4f;
    }
    CHECK(nan > 20);
    CHECK(inf > 10);
    CHECK(huge > 50);
    CHECK(tiny > 50);
    CHECK(fqtool::byte_diff({1, 2, 3, 4}, {1, 2, 3, 4}).empty());
    CHECK(fqtool::byte_diff({1, 9, 3, 8}, {1, 2, 3, 4}) == "2 of 4 bytes differ; first at 1: got 9 want 2");
    CHECK(fqtool::byte_diff({1}, {1, 2}) == "sizes differ: 1 vs 2");
}
