// Small RAII helpers over the public C API for the tests.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/formats.h"
#include "fusedquant/fusedquant.h"

namespace fqt {

struct Handle {
    fqHandle_t h = nullptr;
    explicit Handle(int32_t backend = FQ_BACKEND_HOST, int32_t device = -1) { status = fqCreate(&h, backend, device); }
    ~Handle() { fqDestroy(h); }
    fqStatus_t status;
};

struct Desc {
    fqQuantDesc_t d = nullptr;
    Desc() { REQUIRE(fqQuantDescCreate(&d) == FQ_STATUS_SUCCESS); }
    ~Desc() { fqQuantDescDestroy(d); }
    Desc& i32(int32_t attr, int32_t v) { REQUIRE_MESSAGE(fqQuantDescSetAttribute(d, attr, &v, 4) == 0, fqGetLastErrorMessage()); return *this; }
    Desc& f32(int32_t attr, float v) { REQUIRE_MESSAGE(fqQuantDescSetAttribute(d, attr, &v, 4) == 0, fqGetLastErrorMessage()); return *this; }
    Desc& ptr(int32_t attr, const void* v) { REQUIRE(fqQuantDescSetAttribute(d, attr, &v, sizeof v) == 0); return *this; }
};

struct GemmDesc {
    fqGroupedGemmDesc_t d = nullptr;
    GemmDesc() { REQUIRE(fqGroupedGemmDescCreate(&d) == FQ_STATUS_SUCCESS); }
    ~GemmDesc() { fqGroupedGemmDescDestroy(d); }
    GemmDesc(const GemmDesc&) = delete;
    GemmDesc& operator=(const GemmDesc&) = delete;
    GemmDesc& i32(int32_t attr, int32_t v) {
        REQUIRE_MESSAGE(fqGroupedGemmDescSetAttribute(d, attr, &v, 4) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
        return *this;
    }
    GemmDesc& ptr(int32_t attr, const void* v) {
        REQUIRE_MESSAGE(fqGroupedGemmDescSetAttribute(d, attr, &v, sizeof v) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
        return *this;
    }
};

struct Layout {
    fqTensorLayout_t l = nullptr;
    Layout(int32_t dtype, int64_t rows, int64_t cols, int64_t ld) {
        REQUIRE_MESSAGE(fqTensorLayoutCreate(&l, dtype, rows, cols, ld) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    }
    ~Layout() { fqTensorLayoutDestroy(l); }
};

inline std::vector<uint16_t> to_bf16(const std::vector<float>& v) {
    std::vector<uint16_t> out;
    for (float x : v) out.push_back(fq::float_to_bf16(x));
    return out;
}

inline float scale_at(const std::vector<uint8_t>& s, size_t i) {
    float f;
    std::memcpy(&f, s.data() + 4 * i, 4);
    return f;
}

inline size_t scale_bytes(const Desc& d, int64_t rows, int64_t cols) {
    size_t b = 0;
    REQUIRE_MESSAGE(fqGetScaleBufferSize(d.d, rows, cols, FQ_OUTPUT_ROWWISE, &b) == 0, fqGetLastErrorMessage());
    return b;
}

// Runs d on the host backend; input [rows, in_cols] bf16 with row stride in_ld; returns the status.
struct HostRun {
    std::vector<uint8_t> out, scales;
    fqStatus_t status;
    HostRun(const Desc& d, const std::vector<uint16_t>& in, int64_t rows, int64_t in_cols, int64_t in_ld,
            int64_t cols, int32_t out_type = FQ_TYPE_FP8_E4M3FN, uint8_t poison = 0xAB) {
        Handle h;
        Layout li(FQ_TYPE_BF16, rows, in_cols, in_ld), lo(out_type, rows, cols, cols);
        out.assign(size_t(rows * cols), poison);
        scales.assign(scale_bytes(d, rows, cols), poison);
        status = fqQuantize(h.h, d.d, li.l, in.data(), lo.l, out.data(), scales.data(), scales.size(), nullptr, 0, nullptr);
    }
};

}  // namespace fqt
