#pragma once
/// \file
/// Rung 3 of the GEMM ladder: register-blocked fp32 on the CUDA cores.
///
/// By default a block of 256 threads computes a 128 × 128 tile of C; each thread
/// holds an 8 × 8 sub-tile in registers (the policy's `thread_m` × `thread_n`).
/// Per step of K a thread loads 8 values of A and 8 of B from shared memory (four
/// 16-byte loads) and does 64 FMAs with them, so the arithmetic, not the memory,
/// becomes the bound. Around that core:
///
/// - **Vector loads.** Tiles move from global memory in 16-byte `float4`
///   loads when the operand's pointer and leading dimension allow it; otherwise
///   the same kernel issues four predicated scalar loads (the `Vector` flag).
/// - **Double buffering.** Two shared-memory buffers: while the block computes
///   on one, the next K slice is already in flight to registers and is stored
///   into the other, so one `__syncthreads` per slice suffices and the global
///   latency hides behind the FMAs. The register fragments are double-buffered
///   too: the loads for step kk + 1 are issued before the FMAs of step kk.
/// - **Transposed A.** Shared tiles are stored k-major (`[k][m]`, `[k][n]`), so
///   a thread's 4 consecutive rows (or columns) are one `float4` load and a
///   warp reads at most 128 distinct bytes per load: broadcasts, no conflicts.
///   A tile that arrives contiguous along k is transposed on the way in; its
///   rows are padded by 4 floats so that the scattered stores do not collide.
/// - **Thread layout.** A thread's sub-tile is made of 4 × 4 pieces (8 × 8: four,
///   64 rows and 64 columns apart in a 128 × 128 tile); a warp is a 4 × 8 grid of
///   threads, so its A loads touch 64 bytes and its B loads 128 bytes per step.
/// - **Edges.** Every global load is predicated (zeros past M, N, K) and every
///   store checked, so any M, N, K works; the predicates cost a few integer
///   instructions per 512 FMAs.
/// - **Split-K.** When the C tiles are too few to fill the GPU (1024 × 1024 ×
///   8192 has 64 tiles for 132 SMs), the K range is cut into slices computed
///   by separate blocks into a workspace, and a second kernel sums them.
/// - **Raster.** Tiles are visited in groups of 8 tile rows, so that blocks
///   running at the same time share A and B panels in L2.
///
/// The measurements behind these choices, with what was tried and rejected:
/// docs/gemm-history.md in the foundry repository.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/gemm/detail/block_raster.cuh>
#include <foundry/gemm/detail/epilogue.cuh>
#include <foundry/gemm/detail/split_k.cuh>
#include <foundry/gemm/detail/tile_loaders.cuh>
#include <foundry/gemm/gemm_plan.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_bounds.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace foundry::gemm_kernels {

/// Tile shape of rung 3: the block tile, the K slice, the blocks per SM the
/// registers are budgeted for, and the thread sub-tile (a multiple of 4 × 4).
template <int BlockM = 128, int BlockN = 128, int BlockK = 8, int MinBlocksPerSm = 2, int ThreadM = 8, int ThreadN = 8>
struct register_blocked_policy {
  /// 128 × 128: 32 FLOPs per byte moved from L2, enough to keep the FMA units
  /// fed. 48.3 TFLOP/s at 8192^3 fp32 on the H200 (0.94× cuBLAS).
  static constexpr int block_m = BlockM;
  /// Columns of the block tile (see block_m).
  static constexpr int block_n = BlockN;
  /// 8: one float4 of A and one of B per thread per slice, and 17 KiB of
  /// shared memory. BK 16 spills at 2 blocks/SM: 37.4 against 48.3 TFLOP/s at 8192^3 on the H200.
  static constexpr int block_k = BlockK;
  /// 2 blocks (16 warps) per SM: the cap of 128 registers per thread that this
  /// implies holds the default 8 × 8 tile's 64 accumulators, 32 fragment and 8 staging registers
  /// without spills on the float4 path. 48.3 TFLOP/s at 8192^3 on the H200, against 42.1 at 1 block/SM.
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
  /// Tile rows per group of the block raster (detail/block_raster.cuh).
  static constexpr int group_m = 8;
  /// Shared-memory buffers: double buffering, one tile computed while the next is stored.
  static constexpr int stages = 2;
  /// The shallowest K slice of the automatic split: 64 (8 steps of 8). A step is latency
  /// bound (about 1.05 us on the H200), so a grid of few tiles gains from short chains on
  /// more SMs long before the tensor-core rungs' 512: 1950 × 23 × 670 ran 16 tiles × 84
  /// steps in 87.7 us against cuBLAS's 10.7.
  static constexpr std::int64_t min_k_per_split = 64;
  /// Where K is at least `deep_k_from` (512), slices as shallow as this (16: two steps):
  /// a long K over few tiles is a long chain of latency-bound steps, which more, shorter
  /// slices cut. H100, sweep rows, this rule against 64 for every K: 1950 x 23 x 670 (16
  /// tiles) 0.85 -> 0.98 of cuBLAS at 28 slices of 24 (10 of 72 before). Shallow slices for
  /// every K lost on the K = 51 to 139 rows (608 x 118 x 51 0.96 -> 0.82), so shorter K keeps 64.
  static constexpr std::int64_t deep_k_min_k_per_split = 16;
  static constexpr std::int64_t deep_k_from = 512;  ///< see deep_k_min_k_per_split
  /// Where the tiles would fill at most a quarter of the SMs and K is at least
  /// `min_k_per_split`, slices as shallow as one step (8): nearly every SM would otherwise
  /// wait, and each step saved is ~0.3 us of a latency-bound chain. H100, session 27's plan
  /// space (timed as the sweep's rows), 32 x 32 tiles: 25 x 176 x 187 (6 tiles) 7.8 us in 2
  /// slices of 96 (this rule's 64-deep floor), 5.7 in 12 of 16, 4.5 in 24 of 8; 301 x 1 x 87
  /// (10 tiles) 4.2 in 6 of 16. A short K keeps its floor: 9 x 570 x 26 (18 tiles) ran 3.5
  /// unsplit, 3.8 in 2 slices; so do grids of more tiles (608 x 118 x 51, 76 tiles: 4.5
  /// unsplit, 4.9-5.2 split). The small tile's alone: the larger ones stand only where their
  /// blocks fill more than half the SMs (`register_blocked_plan_for_shape`).
  static constexpr std::int64_t few_tiles_min_k_per_split = block_m * block_n <= 32 * 32 ? block_k : min_k_per_split;
  /// Most slices of an automatic split where C has at most `max_splits_max_c_elements`
  /// elements, as rung 5's `wgmma_policy::max_splits`; a larger C keeps
  /// `default_max_auto_splits` (16).
  /// 256 × 256 × 16384 then runs 128 × 128 tiles in 64 slices of 256 instead of 32 × 32
  /// tiles in 16 (102.8 -> 57.6 us on the H100, cuBLAS 57.2).
  static constexpr std::int64_t max_splits = 64;
  /// The largest C (in elements) that `max_splits` applies to: 2^18, past the reduce's
  /// slices kernel (2^16, rung 5's bound), whose one-thread-an-element reduce still keeps up
  /// there: 128 x 1024 x 16384 (8 tiles) in 33 slices instead of 16, 0.83 -> 0.91 of cuBLAS
  /// (H100, the same A/B).
  static constexpr std::int64_t max_splits_max_c_elements = std::int64_t{1} << 18;

