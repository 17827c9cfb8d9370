#pragma once
/// \file
/// The benchmarks' cuBLAS peer: status checks and an owning handle. Used by the
/// ceilings (cuBLAS GEMM rates) and by the GEMM benchmarks (cuBLAS as the peer row).

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <library_types.h>
#include <cuda/stream_ref>

#include <cstdint>
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

/// The extents of a GEMM benchmark's problem (C: m × n, K: k).
struct gemm_shape {
  std::int64_t m;  ///< rows of C and of A
  std::int64_t n;  ///< columns of C and of B
  std::int64_t k;  ///< the inner extent
  /// `<m>x<n>x<k>`, as the benchmark rows name their size.
  [[nodiscard]] std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};

/// C = A B on `s` through the shared handle (asynchronous), for dense row-major A (m × k),
/// B (k × n; with `b_k_major`, stored column-major: element (p, j) at j·k + p) and C (m × n,
/// fp32): row-major C = A B is column-major C^T = B^T A^T, so cuBLAS gets (n, m, k) with B
/// first. `In` float with CUBLAS_COMPUTE_32F: SGEMM (true fp32); otherwise GemmEx with
/// `compute` (CUBLAS_COMPUTE_32F_FAST_TF32: fp32 inputs on TF32 tensor cores). Extents must
/// fit in int (cuBLAS's). Throws `std::runtime_error`.
template <class In>
void cublas_gemm_row_major(const In* a, const In* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k,
                           cuda::stream_ref s, cublasComputeType_t compute = CUBLAS_COMPUTE_32F,
                           bool b_k_major = false) {
  const float alpha = 1.0f, beta = 0.0f;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const cublasOperation_t op_b = b_k_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = b_k_major ? ki : ni;
  const cublasHandle_t h = shared_cublas(s).get();
  if (std::is_same_v<In, float> && compute == CUBLAS_COMPUTE_32F) {
    cublas_try(cublasSgemm(h, op_b, CUBLAS_OP_N, ni, mi, ki, &alpha, reinterpret_cast<const float*>(b), ldb,
                           reinterpret_cast<const float*>(a), ki, &beta, c, ni),
               "cublasSgemm");
  } else {
    cublas_try(cublasGemmEx(h, op_b, CUBLAS_OP_N, ni, mi, ki, &alpha, b, cublas_data_type<In>(), ldb, a,
                            cublas_data_type<In>(), ki, &beta, c, CUDA_R_32F, ni, compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
  }
}

/// `cublas_gemm_row_major` for the extents of `sh`.
template <class In>
void cublas_gemm_row_major(const In* a, const In* b, float* c, const gemm_shape& sh, cuda::stream_ref s,
                           cublasComputeType_t compute = CUBLAS_COMPUTE_32F, bool b_k_major = false) {
  cublas_gemm_row_major(a, b, c, sh.m, sh.n, sh.k, s, compute, b_k_major);
}

/// `cublas_gemm_row_major` (true fp32 for float) with B stored K-major (column-major).
template <class In>
void cublas_gemm_row_major_b_k_major(const In* a, const In* b, float* c, const gemm_shape& sh, cuda::stream_ref s) {
  cublas_gemm_row_major(a, b, c, sh.m, sh.n, sh.k, s, CUBLAS_COMPUTE_32F, true);
}

}  // namespace foundry::bench
