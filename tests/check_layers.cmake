# The includes of src/ point down the layers: api -> dispatch -> host, kernels -> common.
# Run as `cmake -DSRC=<src dir> -P check_layers.cmake`; fails naming every include of a layer a file may not see.
# Still allowed upward: host/ and kernels/ include dispatch/'s registration interfaces (registry.h, device.h,
# scale_repack.h, grouped_gemm.h), through which they hand their implementations to the dispatcher.
set(may_not_include_api "host|kernels")
set(may_not_include_dispatch "api|kernels")
set(may_not_include_host "api|kernels")
set(may_not_include_kernels "api|host")
set(may_not_include_common "api|dispatch|host|kernels")

set(violations "")
foreach(layer api dispatch host kernels common)
  file(GLOB_RECURSE files "${SRC}/${layer}/*")
  foreach(f ${files})
    file(STRINGS "${f}" includes REGEX "^#include \"")
    foreach(line ${includes})
      if(line MATCHES "^#include \"(\\.\\./)+(${may_not_include_${layer}})/")
        file(RELATIVE_PATH rel "${SRC}" "${f}")
        string(APPEND violations "  src/${rel}: ${line} (${layer}/ may not include ${CMAKE_MATCH_2}/)\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "includes that point up the layers:\n${violations}")
endif()
message(STATUS "every include of src/ points down the layers")
