# The optional multi-GPU layer foundry::nccl (headers in include/foundry/nccl/): foundry
# plus NCCL. Defined when FOUNDRY_WITH_NCCL is ON, or AUTO (the default) and NCCL is found.
#
# Where NCCL is looked for, in order: NCCL_ROOT (CMake or environment variable), the CUDA
# toolkit (CUDA 13 ships nccl.h and libnccl beside the runtime), and the `nvidia-nccl-cu*`
# Python wheel that PyTorch installs (<site-packages>/nvidia/nccl/{include,lib}). The wheel
# ships only libnccl.so.2, without the unversioned libnccl.so symlink, so both names are
# accepted.
set(_foundry_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR} /usr/local/cuda)
find_program(FOUNDRY_PYTHON3 NAMES python3)
mark_as_advanced(FOUNDRY_PYTHON3)
if(FOUNDRY_PYTHON3)
  execute_process(COMMAND ${FOUNDRY_PYTHON3} -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])"
                  OUTPUT_VARIABLE _foundry_nccl_wheel OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND IS_DIRECTORY "${_foundry_nccl_wheel}")
    list(APPEND _foundry_nccl_hints "${_foundry_nccl_wheel}")
  endif()
endif()
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_foundry_nccl_hints} PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR HINTS ${_foundry_nccl_hints}
             PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu targets/x86_64-linux/lib)
set(_foundry_nccl_found OFF)
if(EXISTS "${NCCL_INCLUDE_DIR}/nccl.h" AND EXISTS "${NCCL_LIBRARY}")
  set(_foundry_nccl_found ON)
endif()

# AUTO (the default) is ON when NCCL is found and OFF otherwise, decided again at every
# configure: a plain option would keep an OFF cached by a configure that ran before NCCL
# was installed (or before NCCL_ROOT was set).
set(FOUNDRY_WITH_NCCL AUTO CACHE STRING
    "Define foundry::nccl (multi-GPU through NCCL) and build its tests and benchmark: ON, OFF or AUTO (ON when found)")
set_property(CACHE FOUNDRY_WITH_NCCL PROPERTY STRINGS AUTO ON OFF)
if(FOUNDRY_WITH_NCCL STREQUAL "AUTO")
  if(NOT _foundry_nccl_found)
    message(STATUS "foundry: NCCL not found (set NCCL_ROOT): foundry::nccl, its tests and benchmark are skipped")
    return()
  endif()
elseif(NOT FOUNDRY_WITH_NCCL)
  return()
endif()
if(NOT _foundry_nccl_found)
  message(FATAL_ERROR "foundry: FOUNDRY_WITH_NCCL is ON but nccl.h or libnccl was not found "
                      "(NCCL_INCLUDE_DIR=${NCCL_INCLUDE_DIR}, NCCL_LIBRARY=${NCCL_LIBRARY}): set NCCL_ROOT to the "
                      "directory holding include/nccl.h and lib/libnccl.so*, or -DFOUNDRY_WITH_NCCL=OFF")
endif()
message(STATUS "foundry: foundry::nccl with ${NCCL_LIBRARY}")

add_library(foundry_nccl INTERFACE)
add_library(foundry::nccl ALIAS foundry_nccl)
set_target_properties(foundry_nccl PROPERTIES EXPORT_NAME nccl)
target_include_directories(foundry_nccl SYSTEM INTERFACE ${NCCL_INCLUDE_DIR})
target_link_libraries(foundry_nccl INTERFACE foundry::foundry ${NCCL_LIBRARY})
