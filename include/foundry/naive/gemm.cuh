#pragma once
/// \file
/// Rung 1 of the GEMM ladder, the textbook twin of `foundry::gemm`: one thread
/// per element of C, every operand read straight from global memory.
///
///     C(i, j) = alpha * sum_p A(i, p) * B(p, j) + beta * C(i, j)
///
/// Each of the K steps loads one element of A and one of B and does one FMA,
/// so the kernel moves 8 bytes per 2 FLOPs and is bound by the caches, not by
/// arithmetic. The rungs above it exist to raise that ratio.

#include <foundry/core/error.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/stream_ref>

#include <cstdint>

namespace foundry::naive {

/// One thread per C(i, j); grid-stride loops in both dimensions cover any m, n.
/// x runs along n, so that B (when n-contiguous) and C are read and written
/// with consecutive addresses across a warp, and A(i, p) is one broadcast.
/// Inputs of any type convertible to float (float, __half, __nv_bfloat16);
/// accumulation in float.
template <class In, class Out>
__global__ void gemm_kernel(gemm_problem<In, Out> p) {
  const std::int64_t row_step = std::int64_t{gridDim.y} * blockDim.y;
  const std::int64_t col_step = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y; i < p.m; i += row_step) {
    for (std::int64_t j = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; j < p.n; j += col_step) {
      float sum = 0.0f;
      for (std::int64_t k = 0; k < p.k; ++k) {
        const In a = p.a_k_contiguous ? p.a[i * p.lda + k] : p.a[k * p.lda + i];
        const In b = p.b_n_contiguous ? p.b[k * p.ldb + j] : p.b[j * p.ldb + k];
        sum += static_cast<float>(a) * static_cast<float>(b);
      }
      Out& c = p.c[i * p.ldc + j];
      // beta == 0 must not read C: it may hold NaN (BLAS semantics).
      c = static_cast<Out>(p.beta == 0.0f ? p.alpha * sum : p.alpha * sum + p.beta * static_cast<float>(c));
    }
  }
}

/// Enqueues rung 1 on `s` (asynchronous). `p` must already be valid (as
/// `foundry::gemm` checks it); an empty C launches nothing, k = 0 gives
/// C = beta * C. Throws `cuda_error` if the launch fails.
template <class In, class Out>
void gemm(const gemm_problem<In, Out>& p, cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  if (p.m == 0 || p.n == 0) return;
  // 16 × 16 threads: a textbook shape; the kernel is bound by the caches,
  // not by the block shape.
  const launch_config config =
      make_launch_config_2d(static_cast<std::uint64_t>(p.n), static_cast<std::uint64_t>(p.m), 16, 16);
  launch(s, config, gemm_kernel<In, Out>, p);
}

}  // namespace foundry::naive
