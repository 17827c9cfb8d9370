// foundry::reduce (sum, min, max, user functors; float, integer, half and
// bfloat16 inputs; caller or internal workspace), checked against CPU references
// on seeded random data, plus determinism, NaN/infinity propagation, a size
// past 2^31 and the argument checks. The naive ladder is in test_reduce_naive.cu.
//
// Tolerance of a float sum: any summation order of n floats satisfies
// |computed - exact| <= gamma(n-1) * sum|x_i|, gamma(k) = k*u / (1 - k*u),
// u = 2^-24 (Higham, "Accuracy and Stability of Numerical Algorithms", 4.2).
// The reference is the sum in double (its own error, about n * 2^-53 * sum|x|,
// is negligible beside that). Integer sums, min and max are exact.
#include <catch2/catch.hpp>

#include <foundry/algorithms/reduce.cuh>
#include <foundry/algorithms/transform.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <type_traits>
#include <vector>

using namespace foundry::test;

namespace {

std::uint32_t bits_of(float x) {
  std::uint32_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

/// The first value of a one-element device result.
template <class T>
T result_of(const foundry::device_buffer<T>& d, cuda::stream_ref s) {
  return to_host(d, s)[0];
}

/// reduce_sum of `x` (on the device as `d_x`) into a float is within the worst-case
/// error of a float sum of `x.size()` terms from the double reference.
template <class T>
void check_sum_within_bound(const std::vector<T>& x, const foundry::device_buffer<T>& d_x, cuda::stream_ref s) {
  auto d_sum = poisoned_device_buffer<float>(1, s);
  foundry::reduce_sum(d_x.span(), d_sum.span(), s);
  const auto ref = reference_sum(x);
  CHECK(std::fabs(result_of(d_sum, s) - ref.sum) <= float_sum_tolerance(x.size(), ref.sum_abs));
}

/// reduce_sum of `x` into one `Out` equals the exact sum of `x`, accumulated in
/// 64 bits on the host. The caller picks values whose sum fits in `Out`.
template <class Out, class In>
void check_exact_sum(const std::vector<In>& x, cuda::stream_ref s) {
  using wide = std::conditional_t<std::is_signed_v<Out>, std::int64_t, std::uint64_t>;
  const auto d_x = to_device(x, s);
  auto d_out = poisoned_device_buffer<Out>(1, s);
  foundry::reduce_sum(d_x.span(), d_out.span(), s);
  CHECK(result_of(d_out, s) == std::accumulate(x.begin(), x.end(), wide{0}));
}

struct max_abs {
  __device__ float operator()(float a, float b) const { return fmaxf(fabsf(a), fabsf(b)); }
};

struct mod_251 {
  __device__ std::uint8_t operator()(std::uint64_t i) const { return static_cast<std::uint8_t>(i % 251); }
};

/// sum of (i % 251) for i in [0, m).
std::uint64_t prefix_sum_mod_251(std::uint64_t m) {
  const std::uint64_t q = m / 251;
  const std::uint64_t r = m % 251;
  return q * (250 * 251 / 2) + (r == 0 ? 0 : r * (r - 1) / 2);
}

}  // namespace

TEST_CASE("reduce_sum of floats is within the summation error bound at odd sizes", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto x = random_vector<float>(n, -1.0f, 1.0f, 11);
    check_sum_within_bound(x, to_device(x, s), s);
  }
}

TEST_CASE("reduce_sum of integers is exact at odd sizes", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    // |sum| <= 1000 * (2^20 + 7) < 2^31: no overflow in int32.
    check_exact_sum<std::int32_t>(random_vector<std::int32_t>(n, -1000, 1000, 12), s);
  }
}

TEST_CASE("reduce_sum of bytes accumulates in uint64 at odd sizes", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    check_exact_sum<std::uint64_t>(random_vector<std::uint8_t>(n, 0, 255, 13), s);
  }
}

