// Session 22: does any kernel that lets the next one launch at its start (as pack_operand_kernel
// and the algorithms' kernels do) slow a latency-bound kernel after it, as the split-K reduce's
// early trigger did (session 21's pdl_probe: 2048x64x4096 split 2, 57 -> 137 us a call)?
// X is a streaming copy of `bytes` over 4 blocks an SM, its trigger at its start (early) or
// after its loop (late); L is rung 4's fallback kernel at 2048x64x4096 bf16 unsplit (A's rows
// one past 16 bytes: 64 blocks, latency-bound). Times chained pairs X, L with L's launch
// programmatic (P) or not (F), and X or L alone (runs/session23/probe_common.cuh); one CSV line a size and variant.
// Build (from the repository root; 20 s here, so build it here and carry the binary):
//   nvcc -O3 -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
//     bench/results/h200/runs/session22/trigger_probe.cu -lcublas -lbenchmark -o trigger_probe
#include <foundry/foundry.cuh>

#include "../session23/probe_common.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace {

using in = __nv_bfloat16;
using fallback_policy = foundry::gemm_kernels::tensor_core_fallback_policy;

template <bool late_trigger>
__global__ void stream_copy(const float4* __restrict__ src, float4* __restrict__ dst, std::uint64_t vectors) {
  if constexpr (!late_trigger) foundry::allow_dependent_launch();
  foundry::wait_for_prior_grids();
  for (const std::uint64_t i : foundry::grid_stride_range(vectors)) dst[i] = src[i];
  if constexpr (late_trigger) foundry::allow_dependent_launch();
}

}  // namespace

int main() {
  const int sms = foundry::get_device_properties().sm_count;
  const auto sm_count = [sms] { return sms; };
  foundry::stream s;

  gemm_sweep::sweep_problem shape = gemm_sweep::plain(2048, 64, 4096, gemm_sweep::sweep_class::random);
  shape.pad_a = 1;
  probe_operands<in> operands(shape, s);
  const auto& p = operands.p;
  const foundry::gemm_plan plan = foundry::detail::plan_rung(foundry::gemm_rung::wgmma, p, 1, sm_count);
  if (!plan.fallback) {
    std::fprintf(stderr, "2048x64x4096 with A's rows one past 16 bytes is not on the fallback: %s\n",
                 plan.describe().c_str());
    return 1;
  }
  const auto latency_bound = [&](foundry::launch_dependency dependency) {
    foundry::launch_config g = foundry::gemm_kernels::detail::tile_grid<fallback_policy>(p.m, p.n, 0);
    g.dependency = dependency;
    foundry::launch(s.view(), g, foundry::gemm_kernels::detail::gemm_tensor_core_fallback_kernel<in, fallback_policy>,
                    p, plan.k_per_split, std::int64_t{p.m * p.n});
  };

  std::printf("x_bytes,variant,per_call_us\n");
  std::printf("0,L_alone,%.2f\n",
              time_back_to_back([&] { latency_bound(foundry::launch_dependency::programmatic); }, s));
  for (const std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{16} << 20, std::uint64_t{256} << 20}) {
    const std::uint64_t vectors = bytes / sizeof(float4);
    foundry::device_buffer<float4> src(vectors, s), dst(vectors, s);
    FOUNDRY_CUDA_TRY(cudaMemsetAsync(src.data(), 0, bytes, s.get()));
    foundry::launch_config x;
    x.block = dim3(256, 1, 1);
    x.grid =
        dim3(static_cast<unsigned>(std::min<std::uint64_t>(4ull * sms, foundry::ceil_div<std::uint64_t>(vectors, 256))),
             1, 1);
    x.dependency = foundry::launch_dependency::programmatic;
    const auto copy = [&](bool late) {
      if (late) {
        foundry::launch(s.view(), x, stream_copy<true>, static_cast<const float4*>(src.data()), dst.data(), vectors);
      } else {
        foundry::launch(s.view(), x, stream_copy<false>, static_cast<const float4*>(src.data()), dst.data(), vectors);
      }
    };
    struct variant {
      const char* name;
      bool late;
      bool with_l;
      foundry::launch_dependency l_dependency;
    };
    for (const variant v : {variant{"X_alone_early", false, false, foundry::launch_dependency::programmatic},
                            variant{"X_alone_late", true, false, foundry::launch_dependency::programmatic},
                            variant{"X_early_then_L_P", false, true, foundry::launch_dependency::programmatic},
                            variant{"X_late_then_L_P", true, true, foundry::launch_dependency::programmatic},
                            variant{"X_early_then_L_F", false, true, foundry::launch_dependency::full}}) {
      const double us = time_back_to_back(
          [&] {
            copy(v.late);
            if (v.with_l) latency_bound(v.l_dependency);
          },
          s);
      std::printf("%llu,%s,%.2f\n", static_cast<unsigned long long>(bytes), v.name, us);
      std::fflush(stdout);
    }
  }
}
