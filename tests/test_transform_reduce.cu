// foundry::transform_reduce (unary, binary, n-ary; caller or internal workspace)
// and its naive twin, checked against CPU references on seeded random data:
// dot products, norms, counts, mixed input types, misaligned inputs, init
// folded once, determinism, NaN, a size past 2^31 and the argument checks.
//
// Tolerance of a floating-point dot product (Higham, "Accuracy and Stability
// of Numerical Algorithms", 3.1): in any order of summation, with each product
// rounded once (or fused into an fma) and n - 1 additions,
//   |computed - exact| <= gamma(n) * sum|a_i * b_i|,  gamma(n) = n*u / (1 - n*u),
// u = 2^-53 for double, 2^-24 for float. A sum of exact terms (a norm of
// float-rounded squares, or the fmaf terms of the 3-input case) is a special
// case: gamma(n - 1) <= gamma(n). The reference is a compensated dot product in
// double (Ogita, Rump, Oishi, "Accurate sum and dot product", Dot2): its error
// is <= 2^-53 |dot| + gamma_53(n)^2 * sum|a_i b_i| <= 2^-52 * sum|a_i b_i| for
// the sizes here, and dot_tolerance adds that. (sum|a_i b_i| itself is summed in
// double; its relative error, <= 2^-33 here, does not matter.) Integer results
// and counts are exact.
#include <catch2/catch.hpp>

#include <foundry/algorithms/transform.cuh>
#include <foundry/algorithms/transform_reduce.cuh>
#include <foundry/core/operators.cuh>
#include <foundry/naive/transform_reduce.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

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

const double u_double = std::ldexp(1.0, -53);
const double u_float = std::ldexp(1.0, -24);

/// The exact dot product, to double precision, and sum|a_i b_i|.
struct dot_reference {
  double dot = 0;
  double sum_abs = 0;
};

/// Dot2 (TwoProduct by fma, TwoSum): as accurate as a dot product in twice double precision.
/// Every input type here (float, half, bytes, int) converts to double exactly.
template <class A, class B>
dot_reference reference_dot(const A* a, const B* b, std::size_t n) {
  double s = 0, c = 0, sum_abs = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
    const double p = x * y;
    const double p_err = std::fma(x, y, -p);
    const double t = s + p;
    const double z = t - s;
    c += ((s - (t - z)) + (p - z)) + p_err;
    s = t;
    sum_abs += std::fabs(p);
  }
  return {s + c, sum_abs};
}
template <class A, class B>
dot_reference reference_dot(const std::vector<A>& a, const std::vector<B>& b) {
  return reference_dot(a.data(), b.data(), a.size());
}

/// gamma(n) * sum_abs (the device's worst case, see the top of the file) plus the
/// reference's own error, 2^-52 * sum_abs.
double dot_tolerance(std::size_t n, double sum_abs, double u) {
  const double nu = static_cast<double>(n) * u;
  return nu / (1.0 - nu) * sum_abs + std::ldexp(sum_abs, -52);
}

template <class T>
T result_of(const foundry::device_buffer<T>& d, cuda::stream_ref s) {
  return to_host(d, s)[0];
}

std::uint32_t bits_of(float x) {
  std::uint32_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

/// `got` is within the dot-product bound of `ref` for `n` terms at unit roundoff `u`.
void check_dot(double got, const dot_reference& ref, std::size_t n, double u) {
  CAPTURE(got, ref.dot, ref.sum_abs);
  CHECK(std::fabs(got - ref.dot) <= dot_tolerance(n, ref.sum_abs, u));
}

/// transform_reduce(plus, multiplies) of a and b (random in [-1, 1]) into a `T` at odd sizes.
template <class T>
void check_dot_at_odd_sizes(double u, std::uint64_t stream_id) {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto a = random_vector<T>(n, T(-1), T(1), stream_id);
    const auto b = random_vector<T>(n, T(-1), T(1), stream_id + 1);
    const auto d_a = to_device(a, s);
    const auto d_b = to_device(b, s);
    auto d_out = poisoned_device_buffer<T>(1, s);
    foundry::transform_reduce(d_a.span(), d_b.span(), d_out.span(), T(0), cuda::std::plus<>{},
                              cuda::std::multiplies<>{}, s);
    check_dot(result_of(d_out, s), reference_dot(a, b), n, u);
  }
}

