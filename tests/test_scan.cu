// foundry::inclusive_scan / exclusive_scan (and their sums), warp_scan, block_scan and
// the naive twin, against CPU references on seeded random data: odd sizes, in place,
// misaligned pointers, type conversion, a non-commutative operator (composition of
// affine maps, whose order a wrong scan would swap), 8-byte values (the tile states
// that are not packed), a size past 2^31, and the argument checks. Every device-wide
// case runs for both tile arrangements (the default blocked scan_policy and
// scan_striped_policy), and the blocked shared-memory layout is checked on the host
// (a bijection, without bank conflicts).
//
// Integer scans are compared exactly. A float prefix of i + 1 terms, summed in any
// order, is within gamma(i) * sum_{j <= i} |x_j| of the exact value, gamma(k) =
// k*u / (1 - k*u), u = 2^-24 (Higham, 4.2); the reference is the prefix in double.
#include <catch2/catch.hpp>

#include <foundry/algorithms/scan.cuh>
#include <foundry/algorithms/transform.cuh>
#include <foundry/block/block_scan.cuh>
#include <foundry/naive/scan.cuh>
#include <foundry/runtime/stream.cuh>
#include <foundry/warp/warp_scan.cuh>
#include <support/test_support.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

using namespace foundry::test;

namespace {

/// x -> a * x + b over 32-bit unsigned integers (wrapping): composing two maps is
/// associative but not commutative. `f ⊕ g` applies f first, then g.
struct affine {
  std::uint32_t a, b;
  bool operator==(const affine& o) const { return a == o.a && b == o.b; }
};
struct compose {
  __host__ __device__ affine operator()(const affine& f, const affine& g) const { return {f.a * g.a, g.a * f.b + g.b}; }
};

std::vector<affine> random_maps(std::size_t n, std::uint64_t stream_id) {
  const auto a = random_vector<std::uint32_t>(n, 0, 0xffffffffu, stream_id);
  const auto b = random_vector<std::uint32_t>(n, 0, 0xffffffffu, stream_id + 100);
  std::vector<affine> maps(n);
  for (std::size_t i = 0; i < n; ++i) maps[i] = {a[i] | 1u, b[i]};
  return maps;
}

template <class T, class Op>
std::vector<T> cpu_inclusive(const std::vector<T>& x, Op op) {
  std::vector<T> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = i == 0 ? x[0] : op(out[i - 1], x[i]);
  return out;
}

template <class T, class Op>
std::vector<T> cpu_exclusive(const std::vector<T>& x, T init, Op op) {
  std::vector<T> out(x.size());
  T running = init;
  for (std::size_t i = 0; i < x.size(); ++i) {
    out[i] = running;
    running = op(running, x[i]);
  }
  return out;
}

/// How many elements differ (a count, so that a failure prints one number, not two
/// vectors of a million elements).
template <class T>
std::size_t mismatches(const std::vector<T>& got, const std::vector<T>& expected) {
  if (got.size() != expected.size()) return std::max(got.size(), expected.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] == expected[i] ? 0 : 1;
  return wrong;
}

struct sum_i64 {
  std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; }
};

/// Every float prefix within its worst-case summation error; the index of the first that is not.
std::size_t first_float_prefix_out_of_bound(const std::vector<float>& x, const std::vector<float>& got) {
  double sum = 0, sum_abs = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sum += x[i];
    sum_abs += std::fabs(x[i]);
    if (!(std::fabs(got[i] - sum) <= float_sum_tolerance(i + 1, sum_abs))) return i;
  }
  return x.size();
}

template <int Threads>
__global__ void block_and_warp_scan_kernel(const affine* in, affine* block_inclusive, affine* block_exclusive,
                                           affine* warp_inclusive, affine* totals) {
  using block_scan_t = foundry::block_scan<affine, Threads>;
  __shared__ typename block_scan_t::temp_storage storage;
  const affine x = in[threadIdx.x];
  affine total;
  block_inclusive[threadIdx.x] = block_scan_t(storage).inclusive_scan(x, compose{}, total);
  __syncthreads();
  block_exclusive[threadIdx.x] = block_scan_t(storage).exclusive_scan(x, affine{3, 5}, compose{});
  warp_inclusive[threadIdx.x] = foundry::warp_scan<affine>().inclusive_scan(x, compose{});
  if (threadIdx.x == 0) totals[0] = total;
}

