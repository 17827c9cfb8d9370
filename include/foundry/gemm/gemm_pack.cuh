#pragma once
/// \file
/// Packing: a 16-bit operand whose rows do not start on 16-byte boundaries (a base
/// pointer off a 16-byte boundary, or a leading dimension not a multiple of 8 elements)
/// keeps rungs 4 and 5 off their fast kernels, which move operands 16 bytes at a time
/// (`cp.async`, TMA). Where the product is large next to the operand, `foundry::gemm`
/// first copies it into the workspace, dense and aligned, and runs the fast kernel on
/// the copy:
///
///     const foundry::gemm_plan plan = foundry::make_gemm_plan(problem);
///     // "wgmma 128x256x64, 4 stages, 1 block/SM, A packed (ld 4104), split-K 1 (...): ..."
///
/// - The copy keeps the operand's orientation (a K-contiguous A stays K-contiguous): both
///   fast kernels read either contiguity (TMA boxes and wgmma's transpose bit; ldmatrix
///   and its `.trans`), and a copy reads and writes contiguous runs where a transpose
///   would stage tiles in shared memory. Its leading dimension is the stored row length
///   rounded up to 8 elements (`pack_ld`); the elements between a row's end and the next
///   row are written as zeros, so the whole copy is initialised.
/// - The copies sit at the front of the plan's workspace, each `pack_alignment`-aligned,
///   A's first; split-K's slices follow (`gemm_plan::pack_bytes` says where).
/// - TF32 (fp32 inputs under `gemm_math::tf32`): the wgmma kernel reads both operands
///   K-major only (the TF32 wgmma has no transpose), so an M-contiguous A or an
///   N-contiguous B is copied transposed, with `transpose`'s tiled kernel
///   (algorithms/transpose.cuh), into a K-contiguous copy whose row length is rounded up
///   to 4 floats. Its padding is left unwritten: TMA reads a copy only within its extents.
///   TF32 copies follow the ceiling rule alone.
/// - fp32 on the CUDA cores (rung 3): its float4 path needs A's and B's rows on 16-byte
///   boundaries; a misaligned operand is copied, orientation kept, ld rounded up to 4 floats,
///   by the ceiling rule alone, for products of at least 2^31 FLOPs
///   (`register_blocked_pack_policy`). The scalar path's cost is in
///   its instructions (four loads and their predicates for each float4), which the large
///   products feel; the small ones are latency-bound either way, and a copy would only add
///   its launch.
/// - The rule has two parts, with their figures in `gemm_pack_policy`. A product of at least
///   `min_flops` is packed when the copies' bytes (read and written) cost no more time than
///   the product would at the device's ceilings (`packing_pays`). Any other is packed when a
///   time model (`modelled_us`) puts the copies and the fast kernel clearly under rung 4's
///   fallback, whose K steps are latency-bound, at the split that the same model gives the
///   fallback; otherwise it runs the fallback at that split (`detail::pack_where_it_pays`,
///   gemm.cuh).
///
/// The copy kernel is not `copy_2d` (algorithms/transpose.cuh): that one gives a block to
/// each stored row, which leaves most of a block idle on the narrow rows a packed operand
/// often has (an M-contiguous A of 82 rows: 82 of 512 threads), and leaves the padding
/// unwritten. Here one thread writes one 16-byte vector of the copy, from a flat index over
/// all rows.

#include <foundry/algorithms/transpose.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/core/overlap.cuh>
#include <foundry/gemm/detail/epilogue.cuh>
#include <foundry/gemm/detail/split_k.cuh>
#include <foundry/gemm/gemm_plan.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/thread/vector.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace foundry::gemm_kernels {