  /// A thread's sub-tile of C: (thread_m / 4) × (thread_n / 4) pieces of 4 × 4, spread
  /// over the block tile (`piece_stride_m` and `piece_stride_n` apart), so that each of
  /// a thread's shared loads is one float4 and a warp's loads cover a contiguous span.
  static constexpr int thread_m = ThreadM;
  /// Columns of a thread's sub-tile (see thread_m).
  static constexpr int thread_n = ThreadN;
  static_assert(thread_m % 4 == 0 && thread_n % 4 == 0, "a thread's sub-tile is made of 4 × 4 pieces");
  static_assert(block_m % thread_m == 0 && (block_m / thread_m) % 4 == 0 && block_n % thread_n == 0 &&
                    (block_n / thread_n) % 8 == 0,
                "a warp is a 4 × 8 grid of threads");
  /// Rows between a thread's 4 × 4 pieces.
  static constexpr int piece_stride_m = 4 * block_m / thread_m;
  /// Columns between a thread's 4 × 4 pieces.
  static constexpr int piece_stride_n = 4 * block_n / thread_n;
  /// Threads per block: one per sub-tile.
  static constexpr int threads = (block_m / thread_m) * (block_n / thread_n);
  /// Padding of a shared row that receives transposed (scattered) stores: 4
  /// floats keep rows 16-byte aligned and move the two k-halves of a warp's
  /// stores 16 banks apart.
  static constexpr int smem_pad = 4;

  static_assert(block_k % 8 == 0, "k-contiguous tiles are read in pairs of float4 along k");
  static_assert(threads % 32 == 0 && threads <= 1024, "whole warps, within the block limit");
};

/// The default tile of rung 3.
using register_blocked_default_policy = register_blocked_policy<>;

/// Rung 3's tile for C of at most 64 rows: 64 × 128 at 4 blocks a SM (128 threads of the
/// same 8 × 8 sub-tiles), which wastes no more than half a tile's rows where the default
/// wastes up to 7/8 of them. 40-45 TFLOP/s on large square fp32 shapes (the default: 48).
/// It spills 4-28 bytes a thread in some layouts under the 128-register cap of 4 blocks a SM.
using register_blocked_short_m_policy = register_blocked_policy<64, 128, 8, 4, 8, 8>;

/// Rung 3's tile for C of at most 64 columns: 128 × 64 at 4 blocks a SM, the transpose of
/// the short-M tile (128 threads of 8 × 8 sub-tiles). 16384 × 32 × 16384 took 1503 us with
/// the default's 128-column tiles on an H100 (cuBLAS: 540).
using register_blocked_short_n_policy = register_blocked_policy<128, 64, 8, 4, 8, 8>;

