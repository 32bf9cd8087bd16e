// The one list of each enumeration that grows: activations, quantization schemes, scale layouts and gate
// layouts. Everything else is expanded from these X-macros: the internal enum classes, the names in messages,
// the bounds of the descriptor attributes, the CUDA instantiations (cmake/cuda_variants.cmake reads the
// activation list from this file), the names of the `fq` command line, and the tests that run every entry.
// CONTRIBUTING.md ("Adding an activation or a scale layout") is the recipe.
//
// Each line: X(Internal, value, NAME, cli, ...) where Internal names the enum class member, value is the public
// enum value (FQ_<ENUM>_<NAME> in include/fusedquant/fusedquant.h; src/api/api.cpp pins them together and a
// test checks that the header has no value the list lacks), NAME is the header's suffix and the name in
// messages, and cli is the `fq` command line's name. Values are consecutive from 0, in this order. Every line
// ends in a backslash and every list in "end of list", so an entry is one added line.
#pragma once

// Activations (docs/spec.md §2). X(Internal, value, NAME, cli, f): f(x) is the ungated activation, a
// __host__ __device__ float -> float function of src/common/activation.h; gated, y = f(g) * u. SWIGLU_OAI is
// gated only, with parameters (activate_gated computes it); its f is the identity, never called.
#define FQ_PUBLIC_ACTIVATIONS(X)                                \
    X(Identity, 0, IDENTITY, identity, identity)                \
    X(Silu, 1, SILU, silu, silu)                                \
    X(GeluErf, 2, GELU_ERF, gelu_erf, gelu_erf)                 \
    X(GeluTanh, 3, GELU_TANH, gelu_tanh, gelu_tanh)             \
    X(Relu, 4, RELU, relu, relu)                                \
    X(ReluSquared, 5, RELU_SQUARED, relu_squared, relu_squared) \
    X(SwigluOai, 6, SWIGLU_OAI, swiglu_oai, identity)           \
    /* end of list */

// Quantization schemes (docs/spec.md §3.1). X(Internal, value, NAME, cli).
#define FQ_SCHEMES(X)                                           \
    X(PerTensorStatic, 0, PER_TENSOR_STATIC, per_tensor_static) \
    X(PerTensorDynamic, 1, PER_TENSOR_DYNAMIC, per_tensor)      \
    X(PerToken, 2, PER_TOKEN, per_token)                        \
    X(PerGroup, 3, PER_GROUP, per_group)                        \
    X(Block2D, 4, BLOCK_2D, block2d)                            \
    X(Mxfp8, 5, MXFP8, mxfp8)                                   \
    X(Mxfp4, 6, MXFP4, mxfp4)                                   \
    X(Nvfp4, 7, NVFP4, nvfp4)                                   \
    /* end of list */

// Scale layouts (docs/spec.md §4). X(Internal, value, NAME, cli, row_pad, col_pad, per_word, offset):
// rows are padded to a multiple of row_pad and scale columns to a multiple of col_pad (expressions that may
// use `eb`, the bytes of one scale); per_word scales share one storage element (PACKED_UE8M0: four E8M0 in an
// int32); offset(g, m, k) is the layout's index function of src/common/scale_layout.h: the byte offset of
// S[m, k] in a buffer of geometry g. Every layout is affine in the digits m / 128, m % 128 / 32, m % 32, k / 4,
// k % 4 (kernels index through five strides; tests/test_enum_lists.cpp checks it for every entry).
#define FQ_PUBLIC_SCALE_LAYOUTS(X)                                                  \
    X(RowMajor, 0, ROW_MAJOR, row, 1, 1, 1, row_major_offset)                       \
    X(ColMajor, 1, COL_MAJOR, col, 1, 1, 1, col_major_offset)                       \
    X(ColMajorTma, 2, COL_MAJOR_TMA, tma, 16 / eb, 1, 1, col_major_offset)          \
    X(Swizzled128x4, 3, SWIZZLED_128X4, swizzled, 128, 4, 1, swizzled_128x4_offset) \
    X(PackedUe8m0, 4, PACKED_UE8M0, packed, 4, 4, 4, packed_ue8m0_offset)           \
    /* end of list */

// Gate layouts (docs/spec.md §2). X(Internal, value, NAME, cli).
#define FQ_GATE_LAYOUTS(X)                           \
    X(None, 0, NONE, none)                           \
    X(Split, 1, SPLIT, split)                        \
    X(Interleaved, 2, INTERLEAVED, interleaved)      \
    X(BlockInterleaved, 3, BLOCK_INTERLEAVED, block) \
    /* end of list */

// Test-only entries, compiled with -DFQ_TEST_EXTENSIONS=ON (CMake option, off by default): they prove that
// the recipe of CONTRIBUTING.md is enough. They have no public enum value and never ship.
#if defined(FQ_TEST_EXTENSIONS)
#define FQ_TEST_ACTIVATIONS(X) \
    X(TestSoftsign, 7, TEST_SOFTSIGN, test_softsign, test_softsign) \
    /* end of list */
#define FQ_TEST_SCALE_LAYOUTS(X) \
    X(TestTiled32x4, 5, TEST_TILED_32X4, test_tiled, 32, 4, 1, test_tiled_32x4_offset) \
    /* end of list */
#else
#define FQ_TEST_ACTIVATIONS(X)
#define FQ_TEST_SCALE_LAYOUTS(X)
#endif

#define FQ_ACTIVATIONS(X) FQ_PUBLIC_ACTIVATIONS(X) FQ_TEST_ACTIVATIONS(X)
#define FQ_SCALE_LAYOUTS(X) FQ_PUBLIC_SCALE_LAYOUTS(X) FQ_TEST_SCALE_LAYOUTS(X)

// Expansion helpers.
#define FQ_ENUM_MEMBER(Internal, value, ...) Internal = value,
#define FQ_ENUM_COUNT(...) +1
