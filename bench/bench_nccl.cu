// foundry's multi-GPU layer (foundry::nccl) on however many GPUs the machine has, at 1, 2,
// 4 and 8 GPUs where present (and at the machine's own count):
//   allreduce/nccl/<bytes>/<gpus>       plain grouped ncclAllReduce (the peer: what NCCL
//                                       gives), in place, float sum
//   allreduce/foundry/<bytes>/<gpus>    foundry::nccl::all_reduce, the same operation
//     8 B to 1 GiB in powers of 8, on 2 GPUs or more (on one, NCCL enqueues nothing). Counters as nccl-tests defines them: algbw_GB/s = bytes /
//     time, busbw_GB/s = algbw * 2(n-1)/n.
//   gemm_sharded_bf16/foundry/<M>x<N>x<K>/<gpus>           sharded_gemm, C left sharded
//   gemm_sharded_bf16/foundry_gathered/<M>x<N>x<K>/<gpus>  sharded_gemm, C all-gathered
//   reduce_sharded_f32/foundry/<n>/<gpus>                  sharded_reduce (sum) of n floats
//     Counter scaling_efficiency = t1 / (gpus * t), t1 being foundry::gemm (foundry::reduce_sum)
//     of the whole problem on GPU 0, timed in the same process with a plain event loop.
//
// Timing: CUDA events on GPU 0's stream, as every foundry benchmark (bench::measure). Each
// call first makes every other GPU's stream wait on an event recorded on GPU 0's stream,
// enqueues the work on all streams, then makes GPU 0's stream wait on an event recorded on
// each other stream: the stop event on GPU 0 therefore fires after the slowest GPU, and the
// harness's start event (and the spin kernel before it) gates every GPU.
//
// NVLink multicast (NVLS) stays off on the machines this runs on: main sets
// NCCL_NVLS_ENABLE=0 unless the environment already says otherwise.

#include <foundry/algorithms/reduce.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/bench/random.cuh>
#include <foundry/gemm/gemm.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/nccl.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/event.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_bf16.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace {

namespace bench = foundry::bench;
namespace nccl = foundry::nccl;
using foundry::matrix_layout;
using foundry::matrix_op;
using foundry::matrix_view;

// The devices 0..g-1 with their streams, a communicator over them, and the events that
// join their streams to GPU 0's. Built once per GPU count (NCCL's set-up takes about a
// second) and kept until main returns.
struct gpu_group {
  nccl::device_set devices;
  nccl::communicator comm;
  std::vector<foundry::event> done;  // done[i] on device i; done[0] unused
  foundry::event start;              // on device 0, recorded on its stream

  explicit gpu_group(int g) : devices(first(g)), comm(devices), start(on_device_0()) {
    devices.for_each([&](int) { done.emplace_back(foundry::event_timing::disabled); });
  }
  // An event must be recorded on a stream of its own device: made with device 0 current,
  // whichever device the caller had current.
  static foundry::event on_device_0() {
    foundry::device_guard on(0);
    return foundry::event(foundry::event_timing::disabled);
  }
  static std::vector<int> first(int g) {
    std::vector<int> v(static_cast<std::size_t>(g));
    std::iota(v.begin(), v.end(), 0);
    return v;
  }
  int size() const { return devices.size(); }
  cuda::stream_ref lead() const { return devices.stream(0); }

  /// Enqueues `work()` (which uses every device's stream) between a fork from and a join
  /// into GPU 0's stream `s0`.
  template <class Work>
  void fork_join(cuda::stream_ref s0, Work&& work) {
    start.record(s0);
    for (int i = 1; i < size(); ++i) start.make_wait(devices.stream(i));
    work();
    for (int i = 1; i < size(); ++i) {
      foundry::device_guard on(devices.device(i));
      done[static_cast<std::size_t>(i)].record(devices.stream(i));
      done[static_cast<std::size_t>(i)].make_wait(s0);
    }
  }
};

std::map<int, std::unique_ptr<gpu_group>>& groups() {
  static std::map<int, std::unique_ptr<gpu_group>> g;
  return g;
}
gpu_group& group_of(int g) {
  auto& slot = groups()[g];
  if (!slot) slot = std::make_unique<gpu_group>(g);
  return *slot;
}

