// Issue 22, the argument checks: memory the device cannot access (defect 3), forbidden
// overlaps through the one shared range check (4), the GEMM's extent overflow and iota's
// wrap-around (7). Cases without [gpu] throw before any CUDA call and run on CI.
#include <catch2/catch.hpp>

#include <foundry/foundry.cuh>
#include <foundry/naive/histogram.cuh>
#include <support/test_support.cuh>

#include <climits>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

using Catch::Matchers::Contains;
using foundry::matrix_layout;
using foundry::matrix_op;
using foundry::matrix_view;
using foundry::test::fake_pointer;
using foundry::test::unused_stream;

namespace {

bool pageable_access() { return foundry::get_device_properties().pageable_memory_access; }

struct negate {
  __host__ __device__ float operator()(float v) const { return -v; }
};
struct widen {
  __host__ __device__ double operator()(float v) const { return v; }
};

}  // namespace

// ---- defect 7: iota wraps without signed overflow ----

// Evaluated by the compiler, where signed overflow is an error rather than undefined behaviour.
static_assert(foundry::detail::iota_op<std::int32_t>{INT_MAX}(1) == INT_MIN);
static_assert(foundry::detail::iota_op<std::int64_t>{LLONG_MAX - 1}(3) == LLONG_MIN + 1);
static_assert(foundry::detail::iota_op<std::int8_t>{127}(2) == -127);
static_assert(foundry::detail::iota_op<std::uint32_t>{UINT_MAX}(1) == 0u);

TEST_CASE("iota wraps past the largest signed value as unsigned arithmetic does", "[gpu]") {
  foundry::stream s;
  constexpr std::size_t n = 37;
  foundry::device_buffer<std::int32_t> x(n, s);
  foundry::iota(x.span(), INT_MAX - 5, s);
  const auto host = foundry::test::to_host(x, s);
  for (std::size_t i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(host[i] ==
          static_cast<std::int32_t>(static_cast<std::uint32_t>(INT_MAX - 5) + static_cast<std::uint32_t>(i)));
  }
}

// ---- defect 7: the GEMM's (rows - 1) * ld + cols overflow ----

TEST_CASE("gemm rejects a matrix whose extent overflows the address range", "[gemm]") {
  const std::int64_t big = std::int64_t{1} << 32;
  float* p = fake_pointer<float>();
  // A is 2^32 x 2^32 with ld 2^32: its last element is 2^64 elements in.
  const matrix_view<const float> a{p, big, big, big};
  const matrix_view<const float> b{p + 1000, big, 1, 1};
  const matrix_view<float> c{p + 2000, big, 1, 1};
  CHECK_THROWS_WITH((foundry::make_gemm_problem<float, float>(1.0f, a, matrix_op::none, b, matrix_op::none, 0.0f, c)),
                    Contains("overflows the address range") && Contains("A"));
  // Column-major: the outer extent is the column count.
  const matrix_view<const float> a_col{p, big, big, big, matrix_layout::col_major};
  CHECK_THROWS_WITH(
      (foundry::make_gemm_problem<float, float>(1.0f, a_col, matrix_op::none, b, matrix_op::none, 0.0f, c)),
      Contains("overflows the address range"));
}

// ---- defect 4: forbidden overlaps, one range check everywhere ----

TEST_CASE("transform refuses an input that partially overlaps its output") {
  cuda::std::span<float> x(fake_pointer<float>(), 100);
  cuda::std::span<float> shifted(fake_pointer<float>() + 1, 100);
  CHECK_THROWS_WITH(foundry::transform(x, shifted, negate{}, unused_stream()), Contains("overlap"));
  CHECK_THROWS_WITH(foundry::transform(shifted, x, negate{}, unused_stream()), Contains("overlap"));
  CHECK_THROWS_AS(foundry::transform(x, x, shifted, cuda::std::plus<float>{}, unused_stream()), std::invalid_argument);
  // The same address with a wider output element is not in place: element i is written over input i + 1.
  cuda::std::span<double> wide(reinterpret_cast<double*>(fake_pointer<float>()), 50);
  CHECK_THROWS_WITH(foundry::transform(x.first(50), wide, widen{}, unused_stream()), Contains("overlap"));
}

TEST_CASE("device_copy and copy refuse overlapping ranges") {
  cuda::std::span<float> x(fake_pointer<float>(), 100);
  cuda::std::span<float> shifted(fake_pointer<float>() + 99, 100);
  CHECK_THROWS_WITH(foundry::device_copy(x, shifted, unused_stream()), Contains("overlap"));
  CHECK_THROWS_WITH(foundry::device_copy(shifted, x, unused_stream()), Contains("overlap"));
  CHECK_THROWS_WITH(foundry::copy(x, shifted, unused_stream()), Contains("overlap"));
  CHECK_THROWS_WITH(foundry::copy(x, x, unused_stream()), Contains("overlap"));
}