/// Dot products of subspans of `a` and `b` that start at different element offsets into their
/// allocations. Floating point: within the bound; integers (products accumulated in int64): exact.
template <class T, class Acc>
void check_offset_dot(double u, std::uint64_t stream_id) {
  foundry::stream s;
  const std::size_t max_m = (1u << 20) + 7;
  const auto a = random_vector<T>(max_m + 3, T(-1000), T(1000), stream_id);
  const auto b = random_vector<T>(max_m + 3, T(-1000), T(1000), stream_id + 1);
  const auto d_a = to_device(a, s);
  const auto d_b = to_device(b, s);
  // Vector elements: 4 floats or int32s, 2 doubles. {1, 3}: scalar path for float and int32,
  // vector path with a 1-element head for double; {2, 1} and {0, 3}: scalar path for all;
  // {3, 3}: vector path with a head for all; {0, 0}: vector path without a head.
  const std::size_t offsets[][2] = {{1, 3}, {2, 1}, {0, 3}, {3, 3}, {0, 0}};
  for (const auto& o : offsets) {
    for (const std::size_t m : {std::size_t{1}, std::size_t{5}, std::size_t{33}, std::size_t{1025}, max_m}) {
      CAPTURE(o[0], o[1], m);
      auto d_out = poisoned_device_buffer<Acc>(1, s);
      foundry::transform_reduce(d_a.span().subspan(o[0], m), d_b.span().subspan(o[1], m), d_out.span(), Acc(0),
                                cuda::std::plus<>{}, cuda::std::multiplies<>{}, s);
      const auto ref = reference_dot(a.data() + o[0], b.data() + o[1], m);
      if constexpr (std::is_integral_v<Acc>) {
        CHECK(result_of(d_out, s) == static_cast<Acc>(ref.dot));  // |dot| < 2^41: exact in double
      } else {
        check_dot(result_of(d_out, s), ref, m, u);
      }
    }
  }
}

/// a * b + c with a single rounding, the same on host and device.
struct fused_multiply_add {
  __host__ __device__ float operator()(float a, float b, float c) const { return fmaf(a, b, c); }
};

struct mod_251 {
  __device__ std::uint8_t operator()(std::uint64_t i) const { return static_cast<std::uint8_t>(i % 251); }
};

/// How many i in [0, m) have i % 251 < 100.
std::uint64_t count_mod_251_below_100(std::uint64_t m) { return m / 251 * 100 + std::min<std::uint64_t>(m % 251, 100); }

}  // namespace

TEST_CASE("transform_reduce computes a dot product of doubles within gamma(n) at odd sizes", "[gpu]") {
  check_dot_at_odd_sizes<double>(u_double, 40);
}

TEST_CASE("transform_reduce computes a dot product of floats within gamma(n) at odd sizes", "[gpu]") {
  check_dot_at_odd_sizes<float>(u_float, 42);
}

TEST_CASE("transform_reduce is correct when each input starts at a different offset", "[gpu]") {
  SECTION("float") { check_offset_dot<float, float>(u_float, 44); }
  SECTION("double") { check_offset_dot<double, double>(u_double, 46); }
  SECTION("int32 products summed exactly in int64") { check_offset_dot<std::int32_t, std::int64_t>(0.0, 48); }
}

TEST_CASE("transform_reduce computes a squared norm with a device lambda, float in and double out", "[gpu]") {
  // The squares round in float (the lambda's type), then accumulate in double,
  // the output's type: an error of a float accumulator would be far above this bound.
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto x = random_vector<float>(n, -1.0f, 1.0f, 50);
    const auto d_x = to_device(x, s);
    auto d_out = poisoned_device_buffer<double>(1, s);
    foundry::transform_reduce(
        d_x.span(), d_out.span(), 0.0, cuda::std::plus<>{}, [] __device__(float v) { return v * v; }, s);
    const auto squares = host_tabulate(n, [&](std::size_t i) { return x[i] * x[i]; });
    check_dot(result_of(d_out, s), reference_dot(squares, std::vector<float>(n, 1.0f)), n, u_double);
  }
}

TEST_CASE("transform_reduce counts the elements that satisfy a predicate into uint64", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto x = random_vector<float>(n, 0.0f, 1.0f, 52);
    const auto d_x = to_device(x, s);
    auto d_out = poisoned_device_buffer<std::uint64_t>(1, s);
    foundry::transform_reduce(
        d_x.span(), d_out.span(), std::uint64_t{0}, cuda::std::plus<>{},
        [] __device__(float v) { return v > 0.25f ? 1 : 0; }, s);
    CHECK(result_of(d_out, s) ==
          static_cast<std::uint64_t>(std::count_if(x.begin(), x.end(), [](float v) { return v > 0.25f; })));
  }
}

