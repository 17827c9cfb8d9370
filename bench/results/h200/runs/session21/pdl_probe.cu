// Session 21: split_probe.cu found rung 4's fallback split 2 ways at 2048x64x4096 (A's rows
// one past 16 bytes) 60 us a call alone but 134 us a call back to back, whatever the
// workspace: the chain fallback -> reduce -> fallback -> ... under programmatic dependent
// launch. Times 50 chained calls of the split fallback and its reduce with each kernel's
// launch programmatic (P) or not (F), the reduce's trigger at its start (the library's) or
// after its sums (reduce_late), and without the reduce; one CSV line a problem and variant.
// Build (from the repository root):
//   nvcc -O3 -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
//     -I bench/include bench/results/h200/runs/session21/pdl_probe.cu -lcublas -lbenchmark -o pdl_probe
#include <foundry/foundry.cuh>

#include "gemm_sweep.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using in = __nv_bfloat16;
using fallback_policy = foundry::gemm_kernels::tensor_core_fallback_policy;

// split_k_reduce_kernel<1> with the trigger after the sums.
__global__ void reduce_late(const float* __restrict__ w, int splits, std::int64_t m, std::int64_t n,
                            float* __restrict__ c, std::int64_t ldc) {
  foundry::wait_for_prior_grids();
  const std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (e < m * n) {
    float sum = 0.0f;
    for (int z = 0; z < splits; ++z) sum += w[z * m * n + e];
    c[(e / n) * ldc + e % n] = sum;
  }
  foundry::allow_dependent_launch();
}

// The same with the trigger at its start, as the library's reduce kernels.
__global__ void reduce_early(const float* __restrict__ w, int splits, std::int64_t m, std::int64_t n,
                             float* __restrict__ c, std::int64_t ldc) {
  foundry::allow_dependent_launch();
  foundry::wait_for_prior_grids();
  const std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (e < m * n) {
    float sum = 0.0f;
    for (int z = 0; z < splits; ++z) sum += w[z * m * n + e];
    c[(e / n) * ldc + e % n] = sum;
  }
}

}  // namespace

int main() {
  std::vector<std::pair<gemm_sweep::sweep_problem, int>> problems;
  for (const auto& [m, n, k, splits] :
       std::vector<std::array<std::int64_t, 4>>{{2048, 64, 4096, 2}, {2048, 64, 4096, 8}, {512, 512, 1024, 2}}) {
    gemm_sweep::sweep_problem q = gemm_sweep::plain(m, n, k, gemm_sweep::sweep_class::random);
    q.pad_a = 1;
    problems.emplace_back(q, static_cast<int>(splits));
  }
  for (const auto& p : gemm_sweep::sweep_problems())
    if (p.name().rfind("12x470x7800", 0) == 0) problems.emplace_back(p, 16);
  const int sms = foundry::get_device_properties().sm_count;
  const auto sm_count = [sms] { return sms; };
  foundry::stream s;
  std::printf("problem,splits,variant,per_call_us\n");
  for (const auto& [shape, splits] : problems) {
    const auto sa = shape.a(), sb = shape.b(), sc = shape.c();
    foundry::device_buffer<in> a(sa.elements(), s), b(sb.elements(), s);
    foundry::device_buffer<float> c(sc.elements(), s);
    FOUNDRY_CUDA_TRY(cudaMemsetAsync(a.data(), 0x3c, a.size() * sizeof(in), s.get()));
    FOUNDRY_CUDA_TRY(cudaMemsetAsync(b.data(), 0x3c, b.size() * sizeof(in), s.get()));
    const auto p =
        foundry::make_gemm_problem<in, float>(1.0f, sa.view<const in>(a.data()), shape.op_a,
                                              sb.view<const in>(b.data()), shape.op_b, 0.0f, sc.view<float>(c.data()));
    const foundry::gemm_plan plan = foundry::detail::plan_rung(foundry::gemm_rung::wgmma, p, splits, sm_count);
    if (!plan.fallback || plan.split_k != splits) continue;
    foundry::device_buffer<float> w(static_cast<std::size_t>(splits * p.m * p.n), s);
    foundry::gemm_problem<in, float> q = p;
    q.c = w.data();
    q.ldc = p.n;
    struct variant {
      const char* name;
      bool gemm_programmatic, reduce_programmatic;
      int reduce;  // 0 none, 1 early trigger, 2 late trigger, 3 the library's launch_plan
    };
    for (const variant v :
         {variant{"library", true, true, 3}, variant{"P_P_early", true, true, 1}, variant{"P_P_late", true, true, 2},
          variant{"P_F_early", true, false, 1}, variant{"F_P_early", false, true, 1},
          variant{"F_F_early", false, false, 1}, variant{"P_none", true, true, 0}, variant{"F_none", false, true, 0}}) {
      const auto call = [&] {
        if (v.reduce == 3) return foundry::detail::launch_plan(plan, p, {}, s.view());
        foundry::launch_config g = foundry::gemm_kernels::detail::tile_grid<fallback_policy>(p.m, p.n, 0);
        g.grid.y = static_cast<unsigned>(splits);
        g.dependency =
            v.gemm_programmatic ? foundry::launch_dependency::programmatic : foundry::launch_dependency::full;
        foundry::launch(s.view(), g,
                        foundry::gemm_kernels::detail::gemm_tensor_core_fallback_kernel<in, fallback_policy>, q,
                        plan.k_per_split, std::int64_t{p.m * p.n});
        if (v.reduce == 0) return;
        foundry::launch_config r;
        r.block = dim3(256, 1, 1);
        r.grid = dim3(static_cast<unsigned>(foundry::ceil_div<std::int64_t>(p.m * p.n, 256)), 1, 1);
        r.dependency =
            v.reduce_programmatic ? foundry::launch_dependency::programmatic : foundry::launch_dependency::full;
        if (v.reduce == 1) {
          foundry::launch(s.view(), r, reduce_early, static_cast<const float*>(w.data()), splits, p.m, p.n, p.c, p.ldc);
        } else {
          foundry::launch(s.view(), r, reduce_late, static_cast<const float*>(w.data()), splits, p.m, p.n, p.c, p.ldc);
        }
      };
      for (int i = 0; i < 3; ++i) call();
      s.synchronize();
      double best = 1e30;
      for (int batch = 0; batch < 5; ++batch) {
        foundry::event start, stop;
        start.record(s.view());
        for (int i = 0; i < 50; ++i) call();
        stop.record(s.view());
        stop.synchronize();
        best = std::min(best, 1000.0 * foundry::elapsed_ms(start, stop) / 50);
      }
      std::printf("%s,%d,%s,%.2f\n", shape.name().c_str(), splits, v.name, best);
      std::fflush(stdout);
    }
  }
}
