#pragma once
/// \file
/// `device_buffer<T>`: stream-ordered, move-only, uninitialised device memory.
///
/// Stream-ordered rules (as in rmm): the memory is allocated with
/// `cudaMallocAsync` on the buffer's stream and freed with `cudaFreeAsync` on
/// that stream when the buffer is destroyed. Work on *other* streams that uses
/// the buffer must be ordered before the free (an event, or a synchronisation).
///
/// The stream outlives the buffer by design when it is a `foundry::stream`: the buffer
/// keeps a share of it (given the `foundry::stream`, or a `cuda::stream_ref` to one), so
/// a buffer returned from the helper that created its stream, or kept after that stream
/// was move-assigned, is still freed in order on a live stream. A stream of your own
/// (a raw `cudaStream_t` that foundry did not create) cannot be kept alive: it must
/// outlive the buffer, or be replaced first with `set_stream`.
/// `cudaStreamLegacy` and `cudaStreamPerThread` name a different stream on each device
/// (and, per-thread, on each thread): the buffer is freed on the one it was allocated
/// on, on its device; freed by another thread than the one that allocated it on
/// `cudaStreamPerThread`, it waits for its device to finish first (that stream is out of
/// reach), so such a free is ordered too, at the cost of a synchronisation.

#include <foundry/core/error.cuh>
#include <foundry/memory/checked_memory.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/detail.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <utility>

namespace foundry {

namespace detail {
/// A number that names the calling thread for the life of the process: unlike a
/// `std::thread::id`, never handed to a later thread after this one exits.
inline std::uint64_t this_thread_token() noexcept {
  static std::atomic<std::uint64_t> next{1};
  thread_local const std::uint64_t token = next.fetch_add(1, std::memory_order_relaxed);
  return token;
}
}  // namespace detail

template <class T>
class device_buffer {
  static_assert((detail::require_buffer_element<T>(), true));

 public:
  /// The element type.
  using value_type = T;

  /// An empty buffer: no allocation, `data()` is null.
  device_buffer() = default;

  /// Allocates `n` uninitialised elements, stream-ordered on `s` (asynchronous:
  /// the memory is usable by work enqueued on `s` after this call).
  /// Throws `cuda_error` naming the bytes requested if the allocation fails,
  /// `std::invalid_argument` if `n * sizeof(T)` overflows or `s` is the null stream.
  device_buffer(std::size_t n, cuda::stream_ref s) : stream_(s) { allocate(n, nullptr); }
  /// As above, on a `foundry::stream`, which the buffer keeps alive until it is freed.
  device_buffer(std::size_t n, const foundry::stream& s) : stream_(s.view()) { allocate(n, s.share()); }

  /// Allocates `n` elements and fills them with `value` (asynchronous, on `s`).
  device_buffer(std::size_t n, cuda::stream_ref s, const T& value) : device_buffer(n, s) { fill_own(value); }
  /// As above, on a `foundry::stream`, which the buffer keeps alive until it is freed.
  device_buffer(std::size_t n, const foundry::stream& s, const T& value) : device_buffer(n, s) { fill_own(value); }

  /// Deep copy of `other`, allocated and copied on `s` (asynchronous). Work that
  /// writes `other` on another stream must be ordered before this call.
  device_buffer(const device_buffer& other, cuda::stream_ref s) : device_buffer(other.size(), s) {
    copy(span(), other.span(), s);
  }
  /// As above, on a `foundry::stream`, which the buffer keeps alive until it is freed.
  device_buffer(const device_buffer& other, const foundry::stream& s) : device_buffer(other.size(), s) {
    copy(span(), other.span(), s.view());
  }

  // A copy constructor could not say which stream the copy runs on: use the one above.
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  /// Takes `other`'s memory and stream; `other` is left empty.
  device_buffer(device_buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        stream_(other.stream_),
        owner_(std::move(other.owner_)),
        device_(other.device_),
        thread_(other.thread_) {}
  /// Frees this buffer's memory (stream-ordered), then takes `other`'s.
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      stream_ = other.stream_;
      owner_ = std::move(other.owner_);
      device_ = other.device_;
      thread_ = other.thread_;
    }
    return *this;
  }
  /// Frees stream-ordered on `stream()`; reports (never throws) a failure.
  ~device_buffer() { release(); }