TEST_CASE("gemm refuses a C that overlaps A or B", "[gemm]") {
  float* p = fake_pointer<float>();
  const matrix_view<const float> a{p, 4, 4, 4};
  const matrix_view<const float> b{p + 1000, 4, 4, 4};
  CHECK_THROWS_WITH(foundry::gemm(1.0f, a, matrix_op::none, b, matrix_op::none, 0.0f,
                                  matrix_view<float>{p + 15, 4, 4, 4}, unused_stream()),
                    Contains("C and A"));
  CHECK_THROWS_WITH(foundry::gemm(1.0f, a, matrix_op::none, b, matrix_op::none, 0.0f,
                                  matrix_view<float>{p + 990, 4, 4, 4}, unused_stream()),
                    Contains("C and B"));
}

TEST_CASE("exact in-place transform stays allowed and correct", "[gpu]") {
  foundry::stream s;
  const auto host = foundry::test::random_vector<float>(1025, -1.0f, 1.0f);
  auto x = foundry::test::to_device(host, s);
  foundry::transform(x.span(), x.span(), negate{}, s);
  const auto out = foundry::test::to_host(x, s);
  for (std::size_t i = 0; i < host.size(); ++i) CHECK(out[i] == -host[i]);
}

// Needs the workspace/C range check in gemm/detail/split_k.cuh (see the issue 22 report).
TEST_CASE("a caller's split-K workspace that aliases C is refused", "[gpu][gemm]") {
  foundry::stream s;
  constexpr std::int64_t m = 64, n = 64, k = 4096;
  foundry::device_buffer<float> a(m * k, s, 1.0f);
  foundry::device_buffer<float> b(k * n, s, 1.0f);
  foundry::device_buffer<float> c(m * n * 8, s, 0.0f);  // room for C and, wrongly, the workspace too
  const auto p = foundry::make_gemm_problem<float, float>(1.0f, matrix_view<const float>{a.data(), m, k, k},
                                                          matrix_op::none, matrix_view<const float>{b.data(), k, n, n},
                                                          matrix_op::none, 0.0f, matrix_view<float>{c.data(), m, n, n});
  foundry::gemm_kernels::split_k_options options;
  options.split_k = 4;
  options.workspace = c.span();
  CHECK_THROWS_WITH(foundry::gemm_kernels::gemm_register_blocked(p, options, s), Contains("workspace"));
  s.synchronize();
}

TEST_CASE("a caller's split-K workspace that aliases A or B is refused", "[gpu][gemm]") {
  foundry::stream s;
  constexpr std::int64_t m = 64, n = 64, k = 4096;
  // A and B each have room for the four slices' partial sums (4 x 64 x 64 floats), wrongly.
  foundry::device_buffer<float> a(m * k, s, 1.0f);
  foundry::device_buffer<float> b(k * n, s, 1.0f);
  foundry::device_buffer<float> c(m * n, s, 0.0f);
  const auto p = foundry::make_gemm_problem<float, float>(1.0f, matrix_view<const float>{a.data(), m, k, k},
                                                          matrix_op::none, matrix_view<const float>{b.data(), k, n, n},
                                                          matrix_op::none, 0.0f, matrix_view<float>{c.data(), m, n, n});
  foundry::gemm_kernels::split_k_options options;
  options.split_k = 4;
  options.workspace = cuda::std::span<float>(a.data() + 8, 4 * m * n);
  CHECK_THROWS_WITH(foundry::gemm_kernels::gemm_register_blocked(p, options, s), Contains("split-K workspace and A"));
  options.workspace = cuda::std::span<float>(b.data(), 4 * m * n);
  CHECK_THROWS_WITH(foundry::gemm_kernels::gemm_register_blocked(p, options, s), Contains("split-K workspace and B"));
  s.synchronize();
}

// ---- defect 3: memory the device cannot access ----

TEST_CASE("reduce into a host variable is refused where the device cannot reach pageable memory", "[gpu]") {
  foundry::stream s;
  const std::vector<float> host(1000, 0.5f);
  auto x = foundry::test::to_device(host, s);
  float total = -1.0f;
  cuda::std::span<float> out(&total, 1);
  if (pageable_access()) {
    // HMM or ATS: a host variable is a valid output, and the call must work.
    foundry::reduce_sum(x.span(), out, s);
    s.synchronize();
    CHECK(total == 500.0f);
  } else {
    CHECK_THROWS_WITH(foundry::reduce_sum(x.span(), out, s),
                      Contains("transform_reduce output") && Contains("host memory"));
    CHECK(total == -1.0f);
  }
}

