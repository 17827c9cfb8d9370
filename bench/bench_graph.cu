// The cost of a kernel launch, from a stream and from a replayed CUDA graph.
// Rows "launch/<variant>/<count>" for count = 1000 and 10000: `count` launches of a kernel
// that does almost nothing (one warp; thread 0 adds one to a counter atomically), one after
// another on one stream.
//  - stream: each call enqueues the `count` launches with foundry::launch, then synchronises.
//  - graph: the same `count` launches captured once with foundry::capture (outside the
//    timing), instantiated and uploaded; each call is one graph_exec::launch, then a
//    synchronisation.
//  - stream_pdl, graph_pdl: the same two with programmatic dependent launch
//    (launch_dependency::programmatic, which foundry's memory-bound algorithms use): the
//    kernel lets the next one launch, then waits for the previous one before its atomic,
//    so the launches still take effect one after another, and the next kernel's launch
//    overlaps the end of the one before. A stream and a graph can use it equally (the
//    graph holds it as programmatic edges), so each PDL row is compared with the other.
//  - stream_raw: `tick_kernel<<<1, 32, 0, s>>>` in a plain loop, the launch error checked
//    once a call: what a stream launch costs without foundry::launch's checks (the stream
//    device, the configuration against the device), so that the stream rows are not
//    inflated by foundry's own overhead.
// Timed on the host (foundry::bench::measure_blocking): a launch's cost is mostly host
// work (argument checks, the driver's enqueue) plus the GPU's gap between kernels, and
// CUDA events on the stream would miss the host part. The row's time covers `count`
// launches; the counter us_per_item divides it by `count`.
//
// Goal: a graph replay costs <= 1/5 of a stream launch per kernel (launch/graph's
// us_per_item <= 0.2x launch/stream's, and graph_pdl's <= 0.2x stream_pdl's, at each
// count). Measured on the H200: an empty kernel launch costs about 4 us from a stream and
// 0.5 us inside a graph; the tick kernel 0.81 us a node in a graph, 3.7-5.0 us from a
// stream. The plain graph is bound by the GPU's gap between dependent kernels, which no
// instantiation flag removes; programmatic edges are what overlaps it.
//
// Correct before timed: after 3 calls from a zeroed counter it reads 3 x count; and after
// the timing it reads count x the number of calls made, so a replay that launched nothing
// cannot pass unnoticed.

#include <foundry/bench/harness.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/runtime/graph.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <cstdint>
#include <optional>
#include <string>

namespace {

namespace bench = foundry::bench;

enum class launch_path { stream, stream_raw, graph };

/// The smallest kernel that leaves a trace. Kernels on one stream run one after another,
/// so an atomic is not needed for correctness; it is used because it compiles to a
/// reduction (RED) that the thread does not wait for, where `*counter += 1` would wait for
/// the load from L2 before it can store: that wait would add to every kernel's time on the
/// GPU, which is what the graph rows measure.
__global__ void tick_kernel(unsigned long long* counter) {
  if (threadIdx.x == 0) atomicAdd(counter, 1ull);
}

/// tick_kernel for programmatic dependent launch: lets the next kernel launch at once,
/// then waits for the previous one (and its atomic) before its own.
__global__ void tick_after_prior_kernel(unsigned long long* counter) {
  foundry::allow_dependent_launch();
  foundry::wait_for_prior_grids();
  if (threadIdx.x == 0) atomicAdd(counter, 1ull);
}

unsigned long long read_counter(const foundry::device_buffer<unsigned long long>& counter, foundry::stream& s) {
  unsigned long long value = 0;
  FOUNDRY_CUDA_TRY(cudaMemcpyAsync(&value, counter.data(), sizeof value, cudaMemcpyDeviceToHost, s.get()));
  s.synchronize();
  return value;
}

void bm_launch(benchmark::State& state, launch_path path,
               foundry::launch_dependency dependency = foundry::launch_dependency::full) {
  const std::int64_t count = state.range(0);
  foundry::stream s;
  foundry::device_buffer<unsigned long long> counter(1, s, 0ull);
  auto one_warp = foundry::make_launch_config_1d(32, 32);
  one_warp.dependency = dependency;
  const auto kernel = dependency == foundry::launch_dependency::programmatic ? tick_after_prior_kernel : tick_kernel;
  const auto enqueue_launches = [&](cuda::stream_ref st) {
    if (path == launch_path::stream_raw) {
      for (std::int64_t i = 0; i < count; ++i) tick_kernel<<<1, 32, 0, st.get()>>>(counter.data());
      FOUNDRY_CUDA_TRY(cudaGetLastError());
      return;
    }
    for (std::int64_t i = 0; i < count; ++i) foundry::launch(st, one_warp, kernel, counter.data());
  };

  std::optional<foundry::graph_exec> replay;
  if (path == launch_path::graph) {
    const foundry::graph g = foundry::capture(s, enqueue_launches);
    replay.emplace(g);  // the executable does not need the graph once instantiated
    replay->upload(s);
  }

  std::int64_t calls = 0;
  const auto launch_all = [&] {
    if (replay) {
      replay->launch(s);
    } else {
      enqueue_launches(s);
    }
    s.synchronize();
    ++calls;
  };

  {  // Correct before timed: 3 calls add 3 x count.
    foundry::fill(counter.span(), 0ull, s);
    for (int i = 0; i < 3; ++i) launch_all();
    const unsigned long long ticks = read_counter(counter, s);
    const auto expected = static_cast<unsigned long long>(3 * count);
    if (!bench::expect(state, ticks == expected,
                       "3 calls counted " + std::to_string(ticks) + " launches, expected " + std::to_string(expected)))
      return;
  }

  foundry::fill(counter.span(), 0ull, s);
  s.synchronize();
  calls = 0;
  bench::measure_blocking(state, {0.0, 0.0, 0.0, static_cast<double>(count)}, launch_all);
  if (state.error_occurred()) return;
  // Every timed call (and the harness's warm-up) ran all its launches.
  const unsigned long long ticks = read_counter(counter, s);
  const auto expected = static_cast<unsigned long long>(calls * count);
  if (!bench::expect(state, ticks == expected,
                     std::to_string(calls) + " calls counted " + std::to_string(ticks) + " launches, expected " +
                         std::to_string(expected)))
    return;
}

void launch_counts(benchmark::internal::Benchmark* b) { b->Arg(1000)->Arg(10000); }

}  // namespace

BENCHMARK_CAPTURE(bm_launch, stream, launch_path::stream)
    ->Name("launch/stream")
    ->Apply(bench::configure)
    ->Apply(launch_counts);
BENCHMARK_CAPTURE(bm_launch, graph, launch_path::graph)
    ->Name("launch/graph")
    ->Apply(bench::configure)
    ->Apply(launch_counts);
BENCHMARK_CAPTURE(bm_launch, stream_pdl, launch_path::stream, foundry::launch_dependency::programmatic)
    ->Name("launch/stream_pdl")
    ->Apply(bench::configure)
    ->Apply(launch_counts);
BENCHMARK_CAPTURE(bm_launch, graph_pdl, launch_path::graph, foundry::launch_dependency::programmatic)
    ->Name("launch/graph_pdl")
    ->Apply(bench::configure)
    ->Apply(launch_counts);
BENCHMARK_CAPTURE(bm_launch, stream_raw, launch_path::stream_raw)
    ->Name("launch/stream_raw")
    ->Apply(bench::configure)
    ->Apply(launch_counts);

FOUNDRY_BENCH_MAIN()
