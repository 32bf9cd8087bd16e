# CUDA kernel sources and the architectures they are compiled for. Explicit -gencode pairs (not
# CUDA_ARCHITECTURES) because sm_90a needs the arch=compute_90a,code=sm_90a form with nvcc 13.0, and
# PTX of the oldest arch is kept so a newer GPU can JIT it (correct, without the newer instructions).
function(fq_add_cuda_kernels target archs)
  target_sources(${target} PRIVATE
    ${PROJECT_SOURCE_DIR}/src/kernels/device.cu
    ${PROJECT_SOURCE_DIR}/src/kernels/variants.cu
    ${PROJECT_SOURCE_DIR}/src/kernels/scale_repack.cu
    ${PROJECT_SOURCE_DIR}/src/kernels/block2d.cu
    ${PROJECT_SOURCE_DIR}/src/kernels/gemm/grouped_gemm_sm90.cu)
  # The one list of explicit instantiations: one translation unit per activation (parallel builds).
  foreach(FQ_ACT IN ITEMS Identity Silu GeluErf GeluTanh Relu ReluSquared SwigluOai)
    set(tu ${PROJECT_BINARY_DIR}/kernels/fused_quant_${FQ_ACT}.cu)
    configure_file(${PROJECT_SOURCE_DIR}/src/kernels/instantiate_activation.cu.in ${tu} @ONLY)
    target_sources(${target} PRIVATE ${tu})
  endforeach()
  fq_cuda_compile_for(${target} "${archs}")
  message(STATUS "fusedquant: CUDA kernels for ${archs} (+ PTX compute_${oldest_plain})")
endfunction()

# Compiles the CUDA sources of `target` for `archs` (also used by the GPU tests' device code).
function(fq_cuda_compile_for target archs)
  set_target_properties(${target} PROPERTIES CUDA_ARCHITECTURES OFF CUDA_SEPARABLE_COMPILATION OFF)
  set(flags "")
  set(oldest "")
  foreach(arch IN LISTS archs)
    list(APPEND flags "-gencode=arch=compute_${arch},code=sm_${arch}")
    if(oldest STREQUAL "")
      set(oldest ${arch})
    endif()
  endforeach()
  string(REGEX REPLACE "a$" "" oldest_plain "${oldest}")
  list(APPEND flags "-gencode=arch=compute_${oldest_plain},code=compute_${oldest_plain}")
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${flags} --expt-relaxed-constexpr -Xptxas=-warn-spills>)
  set(oldest_plain ${oldest_plain} PARENT_SCOPE)
endfunction()
