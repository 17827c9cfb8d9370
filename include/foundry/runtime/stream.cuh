#pragma once
/// \file
/// An owning CUDA stream. The non-owning view is libcu++'s `cuda::stream_ref`,
/// which cannot be built from `0` or `nullptr`, so nobody lands on the legacy
/// default stream by accident. Every foundry call that enqueues work takes a
/// `cuda::stream_ref`; a `foundry::stream` converts to one.
///
/// A `foundry::stream` also keeps a small device scratch area for the
/// reductions enqueued on it (`detail::stream_scratch`): `reduce_sum(x, out, s)`
/// on a `foundry::stream` then needs no allocation and a single launch. It grows
/// on demand (to about 17 KB for a float reduction on 132 SMs) and is freed,
/// stream-ordered, when the stream is destroyed. On a stream that foundry does
/// not own, the same calls allocate their scratch per call instead.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>

#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace foundry {

namespace detail {

/// Device scratch owned by one `foundry::stream` and used only by work enqueued
/// on it, so stream order alone keeps two uses apart. Its first
/// `zeroed_prefix_bytes` bytes are zero whenever no work that uses it is pending:
/// work that changes them (a counter of finished blocks) must set them back.
class stream_scratch {
 public:
  static constexpr std::size_t zeroed_prefix_bytes = 16;

  explicit stream_scratch(cudaStream_t s) noexcept : stream_(s) {}
  stream_scratch(const stream_scratch&) = delete;
  stream_scratch& operator=(const stream_scratch&) = delete;
  ~stream_scratch() { release(); }

  /// Held while enqueueing work that uses `reserve`'s memory, so that a second
  /// host thread enqueueing on the same stream cannot free it in between.
  [[nodiscard]] std::mutex& mutex() noexcept { return mutex_; }

  /// At least `bytes` bytes (the caller holds `mutex()`). Growing frees the old
  /// area stream-ordered and zeroes the new area's prefix on the stream.
  /// Throws `cuda_error` if the allocation fails.
  [[nodiscard]] std::byte* reserve(std::size_t bytes) {
    if (bytes <= bytes_) return data_;
    const std::size_t grown = round_up<std::size_t>(std::max({bytes, 2 * bytes_, std::size_t{4096}}), 256);
    void* p = nullptr;
    FOUNDRY_CUDA_TRY(cudaMallocAsync(&p, grown, stream_));
    if (const cudaError_t e = cudaMemsetAsync(p, 0, zeroed_prefix_bytes, stream_); e != cudaSuccess) {
      FOUNDRY_CUDA_REPORT(cudaFreeAsync(p, stream_));
      FOUNDRY_CUDA_TRY(e);
    }
    release();
    data_ = static_cast<std::byte*>(p);
    bytes_ = grown;
    return data_;
  }

  /// Frees the area stream-ordered (the stream must still exist).
  void release() noexcept {
    if (data_ != nullptr) FOUNDRY_CUDA_REPORT(cudaFreeAsync(data_, stream_));
    data_ = nullptr;
    bytes_ = 0;
  }

 private:
  cudaStream_t stream_;
  std::mutex mutex_;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// The scratch of every live `foundry::stream`, by handle. Never destroyed, so
/// that streams with static storage duration may outlive every other static.
struct stream_scratch_registry {
  std::mutex mutex;
  std::unordered_map<cudaStream_t, stream_scratch*> by_stream;

