#pragma once
/// \file
/// Rung 5 of the GEMM ladder: Hopper tensor cores through `wgmma`, fed by TMA
/// (sm_90a, compute capability 9.0 only).
///
///     C = alpha * A * B + beta * C     A, B: fp16 or bf16;  accumulation and C: fp32
///
/// Why a fifth rung: `mma.sync` (rung 4) reaches about half of Hopper's tensor-core
/// peak; `wgmma` issues a 64 × 256 × 16 product for a whole warpgroup (4 warps)
/// from shared memory, without ldmatrix, and TMA moves tiles global → shared with
/// one thread and no registers.
///
/// How the kernel works, from global memory to C:
/// 1. Each block, persistent (one per SM), computes 128 × 256 tiles of C one
///    after another with 3 warpgroups (384 threads). Warpgroup 0 is the
///    producer: after `setmaxnreg` lowers it to 40 registers, one thread walks
///    the block's tiles and, for each, K 64 at a time, issuing TMA copies of the
///    A (128 × 64) and B (64 × 256) slices into a ring of 4 stages of 48 KiB; it
///    runs ahead into the next tile while the consumers store the last one.
/// 2. Each stage has two mbarriers: `full` completes when the TMA bytes of the
///    stage have landed (transaction count), `empty` when the 8 consumer warps
///    have finished reading it. The producer waits on `empty` before refilling.
/// 3. Warpgroups 1 and 2 are the consumers (`setmaxnreg` raises them to 232
///    registers): each owns 64 rows × 256 columns of the tile, 128 fp32
///    accumulators per thread, and issues 4 `wgmma.m64n256k16` per stage with
///    operands read straight from the swizzled shared tiles through matrix
///    descriptors. One group of wgmma stays in flight while the next stage is
///    awaited; a stage is released once the group that read it has completed.
/// 4. TMA writes each 128-byte row with the 128-byte swizzle (16-byte chunk c of
///    row r at c ^ (r % 8)), the layout wgmma reads with swizzle mode 1: shared
///    reads are free of bank conflicts on both sides. Boxes past the matrix are
///    zero-filled by TMA, so any M, N, K works.
/// 5. Either operand may be K-contiguous (K-major in shared memory) or
///    M/N-contiguous (MN-major: wgmma's transpose bit), so all four layouts run
///    here; row-major A and B (K-major A, N-major B) is what the benchmark runs.
/// 6. Blocks go in groups of 8 tile rows (detail/block_raster.cuh, as every rung),
///    so that blocks running together share A and B panels in L2.
/// 7. The epilogue applies alpha and beta in fp32 straight from the
///    accumulators to global memory (detail/epilogue.cuh's store_accumulators, as
///    rung 4: the wgmma accumulator layout of a warp is that of 32 mma.m16n8 tiles
///    side by side) and never reads C when beta == 0. Where C's rows are off 32-byte
///    sectors, or a unit's K fits the ring (then C's writes bind, not the K loop), it
///    goes through a staging tile per warp instead, one 128-byte row a store.
///
/// N at most 64 (`wgmma_narrow_policy`, which the default plan picks there): 128 × 64 tiles,
/// one `wgmma.m64n64k16` per consumer and 16 of K, a stage of 24 KiB and a ring of 8 of
/// them. The 256-wide tile would multiply zeros in three quarters or more of its tensor work
/// for such a product (a batch of 16 activations through a 16384 × 16384 weight). The plan
/// also takes them for wider C where 128 × 256 tiles would leave SMs idle and the time model
/// finds the narrow ones clearly faster (`wgmma_auto_policy`): deep-K products with a small C.
///
/// TF32 (fp32 inputs, `gemm_math::tf32`): the same kernel with `wgmma_tf32_policy`. A
/// 128-byte swizzled row holds 32 floats, so a stage is 32 deep in K (the same 48 KiB),
/// each consumer issues 4 `wgmma.m64n256k8.tf32` per stage, and TMA moves the floats'
/// bits unchanged (the tensor cores drop the low 13 mantissa bits: truncation to TF32).
/// The TF32 wgmma has no transpose, so both operands must be K-major (A row-major, B
/// column-major, as op() and C's layout reduce them): `foundry::gemm` packs any other
/// orientation first, transposed, into the workspace (gemm_pack.cuh).
///
/// Building: wgmma and setmaxnreg exist only in sm_90a. The kernel body is
/// compiled only where `__CUDA_ARCH_FEAT_SM90_ALL` is defined (an sm_90a device
/// pass); elsewhere it traps. The host learns that sm_90a code was built from
/// `FOUNDRY_HAS_SM90A=1` (foundry's CMake sets it with `foundry_enable_sm90a`,
/// cmake/foundry_sm90a.cmake; with plain nvcc, compile with
/// `-gencode arch=compute_90a,code=sm_90a -DFOUNDRY_HAS_SM90A=1`). Define it the
/// same way in every translation unit of a program.
///
/// For problems TMA cannot describe, `foundry::gemm` plans rung 4 instead (and so
/// does `gemm_wgmma`, which lives in gemm.cuh beside the ladder): an operand base not 16-byte aligned, a leading dimension not a
/// multiple of 8 elements (TMA strides are multiples of 16 bytes), an extent of
/// 2^31 or more (TMA coordinates are 32-bit), and K = 0 (C = beta·C, nothing to
/// multiply).
///
/// Split-K: when the block tiles are fewer than the SMs (1024 × 1024 × 8192 has 32
/// of them for 132 SMs), the K range is cut into slices, each a separate work
/// unit of the persistent blocks, computed into a workspace and summed by a
/// second kernel (gemm/detail/split_k.cuh, shared with rungs 3 and 4); `wgmma_split_k` says
/// how many.
///
/// Performance on the H200, bf16: 777 TFLOP/s at 8192^3 (0.98× cuBLAS); 446 at
/// 1024 × 1024 × 8192 with 4 K slices (0.68×).
///
/// The measurements behind these choices, with what was tried and rejected:
/// docs/gemm-history.md in the foundry repository.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/gemm/detail/block_raster.cuh>
#include <foundry/gemm/detail/epilogue.cuh>
#include <foundry/gemm/detail/mma_sync.cuh>
#include <foundry/gemm/detail/split_k.cuh>
#include <foundry/gemm/detail/tma.cuh>
#include <foundry/gemm/detail/wgmma.cuh>
#include <foundry/gemm/gemm_pack.cuh>
#include <foundry/gemm/gemm_plan.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_bounds.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/ptx>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

