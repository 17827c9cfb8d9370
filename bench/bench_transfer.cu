// Host-device data movement, timed on the host: every row's call enqueues its work and
// synchronises, and the host's steady clock times the whole call (foundry::bench::
// measure_blocking, or measure_blocking_prepared). CUDA events on one stream would not
// see these rows whole: a pageable copy is staged through the driver's own pinned buffers
// by the host, and a round trip waits for each result.
//
//  - "h2d/{pageable,pinned}/<bytes>" and "d2h/{pageable,pinned}/<bytes>", 4 KiB to 1 GiB in
//    powers of 4: one cudaMemcpyAsync between a device_buffer and host memory, then a
//    stream synchronisation. Pageable = a std::vector (every page touched before timing);
//    pinned = foundry::pinned_buffer. The pinned rows are host-timed as well, so that the
//    two variants differ only in the host memory. GB/s counts the bytes once (as read):
//    it is the link rate.
//  - "managed_read/{no_prefetch,prefetch,device_buffer}/1073741824": one device-wide sum
//    (foundry::reduce) of 2^28 floats that the host wrote last. no_prefetch: the kernel
//    pulls managed pages over on demand, fault by fault; prefetch: prefetch_to_device
//    first, then the kernel, both timed; device_buffer: the same kernel on device memory,
//    the floor. Before every sample, untimed, the pages go back to the host and the host
//    writes all of them. GB/s counts the 1 GiB read.
//  - "round_trips/{naive,foundry}/10000": 10,000 ints, each incremented on the device.
//    naive: per value, a 4-byte copy in, a one-thread kernel, a 4-byte copy back and a
//    synchronisation; foundry: the same work batched into one copy in, one launch and one
//    copy back. Counter us_per_item: the row's time divided by 10,000.
//
// No goal: these rows are the ceilings that the pipeline rows (bench_pipeline) are read
// against. Measured on the H200: pinned H2D 55.5 GB/s and D2H 55.3 GB/s alone, 50.7 GB/s
// each way at once; pageable 6.3 GB/s. The harness's pct_of_ceiling is of the device's
// own memory (device-to-device copy), which no row here can approach.
//
// Correct before timed: each transfer row checks every word it moved against a hash of its
// index (h2d on the device, d2h on the host); managed_read checks the sum exactly (small
// integers summed in double); round_trips checks every value on the host.

#include <foundry/algorithms/reduce.cuh>
#include <foundry/algorithms/transform.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/memory/managed_buffer.cuh>
#include <foundry/memory/pinned_buffer.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/functional>
#include <cuda/std/span>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

namespace bench = foundry::bench;

constexpr std::int64_t gib = std::int64_t{1} << 30;

// ---- h2d / d2h ---------------------------------------------------------------------------

enum class direction { h2d, d2h };
enum class host_memory { pageable, pinned };

/// The word at index i of every transfer: a hash of i, so that a block of words copied to
/// the wrong place, or not copied, does not match.
struct pattern_op {
  __host__ __device__ std::uint32_t operator()(std::uint64_t i) const {
    return static_cast<std::uint32_t>(i * 2654435761u) ^ 0x5eed5eedu;
  }
};

/// `n` words of host memory of either kind behind one pointer. Pageable memory is a
/// value-initialised std::vector, so every page is touched (faulted in) before any timing.
class host_words {
 public:
  host_words(std::size_t n, host_memory kind) {
    if (kind == host_memory::pinned) {
      pinned_ = foundry::pinned_buffer<std::uint32_t>(n);
      data_ = pinned_.data();
    } else {
      pageable_.resize(n);
      data_ = pageable_.data();
    }
  }
  [[nodiscard]] std::uint32_t* data() noexcept { return data_; }

 private:
  std::vector<std::uint32_t> pageable_;
  foundry::pinned_buffer<std::uint32_t> pinned_;
  std::uint32_t* data_ = nullptr;
};