TEST_CASE("transform_reduce takes a tuple of three inputs and a caller's workspace at any byte offset", "[gpu]") {
  // The partials are placed on a 16-byte boundary inside the workspace, so the
  // result is the same bits with an internal workspace, an aligned one and one a byte in.
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto a = random_vector<float>(n, -1.0f, 1.0f, 54);
    const auto b = random_vector<float>(n, -1.0f, 1.0f, 55);
    const auto c = random_vector<float>(n, -1.0f, 1.0f, 56);
    const auto d_a = to_device(a, s);
    const auto d_b = to_device(b, s);
    const auto d_c = to_device(c, s);
    const auto inputs = cuda::std::make_tuple(d_a.span(), d_b.span(), d_c.span());
    const std::size_t bytes =
        foundry::transform_reduce_workspace_bytes<float, foundry::reduce_policy, float, float, float>(n);
    if (n == (1u << 20) + 7) CHECK(bytes > 0);  // several partials: pass 2 runs
    foundry::device_buffer<std::byte> workspace(bytes + 1, s);
    std::vector<std::uint32_t> bits;
    for (int run = 0; run < 3; ++run) {
      auto d_out = poisoned_device_buffer<float>(1, s);
      if (run == 0) {
        foundry::transform_reduce(inputs, d_out.span(), 0.0f, cuda::std::plus<>{}, fused_multiply_add{}, s);
      } else {
        foundry::transform_reduce(inputs, d_out.span(), 0.0f, cuda::std::plus<>{}, fused_multiply_add{},
                                  workspace.span().subspan(run - 1, bytes), s);
      }
      bits.push_back(bits_of(result_of(d_out, s)));
    }
    CHECK(bits[1] == bits[0]);
    CHECK(bits[2] == bits[0]);
    float got = 0;
    std::memcpy(&got, &bits[0], sizeof got);
    const auto terms = host_tabulate(n, [&](std::size_t i) { return std::fma(a[i], b[i], c[i]); });
    check_dot(got, reference_dot(terms, std::vector<float>(n, 1.0f)), n, u_float);
  }
}

TEST_CASE("transform_reduce folds init in exactly once, and an empty input gives init", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    // |sum| <= 1000 * (2^20 + 7) < 2^31 - 1000: no overflow in int32.
    const auto x = random_vector<std::int32_t>(n, -1000, 1000, 58);
    const auto d_x = to_device(x, s);
    auto d_out = poisoned_device_buffer<std::int32_t>(1, s);
    foundry::transform_reduce(d_x.span(), d_out.span(), 1000, cuda::std::plus<>{}, foundry::identity{}, s);
    CHECK(result_of(d_out, s) == 1000 + std::accumulate(x.begin(), x.end(), 0));
  }
  // Empty inputs, with null pointers: out[0] is init, bit for bit, from every overload.
  cuda::std::span<const float> empty;
  auto fused_binary = poisoned_device_buffer<float>(1, s);
  auto fused_tuple = poisoned_device_buffer<float>(1, s);
  auto naive_binary = poisoned_device_buffer<float>(1, s);
  foundry::transform_reduce(empty, empty, fused_binary.span(), 2.5f, cuda::std::plus<>{}, cuda::std::multiplies<>{}, s);
  foundry::transform_reduce(cuda::std::make_tuple(empty), fused_tuple.span(), 2.5f, cuda::std::plus<>{},
                            foundry::identity{}, cuda::std::span<std::byte>{}, s);
  foundry::naive::transform_reduce(empty, empty, naive_binary.span(), 2.5f, cuda::std::plus<>{},
                                   cuda::std::multiplies<>{}, s);
  CHECK(result_of(fused_binary, s) == 2.5f);
  CHECK(result_of(fused_tuple, s) == 2.5f);
  CHECK(result_of(naive_binary, s) == 2.5f);
}