/// The packing rule's figures, its time model's, and the copy kernel's block. The rule has
/// two parts (`detail::pack_where_it_pays` in gemm.cuh applies them):
/// - the ceilings (`packing_pays`, `flops_per_byte` and `min_flops`): for a large product,
///   pack when the copies cost no more than the product would at the device's ceilings,
///   unless the alternative is rung 4's fallback and the time model puts it clearly
///   (`clear_gain`) under the copies and the fast kernel;
/// - the time model (`modelled_us`, the figures from `fallback_call_us` on): otherwise, where
///   the alternative is rung 4's fallback, pack when the copies and the fast kernel are
///   modelled clearly faster than the fallback at the split the same model favours,
///   whatever the product's size. The fallback is latency-bound: each 32-deep K step of a
///   block waits on its scalar loads (~0.9 us), so a product of a few MFLOPs can take tens of
///   microseconds there, and a split that shortens each block's chain of steps, or the
///   copies' few microseconds, pays.
///
/// Times are in microseconds, fitted on an H100 (session 21's fallback probe,
/// `bench/results/h100/runs/session21/fallback-probe.csv`: rung 4's fallback at 1 to 16
/// slices and the packed plan of 63 misaligned bf16 problems, each timed as back-to-back
/// calls; the unsplit fallback's times within 20% of the model but for 5 of 63, the packed
/// plans' for 50 of 63). The model is for comparing plans of one problem, not for
/// predicting a call's time.
struct gemm_pack_policy {
  /// FLOPs the tensor cores run in the time DRAM moves one byte: the H200's dense 16-bit
  /// peak over its bandwidth, 989 TFLOP/s / 4.8 TB/s = 206 (the A100: 312 / 2.0 = 156).
  /// A copy of B bytes costs no more than the product at the ceilings when
  /// B <= max(2 M N K / flops_per_byte, the product's own bytes).
  static constexpr double flops_per_byte = 200.0;
  /// Smallest product (2 M N K) the ceiling rule packs: 2^28, 512^3 multiply-adds. There
  /// the fallback takes at least 11 us at its throughput bound (~24 TFLOP/s on the H200), so
  /// the copies' launches (`launch_us` each) cost less than they save; below it, only the
  /// time model packs.
  static constexpr double min_flops = 268435456.0;
  /// Threads per block of the copy kernel (one 16-byte vector each).
  static constexpr int block_threads = 256;

  /// A call of the fallback beyond its steps: 3 us (one step of a single block, 3.0-3.7 us).
  static constexpr double fallback_call_us = 3.0;
  /// One 32-deep K step of a fallback block, latency-bound on its scalar loads: 0.9 us
  /// (0.84-0.98 over 75 to 447 steps of one block an SM).
  static constexpr double fallback_step_us = 0.9;
  /// A step's issue time for each block resident on an SM: a step takes the larger of
  /// `fallback_step_us` and this times the blocks an SM holds (the plan's waves): 0.6 us
  /// (9204x3883x237, 67 blocks an SM: 36.9 us a step).
  static constexpr double fallback_block_step_us = 0.6;
  /// Bytes a microsecond the fallback writes C at, where that binds (a step or two): 1.8 TB/s
  /// (2502x11840x18: 118 MB in 69.7 us; 16384x16384x1: 1.07 GB in 546).
  static constexpr double fallback_c_bytes_per_us = 1.8e6;
  /// A call of the fast kernels beyond their steps and C: 3 us.
  static constexpr double fast_call_us = 3.0;
  /// One 64-deep step of the fast kernels per wave of resident blocks, its loads pipelined
  /// behind the previous steps' mma: 0.5 us, fitted on 128 x 256 tiles.
  static constexpr double fast_step_us = 0.5;
  /// 0: every tile's step takes `fast_step_us`, as the packing rule was fitted. Otherwise
  /// the rows of A and B a step of the fitted tile loads (384), and a tile takes
  /// `fast_step_us` in proportion to its block_m + block_n (`wgmma_tiling_policy`).
  static constexpr double fast_step_tile_rows = 0.0;
  /// 0: no bound from reading A and B. Otherwise the bytes a microsecond the fast kernels
  /// read A and B at, once each, a lower bound on their time (`wgmma_tiling_policy`).
  static constexpr double operand_bytes_per_us = 0.0;
  /// Bytes a microsecond the fast kernels write C at where its rows start on 32-byte sectors
  /// (`c_rows_on_sectors`), and where they do not (each 128-byte row of a warp's store
  /// straddles five sectors): 2.8 and 1.5 TB/s (16384x16384x1: 1.07 GB in 385 us;
  /// 10535x4849x17, ldc 4851: 204 MB in 162).
  static constexpr double fast_c_bytes_per_us = 2.8e6;
  static constexpr double fast_c_off_sector_bytes_per_us = 1.5e6;  ///< see fast_c_bytes_per_us
  /// One more kernel on the stream before the fast one (a copy), with its share of the
  /// workspace's stream-ordered allocation: 3.5 us.
  static constexpr double launch_us = 3.5;
  /// Bytes per microsecond that the copies and the reduce move: 2.7 TB/s.
  static constexpr double bytes_per_us = 2.7e6;
  /// Split-K's reduce beyond its bytes: 1 us for its launch, which the slices' kernel's
  /// early trigger mostly hides, and 0.05 us for each slice in the chain of loads.
  static constexpr double reduce_launch_us = 1.0;
  static constexpr double reduce_slice_us = 0.05;  ///< see reduce_launch_us
  /// Most slices the model gives the fallback: the cap of the rungs' automatic split
  /// (`plan_split_k`), which bounds the workspace at 16 copies of C and the reduce's chain.
  static constexpr int max_fallback_splits = 16;
  /// The same cap where C has at most `detail::split_k_reduce_slices_max_elements` (2^16)
  /// elements, whose reduce adds the slices several warps to an element: 16 here, as the
  /// packing rule was fitted (`max_fallback_splits_for`).
  static constexpr int small_c_max_fallback_splits = 16;
  /// A plan replaces the rung's own only where it is modelled at most this fraction of its
  /// time. On the probe's 63 problems the model's choices ran 1.02x the best plan's time
  /// (geometric mean) at 0.85, 1.04x at 0.75.
  static constexpr double clear_gain = 0.85;
};

