#pragma once
/// \file
/// What both skinny kernels (gemm_skinny.cuh on the CUDA cores, gemm_skinny_mma.cuh on the
/// tensor cores) share: the problem oriented with its small side as the rows
/// (`skinny_orient`), the block's K slice, the store of one result, and the split and reason
/// of their plans (`finish_skinny_plan`).

#include <foundry/gemm/detail/epilogue.cuh>
#include <foundry/gemm/detail/split_k.cuh>
#include <foundry/gemm/gemm_plan.cuh>
#include <foundry/gemm/gemm_problem.cuh>

#include <algorithm>

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

/// Blocks of a skinny plan for the oriented problem `g`: `block_n` × `block_m` tiles, times
/// the plan's slices.
template <class In>
[[nodiscard]] std::int64_t skinny_blocks(const gemm_plan& plan, const skinny_args<In>& g) noexcept {
  return ceil_div<std::int64_t>(std::max<std::int64_t>(g.n, 1), plan.block_n) *
         ceil_div<std::int64_t>(std::max<std::int64_t>(g.m, 1), plan.block_m) * plan.split_k;
}

/// Completes a skinny plan whose rung, tile (`block_m` rows of the small side, `block_n` of
/// the large one) and residency are set: split-K while the blocks cannot fill every resident
/// slot (not only every SM, as the compute-bound rungs do: memory-bound, each SM must keep its
/// loads in flight), `slots / tiles` slices at least `min_k_per_split` deep and at most
/// `max_splits`, the depth a multiple of `unit_k`; `requested` as `split_k_options::split_k`.
/// Then the reason: the orientation and the direction the large operand is streamed in, or
/// that the rung was named for more rows than `max_rows`; `mma`: the tensor-core kernel's,
/// `shared_k` (with `mma`) its warps sharing K.
template <class In>
void finish_skinny_plan(gemm_plan& plan, const gemm_problem<In, float>& p, const skinny_args<In>& g, int unit_k,
                        int requested, int sm_count, std::int64_t min_k_per_split, std::int64_t max_splits,
                        std::int64_t max_rows, bool mma, bool shared_k = false) {
  plan.split_k = 1;
  const std::int64_t tiles = skinny_blocks(plan, g);
  const int slots = sm_count * plan.min_blocks_per_sm;
  record_split(plan, plan_split_k(tiles, slots, slots, p.k, unit_k, requested, min_k_per_split, max_splits), p);
  // [CUDA cores, mma.sync, mma.sync with the warps sharing K][small M][along n]
  static constexpr const char* reasons[3][2][2] = {
      {{"small N, solved as C^T = B^T A^T: memory-bound, A streamed once along K",
        "small N, solved as C^T = B^T A^T: memory-bound, A streamed once along M"},
       {"small M: memory-bound, B streamed once along K", "small M: memory-bound, B streamed once along N"}},
      {{"small N, solved as C^T = B^T A^T: memory-bound, A streamed once along K into mma.sync",
        "small N, solved as C^T = B^T A^T: memory-bound, A streamed once along M into mma.sync"},
       {"small M: memory-bound, B streamed once along K into mma.sync",
        "small M: memory-bound, B streamed once along N into mma.sync"}},
      {{"small N, solved as C^T = B^T A^T: memory-bound, A streamed once along K into mma.sync, the warps sharing K "
        "(a small product)",
        "small N, solved as C^T = B^T A^T: memory-bound, A streamed once along M into mma.sync, the warps sharing K "
        "(a small product)"},
       {"small M: memory-bound, B streamed once along K into mma.sync, the warps sharing K (a small product)",
        "small M: memory-bound, B streamed once along N into mma.sync, the warps sharing K (a small product)"}}};
  if (g.m > max_rows) {
    plan.why = mma ? "skinny kernel on mma.sync named for a shape that is not skinny: B read once per block_m rows"
                   : "skinny kernel named for a shape that is not skinny: B read once per block_m rows";
  } else {
    plan.why = reasons[shared_k ? 2 : mma ? 1 : 0][p.m <= p.n][g.b_n_contiguous];
  }
}

}  // namespace foundry::gemm_kernels::detail
