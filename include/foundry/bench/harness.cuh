#pragma once
/// \file
/// foundry's GPU benchmark harness on top of Google Benchmark (bench/bench_harness.cu and
/// examples/bench_your_kernel show it whole).
///
///     using foundry::bench::cache_mode;
///     static void bm_copy(benchmark::State& state, cache_mode mode) {
///       const auto bytes = static_cast<std::size_t>(state.range(0));
///       foundry::stream s;
///       ...allocate; fill the input with foundry::bench::fill_uniform; run once...
///       if (!foundry::bench::expect(state, foundry::bench::bitwise_equal(out.span(), in.span(), s),
///                                   "copy differs from its input")) return;
///       foundry::bench::measure(state, s, {double(bytes), double(bytes), 0.0},
///                               [&](cuda::stream_ref st) { my_copy(out, in, st); }, {mode});
///     }
///     BENCHMARK_CAPTURE(bm_copy, hot, cache_mode::hot)
///         ->Name("copy/foundry")->Apply(foundry::bench::configure)->Arg(1 << 30);
///     BENCHMARK_CAPTURE(bm_copy, cold, cache_mode::cold)
///         ->Name("copy/foundry/cold")->Apply(foundry::bench::configure)->Arg(1 << 30);
///     FOUNDRY_BENCH_MAIN()
///
/// (`FOUNDRY_BENCHMARK(fn)` is `BENCHMARK(fn)->Apply(foundry::bench::configure)`.)
///
/// Names: `<algorithm>/<variant>[/cold]/<args>`. The variant is `naive` (or `naive_<rung>`),
/// `foundry` (or `foundry_<rung>`), or the peer (`cub`, `thrust`, `cublas`, `cudaMemcpy`);
/// scripts/bench_report.py pairs rows whose algorithm and args agree. Hot is the default
/// and needs no word in the name; a cold run says `cold`.
///
/// Every benchmark must be registered with `->Apply(foundry::bench::configure)` (or through
/// `FOUNDRY_BENCHMARK`): it turns on Google Benchmark's manual time, which is where the
/// harness reports the GPU time.
///
/// How a figure is made (measure):
/// - warm-up: one call, then one timed calibration call;
/// - each sample is one CUDA-event-timed region on the caller's stream. Hot: a batch of
///   back-to-back calls long enough (>= ~100 us) for the event resolution (~0.5 us) not to
///   matter, divided by the batch. Cold: one call after an L2 flush that runs before the
///   start event (outside the timed region);
/// - before each sample a short spin kernel holds the stream while the host enqueues the
///   sample, so that host launch latency is not timed (the approach of nvbench);
/// - the reported time is the median of the samples (at most `options::max_samples`,
///   within `options::max_seconds` of wall time per Google Benchmark round); the counter
///   `noise_pct` is their relative standard deviation.
/// Counters: `GB/s` (bytes read + written per second), `TFLOP/s`, `flop/byte`,
/// `pct_of_ceiling` (of the ceiling that binds: copy bandwidth when the intensity is below
/// the ridge point, else the chosen FLOP ceiling), `noise_pct`, `samples`; the label says
/// `hot`/`cold` and `memory-bound`/`compute-bound`. The ceilings are measured once per
/// process (ceilings.cuh) and written into the JSON context.

#include <foundry/bench/ceilings.cuh>
#include <foundry/bench/compare.cuh>
#include <foundry/bench/context.cuh>
#include <foundry/bench/l2_flush.cuh>
#include <foundry/bench/random.cuh>
#include <foundry/core/error.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/runtime/event.cuh>
#include <foundry/runtime/stream.cuh>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace foundry::bench {

/// What one call of the timed function does; the harness turns it into rates.
struct work {
  /// Bytes one call reads from device memory.
  double bytes_read = 0;
  /// Bytes one call writes to device memory.
  double bytes_written = 0;
  /// Floating-point operations of one call (0 for pure data movement).
  double flops = 0;
  /// Items (launches, round trips) one call does: when non-zero, the counter `us_per_item`
  /// reports the median time per item in microseconds.
  double items = 0;
};

/// hot: back-to-back calls, data may stay in L2. cold: the L2 is flushed before every
/// timed call, outside the timed region.
enum class cache_mode { hot, cold };