/// The time model as rung 4's fallback chooses its split (`fallback_at_modelled_splits`,
/// gemm.cuh): `gemm_pack_policy` with each block's step issued in 0.3 us, not 0.6. Refitted
/// on the fallback's splits that session 25's plan-space probe timed (32 problems, H100):
/// the split the model picks ran 1.065x the best split's time (geometric mean) at 0.6 and
/// 1.034x at 0.3 (102 x 1461 x 554: 6 slices, not 5; 15992 x 9 x 14282: 10, not 1;
/// 1950 x 23 x 670: 11, not 7). Whether to pack instead is still decided with
/// `gemm_pack_policy`, whose figures that choice was fitted with.
struct fallback_split_policy : gemm_pack_policy {
  static constexpr double fallback_block_step_us = 0.3;  ///< see gemm_pack_policy
  /// Up to 32 slices for a small C: on the H100 (session 27, the bf16 and fp16 sweeps of the
  /// rule and of main alternated in one call), 12 x 470 x 7800 (8 tiles, 244 steps of K) ran
  /// 15.7 us in 31 slices of 256 against 21.3 in the rung's own 15 (cuBLAS 16.4 bf16, 13.4
  /// fp16); 29 x 13 x 2378 (one tile, 75 steps) 7.2 in 25 against 9.2 in 15. The plan-space
  /// probe of that call timed 29 x 13 x 2378 at 6.2 us in 38 slices (a cap of 64:
  /// runs/session27/small-c-fallback-64.patch, not yet run on a GPU).
  static constexpr int small_c_max_fallback_splits = 32;
};

/// Most slices `Policy`'s time model gives rung 4's fallback for an m x n C:
/// `small_c_max_fallback_splits` where C is small enough for the reduce that adds the slices
/// several warps to an element (`detail::split_k_reduce_slices_max_elements`), else
/// `max_fallback_splits`.
template <class Policy>
[[nodiscard]] constexpr int max_fallback_splits_for(std::int64_t m, std::int64_t n) noexcept {
  return m * n <= detail::split_k_reduce_slices_max_elements ? Policy::small_c_max_fallback_splits
                                                             : Policy::max_fallback_splits;
}

/// The time model as the wgmma rung's choice between its 128 x 256 and 128 x 64 tiles uses
/// it (`wgmma_plan`, gemm_wgmma.cuh): `gemm_pack_policy` with a step in proportion to the
/// rows of A and B it loads (128 x 64: half of 128 x 256's, a step bound by the bytes TMA
/// brings through L2 rather than by the tensor cores), A and B read once at `bytes_per_us`
/// as a lower bound (deep-K products with a small C stream their operands: 128 x 1024 x
/// 16384 reads 38 MB), and a smaller margin, the two plans being one kernel. Assumptions, not
/// a fit; session 26's A/B (H100) ran the plans they chose faster on 4 of the 5 sweep rows that
/// changed (256 x 256 x 16384 0.70 -> 0.93 of cuBLAS). The fifth, 82 x 2455 x 7918, ran slower
/// (A re-read through L2 by four times the column tiles, over slices four times as deep):
/// `wgmma_plan` bounds the narrow slices' depth for it, outside the model.
struct wgmma_tiling_policy : gemm_pack_policy {
  static constexpr double fast_step_tile_rows = 384.0;                            ///< 128 + 256
  static constexpr double operand_bytes_per_us = gemm_pack_policy::bytes_per_us;  ///< 2.7 TB/s
  static constexpr double clear_gain = 0.9;  ///< one kernel, two tilings: the common terms cancel
};