/// 1 when the translation unit is built with sm_90a device code (see the file
/// comment); the wgmma rung is offered only then.
#ifndef FOUNDRY_HAS_SM90A
#define FOUNDRY_HAS_SM90A 0
#endif

namespace foundry::gemm_kernels {

/// Whether this program carries sm_90a code for the wgmma kernel.
inline constexpr bool gemm_wgmma_built = FOUNDRY_HAS_SM90A != 0;

/// Whether the wgmma rung runs on a device of compute capability
/// `compute_capability` (major * 10 + minor): sm_90a code runs on 9.0 only.
[[nodiscard]] constexpr bool gemm_wgmma_available(int compute_capability) noexcept {
  return gemm_wgmma_built && compute_capability == 90;
}

/// Tiling of the wgmma kernel. The kernel is written for exactly these values
/// (static_asserts say which may change); they are a struct so that a tuning
/// candidate can be passed as `gemm_wgmma`'s second template argument.
struct wgmma_policy {
  /// Block tile 128 × 256: two consumer warpgroups of 64 × 256 (one m64n256k16
  /// per 16 of K each), the largest wgmma N, so every byte of A in shared memory
  /// feeds 256 multiply-adds. Not measured yet against 128 × 128 or 256 × 128.
  static constexpr int block_m = 128;
  /// Columns of the block tile (see block_m).
  static constexpr int block_n = 256;
  /// K per stage: one 128-byte swizzled row of 16-bit elements, the widest TMA
  /// box row the 128-byte swizzle allows. Fixed.
  static constexpr int block_k = 64;
  /// Ring of 4 × 48 KiB = 192 KiB of the 227 KiB a block may opt into: three
  /// stages of copies in flight while one is multiplied. 3 vs 4 not measured yet.
  static constexpr int stages = 4;
  /// Tile rows per group of the block order (as rung 4). Not measured yet.
  static constexpr int group_m = 8;
  /// Registers per thread after setmaxnreg: 40 for the producer warpgroup (one
  /// thread issues copies), 232 for each consumer (128 accumulators plus
  /// addresses, without spilling); 128 × (40 + 2 × 232) = 64512 of the 65536.
  static constexpr int producer_registers = 40;
  /// Registers per consumer thread after setmaxnreg (see producer_registers).
  static constexpr int consumer_registers = 232;
  /// Blocks resident per SM: one (192 KiB of shared memory), persistent.
  static constexpr int min_blocks_per_sm = 1;
  /// Most slices of an automatic split where C has at most
  /// `split_k_reduce_slices_max_elements` (2^16) elements: 64, against the tiled rungs' 16,
  /// so that a deep product of a tile or two still reaches the SMs. The reduce of such a C
  /// adds the slices 8 warps to an element (`split_k_reduce_slices_kernel`). Measured on the
  /// H100 (session 15, hot): 256 × 256 × 16384, 2 tiles, 16 slices of 1024 21.0 us, 32 of
  /// 512 17.1 (cuBLAS 10.7); at 128 × 1024 × 16384 (2^17 elements, 4 tiles) 32 slices took
  /// 31.7 us against 16's 27.8, so a larger C keeps 16.
  static constexpr std::int64_t max_splits = 64;
};

/// Tiling of the wgmma kernel for TF32 inputs: `wgmma_policy` with a stage 32 floats deep
/// in K (one 128-byte swizzled row, as 64 16-bit elements are), so the same 48 KiB stages
/// and the same tile; a stage carries half the multiply-adds of a 16-bit one, which the
/// TF32 tensor cores run at half the 16-bit rate. Not measured yet.
struct wgmma_tf32_policy : wgmma_policy {
  /// K per stage: one 128-byte swizzled row of floats.
  static constexpr int block_k = 32;
};

/// Tiling of the wgmma kernel for 16-bit products whose N is at most 64: `wgmma_policy`
/// with block tiles of 128 × 64 (one `wgmma.m64n64k16` per consumer and 16 of K), where the
/// 256-wide tile multiplies zeros in three quarters or more of its tensor work (16384 × 16 ×
/// 16384 bf16 ran at 0.68 of cuBLAS on the H100, session 17; 1.0 with these tiles). B's stage
/// is 8 KiB, so the ring holds 8 stages of 24 KiB (192 KiB) and keeps more of A in flight. The
/// default plan (`wgmma_auto_policy`) also takes them beyond N = 64 where the wide grid would
/// leave SMs idle.
struct wgmma_narrow_policy : wgmma_policy {
  /// Columns of the block tile: one m64n64 wgmma wide.
  static constexpr int block_n = 64;
  /// Ring of 8 × 24 KiB.
  static constexpr int stages = 8;
};

/// The default tiling of 16-bit inputs: the plan (`wgmma_plan`) takes `wgmma_narrow_policy`
/// where N is at most its block_n, or where `wgmma_policy`'s grid (split-K included) would
/// leave SMs idle, the narrow plan's slices are at most twice as deep as the wide one's, and
/// the time model (`modelled_us` with `wgmma_tiling_policy`, gemm_pack.cuh) puts the narrow
/// plan at most its `clear_gain` of the wide one's time; else `wgmma_policy`. Such
/// grids are deep-K products with a small C, split to fill the SMs: 256 x 256 x 16384 runs
/// 2 wide tiles x 32 slices of 512 (64 blocks for 132 SMs, and 32 slices of C to write and
/// reduce) or 8 narrow tiles x 16 slices of 1024 (128 blocks, 16 slices). The launch follows
/// the plan's block_n. Not a tiling itself.
struct wgmma_auto_policy {};

/// The default tiling of the wgmma kernel for inputs `In`: `wgmma_tf32_policy` for float
/// (TF32), `wgmma_auto_policy` for fp16 and bf16.
template <class In>
using wgmma_default_policy = std::conditional_t<std::is_same_v<In, float>, wgmma_tf32_policy, wgmma_auto_policy>;

/// Whether TMA can describe `p`'s operands, so that `gemm_wgmma` runs the wgmma
/// kernel rather than falling back to rung 4: both bases 16-byte aligned, both
/// leading dimensions multiples of 16 bytes (8 16-bit elements, 4 floats) below 2^40
/// bytes, M, N and K in 1 .. 2^31 - 1. Any contiguity qualifies for 16-bit inputs; fp32
/// inputs (TF32) need both operands K-major (`p.a_k_contiguous` and not
/// `p.b_n_contiguous`). Touches no GPU.
template <class In>
[[nodiscard]] bool gemm_wgmma_tma_path(const gemm_problem<In, float>& p) noexcept {
  if constexpr (std::is_same_v<In, float>) {
    if (!p.a_k_contiguous || p.b_n_contiguous) return false;  // the TF32 wgmma has no transpose
  }
  constexpr std::int64_t elements_per_16_bytes = 16 / sizeof(In);
  constexpr std::int64_t max_extent = std::numeric_limits<std::int32_t>::max();
  constexpr std::int64_t max_ld = (std::int64_t{1} << 40) / sizeof(In);
  const auto extent_ok = [&](std::int64_t x) { return x >= 1 && x <= max_extent; };
  const auto ld_ok = [&](std::int64_t ld) { return ld > 0 && ld < max_ld && ld % elements_per_16_bytes == 0; };
  return extent_ok(p.m) && extent_ok(p.n) && extent_ok(p.k) && ld_ok(p.lda) && ld_ok(p.ldb) && is_aligned(p.a, 16) &&
         is_aligned(p.b, 16);
}

namespace detail {

/// Quantities derived from a policy, and the rules it must follow. A stage's K is one
/// 128-byte swizzled row, so the policy's `block_k` says the element size: 64 for 16-bit
/// inputs, 32 for fp32 (TF32).
template <class Policy>
struct wgmma_shape {
  static constexpr int consumers = Policy::block_m / 64;  ///< consumer warpgroups, 64 rows each
  static constexpr int threads = 128 * (1 + consumers);   ///< plus the producer warpgroup
  static constexpr int consumer_warps = 4 * consumers;
  static constexpr int row_bytes = 128;                              ///< one swizzled row: block_k elements
  static constexpr int element_bytes = row_bytes / Policy::block_k;  ///< 2 (fp16, bf16) or 4 (TF32)
  static constexpr int a_bytes = Policy::block_m * row_bytes;        ///< 16 KiB
  static constexpr int b_bytes = Policy::block_n * row_bytes;        ///< 32 KiB
  static constexpr int stage_bytes = a_bytes + b_bytes;
  static constexpr int k_per_wgmma = 32 / element_bytes;         ///< 16 (k16) or 8 (TF32's k8)
  static constexpr int k_steps = Policy::block_k / k_per_wgmma;  ///< wgmma per consumer and stage: 4
  /// Where the consumer warps' staging tiles for C start (after the ring and the barriers).
  static constexpr std::size_t staging_offset =
      std::size_t{Policy::stages} * stage_bytes + 2 * Policy::stages * sizeof(std::uint64_t);
  /// The ring, then the full and empty barriers, then a staging tile per consumer warp
  /// (`store_accumulators_swizzled`: 2 KiB each, 16 KiB for 8 warps); plus slack to align
  /// the ring to 1024 bytes (the 128-byte swizzle repeats every 8 rows of 128 bytes, and
  /// TMA and wgmma both swizzle by absolute shared address).
  static constexpr std::size_t shared_bytes =
      staging_offset + std::size_t{consumer_warps} * swizzled_tile_floats * sizeof(float) + 1024;
  static_assert(Policy::block_m % 64 == 0 && consumers >= 1 && consumers <= 2,
                "block_m: 64 or 128 (one or two consumer warpgroups of 64 rows)");
  static_assert(Policy::block_n == 256 || (Policy::block_n == 64 && element_bytes == 2),
                "block_n: 256, or 64 for 16-bit inputs: the wgmma N this kernel issues");
  static_assert(Policy::block_k == 64 || Policy::block_k == 32,
                "block_k: one 128-byte swizzled row, 64 16-bit elements or 32 floats");
  static_assert(Policy::stages >= 2, "the ring needs a stage being filled besides the one being read");
  static_assert(shared_bytes <= 227 * 1024, "a block of Hopper may opt into at most 227 KiB of shared memory");
  static_assert(128 * (Policy::producer_registers + consumers * Policy::consumer_registers) <= 65536,
                "setmaxnreg: the warpgroups' registers must fit the 64K register file");
};

/// Where one operand's block tile sits in shared memory and how wgmma reads it.
/// `Extent` is the tile's M or N extent (a multiple of 64); K is one row of 128 bytes
/// (64 elements of `ElementBytes` = 2, 32 of 4).
/// - K-major (K contiguous in global memory): one TMA box of `Extent` rows × one
///   128-byte row of K-elements; row mn at byte 128·mn.
/// - MN-major (16-bit elements only: the TF32 wgmma has no transpose): `Extent / 64`
///   TMA boxes of 64 K-rows × 64 M/N-elements, box j (M/N 64j .. 64j+63) at byte
///   8192·j; K-row k of a box at byte 128·k.
/// Either way the 64 M/N lines starting at a multiple of 64 begin 128·mn bytes
/// into the tile, so a consumer's A rows start at 8192 · consumer.
template <bool KMajor, int Extent, int ElementBytes = 2>
struct wgmma_operand {
  static_assert(Extent % 64 == 0 && Extent <= 256, "a TMA box has at most 256 rows; MN chunks are 64 wide");
  static_assert(ElementBytes == 2 || (ElementBytes == 4 && KMajor), "16-bit elements, or K-major fp32 (TF32)");
  static constexpr int box_bytes = 64 * 128;  ///< one MN-major box: 64 K-rows of 128 bytes
  static constexpr int bytes = Extent * 128;
  static constexpr bool transpose = !KMajor;  ///< wgmma's imm-trans: the operand is M/N-major
  /// Byte offset of M/N line `mn` (a multiple of 64) within the tile.
  [[nodiscard]] __host__ __device__ static constexpr std::uint32_t mn_offset(int mn) noexcept {
    return KMajor ? static_cast<std::uint32_t>(mn * 128) : static_cast<std::uint32_t>((mn / 64) * box_bytes);
  }
  /// Byte offset of the k-th K slice (k = 0 .. 3) that one wgmma reads (16 16-bit
  /// elements or 8 floats): 32 bytes along a K-major row (inside the swizzled row: the
  /// hardware swizzles the address it computes, as TMA did), or 16 K-rows down.
  [[nodiscard]] __host__ __device__ static constexpr std::uint32_t k_offset(int k_step) noexcept {
    return KMajor ? static_cast<std::uint32_t>(k_step * 32) : static_cast<std::uint32_t>(k_step * 16 * 128);
  }
  /// Leading byte offset: unused for K-major (one wgmma's K fits a swizzled row;
  /// 16 by convention), the distance between 64-wide M/N chunks for MN-major.
  static constexpr std::uint32_t leading_byte_offset = KMajor ? 16u : static_cast<std::uint32_t>(box_bytes);
  /// Stride byte offset: between groups of 8 rows (M/N lines for K-major, K-rows
  /// for MN-major), 8 × 128 bytes either way.
  static constexpr std::uint32_t stride_byte_offset = 1024;
  /// The matrix descriptor of the slice at shared address `s_slice`.
  [[nodiscard]] __host__ __device__ static constexpr std::uint64_t descriptor(std::uint32_t s_slice) noexcept {
    return make_smem_descriptor(s_slice, leading_byte_offset, stride_byte_offset, smem_swizzle::bytes_128);
  }
  /// The TMA box (inner elements, outer rows) that `load` copies, for the tensor map.
  static constexpr std::uint32_t box_inner = 128 / ElementBytes;
  static constexpr std::uint32_t box_outer = KMajor ? Extent : 64;

