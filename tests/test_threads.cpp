// One handle used from several host threads at once: every thread's result equals, bit for bit, the same
// problem run alone on one thread, and repeated concurrent runs are identical. The thread-local error
// message of a failing thread is its own.
#include <algorithm>
#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fq_test_util.h"

using namespace fqt;

namespace {

constexpr int kThreads = 8;

// One thread's problem: its own input and shape; the descriptor is shared by threads with the same
// `kind` (the handle by all of them).
struct Work {
    int kind;
    int64_t rows, hidden;
    std::vector<uint16_t> input;
};

Work make_work(int i) {
    Work w{i % 4, 17 + 13 * i, 128 + 64 * (i % 3), {}};
    std::mt19937 rng(uint32_t(1000 + i));
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> x(size_t(w.rows * 2 * w.hidden));
    for (float& v : x) v = normal(rng);
    x[0] = 1e30f;  // an outlier in one group
    w.input = to_bf16(x);
    return w;
}

// The four descriptors: SiLU per-group 128 row-major; GELU per-token; SwiGLU-OAI per-tensor dynamic e5m2;
// ReLU² per-group 32 with E8M0 power-of-two scales in the column-major TMA layout.
void configure(Desc& d, int kind) {
    d.i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_SPLIT);
    switch (kind) {
        case 0: d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GROUP_SIZE, 128); break;
        case 1: d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_GELU_ERF).i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TOKEN); break;
        case 2:
            d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SWIGLU_OAI).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_INTERLEAVED)
                .i32(FQ_QUANT_DESC_SCHEME, FQ_SCHEME_PER_TENSOR_DYNAMIC).i32(FQ_QUANT_DESC_OUTPUT_TYPE, FQ_TYPE_FP8_E5M2);
            break;
        default:
            d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_RELU_SQUARED).i32(FQ_QUANT_DESC_GROUP_SIZE, 32)
                .i32(FQ_QUANT_DESC_SCALE_TYPE, FQ_TYPE_E8M0).i32(FQ_QUANT_DESC_SCALE_ROUNDING, FQ_SCALE_ROUNDING_POW2_CEIL)
                .i32(FQ_QUANT_DESC_SCALE_LAYOUT, FQ_SCALE_LAYOUT_COL_MAJOR_TMA);
            break;
    }
}

int32_t output_type(int kind) { return kind == 2 ? FQ_TYPE_FP8_E5M2 : FQ_TYPE_FP8_E4M3FN; }

struct Result {
    fqStatus_t status = -1;
    std::string message;
    std::vector<uint8_t> out, scales;
    bool operator==(const Result& o) const { return status == o.status && out == o.out && scales == o.scales; }
};

// Thread-safe: plain C calls, no doctest assertion (the checks run on the main thread after joining).
Result run(fqHandle_t h, const Desc& d, const Work& w) {
    Result r;
    fqTensorLayout_t li = nullptr, lo = nullptr;
    size_t sb = 0;
    fqTensorLayoutCreate(&li, FQ_TYPE_BF16, w.rows, 2 * w.hidden, 2 * w.hidden);
    fqTensorLayoutCreate(&lo, output_type(w.kind), w.rows, w.hidden, w.hidden);
    r.status = fqGetScaleBufferSize(d.d, w.rows, w.hidden, FQ_OUTPUT_ROWWISE, &sb);
    r.out.assign(size_t(w.rows * w.hidden), 0xAB);
    r.scales.assign(sb, 0xAB);
    if (r.status == FQ_STATUS_SUCCESS)
        r.status = fqQuantize(h, d.d, li, w.input.data(), lo, r.out.data(), r.scales.data(), sb, nullptr, 0, nullptr);
    r.message = fqGetLastErrorMessage();
    fqTensorLayoutDestroy(lo);
    fqTensorLayoutDestroy(li);
    return r;
}

}  // namespace

