#pragma once
/// \file
/// The current device, its cached properties (per device), the device a stream belongs
/// to, and a scoped device guard.

#include <foundry/core/error.cuh>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

namespace foundry {

/// Number of visible CUDA devices. Throws `cuda_error` when there is no usable
/// device or driver (the error says which), so "no GPU" is never a crash.
[[nodiscard]] inline int device_count() {
  int count = 0;
  FOUNDRY_CUDA_TRY(cudaGetDeviceCount(&count));
  return count;
}

/// True when at least one device is usable; never throws. Clears only the error its own
/// query recorded: a pending error of an earlier call stays for its owner to read.
[[nodiscard]] inline bool has_device() noexcept {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  detail::clear_own_error(status);
  return status == cudaSuccess && count > 0;
}

/// The calling host thread's current device ordinal.
[[nodiscard]] inline int current_device() {
  int device = 0;
  FOUNDRY_CUDA_TRY(cudaGetDevice(&device));
  return device;
}

/// The properties foundry's launch helpers and benchmarks need, read once per device.
struct device_properties {
  /// The device's ordinal (as `cudaSetDevice` takes it).
  int ordinal = 0;
  /// Marketing name, e.g. "NVIDIA H200".
  std::string name;
  /// Compute capability, major part (9 on Hopper).
  int compute_capability_major = 0;
  /// Compute capability, minor part.
  int compute_capability_minor = 0;
  /// Streaming multiprocessors.
  int sm_count = 0;
  /// L2 cache size.
  std::size_t l2_cache_bytes = 0;
  /// Device memory size.
  std::size_t global_memory_bytes = 0;
  std::size_t shared_memory_per_block = 0;        ///< without opt-in (48 KiB)
  std::size_t shared_memory_per_block_optin = 0;  ///< with cudaFuncAttributeMaxDynamicSharedMemorySize
  /// Shared memory per SM.
  std::size_t shared_memory_per_sm = 0;
  /// Most threads a block may have.
  int max_threads_per_block = 0;
  /// Most threads resident on one SM.
  int max_threads_per_sm = 0;
  /// Most blocks resident on one SM.
  int max_blocks_per_sm = 0;
  /// Largest grid.x.
  int max_grid_x = 0;
  /// Largest grid.y.
  int max_grid_y = 0;
  /// Largest grid.z.
  int max_grid_z = 0;
  /// Largest block.x.
  int max_block_x = 0;
  /// Largest block.y.
  int max_block_y = 0;
  /// Largest block.z.
  int max_block_z = 0;
  /// Threads per warp (32).
  int warp_size = 0;
  /// 32-bit registers per SM.
  int registers_per_sm = 0;
  int sm_clock_khz = 0;      ///< peak SM clock
  int memory_clock_khz = 0;  ///< peak memory clock
  /// Memory bus width in bits.
  int memory_bus_width_bits = 0;
  /// Whether ECC is on (it costs some bandwidth).
  bool ecc_enabled = false;
  /// Kernels may read and write pageable host memory (HMM or ATS): then a plain host
  /// array is a valid kernel argument.
  bool pageable_memory_access = false;

  /// Peak DRAM bandwidth from the datasheet formula: 2 transfers per clock (DDR)
  /// × memory clock × bus width. An upper bound that no kernel reaches.
  [[nodiscard]] double theoretical_bandwidth_bytes_per_second() const noexcept {
    return 2.0 * memory_clock_khz * 1e3 * (memory_bus_width_bits / 8.0);
  }
  /// Compute capability as one number, major × 10 + minor (90 on Hopper).
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
  int pageable = 0;
  FOUNDRY_CUDA_TRY(cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device));
  p.pageable_memory_access = pageable != 0;
  return p;
}
}  // namespace detail

namespace detail {
/// One value of `T` per visible device, each made once, by the first `get` for that
/// device. The slots are sized by the device count when the cache is built; after a
/// slot is filled, `get` is one `call_once` fast path (an acquire load) and takes no
/// lock: launches read the property cache through it. Thread-safe.
template <class T>
class per_device_cache {
 public:
  /// Throws `cuda_error` if the devices cannot be counted (a function-local static that
  /// holds one is then built again by the next call).
  per_device_cache()
      : count_(device_count()),
        once_(new std::once_flag[static_cast<std::size_t>(count_)]),
        slots_(new std::unique_ptr<T>[static_cast<std::size_t>(count_)]) {}

  /// The value of `device`, made by `make()` (which returns a `std::unique_ptr<T>`) the
  /// first time. A `make` that throws leaves the slot empty: the next call tries again.
  /// Throws `std::invalid_argument` for an ordinal that is not a visible device.
  template <class Make>
  T& get(int device, Make&& make) {
    FOUNDRY_EXPECTS(device >= 0 && device < count_, "device ordinal " + std::to_string(device) + " out of range (" +
                                                        std::to_string(count_) + " visible devices)");
    std::call_once(once_[device], [&] { slots_[device] = make(); });
    return *slots_[device];
  }

