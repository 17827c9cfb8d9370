#pragma once
// Where the tests that call foundry::gemm get its kernels: `detail::launch_plan`, through which
// foundry::gemm and gemm_with reach every rung, is compiled once for each input type, in
// gemm_instances.cu (the foundry_test_gemm_instances library, three units built side by side),
// instead of again in each test unit that includes this header. A build-time measure only: the
// unit that includes it would compile the same code itself. tests/CMakeLists.txt defines
// FOUNDRY_TEST_GEMM_INSTANCES where it links the library (sm_90 builds with sm_90a code).

#include <foundry/gemm/gemm.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/span>
#include <cuda/stream_ref>

#if defined(FOUNDRY_TEST_GEMM_INSTANCES)
#define FOUNDRY_TEST_GEMM_LAUNCH_PLAN(In) \
  template void foundry::detail::launch_plan<In, float>( \
      const foundry::gemm_plan&, const foundry::gemm_problem<In, float>&, cuda::std::span<float>, cuda::stream_ref)
#if !defined(FOUNDRY_TEST_GEMM_INSTANCE)  // a test unit: declarations only (an instance unit defines it)
extern FOUNDRY_TEST_GEMM_LAUNCH_PLAN(float);
extern FOUNDRY_TEST_GEMM_LAUNCH_PLAN(__nv_bfloat16);
extern FOUNDRY_TEST_GEMM_LAUNCH_PLAN(__half);
#endif
#endif