TEST_CASE("one handle from 8 threads at once: results equal single-threaded runs bit for bit, every time") {
    Handle h;
    REQUIRE(h.status == FQ_STATUS_SUCCESS);
    Desc descs[4];
    for (int k = 0; k < 4; ++k) configure(descs[k], k);
    std::vector<Work> work;
    for (int i = 0; i < kThreads; ++i) work.push_back(make_work(i));

    // The reference: each problem alone, on this thread.
    std::vector<Result> alone;
    for (const Work& w : work) {
        alone.push_back(run(h.h, descs[w.kind], w));
        REQUIRE_MESSAGE(alone.back().status == FQ_STATUS_SUCCESS, alone.back().message);
    }

    // The threads only record; the checks run after joining.
    constexpr int kRounds = 3, kRepeats = 8;
    for (int round = 0; round < kRounds; ++round) {
        std::vector<std::vector<Result>> got(kThreads);
        std::atomic<int> ready{0};
        std::vector<std::thread> threads;
        for (int i = 0; i < kThreads; ++i)
            threads.emplace_back([&, i] {
                ready.fetch_add(1);
                while (ready.load() < kThreads) std::this_thread::yield();  // start together
                for (int r = 0; r < kRepeats; ++r) got[size_t(i)].push_back(run(h.h, descs[work[size_t(i)].kind], work[size_t(i)]));
            });
        for (std::thread& t : threads) t.join();
        for (int i = 0; i < kThreads; ++i)
            for (int r = 0; r < kRepeats; ++r) {
                CAPTURE(round);
                CAPTURE(i);
                CAPTURE(r);
                const Result& g = got[size_t(i)][size_t(r)];
                CHECK_MESSAGE(g.status == FQ_STATUS_SUCCESS, g.message);
                CHECK(g.message.empty());
                CHECK(g.out == alone[size_t(i)].out);
                CHECK(g.scales == alone[size_t(i)].scales);
            }
    }
}

TEST_CASE("error messages are per thread: a failing thread sees its own while the others succeed") {
    Handle h;
    Desc good, bad;
    configure(good, 0);
    configure(bad, 0);
    bad.i32(FQ_QUANT_DESC_GROUP_SIZE, 48);  // refused at execution
    const Work w = make_work(0);
    std::vector<Result> got(kThreads);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
        threads.emplace_back([&, i] {
            ready.fetch_add(1);
            while (ready.load() < kThreads) std::this_thread::yield();
            for (int r = 0; r < 20; ++r) got[size_t(i)] = run(h.h, i % 2 ? bad : good, w);
        });
    for (std::thread& t : threads) t.join();
    for (int i = 0; i < kThreads; ++i) {
        CAPTURE(i);
        if (i % 2) {
            CHECK(got[size_t(i)].status == FQ_STATUS_INVALID_VALUE);
            CHECK(got[size_t(i)].message.find("FQ_QUANT_DESC_GROUP_SIZE") != std::string::npos);
        } else {
            CHECK(got[size_t(i)].status == FQ_STATUS_SUCCESS);
            CHECK(got[size_t(i)].message.empty());
        }
    }
}

