// cuda_graph: a step of 20 small kernels run 1000 times, launched one by one from a stream,
// then captured once into a CUDA graph and replayed 1000 times; then the graph is given new
// kernel arguments in place with graph_exec::update.
//
//   1. stream   each kernel is a launch call: the host validates and submits it and the
//               driver sends it to the GPU. For a kernel that runs for a microsecond or two,
//               that per-launch CPU cost, not the GPU, sets the pace
//   2. capture  foundry::capture(s, enqueue) records what `enqueue` puts on s into a graph
//               without running it; graph_exec instantiates it (checked and uploaded once)
//   3. replay   graph_exec::launch submits all 20 kernels with one call: the per-kernel CPU
//               cost is paid once at instantiation instead of on every launch
//   4. update   a graph remembers the arguments of its capture. To change them, capture the
//               same calls with the new arguments and update the executable in place (same
//               topology and kernels: much cheaper than instantiating again)
//
// Each kernel adds `amount` to every element in place, so the result counts the kernels
// that ran: after r steps of 20 kernels, v[i] = i + 20 * amount * r, exactly.
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include <foundry/algorithms/transform.cuh>
#include <foundry/foundry.cuh>
#include <foundry/runtime/graph.cuh>

#include <chrono>
#include <cstdio>
#include <exception>
#include <vector>

namespace {

constexpr std::size_t n = 4096;  // small: each kernel lasts about as long as its launch
constexpr int kernels_per_step = 20;
constexpr int steps = 1000;
constexpr int steps_after_update = 10;

struct add_value {
  int amount;
  __host__ __device__ int operator()(int x) const { return x + amount; }
};

// One step: 20 dependent in-place transforms, each adding `amount`.
void enqueue_step(foundry::device_buffer<int>& v, int amount, cuda::stream_ref s) {
  for (int k = 0; k < kernels_per_step; ++k) foundry::transform(v.span(), v.span(), add_value{amount}, s);
}

using milliseconds = std::chrono::duration<double, std::milli>;

// Copies `v` to the host and compares it with i + added; prints the first mismatch.
bool holds(const foundry::device_buffer<int>& v, int added, const char* what, cuda::stream_ref s) {
  std::vector<int> host(n);
  v.copy_to_host(cuda::std::span<int>(host.data(), n), s);
  foundry::synchronize(s);
  for (std::size_t i = 0; i < n; ++i) {
    const int expected = static_cast<int>(i) + added;
    if (host[i] != expected) {
      std::fprintf(stderr, "cuda_graph: %s: v[%zu] is %d, expected %d\n", what, i, host[i], expected);
      return false;
    }
  }
  return true;
}

}  // namespace

int main() {
  if (!foundry::has_device()) {
    std::fprintf(stderr, "cuda_graph: no usable CUDA device: this example needs a GPU\n");
    return 2;
  }
  try {
    foundry::stream s;
    std::vector<int> initial(n);
    for (std::size_t i = 0; i < n; ++i) initial[i] = static_cast<int>(i);
    foundry::device_buffer<int> v_stream(n, s), v_graph(n, s);
    v_stream.copy_from_host(cuda::std::span<const int>(initial.data(), n), s);
    v_graph.copy_from_host(cuda::std::span<const int>(initial.data(), n), s);
    foundry::gpu_timer timer(s);

    // 1. Stream launches: one untimed warm-up step (loads the kernel), then 1000 timed steps.
    enqueue_step(v_stream, 1, s);
    s.synchronize();
    timer.start();
    for (int r = 0; r < steps; ++r) enqueue_step(v_stream, 1, s);
    timer.stop();
    const double stream_ms = timer.elapsed_ms();

    // 2. Capture once and instantiate: a one-off cost, timed on the host.
    auto t0 = std::chrono::steady_clock::now();
    const foundry::graph g = foundry::capture(s, [&](cuda::stream_ref cs) { enqueue_step(v_graph, 1, cs); });
    foundry::graph_exec exec(g);
    const milliseconds build_ms = std::chrono::steady_clock::now() - t0;

    // 3. Replay: one untimed warm-up launch, as above, then 1000 timed ones.
    exec.launch(s);
    s.synchronize();
    timer.start();
    for (int r = 0; r < steps; ++r) exec.launch(s);
    timer.stop();
    const double graph_ms = timer.elapsed_ms();

    const double per_kernel = 1e3 / (double(steps) * kernels_per_step);  // ms per run -> us per kernel
    std::printf("cuda_graph: %d steps of %d transforms over %zu ints\n\n", steps, kernels_per_step, n);
    std::printf("%-28s %10s %16s\n", "launched", "total ms", "us per kernel");
    std::printf("%-28s %10.2f %16.2f\n", "one by one from a stream", stream_ms, stream_ms * per_kernel);
    std::printf("%-28s %10.2f %16.2f\n", "as a graph, replayed", graph_ms, graph_ms * per_kernel);
    std::printf("\ngraph: %.2fx faster per kernel; capture + instantiate took %.2f ms once\n", stream_ms / graph_ms,
                build_ms.count());

    // Both ways ran the same kernels the same number of times (the warm-up step included).
    const int added = kernels_per_step * (steps + 1);
    if (!holds(v_stream, added, "stream launches", s) || !holds(v_graph, added, "graph replays", s)) return 1;

    // 4. Update: the same step with amount 2, captured (not run) and given to the executable.
    t0 = std::chrono::steady_clock::now();
    const foundry::graph g2 = foundry::capture(s, [&](cuda::stream_ref cs) { enqueue_step(v_graph, 2, cs); });
    const foundry::graph_update_result result = exec.update(g2);
    const milliseconds update_ms = std::chrono::steady_clock::now() - t0;
    if (result != foundry::graph_update_result::updated) {
      std::fprintf(stderr, "cuda_graph: update of a graph with the same topology needs reinstantiation\n");
      return 1;
    }
    for (int r = 0; r < steps_after_update; ++r) exec.launch(s);
    if (!holds(v_graph, added + kernels_per_step * 2 * steps_after_update, "replays after update", s)) return 1;
    std::printf("update: capture + update took %.2f ms; %d replays then added 2 per kernel, as captured\n",
                update_ms.count(), steps_after_update);
    std::printf("stream launches and graph replays gave identical, correct results\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "cuda_graph: %s\n", e.what());
    return 3;
  }
}
