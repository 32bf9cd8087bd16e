// The dispatch table: (OpConfig, backend, device facts) -> the one kernel that runs it. Every kernel skeleton of
// every architecture family is an entry (src/dispatch/cuda_table.cpp; the host reference in
// src/host/variants.cpp) with its conditions: `refuse`, what the kernel cannot run, and `preferred`, the
// thresholds under which the dispatcher takes it over the entries after it. Selection walks the table in order
// and takes the first entry that runs the problem and is preferred for it, so the entry's name is the kernel
// that runs. "Not supported" is an answer carrying the reason of the closest candidate.
#pragma once

#include <string>
#include <vector>

#include "../common/op_config.h"
#include "fusedquant/fusedquant.h"

namespace fq {

// What selection knows of the device: all cached in the handle at fqCreate (no CUDA call per query).
struct DeviceFacts {
    int arch = 0;           // compute capability * 10; 0 for the host
    int sm_count = 1;       // multiprocessors (one wave of blocks: src/common/kernel_shapes.h)
    bool allow_pdl = true;  // FQ_HANDLE_ALLOW_PDL
    int wide_tile_min = -1;  // FQ_HANDLE_WIDE_TILE_MIN (-1: one wave of the plain kernel)
};

// Everything the launch function of an entry reads: the problem, its pointers and the device.
struct LaunchArgs {
    const OpConfig& cfg;
    const void* input;
    void* output;
    void* scales;
    void* workspace;  // workspace_bytes(cfg, backend) bytes (NULL when that is 0)
    void* stream;     // cudaStream_t on the CUDA backend
    int device;
    int sm_count;
    bool allow_pdl;
};

// The CUDA kernel skeletons (src/kernels/): each a launch function that runs exactly that kernel.
enum class Skeleton {
    Plain,            // plain_quant: 16 outputs a thread, FP32 intermediates, no MoE
    PlainSwizzled,    // plain_quant_swizzled: the plain kernel for 128x4-swizzled block scales
    PlainColumnRuns,  // plain_quant_column_runs: the plain kernel for large column-major scale buffers
    Decode,           // decode_quant: the general kernel's tiles for plain per-group / MX problems below one wave
    Group,            // group_quant: the general per-group / per-tensor / microscaling kernel
    Token,            // token_quant: per-token
    TokenCluster,     // token_cluster_quant: per-token rows below one wave, a row over a thread-block cluster (sm_90 on)
    Columnwise,       // columnwise_quant: a columnwise output (and the rowwise one in the same pass)
    Block2d,          // block2d_vec: BLOCK_2D weights, 16-byte IO
    Block2dGeneric,   // block2d_generic: BLOCK_2D, any activation, element IO
    Host,             // the host reference
};

// How an entry compiles its skeleton: 16-byte IO, hardware fp8 conversion, programmatic dependent launch.
struct KernelForm {
    Skeleton skeleton;
    bool vec = false, hw_cvt = false, pdl = false;
};

struct Variant {
    std::string name;    // stable ("sm90.plain.swizzled"), printed by `fq check` and returned by fqQuerySupport
    std::string covers;  // one line: what problems it runs
    Backend backend;
    int min_arch, max_arch;  // compute capability * 10, inclusive; 0 for the host
    // Empty string: this kernel runs `c` correctly. Otherwise why it does not ("scheme MXFP8: ...").
    std::string (*refuse)(const OpConfig& c);
    // Whether the dispatcher chooses this entry for a problem it runs (NULL: always); the entries after it
    // run the problems it is not preferred for. A pinned entry (FQ_HANDLE_VARIANT) runs whatever it does not refuse.
    bool (*preferred)(const OpConfig& c, const DeviceFacts& d);
    KernelForm form;
    fqStatus_t (*run)(const KernelForm& form, const LaunchArgs& a);
};

// Every entry of every backend, in selection order.
const std::vector<Variant>& variant_table();

// Workspace a call needs: on CUDA for NVFP4 without the caller's global amax, 4 bytes per expert (one
// without a MoE layout): the tensor amax is reduced there, and left there for the caller; 0 otherwise.
size_t workspace_bytes(const OpConfig& c, Backend b);

// The entries of one backend (and, for CUDA, one architecture), in selection order (FQ_HANDLE_VARIANT's index).
std::vector<const Variant*> variants_for(Backend b, int arch);
std::vector<const Variant*> variants_in(const std::vector<Variant>& table, Backend b, int arch);

// The first entry for d.arch that runs `c` and is preferred for it (or entry `pinned` of variants_for(), when
// pinned >= 0, if it runs `c`), or NOT_SUPPORTED with a message naming what is missing. select_in selects in
// `table` (pure: tests pass the CUDA table alone), select_variant in variant_table().
fqStatus_t select_in(const std::vector<Variant>& table, Backend b, const DeviceFacts& d, int pinned,
                     const OpConfig& c, const Variant** chosen);
fqStatus_t select_variant(Backend b, const DeviceFacts& d, int pinned, const OpConfig& c, const Variant** chosen);
// The same with only the architecture known (the host backend's GEMM epilogue: src/dispatch/grouped_gemm.cpp).
inline fqStatus_t select_variant(Backend b, int arch, int pinned, const OpConfig& c, const Variant** chosen) {
    DeviceFacts d;
    d.arch = arch;
    return select_variant(b, d, pinned, c, chosen);
}

// Registration, one per backend: src/host/variants.cpp and src/dispatch/cuda_table.cpp.
void register_host_variants(std::vector<Variant>& table);
void register_cuda_variants(std::vector<Variant>& table);

}  // namespace fq
