// stream_overlap: a 256 MiB pinned array processed in 16 chunks (copy in, kernel, copy out),
// first on one stream, then over 4 streams, with the overlap measured from CUDA events.
//
//   1. serial: every chunk's copy in, kernel and copy out on one stream, so each waits for
//      the one before: the copy engines idle while the kernel runs, and the SMs during copies
//   2. overlapped: chunk c on stream c % 4, each stream with its own device buffers. Work on
//      different streams may run at once, so chunk c+1's copy in (H2D engine) and chunk c-1's
//      copy out (D2H engine) run beside chunk c's kernel. This needs pinned host memory: a copy
//      from pageable memory is staged by the CPU and serialises everything (pinned_vs_pageable)
//   3. proof: events before and after each stage give its interval on the GPU's clock,
//      relative to one start event; the time a copy shared with a kernel on another stream is
//      the copy time that overlapped
//   4. the library way: foundry::stream_pipeline does step 2 in a few lines; same output
//
// NVTX ranges name each schedule and stage, for Nsight Systems (README.md).
//
// Exit codes: 0 success, 1 wrong result, 2 no usable GPU, 3 any other error.
#include <foundry/foundry.cuh>
#include <foundry/memory/pipeline.cuh>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

namespace {

constexpr std::size_t chunk_elements = std::size_t{4} << 20;  // 16 MiB of floats
constexpr std::size_t chunk_count = 16;
constexpr std::size_t n = chunk_elements * chunk_count;  // 256 MiB
constexpr std::size_t stream_count = 4;
// FMAs per element: by arithmetic (not measured), enough that a chunk's kernel takes about
// as long as one of its copies on the H200 (16 MiB at ~55 GB/s: 0.3 ms), so both can hide.
constexpr int kernel_iterations = 2048;

// Deterministic, and the same on the host (fmaf rounds once on both): a spot check of the
// GPU's result, and serial and overlapped runs must agree bit for bit.
__host__ __device__ inline float polish(float x) {
  for (int k = 0; k < kernel_iterations; ++k) x = fmaf(x, 0.999f, 0.001f);
  return x;
}

__global__ void polish_kernel(const float* in, float* out, std::size_t count) {
  for (auto i : foundry::grid_stride_range(count)) out[i] = polish(in[i]);
}

// One chunk's work: the kernel over a device span, on stream s.
void enqueue_polish(cuda::std::span<const float> x, cuda::std::span<float> y, cuda::stream_ref s) {
  foundry::launch(s, foundry::make_launch_config_1d(x.size(), 256), polish_kernel, x.data(), y.data(), x.size());
}

// Per stream ("lane"): the stream and its own device buffers for one chunk each way.
struct lanes {
  std::vector<foundry::stream> streams;  // declared first: destroyed after the buffers freed on them
  std::vector<foundry::device_buffer<float>> in, out;
  lanes() : streams(stream_count) {
    for (const foundry::stream& s : streams) {
      in.emplace_back(chunk_elements, s);
      out.emplace_back(chunk_elements, s);
    }
  }
};

struct chunk_events {
  foundry::event copy_in_start, copy_in_end, kernel_end, copy_out_end;
};
struct interval {
  double begin, end;  // ms after the common start event
  std::size_t lane;   // stream
};

// A copy engine runs one copy of a direction at a time: a copy whose start event fired while
// another stream's copy held the engine really started when that copy ended.
void clip_to_engine(std::vector<interval>& copies) {
  std::sort(copies.begin(), copies.end(), [](const interval& a, const interval& b) { return a.end < b.end; });
  for (std::size_t i = 1; i < copies.size(); ++i) copies[i].begin = std::max(copies[i].begin, copies[i - 1].end);
}

// Length of `c` during which at least one kernel of another stream ran.
double overlapped_ms(const interval& c, const std::vector<interval>& kernels) {
  std::vector<interval> parts;
  for (const interval& k : kernels)
    if (k.lane != c.lane && std::max(c.begin, k.begin) < std::min(c.end, k.end))
      parts.push_back({std::max(c.begin, k.begin), std::min(c.end, k.end), k.lane});
  std::sort(parts.begin(), parts.end(), [](const interval& a, const interval& b) { return a.begin < b.begin; });
  double total = 0.0, reach = c.begin;
  for (const interval& p : parts) {
    if (p.end > std::max(p.begin, reach)) total += p.end - std::max(p.begin, reach);
    reach = std::max(reach, p.end);
  }
  return total;
}

struct timeline {
  double total_ms = 0, copy_ms = 0, overlapped_copy_ms = 0;
};

// Runs all chunks over the first `used` lanes (chunk c on lane c % used) and measures.
timeline run(std::size_t used, const char* name, lanes& l, const foundry::pinned_buffer<float>& in,
             foundry::pinned_buffer<float>& out) {
  foundry::nvtx_range range{name};
  std::vector<chunk_events> ev(chunk_count);
  foundry::event start;
  start.record(l.streams[0]);
  for (std::size_t k = 1; k < used; ++k) start.make_wait(l.streams[k]);  // nothing starts before `start`
  for (std::size_t c = 0; c < chunk_count; ++c) {
    const std::size_t k = c % used, offset = c * chunk_elements;
    const cuda::stream_ref s = l.streams[k];
    ev[c].copy_in_start.record(s);
    {
      foundry::nvtx_range r{"copy in"};
      l.in[k].copy_from_host(in.span().subspan(offset, chunk_elements), s);
    }
    ev[c].copy_in_end.record(s);
    {
      foundry::nvtx_range r{"kernel"};
      enqueue_polish(l.in[k].span(), l.out[k].span(), s);
    }
    ev[c].kernel_end.record(s);
    {
      foundry::nvtx_range r{"copy out"};
      l.out[k].copy_to_host(out.span().subspan(offset, chunk_elements), s);
    }
    ev[c].copy_out_end.record(s);
  }
  std::vector<interval> h2d, d2h, kernels;
  timeline t;
  // Intervals in ms after `start` (elapsed_ms waits for each event). A kernel's runs from the
  // end of its copy in, when its stream reaches it, to its end event.
  for (std::size_t c = 0; c < chunk_count; ++c) {
    const auto at = [&](const foundry::event& e) { return double(foundry::elapsed_ms(start, e)); };
    h2d.push_back({at(ev[c].copy_in_start), at(ev[c].copy_in_end), c % used});
    kernels.push_back({at(ev[c].copy_in_end), at(ev[c].kernel_end), c % used});
    d2h.push_back({at(ev[c].kernel_end), at(ev[c].copy_out_end), c % used});
    t.total_ms = std::max(t.total_ms, at(ev[c].copy_out_end));
  }
  clip_to_engine(h2d);
  clip_to_engine(d2h);
  for (const auto* copies : {&h2d, &d2h})
    for (const interval& c : *copies) {
      t.copy_ms += c.end - c.begin;
      t.overlapped_copy_ms += overlapped_ms(c, kernels);
    }
  return t;
}

}  // namespace