__global__ void count_prefix_mod_251_mismatches(const std::uint64_t* out, std::size_t n, std::size_t offset,
                                                unsigned long long* count) {
  // out[i] = sum of ((j + offset) % 251) for j in [0, i]: a closed form per i.
  auto prefix = [](std::uint64_t m) {  // sum of (k % 251) for k in [0, m)
    const std::uint64_t q = m / 251, r = m % 251;
    return q * (250 * 251 / 2) + r * (r - 1) / 2 * (r > 0 ? 1 : 0);
  };
  unsigned long long local = 0;
  for (auto i : foundry::grid_stride_range(n)) local += out[i] != prefix(offset + i + 1) - prefix(offset) ? 1 : 0;
  if (local != 0) atomicAdd(count, local);
}

struct mod_251 {
  __device__ std::uint8_t operator()(std::uint64_t i) const { return static_cast<std::uint8_t>(i % 251); }
};

}  // namespace

// ---- the device-wide scans, each case run for both tile arrangements: the default ----
// ---- (scan_policy, blocked: 4096 4-byte values a tile) and scan_striped_policy (4096) ----

/// Elements of `T` in one tile of `Policy` on the vector path.
template <class Policy, class T>
constexpr std::size_t tile_elements = std::size_t{Policy::block_threads} *
                                      Policy::vectors_in_flight*(Policy::vector_bytes / sizeof(T));

/// odd_sizes(), 2^16 ± 1, and sizes around one, two and many tiles of `Policy` for `T`.
template <class Policy, class T>
std::vector<std::size_t> sizes_around_tiles() {
  constexpr std::size_t tile = tile_elements<Policy, T>;
  std::vector<std::size_t> sizes = odd_sizes();
  for (const std::size_t n : {tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile + 1, 3 * tile + 5, 40 * tile + 1,
                              std::size_t{(1u << 16) - 1}, std::size_t{(1u << 16) + 1}}) {
    sizes.push_back(n);
  }
  return sizes;
}

#define FOUNDRY_SCAN_POLICIES foundry::scan_policy, foundry::scan_striped_policy

TEMPLATE_TEST_CASE("integer sums are exact at odd sizes and tile boundaries", "[gpu]", FOUNDRY_SCAN_POLICIES) {
  foundry::stream s;
  for (const std::size_t n : sizes_around_tiles<TestType, std::int32_t>()) {
    CAPTURE(n);
    const auto x = random_vector<std::int32_t>(n, -100, 100, 50);
    const auto d_x = to_device(x, s);
    auto inclusive = poisoned_device_buffer<std::int32_t>(n, s);
    auto exclusive = poisoned_device_buffer<std::int32_t>(n, s);
    auto exclusive_from_zero = poisoned_device_buffer<std::int32_t>(n, s);
    foundry::inclusive_sum<TestType>(d_x.span(), inclusive.span(), s);
    foundry::exclusive_scan<TestType>(d_x.span(), exclusive.span(), 17, cuda::std::plus<std::int32_t>{}, s);
    foundry::exclusive_sum<TestType>(d_x.span(), exclusive_from_zero.span(), s);
    CHECK(mismatches(to_host(inclusive, s), cpu_inclusive(x, cuda::std::plus<std::int32_t>{})) == 0);
    CHECK(mismatches(to_host(exclusive, s), cpu_exclusive(x, 17, cuda::std::plus<std::int32_t>{})) == 0);
    CHECK(mismatches(to_host(exclusive_from_zero, s), cpu_exclusive(x, 0, cuda::std::plus<std::int32_t>{})) == 0);
  }
}

TEMPLATE_TEST_CASE("float sums are within the summation error bound", "[gpu]", FOUNDRY_SCAN_POLICIES) {
  foundry::stream s;
  for (const std::size_t n : sizes_around_tiles<TestType, float>()) {
    CAPTURE(n);
    const auto x = random_vector<float>(n, -1.0f, 1.0f, 51);
    const auto d_x = to_device(x, s);
    auto d_out = poisoned_device_buffer<float>(n, s);
    foundry::inclusive_sum<TestType>(d_x.span(), d_out.span(), s);
    CHECK(first_float_prefix_out_of_bound(x, to_host(d_out, s)) == n);
  }
}

