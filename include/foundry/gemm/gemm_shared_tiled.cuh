#pragma once
/// \file
/// Rung 2 of the GEMM ladder: shared-memory tiles.
///
/// A block of 32 × 32 threads computes a 32 × 32 tile of C, one element per
/// thread. For each 32-wide slice of K it stages a 32 × 32 tile of A and one of
/// B in shared memory, so each element loaded from global memory is used 32
/// times instead of once: the global traffic drops 32-fold against rung 1, and
/// the kernel becomes bound by shared-memory loads (two per FMA).
///
/// The measurements behind these choices, with what was tried and rejected:
/// docs/gemm-history.md in the foundry repository.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/gemm/detail/epilogue.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/stream_ref>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace foundry::gemm_kernels {

/// The tile edge of rung 2: 32 matches the warp, so a warp loads one tile row
/// with consecutive addresses. 6.75 TFLOP/s at 4096^3 fp32 on the H200 (0.13× cuBLAS).
inline constexpr int shared_tile = 32;

/// One block per 32 × 32 tile of C (grid-stride over tiles, so any m and n fit
/// the grid limits). The loads are coalesced whichever index of A and B is
/// contiguous: the template flags decide which thread index walks memory, and
/// a tile read across its contiguous index is stored transposed.
/// Rows of the shared tiles are padded to 33 floats so that a warp writing a
/// column touches 32 different banks.
template <bool AKContiguous, bool BNContiguous>
__global__ void __launch_bounds__(shared_tile* shared_tile) shared_tiled_kernel(gemm_problem<float, float> p) {
  constexpr int t = shared_tile;
  __shared__ float a_tile[t][t + 1];  // a_tile[i][k] = A(m0 + i, k0 + k)
  __shared__ float b_tile[t][t + 1];  // b_tile[k][j] = B(k0 + k, n0 + j)
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const std::int64_t tiles_m = ceil_div<std::int64_t>(p.m, t);
  const std::int64_t tiles_n = ceil_div<std::int64_t>(p.n, t);

  for (std::int64_t tm = blockIdx.y; tm < tiles_m; tm += gridDim.y) {
    for (std::int64_t tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
      const std::int64_t m0 = tm * t;
      const std::int64_t n0 = tn * t;
      float sum = 0.0f;
      for (std::int64_t k0 = 0; k0 < p.k; k0 += t) {
        // A: the thread with x = tx reads along A's contiguous index.
        if constexpr (AKContiguous) {
          const std::int64_t i = m0 + ty, k = k0 + tx;
          a_tile[ty][tx] = (i < p.m && k < p.k) ? p.a[i * p.lda + k] : 0.0f;
        } else {
          const std::int64_t i = m0 + tx, k = k0 + ty;
          a_tile[tx][ty] = (i < p.m && k < p.k) ? p.a[k * p.lda + i] : 0.0f;
        }
        if constexpr (BNContiguous) {
          const std::int64_t k = k0 + ty, j = n0 + tx;
          b_tile[ty][tx] = (k < p.k && j < p.n) ? p.b[k * p.ldb + j] : 0.0f;
        } else {
          const std::int64_t k = k0 + tx, j = n0 + ty;
          b_tile[tx][ty] = (k < p.k && j < p.n) ? p.b[j * p.ldb + k] : 0.0f;
        }
        __syncthreads();
        // a_tile[ty][kk] is one broadcast per warp; b_tile[kk][tx] is 32 banks.
#pragma unroll
        for (int kk = 0; kk < t; ++kk) sum += a_tile[ty][kk] * b_tile[kk][tx];
        __syncthreads();  // the next slice overwrites the tiles
      }
      const std::int64_t i = m0 + ty, j = n0 + tx;
      if (i < p.m && j < p.n) {
        float& c = p.c[i * p.ldc + j];
        c = detail::blend(p.alpha, sum, p.beta, &c);
      }
    }
  }
}

/// Enqueues rung 2 on `s` (asynchronous). `p` must already be valid (as
/// `foundry::gemm` checks it). Any m, n, k; k = 0 gives C = beta * C.
/// Throws `cuda_error` if the launch fails.
// A template (of float alone) so that a translation unit that never calls it, such as
// one that includes <foundry/foundry.cuh> for a transform, compiles none of its kernels.
template <class Float>
void gemm_shared_tiled(const gemm_problem<Float, Float>& p, cuda::stream_ref s) {
  static_assert(std::is_same_v<Float, float>, "rung 2 is built for float operands and C");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  if (p.m == 0 || p.n == 0) return;
  launch_config config;
  config.block = dim3(shared_tile, shared_tile, 1);
  const std::int64_t tiles_n = ceil_div<std::int64_t>(p.n, shared_tile);
  const std::int64_t tiles_m = ceil_div<std::int64_t>(p.m, shared_tile);
  // The kernel loops over tiles beyond the grid limits.
  config.grid = dim3(static_cast<unsigned>(std::min<std::int64_t>(tiles_n, max_grid_x)),
                     static_cast<unsigned>(std::min<std::int64_t>(tiles_m, max_grid_yz)), 1);
  if (p.a_k_contiguous && p.b_n_contiguous) {
    launch(s, config, shared_tiled_kernel<true, true>, p);
  } else if (p.a_k_contiguous) {
    launch(s, config, shared_tiled_kernel<true, false>, p);
  } else if (p.b_n_contiguous) {
    launch(s, config, shared_tiled_kernel<false, true>, p);
  } else {
    launch(s, config, shared_tiled_kernel<false, false>, p);
  }
}

}  // namespace foundry::gemm_kernels
