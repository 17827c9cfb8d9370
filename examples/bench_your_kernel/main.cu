// Benchmark your own kernel with foundry's harness: declare its work, check it, time it.
#include <foundry/bench/harness.cuh>
#include <foundry/foundry.cuh>

#include <algorithm>
#include <vector>

__global__ void scale(const float* x, float* y, float a, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) y[i] = a * x[i];
}

static void bm_scale(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  foundry::stream s;
  foundry::device_buffer<float> x(n, s), y(n, s);
  foundry::bench::fill_uniform(x.span(), -1.0, 1.0, foundry::bench::default_seed, s);  // never time zeros
  auto run = [&](cuda::stream_ref st) {  // only enqueues; the harness times it with CUDA events
    foundry::launch(st, foundry::make_launch_config_1d(n, 256, foundry::resident_grid_blocks(4)), scale, x.data(),
                    y.data(), 2.0f, n);
  };
  run(s);  // correct before timed: compare with the CPU
  std::vector<float> hx(n), hy(n);
  x.copy_to_host({hx.data(), n}, s), y.copy_to_host({hy.data(), n}, s), foundry::synchronize(s);
  const bool ok = std::equal(hy.begin(), hy.end(), hx.begin(), [](float yi, float xi) { return yi == 2.0f * xi; });
  if (!foundry::bench::expect(state, ok, "y != 2x")) return;
  foundry::bench::measure(state, s, {4.0 * n, 4.0 * n, 1.0 * n}, run);  // bytes read, written, flops per call
}
FOUNDRY_BENCHMARK(bm_scale)->Name("scale/mine")->Arg(1 << 24);  // "<algorithm>/<variant>/<size>"
FOUNDRY_BENCH_MAIN()                                            // without a GPU: one line on stderr, exit code 2
