// transform (unary, binary, n-ary), tabulate, iota and device_copy, plus the
// naive transform twin: CPU references on seeded random data, odd sizes,
// misaligned pointers, a size past 2^31, and the argument checks.
//
// Every comparison here is exact: each output element is one correctly rounded
// operation (or an explicit fma on both sides), so the GPU and CPU agree bit for bit.
#include <catch2/catch.hpp>

#include <foundry/algorithms/transform.cuh>
#include <foundry/naive/transform.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

using namespace foundry::test;

namespace {

// A named functor: nothing beyond nvcc's defaults needed.
struct fma3 {
  __host__ __device__ float operator()(float a, float b, float c) const { return fmaf(a, b, c); }
};
struct negate {
  __host__ __device__ float operator()(float a) const { return -a; }
};
struct subtract {
  __host__ __device__ float operator()(float a, float b) const { return a - b; }
};

// Counts the i in [0, n) where out[i] != (pattern(i) ^ 0x5A), with pattern(i) = i * 131 + (i >> 13).
__host__ __device__ inline std::uint8_t byte_pattern(std::uint64_t i) {
  return static_cast<std::uint8_t>(i * 131u + (i >> 13));
}
struct byte_pattern_op {
  __host__ __device__ std::uint8_t operator()(std::uint64_t i) const { return byte_pattern(i); }
};
__global__ void count_pattern_mismatches(const std::uint8_t* out, std::size_t n, std::uint8_t mask,
                                         unsigned long long* count) {
  unsigned long long local = 0;
  for (auto i : foundry::grid_stride_range(n)) local += out[i] != static_cast<std::uint8_t>(byte_pattern(i) ^ mask);
  if (local != 0) atomicAdd(count, local);
}

unsigned long long pattern_mismatches(const foundry::device_buffer<std::uint8_t>& out, std::uint8_t mask,
                                      cuda::stream_ref s) {
  foundry::device_buffer<unsigned long long> count(1, s, 0ull);
  foundry::launch(s, foundry::make_launch_config_1d(out.size(), 256, foundry::resident_grid_blocks(8)),
                  count_pattern_mismatches, out.data(), out.size(), mask, count.data());
  return to_host(count, s)[0];
}

}  // namespace

TEST_CASE("transform applies a unary device lambda at odd sizes", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto x = random_vector<float>(n, -10.0f, 10.0f);
    const auto d_x = to_device(x, s);
    auto d_out = poisoned_device_buffer<float>(n, s);
    foundry::transform(
        d_x.span(), d_out.span(), [] __device__(float v) { return v * 3.0f; }, s);
    CHECK(to_host(d_out, s) == host_tabulate(n, [&](std::size_t i) { return x[i] * 3.0f; }));
  }
}

TEST_CASE("transform computes saxpy in place with a capturing lambda", "[gpu]") {
  foundry::stream s;
  const float a = 1.5f;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto x = random_vector<float>(n, -1.0f, 1.0f, 1);
    const auto y = random_vector<float>(n, -1.0f, 1.0f, 2);
    const auto d_x = to_device(x, s);
    auto d_y = to_device(y, s);
    foundry::transform(
        d_x.span(), d_y.span(), d_y.span(), [a] __device__(float xi, float yi) { return __fmaf_rn(a, xi, yi); }, s);
    CHECK(to_host(d_y, s) == host_tabulate(n, [&](std::size_t i) { return std::fma(a, x[i], y[i]); }));
  }
}

TEST_CASE("transform takes any number of inputs as a tuple of spans", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto a = random_vector<float>(n, -1.0f, 1.0f, 1);
    const auto b = random_vector<float>(n, -1.0f, 1.0f, 2);
    const auto c = random_vector<float>(n, -1.0f, 1.0f, 3);
    const auto d_a = to_device(a, s);
    const auto d_b = to_device(b, s);
    const auto d_c = to_device(c, s);
    auto d_out = poisoned_device_buffer<float>(n, s);
    foundry::transform(cuda::std::make_tuple(d_a.span(), d_b.span(), d_c.span()), d_out.span(), fma3{}, s);
    CHECK(to_host(d_out, s) == host_tabulate(n, [&](std::size_t i) { return std::fma(a[i], b[i], c[i]); }));
  }
}