TEMPLATE_TEST_CASE("the order of a non-commutative operator is kept, at tile boundaries and any offsets", "[gpu]",
                   FOUNDRY_SCAN_POLICIES) {
  // 8-byte values: the tile states keep status and value apart (release/acquire).
  // Both spans offset take the vector path with a scalar head; one offset takes the
  // one-element path (half as many values a tile).
  foundry::stream s;
  const auto sizes = sizes_around_tiles<TestType, affine>();
  const std::size_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const auto maps = random_maps(max_n + 1, 52);
  const auto d_maps = to_device(maps, s);
  for (const std::size_t n : sizes) {
    for (const std::size_t in_offset : {0u, 1u}) {
      for (const std::size_t out_offset : {0u, 1u}) {
        CAPTURE(n, in_offset, out_offset);
        const auto in = d_maps.span().subspan(in_offset, n);
        const std::vector<affine> host_in(maps.begin() + in_offset, maps.begin() + in_offset + n);
        auto d_out = foundry::device_buffer<affine>(n + 1, s, affine{0, 0});
        const auto out = d_out.span().subspan(out_offset, n);
        const auto got = [&] {
          auto all = to_host(d_out, s);
          return std::vector<affine>(all.begin() + out_offset, all.begin() + out_offset + n);
        };
        foundry::inclusive_scan<TestType>(in, out, compose{}, s);
        CHECK(mismatches(got(), cpu_inclusive(host_in, compose{})) == 0);
        foundry::exclusive_scan<TestType>(in, out, affine{3, 7}, compose{}, s);
        CHECK(mismatches(got(), cpu_exclusive(host_in, affine{3, 7}, compose{})) == 0);
      }
    }
  }
}

TEMPLATE_TEST_CASE("scans run in place", "[gpu]", FOUNDRY_SCAN_POLICIES) {
  foundry::stream s;
  constexpr std::size_t tile = tile_elements<TestType, std::int32_t>;
  for (const std::size_t n : {std::size_t{1}, std::size_t{1025}, tile + 1, std::size_t{(1u << 20) + 7}}) {
    CAPTURE(n);
    const auto x = random_vector<std::int32_t>(n, -100, 100, 53);
    auto d_x = to_device(x, s);
    foundry::inclusive_sum<TestType>(d_x.span(), d_x.span(), s);
    CHECK(mismatches(to_host(d_x, s), cpu_inclusive(x, cuda::std::plus<std::int32_t>{})) == 0);
    auto d_y = to_device(x, s);
    foundry::exclusive_scan<TestType>(d_y.span(), d_y.span(), -9, cuda::std::plus<std::int32_t>{}, s);
    CHECK(mismatches(to_host(d_y, s), cpu_exclusive(x, -9, cuda::std::plus<std::int32_t>{})) == 0);
  }
}

TEMPLATE_TEST_CASE("scans are correct with inputs and outputs at any offset", "[gpu]", FOUNDRY_SCAN_POLICIES) {
  // Equal offsets take the vector path with a scalar head; different ones the scalar path.
  foundry::stream s;
  const std::size_t max_n = (1u << 20) + 7;
  const auto x = random_vector<std::int32_t>(max_n + 3, -100, 100, 54);
  const auto d_x = to_device(x, s);
  for (const std::size_t in_offset : {0u, 1u, 3u}) {
    for (const std::size_t out_offset : {0u, 1u, 2u}) {
      for (const std::size_t n : {std::size_t{1}, std::size_t{5}, tile_elements<TestType, std::int32_t> + 3, max_n}) {
        CAPTURE(in_offset, out_offset, n);
        auto d_out = poisoned_device_buffer<std::int32_t>(n + 3, s);
        foundry::exclusive_scan<TestType>(d_x.span().subspan(in_offset, n), d_out.span().subspan(out_offset, n), -5,
                                          cuda::std::plus<std::int32_t>{}, s);
        const auto got = to_host(d_out, s);
        const std::vector<std::int32_t> in(x.begin() + in_offset, x.begin() + in_offset + n);
        const auto expected = cpu_exclusive(in, -5, cuda::std::plus<std::int32_t>{});
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < n; ++i) wrong += got[out_offset + i] != expected[i] ? 1 : 0;
        CHECK(wrong == 0);
        std::size_t outside = 0;
        for (std::size_t i = 0; i < n + 3; ++i) {
          if (i < out_offset || i >= out_offset + n) outside += got[i] != poison_value<std::int32_t>() ? 1 : 0;
        }
        CHECK(outside == 0);
      }
    }
  }
}