TEST_CASE("reduce_min and reduce_max are exact for floats and integers", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto f = random_vector<float>(n, -100.0f, 100.0f, 14);
    const auto i = random_vector<std::int64_t>(n, -1000000, 1000000, 15);
    const auto d_f = to_device(f, s);
    const auto d_i = to_device(i, s);
    auto f_min = poisoned_device_buffer<float>(1, s);
    auto f_max = poisoned_device_buffer<float>(1, s);
    auto i_min = poisoned_device_buffer<std::int64_t>(1, s);
    auto i_max = poisoned_device_buffer<std::int64_t>(1, s);
    foundry::reduce_min(d_f.span(), f_min.span(), s);
    foundry::reduce_max(d_f.span(), f_max.span(), s);
    foundry::reduce_min(d_i.span(), i_min.span(), s);
    foundry::reduce_max(d_i.span(), i_max.span(), s);
    if (n == 0) {  // the identities
      CHECK(result_of(f_min, s) == std::numeric_limits<float>::infinity());
      CHECK(result_of(f_max, s) == -std::numeric_limits<float>::infinity());
      CHECK(result_of(i_min, s) == std::numeric_limits<std::int64_t>::max());
      CHECK(result_of(i_max, s) == std::numeric_limits<std::int64_t>::lowest());
    } else {
      CHECK(result_of(f_min, s) == *std::min_element(f.begin(), f.end()));
      CHECK(result_of(f_max, s) == *std::max_element(f.begin(), f.end()));
      CHECK(result_of(i_min, s) == *std::min_element(i.begin(), i.end()));
      CHECK(result_of(i_max, s) == *std::max_element(i.begin(), i.end()));
    }
  }
}

TEST_CASE("reduce of half inputs accumulates in float", "[gpu]") {
  // Accumulated in half, a sum of 2^20 values in [0, 1) would stop growing at 2048
  // (half's spacing there is 2); in float the bound below holds.
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto h = from_floats<__half>(random_vector<float>(n, 0.0f, 1.0f, 16));
    const auto d_h = to_device(h, s);
    check_sum_within_bound(h, d_h, s);
    auto d_max = poisoned_device_buffer<float>(1, s);
    foundry::reduce_max(d_h.span(), d_max.span(), s);
    double expected_max = -std::numeric_limits<double>::infinity();
    for (const auto& v : h) expected_max = std::max(expected_max, as_double(v));
    CHECK(result_of(d_max, s) == expected_max);
  }
}

TEST_CASE("reduce of bfloat16 inputs accumulates in float", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto b = from_floats<__nv_bfloat16>(random_vector<float>(n, -1.0f, 1.0f, 17));
    const auto d_b = to_device(b, s);
    check_sum_within_bound(b, d_b, s);
    auto d_min = poisoned_device_buffer<float>(1, s);
    foundry::reduce_min(d_b.span(), d_min.span(), s);
    double expected_min = std::numeric_limits<double>::infinity();
    for (const auto& v : b) expected_min = std::min(expected_min, as_double(v));
    CHECK(result_of(d_min, s) == expected_min);
  }
}

TEST_CASE("reduce takes user functors: a named struct and a device lambda", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto f = random_vector<float>(n, -50.0f, 50.0f, 18);
    const auto u = random_vector<std::uint32_t>(n, 0, 0xffffffffu, 19);
    const auto d_f = to_device(f, s);
    const auto d_u = to_device(u, s);
    auto d_max_abs = poisoned_device_buffer<float>(1, s);
    auto d_xor = poisoned_device_buffer<std::uint32_t>(1, s);
    foundry::reduce(d_f.span(), d_max_abs.span(), 0.0f, max_abs{}, s);
    foundry::reduce(
        d_u.span(), d_xor.span(), 0u, [] __device__(std::uint32_t a, std::uint32_t b) { return a ^ b; }, s);
    float expected_max_abs = 0.0f;
    std::uint32_t expected_xor = 0;
    for (std::size_t i = 0; i < n; ++i) {
      expected_max_abs = std::max(expected_max_abs, std::fabs(f[i]));
      expected_xor ^= u[i];
    }
    CHECK(result_of(d_max_abs, s) == expected_max_abs);
    CHECK(result_of(d_xor, s) == expected_xor);
  }
}

TEST_CASE("reduce sums a 12-byte struct component-wise", "[gpu]") {
  // Integer values in [-8, 8]: every partial sum is an integer below 2^24 in
  // magnitude (8 * (2^20 + 7) < 2^24), so float sums are exact in any order.
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto v = to_vec3s(random_vector<int>(3 * n, -8, 8, 26));
    const auto d_v = to_device(v, s);
    foundry::device_buffer<vec3> d_out(1, s, vec3{-1.0f, -1.0f, -1.0f});
    foundry::reduce(
        d_v.span(), d_out.span(), vec3{0.0f, 0.0f, 0.0f},
        [] __device__(vec3 a, vec3 b) {
          return vec3{a.x + b.x, a.y + b.y, a.z + b.z};
        },
        s);
    double ex = 0, ey = 0, ez = 0;
    for (const auto& e : v) {
      ex += e.x;
      ey += e.y;
      ez += e.z;
    }
    const vec3 got = to_host(d_out, s)[0];
    CHECK(got.x == ex);
    CHECK(got.y == ey);
    CHECK(got.z == ez);
  }
}

