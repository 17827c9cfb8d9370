// Prefix sums of 2^20 to 2^30 elements: foundry's single-pass scan, the naive
// scan-then-propagate twin and cub::DeviceScan (temporary storage allocated once,
// outside the timing, as CUB users do; foundry's call allocates its own, as written).
// Rows "scan_inclusive_sum_f32/<variant>/<n>" and "scan_exclusive_sum_i32/<variant>/<n>";
// variant foundry is the default policy (the blocked tile arrangement), variant
// foundry_striped the striped arrangement (foundry::scan_striped_policy), at every size.
// Goal: foundry >= 1.0x CUB from 2^24 up; stretch: 0.9x cudaMemcpy at 2^28 (a scan
// reads and writes n elements, as a copy does). GB/s counts n read + n written.
//
// The floats hold random integers in [-8, 8]: every partial sum stays far below 2^24
// in magnitude, so every order of summation gives the same, exact prefixes, and each
// variant's output is compared with CUB's bit for bit on the device.

#include <foundry/algorithms/scan.cuh>
#include <foundry/algorithms/transform.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/naive/scan.cuh>
#include <foundry/runtime/stream.cuh>

#include <cub/device/device_scan.cuh>

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

namespace bench = foundry::bench;

enum class variant { naive, foundry, cub };
enum class kind { inclusive, exclusive };

struct int_to_float {
  __device__ float operator()(std::int32_t v) const { return static_cast<float>(v); }
};

template <class T>
__global__ void count_mismatches(const T* a, const T* b, std::size_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (auto i : foundry::grid_stride_range(n)) local += a[i] != b[i] ? 1 : 0;
  if (local != 0) atomicAdd(count, local);
}

template <class T>
void cub_scan(kind k, void* temp, std::size_t& bytes, const T* in, T* out, std::size_t n, cudaStream_t s) {
  if (k == kind::inclusive) {
    FOUNDRY_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp, bytes, in, out, n, s));
  } else {
    FOUNDRY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(temp, bytes, in, out, n, s));
  }
}

/// A striped policy beside scan_striped_policy.
template <int Threads, int Vectors, int TilesPerLane, unsigned PollNs, unsigned FirstNs, bool BlockOrder = false>
struct scan_candidate : foundry::scan_striped_policy {
  static constexpr bool tiles_in_block_order = BlockOrder;
  static constexpr int block_threads = Threads;
  static constexpr int vectors_in_flight = Vectors;
  static constexpr int look_back_tiles_per_lane = TilesPerLane;
  static constexpr unsigned poll_delay_ns = PollNs;
  static constexpr unsigned first_look_delay_ns = FirstNs;
};

/// A blocked-arrangement policy beside the default, so that scan_policy rests on measured figures.
template <int Threads, int Vectors, unsigned PollNs, unsigned FirstNs, bool BlockOrder = false>
struct scan_blocked_candidate : foundry::scan_blocked_policy {
  static constexpr bool tiles_in_block_order = BlockOrder;
  static constexpr int block_threads = Threads;
  static constexpr int vectors_in_flight = Vectors;
  static constexpr unsigned poll_delay_ns = PollNs;
  static constexpr unsigned first_look_delay_ns = FirstNs;
};

