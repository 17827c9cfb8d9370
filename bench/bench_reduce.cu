// Sums of floats:
//  - at every power of 4 from 2^10 to 2^30 elements, foundry::reduce_sum exactly as a
//    user calls it (workspace allocated and freed stream-ordered inside the call) against
//    cub::DeviceReduce::Sum with its temporary storage allocated once outside the timing,
//    as CUB users do. Rows "reduce_sum_f32/{foundry,cub}/<n>". foundry's row runs on a
//    foundry::stream, whose own workspace makes the call one launch; "foundry_raw_stream"
//    is the same call on a cudaStream_t that foundry does not own (workspace allocated per
//    call, two launches), and "foundry_scratch" foundry::reduce with a caller-owned
//    workspace (two launches), to show what each costs. (The row keeps its name from
//    before issue 20 named it "workspace", so that it pairs with the recorded results.)
//    Goal: foundry >= 1.0x CUB at every size.
//  - at 2^28 (1 GiB, far past the 60 MB L2, so hot and cold agree), the reduction ladder
//    of foundry::naive (rungs 1-4, their partials allocated inside each call, as written)
//    and candidate policies beside the default.
//
// The input holds random integers in [-8, 8] stored as floats: every partial sum of
// every variant (even the 2^28 serial atomics) stays far below 2^24 in magnitude, so
// all are exact and the check against the CPU's integer sum is an equality.

#include <foundry/algorithms/reduce.cuh>
#include <foundry/algorithms/transform.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/memory/pinned_buffer.cuh>
#include <foundry/naive/reduce.cuh>
#include <foundry/runtime/stream.cuh>

#include <cub/device/device_reduce.cuh>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace {

namespace bench = foundry::bench;

enum class variant {
  naive_atomic,
  naive_interleaved,
  naive_sequential,
  naive_warp_shuffle,
  foundry,
  foundry_scratch,
  foundry_raw_stream,
  cub
};

struct int_to_float {
  __device__ float operator()(std::int32_t v) const { return static_cast<float>(v); }
};

// The exact sum of the input, computed on the host once per size (the data depends
// only on the seed and n) and cached: Google Benchmark calls each row more than once.
std::int64_t exact_sum(const foundry::device_buffer<float>& x, foundry::stream& s) {
  static std::map<std::size_t, std::int64_t> cache;
  if (const auto it = cache.find(x.size()); it != cache.end()) return it->second;
  std::vector<float> host(x.size());
  x.copy_to_host({host.data(), host.size()}, s);
  s.synchronize();
  std::int64_t sum = 0;
  for (const float f : host) sum += static_cast<std::int64_t>(f);
  cache.emplace(x.size(), sum);
  return sum;
}

template <int BlocksPerSm, int InFlight, foundry::tile_assignment Tiles = foundry::tile_assignment::strided>
struct reduce_candidate : foundry::reduce_policy {
  static constexpr int blocks_per_sm = BlocksPerSm;
  static constexpr int vectors_in_flight = InFlight;
  static constexpr foundry::tile_assignment tiles = Tiles;
};

// A stream that foundry does not own (no foundry::stream behind it), as a user's own
// cudaStream_t or a library's would be.
struct raw_stream {
  raw_stream() { FOUNDRY_CUDA_TRY(cudaStreamCreateWithFlags(&handle, cudaStreamNonBlocking)); }
  ~raw_stream() { FOUNDRY_CUDA_REPORT(cudaStreamDestroy(handle)); }
  raw_stream(const raw_stream&) = delete;
  raw_stream& operator=(const raw_stream&) = delete;
  cudaStream_t handle = nullptr;
};