TEST_CASE("reduce is correct when the input is offset by 1, 2 or 3 elements", "[gpu]") {
  // The misaligned head goes element-wise, the rest in 16-byte vectors.
  foundry::stream s;
  const std::size_t n = (1u << 20) + 7;
  const auto x = random_vector<std::int32_t>(n + 3, -1000, 1000, 20);
  const auto d_x = to_device(x, s);
  for (std::size_t offset = 0; offset <= 3; ++offset) {
    for (const std::size_t m : {std::size_t{1}, std::size_t{5}, std::size_t{1025}, n}) {
      CAPTURE(offset, m);
      auto d_out = poisoned_device_buffer<std::int64_t>(1, s);
      foundry::reduce_sum(d_x.span().subspan(offset, m), d_out.span(), s);
      CHECK(result_of(d_out, s) == std::accumulate(x.begin() + offset, x.begin() + offset + m, std::int64_t{0}));
    }
  }
}

namespace {
// One block per SM, so that blocks walk many tiles and the partial tile's owner varies.
struct contiguous_tiles_policy : foundry::reduce_policy {
  static constexpr foundry::tile_assignment tiles = foundry::tile_assignment::contiguous;
  static constexpr int blocks_per_sm = 1;
};
struct strided_tiles_policy : foundry::reduce_policy {
  static constexpr int blocks_per_sm = 1;
  static constexpr int vectors_in_flight = 2;
};
}  // namespace

TEST_CASE("reduce is exact with either tile assignment at odd sizes and offsets", "[gpu]") {
  foundry::stream s;
  const std::size_t max_n = (std::size_t{1} << 22) + 13;
  const auto x = random_vector<std::int32_t>(max_n + 3, -1000, 1000, 28);
  const auto d_x = to_device(x, s);
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{33}, std::size_t{4097}, std::size_t{(1u << 20) + 7}, max_n}) {
    for (std::size_t offset = 0; offset <= 3; offset += 3) {
      CAPTURE(n, offset);
      const auto in = d_x.span().subspan(offset, n);
      const auto expected = std::accumulate(x.begin() + offset, x.begin() + offset + n, std::int64_t{0});
      auto contiguous = poisoned_device_buffer<std::int64_t>(1, s);
      auto strided = poisoned_device_buffer<std::int64_t>(1, s);
      foundry::reduce_sum<contiguous_tiles_policy>(in, contiguous.span(), s);
      foundry::reduce_sum<strided_tiles_policy>(in, strided.span(), s);
      CHECK(result_of(contiguous, s) == expected);
      CHECK(result_of(strided, s) == expected);
    }
  }
}

TEST_CASE("reduce gives the same bits on every run, whatever the workspace", "[gpu]") {
  foundry::stream s;
  const std::size_t n = (std::size_t{1} << 24) + 3;
  const auto x = random_vector<float>(n, -1.0f, 1.0f, 21);
  const auto d_x = to_device(x, s);
  const std::size_t bytes = foundry::reduce_workspace_bytes<float>(n);
  REQUIRE(bytes > 0);
  foundry::device_buffer<std::byte> workspace(bytes + 1, s);
  std::vector<std::uint32_t> bits;
  for (int run = 0; run < 4; ++run) {
    auto d_out = poisoned_device_buffer<float>(1, s);
    if (run < 2) {
      foundry::reduce_sum(d_x.span(), d_out.span(), s);  // internal workspace
    } else {
      // a caller's workspace, aligned, then offset by one byte
      foundry::reduce(d_x.span(), d_out.span(), 0.0f, cuda::std::plus<float>{}, workspace.span().subspan(run - 2), s);
    }
    bits.push_back(bits_of(result_of(d_out, s)));
  }
  CHECK(bits[1] == bits[0]);
  CHECK(bits[2] == bits[0]);
  CHECK(bits[3] == bits[0]);
}

