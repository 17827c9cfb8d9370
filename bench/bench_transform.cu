// Element-wise kernels against their peers:
//  - saxpy z = a*x + y on float vectors of every power of 4 from 2^10 to 2^30 elements
//    (4 KiB .. 4 GiB per vector): foundry::transform vs thrust::transform vs the naive
//    one-thread-per-element kernel. Goal: foundry >= 1.0x thrust at every size.
//    Rows "saxpy/<variant>[/cold]/<elements>".
//  - copy of 1 MiB .. 1 GiB: foundry::device_copy, rows "copy/foundry[/cold]/<bytes>",
//    paired by name with bench_harness's copy/cudaMemcpy and copy/naive rows (same sizes).
//    Goal: >= 0.97x cudaMemcpy device-to-device at 1 GiB.
// GB/s counts bytes read + written (saxpy: 8 read + 4 written per element).

#include <foundry/algorithms/transform.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/naive/transform.cuh>
#include <foundry/runtime/stream.cuh>

#include <thrust/execution_policy.h>
#include <thrust/transform.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace {

namespace bench = foundry::bench;
using bench::cache_mode;

constexpr std::int64_t mib = std::int64_t{1} << 20;
constexpr std::int64_t gib = std::int64_t{1} << 30;

// The same functor for all three variants: an explicit fma, so that every variant
// computes the same bits and the check can be exact.
struct saxpy_op {
  float a;
  __host__ __device__ float operator()(float x, float y) const { return fmaf(a, x, y); }
};

enum class variant { foundry, thrust, naive };

// The reference: one element per thread, compared bitwise (NaN poison never matches).
__global__ void count_saxpy_mismatches(saxpy_op op, const float* x, const float* y, const float* z, std::size_t n,
                                       unsigned long long* count) {
  unsigned long long local = 0;
  for (auto i : foundry::grid_stride_range(n)) local += z[i] != fmaf(op.a, x[i], y[i]) ? 1 : 0;
  if (local != 0) atomicAdd(count, local);
}

struct saxpy_data {
  explicit saxpy_data(std::size_t n) : x(n, s), y(n, s), z(n, s) {
    bench::fill_uniform(x.span(), -1.0, 1.0, bench::default_seed, s);
    bench::fill_uniform(y.span(), -1.0, 1.0, bench::default_seed + 1, s);
    foundry::fill(z.span(), std::numeric_limits<float>::quiet_NaN(), s);
  }
  // Every z[i] == fma(a, x[i], y[i]), checked element by element on the device
  // (untimed; a 1 GiB round trip to the host would cost seconds per row).
  [[nodiscard]] bool correct() {
    foundry::device_buffer<unsigned long long> count(1, s, 0ull);
    foundry::launch(s, foundry::make_launch_config_1d(z.size(), 256, foundry::resident_grid_blocks(8)),
                    count_saxpy_mismatches, op, x.data(), y.data(), z.data(), z.size(), count.data());
    unsigned long long host = 1;
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(&host, count.data(), sizeof host, cudaMemcpyDeviceToHost, s.get()));
    s.synchronize();
    return host == 0;
  }

  foundry::stream s;
  saxpy_op op{1.75f};
  foundry::device_buffer<float> x;
  foundry::device_buffer<float> y;
  foundry::device_buffer<float> z;
};

// `Policy` is transform's for the foundry variant: the default for the main rows, a
// candidate for the policy rows below.
template <class Policy = foundry::transform_policy>
void bm_saxpy(benchmark::State& state, variant v, cache_mode mode) {
  const auto n = static_cast<std::size_t>(state.range(0));
  saxpy_data d(n);
  const auto x = d.x.span();
  const auto y = d.y.span();
  const auto z = d.z.span();
  const saxpy_op op = d.op;
  auto enqueue = [&](cuda::stream_ref s) {
    switch (v) {
      case variant::foundry: foundry::transform<Policy>(x, y, z, op, s); break;
      case variant::thrust:
        thrust::transform(thrust::cuda::par_nosync.on(s.get()), x.data(), x.data() + n, y.data(), z.data(), op);
        break;
      case variant::naive: foundry::naive::transform(x, y, z, op, s); break;
    }
  };
  enqueue(d.s);
  if (!bench::expect(state, d.correct(), "z differs from fma(a, x, y)")) return;
  const double bytes = static_cast<double>(n) * sizeof(float);
  bench::measure(state, d.s, {2 * bytes, bytes, 2.0 * static_cast<double>(n)}, enqueue, {mode});
}

template <class Policy = foundry::device_copy_policy>
void bm_copy_foundry(benchmark::State& state, cache_mode mode) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  foundry::stream s;
  foundry::device_buffer<float> in(bytes / sizeof(float), s);
  foundry::device_buffer<float> out(bytes / sizeof(float), s);
  bench::fill_uniform(in.span(), -1.0, 1.0, bench::default_seed, s);
  foundry::fill(out.span(), std::numeric_limits<float>::quiet_NaN(), s);
  auto enqueue = [&](cuda::stream_ref st) { foundry::device_copy<Policy>(out.span(), in.span(), st); };
  enqueue(s);
  if (!bench::expect(state, bench::bitwise_equal(out.span(), in.span(), s), "device_copy's output differs")) return;
  bench::measure(state, s, {double(bytes), double(bytes), 0.0}, enqueue, {mode});
}

