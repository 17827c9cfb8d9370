# Runs PROGRAM (ctest hides every device through the test's ENVIRONMENT, since
# CMake's set(ENV{...} "") would unset the variable instead); passes when it
# exits with EXPECTED and prints a message that mentions the missing device.
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL EXPECTED)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}, expected ${EXPECTED}\n${out}${err}")
endif()
if(NOT "${out}${err}" MATCHES "(no usable CUDA device|no CUDA device)")
  message(FATAL_ERROR "${PROGRAM} did not say that the device is missing:\n${out}${err}")
endif()
message(STATUS "${PROGRAM}: exit ${rc}: ${err}${out}")
