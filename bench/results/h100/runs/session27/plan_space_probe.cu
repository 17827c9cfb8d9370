// Session 27, for issue 21: session 23's plan-space probe (runs/session23/plan_space_probe.cu)
// timed the way the sweep times its rows, so that the two agree. Session 23's probe took the
// fastest of 5 batches of back-to-back calls with nothing ahead of them on the stream, so a call
// that enqueues slower than the GPU runs it was timed at its host cost (cuBLAS's 4 us calls read
// 11-12 us there). Here every plan (and cuBLAS) is timed by foundry::bench's sampler, as
// gemm_sweep.cuh's rows are: a spin kernel ahead of each batch hides the enqueueing, and the time
// is the median of 20 batches. Slices of K go to 64 (the reduce of a small C takes 64, rung 3's
// and rung 5's cap there). Prints one CSV line a plan:
//   precision,problem,label,us,cublas_us,chosen,plan
// PROBE_ONLY=<text> keeps the problems whose name contains it; PROBE_ALL=1 takes every problem
// of the sweep; PROBE_PRECISIONS=fp32,bf16,fp16 (the default) picks the precisions.
// Build (from the repository root):
//   nvcc -O3 -std=c++20 -DFOUNDRY_HAS_SM90A=1 -gencode arch=compute_90a,code=sm_90a -I include -I bench \
//     -I bench/results/h200/runs/session23 bench/results/h100/runs/session27/plan_space_probe.cu \
//     -lcublas -lbenchmark -o plan_space_probe
#include <foundry/foundry.cuh>

#include "probe_common.cuh"

#include <foundry/bench/harness.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

/// The per-call time of `call()` in us, as the sweep's rows are timed (hot): the median of
/// 20 batches, each behind a spin kernel that covers its enqueueing.
template <class Call>
double time_as_sweep(Call&& call, foundry::stream& s) {
  foundry::bench::options opt;
  opt.max_samples = 20;
  opt.max_seconds = 0.3;
  auto enqueue = [&](cuda::stream_ref) { call(); };
  return 1e6 * foundry::bench::detail::take_samples(opt.max_samples, s.view(), enqueue, opt).median_seconds;
}

const std::set<std::string> worst_problems = {
    "1000x1000x12000_rn_rn_p0_0_0", "1024x1024x8192_rn_rn_p0_0_0", "102x1461x554_rn_ct_p1_4_3",
    "10535x4849x17_rt_rt_p5_1_2",   "125x10970x318_rn_cn_p4_4_6",  "1283x3x31_cn_rn_p4_0_3",
    "128x1024x16384_rn_rn_p0_0_0",  "12x470x7800_rt_rn_p6_1_5",    "1492x37x139_rn_ct_p6_2_0",
    "15992x9x14282_ct_cn_p5_1_6",   "16384x16x16384_rn_rn_p0_0_0", "18x1558x139_rn_ct_p7_7_6",
    "1950x23x670_rt_rt_p3_2_2",     "1x2869x1368_cn_cn_p1_2_0",    "2502x11840x18_rt_cn_p4_7_6",
    "256x256x16384_rn_rn_p0_0_0",   "25x176x187_cn_rt_p4_1_0",     "29x13x2378_rt_rt_p6_6_5",
    "2x5851x224_rt_ct_p6_3_4",      "301x1x87_rt_ct_p2_5_3",       "3x58x2835_cn_ct_p2_1_4",
    "4228x263x2646_rn_rt_p4_6_2",   "492x2x10_rt_rn_p2_1_6",       "563x2426x2931_cn_rt_p3_3_5",
    "608x118x51_rt_rn_p4_1_1",      "654x3234x130_ct_ct_p6_5_1",   "16384x8x16384_rn_rn_p0_0_0",
    "5789x645x1_cn_ct_p6_0_4",      "9x570x26_cn_rn_p6_2_2",       "127x5368x617_rn_cn_p3_2_3"};

