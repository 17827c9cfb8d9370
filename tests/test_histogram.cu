// foundry::histogram_even and its naive twin, checked against a CPU reference
// that computes the definition of <foundry/algorithms/histogram.cuh> on its own
// (scale = C(N) / (upper - lower); counted when lower <= C(x) < upper; bin =
// min(N - 1, trunc((C(x) - lower) * scale)), every step rounded in C): bytes into
// 256 bins, floats into 4096 bins with NaN, infinities and the edges of the range,
// int32 into 1 to 5000 bins, 64-bit samples, 64-bit counts, misaligned inputs,
// poisoned counts, one-bin contention, more bins than shared memory holds, a size
// past 2^31 and the argument checks. Counts are integers: every comparison is exact.
#include <catch2/catch.hpp>

#include <foundry/algorithms/histogram.cuh>
#include <foundry/algorithms/transform.cuh>
#include <foundry/naive/histogram.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

using namespace foundry::test;

namespace {

// The compute types that the definition documents.
static_assert(std::is_same_v<foundry::histogram_compute_t<std::uint8_t>, float>);
static_assert(std::is_same_v<foundry::histogram_compute_t<std::int16_t>, float>);
static_assert(std::is_same_v<foundry::histogram_compute_t<float>, float>);
static_assert(std::is_same_v<foundry::histogram_compute_t<std::int32_t>, double>);
static_assert(std::is_same_v<foundry::histogram_compute_t<std::uint64_t>, double>);
static_assert(std::is_same_v<foundry::histogram_compute_t<double>, double>);

/// The definition, computed on the host in `C`.
template <class C, class Sample>
std::vector<std::uint64_t> reference_histogram(const Sample* x, std::size_t n, std::size_t bins, C lower, C upper) {
  const C scale = static_cast<C>(bins) / (upper - lower);
  std::vector<std::uint64_t> counts(bins, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const C c = static_cast<C>(x[i]);
    if (!(lower <= c && c < upper)) continue;
    const C t = (c - lower) * scale;
    ++counts[t < static_cast<C>(bins) ? static_cast<std::size_t>(t) : bins - 1];
  }
  return counts;
}
template <class C, class Sample>
std::vector<std::uint64_t> reference_histogram(const std::vector<Sample>& x, std::size_t bins, C lower, C upper) {
  return reference_histogram(x.data(), x.size(), bins, lower, upper);
}

/// Every bin of `got` equals `expected`; on failure, says which bin first differs.
template <class Count>
void check_counts(const std::vector<Count>& got, const std::vector<std::uint64_t>& expected) {
  REQUIRE(got.size() == expected.size());
  std::size_t wrong = 0;
  std::size_t first = 0;
  for (std::size_t b = 0; b < got.size(); ++b) {
    if (static_cast<std::uint64_t>(got[b]) != expected[b]) {
      if (wrong++ == 0) first = b;
    }
  }
  CAPTURE(wrong, first, static_cast<std::uint64_t>(got[first]), expected[first]);
  CHECK(wrong == 0);
}

enum class variant { foundry, naive };

/// Runs `histogram_even` (or the naive twin) over `samples` into `bins` poisoned counts
/// of type `Count`, and checks them against the reference.
template <class Count, class Sample, std::size_t Extent, class C>
void check_histogram(cuda::std::span<const Sample, Extent> d_samples, const Sample* host_samples, std::size_t bins,
                     C lower, C upper, cuda::stream_ref s, variant v = variant::foundry) {
  static_assert(std::is_same_v<C, foundry::histogram_compute_t<Sample>>);
  auto d_counts = poisoned_device_buffer<Count>(bins, s);
  if (v == variant::foundry) {
    foundry::histogram_even(d_samples, d_counts.span(), lower, upper, s);
  } else {
    foundry::naive::histogram_even(d_samples, d_counts.span(), lower, upper, s);
  }
  check_counts(to_host(d_counts, s), reference_histogram(host_samples, d_samples.size(), bins, lower, upper));
}

template <class Count, class Sample, class C>
void check_histogram(const std::vector<Sample>& x, std::size_t bins, C lower, C upper, cuda::stream_ref s) {
  const auto d_x = to_device(x, s);
  for (const variant v : {variant::foundry, variant::naive}) {
    CAPTURE(v == variant::naive);
    check_histogram<Count>(d_x.span(), x.data(), bins, lower, upper, s, v);
  }
}

/// A policy other than the default: smaller blocks, one vector in flight, one block per
/// SM; 3 vectors in flight in the byte kernel (tiles of 6 KiB).
struct small_policy : foundry::histogram_policy {
  static constexpr int block_threads = 128;
  static constexpr int vectors_in_flight = 1;
  static constexpr int blocks_per_sm = 1;
  static constexpr int byte_vectors_in_flight = 3;
};

struct mod_251 {
  __device__ std::uint8_t operator()(std::uint64_t i) const { return static_cast<std::uint8_t>(i % 251); }
};

/// How many i in [0, m) have i % 251 == v.
std::uint64_t count_mod_251_equal(std::uint64_t m, std::uint64_t v) { return m / 251 + (v < m % 251 ? 1 : 0); }

}  // namespace

