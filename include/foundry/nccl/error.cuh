#pragma once
/// \file
/// NCCL failures as exceptions, like `cuda_error` for the CUDA runtime.
///
/// - `FOUNDRY_NCCL_TRY(expr)`    throws `foundry::nccl::nccl_error` if `expr` is not `ncclSuccess`.
/// - `FOUNDRY_NCCL_REPORT(expr)` for destructors and other `noexcept` paths: reports, never throws.

#include <foundry/core/error.cuh>

#include <nccl.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace foundry::nccl {

/// A failed NCCL call. `what()` reads
/// `"<file>:<line>: <expression> failed: <ncclGetErrorString> (<code>) [NCCL: <ncclGetLastError>]"`;
/// the last part is NCCL's own message (for example "Invalid rank requested : 1/1") when it has one.
class nccl_error : public std::runtime_error {
 public:
  /// An error for `code`, raised by `expression` at `file`:`line`.
  nccl_error(ncclResult_t code, const char* expression, const char* file, int line)
      : std::runtime_error(format(code, expression, file, line)), code_(code) {}

  /// The NCCL result code.
  [[nodiscard]] ncclResult_t code() const noexcept { return code_; }

  /// The message `what()` returns: NCCL's description, expression and file:line.
  static std::string format(ncclResult_t code, const char* expression, const char* file, int line) {
    std::string text = std::string(file) + ":" + std::to_string(line) + ": " + expression +
                       " failed: " + ncclGetErrorString(code) + " (" + std::to_string(static_cast<int>(code)) + ")";
    // NCCL keeps the reason of its last failure per process; it may be older than this call, hence "last".
    const char* last = ncclGetLastError(nullptr);
    if (last != nullptr && last[0] != '\0') text += std::string(" [NCCL's last message: ") + last + "]";
    return text;
  }

 private:
  ncclResult_t code_;
};

namespace detail {

inline void throw_on_nccl_error(ncclResult_t code, const char* expression, const char* file, int line) {
  if (code != ncclSuccess) throw nccl_error(code, expression, file, line);
}

inline void report_nccl_error(ncclResult_t code, const char* expression, const char* file, int line) noexcept {
  if (code != ncclSuccess) {
    std::fprintf(stderr, "foundry: %s:%d: %s failed in a destructor: %s\n", file, line, expression,
                 ncclGetErrorString(code));
  }
}

}  // namespace detail
}  // namespace foundry::nccl

/// Throws `foundry::nccl::nccl_error` when the NCCL call `expr` fails.
#define FOUNDRY_NCCL_TRY(expr) ::foundry::nccl::detail::throw_on_nccl_error((expr), #expr, __FILE__, __LINE__)

/// Reports, never throws: for destructors and other `noexcept` paths.
#define FOUNDRY_NCCL_REPORT(expr) ::foundry::nccl::detail::report_nccl_error((expr), #expr, __FILE__, __LINE__)