// Policy candidates, timed beside the default at 2^28 elements / 1 GiB so that the
// defaults in transform.cuh rest on measured figures.
template <int BlocksPerSm, int InFlight>
struct saxpy_candidate : foundry::transform_policy {
  static constexpr int blocks_per_sm = BlocksPerSm;
  static constexpr int vectors_in_flight = InFlight;
};

template <class Policy>
void bm_saxpy_policy(benchmark::State& state) {
  bm_saxpy<Policy>(state, variant::foundry, cache_mode::hot);
}

// The default without programmatic dependent launch, hot (after another saxpy) and cold
// (after the L2 flush kernel, which does not let dependents start early).
struct saxpy_full_dependency : foundry::transform_policy {
  static constexpr foundry::launch_dependency dependency = foundry::launch_dependency::full;
};
void bm_saxpy_full_dependency(benchmark::State& state, cache_mode mode) {
  bm_saxpy<saxpy_full_dependency>(state, variant::foundry, mode);
}

void small_sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t n = std::int64_t{1} << 10; n <= std::int64_t{1} << 22; n *= 4) b->Arg(n);
}

template <int BlockThreads, int InFlight>
struct copy_candidate {
  static constexpr int block_threads = BlockThreads;
  static constexpr int vectors_in_flight = InFlight;
};

template <class Policy>
void bm_copy_policy(benchmark::State& state) {
  bm_copy_foundry<Policy>(state, cache_mode::hot);
}

void saxpy_sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t n = std::int64_t{1} << 10; n <= gib; n *= 4) b->Arg(n);  // 2^10 .. 2^30 floats per vector
}

void copy_sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t bytes = mib; bytes <= gib; bytes *= 4) b->Arg(bytes);  // as in bench_harness
}

}  // namespace

BENCHMARK_CAPTURE(bm_saxpy, foundry, variant::foundry, cache_mode::hot)
    ->Name("saxpy/foundry")
    ->Apply(bench::configure)
    ->Apply(saxpy_sizes);
BENCHMARK_CAPTURE(bm_saxpy, thrust, variant::thrust, cache_mode::hot)
    ->Name("saxpy/thrust")
    ->Apply(bench::configure)
    ->Apply(saxpy_sizes);
BENCHMARK_CAPTURE(bm_saxpy, naive, variant::naive, cache_mode::hot)
    ->Name("saxpy/naive")
    ->Apply(bench::configure)
    ->Apply(saxpy_sizes);
BENCHMARK_CAPTURE(bm_saxpy, foundry_cold, variant::foundry, cache_mode::cold)
    ->Name("saxpy/foundry/cold")
    ->Apply(bench::configure)
    ->Apply(saxpy_sizes);
BENCHMARK_CAPTURE(bm_saxpy, thrust_cold, variant::thrust, cache_mode::cold)
    ->Name("saxpy/thrust/cold")
    ->Apply(bench::configure)
    ->Apply(saxpy_sizes);

BENCHMARK_CAPTURE(bm_copy_foundry, hot, cache_mode::hot)
    ->Name("copy/foundry")
    ->Apply(bench::configure)
    ->Apply(copy_sizes);
BENCHMARK_CAPTURE(bm_copy_foundry, cold, cache_mode::cold)
    ->Name("copy/foundry/cold")
    ->Apply(bench::configure)
    ->Apply(copy_sizes);

BENCHMARK_CAPTURE(bm_saxpy_full_dependency, hot, cache_mode::hot)
    ->Name("saxpy/foundry_full_dependency")
    ->Apply(bench::configure)
    ->Apply(small_sizes);
BENCHMARK_CAPTURE(bm_saxpy_full_dependency, cold, cache_mode::cold)
    ->Name("saxpy/foundry_full_dependency/cold")
    ->Apply(bench::configure)
    ->Apply(small_sizes);
FOUNDRY_BENCHMARK(bm_saxpy_policy<saxpy_candidate<4, 4>>)->Name("saxpy/foundry_b4v4")->Arg(gib / 4);
FOUNDRY_BENCHMARK(bm_saxpy_policy<saxpy_candidate<8, 2>>)->Name("saxpy/foundry_b8v2")->Arg(gib / 4);
FOUNDRY_BENCHMARK(bm_saxpy_policy<saxpy_candidate<8, 4>>)->Name("saxpy/foundry_b8v4")->Arg(gib / 4);
FOUNDRY_BENCHMARK(bm_saxpy_policy<saxpy_candidate<1000, 2>>)->Name("saxpy/foundry_b1000v2")->Arg(gib / 4);
FOUNDRY_BENCHMARK(bm_saxpy_policy<saxpy_candidate<1000, 1>>)->Name("saxpy/foundry_b1000v1")->Arg(gib / 4);
FOUNDRY_BENCHMARK(bm_copy_policy<copy_candidate<256, 2>>)->Name("copy/foundry_t256v2")->Arg(gib);
FOUNDRY_BENCHMARK(bm_copy_policy<copy_candidate<256, 8>>)->Name("copy/foundry_t256v8")->Arg(gib);
FOUNDRY_BENCHMARK(bm_copy_policy<copy_candidate<512, 4>>)->Name("copy/foundry_t512v4")->Arg(gib);
FOUNDRY_BENCHMARK(bm_copy_policy<copy_candidate<128, 8>>)->Name("copy/foundry_t128v8")->Arg(gib);

FOUNDRY_BENCH_MAIN()
