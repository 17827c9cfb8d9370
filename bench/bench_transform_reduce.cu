// Dot products (a fused map-reduce over two inputs) of 2^20, 2^24 and 2^28 doubles
// and floats: foundry::transform_reduce (the public call as a user writes it, workspace
// allocated inside), foundry::naive::transform_reduce (map into a temporary, then a
// tree), thrust::inner_product (the peer named by the goal) and
// cub::DeviceReduce::TransformReduce over a zip of the two inputs (the fastest
// measured on the H200: 4.59 TB/s at 2^28 doubles). Rows
// "dot_<f64|f32>/<variant>/<n>". Goal: foundry >= 1.0x thrust, and >= 4.4 TB/s at
// 2^28 doubles. GB/s counts the two inputs read once (the result's bytes are declared
// but negligible).
//
// Check before timing, against a double (f64: long double) reference of the same data
// computed on the host once per size: |got - ref| <= tol * sum|a_i * b_i|. The worst-case
// bound gamma(n) is useless for float at 2^28 (n * 2^-24 = 16), so the tolerance is that
// of a blocked sum whose longest serial chain is at most 2^14 terms (every variant here
// splits n over at least 2^14 threads, then adds their partials in trees):
// tol = (2^14 + 64) * u, with u = 2^-24 (f32) or 2^-53 (f64).

#include <foundry/algorithms/transform_reduce.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/naive/transform_reduce.cuh>
#include <foundry/runtime/stream.cuh>

#include <thrust/execution_policy.h>
#include <thrust/inner_product.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace bench = foundry::bench;

enum class variant { naive, foundry, thrust, cub };

template <class T>
struct multiply_pair {
  __host__ __device__ T operator()(const thrust::tuple<T, T>& p) const { return thrust::get<0>(p) * thrust::get<1>(p); }
};

struct dot_reference {
  long double dot = 0;
  long double sum_abs = 0;
};

// The reference dot of the data in `a` and `b`, cached per type and size (the data
// depends only on the seed and n; Google Benchmark calls each row more than once).
template <class T>
dot_reference reference_dot(const foundry::device_buffer<T>& a, const foundry::device_buffer<T>& b,
                            foundry::stream& s) {
  static std::map<std::size_t, dot_reference> cache;
  if (const auto it = cache.find(a.size()); it != cache.end()) return it->second;
  std::vector<T> ha(a.size()), hb(b.size());
  a.copy_to_host({ha.data(), ha.size()}, s);
  b.copy_to_host({hb.data(), hb.size()}, s);
  s.synchronize();
  dot_reference r;
  for (std::size_t i = 0; i < ha.size(); ++i) {
    const long double p = static_cast<long double>(ha[i]) * static_cast<long double>(hb[i]);
    r.dot += p;
    r.sum_abs += std::fabs(p);
  }
  cache.emplace(a.size(), r);
  return r;
}

template <class T, class Policy = foundry::reduce_policy>
void bm_dot(benchmark::State& state, variant v) {
  const auto n = static_cast<std::size_t>(state.range(0));
  foundry::stream s;
  foundry::device_buffer<T> a(n, s);
  foundry::device_buffer<T> b(n, s);
  bench::fill_uniform(a.span(), -1.0, 1.0, bench::default_seed, s);
  bench::fill_uniform(b.span(), -1.0, 1.0, bench::default_seed + 1, s);
  foundry::device_buffer<T> out(1, s, std::numeric_limits<T>::quiet_NaN());
  const auto x = cuda::std::span<const T>(a.data(), n);
  const auto y = cuda::std::span<const T>(b.data(), n);

  // CUB's temporary storage, allocated once outside the timed region as CUB users do.
  const auto zip = thrust::make_zip_iterator(thrust::make_tuple(a.data(), b.data()));
  std::size_t cub_bytes = 0;
  if (v == variant::cub) {
    FOUNDRY_CUDA_TRY(cub::DeviceReduce::TransformReduce(nullptr, cub_bytes, zip, out.data(), n, cuda::std::plus<T>{},
                                                        multiply_pair<T>{}, T{0}, s.get()));
  }
  foundry::device_buffer<std::byte> cub_scratch(cub_bytes, s);

  T thrust_result = std::numeric_limits<T>::quiet_NaN();
  auto enqueue = [&](cuda::stream_ref st) {
    switch (v) {
      case variant::naive:
        foundry::naive::transform_reduce(x, y, out.span(), T{0}, cuda::std::plus<T>{}, cuda::std::multiplies<T>{}, st);
        break;
      case variant::foundry:
        foundry::transform_reduce<Policy>(x, y, out.span(), T{0}, cuda::std::plus<T>{}, cuda::std::multiplies<T>{}, st);
        break;
      case variant::thrust:
        // inner_product returns its value to the host, so it synchronises: each timed
        // call includes one device-to-host copy of a T and the host's wake-up, as a
        // Thrust user's call does (the harness cannot hide it behind its spin kernel).
        // That costs microseconds: it matters at 2^20, not at 2^28. The CUB row is the
        // same reduction with the result left on the device.
        thrust_result =
            thrust::inner_product(thrust::cuda::par_nosync.on(st.get()), a.data(), a.data() + n, b.data(), T{0});
        break;
      case variant::cub: {
        std::size_t bytes = cub_bytes;
        FOUNDRY_CUDA_TRY(cub::DeviceReduce::TransformReduce(cub_scratch.data(), bytes, zip, out.data(), n,
                                                            cuda::std::plus<T>{}, multiply_pair<T>{}, T{0}, st.get()));
        break;
      }
    }
  };

  enqueue(s);
  T result = 0;
  FOUNDRY_CUDA_TRY(cudaMemcpyAsync(&result, out.data(), sizeof result, cudaMemcpyDeviceToHost, s.get()));
  s.synchronize();
  if (v == variant::thrust) result = thrust_result;
  const dot_reference ref = reference_dot(a, b, s);
  const long double u = std::is_same_v<T, float> ? std::ldexp(1.0L, -24) : std::ldexp(1.0L, -53);
  const long double tolerance = (16384 + 64) * u * ref.sum_abs;
  const long double error = std::fabs(static_cast<long double>(result) - ref.dot);
  if (!bench::expect(state, error <= tolerance,
                     "dot " + std::to_string(static_cast<double>(result)) + " is " +
                         std::to_string(static_cast<double>(error)) + " from the reference " +
                         std::to_string(static_cast<double>(ref.dot)) + " (tolerance " +
                         std::to_string(static_cast<double>(tolerance)) + ")"))
    return;
  const double bytes = 2.0 * static_cast<double>(n) * sizeof(T);
  bench::measure(state, s, {bytes, sizeof(T), 2.0 * static_cast<double>(n)}, enqueue);
}

