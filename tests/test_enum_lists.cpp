// The one list of each enumeration (src/common/enum_lists.h) against the public header, and every entry of the
// activation and scale-layout lists through the host backend: a new line in a list is tested here without a
// test of its own (with -DFQ_TEST_EXTENSIONS=ON, the test-only activation and layout of CONTRIBUTING.md too).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "common/activation.h"
#include "common/enum_lists.h"
#include "common/scale_layout.h"
#include "fq_test_util.h"

using namespace fqt;

namespace {

struct Entry {
    int32_t value;
    const char* name;
};

#define FQ_ENTRY(Internal, value, NAME, ...) {value, #NAME},
const Entry kActivations[] = {FQ_ACTIVATIONS(FQ_ENTRY)};
const Entry kPublicActivations[] = {FQ_PUBLIC_ACTIVATIONS(FQ_ENTRY)};
const Entry kSchemes[] = {FQ_SCHEMES(FQ_ENTRY)};
const Entry kScaleLayouts[] = {FQ_SCALE_LAYOUTS(FQ_ENTRY)};
const Entry kPublicScaleLayouts[] = {FQ_PUBLIC_SCALE_LAYOUTS(FQ_ENTRY)};
const Entry kGateLayouts[] = {FQ_GATE_LAYOUTS(FQ_ENTRY)};
#undef FQ_ENTRY

// NAME -> value of every member of `enum <c_enum> { ... };` in the public header.
std::map<std::string, int32_t> header_enum(const std::string& c_enum, const std::string& prefix) {
    std::ifstream f(FQ_PUBLIC_HEADER);
    std::stringstream text;
    text << f.rdbuf();
    const std::string h = text.str();
    const size_t at = h.find("enum " + c_enum + " {");
    REQUIRE(at != std::string::npos);
    const std::string body = h.substr(at, h.find("};", at) - at);
    std::map<std::string, int32_t> out;
    const std::regex member(prefix + "([A-Z0-9_]+) = ([0-9]+)");
    for (std::sregex_iterator i(body.begin(), body.end(), member), end; i != end; ++i)
        out[(*i)[1].str()] = std::stoi((*i)[2].str());
    return out;
}

template <size_t N>
void same_as_header(const Entry (&list)[N], const std::string& c_enum, const std::string& prefix) {
    CAPTURE(c_enum);
    const auto header = header_enum(c_enum, prefix);
    CHECK(header.size() == N);
    for (const Entry& e : list) {
        CAPTURE(e.name);
        REQUIRE(header.count(e.name) == 1);
        CHECK(header.at(e.name) == e.value);
    }
}

// Shapes whose padding differs in every layout: rows below, at and past 32 and 128, columns below and past 4.
const int64_t kRows[] = {0, 1, 5, 33, 128, 130};
const int64_t kGroups[] = {1, 3, 4, 7, 16};

}  // namespace

TEST_CASE("each list names the public header's values, no more, no fewer (test-only entries aside)") {
    same_as_header(kPublicActivations, "fqActivation", "FQ_ACTIVATION_");
    same_as_header(kSchemes, "fqQuantScheme", "FQ_SCHEME_");
    same_as_header(kPublicScaleLayouts, "fqScaleLayout", "FQ_SCALE_LAYOUT_");
    same_as_header(kGateLayouts, "fqGateLayout", "FQ_GATE_LAYOUT_");
}

TEST_CASE("every scale layout: strides equal its index function, and scale_at_offset inverts it over every byte") {
    for (const Entry& layout : kScaleLayouts)
        for (fq::DType type : {fq::DType::Fp32, fq::DType::E8M0})
            for (int64_t rows : kRows)
                for (int64_t groups : kGroups) {
                    CAPTURE(std::string(layout.name));
                    CAPTURE(int(type));
                    CAPTURE(rows);
                    CAPTURE(groups);
                    size_t api_bytes = 0;  // the API's answer, and whether the layout holds this type at all
                    if (fqGetScaleRepackSize(int32_t(type), 1, rows, groups, layout.value, &api_bytes) != FQ_STATUS_SUCCESS)
                        continue;
                    const fq::ScaleGeometry g = fq::make_scale_geometry(fq::ScaleLayout(layout.value), type, rows, groups);
                    CHECK(int64_t(api_bytes) == g.bytes);
                    const fq::ScaleStrides s = fq::scale_strides(g);
                    const int64_t eb = fq::scale_type_bytes(type);
                    std::vector<int> hits(size_t(g.bytes), 0);
                    for (int64_t m = 0; m < g.padded_rows; ++m)
                        for (int64_t k = 0; k < fq::padded_scale_cols(g); ++k) {
                            const int64_t o = fq::scale_offset(g, m, k);
                            REQUIRE(fq::scale_offset(s, m, k) == o);
                            REQUIRE(o >= 0);
                            REQUIRE(o + eb <= g.bytes);
                            for (int64_t b = 0; b < eb; ++b) ++hits[size_t(o + b)];
                        }
                    for (int64_t o = 0; o < g.bytes; ++o) REQUIRE(hits[size_t(o)] == 1);  // padding slots included
                    for (int64_t o = 0; o < g.bytes; o += eb) {
                        const fq::ScaleIndex at = fq::scale_at_offset(g, o);
                        if (!at.valid) continue;
                        REQUIRE(fq::scale_offset(g, at.m, at.k) == o);
                    }
                    int64_t valid = 0;
                    for (int64_t o = 0; o < g.bytes; o += eb) valid += fq::scale_at_offset(g, o).valid;
                    CHECK(valid == rows * groups);
                }
}