/// Rung 3's tile for C of at most 32 rows (17 to 32: fewer take the skinny rung): 32 × 128,
/// 64 threads of the same 8 × 8 sub-tiles, so that no more than half the rows are wasted where
/// the 64-row tile wastes up to 47 of 64 (32 × 16384 × 16384 fp32 on an H100: 830 us in 64-row
/// tiles, half of them zeros; 446 in these; cuBLAS 499). 64 threads: A's 32 × 8 tile is 64
/// float4, one a thread. 6 blocks a SM: at 8 (128 registers) the kernels spilled 100-156
/// bytes a thread; at 6 they take 168 registers and spill nothing.
using register_blocked_short_m32_policy = register_blocked_policy<32, 128, 8, 6, 8, 8>;

/// Rung 3's tile for C of at most 32 columns and more than 32 rows: 128 × 32, 64 threads of
/// 16 × 4 sub-tiles (a warp is 4 × 8 threads, so 32 columns allow 4 of them a thread), at 6
/// blocks a SM as the 32-row tile (159-168 registers, no spills). 16384 × 32 × 16384 fp32 on an
/// H100: 876 us in 64-column tiles, 590 in these (cuBLAS 539).
using register_blocked_short_n32_policy = register_blocked_policy<128, 32, 8, 6, 16, 4>;

/// Rung 3's tile for products too small to occupy the GPU in the tiles above: 32 × 32, 64
/// threads of 4 × 4 sub-tiles, 8 blocks a SM (75-80 registers, no spills). On an H100 (ncu,
/// base clocks), 1110 × 610 × 2 took 12.9 us in 45 tiles of 128 × 128, cuBLAS 6.3 in 700 of
/// 32 × 32 (64 threads, as here); 608 × 118 × 51 19.6 us in 5 tiles, cuBLAS 6.5 in 76. In
/// the sweep (H100, us, before -> after): 608 × 118 × 51 14.6 -> 5.3, 183 × 1381 × 19 11.9 ->
/// 4.8, 39 × 384 × 8368 53.3 -> 36.2 (48 blocks of 64 × 128), 256 × 256 × 16384 114 -> 99.2
/// (64 blocks); but 128 × 1024 × 16384 118 -> 192 (128 blocks of 128 × 128 in 16 slices) and
/// 102 × 1461 × 554 22.8 -> 28.1 (96 blocks), whence the rule of
/// `register_blocked_plan_for_shape`.
using register_blocked_small_policy = register_blocked_policy<32, 32, 8, 8, 4, 4>;

namespace detail {

/// This thread's register fragments of K step `kk` of the shared tiles `as` and `bs`
/// (rows `a_row` and `b_row` floats long): its thread_m rows of A and thread_n columns of
/// B, one float4 load per 4 × 4 piece. (ty, tx): its place in the thread grid.
template <class Policy>
__device__ void load_register_fragments(float (&a_frag)[Policy::thread_m], float (&b_frag)[Policy::thread_n],
                                        const float* as, const float* bs, int a_row, int b_row, int kk, int ty,
                                        int tx) {
#pragma unroll
  for (int q = 0; q < Policy::thread_m / 4; ++q) {
    const float4 v = *reinterpret_cast<const float4*>(as + kk * a_row + q * Policy::piece_stride_m + ty * 4);
    a_frag[4 * q + 0] = v.x, a_frag[4 * q + 1] = v.y, a_frag[4 * q + 2] = v.z, a_frag[4 * q + 3] = v.w;
  }
#pragma unroll
  for (int q = 0; q < Policy::thread_n / 4; ++q) {
    const float4 v = *reinterpret_cast<const float4*>(bs + kk * b_row + q * Policy::piece_stride_n + tx * 4);
    b_frag[4 * q + 0] = v.x, b_frag[4 * q + 1] = v.y, b_frag[4 * q + 2] = v.z, b_frag[4 * q + 3] = v.w;
  }
}

/// acc += a_frag ⊗ b_frag: one K step of this thread's thread_m × thread_n FMAs. Serpentine
/// order (CUTLASS's SIMT MMA does the same): odd rows walk the columns backwards, so
/// consecutive FFMAs share an operand at every turn as well as along a row, which lets the
/// operand reuse cache skip a register-file read.
template <class Policy>
__device__ void fma_fragments(float (&acc)[Policy::thread_m][Policy::thread_n], const float (&a_frag)[Policy::thread_m],
                              const float (&b_frag)[Policy::thread_n]) {
#pragma unroll
  for (int i = 0; i < Policy::thread_m; ++i) {
#pragma unroll
    for (int jj = 0; jj < Policy::thread_n; ++jj) {
      const int j = i % 2 == 0 ? jj : Policy::thread_n - 1 - jj;
      acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
    }
  }
}

/// Floats of one warp's staging tile in rung 3's staged epilogue: a 16 × 32 piece, no padding
/// (`staged_index` swizzles it).
inline constexpr int rung3_staged_floats = 16 * 32;

/// Where row `r`, column `c` of a warp's 16 × 32 staging tile sits: the column XOR the row's
/// quarter, so that the writes of a warp (4 × 8 threads, each a 4 × 4 block) and the reads
/// of a row (32 lanes) each meet 32 different banks.
__device__ __forceinline__ int staged_index(int r, int c) { return r * 32 + (c ^ ((r >> 2) & 3)); }

/// Warp `warp`'s staging tile in the kernel's two operand buffers (`ABuffer` and `BBuffer`
/// floats, two stages each), free once the K loop is done: the first warps in A's, the rest
/// in B's.
template <int ABuffer, int BBuffer>
__device__ __forceinline__ float* warp_staging(float (&a_smem)[2][ABuffer], float (&b_smem)[2][BBuffer], int warp) {
  constexpr int in_a = 2 * ABuffer / rung3_staged_floats;
  return warp < in_a ? &a_smem[0][0] + warp * rung3_staged_floats : &b_smem[0][0] + (warp - in_a) * rung3_staged_floats;
}

/// The epilogue of rung 3 for C whose rows are off 16-byte boundaries: each of the warp's
/// (thread_m / 4) × (thread_n / 4) pieces of 16 × 32 (rows `row0` + piece × piece_stride_m,
/// columns `col0` + piece × piece_stride_n) goes through the warp's `staging` tile, then out
/// one row of 32 columns (128 contiguous bytes) a store. Same arithmetic as `store_four`'s
/// scalar path.
template <class Policy>
__device__ void store_pieces_staged(const float (&acc)[Policy::thread_m][Policy::thread_n], float* __restrict__ o,
                                    std::int64_t ldo, std::int64_t row0, std::int64_t col0, std::int64_t m,
                                    std::int64_t n, float alpha, float beta, int lane, float* staging) {
  const int ly = lane / 8, lx = lane % 8;
#pragma unroll
  for (int pm = 0; pm < Policy::thread_m / 4; ++pm) {
#pragma unroll
    for (int pn = 0; pn < Policy::thread_n / 4; ++pn) {
      const std::int64_t rows = row0 + pm * Policy::piece_stride_m;
      const std::int64_t col = col0 + pn * Policy::piece_stride_n + lane;
#pragma unroll
      for (int r = 0; r < 4; ++r) {
#pragma unroll
        for (int e = 0; e < 4; ++e) staging[staged_index(4 * ly + r, 4 * lx + e)] = acc[4 * pm + r][4 * pn + e];
      }
      __syncwarp();
      if (col < n) {
#pragma unroll
        for (int r = 0; r < 16; ++r) {
          if (rows + r >= m) break;
          float* const ptr = o + (rows + r) * ldo + col;
          *ptr = blend(alpha, staging[staged_index(r, lane)], beta, ptr);
        }
      }
      __syncwarp();  // the tile is read before the next piece overwrites it
    }
  }
}

}  // namespace detail

