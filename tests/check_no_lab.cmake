# The library holds no experiment switch (issue 49): no file of src/ reads the environment or tests a lab macro,
# so what a user's build runs is decided by the code alone. Run as `cmake -DSRC=<src dir> -P check_no_lab.cmake`;
# fails naming every line that does.
set(violations "")
file(GLOB_RECURSE files "${SRC}/*")
foreach(f ${files})
  file(STRINGS "${f}" hits REGEX "getenv|FQ_LAB|LAB_")
  foreach(line ${hits})
    file(RELATIVE_PATH rel "${SRC}" "${f}")
    string(APPEND violations "  src/${rel}: ${line}\n")
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "environment or lab switches in the library:\n${violations}")
endif()
message(STATUS "src/ reads no environment variable and tests no lab macro")
