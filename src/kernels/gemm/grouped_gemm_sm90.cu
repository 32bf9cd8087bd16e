// Grouped FP8 GEMM with the activation + quantization epilogue fused, for Hopper (sm_90a): the host side (tensor
// maps, shared memory, occupancy, the launch of the form src/dispatch/gemm_forms.cpp chose) and the TU that
// instantiates the kernels. The kernels, file by file:
//   params.cuh         the unit (128 rows of A x 128 output columns: two 128-column C tiles of gate/up pairs), the
//                      pipeline's shared memory, the C-tile slots, the warp roles' sizes, Params;
//   scheduler.cuh      which units a CTA walks, and which rows of a unit each group owns;
//   epilogue.cuh       the epilogue's values: gate / up inputs, act(g) * u, amax, codes;
//   epilogue_rows.cuh  the epilogue over a unit's rows (the lean path for the common case) and its columnwise blocks;
//   split_k.cuh        split K's reduction of partial sums across a cluster;
//   persistent.cuh     the persistent kernel (forms Tiles, Segments, SplitK);
//   row_pair.cuh       the row-pair kernel.
//
// The persistent kernel's warp roles: warp 0 the producer (lane 0 issues every TMA load into a 3-stage pipeline,
// the warp copies each stage's scales beside it); warpgroups 1 and 2 the consumers, 64 rows each, both C tiles of a
// unit in one pass over K (wgmma m64n128k32, each 128-deep block's fp32 partial sum promoted with its A and B
// scales, DeepGEMM's recipe), C rounded to bf16 into two shared C-tile slots; warps 1-3 the epilogue, one unit
// behind: C out, the gated activation and routing probability, rowwise and columnwise quantization with the same
// shared functions the fused kernels and the host reference call, so the bytes equal fqQuantize of C. The two CTAs
// of a cluster take the same rows and neighbouring columns, so each loads half of every A tile and TMA multicasts
// it to both.
#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>

#include "../../common/status.h"
#include "../../dispatch/grouped_gemm.h"
#include "../launch.cuh"
#include "persistent.cuh"
#include "row_pair.cuh"

namespace fq::gemm {
namespace {

// ---- Host side: tensor maps and the launch -----------------------------------------------------------------

// cuTensorMapEncodeTiled from the driver the runtime already loaded (the library links no libcuda).
using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

fqStatus_t encode_tiled_fn(EncodeTiled* fn) {
    static EncodeTiled cached = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult q{};
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            cached = reinterpret_cast<EncodeTiled>(p);
    });
    if (!cached) return fail(FQ_STATUS_CUDA_ERROR, "handle: the CUDA driver offers no cuTensorMapEncodeTiled (driver too old for sm_90a TMA)");
    *fn = cached;
    return FQ_STATUS_SUCCESS;
}

// A 2-D tensor map of `rows` x `cols` elements (row stride `ld` elements) read in boxes of box_rows x box_cols.
fqStatus_t make_map(EncodeTiled encode, CUtensorMap* map, const char* what, const void* base, CUtensorMapDataType type,
                    int64_t elem_bytes, int64_t rows, int64_t cols, int64_t ld, uint32_t box_rows, uint32_t box_cols,
                    CUtensorMapSwizzle swizzle) {
    const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
    const cuuint64_t strides[1] = {cuuint64_t(ld * elem_bytes)};
    const cuuint32_t box[2] = {box_cols, box_rows};
    const cuuint32_t elem_strides[2] = {1, 1};
    const CUresult r = encode(map, type, 2, const_cast<void*>(base), dims, strides, box, elem_strides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return fail(FQ_STATUS_CUDA_ERROR, "{}: cuTensorMapEncodeTiled failed (CUresult {}) for {} x {} elements, row stride {}",
                    what, int(r), rows, cols, ld);
    return FQ_STATUS_SUCCESS;
}

// The grouped GEMM's kernels (grouped_gemm_sm90<P, Form>, row_pair_gemm_sm90<P>), asking once per kernel for the
// shared memory it needs.
using KernelFn = void (*)(Params, CUtensorMap, CUtensorMap);
// The attribute belongs to the device it was set on: set on the current device (the handle's, which
// fqGroupedGemm checked), once per kernel and device ordinal below 64 (others set it on every call).
template <KernelFn K>
fqStatus_t prepare_kernel(size_t smem_bytes) {
    static std::atomic<uint64_t> done{0};
    int device = 0;
    FQ_TRY(cuda::cuda_status(cudaGetDevice(&device), "cudaGetDevice"));
    const uint64_t bit = device < 64 ? uint64_t(1) << device : 0;
    if (done.load(std::memory_order_acquire) & bit) return FQ_STATUS_SUCCESS;
    FQ_TRY(cuda::cuda_status(cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem_bytes)),
                             "handle: giving the grouped GEMM its shared memory (cudaFuncSetAttribute)"));
    done.fetch_or(bit, std::memory_order_release);
    return FQ_STATUS_SUCCESS;
}

