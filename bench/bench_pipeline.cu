// A host array streamed through the GPU: copied in, transformed, copied back.
// Rows "pipeline/{serial,foundry}/<bytes>" (a cheap kernel, y = 2x + 1) and
// "pipeline_compute/{serial,foundry}/<bytes>" (a kernel about as long as the copies: a
// chain of compute_fmas_per_element FMAs per element), at 256 MiB, 1 GiB and 4 GiB of
// float input. Host arrays are foundry::pinned_buffer, allocated and filled once per size
// and kept for the whole process (host_arrays_of).
//  - serial: one stream; copy the whole array in, one foundry::transform, copy it all out,
//    synchronise (device buffers of the full size: 8 GiB for the 4 GiB rows).
//  - foundry: foundry::stream_pipeline<float> with its defaults (4 lanes, 8 MiB chunks),
//    the same transform per chunk, so that copy in, kernel and copy out of different
//    chunks overlap: every copy in on one stream, every copy out on another, the kernels
//    on the lanes' streams (pipeline.cuh's schedule).
// Timed on the host (foundry::bench::measure_blocking): the pipeline's run waits on its
// streams from the host, and spans several streams that one stream's events cannot see.
// GB/s counts bytes in + bytes out; TFLOP/s counts 2 flops per FMA. The harness's
// pct_of_ceiling is of the device's own ceilings (HBM copy, FP32), not of the host link:
// read GB/s against the link figures below.
//
// Goals:
//  - the pipeline moves >= 0.9x pinned bandwidth in each direction at once: pipeline/
//    foundry's GB/s >= 0.9 x (50.7 + 50.7) = 91 GB/s, that is >= 45.6 GB/s each way;
//  - pipeline/foundry runs >= 1.8x pipeline/serial (the cheap kernel), at each size.
// pipeline_compute has no goal: with the three stages about equally long the pipeline can
// approach 3x serial; the rows show how close it comes.
// Measured on the H200: pinned H2D 55.5 GB/s and D2H 55.3 GB/s alone, 50.7 GB/s each way
// at once (bench_transfer's h2d/pinned and d2h/pinned rows); pageable 6.3 GB/s.
// The bound (an estimate from those figures): the pipeline takes at least its bytes at
// 50.7 GB/s each way plus one chunk's copy (the first copy in and the last copy out
// overlap nothing), so with 8 MiB chunks at most ~1.81x serial at 256 MiB, ~1.84x at
// 1 GiB, ~1.85x at 4 GiB (with 16 MiB chunks, ~1.76x at 256 MiB), if the copies of one
// direction follow one another with no gap.
//
// Correct before timed: each run of a row poisons the sampled outputs with NaN, runs once
// and compares them with a CPU reference, bit for bit: indices 0 and n - 1 and one
// pseudo-random index in each of 16384 equal slices, so that every 8 MiB chunk is visited
// (at least 32 samples a chunk at 4 GiB). Both kernels use explicit fmaf, which the host
// and the device round the same way.

#include <foundry/algorithms/transform.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/memory/pinned_buffer.cuh>
#include <foundry/memory/pipeline.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace {

namespace bench = foundry::bench;

constexpr std::int64_t mib = std::int64_t{1} << 20;
constexpr std::int64_t gib = std::int64_t{1} << 30;

/// FMAs per element in pipeline_compute, chosen so that a chunk's kernel lasts about as
/// long as its copy. Estimate, not yet measured: a 16 MiB chunk (4 Mi floats)
/// crosses the link in ~0.3 ms at 55 GB/s; the H200's FP32 cores run ~30e12 FMA/s
/// (~60 TFLOP/s), so 0.3 ms is ~9e9 FMAs, ~2000 per element.
constexpr int compute_fmas_per_element = 2048;

/// y = 2x + 1: a kernel far shorter than its copies (8 bytes moved over the link per flop pair).
struct cheap_op {
  static constexpr double flops_per_element = 2;
  __host__ __device__ float operator()(float x) const { return fmaf(2.0f, x, 1.0f); }
};

