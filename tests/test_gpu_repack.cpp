// fqScaleRepack on CUDA (docs/spec.md §0): the kernel writes exactly the host backend's bytes — scales, layout
// padding, rows of no batch — for every layout pair x scale type x batching, from random source bytes into
// poisoned destinations whose neighbours are checked; row offsets on the device (empty experts included);
// graph capture replayed with new scales and new offsets; offsets past 2^31 bytes. Part of fq_gpu_tests,
// whose main() (test_gpu.cpp) exits 77 ("skipped") without a CUDA device.
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "fq_test_util.h"
#include "gpu_buffer.h"
#include "repack_model.h"

using namespace fqt;
namespace rm = repack_model;

namespace {

constexpr uint8_t kPoison = 0xAB, kGuard = 0xE7;
constexpr size_t kGuardBytes = 256;

// "n bytes differ; first at byte i (block b, S[m, k] byte j | padding): got x, want y", or "" when equal.
std::string difference(const rm::Problem& p, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
    if (got.size() != want.size()) return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && bad++ == 0) first = i;
    if (bad == 0) return "";
    return std::to_string(bad) + " bytes differ; first at byte " + std::to_string(first) + " (" +
           rm::where(p, int64_t(first)) + "): got " + std::to_string(got[first]) + ", want " + std::to_string(want[first]);
}

// The host backend's result of p over `src` (the oracle of this file), from a poisoned destination.
std::vector<uint8_t> host_repack(const rm::Problem& p, const std::vector<uint8_t>& src) {
    Handle h;
    std::vector<uint8_t> dst(size_t(p.dst_bytes()), kPoison);
    REQUIRE_MESSAGE(fqScaleRepack(h.h, p.type, p.batch, p.rows, p.groups, p.batching,
                                  p.offsets.empty() ? nullptr : p.offsets.data(), p.stacked_rows, p.src_layout,
                                  src.data(), src.size(), p.dst_layout, dst.data(), dst.size(), nullptr) == FQ_STATUS_SUCCESS,
                    "host: ", fqGetLastErrorMessage());
    return dst;
}

// The device side of one problem: src, offsets and a poisoned dst between guard bytes, each `shift` bytes
// past a 256-byte boundary (byte scales may sit anywhere; fp32 ones take 4-byte multiples).
struct DeviceProblem {
    const rm::Problem& p;
    size_t shift;
    DeviceBuffer<uint8_t> src, dst;
    DeviceBuffer<int32_t> offsets;
    DeviceProblem(const rm::Problem& problem, const std::vector<uint8_t>& host_src, size_t shift_bytes)
        : p(problem), shift(shift_bytes), src(host_src.size() + shift_bytes),
          dst(size_t(problem.dst_bytes()) + 2 * kGuardBytes + shift_bytes), offsets(problem.offsets.size()) {
        CUDA_OK(cudaMemcpy(src.p + shift, host_src.data(), host_src.size(), cudaMemcpyHostToDevice));
        if (!p.offsets.empty()) offsets.upload(p.offsets);
        poison();
    }
    void poison() {
        CUDA_OK(cudaMemset(dst.p, kGuard, dst.n));
        CUDA_OK(cudaMemset(out(), kPoison, size_t(p.dst_bytes())));
    }
    uint8_t* out() const { return dst.p + kGuardBytes + shift; }
    fqStatus_t run(fqHandle_t gpu, cudaStream_t stream = nullptr) const {
        return fqScaleRepack(gpu, p.type, p.batch, p.rows, p.groups, p.batching, p.offsets.empty() ? nullptr : offsets.p,
                             p.stacked_rows, p.src_layout, src.p + shift, src.n - shift, p.dst_layout, out(),
                             size_t(p.dst_bytes()), reinterpret_cast<fqStream_t>(stream));
    }
    // The destination's bytes; `guards` is set to false if a byte around it changed.
    std::vector<uint8_t> result(bool* guards) const {
        const std::vector<uint8_t> all = dst.download();
        const size_t begin = kGuardBytes + shift, end = begin + size_t(p.dst_bytes());
        *guards = true;
        for (size_t i = 0; i < all.size(); ++i)
            if ((i < begin || i >= end) && all[i] != kGuard) *guards = false;
        return {all.begin() + std::ptrdiff_t(begin), all.begin() + std::ptrdiff_t(end)};
    }
};

