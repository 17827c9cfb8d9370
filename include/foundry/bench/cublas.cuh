#pragma once
/// \file
/// The benchmarks' cuBLAS peer: status checks and an owning handle. Used by the
/// ceilings (cuBLAS GEMM rates) and by the GEMM benchmarks (cuBLAS as the peer row).

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <library_types.h>
#include <cuda/stream_ref>

#include <stdexcept>
#include <string>
#include <type_traits>

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

/// The process's cuBLAS handle, created by the first call (about 100 ms) and moved to `s`
/// on every call, so later cuBLAS calls through it are enqueued on `s`. Not for use from
/// several threads at once. Deliberately never destroyed: `cublasDestroy` during static
/// destruction may run after the CUDA runtime has shut down. Throws `std::runtime_error`.
inline const cublas_handle& shared_cublas(cuda::stream_ref s) {
  static const cublas_handle* const handle = new cublas_handle(s);
  handle->set_stream(s);
  return *handle;
}

/// cuBLAS's name for the element type `T` (float, __half, __nv_bfloat16).
template <class T>
constexpr cudaDataType_t cublas_data_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>,
                "cublas_data_type: float, __half or __nv_bfloat16");
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  if constexpr (std::is_same_v<T, __nv_bfloat16>) return CUDA_R_16BF;
  if constexpr (std::is_same_v<T, __half>) return CUDA_R_16F;
}

}  // namespace foundry::bench