template <class Policy>
void bm_reduce_sum_f32_with(benchmark::State& state, variant v) {
  const auto n = static_cast<std::size_t>(state.range(0));
  foundry::stream s;
  foundry::device_buffer<float> x(n, s);
  {
    foundry::device_buffer<std::int32_t> ints(n, s);
    bench::fill_uniform(ints.span(), -8.0, 8.0, bench::default_seed, s);
    foundry::transform(ints.span(), x.span(), int_to_float{}, s);
  }
  foundry::device_buffer<float> out(1, s, std::numeric_limits<float>::quiet_NaN());
  const auto in = cuda::std::span<const float>(x.data(), n);

  // Workspace for the variants that take it, allocated once, outside the timed region.
  std::size_t workspace_bytes = 0;
  if (v == variant::foundry_scratch) workspace_bytes = foundry::reduce_workspace_bytes<float, float, Policy>(n);
  if (v == variant::cub) {
    FOUNDRY_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, workspace_bytes, x.data(), out.data(), n, s.get()));
  }
  foundry::device_buffer<std::byte> workspace(workspace_bytes, s);

  auto enqueue = [&](cuda::stream_ref st) {
    switch (v) {
      case variant::naive_atomic: foundry::naive::reduce_sum_atomic(in, out.span(), st); break;
      case variant::naive_interleaved: foundry::naive::reduce_sum_interleaved(in, out.span(), st); break;
      case variant::naive_sequential: foundry::naive::reduce_sum_sequential(in, out.span(), st); break;
      case variant::naive_warp_shuffle: foundry::naive::reduce_sum_warp_shuffle(in, out.span(), st); break;
      case variant::foundry:
      case variant::foundry_raw_stream: foundry::reduce_sum<Policy>(in, out.span(), st); break;
      case variant::foundry_scratch:
        foundry::reduce<Policy>(in, out.span(), 0.0f, cuda::std::plus<float>{}, workspace.span(), st);
        break;
      case variant::cub: {
        std::size_t bytes = workspace_bytes;
        FOUNDRY_CUDA_TRY(cub::DeviceReduce::Sum(workspace.data(), bytes, x.data(), out.data(), n, st.get()));
        break;
      }
    }
  };

  raw_stream raw;
  const cuda::stream_ref timed = v == variant::foundry_raw_stream ? cuda::stream_ref{raw.handle} : s.view();
  s.synchronize();  // the input is ready before another stream reads it
  enqueue(timed);
  float result = 0;
  FOUNDRY_CUDA_TRY(cudaMemcpyAsync(&result, out.data(), sizeof result, cudaMemcpyDeviceToHost, timed.get()));
  foundry::synchronize(timed);
  const std::int64_t expected = exact_sum(x, s);
  if (!bench::expect(state, static_cast<double>(result) == static_cast<double>(expected),
                     "sum " + std::to_string(result) + " differs from the exact " + std::to_string(expected)))
    return;
  // One add per element; the output's 4 bytes are negligible but declared.
  bench::measure(state, timed, {static_cast<double>(n) * sizeof(float), sizeof(float), static_cast<double>(n)},
                 enqueue);
  foundry::synchronize(timed);  // before the buffers are freed on s
}

void bm_reduce_sum_f32(benchmark::State& state, variant v) { bm_reduce_sum_f32_with<foundry::reduce_policy>(state, v); }

template <int BlocksPerSm, int InFlight, foundry::tile_assignment Tiles = foundry::tile_assignment::strided>
void bm_reduce_candidate(benchmark::State& state) {
  bm_reduce_sum_f32_with<reduce_candidate<BlocksPerSm, InFlight, Tiles>>(state, variant::foundry);
}

constexpr std::int64_t elements = std::int64_t{1} << 28;

// The memory checks that foundry::reduce_sum makes on a small call before it enqueues
// anything (issue 22): one cudaStreamGetDevice and one cudaPointerGetAttributes per span,
// input and output. Host time per call, to set beside reduce_sum_f32/foundry/1024, whose
// time includes them; "device" for device_buffers, "pinned" for a page-locked output.
/// The memory checks of one small reduce call. `remembered`: the memo of checked
/// allocations (checked_memory.cuh) holds the buffers, as in a loop of calls; without it,
/// every iteration asks the driver as a first call does.
void bm_reduce_small_call_checks(benchmark::State& state, bool pinned_output, bool remembered) {
  foundry::stream s;
  foundry::device_buffer<float> x(static_cast<std::size_t>(state.range(0)), s);
  foundry::device_buffer<float> out(1, s);
  foundry::pinned_buffer<float> host_out(1);
  const cuda::std::span<float> output = pinned_output ? host_out.span() : out.span();
  for (auto _ : state) {
    if (!remembered) foundry::forget_checked_memory();
    const int device = foundry::detail::device_for_checks(s);
    foundry::detail::expect_device_accessible(x.span(), device, "reduce input");
    foundry::detail::expect_device_accessible(output, device, "reduce output");
    benchmark::DoNotOptimize(device);
  }
  s.synchronize();
}

