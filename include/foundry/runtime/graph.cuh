#pragma once
/// \file
/// CUDA graphs captured from stream work: record a sequence of foundry calls once,
/// then replay it with one launch, paying the CPU launch cost once per replay
/// instead of once per kernel.
///
///     foundry::graph g = foundry::capture(s, [&](cuda::stream_ref cs) {
///       foundry::transform(x.span(), y.span(), scale{2.0f}, cs);
///       foundry::transform(y.span(), z.span(), add_one{}, cs);
///     });
///     foundry::graph_exec exec(g);
///     for (int i = 0; i < 100; ++i) exec.launch(s);
///
/// A captured graph remembers the pointers and kernel arguments of the capture:
/// replaying it reads and writes the same buffers, which must outlive the
/// `graph_exec`. To change the arguments, capture again and `update` the executable.
///
/// What a replay still pays per kernel is the GPU's gap between dependent kernels: a
/// kernel node starts only when the one before it has finished. A kernel launched with
/// `launch_dependency::programmatic` (sm_90 and later; foundry's memory-bound algorithms
/// and the GEMM's kernels launch that way) is captured with a programmatic edge from the kernel before it
/// (`cudaGraphDependencyTypeProgrammatic`), so in a replay, as on a stream, it is
/// launched while that kernel still runs and waits in `wait_for_prior_grids()` instead:
/// the launch latency of consecutive kernels overlaps. The semantics are those of the
/// stream: each kernel sees all of the previous kernel's writes after its wait.
/// `graph_exec::upload` moves the one-time cost of a first launch out of the way.

#include <foundry/core/error.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_runtime_api.h>
#include <cuda/stream_ref>

#include <string>
#include <utility>