  static stream_scratch_registry& get() {
    static auto* registry = new stream_scratch_registry;  // NOLINT: intentionally leaked
    return *registry;
  }
};

/// Calls `enqueue(std::byte* scratch)` with at least `bytes` bytes of the
/// scratch that `s` keeps, if `s` is a `foundry::stream`, and returns true;
/// returns false (calling nothing) for any other stream.
template <class Enqueue>
bool with_stream_scratch(cudaStream_t s, std::size_t bytes, Enqueue&& enqueue) {
  stream_scratch* scratch = nullptr;
  {
    auto& registry = stream_scratch_registry::get();
    const std::lock_guard<std::mutex> lock(registry.mutex);
    const auto it = registry.by_stream.find(s);
    if (it == registry.by_stream.end()) return false;
    scratch = it->second;
  }
  const std::lock_guard<std::mutex> lock(scratch->mutex());
  enqueue(scratch->reserve(bytes));
  return true;
}

}  // namespace detail

/// Whether a new stream synchronises with the legacy default stream.
enum class stream_flags : unsigned { non_blocking = cudaStreamNonBlocking, blocking = cudaStreamDefault };

/// Owning, move-only CUDA stream, created on the current device.
class stream {
 public:
  /// Creates a stream. `priority` follows CUDA: lower numbers run first; the
  /// value is clamped by the driver to cudaDeviceGetStreamPriorityRange.
  /// Throws `cuda_error` (for example when no device is present).
  explicit stream(stream_flags flags = stream_flags::non_blocking, int priority = 0) {
    FOUNDRY_CUDA_TRY(
        cudaStreamCreateWithPriority(&handle_, static_cast<unsigned>(flags), priority));
    try {
      scratch_ = std::make_unique<detail::stream_scratch>(handle_);
      auto& registry = detail::stream_scratch_registry::get();
      const std::lock_guard<std::mutex> lock(registry.mutex);
      registry.by_stream[handle_] = scratch_.get();
    } catch (...) {
      scratch_.reset();
      destroy();
      throw;
    }
  }
  ~stream() { destroy(); }

  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  // The scratch moves with the handle: the registry maps the handle to the same object.
  stream(stream&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), scratch_(std::move(other.scratch_)) {}
  stream& operator=(stream&& other) noexcept {
    if (this != &other) {
      destroy();
      handle_ = std::exchange(other.handle_, nullptr);
      scratch_ = std::move(other.scratch_);
    }
    return *this;
  }

  [[nodiscard]] cudaStream_t get() const noexcept { return handle_; }
  [[nodiscard]] cuda::stream_ref view() const noexcept { return cuda::stream_ref{handle_}; }
  operator cuda::stream_ref() const noexcept { return view(); }  // NOLINT: a view, like string_view

  /// Blocks the host until all work enqueued so far has finished. Throws `cuda_error`
  /// with the error of any failed asynchronous work.
  void synchronize() const { FOUNDRY_CUDA_TRY(cudaStreamSynchronize(handle_)); }

  [[nodiscard]] int priority() const {
    int p = 0;
    FOUNDRY_CUDA_TRY(cudaStreamGetPriority(handle_, &p));
    return p;
  }

 private:
  void destroy() noexcept {
    if (scratch_ != nullptr) {
      {
        auto& registry = detail::stream_scratch_registry::get();
        const std::lock_guard<std::mutex> lock(registry.mutex);
        registry.by_stream.erase(handle_);
      }
      scratch_.reset();  // freed stream-ordered, before the stream goes
    }
    // cudaStreamDestroy returns at once; queued work still completes.
    if (handle_ != nullptr) FOUNDRY_CUDA_REPORT(cudaStreamDestroy(handle_));
    handle_ = nullptr;
  }
  cudaStream_t handle_ = nullptr;
  std::unique_ptr<detail::stream_scratch> scratch_;
};

namespace detail {
/// `cuda::stream_ref{}` (default-constructed) and a moved-from `foundry::stream` hold
/// the null handle, which CUDA reads as the legacy default stream. foundry refuses it,
/// so that no work lands there by accident; pass `cudaStreamLegacy` to mean it.
inline void expect_explicit_stream(cuda::stream_ref s) {
  FOUNDRY_EXPECTS(s.get() != nullptr,
                  "the stream is the null handle (the legacy default stream): pass a foundry::stream, or "
                  "cudaStreamLegacy / cudaStreamPerThread if that is what you mean");
}
}  // namespace detail

/// Blocks the host until `s` is idle; throws `cuda_error` on a failed asynchronous operation.
inline void synchronize(cuda::stream_ref s) { FOUNDRY_CUDA_TRY(cudaStreamSynchronize(s.get())); }

}  // namespace foundry
