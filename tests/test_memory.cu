// device_buffer, pinned_buffer, managed_buffer, and the typed copy and fill helpers.
#include <catch2/catch.hpp>

#include <foundry/foundry.cuh>
#include <support/test_support.cuh>

#include <cstdint>
#include <vector>

using Catch::Matchers::Contains;

namespace {

__global__ void increment(int* x, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) x[i] += 1;
}

// Bytes the default stream-ordered pool has handed out, and the device's free memory
// after the pool returned what it keeps.
struct memory_snapshot {
  std::uint64_t pool_used = 0;
  std::size_t device_free = 0;
};

memory_snapshot snapshot() {
  FOUNDRY_CUDA_TRY(cudaDeviceSynchronize());
  cudaMemPool_t pool;
  FOUNDRY_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, foundry::current_device()));
  FOUNDRY_CUDA_TRY(cudaMemPoolTrimTo(pool, 0));
  memory_snapshot m;
  FOUNDRY_CUDA_TRY(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &m.pool_used));
  std::size_t total = 0;
  FOUNDRY_CUDA_TRY(cudaMemGetInfo(&m.device_free, &total));
  return m;
}

}  // namespace

// Not under compute-sanitizer: the sanitizer's own device allocations move the free-memory figure.
TEST_CASE("device_buffer allocates, deep-copies, moves and frees without a leak", "[gpu][not_under_sanitizer]") {
  const auto before = snapshot();
  {
    foundry::stream s;
    const auto host = foundry::test::random_vector<float>((1u << 26) + 3, -1.0f, 1.0f);
    auto a = foundry::test::to_device(host, s);
    REQUIRE(a.size() == host.size());
    CHECK(a.size_bytes() == host.size() * sizeof(float));
    foundry::device_buffer<float> b(a, s);  // deep copy
    CHECK(b.data() != a.data());
    const float* a_data = a.data();
    foundry::device_buffer<float> c(std::move(a));
    CHECK(c.data() == a_data);
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    CHECK(a.data() == nullptr);
    CHECK(foundry::test::to_host(b, s) == host);
    CHECK(foundry::test::to_host(c, s) == host);
    c = std::move(b);  // move assignment frees c's old memory
    CHECK(foundry::test::to_host(c, s) == host);
    s.synchronize();
  }
  const auto after = snapshot();
  CHECK(after.pool_used == before.pool_used);
  // Free memory returns to its value; 2 MiB of slack for the driver's own bookkeeping.
  // (Device-wide: holds when no other process allocates meanwhile, as under a serial ctest.)
  const auto diff = after.device_free > before.device_free ? after.device_free - before.device_free
                                                           : before.device_free - after.device_free;
  CHECK(diff <= (std::size_t{2} << 20));
}

TEST_CASE("an empty device_buffer allocates nothing and copies nothing", "[gpu]") {
  foundry::stream s;
  foundry::device_buffer<double> empty(0, s);
  CHECK(empty.data() == nullptr);
  CHECK(empty.empty());
  std::vector<double> host;
  empty.copy_from_host(cuda::std::span<const double>(host.data(), 0), s);
  foundry::device_buffer<double> copy(empty, s);
  CHECK(copy.empty());
  s.synchronize();
}

TEST_CASE("device_buffer can be filled at construction", "[gpu]") {
  foundry::stream s;
  for (std::size_t n : foundry::test::odd_sizes()) {
    CAPTURE(n);
    foundry::device_buffer<std::int64_t> d(n, s, std::int64_t{-7});
    CHECK(foundry::test::to_host(d, s) == std::vector<std::int64_t>(n, -7));
  }
}

// Tagged so that compute-sanitizer runs skip it: the failed cudaMallocAsync is the point, not an error.
TEST_CASE("an impossible allocation throws cuda_error naming the bytes requested", "[gpu][not_under_sanitizer]") {
  foundry::stream s;
  const std::size_t ten_tb = std::size_t{10} << 40;
  try {
    foundry::device_buffer<std::uint8_t> huge(ten_tb, s);
    FAIL("10 TB were allocated");
  } catch (const foundry::cuda_error& e) {
    CHECK(e.code() == cudaErrorMemoryAllocation);
    CHECK_THAT(e.what(), Contains(std::to_string(ten_tb) + " bytes"));
  }
  // The failure is not sticky: the stream still works.
  foundry::device_buffer<int> ok(16, s, 1);
  CHECK(foundry::test::to_host(ok, s) == std::vector<int>(16, 1));
}

TEST_CASE("pinned buffers round-trip through the device asynchronously", "[gpu]") {
  foundry::stream s;
  const auto host = foundry::test::random_vector<std::int32_t>(100'003, -1000, 1000);
  foundry::pinned_buffer<std::int32_t> in(host.size()), out(host.size());
  std::copy(host.begin(), host.end(), in.begin());
  std::fill(out.begin(), out.end(), foundry::test::poison_value<std::int32_t>());
  foundry::device_buffer<std::int32_t> d(host.size(), s);
  foundry::copy(d.span(), in.span(), s);
  foundry::copy(out.span(), d.span(), s);
  s.synchronize();
  CHECK(std::equal(out.begin(), out.end(), host.begin()));
  foundry::pinned_buffer<std::int32_t> moved(std::move(out));
  CHECK(moved.size() == host.size());
}

TEST_CASE("copies between spans of different sizes are rejected", "[gpu]") {
  foundry::stream s;
  foundry::device_buffer<float> a(10, s), b(11, s);
  CHECK_THROWS_WITH(foundry::copy(a.span(), b.span(), s),
                    Contains("different sizes") && Contains("10") && Contains("11"));
  std::vector<float> host(9);
  CHECK_THROWS_AS(a.copy_to_host(cuda::std::span<float>(host.data(), host.size()), s), std::invalid_argument);
}

TEST_CASE("managed buffers prefetch to the device and back", "[gpu]") {
  foundry::stream s;
  const std::size_t n = (1u << 20) + 7;
  foundry::managed_buffer<int> m(n);
  for (std::size_t i = 0; i < n; ++i) m[i] = static_cast<int>(i);
  m.advise(foundry::memory_advice::preferred_location, foundry::current_device());
  m.prefetch_to_device(foundry::current_device(), s);
  foundry::launch(s, foundry::make_launch_config_1d(n), increment, m.data(), n);
  m.prefetch_to_host(s);
  s.synchronize();
  bool all = true;
  for (std::size_t i = 0; i < n; ++i) all = all && m[i] == static_cast<int>(i) + 1;
  CHECK(all);
  m.advise(foundry::memory_advice::read_mostly, foundry::current_device());
  m.advise(foundry::memory_advice::unset_read_mostly, foundry::current_device());
  m.advise(foundry::memory_advice::accessed_by, foundry::host_location{});
}

TEST_CASE("managed buffers refuse a device ordinal that names no visible device", "[gpu]") {
  foundry::stream s;
  foundry::managed_buffer<int> m(1000);
  // -1 is the host on CUDA 12 (cudaCpuDeviceId) and an error on CUDA 13: refused on both.
  CHECK_THROWS_WITH(m.prefetch_to_device(-1, s), Contains("device -1 is not a visible device"));
  CHECK_THROWS_AS(m.prefetch_to_device(foundry::device_count(), s), std::invalid_argument);
  CHECK_THROWS_AS(m.advise(foundry::memory_advice::preferred_location, -1), std::invalid_argument);
  CHECK_THROWS_AS(m.advise(foundry::memory_advice::read_mostly, foundry::device_count()), std::invalid_argument);
  CHECK(cudaPeekAtLastError() == cudaSuccess);  // refused before any CUDA call that could fail
}