namespace foundry {

/// Owning, move-only `cudaGraph_t`: a recorded graph, not yet executable.
class graph {
 public:
  /// An empty graph (no handle).
  graph() = default;
  /// Takes ownership of `handle` (which may be null).
  explicit graph(cudaGraph_t handle) noexcept : handle_(handle) {}
  ~graph() { destroy(); }
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;
  /// Takes `other`'s graph; `other` is left empty.
  graph(graph&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  /// Destroys this graph, then takes `other`'s.
  graph& operator=(graph&& other) noexcept {
    if (this != &other) {
      destroy();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  /// The CUDA handle, owned by this object.
  [[nodiscard]] cudaGraph_t get() const noexcept { return handle_; }
  /// Whether the object holds no graph.
  [[nodiscard]] bool empty() const noexcept { return handle_ == nullptr; }

 private:
  void destroy() noexcept {
    if (handle_ != nullptr) FOUNDRY_CUDA_REPORT(cudaGraphDestroy(handle_));
    handle_ = nullptr;
  }
  cudaGraph_t handle_ = nullptr;
};

namespace detail {
/// Ends a capture whose enqueue threw, discarding the partial graph; never throws,
/// so that the enqueue's exception is the one the caller sees.
inline void abandon_capture(cuda::stream_ref s) noexcept {
  cudaGraph_t partial = nullptr;
  // An invalidated capture reports an error here: expected, and cleared (it is ours).
  clear_own_error(cudaStreamEndCapture(s.get(), &partial));
  if (partial != nullptr) clear_own_error(cudaGraphDestroy(partial));
}

inline std::string describe_end_capture(cudaError_t status) {
  if (status == cudaErrorStreamCaptureUnjoined) {
    return "work forked from the capturing stream onto another stream (through an event) was not joined back: "
           "record an event on each forked stream and make the capturing stream wait for it before the callable "
           "returns";
  }
  if (status != cudaErrorStreamCaptureInvalidated) return {};
  return "the capture was invalidated: an operation that is illegal during stream capture was issued "
         "(usually a synchronisation such as cudaStreamSynchronize, cudaDeviceSynchronize or a synchronous "
         "cudaMemcpy, a query of a capturing stream or event, or a cudaMalloc in another capture mode); "
         "enqueue only asynchronous work on the stream passed to the callable";
}
}  // namespace detail

/// Records the work that `enqueue(s)` puts on `s` into a graph, without running it.
///
/// Capture uses `cudaStreamCaptureModeThreadLocal`: calls made by this thread that
/// are unsafe during capture fail; other threads are unaffected. Work that
/// `enqueue` forks onto other streams (through events) must join `s` again
/// before it returns. Synchronous: nothing runs on the GPU; the graph is returned.
///
/// Throws `std::invalid_argument` for the null stream; `cuda_error` when the
/// capture cannot begin (for example `s` is already capturing, or is the legacy
/// stream) or ends invalidated (an illegal operation during capture) or with forked
/// work not joined (the message says which); and rethrows whatever `enqueue` throws. In every case the capture is
/// ended, the partial graph discarded, and `s` can be used again.
template <class F>
[[nodiscard]] graph capture(cuda::stream_ref s, F&& enqueue) {
  detail::expect_explicit_stream(s);
  // Once `s` captures, CUDA cannot say which device it belongs to, and foundry's calls
  // inside then take the current one: make that the stream's device for the capture.
  const device_guard on_stream_device(stream_device(s.get()));
  FOUNDRY_CUDA_TRY(cudaStreamBeginCapture(s.get(), cudaStreamCaptureModeThreadLocal));
  try {
    std::forward<F>(enqueue)(s);
  } catch (...) {
    detail::abandon_capture(s);
    throw;
  }
  cudaGraph_t handle = nullptr;
  const cudaError_t status = cudaStreamEndCapture(s.get(), &handle);
  graph result(handle);  // owns whatever came back, even on failure
  FOUNDRY_CUDA_TRY_WITH(status, detail::describe_end_capture(status));
  return result;
}

/// What `graph_exec::update` did.
enum class graph_update_result {
  updated,               ///< the executable now runs the new graph's parameters
  needs_reinstantiation  ///< the graphs differ in more than parameters: build a new `graph_exec`
};

/// Owning, move-only `cudaGraphExec_t`: an instantiated graph, ready to launch.
class graph_exec {
 public:
  /// Instantiates `g` (synchronous, flags 0). Throws `std::invalid_argument` for an
  /// empty graph, `cuda_error` if instantiation fails.
  explicit graph_exec(const graph& g) {
    FOUNDRY_EXPECTS(!g.empty(), "instantiating an empty graph (moved-from or default-constructed)");
    FOUNDRY_CUDA_TRY(cudaGraphInstantiate(&handle_, g.get(), 0));
  }
  ~graph_exec() { destroy(); }
  graph_exec(const graph_exec&) = delete;
  graph_exec& operator=(const graph_exec&) = delete;
  /// Takes `other`'s executable graph; `other` is left empty.
  graph_exec(graph_exec&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)),
        last_update_(std::exchange(other.last_update_, cudaGraphExecUpdateSuccess)) {}
  /// Destroys this executable graph, then takes `other`'s.
  graph_exec& operator=(graph_exec&& other) noexcept {
    if (this != &other) {
      destroy();
      handle_ = std::exchange(other.handle_, nullptr);
      last_update_ = std::exchange(other.last_update_, cudaGraphExecUpdateSuccess);
    }
    return *this;
  }

  /// Enqueues one replay of the graph on `s`, which may be any stream of the graph's
  /// device, not only the one captured (asynchronous), whichever device is current (the
  /// launch makes the stream's current for the call). CUDA orders a launch after the
  /// previous launch of the same executable, whichever stream that was on; one executable
  /// must not be launched from two threads at once. Throws `std::invalid_argument` for the
  /// null stream or a moved-from executable, `cuda_error` if the launch fails.
  void launch(cuda::stream_ref s) const {
    detail::expect_explicit_stream(s);
    FOUNDRY_EXPECTS(handle_ != nullptr, "launching a moved-from graph_exec");
    const device_guard on_stream_device(stream_device(s.get()));
    FOUNDRY_CUDA_TRY(cudaGraphLaunch(handle_, s.get()));
  }

  /// Uploads the executable's work to the device on `s` (asynchronous), which the first
  /// launch does by itself otherwise: call it once, after instantiating, so that the first
  /// launch costs what later ones do (no launch after the first gains anything). It is
  /// ordered after the work before it on `s` and the executable's earlier launches; launch
  /// on `s`, or on a stream ordered after it, to find the upload done. Throws `std::invalid_argument` for the
  /// null stream or a moved-from executable, `cuda_error` if the upload fails.
  void upload(cuda::stream_ref s) const {
    detail::expect_explicit_stream(s);
    FOUNDRY_EXPECTS(handle_ != nullptr, "uploading a moved-from graph_exec");
    const device_guard on_stream_device(stream_device(s.get()));
    FOUNDRY_CUDA_TRY(cudaGraphUpload(handle_, s.get()));
  }

  /// Tries to give this executable the parameters of `g` (kernel arguments, copy
  /// addresses and sizes) in place, which is much cheaper than instantiating again.
  /// It succeeds when `g` has the same topology, node types and kernel functions
  /// as the graph this executable was built from. Otherwise nothing changes and the
  /// result is `needs_reinstantiation`, and `why_not_updated()` says what differed: the
  /// caller builds a new `graph_exec(g)`, or calls `update_or_reinstantiate`. Synchronous
  /// on the host; launches already enqueued run with the old parameters, later ones with
  /// the new. Throws `cuda_error` for any other failure.
  [[nodiscard]] graph_update_result update(const graph& g) {
    FOUNDRY_EXPECTS(!g.empty() && handle_ != nullptr, "updating from an empty graph or a moved-from graph_exec");
    cudaGraphExecUpdateResultInfo info{};
    const cudaError_t status = cudaGraphExecUpdate(handle_, g.get(), &info);
    last_update_ = status == cudaErrorGraphExecUpdateFailure ? info.result : cudaGraphExecUpdateSuccess;
    if (status == cudaErrorGraphExecUpdateFailure) {
      detail::clear_own_error(status);
      return graph_update_result::needs_reinstantiation;
    }
    FOUNDRY_CUDA_TRY(status);
    return graph_update_result::updated;
  }

  /// Why the last `update` returned `needs_reinstantiation` (CUDA's reason, in words), or
  /// an empty string if it updated or none was tried.
  [[nodiscard]] const char* why_not_updated() const noexcept {
    switch (last_update_) {
      case cudaGraphExecUpdateSuccess: return "";
      case cudaGraphExecUpdateErrorTopologyChanged: return "the graphs' topology differs (nodes or edges)";
      case cudaGraphExecUpdateErrorNodeTypeChanged: return "a node's type changed";
      case cudaGraphExecUpdateErrorFunctionChanged: return "a kernel node runs another kernel function";
      case cudaGraphExecUpdateErrorParametersChanged:
        return "a node's parameters changed in a way CUDA cannot update (for example a copy's device or memory kind)";
      case cudaGraphExecUpdateErrorNotSupported: return "a node's change is not supported by an in-place update";
      case cudaGraphExecUpdateErrorUnsupportedFunctionChange:
        return "a kernel node's function changed in a way an in-place update cannot follow";
      case cudaGraphExecUpdateErrorAttributesChanged: return "a node's attributes changed";
      default: return "the update failed for a reason this version of foundry does not name";
    }
  }

  /// `update(g)`, and on `needs_reinstantiation` replaces this executable with a new
  /// instantiation of `g` (the old one is freed once its launches in flight finish).
  /// Returns what `update` reported; throws as `update` and the constructor do.
  graph_update_result update_or_reinstantiate(const graph& g) {
    const graph_update_result result = update(g);
    if (result == graph_update_result::needs_reinstantiation) {
      // Swap the handle alone, so that why_not_updated() still says why it was rebuilt.
      graph_exec fresh(g);
      std::swap(handle_, fresh.handle_);  // the old executable goes with `fresh`
    }
    return result;
  }

  /// The CUDA handle, owned by this object.
  [[nodiscard]] cudaGraphExec_t get() const noexcept { return handle_; }

 private:
  void destroy() noexcept {
    // An executable still in flight is freed asynchronously when it completes.
    if (handle_ != nullptr) FOUNDRY_CUDA_REPORT(cudaGraphExecDestroy(handle_));
    handle_ = nullptr;
  }
  cudaGraphExec_t handle_ = nullptr;
  cudaGraphExecUpdateResult last_update_ = cudaGraphExecUpdateSuccess;
};

}  // namespace foundry
