# The optional benchmark harness foundry::bench (headers in include/foundry/bench/):
# Google Benchmark timed with CUDA events, ceilings measured with cuBLAS. Defined
# when Google Benchmark has been found; installed and exported beside foundry.
if(NOT TARGET benchmark::benchmark)
  return()
endif()

add_library(foundry_bench INTERFACE)
add_library(foundry::bench ALIAS foundry_bench)
set_target_properties(foundry_bench PROPERTIES EXPORT_NAME bench)
# dlopen (for NVML's driver version) lives in libdl on older glibc.
target_link_libraries(foundry_bench INTERFACE foundry::foundry benchmark::benchmark CUDA::cublas ${CMAKE_DL_LIBS})
