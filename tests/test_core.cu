// Host-only tests of foundry's core: error formatting, preconditions, index
// arithmetic and launch-configuration sizing and validation. No GPU needed.
#include <catch2/catch.hpp>

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_bounds.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/detail.cuh>
#include <foundry/memory/device_buffer.cuh>

#include <cstdint>
#include <limits>
#include <string>

using Catch::Matchers::Contains;

namespace {
__global__ void do_nothing(int) {}

// An H200-like device, so validation messages are tested without a GPU.
foundry::device_properties h200_like() {
  foundry::device_properties p;
  p.sm_count = 132;
  p.max_threads_per_block = 1024;
  p.max_block_x = 1024;
  p.max_block_y = 1024;
  p.max_block_z = 64;
  p.max_grid_x = 2147483647;
  p.max_grid_y = 65535;
  p.max_grid_z = 65535;
  p.shared_memory_per_block = 48 * 1024;
  p.shared_memory_per_block_optin = 227 * 1024;
  return p;
}
}  // namespace

TEST_CASE("cuda_error carries the code, the expression, the file and the line", "[core]") {
  const foundry::cuda_error e(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "some_file.cu", 42, "allocating 8 bytes");
  CHECK(e.code() == cudaErrorMemoryAllocation);
  CHECK(std::string(e.name()) == "cudaErrorMemoryAllocation");
  CHECK_THAT(e.what(), Contains("some_file.cu:42") && Contains("cudaMalloc(&p, n)") &&
                           Contains("cudaErrorMemoryAllocation") && Contains("out of memory") &&
                           Contains("allocating 8 bytes"));
}

TEST_CASE("FOUNDRY_CUDA_TRY throws cuda_error on failure and nothing on success", "[core]") {
  CHECK_NOTHROW(FOUNDRY_CUDA_TRY(cudaSuccess));
  try {
    FOUNDRY_CUDA_TRY(cudaErrorInvalidValue);
    FAIL("no exception");
  } catch (const foundry::cuda_error& e) {
    CHECK(e.code() == cudaErrorInvalidValue);
    CHECK_THAT(e.what(), Contains("test_core.cu") && Contains("cudaErrorInvalidValue"));
  }
}

TEST_CASE("FOUNDRY_EXPECTS throws invalid_argument with the reason, file and line", "[core]") {
  const int n = -1;
  try {
    FOUNDRY_EXPECTS(n >= 0, "n must not be negative");
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(), Contains("n must not be negative") && Contains("test_core.cu:") && Contains("n >= 0"));
  }
}

TEST_CASE("a byte count that overflows size_t is rejected", "[core]") {
  const auto huge = std::numeric_limits<std::size_t>::max() / 4;
  CHECK(foundry::detail::checked_bytes<float>(huge) == huge * 4);
  CHECK_THROWS_AS(foundry::detail::checked_bytes<double>(huge), std::invalid_argument);
}

TEST_CASE("ceil_div does not overflow near the top of the range", "[core]") {
  STATIC_REQUIRE(foundry::ceil_div(0u, 256u) == 0u);
  STATIC_REQUIRE(foundry::ceil_div(1u, 256u) == 1u);
  STATIC_REQUIRE(foundry::ceil_div(256u, 256u) == 1u);
  STATIC_REQUIRE(foundry::ceil_div(257u, 256u) == 2u);
  constexpr auto max64 = std::numeric_limits<std::uint64_t>::max();
  STATIC_REQUIRE(foundry::ceil_div<std::uint64_t>(max64, 2) == (max64 / 2) + 1);
  STATIC_REQUIRE(foundry::ceil_div<std::uint64_t>(std::uint64_t{1} << 63, 256) == (std::uint64_t{1} << 55));
  STATIC_REQUIRE(foundry::round_up<std::uint64_t>(33, 32) == 64);
}

TEST_CASE("1D configurations cover n with capped grids", "[core][launch]") {
  using foundry::make_launch_config_1d;
  CHECK(make_launch_config_1d(0).empty());
  CHECK(make_launch_config_1d(1, 256).grid.x == 1);
  CHECK(make_launch_config_1d(31, 256).grid.x == 1);
  CHECK(make_launch_config_1d(33, 32).grid.x == 2);
  CHECK(make_launch_config_1d((std::uint64_t{1} << 31) + 5, 256).grid.x == (1u << 23) + 1);
  // Past what one grid can hold: capped, and the kernel's grid-stride loop covers the rest.
  CHECK(make_launch_config_1d(std::uint64_t{1} << 63, 256).grid.x == foundry::max_grid_x);
  CHECK(make_launch_config_1d(1'000'000, 256, 528).grid.x == 528);
  STATIC_REQUIRE(make_launch_config_1d(1000, 128).block_threads() == 128);
}

