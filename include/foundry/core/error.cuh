#pragma once
/// \file
/// Error reporting for foundry: one exception type for CUDA failures, one macro
/// for CUDA calls, one for kernel launches and one for preconditions.
///
/// - `FOUNDRY_CUDA_TRY(expr)`   throws `foundry::cuda_error` if `expr` is not `cudaSuccess`.
/// - `FOUNDRY_CHECK_LAUNCH_STATUS(status, stream)` throws if a launch call's own status is an
///                              error (what `foundry::launch` uses: see `check_launch_status`).
/// - `FOUNDRY_CHECK_LAUNCH()`   throws if the last launch failed; with `FOUNDRY_DEBUG_SYNC`
///                              defined it also synchronises the device, so that an
///                              asynchronous fault is reported at the launch that caused it.
/// - `FOUNDRY_EXPECTS(cond, msg)` throws `std::invalid_argument` with the reason, file and line.
/// - `FOUNDRY_CUDA_REPORT(expr)` for destructors: reports a failure to stderr, never throws.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace foundry {

/// A failed CUDA runtime call. `what()` reads
/// `"<file>:<line>: <expression> failed: <cudaErrorName> (<code>): <message>"`.
class cuda_error : public std::runtime_error {
 public:
  /// An error for `code`, raised by `expression` at `file`:`line`; `context` is appended to the message.
  cuda_error(cudaError_t code, const char* expression, const char* file, int line, const std::string& context = {})
      : std::runtime_error(format(code, expression, file, line, context)), code_(code) {}

  /// The CUDA error code.
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }
  /// The code's name, e.g. `cudaErrorMemoryAllocation`.
  [[nodiscard]] const char* name() const noexcept { return cudaGetErrorName(code_); }

  /// The message `what()` returns: name, description, expression, file:line and context.
  static std::string format(cudaError_t code, const char* expression, const char* file, int line,
                            const std::string& context) {
    std::string text = std::string(file) + ":" + std::to_string(line) + ": " + expression +
                       " failed: " + cudaGetErrorName(code) + " (" + std::to_string(static_cast<int>(code)) +
                       "): " + cudaGetErrorString(code);
    if (!context.empty()) text += " [" + context + "]";
    return text;
  }

 private:
  cudaError_t code_;
};

namespace detail {

/// Clears the calling thread's pending error if it is `own`, the error that the caller's
/// own failed call just recorded: an earlier call's error stays for its owner to read.
inline void clear_own_error(cudaError_t own) noexcept {
  if (own != cudaSuccess && cudaPeekAtLastError() == own) (void)cudaGetLastError();
}

[[noreturn]] inline void throw_invalid_argument(const char* condition, const std::string& reason, const char* file,
                                                int line) {
  throw std::invalid_argument(std::string(file) + ":" + std::to_string(line) + ": " + reason + " (expected " +
                              condition + ")");
}

inline void throw_on_cuda_error(cudaError_t code, const char* expression, const char* file, int line,
                                const std::string& context = {}) {
  if (code != cudaSuccess) {
    // A failing runtime call records its error as the pending one: clear it (if
    // non-sticky) so that the next check does not report it again.
    clear_own_error(code);
    throw cuda_error(code, expression, file, line, context);
  }
}

inline void report_cuda_error(cudaError_t code, const char* expression, const char* file, int line) noexcept {
  if (code != cudaSuccess) {
    clear_own_error(code);
    std::fprintf(stderr, "foundry: %s:%d: %s failed in a destructor: %s: %s\n", file, line, expression,
                 cudaGetErrorName(code), cudaGetErrorString(code));
  }
}

inline void check_launch(const char* file, int line) {
  throw_on_cuda_error(cudaGetLastError(), "kernel launch", file, line);
#ifdef FOUNDRY_DEBUG_SYNC
  throw_on_cuda_error(cudaDeviceSynchronize(), "kernel execution (FOUNDRY_DEBUG_SYNC)", file, line);
#endif
}

/// The status a launch call returned (`cudaLaunchKernelEx`), on `stream`: while `stream`
/// is being captured into a graph the kernel has not run, and a synchronisation would
/// invalidate the capture, so `FOUNDRY_DEBUG_SYNC` checks the launch only. Reads no
/// other call's pending error, so a user's earlier failure is never reported as this
/// launch's.
inline void check_launch_status(cudaError_t status, cudaStream_t stream, const char* file, int line) {
  throw_on_cuda_error(status, "kernel launch", file, line);
#ifdef FOUNDRY_DEBUG_SYNC
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  throw_on_cuda_error(cudaStreamIsCapturing(stream, &capture), "cudaStreamIsCapturing", file, line);
  if (capture == cudaStreamCaptureStatusNone) {
    throw_on_cuda_error(cudaDeviceSynchronize(), "kernel execution (FOUNDRY_DEBUG_SYNC)", file, line);
  }
#else
  (void)stream;
#endif
}

/// As above, for a `<<<>>>` launch on `stream`, which returns no status: the pending
/// error is all there is (it may be an earlier call's; `foundry::launch` avoids this).
inline void check_launch(cudaStream_t stream, const char* file, int line) {
  check_launch_status(cudaGetLastError(), stream, file, line);
}

}  // namespace detail
}  // namespace foundry

/// Throws `foundry::cuda_error` when the CUDA runtime call `expr` fails.
#define FOUNDRY_CUDA_TRY(expr) ::foundry::detail::throw_on_cuda_error((expr), #expr, __FILE__, __LINE__)

/// Like `FOUNDRY_CUDA_TRY`, with extra context (a `std::string`) appended to the message.
#define FOUNDRY_CUDA_TRY_WITH(expr, context) \
  ::foundry::detail::throw_on_cuda_error((expr), #expr, __FILE__, __LINE__, (context))

/// Reports, never throws: for destructors and other `noexcept` paths.
#define FOUNDRY_CUDA_REPORT(expr) ::foundry::detail::report_cuda_error((expr), #expr, __FILE__, __LINE__)

/// Checks the most recent kernel launch; synchronises too under `FOUNDRY_DEBUG_SYNC`.
#define FOUNDRY_CHECK_LAUNCH() ::foundry::detail::check_launch(__FILE__, __LINE__)
/// The same for a launch on `stream`, which `FOUNDRY_DEBUG_SYNC` does not synchronise while
/// it is being captured into a graph.
#define FOUNDRY_CHECK_LAUNCH_ON(stream) ::foundry::detail::check_launch((stream), __FILE__, __LINE__)
/// Checks the status a launch call returned (for example `cudaLaunchKernelEx`'s), never
/// the pending error of an earlier call; synchronises as `FOUNDRY_CHECK_LAUNCH_ON`.
#define FOUNDRY_CHECK_LAUNCH_STATUS(status, stream) \
  ::foundry::detail::check_launch_status((status), (stream), __FILE__, __LINE__)

/// Throws `std::invalid_argument` with `reason` (anything convertible to `std::string`).
#define FOUNDRY_EXPECTS(condition, reason) \
  do { \
    if (!(condition)) ::foundry::detail::throw_invalid_argument(#condition, (reason), __FILE__, __LINE__); \
  } while (false)