template <class T, class Policy = foundry::scan_policy>
void bm_scan(benchmark::State& state, kind k, variant v) {
  const auto n = static_cast<std::size_t>(state.range(0));
  foundry::stream s;
  foundry::device_buffer<T> in(n, s);
  {
    foundry::device_buffer<std::int32_t> ints(n, s);
    bench::fill_uniform(ints.span(), -8.0, 8.0, bench::default_seed, s);
    if constexpr (std::is_same_v<T, float>) {
      foundry::transform(ints.span(), in.span(), int_to_float{}, s);
    } else {
      foundry::device_copy(in.span(), cuda::std::span<const std::int32_t>(ints.data(), n), s);
    }
  }
  foundry::device_buffer<T> out(n, s);
  const auto x = cuda::std::span<const T>(in.data(), n);

  std::size_t cub_bytes = 0;
  cub_scan<T>(k, nullptr, cub_bytes, in.data(), out.data(), n, s.get());
  foundry::device_buffer<std::byte> cub_temp(cub_bytes, s);

  auto enqueue = [&](cuda::stream_ref st) {
    switch (v) {
      case variant::naive:
        if (k == kind::inclusive) {
          foundry::naive::inclusive_scan(x, out.span(), cuda::std::plus<T>{}, st);
        } else {
          foundry::naive::exclusive_scan(x, out.span(), T{0}, cuda::std::plus<T>{}, st);
        }
        break;
      case variant::foundry:
        if (k == kind::inclusive) {
          foundry::inclusive_sum<Policy>(x, out.span(), st);
        } else {
          foundry::exclusive_sum<Policy>(x, out.span(), st);
        }
        break;
      case variant::cub: {
        std::size_t bytes = cub_bytes;
        cub_scan<T>(k, cub_temp.data(), bytes, in.data(), out.data(), n, st.get());
        break;
      }
    }
  };

  {  // Correct before timed: the variant's output equals CUB's, element by element.
    foundry::device_buffer<T> reference(n, s);
    std::size_t bytes = cub_bytes;
    cub_scan<T>(k, cub_temp.data(), bytes, in.data(), reference.data(), n, s.get());
    foundry::fill(out.span(), T{-1}, s);
    enqueue(s);
    foundry::device_buffer<unsigned long long> count(1, s, 0ull);
    foundry::launch(s, foundry::make_launch_config_1d(n, 256, foundry::resident_grid_blocks(8)), count_mismatches<T>,
                    static_cast<const T*>(out.data()), static_cast<const T*>(reference.data()), n, count.data());
    unsigned long long wrong = 1;
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(&wrong, count.data(), sizeof wrong, cudaMemcpyDeviceToHost, s.get()));
    s.synchronize();
    if (!bench::expect(state, wrong == 0, std::to_string(wrong) + " prefixes differ from CUB's")) return;
  }
  const double bytes = static_cast<double>(n) * sizeof(T);
  bench::measure(state, s, {bytes, bytes, static_cast<double>(n)}, enqueue);
}

void scan_sizes(benchmark::internal::Benchmark* b) {
  for (const int log2n : {20, 24, 26, 28, 30}) b->Arg(std::int64_t{1} << log2n);
}

void bm_inclusive_f32(benchmark::State& state, variant v) { bm_scan<float>(state, kind::inclusive, v); }
void bm_exclusive_i32(benchmark::State& state, variant v) { bm_scan<std::int32_t>(state, kind::exclusive, v); }
void bm_inclusive_f32_striped(benchmark::State& state) {
  bm_scan<float, foundry::scan_striped_policy>(state, kind::inclusive, variant::foundry);
}
void bm_exclusive_i32_striped(benchmark::State& state) {
  bm_scan<std::int32_t, foundry::scan_striped_policy>(state, kind::exclusive, variant::foundry);
}
template <int Threads, int Vectors, int TilesPerLane, unsigned PollNs, unsigned FirstNs, bool BlockOrder>
void bm_inclusive_f32_candidate(benchmark::State& state) {
  bm_scan<float, scan_candidate<Threads, Vectors, TilesPerLane, PollNs, FirstNs, BlockOrder>>(state, kind::inclusive,
                                                                                              variant::foundry);
}
template <int Threads, int Vectors, unsigned PollNs, unsigned FirstNs, bool BlockOrder>
void bm_inclusive_f32_blocked_candidate(benchmark::State& state) {
  bm_scan<float, scan_blocked_candidate<Threads, Vectors, PollNs, FirstNs, BlockOrder>>(state, kind::inclusive,
                                                                                        variant::foundry);
}

}  // namespace

BENCHMARK_CAPTURE(bm_inclusive_f32, naive, variant::naive)
    ->Name("scan_inclusive_sum_f32/naive")
    ->Apply(bench::configure)
    ->Apply(scan_sizes);