TEST_CASE("transform is correct when pointers are offset by 1, 2 or 3 elements", "[gpu]") {
  // Misaligned pointers take the scalar path; equal offsets on all pointers still
  // do. Elements outside the output subspan must stay poisoned.
  foundry::stream s;
  const std::size_t n = 1025;
  const auto x = random_vector<float>(n + 3, -1.0f, 1.0f, 4);
  const auto y = random_vector<float>(n + 3, -1.0f, 1.0f, 5);
  const auto d_x = to_device(x, s);
  const auto d_y = to_device(y, s);
  const std::size_t offsets[][3] = {{1, 0, 0}, {0, 2, 0}, {0, 0, 3}, {1, 1, 1}, {3, 2, 1}, {2, 2, 2}};
  for (const auto& o : offsets) {
    CAPTURE(o[0], o[1], o[2]);
    auto d_out = poisoned_device_buffer<float>(n + 3, s);
    foundry::transform(
        d_x.span().subspan(o[0], n), d_y.span().subspan(o[1], n), d_out.span().subspan(o[2], n),
        [] __device__(float a, float b) { return a - b; }, s);
    const auto out = to_host(d_out, s);
    for (std::size_t i = 0; i < n + 3; ++i) {
      if (i >= o[2] && i < o[2] + n) {
        REQUIRE(out[i] == x[i - o[2] + o[0]] - y[i - o[2] + o[1]]);
      } else {
        REQUIRE(std::isnan(out[i]));  // untouched poison
      }
    }
  }
}

TEST_CASE("transforms, tabulates and copies back to back on one stream see each other's results", "[gpu]") {
  // The memory-bound kernels start before the previous kernel ends (programmatic
  // dependent launch) and must wait for it before touching memory: a chain of
  // in-place updates with no synchronisation exposes a kernel that reads too early
  // (a stale value) or writes too early (over a value the previous kernel still reads).
  foundry::stream s;
  for (const std::size_t n : {std::size_t{33}, std::size_t{(1u << 20) + 7}}) {
    CAPTURE(n);
    auto d_x = poisoned_device_buffer<std::int32_t>(n, s);
    auto d_y = poisoned_device_buffer<std::int32_t>(n, s);
    foundry::iota(d_x.span(), 0, s);
    for (int step = 0; step < 50; ++step) {
      foundry::transform(
          d_x.span(), d_x.span(), [] __device__(std::int32_t v) { return v + 3; }, s);
      foundry::device_copy(d_y.span(), d_x.span(), s);
      foundry::transform(
          d_y.span(), d_x.span(), d_x.span(), [] __device__(std::int32_t y, std::int32_t x) { return 2 * y - x; }, s);
    }
    const auto x = to_host(d_x, s);
    CHECK(x == host_tabulate(n, [](std::size_t i) { return static_cast<std::int32_t>(i) + 150; }));
  }
}

TEST_CASE("transform converts between element types (half in, float out)", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto h = from_floats<__half>(random_vector<float>(n, -4.0f, 4.0f, 6));
    const auto d_h = to_device(h, s);
    auto d_out = poisoned_device_buffer<float>(n, s);
    foundry::transform(
        d_h.span(), d_out.span(), [] __device__(__half v) { return __half2float(v) * 2.0f; }, s);
    CHECK(to_host(d_out, s) == host_tabulate(n, [&](std::size_t i) { return __half2float(h[i]) * 2.0f; }));
  }
}