  /// Issues the TMA copies of the tile whose first M/N line is `mn0` and first K
  /// is `k0` into `s_tile`, completing on `barrier` (Extent × 128 bytes in all).
  __device__ static void load(unsigned char* s_tile, const CUtensorMap* map, std::int32_t mn0, std::int32_t k0,
                              std::uint64_t* barrier) {
    if constexpr (KMajor) {
      tma_load_2d(s_tile, map, k0, mn0, barrier);
    } else {
#pragma unroll
      for (int j = 0; j < Extent / 64; ++j) tma_load_2d(s_tile + j * box_bytes, map, mn0 + 64 * j, k0, barrier);
    }
  }
};

/// Whether a work unit of `steps` K steps stores its accumulators straight to C (the
/// accumulator layout's pairs of floats) rather than through its warp's staging tile
/// (`store_accumulators_swizzled`, one 128-byte row a store): where C's rows start on 32-byte
/// sectors (`c_rows_on_sectors`) and the unit is deeper than the ring of `Policy::stages`. A
/// unit whose K fits the ring is bound by C's writes, not its K loop (16384 x 16384 x 16 bf16:
/// 441 -> 390 us staged on the H100, cuBLAS 361); deeper units keep the direct pairs (8192 x
/// 8192 x 1024: 267 us direct, 276 staged).
template <class Policy, class In>
[[nodiscard]] __host__ __device__ bool wgmma_stores_c_directly(const gemm_problem<In, float>& p, int steps) noexcept {
  return c_rows_on_sectors(p) && steps > Policy::stages;
}

/// The persistent schedule of the wgmma kernel: of `tiles × splits` work units, unit u
/// is block tile u mod tiles (in the grouped raster) and K slice z = u / tiles, K
/// elements [z·k_per_split, (z+1)·k_per_split) (a multiple of block_k, so that TMA's
/// zero fill past K covers only the last slice).
template <class Policy>
struct wgmma_schedule {
  std::int64_t tiles_m, tiles_n, tiles, units, k, k_per_split;