TEST_CASE("transform_reduce mixes input types: the widest sets the vector width", "[gpu]") {
  // uint8 with float, and half with float: 4 elements per vector (16 bytes of
  // float, 4 of uint8, 8 of half). Equal offsets take the vector path with a
  // head, unequal ones the scalar path. Products round once in float.
  foundry::stream s;
  const std::size_t offsets[][2] = {{0, 0}, {1, 1}, {3, 3}, {2, 3}};
  for (const std::size_t n : odd_sizes()) {
    const auto w = random_vector<std::uint8_t>(n + 3, 0, 255, 60);
    const auto h = from_floats<__half>(random_vector<float>(n + 3, -4.0f, 4.0f, 61));
    const auto x = random_vector<float>(n + 3, -1.0f, 1.0f, 62);
    const auto h_as_float = host_tabulate(n + 3, [&](std::size_t i) { return to_float(h[i]); });
    const auto d_w = to_device(w, s);
    const auto d_h = to_device(h, s);
    const auto d_x = to_device(x, s);
    for (const auto& o : offsets) {
      CAPTURE(n, o[0], o[1]);
      auto d_wx = poisoned_device_buffer<float>(1, s);
      auto d_hx = poisoned_device_buffer<float>(1, s);
      foundry::transform_reduce(
          d_w.span().subspan(o[0], n), d_x.span().subspan(o[1], n), d_wx.span(), 0.0f, cuda::std::plus<>{},
          [] __device__(std::uint8_t wi, float xi) { return static_cast<float>(wi) * xi; }, s);
      foundry::transform_reduce(
          d_h.span().subspan(o[0], n), d_x.span().subspan(o[1], n), d_hx.span(), 0.0f, cuda::std::plus<>{},
          [] __device__(__half hi, float xi) { return __half2float(hi) * xi; }, s);
      check_dot(result_of(d_wx, s), reference_dot(w.data() + o[0], x.data() + o[1], n), n, u_float);
      check_dot(result_of(d_hx, s), reference_dot(h_as_float.data() + o[0], x.data() + o[1], n), n, u_float);
    }
  }
}

TEST_CASE("transform_reduce gives the same bits on every run", "[gpu]") {
  foundry::stream s;
  const std::size_t n = (std::size_t{1} << 22) + 3;
  const auto a = random_vector<float>(n, -1.0f, 1.0f, 64);
  const auto b = random_vector<float>(n, -1.0f, 1.0f, 65);
  const auto d_a = to_device(a, s);
  const auto d_b = to_device(b, s);
  std::vector<std::uint32_t> bits;
  for (int run = 0; run < 3; ++run) {
    auto d_out = poisoned_device_buffer<float>(1, s);
    foundry::transform_reduce(d_a.span(), d_b.span(), d_out.span(), 0.0f, cuda::std::plus<>{},
                              cuda::std::multiplies<>{}, s);
    bits.push_back(bits_of(result_of(d_out, s)));
  }
  CHECK(bits[1] == bits[0]);
  CHECK(bits[2] == bits[0]);
}

TEST_CASE("naive::transform_reduce matches the CPU references", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto a = random_vector<double>(n, -1.0, 1.0, 66);
    const auto b = random_vector<double>(n, -1.0, 1.0, 67);
    const auto x = random_vector<float>(n, -100.0f, 100.0f, 68);
    const auto d_a = to_device(a, s);
    const auto d_b = to_device(b, s);
    const auto d_x = to_device(x, s);
    auto d_dot = poisoned_device_buffer<double>(1, s);
    auto d_max_abs = poisoned_device_buffer<float>(1, s);
    foundry::naive::transform_reduce(d_a.span(), d_b.span(), d_dot.span(), 0.0, cuda::std::plus<>{},
                                     cuda::std::multiplies<>{}, s);
    foundry::naive::transform_reduce(
        d_x.span(), d_max_abs.span(), 0.0f, foundry::maximum{}, [] __device__(float v) { return fabsf(v); }, s);
    check_dot(result_of(d_dot, s), reference_dot(a, b), n, u_double);
    float expected_max_abs = 0.0f;
    for (const float v : x) expected_max_abs = std::max(expected_max_abs, std::fabs(v));
    CHECK(result_of(d_max_abs, s) == expected_max_abs);
  }
}

