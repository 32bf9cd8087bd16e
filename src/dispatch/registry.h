// The dispatch table: (OpConfig, backend, architecture) -> one precompiled kernel variant.
// Each backend registers its variants in one place (src/host/variants.cpp, src/kernels/variants.cu);
// selection walks the table in order and takes the first variant whose arch range and predicate accept
// the problem. "Not supported" is an answer carrying the reason of the closest candidate.
#pragma once

#include <string>
#include <vector>

#include "../common/op_config.h"
#include "fusedquant/fusedquant.h"

namespace fq {

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
    int wide_tile_min;  // FQ_HANDLE_WIDE_TILE_MIN (-1: one wave of the plain kernel)
};

struct Variant {
    const char* name;    // stable, printed by `fq check` and returned by fqQuerySupport
    const char* covers;  // one line: what problems it runs
    Backend backend;
    int min_arch, max_arch;  // compute capability * 10, inclusive; 0 for the host
    // Empty string: this variant runs `c`. Otherwise why it does not ("scheme MXFP8: ...").
    std::string (*refuse)(const OpConfig& c);
    fqStatus_t (*run)(const LaunchArgs& a);
};

// Every variant of every compiled backend, in selection order.
const std::vector<Variant>& variant_table();

// Workspace a call needs: on CUDA for NVFP4 without the caller's global amax, 4 bytes per expert (one
// without a MoE layout): the tensor amax is reduced there, and left there for the caller; 0 otherwise.
size_t workspace_bytes(const OpConfig& c, Backend b);

// The variants of one backend (and, for CUDA, one architecture), in selection order.
std::vector<const Variant*> variants_for(Backend b, int arch);

// The first variant that runs `c` (or variant `pinned` of variants_for(), when pinned >= 0), or
// NOT_SUPPORTED with a message naming what is missing.
fqStatus_t select_variant(Backend b, int arch, int pinned, const OpConfig& c, const Variant** chosen);

// Registration hooks, one per backend; the CUDA one is empty when the library is built without CUDA.
void register_host_variants(std::vector<Variant>& table);
void register_cuda_variants(std::vector<Variant>& table);
void register_cuda_block2d_variants(std::vector<Variant>& table);  // src/kernels/block2d.cu

}  // namespace fq