 private:
  int count_;
  std::unique_ptr<std::once_flag[]> once_;
  std::unique_ptr<std::unique_ptr<T>[]> slots_;
};
}  // namespace detail

namespace detail {
/// Throws `std::invalid_argument` naming `who` unless `device` is the ordinal of a visible
/// device (one device query); `cuda_error` if the devices cannot be counted.
inline void expect_visible_device(int device, const std::string& who) {
  const int count = device_count();
  FOUNDRY_EXPECTS(device >= 0 && device < count, who + ": device " + std::to_string(device) +
                                                     " is not a visible device (there are " + std::to_string(count) +
                                                     ")");
}
}  // namespace detail

/// Properties of `device`, queried on first use and cached for the process
/// (thread-safe; lock-free once filled). Throws `std::invalid_argument` for an ordinal
/// that is not a visible device, `cuda_error` if the device cannot be queried.
[[nodiscard]] inline const device_properties& get_device_properties(int device) {
  static detail::per_device_cache<const device_properties> cache;
  return cache.get(
      device, [device] { return std::make_unique<const device_properties>(detail::query_device_properties(device)); });
}

namespace detail {
/// `cudaStreamGetDevice`, except on a stream being captured into a graph, which CUDA does
/// not let it query (cudaErrorStreamCaptureUnsupported): there, the current device.
inline cudaError_t query_stream_device(cudaStream_t s, int& device) noexcept {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  const cudaError_t status = cudaStreamIsCapturing(s, &capture);
  if (status != cudaSuccess) return status;
  return capture == cudaStreamCaptureStatusNone ? cudaStreamGetDevice(s, &device) : cudaGetDevice(&device);
}
}  // namespace detail

/// The device that `s` belongs to (`cudaStreamGetDevice`; for `cudaStreamLegacy` and
/// `cudaStreamPerThread`, the calling thread's current device; while `s` is being
/// captured into a graph, which CUDA does not let it query, the current device too).
/// Work, configuration checks and SM counts for a call on `s` follow this device, not
/// the current one. Throws `cuda_error` if the stream cannot be queried.
[[nodiscard]] inline int stream_device(cudaStream_t s) {
  int device = 0;
  FOUNDRY_CUDA_TRY(detail::query_stream_device(s, device));
  return device;
}

/// Properties of the calling thread's current device.
[[nodiscard]] inline const device_properties& get_device_properties() {
  return get_device_properties(current_device());
}

namespace detail {
/// The driver's current context of the calling thread, through the runtime's driver
/// entry point (foundry links the runtime only). `ok` is false when it cannot be told.
struct current_context {
  void* context = nullptr;
  bool ok = false;
};
using cu_ctx_get_current_fn = int (*)(void**);
using cu_ctx_set_current_fn = int (*)(void*);
template <class Fn>
Fn driver_entry_point(const char* symbol) noexcept {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const cudaError_t status = cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found);
  if (status != cudaSuccess || found != cudaDriverEntryPointSuccess) {
    clear_own_error(status);
    return nullptr;
  }
  return reinterpret_cast<Fn>(fn);
}
inline current_context get_current_context() noexcept {
  static const auto get = driver_entry_point<cu_ctx_get_current_fn>("cuCtxGetCurrent");
  current_context c;
  c.ok = get != nullptr && get(&c.context) == 0;
  return c;
}
inline bool set_current_context(void* context) noexcept {
  static const auto set = driver_entry_point<cu_ctx_set_current_fn>("cuCtxSetCurrent");
  return set != nullptr && set(context) == 0;
}
}  // namespace detail

/// Makes `device` current for the guard's lifetime and restores the previous state
/// afterwards. Not copyable or movable: it is tied to one scope.
/// Nothing is switched (and nothing restored) when `device` is already current. A thread
/// that had no context before (one that never used a device) gets none back: the guard
/// restores the driver's "no current context" instead of making device 0 current, which
/// would create a context there. Throws `cuda_error` if `device` cannot be made current.
class device_guard {
 public:
  /// Makes `device` current until the guard is destroyed (throws `cuda_error` if it cannot).
  explicit device_guard(int device) {
    previous_ = current_device();
    if (previous_ == device) return;
    const detail::current_context before = detail::get_current_context();
    FOUNDRY_CUDA_TRY(cudaSetDevice(device));
    switched_ = true;
    restore_no_context_ = before.ok && before.context == nullptr;
  }
  ~device_guard() {
    if (!switched_) return;
    if (restore_no_context_ && detail::set_current_context(nullptr)) return;
    FOUNDRY_CUDA_REPORT(cudaSetDevice(previous_));
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
  bool restore_no_context_ = false;
};

}  // namespace foundry