TEMPLATE_TEST_CASE("scans convert the input to the output type: bytes summed in int64, max of doubles", "[gpu]",
                   FOUNDRY_SCAN_POLICIES) {
  // Bytes into int64: input and output vectors of different sizes.
  foundry::stream s;
  for (const std::size_t n : sizes_around_tiles<TestType, std::int64_t>()) {
    CAPTURE(n);
    const auto bytes = random_vector<std::int8_t>(n, -128, 127, 55);
    const auto d_bytes = to_device(bytes, s);
    auto sums = poisoned_device_buffer<std::int64_t>(n, s);
    foundry::inclusive_sum<TestType>(d_bytes.span(), sums.span(), s);
    std::vector<std::int64_t> wide(bytes.begin(), bytes.end());
    CHECK(mismatches(to_host(sums, s), cpu_inclusive(wide, sum_i64{})) == 0);

    const auto d = random_vector<double>(n, -1e6, 1e6, 56);
    const auto d_d = to_device(d, s);
    auto maxima = poisoned_device_buffer<double>(n, s);
    foundry::inclusive_scan<TestType>(d_d.span(), maxima.span(), foundry::maximum{}, s);
    CHECK(mismatches(to_host(maxima, s), cpu_inclusive(d, foundry::maximum{})) == 0);
  }
}

TEMPLATE_TEST_CASE("exclusive_sum of 2^25 + 3 integers: thousands of tiles, long look-backs", "[gpu][racecheck_slow]",
                   FOUNDRY_SCAN_POLICIES) {
  foundry::stream s;
  const std::size_t n = (std::size_t{1} << 25) + 3;
  const auto x = random_vector<std::int32_t>(n, -100, 100, 61);
  const auto d_x = to_device(x, s);
  auto d_out = poisoned_device_buffer<std::int32_t>(n, s);
  foundry::exclusive_sum<TestType>(d_x.span(), d_out.span(), s);
  CHECK(mismatches(to_host(d_out, s), cpu_exclusive(x, 0, cuda::std::plus<std::int32_t>{})) == 0);
}

/// Striped: small tiles and a one-tile-per-lane look-back window (thousands of tiles,
/// long look-backs); and 64 warp totals per tile (warp 0 folds two per lane) with a
/// 256-tile window.
struct striped_tile_shapes {
  struct small : foundry::scan_striped_policy {
    static constexpr int block_threads = 64;
    static constexpr int vectors_in_flight = 2;
    static constexpr int look_back_tiles_per_lane = 1;
  };
  struct wide : foundry::scan_striped_policy {
    static constexpr int block_threads = 256;
    static constexpr int vectors_in_flight = 8;
    static constexpr int look_back_tiles_per_lane = 8;
    static constexpr unsigned poll_delay_ns = 100;
  };
};
/// Blocked: two warps of 3 vectors (an odd count: no unused slot), tiles in block
/// order, no sleeping (hundreds of small tiles); and 8 warps of 8 vectors with a
/// 128-tile window, tiles from the atomic counter, sleeping in every grid.
struct blocked_tile_shapes {
  struct small : foundry::scan_blocked_policy {
    static constexpr int block_threads = 64;
    static constexpr int vectors_in_flight = 3;
    static constexpr bool tiles_in_block_order = true;
    static constexpr unsigned poll_delay_ns = 0;
    static constexpr unsigned first_look_delay_ns = 0;
  };
  struct wide : foundry::scan_blocked_policy {
    static constexpr int block_threads = 256;
    static constexpr int vectors_in_flight = 8;
    static constexpr bool tiles_in_block_order = false;
    static constexpr int look_back_tiles_per_lane = 4;
    static constexpr unsigned poll_delay_ns = 100;
    static constexpr std::uint32_t poll_delay_min_tiles = 0;
  };
};