void every_size(benchmark::internal::Benchmark* b) {
  for (std::int64_t n = std::int64_t{1} << 10; n <= std::int64_t{1} << 30; n *= 4) b->Arg(n);
}

}  // namespace

BENCHMARK_CAPTURE(bm_reduce_sum_f32, naive_atomic, variant::naive_atomic)
    ->Name("reduce_sum_f32/naive_atomic")
    ->Apply(bench::configure)
    ->Arg(elements);
BENCHMARK_CAPTURE(bm_reduce_sum_f32, naive_interleaved, variant::naive_interleaved)
    ->Name("reduce_sum_f32/naive_interleaved")
    ->Apply(bench::configure)
    ->Arg(elements);
BENCHMARK_CAPTURE(bm_reduce_sum_f32, naive_sequential, variant::naive_sequential)
    ->Name("reduce_sum_f32/naive_sequential")
    ->Apply(bench::configure)
    ->Arg(elements);
BENCHMARK_CAPTURE(bm_reduce_sum_f32, naive_warp_shuffle, variant::naive_warp_shuffle)
    ->Name("reduce_sum_f32/naive_warp_shuffle")
    ->Apply(bench::configure)
    ->Arg(elements);
BENCHMARK_CAPTURE(bm_reduce_sum_f32, foundry, variant::foundry)
    ->Name("reduce_sum_f32/foundry")
    ->Apply(bench::configure)
    ->Apply(every_size);
BENCHMARK_CAPTURE(bm_reduce_sum_f32, foundry_scratch, variant::foundry_scratch)
    ->Name("reduce_sum_f32/foundry_scratch")
    ->Apply(bench::configure)
    ->Apply(every_size);
BENCHMARK_CAPTURE(bm_reduce_sum_f32, foundry_raw_stream, variant::foundry_raw_stream)
    ->Name("reduce_sum_f32/foundry_raw_stream")
    ->Apply(bench::configure)
    ->Apply(every_size);
BENCHMARK_CAPTURE(bm_reduce_sum_f32, cub, variant::cub)
    ->Name("reduce_sum_f32/cub")
    ->Apply(bench::configure)
    ->Apply(every_size);
BENCHMARK_CAPTURE(bm_reduce_small_call_checks, device, false, true)
    ->Name("reduce_small_call/checks_device")
    ->Arg(1 << 10)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(bm_reduce_small_call_checks, device_first_call, false, false)
    ->Name("reduce_small_call/checks_device_first_call")
    ->Arg(1 << 10)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(bm_reduce_small_call_checks, pinned, true, true)
    ->Name("reduce_small_call/checks_pinned")
    ->Arg(1 << 10)
    ->Unit(benchmark::kMicrosecond);

#if FOUNDRY_BENCH_TUNING  // built where the benchmarks run (CMakeLists.txt), not in CI
// Policy candidates beside the default, so that reduce_policy rests on measured figures.
constexpr auto contiguous = foundry::tile_assignment::contiguous;
FOUNDRY_BENCHMARK(bm_reduce_candidate<8, 4>)->Name("reduce_sum_f32/foundry_b8v4")->Arg(elements);
FOUNDRY_BENCHMARK(bm_reduce_candidate<4, 8>)->Name("reduce_sum_f32/foundry_b4v8")->Arg(elements)->Arg(elements * 4);
FOUNDRY_BENCHMARK(bm_reduce_candidate<2, 8>)->Name("reduce_sum_f32/foundry_b2v8")->Arg(elements);
FOUNDRY_BENCHMARK(bm_reduce_candidate<8, 2>)->Name("reduce_sum_f32/foundry_b8v2")->Arg(elements);
FOUNDRY_BENCHMARK(bm_reduce_candidate<4, 4, contiguous>)
    ->Name("reduce_sum_f32/foundry_b4v4_contiguous")
    ->Arg(elements)
    ->Arg(elements * 4);
FOUNDRY_BENCHMARK(bm_reduce_candidate<4, 8, contiguous>)
    ->Name("reduce_sum_f32/foundry_b4v8_contiguous")
    ->Arg(elements)
    ->Arg(elements * 4);
#endif

FOUNDRY_BENCH_MAIN()