void bm_transfer(benchmark::State& state, direction dir, host_memory kind) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t n = bytes / sizeof(std::uint32_t);
  foundry::stream s;
  foundry::device_buffer<std::uint32_t> device(n, s);
  host_words host(n, kind);

  // The measured call: one copy, then wait for it (a pageable copy may return before the
  // last of it has reached the device; the synchronisation covers that too).
  const auto copy_once = [&] {
    if (dir == direction::h2d) {
      FOUNDRY_CUDA_TRY(cudaMemcpyAsync(device.data(), host.data(), bytes, cudaMemcpyHostToDevice, s.get()));
    } else {
      FOUNDRY_CUDA_TRY(cudaMemcpyAsync(host.data(), device.data(), bytes, cudaMemcpyDeviceToHost, s.get()));
    }
    s.synchronize();
  };

  // Correct before timed: every word arrives where it belongs.
  const pattern_op pattern;
  if (dir == direction::h2d) {
    for (std::size_t i = 0; i < n; ++i) host.data()[i] = pattern(i);
    foundry::fill(device.span(), 0u, s);
    copy_once();
    foundry::device_buffer<std::uint32_t> expected(n, s);
    foundry::tabulate(expected.span(), pattern, s);
    if (!bench::expect(state, bench::bitwise_equal(device.span(), expected.span(), s),
                       "the device holds other words than the host copied in"))
      return;
  } else {
    foundry::tabulate(device.span(), pattern, s);
    std::fill(host.data(), host.data() + n, 0u);
    copy_once();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += host.data()[i] != pattern(i) ? 1 : 0;
    if (!bench::expect(state, wrong == 0, std::to_string(wrong) + " words differ after the copy to the host")) return;
  }
  bench::measure_blocking(state, {static_cast<double>(bytes), 0.0, 0.0}, copy_once);
}

void transfer_sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t bytes = std::int64_t{4} << 10; bytes <= gib; bytes *= 4) b->Arg(bytes);  // 4 KiB .. 1 GiB
}

// ---- managed_read ------------------------------------------------------------------------

enum class managed_variant { no_prefetch, prefetch, device_buffer };

/// x[i] = i mod 16: small integers, so that their sum over 2^28 elements (2013265920) is
/// exact in the double accumulator whatever the order of the additions.
struct small_integer_op {
  __host__ __device__ float operator()(std::uint64_t i) const { return static_cast<float>(i & 15u); }
};

double expected_small_integer_sum(std::size_t n) {
  const std::size_t rest = n % 16;  // the last, partial cycle holds 0, 1, ..., rest - 1
  return static_cast<double>(n / 16) * 120.0 + static_cast<double>(rest == 0 ? 0 : rest * (rest - 1) / 2);
}

void bm_managed_read(benchmark::State& state, managed_variant v) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t n = bytes / sizeof(float);
  const bool managed_input = v != managed_variant::device_buffer;
  const int device = foundry::current_device();
  foundry::stream s;
  foundry::managed_buffer<float> managed(managed_input ? n : 0);
  foundry::device_buffer<float> resident(managed_input ? 0 : n, s);
  foundry::device_buffer<double> sum(1, s);
  // Caller-owned workspace: no allocation inside the timed call.
  foundry::device_buffer<std::byte> workspace(foundry::reduce_workspace_bytes<float, double>(n), s);
  if (!managed_input) foundry::tabulate(resident.span(), small_integer_op{}, s);
  const auto input = cuda::std::span<const float>(managed_input ? managed.data() : resident.data(), n);

  // Untimed, before every call: the pages come back to the host in one bulk migration (so
  // that the host's write does not fault them back one by one), then the host writes every
  // one of them, as a program that fills an array before handing it to the GPU does.
  const auto host_writes_pages = [&] {
    if (!managed_input) return;
    managed.prefetch_to_host(s);
    s.synchronize();
    const small_integer_op value;
    for (std::size_t i = 0; i < n; ++i) managed[i] = value(i);
  };
  // Timed: (prefetch, then) the reduce, and the wait for it.
  const auto read_once = [&] {
    if (v == managed_variant::prefetch) managed.prefetch_to_device(device, s);
    foundry::reduce(input, sum.span(), 0.0, cuda::std::plus<double>{}, workspace.span(), s);
    s.synchronize();
  };

  {  // Correct before timed: the exact sum.
    host_writes_pages();
    foundry::fill(sum.span(), -1.0, s);
    read_once();
    double total = 0;
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(&total, sum.data(), sizeof total, cudaMemcpyDeviceToHost, s.get()));
    s.synchronize();
    const double expected = expected_small_integer_sum(n);
    if (!bench::expect(state, total == expected,
                       "the sum is " + std::to_string(total) + ", expected " + std::to_string(expected)))
      return;
  }
  // The host's write must come before every read, and is not what these rows measure:
  // measure_blocking_prepared runs it untimed before each sample. The host clock rather
  // than CUDA events around the GPU part: the rows are then timed as the rest of this file
  // is, and a prefetch may do part of its work on the host (unmapping the pages from the
  // CPU) before it returns, which events on the stream would not see. Each sample costs a
  // bulk migration and a host write of 1 GiB besides the timed read: one Google Benchmark
  // round of 10 (->Iterations(10) below), within 20 s of wall time.
  bench::measure_blocking_prepared(state, {static_cast<double>(bytes), 0.0, static_cast<double>(n)}, host_writes_pages,
                                   read_once, bench::options{.max_samples = 10, .max_seconds = 20.0});
}