/// Rung 3's kernel. Block z computes the K slice `[z * k_per_split, ...)`; its
/// results go to `out` (row-major, leading dimension `ldo`) as
/// `alpha * acc + beta * out`. Without split-K `out` is C; with it, `out` is
/// the block's slice of the workspace, written with alpha = 1, beta = 0.
/// `out_vector`: out and ldo allow float4 stores.
template <class Policy, bool AKContiguous, bool BNContiguous, bool Vector>
__global__ void __launch_bounds__(Policy::threads, resident_blocks_bound(Policy::threads, Policy::min_blocks_per_sm))
    register_blocked_kernel(gemm_problem<float, float> p, std::int64_t k_per_split, float* __restrict__ out,
                            std::int64_t ldo, std::int64_t out_slice_stride, float alpha, float beta, bool out_vector) {
  constexpr int bm = Policy::block_m, bn = Policy::block_n, bk = Policy::block_k;
  constexpr int threads = Policy::threads;
  allow_dependent_launch();
  wait_for_prior_grids();  // a copy of A or B, or the call before, may still run
  using a_loader = detail::operand_loader<bm, bk, threads, Policy::smem_pad, AKContiguous, Vector>;
  using b_loader = detail::operand_loader<bn, bk, threads, Policy::smem_pad, !BNContiguous, Vector>;
  constexpr int a_row = a_loader::row, b_row = b_loader::row;
  __shared__ __align__(16) float a_smem[2][bk * a_row];  // a_smem[buf][k * a_row + i]
  __shared__ __align__(16) float b_smem[2][bk * b_row];  // b_smem[buf][k * b_row + j]
  static_assert(
      (2 * bk * a_row) / detail::rung3_staged_floats + (2 * bk * b_row) / detail::rung3_staged_floats >= threads / 32,
      "the staged epilogue's tiles fit the operand buffers");

  // This thread's place: the thread grid is (bm / thread_m) × (bn / thread_n); a warp covers 4 × 8
  // of it. Its rows are q * piece_stride_m + ty*4 + {0..3} for each row piece q; its
  // columns likewise with tx and piece_stride_n.
  constexpr int thread_m = Policy::thread_m, thread_n = Policy::thread_n;
  constexpr int warps_across = bn / thread_n / 8;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int ty = (warp / warps_across) * 4 + lane / 8;
  const int tx = (warp % warps_across) * 8 + lane % 8;

  // The extents first, then the raster: this order keeps the machine code of the
  // kernel's earlier inline raster (SASS of the sm_90 build, 1-block/SM policies).
  const std::int64_t tiles_m = ceil_div<std::int64_t>(p.m, bm);
  const std::int64_t tiles_n = ceil_div<std::int64_t>(p.n, bn);
  const detail::tile_index tile = detail::grouped_tile(blockIdx.x, tiles_m, tiles_n, Policy::group_m);
  const std::int64_t m0 = tile.m * bm;
  const std::int64_t n0 = tile.n * bn;
  const std::int64_t k_begin = blockIdx.z * k_per_split;
  const std::int64_t k_end = k_begin + k_per_split < p.k ? k_begin + k_per_split : p.k;

  float acc[thread_m][thread_n];
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
#pragma unroll
    for (int j = 0; j < thread_n; ++j) acc[i][j] = 0.0f;
  }

  if (k_end > k_begin) {
    a_loader a_global(p.a, p.lda, m0, p.m, k_begin);
    b_loader b_global(p.b, p.ldb, n0, p.n, k_begin);
    const std::int64_t a_step = AKContiguous ? bk : bk * p.lda;
    const std::int64_t b_step = BNContiguous ? bk * p.ldb : bk;
    // K left from the first k of the tile being loaded; clamped to int for the predicates.
    std::int64_t k_left = k_end - k_begin;
    auto clamp_int = [](std::int64_t v) { return static_cast<int>(v < (1 << 30) ? v : (1 << 30)); };

    float4 a_next[a_loader::loads];
    float4 b_next[b_loader::loads];
    a_global.load(clamp_int(k_left), a_step, a_next);
    b_global.load(clamp_int(k_left), b_step, b_next);
    a_loader::store(a_smem[0], a_next);
    b_loader::store(b_smem[0], b_next);
    __syncthreads();

    // Register fragments, double-buffered across kk.
    float a_frag[2][thread_m];
    float b_frag[2][thread_n];
    detail::load_register_fragments<Policy>(a_frag[0], b_frag[0], a_smem[0], b_smem[0], a_row, b_row, 0, ty, tx);

    int buf = 0;
    for (;;) {
      k_left -= bk;
      const bool has_next = k_left > 0;
      if (has_next) {  // in flight while the FMAs below run
        a_global.load(clamp_int(k_left), a_step, a_next);
        b_global.load(clamp_int(k_left), b_step, b_next);
      }
#pragma unroll
      for (int kk = 0; kk < bk; ++kk) {
        if (kk == bk - 1) {
          if (has_next) {
            // The other buffer was last read before the previous barrier.
            a_loader::store(a_smem[buf ^ 1], a_next);
            b_loader::store(b_smem[buf ^ 1], b_next);
            __syncthreads();
            buf ^= 1;
            detail::load_register_fragments<Policy>(a_frag[0], b_frag[0], a_smem[buf], b_smem[buf], a_row, b_row, 0, ty,
                                                    tx);
          }
        } else {
          detail::load_register_fragments<Policy>(a_frag[(kk + 1) % 2], b_frag[(kk + 1) % 2], a_smem[buf], b_smem[buf],
                                                  a_row, b_row, kk + 1, ty, tx);
        }
        detail::fma_fragments<Policy>(acc, a_frag[kk % 2], b_frag[kk % 2]);
      }
      if (!has_next) break;
    }
  }

  // Epilogue: each thread writes thread_m rows × (thread_n / 4) runs of 4 columns.
  float* const o = out + static_cast<std::int64_t>(blockIdx.z) * out_slice_stride;
  if (!out_vector) {
    // Rows off 16-byte boundaries: through shared memory, so that each row of a warp's
    // 16 × 32 piece goes out in one store of 128 contiguous bytes instead of four stores
    // of every fourth float (5789 × 645 × 1 with ldc 649: 28.0 us on the H100, cuBLAS 9.7).
    __syncthreads();  // every warp has read its last fragments
    float* const staging = detail::warp_staging<bk * a_row, bk * b_row>(a_smem, b_smem, warp);
    detail::store_pieces_staged<Policy>(acc, o, ldo, m0 + (warp / warps_across) * 16, n0 + (warp % warps_across) * 32,
                                        p.m, p.n, alpha, beta, lane, staging);
    return;
  }
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const std::int64_t row = m0 + (i / 4) * Policy::piece_stride_m + ty * 4 + i % 4;
#pragma unroll
    for (int q = 0; q < thread_n / 4; ++q) {
      const std::int64_t col = n0 + q * Policy::piece_stride_n + tx * 4;
      const float v[4] = {acc[i][4 * q + 0], acc[i][4 * q + 1], acc[i][4 * q + 2], acc[i][4 * q + 3]};
      detail::store_four(o, ldo, row, col, p.m, p.n, alpha, beta, out_vector, v);
    }
  }
}