  /// A unit's tile corner, K range, step count and slice.
  struct unit {
    std::int32_t m0, n0;
    std::int64_t k_begin;
    int steps;
    int split;
  };

  __device__ wgmma_schedule(std::int64_t m, std::int64_t n, std::int64_t k_, std::int64_t k_per_split_, int splits)
      : tiles_m(ceil_div<std::int64_t>(m, Policy::block_m)),
        tiles_n(ceil_div<std::int64_t>(n, Policy::block_n)),
        tiles(tiles_m * tiles_n),
        units(tiles * splits),
        k(k_),
        k_per_split(k_per_split_) {}

  [[nodiscard]] __device__ unit operator()(std::int64_t u) const {
    const std::int64_t z = u / tiles;
    const tile_index tile = grouped_tile(u - z * tiles, tiles_m, tiles_n, Policy::group_m);
    const std::int64_t k_begin = z * k_per_split;
    const std::int64_t k_end = k_begin + k_per_split < k ? k_begin + k_per_split : k;
    return unit{static_cast<std::int32_t>(tile.m * Policy::block_m),  // < 2^31: gemm_wgmma_tma_path
                static_cast<std::int32_t>(tile.n * Policy::block_n), k_begin,
                static_cast<int>(ceil_div<std::int64_t>(k_end - k_begin, Policy::block_k)), static_cast<int>(z)};
  }
};

/// The ring of the wgmma kernel in shared memory: `Policy::stages` stages of an A tile
/// then a B tile, then a `full` and an `empty` mbarrier per stage.
template <class Policy>
struct wgmma_ring {
  unsigned char* base;
  std::uint64_t* full;
  std::uint64_t* empty;
  __device__ unsigned char* a(int stage) const { return base + stage * wgmma_shape<Policy>::stage_bytes; }
  __device__ unsigned char* b(int stage) const { return a(stage) + wgmma_shape<Policy>::a_bytes; }
};

/// The producer warpgroup's work, done by one thread: for each unit of this block,
/// each K step, wait for the stage to be empty and issue its TMA copies. The ring
/// position carries over from unit to unit, so it runs ahead into the next tile.
template <class Policy, class AOperand, class BOperand>
__device__ __forceinline__ void wgmma_produce(const wgmma_schedule<Policy>& schedule, const wgmma_ring<Policy>& ring,
                                              const CUtensorMap* map_a, const CUtensorMap* map_b) {
  int stage = 0;
  std::uint32_t phase = 0;
  for (std::int64_t u = blockIdx.x; u < schedule.units; u += gridDim.x) {
    const auto w = schedule(u);
    for (int step = 0; step < w.steps; ++step) {
      mbarrier_wait_parity(&ring.empty[stage], phase ^ 1u);  // the first lap passes at once
      (void)cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                                 &ring.full[stage],
                                                 static_cast<std::uint32_t>(wgmma_shape<Policy>::stage_bytes));
      const auto k0 = static_cast<std::int32_t>(w.k_begin + step * Policy::block_k);  // < 2^31: tma_path
      AOperand::load(ring.a(stage), map_a, w.m0, k0, &ring.full[stage]);
      BOperand::load(ring.b(stage), map_b, w.n0, k0, &ring.full[stage]);
      if (++stage == Policy::stages) stage = 0, phase ^= 1u;
    }
  }
}

/// A consumer warpgroup's work: for each unit of this block, 64 rows × block_n columns
/// of its tile (rows 64·consumer ..), `k_steps` wgmma per stage with one group kept in
/// flight, each stage released once the group that read it has completed, then the
/// epilogue into C + split·c_slice_stride: straight from the accumulators where
/// `wgmma_stores_c_directly`, else through the warp's staging tile `c_staging`, so that each
/// row goes out in 128-byte stores (`store_accumulators_swizzled`; 10535 × 4849 × 17 with ldc
/// 4851 spent 364 µs on its 204 MB of C on the H100, cuBLAS 123).
template <class In, class Policy, class AOperand, class BOperand>
__device__ __forceinline__ void wgmma_consume(const wgmma_schedule<Policy>& schedule, const wgmma_ring<Policy>& ring,
                                              gemm_problem<In, float>& p, std::int64_t c_slice_stride, int thread,
                                              float* c_staging) {
  using shape = wgmma_shape<Policy>;
  const int consumer = thread / 128 - 1;
  const int lane = thread % 32;
  const int warp_in_group = (thread / 32) % 4;
  const std::uint32_t s_a0 = shared_address(ring.a(0)) + AOperand::mn_offset(64 * consumer);
  const std::uint32_t s_b0 = shared_address(ring.b(0));
  float* const c = p.c;

  int stage = 0;
  std::uint32_t phase = 0;
  for (std::int64_t u = blockIdx.x; u < schedule.units; u += gridDim.x) {
    const auto w = schedule(u);
    constexpr int n_fragments = Policy::block_n / 8;  // a warp's 16 rows: 8 columns a fragment
    float acc[1][n_fragments][4];  // [1][..]: the shape store_accumulators takes (one 16-row fragment per warp)
#pragma unroll
    for (int i = 0; i < n_fragments; ++i) {
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[0][i][j] = 0.0f;
    }
    int previous_stage = 0;
    for (int step = 0; step < w.steps; ++step) {
      mbarrier_wait_parity(&ring.full[stage], phase);
      const auto stage_offset = static_cast<std::uint32_t>(stage * shape::stage_bytes);
      fence_accumulators(acc[0]);
      wgmma_fence();
#pragma unroll
      for (int k_step = 0; k_step < shape::k_steps; ++k_step) {
        const std::uint64_t desc_a = AOperand::descriptor(s_a0 + stage_offset + AOperand::k_offset(k_step));
        const std::uint64_t desc_b = BOperand::descriptor(s_b0 + stage_offset + BOperand::k_offset(k_step));
        if constexpr (std::is_same_v<In, float>) {
          wgmma_m64n256k8_tf32(acc[0], desc_a, desc_b);  // both K-major (wgmma_operand)
        } else {
          wgmma_m64k16<In, AOperand::transpose, BOperand::transpose>(acc[0], desc_a, desc_b);
        }
      }
      wgmma_commit();
      fence_accumulators(acc[0]);
      // Keep this step's group in flight; the previous one has finished reading its stage.
      wgmma_wait<1>();
      if (step > 0 && lane == 0) (void)cuda::ptx::mbarrier_arrive(&ring.empty[previous_stage]);
      previous_stage = stage;
      if (++stage == Policy::stages) stage = 0, phase ^= 1u;
    }
    wgmma_wait<0>();
    fence_accumulators(acc[0]);
    // The unit's last stage is read: hand it back before the epilogue, so that
    // the producer can fill it for the next unit while this one is stored.
    if (w.steps > 0 && lane == 0) (void)cuda::ptx::mbarrier_arrive(&ring.empty[previous_stage]);

    p.c = c + std::int64_t{w.split} * c_slice_stride;
    const std::int64_t row0 = std::int64_t{w.m0} + 64 * consumer + 16 * warp_in_group;
    if (wgmma_stores_c_directly<Policy>(p, w.steps)) {
      store_accumulators(acc, p, row0, std::int64_t{w.n0}, lane);
    } else {
      store_accumulators_swizzled(acc, p, row0, std::int64_t{w.n0}, lane, c_staging);
    }
  }
}

/// The wgmma kernel. `AKMajor` must equal p.a_k_contiguous and `BKMajor`
/// !p.b_n_contiguous; the maps must describe A and B as `gemm_wgmma` encodes
/// them; the problem must pass gemm_wgmma_tma_path. Launch with
/// `wgmma_shape<Policy>::threads` threads, a 1D grid of at most one block per
/// work unit, and `wgmma_shape<Policy>::shared_bytes` of dynamic shared memory.
/// Persistent: block b computes units b, b + G, b + 2G, ... (G = gridDim.x) of
/// the `tiles × splits` units. Unit u is block tile u mod tiles (in the grouped
/// order) and K slice z = u / tiles: K elements [z·k_per_split, (z+1)·k_per_split)
/// (a multiple of block_k, so TMA's zero fill past K covers only the last slice)
/// into C + z·c_slice_stride. The producer runs ahead across units, so the next
/// tile's copies fly while the consumers store the last one.
template <class In, class Policy, bool AKMajor, bool BKMajor>
__global__ void __launch_bounds__(wgmma_shape<Policy>::threads,
                                  resident_blocks_bound(wgmma_shape<Policy>::threads, Policy::min_blocks_per_sm))
    gemm_wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                      gemm_problem<In, float> p, std::int64_t k_per_split, int splits, std::int64_t c_slice_stride) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  allow_dependent_launch();
  wait_for_prior_grids();  // a copy of A or B, or the call before, may still run
  using shape = wgmma_shape<Policy>;
  static_assert(sizeof(In) == shape::element_bytes, "the policy's block_k is one 128-byte row of In");
  using a_operand = wgmma_operand<AKMajor, Policy::block_m, sizeof(In)>;
  using b_operand = wgmma_operand<BKMajor, Policy::block_n, sizeof(In)>;
  constexpr int stages = Policy::stages;

  extern __shared__ unsigned char s_raw[];
  unsigned char* const s_ring = s_raw + ((1024 - (shared_address(s_raw) & 1023u)) & 1023u);
  auto* const full = reinterpret_cast<std::uint64_t*>(s_ring + stages * shape::stage_bytes);
  const wgmma_ring<Policy> ring{s_ring, full, full + stages};
  const wgmma_schedule<Policy> schedule(p.m, p.n, p.k, k_per_split, splits);
  const int thread = static_cast<int>(threadIdx.x);

  if (thread == 0) {
    for (int stage = 0; stage < stages; ++stage) {
      cuda::ptx::mbarrier_init(&ring.full[stage], 1);                       // the producer's arrive + TMA bytes
      cuda::ptx::mbarrier_init(&ring.empty[stage], shape::consumer_warps);  // one arrive per consumer warp
    }
    // Make the initialised barriers visible to the async proxy (TMA) too.
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();

  if (thread / 128 == 0) {
    // Producer. All 128 threads give their registers back; one issues the copies.
    setmaxnreg_decrease<Policy::producer_registers>();
    if (thread == 0) wgmma_produce<Policy, a_operand, b_operand>(schedule, ring, &map_a, &map_b);
  } else {
    setmaxnreg_increase<Policy::consumer_registers>();
    float* const c_staging = reinterpret_cast<float*>(s_ring + shape::staging_offset) +
                             (thread / 32 - 4) * swizzled_tile_floats;  // consumer warps are warps 4 ..
    wgmma_consume<In, Policy, a_operand, b_operand>(schedule, ring, p, c_slice_stride, thread, c_staging);
  }
#else
  // No sm_90a code in this pass: the host never launches this kernel (gemm_wgmma_available).
  (void)map_a;
  (void)map_b;
  (void)p;
  (void)k_per_split;
  (void)splits;
  (void)c_slice_stride;
  __trap();
#endif
}

