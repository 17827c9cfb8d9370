// Benchmarks that prove the harness: a device-to-device cudaMemcpyAsync and a naive
// one-element-per-thread copy kernel at 1 MiB .. 1 GiB, hot and cold. On the 1 GiB hot
// cudaMemcpy row, a bare event-timed loop (no harness) runs in the same process and its
// figure is printed beside the harness's: `bare_GB/s` and `harness/bare` (goal: within 3%).
// Sizes are in bytes; GB/s counts bytes read + written. foundry's own copy kernel is
// benchmarked in bench_transform (rows copy/foundry/...), paired with these by name.

#include <foundry/bench/harness.cuh>
#include <foundry/foundry.cuh>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

namespace bench = foundry::bench;
using bench::cache_mode;

constexpr std::int64_t mib = std::int64_t{1} << 20;
constexpr std::int64_t gib = std::int64_t{1} << 30;

// The textbook copy: one element per thread, a bounds check, no loop, 4-byte accesses.
__global__ void naive_copy_kernel(const float* in, float* out, std::size_t n) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// Random input, poisoned output (NaN: a copy that skips an element cannot match).
struct copy_data {
  explicit copy_data(std::size_t bytes) : in(bytes / sizeof(float), s), out(bytes / sizeof(float), s) {
    bench::fill_uniform(in.span(), -1.0, 1.0, bench::default_seed, s);
    foundry::fill(out.span(), std::numeric_limits<float>::quiet_NaN(), s);
  }
  [[nodiscard]] bool copied() { return bench::bitwise_equal(out.span(), in.span(), s); }

  foundry::stream s;
  foundry::device_buffer<float> in;
  foundry::device_buffer<float> out;
};

// Median seconds of `reps` copies, each between two events, with nothing else around them:
// the measurement a careful person writes by hand.
template <class Enqueue>
double bare_event_loop_seconds(cuda::stream_ref s, Enqueue& enqueue, int reps) {
  foundry::event start;
  foundry::event stop;
  enqueue(s);
  foundry::synchronize(s);
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) {
    start.record(s);
    enqueue(s);
    stop.record(s);
    v.push_back(static_cast<double>(foundry::elapsed_ms(start, stop)) * 1e-3);
  }
  std::sort(v.begin(), v.end());
  return 0.5 * (v[(v.size() - 1) / 2] + v[v.size() / 2]);
}

void bm_copy_memcpy(benchmark::State& state, cache_mode mode) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  copy_data d(bytes);
  auto enqueue = [&](cuda::stream_ref s) {
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(d.out.data(), d.in.data(), bytes, cudaMemcpyDeviceToDevice, s.get()));
  };
  enqueue(d.s);
  if (!bench::expect(state, d.copied(), "cudaMemcpyAsync's output differs from its input")) return;
  bench::measure(state, d.s, {double(bytes), double(bytes), 0.0}, enqueue, {mode});

  if (mode == cache_mode::hot && bytes == static_cast<std::size_t>(gib) && !state.error_occurred()) {
    const double bare_gbps = 2.0 * static_cast<double>(bytes) / bare_event_loop_seconds(d.s, enqueue, 20) * 1e-9;
    state.counters["bare_GB/s"] = bare_gbps;
    state.counters["harness/bare"] = state.counters["GB/s"] / bare_gbps;
  }
}

void bm_copy_naive(benchmark::State& state, cache_mode mode) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  copy_data d(bytes);
  const std::size_t n = d.in.size();
  // One thread per element: the grid is as large as the array (2^20 blocks at 1 GiB).
  const foundry::launch_config config = foundry::make_launch_config_1d(n, 256);
  auto enqueue = [&](cuda::stream_ref s) {
    foundry::launch(s, config, naive_copy_kernel, d.in.data(), d.out.data(), n);
  };
  enqueue(d.s);
  if (!bench::expect(state, d.copied(), "the naive copy's output differs from its input")) return;
  bench::measure(state, d.s, {double(bytes), double(bytes), 0.0}, enqueue, {mode});
}

void copy_sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t bytes = mib; bytes <= gib; bytes *= 4) b->Arg(bytes);
}

}  // namespace

BENCHMARK_CAPTURE(bm_copy_memcpy, hot, cache_mode::hot)
    ->Name("copy/cudaMemcpy")
    ->Apply(bench::configure)
    ->Apply(copy_sizes);
BENCHMARK_CAPTURE(bm_copy_memcpy, cold, cache_mode::cold)
    ->Name("copy/cudaMemcpy/cold")
    ->Apply(bench::configure)
    ->Apply(copy_sizes);
BENCHMARK_CAPTURE(bm_copy_naive, hot, cache_mode::hot)->Name("copy/naive")->Apply(bench::configure)->Apply(copy_sizes);
BENCHMARK_CAPTURE(bm_copy_naive, cold, cache_mode::cold)
    ->Name("copy/naive/cold")
    ->Apply(bench::configure)
    ->Apply(copy_sizes);

FOUNDRY_BENCH_MAIN()
