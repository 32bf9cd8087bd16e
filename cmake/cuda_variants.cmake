# CUDA kernel sources and the architectures they are compiled for. Explicit -gencode pairs (not
# CUDA_ARCHITECTURES) because sm_90a needs the arch=compute_90a,code=sm_90a form with nvcc 13.0, and
# PTX of the oldest arch is kept so a newer GPU can JIT it (correct, without the newer instructions), unless
# FQ_CUDA_PTX is OFF.
function(fq_add_cuda_kernels target archs)
  target_sources(${target} PRIVATE
    ${PROJECT_SOURCE_DIR}/src/kernels/device.cu
    ${PROJECT_SOURCE_DIR}/src/kernels/variants.cu
    ${PROJECT_SOURCE_DIR}/src/kernels/scale_steps.cu
    ${PROJECT_SOURCE_DIR}/src/kernels/scale_repack.cu
    ${PROJECT_SOURCE_DIR}/src/kernels/block2d.cu
    ${PROJECT_SOURCE_DIR}/src/kernels/gemm/grouped_gemm_sm90.cu)
  # One translation unit per activation of the one list, src/common/enum_lists.h (parallel builds).
  fq_list_entries(FQ_PUBLIC_ACTIVATIONS activations)
  if(FQ_TEST_EXTENSIONS)
    fq_list_entries(FQ_TEST_ACTIVATIONS test_activations)
    list(APPEND activations ${test_activations})
  endif()
  foreach(FQ_ACT IN LISTS activations)
    set(tu ${PROJECT_BINARY_DIR}/kernels/fused_quant_${FQ_ACT}.cu)
    configure_file(${PROJECT_SOURCE_DIR}/src/kernels/instantiate_activation.cu.in ${tu} @ONLY)
    target_sources(${target} PRIVATE ${tu})
  endforeach()
  fq_cuda_compile_for(${target} "${archs}")
  if(FQ_CUDA_PTX)
    message(STATUS "fusedquant: CUDA kernels for ${archs} (+ PTX compute_${oldest_plain})")
  else()
    message(STATUS "fusedquant: CUDA kernels for ${archs} (no PTX: FQ_CUDA_PTX=OFF)")
  endif()
endfunction()

# The internal names (first argument) of the entries of X-macro list `macro` in src/common/enum_lists.h (its
# first `#define <macro>(X)`, continuation lines joined). Configure re-runs whenever the file changes.
function(fq_list_entries macro out)
  set(header ${PROJECT_SOURCE_DIR}/src/common/enum_lists.h)
  set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${header})
  file(READ ${header} text)
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "\\\n" " " text "${text}")  # one line per definition
  string(REPLACE "\n" ";" lines "${text}")
  set(entries "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^#define ${macro}\\(X\\)(.*)$")
      string(REGEX MATCHALL "X\\([A-Za-z0-9_]+," items "${CMAKE_MATCH_1}")
      foreach(item IN LISTS items)
        string(REGEX REPLACE "^X\\(([A-Za-z0-9_]+),$" "\\1" item "${item}")
        list(APPEND entries ${item})
      endforeach()
      break()
    endif()
  endforeach()
  set(${out} ${entries} PARENT_SCOPE)
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
  if(FQ_CUDA_PTX)
    list(APPEND flags "-gencode=arch=compute_${oldest_plain},code=compute_${oldest_plain}")
  endif()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${flags} --expt-relaxed-constexpr -Xptxas=-warn-spills>)
  set(oldest_plain ${oldest_plain} PARENT_SCOPE)
endfunction()