/// The kernel instantiation for the problem's operand contiguity (K-major both for
/// TF32, the only one `gemm_wgmma_tma_path` lets through).
template <class In, class Policy>
auto* select_wgmma_kernel(const gemm_problem<In, float>& p) noexcept {
  if constexpr (std::is_same_v<In, float>) {
    (void)p;
    return &gemm_wgmma_kernel<In, Policy, true, true>;
  } else {
    if (p.a_k_contiguous) {
      return p.b_n_contiguous ? &gemm_wgmma_kernel<In, Policy, true, false>
                              : &gemm_wgmma_kernel<In, Policy, true, true>;
    }
    return p.b_n_contiguous ? &gemm_wgmma_kernel<In, Policy, false, false>
                            : &gemm_wgmma_kernel<In, Policy, false, true>;
  }
}

/// The TMA map of one operand seen as stored: `rows` rows of `cols` contiguous
/// elements, `ld` apart, in boxes of the operand tile's shape.
template <class Operand, class In>
CUtensorMap operand_map(const In* data, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  return make_tensor_map_2d(data, static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows),
                            static_cast<std::uint64_t>(ld), Operand::box_inner, Operand::box_outer);
}

}  // namespace detail

/// The split-K plan of rung 5 for an m × n × k problem on `sm_count` SMs
/// (`plan_split_k_for_tiles`; `requested` as `split_k_options::split_k`): one slice
/// while the block tiles occupy every SM, otherwise enough slices of at least 512 of
/// K to give every SM a block, at most `detail::max_auto_splits_for(m, n, Policy::max_splits)`
/// (64 for a C of at most 2^16 elements, else 16). At 1024 × 1024 × 8192: 32 tiles, 4 slices
/// of 2048.
template <class Policy = wgmma_policy>
[[nodiscard]] split_k_plan wgmma_split_k(std::int64_t m, std::int64_t n, std::int64_t k, int requested, int sm_count) {
  return plan_split_k_for_tiles(m, n, k, Policy::block_m, Policy::block_n, Policy::block_k, Policy::min_blocks_per_sm,
                                requested, sm_count, default_min_k_per_split,
                                detail::max_auto_splits_for(m, n, Policy::max_splits));
}