void dot_sizes(benchmark::internal::Benchmark* b) {
  for (const int log2n : {20, 24, 28}) b->Arg(std::int64_t{1} << log2n);
}

}  // namespace

void bm_dot_f64(benchmark::State& state, variant v) { bm_dot<double>(state, v); }

// Policy candidates for two 8-byte inputs, beside the default.
template <int BlocksPerSm, int InFlight, foundry::tile_assignment Tiles = foundry::tile_assignment::strided>
struct dot_candidate : foundry::reduce_policy {
  static constexpr int blocks_per_sm = BlocksPerSm;
  static constexpr int vectors_in_flight = InFlight;
  static constexpr foundry::tile_assignment tiles = Tiles;
};
template <class Policy>
void bm_dot_f64_candidate(benchmark::State& state) {
  bm_dot<double, Policy>(state, variant::foundry);
}
void bm_dot_f32(benchmark::State& state, variant v) { bm_dot<float>(state, v); }

BENCHMARK_CAPTURE(bm_dot_f64, naive, variant::naive)->Name("dot_f64/naive")->Apply(bench::configure)->Apply(dot_sizes);
BENCHMARK_CAPTURE(bm_dot_f64, foundry, variant::foundry)
    ->Name("dot_f64/foundry")
    ->Apply(bench::configure)
    ->Apply(dot_sizes);
BENCHMARK_CAPTURE(bm_dot_f64, thrust, variant::thrust)
    ->Name("dot_f64/thrust")
    ->Apply(bench::configure)
    ->Apply(dot_sizes);
BENCHMARK_CAPTURE(bm_dot_f64, cub, variant::cub)->Name("dot_f64/cub")->Apply(bench::configure)->Apply(dot_sizes);
BENCHMARK_CAPTURE(bm_dot_f32, naive, variant::naive)->Name("dot_f32/naive")->Apply(bench::configure)->Apply(dot_sizes);
BENCHMARK_CAPTURE(bm_dot_f32, foundry, variant::foundry)
    ->Name("dot_f32/foundry")
    ->Apply(bench::configure)
    ->Apply(dot_sizes);
BENCHMARK_CAPTURE(bm_dot_f32, thrust, variant::thrust)
    ->Name("dot_f32/thrust")
    ->Apply(bench::configure)
    ->Apply(dot_sizes);
BENCHMARK_CAPTURE(bm_dot_f32, cub, variant::cub)->Name("dot_f32/cub")->Apply(bench::configure)->Apply(dot_sizes);

constexpr auto contiguous = foundry::tile_assignment::contiguous;
FOUNDRY_BENCHMARK(bm_dot_f64_candidate<dot_candidate<8, 2>>)->Name("dot_f64/foundry_b8v2")->Arg(1 << 24)->Arg(1 << 28);
FOUNDRY_BENCHMARK(bm_dot_f64_candidate<dot_candidate<4, 2>>)->Name("dot_f64/foundry_b4v2")->Arg(1 << 24)->Arg(1 << 28);
FOUNDRY_BENCHMARK(bm_dot_f64_candidate<dot_candidate<8, 4>>)->Name("dot_f64/foundry_b8v4")->Arg(1 << 24)->Arg(1 << 28);
FOUNDRY_BENCHMARK(bm_dot_f64_candidate<dot_candidate<4, 4, contiguous>>)
    ->Name("dot_f64/foundry_b4v4_contiguous")
    ->Arg(1 << 24)
    ->Arg(1 << 28);

FOUNDRY_BENCH_MAIN()