TEST_CASE("NaN in either input makes a float dot product NaN", "[gpu]") {
  foundry::stream s;
  const std::size_t n = 100003;
  const auto base = random_vector<float>(n, -1.0f, 1.0f, 70);
  const auto other = to_device(random_vector<float>(n, -1.0f, 1.0f, 71), s);
  for (const std::size_t at : {std::size_t{0}, std::size_t{1}, n / 2, n - 1}) {
    CAPTURE(at);
    auto x = base;
    x[at] = std::numeric_limits<float>::quiet_NaN();
    const auto d_x = to_device(x, s);
    // Outputs start finite (not the NaN poison), so a NaN result was written.
    foundry::device_buffer<float> d_first(1, s, 0.0f);
    foundry::device_buffer<float> d_second(1, s, 0.0f);
    foundry::transform_reduce(d_x.span(), other.span(), d_first.span(), 0.0f, cuda::std::plus<>{},
                              cuda::std::multiplies<>{}, s);
    foundry::transform_reduce(other.span(), d_x.span(), d_second.span(), 0.0f, cuda::std::plus<>{},
                              cuda::std::multiplies<>{}, s);
    CHECK(std::isnan(result_of(d_first, s)));
    CHECK(std::isnan(result_of(d_second, s)));
  }
}

namespace {
// 8 bytes, aligned to 4: an array of them may start at an address 4 mod 8.
struct float_pair {
  float a, b;
};
struct pair_product {
  __device__ double operator()(const float_pair& p) const { return static_cast<double>(p.a) * p.b; }
};
}  // namespace

TEST_CASE("transform_reduce reads structs aligned below their size at any address", "[gpu]") {
  // A pair at 4 mod 8 cannot move as one 64-bit access: the scalar path must use the
  // struct's own accesses (a 64-bit load there faults with a misaligned address).
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto values = random_vector<std::int32_t>(2 * n + 2, -100, 100, 80);
    std::vector<float> floats(values.begin(), values.end());
    const auto d_floats = to_device(floats, s);
    for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      CAPTURE(offset);
      const auto* pairs = reinterpret_cast<const float_pair*>(d_floats.data() + offset);
      auto d_out = poisoned_device_buffer<double>(1, s);
      foundry::transform_reduce(cuda::std::span<const float_pair>(pairs, n), d_out.span(), 0.0,
                                cuda::std::plus<double>{}, pair_product{}, s);
      double expected = 0;  // small integers: every partial sum is exact
      for (std::size_t i = 0; i < n; ++i) expected += double{floats[offset + 2 * i]} * floats[offset + 2 * i + 1];
      CHECK(result_of(d_out, s) == expected);
    }
  }
}

TEST_CASE("transform_reduce over 2^31 + 5 bytes counts and multiplies exactly", "[gpu][large]") {
  // Past the int range, values i % 251 generated on the device (one 2 GiB buffer).
  // Unary at offset 3: the vector path with a head. Binary at offsets 3 and 0
  // (different phases modulo 16): the scalar path. Both expectations are exact.
  foundry::stream s;
  const std::uint64_t n = (std::uint64_t{1} << 31) + 5;
  const std::uint64_t offset = 3;
  foundry::device_buffer<std::uint8_t> x(n + offset, s);
  foundry::tabulate(x.span(), mod_251{}, s);

  auto d_count = poisoned_device_buffer<std::uint64_t>(1, s);
  foundry::transform_reduce(
      x.span().subspan(offset, n), d_count.span(), std::uint64_t{0}, cuda::std::plus<>{},
      [] __device__(std::uint8_t v) { return v < 100 ? 1u : 0u; }, s);
  CHECK(result_of(d_count, s) == count_mod_251_below_100(n + offset) - count_mod_251_below_100(offset));

  // sum over i < n of ((i + 3) % 251) * (i % 251): periodic in i with period 251.
  auto d_dot = poisoned_device_buffer<std::uint64_t>(1, s);
  foundry::transform_reduce(
      x.span().subspan(offset, n), x.span().subspan(0, n), d_dot.span(), std::uint64_t{0}, cuda::std::plus<>{},
      [] __device__(std::uint8_t p, std::uint8_t q) { return std::uint64_t{p} * q; }, s);
  const auto term = [](std::uint64_t i) { return ((i + offset) % 251) * (i % 251); };
  std::uint64_t period = 0, rest = 0;
  for (std::uint64_t i = 0; i < 251; ++i) period += term(i);
  for (std::uint64_t i = 0; i < n % 251; ++i) rest += term(i);
  CHECK(result_of(d_dot, s) == n / 251 * period + rest);
}

