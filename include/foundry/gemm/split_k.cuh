#pragma once
/// \file
/// Split-K, shared by the GEMM rungs that use it (rungs 3, 4 and 5):
/// when the C tiles are too few to occupy every SM (1024 × 1024 × 8192 has 64
/// tiles of 128 × 128 and 32 of 128 × 256 for 132 SMs), the K range is cut into
/// slices computed by separate blocks into a workspace, and a second kernel sums
/// the slices in a fixed order (deterministic) into C = alpha·sum + beta·C.
///
/// Why a second kernel: it spreads the partial sums over every SM. Summing inside the
/// GEMM kernel, by the last warp to finish each warp tile, leaves only tiles × warps
/// threads to read the slices, each waiting out one L2 round trip per load: rung 5 at
/// 1024 × 1024 × 8192 took 138 µs that way instead of 38 on the H200.
///
/// The measurements behind these choices, with what was tried and rejected:
/// docs/gemm-history.md in the foundry repository.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>

#include <cuda/std/array>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace foundry::gemm_kernels {

/// Options of a rung launcher that can split K.
struct split_k_options {
  /// Slices of K computed by separate blocks: 0 picks a count from the tile
  /// count and the SM count; 1 disables split-K.
  int split_k = 0;
  /// Scratch for the partial sums, at least `split_k_workspace_elements(p, splits)`
  /// floats; when empty (the default) the launcher allocates it stream-ordered
  /// on the launch stream.
  cuda::std::span<float> workspace{};
};

/// How a launcher cuts K: `splits` slices of `depth` elements each, the last
/// one possibly shorter. `depth` is a multiple of the rung's K step, so only the
/// last slice has a ragged end (and vector alignment along K is kept).
struct split_k_plan {
  int splits = 1;
  std::int64_t depth = 0;
};

/// The plan for K = `k`, stepped `block_k` at a time by a grid of `tiles` blocks
/// of which `slots` can be resident at once on `sm_count` SMs. `requested` > 0
/// is honoured as far as the K steps and the grid's y/z limit allow. Auto (0):
/// one slice while the tiles occupy every SM at least once; otherwise enough
/// slices to fill the slots, each at least `min_k_per_split` deep, at most 16.
/// The count is final: slices that rounding the depth up would leave empty are
/// already dropped, so it sizes the workspace exactly.
[[nodiscard]] inline split_k_plan plan_split_k(std::int64_t tiles, std::int64_t slots, int sm_count, std::int64_t k,
                                               std::int64_t block_k, int requested, std::int64_t min_k_per_split) {
  constexpr std::int64_t max_auto_splits = 16;
  std::int64_t want = 1;
  if (requested > 0) {
    want = requested;
  } else if (tiles < sm_count) {
    want = std::min({slots / std::max<std::int64_t>(tiles, 1), k / min_k_per_split, max_auto_splits});
  }
  const std::int64_t k_steps = std::max<std::int64_t>(1, ceil_div<std::int64_t>(k, block_k));
  want = std::clamp<std::int64_t>(want, 1, std::min<std::int64_t>(k_steps, max_grid_yz));
  split_k_plan plan;
  plan.depth = round_up<std::int64_t>(std::max<std::int64_t>(1, ceil_div<std::int64_t>(k, want)), block_k);
  plan.splits = static_cast<int>(std::max<std::int64_t>(1, ceil_div<std::int64_t>(k, plan.depth)));
  return plan;
}

/// Floats of workspace that `splits` slices of `p` need (0 for one slice).
template <class In>
[[nodiscard]] std::size_t split_k_workspace_elements(const gemm_problem<In, float>& p, int splits) noexcept {
  if (splits <= 1) return 0;
  return static_cast<std::size_t>(splits) * static_cast<std::size_t>(p.m) * static_cast<std::size_t>(p.n);
}

namespace detail {

/// `Width` consecutive floats from `from` (one float4 load for 4: `from` 16-byte aligned).
template <int Width>
__device__ cuda::std::array<float, Width> load_floats(const float* from) {
  if constexpr (Width == 4) {
    const float4 v = *reinterpret_cast<const float4*>(from);
    return {v.x, v.y, v.z, v.w};
  } else {
    return {*from};
  }
}

/// Sums the split-K partial results: C = alpha * sum_z w[z] + beta * C, the
/// slices added in a fixed order (deterministic). Memory-bound: it reads the
/// splits × M × N floats of `w` once and writes C (reading it too when beta != 0).
/// A thread owns `Width` adjacent columns of a row, so the row and column come
/// from the 2D grid, not from dividing a flat index per element.
/// Width 4 needs n and ldc multiples of 4 and `w` and `c` 16-byte aligned.
/// Against the flat-index scalar kernel it replaced, no gain beyond the noise on the H200
/// (rung 5 at 1024 × 1024 × 8192: 38.7 -> 38.2 µs): the reduce is not what limits a split GEMM there.
/// (A template, like every kernel in these headers, so that several translation
/// units may include it.)
template <int Width>
__global__ void split_k_reduce_kernel(const float* __restrict__ w, int splits, std::int64_t m, std::int64_t n,
                                      float* __restrict__ c, std::int64_t ldc, float alpha, float beta) {
  static_assert(Width == 1 || Width == 4, "a thread reads one float or one float4");
  const std::int64_t slice = m * n;
  const std::int64_t row_step = std::int64_t{gridDim.y} * blockDim.y;
  const std::int64_t column_step = std::int64_t{gridDim.x} * blockDim.x * Width;
  for (std::int64_t i = std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y; i < m; i += row_step) {
    for (std::int64_t j = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) * Width; j < n; j += column_step) {
      auto sum = load_floats<Width>(w + i * n + j);
      for (int z = 1; z < splits; ++z) {
        const auto part = load_floats<Width>(w + z * slice + i * n + j);
#pragma unroll
        for (int v = 0; v < Width; ++v) sum[v] += part[v];
      }
      float* out = c + i * ldc + j;
      // beta == 0 must not read C: it may hold NaN or be uninitialised.
      const auto old = beta == 0.0f ? decltype(sum){} : load_floats<Width>(out);
#pragma unroll
      for (int v = 0; v < Width; ++v) sum[v] = beta == 0.0f ? alpha * sum[v] : alpha * sum[v] + beta * old[v];
      if constexpr (Width == 4) {
        *reinterpret_cast<float4*>(out) = make_float4(sum[0], sum[1], sum[2], sum[3]);
      } else {
        *out = sum[0];
      }
    }
  }
}