TEST_CASE("objects created and destroyed on many threads at once stay distinct and detectable") {
    std::atomic<int> ready{0}, failures{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
        threads.emplace_back([&] {
            ready.fetch_add(1);
            while (ready.load() < kThreads) std::this_thread::yield();
            for (int r = 0; r < 200; ++r) {
                fqHandle_t h = nullptr;
                fqQuantDesc_t d = nullptr;
                fqTensorLayout_t l = nullptr;
                if (fqCreate(&h, FQ_BACKEND_HOST, -1) != FQ_STATUS_SUCCESS) ++failures;
                if (fqQuantDescCreate(&d) != FQ_STATUS_SUCCESS) ++failures;
                if (fqTensorLayoutCreate(&l, FQ_TYPE_BF16, 1, 8, 8) != FQ_STATUS_SUCCESS) ++failures;
                int32_t n = 0;
                if (fqGetVariantCount(h, &n) != FQ_STATUS_SUCCESS || n < 1) ++failures;
                if (fqGetVariantCount(reinterpret_cast<fqHandle_t>(d), &n) != FQ_STATUS_INVALID_HANDLE) ++failures;
                if (fqTensorLayoutDestroy(l) != FQ_STATUS_SUCCESS) ++failures;
                if (fqQuantDescDestroy(d) != FQ_STATUS_SUCCESS) ++failures;
                if (fqDestroy(h) != FQ_STATUS_SUCCESS) ++failures;
            }
        });
    for (std::thread& t : threads) t.join();
    CHECK(failures.load() == 0);
}

namespace {

// n bytes of `fill` with guard bytes on both sides.
struct Guarded {
    static constexpr int64_t kGuard = 64;
    static constexpr uint8_t kPoison = 0xA5;
    std::vector<uint8_t> bytes;
    explicit Guarded(int64_t n, uint8_t fill) : bytes(size_t(n + 2 * kGuard), kPoison) {
        std::fill(bytes.begin() + kGuard, bytes.end() - kGuard, fill);
    }
    uint8_t* data() { return bytes.data() + kGuard; }
    int64_t size() const { return int64_t(bytes.size()) - 2 * kGuard; }
    bool intact() const {
        auto poison = [](uint8_t b) { return b == kPoison; };
        return std::all_of(bytes.begin(), bytes.begin() + kGuard, poison) && std::all_of(bytes.end() - kGuard, bytes.end(), poison);
    }
};

}  // namespace

// Objects read once (docs/api.md, "Threads"): a descriptor and layouts that another thread rewrites while calls
// run give each call one configuration or a refusal, never a mix of a validated value and a later one. Two
// configurations, and the refused states the mutator passes through between them (a gate block width that does
// not divide the width, ld below cols, a gated input whose width is not twice the output's); the buffers hold
// the larger configuration, with guard bytes on both sides.
TEST_CASE("a descriptor and layouts changed by another thread during calls: no access past a buffer, only valid results") {
    constexpr int64_t kRows = 8, kSmall = 64, kLarge = 1024;
    Handle h;
    Desc d;
    d.i32(FQ_QUANT_DESC_ACTIVATION, FQ_ACTIVATION_SILU).i32(FQ_QUANT_DESC_GATE_LAYOUT, FQ_GATE_LAYOUT_BLOCK_INTERLEAVED)
        .i32(FQ_QUANT_DESC_GROUP_SIZE, 32);
    Layout in(FQ_TYPE_BF16, kRows, 2 * kSmall, 2 * kSmall), out(FQ_TYPE_FP8_E4M3FN, kRows, kSmall, kSmall);

    // Buffers of the larger configuration (per-group 32 scales are the most), guard bytes around each.
    Guarded input(kRows * 2 * kLarge * 2, 0x3F);  // bf16 0x3F3F ~ 0.75
    constexpr int kWorkers = 3;
    std::vector<Guarded> outputs, scales;
    for (int i = 0; i < kWorkers; ++i) {
        outputs.emplace_back(kRows * kLarge, 0);
        scales.emplace_back(kRows * (kLarge / 32) * 4, 0);
    }

    std::atomic<bool> stop{false};
    std::atomic<int> unexpected{0}, succeeded{0}, calls{0};
    std::thread mutator([&] {
        auto set_desc = [&](int32_t attr, int32_t v) { fqQuantDescSetAttribute(d.d, attr, &v, sizeof v); };
        auto set_layout = [&](fqTensorLayout_t l, int32_t attr, int64_t v) { fqTensorLayoutSetAttribute(l, attr, &v, sizeof v); };
        for (int64_t i = 0; !stop.load(); ++i) {
            const int64_t hidden = i % 2 ? kLarge : kSmall;
            set_desc(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, 1 << 16);  // divides neither width: refused while it lasts
            const bool per_token = i % 3 == 0;
            set_desc(FQ_QUANT_DESC_SCHEME, per_token ? FQ_SCHEME_PER_TOKEN : FQ_SCHEME_PER_GROUP);
            set_desc(FQ_QUANT_DESC_GROUP_SIZE, per_token ? 0 : i % 2 ? 128 : 32);
            for (fqTensorLayout_t l : {in.l, out.l}) {
                const int64_t cols = l == in.l ? 2 * hidden : hidden;
                if (cols > kSmall * 2) set_layout(l, FQ_TENSOR_LAYOUT_LD, cols);  // ld >= cols on the way up
                set_layout(l, FQ_TENSOR_LAYOUT_COLS, cols);
                set_layout(l, FQ_TENSOR_LAYOUT_LD, cols);
            }
            set_desc(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, 32);
            // Flips of the block width under running calls (a call that read it twice would see two values), then
            // a valid configuration the workers run some calls with before the next change.
            for (int flip = 0; flip < 256; ++flip) {
                set_desc(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, 1 << 16);
                set_desc(FQ_QUANT_DESC_GATE_BLOCK_WIDTH, 32);
            }
            const int target = calls.load() + kWorkers;
            while (calls.load() < target && !stop.load()) std::this_thread::yield();
        }
    });
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w)
        workers.emplace_back([&, w] {
            for (int r = 0; r < 3000; ++r) {
                const fqStatus_t s = fqQuantize(h.h, d.d, in.l, input.data(), out.l, outputs[size_t(w)].data(),
                                                scales[size_t(w)].data(), size_t(scales[size_t(w)].size()), nullptr, 0,
                                                nullptr);
                ++calls;
                if (s == FQ_STATUS_SUCCESS) ++succeeded;
                else if (s != FQ_STATUS_INVALID_VALUE) ++unexpected;
            }
        });
    for (std::thread& t : workers) t.join();
    stop = true;
    mutator.join();
    CHECK(unexpected.load() == 0);
    CHECK(succeeded.load() > 0);
    CHECK(input.intact());
    for (int w = 0; w < kWorkers; ++w) {
        CAPTURE(w);
        CHECK(outputs[size_t(w)].intact());
        CHECK(scales[size_t(w)].intact());
    }
}

