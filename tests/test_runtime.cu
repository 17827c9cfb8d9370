// Devices, streams, events, launches, and the behaviour without a GPU.
#include <catch2/catch.hpp>

#include <foundry/foundry.cuh>
#include <support/test_support.cuh>

#include <cstdint>
#include <vector>

using Catch::Matchers::Contains;

namespace {

// Writes a position-dependent byte everywhere, so a missed or doubled index shows.
__global__ void write_pattern(std::uint8_t* out, std::uint64_t n) {
  for (auto i : foundry::grid_stride_range(n)) out[i] = static_cast<std::uint8_t>((i * 7 + 3) & 0xFF);
}

__global__ void count_calls(unsigned* counter) { atomicAdd(counter, 1u); }

std::vector<std::uint8_t> pattern_round_trip(std::uint64_t n, const foundry::launch_config& config,
                                             foundry::stream& s) {
  auto out = foundry::test::poisoned_device_buffer<std::uint8_t>(n, s);
  foundry::launch(s, config, write_pattern, out.data(), n);
  return foundry::test::to_host(out, s);
}

bool matches_pattern(const std::vector<std::uint8_t>& v) {
  for (std::uint64_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<std::uint8_t>((i * 7 + 3) & 0xFF)) return false;
  return true;
}

}  // namespace

// Run by ctest with CUDA_VISIBLE_DEVICES="" (hidden tag), so it holds on any machine.
TEST_CASE("without a device every call throws cuda_error and nothing crashes", "[.][no_gpu]") {
  CHECK_FALSE(foundry::has_device());
  CHECK_THROWS_AS(foundry::device_count(), foundry::cuda_error);
  try {
    foundry::stream s;
    FAIL("a stream was created without a device");
  } catch (const foundry::cuda_error& e) {
    CHECK(e.code() != cudaSuccess);
    CHECK_THAT(e.what(), Contains("cudaStreamCreateWithPriority"));
  }
  CHECK_THROWS_AS(foundry::get_device_properties(), foundry::cuda_error);
  CHECK_THROWS_AS(foundry::device_buffer<float>(16, cuda::stream_ref{cudaStreamPerThread}), foundry::cuda_error);
  CHECK_THROWS_AS(foundry::pinned_buffer<float>(16), foundry::cuda_error);
  CHECK_THROWS_AS(foundry::event{}, foundry::cuda_error);
}

TEST_CASE("device properties are read and cached", "[gpu]") {
  const auto& p = foundry::get_device_properties();
  CHECK(&p == &foundry::get_device_properties(foundry::current_device()));
  CHECK(p.sm_count > 0);
  CHECK(p.warp_size == 32);
  CHECK(p.l2_cache_bytes > 0);
  CHECK(p.max_threads_per_block >= 1024);
  CHECK(p.shared_memory_per_block_optin >= p.shared_memory_per_block);
  CHECK(p.sm_clock_khz > 0);
  CHECK(p.theoretical_bandwidth_bytes_per_second() > 1e11);
  CHECK_THROWS_AS(foundry::get_device_properties(foundry::device_count()), std::invalid_argument);
}

TEST_CASE("device_guard restores the previous device", "[gpu]") {
  if (foundry::device_count() < 2) WARN("one device: the guard switches to the device already current");
  const int before = foundry::current_device();
  {
    foundry::device_guard guard(foundry::device_count() - 1);
    CHECK(foundry::current_device() == foundry::device_count() - 1);
  }
  CHECK(foundry::current_device() == before);
}