/// Columns a thread of `split_k_reduce_kernel` sums: 4 (one float4 per slice) when n and
/// ldc are multiples of 4 and `w` and `c` 16-byte aligned, otherwise 1.
[[nodiscard]] inline int split_k_reduce_width(const float* w, std::int64_t n, const float* c,
                                              std::int64_t ldc) noexcept {
  return n % 4 == 0 && ldc % 4 == 0 && is_aligned(w, 16) && is_aligned(c, 16) ? 4 : 1;
}

/// Enqueues `split_k_reduce_kernel` on `s` (asynchronous): C (m × n, leading dimension
/// `ldc` >= n) = alpha * sum of the `splits` slices of `w` + beta * C, where slice z is
/// the m × n row-major block at `w + z * m * n` and does not overlap C; columns per
/// thread as `split_k_reduce_width`. Throws `std::invalid_argument` if
/// `splits` < 1, `cuda_error` if the launch fails.
inline void enqueue_split_k_reduce(const float* w, int splits, std::int64_t m, std::int64_t n, float* c,
                                   std::int64_t ldc, float alpha, float beta, cuda::stream_ref s) {
  FOUNDRY_EXPECTS(splits >= 1, "split-K reduce of " + std::to_string(splits) + " slices: needs at least one");
  if (m == 0 || n == 0) return;
  const int width = split_k_reduce_width(w, n, c, ldc);
  const auto columns = static_cast<std::uint32_t>(std::min<std::int64_t>(ceil_div<std::int64_t>(n, width), 256));
  const std::uint32_t block_x = round_up<std::uint32_t>(columns, 32);
  const launch_config config = make_launch_config_2d(static_cast<std::uint64_t>(ceil_div<std::int64_t>(n, width)),
                                                     static_cast<std::uint64_t>(m), block_x, 256 / block_x);
  if (width == 4) {
    launch(s, config, split_k_reduce_kernel<4>, w, splits, m, n, c, ldc, alpha, beta);
  } else {
    launch(s, config, split_k_reduce_kernel<1>, w, splits, m, n, c, ldc, alpha, beta);
  }
}

/// Enqueues a GEMM cut into `splits` K slices on `s`. `partial(q, slice_stride)`
/// must enqueue the rung's kernel on problem q, slice z into
/// `q.c + z * slice_stride`. One slice: q is `p` itself (stride 0). Several: q is
/// `p` with C replaced by the workspace (ldc = n, alpha = 1, beta = 0), and the
/// reduce then writes C; without a caller workspace one is allocated and freed
/// stream-ordered on `s`. Throws `std::invalid_argument` if the caller's
/// workspace is too small, `cuda_error` if an allocation or a launch fails.
template <class In, class Partial>
void enqueue_split_k(const gemm_problem<In, float>& p, int splits, cuda::std::span<float> workspace, Partial&& partial,
                     cuda::stream_ref s) {
  if (splits <= 1) {
    partial(p, std::int64_t{0});
    return;
  }
  const std::size_t needed = split_k_workspace_elements(p, splits);
  device_buffer<float> owned;
  if (workspace.empty()) {
    owned = device_buffer<float>(needed, s);
    workspace = owned.span();
  }
  FOUNDRY_EXPECTS(workspace.size() >= needed, "split-K workspace of " + std::to_string(workspace.size()) +
                                                  " floats is smaller than the " + std::to_string(needed) + " needed");
  gemm_problem<In, float> q = p;
  q.c = workspace.data();
  q.ldc = p.n;
  q.alpha = 1.0f;
  q.beta = 0.0f;
  partial(q, p.m * p.n);
  enqueue_split_k_reduce(workspace.data(), splits, p.m, p.n, p.c, p.ldc, p.alpha, p.beta, s);
  // `owned` is freed here, stream-ordered after the reduce on `s`.
}

}  // namespace detail
}  // namespace foundry::gemm_kernels