TEST_CASE("transform handles an element type whose size is not a power of two", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto v = to_vec3s(random_vector<float>(3 * n, -1.0f, 1.0f, 25));
    const auto d_v = to_device(v, s);
    auto d_out = poisoned_device_buffer<float>(n, s);
    foundry::transform(
        d_v.span(), d_out.span(), [] __device__(vec3 a) { return (a.x + a.y) + a.z; }, s);
    CHECK(to_host(d_out, s) == host_tabulate(n, [&](std::size_t i) { return (v[i].x + v[i].y) + v[i].z; }));
  }
}

TEST_CASE("naive::transform matches foundry::transform", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto x = random_vector<float>(n, -1.0f, 1.0f, 7);
    const auto y = random_vector<float>(n, -1.0f, 1.0f, 8);
    const auto d_x = to_device(x, s);
    const auto d_y = to_device(y, s);
    auto d_naive = poisoned_device_buffer<float>(n, s);
    auto d_unary = poisoned_device_buffer<float>(n, s);
    foundry::naive::transform(
        d_x.span(), d_y.span(), d_naive.span(), [] __device__(float a, float b) { return __fmaf_rn(2.0f, a, b); }, s);
    foundry::naive::transform(
        d_x.span(), d_unary.span(), [] __device__(float a) { return -a; }, s);
    CHECK(to_host(d_naive, s) == host_tabulate(n, [&](std::size_t i) { return std::fma(2.0f, x[i], y[i]); }));
    CHECK(to_host(d_unary, s) == host_tabulate(n, [&](std::size_t i) { return -x[i]; }));
  }
}

TEST_CASE("naive::device_copy copies every element", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    const auto x = random_vector<std::uint16_t>(n + 1, 0, 65535, 27);
    const auto d_x = to_device(x, s);
    auto d_y = poisoned_device_buffer<std::uint16_t>(n, s);
    foundry::naive::device_copy(d_y.span(), d_x.span().subspan(1), s);
    CHECK(to_host(d_y, s) == std::vector<std::uint16_t>(x.begin() + 1, x.end()));
  }
}

TEST_CASE("iota and tabulate write values computed from the index", "[gpu]") {
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    CAPTURE(n);
    auto d_int = poisoned_device_buffer<std::int32_t>(n + 1, s);
    foundry::iota(d_int.span().subspan(1), -7, s);  // misaligned: scalar path
    auto d_float = poisoned_device_buffer<float>(n, s);
    foundry::iota(d_float.span(), 0.5f, s);
    auto d_square = poisoned_device_buffer<std::uint64_t>(n, s);
    foundry::tabulate(
        d_square.span(), [] __device__(std::uint64_t i) { return i * i; }, s);
    const auto ints = to_host(d_int, s);
    const auto floats = to_host(d_float, s);
    const auto squares = to_host(d_square, s);
    CHECK(ints[0] == poison_value<std::int32_t>());
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(ints[i + 1] == static_cast<std::int32_t>(i) - 7);
      REQUIRE(floats[i] == 0.5f + static_cast<float>(i));
      REQUIRE(squares[i] == std::uint64_t{i} * i);
    }
  }
}

TEST_CASE("device_copy copies every byte at odd sizes and offsets", "[gpu]") {
  // Equal offsets (mod 16) take the chunked 16-byte path with a byte head and
  // tail; unequal ones the element-wise path.
  foundry::stream s;
  for (const std::size_t n : odd_sizes()) {
    const auto src = random_vector<std::uint8_t>(n + 16, 0, 255, 9);
    const auto d_src = to_device(src, s);
    const std::size_t offsets[][2] = {{0, 0}, {1, 1}, {5, 5}, {3, 0}, {0, 7}, {15, 2}};
    for (const auto& o : offsets) {
      CAPTURE(n, o[0], o[1]);
      auto d_dst = poisoned_device_buffer<std::uint8_t>(n + 16, s);
      foundry::device_copy(d_dst.span().subspan(o[1], n), d_src.span().subspan(o[0], n), s);
      const auto dst = to_host(d_dst, s);
      for (std::size_t i = 0; i < n + 16; ++i) {
        if (i >= o[1] && i < o[1] + n) {
          REQUIRE(dst[i] == src[i - o[1] + o[0]]);
        } else {
          REQUIRE(dst[i] == poison_value<std::uint8_t>());
        }
      }
    }
  }
}