struct options {
  /// Hot (back to back) or cold (L2 flushed before every call).
  cache_mode cache = cache_mode::hot;
  /// The FLOP ceiling for compute-bound figures (the bandwidth ceiling is always the
  /// measured device-to-device copy).
  flop_ceiling ceiling = flop_ceiling::fp32_cuda_cores;
  /// Samples per Google Benchmark round. How far medians of 100 move between runs was not
  /// measured directly (the H200 run of 2026-12-02 took one round per row; the device
  /// notes saw ~0.2% for medians of 20-30 by hand). Measured on the H200, 2026-12-02: the
  /// noise_pct column (relative standard deviation of a round's samples) was 0.395% at
  /// the median of the 73 hot rows of 100 samples, 1.07% at most
  /// (saxpy/foundry_b8v4/268435456); cold rows 1.25% median, 3.80% at most
  /// (copy/cudaMemcpy/cold/1048576). One kernel timed twice in that run, rows
  /// copy/foundry/1073741824 and copy/foundry_t512v4/1073741824 (same policy), gave
  /// medians 0.0555% apart.
  int max_samples = 100;
  /// Wall-clock budget for the samples of one round (at least one sample is always taken).
  double max_seconds = 1.0;
  /// Appended to the row's label after "; " (for example the plan a GEMM row ran), so
  /// that the JSON says what was measured. Empty: nothing.
  std::string note{};
};

/// Turns on manual time (the harness's GPU time) and microseconds. Use with `->Apply(...)`.
inline void configure(benchmark::internal::Benchmark* b) { b->UseManualTime()->Unit(benchmark::kMicrosecond); }

