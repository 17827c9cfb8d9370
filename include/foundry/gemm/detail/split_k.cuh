#pragma once
/// \file
/// Split-K, shared by the GEMM rungs that use it (rungs 3, 4 and 5), once:
/// when the C tiles are too few to occupy every SM (1024 × 1024 × 8192 has 64
/// tiles of 128 × 128 and 32 of 128 × 256 for 132 SMs), the K range is cut into
/// slices computed by separate blocks into a workspace, and a second kernel sums
/// the slices in a fixed order (deterministic) into C = alpha·sum + beta·C.
///
/// Why a second kernel: it spreads the partial sums over every SM, and, launched as a
/// programmatic dependent (sm_90), it is resident before the slices' kernel ends. Summing
/// inside the GEMM kernel, by the last warp to finish each warp tile, leaves only tiles ×
/// warps threads to read the slices, each waiting out one L2 round trip per load: rung 5 at
/// 1024 × 1024 × 8192 took 138 µs that way instead of 38 on the H200.
///
/// The measurements behind these choices, with what was tried and rejected:
/// docs/gemm-history.md in the foundry repository.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/core/overlap.cuh>
#include <foundry/gemm/detail/epilogue.cuh>
#include <foundry/gemm/gemm_plan.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/dependent_launch.cuh>
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
#include <type_traits>