TEMPLATE_TEST_CASE("scans are correct with other tile shapes and look-back windows", "[gpu]", striped_tile_shapes,
                   blocked_tile_shapes) {
  foundry::stream s;
  const std::size_t max_n = 300007;
  const auto maps = random_maps(max_n + 1, 62);
  const auto d_maps = to_device(maps, s);
  for (const std::size_t n : {std::size_t{33}, std::size_t{4097}, max_n}) {
    for (const std::size_t offset : {0u, 1u}) {
      CAPTURE(n, offset);
      const auto in = d_maps.span().subspan(offset, n);
      const std::vector<affine> host_in(maps.begin() + offset, maps.begin() + offset + n);
      auto d_out = foundry::device_buffer<affine>(n, s, affine{0, 0});
      foundry::inclusive_scan<typename TestType::small>(in, d_out.span(), compose{}, s);
      CHECK(mismatches(to_host(d_out, s), cpu_inclusive(host_in, compose{})) == 0);
      foundry::exclusive_scan<typename TestType::wide>(in, d_out.span(), affine{3, 5}, compose{}, s);
      CHECK(mismatches(to_host(d_out, s), cpu_exclusive(host_in, affine{3, 5}, compose{})) == 0);
    }
  }
  // 4-byte sums: the tile states packed with their status in one 64-bit word.
  const auto x = random_vector<std::int32_t>(max_n, -100, 100, 64);
  const auto d_x = to_device(x, s);
  auto d_sums = poisoned_device_buffer<std::int32_t>(max_n, s);
  foundry::inclusive_scan<typename TestType::small>(d_x.span(), d_sums.span(), cuda::std::plus<>{}, s);
  CHECK(mismatches(to_host(d_sums, s), cpu_inclusive(x, cuda::std::plus<std::int32_t>{})) == 0);
  foundry::exclusive_scan<typename TestType::wide>(d_x.span(), d_sums.span(), 7, cuda::std::plus<>{}, s);
  CHECK(mismatches(to_host(d_sums, s), cpu_exclusive(x, 7, cuda::std::plus<std::int32_t>{})) == 0);
}

/// The striped arrangement with 8 vectors a thread (8 warps: 64 segments).
struct striped_8_vectors : foundry::scan_striped_policy {
  static constexpr int vectors_in_flight = 8;
};

TEST_CASE("scan tiles of large elements keep within the shared-memory budget") {
  namespace d = foundry::detail;
  struct bytes_128 {
    int v[32];
  };
  struct bytes_200 {
    int v[50];
  };
  // Elements of up to 16 bytes keep the policy as it is (the same kernels).
  STATIC_REQUIRE(std::is_same_v<d::fitted_scan_policy<foundry::scan_policy, float, float>, foundry::scan_policy>);
  STATIC_REQUIRE(
      std::is_same_v<d::fitted_scan_policy<foundry::scan_policy, std::int8_t, double>, foundry::scan_policy>);
  STATIC_REQUIRE(std::is_same_v<d::fitted_scan_policy<foundry::scan_striped_policy, affine, affine>,
                                foundry::scan_striped_policy>);
  // 128 x 17 slots of 128 bytes would be 272 KiB: 5 vectors (128 x 5 x 128 = 80 KiB).
  constexpr int v128 = d::fitted_scan_vectors<foundry::scan_policy, bytes_128, bytes_128>();
  STATIC_REQUIRE(v128 == 5);
  STATIC_REQUIRE(d::scan_staging_bound<foundry::scan_policy, bytes_128, bytes_128>(v128) <=
                 d::scan_staging_budget_bytes);
  STATIC_REQUIRE(d::fitted_scan_policy<foundry::scan_policy, bytes_128, bytes_128>::vectors_in_flight == v128);
  STATIC_REQUIRE(d::fitted_scan_vectors<foundry::scan_policy, bytes_200, bytes_200>() == 3);
  struct bytes_48 {
    int v[12];
  };
  STATIC_REQUIRE(d::fitted_scan_vectors<foundry::scan_policy, bytes_48, bytes_48>() == 15);  // 128 x 15 x 48 B
  // A striped tile of 8 warps lowered from 8 vectors: not to 7 (56 segments), which its
  // kernel does not take, but to 4 (32 segments): 256 x 4 x 64 bytes = 64 KiB.
  struct bytes_64 {
    int v[16];
  };
  STATIC_REQUIRE(d::fitted_scan_vectors<striped_8_vectors, bytes_64, bytes_64>() == 4);
  STATIC_REQUIRE(d::fitted_scan_vectors<striped_8_vectors, float, float>() == 8);
}

