// fqQuantize resolves its objects once while they stay unchanged (issue 47 item 2): a repeated call on the same
// handle, descriptor and layouts reuses the configuration and the variants it chose, so that it costs what
// executing their plan costs; any attribute write, a new object, or a destroyed one is seen by the next call as
// if nothing were remembered.
#include <cstring>
#include <vector>

#include "alloc_count.h"
#include "fq_test_util.h"

using namespace fqt;

namespace {

struct Problem {
    Handle h;
    Desc d;
    Layout in, out;
    std::vector<uint16_t> x;
    std::vector<uint8_t> y;
    std::vector<float> s;
    explicit Problem(int64_t rows)
        : in(FQ_TYPE_BF16, rows, 256, 256), out(FQ_TYPE_FP8_E4M3FN, rows, 128, 128),
          x(size_t(rows) * 256 + 1), y(size_t(rows) * 128 + 1), s(size_t(rows) + 1) {
        d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
        for (size_t i = 0; i < x.size(); ++i) x[i] = uint16_t(0x3E00 + i % 509);
    }
    fqStatus_t run() {
        return fqQuantize(h.h, d.d, in.l, x.data(), out.l, y.data(), s.data(), s.size() * 4, nullptr, 0, nullptr);
    }
};

}  // namespace

TEST_CASE("a repeated fqQuantize on unchanged objects allocates what executing their plan allocates") {
    Problem p(0);  // no rows: only the reference's own bookkeeping is left to allocate
    fqPlan_t plan = nullptr;
    REQUIRE(fqPlanCreate(&plan, p.h.h, p.d.d, p.in.l, p.out.l) == FQ_STATUS_SUCCESS);
    const auto execute = [&] {
        return fqPlanExecute(plan, p.x.data(), p.y.data(), p.s.data(), p.s.size() * 4, nullptr, 0, nullptr);
    };
    REQUIRE(p.run() == FQ_STATUS_SUCCESS);
    REQUIRE(execute() == FQ_STATUS_SUCCESS);
    int64_t quantize_bytes = 0, plan_bytes = 0;
    {
        AllocationCount count;
        for (int i = 0; i < 4; ++i) REQUIRE(p.run() == FQ_STATUS_SUCCESS);
        quantize_bytes = count.bytes();
    }
    {
        AllocationCount count;
        for (int i = 0; i < 4; ++i) REQUIRE(execute() == FQ_STATUS_SUCCESS);
        plan_bytes = count.bytes();
    }
    fqPlanDestroy(plan);
    MESSAGE("bytes allocated by 4 repeated calls: fqQuantize ", quantize_bytes, ", fqPlanExecute ", plan_bytes);
    CHECK(quantize_bytes == plan_bytes);
}

TEST_CASE("fqQuantize sees every change between calls: attribute writes, a destroyed object, a new one in its slot") {
    Problem p(2);
    REQUIRE(p.run() == FQ_STATUS_SUCCESS);
    const std::vector<uint8_t> silu = p.y;
    p.d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_RELU);  // an attribute write
    REQUIRE(p.run() == FQ_STATUS_SUCCESS);
    const std::vector<uint8_t> relu = p.y;
    CHECK(relu != silu);
    Problem fresh(2);  // the same problem on objects never used before
    fresh.d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_RELU);
    REQUIRE(fresh.run() == FQ_STATUS_SUCCESS);
    CHECK(fresh.y == relu);

    // A layout's rows changed: the call reads the new extent (one row: the second row's bytes stay as poisoned).
    const int64_t one = 1;
    REQUIRE(fqTensorLayoutSetAttribute(p.in.l, FQ_TENSOR_LAYOUT_ROWS, &one, 8) == FQ_STATUS_SUCCESS);
    REQUIRE(fqTensorLayoutSetAttribute(p.out.l, FQ_TENSOR_LAYOUT_ROWS, &one, 8) == FQ_STATUS_SUCCESS);
    std::fill(p.y.begin(), p.y.end(), uint8_t(0xAB));
    REQUIRE(p.run() == FQ_STATUS_SUCCESS);
    CHECK(p.y[127] != 0xAB);
    CHECK(p.y[128] == 0xAB);

    // A destroyed descriptor's value, and a new descriptor (which may reuse its slot), are told apart.
    fqQuantDesc_t old = p.d.d;
    REQUIRE(fqQuantDescDestroy(old) == FQ_STATUS_SUCCESS);
    p.d.d = nullptr;
    CHECK(fqQuantize(p.h.h, old, p.in.l, p.x.data(), p.out.l, p.y.data(), p.s.data(), p.s.size() * 4, nullptr, 0,
                     nullptr) == FQ_STATUS_INVALID_HANDLE);
    REQUIRE(fqQuantDescCreate(&p.d.d) == FQ_STATUS_SUCCESS);  // defaults: identity, not gated
    CHECK(p.run() == FQ_STATUS_INVALID_VALUE);                // a 256-wide input for 128 outputs, not gated
    CHECK(std::string(fqGetLastErrorMessage()).find("inputLayout") != std::string::npos);
}