TEST_CASE("every scale layout on the host backend: fqQuantize puts S[m, k] where the index function says, zeros the "
          "padding, and fqScaleRepack moves it to ROW_MAJOR and back") {
    const int64_t rows = 33, cols = 224;  // 7 MXFP8 groups: a partial 4-column tile
    std::mt19937 rng(11);
    std::normal_distribution<float> n(0.0f, 2.0f);
    std::vector<float> x(size_t(rows * cols));
    for (float& v : x) v = n(rng);
    const std::vector<uint16_t> in = to_bf16(x);
    auto run = [&](int32_t layout) {
        Desc d;
        d.i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_MXFP8).i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0)
            .i32(FQ_QUANT_DESC_SCALE_LAYOUT, layout);
        HostRun r(d, in, rows, cols, cols, cols);
        REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
        return r;
    };
    const HostRun row_major = run(FQ_SCALE_LAYOUT_ROW_MAJOR);
    const int64_t groups = cols / 32;
    for (const Entry& layout : kScaleLayouts) {
        CAPTURE(std::string(layout.name));
        const HostRun r = run(layout.value);
        CHECK(r.out == row_major.out);
        const fq::ScaleGeometry g = fq::make_scale_geometry(fq::ScaleLayout(layout.value), fq::DType::E8M0, rows, groups);
        REQUIRE(int64_t(r.scales.size()) == g.bytes);
        std::vector<uint8_t> want(size_t(g.bytes), 0);
        for (int64_t m = 0; m < rows; ++m)
            for (int64_t k = 0; k < groups; ++k) want[size_t(fq::scale_offset(g, m, k))] = row_major.scales[size_t(m * groups + k)];
        CHECK(r.scales == want);

        Handle h;
        std::vector<uint8_t> back(row_major.scales.size(), 0xAB), again(r.scales.size(), 0xAB);
        REQUIRE_MESSAGE(fqScaleRepack(h.h, FQ_TYPE_E8M0, 1, rows, groups, FQ_SCALE_REPACK_BLOCKS, nullptr, 0, layout.value,
                                      r.scales.data(), r.scales.size(), FQ_SCALE_LAYOUT_ROW_MAJOR, back.data(), back.size(),
                                      nullptr) == FQ_STATUS_SUCCESS,
                        fqGetLastErrorMessage());
        CHECK(back == row_major.scales);
        REQUIRE(fqScaleRepack(h.h, FQ_TYPE_E8M0, 1, rows, groups, FQ_SCALE_REPACK_BLOCKS, nullptr, 0, FQ_SCALE_LAYOUT_ROW_MAJOR,
                              back.data(), back.size(), layout.value, again.data(), again.size(), nullptr) == FQ_STATUS_SUCCESS);
        CHECK(again == r.scales);
    }
}

TEST_CASE("every activation on the host backend, ungated and gated (split): decoded codes are y = act(g) * u within "
          "FP8 rounding") {
    const int64_t rows = 4, cols = 64;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-6.0f, 6.0f);
    for (const Entry& act : kActivations)
        for (int32_t gate : {FQ_GATE_LAYOUT_NONE, FQ_GATE_LAYOUT_SPLIT}) {
            if (fq::Act(act.value) == fq::Act::SwigluOai && gate == FQ_GATE_LAYOUT_NONE) continue;  // gated only
            CAPTURE(std::string(act.name));
            CAPTURE(gate);
            const int64_t in_cols = gate == FQ_GATE_LAYOUT_NONE ? cols : 2 * cols;
            std::vector<float> x(size_t(rows * in_cols));
            for (float& v : x) v = fq::bf16_to_float(fq::float_to_bf16(u(rng)));
            Desc d;
            d.i32(FQ_QUANT_DESC_ACTIVATION, act.value).i32(FQ_QUANT_DESC_GATE_LAYOUT, gate).i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
            const HostRun r(d, to_bf16(x), rows, in_cols, in_cols, cols);
            REQUIRE_MESSAGE(r.status == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
            const fq::SwigluParams p;
            for (int64_t m = 0; m < rows; ++m)
                for (int64_t j = 0; j < cols; ++j) {
                    const float* row = x.data() + m * in_cols;
                    const float y = gate == FQ_GATE_LAYOUT_NONE
                                        ? fq::activate(fq::Act(act.value), row[j])
                                        : fq::activate_gated(fq::Act(act.value), row[j], row[cols + j], fq::Rounding::Fp32,
                                                             fq::InType::Bf16, p);
                    const float s = scale_at(r.scales, size_t(m * (cols / 32) + j / 32));  // ROW_MAJOR fp32
                    const float got = fq::decode_minifloat(fq::kE4M3FN, r.out[size_t(m * cols + j)]) * s;
                    CAPTURE(m);
                    CAPTURE(j);
                    REQUIRE(std::fabs(got - y) <= std::fabs(y) / 16 + s * 0x1p-9f);  // half an e4m3 step
                }
        }
}