/// A wide element of `Words` 32-bit words: an affine map in the first two (their order
/// matters) and wrapping sums in the rest (3 words are 12 bytes, 50 are 200).
template <int Words>
struct wide_element {
  std::uint32_t w[Words];
  bool operator==(const wide_element& o) const { return std::equal(w, w + Words, o.w); }
};
struct compose_wide {
  template <int Words>
  __host__ __device__ wide_element<Words> operator()(const wide_element<Words>& f, const wide_element<Words>& g) const {
    wide_element<Words> r;
    r.w[0] = f.w[0] * g.w[0];
    r.w[1] = g.w[0] * f.w[1] + g.w[1];
    for (int i = 2; i < Words; ++i) r.w[i] = f.w[i] + g.w[i];
    return r;
  }
};

// 12 bytes: one element a vector; 48 bytes: the default tile lowered to 15 vectors (an odd
// count); 128 and 200 bytes: to 5 and 3.
TEMPLATE_TEST_CASE("scans of 12- to 200-byte elements run with the tile fitted to shared memory", "[gpu]",
                   wide_element<3>, wide_element<12>, wide_element<32>, wide_element<50>) {
  using T = TestType;
  constexpr std::size_t words = sizeof(T) / sizeof(std::uint32_t);
  static_assert(sizeof(T) < 48 || foundry::detail::fitted_scan_vectors<foundry::scan_policy, T, T>() <
                                      foundry::scan_policy::vectors_in_flight);
  foundry::stream s;
  const std::size_t max_n = 20011;  // ~31 fitted tiles of 128-byte elements
  const auto bits = random_vector<std::uint32_t>((max_n + 1) * words, 0, 0xffffffffu, 66);
  std::vector<T> elements(max_n + 1);
  std::memcpy(elements.data(), bits.data(), bits.size() * sizeof(std::uint32_t));
  for (auto& e : elements) e.w[0] |= 1u;
  const auto d_elements = to_device(elements, s);
  T poison;
  std::fill(poison.w, poison.w + words, 0xdeadbeefu);
  T init;
  std::fill(init.w, init.w + words, 3u);
  for (const std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{4097}, max_n}) {
    for (const std::size_t offset : {0u, 1u}) {
      CAPTURE(n, offset);
      const auto in = d_elements.span().subspan(offset, n);
      const std::vector<T> host_in(elements.begin() + offset, elements.begin() + offset + n);
      auto d_out = foundry::device_buffer<T>(n, s, poison);
      foundry::inclusive_scan(in, d_out.span(), compose_wide{}, s);
      CHECK(mismatches(to_host(d_out, s), cpu_inclusive(host_in, compose_wide{})) == 0);
      d_out = foundry::device_buffer<T>(n, s, poison);
      foundry::exclusive_scan<foundry::scan_striped_policy>(in, d_out.span(), init, compose_wide{}, s);
      CHECK(mismatches(to_host(d_out, s), cpu_exclusive(host_in, init, compose_wide{})) == 0);
    }
  }
}

TEST_CASE("the default scan policy is the blocked arrangement", "[gpu]") {
  // The cases above name their policy; this one calls without, so a change of the
  // default is caught against a reference too.
  static_assert(foundry::scan_policy::tile_arrangement == foundry::scan_tile_arrangement::blocked);
  foundry::stream s;
  const std::size_t n = 3 * tile_elements<foundry::scan_policy, std::int32_t> + 7;
  const auto x = random_vector<std::int32_t>(n, -100, 100, 63);
  const auto d_x = to_device(x, s);
  auto d_out = poisoned_device_buffer<std::int32_t>(n, s);
  foundry::inclusive_sum(d_x.span(), d_out.span(), s);
  CHECK(mismatches(to_host(d_out, s), cpu_inclusive(x, cuda::std::plus<std::int32_t>{})) == 0);
  foundry::exclusive_sum(d_x.span(), d_out.span(), s);
  CHECK(mismatches(to_host(d_out, s), cpu_exclusive(x, 0, cuda::std::plus<std::int32_t>{})) == 0);
}