TEST_CASE("one plan executed by 8 threads at once while another rewrites the descriptor it was made from: the "
          "plan's bytes every time") {
    Handle h;
    REQUIRE(h.status == FQ_STATUS_SUCCESS);
    Desc d;
    configure(d, 0);
    const Work w = make_work(3);
    const Result alone = run(h.h, d, w);
    REQUIRE_MESSAGE(alone.status == FQ_STATUS_SUCCESS, alone.message);
    Layout li(FQ_TYPE_BF16, w.rows, 2 * w.hidden, 2 * w.hidden), lo(output_type(w.kind), w.rows, w.hidden, w.hidden);
    fqPlan_t plan = nullptr;
    REQUIRE(fqPlanCreate(&plan, h.h, d.d, li.l, lo.l) == FQ_STATUS_SUCCESS);

    constexpr int kRepeats = 16;
    std::vector<std::vector<Result>> got(kThreads);
    std::atomic<bool> done{false};
    std::thread writer([&] {  // the descriptor the plan came from, changed back and forth (fqQuantize sees it)
        for (int32_t act = FQ_ACTIVATION_RELU; !done.load(); act = act == FQ_ACTIVATION_RELU ? FQ_ACTIVATION_SILU : FQ_ACTIVATION_RELU)
            fqQuantDescSetAttribute(d.d, FQ_QUANT_DESC_ACTIVATION, &act, 4);
    });
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
        threads.emplace_back([&, i] {
            for (int r = 0; r < kRepeats; ++r) {
                Result g;
                g.out.assign(alone.out.size(), 0xAB);
                g.scales.assign(alone.scales.size(), 0xAB);
                g.status = fqPlanExecute(plan, w.input.data(), g.out.data(), g.scales.data(), g.scales.size(), nullptr, 0,
                                         nullptr);
                g.message = fqGetLastErrorMessage();
                got[size_t(i)].push_back(std::move(g));
                // fqQuantize on the same thread between executions: its own objects, resolved or remembered
                run(h.h, d, w);
            }
        });
    for (std::thread& t : threads) t.join();
    done = true;
    writer.join();
    fqPlanDestroy(plan);
    for (int i = 0; i < kThreads; ++i)
        for (int r = 0; r < kRepeats; ++r) {
            CAPTURE(i);
            CAPTURE(r);
            const Result& g = got[size_t(i)][size_t(r)];
            CHECK_MESSAGE(g.status == FQ_STATUS_SUCCESS, g.message);
            CHECK(g.out == alone.out);
            CHECK(g.scales == alone.scales);
        }
}
