#pragma once
/// \file
/// Owning CUDA events and a scoped GPU timer built on them.

#include <foundry/core/error.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <utility>

namespace foundry {

/// Whether an event records time. Timing-free events are cheaper to record and wait on.
enum class event_timing { enabled, disabled };

/// Owning, move-only CUDA event.
class event {
 public:
  /// Creates an event; with `event_timing::disabled` it is cheaper but cannot be timed. Throws `cuda_error`.
  explicit event(event_timing timing = event_timing::enabled) {
    const unsigned flags = timing == event_timing::enabled ? cudaEventDefault : cudaEventDisableTiming;
    FOUNDRY_CUDA_TRY(cudaEventCreateWithFlags(&handle_, flags));
  }
  ~event() { destroy(); }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  /// Takes `other`'s event; `other` is left without one.
  event(event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  /// Destroys this event, then takes `other`'s.
  event& operator=(event&& other) noexcept {
    if (this != &other) {
      destroy();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  /// Enqueues the event on `s` (asynchronous). Throws `std::invalid_argument` for the
  /// null stream, `cuda_error` if the record fails.
  void record(cuda::stream_ref s) {
    detail::expect_explicit_stream(s);
    FOUNDRY_CUDA_TRY(cudaEventRecord(handle_, s.get()));
  }
  /// Makes later work on `s` wait for this event (asynchronous; the host does not block).
  /// Throws `std::invalid_argument` for the null stream, `cuda_error` if the wait fails.
  void make_wait(cuda::stream_ref s) const {
    detail::expect_explicit_stream(s);
    FOUNDRY_CUDA_TRY(cudaStreamWaitEvent(s.get(), handle_, 0));
  }
  /// Blocks the host until the event has completed.
  void synchronize() const { FOUNDRY_CUDA_TRY(cudaEventSynchronize(handle_)); }
  /// True when the event has completed; never blocks.
  [[nodiscard]] bool ready() const {
    const cudaError_t status = cudaEventQuery(handle_);
    if (status == cudaErrorNotReady) {
      detail::clear_own_error(status);
      return false;
    }
    FOUNDRY_CUDA_TRY(status);
    return true;
  }
  /// The CUDA handle, owned by this object.
  [[nodiscard]] cudaEvent_t get() const noexcept { return handle_; }

 private:
  void destroy() noexcept {
    if (handle_ != nullptr) FOUNDRY_CUDA_REPORT(cudaEventDestroy(handle_));
    handle_ = nullptr;
  }
  cudaEvent_t handle_ = nullptr;
};

/// Milliseconds between two completed events; blocks until `stop` has completed.
[[nodiscard]] inline float elapsed_ms(const event& start, const event& stop) {
  stop.synchronize();
  float ms = 0.0f;
  FOUNDRY_CUDA_TRY(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

/// Times the GPU work enqueued on a stream between `start()` and `stop()`.
/// Both calls are asynchronous; `elapsed_ms()` blocks until the stop event completes.
///
///     foundry::gpu_timer timer(s);
///     timer.start();  my_kernel<<<..., s.get()>>>(...);  timer.stop();
///     float ms = timer.elapsed_ms();
class gpu_timer {
 public:
  /// A timer of the work on `s`.
  explicit gpu_timer(cuda::stream_ref s) : stream_(s) {}
  /// Records the start event on the stream (asynchronous).
  void start() { start_.record(stream_); }
  /// Records the stop event on the stream (asynchronous).
  void stop() { stop_.record(stream_); }
  /// Milliseconds between start and stop; blocks until the stop event has completed.
  [[nodiscard]] float elapsed_ms() const { return foundry::elapsed_ms(start_, stop_); }

 private:
  cuda::stream_ref stream_;
  event start_;
  event stop_;
};

}  // namespace foundry
