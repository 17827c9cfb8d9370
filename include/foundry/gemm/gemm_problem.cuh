#pragma once
/// \file
/// The canonical GEMM problem that every rung of the GEMM ladder solves:
///
///     C = alpha * A * B + beta * C,   A: m×k, B: k×n, C: m×n, C row-major.
///
/// The public `foundry::gemm` reduces every combination of layouts and
/// transposes to this form (a column-major C is the row-major C^T = B^T A^T),
/// so each kernel only has to know, per operand, which index is contiguous.

#include <cstdint>

namespace foundry {

/// How a stored matrix is laid out in memory.
enum class matrix_layout { row_major, col_major };

/// Whether an operand is used as stored or transposed.
enum class matrix_op { none, transpose };

/// A stored matrix: `rows × cols` elements, consecutive rows (row-major) or
/// columns (col-major) `ld` elements apart.
template <class T>
struct matrix_view {
  T* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  matrix_layout layout = matrix_layout::row_major;
};

/// The canonical problem handed to a GEMM kernel's launch function.
/// Element addressing:
///   A(i, p) = a_k_contiguous ? a[i * lda + p] : a[p * lda + i]
///   B(p, j) = b_n_contiguous ? b[p * ldb + j] : b[j * ldb + p]
///   C(i, j) = c[i * ldc + j]
/// When beta == 0, C is not read (it may hold NaN), as in BLAS.
template <class In, class Out>
struct gemm_problem {
  std::int64_t m = 0, n = 0, k = 0;
  const In* a = nullptr;
  std::int64_t lda = 0;
  bool a_k_contiguous = true;
  const In* b = nullptr;
  std::int64_t ldb = 0;
  bool b_n_contiguous = true;
  Out* c = nullptr;
  std::int64_t ldc = 0;
  float alpha = 1.0f;
  float beta = 0.0f;
};

}  // namespace foundry