TEST_CASE("a host array as a transform input or a GEMM operand is refused without pageable access", "[gpu]") {
  if (pageable_access()) {
    WARN("SKIPPED: this device reads pageable host memory (HMM/ATS), so host arrays are valid arguments");
    return;
  }
  foundry::stream s;
  std::vector<float> host(64 * 64, 1.0f);
  foundry::device_buffer<float> d(host.size(), s, 0.0f);
  foundry::device_buffer<float> c(host.size(), s, 0.0f);
  cuda::std::span<float> host_span(host.data(), host.size());
  CHECK_THROWS_WITH(foundry::transform(host_span, d.span(), negate{}, s), Contains("a transform input"));
  CHECK_THROWS_WITH(foundry::transform(d.span(), host_span, negate{}, s), Contains("transform output"));
  CHECK_THROWS_WITH(foundry::device_copy(d.span(), host_span, s), Contains("device_copy source"));
  const matrix_view<const float> host_a{host.data(), 64, 64, 64};
  const matrix_view<const float> dev_b{d.data(), 64, 64, 64};
  CHECK_THROWS_WITH(foundry::gemm(1.0f, host_a, matrix_op::none, dev_b, matrix_op::none, 0.0f,
                                  matrix_view<float>{c.data(), 64, 64, 64}, s),
                    Contains("gemm: A") && Contains("host memory"));
  s.synchronize();
}

TEST_CASE("convolve_2d refuses a device pointer for its host-side filter", "[gpu]") {
  foundry::stream s;
  foundry::device_buffer<float> image(32 * 32, s, 1.0f);
  foundry::device_buffer<float> result(32 * 32, s, 0.0f);
  foundry::device_buffer<float> device_filter(9, s, 1.0f / 9);
  s.synchronize();
  CHECK_THROWS_WITH(
      foundry::convolve_2d(foundry::image_view<const float>{image.data(), 32, 32, 32},
                           foundry::image_view<float>{result.data(), 32, 32, 32},
                           cuda::std::span<const float>(device_filter.data(), 9), foundry::border_mode::clamp, s),
      Contains("convolve_2d filter"));
}

TEST_CASE("pinned and managed memory stay valid arguments", "[gpu]") {
  foundry::stream s;
  const std::vector<float> host(4099, 0.25f);
  auto x = foundry::test::to_device(host, s);
  foundry::pinned_buffer<float> pinned(1);
  foundry::managed_buffer<float> managed(1);
  foundry::reduce_sum(x.span(), pinned.span(), s);
  foundry::reduce_sum(x.span(), managed.span(), s);
  s.synchronize();
  CHECK(pinned[0] == 4099 * 0.25f);
  CHECK(managed[0] == 4099 * 0.25f);
}

// ---- defect 3's cost: the checks remember what passed (memory/checked_memory.cuh) ----

TEST_CASE("the memory checks remember an accessible allocation until foundry frees it", "[gpu]") {
  using foundry::detail::expect_device_accessible;
  using foundry::detail::is_checked_memory;
  foundry::stream s;
  const int device = foundry::stream_device(s.get());
  foundry::forget_checked_memory();
  foundry::pinned_buffer<float> pinned(16);
  const float* freed = nullptr;
  {
    foundry::device_buffer<float> a(1000, s, 0.0f);
    freed = a.data();
    CHECK_FALSE(is_checked_memory(a.data(), device));
    expect_device_accessible(a.span().subspan(10, 5), device, "a");
    // The whole allocation is remembered, not only the span that was checked.
    CHECK(is_checked_memory(a.data(), device));
    CHECK(is_checked_memory(a.data() + 999, device));
    CHECK_FALSE(is_checked_memory(a.data(), device + 1));
    // Page-locked memory is asked about every time.
    expect_device_accessible(pinned.span(), device, "pinned");
    CHECK_FALSE(is_checked_memory(pinned.data(), device));
    // Memo is per thread.
    bool other_thread_hit = true;
    std::thread([&] { other_thread_hit = is_checked_memory(a.data(), device); }).join();
    CHECK_FALSE(other_thread_hit);
  }
  CHECK_FALSE(is_checked_memory(freed, device));

  foundry::managed_buffer<float> managed(64);
  expect_device_accessible(managed.span(), device, "managed");
  CHECK(is_checked_memory(managed.data() + 63, device));
  foundry::forget_checked_memory();
  CHECK_FALSE(is_checked_memory(managed.data(), device));
  s.synchronize();
}