/// Inclusive scan of `maps` with both spans 4 bytes off an 8-byte boundary (affine's
/// alignment is 4): the one-element path, which must not move a map as one 8-byte access.
template <class Policy>
std::size_t under_aligned_scan_mismatches(const std::vector<affine>& maps, foundry::stream& s) {
  const std::size_t n = maps.size();
  std::vector<std::uint32_t> words(2 * n + 1, 0);
  std::memcpy(words.data() + 1, maps.data(), n * sizeof(affine));
  const auto d_in = to_device(words, s);
  auto d_out = foundry::device_buffer<std::uint32_t>(2 * n + 1, s, 0u);
  const cuda::std::span<const affine> in(reinterpret_cast<const affine*>(d_in.data() + 1), n);
  const cuda::std::span<affine> out(reinterpret_cast<affine*>(d_out.data() + 1), n);
  foundry::inclusive_scan<Policy>(in, out, compose{}, s);
  const auto got_words = to_host(d_out, s);
  std::vector<affine> got(n);
  std::memcpy(got.data(), got_words.data() + 1, n * sizeof(affine));
  return mismatches(got, cpu_inclusive(maps, compose{}));
}

TEST_CASE("scans of 8-byte structs at 4-byte-aligned addresses", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{4097}}) {
    CAPTURE(n);
    const auto maps = random_maps(n, 79);
    CHECK(under_aligned_scan_mismatches<foundry::scan_striped_policy>(maps, s) == 0);
    CHECK(under_aligned_scan_mismatches<foundry::scan_blocked_policy>(maps, s) == 0);
  }
}

TEST_CASE("naive scans match the CPU", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto maps = random_maps(n, 57);
    const auto d_maps = to_device(maps, s);
    auto inclusive = foundry::device_buffer<affine>(n, s, affine{0, 0});
    auto exclusive = foundry::device_buffer<affine>(n, s, affine{0, 0});
    foundry::naive::inclusive_scan(d_maps.span(), inclusive.span(), compose{}, s);
    foundry::naive::exclusive_scan(d_maps.span(), exclusive.span(), affine{3, 7}, compose{}, s);
    CHECK(mismatches(to_host(inclusive, s), cpu_inclusive(maps, compose{})) == 0);
    CHECK(mismatches(to_host(exclusive, s), cpu_exclusive(maps, affine{3, 7}, compose{})) == 0);
  }
}

TEST_CASE("block_scan and warp_scan keep the order of a non-commutative operator", "[gpu]") {
  foundry::stream s;
  constexpr int threads = 256;
  const auto maps = random_maps(threads, 58);
  const auto d_maps = to_device(maps, s);
  auto block_inclusive = foundry::device_buffer<affine>(threads, s, affine{0, 0});
  auto block_exclusive = foundry::device_buffer<affine>(threads, s, affine{0, 0});
  auto warp_inclusive = foundry::device_buffer<affine>(threads, s, affine{0, 0});
  auto total = foundry::device_buffer<affine>(1, s, affine{0, 0});
  foundry::launch_config c;
  c.grid = dim3(1, 1, 1);
  c.block = dim3(threads, 1, 1);
  foundry::launch(s, c, block_and_warp_scan_kernel<threads>, d_maps.data(), block_inclusive.data(),
                  block_exclusive.data(), warp_inclusive.data(), total.data());
  const auto expected = cpu_inclusive(maps, compose{});
  CHECK(mismatches(to_host(block_inclusive, s), expected) == 0);
  CHECK(mismatches(to_host(block_exclusive, s), cpu_exclusive(maps, affine{3, 5}, compose{})) == 0);
  CHECK(to_host(total, s)[0] == expected.back());
  std::vector<affine> per_warp;
  for (int w = 0; w < threads / 32; ++w) {
    const std::vector<affine> lanes(maps.begin() + w * 32, maps.begin() + (w + 1) * 32);
    const auto scanned = cpu_inclusive(lanes, compose{});
    per_warp.insert(per_warp.end(), scanned.begin(), scanned.end());
  }
  CHECK(mismatches(to_host(warp_inclusive, s), per_warp) == 0);
}

TEST_CASE("inclusive_sum of 2^31 + 5 bytes into uint64 is exact", "[gpu][large]") {
  foundry::stream s;
  const std::size_t n = (std::size_t{1} << 31) + 5;
  const std::size_t offset = 3;
  foundry::device_buffer<std::uint8_t> x(n + offset, s);
  foundry::tabulate(x.span(), mod_251{}, s);
  foundry::device_buffer<std::uint64_t> out(n, s);
  foundry::inclusive_sum(x.span().subspan(offset), out.span(), s);
  foundry::device_buffer<unsigned long long> count(1, s, 0ull);
  foundry::launch(s, foundry::make_launch_config_1d(n, 256, foundry::resident_grid_blocks(8)),
                  count_prefix_mod_251_mismatches, static_cast<const std::uint64_t*>(out.data()), n, offset,
                  count.data());
  CHECK(to_host(count, s)[0] == 0);
}