template <class In>
void probe(const char* precision, const gemm_sweep::sweep_problem& shape, const foundry::device_properties& device,
           foundry::stream& s) {
  probe_operands<In> operands(shape, s);
  const auto& p = operands.p;
  const int sms = device.sm_count;
  const auto sm_count = [sms] { return sms; };
  const std::size_t optin = device.shared_memory_per_block_optin;
  const double cublas_us = time_as_sweep(
      [&] { gemm_sweep::cublas_gemm<In>(shape, operands.a.data(), operands.b.data(), operands.c.data(), s); }, s);

  std::vector<std::pair<std::string, foundry::gemm_plan>> plans;
  const foundry::gemm_plan chosen = foundry::make_gemm_plan(p, device);
  plans.emplace_back("chosen", chosen);
  const auto add = [&](const char* label, auto&& make) {
    try {
      plans.emplace_back(label, make());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s %s %s: refused: %s\n", precision, shape.name().c_str(), label, e.what());
    }
  };
  for (const int splits : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64}) {
    if constexpr (std::is_same_v<In, float>) {
      add("register_blocked",
          [&] { return foundry::detail::plan_rung(foundry::gemm_rung::register_blocked, p, splits, sm_count); });
      // Packed for float4 loads whatever the copies cost (pack_for_vector_loads asks first).
      const foundry::gemm_kernels::gemm_pack_plan packing = foundry::gemm_kernels::operands_to_copy(p);
      if (packing.any())
        add("register_blocked_packed", [&] {
          foundry::gemm_plan plan =
              foundry::detail::plan_rung(foundry::gemm_rung::register_blocked, p, splits, sm_count);
          foundry::gemm_kernels::detail::record_packing(plan, packing);
          return plan;
        });
    } else {
      add("wgmma_or_fallback",
          [&] { return foundry::detail::plan_rung(foundry::gemm_rung::wgmma, p, splits, sm_count, optin); });
      add("tensor_core",
          [&] { return foundry::detail::plan_rung(foundry::gemm_rung::tensor_core, p, splits, sm_count, optin); });
      const foundry::gemm_kernels::gemm_pack_plan packing = foundry::gemm_kernels::operands_to_copy(p);
      if (packing.any())
        add("packed_wgmma", [&] {
          foundry::gemm_plan copies;
          foundry::gemm_kernels::detail::record_packing(copies, packing);
          foundry::gemm_plan plan = foundry::detail::plan_rung(
              foundry::gemm_rung::wgmma,
              foundry::gemm_kernels::packed_problem(p, copies, foundry::gemm_kernels::pack_alignment), splits, sm_count,
              optin);
          foundry::gemm_kernels::detail::record_packing(plan, packing);
          return plan;
        });
    }
    add("skinny", [&] { return foundry::detail::plan_rung(foundry::gemm_rung::skinny, p, splits, sm_count); });
  }

  // Plans that differ only in their reason (after the first ": ") run the same kernels.
  const auto kernels_of = [](const foundry::gemm_plan& plan) {
    const std::string what = plan.describe();
    return what.substr(0, what.find(": "));
  };
  std::set<std::string> timed;
  for (const auto& [label, plan] : plans) {
    const std::string what = plan.describe();
    if (!timed.insert(kernels_of(plan)).second) continue;
    double us = -1.0;
    try {
      us = time_as_sweep([&] { foundry::detail::launch_plan(plan, p, {}, s.view()); }, s);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s %s %s: %s\n", precision, shape.name().c_str(), what.c_str(), e.what());
    }
    std::printf("%s,%s,%s,%.2f,%.2f,%d,\"%s\"\n", precision, shape.name().c_str(), label.c_str(), us, cublas_us,
                kernels_of(plan) == kernels_of(chosen) ? 1 : 0, what.c_str());
  }
  std::fflush(stdout);
}

}  // namespace

int main() {
  const foundry::device_properties& device = foundry::get_device_properties();
  const char* only = std::getenv("PROBE_ONLY");
  const bool all = std::getenv("PROBE_ALL") != nullptr;
  const char* precisions = std::getenv("PROBE_PRECISIONS");
  const auto wanted = [precisions](const char* precision) {
    return precisions == nullptr || std::string(precisions).find(precision) != std::string::npos;
  };
  foundry::stream s;
  std::printf("precision,problem,label,us,cublas_us,chosen,plan\n");
  for (const auto& shape : gemm_sweep::sweep_problems()) {
    const std::string name = shape.name();
    if (!all && worst_problems.count(name) == 0) continue;
    if (only != nullptr && name.find(only) == std::string::npos) continue;
    if (wanted("fp32")) probe<float>("fp32", shape, device, s);
    if (wanted("bf16")) probe<__nv_bfloat16>("bf16", shape, device, s);
    if (wanted("fp16")) probe<__half>("fp16", shape, device, s);
  }
}