// Median seconds per call of `enqueue(s)` on GPU 0, hot, taken by the same sampler as the
// sharded rows' `bench::measure` (warm-up, a spin kernel before each sample that hides the
// host's enqueue time and keeps the clocks up, batches of calls): the one-GPU baseline of
// the scaling efficiency. A baseline timed differently is not comparable: ten back-to-back
// calls between two events on an idle GPU read 2^30 floats 10% slower than `measure` did
// (2026-12-04), which made the sharded reduce on one GPU look 1.12x "efficient".
template <class Enqueue>
double one_gpu_seconds(Enqueue&& enqueue) {
  foundry::device_guard on(0);
  foundry::stream s;
  const bench::options opt{};
  const auto stats = bench::detail::take_samples(opt.max_samples, s.view(), enqueue, opt);
  s.synchronize();
  return stats.median_seconds;
}

// Fills in the counters the multi-GPU table reads; t from the harness's TFLOP/s or GB/s.
// Runs `call` once on every GPU of `grp` before it is timed; a call that throws fails the
// row (with the reason) instead of the binary.
template <class Call>
bool first_call_runs(benchmark::State& state, gpu_group& grp, const Call& call) {
  try {
    call();
    grp.devices.synchronize();
    return true;
  } catch (const std::exception& e) {
    bench::expect(state, false, e.what());
    return false;
  }
}

void report_scaling(benchmark::State& state, int gpus, double seconds, double one_gpu) {
  state.counters["gpus"] = gpus;
  if (seconds > 0) state.counters["scaling_efficiency"] = one_gpu / (gpus * seconds);
}

// ---------------------------------------------------------------------------------------

enum class allreduce_impl { plain_nccl, foundry };

void bm_allreduce(benchmark::State& state, allreduce_impl impl, std::size_t bytes, int gpus) {
  gpu_group& grp = group_of(gpus);
  const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(float));
  auto x = grp.devices.allocate<float>(n);
  grp.devices.for_each(
      [&](int i) { foundry::fill(x[static_cast<std::size_t>(i)].span(), 1.0f, grp.devices.stream(i)); });
  const auto data = nccl::spans(x);
  const auto streams = grp.devices.streams();
  const auto call = [&] {
    if (impl == allreduce_impl::foundry) {
      nccl::all_reduce(grp.comm, data, nccl::reduction::sum, streams);
      return;
    }
    // ncclGroupStart/End, the group ended also when a call throws (else every later NCCL
    // call of this thread would stay inside an open group and never launch).
    nccl::group g;
    for (int i = 0; i < gpus; ++i) {
      const auto k = static_cast<std::size_t>(i);
      FOUNDRY_NCCL_TRY(
          ncclAllReduce(x[k].data(), x[k].data(), n, ncclFloat32, ncclSum, grp.comm.get(i), streams[k].get()));
    }
    g.end();
  };
  // Correct before timed: ones summed over the ranks, first and last element of each.
  if (!first_call_runs(state, grp, call)) return;
  for (int i = 0; i < gpus; ++i) {
    float ends[2] = {0, 0};
    foundry::device_guard on(i);
    const auto& xi = x[static_cast<std::size_t>(i)];
    FOUNDRY_CUDA_TRY(cudaMemcpy(&ends[0], xi.data(), sizeof(float), cudaMemcpyDeviceToHost));
    FOUNDRY_CUDA_TRY(cudaMemcpy(&ends[1], xi.data() + n - 1, sizeof(float), cudaMemcpyDeviceToHost));
    if (!bench::expect(state, ends[0] == gpus && ends[1] == gpus,
                       "all-reduce of ones on GPU " + std::to_string(i) + " gave " + std::to_string(ends[0])))
      return;
  }
  // Repeated in place, the values grow to inf; the time does not depend on them.
  bench::measure(state, grp.lead(), {static_cast<double>(bytes), 0.0, 0.0},
                 [&](cuda::stream_ref s0) { grp.fork_join(s0, call); });
  if (state.error_occurred()) return;
  const double algbw = state.counters["GB/s"];
  state.counters["algbw_GB/s"] = algbw;
  state.counters["busbw_GB/s"] = algbw * 2.0 * (gpus - 1) / gpus;
  state.counters["gpus"] = gpus;
}

// ---------------------------------------------------------------------------------------