/// The ceiling rule for fp32 on the CUDA cores (rung 3), whose float4 path needs A's and B's
/// rows on 16-byte boundaries (otherwise each float4 becomes four predicated scalar loads):
/// the same rule and threshold as `gemm_pack_policy`, with the CUDA cores' FLOPs per byte.
struct register_blocked_pack_policy : gemm_pack_policy {
  /// fp32 FLOPs on the CUDA cores in the time DRAM moves one byte: cuBLAS SGEMM's 51 TFLOP/s
  /// over the H200's 4.8 TB/s, 10.6, rounded down. A copy of an operand then costs at most
  /// about as long as the product's own operand traffic.
  static constexpr double flops_per_byte = 10.0;
  /// Smallest product packed: 2^31 FLOPs (~50 us on rung 3). Below it the float4 path saves
  /// less than a copy of the large operand costs (H100 sweep, rung 3 alone -> packed, us):
  /// 125 x 10970 x 318 (0.87 GFLOP, 28 MB copied) 60.2 -> 72.3, 127 x 5368 x 617 38.9 -> 46.2;
  /// above it every packed row gained: 9204 x 3883 x 237 529.7 -> 431.6, 3324 x 10802 x 134
  /// 299.3 -> 257.0, 82 x 2455 x 7918 150.4 -> 134.1 (155 MB copied), 563 x 2426 x 2931
  /// 320.5 -> 311.5. The one small row that gained, 654 x 3234 x 130 (44.0 -> 40.7), is left out.
  static constexpr double min_flops = 2147483648.0;
  /// Shallowest K that is packed: 64, 8 of rung 3's K steps. The scalar loads cost per K
  /// step; below this the time goes to C's tiles (written once, after a few steps), which a
  /// copy of A or B does not speed up (16384 x 16384 x 1: 348 us on the H100, cuBLAS 404).
  static constexpr std::int64_t min_k = 64;
};

/// Alignment of each copy in the workspace: what `cudaMallocAsync` returns, and more
/// than the 16 bytes TMA and `cp.async` need.
inline constexpr std::size_t pack_alignment = 256;

/// Elements in the 16 bytes that `cp.async` and TMA move at a time.
template <class In>
inline constexpr std::int64_t pack_ld_multiple = static_cast<std::int64_t>(16 / sizeof(In));

/// Whether the rows of a stored operand at `data`, `ld` elements apart, all start on
/// 16-byte boundaries, as the fast kernels of rungs 4 and 5 need.
template <class In>
[[nodiscard]] bool operand_rows_aligned(const In* data, std::int64_t ld) noexcept {
  return ld % pack_ld_multiple<In> == 0 && is_aligned(data, 16);
}

/// The leading dimension of a copy whose stored rows are `cols` elements long: `cols`
/// rounded up to `pack_ld_multiple` (at least one multiple).
template <class In>
[[nodiscard]] constexpr std::int64_t pack_ld(std::int64_t cols) noexcept {
  return round_up<std::int64_t>(std::max<std::int64_t>(cols, 1), pack_ld_multiple<In>);
}

/// Bytes one copy takes in the workspace: its rows at `pack_ld`, rounded up to
/// `pack_alignment` so that the next region starts aligned.
template <class In>
[[nodiscard]] constexpr std::size_t pack_region_bytes(stored_shape s) noexcept {
  return round_up<std::size_t>(
      static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(pack_ld<In>(s.cols)) * sizeof(In), pack_alignment);
}

/// The stored shape of a copy of an operand of stored shape `s`: the same, or transposed.
[[nodiscard]] constexpr stored_shape copy_shape(stored_shape s, bool transposed) noexcept {
  return transposed ? stored_shape{s.cols, s.rows} : s;
}

/// A's copy's stored shape under `plan` (A's own, or transposed).
template <class In>
[[nodiscard]] constexpr stored_shape packed_a_shape(const gemm_problem<In, float>& p, const gemm_plan& plan) noexcept {
  return copy_shape(stored_a(p), plan.pack_a_transposed);
}

/// B's copy's stored shape under `plan` (B's own, or transposed).
template <class In>
[[nodiscard]] constexpr stored_shape packed_b_shape(const gemm_problem<In, float>& p, const gemm_plan& plan) noexcept {
  return copy_shape(stored_b(p), plan.pack_b_transposed);
}

/// Which operands to copy, and the copies' layout: what `record_packing` writes into a plan.
struct gemm_pack_plan {
  bool a = false;            ///< copy A
  bool b = false;            ///< copy B
  bool transpose_a = false;  ///< A's copy is K-contiguous where A is M-contiguous
  bool transpose_b = false;  ///< B's copy is K-contiguous where B is N-contiguous
  std::int64_t lda = 0;      ///< A's copy's leading dimension (0: not copied)
  std::int64_t ldb = 0;      ///< B's copy's leading dimension (0: not copied)
  std::size_t bytes = 0;     ///< workspace the copies take, at its front
  double copy_bytes = 0.0;   ///< bytes the copy kernels read and write
  /// Whether an operand is copied.
  [[nodiscard]] constexpr bool any() const noexcept { return a || b; }
};