/// compute_fmas_per_element dependent FMAs, y = 0.999 y + 0.001, which pull y towards 1
/// and keep it finite. The chain cannot be folded (no fast-math), so the kernel really
/// does the arithmetic; the vector path gives each thread several independent chains.
struct compute_op {
  static constexpr double flops_per_element = 2.0 * compute_fmas_per_element;
  __host__ __device__ float operator()(float x) const {
    float y = x;
    for (int k = 0; k < compute_fmas_per_element; ++k) y = fmaf(y, 0.999f, 0.001f);
    return y;
  }
};

/// The input: exact multiples of 1/4096 in [-0.5, 0.5).
float input_value(std::size_t i) { return static_cast<float>(i % 4096) * (1.0f / 4096.0f) - 0.5f; }

/// Calls `f(i)` for each sampled index of an array of `n` (see the file comment).
template <class F>
void for_each_sampled_index(std::size_t n, F f) {
  constexpr std::size_t slices = 16384;
  const std::size_t slice = std::max<std::size_t>(n / slices, 1);
  for (std::size_t start = 0; start < n; start += slice) {
    const std::size_t length = std::min(slice, n - start);
    f(start + (start * 2654435761u) % length);
  }
  f(0);
  f(n - 1);
}

/// Outputs that differ from `op(in[i])` at the sampled indices. The NaN poison never
/// compares equal, so a chunk that was never copied back is caught.
template <class Op>
std::size_t count_wrong_samples(const float* in, const float* out, std::size_t n, Op op) {
  std::size_t wrong = 0;
  for_each_sampled_index(n, [&](std::size_t i) { wrong += out[i] != op(in[i]) ? 1 : 0; });
  return wrong;
}

/// The pinned input (filled with input_value) and output of one size.
struct host_arrays {
  foundry::pinned_buffer<float> in;
  foundry::pinned_buffer<float> out;
};

/// The host arrays of `n` floats, allocated and filled at the first call for that size and
/// then reused by every run of every row of that size: pinning and filling 2 x 4 GiB took
/// seconds a run, and with 66 runs (3 repetitions in random order) bench_pipeline did not
/// finish in 200 s (session 10). Never freed: at process exit the CUDA runtime may already
/// be unloaded, and the memory goes back with the process.
host_arrays& host_arrays_of(std::size_t n) {
  static auto* const cache = new std::map<std::size_t, std::unique_ptr<host_arrays>>;
  auto& arrays = (*cache)[n];
  if (!arrays) {
    arrays.reset(new host_arrays{foundry::pinned_buffer<float>(n), foundry::pinned_buffer<float>(n)});
    for (std::size_t i = 0; i < n; ++i) arrays->in[i] = input_value(i);
  }
  return *arrays;
}

enum class schedule { serial, foundry };