namespace detail {

/// Failed benchmarks in this process; FOUNDRY_BENCH_MAIN exits non-zero when any failed.
inline std::atomic<int>& failure_count() {
  static std::atomic<int> count{0};
  return count;
}

inline void fail(benchmark::State& state, const std::string& why) {
  ++failure_count();
  state.SkipWithError(why.c_str());
}

/// Spins one warp until `ns` nanoseconds of %globaltimer have passed. (A template, like
/// every kernel in these headers, so that several translation units may include it.)
template <int = 0>
__global__ void delay_kernel(std::uint64_t ns) {
  std::uint64_t start = 0;
  std::uint64_t now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

inline void enqueue_delay(cuda::stream_ref s, double seconds) {
  launch_config c;
  c.grid = dim3(1);
  c.block = dim3(32);
  launch(s, c, delay_kernel<>, static_cast<std::uint64_t>(seconds * 1e9));
}

struct sample_stats {
  double median_seconds = 0;  ///< per call
  double noise = 0;           ///< relative standard deviation of the samples
  int samples = 0;
  int batch = 1;
};

/// A hot sample lasts at least this long: CUDA documents the event resolution as about
/// 0.5 us, so the resolution stays under 0.5% of a sample. The event resolution itself
/// was not measured on the H200. Measured there, 2026-12-02: on row
/// copy/cudaMemcpy/1073741824 the harness read 4250 GB/s against a bare event-timed loop's
/// 4190 GB/s, harness/bare = 1.01 (one 506 us call per sample, so no batching there); the
/// shortest hot calls, batched up to this floor, had noise 0.445% (row
/// copy/cudaMemcpy/1048576, 2.24 us a call).
inline constexpr double min_hot_sample_seconds = 100e-6;
/// Bounds the calls enqueued ahead of the GPU for kernels of a microsecond or less.
inline constexpr int max_hot_batch = 1000;
/// Longest spin kernel before a sample; beyond it, a call's host cost is part of its time.
inline constexpr double max_delay_seconds = 20e-3;

/// Fills the median, relative standard deviation and count of the samples `v` (seconds).
inline void summarize(const std::vector<double>& v, sample_stats& stats) {
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t m = sorted.size();
  stats.median_seconds = m % 2 == 1 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(m);
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  stats.noise = m > 1 && mean > 0 ? std::sqrt(var / static_cast<double>(m - 1)) / mean : 0.0;
  stats.samples = static_cast<int>(m);
}

template <class Enqueue>
sample_stats take_samples(std::int64_t wanted, cuda::stream_ref s, Enqueue& enqueue, const options& opt) {
  using clock = std::chrono::steady_clock;
  l2_flush* flush = opt.cache == cache_mode::cold ? &shared_l2_flush() : nullptr;
  event start;
  event stop;
  double host_seconds = 0;  // host cost of enqueueing one sample: sizes the spin kernel
  auto timed = [&](int batch, double delay_seconds) {
    if (flush != nullptr) flush->enqueue(s);
    enqueue_delay(s, delay_seconds);
    // The host clock measures only how long the calls take to return (to size the next
    // spin kernel), never the GPU work: that is timed by the events.
    const auto t0 = clock::now();
    start.record(s);
    for (int i = 0; i < batch; ++i) enqueue(s);
    stop.record(s);
    host_seconds = std::chrono::duration<double>(clock::now() - t0).count();
    return static_cast<double>(elapsed_ms(start, stop)) * 1e-3 / batch;
  };

  // Warm-up: the first call pays for lazy module loading, pool growth, library heuristics.
  if (flush != nullptr) flush->enqueue(s);
  enqueue(s);
  synchronize(s);
  // Calibration: a generous delay, one call.
  const double one_call = timed(1, 1e-3);
  const double one_call_host = host_seconds;
  sample_stats stats;
  if (opt.cache == cache_mode::hot && one_call > 0) {
    stats.batch = static_cast<int>(
        std::clamp(std::ceil(min_hot_sample_seconds / one_call), 1.0, static_cast<double>(max_hot_batch)));
  }
  const double delay = std::min(max_delay_seconds, 20e-6 + 1.5 * one_call_host * stats.batch);

  const auto budget_end = clock::now() + std::chrono::duration<double>(opt.max_seconds);
  const int n = static_cast<int>(std::clamp<std::int64_t>(wanted, 1, std::max(1, opt.max_samples)));
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    v.push_back(timed(stats.batch, delay));
    if (clock::now() > budget_end) break;
  }
  summarize(v, stats);
  return stats;
}

inline void report(benchmark::State& state, const work& w, const sample_stats& r, const options& opt,
                   bool host_timed = false) {
  const ceilings& c = device_ceilings();
  const double t = r.median_seconds;
  const double bytes = w.bytes_read + w.bytes_written;
  const double bytes_per_s = t > 0 ? bytes / t : 0.0;
  const double flops_per_s = t > 0 ? w.flops / t : 0.0;
  const double intensity = bytes > 0 ? w.flops / bytes : 0.0;
  const double flop_peak = c.flops_per_second(opt.ceiling);
  // Below the ridge point the bandwidth binds, above it the FLOP rate.
  const bool compute_bound = w.flops > 0 && (bytes == 0 || intensity >= c.ridge_point(opt.ceiling));
  const double pct = compute_bound ? 100.0 * flops_per_s / flop_peak : 100.0 * bytes_per_s / c.copy_bytes_per_second;

  state.counters["GB/s"] = bytes_per_s * 1e-9;
  state.counters["TFLOP/s"] = flops_per_s * 1e-12;
  state.counters["flop/byte"] = intensity;
  state.counters["pct_of_ceiling"] = pct;
  state.counters["noise_pct"] = 100.0 * r.noise;
  state.counters["samples"] = r.samples;
  if (w.items > 0) state.counters["us_per_item"] = 1e6 * t / w.items;
  std::string label = opt.cache == cache_mode::cold ? "cold" : "hot";
  if (host_timed) label += ", host-timed";
  label += compute_bound ? std::string(", compute-bound: ") + to_string(opt.ceiling) : std::string(", memory-bound");
  if (!opt.note.empty()) label += "; " + opt.note;
  state.SetLabel(label.c_str());
}

/// The Google Benchmark side of `measure` and `measure_blocking`: measures the ceilings,
/// lets `take(iterations)` take the samples of each round, reports their median per
/// iteration as manual time, then the counters. A failure marks the row failed.
template <class Take>
void run_rounds(benchmark::State& state, const work& w, const options& opt, bool host_timed, Take&& take) {
  if (state.error_occurred()) return;
  sample_stats stats;
  try {
    (void)device_ceilings();  // measured once per process, before the first samples
  } catch (const std::exception& e) {
    fail(state, std::string("measuring the ceilings failed: ") + e.what());
    return;
  }
  // One Google Benchmark pass covers all the iterations it asked for; the harness takes
  // its own samples inside it and reports their median per iteration.
  while (state.KeepRunningBatch(state.max_iterations)) {
    try {
      stats = take(state.max_iterations);
    } catch (const std::exception& e) {
      fail(state, e.what());
      break;
    }
    state.SetIterationTime(stats.median_seconds * static_cast<double>(state.max_iterations));
  }
  if (!state.error_occurred()) report(state, w, stats, opt, host_timed);
}

}  // namespace detail

/// Times `enqueue(cuda::stream_ref)` on `s` with CUDA events and reports the median time
/// per call through manual time, plus the counters described at the top of this file.
/// `enqueue` must only enqueue work on the stream it is given and must be repeatable: it
/// runs many times. It must not synchronise (that would time host latency too): use
/// `thrust::cuda::par_nosync.on(s)` for Thrust, and allocate CUB's temporary storage outside.
/// Failures (a `cuda_error` or other exception from `enqueue`) mark the benchmark failed
/// with the reason instead of ending the program. Blocks the host until the samples finish.
template <class Enqueue>
void measure(benchmark::State& state, cuda::stream_ref s, const work& w, Enqueue&& enqueue, options opt = {}) {
  detail::run_rounds(state, w, opt, /*host_timed=*/false,
                     [&](std::int64_t iterations) { return detail::take_samples(iterations, s, enqueue, opt); });
}

