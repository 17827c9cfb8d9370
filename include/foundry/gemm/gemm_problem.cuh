#pragma once
/// \file
/// The canonical GEMM problem that every rung of the GEMM ladder solves:
///
///     C = alpha * A * B + beta * C,   A: m×k, B: k×n, C: m×n, C row-major.
///
/// The public `foundry::gemm` reduces every combination of layouts and
/// transposes to this form (a column-major C is the row-major C^T = B^T A^T),
/// so each kernel only has to know, per operand, which index is contiguous.

#include <foundry/core/overlap.cuh>

#include <cstdint>

namespace foundry {

/// How a stored matrix is laid out in memory.
enum class matrix_layout { row_major, col_major };

/// Whether an operand is used as stored or transposed.
enum class matrix_op { none, transpose };

/// How `foundry::gemm` multiplies fp32 inputs (16-bit inputs always run on tensor cores
/// with fp32 accumulation; for them the choice changes nothing).
enum class gemm_math {
  /// fp32 products and sums, as BLAS's SGEMM: the default.
  fp32,
  /// Opt-in: the inputs are read as TF32 (8-bit exponent, 10-bit mantissa; the low 13 bits
  /// of each float are dropped) and multiplied on tensor cores, with fp32 accumulation;
  /// cuBLAS's CUBLAS_TF32_TENSOR_OP_MATH. Each product then carries a relative error of up
  /// to about 2^-9 instead of 2^-24. Where the device has no TF32 kernel in foundry (only
  /// the wgmma rung has one: compute capability 9.0 with sm_90a code) or the problem is
  /// one the plan keeps off it (small, skinny), the fp32 path runs; the plan says which.
  tf32,
};

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
  /// fp32 inputs only: whether the plan may multiply them as TF32 (`gemm_math::tf32`).
  gemm_math math = gemm_math::fp32;
};

}  // namespace foundry

namespace foundry::gemm_kernels {

/// An operand as it lies in memory: `rows` rows of `cols` contiguous elements.
struct stored_shape {
  std::int64_t rows = 0;  ///< stored rows
  std::int64_t cols = 0;  ///< contiguous elements per stored row
};

/// A's stored shape in `p`: m rows of k when K is contiguous, else k rows of m.
template <class In>
[[nodiscard]] constexpr stored_shape stored_a(const gemm_problem<In, float>& p) noexcept {
  return p.a_k_contiguous ? stored_shape{p.m, p.k} : stored_shape{p.k, p.m};
}

/// B's stored shape in `p`: k rows of n when N is contiguous, else n rows of k.
template <class In>
[[nodiscard]] constexpr stored_shape stored_b(const gemm_problem<In, float>& p) noexcept {
  return p.b_n_contiguous ? stored_shape{p.k, p.n} : stored_shape{p.n, p.k};
}

/// The byte range of a stored operand (empty when it has no elements).
template <class In>
foundry::detail::byte_range operand_range(const In* data, stored_shape s, std::int64_t ld) noexcept {
  if (s.rows <= 0 || s.cols <= 0) return {};
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  return {begin, begin + static_cast<std::uintptr_t>((s.rows - 1) * ld + s.cols) * sizeof(In)};
}

}  // namespace foundry::gemm_kernels