  /// Device pointer to the first element (null when empty).
  [[nodiscard]] T* data() noexcept { return data_; }
  /// Device pointer to the first element (null when empty).
  [[nodiscard]] const T* data() const noexcept { return data_; }
  /// Number of elements.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// Size in bytes.
  [[nodiscard]] std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  /// Whether the buffer holds no elements.
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  /// The elements as a span of device memory.
  [[nodiscard]] cuda::std::span<T> span() noexcept { return {data_, size_}; }
  /// The elements as a span of device memory.
  [[nodiscard]] cuda::std::span<const T> span() const noexcept { return {data_, size_}; }
  /// The stream the memory is freed on.
  [[nodiscard]] cuda::stream_ref stream() const noexcept { return stream_; }
  /// Changes the stream on which the buffer will be freed (kept alive if it is a
  /// `foundry::stream`). The caller orders it after the old stream's work that uses the
  /// buffer. Throws `std::invalid_argument` for the null stream (a moved-from
  /// `foundry::stream` included), which would free on whichever device is current then.
  void set_stream(cuda::stream_ref s) {
    detail::expect_explicit_stream(s);
    std::shared_ptr<const void> owner;
    try {
      owner = detail::stream_registry::instance().find(s.get());
    } catch (...) {  // a lock that cannot be taken: keep no share, as for a stream of your own
    }
    adopt_stream(s, std::move(owner));
  }
  /// As above, on a `foundry::stream`, which the buffer then keeps alive.
  void set_stream(const foundry::stream& s) {
    detail::expect_explicit_stream(s.view());
    adopt_stream(s.view(), s.share());
  }

  /// Asynchronous copy of `host` (exactly `size()` elements) into the buffer, on `s`.
  /// With pageable host memory the call returns after the data is staged.
  void copy_from_host(cuda::std::span<const T> host, cuda::stream_ref s) { copy(span(), host, s); }
  /// Asynchronous copy of the buffer into `host` (exactly `size()` elements), on `s`.
  /// The host memory is valid only after `s` is synchronised.
  void copy_to_host(cuda::std::span<T> host, cuda::stream_ref s) const { copy(host, span(), s); }

 private:
  /// `fill` without its memory check: the allocation was just made on the stream's device.
  void fill_own(const T& value) {
    if (size_ != 0) detail::enqueue_fill(data_, size_, value, stream_);
  }
  void allocate(std::size_t n, std::shared_ptr<const void> owner) {
    detail::expect_explicit_stream(stream_);
    const std::size_t bytes = detail::checked_bytes<T>(n);
    if (bytes == 0) return;
    FOUNDRY_NVTX_FUNCTION_RANGE();
    const cudaStream_t h = stream_.get();
    device_ = stream_device(h);
    thread_ = detail::this_thread_token();
    owner_ = owner != nullptr ? std::move(owner) : detail::stream_registry::instance().find(h);
    void* p = nullptr;
    FOUNDRY_CUDA_TRY_WITH(cudaMallocAsync(&p, bytes, h), detail::describe_allocation(bytes, "device memory"));
    data_ = static_cast<T*>(p);
    size_ = n;
  }
  void adopt_stream(cuda::stream_ref s, std::shared_ptr<const void> owner) noexcept {
    stream_ = s;
    owner_ = std::move(owner);
    thread_ = detail::this_thread_token();
  }
  void release() noexcept {
    if (data_ != nullptr) {
      detail::forget_checked_memory_on_free(data_, size_ * sizeof(T));
      const cudaStream_t h = stream_.get();
      if (h != cudaStreamLegacy && h != cudaStreamPerThread) {
        FOUNDRY_CUDA_REPORT(cudaFreeAsync(data_, h));
      } else {
        release_on_device_stream(h);
      }
    }
    data_ = nullptr;
    size_ = 0;
    owner_.reset();  // the last share destroys the stream, after the free is enqueued
  }
  /// The legacy and per-thread handles mean the *current* device's (and thread's)
  /// stream: free on the allocation's device, and wait for it when the per-thread
  /// stream that used the memory belongs to another thread.
  void release_on_device_stream(cudaStream_t h) noexcept {
    try {
      const device_guard on(device_);
      if (h == cudaStreamPerThread && detail::this_thread_token() != thread_) {
        FOUNDRY_CUDA_REPORT(cudaDeviceSynchronize());
      }
      FOUNDRY_CUDA_REPORT(cudaFreeAsync(data_, h));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "foundry: device_buffer could not switch to device %d to free its memory: %s\n", device_,
                   e.what());
    }
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  cuda::stream_ref stream_{};
  std::shared_ptr<const void> owner_;  ///< keeps a foundry::stream alive; null for other streams
  int device_ = 0;                     ///< the device of the allocation
  std::uint64_t thread_ = 0;           ///< the thread whose cudaStreamPerThread `stream_` may name
};

}  // namespace foundry
