#pragma once
/// \file
/// An owning CUDA stream. The non-owning view is libcu++'s `cuda::stream_ref`,
/// which cannot be built from `0` or `nullptr`, so nobody lands on the legacy
/// default stream by accident. Every foundry call that enqueues work takes a
/// `cuda::stream_ref`; a `foundry::stream` converts to one.

#include <foundry/core/error.cuh>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <utility>

namespace foundry {

/// Whether a new stream synchronises with the legacy default stream.
enum class stream_flags : unsigned { non_blocking = cudaStreamNonBlocking, blocking = cudaStreamDefault };

/// Owning, move-only CUDA stream, created on the current device.
class stream {
 public:
  /// Creates a stream. `priority` follows CUDA: lower numbers run first; the
  /// value is clamped by the driver to cudaDeviceGetStreamPriorityRange.
  /// Throws `cuda_error` (for example when no device is present).
  explicit stream(stream_flags flags = stream_flags::non_blocking, int priority = 0) {
    FOUNDRY_CUDA_TRY(cudaStreamCreateWithPriority(&handle_, static_cast<unsigned>(flags), priority));
  }
  ~stream() { destroy(); }

  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  stream(stream&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  stream& operator=(stream&& other) noexcept {
    if (this != &other) {
      destroy();
      handle_ = std::exchange(other.handle_, nullptr);
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
    // cudaStreamDestroy returns at once; queued work still completes.
    if (handle_ != nullptr) FOUNDRY_CUDA_REPORT(cudaStreamDestroy(handle_));
    handle_ = nullptr;
  }
  cudaStream_t handle_ = nullptr;
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