TEST_CASE("histogram_even counts bytes into 256 bins from 0 to 256 at odd sizes", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    check_histogram<std::uint32_t>(random_vector<std::uint8_t>(n, 0, 255, 80), 256, 0.0f, 256.0f, s);
  }
}

TEST_CASE("histogram_even bins int8 and int16 samples over ranges that cut the type's values", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    check_histogram<std::uint32_t>(random_vector<std::int8_t>(n, -128, 127, 81), 10, -100.0f, 100.0f, s);
    check_histogram<std::uint32_t>(random_vector<std::int16_t>(n, -32768, 32767, 82), 4096, -32768.0f, 32768.0f, s);
    check_histogram<std::uint64_t>(random_vector<std::uint16_t>(n, 0, 65535, 83), 333, 1000.0f, 60001.0f, s);
  }
}

TEST_CASE("histogram_even bins floats into 4096 bins from -1 to 1 with NaN, infinities and the edges", "[gpu]") {
  // Uniform in [-1.25, 1.25]: a fifth of the samples lie outside the range. Then, at
  // spread-out positions: NaN, +-inf, exactly lower (bin 0), exactly upper (not
  // counted), and the float just below upper, whose (x + 1) rounds up to 2, so that its
  // product is 4096: the clamp puts it in bin 4095.
  foundry::stream s;
  const float inf = std::numeric_limits<float>::infinity();
  const float below_upper = std::nextafter(1.0f, 0.0f);
  const float specials[] = {
      std::numeric_limits<float>::quiet_NaN(), inf, -inf, -1.0f, 1.0f, below_upper, std::nextafter(-1.0f, -2.0f)};
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    auto x = random_vector<float>(n, -1.25f, 1.25f, 84);
    for (std::size_t i = 0; i < n; i += 7) x[i] = specials[(i / 7) % std::size(specials)];
    check_histogram<std::uint32_t>(x, 4096, -1.0f, 1.0f, s);
  }
  const std::vector<float> edges{below_upper, below_upper, -1.0f, 1.0f, std::numeric_limits<float>::quiet_NaN()};
  const auto d_edges = to_device(edges, s);
  auto d_counts = poisoned_device_buffer<std::uint32_t>(4096, s);
  foundry::histogram_even(d_edges.span(), d_counts.span(), -1.0f, 1.0f, s);
  const auto counts = to_host(d_counts, s);
  CHECK(counts[4095] == 2);
  CHECK(counts[0] == 1);
}

TEST_CASE("histogram_even bins int32 samples into 1, 7, 100 and 5000 bins", "[gpu]") {
  foundry::stream s;
  for (const std::size_t bins : {std::size_t{1}, std::size_t{7}, std::size_t{100}, std::size_t{5000}}) {
    for (const std::size_t n : odd_sizes()) {
      CAPTURE(bins, n);
      check_histogram<std::uint32_t>(random_vector<std::int32_t>(n, -1100, 1100, 85), bins, -1000.0, 1000.0, s);
    }
  }
  // The whole int32 range in 7 bins: differences up to 2^32, exact in double.
  const auto x = random_vector<std::int32_t>((1u << 20) + 7, std::numeric_limits<std::int32_t>::min(),
                                             std::numeric_limits<std::int32_t>::max(), 86);
  check_histogram<std::uint32_t>(x, 7, -2147483648.0, 2147483648.0, s);
}

TEST_CASE("histogram_even bins double and 64-bit integer samples in double", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    auto d = random_vector<double>(n, -3.0, 7.0, 87);
    for (std::size_t i = 0; i < n; i += 11) d[i] = std::numeric_limits<double>::quiet_NaN();
    check_histogram<std::uint64_t>(d, 1000, -2.5, 6.5, s);
    const auto big = random_vector<std::int64_t>(n, std::numeric_limits<std::int64_t>::min(),
                                                 std::numeric_limits<std::int64_t>::max(), 88);
    check_histogram<std::uint64_t>(big, 4096, -9223372036854775808.0, 9223372036854775808.0, s);
    const auto small = random_vector<std::uint64_t>(n, 0, 5000, 89);
    check_histogram<std::uint32_t>(small, 17, 100.0, 4900.0, s);
  }
}