TEST_CASE("device_copy copies floats like cudaMemcpy", "[gpu]") {
  foundry::stream s;
  const std::size_t n = (1u << 20) + 7;
  const auto x = random_vector<float>(n, -1.0f, 1.0f, 10);
  const auto d_x = to_device(x, s);
  auto d_y = poisoned_device_buffer<float>(n, s);
  foundry::device_copy(d_y.span(), d_x.span(), s);
  CHECK(to_host(d_y, s) == x);
}

TEST_CASE("tabulate, transform and device_copy cover 2^31 + 5 one-byte elements", "[gpu][large]") {
  // Past the int range: every index computation must be 64-bit. The data is a
  // pattern of the index (generated and checked on the device: 2 GiB each way).
  foundry::stream s;
  const std::size_t n = (std::size_t{1} << 31) + 5;
  foundry::device_buffer<std::uint8_t> in(n, s);
  foundry::tabulate(in.span(), byte_pattern_op{}, s);
  CHECK(pattern_mismatches(in, 0, s) == 0);
  {
    auto out = poisoned_device_buffer<std::uint8_t>(n, s);
    foundry::transform(
        in.span(), out.span(), [] __device__(std::uint8_t v) { return std::uint8_t(v ^ 0x5A); }, s);
    CHECK(pattern_mismatches(out, 0x5A, s) == 0);
  }
  auto copy = poisoned_device_buffer<std::uint8_t>(n, s);
  foundry::device_copy(copy.span(), in.span(), s);
  CHECK(pattern_mismatches(copy, 0, s) == 0);
}

// ---- argument checks: they throw before any CUDA call, so they run without a GPU ----

TEST_CASE("transform rejects an input whose size differs from the output's") {
  cuda::std::span<float> a(fake_pointer<float>(), 10);
  cuda::std::span<float> out(fake_pointer<float>(), 11);
  REQUIRE_THROWS_AS(foundry::transform(a, out, negate{}, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transform(out, a, out, subtract{}, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::transform(a, out, negate{}, unused_stream()), std::invalid_argument);
}

TEST_CASE("transform rejects a null pointer with elements") {
  cuda::std::span<float> null_span(static_cast<float*>(nullptr), 10);
  cuda::std::span<float> good(fake_pointer<float>(), 10);
  REQUIRE_THROWS_AS(foundry::transform(null_span, good, negate{}, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transform(good, null_span, negate{}, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::tabulate(null_span, byte_pattern_op{}, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::transform(null_span, good, negate{}, unused_stream()), std::invalid_argument);
}

TEST_CASE("device_copy rejects different sizes and null pointers") {
  cuda::std::span<float> ten(fake_pointer<float>(), 10);
  cuda::std::span<float> eleven(fake_pointer<float>(), 11);
  cuda::std::span<float> null_span(static_cast<float*>(nullptr), 10);
  REQUIRE_THROWS_AS(foundry::device_copy(ten, eleven, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::device_copy(null_span, ten, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::device_copy(ten, null_span, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::device_copy(ten, eleven, unused_stream()), std::invalid_argument);
}

TEST_CASE("empty spans are a no-op, even with null pointers") {
  cuda::std::span<float> empty;
  REQUIRE_NOTHROW(foundry::transform(empty, empty, negate{}, unused_stream()));
  REQUIRE_NOTHROW(foundry::iota(empty, 0.0f, unused_stream()));
  REQUIRE_NOTHROW(foundry::device_copy(empty, empty, unused_stream()));
}
