#pragma once
/// \file
/// The benchmarks' cuBLAS peer: status checks and an owning handle. Used by the
/// ceilings (cuBLAS GEMM rates) and by the GEMM benchmarks (cuBLAS as the peer row).

#include <cublas_v2.h>
#include <cuda/stream_ref>

#include <stdexcept>
#include <string>

namespace foundry::bench {

/// Throws `std::runtime_error` naming `what` and cuBLAS's status unless `status` is success.
inline void cublas_try(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + cublasGetStatusName(status));
}

/// An owning cuBLAS handle whose work is enqueued on a given stream. Not copyable.
/// Creating one costs about 100 ms (cuBLAS start-up): create it once and move it between
/// streams with `set_stream`. The math mode is cuBLAS's default, so SGEMM stays true fp32.
class cublas_handle {
 public:
  /// Throws `std::runtime_error` if cuBLAS cannot start or take the stream.
  explicit cublas_handle(cuda::stream_ref s) {
    cublas_try(cublasCreate(&handle_), "cublasCreate");
    if (const cublasStatus_t status = cublasSetStream(handle_, s.get()); status != CUBLAS_STATUS_SUCCESS) {
      (void)cublasDestroy(handle_);  // the destructor of a half-built object does not run
      cublas_try(status, "cublasSetStream");
    }
  }
  ~cublas_handle() { (void)cublasDestroy(handle_); }  // never throws
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;

  /// Later calls through this handle are enqueued on `s`. Throws `std::runtime_error`.
  void set_stream(cuda::stream_ref s) const { cublas_try(cublasSetStream(handle_, s.get()), "cublasSetStream"); }
  /// The cuBLAS handle, owned by this object.
  [[nodiscard]] cublasHandle_t get() const noexcept { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace foundry::bench