TEST_CASE("histogram_even writes 64-bit counts", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    check_histogram<std::uint64_t>(random_vector<std::uint8_t>(n, 0, 255, 90), 256, 0.0f, 256.0f, s);
    check_histogram<std::uint64_t>(random_vector<float>(n, -1.0f, 1.0f, 91), 4096, -1.0f, 1.0f, s);
  }
}

TEST_CASE("histogram_even is correct on inputs that start off a vector boundary", "[gpu]") {
  // subspan(o): a head of 16 - o bytes or 4 - o floats before the first vector.
  foundry::stream s;
  const std::size_t max_n = (1u << 20) + 7;
  const auto bytes = random_vector<std::uint8_t>(max_n + 3, 0, 255, 92);
  const auto floats = random_vector<float>(max_n + 3, -1.0f, 1.0f, 93);
  const auto d_bytes = to_device(bytes, s);
  const auto d_floats = to_device(floats, s);
  for (const std::size_t o : {std::size_t{1}, std::size_t{3}}) {
    for (const std::size_t n : odd_sizes()) {
      CAPTURE(o, n);
      check_histogram<std::uint32_t>(d_bytes.span().subspan(o, n), bytes.data() + o, 256, 0.0f, 256.0f, s);
      check_histogram<std::uint32_t>(d_floats.span().subspan(o, n), floats.data() + o, 4096, -1.0f, 1.0f, s);
    }
  }
}

TEST_CASE("histogram_even overwrites every count, and an empty input leaves them zero", "[gpu]") {
  // Counts start as 0xA5 bytes (poisoned_device_buffer); bins that no sample reaches must be 0.
  foundry::stream s;
  const auto x = std::vector<std::uint8_t>(1000, 3);
  const auto d_x = to_device(x, s);
  auto d_counts = poisoned_device_buffer<std::uint64_t>(256, s);
  foundry::histogram_even(d_x.span(), d_counts.span(), 0.0f, 256.0f, s);
  auto expected = std::vector<std::uint64_t>(256, 0);
  expected[3] = 1000;
  check_counts(to_host(d_counts, s), expected);

  cuda::std::span<const float> empty;
  auto d_empty_counts = poisoned_device_buffer<std::uint32_t>(4096, s);
  auto d_naive_counts = poisoned_device_buffer<std::uint32_t>(4096, s);
  foundry::histogram_even(empty, d_empty_counts.span(), -1.0f, 1.0f, s);
  foundry::naive::histogram_even(empty, d_naive_counts.span(), -1.0f, 1.0f, s);
  check_counts(to_host(d_empty_counts, s), std::vector<std::uint64_t>(4096, 0));
  check_counts(to_host(d_naive_counts, s), std::vector<std::uint64_t>(4096, 0));
}

TEST_CASE("histogram_even counts inputs that all fall in one bin", "[gpu]") {
  // The contention case: every thread's run of equal bins spans all its samples.
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    check_histogram<std::uint32_t>(std::vector<std::uint8_t>(n, 200), 256, 0.0f, 256.0f, s);
    check_histogram<std::uint32_t>(std::vector<float>(n, 0.25f), 4096, -1.0f, 1.0f, s);
    check_histogram<std::uint64_t>(random_vector<std::int32_t>(n, -5, 5, 94), 1, -10.0, 10.0, s);
  }
  // Runs broken by samples outside the range: they neither count nor end a run.
  auto x = std::vector<std::uint8_t>((1u << 20) + 7, 7);
  for (std::size_t i = 0; i < x.size(); i += 5) x[i] = 250;
  check_histogram<std::uint32_t>(x, 16, 0.0f, 128.0f, s);
}

TEST_CASE("histogram_even counts with global atomics when the bins do not fit shared memory", "[gpu]") {
  // 2^17 bins of 4 bytes: 512 KiB, more than any GPU's shared memory per block.
  foundry::stream s;
  const std::size_t bins = std::size_t{1} << 17;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    check_histogram<std::uint32_t>(random_vector<float>(n, -0.1f, 1.1f, 95), bins, 0.0f, 1.0f, s);
  }
  check_histogram<std::uint64_t>(std::vector<float>((1u << 20) + 7, 0.5f), bins, 0.0f, 1.0f, s);
}

