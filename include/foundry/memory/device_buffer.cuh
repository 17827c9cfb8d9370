#pragma once
/// \file
/// `device_buffer<T>`: stream-ordered, move-only, uninitialised device memory.
///
/// Stream-ordered rules (as in rmm): the memory is allocated with
/// `cudaMallocAsync` on the buffer's stream and freed with `cudaFreeAsync` on
/// that stream when the buffer is destroyed. Work on *other* streams that uses
/// the buffer must be ordered before the free (an event, or a synchronisation);
/// the buffer's stream must still exist when the buffer is destroyed (or call
/// `set_stream` first).

#include <foundry/core/error.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/detail.cuh>
#include <foundry/runtime/stream.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <utility>

namespace foundry {

template <class T>
class device_buffer {
  static_assert((detail::require_buffer_element<T>(), true));

 public:
  using value_type = T;

  /// An empty buffer: no allocation, `data()` is null.
  device_buffer() = default;

  /// Allocates `n` uninitialised elements, stream-ordered on `s` (asynchronous:
  /// the memory is usable by work enqueued on `s` after this call).
  /// Throws `cuda_error` naming the bytes requested if the allocation fails,
  /// `std::invalid_argument` if `n * sizeof(T)` overflows or `s` is the null stream.
  device_buffer(std::size_t n, cuda::stream_ref s) : stream_(s) { allocate(n); }

  /// Allocates `n` elements and fills them with `value` (asynchronous, on `s`).
  device_buffer(std::size_t n, cuda::stream_ref s, const T& value) : device_buffer(n, s) { fill(span(), value, s); }

  /// Deep copy of `other`, allocated and copied on `s` (asynchronous). Work that
  /// writes `other` on another stream must be ordered before this call.
  device_buffer(const device_buffer& other, cuda::stream_ref s) : device_buffer(other.size(), s) {
    copy(span(), other.span(), s);
  }

  // A copy constructor could not say which stream the copy runs on: use the one above.
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  device_buffer(device_buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)), stream_(other.stream_) {}
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      stream_ = other.stream_;
    }
    return *this;
  }
  /// Frees stream-ordered on `stream()`; reports (never throws) a failure.
  ~device_buffer() { release(); }

  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] cuda::std::span<T> span() noexcept { return {data_, size_}; }
  [[nodiscard]] cuda::std::span<const T> span() const noexcept { return {data_, size_}; }
  [[nodiscard]] cuda::stream_ref stream() const noexcept { return stream_; }
  /// Changes the stream on which the buffer will be freed. The caller orders it
  /// after the old stream's work that uses the buffer.
  void set_stream(cuda::stream_ref s) noexcept { stream_ = s; }

  /// Asynchronous copy of `host` (exactly `size()` elements) into the buffer, on `s`.
  /// With pageable host memory the call returns after the data is staged.
  void copy_from_host(cuda::std::span<const T> host, cuda::stream_ref s) { copy(span(), host, s); }
  /// Asynchronous copy of the buffer into `host` (exactly `size()` elements), on `s`.
  /// The host memory is valid only after `s` is synchronised.
  void copy_to_host(cuda::std::span<T> host, cuda::stream_ref s) const { copy(host, span(), s); }

 private:
  void allocate(std::size_t n) {
    detail::expect_explicit_stream(stream_);
    const std::size_t bytes = detail::checked_bytes<T>(n);
    if (bytes == 0) return;
    FOUNDRY_NVTX_FUNCTION_RANGE();
    void* p = nullptr;
    FOUNDRY_CUDA_TRY_WITH(cudaMallocAsync(&p, bytes, stream_.get()),
                          detail::describe_allocation(bytes, "device memory"));
    data_ = static_cast<T*>(p);
    size_ = n;
  }
  void release() noexcept {
    if (data_ != nullptr) FOUNDRY_CUDA_REPORT(cudaFreeAsync(data_, stream_.get()));
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  cuda::stream_ref stream_{};
};

}  // namespace foundry