TEST_CASE("transform_reduce rejects a caller's workspace that is too small", "[gpu]") {
  foundry::stream s;
  const std::size_t n = 1u << 20;
  foundry::device_buffer<float> a(n, s, 1.0f);
  foundry::device_buffer<float> out(1, s);
  const std::size_t bytes = foundry::transform_reduce_workspace_bytes<float, foundry::reduce_policy, float, float>(n);
  REQUIRE(bytes > 0);
  foundry::device_buffer<std::byte> workspace(bytes, s);
  const auto inputs = cuda::std::make_tuple(a.span(), a.span());
  REQUIRE_THROWS_AS(foundry::transform_reduce(inputs, out.span(), 0.0f, cuda::std::plus<>{}, cuda::std::multiplies<>{},
                                              workspace.span().first(bytes - 1), s),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transform_reduce(inputs, out.span(), 0.0f, cuda::std::plus<>{}, cuda::std::multiplies<>{},
                                              cuda::std::span<std::byte>(static_cast<std::byte*>(nullptr), bytes), s),
                    std::invalid_argument);
  s.synchronize();
}

// ---- argument checks that throw before any CUDA call: they run without a GPU ----

TEST_CASE("transform_reduce rejects a null input with elements") {
  cuda::std::span<float> null_input(static_cast<float*>(nullptr), 10);
  cuda::std::span<float> input(fake_pointer<float>(), 10);
  cuda::std::span<float> out(fake_pointer<float>(), 1);
  const auto plus = cuda::std::plus<>{};
  const auto times = cuda::std::multiplies<>{};
  REQUIRE_THROWS_AS(foundry::transform_reduce(null_input, input, out, 0.0f, plus, times, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transform_reduce(input, null_input, out, 0.0f, plus, times, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transform_reduce(null_input, out, 0.0f, plus, foundry::identity{}, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transform_reduce(cuda::std::make_tuple(input, input, null_input), out, 0.0f, plus,
                                              fused_multiply_add{}, cuda::std::span<std::byte>{}, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::transform_reduce(null_input, input, out, 0.0f, plus, times, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::transform_reduce(input, null_input, out, 0.0f, plus, times, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::transform_reduce(null_input, out, 0.0f, plus, foundry::identity{}, unused_stream()),
                    std::invalid_argument);
}

TEST_CASE("transform_reduce rejects inputs of different sizes") {
  cuda::std::span<float> ten(fake_pointer<float>(), 10);
  cuda::std::span<float> eleven(fake_pointer<float>(), 11);
  cuda::std::span<float> out(fake_pointer<float>(), 1);
  const auto plus = cuda::std::plus<>{};
  const auto times = cuda::std::multiplies<>{};
  REQUIRE_THROWS_AS(foundry::transform_reduce(ten, eleven, out, 0.0f, plus, times, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transform_reduce(eleven, ten, out, 0.0f, plus, times, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transform_reduce(cuda::std::make_tuple(ten, ten, eleven), out, 0.0f, plus,
                                              fused_multiply_add{}, cuda::std::span<std::byte>{}, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::transform_reduce(ten, eleven, out, 0.0f, plus, times, unused_stream()),
                    std::invalid_argument);
}

TEST_CASE("transform_reduce rejects an empty or null output") {
  cuda::std::span<float> input(fake_pointer<float>(), 10);
  cuda::std::span<float> empty_out(fake_pointer<float>(), 0);
  cuda::std::span<float> null_out(static_cast<float*>(nullptr), 1);
  const auto plus = cuda::std::plus<>{};
  const auto times = cuda::std::multiplies<>{};
  for (const auto out : {empty_out, null_out}) {
    CAPTURE(out.size());
    REQUIRE_THROWS_AS(foundry::transform_reduce(input, input, out, 0.0f, plus, times, unused_stream()),
                      std::invalid_argument);
    REQUIRE_THROWS_AS(foundry::transform_reduce(input, out, 0.0f, plus, foundry::identity{}, unused_stream()),
                      std::invalid_argument);
    REQUIRE_THROWS_AS(foundry::transform_reduce(cuda::std::make_tuple(input), out, 0.0f, plus, foundry::identity{},
                                                cuda::std::span<std::byte>{}, unused_stream()),
                      std::invalid_argument);
    REQUIRE_THROWS_AS(foundry::naive::transform_reduce(input, input, out, 0.0f, plus, times, unused_stream()),
                      std::invalid_argument);
    REQUIRE_THROWS_AS(foundry::naive::transform_reduce(input, out, 0.0f, plus, foundry::identity{}, unused_stream()),
                      std::invalid_argument);
  }
}