void check_against_host(fqHandle_t gpu, const rm::Problem& p, std::mt19937& rng, size_t shift) {
    INFO(p.describe(), " shift=", shift);
    const std::vector<uint8_t> src = rm::random_bytes(rng, size_t(p.src_bytes()));
    const std::vector<uint8_t> want = host_repack(p, src);
    DeviceProblem d(p, src, shift);
    REQUIRE_MESSAGE(d.run(gpu) == FQ_STATUS_SUCCESS, "CUDA: ", fqGetLastErrorMessage());
    CUDA_OK(cudaDeviceSynchronize());
    bool guards = false;
    const std::vector<uint8_t> got = d.result(&guards);
    CHECK_MESSAGE(guards, "CUDA wrote outside dst's ", p.dst_bytes(), " bytes");
    const std::string diff = difference(p, got, want);
    CHECK_MESSAGE(diff.empty(), "CUDA vs host: ", diff);
}

rm::Problem problem(int32_t type, int32_t from, int32_t to, int64_t batch, int64_t rows, int64_t groups, int32_t batching,
                    std::mt19937& rng) {
    rm::Problem p;
    p.type = type;
    p.src_layout = from;
    p.dst_layout = to;
    p.batch = batch;
    p.rows = rows;
    p.groups = groups;
    p.batching = batching;
    if (batching != FQ_SCALE_REPACK_BLOCKS) p.offsets = rm::moe_offsets(rng, batch, rows, &p.stacked_rows);
    return p;
}

const int32_t kTypes[] = {FQ_TYPE_FP32, FQ_TYPE_E8M0, FQ_TYPE_FP8_E4M3FN};
const int32_t kBatchings[] = {FQ_SCALE_REPACK_BLOCKS, FQ_SCALE_REPACK_STACKED_TO_BLOCKS, FQ_SCALE_REPACK_BLOCKS_TO_STACKED};

}  // namespace

TEST_CASE("repack on CUDA writes the host's bytes for every layout pair x scale type x batching, device row offsets "
          "with empty experts, aligned and unaligned destinations, and nothing outside dst") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE_MESSAGE(gpu.status == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    std::mt19937 rng(std::random_device{}());
    const unsigned seed = rng();
    MESSAGE("seed ", seed);
    rng.seed(seed);
    struct Shape { int64_t batch, rows, groups; };
    const Shape shapes[] = {{1, 1, 1}, {3, 130, 9}, {2, 0, 5}, {0, 4, 2}, {5, 300, 33}, {1, 4096, 56}};
    int runs = 0;
    for (int32_t type : kTypes)
        for (int32_t from = 0; from < 5; ++from)
            for (int32_t to = 0; to < 5; ++to) {
                if (!rm::layout_holds(from, type) || !rm::layout_holds(to, type)) continue;
                for (const Shape& s : shapes)
                    for (int32_t batching : kBatchings) {
                        const rm::Problem p = problem(type, from, to, s.batch, s.rows, s.groups, batching, rng);
                        check_against_host(gpu.h, p, rng, 0);
                        if (type != FQ_TYPE_FP32) check_against_host(gpu.h, p, rng, 3);  // byte stores
                        runs += type == FQ_TYPE_FP32 ? 1 : 2;
                    }
            }
    MESSAGE(runs, " CUDA repacks compared with the host backend");
}

TEST_CASE("a captured CUDA graph replays the repack with new scales and new device row offsets at the same addresses") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE_MESSAGE(gpu.status == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    std::mt19937 rng(17);
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int32_t batching : kBatchings) {
        rm::Problem p = problem(FQ_TYPE_E8M0, FQ_SCALE_LAYOUT_ROW_MAJOR, FQ_SCALE_LAYOUT_SWIZZLED_128X4, 6, 128, 12,
                                batching, rng);
        if (batching != FQ_SCALE_REPACK_BLOCKS) p.stacked_rows = 6 * (128 + 2) + 2;  // room for any replay's offsets
        CAPTURE(p.describe());
        DeviceProblem d(p, rm::random_bytes(rng, size_t(p.src_bytes())), 0);
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
        const fqStatus_t st = d.run(gpu.h, stream);
        CUDA_OK(cudaStreamEndCapture(stream, &graph));
        REQUIRE_MESSAGE(st == FQ_STATUS_SUCCESS, "captured fqScaleRepack: ", fqGetLastErrorMessage());
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        for (int replay = 0; replay < 3; ++replay) {
            CAPTURE(replay);
            rm::Problem now = p;
            if (batching != FQ_SCALE_REPACK_BLOCKS) {
                int64_t stacked = 0;
                now.offsets = rm::moe_offsets(rng, p.batch, p.rows, &stacked);
                REQUIRE(stacked <= p.stacked_rows);
                d.offsets.upload(now.offsets);
            }
            const std::vector<uint8_t> src = rm::random_bytes(rng, size_t(p.src_bytes()));
            CUDA_OK(cudaMemcpy(d.src.p, src.data(), src.size(), cudaMemcpyHostToDevice));
            d.poison();
            CUDA_OK(cudaDeviceSynchronize());  // the memsets ran on the legacy stream; the graph's does not wait
            CUDA_OK(cudaGraphLaunch(exec, stream));
            CUDA_OK(cudaStreamSynchronize(stream));
            bool guards = false;
            const std::vector<uint8_t> got = d.result(&guards);
            CHECK_MESSAGE(guards, "the replay wrote outside dst");
            const std::string diff = difference(now, got, host_repack(now, src));
            CHECK_MESSAGE(diff.empty(), "replay vs host: ", diff);
        }
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
    cudaStreamDestroy(stream);
}