/// The ceiling rule: whether copying `copy_bytes` (read and written) costs no more than
/// the product of `p` at the device's ceilings, 2 M N K FLOPs at the tensor cores' peak or
/// the product's own bytes (A and B read once, C written, and read when beta != 0) at
/// DRAM bandwidth, whichever takes longer; and the product is at least
/// `Policy::min_flops`. Then the copy and the fast kernel together take at most about
/// twice the product's time at the ceilings, against the fallback's ~24 TFLOP/s (1/40 of
/// the H200's peak). Where it fails, the time model (`modelled_us`) may still find
/// packing faster than the fallback.
template <class In, class Policy = gemm_pack_policy>
[[nodiscard]] bool packing_pays(const gemm_problem<In, float>& p, double copy_bytes) noexcept {
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n), k = static_cast<double>(p.k);
  const double flops = 2.0 * m * n * k;
  const double product_bytes =
      static_cast<double>(sizeof(In)) * (m * k + k * n) + sizeof(float) * m * n * (p.beta != 0.0f ? 2.0 : 1.0);
  return flops >= Policy::min_flops && copy_bytes <= std::max(flops / Policy::flops_per_byte, product_bytes);
}

/// Bytes the copy kernel reads and writes for a stored operand of shape `from` copied to
/// shape `to` (`from` itself, or transposed): its elements, and the rows of the copy at
/// `pack_ld`.
template <class In>
[[nodiscard]] constexpr double pack_copy_bytes(stored_shape from, stored_shape to) noexcept {
  return static_cast<double>(sizeof(In)) * (static_cast<double>(from.rows) * static_cast<double>(from.cols) +
                                            static_cast<double>(to.rows) * static_cast<double>(pack_ld<In>(to.cols)));
}

/// `pack_copy_bytes` of a copy that keeps the operand's orientation.
template <class In>
[[nodiscard]] constexpr double pack_copy_bytes(stored_shape s) noexcept {
  return pack_copy_bytes<In>(s, s);
}

/// The copies that would let the fast kernels read `p`: each operand whose rows are not all
/// 16-byte aligned (`operand_rows_aligned`), and with `k_major` (TF32) each one that is not
/// K-contiguous, transposed; whatever they cost. Touches no GPU.
template <class In>
[[nodiscard]] gemm_pack_plan operands_to_copy(const gemm_problem<In, float>& p, bool k_major = false) noexcept {
  gemm_pack_plan plan;
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return plan;
  plan.transpose_a = k_major && !p.a_k_contiguous;
  plan.transpose_b = k_major && p.b_n_contiguous;
  if (plan.transpose_a || !operand_rows_aligned(p.a, p.lda)) {
    const stored_shape a = copy_shape(stored_a(p), plan.transpose_a);
    plan.a = true;
    plan.lda = pack_ld<In>(a.cols);
    plan.bytes += pack_region_bytes<In>(a);
    plan.copy_bytes += pack_copy_bytes<In>(stored_a(p), a);
  }
  if (plan.transpose_b || !operand_rows_aligned(p.b, p.ldb)) {
    const stored_shape b = copy_shape(stored_b(p), plan.transpose_b);
    plan.b = true;
    plan.ldb = pack_ld<In>(b.cols);
    plan.bytes += pack_region_bytes<In>(b);
    plan.copy_bytes += pack_copy_bytes<In>(stored_b(p), b);
  }
  return plan;
}

/// The operands of `p` to copy by the ceiling rule: those of `operands_to_copy` (with
/// `k_major` as there), if `packing_pays` for the copies together; otherwise none. Touches
/// no GPU.
template <class In, class Policy = gemm_pack_policy>
[[nodiscard]] gemm_pack_plan plan_packing(const gemm_problem<In, float>& p, bool k_major = false) noexcept {
  const gemm_pack_plan plan = operands_to_copy(p, k_major);
  if (!plan.any() || !packing_pays<In, Policy>(p, plan.copy_bytes)) return gemm_pack_plan{};
  return plan;
}

/// The time model's cost of split-K's reduce for `splits` slices of an m x n C
/// (`detail::modelled_split_k_reduce_us` with `Policy`'s figures): its launch, a chain of
/// `splits` loads per element of C, and the slices written and read back. 0 for one slice.
template <class Policy = gemm_pack_policy>
[[nodiscard]] constexpr double modelled_reduce_us(std::int64_t m, std::int64_t n, int splits) noexcept {
  return detail::modelled_split_k_reduce_us(m, n, splits, Policy::reduce_launch_us, Policy::reduce_slice_us,
                                            Policy::bytes_per_us);
}

