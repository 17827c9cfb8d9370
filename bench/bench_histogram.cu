// Even-bin histograms of 2^24, 2^26 and 2^28 samples: foundry::histogram_even (the
// public call as a user writes it), foundry::naive::histogram_even (one global atomic
// per sample) and cub::DeviceHistogram::HistogramEven (the peer; its temporary storage
// allocated once, outside the timed region). Rows
// "histogram_even_<case>/<variant>/<n>", all with 32-bit counts:
//  - u8_256: uniform random bytes into 256 bins over [0, 256);
//  - u8_256_one_bin: every byte the same value (7): the contention case;
//  - f32_4096: uniform floats in [-1, 1) into 4096 bins over [-1, 1).
// GB/s counts the samples read once and the counts written once.
//
// Check before timing: each variant's counts, written over 0xA5 poison, equal CUB's
// exactly, and CUB's sum to n (every sample lies in the range). CUB's levels are the
// same range: num_levels = bins + 1, lower and upper levels = foundry's bounds. For these
// ranges every binning formula agrees (scale 1 and 2048: the products are exact), so the
// two definitions cannot differ on a sample.

#include <foundry/algorithms/histogram.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/naive/histogram.cuh>
#include <foundry/runtime/stream.cuh>

#include <cub/device/device_histogram.cuh>

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {

namespace bench = foundry::bench;

enum class variant { naive, foundry, cub };

/// One benchmarked case: the sample type, the bins and range, and the data.
template <class Sample, class Level>
struct histogram_case {
  std::size_t bins;
  Level lower;
  Level upper;
  double fill_lo;  ///< bench::fill_uniform's range for the samples
  double fill_hi;
};

template <class Sample, class Level, class Policy = foundry::histogram_policy>
void bm_histogram(benchmark::State& state, variant v, histogram_case<Sample, Level> hc) {
  using count = std::uint32_t;
  const auto n = static_cast<std::size_t>(state.range(0));
  foundry::stream s;
  foundry::device_buffer<Sample> samples(n, s);
  bench::fill_uniform(samples.span(), hc.fill_lo, hc.fill_hi, bench::default_seed, s);
  const auto x = cuda::std::span<const Sample>(samples.data(), n);
  foundry::device_buffer<count> counts(hc.bins, s, count{0xA5A5A5A5u});
  foundry::device_buffer<count> reference(hc.bins, s, count{0xA5A5A5A5u});

  // CUB's temporary storage, allocated once outside the timed region as CUB users do.
  const int num_levels = static_cast<int>(hc.bins) + 1;
  const auto num_samples = static_cast<std::int64_t>(n);
  std::size_t cub_bytes = 0;
  FOUNDRY_CUDA_TRY(cub::DeviceHistogram::HistogramEven(nullptr, cub_bytes, samples.data(), reference.data(), num_levels,
                                                       hc.lower, hc.upper, num_samples, s.get()));
  foundry::device_buffer<std::byte> cub_scratch(cub_bytes, s);
  auto cub_histogram = [&](count* out, cuda::stream_ref st) {
    std::size_t bytes = cub_bytes;
    FOUNDRY_CUDA_TRY(cub::DeviceHistogram::HistogramEven(cub_scratch.data(), bytes, samples.data(), out, num_levels,
                                                         hc.lower, hc.upper, num_samples, st.get()));
  };

  auto enqueue = [&](cuda::stream_ref st) {
    switch (v) {
      case variant::naive: foundry::naive::histogram_even(x, counts.span(), hc.lower, hc.upper, st); break;
      case variant::foundry: foundry::histogram_even<Policy>(x, counts.span(), hc.lower, hc.upper, st); break;
      case variant::cub: cub_histogram(counts.data(), st); break;
    }
  };

  cub_histogram(reference.data(), s);
  enqueue(s);
  std::vector<count> got(hc.bins), expected(hc.bins);
  counts.copy_to_host({got.data(), got.size()}, s);
  reference.copy_to_host({expected.data(), expected.size()}, s);
  s.synchronize();
  std::size_t wrong = 0;
  for (std::size_t b = 0; b < hc.bins; ++b) wrong += got[b] != expected[b] ? 1 : 0;
  const std::uint64_t total = std::accumulate(expected.begin(), expected.end(), std::uint64_t{0});
  if (!bench::expect(state, wrong == 0,
                     std::to_string(wrong) + " of " + std::to_string(hc.bins) +
                         " bins differ from cub::DeviceHistogram::HistogramEven's"))
    return;
  if (!bench::expect(state, total == n,
                     "CUB's counts sum to " + std::to_string(total) + ", not n = " + std::to_string(n)))
    return;
  const double bytes_read = static_cast<double>(n) * sizeof(Sample);
  const double bytes_written = static_cast<double>(hc.bins) * sizeof(count);
  bench::measure(state, s, {bytes_read, bytes_written, 0.0}, enqueue);
}

const histogram_case<std::uint8_t, float> u8_256{256, 0.0f, 256.0f, 0.0, 255.0};
const histogram_case<std::uint8_t, float> u8_256_one_bin{256, 0.0f, 256.0f, 7.0, 7.0};
const histogram_case<float, float> f32_4096{4096, -1.0f, 1.0f, -1.0, 1.0};

void histogram_sizes(benchmark::internal::Benchmark* b) {
  for (const int log2n : {24, 26, 28}) b->Arg(std::int64_t{1} << log2n);
}

void bm_u8_256(benchmark::State& state, variant v) { bm_histogram(state, v, u8_256); }
void bm_u8_256_one_bin(benchmark::State& state, variant v) { bm_histogram(state, v, u8_256_one_bin); }
void bm_f32_4096(benchmark::State& state, variant v) { bm_histogram(state, v, f32_4096); }

/// The byte kernel with another number of vectors in flight per thread, so that
/// `histogram_policy::byte_vectors_in_flight` rests on measured figures.
template <int Vectors>
struct byte_candidate : foundry::histogram_policy {
  static constexpr int byte_vectors_in_flight = Vectors;
};
template <int Vectors>
void bm_u8_256_candidate(benchmark::State& state) {
  bm_histogram<std::uint8_t, float, byte_candidate<Vectors>>(state, variant::foundry, u8_256);
}
template <int Vectors>
void bm_u8_256_one_bin_candidate(benchmark::State& state) {
  bm_histogram<std::uint8_t, float, byte_candidate<Vectors>>(state, variant::foundry, u8_256_one_bin);
}

}  // namespace