TEST_CASE("histogram_even takes a policy", "[gpu]") {
  foundry::stream s;
  const auto x = random_vector<std::uint8_t>((1u << 20) + 7, 0, 255, 96);
  const auto d_x = to_device(x, s);
  auto d_counts = poisoned_device_buffer<std::uint32_t>(100, s);
  foundry::histogram_even<small_policy>(d_x.span().subspan(1), d_counts.span(), 28.0f, 228.0f, s);
  check_counts(to_host(d_counts, s), reference_histogram(x.data() + 1, x.size() - 1, 100, 28.0f, 228.0f));
}

/// 8-bit samples: one block per SM, tiles of 8 KiB, folding its lane-private counters
/// after every tile.
struct fold_often_policy : foundry::histogram_policy {
  static constexpr int byte_blocks_per_sm = 1;
  static constexpr int byte_vectors_in_flight = 4;
  static constexpr std::uint64_t byte_tiles_per_fold = 1;
};

TEST_CASE("histogram_even of bytes folds its lane-private counters between tiles", "[gpu]") {
  foundry::stream s;
  const std::size_t n = (std::size_t{1} << 22) + 3;  // 513 tiles of 8 KiB: about 4 per block
  const std::vector<std::uint8_t> one_value(n, 77);
  const auto random_bytes = random_vector<std::uint8_t>(n, 0, 255, 97);
  const auto random_int8 = random_vector<std::int8_t>(n, -128, 127, 98);
  const auto d_one = to_device(one_value, s);
  const auto d_random = to_device(random_bytes, s);
  const auto d_int8 = to_device(random_int8, s);
  for (const std::size_t offset : {0u, 5u}) {
    CAPTURE(offset);
    const std::size_t m = n - offset;
    auto d_counts = poisoned_device_buffer<std::uint32_t>(4096, s);
    foundry::histogram_even<fold_often_policy>(d_one.span().subspan(offset), d_counts.span(), 0.0f, 256.0f, s);
    check_counts(to_host(d_counts, s), reference_histogram(one_value.data() + offset, m, 4096, 0.0f, 256.0f));
    foundry::histogram_even<fold_often_policy>(d_random.span().subspan(offset), d_counts.span(), 0.0f, 256.0f, s);
    check_counts(to_host(d_counts, s), reference_histogram(random_bytes.data() + offset, m, 4096, 0.0f, 256.0f));
    auto d_three = poisoned_device_buffer<std::uint64_t>(3, s);
    foundry::histogram_even<fold_often_policy>(d_int8.span().subspan(offset), d_three.span(), -90.0f, 101.0f, s);
    check_counts(to_host(d_three, s), reference_histogram(random_int8.data() + offset, m, 3, -90.0f, 101.0f));
  }
}

TEST_CASE("histogram_even counts 2^31 + 5 bytes exactly into 64-bit counts", "[gpu][large]") {
  // Past the int range, values i % 251 generated on the device (one 2 GiB buffer), read
  // from offset 3 (a head of 13 bytes): value v appears count(n + 3, v) - count(3, v) times.
  foundry::stream s;
  const std::uint64_t n = (std::uint64_t{1} << 31) + 5;
  const std::uint64_t offset = 3;
  foundry::device_buffer<std::uint8_t> x(n + offset, s);
  foundry::tabulate(x.span(), mod_251{}, s);
  std::vector<std::uint64_t> expected(256, 0);
  for (std::uint64_t v = 0; v < 251; ++v) {
    expected[v] = count_mod_251_equal(n + offset, v) - count_mod_251_equal(offset, v);
  }
  auto d_counts = poisoned_device_buffer<std::uint64_t>(256, s);
  foundry::histogram_even(x.span().subspan(offset, n), d_counts.span(), 0.0f, 256.0f, s);
  check_counts(to_host(d_counts, s), expected);
  auto d_naive = poisoned_device_buffer<std::uint64_t>(256, s);
  foundry::naive::histogram_even(x.span().subspan(offset, n), d_naive.span(), 0.0f, 256.0f, s);
  check_counts(to_host(d_naive, s), expected);
}

// ---- argument checks that throw before any CUDA call: they run without a GPU ----

