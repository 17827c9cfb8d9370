#pragma once
/// \file
/// Cold-cache support: evicts the benchmark's data from the L2 before a timed call.
///
/// The flush *reads* a buffer twice the L2's size. Reading leaves the L2 full of clean
/// lines, so the timed call neither hits its own data nor pays to write back someone
/// else's dirty lines (a flush that writes, such as a memset, leaves up to a whole L2 of
/// dirty lines whose write-back would land inside the timed region).

#include <foundry/core/error.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/runtime/device.cuh>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>

namespace foundry::bench {

namespace detail {
template <int = 0>
__global__ void l2_flush_kernel(const uint4* data, std::size_t n, unsigned* sink) {
  unsigned folded = 0;
  for (auto i : grid_stride_range(n)) {
    const uint4 v = data[i];
    folded ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  // The buffer holds zeros, so this never stores; the compiler cannot know, so the loads stay.
  if (folded == 0x9E3779B9u) *sink = folded;
}
}  // namespace detail

/// A device buffer of twice `l2_bytes` on the current device, zeroed once, and the kernel
/// that reads it. Not copyable; owns its memory (`cudaMalloc`, so any stream of that
/// device may use it).
class l2_flush {
 public:
  /// Allocates and zeroes the buffer (synchronous). Throws `cuda_error` on failure.
  explicit l2_flush(std::size_t l2_bytes)
      : words_(std::max<std::size_t>(2 * l2_bytes, 1 << 20) / sizeof(uint4)), device_(current_device()) {
    FOUNDRY_CUDA_TRY(cudaMalloc(&data_, words_ * sizeof(uint4) + sizeof(uint4)));
    try {
      FOUNDRY_CUDA_TRY(cudaMemset(data_, 0, words_ * sizeof(uint4) + sizeof(uint4)));
      // cudaMemset may return before it runs, and the benchmarks' non-blocking streams do not
      // wait for the legacy stream: finish it here.
      FOUNDRY_CUDA_TRY(cudaDeviceSynchronize());
    } catch (...) {
      FOUNDRY_CUDA_REPORT(cudaFree(data_));  // the destructor of a half-built object does not run
      throw;
    }
  }
  ~l2_flush() {
    if (data_ != nullptr) FOUNDRY_CUDA_REPORT(cudaFree(data_));
  }
  l2_flush(const l2_flush&) = delete;
  l2_flush& operator=(const l2_flush&) = delete;

  /// Enqueues the flush on `s` (asynchronous). Throws `std::invalid_argument` if `s`
  /// belongs to another device than the buffer (it would flush nothing there, or fault).
  void enqueue(cuda::stream_ref s) const {
    const int device = stream_device(s.get());
    FOUNDRY_EXPECTS(device == device_, "an L2 flush buffer of device " + std::to_string(device_) +
                                           " enqueued on a stream of device " + std::to_string(device) +
                                           ": use shared_l2_flush(device)");
    // Four resident blocks of 256 threads per SM keep enough loads in flight to stream.
    launch(s, make_launch_config_1d(words_, 256, resident_grid_blocks(4, s)), detail::l2_flush_kernel<>, data_, words_,
           reinterpret_cast<unsigned*>(data_ + words_));
  }
  /// The device whose L2 this object flushes.
  [[nodiscard]] int device() const noexcept { return device_; }
  /// Size of the buffer read to evict the L2 (twice the L2).
  [[nodiscard]] std::size_t bytes() const noexcept { return words_ * sizeof(uint4); }

 private:
  std::size_t words_;
  int device_;
  uint4* data_ = nullptr;  // words_ words to read, then one word as the sink
};

/// The process's flush buffer for `device`, made at first use there and sized from that
/// device's L2 (thread-safe). Deliberately never freed: a static destructor would run
/// after the CUDA runtime's own teardown; the driver reclaims it at exit.
inline l2_flush& shared_l2_flush(int device) {
  static auto* const cache = new foundry::detail::per_device_cache<l2_flush>();
  return cache->get(device, [device] {
    const device_guard on(device);
    return std::make_unique<l2_flush>(get_device_properties(device).l2_cache_bytes);
  });
}

/// The flush buffer of the calling thread's current device (see above).
inline l2_flush& shared_l2_flush() { return shared_l2_flush(current_device()); }

}  // namespace foundry::bench