namespace foundry::gemm_kernels {

/// Options of a rung launcher that can split K.
struct split_k_options {
  /// Slices of K computed by separate blocks: 0 picks a count from the tile
  /// count and the SM count; 1 disables split-K.
  int split_k = 0;
  /// Workspace for the partial sums, at least `split_k_workspace_bytes(p, splits)` bytes
  /// (the plan's `workspace_bytes`), that is `bytes / sizeof(float)` floats: sizes are in
  /// bytes everywhere, and this span is of `float` so that its type carries the alignment
  /// the partial sums need. When empty (the default) the launcher allocates it
  /// stream-ordered on the launch stream.
  cuda::std::span<float> workspace{};
};

/// How a launcher cuts K: `splits` slices of `depth` elements each, the last
/// one possibly shorter. `depth` is a multiple of the rung's K step, so only the
/// last slice has a ragged end (and vector alignment along K is kept).
struct split_k_plan {
  int splits = 1;
  std::int64_t depth = 0;
};

/// Most slices of an automatic split of the tiled rungs (`plan_split_k`): 16, which bounds
/// the workspace at 16 copies of C and the reduce's chain of loads; rung 5 raises it for a
/// small C (`wgmma_policy::max_splits`), the skinny kernels pass their own.
inline constexpr std::int64_t default_max_auto_splits = 16;

/// The plan for K = `k`, stepped `block_k` at a time by a grid of `tiles` blocks
/// of which `slots` can be resident at once on `sm_count` SMs. `requested` > 0
/// is honoured as far as the K steps and the grid's y/z limit allow. Auto (0):
/// one slice while the tiles occupy every SM at least once; otherwise enough
/// slices to fill the slots, each at least `min_k_per_split` deep, at most
/// `max_auto_splits` (`default_max_auto_splits` for the tiled rungs; the skinny rung
/// passes its own).
/// The count is final: slices that rounding the depth up would leave empty are
/// already dropped, so it sizes the workspace exactly.
[[nodiscard]] inline split_k_plan plan_split_k(std::int64_t tiles, std::int64_t slots, int sm_count, std::int64_t k,
                                               std::int64_t block_k, int requested, std::int64_t min_k_per_split,
                                               std::int64_t max_auto_splits = default_max_auto_splits) {
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

/// The depth below which the tiled rungs' automatic split stops: under 512 of K a
/// slice's pipeline start-up and the reduce outweigh the extra SMs for the wgmma and
/// tensor-core rungs. It does not bind at 1024 × 1024 × 8192 (4 slices of 2048), the
/// shape that splits on the H200.
inline constexpr std::int64_t default_min_k_per_split = 512;

/// A policy's `min_k_per_split` where it names one, else `default_min_k_per_split`.
template <class Policy, class = void>
inline constexpr std::int64_t min_k_per_split_of = default_min_k_per_split;
template <class Policy>
inline constexpr std::int64_t min_k_per_split_of<Policy, std::void_t<decltype(Policy::min_k_per_split)>> =
    Policy::min_k_per_split;

/// The plan of a rung whose grid has one block per `block_m × block_n` tile of an
/// m × n C, `min_blocks_per_sm` of them resident per SM, stepping K `block_k` at a time,
/// no slice shallower than `min_k_per_split`, at most `max_auto_splits` of them automatically
/// (see `plan_split_k`).
[[nodiscard]] inline split_k_plan plan_split_k_for_tiles(std::int64_t m, std::int64_t n, std::int64_t k, int block_m,
                                                         int block_n, int block_k, int min_blocks_per_sm, int requested,
                                                         int sm_count,
                                                         std::int64_t min_k_per_split = default_min_k_per_split,
                                                         std::int64_t max_auto_splits = default_max_auto_splits) {
  const std::int64_t tiles = ceil_div<std::int64_t>(m, block_m) * ceil_div<std::int64_t>(n, block_n);
  return plan_split_k(tiles, std::int64_t{sm_count} * min_blocks_per_sm, sm_count, k, block_k, requested,
                      min_k_per_split, max_auto_splits);
}

/// Bytes of workspace that `splits` slices of `p` need (0 for one slice): `splits`
/// fp32 partial results of M × N. A caller's `split_k_options::workspace` holds them as
/// `bytes / sizeof(float)` floats.
template <class In>
[[nodiscard]] std::size_t split_k_workspace_bytes(const gemm_problem<In, float>& p, int splits) noexcept {
  if (splits <= 1) return 0;
  return static_cast<std::size_t>(splits) * static_cast<std::size_t>(p.m) * static_cast<std::size_t>(p.n) *
         sizeof(float);
}

/// Floats of workspace that `splits` slices of `p` need: `split_k_workspace_bytes / sizeof(float)`,
/// under its name before issue 20 (workspace sizes are in bytes everywhere).
template <class In>
[[deprecated("use split_k_workspace_bytes(p, splits) / sizeof(float)")]] [[nodiscard]] std::size_t
split_k_workspace_elements(const gemm_problem<In, float>& p, int splits) noexcept {
  return split_k_workspace_bytes(p, splits) / sizeof(float);
}

namespace detail {

/// A time model's cost of split-K's reduce of `splits` slices of an m x n C, in microseconds:
/// `launch_us` for its launch, `slice_us` for each slice in the chain of loads, and the slices
/// written by the GEMM kernel and read back at `bytes_per_us` (C itself every plan writes). 0 for
/// one slice. The models of gemm_pack.cuh and gemm_register_blocked.cuh price it with their figures.
[[nodiscard]] constexpr double modelled_split_k_reduce_us(std::int64_t m, std::int64_t n, int splits, double launch_us,
                                                          double slice_us, double bytes_per_us) noexcept {
  if (splits <= 1) return 0.0;
  const double slice_bytes = static_cast<double>(sizeof(float)) * static_cast<double>(m) * static_cast<double>(n);
  return launch_us + splits * slice_us + 2.0 * splits * slice_bytes / bytes_per_us;
}

/// Records `split` in `plan`, with the workspace it needs for `p`, in bytes.
template <class In>
void record_split(gemm_plan& plan, const split_k_plan& split, const gemm_problem<In, float>& p) noexcept {
  plan.split_k = split.splits;
  plan.k_per_split = split.depth;
  plan.workspace_bytes = split_k_workspace_bytes(p, split.splits);
}

/// Sums the split-K partial results: C = alpha * sum_z w[z] + beta * C, the
/// slices added in a fixed order (deterministic). Memory-bound: it reads the
/// splits × M × N floats of `w` once and writes C (reading it too when beta != 0).
/// A thread owns `Width` adjacent columns of a row, so the row and column come
/// from the 2D grid, not from dividing a flat index per element.
/// Width 4 needs n and ldc multiples of 4 and `w` and `c` 16-byte aligned.
/// Against the flat-index scalar kernel it replaced, no gain beyond the noise on the H200
/// (rung 5 at 1024 × 1024 × 8192: 38.7 -> 38.2 µs): the reduce is not what limits a split GEMM there.
/// It lets the next kernel launch (`allow_dependent_launch`) only after its sums, not at its
/// start: the next kernel on the stream is the caller's, often another GEMM whose blocks are
/// fewer than the SMs, and launched while the reduce's blocks still held every SM the block
/// scheduler packed them several to an SM. On an H100, rung 4's fallback split 2 ways at
/// 2048 × 64 × 4096 (64 blocks, latency-bound steps) took 137 µs a call back to back with the
/// trigger at the start, 57 with it after the sums (60 with each call alone).
/// (A template, like every kernel in these headers, so that several translation
/// units may include it.)
template <int Width>
__global__ void split_k_reduce_kernel(const float* __restrict__ w, int splits, std::int64_t m, std::int64_t n,
                                      float* __restrict__ c, std::int64_t ldc, float alpha, float beta) {
  static_assert(Width == 1 || Width == 4, "a thread reads one float or one float4");
  wait_for_prior_grids();  // the slices' kernel, launched just before, may still run
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
      // The epilogue of detail/epilogue.cuh for a row of Width, written out here: as a
      // call (even forced inline) it cost 5 registers and changed the schedule.
      float* out = c + i * ldc + j;
      const auto old = beta == 0.0f ? decltype(sum){} : load_floats<Width>(out);  // beta == 0: C not read
#pragma unroll
      for (int v = 0; v < Width; ++v) sum[v] = beta == 0.0f ? alpha * sum[v] : alpha * sum[v] + beta * old[v];
      if constexpr (Width == 4) {
        *reinterpret_cast<float4*>(out) = make_float4(sum[0], sum[1], sum[2], sum[3]);
      } else {
        *out = sum[0];
      }
    }
  }
  allow_dependent_launch();  // late: see split_k_reduce_kernel's comment
}

/// Sums many split-K slices of a small C: 32 adjacent elements of the flattened M × N a
/// block, its `Groups` warps each adding every `Groups`-th slice (z = warp, warp + Groups,
/// ...), then warp 0 the warps' sums in warp order (deterministic) and the epilogue. Against
/// `split_k_reduce_kernel`, whose thread adds all the slices of its element one after
/// another, each chain of loads is `Groups` times shorter and there are `Groups` times the
/// threads: what a skinny product of a few thousand elements split 64 ways and more needs.
template <int Groups>
__global__ void split_k_reduce_slices_kernel(const float* __restrict__ w, int splits, std::int64_t m, std::int64_t n,
                                             float* __restrict__ c, std::int64_t ldc, float alpha, float beta) {
  __shared__ float sums[Groups][32];
  wait_for_prior_grids();  // the slices' kernel, launched just before, may still run
  const int lane = static_cast<int>(threadIdx.x) % 32, group = static_cast<int>(threadIdx.x) / 32;
  const std::int64_t slice = m * n;
  const std::int64_t e = std::int64_t{blockIdx.x} * 32 + lane;
  float sum = 0.0f;
  if (e < slice) {
    for (int z = group; z < splits; z += Groups) sum += w[z * slice + e];
  }
  sums[group][lane] = sum;
  __syncthreads();
  allow_dependent_launch();  // late: see split_k_reduce_kernel's comment
  if (group != 0 || e >= slice) return;
  float total = 0.0f;
#pragma unroll
  for (int g = 0; g < Groups; ++g) total += sums[g][lane];
  float* out = c + (e / n) * ldc + e % n;
  *out = blend(alpha, total, beta, out);
}

/// Slices from which `enqueue_split_k_reduce` adds them with `split_k_reduce_slices_kernel`
/// when C is small (`split_k_reduce_slices_max_elements`): below, one thread's chain is short.
inline constexpr int split_k_reduce_slices_from = 16;
/// Most elements of C for `split_k_reduce_slices_kernel`: 2^16, 2048 blocks of 256 threads;
/// above, one thread an element (and 4 columns) already fills the device.
inline constexpr std::int64_t split_k_reduce_slices_max_elements = std::int64_t{1} << 16;

/// Most slices of an automatic split for an m × n C, for a rung whose own cap for a small C is
/// `small_c_max_splits` (rung 3's and rung 5's `max_splits`): that cap where C is small enough
/// for `split_k_reduce_slices_kernel` (`split_k_reduce_slices_max_elements`), whose chains of
/// loads stay short however many slices, else `default_max_auto_splits`.
[[nodiscard]] constexpr std::int64_t max_auto_splits_for(
    std::int64_t m, std::int64_t n, std::int64_t small_c_max_splits,
    std::int64_t small_c_max_elements = split_k_reduce_slices_max_elements) noexcept {
  return m * n <= small_c_max_elements ? small_c_max_splits : default_max_auto_splits;
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
// A template (of float alone) so that a translation unit that includes the GEMM headers
// without a split-K call compiles no reduce kernel.
template <class Float>
void enqueue_split_k_reduce(const Float* w, int splits, std::int64_t m, std::int64_t n, Float* c, std::int64_t ldc,
                            Float alpha, Float beta, cuda::stream_ref s) {
  static_assert(std::is_same_v<Float, float>, "the split-K slices are float");
  FOUNDRY_EXPECTS(splits >= 1, "split-K reduce of " + std::to_string(splits) + " slices: needs at least one");
  if (m == 0 || n == 0) return;
  if (splits >= split_k_reduce_slices_from && m * n <= split_k_reduce_slices_max_elements) {
    constexpr int groups = 8;
    launch_config config;
    config.block = dim3(32 * groups, 1, 1);
    config.dependency = launch_dependency::programmatic;  // the kernel waits before its first access
    config.grid = dim3(static_cast<unsigned>(ceil_div<std::int64_t>(m * n, 32)), 1, 1);
    launch(s, config, split_k_reduce_slices_kernel<groups>, w, splits, m, n, c, ldc, alpha, beta);
    return;
  }
  const int width = split_k_reduce_width(w, n, c, ldc);
  const auto columns = static_cast<std::uint32_t>(std::min<std::int64_t>(ceil_div<std::int64_t>(n, width), 256));
  const std::uint32_t block_x = round_up<std::uint32_t>(columns, 32);
  launch_config config = make_launch_config_2d(static_cast<std::uint64_t>(ceil_div<std::int64_t>(n, width)),
                                               static_cast<std::uint64_t>(m), block_x, 256 / block_x);
  config.dependency = launch_dependency::programmatic;  // the kernel waits before its first access
  if (width == 4) {
    launch(s, config, split_k_reduce_kernel<4>, w, splits, m, n, c, ldc, alpha, beta);
  } else {
    launch(s, config, split_k_reduce_kernel<1>, w, splits, m, n, c, ldc, alpha, beta);
  }
}

/// Where a rung's kernel writes when K is cut into `splits` slices, and the reduce
/// that finishes the GEMM. One slice: `problem()` is `p` itself and `slice_stride()`
/// 0, and `reduce` enqueues nothing. Several: `problem()` is `p` with C replaced by
/// the workspace (ldc = n, alpha = 1, beta = 0), slice z going to
/// `problem().c + z * slice_stride()`, and `reduce` enqueues the sum into C on `s`.
/// Without a caller workspace one is allocated stream-ordered on `s` and freed,
/// stream-ordered, when this object dies (after the reduce is enqueued).
/// Throws `std::invalid_argument` if the caller's workspace is too small or overlaps A,
/// B or C, `cuda_error` if the allocation fails.
template <class In>
class split_k_output {
 public:
  split_k_output(const gemm_problem<In, float>& p, int splits, cuda::std::span<float> workspace, cuda::stream_ref s)
      : p_(p), q_(p), splits_(splits) {
    if (splits <= 1) return;
    const std::size_t needed = split_k_workspace_bytes(p, splits) / sizeof(float);  // floats
    if (workspace.empty()) {
      owned_ = device_buffer<float>(needed, s);
      workspace = owned_.span();
    }
    FOUNDRY_EXPECTS(workspace.size() >= needed, "split-K workspace of " + std::to_string(workspace.size()) +
                                                    " floats is smaller than the " + std::to_string(needed) +
                                                    " needed");
    // The slices' partial sums are read back into C, and written while other blocks
    // still read A and B: a workspace that shares bytes with any of them is refused.
    const auto slices = foundry::detail::range_of(workspace.first(needed));
    const auto refuse_overlap = [&slices](foundry::detail::byte_range operand, std::size_t element, const char* what) {
      foundry::detail::expect_no_forbidden_overlap(slices, sizeof(float), operand, element,
                                                   foundry::detail::overlap_rule::disjoint, what);
    };
    refuse_overlap(operand_range(p.c, stored_shape{p.m, p.n}, p.ldc), sizeof(float),
                   "gemm: the split-K workspace and C");
    refuse_overlap(operand_range(p.a, stored_a(p), p.lda), sizeof(In), "gemm: the split-K workspace and A");
    refuse_overlap(operand_range(p.b, stored_b(p), p.ldb), sizeof(In), "gemm: the split-K workspace and B");
    q_.c = workspace.data();
    q_.ldc = p.n;
    q_.alpha = 1.0f;
    q_.beta = 0.0f;
  }

  /// The problem the rung's kernel solves: `p`, or `p` into the workspace.
  [[nodiscard]] const gemm_problem<In, float>& problem() const noexcept { return q_; }
  /// Elements between the slices' partial results (0 for one slice).
  [[nodiscard]] std::int64_t slice_stride() const noexcept { return splits_ > 1 ? p_.m * p_.n : 0; }
  /// Enqueues the sum of the slices into C on `s` (nothing for one slice).
  void reduce(cuda::stream_ref s) const {
    if (splits_ > 1) enqueue_split_k_reduce(q_.c, splits_, p_.m, p_.n, p_.c, p_.ldc, p_.alpha, p_.beta, s);
  }

 private:
  gemm_problem<In, float> p_;
  gemm_problem<In, float> q_;
  int splits_;
  device_buffer<float> owned_;
};

}  // namespace detail
}  // namespace foundry::gemm_kernels