// ---- argument checks that throw before any CUDA call: they run without a GPU ----

TEST_CASE("scans reject different sizes, null pointers and partial overlap") {
  cuda::std::span<float> ten(fake_pointer<float>(), 10);
  cuda::std::span<float> eleven(fake_pointer<float>(), 11);
  cuda::std::span<float> null_ten(static_cast<float*>(nullptr), 10);
  cuda::std::span<float> shifted(fake_pointer<float>() + 1, 10);
  REQUIRE_THROWS_AS(foundry::inclusive_sum(ten, eleven, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::inclusive_sum(null_ten, ten, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::exclusive_sum(ten, null_ten, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::inclusive_sum(ten, shifted, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::inclusive_scan(ten, eleven, cuda::std::plus<float>{}, unused_stream()),
                    std::invalid_argument);
}

TEST_CASE("scans of empty spans do nothing, even with null pointers") {
  cuda::std::span<float> empty(static_cast<float*>(nullptr), 0);
  REQUIRE_NOTHROW(foundry::inclusive_sum(empty, empty, unused_stream()));
  REQUIRE_NOTHROW(foundry::exclusive_sum(empty, empty, unused_stream()));
}

// ---- the blocked arrangement's shared-memory layout, on the host ----

namespace {

/// The most distinct 4-byte words that one bank serves in one access of a warp whose
/// lane l touches the `bytes`-byte slot `slot_of(l)` (1: no bank conflict). The
/// hardware serves 128 bytes a wavefront: 32, 16 or 8 lanes at a time for 4-, 8- and
/// 16-byte accesses.
template <class SlotOf>
std::size_t bank_ways(int bytes, SlotOf slot_of) {
  const int lanes_per_phase = std::min(32, 128 / bytes);
  std::size_t worst = 0;
  for (int first = 0; first < 32; first += lanes_per_phase) {
    std::map<long, std::set<long>> words_of_bank;
    for (int lane = first; lane < first + lanes_per_phase; ++lane) {
      const long word = static_cast<long>(slot_of(lane)) * bytes / 4;
      for (long w = word; w < word + bytes / 4; ++w) words_of_bank[w % 32].insert(w);
    }
    for (const auto& bank : words_of_bank) worst = std::max(worst, bank.second.size());
  }
  return worst;
}

template <int Vectors>
void check_blocked_layout() {
  constexpr int threads = 128;
  using layout = foundry::detail::blocked_scan_layout<threads, Vectors>;
  CAPTURE(Vectors);
  STATIC_REQUIRE(layout::stride % 2 == 1);
  std::set<int> used;
  for (int v = 0; v < threads * Vectors; ++v) used.insert(layout::slot(v));
  CHECK(used.size() == std::size_t{threads} * Vectors);
  CHECK(*used.rbegin() < layout::slots);
  // Thread t's vectors are t × Vectors + u, in the slots t × stride + u.
  CHECK(layout::slot(5 * Vectors + Vectors - 1) == 5 * layout::stride + Vectors - 1);
  for (const int bytes : {4, 8, 16}) {
    CAPTURE(bytes);
    std::size_t blocked_ways = 0, striped_ways = 0;
    for (int warp = 0; warp < threads / 32; ++warp) {
      for (int u = 0; u < Vectors; ++u) {
        // Each lane its own u-th vector; instruction u of the copy in or out (32 consecutive vectors).
        const auto own = [&](int lane) { return layout::slot((warp * 32 + lane) * Vectors + u); };
        const auto striped = [&](int lane) { return layout::slot(warp * 32 * Vectors + u * 32 + lane); };
        blocked_ways = std::max(blocked_ways, bank_ways(bytes, own));
        striped_ways = std::max(striped_ways, bank_ways(bytes, striped));
      }
    }
    CHECK(blocked_ways == 1);
    CHECK(striped_ways <= 2);
  }
}

}  // namespace

TEST_CASE("blocked scan layout: a slot per vector, and a warp reads its lanes' vectors without bank conflicts") {
  check_blocked_layout<1>();
  check_blocked_layout<2>();
  check_blocked_layout<3>();
  check_blocked_layout<6>();
  check_blocked_layout<8>();
  check_blocked_layout<12>();
  check_blocked_layout<24>();
}
