// Session 21: why rung 4's fallback runs its K steps about twice as slowly when K is split
// (session 21's fallback probe, H100: grid 2048x64x4096 with A's rows one past 16 bytes,
// 128 steps unsplit 111.8 us, 64 steps in 2 slices 134.1 us). For a few problems and
// splits, times a call four ways:
//   chained  back-to-back calls on one stream, workspace allocated by each call (as the probe)
//   owned    back-to-back calls with one workspace given by the caller (no stream-ordered
//            allocation between the calls)
//   alone    each call between two stream synchronizations (no overlap between calls)
//   kernel   as alone, but the fallback kernel only (launch_tensor_core on the split problem,
//            without the reduce), for the kernel's own time
// and prints one CSV line each: problem,splits,blocks,steps,chained_us,owned_us,alone_us.
// Build (from the repository root):
//   nvcc -O3 -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
//     -I bench/include bench/results/h200/runs/session21/split_probe.cu -lcublas -lbenchmark -o split_probe
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

template <class Call>
double per_call_us(Call&& call, foundry::stream& s, bool sync_each) {
  for (int i = 0; i < 3; ++i) call();
  s.synchronize();
  double best = 1e30;
  for (int batch = 0; batch < 5; ++batch) {
    foundry::event start, stop;
    if (sync_each) {
      double total = 0;
      for (int i = 0; i < 20; ++i) {
        start.record(s.view());
        call();
        stop.record(s.view());
        stop.synchronize();
        total += 1000.0 * foundry::elapsed_ms(start, stop);
      }
      best = std::min(best, total / 20);
    } else {
      start.record(s.view());
      for (int i = 0; i < 50; ++i) call();
      stop.record(s.view());
      stop.synchronize();
      best = std::min(best, 1000.0 * foundry::elapsed_ms(start, stop) / 50);
    }
  }
  return best;
}

}  // namespace

int main() {
  std::vector<gemm_sweep::sweep_problem> problems;
  for (const auto& [m, n, k] :
       std::vector<std::array<std::int64_t, 3>>{{2048, 64, 4096}, {512, 512, 1024}, {64, 2048, 1024}}) {
    gemm_sweep::sweep_problem q = gemm_sweep::plain(m, n, k, gemm_sweep::sweep_class::random);
    q.pad_a = 1;
    problems.push_back(q);
  }
  for (const auto& p : gemm_sweep::sweep_problems()) {
    const std::string name = p.name();
    if (name.rfind("1950x23x670", 0) == 0 || name.rfind("12x470x7800", 0) == 0) problems.push_back(p);
  }
  const foundry::device_properties& device = foundry::get_device_properties();
  const int sms = device.sm_count;
  const auto sm_count = [sms] { return sms; };
  foundry::stream s;
  std::printf("problem,splits,blocks,steps,chained_us,owned_us,alone_us,kernel_alone_us\n");
  for (const auto& shape : problems) {
    const auto sa = shape.a(), sb = shape.b(), sc = shape.c();
    foundry::device_buffer<in> a(sa.elements(), s), b(sb.elements(), s);
    foundry::device_buffer<float> c(sc.elements(), s);
    FOUNDRY_CUDA_TRY(cudaMemsetAsync(a.data(), 0x3c, a.size() * sizeof(in), s.get()));
    FOUNDRY_CUDA_TRY(cudaMemsetAsync(b.data(), 0x3c, b.size() * sizeof(in), s.get()));
    const auto p =
        foundry::make_gemm_problem<in, float>(1.0f, sa.view<const in>(a.data()), shape.op_a,
                                              sb.view<const in>(b.data()), shape.op_b, 0.0f, sc.view<float>(c.data()));
    for (const int splits : {1, 2, 4, 8, 16}) {
      const foundry::gemm_plan plan = foundry::detail::plan_rung(foundry::gemm_rung::wgmma, p, splits, sm_count);
      if (!plan.fallback || plan.split_k != splits) continue;
      foundry::device_buffer<float> w(std::max<std::size_t>(plan.workspace_bytes / sizeof(float), 1), s);
      const cuda::std::span<float> ws(w.data(), w.size());
      const double chained = per_call_us([&] { foundry::detail::launch_plan(plan, p, {}, s.view()); }, s, false);
      const double owned = per_call_us([&] { foundry::detail::launch_plan(plan, p, ws, s.view()); }, s, false);
      const double alone = per_call_us([&] { foundry::detail::launch_plan(plan, p, ws, s.view()); }, s, true);
      // The kernel alone: the slices into the workspace, no reduce.
      const double kernel = per_call_us(
          [&] {
            foundry::gemm_problem<in, float> q = p;
            q.c = splits > 1 ? w.data() : p.c;
            q.ldc = splits > 1 ? p.n : p.ldc;
            foundry::launch_config cfg =
                foundry::gemm_kernels::detail::tile_grid<foundry::gemm_kernels::tensor_core_fallback_policy>(p.m, p.n,
                                                                                                             0);
            cfg.grid.y = static_cast<unsigned>(splits);
            foundry::launch(s.view(), cfg,
                            foundry::gemm_kernels::detail::gemm_tensor_core_fallback_kernel<
                                in, foundry::gemm_kernels::tensor_core_fallback_policy>,
                            q, plan.k_per_split, std::int64_t{p.m * p.n});
          },
          s, true);
      const std::int64_t tiles = foundry::ceil_div<std::int64_t>(p.m, 64) * foundry::ceil_div<std::int64_t>(p.n, 64);
      std::printf(
          "%s,%d,%lld,%lld,%.2f,%.2f,%.2f,%.2f\n", shape.name().c_str(), splits, static_cast<long long>(tiles * splits),
          static_cast<long long>(foundry::ceil_div<std::int64_t>(plan.k_per_split > 0 ? plan.k_per_split : p.k, 32)),
          chained, owned, alone, kernel);
      std::fflush(stdout);
    }
  }
}
