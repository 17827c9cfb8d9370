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
  /// The first element.
  T* data = nullptr;
  /// Rows of the matrix.
  std::int64_t rows = 0;
  /// Columns of the matrix.
  std::int64_t cols = 0;
  /// Leading dimension: elements between consecutive rows (row-major) or columns (column-major).
  std::int64_t ld = 0;
  /// Row- or column-major.
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
  ///@{
  /// C is m × n; A is m × k, B is k × n.
  std::int64_t m = 0, n = 0, k = 0;
  ///@}
  /// A's first element.
  const In* a = nullptr;
  /// Leading dimension of A.
  std::int64_t lda = 0;
  /// Whether consecutive k of A are adjacent in memory (A row-major).
  bool a_k_contiguous = true;
  /// B's first element.
  const In* b = nullptr;
  /// Leading dimension of B.
  std::int64_t ldb = 0;
  /// Whether consecutive n of B are adjacent in memory (B row-major).
  bool b_n_contiguous = true;
  /// C's first element (row-major).
  Out* c = nullptr;
  /// Leading dimension of C.
  std::int64_t ldc = 0;
  /// Scale of A·B.
  float alpha = 1.0f;
  /// Scale of the C read before the write (0: C is not read).
  float beta = 0.0f;
};

}  // namespace foundry