TEST_CASE("streams are move-only owners with a priority", "[gpu]") {
  int least = 0, greatest = 0;
  FOUNDRY_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  foundry::stream high(foundry::stream_flags::non_blocking, greatest);
  CHECK(high.priority() == greatest);
  const cudaStream_t handle = high.get();
  foundry::stream moved(std::move(high));
  CHECK(moved.get() == handle);
  CHECK(high.get() == nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  cuda::stream_ref view = moved;
  CHECK(view.get() == handle);
  moved.synchronize();
}

TEST_CASE("an event times a kernel of known minimum length", "[gpu]") {
  foundry::stream s;
  const auto& p = foundry::get_device_properties();
  // clock64 counts SM cycles; at most sm_clock_khz cycles pass per millisecond,
  // so this kernel lasts at least 2 ms whatever the clock.
  const long long cycles = 2LL * p.sm_clock_khz;
  foundry::gpu_timer timer(s);
  timer.start();
  foundry::test::enqueue_spin_cycles(s, cycles);
  timer.stop();
  const float ms = timer.elapsed_ms();
  CHECK(ms >= 1.9f);
  CHECK(ms < 1000.0f);

  foundry::event start, stop;
  start.record(s);
  foundry::test::enqueue_spin_cycles(s, cycles);
  stop.record(s);
  CHECK(foundry::elapsed_ms(start, stop) >= 1.9f);
  CHECK(stop.ready());
}

TEST_CASE("an event orders work across streams", "[gpu]") {
  foundry::stream producer, consumer;
  auto counter = foundry::device_buffer<unsigned>(1, producer, 0u);
  foundry::event produced(foundry::event_timing::disabled);
  foundry::launch(producer, foundry::make_launch_config_1d(64, 64), count_calls, counter.data());
  produced.record(producer);
  produced.make_wait(consumer);
  foundry::launch(consumer, foundry::make_launch_config_1d(64, 64), count_calls, counter.data());
  counter.set_stream(consumer);
  unsigned host = 0;
  counter.copy_to_host(cuda::std::span<unsigned>(&host, 1), consumer);
  consumer.synchronize();
  CHECK(host == 128u);
}

TEST_CASE("launching an empty grid enqueues nothing and raises no error", "[gpu]") {
  foundry::stream s;
  auto counter = foundry::device_buffer<unsigned>(1, s, 0u);
  foundry::launch(s, foundry::make_launch_config_1d(0), count_calls, counter.data());
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(foundry::test::to_host(counter, s).at(0) == 0u);
}

TEST_CASE("grid-stride launches cover every element exactly once", "[gpu]") {
  foundry::stream s;
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{31}, std::uint64_t{33}, std::uint64_t{1025}}) {
    CAPTURE(n);
    CHECK(matches_pattern(pattern_round_trip(n, foundry::make_launch_config_1d(n, 32), s)));
  }
}

TEST_CASE("a grid-stride launch covers 2^31 + 5 elements, past the int range", "[gpu][large]") {
  foundry::stream s;
  const std::uint64_t n = (std::uint64_t{1} << 31) + 5;
  // A resident-sized grid: each thread loops many times, and indices pass 2^31.
  const auto config = foundry::make_launch_config_1d(n, 256, foundry::resident_grid_blocks(4));
  CHECK(matches_pattern(pattern_round_trip(n, config, s)));
}

TEST_CASE("the occupancy builder sizes a launchable configuration", "[gpu]") {
  foundry::stream s;
  const std::uint64_t n = 1 << 20;
  const auto config = foundry::make_occupancy_launch_config(write_pattern, n);
  CHECK(config.block_threads() % 32 == 0);
  CHECK(config.grid.x >= 1);
  CHECK(config.grid.x <= foundry::resident_grid_blocks(64));
  CHECK(matches_pattern(pattern_round_trip(n, config, s)));
}

TEST_CASE("launch rejects configurations the device cannot run", "[gpu]") {
  foundry::stream s;
  auto out = foundry::device_buffer<std::uint8_t>(64, s);
  auto config = foundry::make_launch_config_1d(64, 48);
  CHECK_THROWS_WITH(foundry::launch(s, config, write_pattern, out.data(), std::uint64_t{64}),
                    Contains("not a multiple of the warp size"));
  config.block = dim3(2048);
  CHECK_THROWS_AS(foundry::launch(s, config, write_pattern, out.data(), std::uint64_t{64}), std::invalid_argument);
  config.block = dim3(64);
  config.dynamic_shared_bytes = std::size_t{1} << 30;
  CHECK_THROWS_WITH(foundry::launch(s, config, write_pattern, out.data(), std::uint64_t{64}),
                    Contains("opt-in maximum"));
}