/// The plan of rung 5 for `p` (which must pass `gemm_wgmma_tma_path`; `foundry::gemm`
/// plans rung 4 instead for any other 16-bit problem, and packs fp32 operands for TF32)
/// on `sm_count` SMs. With `wgmma_auto_policy` (16-bit inputs), the tiling as that says.
template <class In, class Policy = wgmma_default_policy<In>>
[[nodiscard]] gemm_plan wgmma_plan(const gemm_problem<In, float>& p, int requested, int sm_count) {
  if constexpr (std::is_same_v<Policy, wgmma_auto_policy>) {
    static_assert(!std::is_same_v<In, float>, "TF32 tiles with wgmma_tf32_policy");
    if (p.n <= wgmma_narrow_policy::block_n) return wgmma_plan<In, wgmma_narrow_policy>(p, requested, sm_count);
    const gemm_plan wide = wgmma_plan<In, wgmma_policy>(p, requested, sm_count);
    const std::int64_t wide_units = ceil_div<std::int64_t>(p.m, wide.block_m) *
                                    ceil_div<std::int64_t>(p.n, wide.block_n) * std::max(wide.split_k, 1);
    if (wide_units >= std::int64_t{sm_count} * wide.min_blocks_per_sm) return wide;
    gemm_plan narrow = wgmma_plan<In, wgmma_narrow_policy>(p, requested, sm_count);
    // Each narrow tile re-reads A's slice through L2, four times as often as a wide one; where
    // the narrow plan's fewer slices also deepen each unit past twice the wide one's K, those
    // reads bind: 82 x 2455 x 7918 ran 3 slices of 2688 in 41.3 us against 13 of 640 in 32.3
    // (H100, session 26), while 256 x 256 x 16384 (1024 against 512) gained 15.6 -> 11.7.
    if (narrow.k_per_split > 2 * wide.k_per_split) return wide;
    using model = wgmma_tiling_policy;
    if (modelled_us<In, model>(narrow, p, sm_count) > model::clear_gain * modelled_us<In, model>(wide, p, sm_count))
      return wide;
    narrow.why =
        "16-bit inputs on compute capability 9.0 with sm_90a code, operands TMA can describe; 128 x 256 tiles would "
        "leave SMs idle: 128 x 64 tiles (m64n64k16), modelled faster (fewer slices, half the bytes a step)";
    return narrow;
  } else {
    constexpr bool tf32 = std::is_same_v<In, float>;
    gemm_plan plan = foundry::detail::plan_with_policy<Policy>(
        gemm_rung::wgmma, tf32 ? "TF32 asked for, on compute capability 9.0 with sm_90a code, K-major operands TMA "
                                 "can describe"
                          : Policy::block_n == 64
                              ? "16-bit inputs on compute capability 9.0 with sm_90a code, operands TMA can describe; "
                                "N at most 64: 128 x 64 tiles (m64n64k16)"
                              : "16-bit inputs on compute capability 9.0 with sm_90a code, operands TMA can describe");
    plan.tf32 = tf32;
    detail::record_split(plan, wgmma_split_k<Policy>(p.m, p.n, p.k, requested, sm_count), p);
    return plan;
  }
}

