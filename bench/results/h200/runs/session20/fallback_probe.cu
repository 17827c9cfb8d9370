// Session 20: measures what the time model of gemm_pack.cuh compares, so that its figures
// (fallback_step_us, fallback_block_step_us, launch_us, ...) can be refitted on measured
// times: for each bf16 problem of the shape sweep whose operands' rows are off 16-byte
// boundaries (and some made here), rung 4's fallback at 1 to 16 slices of K and the packed
// copies with the fast kernel, each timed as back-to-back calls on one stream
// (foundry::detail::launch_plan with internal workspace, as foundry::gemm runs them), beside
// the model's figure for the same plan. Prints one CSV line per problem and plan:
//   problem,plan,splits,blocks,steps,waves,measured_us,modelled_us,chosen
// PROBE_ONLY=<text> keeps only the problems whose name contains it (for a profiler's run).
// Build (from the repository root; needs libbenchmark only for gemm_sweep.cuh's header):
//   nvcc -O3 -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
//     -I bench/include bench/results/h200/runs/session20/fallback_probe.cu -lcublas -lbenchmark -o fallback_probe
#include <foundry/foundry.cuh>

#include "gemm_sweep.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using in = __nv_bfloat16;

struct probe_problem {
  std::string name;
  gemm_sweep::sweep_problem shape;
};

/// Per-call time of `plan` on `p`: the fastest of 5 batches of back-to-back calls, each batch
/// at least 2 ms (20 calls at least) after 3 calls of warm-up.
double time_plan(const foundry::gemm_plan& plan, const foundry::gemm_problem<in, float>& p, foundry::stream& s) {
  for (int i = 0; i < 3; ++i) foundry::detail::launch_plan(plan, p, {}, s.view());
  foundry::event start, stop;
  start.record(s.view());
  foundry::detail::launch_plan(plan, p, {}, s.view());
  stop.record(s.view());
  stop.synchronize();
  const double one_us = 1000.0 * foundry::elapsed_ms(start, stop);
  const int calls = std::max(20, static_cast<int>(2000.0 / std::max(one_us, 1.0)));
  double best = 1e30;
  for (int batch = 0; batch < 5; ++batch) {
    start.record(s.view());
    for (int i = 0; i < calls; ++i) foundry::detail::launch_plan(plan, p, {}, s.view());
    stop.record(s.view());
    stop.synchronize();
    best = std::min(best, 1000.0 * foundry::elapsed_ms(start, stop) / calls);
  }
  return best;
}

}  // namespace

int main() {
  std::vector<probe_problem> problems;
  for (const auto& p : gemm_sweep::sweep_problems()) problems.push_back({p.name(), p});
  // Made here: A's leading dimension one past its contiguous extent, over a grid of sizes.
  for (const std::int64_t m : {64, 512, 2048})
    for (const std::int64_t n : {64, 512, 2048})
      for (const std::int64_t k : {128, 1024, 4096}) {
        gemm_sweep::sweep_problem q = gemm_sweep::plain(m, n, k, gemm_sweep::sweep_class::random);
        q.pad_a = 1;
        problems.push_back({"grid_" + q.name(), q});
      }

  const foundry::device_properties& device = foundry::get_device_properties();
  const int sms = device.sm_count;
  const auto sm_count = [sms] { return sms; };
  const char* only = std::getenv("PROBE_ONLY");
  foundry::stream s;
  std::printf("problem,plan,splits,blocks,steps,waves,measured_us,modelled_us,chosen\n");
  for (const auto& [name, shape] : problems) {
    if (only != nullptr && name.find(only) == std::string::npos) continue;
    const auto sa = shape.a(), sb = shape.b(), sc = shape.c();
    foundry::device_buffer<in> a(sa.elements(), s), b(sb.elements(), s);
    foundry::device_buffer<float> c(sc.elements(), s);
    FOUNDRY_CUDA_TRY(cudaMemsetAsync(a.data(), 0x3c, a.size() * sizeof(in), s.get()));
    FOUNDRY_CUDA_TRY(cudaMemsetAsync(b.data(), 0x3c, b.size() * sizeof(in), s.get()));
    const auto p =
        foundry::make_gemm_problem<in, float>(1.0f, sa.view<const in>(a.data()), shape.op_a,
                                              sb.view<const in>(b.data()), shape.op_b, 0.0f, sc.view<float>(c.data()));
    const foundry::gemm_kernels::gemm_pack_plan packing = foundry::gemm_kernels::operands_to_copy(p);
    if (!packing.any() || foundry::gemm_kernels::skinny_shape(p)) continue;
    const foundry::gemm_plan chosen = foundry::make_gemm_plan(p, device);
    std::vector<std::pair<std::string, foundry::gemm_plan>> plans;
    for (const int splits : {1, 2, 3, 4, 6, 8, 12, 16}) {
      const foundry::gemm_plan f = foundry::detail::plan_rung(foundry::gemm_rung::wgmma, p, splits, sm_count);
      if (f.fallback && (plans.empty() || plans.back().second.split_k != f.split_k)) plans.emplace_back("fallback", f);
    }
    foundry::gemm_plan copies;
    foundry::gemm_kernels::detail::record_packing(copies, packing);
    foundry::gemm_plan packed = foundry::detail::plan_rung(
        foundry::gemm_rung::wgmma,
        foundry::gemm_kernels::packed_problem(p, copies, foundry::gemm_kernels::pack_alignment), 0, sm_count,
        device.shared_memory_per_block_optin);
    foundry::gemm_kernels::detail::record_packing(packed, packing);
    plans.emplace_back(packed.rung == foundry::gemm_rung::wgmma ? "packed_wgmma" : "packed_tensor_core", packed);
    for (const auto& [label, plan] : plans) {
      const std::int64_t tiles =
          foundry::ceil_div<std::int64_t>(p.m, plan.block_m) * foundry::ceil_div<std::int64_t>(p.n, plan.block_n);
      const std::int64_t blocks = tiles * std::max(plan.split_k, 1);
      const std::int64_t depth = plan.split_k > 1 ? plan.k_per_split : p.k;
      const std::int64_t steps = foundry::ceil_div<std::int64_t>(depth, plan.block_k);
      const std::int64_t slots = std::int64_t{sms} * std::max(plan.min_blocks_per_sm, 1);
      const bool is_chosen = plan.fallback == chosen.fallback && plan.split_k == chosen.split_k &&
                             plan.pack_a == chosen.pack_a && plan.pack_b == chosen.pack_b;
      std::printf("%s,%s,%d,%lld,%lld,%lld,%.2f,%.2f,%d\n", name.c_str(), label.c_str(), std::max(plan.split_k, 1),
                  static_cast<long long>(blocks), static_cast<long long>(steps),
                  static_cast<long long>(foundry::ceil_div(blocks, slots)), time_plan(plan, p, s),
                  foundry::gemm_kernels::modelled_us<in>(plan, p, sms), is_chosen ? 1 : 0);
    }
    std::fflush(stdout);
  }
}
