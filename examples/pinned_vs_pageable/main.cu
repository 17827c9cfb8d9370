// pinned_vs_pageable: the same 256 MiB copied to the GPU and back, from ordinary (pageable)
// host memory and from page-locked (pinned) host memory, timed and checked.
//
//   1. allocate: std::vector (pageable) and foundry::pinned_buffer (cudaMallocHost, pinned)
//   2. copy host -> device and device -> host from each, timed with CUDA events
//   3. print GB/s per direction and the pinned/pageable ratio
//   4. check that each round trip brought back exactly what was sent
//
// Why pageable memory is slower. The copy engines move data by DMA, which reads physical
// pages that must stay put for the whole transfer; the OS may move or swap out a pageable
// page at any time. So the driver cannot DMA from a std::vector: it copies it, chunk by
// chunk, into a pinned staging buffer of its own (a host memcpy on one CPU thread) and
// DMAs from there. That extra pass costs bandwidth, and it makes the "asynchronous" copy
// synchronous: cudaMemcpyAsync from pageable memory returns only once the data is staged
// (and to pageable memory only once it has arrived), so nothing overlaps it: not the host,
// not a kernel, not a copy in the other direction. From pinned memory the engine reads
// the caller's pages directly, at the link's full rate, and the call returns at once.
//
// Why not pin everything. Pinned pages can never be swapped out: every pinned byte is
// physical RAM taken from the OS and every other process, and pinning gigabytes can make
// the whole machine page. cudaMallocHost is also slow (the pages are locked and mapped for
// the GPU), so pin the buffers that stream data to and from the GPU, allocate them once
// and reuse them (cudaHostRegister pins memory that already exists).
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include <foundry/foundry.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <vector>

namespace {

constexpr std::size_t n = std::size_t{64} << 20;  // 64 Mi 4-byte words: 256 MiB each way
constexpr std::size_t bytes = n * sizeof(std::uint32_t);
constexpr int repetitions = 3;  // best of 3, after one untimed warm-up copy

// A pattern that differs per buffer (seed), so that a stale copy cannot pass the check.
std::uint32_t pattern(std::size_t i, std::uint32_t seed) { return static_cast<std::uint32_t>(i) * 2654435761u ^ seed; }

// Best time in ms of `enqueue_copy()` over `repetitions` runs, timed with events on `s`.
// Events measure on the GPU's clock, from the moment the stream reaches the start event
// (before the copy call, so a pageable copy's staging is included) to the copy's end.
template <class F>
double best_copy_ms(cuda::stream_ref s, F&& enqueue_copy) {
  foundry::gpu_timer timer(s);
  double best = std::numeric_limits<double>::infinity();
  for (int r = -1; r < repetitions; ++r) {  // r == -1: warm-up
    timer.start();
    enqueue_copy();
    timer.stop();
    const double ms = timer.elapsed_ms();
    if (r >= 0) best = std::min(best, ms);
  }
  return best;
}

double gb_per_s(double ms) { return static_cast<double>(bytes) / (ms * 1e-3) / 1e9; }

}  // namespace

int main() {
  if (!foundry::has_device()) {
    std::fprintf(stderr, "pinned_vs_pageable: no usable CUDA device: this example needs a GPU\n");
    return 2;
  }
  try {
    foundry::stream s;
    foundry::device_buffer<std::uint32_t> d(n, s);

    // 1. Allocate. std::vector value-initialises its elements, which touches every page
    //    now: the timings below do not include the OS's first-touch page faults.
    std::vector<std::uint32_t> pageable(n), pageable_back(n);
    foundry::pinned_buffer<std::uint32_t> pinned(n), pinned_back(n);
    for (std::size_t i = 0; i < n; ++i) {
      pageable[i] = pattern(i, 0x5eed0001u);
      pinned[i] = pattern(i, 0x5eed0002u);
    }
    std::fill(pinned_back.begin(), pinned_back.end(), 0u);

    const cuda::std::span<const std::uint32_t> pageable_in(pageable.data(), n);
    const cuda::std::span<std::uint32_t> pageable_out(pageable_back.data(), n);

    // 2. Copy each way, pageable first. The device buffer ends up holding the pageable
    //    data, then the pinned data, so each copy back really returns the last copy in.
    const double pageable_h2d = best_copy_ms(s, [&] { d.copy_from_host(pageable_in, s); });
    const double pageable_d2h = best_copy_ms(s, [&] { d.copy_to_host(pageable_out, s); });
    const double pinned_h2d = best_copy_ms(s, [&] { d.copy_from_host(pinned.span(), s); });
    const double pinned_d2h = best_copy_ms(s, [&] { d.copy_to_host(pinned_back.span(), s); });
    s.synchronize();

    // 3. Report.
    std::printf("pinned_vs_pageable: %zu MiB each way, best of %d\n\n", bytes >> 20, repetitions);
    std::printf("%-16s %14s %14s %17s\n", "direction", "pageable GB/s", "pinned GB/s", "pinned/pageable");
    std::printf("%-16s %14.1f %14.1f %16.1fx\n", "host -> device", gb_per_s(pageable_h2d), gb_per_s(pinned_h2d),
                pageable_h2d / pinned_h2d);
    std::printf("%-16s %14.1f %14.1f %16.1fx\n", "device -> host", gb_per_s(pageable_d2h), gb_per_s(pinned_d2h),
                pageable_d2h / pinned_d2h);

    // 4. Check both round trips, byte for byte.
    if (std::memcmp(pageable.data(), pageable_back.data(), bytes) != 0) {
      std::fprintf(stderr, "pinned_vs_pageable: the pageable round trip changed the data\n");
      return 1;
    }
    if (std::memcmp(pinned.data(), pinned_back.data(), bytes) != 0) {
      std::fprintf(stderr, "pinned_vs_pageable: the pinned round trip changed the data\n");
      return 1;
    }
    std::printf("\nboth round trips returned the data unchanged\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "pinned_vs_pageable: %s\n", e.what());
    return 3;
  }
}