/// The plan of rung 3 for `p` on `sm_count` SMs: `Policy`'s tile and the split-K
/// plan (`plan_split_k_for_tiles`; `requested` as `split_k_options::split_k`), at most
/// `detail::max_auto_splits_for(m, n, Policy::max_splits)` slices.
template <class Policy = register_blocked_default_policy>
[[nodiscard]] gemm_plan register_blocked_plan(const gemm_problem<float, float>& p, int requested, int sm_count) {
  gemm_plan plan = foundry::detail::plan_with_policy<Policy>(gemm_rung::register_blocked, "fp32 inputs");
  const std::int64_t most =
      detail::max_auto_splits_for(p.m, p.n, Policy::max_splits, Policy::max_splits_max_c_elements);
  const std::int64_t tiles =
      ceil_div<std::int64_t>(p.m, Policy::block_m) * ceil_div<std::int64_t>(p.n, Policy::block_n);
  const std::int64_t shallowest = p.k >= Policy::deep_k_from ? Policy::deep_k_min_k_per_split
                                  : 4 * tiles <= sm_count && p.k >= Policy::min_k_per_split
                                      ? Policy::few_tiles_min_k_per_split
                                      : Policy::min_k_per_split;
  detail::record_split(plan,
                       plan_split_k_for_tiles(p.m, p.n, p.k, Policy::block_m, Policy::block_n, Policy::block_k,
                                              Policy::min_blocks_per_sm, requested, sm_count, shallowest, most),
                       p);
  return plan;
}