TEST_CASE("repack refuses host memory on a CUDA handle, naming src, dst or rowOffsets, and writes nothing") {
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE_MESSAGE(gpu.status == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    DeviceBuffer<uint8_t> d_src(64), d_dst(64);
    DeviceBuffer<int32_t> d_off(3);
    d_off.upload({0, 2, 4});
    std::vector<uint8_t> h_src(64, 1), h_dst(64, kPoison);
    std::vector<int32_t> h_off = {0, 2, 4};
    struct Way { const char* arg; const void* src; void* dst; const int32_t* off; };
    const Way ways[] = {{"src", h_src.data(), d_dst.p, d_off.p}, {"dst", d_src.p, h_dst.data(), d_off.p},
                        {"rowOffsets", d_src.p, d_dst.p, h_off.data()}};
    for (const Way& w : ways) {
        CAPTURE(w.arg);
        const fqStatus_t s = fqScaleRepack(gpu.h, FQ_TYPE_E8M0, 2, 4, 4, FQ_SCALE_REPACK_STACKED_TO_BLOCKS, w.off, 4,
                                           FQ_SCALE_LAYOUT_ROW_MAJOR, w.src, 64, FQ_SCALE_LAYOUT_COL_MAJOR, w.dst, 64, nullptr);
        CHECK(s == FQ_STATUS_INVALID_VALUE);
        CHECK(std::string(fqGetLastErrorMessage()).rfind(w.arg, 0) == 0);
    }
    CHECK(h_dst == std::vector<uint8_t>(64, kPoison));
}

TEST_CASE("repack past 2^31 destination bytes uses 64-bit offsets (E8M0 ROW_MAJOR -> COL_MAJOR, sampled and last rows)") {
    const int64_t rows = (int64_t(1) << 16) + 3, groups = (int64_t(1) << 15) + 1;  // 2^31 + 2^16 + ... bytes
    const size_t bytes = size_t(rows * groups);
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    if (free_bytes < 2 * bytes + (size_t(1) << 30)) {
        MESSAGE("skipped: needs ", (2 * bytes) >> 30, " GiB of device memory");
        return;
    }
    Handle gpu(FQ_BACKEND_CUDA, 0);
    REQUIRE_MESSAGE(gpu.status == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    // S[m, k] = a hash of (m, k): a misplaced scale shows.
    auto scale = [](int64_t m, int64_t k) { return uint8_t((uint64_t(m) * 2654435761u + uint64_t(k) * 40503u) >> 7); };
    std::vector<uint8_t> src(bytes);
    for (int64_t m = 0; m < rows; ++m)
        for (int64_t k = 0; k < groups; ++k) src[size_t(m * groups + k)] = scale(m, k);
    DeviceBuffer<uint8_t> d_src(bytes), d_dst(bytes);
    d_src.upload(src);
    src.clear();
    src.shrink_to_fit();
    CUDA_OK(cudaMemset(d_dst.p, kPoison, bytes));
    REQUIRE_MESSAGE(fqScaleRepack(gpu.h, FQ_TYPE_E8M0, 1, rows, groups, FQ_SCALE_REPACK_BLOCKS, nullptr, 0,
                                  FQ_SCALE_LAYOUT_ROW_MAJOR, d_src.p, bytes, FQ_SCALE_LAYOUT_COL_MAJOR, d_dst.p, bytes,
                                  nullptr) == FQ_STATUS_SUCCESS, fqGetLastErrorMessage());
    CUDA_OK(cudaDeviceSynchronize());
    const std::vector<uint8_t> got = d_dst.download();
    size_t bad = 0, checked = 0;
    std::mt19937_64 rng(5);
    auto check_at = [&](int64_t m, int64_t k) {
        ++checked;
        const uint8_t g = got[size_t(k * rows + m)], w = scale(m, k);
        if (g != w && bad++ < 5) FAIL_CHECK("S[", m, ", ", k, "] at byte ", k * rows + m, ": got ", int(g), ", want ", int(w));
    };
    for (int i = 0; i < 1000000; ++i) check_at(int64_t(rng() % uint64_t(rows)), int64_t(rng() % uint64_t(groups)));
    for (int64_t k = groups - 64; k < groups; ++k)  // the last columns: byte offsets past 2^31
        for (int64_t m = 0; m < rows; ++m) check_at(m, k);
    MESSAGE(checked, " scales checked");
    CHECK(bad == 0);
}