BENCHMARK_CAPTURE(bm_u8_256, naive, variant::naive)
    ->Name("histogram_even_u8_256/naive")
    ->Apply(bench::configure)
    ->Apply(histogram_sizes);
BENCHMARK_CAPTURE(bm_u8_256, foundry, variant::foundry)
    ->Name("histogram_even_u8_256/foundry")
    ->Apply(bench::configure)
    ->Apply(histogram_sizes);
BENCHMARK_CAPTURE(bm_u8_256, cub, variant::cub)
    ->Name("histogram_even_u8_256/cub")
    ->Apply(bench::configure)
    ->Apply(histogram_sizes);
BENCHMARK_CAPTURE(bm_u8_256_one_bin, naive, variant::naive)
    ->Name("histogram_even_u8_256_one_bin/naive")
    ->Apply(bench::configure)
    ->Apply(histogram_sizes);
BENCHMARK_CAPTURE(bm_u8_256_one_bin, foundry, variant::foundry)
    ->Name("histogram_even_u8_256_one_bin/foundry")
    ->Apply(bench::configure)
    ->Apply(histogram_sizes);
BENCHMARK_CAPTURE(bm_u8_256_one_bin, cub, variant::cub)
    ->Name("histogram_even_u8_256_one_bin/cub")
    ->Apply(bench::configure)
    ->Apply(histogram_sizes);
BENCHMARK_CAPTURE(bm_f32_4096, naive, variant::naive)
    ->Name("histogram_even_f32_4096/naive")
    ->Apply(bench::configure)
    ->Apply(histogram_sizes);
BENCHMARK_CAPTURE(bm_f32_4096, foundry, variant::foundry)
    ->Name("histogram_even_f32_4096/foundry")
    ->Apply(bench::configure)
    ->Apply(histogram_sizes);
BENCHMARK_CAPTURE(bm_f32_4096, cub, variant::cub)
    ->Name("histogram_even_f32_4096/cub")
    ->Apply(bench::configure)
    ->Apply(histogram_sizes);

#if FOUNDRY_BENCH_TUNING  // built where the benchmarks run (CMakeLists.txt), not in CI
// Candidates: vectors in flight per thread in the byte kernel (the default's neighbours).
#define FOUNDRY_HISTOGRAM_BYTE_CANDIDATE(v) \
  FOUNDRY_BENCHMARK(bm_u8_256_candidate<v>)->Name("histogram_even_u8_256/foundry_v" #v)->Arg(1 << 26)->Arg(1 << 28); \
  FOUNDRY_BENCHMARK(bm_u8_256_one_bin_candidate<v>) \
      ->Name("histogram_even_u8_256_one_bin/foundry_v" #v) \
      ->Arg(1 << 26) \
      ->Arg(1 << 28)
FOUNDRY_HISTOGRAM_BYTE_CANDIDATE(4);
FOUNDRY_HISTOGRAM_BYTE_CANDIDATE(6);
FOUNDRY_HISTOGRAM_BYTE_CANDIDATE(12);
FOUNDRY_HISTOGRAM_BYTE_CANDIDATE(16);
#endif

FOUNDRY_BENCH_MAIN()
