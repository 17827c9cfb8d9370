#pragma once
/// \file
/// An owning CUDA stream. The non-owning view is libcu++'s `cuda::stream_ref`,
/// which cannot be built from `0` or `nullptr`, so nobody lands on the legacy
/// default stream by accident. Every foundry call that enqueues work takes a
/// `cuda::stream_ref`; a `foundry::stream` converts to one.

#include <foundry/core/error.cuh>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace foundry {

/// Whether a new stream synchronises with the legacy default stream.
enum class stream_flags : unsigned { non_blocking = cudaStreamNonBlocking, blocking = cudaStreamDefault };

namespace detail {

/// `cuda::stream_ref{}` (default-constructed) and a moved-from `foundry::stream` hold
/// the null handle, which CUDA reads as the legacy default stream. foundry refuses it,
/// so that no work lands there by accident; pass `cudaStreamLegacy` to mean it.
inline void expect_explicit_stream(cuda::stream_ref s) {
  FOUNDRY_EXPECTS(s.get() != nullptr,
                  "the stream is the null handle (the legacy default stream): pass a foundry::stream, or "
                  "cudaStreamLegacy / cudaStreamPerThread if that is what you mean");
}

/// The CUDA stream behind one `foundry::stream`, destroyed when its last owner lets go:
/// the `foundry::stream` itself and every `device_buffer` allocated on it, so that no
/// buffer is ever freed on a destroyed stream (a buffer is freed on its stream).
class stream_state {
 public:
  explicit stream_state(cudaStream_t handle) noexcept : handle_(handle) {}
  ~stream_state();
  stream_state(const stream_state&) = delete;
  stream_state& operator=(const stream_state&) = delete;
  /// The CUDA handle, owned by this object.
  [[nodiscard]] cudaStream_t get() const noexcept { return handle_; }

 private:
  cudaStream_t handle_;
};

/// The live `foundry::stream` handles, so that a buffer given only a `cuda::stream_ref`
/// (through a function that takes one) still keeps a foundry stream alive. Entries leave
/// before their stream is destroyed, so a handle value that CUDA reuses later is never
/// mistaken for a foundry stream. Taken once per allocation, never per launch.
class stream_registry {
 public:
  static stream_registry& instance() {
    // Never destroyed: streams held by static objects may be released after it would be.
    static stream_registry* registry = new stream_registry;
    return *registry;
  }
  void add(const std::shared_ptr<stream_state>& state) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_[state->get()] = state;
  }
  void remove(cudaStream_t handle) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.erase(handle);
  }
  /// The owner of `handle` if it is a live foundry stream, else null.
  [[nodiscard]] std::shared_ptr<const void> find(cudaStream_t handle) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = live_.find(handle);
    return it == live_.end() ? nullptr : std::shared_ptr<const void>(it->second.lock());
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<cudaStream_t, std::weak_ptr<stream_state>> live_;
};

inline stream_state::~stream_state() {
  stream_registry::instance().remove(handle_);
  // cudaStreamDestroy returns at once; queued work still completes.
  FOUNDRY_CUDA_REPORT(cudaStreamDestroy(handle_));
}

}  // namespace detail

/// Owning, move-only CUDA stream, created on the current device. The CUDA stream lives
/// as long as this object or any `device_buffer` allocated on it, whichever is last:
/// a buffer may outlive the `foundry::stream` it was made from (returned from a helper,
/// or after the stream was move-assigned) and is still freed, in order, on that stream.
class stream {
 public:
  /// Creates a stream. `priority` follows CUDA: lower numbers run first; the
  /// value is clamped by the driver to cudaDeviceGetStreamPriorityRange.
  /// Throws `cuda_error` (for example when no device is present).
  explicit stream(stream_flags flags = stream_flags::non_blocking, int priority = 0) {
    cudaStream_t handle = nullptr;
    FOUNDRY_CUDA_TRY(cudaStreamCreateWithPriority(&handle, static_cast<unsigned>(flags), priority));
    try {
      state_ = std::make_shared<detail::stream_state>(handle);
    } catch (...) {
      FOUNDRY_CUDA_REPORT(cudaStreamDestroy(handle));
      throw;
    }
    detail::stream_registry::instance().add(state_);  // on failure, state_'s destructor destroys it
    handle_ = handle;
  }

  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  /// Takes `other`'s stream; `other` holds the null handle, which foundry's calls refuse.
  stream(stream&& other) noexcept : state_(std::move(other.state_)), handle_(std::exchange(other.handle_, nullptr)) {}
  /// Lets go of the stream held so far: it is destroyed now, or when the last buffer
  /// allocated on it is freed.
  stream& operator=(stream&& other) noexcept {
    if (this != &other) {
      state_ = std::move(other.state_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~stream() = default;

  /// The CUDA handle, owned by this object.
  [[nodiscard]] cudaStream_t get() const noexcept { return handle_; }
  /// A non-owning view, for calls that take a `cuda::stream_ref`.
  [[nodiscard]] cuda::stream_ref view() const noexcept { return cuda::stream_ref{handle_}; }
  /// Converts to a non-owning view, as `view()`.
  operator cuda::stream_ref() const noexcept { return view(); }  // NOLINT: a view, like string_view

  /// A share of the ownership of the CUDA stream (null for a moved-from stream): while
  /// it lives, the stream does. `device_buffer` keeps one.
  [[nodiscard]] std::shared_ptr<const void> share() const noexcept { return state_; }

  /// Blocks the host until all work enqueued so far has finished. Throws `cuda_error`
  /// with the error of any failed asynchronous work, `std::invalid_argument` on a
  /// moved-from stream (whose null handle would name the legacy default stream).
  void synchronize() const {
    detail::expect_explicit_stream(view());
    FOUNDRY_CUDA_TRY(cudaStreamSynchronize(handle_));
  }

  /// The stream's priority (lower numbers run first). Throws `cuda_error`, and
  /// `std::invalid_argument` on a moved-from stream.
  [[nodiscard]] int priority() const {
    detail::expect_explicit_stream(view());
    int p = 0;
    FOUNDRY_CUDA_TRY(cudaStreamGetPriority(handle_, &p));
    return p;
  }

 private:
  std::shared_ptr<detail::stream_state> state_;
  cudaStream_t handle_ = nullptr;
};

/// Blocks the host until `s` is idle; throws `cuda_error` on a failed asynchronous operation,
/// `std::invalid_argument` for the null stream.
inline void synchronize(cuda::stream_ref s) {
  detail::expect_explicit_stream(s);
  FOUNDRY_CUDA_TRY(cudaStreamSynchronize(s.get()));
}

}  // namespace foundry
