#pragma once
/// \file
/// The current device, its cached properties, and a scoped device guard.

#include <foundry/core/error.cuh>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace foundry {

/// Number of visible CUDA devices. Throws `cuda_error` when there is no usable
/// device or driver (the error says which), so "no GPU" is never a crash.
[[nodiscard]] inline int device_count() {
  int count = 0;
  FOUNDRY_CUDA_TRY(cudaGetDeviceCount(&count));
  return count;
}

/// True when at least one device is usable; never throws.
[[nodiscard]] inline bool has_device() noexcept {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();
  return ok;
}

/// The calling host thread's current device ordinal.
[[nodiscard]] inline int current_device() {
  int device = 0;
  FOUNDRY_CUDA_TRY(cudaGetDevice(&device));
  return device;
}

/// The properties foundry's launch helpers and benchmarks need, read once per device.
struct device_properties {
  int ordinal = 0;
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int sm_count = 0;
  std::size_t l2_cache_bytes = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t shared_memory_per_block = 0;        ///< without opt-in (48 KiB)
  std::size_t shared_memory_per_block_optin = 0;  ///< with cudaFuncAttributeMaxDynamicSharedMemorySize
  std::size_t shared_memory_per_sm = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int max_grid_x = 0;
  int max_grid_y = 0;
  int max_grid_z = 0;
  int max_block_x = 0;
  int max_block_y = 0;
  int max_block_z = 0;
  int warp_size = 0;
  int registers_per_sm = 0;
  int sm_clock_khz = 0;      ///< peak SM clock
  int memory_clock_khz = 0;  ///< peak memory clock
  int memory_bus_width_bits = 0;
  bool ecc_enabled = false;

  /// Peak DRAM bandwidth from the datasheet formula: 2 transfers per clock (DDR)
  /// × memory clock × bus width. An upper bound that no kernel reaches.
  [[nodiscard]] double theoretical_bandwidth_bytes_per_second() const noexcept {
    return 2.0 * memory_clock_khz * 1e3 * (memory_bus_width_bits / 8.0);
  }
  [[nodiscard]] int compute_capability() const noexcept {
    return compute_capability_major * 10 + compute_capability_minor;
  }
};

namespace detail {
inline device_properties query_device_properties(int device) {
  cudaDeviceProp prop{};
  FOUNDRY_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  device_properties p;
  p.ordinal = device;
  p.name = prop.name;
  p.compute_capability_major = prop.major;
  p.compute_capability_minor = prop.minor;
  p.sm_count = prop.multiProcessorCount;
  p.l2_cache_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  p.global_memory_bytes = prop.totalGlobalMem;
  p.shared_memory_per_block = prop.sharedMemPerBlock;
  p.shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;
  p.shared_memory_per_sm = prop.sharedMemPerMultiprocessor;
  p.max_threads_per_block = prop.maxThreadsPerBlock;
  p.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  p.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  p.max_grid_x = prop.maxGridSize[0];
  p.max_grid_y = prop.maxGridSize[1];
  p.max_grid_z = prop.maxGridSize[2];
  p.max_block_x = prop.maxThreadsDim[0];
  p.max_block_y = prop.maxThreadsDim[1];
  p.max_block_z = prop.maxThreadsDim[2];
  p.warp_size = prop.warpSize;
  p.registers_per_sm = prop.regsPerMultiprocessor;
  p.memory_bus_width_bits = prop.memoryBusWidth;
  p.ecc_enabled = prop.ECCEnabled != 0;
  // CUDA 13 removed the clock fields from cudaDeviceProp; the attributes work on 12 and 13.
  FOUNDRY_CUDA_TRY(cudaDeviceGetAttribute(&p.sm_clock_khz, cudaDevAttrClockRate, device));
  FOUNDRY_CUDA_TRY(cudaDeviceGetAttribute(&p.memory_clock_khz, cudaDevAttrMemoryClockRate, device));
  return p;
}
}  // namespace detail

/// Properties of `device`, queried on first use and cached for the process
/// (thread-safe). Throws `cuda_error` if the device cannot be queried.
[[nodiscard]] inline const device_properties& get_device_properties(int device) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<device_properties>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  FOUNDRY_EXPECTS(device >= 0, "device ordinal out of range");
  if (cache.size() > static_cast<std::size_t>(device) && cache[device]) return *cache[device];
  // Only a miss asks the driver how many devices there are: launches read this cache.
  FOUNDRY_EXPECTS(device < device_count(), "device ordinal out of range");
  if (cache.size() <= static_cast<std::size_t>(device)) cache.resize(device + 1);
  cache[device] = std::make_unique<device_properties>(detail::query_device_properties(device));
  return *cache[device];
}

/// Properties of the calling thread's current device.
[[nodiscard]] inline const device_properties& get_device_properties() {
  return get_device_properties(current_device());
}

/// Makes `device` current for the guard's lifetime and restores the previous
/// device afterwards. Not copyable or movable: it is tied to one scope.
class device_guard {
 public:
  explicit device_guard(int device) : previous_(current_device()) { FOUNDRY_CUDA_TRY(cudaSetDevice(device)); }
  ~device_guard() { FOUNDRY_CUDA_REPORT(cudaSetDevice(previous_)); }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_;
};

}  // namespace foundry