TEST_CASE("launch bounds keep a tuned residency where it fits and cap it where it does not", "[core][launch]") {
  // The host pass reads the bound as sm_80 and sm_90 do: 2048 threads an SM.
  STATIC_REQUIRE(foundry::max_threads_per_sm_of_target() == 2048);
  STATIC_REQUIRE(foundry::max_blocks_per_sm_of_target() == 32);
  CHECK(foundry::resident_blocks_bound(256, 5) == 5);
  CHECK(foundry::resident_blocks_bound(256, 8) == 8);
  CHECK(foundry::resident_blocks_bound(256, 9) == 8);  // 2304 threads: capped
  CHECK(foundry::resident_blocks_bound(1024, 4) == 2);
  CHECK(foundry::resident_blocks_bound(1024, 0) == 1);  // at least one block
  CHECK(foundry::resident_blocks_bound(0, 3) == 3);     // no threads: nothing to cap by
  CHECK(foundry::resident_blocks_bound(32, 40) == 32);  // 1280 threads fit, 40 blocks do not
}

TEST_CASE("2D and 3D configurations cover every dimension", "[core][launch]") {
  const auto c2 = foundry::make_launch_config_2d(1000, 33, 32, 8);
  CHECK(c2.grid.x == 32);
  CHECK(c2.grid.y == 5);
  CHECK(foundry::make_launch_config_2d(0, 100).empty());
  CHECK(foundry::make_launch_config_2d(100, 0).empty());
  CHECK(foundry::make_launch_config_2d(1, 1 << 30).grid.y == foundry::max_grid_yz);  // capped: grid-stride in y
  const auto c3 = foundry::make_launch_config_3d(65, 9, 3, 32, 4, 2);
  CHECK(c3.grid.x == 3);
  CHECK(c3.grid.y == 3);
  CHECK(c3.grid.z == 2);
  CHECK(c3.block_threads() == 256);
  CHECK(foundry::make_launch_config_3d(1, 1, 0).empty());
}

TEST_CASE("launch configurations the device cannot run are rejected with the reason", "[core][launch]") {
  const auto device = h200_like();
  auto config = foundry::make_launch_config_1d(1000, 256);
  CHECK(foundry::launch_config_problem(config, device).empty());
  CHECK_NOTHROW(foundry::validate(config, device));

  config.block = dim3(48);
  CHECK_THAT(foundry::launch_config_problem(config, device), Contains("not a multiple of the warp size"));
  config.block = dim3(2048);
  CHECK_THAT(foundry::launch_config_problem(config, device), Contains("exceeds the device maximum of 1024"));
  config.block = dim3(8, 1, 128);  // 1024 threads, but z is limited to 64
  CHECK_THAT(foundry::launch_config_problem(config, device), Contains("block dimension exceeds"));
  config.block = dim3(0);
  CHECK_THAT(foundry::launch_config_problem(config, device), Contains("zero threads"));
  config.block = dim3(256);
  config.grid = dim3(1, 70000);
  CHECK_THAT(foundry::launch_config_problem(config, device), Contains("grid dimension exceeds"));
  config.grid = dim3(1);
  config.dynamic_shared_bytes = 228 * 1024;
  CHECK_THAT(foundry::launch_config_problem(config, device), Contains("exceeds the device's opt-in maximum"));
  try {
    foundry::validate(config, device);
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(), Contains("invalid launch configuration") && Contains("launch_config.cuh"));
  }
}

// These preconditions are checked before any CUDA call, so they hold without a GPU.
TEST_CASE("work is never enqueued on the null (legacy default) stream by accident", "[core]") {
  const cuda::stream_ref null_stream{};
  CHECK_THROWS_WITH(foundry::launch(null_stream, foundry::make_launch_config_1d(64), do_nothing, 0),
                    Contains("legacy default stream"));
  CHECK_THROWS_AS(foundry::device_buffer<float>(16, null_stream), std::invalid_argument);
  float a = 0.0f, b = 0.0f;
  CHECK_THROWS_AS(foundry::copy(cuda::std::span<float>(&a, 1), cuda::std::span<const float>(&b, 1), null_stream),
                  std::invalid_argument);
}

TEST_CASE("a block of zero or a partial warp of threads is rejected even when the grid is empty", "[core][launch]") {
  const cuda::stream_ref s{cudaStreamPerThread};
  CHECK_THROWS_WITH(foundry::launch(s, foundry::make_launch_config_1d(1000, 0), do_nothing, 0),
                    Contains("a block of 0 threads"));
  CHECK_THROWS_AS(foundry::launch(s, foundry::make_launch_config_1d(0, 48), do_nothing, 0), std::invalid_argument);
  CHECK_NOTHROW(foundry::launch(s, foundry::make_launch_config_1d(0, 64), do_nothing, 0));  // n = 0: nothing to do
}

TEST_CASE("fill rejects a null pointer with elements", "[core]") {
  const cuda::stream_ref s{cudaStreamPerThread};
  CHECK_THROWS_WITH(foundry::fill(cuda::std::span<float>(static_cast<float*>(nullptr), 8), 1.0f, s),
                    Contains("null pointer"));
}
