// Session 29, for issue 21: rung 3's tiles against each other on every fp32 problem of the sweep.
// The worst fp32 rows (4228x263x2646, 654x3234x130, 125x10970x318, 563x2426x2931 at 0.58-0.70 of
// cuBLAS on an H100) run 128 x 128 tiles that fill 65-118% of one wave of blocks; session 27's
// probe tried only their splits. Here each problem runs the plan foundry chooses, then every
// rung-3 tile (128x128, 64x128, 128x64, 32x128, 128x32, 32x32) at its own automatic split and at
// 1, 2, 3, 4, 6, 8, 12 and 16 slices, packed as the chosen plan packs; each timed as the sweep
// times its rows (runs/session27/plan_space_probe.cu's sampler, 10 batches). One CSV line a plan:
//   problem,tile,requested,us,cublas_us,chosen,plan
// PROBE_ONLY=<text> keeps the problems whose name contains it.
// Build (from the repository root):
//   nvcc -O3 -std=c++20 -gencode arch=compute_90,code=sm_90 -I include -I bench \
//     -I bench/results/h200/runs/session23 bench/results/h100/runs/session29/rung3_tile_probe.cu \
//     -lcublas -lbenchmark -o rung3_tile_probe
#include <foundry/foundry.cuh>

#include "probe_common.cuh"

#include <foundry/bench/harness.cuh>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <set>
#include <string>

namespace {

namespace gk = foundry::gemm_kernels;

template <class Call>
double time_as_sweep(Call&& call, foundry::stream& s) {
  foundry::bench::options opt;
  opt.max_samples = 10;
  opt.max_seconds = 0.15;
  auto enqueue = [&](cuda::stream_ref) { call(); };
  return 1e6 * foundry::bench::detail::take_samples(opt.max_samples, s.view(), enqueue, opt).median_seconds;
}

void probe(const gemm_sweep::sweep_problem& shape, const foundry::device_properties& device, foundry::stream& s) {
  probe_operands<float> operands(shape, s);
  const auto& p = operands.p;
  const int sms = device.sm_count;
  const double cublas_us = time_as_sweep(
      [&] { gemm_sweep::cublas_gemm<float>(shape, operands.a.data(), operands.b.data(), operands.c.data(), s); }, s);
  const foundry::gemm_plan chosen = foundry::make_gemm_plan(p, device);
  const std::string chosen_what = chosen.describe();
  const std::string chosen_kernels = chosen_what.substr(0, chosen_what.find(": "));
  const gk::gemm_pack_plan packing = gk::operands_to_copy(p);
  const bool pack = chosen.pack_a || chosen.pack_b;
  std::set<std::string> timed;
  const auto run = [&](const char* tile, int requested, foundry::gemm_plan plan) {
    if (pack && packing.any() && plan.rung == foundry::gemm_rung::register_blocked)
      gk::detail::record_packing(plan, packing);
    const std::string what = plan.describe();
    const std::string kernels = what.substr(0, what.find(": "));
    if (!timed.insert(kernels).second) return;
    double us = -1.0;
    try {
      us = time_as_sweep([&] { foundry::detail::launch_plan(plan, p, {}, s.view()); }, s);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s %s: %s\n", shape.name().c_str(), what.c_str(), e.what());
    }
    std::printf("%s,%s,%d,%.2f,%.2f,%d,\"%s\"\n", shape.name().c_str(), tile, requested, us, cublas_us,
                kernels == chosen_kernels ? 1 : 0, what.c_str());
  };
  run("chosen", -1, chosen);
  if (chosen.rung != foundry::gemm_rung::register_blocked) {
    std::fflush(stdout);
    return;
  }
  const auto tiles = [&](int requested) {
    run("128x128", requested, gk::register_blocked_plan<gk::register_blocked_default_policy>(p, requested, sms));
    run("64x128", requested, gk::register_blocked_plan<gk::register_blocked_short_m_policy>(p, requested, sms));
    run("128x64", requested, gk::register_blocked_plan<gk::register_blocked_short_n_policy>(p, requested, sms));
    run("32x128", requested, gk::register_blocked_plan<gk::register_blocked_short_m32_policy>(p, requested, sms));
    run("128x32", requested, gk::register_blocked_plan<gk::register_blocked_short_n32_policy>(p, requested, sms));
    run("32x32", requested, gk::register_blocked_plan<gk::register_blocked_small_policy>(p, requested, sms));
  };
  for (const int requested : {0, 1, 2, 3, 4, 6, 8, 12, 16}) tiles(requested);
  std::fflush(stdout);
}

}  // namespace

int main() {
  const foundry::device_properties& device = foundry::get_device_properties();
  const char* only = std::getenv("PROBE_ONLY");
  foundry::stream s;
  std::printf("problem,tile,requested,us,cublas_us,chosen,plan\n");
  for (const auto& shape : gemm_sweep::sweep_problems()) {
    if (only != nullptr && shape.name().find(only) == std::string::npos) continue;
    try {
      probe(shape, device, s);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", shape.name().c_str(), e.what());
    }
  }
}
