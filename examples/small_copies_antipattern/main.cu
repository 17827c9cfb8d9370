// small_copies_antipattern: 10,000 tiny round trips against the same work done in one batch.
//
//   anti-pattern  for each of 10,000 values: copy 4 bytes in, launch a kernel in which one
//                 thread has work, copy 4 bytes back, synchronise. Every step pays a fixed
//                 cost that has nothing to do with 4 bytes: a copy's setup and completion
//                 (microseconds of driver and DMA latency), a kernel launch (a few us), and a
//                 synchronisation, which idles the GPU while the host wakes up and enqueues
//                 the next step. The GPU spends nearly all of its time waiting.
//   batched       one 40 KB copy in, one launch over 10,000 elements, one copy back, one
//                 synchronisation: the fixed costs are paid once.
//
// The fix in real code: gather small values into one buffer (or keep them on the device),
// and synchronise only when the host needs the answer.
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include <foundry/foundry.cuh>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>

namespace {

constexpr std::size_t count = 10'000;
constexpr int batched_repetitions = 5;  // a batch takes microseconds: best of 5 tames the noise

__host__ __device__ inline std::uint32_t step(std::uint32_t x) { return x * 2654435761u + 12345u; }

__global__ void step_kernel(const std::uint32_t* in, std::uint32_t* out, std::size_t n) {
  for (auto i : foundry::grid_stride_range(n)) out[i] = step(in[i]);
}

using milliseconds = std::chrono::duration<double, std::milli>;

}  // namespace

int main() {
  if (!foundry::has_device()) {
    std::fprintf(stderr, "small_copies_antipattern: no usable CUDA device: this example needs a GPU\n");
    return 2;
  }
  try {
    foundry::stream s;
    foundry::pinned_buffer<std::uint32_t> in(count), out_small(count), out_batched(count);
    foundry::device_buffer<std::uint32_t> d_in(count, s), d_out(count, s);
    for (std::size_t i = 0; i < count; ++i) in[i] = static_cast<std::uint32_t>(i) ^ 0xabcdu;
    std::fill(out_small.begin(), out_small.end(), 0u);
    std::fill(out_batched.begin(), out_batched.end(), 0u);

    // One element's round trip. foundry::launch needs whole warps, so "one thread" is a
    // one-warp block in which only thread 0 has an element.
    const auto one_config = foundry::make_launch_config_1d(1, 32);
    const auto round_trip = [&](std::size_t i) {
      foundry::copy(d_in.span().subspan(i, 1), in.span().subspan(i, 1), s);
      foundry::launch(s, one_config, step_kernel, d_in.data() + i, d_out.data() + i, std::size_t{1});
      foundry::copy(out_small.span().subspan(i, 1), d_out.span().subspan(i, 1), s);
      s.synchronize();
    };
    round_trip(0);  // warm-up: loads the kernel, wakes the copy engines

    // 1. The anti-pattern: 10,000 synchronous round trips, timed on the host (each blocks it).
    auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < count; ++i) round_trip(i);
    const milliseconds small_ms = std::chrono::steady_clock::now() - t0;

    // 2. The same work batched: one copy, one launch, one copy, one synchronisation.
    foundry::fill(d_out.span(), 0u, s);  // so that the batch cannot pass on the loop's results
    double batched_ms = std::numeric_limits<double>::infinity();
    for (int r = 0; r < batched_repetitions; ++r) {
      s.synchronize();
      t0 = std::chrono::steady_clock::now();
      d_in.copy_from_host(in.span(), s);
      foundry::launch(s, foundry::make_launch_config_1d(count, 256), step_kernel, d_in.data(), d_out.data(), count);
      d_out.copy_to_host(out_batched.span(), s);
      s.synchronize();
      batched_ms = std::min(batched_ms, milliseconds(std::chrono::steady_clock::now() - t0).count());
    }

    std::printf("small_copies_antipattern: %zu values, each copied in, computed and copied back\n\n", count);
    std::printf("%-36s %12s %16s\n", "schedule", "total ms", "us per value");
    std::printf("%-36s %12.2f %16.3f\n", "10,000 round trips (4 B each way)", small_ms.count(),
                1e3 * small_ms.count() / count);
    std::printf("%-36s %12.3f %16.5f\n", "1 batched round trip (40 KB)", batched_ms, 1e3 * batched_ms / count);
    std::printf("\nthe round trips take %.0fx as long as the batch\n", small_ms.count() / batched_ms);

    // Check: both ways computed step() of every input.
    for (std::size_t i = 0; i < count; ++i) {
      if (out_small[i] != step(in[i]) || out_batched[i] != step(in[i])) {
        std::fprintf(stderr, "small_copies_antipattern: value %zu: round trips gave %u, batch %u, expected %u\n", i,
                     out_small[i], out_batched[i], step(in[i]));
        return 1;
      }
    }
    std::printf("both ways computed all %zu values correctly\n", count);
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "small_copies_antipattern: %s\n", e.what());
    return 3;
  }
}