// The kernel's launch configuration for `clusters` clusters of `size` CTAs (one per SM), written once for the
// occupancy query and the launch. Not copyable: cfg points at the cluster attribute beside it.
struct ClusterLaunch {
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute cluster{};
    ClusterLaunch(int64_t clusters, int size, cudaStream_t stream, size_t smem_bytes) {
        cfg.blockDim = dim3(kThreads);
        cfg.dynamicSmemBytes = smem_bytes;
        cfg.stream = stream;
        cfg.gridDim = dim3(unsigned(clusters * size));
        cluster.id = cudaLaunchAttributeClusterDimension;
        cluster.val.clusterDim.x = unsigned(size);
        cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
        cfg.attrs = &cluster;
        cfg.numAttrs = 1;
    }
    ClusterLaunch(const ClusterLaunch&) = delete;
    ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// How many clusters of `size` CTAs of kernel K the device holds at once (fewer than sm_count / size where its
// GPCs' SM counts are not multiples of size); asked once per kernel, SM count and size.
template <KernelFn K>
int max_active_clusters(int sm_count, int size, size_t smem_bytes) {
    static std::mutex mu;
    static int cached_sms = -1, cached[kMaxSplit + 1] = {};
    std::lock_guard<std::mutex> lock(mu);
    if (cached_sms != sm_count) {
        for (int& c : cached) c = -1;
        cached_sms = sm_count;
    }
    if (cached[size] < 0) {
        const ClusterLaunch launch(sm_count / size, size, nullptr, smem_bytes);
        int n = 0;
        const cudaError_t e = cudaOccupancyMaxActiveClusters(&n, K, &launch.cfg);
        if (e != cudaSuccess) {
            cuda::forget_own_error(e);
            n = 0;
        }
        cached[size] = n;
    }
    return cached[size];
}

// The launch: `clusters` clusters of `size` CTAs (at most one per SM).
template <KernelFn K>
fqStatus_t launch_kernel(const Params& p, const CUtensorMap& a, const CUtensorMap& b, int64_t clusters, int size,
                         size_t smem_bytes, cudaStream_t stream) {
    const ClusterLaunch launch(clusters, size, stream, smem_bytes);
    const cudaError_t e = cudaLaunchKernelEx(&launch.cfg, K, p, a, b);
    return cuda::cuda_status(e, "stream: the grouped GEMM kernel launch");
}

// The kernels of each form (GemmKernel) and the shared memory each asks for.
template <Pairing P>
struct Kernels {
    static constexpr KernelFn persistent = grouped_gemm_sm90<P, TilesForm>;
    static constexpr KernelFn segments = grouped_gemm_sm90<P, SegmentsForm>;
    static constexpr KernelFn split_k = grouped_gemm_sm90<P, SplitKForm>;
    static constexpr KernelFn row_pair = row_pair_gemm_sm90<P>;
};

// prepare_grouped_gemm_cuda: the shared memory of the kernels every choice may take.
template <Pairing P>
fqStatus_t prepare() {
    using K = Kernels<P>;
    FQ_TRY(prepare_kernel<K::persistent>(kSmemBytes));
    FQ_TRY(prepare_kernel<K::split_k>(kSmemBytes));
    FQ_TRY(prepare_kernel<K::segments>(kSmemBytes));
    return FQ_STATUS_SUCCESS;
}

// grouped_gemm_cuda_occupancy. The row-pair kernel gets its shared memory here, where the choice first asks for it.
template <Pairing P>
int occupancy(GemmKernel kernel, int size, int sm_count) {
    using K = Kernels<P>;
    switch (kernel) {
        case GemmKernel::Persistent: return max_active_clusters<K::persistent>(sm_count, size, kSmemBytes);
        case GemmKernel::Segments: return max_active_clusters<K::segments>(sm_count, size, kSmemBytes);
        case GemmKernel::SplitK: return max_active_clusters<K::split_k>(sm_count, size, kSmemBytes);
        case GemmKernel::RowPair:
            if (prepare_kernel<K::row_pair>(kPairSmemBytes) != FQ_STATUS_SUCCESS) return -1;
            return max_active_clusters<K::row_pair>(sm_count, size, kPairSmemBytes);
    }
    return 0;
}

// The form's kernel on its grid.
template <Pairing P>
fqStatus_t launch(const Params& p, const GemmForm& f, const CUtensorMap& a, const CUtensorMap& b, cudaStream_t stream) {
    using K = Kernels<P>;
    switch (f.kernel) {
        case GemmKernel::Persistent:
            return launch_kernel<K::persistent>(p, a, b, f.clusters, f.cluster_size, kSmemBytes, stream);
        case GemmKernel::Segments:
            return launch_kernel<K::segments>(p, a, b, f.clusters, f.cluster_size, kSmemBytes, stream);
        case GemmKernel::SplitK:
            return launch_kernel<K::split_k>(p, a, b, f.clusters, f.cluster_size, kSmemBytes, stream);
        case GemmKernel::RowPair:
            return launch_kernel<K::row_pair>(p, a, b, f.clusters, f.cluster_size, kPairSmemBytes, stream);
    }
    return FQ_STATUS_INTERNAL_ERROR;
}

int32_t log2_of(int64_t v) {  // v a power of two (the refusal admits no other group or block)
    int32_t l = 0;
    while ((int64_t(1) << (l + 1)) <= v) ++l;
    return l;
}

constexpr bool built_with_sm90a() {
#ifdef __CUDA_ARCH_LIST__
    for (int arch : {__CUDA_ARCH_LIST__})
        if (arch == 900) return true;
#endif
    return false;
}

}  // namespace
}  // namespace fq::gemm