TEST_CASE("histogram_even rejects null samples with elements") {
  cuda::std::span<const float> null_samples(static_cast<const float*>(nullptr), 10);
  cuda::std::span<std::uint32_t> counts(fake_pointer<std::uint32_t>(), 16);
  REQUIRE_THROWS_AS(foundry::histogram_even(null_samples, counts, 0.0f, 1.0f, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::histogram_even(null_samples, counts, 0.0f, 1.0f, unused_stream()),
                    std::invalid_argument);
}

TEST_CASE("histogram_even rejects empty or null counts") {
  cuda::std::span<const std::uint8_t> samples(fake_pointer<const std::uint8_t>(), 10);
  cuda::std::span<std::uint64_t> empty_counts(fake_pointer<std::uint64_t>(), 0);
  cuda::std::span<std::uint64_t> null_counts(static_cast<std::uint64_t*>(nullptr), 256);
  for (const auto counts : {empty_counts, null_counts}) {
    CAPTURE(counts.size());
    REQUIRE_THROWS_AS(foundry::histogram_even(samples, counts, 0.0f, 256.0f, unused_stream()), std::invalid_argument);
    REQUIRE_THROWS_AS(foundry::naive::histogram_even(samples, counts, 0.0f, 256.0f, unused_stream()),
                      std::invalid_argument);
  }
  // Also with no samples: the counts would still be written.
  REQUIRE_THROWS_AS(
      foundry::histogram_even(cuda::std::span<const std::uint8_t>{}, empty_counts, 0.0f, 256.0f, unused_stream()),
      std::invalid_argument);
}

TEST_CASE("histogram_even rejects bounds with lower >= upper, NaN or infinite") {
  cuda::std::span<const float> samples(fake_pointer<const float>(), 10);
  cuda::std::span<std::uint32_t> counts(fake_pointer<std::uint32_t>(), 16);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float bad[][2] = {{1.0f, 1.0f},
                          {2.0f, 1.0f},
                          {nan, 1.0f},
                          {0.0f, nan},
                          {-inf, 1.0f},
                          {0.0f, inf},
                          // finite, but upper - lower overflows: no bin width
                          {-3e38f, 3e38f}};
  for (const auto& b : bad) {
    CAPTURE(b[0], b[1]);
    REQUIRE_THROWS_AS(foundry::histogram_even(samples, counts, b[0], b[1], unused_stream()), std::invalid_argument);
    REQUIRE_THROWS_AS(foundry::naive::histogram_even(samples, counts, b[0], b[1], unused_stream()),
                      std::invalid_argument);
  }
  cuda::std::span<const double> doubles(fake_pointer<const double>(), 10);
  REQUIRE_THROWS_AS(foundry::histogram_even(doubles, counts, 1.0, 0.0, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::histogram_even(doubles, counts, std::nan(""), 0.0, unused_stream()),
                    std::invalid_argument);
}

TEST_CASE("histogram_even rejects bounds that make no sense for integer samples") {
  cuda::std::span<const std::uint8_t> bytes(fake_pointer<const std::uint8_t>(), 10);
  cuda::std::span<const std::int32_t> ints(fake_pointer<const std::int32_t>(), 10);
  cuda::std::span<std::uint32_t> counts(fake_pointer<std::uint32_t>(), 16);
  // Between integers, below the type's minimum, above its maximum + 1.
  const float bad_byte_bounds[][2] = {{0.5f, 256.0f}, {0.0f, 255.5f}, {-1.0f, 256.0f}, {0.0f, 257.0f}};
  for (const auto& b : bad_byte_bounds) {
    CAPTURE(b[0], b[1]);
    REQUIRE_THROWS_AS(foundry::histogram_even(bytes, counts, b[0], b[1], unused_stream()), std::invalid_argument);
    REQUIRE_THROWS_AS(foundry::naive::histogram_even(bytes, counts, b[0], b[1], unused_stream()),
                      std::invalid_argument);
  }
  REQUIRE_THROWS_AS(foundry::histogram_even(ints, counts, -2147483649.0, 0.0, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::histogram_even(ints, counts, 0.0, 2147483649.0, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::histogram_even(ints, counts, 0.0, 10.25, unused_stream()), std::invalid_argument);
}

TEST_CASE("histogram_even rejects more bins than its compute type can index") {
  // float-binned samples: at most 2^23 bins.
  cuda::std::span<const float> samples(fake_pointer<const float>(), 10);
  cuda::std::span<std::uint32_t> counts(fake_pointer<std::uint32_t>(), (std::size_t{1} << 23) + 1);
  REQUIRE_THROWS_AS(foundry::histogram_even(samples, counts, 0.0f, 1.0f, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::histogram_even(samples, counts, 0.0f, 1.0f, unused_stream()),
                    std::invalid_argument);
}

TEST_CASE("histogram_even rejects the null stream") {
  // Checked by the first launch (the zero kernel), before anything is enqueued.
  cuda::std::span<const float> samples(fake_pointer<const float>(), 10);
  cuda::std::span<std::uint32_t> counts(fake_pointer<std::uint32_t>(), 16);
  REQUIRE_THROWS_AS(foundry::histogram_even(samples, counts, 0.0f, 1.0f, cuda::stream_ref{}), std::invalid_argument);
}