/// The throughput model with which rung 3 weighs its 64 x 128 and 128 x 64 tiles against the
/// 128 x 128 one on large products (`register_blocked_plan_for_shape`). A grid's time is its
/// busiest SM's: ceil(blocks / SMs) blocks of block_m x block_n x (K of a slice) FMAs at the
/// tile's rate, plus split-K's reduce. The 128 x 128 tile has the most FMAs per byte, but
/// where it pads C badly or leaves the last wave thin, a half tile's finer grid wins.
/// H100, session 29's probe of every rung-3 tile and split on the fp32 sweep
/// (`bench/results/h100/runs/session29/rung3_tile_probe.cu`, timed as the sweep's rows):
/// 4228 x 263 x 2646 281 -> 225 us in 128 x 64 tiles and 3 slices (cuBLAS 164),
/// 563 x 2426 x 2931 301 -> 240 in 64 x 128 tiles and 3 slices (cuBLAS 209); the model puts
/// both at 0.77 of the 128 x 128 plan, and every other product of the sweep from 2^31 FLOPs at
/// 0.92 or more (none of their alternatives ran faster by more than 2%).
struct register_blocked_wave_policy {
  /// Smallest product (2 M N K) the model judges: 2^31, ~50 us at rung 3's 40-48 TFLOP/s,
  /// long enough for throughput to bind. Smaller ones are latency-bound, which this model
  /// does not see (102 x 1461 x 554: it picked 64 x 128 in 4 slices, 19.2 us against 16.3).
  static constexpr double min_flops = 2147483648.0;
  /// FMAs a microsecond one SM runs in 128 x 128 tiles: 48 TFLOP/s over 132 SMs.
  static constexpr double fmas_per_sm_us = 1.8e5;
  /// The 64 x 128 and 128 x 64 tiles' rate against it: 40-45 TFLOP/s against 48 on large squares.
  static constexpr double half_tile_rate = 0.9;
  /// Split-K's reduce: its launch, and the bytes a microsecond at which the slices are written
  /// and read back.
  static constexpr double reduce_launch_us = 2.0;
  static constexpr double reduce_bytes_per_us = 2.5e6;  ///< see reduce_launch_us
  /// A half tile replaces the 128 x 128 plan only where modelled at most this fraction of its time.
  static constexpr double clear_gain = 0.85;
  /// Once a half-tile plan is taken, one with more slices (or the other half tile) replaces it
  /// only where modelled at most this fraction of its time: each slice is a copy of C in
  /// workspace and in the reduce, for gains of a fraction of a percent in the model otherwise
  /// (415 x 21352 x 39579 went to 8 slices of 64 x 128 for 0.03%).
  static constexpr double more_slices_gain = 0.97;
};

/// `Model`'s time (`register_blocked_wave_policy`) for rung 3's `plan` of `p` on `sm_count`
/// SMs, in microseconds: a comparison of plans for one problem, not a prediction.
template <class Model = register_blocked_wave_policy>
[[nodiscard]] double register_blocked_modelled_us(const gemm_plan& plan, const gemm_problem<float, float>& p,
                                                  int sm_count) noexcept {
  const std::int64_t blocks =
      ceil_div<std::int64_t>(p.m, plan.block_m) * ceil_div<std::int64_t>(p.n, plan.block_n) * plan.split_k;
  const auto busiest = static_cast<double>(ceil_div<std::int64_t>(blocks, std::max(sm_count, 1)));
  const auto depth = static_cast<double>(plan.split_k > 1 ? plan.k_per_split : p.k);
  const double rate = Model::fmas_per_sm_us * (plan.block_m * plan.block_n == 128 * 128 ? 1.0 : Model::half_tile_rate);
  return busiest * plan.block_m * plan.block_n * depth / rate +
         detail::modelled_split_k_reduce_us(p.m, p.n, plan.split_k, Model::reduce_launch_us, 0.0,
                                            Model::reduce_bytes_per_us);
}