TEST_CASE("memory freed outside foundry stays remembered until forget_checked_memory", "[gpu]") {
  using foundry::detail::expect_device_accessible;
  using foundry::detail::is_checked_memory;
  foundry::stream s;
  const int device = foundry::stream_device(s.get());
  const foundry::device_guard on(device);
  void* raw = nullptr;
  FOUNDRY_CUDA_TRY(cudaMalloc(&raw, 4096));
  expect_device_accessible(raw, device, "raw");
  CHECK(is_checked_memory(static_cast<char*>(raw) + 4095, device));
  FOUNDRY_CUDA_TRY(cudaFree(raw));
  CHECK(is_checked_memory(raw, device));  // documented: foundry does not see a raw cudaFree
  foundry::forget_checked_memory();
  CHECK_FALSE(is_checked_memory(raw, device));
}

TEST_CASE("a remembered allocation does not let host memory through", "[gpu]") {
  foundry::stream s;
  foundry::device_buffer<float> x(4096, s, 1.0f);
  foundry::device_buffer<float> out(1, s, 0.0f);
  for (int i = 0; i < 3; ++i) foundry::reduce_sum(x.span(), out.span(), s);  // remembered after the first
  s.synchronize();
  if (pageable_access()) {
    WARN("SKIPPED: this device reads pageable host memory (HMM/ATS), so host arrays are valid arguments");
    return;
  }
  float total = -1.0f;
  CHECK_THROWS_WITH(foundry::reduce_sum(x.span(), cuda::std::span<float>(&total, 1), s), Contains("host memory"));
  std::vector<float> host(4096, 1.0f);
  CHECK_THROWS_WITH(foundry::reduce_sum(cuda::std::span<const float>(host.data(), host.size()), out.span(), s),
                    Contains("host memory"));
}

// ---- further defects of kinds 3 and 4, found by review in session 24 ----

TEST_CASE("histogram_even refuses counts that overlap its samples") {
  cuda::std::span<const float> samples(fake_pointer<float>(), 1000);
  cuda::std::span<std::uint32_t> inside(fake_pointer<std::uint32_t>() + 500, 16);
  CHECK_THROWS_WITH(foundry::histogram_even(samples, inside, 0.0f, 1.0f, unused_stream()),
                    Contains("histogram_even samples and counts overlap"));
  CHECK_THROWS_WITH(foundry::naive::histogram_even(samples, inside, 0.0f, 1.0f, unused_stream()),
                    Contains("naive::histogram_even samples and counts overlap"));
}

TEST_CASE("reduce refuses a caller's workspace that overlaps an input or the output", "[gpu]") {
  foundry::stream s;
  constexpr std::size_t n = std::size_t{1} << 22;  // many blocks: the workspace is used
  const std::size_t bytes = foundry::reduce_workspace_bytes<float>(n);
  REQUIRE(bytes > 0);
  foundry::device_buffer<float> x(n + bytes / sizeof(float) + 64, s, 1.0f);
  foundry::device_buffer<float> out(1, s, -1.0f);
  const cuda::std::span<const float> in(x.data(), n);
  const auto bytes_at = [&](float* p) { return cuda::std::span<std::byte>(reinterpret_cast<std::byte*>(p), bytes); };
  // The input's last elements as the workspace's first bytes.
  CHECK_THROWS_WITH(foundry::reduce(in, out.span(), 0.0f, cuda::std::plus<float>{}, bytes_at(x.data() + n - 4), s),
                    Contains("transform_reduce workspace and input overlap"));
  // The output inside the workspace.
  foundry::device_buffer<float> spare(bytes / sizeof(float) + 64, s, 0.0f);
  CHECK_THROWS_WITH(foundry::reduce(in, cuda::std::span<float>(spare.data() + 8, 1), 0.0f, cuda::std::plus<float>{},
                                    bytes_at(spare.data()), s),
                    Contains("transform_reduce workspace and output overlap"));
  // Right after the input: allowed, and the sum is right.
  foundry::reduce(in, out.span(), 0.0f, cuda::std::plus<float>{}, bytes_at(x.data() + n), s);
  CHECK(foundry::test::to_host(out, s)[0] == static_cast<float>(n));
}

TEST_CASE("fill refuses host memory where the device cannot reach pageable memory", "[gpu]") {
  foundry::stream s;
  std::vector<float> host(100, -1.0f);
  cuda::std::span<float> target(host.data(), host.size());
  if (pageable_access()) {
    foundry::fill(target, 2.0f, s);
    s.synchronize();
    for (const float v : host) CHECK(v == 2.0f);
  } else {
    CHECK_THROWS_WITH(foundry::fill(target, 2.0f, s), Contains("fill destination") && Contains("host memory"));
    for (const float v : host) CHECK(v == -1.0f);
  }
}