// ---- round_trips -------------------------------------------------------------------------

enum class round_trip_variant { naive, foundry };

constexpr std::int64_t round_trip_values = 10'000;

/// values[i] += 1. The naive variant launches it on one value at a time: a one-warp block
/// (foundry::launch needs whole warps) in which only thread 0 has a value.
__global__ void increment_kernel(std::int32_t* values, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) values[i] += 1;
}

void bm_round_trips(benchmark::State& state, round_trip_variant v) {
  const auto n = static_cast<std::size_t>(state.range(0));
  foundry::stream s;
  foundry::pinned_buffer<std::int32_t> in(n);
  foundry::pinned_buffer<std::int32_t> out(n);
  foundry::device_buffer<std::int32_t> values(n, s);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<std::int32_t>(i * 7) - 5000;
  const auto one_value = foundry::make_launch_config_1d(1, 32);
  const auto all_values = foundry::make_launch_config_1d(n, 256);

  // Both variants overwrite the device values with `in` before incrementing them, so every
  // call computes the same `out`.
  const auto round_trip = [&] {
    if (v == round_trip_variant::naive) {
      for (std::size_t i = 0; i < n; ++i) {
        foundry::copy(values.span().subspan(i, 1), in.span().subspan(i, 1), s);
        foundry::launch(s, one_value, increment_kernel, values.data() + i, std::size_t{1});
        foundry::copy(out.span().subspan(i, 1), values.span().subspan(i, 1), s);
        s.synchronize();
      }
    } else {
      foundry::copy(values.span(), in.span(), s);
      foundry::launch(s, all_values, increment_kernel, values.data(), n);
      foundry::copy(out.span(), values.span(), s);
      s.synchronize();
    }
  };

  // Correct before timed: every value came back incremented once.
  std::fill(out.begin(), out.end(), 0);
  round_trip();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += out[i] != in[i] + 1 ? 1 : 0;
  if (!bench::expect(state, wrong == 0, std::to_string(wrong) + " values did not come back incremented once")) return;

  const double bytes = static_cast<double>(n * sizeof(std::int32_t));
  bench::measure_blocking(state, {bytes, bytes, 0.0, static_cast<double>(n)}, round_trip);
}

}  // namespace

BENCHMARK_CAPTURE(bm_transfer, h2d_pageable, direction::h2d, host_memory::pageable)
    ->Name("h2d/pageable")
    ->Apply(bench::configure)
    ->Apply(transfer_sizes);
BENCHMARK_CAPTURE(bm_transfer, h2d_pinned, direction::h2d, host_memory::pinned)
    ->Name("h2d/pinned")
    ->Apply(bench::configure)
    ->Apply(transfer_sizes);
BENCHMARK_CAPTURE(bm_transfer, d2h_pageable, direction::d2h, host_memory::pageable)
    ->Name("d2h/pageable")
    ->Apply(bench::configure)
    ->Apply(transfer_sizes);
BENCHMARK_CAPTURE(bm_transfer, d2h_pinned, direction::d2h, host_memory::pinned)
    ->Name("d2h/pinned")
    ->Apply(bench::configure)
    ->Apply(transfer_sizes);

BENCHMARK_CAPTURE(bm_managed_read, no_prefetch, managed_variant::no_prefetch)
    ->Name("managed_read/no_prefetch")
    ->Apply(bench::configure)
    ->Arg(gib)
    ->Iterations(10);
BENCHMARK_CAPTURE(bm_managed_read, prefetch, managed_variant::prefetch)
    ->Name("managed_read/prefetch")
    ->Apply(bench::configure)
    ->Arg(gib)
    ->Iterations(10);
BENCHMARK_CAPTURE(bm_managed_read, device_buffer, managed_variant::device_buffer)
    ->Name("managed_read/device_buffer")
    ->Apply(bench::configure)
    ->Arg(gib)
    ->Iterations(10);

BENCHMARK_CAPTURE(bm_round_trips, naive, round_trip_variant::naive)
    ->Name("round_trips/naive")
    ->Apply(bench::configure)
    ->Arg(round_trip_values);
BENCHMARK_CAPTURE(bm_round_trips, foundry, round_trip_variant::foundry)
    ->Name("round_trips/foundry")
    ->Apply(bench::configure)
    ->Arg(round_trip_values);

FOUNDRY_BENCH_MAIN()
