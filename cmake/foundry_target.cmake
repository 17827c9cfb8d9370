# The header-only target foundry::foundry: C++17, the CUDA runtime, the
# toolkit's CCCL (libcu++, CUB, Thrust) and NVTX3.
include(GNUInstallDirs)
find_package(CUDAToolkit 12.0 REQUIRED)
# CUDA 12.x ships CCCL's CMake package beside the runtime; nvcc finds the headers either way.
find_package(CCCL CONFIG QUIET HINTS "${CUDAToolkit_LIBRARY_DIR}/cmake")

add_library(foundry INTERFACE)
add_library(foundry::foundry ALIAS foundry)
target_include_directories(foundry INTERFACE
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(foundry INTERFACE cxx_std_17 cuda_std_17)
target_link_libraries(foundry INTERFACE CUDA::cudart CUDA::nvtx3 ${CMAKE_DL_LIBS})
if(TARGET CCCL::CCCL)
  target_link_libraries(foundry INTERFACE CCCL::CCCL)
endif()
# Device lambdas in transform and reduce need --extended-lambda.
target_compile_options(foundry INTERFACE $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>)

# Stops configuration with one line naming the Debian package to install.
function(foundry_require_package package debian_package)
  find_package(${package} QUIET)
  if(NOT ${package}_FOUND)
    message(FATAL_ERROR "foundry: ${package} not found: install it with `apt-get install ${debian_package}` "
                        "(or run scripts/install-deps.sh)")
  endif()
endfunction()
