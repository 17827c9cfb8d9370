#pragma once
/// \file
/// `managed_buffer<T>`: unified (managed) memory, reachable from host and
/// device through one pointer, with prefetch and memory advice. Pages migrate
/// on demand; prefetch moves them ahead of use so kernels do not stall on faults.

#include <foundry/core/error.cuh>
#include <foundry/memory/checked_memory.cuh>
#include <foundry/memory/detail.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <utility>

namespace foundry {

/// Hints to the unified-memory driver (`cudaMemAdvise`).
enum class memory_advice {
  read_mostly = cudaMemAdviseSetReadMostly,
  unset_read_mostly = cudaMemAdviseUnsetReadMostly,
  preferred_location = cudaMemAdviseSetPreferredLocation,
  unset_preferred_location = cudaMemAdviseUnsetPreferredLocation,
  accessed_by = cudaMemAdviseSetAccessedBy,
  unset_accessed_by = cudaMemAdviseUnsetAccessedBy,
};

/// The host, as a prefetch or advice target.
struct host_location {};

namespace detail {
// CUDA 13 replaced the device ordinal (with cudaCpuDeviceId for the host) by cudaMemLocation.
#if CUDART_VERSION >= 13000
inline cudaMemLocation memory_location(int device) { return {cudaMemLocationTypeDevice, device}; }
inline cudaMemLocation memory_location(host_location) { return {cudaMemLocationTypeHost, 0}; }
template <class Where>
cudaError_t prefetch(const void* p, std::size_t bytes, Where where, cudaStream_t s) {
  return cudaMemPrefetchAsync(p, bytes, memory_location(where), 0, s);
}
template <class Where>
cudaError_t advise(const void* p, std::size_t bytes, memory_advice a, Where where) {
  return cudaMemAdvise(p, bytes, static_cast<cudaMemoryAdvise>(a), memory_location(where));
}
#else
inline int memory_location(int device) { return device; }
inline int memory_location(host_location) { return cudaCpuDeviceId; }
template <class Where>
cudaError_t prefetch(const void* p, std::size_t bytes, Where where, cudaStream_t s) {
  return cudaMemPrefetchAsync(p, bytes, memory_location(where), s);
}
template <class Where>
cudaError_t advise(const void* p, std::size_t bytes, memory_advice a, Where where) {
  return cudaMemAdvise(p, bytes, static_cast<cudaMemoryAdvise>(a), memory_location(where));
}
#endif
}  // namespace detail

template <class T>
class managed_buffer {
  static_assert((detail::require_buffer_element<T>(), true));

 public:
  /// The element type.
  using value_type = T;
  managed_buffer() = default;
  /// Allocates `n` uninitialised elements of managed memory (synchronous).
  /// Throws `cuda_error` naming the bytes requested if the allocation fails.
  explicit managed_buffer(std::size_t n) {
    const std::size_t bytes = detail::checked_bytes<T>(n);
    if (bytes == 0) return;
    void* p = nullptr;
    FOUNDRY_CUDA_TRY_WITH(cudaMallocManaged(&p, bytes, cudaMemAttachGlobal),
                          detail::describe_allocation(bytes, "managed memory"));
    data_ = static_cast<T*>(p);
    size_ = n;
  }
  managed_buffer(const managed_buffer&) = delete;
  managed_buffer& operator=(const managed_buffer&) = delete;
  /// Takes `o`'s memory; `o` is left empty.
  managed_buffer(managed_buffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  /// Frees this buffer's memory, then takes `o`'s.
  managed_buffer& operator=(managed_buffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  /// cudaFree synchronises the device before freeing managed memory.
  ~managed_buffer() { release(); }

  /// Migrates the pages to `device` ahead of use, on `s` (asynchronous). Throws
  /// `std::invalid_argument` for the null stream or a device ordinal that names no visible
  /// device (-1 included: `prefetch_to_host` is the host), `cuda_error` if the prefetch fails.
  void prefetch_to_device(int device, cuda::stream_ref s) const {
    detail::expect_explicit_stream(s);
    if (size_bytes() == 0) return;  // nothing to move (and no device query)
    // -1 is the host (cudaCpuDeviceId) on CUDA 12 and an error on 13: refused on both.
    detail::expect_visible_device(device, "managed_buffer::prefetch_to_device");
    FOUNDRY_CUDA_TRY(detail::prefetch(data_, size_bytes(), device, s.get()));
  }
  /// Migrates the pages to host memory, on `s` (asynchronous; synchronise `s` before the host reads).
  /// Throws as `prefetch_to_device`.
  void prefetch_to_host(cuda::stream_ref s) const {
    detail::expect_explicit_stream(s);
    if (size_bytes() != 0) FOUNDRY_CUDA_TRY(detail::prefetch(data_, size_bytes(), host_location{}, s.get()));
  }
  /// Applies `advice` for `device` (an ordinal) to the whole buffer. Throws
  /// `std::invalid_argument` for an ordinal that names no visible device (the host is
  /// `host_location{}`), `cuda_error` if CUDA refuses the advice.
  void advise(memory_advice advice, int device) const {
    if (size_bytes() == 0) return;  // nothing to advise (and no device query)
    detail::expect_visible_device(device, "managed_buffer::advise");
    FOUNDRY_CUDA_TRY(detail::advise(data_, size_bytes(), advice, device));
  }
  /// Applies `advice` for the host to the whole buffer.
  void advise(memory_advice advice, host_location host) const {
    if (size_bytes() != 0) FOUNDRY_CUDA_TRY(detail::advise(data_, size_bytes(), advice, host));
  }

  /// Pointer to the first element, valid on the host and the device.
  [[nodiscard]] T* data() noexcept { return data_; }
  /// Pointer to the first element, valid on the host and the device.
  [[nodiscard]] const T* data() const noexcept { return data_; }
  /// Number of elements.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Size in bytes.
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  /// Element i, from the host (no GPU work on it may be in flight).
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return data_[i]; }
  /// Element i, from the host (no GPU work on it may be in flight).
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  /// The elements as a span.
  [[nodiscard]] cuda::std::span<T> span() noexcept { return {data_, size_}; }
  /// The elements as a span.
  [[nodiscard]] cuda::std::span<const T> span() const noexcept { return {data_, size_}; }

 private:
  void release() noexcept {
    if (data_ != nullptr) {
      detail::forget_checked_memory_on_free(data_, size_ * sizeof(T));
      FOUNDRY_CUDA_REPORT(cudaFree(data_));
    }
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace foundry