namespace detail {

/// `plan` (rung 3's 128 x 128 plan for `p`, automatic split), or the 64 x 128 or 128 x 64 plan
/// at 1 to 16 slices that `Model` puts at most `clear_gain` of its time, the fastest such, for
/// products of at least `min_flops`.
template <class Model = register_blocked_wave_policy>
[[nodiscard]] gemm_plan evener_waves(const gemm_plan& plan, const gemm_problem<float, float>& p, int sm_count) {
  if (2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) < Model::min_flops)
    return plan;
  gemm_plan best = plan;
  double best_us = Model::clear_gain * register_blocked_modelled_us<Model>(plan, p, sm_count);
  // Candidates come in rising slice counts; each further slice costs a copy of C in workspace,
  // so a later one must be modelled `more_slices_gain` of the best so far.
  double gain = 1.0;
  const auto consider = [&](const gemm_plan& candidate, const char* why) {
    if (const double us = register_blocked_modelled_us<Model>(candidate, p, sm_count); us < gain * best_us) {
      best = candidate, best_us = us, gain = Model::more_slices_gain;
      best.why = why;
    }
  };
  for (const int splits : {1, 2, 3, 4, 6, 8, 12, 16}) {
    consider(register_blocked_plan<register_blocked_short_m_policy>(p, splits, sm_count),
             "fp32 inputs, 64-row tiles: modelled to load the SMs more evenly than 128 x 128 (C's padding, the last "
             "wave)");
    consider(register_blocked_plan<register_blocked_short_n_policy>(p, splits, sm_count),
             "fp32 inputs, 64-column tiles: modelled to load the SMs more evenly than 128 x 128 (C's padding, the "
             "last wave)");
  }
  return best;
}

}  // namespace detail

/// Rung 3's plan with the tile that fits `p`: `register_blocked_short_m32_policy` for C of at
/// most 32 rows, `register_blocked_short_m_policy` for at most 64, else
/// `register_blocked_short_n32_policy` for C of at most 32 columns,
/// `register_blocked_short_n_policy` for at most 64 (where a row tile and a column tile both
/// fit, the row tile: each pads C to the same area), else the default, or where no split is
/// asked for, a 64 x 128 or 128 x 64 plan that the throughput model puts clearly faster on a
/// large product (`detail::evener_waves`); and
/// `register_blocked_small_policy` instead, with its own split, where that tile's blocks (its
/// tiles times its K slices) fill at most half the SMs, or fewer than all of them with K too
/// short to split (under two slices of `min_k_per_split`). Grids nearer a full wave keep their
/// tile: its FMAs per byte win where each block runs long.
[[nodiscard]] inline gemm_plan register_blocked_plan_for_shape(const gemm_problem<float, float>& p, int requested,
                                                               int sm_count) {
  gemm_plan plan;
  if (p.m <= register_blocked_short_m32_policy::block_m) {
    plan = register_blocked_plan<register_blocked_short_m32_policy>(p, requested, sm_count);
    plan.why = "fp32 inputs, C of at most 32 rows: 32-row tiles";
  } else if (p.m <= register_blocked_short_m_policy::block_m) {
    plan = register_blocked_plan<register_blocked_short_m_policy>(p, requested, sm_count);
    plan.why = "fp32 inputs, C of at most 64 rows: 64-row tiles";
  } else if (p.n <= register_blocked_short_n32_policy::block_n) {
    plan = register_blocked_plan<register_blocked_short_n32_policy>(p, requested, sm_count);
    plan.why = "fp32 inputs, C of at most 32 columns: 32-column tiles";
  } else if (p.n <= register_blocked_short_n_policy::block_n) {
    plan = register_blocked_plan<register_blocked_short_n_policy>(p, requested, sm_count);
    plan.why = "fp32 inputs, C of at most 64 columns: 64-column tiles";
  } else {
    plan = register_blocked_plan(p, requested, sm_count);
    if (requested == 0) plan = detail::evener_waves(plan, p, sm_count);
  }
  const std::int64_t blocks =
      ceil_div<std::int64_t>(p.m, plan.block_m) * ceil_div<std::int64_t>(p.n, plan.block_n) * plan.split_k;
  const bool k_unsplittable = p.k < 2 * register_blocked_default_policy::min_k_per_split;
  if (2 * blocks <= sm_count || (blocks < sm_count && k_unsplittable)) {
    plan = register_blocked_plan<register_blocked_small_policy>(p, requested, sm_count);
    plan.why = "fp32 inputs, larger tiles would leave SMs idle: 32 x 32 tiles";
  }
  return plan;
}

/// The split-K plan of `register_blocked_plan`.
template <class Policy = register_blocked_default_policy>
[[nodiscard]] split_k_plan register_blocked_split_k(const gemm_problem<float, float>& p, int requested, int sm_count) {
  const gemm_plan plan = register_blocked_plan<Policy>(p, requested, sm_count);
  return {plan.split_k, plan.k_per_split};
}

