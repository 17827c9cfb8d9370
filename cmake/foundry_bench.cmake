# The optional benchmark harness foundry::bench (headers in include/foundry/bench/):
# Google Benchmark timed with CUDA events, ceilings measured with cuBLAS.
# Included by the top-level CMakeLists.txt when benchmarks or examples are built.
if(NOT TARGET benchmark::benchmark)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(FATAL_ERROR "foundry: Google Benchmark not found: install it with `apt-get install libbenchmark-dev`")
  endif()
endif()
find_package(CUDAToolkit 12.0 REQUIRED)

add_library(foundry_bench INTERFACE)
add_library(foundry::bench ALIAS foundry_bench)
# dlopen (for NVML's driver version) lives in libdl on older glibc.
target_link_libraries(foundry_bench INTERFACE foundry::foundry benchmark::benchmark CUDA::cublas ${CMAKE_DL_LIBS})