TEST_CASE("reduce on a stream foundry does not own gives the same bits as on a foundry::stream", "[gpu]") {
  foundry::stream owned;
  cudaStream_t raw = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking) == cudaSuccess);
  const std::size_t n = (std::size_t{1} << 20) + 7;
  const auto x = random_vector<float>(n, -1.0f, 1.0f, 27);
  const auto d_x = to_device(x, owned);
  auto on_owned = poisoned_device_buffer<float>(1, owned);
  foundry::reduce_sum(d_x.span(), on_owned.span(), owned);
  owned.synchronize();  // d_x is ready before the raw stream reads it
  foundry::device_buffer<float> on_raw(1, cuda::stream_ref{raw}, poison_value<float>());
  foundry::reduce_sum(d_x.span(), on_raw.span(), cuda::stream_ref{raw});
  const float raw_result = to_host(on_raw, cuda::stream_ref{raw})[0];
  CHECK(bits_of(raw_result) == bits_of(result_of(on_owned, owned)));
  const auto ref = reference_sum(x);
  CHECK(std::fabs(raw_result - ref.sum) <= float_sum_tolerance(n, ref.sum_abs));
  on_raw = foundry::device_buffer<float>();  // freed on `raw` before it goes
  REQUIRE(cudaStreamSynchronize(raw) == cudaSuccess);
  REQUIRE(cudaStreamDestroy(raw) == cudaSuccess);
}

TEST_CASE("reductions back to back on one stream, of several sizes and types, are each correct", "[gpu]") {
  // No synchronisation between calls: each call's kernels start early (programmatic
  // dependent launch) and must still wait for the previous call's, whose workspace is
  // freed and reallocated stream-ordered in between.
  foundry::stream s;
  const std::vector<std::size_t> sizes{(1u << 20) + 7, 5000, (1u << 16) + 1, (1u << 22) + 3, 4097};
  std::vector<std::vector<std::int32_t>> inputs;
  std::vector<foundry::device_buffer<std::int32_t>> d_inputs;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    inputs.push_back(random_vector<std::int32_t>(sizes[k], -1000, 1000, 30 + k));
    d_inputs.push_back(to_device(inputs.back(), s));
  }
  std::vector<foundry::device_buffer<std::int32_t>> sums32;
  std::vector<foundry::device_buffer<double>> sums64;
  for (int round = 0; round < 2; ++round) {
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      sums32.push_back(poisoned_device_buffer<std::int32_t>(1, s));
      foundry::reduce_sum(d_inputs[k].span(), sums32.back().span(), s);
      sums64.push_back(poisoned_device_buffer<double>(1, s));
      foundry::reduce_sum(d_inputs[k].span(), sums64.back().span(), s);
    }
  }
  for (std::size_t r = 0; r < sums32.size(); ++r) {
    const auto& x = inputs[r % sizes.size()];
    const auto expected = std::accumulate(x.begin(), x.end(), std::int64_t{0});
    CAPTURE(r, x.size());
    CHECK(result_of(sums32[r], s) == expected);
    CHECK(result_of(sums64[r], s) == static_cast<double>(expected));
  }
}

TEST_CASE("reduce with caller-provided workspace needs none for a small input", "[gpu]") {
  foundry::stream s;
  CHECK(foundry::reduce_workspace_bytes<float>(0) == 0);
  CHECK(foundry::reduce_workspace_bytes<float>(1) == 0);
  CHECK(foundry::reduce_workspace_bytes<float>(1u << 20) > 0);
  const auto x = random_vector<std::int32_t>(1000, -5, 5, 22);
  const auto d_x = to_device(x, s);
  auto d_out = poisoned_device_buffer<std::int32_t>(1, s);
  foundry::reduce(d_x.span(), d_out.span(), 0, cuda::std::plus<std::int32_t>{}, cuda::std::span<std::byte>{}, s);
  CHECK(result_of(d_out, s) == std::accumulate(x.begin(), x.end(), std::int32_t{0}));
}

TEST_CASE("NaN propagates through sum, min and max wherever it sits", "[gpu]") {
  foundry::stream s;
  const std::size_t n = 100003;
  const auto base = random_vector<float>(n, -1.0f, 1.0f, 23);
  for (const std::size_t at : {std::size_t{0}, std::size_t{1}, n / 2, n - 1}) {
    CAPTURE(at);
    auto x = base;
    x[at] = std::numeric_limits<float>::quiet_NaN();
    const auto d_x = to_device(x, s);
    // Outputs start finite here (not the NaN poison), so a NaN result was written.
    foundry::device_buffer<float> d_sum(1, s, 0.0f);
    foundry::device_buffer<float> d_min(1, s, 0.0f);
    foundry::device_buffer<float> d_max(1, s, 0.0f);
    foundry::reduce_sum(d_x.span(), d_sum.span(), s);
    foundry::reduce_min(d_x.span(), d_min.span(), s);
    foundry::reduce_max(d_x.span(), d_max.span(), s);
    CHECK(std::isnan(result_of(d_sum, s)));
    CHECK(std::isnan(result_of(d_min, s)));
    CHECK(std::isnan(result_of(d_max, s)));
  }
}