namespace detail {

/// Throws `std::invalid_argument` unless this program carries sm_90a code.
inline void require_wgmma_built() {
  FOUNDRY_EXPECTS(gemm_wgmma_built,
                  std::string("gemm_wgmma: this program was built without sm_90a code (compile with -gencode "
                              "arch=compute_90a,code=sm_90a and -DFOUNDRY_HAS_SM90A=1)"));
}

/// Throws `std::invalid_argument` unless sm_90a code runs on a device of compute
/// capability `cc`.
inline void require_wgmma_device(int cc) {
  FOUNDRY_EXPECTS(
      gemm_wgmma_available(cc),
      "gemm_wgmma: sm_90a code runs only on compute capability 9.0; this device is sm_" + std::to_string(cc));
}

}  // namespace detail

/// Enqueues the wgmma kernel for `p` as `plan` (from `wgmma_plan<In, Policy>`) says,
/// on `s` (asynchronous): a persistent grid of at most one block per SM, split-K as
/// `detail::split_k_output` (`workspace` empty: allocated on `s`). The TMA
/// descriptors travel by value in the kernel parameters, so nothing on the host
/// outlives the call. `p` must pass `gemm_wgmma_tma_path`; an empty C launches nothing.
/// Throws `std::invalid_argument` if this program has no sm_90a code or the current
/// device is not of compute capability 9.0, or if a caller's workspace is too small;
/// `std::runtime_error` if the driver cannot encode a tensor map; `cuda_error` if a
/// CUDA call, an allocation or a launch fails.
template <class In, class Policy = wgmma_default_policy<In>>
void launch_wgmma(const gemm_plan& plan, const gemm_problem<In, float>& p, cuda::std::span<float> workspace,
                  cuda::stream_ref s) {
  static_assert(std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16> || std::is_same_v<In, float>,
                "gemm_wgmma takes __half or __nv_bfloat16 inputs, or float ones multiplied as TF32");
  if constexpr (std::is_same_v<Policy, wgmma_auto_policy>) {
    static_assert(!std::is_same_v<In, float>, "TF32 tiles with wgmma_tf32_policy");
    // The plan names the tiling by its tile.
    if (plan.block_n == wgmma_narrow_policy::block_n)
      return launch_wgmma<In, wgmma_narrow_policy>(plan, p, workspace, s);
    return launch_wgmma<In, wgmma_policy>(plan, p, workspace, s);
  } else {
    using shape = detail::wgmma_shape<Policy>;
    detail::require_wgmma_built();
    if (p.m <= 0 || p.n <= 0) return;  // nothing to compute, nothing to touch
    const auto& device = get_device_properties(stream_device(s.get()));
    detail::require_wgmma_device(device.compute_capability());
    FOUNDRY_EXPECTS(gemm_wgmma_tma_path(p),
                    "gemm_wgmma: TMA cannot describe these operands (bases 16-byte aligned, leading dimensions "
                    "multiples of 16 bytes, extents below 2^31, K > 0; both K-major for TF32)");

    // A(i, p) and B(p, j) as stored: rows × contiguous columns. Both K-major for TF32.
    constexpr int bytes = sizeof(In);
    using a_k = detail::wgmma_operand<true, Policy::block_m, bytes>;
    using b_k = detail::wgmma_operand<true, Policy::block_n, bytes>;
    CUtensorMap map_a{}, map_b{};
    if constexpr (bytes == 4) {
      map_a = detail::operand_map<a_k>(p.a, p.m, p.k, p.lda);
      map_b = detail::operand_map<b_k>(p.b, p.n, p.k, p.ldb);
    } else {
      using a_m = detail::wgmma_operand<false, Policy::block_m, bytes>;
      using b_n = detail::wgmma_operand<false, Policy::block_n, bytes>;
      map_a = p.a_k_contiguous ? detail::operand_map<a_k>(p.a, p.m, p.k, p.lda)
                               : detail::operand_map<a_m>(p.a, p.k, p.m, p.lda);
      map_b = p.b_n_contiguous ? detail::operand_map<b_n>(p.b, p.k, p.n, p.ldb)
                               : detail::operand_map<b_k>(p.b, p.n, p.k, p.ldb);
    }

    launch_config c;
    c.block = dim3(shape::threads, 1, 1);
    c.dependency = launch_dependency::programmatic;  // the kernel waits before its first access
    // Persistent: one block per SM, never more than the units.
    const std::int64_t units =
        ceil_div<std::int64_t>(p.m, Policy::block_m) * ceil_div<std::int64_t>(p.n, Policy::block_n) * plan.split_k;
    c.grid = dim3(static_cast<unsigned>(std::min<std::int64_t>(units, device.sm_count)), 1, 1);
    c.dynamic_shared_bytes = shape::shared_bytes;
    const detail::split_k_output<In> out(p, plan.split_k, workspace, s);
    launch(s, c, detail::select_wgmma_kernel<In, Policy>(p), map_a, map_b, out.problem(), plan.k_per_split,
           plan.split_k, out.slice_stride());
    out.reduce(s);
  }
}

}  // namespace foundry::gemm_kernels