/// Enqueues rung 3's kernel for `p` as `plan` (from `register_blocked_plan<Policy>`)
/// says, on `s` (asynchronous). `p` must already be valid (as `foundry::gemm` checks
/// it); an empty C launches nothing. The float4 path is taken when A's and B's
/// pointers are 16-byte aligned and their leading dimensions multiples of 4;
/// otherwise the same kernel loads scalars (correct, slower). Split-K as
/// `detail::split_k_output` (`workspace` empty: allocated on `s`).
/// Throws `std::invalid_argument` if the grid is too large or a caller workspace too
/// small, `cuda_error` if an allocation or a launch fails.
template <class Policy = register_blocked_default_policy>
void launch_register_blocked(const gemm_plan& plan, const gemm_problem<float, float>& p,
                             cuda::std::span<float> workspace, cuda::stream_ref s) {
  if (p.m == 0 || p.n == 0) return;
  const std::int64_t tiles =
      ceil_div<std::int64_t>(p.m, Policy::block_m) * ceil_div<std::int64_t>(p.n, Policy::block_n);
  FOUNDRY_EXPECTS(tiles <= max_grid_x, "GEMM too large for one grid: " + std::to_string(tiles) + " C tiles");
  launch_config config;
  config.block = dim3(Policy::threads, 1, 1);
  config.grid = dim3(static_cast<unsigned>(tiles), 1, static_cast<unsigned>(plan.split_k));
  config.dependency = launch_dependency::programmatic;  // the kernel waits before its first access

  // The kernel for this problem's layouts and alignment: one of eight instantiations.
  using kernel_type =
      void (*)(gemm_problem<float, float>, std::int64_t, float*, std::int64_t, std::int64_t, float, float, bool);
  constexpr kernel_type kernels[2][2][2] = {
      // [a_k_contiguous][b_n_contiguous][vector]
      {{register_blocked_kernel<Policy, false, false, false>, register_blocked_kernel<Policy, false, false, true>},
       {register_blocked_kernel<Policy, false, true, false>, register_blocked_kernel<Policy, false, true, true>}},
      {{register_blocked_kernel<Policy, true, false, false>, register_blocked_kernel<Policy, true, false, true>},
       {register_blocked_kernel<Policy, true, true, false>, register_blocked_kernel<Policy, true, true, true>}}};
  const bool vector = is_aligned(p.a, 16) && p.lda % 4 == 0 && is_aligned(p.b, 16) && p.ldb % 4 == 0;
  const kernel_type kernel = kernels[p.a_k_contiguous][p.b_n_contiguous][vector];

  const detail::split_k_output<float> out(p, plan.split_k, workspace, s);
  const gemm_problem<float, float>& q = out.problem();
  launch(s, config, kernel, p, plan.k_per_split, q.c, q.ldc, out.slice_stride(), q.alpha, q.beta,
         is_aligned(q.c, 16) && q.ldc % 4 == 0);
  out.reduce(s);
}

/// Whether `plan` has `Policy`'s tile, K step and residency.
template <class Policy>
[[nodiscard]] bool plan_has_policy_tile(const gemm_plan& plan) noexcept {
  return plan.block_m == Policy::block_m && plan.block_n == Policy::block_n && plan.block_k == Policy::block_k &&
         plan.min_blocks_per_sm == Policy::min_blocks_per_sm;
}

/// `launch_register_blocked` with the policy whose tile `plan` names (from
/// `register_blocked_plan_for_shape`). Throws `std::invalid_argument` for a plan of
/// another tile, and as `launch_register_blocked`.
// A template for the reason `gemm_shared_tiled` is one: only a caller compiles the kernels.
template <class Float>
void launch_register_blocked_as_planned(const gemm_plan& plan, const gemm_problem<Float, Float>& p,
                                        cuda::std::span<float> workspace, cuda::stream_ref s) {
  static_assert(std::is_same_v<Float, float>, "rung 3 is built for float operands and C");
  if (plan_has_policy_tile<register_blocked_short_m32_policy>(plan)) {
    return launch_register_blocked<register_blocked_short_m32_policy>(plan, p, workspace, s);
  }
  if (plan_has_policy_tile<register_blocked_short_m_policy>(plan)) {
    return launch_register_blocked<register_blocked_short_m_policy>(plan, p, workspace, s);
  }
  if (plan_has_policy_tile<register_blocked_short_n32_policy>(plan)) {
    return launch_register_blocked<register_blocked_short_n32_policy>(plan, p, workspace, s);
  }
  if (plan_has_policy_tile<register_blocked_short_n_policy>(plan)) {
    return launch_register_blocked<register_blocked_short_n_policy>(plan, p, workspace, s);
  }
  if (plan_has_policy_tile<register_blocked_small_policy>(plan)) {
    return launch_register_blocked<register_blocked_small_policy>(plan, p, workspace, s);
  }
  FOUNDRY_EXPECTS(plan_has_policy_tile<register_blocked_default_policy>(plan),
                  "gemm: a rung-3 plan of a tile that no kernel is built for: " + std::to_string(plan.block_m) + " x " +
                      std::to_string(plan.block_n) + " x " + std::to_string(plan.block_k));
  launch_register_blocked(plan, p, workspace, s);
}

/// Enqueues rung 3 on `s` (asynchronous): `launch_register_blocked` with the plan for
/// `p` on the device of `s` and `options`. Any m, n, k; k = 0 gives C = beta * C.
/// Throws as `launch_register_blocked`, and `cuda_error` if the device query fails.
template <class Policy = register_blocked_default_policy>
void gemm_register_blocked(const gemm_problem<float, float>& p, const split_k_options& options, cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  if (p.m == 0 || p.n == 0) return;
  launch_register_blocked<Policy>(
      register_blocked_plan<Policy>(p, options.split_k, get_device_properties(stream_device(s.get())).sm_count), p,
      options.workspace, s);
}

/// Rung 3 with the default options (automatic split-K, internal workspace).
template <class Policy = register_blocked_default_policy>
void gemm_register_blocked(const gemm_problem<float, float>& p, cuda::stream_ref s) {
  gemm_register_blocked<Policy>(p, split_k_options{}, s);
}

}  // namespace foundry::gemm_kernels