/// The time model (`gemm_pack_policy`) of `plan` (a 16-bit plan of rung 4 or 5) for `p` on
/// `sm_count` SMs, in microseconds. With `steps` the block_k steps of one K slice, `tiles`
/// the block tiles, `waves` = ceil(tiles x splits / (sm_count x min_blocks_per_sm)) and
/// `c_bytes` = 4 M N:
/// - the fallback: fallback_call_us + the larger of steps x max(fallback_step_us, waves x
///   fallback_block_step_us) (each step latency-bound, or bound by the issue of the blocks
///   an SM holds) and c_bytes at fallback_c_bytes_per_us;
/// - a fast kernel: fast_call_us + for each copy `launch_us` and its bytes at `bytes_per_us`
///   + the larger of steps x waves x fast_step_us (pipelined; where `fast_step_tile_rows`
///   is set, in proportion to the tile's block_m + block_n over it), A and B read once at
///   `operand_bytes_per_us` (where set) and c_bytes at
///   fast_c_bytes_per_us, or fast_c_off_sector_bytes_per_us where C's rows are off sectors;
/// - either, when K is split: `modelled_reduce_us`.
/// Not a prediction of the call's time: a comparison of plans for one problem.
template <class In, class Policy = gemm_pack_policy>
[[nodiscard]] double modelled_us(const gemm_plan& plan, const gemm_problem<In, float>& p, int sm_count) noexcept {
  if (p.m <= 0 || p.n <= 0 || plan.block_m <= 0 || plan.block_n <= 0 || plan.block_k <= 0) return 0.0;
  const std::int64_t tiles = ceil_div<std::int64_t>(p.m, plan.block_m) * ceil_div<std::int64_t>(p.n, plan.block_n);
  const std::int64_t depth = plan.split_k > 1 ? plan.k_per_split : p.k;
  const auto steps = static_cast<double>(std::max<std::int64_t>(1, ceil_div<std::int64_t>(depth, plan.block_k)));
  const std::int64_t slots = std::max<std::int64_t>(1, std::int64_t{sm_count} * std::max(plan.min_blocks_per_sm, 1));
  const auto waves = static_cast<double>(ceil_div<std::int64_t>(tiles * std::max(plan.split_k, 1), slots));
  const double reduce = modelled_reduce_us<Policy>(p.m, p.n, plan.split_k);
  const double c_bytes = static_cast<double>(sizeof(float)) * static_cast<double>(p.m) * static_cast<double>(p.n);
  if (plan.fallback) {
    const double step = std::max(Policy::fallback_step_us, waves * Policy::fallback_block_step_us);
    return Policy::fallback_call_us + std::max(steps * step, c_bytes / Policy::fallback_c_bytes_per_us) + reduce;
  }
  double copies = 0.0;
  if (plan.pack_a)
    copies += Policy::launch_us + pack_copy_bytes<In>(stored_a(p), packed_a_shape(p, plan)) / Policy::bytes_per_us;
  if (plan.pack_b)
    copies += Policy::launch_us + pack_copy_bytes<In>(stored_b(p), packed_b_shape(p, plan)) / Policy::bytes_per_us;
  const double c_rate =
      detail::c_rows_on_sectors(p) ? Policy::fast_c_bytes_per_us : Policy::fast_c_off_sector_bytes_per_us;
  const double step_us = Policy::fast_step_tile_rows > 0.0
                             ? Policy::fast_step_us * (plan.block_m + plan.block_n) / Policy::fast_step_tile_rows
                             : Policy::fast_step_us;
  const double operand_us = Policy::operand_bytes_per_us > 0.0
                                ? static_cast<double>(sizeof(In)) *
                                      (static_cast<double>(p.m) * static_cast<double>(p.k) +
                                       static_cast<double>(p.k) * static_cast<double>(p.n)) /
                                      Policy::operand_bytes_per_us
                                : 0.0;
  return Policy::fast_call_us + copies + std::max({steps * waves * step_us, c_bytes / c_rate, operand_us}) + reduce;
}

/// Where the copies start in the workspace, in bytes: A's at 0, then B's (0 too when A
/// is not copied), as `plan_packing` lays them out.
struct pack_offsets {
  std::size_t a = 0;  ///< A's copy
  std::size_t b = 0;  ///< B's copy
};

/// The offsets of the copies that `plan` asks for in `p`'s workspace.
template <class In>
[[nodiscard]] constexpr pack_offsets pack_offsets_of(const gemm_problem<In, float>& p, const gemm_plan& plan) noexcept {
  return {0, plan.pack_a ? pack_region_bytes<In>(packed_a_shape(p, plan)) : 0};
}

