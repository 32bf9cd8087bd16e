// Marks code compiled for both the host reference and the CUDA kernels (docs/spec.md §0: one source, one
// result). Plain C++ on the host compiler; __host__ __device__ under nvcc.
#pragma once

#if defined(__CUDACC__)
#  define FQ_HD __host__ __device__ __forceinline__
#else
#  define FQ_HD inline
#endif
