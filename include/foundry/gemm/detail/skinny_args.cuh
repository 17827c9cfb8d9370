#pragma once
/// \file
/// What both skinny kernels (gemm_skinny.cuh on the CUDA cores, gemm_skinny_mma.cuh on the
/// tensor cores) share: the problem oriented with its small side as the rows
/// (`skinny_orient`), the block's K slice, and the store of one result.

#include <foundry/gemm/detail/epilogue.cuh>
#include <foundry/gemm/gemm_problem.cuh>

#include <cstdint>

namespace foundry::gemm_kernels::detail {

/// The problem as the skinny kernels see it: m (the small side) × n, with C(i, j) at
/// `c[i * c_row_stride + j * c_col_stride]` (C^T when the orientation was swapped), and
/// the K slice of block y at `[y * k_per_split, ...)`, its results at `c + y * slice_stride`.
template <class In>
struct skinny_args {
  std::int64_t m = 0, n = 0, k = 0;
  const In* a = nullptr;
  std::int64_t lda = 0;
  bool a_k_contiguous = true;
  const In* b = nullptr;
  std::int64_t ldb = 0;
  bool b_n_contiguous = true;
  float* c = nullptr;
  std::int64_t c_row_stride = 0, c_col_stride = 1;
  float alpha = 1.0f, beta = 0.0f;
  std::int64_t k_per_split = 0;
  std::int64_t slice_stride = 0;
};

/// `p` with its small side as the rows: `p` itself when m <= n, else C^T = B^T A^T
/// (the new A is B^T, k-contiguous where B was not n-contiguous; the new B is A^T).
template <class In>
[[nodiscard]] constexpr skinny_args<In> skinny_orient(const gemm_problem<In, float>& p) noexcept {
  skinny_args<In> g;
  g.k = p.k;
  g.c = p.c;
  g.alpha = p.alpha;
  g.beta = p.beta;
  if (p.m <= p.n) {
    g.m = p.m, g.n = p.n;
    g.a = p.a, g.lda = p.lda, g.a_k_contiguous = p.a_k_contiguous;
    g.b = p.b, g.ldb = p.ldb, g.b_n_contiguous = p.b_n_contiguous;
    g.c_row_stride = p.ldc, g.c_col_stride = 1;
  } else {
    g.m = p.n, g.n = p.m;
    g.a = p.b, g.lda = p.ldb, g.a_k_contiguous = !p.b_n_contiguous;
    g.b = p.a, g.ldb = p.lda, g.b_n_contiguous = !p.a_k_contiguous;
    g.c_row_stride = 1, g.c_col_stride = p.ldc;
  }
  return g;
}

/// The K slice of this block: [begin, end), empty when the slice starts past K.
template <class In>
__device__ __forceinline__ void k_slice(const skinny_args<In>& g, std::int64_t& begin, std::int64_t& end) {
  begin = std::int64_t{blockIdx.y} * g.k_per_split;
  end = begin + g.k_per_split < g.k ? begin + g.k_per_split : g.k;
}

/// Writes the thread's result for C(row, col) of the skinny problem (rows and columns
/// past m and n are skipped): `alpha * acc + beta * C`, C not read when beta == 0.
template <class In>
__device__ __forceinline__ void store_result(const skinny_args<In>& g, std::int64_t row, std::int64_t col, float acc) {
  if (row >= g.m || col >= g.n) return;
  float* c = g.c + std::int64_t{blockIdx.y} * g.slice_stride + row * g.c_row_stride + col * g.c_col_stride;
  *c = blend(g.alpha, acc, g.beta, c);
}

}  // namespace foundry::gemm_kernels::detail
