// Fused activation + quantization on CUDA (docs/spec.md §2-§4): the row kernels and their instantiation list.
// Every kernel writes exactly the bytes of the host reference. The kernels, one file each:
//   group_quant.cuh   the general per-group kernel (also per-tensor and microscaling): 8 outputs a thread, any
//                     rounding mode, MoE layout and routing probability
//   plain_quant.cuh   16 outputs a thread for FP32 intermediates without a MoE layout, where the problem fills
//                     the GPU; its forms for swizzled and large column-major scale buffers
//   decode_quant.cuh  the general kernel's tiles for plain per-group problems below one wave on sm_90 (decode and
//                     small prefill): addresses before the wait for the previous kernel, a straight path after
//   token_quant.cuh   per-token: one block per row, amax pass, block reduction, quantize pass
//   token_cluster.cuh per-token rows wider than one per-token block step, below one wave, on sm_90: a row over a
//                     thread-block cluster, held in registers, its amax reduced through distributed shared memory
//   tensor_amax.cuh   the amax of the whole tensor (per-tensor dynamic; NVFP4's global amax)
//   group_launch.cuh  the launch of each per-group kernel (the dispatcher chose which: src/dispatch/cuda_table.cpp)
// They are built from the blocks in blocks/: params (Params, Shape), grid (block size, launch order, PDL),
// moe_rows (row owners), load, activate, amax, quantize, scales (scale stores and padding), tile (one tile's
// amax, scale and stores), parked (outputs in shared memory), host (launch helpers, with_shape); columns (the
// columnwise skeleton's, columnwise.cuh).
// What the hot loop would otherwise branch on per element is a template parameter (the Shape: the
// activation, the input type, how gate and up are stored; the plain FP32 body; the architecture policy and
// the scale kind, arch_policy.cuh): a kernel that branches on them at run time runs far slower (docs/design-notes.md). Each
// activation's kernels are compiled in their own translation unit (instantiate_activation.cu.in).
#pragma once

#include "group_launch.cuh"
#include "token_cluster.cuh"
#include "token_quant.cuh"

namespace fq::cuda {

// The row kernels of one activation, one launcher per skeleton (the swizzled and column-run forms have 16-byte
// IO only, the decode and per-token cluster kernels 16-byte IO on sm_90 on); instantiated once per activation by instantiate_activation.cu.in.
// (The policies: arch_policy.cuh.)
#define FQ_FOR_EACH_LAUNCHER(X, ACT)                                                         \
    X(template fqStatus_t run_group_for<Skeleton::Decode, ACT, Sm90Vec>(const LaunchArgs&);) \
    X(template fqStatus_t run_token_cluster_for<ACT, Sm90Vec>(const LaunchArgs&);)            \
    FQ_FOR_EACH_VEC_POLICY(X, run_group_for, Skeleton::PlainSwizzled, ACT)                  \
    FQ_FOR_EACH_VEC_POLICY(X, run_group_for, Skeleton::PlainColumnRuns, ACT)                \
    FQ_FOR_EACH_ARCH_POLICY(X, run_group_for, Skeleton::Plain, ACT)                         \
    FQ_FOR_EACH_ARCH_POLICY(X, run_group_for, Skeleton::Group, ACT)                         \
    FQ_FOR_EACH_ARCH_POLICY(X, run_token_for, ACT)

}  // namespace fq::cuda