double one_gpu_gemm_seconds(std::int64_t m, std::int64_t n, std::int64_t k) {
  static std::map<std::int64_t, double> cache;
  const std::int64_t key = (m * 1000003 + n) * 1000003 + k;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  foundry::device_guard on(0);
  foundry::stream s;
  foundry::device_buffer<__nv_bfloat16> a(static_cast<std::size_t>(m * k), s), b(static_cast<std::size_t>(k * n), s);
  foundry::device_buffer<float> c(static_cast<std::size_t>(m * n), s);
  bench::fill_uniform(a.span(), -1.0, 1.0, bench::default_seed, s);
  bench::fill_uniform(b.span(), -1.0, 1.0, bench::default_seed + 1, s);
  const double t = one_gpu_seconds([&](cuda::stream_ref st) {
    foundry::gemm(1.0f, matrix_view<const __nv_bfloat16>{a.data(), m, k, k, matrix_layout::row_major}, matrix_op::none,
                  matrix_view<const __nv_bfloat16>{b.data(), k, n, n, matrix_layout::row_major}, matrix_op::none, 0.0f,
                  matrix_view<float>{c.data(), m, n, n, matrix_layout::row_major}, st);
  });
  s.synchronize();
  return cache[key] = t;
}

void bm_gemm_sharded(benchmark::State& state, nccl::result_placement placement, std::int64_t m, int gpus) {
  const std::int64_t n = m, k = m;
  gpu_group& grp = group_of(gpus);
  std::vector<foundry::device_buffer<__nv_bfloat16>> a, b;
  std::vector<foundry::device_buffer<float>> c;
  std::vector<matrix_view<const __nv_bfloat16>> va, vb;
  std::vector<matrix_view<float>> vc;
  grp.devices.for_each([&](int i) {
    const auto rows = nccl::shard_rows(m, gpus, i);
    const auto s = grp.devices.stream(i);
    const std::int64_t c_rows = placement == nccl::result_placement::gathered ? m : rows.count;
    a.emplace_back(static_cast<std::size_t>(rows.count * k), s);
    b.emplace_back(static_cast<std::size_t>(k * n), s);
    c.emplace_back(static_cast<std::size_t>(c_rows * n), s);
    bench::fill_uniform(a.back().span(), -1.0, 1.0, bench::default_seed + static_cast<std::uint64_t>(i), s);
    bench::fill_uniform(b.back().span(), -1.0, 1.0, bench::default_seed + 100, s);
    va.push_back({a.back().data(), rows.count, k, k, matrix_layout::row_major});
    vb.push_back({b.back().data(), k, n, n, matrix_layout::row_major});
    vc.push_back({c.back().data(), c_rows, n, n, matrix_layout::row_major});
  });
  const auto streams = grp.devices.streams();
  const auto call = [&] { nccl::sharded_gemm(grp.comm, 1.0f, va, vb, matrix_op::none, 0.0f, vc, placement, streams); };
  if (!first_call_runs(state, grp, call)) return;
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  bench::options opt;
  opt.ceiling = bench::flop_ceiling::bf16_tensor;  // one GPU's: pct_of_ceiling above 100 means several GPUs
  bench::measure(
      state, grp.lead(), {2.0 * static_cast<double>(m * k + k * n), 4.0 * static_cast<double>(m * n), flops},
      [&](cuda::stream_ref s0) { grp.fork_join(s0, call); }, opt);
  if (state.error_occurred()) return;
  const double tflops = state.counters["TFLOP/s"];
  report_scaling(state, gpus, tflops > 0 ? flops / (tflops * 1e12) : 0.0, one_gpu_gemm_seconds(m, n, k));
}

// ---------------------------------------------------------------------------------------

double one_gpu_reduce_seconds(std::size_t n) {
  static std::map<std::size_t, double> cache;
  if (auto it = cache.find(n); it != cache.end()) return it->second;
  foundry::device_guard on(0);
  foundry::stream s;
  foundry::device_buffer<float> x(n, s);
  foundry::device_buffer<float> out(1, s);
  bench::fill_uniform(x.span(), -1.0, 1.0, bench::default_seed, s);
  const double t = one_gpu_seconds([&](cuda::stream_ref st) { foundry::reduce_sum(x.span(), out.span(), st); });
  s.synchronize();
  return cache[n] = t;
}

