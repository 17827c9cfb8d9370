// unified_memory_prefetch: one managed (unified) buffer written by the host and read by a
// kernel, three ways, each timed and checked.
//
//   (a) on demand   the kernel touches pages that live on the host; each touch faults, the
//                   driver migrates the page (a few at a time) and the warp waits: the kernel
//                   runs at the speed of the fault handler, not of HBM
//   (b) prefetch    prefetch_to_device(device, stream) migrates every page in bulk before the
//                   kernel, on the stream (so it could overlap other work); the kernel then
//                   runs at full speed. The migration still costs: it is timed separately
//   (c) read_mostly advise(memory_advice::read_mostly, device) on a read-only input, then
//                   prefetch: the device gets a read-only *copy* of each page and the host
//                   keeps its own, so the host can read the input afterwards without moving
//                   it back. A write by either side drops the other copies
//
// Before each run the host rewrites every element (new values per run), which brings all
// pages back to the host: each run starts from the same place, and the output check
// proves that the kernel read this run's data. After each kernel the host reads the input
// once more: in (a) and (b) the pages migrated to the GPU and fault back; in (c) they did not.
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU (or one without on-demand paging),
// 3 any other error.
#include <foundry/foundry.cuh>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

namespace {

constexpr std::size_t n = std::size_t{32} << 20;  // 32 Mi floats: 128 MiB of managed input

enum class mode { on_demand, prefetch, read_mostly };
constexpr const char* names[] = {"(a) on demand", "(b) prefetch_to_device", "(c) read_mostly + prefetch"};

// Small integers: exact in float, and 2x + 1 is exact too (with or without an FMA).
float input_value(std::size_t i, int run) { return static_cast<float>((i + 7 * static_cast<std::size_t>(run)) % 4096); }

__global__ void twice_plus_one(const float* in, float* out, std::size_t count) {
  for (auto i : foundry::grid_stride_range(count)) out[i] = 2.0f * in[i] + 1.0f;
}

}  // namespace

int main() {
  if (!foundry::has_device()) {
    std::fprintf(stderr, "unified_memory_prefetch: no usable CUDA device: this example needs a GPU\n");
    return 2;
  }
  try {
    const int device = foundry::current_device();
    int concurrent = 0;
    FOUNDRY_CUDA_TRY(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, device));
    if (concurrent == 0) {  // Windows, or an old GPU: pages cannot migrate on demand
      std::fprintf(stderr,
                   "unified_memory_prefetch: device %d has no concurrent managed access "
                   "(on-demand page migration): this example needs it\n",
                   device);
      return 2;
    }
    foundry::stream s;
    foundry::managed_buffer<float> in(n);
    foundry::device_buffer<float> out(n, s);  // plain device memory: only the input migrates
    std::vector<float> host_out(n);
    const auto config = foundry::make_launch_config_1d(n, 256);
    foundry::fill(out.span(), 0.0f, s);
    foundry::launch(s, config, twice_plus_one, out.data(), out.data(), n);  // warm-up: loads the kernel

    std::printf("unified_memory_prefetch: %zu MiB of managed input, read once by a kernel\n\n",
                (n * sizeof(float)) >> 20);
    std::printf("%-28s %12s %11s %18s\n", "run", "prefetch ms", "kernel ms", "host re-read ms");
    for (int run = 0; run < 3; ++run) {
      const auto m = static_cast<mode>(run);
      s.synchronize();  // the GPU is done with the buffer before the host writes it
      for (std::size_t i = 0; i < n; ++i) in[i] = input_value(i, run);  // pages now on the host

      foundry::event start, prefetched, done;
      start.record(s);
      if (m == mode::read_mostly) in.advise(foundry::memory_advice::read_mostly, device);
      if (m != mode::on_demand) in.prefetch_to_device(device, s);
      prefetched.record(s);
      foundry::launch(s, config, twice_plus_one, in.data(), out.data(), n);
      done.record(s);
      const double prefetch_ms = foundry::elapsed_ms(start, prefetched);
      const double kernel_ms = foundry::elapsed_ms(prefetched, done);

      // The host reads the input again (the kernel has finished: elapsed_ms waited for it).
      const auto t0 = std::chrono::steady_clock::now();
      double sum = 0.0;
      for (std::size_t i = 0; i < n; ++i) sum += in[i];
      const std::chrono::duration<double, std::milli> reread_ms = std::chrono::steady_clock::now() - t0;

      if (m == mode::on_demand) {
        std::printf("%-28s %12s %11.2f %18.2f\n", names[run], "-", kernel_ms, reread_ms.count());
      } else {
        std::printf("%-28s %12.2f %11.2f %18.2f\n", names[run], prefetch_ms, kernel_ms, reread_ms.count());
      }

      // Check: the kernel saw this run's values, and so did the host's re-read.
      out.copy_to_host(cuda::std::span<float>(host_out.data(), n), s);
      s.synchronize();
      double expected_sum = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        const float x = input_value(i, run);
        expected_sum += x;
        if (host_out[i] != 2.0f * x + 1.0f) {
          std::fprintf(stderr, "unified_memory_prefetch: %s: out[%zu] is %g, expected %g\n", names[run], i, host_out[i],
                       2.0f * x + 1.0f);
          return 1;
        }
      }
      if (sum != expected_sum) {  // integers below 2^53: the double sums are exact
        std::fprintf(stderr, "unified_memory_prefetch: %s: the host re-read summed to %.0f, expected %.0f\n",
                     names[run], sum, expected_sum);
        return 1;
      }
    }
    std::printf("\nall three runs computed 2x + 1 correctly\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "unified_memory_prefetch: %s\n", e.what());
    return 3;
  }
}