namespace fq {

bool grouped_gemm_cuda_built() { return gemm::built_with_sm90a(); }

fqStatus_t prepare_grouped_gemm_cuda(GemmPairing pairing) {
    switch (pairing) {
        case GemmPairing::Adjacent: return gemm::prepare<GemmPairing::Adjacent>();
        case GemmPairing::Blocks32: return gemm::prepare<GemmPairing::Blocks32>();
        case GemmPairing::Halves: break;
    }
    return gemm::prepare<GemmPairing::Halves>();
}

int grouped_gemm_cuda_occupancy(GemmPairing pairing, GemmKernel kernel, int size, int sm_count) {
    switch (pairing) {
        case GemmPairing::Adjacent: return gemm::occupancy<GemmPairing::Adjacent>(kernel, size, sm_count);
        case GemmPairing::Blocks32: return gemm::occupancy<GemmPairing::Blocks32>(kernel, size, sm_count);
        case GemmPairing::Halves: break;
    }
    return gemm::occupancy<GemmPairing::Halves>(kernel, size, sm_count);
}

fqStatus_t run_grouped_gemm_cuda(const GroupedGemmConfig& c, const GemmProblem& f, const GemmForm& form, void* stream) {
    using namespace gemm;
    const OpConfig& e = c.epi;
    Params p{};
    p.m = c.m;
    p.n = c.n;
    p.h = e.cols;
    p.groups = c.groups;
    p.cluster = form.cluster;
    p.split = form.split;
    p.split_stages = form.stages;
    p.m_tiles = f.m_tiles;
    p.unit_cols_tiles = f.unit_cols_tiles;
    p.pair_cols = form.pair_cols;
    p.k_blocks = f.k_blocks;
    p.n_blocks = c.n_blocks();
    p.offsets = c.offsets;
    p.counts = c.counts;
    p.a_scales = c.a_scales;
    p.a_scale_ld = c.a_scale_ld;
    p.alpha = c.alpha;
    p.b_scales = c.b_scales;
    p.c_out = c.c_out;
    p.d_out = c.d_out;
    p.act = e.act;
    p.rounding = e.rounding;
    p.swiglu = e.swiglu;
    p.gate = e.gate;
    p.order = e.gate_order;
    p.gate_block = e.gate_block;
    p.prob = e.row_prob;
    p.qp = e.quant;
    p.scale_ub = e.scale_ub;
    p.group = f.group;
    p.col_block = int32_t(e.col_block);
    p.group_log2 = log2_of(p.group);
    p.col_block_log2 = log2_of(p.col_block);
    p.rowwise = f.rowwise;
    p.columnwise = f.columnwise;
    p.col_transpose = e.col_transpose;
    p.stash = f.stash;
    p.lean = f.lean;
    p.out = static_cast<uint8_t*>(c.output);
    p.out_ld = e.out_ld;
    p.scales = static_cast<uint8_t*>(c.scales);
    p.row_strides = scale_strides(e.scales);
    p.col_out = static_cast<uint8_t*>(e.col_output);
    p.col_scales = static_cast<uint8_t*>(e.col_scales_ptr);
    p.col_strides = scale_strides(e.col_scales);
    p.row_pad_end = p.rowwise ? e.scales.padded_rows : c.m;
    p.row_groups = e.scales.cols;
    p.col_pad_end = p.columnwise ? e.col_scales.padded_rows : p.h;
    p.col_groups = e.col_scales.cols;

    EncodeTiled encode = nullptr;
    FQ_TRY(encode_tiled_fn(&encode));
    CUtensorMap map_a{}, map_b{};
    FQ_TRY(make_map(encode, &map_a, "a", c.a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, c.m, c.k, c.lda, kHalfN, kTileK,
                    CU_TENSOR_MAP_SWIZZLE_128B));
    FQ_TRY(make_map(encode, &map_b, "b", c.b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, int64_t(c.groups) * c.n, c.k, c.ldb, kHalfN,
                    kTileK, CU_TENSOR_MAP_SWIZZLE_128B));

    auto* st = static_cast<cudaStream_t>(stream);
    switch (form.pairing) {
        case GemmPairing::Adjacent: return launch<GemmPairing::Adjacent>(p, form, map_a, map_b, st);
        case GemmPairing::Blocks32: return launch<GemmPairing::Blocks32>(p, form, map_a, map_b, st);
        case GemmPairing::Halves: break;
    }
    return launch<GemmPairing::Halves>(p, form, map_a, map_b, st);
}

}  // namespace fq