int main() {
  if (!foundry::has_device()) {
    std::fprintf(stderr, "stream_overlap: no usable CUDA device: this example needs a GPU\n");
    return 2;
  }
  try {
    lanes l;
    foundry::pinned_buffer<float> in(n), serial(n), overlapped(n), piped(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i % 1000) / 1000.0f;
    for (auto* out : {&serial, &overlapped, &piped}) std::fill(out->begin(), out->end(), -1.0f);  // not polish()
    foundry::launch(l.streams[0], foundry::make_launch_config_1d(chunk_elements, 256), polish_kernel, l.in[0].data(),
                    l.out[0].data(), std::size_t{0});  // warm-up: loads the kernel (0 elements: it reads nothing)
    foundry::synchronize(l.streams[0]);

    const timeline one = run(1, "serial, 1 stream", l, in, serial);
    const timeline four = run(stream_count, "overlapped, 4 streams", l, in, overlapped);

    // The library way: the same chunks over 4 lanes of its own, the same work per chunk.
    foundry::stream_pipeline<float> pipeline(chunk_elements, stream_count);
    const auto t0 = std::chrono::steady_clock::now();
    {
      foundry::nvtx_range range{"stream_pipeline"};
      pipeline.run(in.span(), piped.span(), enqueue_polish);  // synchronous: returns with `piped` on the host
    }
    const std::chrono::duration<double, std::milli> piped_ms = std::chrono::steady_clock::now() - t0;

    std::printf("stream_overlap: %zu MiB in %zu chunks, copy in + kernel + copy out\n\n", (n * sizeof(float)) >> 20,
                chunk_count);
    std::printf("%-24s %10s %14s %24s\n", "schedule", "total ms", "copy busy ms", "copy time under a kernel");
    for (const auto& [name, t] : {std::pair{"serial, 1 stream", one}, std::pair{"overlapped, 4 streams", four}})
      std::printf("%-24s %10.2f %14.2f %15.2f ms (%3.0f%%)\n", name, t.total_ms, t.copy_ms, t.overlapped_copy_ms,
                  100.0 * t.overlapped_copy_ms / t.copy_ms);
    std::printf("%-24s %10.2f   (host clock, synchronous call)\n", "stream_pipeline, 4 lanes", piped_ms.count());
    std::printf("\nspeedup of 4 streams over 1: %.2fx\n", one.total_ms / four.total_ms);

    // Checks: spot values against the host, then every element against the serial run.
    for (std::size_t i = 0; i < n; i += 65537)
      if (serial[i] != polish(in[i])) {
        std::fprintf(stderr, "stream_overlap: serial[%zu] is %.9g, expected %.9g\n", i, serial[i], polish(in[i]));
        return 1;
      }
    if (std::memcmp(serial.data(), overlapped.data(), n * sizeof(float)) != 0 ||
        std::memcmp(serial.data(), piped.data(), n * sizeof(float)) != 0) {
      std::fprintf(stderr, "stream_overlap: the overlapped or pipelined output differs from the serial one\n");
      return 1;
    }
    std::printf("serial, overlapped and pipelined outputs are identical\n");
    return 0;
  } catch (const std::exception& e) {  // foundry::cuda_error, std::invalid_argument, std::bad_alloc
    std::fprintf(stderr, "stream_overlap: %s\n", e.what());
    return 3;
  }
}
