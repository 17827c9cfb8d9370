// foundry::detail::launch_plan for __nv_bfloat16 inputs, compiled once for the tests that include
// support/gemm_instances.cuh (which says why).
#define FOUNDRY_TEST_GEMM_INSTANCE
#include <support/gemm_instances.cuh>

FOUNDRY_TEST_GEMM_LAUNCH_PLAN(__nv_bfloat16);
