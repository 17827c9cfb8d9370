# Builds tests/consumer/project against foundry in one of three ways; run by ctest as
#   cmake -DMODE=<package|subdirectory|nvcc> -DFOUNDRY_SOURCE_DIR=... -DFOUNDRY_BINARY_DIR=...
#         -DWORK_DIR=... -DCUDA_COMPILER=... -DCUDA_ARCHITECTURES=... -DGENERATOR=... -P check_consumer.cmake
set(project_dir ${FOUNDRY_SOURCE_DIR}/tests/consumer/project)
string(REPLACE "," ";" architectures "${CUDA_ARCHITECTURES}")
list(GET architectures 0 arch)
string(REGEX REPLACE "[^0-9a-z].*$" "" arch "${arch}")  # 90-real -> 90
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer check (${MODE}) failed: ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

# (Google Benchmark is found through the environment's CMAKE_PREFIX_PATH, if any, as usual.)
set(configure ${CMAKE_COMMAND} -S ${project_dir} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER} -DCMAKE_CUDA_ARCHITECTURES=${arch} -DFOUNDRY_SOURCE_DIR=${FOUNDRY_SOURCE_DIR})
if(MODE STREQUAL "package")
  run(${CMAKE_COMMAND} --install ${FOUNDRY_BINARY_DIR} --prefix ${WORK_DIR}/prefix)
  run(${configure} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
elseif(MODE STREQUAL "subdirectory")
  run(${configure} -DFOUNDRY_CONSUMER_MODE=subdirectory)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
elseif(MODE STREQUAL "nvcc")
  run(${CUDA_COMPILER} -std=c++17 -arch=sm_${arch} -I${FOUNDRY_SOURCE_DIR}/include
      ${project_dir}/main.cu -o ${WORK_DIR}/consumer)
else()
  message(FATAL_ERROR "unknown MODE ${MODE}")
endif()
message(STATUS "consumer check (${MODE}) built")