TEST_CASE("infinities propagate as in the double reference", "[gpu]") {
  foundry::stream s;
  const std::size_t n = 100003;
  const float inf = std::numeric_limits<float>::infinity();
  auto x = random_vector<float>(n, -1.0f, 1.0f, 24);
  x[n / 3] = inf;
  {
    const auto d_x = to_device(x, s);
    auto d_sum = poisoned_device_buffer<float>(1, s);
    auto d_max = poisoned_device_buffer<float>(1, s);
    foundry::reduce_sum(d_x.span(), d_sum.span(), s);
    foundry::reduce_max(d_x.span(), d_max.span(), s);
    CHECK(result_of(d_sum, s) == inf);
    CHECK(result_of(d_max, s) == inf);
  }
  x[n - 1] = -inf;  // inf + -inf is NaN in the reference
  {
    const auto d_x = to_device(x, s);
    auto d_sum = foundry::device_buffer<float>(1, s, 0.0f);
    auto d_min = poisoned_device_buffer<float>(1, s);
    foundry::reduce_sum(d_x.span(), d_sum.span(), s);
    foundry::reduce_min(d_x.span(), d_min.span(), s);
    CHECK(std::isnan(result_of(d_sum, s)));
    CHECK(result_of(d_min, s) == -inf);
  }
}

TEST_CASE("reduce_sum of 2^31 + 5 bytes into uint64 is exact", "[gpu][large]") {
  // Past the int range, at an odd offset (misaligned head). Values i % 251 are
  // generated on the device; the expected sum has a closed form.
  foundry::stream s;
  const std::size_t n = (std::size_t{1} << 31) + 5;
  const std::size_t offset = 3;
  foundry::device_buffer<std::uint8_t> x(n + offset, s);
  foundry::tabulate(x.span(), mod_251{}, s);
  auto d_out = poisoned_device_buffer<std::uint64_t>(1, s);
  foundry::reduce_sum(x.span().subspan(offset), d_out.span(), s);
  CHECK(result_of(d_out, s) == prefix_sum_mod_251(n + offset) - prefix_sum_mod_251(offset));
}

TEST_CASE("reduce rejects a workspace that is too small", "[gpu]") {
  foundry::stream s;
  const std::size_t n = 1u << 20;
  foundry::device_buffer<float> x(n, s, 1.0f);
  foundry::device_buffer<float> out(1, s);
  const std::size_t bytes = foundry::reduce_workspace_bytes<float>(n);
  foundry::device_buffer<std::byte> workspace(bytes, s);
  REQUIRE_THROWS_AS(
      foundry::reduce(x.span(), out.span(), 0.0f, cuda::std::plus<float>{}, workspace.span().first(bytes - 1), s),
      std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::reduce(x.span(), out.span(), 0.0f, cuda::std::plus<float>{},
                                    cuda::std::span<std::byte>(static_cast<std::byte*>(nullptr), bytes), s),
                    std::invalid_argument);
  s.synchronize();
}

// ---- argument checks that throw before any CUDA call: they run without a GPU ----

TEST_CASE("reduce rejects a null input with elements and an output too small") {
  cuda::std::span<float> null_input(static_cast<float*>(nullptr), 10);
  cuda::std::span<float> input(fake_pointer<float>(), 10);
  cuda::std::span<float> output(fake_pointer<float>(), 1);
  cuda::std::span<float> no_output(fake_pointer<float>(), 0);
  REQUIRE_THROWS_AS(foundry::reduce_sum(null_input, output, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::reduce_sum(input, no_output, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(
      foundry::reduce_min(input, cuda::std::span<float>(static_cast<float*>(nullptr), 1), unused_stream()),
      std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::reduce(null_input, output, 0.0f, max_abs{}, cuda::std::span<std::byte>{}, unused_stream()),
                    std::invalid_argument);
}
