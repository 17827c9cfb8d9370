#pragma once
// What every example of the pattern tour shares (docs/guide.md): the command line, the
// timing rule, the result table and the CPU comparison. Not an example itself: the
// folder has no main.cu, so examples/CMakeLists.txt builds nothing from it.
#include <foundry/foundry.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace tour {

/// `--small`: sizes cut so that a compute-sanitizer run takes seconds. `--fault`: the
/// debugging example's deliberate bug.
struct options {
  bool small = false;
  bool fault = false;
};

inline options parse_options(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    o.small |= std::strcmp(argv[i], "--small") == 0;
    o.fault |= std::strcmp(argv[i], "--fault") == 0;
  }
  return o;
}

/// The examples' contract: exit 2 with one line when there is no GPU to run on.
inline bool has_gpu(const char* example) {
  if (foundry::has_device()) return true;
  std::fprintf(stderr, "%s: no usable CUDA device: this example needs a GPU\n", example);
  return false;
}

// [snippet:median_ms]
/// GPU time of `enqueue(s)`: one untimed warm-up run (it loads the module and warms the
/// L2 and TLBs), then `runs` runs each timed by CUDA events; the median, so that one run
/// slowed by a clock change does not move the figure.
template <class Enqueue>
double median_ms(cuda::stream_ref s, Enqueue&& enqueue, int runs = 9) {
  enqueue(s);
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    foundry::gpu_timer timer(s);
    timer.start();
    enqueue(s);
    timer.stop();
    ms.push_back(timer.elapsed_ms());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
// [/snippet]

/// One line of a table: `amount` is the work of one run (bytes or operations), turned
/// into a rate; `metric` is the figure that explains the difference.
struct row {
  std::string variant;
  double ms = 0;
  double amount = 0;
  std::string metric;
};

/// Prints the rows, the speed-up of each over the first (the slow variant).
inline void print_table(const char* title, const char* rate_unit, const char* metric_name,
                        const std::vector<row>& rows) {
  std::printf("\n%s\n", title);
  std::printf("| %-34s | %9s | %10s | %8s | %s\n", "variant", "ms", rate_unit, "speed-up", metric_name);
  for (const row& r : rows)
    std::printf("| %-34s | %9.4f | %10.1f | %7.2fx | %s\n", r.variant.c_str(), r.ms, r.amount / (r.ms * 1e6),
                rows.front().ms / r.ms, r.metric.c_str());
}

/// Compares a variant's output with the CPU's: |got - want| <= tolerance * max(1, |want|).
/// Prints the first mismatch and returns false on any.
template <class T>
bool matches(const char* example, const std::string& variant, const std::vector<T>& got, const std::vector<T>& want,
             double tolerance = 0.0) {
  if (got.size() != want.size()) {
    std::fprintf(stderr, "%s: %s: %zu results, expected %zu\n", example, variant.c_str(), got.size(), want.size());
    return false;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want[i]);
    if (!(std::fabs(g - w) <= tolerance * std::max(1.0, std::fabs(w)))) {
      std::fprintf(stderr, "%s: %s: element %zu is %.9g, expected %.9g\n", example, variant.c_str(), i, g, w);
      return false;
    }
  }
  return true;
}

/// As `matches`, for outputs too costly to recompute in full on the CPU: checks every
/// `step`-th element and the last one against `want(i)`.
template <class T, class Want>
bool matches_every(const char* example, const std::string& variant, const std::vector<T>& got, std::size_t step,
                   Want&& want, double tolerance = 0.0) {
  const std::size_t n = got.size();
  for (std::size_t i = 0; i < n; i = (i + 1 == n) ? n : std::min(i + step, n - 1)) {
    const double g = static_cast<double>(got[i]), w = static_cast<double>(want(i));
    if (!(std::fabs(g - w) <= tolerance * std::max(1.0, std::fabs(w)))) {
      std::fprintf(stderr, "%s: %s: element %zu is %.9g, expected %.9g\n", example, variant.c_str(), i, g, w);
      return false;
    }
  }
  return true;
}

/// A device copy of a host vector, allocated and copied on `s` (asynchronous).
template <class T>
foundry::device_buffer<T> to_device(const std::vector<T>& h, const foundry::stream& s) {
  foundry::device_buffer<T> d(h.size(), s);
  d.copy_from_host(cuda::std::span<const T>(h.data(), h.size()), s);
  return d;
}

/// Copies a device buffer to a new host vector (synchronises `s`).
template <class T>
std::vector<T> to_host(const foundry::device_buffer<T>& d, cuda::stream_ref s) {
  std::vector<T> h(d.size());
  d.copy_to_host(cuda::std::span<T>(h.data(), h.size()), s);
  foundry::synchronize(s);
  return h;
}

/// Theoretical occupancy of `kernel` with `block_threads` threads: resident warps per SM
/// over the SM's maximum, from the occupancy API (registers, shared memory, block limits).
template <class Kernel>
double theoretical_occupancy(Kernel kernel, int block_threads, std::size_t dynamic_shared_bytes = 0) {
  int blocks = 0;
  FOUNDRY_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block_threads, dynamic_shared_bytes));
  const foundry::device_properties& p = foundry::get_device_properties();
  return static_cast<double>(blocks * block_threads) / p.max_threads_per_sm;
}

}  // namespace tour