/// `p` with each operand that `plan` packs replaced by its copy in the workspace at
/// `workspace` (`pack_offsets_of`). The plan reads only the copies' alignment, so a
/// planner may pass any `pack_alignment`-aligned address.
template <class In>
[[nodiscard]] gemm_problem<In, float> packed_problem(const gemm_problem<In, float>& p, const gemm_plan& plan,
                                                     std::uintptr_t workspace) noexcept {
  gemm_problem<In, float> q = p;
  const pack_offsets at = pack_offsets_of(p, plan);
  if (plan.pack_a) {
    q.a = reinterpret_cast<const In*>(workspace + at.a);
    q.lda = plan.packed_lda;
    if (plan.pack_a_transposed) q.a_k_contiguous = !q.a_k_contiguous;
  }
  if (plan.pack_b) {
    q.b = reinterpret_cast<const In*>(workspace + at.b);
    q.ldb = plan.packed_ldb;
    if (plan.pack_b_transposed) q.b_n_contiguous = !q.b_n_contiguous;
  }
  return q;
}

namespace detail {

/// Records `packing` in `plan`: the operands, the copies' leading dimensions, and their
/// bytes in front of the workspace the plan already counts (split-K's).
inline void record_packing(gemm_plan& plan, const gemm_pack_plan& packing) noexcept {
  plan.pack_a = packing.a;
  plan.pack_b = packing.b;
  plan.pack_a_transposed = packing.transpose_a;
  plan.pack_b_transposed = packing.transpose_b;
  plan.packed_lda = packing.lda;
  plan.packed_ldb = packing.ldb;
  plan.pack_bytes = packing.bytes;
  plan.workspace_bytes += packing.bytes;
}

/// dst = src for a `rows` × `cols` stored matrix of `Word`s (the raw bits of the
/// elements), `dst` `Width`-element vectors wide (`dst` aligned to them, `dst_ld` a
/// multiple of `Width`), columns `cols` .. `dst_ld` of each row set to zero. One thread
/// writes one vector: consecutive threads read consecutive `Width`-element runs of a
/// row (one or two 128-byte lines per 8 lanes) and write consecutive 16 bytes.
template <class Word, int Width>
__global__ void pack_operand_kernel(const Word* __restrict__ src, std::int64_t src_ld, std::int64_t rows,
                                    std::int64_t cols, Word* __restrict__ dst, std::int64_t dst_ld) {
  allow_dependent_launch();
  wait_for_prior_grids();  // the other copy, or the call before, may still run
  const std::int64_t vectors_per_row = dst_ld / Width;
  for (const std::uint64_t v : grid_stride_range(static_cast<std::uint64_t>(rows * vectors_per_row))) {
    const auto r = static_cast<std::int64_t>(v / static_cast<std::uint64_t>(vectors_per_row));
    const std::int64_t c0 = (static_cast<std::int64_t>(v) - r * vectors_per_row) * Width;
    const Word* s_row = src + r * src_ld;
    aligned_vector<Word, Width> out;
#pragma unroll
    for (int e = 0; e < Width; ++e) out[e] = c0 + e < cols ? s_row[c0 + e] : Word{0};
    store_vector(dst + r * dst_ld + c0, out);
  }
}

/// Enqueues the copy of a stored `rows` × `cols` operand at `src` (leading dimension
/// `src_ld`, any alignment) into `dst` (16-byte aligned, leading dimension `dst_ld`, a
/// multiple of `pack_ld_multiple<In>`) on `s`. Asynchronous. Throws `cuda_error` if the
/// launch fails.
template <class In, class Policy = gemm_pack_policy>
void enqueue_pack(const In* src, stored_shape shape, std::int64_t src_ld, In* dst, std::int64_t dst_ld,
                  cuda::stream_ref s) {
  using word = typename foundry::detail::raw_vector<sizeof(In)>::type;
  constexpr int width = static_cast<int>(pack_ld_multiple<In>);
  const auto vectors = static_cast<std::uint64_t>(shape.rows * (dst_ld / width));
  launch_config c = make_launch_config_1d(vectors, Policy::block_threads);
  c.dependency = launch_dependency::programmatic;  // the kernel waits before its first access
  launch(s, c, pack_operand_kernel<word, width>, reinterpret_cast<const word*>(src), src_ld, shape.rows, shape.cols,
         reinterpret_cast<word*>(dst), dst_ld);
}

/// Enqueues the copy of a stored `rows` × `cols` operand at `src` (leading dimension
/// `src_ld`) into `dst` transposed: `cols` rows of `rows`, leading dimension `dst_ld`
/// (padding unwritten), with `transpose`'s kernel, on `s`. Asynchronous. Throws
/// `cuda_error` if the launch fails.
template <class In>
void enqueue_transposed_pack(const In* src, stored_shape shape, std::int64_t src_ld, In* dst, std::int64_t dst_ld,
                             cuda::stream_ref s) {
  foundry::detail::launch_transpose<transpose_policy>(matrix_view<const In>{src, shape.rows, shape.cols, src_ld},
                                                      matrix_view<In>{dst, shape.cols, shape.rows, dst_ld}, s);
}

/// The operands a rung's kernel reads, once the copies `plan` asks for are enqueued: the
/// first step of a packed launch, a value like `split_k_output`, not a hop. Without
/// packing, `problem()` is `p` and `workspace()` the caller's workspace. With it, the
/// constructor takes the plan's `workspace_bytes` from the caller's workspace (it must be
/// `pack_alignment`-aligned and must not overlap A, B or C) or, when that is empty,
/// allocates them stream-ordered on `s` (freed, stream-ordered, when this object dies),
/// and enqueues one copy kernel per packed operand on `s`; `problem()` reads the copies
/// and `workspace()` is what follows them, split-K's share. Throws
/// `std::invalid_argument` if the caller's workspace is too small, misaligned or
/// overlapping; `cuda_error` if the allocation or a launch fails.
template <class In>
class packed_operands {
 public:
  packed_operands(const gemm_plan& plan, const gemm_problem<In, float>& p, cuda::std::span<float> workspace,
                  cuda::stream_ref s)
      : q_(p), rest_(workspace) {
    if (!plan.pack_a && !plan.pack_b) return;
    const std::size_t floats = ceil_div<std::size_t>(plan.workspace_bytes, sizeof(float));
    if (workspace.empty()) {
      owned_ = device_buffer<float>(floats, s);
      workspace = owned_.span();
    } else {
      FOUNDRY_EXPECTS(workspace.size() >= floats, "gemm: a workspace of " + std::to_string(workspace.size()) +
                                                      " floats is smaller than the " + std::to_string(floats) +
                                                      " that packing and split-K need");
      const foundry::detail::byte_range copies =
          foundry::detail::range_of(workspace.first(plan.pack_bytes / sizeof(float)));
      using foundry::detail::expect_no_forbidden_overlap;
      using foundry::detail::overlap_rule;
      expect_no_forbidden_overlap(copies, sizeof(float), operand_range(p.a, stored_a(p), p.lda), sizeof(In),
                                  overlap_rule::disjoint, "gemm: the packing workspace and A");
      expect_no_forbidden_overlap(copies, sizeof(float), operand_range(p.b, stored_b(p), p.ldb), sizeof(In),
                                  overlap_rule::disjoint, "gemm: the packing workspace and B");
      expect_no_forbidden_overlap(copies, sizeof(float), operand_range(p.c, stored_shape{p.m, p.n}, p.ldc),
                                  sizeof(float), overlap_rule::disjoint, "gemm: the packing workspace and C");
    }
    FOUNDRY_EXPECTS(is_aligned(workspace.data(), pack_alignment), "gemm: a workspace for packed operands must be " +
                                                                      std::to_string(pack_alignment) +
                                                                      "-byte aligned (as cudaMalloc returns)");
    auto* const bytes = reinterpret_cast<unsigned char*>(workspace.data());
    const pack_offsets at = pack_offsets_of(p, plan);
    q_ = packed_problem(p, plan, reinterpret_cast<std::uintptr_t>(bytes));
    const auto copy = [&s](const In* src, stored_shape shape, std::int64_t src_ld, bool transposed, In* dst,
                           std::int64_t dst_ld) {
      if (transposed) return enqueue_transposed_pack(src, shape, src_ld, dst, dst_ld, s);
      enqueue_pack(src, shape, src_ld, dst, dst_ld, s);
    };
    if (plan.pack_a) copy(p.a, stored_a(p), p.lda, plan.pack_a_transposed, reinterpret_cast<In*>(bytes + at.a), q_.lda);
    if (plan.pack_b) copy(p.b, stored_b(p), p.ldb, plan.pack_b_transposed, reinterpret_cast<In*>(bytes + at.b), q_.ldb);
    rest_ = workspace.subspan(plan.pack_bytes / sizeof(float));
  }

  /// The problem the rung's kernel solves: `p`, or `p` on the copies.
  [[nodiscard]] const gemm_problem<In, float>& problem() const noexcept { return q_; }
  /// The workspace left to the rung (split-K's share): the caller's, or what follows the copies.
  [[nodiscard]] cuda::std::span<float> workspace() const noexcept { return rest_; }

 private:
  gemm_problem<In, float> q_;
  cuda::std::span<float> rest_;
  device_buffer<float> owned_;
};

}  // namespace detail
}  // namespace foundry::gemm_kernels