BENCHMARK_CAPTURE(bm_inclusive_f32, foundry, variant::foundry)
    ->Name("scan_inclusive_sum_f32/foundry")
    ->Apply(bench::configure)
    ->Apply(scan_sizes);
FOUNDRY_BENCHMARK(bm_inclusive_f32_striped)->Name("scan_inclusive_sum_f32/foundry_striped")->Apply(scan_sizes);
BENCHMARK_CAPTURE(bm_inclusive_f32, cub, variant::cub)
    ->Name("scan_inclusive_sum_f32/cub")
    ->Apply(bench::configure)
    ->Apply(scan_sizes);
BENCHMARK_CAPTURE(bm_exclusive_i32, naive, variant::naive)
    ->Name("scan_exclusive_sum_i32/naive")
    ->Apply(bench::configure)
    ->Apply(scan_sizes);
BENCHMARK_CAPTURE(bm_exclusive_i32, foundry, variant::foundry)
    ->Name("scan_exclusive_sum_i32/foundry")
    ->Apply(bench::configure)
    ->Apply(scan_sizes);
FOUNDRY_BENCHMARK(bm_exclusive_i32_striped)->Name("scan_exclusive_sum_i32/foundry_striped")->Apply(scan_sizes);
BENCHMARK_CAPTURE(bm_exclusive_i32, cub, variant::cub)
    ->Name("scan_exclusive_sum_i32/cub")
    ->Apply(bench::configure)
    ->Apply(scan_sizes);

#if FOUNDRY_BENCH_TUNING  // built where the benchmarks run (CMakeLists.txt), not in CI
// Candidates: threads, vectors per thread, look-back tiles per lane, poll delay and
// first-look delay (ns), tiles in block order (b) or from the atomic counter (a).
#define FOUNDRY_SCAN_CANDIDATE(t, v, k, p, f, o) \
  FOUNDRY_BENCHMARK(bm_inclusive_f32_candidate<t, v, k, p, f, o>) \
      ->Name("scan_inclusive_sum_f32/foundry_t" #t "v" #v "k" #k "p" #p "f" #f "_" #o) \
      ->Arg(1 << 24) \
      ->Arg(1 << 28)
FOUNDRY_SCAN_CANDIDATE(256, 4, 1, 0, 0, false);
FOUNDRY_SCAN_CANDIDATE(256, 8, 1, 500, 1000, false);
FOUNDRY_SCAN_CANDIDATE(256, 4, 4, 500, 1000, false);
FOUNDRY_SCAN_CANDIDATE(256, 4, 1, 500, 1000, true);

// Blocked candidates: threads, vectors per thread, poll and first-look delays (ns), tiles
// in block order. Around the default (t128 v16 p688 f1140, block order): CUB's shape
// (v6), v8, its neighbours (v12, v20), the atomic tile counter (false), 8 warps a tile (t256).
#define FOUNDRY_SCAN_BLOCKED_CANDIDATE(t, v, p, f, o) \
  FOUNDRY_BENCHMARK(bm_inclusive_f32_blocked_candidate<t, v, p, f, o>) \
      ->Name("scan_inclusive_sum_f32/foundry_blocked_t" #t "v" #v "p" #p "f" #f "_" #o) \
      ->Arg(1 << 24) \
      ->Arg(1 << 28)
FOUNDRY_SCAN_BLOCKED_CANDIDATE(128, 6, 688, 1140, true);
FOUNDRY_SCAN_BLOCKED_CANDIDATE(128, 8, 688, 1140, true);
FOUNDRY_SCAN_BLOCKED_CANDIDATE(128, 12, 688, 1140, true);
FOUNDRY_SCAN_BLOCKED_CANDIDATE(128, 20, 688, 1140, true);
FOUNDRY_SCAN_BLOCKED_CANDIDATE(128, 16, 688, 1140, false);
FOUNDRY_SCAN_BLOCKED_CANDIDATE(256, 6, 688, 1140, true);
#endif

FOUNDRY_BENCH_MAIN()