void bm_reduce_sharded(benchmark::State& state, std::size_t n, int gpus) {
  gpu_group& grp = group_of(gpus);
  std::vector<std::size_t> counts;
  for (int i = 0; i < gpus; ++i) {
    counts.push_back(static_cast<std::size_t>(nccl::shard_rows(static_cast<std::int64_t>(n), gpus, i).count));
  }
  auto x = grp.devices.allocate<float>(counts);
  auto total = grp.devices.allocate<float>(1);
  // Correctness is test_nccl's business; here the data only must not be zeros.
  grp.devices.for_each([&](int i) {
    bench::fill_uniform(x[static_cast<std::size_t>(i)].span(), -1.0, 1.0,
                        bench::default_seed + static_cast<std::uint64_t>(i), grp.devices.stream(i));
  });
  const auto in = nccl::const_spans(x);
  const auto out = nccl::spans(total);
  const auto streams = grp.devices.streams();
  const auto call = [&] { nccl::sharded_reduce(grp.comm, in, out, nccl::reduction::sum, streams); };
  if (!first_call_runs(state, grp, call)) return;
  bench::measure(state, grp.lead(), {4.0 * static_cast<double>(n), 0.0, 0.0},
                 [&](cuda::stream_ref s0) { grp.fork_join(s0, call); });
  if (state.error_occurred()) return;
  const double gbps = state.counters["GB/s"];
  report_scaling(state, gpus, gbps > 0 ? 4.0 * static_cast<double>(n) / (gbps * 1e9) : 0.0, one_gpu_reduce_seconds(n));
}

// ---------------------------------------------------------------------------------------

/// 1, 2, 4 and 8 GPUs where the machine has them, and the machine's own count.
std::vector<int> gpu_counts(int available) {
  std::vector<int> v;
  for (const int g : {1, 2, 4, 8}) {
    if (g <= available) v.push_back(g);
  }
  if (available > 0 && std::find(v.begin(), v.end(), available) == v.end()) v.push_back(available);
  return v;
}

void register_benchmarks() {
  int available = 0;
  if (cudaGetDeviceCount(&available) != cudaSuccess) {
    (void)cudaGetLastError();
    available = 0;  // run_main reports the missing GPU
  }
  for (const int g : gpu_counts(available)) {
    // On one rank an in-place all-reduce has nothing to do: NCCL enqueues no work, and the
    // H200 run of 2026-12-04 timed 16-100 ns for 8 B to 1 GiB (an "algbw" of 44 PB/s).
    if (g < 2) continue;
    for (std::size_t bytes = 8; bytes <= (std::size_t{1} << 30); bytes *= 8) {
      const std::string size = std::to_string(bytes) + "/" + std::to_string(g);
      benchmark::RegisterBenchmark(("allreduce/nccl/" + size).c_str(), bm_allreduce, allreduce_impl::plain_nccl, bytes,
                                   g)
          ->Apply(bench::configure);
      benchmark::RegisterBenchmark(("allreduce/foundry/" + size).c_str(), bm_allreduce, allreduce_impl::foundry, bytes,
                                   g)
          ->Apply(bench::configure);
    }
  }
  for (const std::int64_t m : {8192, 16384}) {
    for (const int g : gpu_counts(available)) {
      const std::string shape =
          std::to_string(m) + "x" + std::to_string(m) + "x" + std::to_string(m) + "/" + std::to_string(g);
      benchmark::RegisterBenchmark(("gemm_sharded_bf16/foundry/" + shape).c_str(), bm_gemm_sharded,
                                   nccl::result_placement::sharded, m, g)
          ->Apply(bench::configure);
      benchmark::RegisterBenchmark(("gemm_sharded_bf16/foundry_gathered/" + shape).c_str(), bm_gemm_sharded,
                                   nccl::result_placement::gathered, m, g)
          ->Apply(bench::configure);
    }
  }
  for (const std::size_t n : {std::size_t{1} << 28, std::size_t{1} << 30}) {
    for (const int g : gpu_counts(available)) {
      benchmark::RegisterBenchmark(
          ("reduce_sharded_f32/foundry/" + std::to_string(n) + "/" + std::to_string(g)).c_str(), bm_reduce_sharded, n,
          g)
          ->Apply(bench::configure);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);  // never NVLink multicast on these machines
  register_benchmarks();
  const int rc = foundry::bench::run_main(argc, argv);
  groups().clear();  // communicators destroyed while the CUDA runtime is still up
  return rc;
}