/// `lanes` and `chunk_bytes` (0: the pipeline's defaults) size the pipeline of the foundry schedule.
template <class Op>
void bm_pipeline(benchmark::State& state, schedule sched, std::size_t lanes = 0, std::size_t chunk_bytes = 0) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const std::size_t n = bytes / sizeof(float);
  foundry::stream s;
  host_arrays& arrays = host_arrays_of(n);
  foundry::pinned_buffer<float>& in = arrays.in;
  foundry::pinned_buffer<float>& out = arrays.out;
  const auto host_in = cuda::std::span<const float>(in.data(), n);
  const auto host_out = out.span();

  // serial: the whole arrays on the device; foundry: the pipeline's own chunk buffers.
  foundry::device_buffer<float> device_in;
  foundry::device_buffer<float> device_out;
  std::optional<foundry::stream_pipeline<float>> pipeline;
  if (sched == schedule::serial) {
    device_in = foundry::device_buffer<float>(n, s);
    device_out = foundry::device_buffer<float>(n, s);
  } else if (lanes == 0) {
    pipeline.emplace();
  } else {
    pipeline.emplace(chunk_bytes / sizeof(float), lanes);
  }

  const auto run = [&] {
    if (sched == schedule::serial) {
      foundry::copy(device_in.span(), host_in, s);
      foundry::transform(device_in.span(), device_out.span(), Op{}, s);
      foundry::copy(host_out, device_out.span(), s);
      s.synchronize();
    } else {
      pipeline->run(host_in, host_out,
                    [](cuda::std::span<const float> x, cuda::std::span<float> y, cuda::stream_ref st) {
                      foundry::transform(x, y, Op{}, st);
                    });
    }
  };

  // Correct before timed.
  for_each_sampled_index(n, [&](std::size_t i) { out[i] = std::numeric_limits<float>::quiet_NaN(); });
  run();
  const std::size_t wrong = count_wrong_samples(in.data(), out.data(), n, Op{});
  if (!bench::expect(state, wrong == 0, std::to_string(wrong) + " sampled outputs differ from the CPU reference"))
    return;

  const double moved = static_cast<double>(bytes);
  // A 4 GiB serial call takes ~0.2 s: let the 10 samples of the one round (see
  // pipeline_sizes) finish.
  bench::measure_blocking(state, {moved, moved, Op::flops_per_element * static_cast<double>(n)}, run,
                          bench::options{.max_seconds = 5.0});
}

void bm_pipeline_cheap(benchmark::State& state, schedule sched) { bm_pipeline<cheap_op>(state, sched); }
void bm_pipeline_compute(benchmark::State& state, schedule sched) { bm_pipeline<compute_op>(state, sched); }
/// Rows pipeline_tuning/foundry/<bytes>/<lanes>/<chunk MiB>: the cheap kernel through pipelines
/// of other shapes than the default (4 lanes of 8 MiB), to choose the default from; at 256 MiB,
/// whether smaller chunks pay for a shorter fill and drain (see the bound above).
void bm_pipeline_tuning(benchmark::State& state) {
  bm_pipeline<cheap_op>(state, schedule::foundry, static_cast<std::size_t>(state.range(1)),
                        static_cast<std::size_t>(state.range(2)) * mib);
}

/// 256 MiB, 1 GiB and 4 GiB of input. One Google Benchmark round of 10 samples per row
/// (->Iterations): each round allocates the serial rows' device arrays (up to 8 GiB) and
/// checks the output once.
void pipeline_sizes(benchmark::internal::Benchmark* b) { b->Arg(256 * mib)->Arg(gib)->Arg(4 * gib)->Iterations(10); }

}  // namespace

BENCHMARK_CAPTURE(bm_pipeline_cheap, serial, schedule::serial)
    ->Name("pipeline/serial")
    ->Apply(bench::configure)
    ->Apply(pipeline_sizes);
BENCHMARK_CAPTURE(bm_pipeline_cheap, foundry, schedule::foundry)
    ->Name("pipeline/foundry")
    ->Apply(bench::configure)
    ->Apply(pipeline_sizes);
BENCHMARK(bm_pipeline_tuning)
    ->Name("pipeline_tuning/foundry")
    ->Apply(bench::configure)
    ->Args({gib, 2, 16})
    ->Args({gib, 4, 4})
    ->Args({gib, 4, 16})
    ->Args({gib, 4, 64})
    ->Args({gib, 8, 4})
    ->Args({gib, 8, 8})
    ->Args({gib, 8, 16})
    ->Args({256 * mib, 2, 8})
    ->Args({256 * mib, 4, 4})
    ->Args({256 * mib, 4, 16})
    ->Iterations(10);
BENCHMARK_CAPTURE(bm_pipeline_compute, serial, schedule::serial)
    ->Name("pipeline_compute/serial")
    ->Apply(bench::configure)
    ->Apply(pipeline_sizes);
BENCHMARK_CAPTURE(bm_pipeline_compute, foundry, schedule::foundry)
    ->Name("pipeline_compute/foundry")
    ->Apply(bench::configure)
    ->Apply(pipeline_sizes);

FOUNDRY_BENCH_MAIN()