namespace detail {
/// The median and spread of up to `opt.max_samples` host-timed calls of `call`, each after
/// an untimed `prepare()`, after one warm-up, within `opt.max_seconds`.
template <class Prepare, class Call>
sample_stats take_blocking_samples(std::int64_t wanted, Prepare& prepare, Call& call, const options& opt) {
  using clock = std::chrono::steady_clock;
  prepare();
  call();  // warm-up: lazy loading, pool growth, first-touch of pinned pages
  const auto budget_end = clock::now() + std::chrono::duration<double>(opt.max_seconds);
  const int n = static_cast<int>(std::clamp<std::int64_t>(wanted, 1, std::max(1, opt.max_samples)));
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    prepare();
    const auto t0 = clock::now();
    call();
    v.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    if (clock::now() > budget_end) break;
  }
  sample_stats stats;
  summarize(v, stats);
  return stats;
}
}  // namespace detail

/// Times `call()` with the host's steady clock and reports the median per call, with the
/// same counters as `measure`; the label adds "host-timed". For work the host takes part
/// in, which CUDA events on one stream would not see whole: pageable copies (the driver
/// stages them through its own pinned buffers), round trips that wait for each result, a
/// pipeline that fills staging buffers and waits on events. `call` must return only when
/// its work is finished (synchronise inside it) and be repeatable. `prepare()` runs before
/// every call, untimed (`measure_blocking` has none): for example the host writing pages
/// that the call then reads from the GPU. Hot only: `opt.cache` must be
/// `cache_mode::hot`. Failures mark the benchmark failed with the reason.
template <class Prepare, class Call>
void measure_blocking_prepared(benchmark::State& state, const work& w, Prepare&& prepare, Call&& call,
                               options opt = {}) {
  if (opt.cache != cache_mode::hot) {
    detail::fail(state, "measure_blocking times hot calls only");
    return;
  }
  detail::run_rounds(state, w, opt, /*host_timed=*/true, [&](std::int64_t iterations) {
    return detail::take_blocking_samples(iterations, prepare, call, opt);
  });
}

/// `measure_blocking_prepared` with nothing to prepare.
template <class Call>
void measure_blocking(benchmark::State& state, const work& w, Call&& call, options opt = {}) {
  measure_blocking_prepared(
      state, w, [] {}, std::forward<Call>(call), opt);
}

/// Marks the benchmark failed (SkipWithError: "wrong output: <what_failed>") when `ok` is
/// false, which also makes FOUNDRY_BENCH_MAIN exit non-zero. Returns `ok`:
/// `if (!expect(state, ok, "...")) return;` before measuring.
inline bool expect(benchmark::State& state, bool ok, const std::string& what_failed) {
  if (!ok && !state.error_occurred()) detail::fail(state, "wrong output: " + what_failed);
  return ok;
}

namespace detail {
inline bool only_listing(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--benchmark_list_tests" || a == "--benchmark_list_tests=true" || a == "--benchmark_list_tests=1")
      return true;
  }
  return false;
}
}  // namespace detail

/// The body of FOUNDRY_BENCH_MAIN. Exit codes: 0 all ran and passed; 1 a benchmark failed
/// or an unexpected error; 2 no usable CUDA device (one line on stderr says so).
inline int run_main(int argc, char** argv) {
  const bool listing = detail::only_listing(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!listing) {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status == cudaSuccess && count == 0) status = cudaErrorNoDevice;
    if (status != cudaSuccess) {
      std::fprintf(stderr, "foundry bench: no CUDA device (%s: %s): benchmarks need a GPU\n", cudaGetErrorName(status),
                   cudaGetErrorString(status));
      return 2;
    }
  }
  try {
    if (!listing) add_context();  // device, versions, clocks, and the measured ceilings
    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "foundry bench: %s\n", e.what());
    return 1;
  }
  benchmark::Shutdown();
  if (const int failed = detail::failure_count().load(); failed > 0) {
    std::fprintf(stderr, "foundry bench: %d benchmark(s) failed\n", failed);
    return 1;
  }
  return 0;
}

}  // namespace foundry::bench

/// Registers `fn` as a GPU benchmark (manual time, microseconds); chain `->Name(...)->Arg(...)`.
#define FOUNDRY_BENCHMARK(...) BENCHMARK(__VA_ARGS__)->Apply(::foundry::bench::configure)

/// Use instead of BENCHMARK_MAIN(): without a CUDA device it prints one line and exits 2.
#define FOUNDRY_BENCH_MAIN() \
  int main(int argc, char** argv) { return ::foundry::bench::run_main(argc, argv); }
