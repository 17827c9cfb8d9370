#pragma once
/// \file
/// Rung 4 of the GEMM ladder: tensor cores through `mma.sync` (sm_80 and later).
///
///     C = alpha * A * B + beta * C     A, B: fp16 or bf16;  accumulation and C: fp32
///
/// How the fast kernel works, from global memory to C:
/// 1. Each block computes a `block_m × block_n` tile of C with warps that each own
///    a 64 × 64 sub-tile: 4 × 8 `mma.m16n8k16` tiles, 128 fp32 accumulators per
///    thread. Two tilings: 128 × 256 (8 warps, one block per SM), and for K up to
///    1536 128 × 128 (4 warps, two blocks per SM, so that one block's prologue and
///    epilogue overlap the other's main loop); `gemm_tensor_core` picks by K.
/// 2. K is walked `block_k` (64) at a time. The A and B slices of a step are
///    copied global → shared with `cp.async` (16 bytes per instruction, no
///    registers involved) into a ring of `stages` (3) buffers, so the copies for
///    steps k+1 and k+2 are in flight while step k is multiplied; one barrier per step.
///    Rows and columns outside the matrices are zero-filled by the copy itself
///    (a `cp.async` source size below 16), so any M, N and K work. The main loop
///    comes twice: the steps whose tiles lie wholly inside A and B (all but the
///    edges) run a copy of it without bounds, the rest the bounded one.
/// 3. Each warp feeds its tensor cores from shared memory with `ldmatrix`, four
///    8 × 8 matrices per instruction, already in the register layout `mma` wants;
///    `.trans` covers operands whose contiguous index is M or N rather than K.
///    Shared rows are XOR-swizzled in 16-byte chunks, so the eight rows that one
///    `ldmatrix` phase reads fall in eight different bank groups (no conflicts).
///    Fragments are double-buffered: those of the next 16-deep K step, even
///    across the barrier into the next pipeline step, load while the current
///    step's mma run.
/// 4. Blocks are numbered in groups of `group_m` tile rows, so that blocks
///    running together share A and B panels in L2.
/// 5. The epilogue applies alpha and beta in fp32 straight from the
///    accumulators (two adjacent floats per store) and never reads C when
///    beta == 0.
/// 6. Split-K: when the block tiles are fewer than the SMs (1024 × 1024 × 8192
///    has 32 of them for 132 SMs), the K range is cut into slices computed by
///    separate blocks (grid y) into a workspace and summed by a second kernel
///    (gemm/detail/split_k.cuh, shared with rungs 3 and 5); `tensor_core_split_k` says
///    how many.
///
/// The fast kernel needs every operand row to start on a 16-byte boundary
/// (`gemm_tensor_core_fast_path`); any other problem runs on a simple fallback
/// with the same `mma` core, fed by scalar loads. Either operand may be
/// contiguous along K or along M/N: four instantiations of the fast kernel.
///
/// The measurements behind these choices, with what was tried and rejected:
/// docs/gemm-history.md in the foundry repository.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/gemm/detail/block_raster.cuh>
#include <foundry/gemm/detail/epilogue.cuh>
#include <foundry/gemm/detail/mma_sync.cuh>
#include <foundry/gemm/detail/split_k.cuh>
#include <foundry/gemm/detail/swizzle.cuh>
#include <foundry/gemm/detail/tile_loaders.cuh>
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
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace foundry::gemm_kernels {

/// Tiling of the fast tensor-core kernel. The members are compile-time
/// constants because they size the register arrays and unrolled loops; pass
/// another struct with the same members (`min_blocks_per_sm` included: it sets the
/// kernel's `__launch_bounds__` and the split-K plan) as `gemm_tensor_core`'s second
/// template argument to try a different tiling.
struct tensor_core_policy {
  /// Block tile 128 × 256: with 64 × 64 warp tiles a thread holds 128 fp32
  /// accumulators, and every element copied to shared memory feeds 128 (A) or
  /// 64 (B) multiply-adds per warp. On Hopper mma.sync is not the fast path:
  /// rung 5 (gemm_wgmma.cuh) is.
  /// 453 TFLOP/s at 4096^3 bf16 on the H200 (0.60× cuBLAS, 71% of the ~640 TFLOP/s mma.sync peak).
  static constexpr int block_m = 128;
  /// Columns of the block tile (see block_m).
  static constexpr int block_n = 256;
  /// K per pipeline step: four `mma` k-steps between barriers, half the barriers per
  /// FLOP of block_k 32. 494 TFLOP/s at 8192^3 bf16 on the H200, against 398 with block_k 32.
  static constexpr int block_k = 64;
  /// 8 warps as 2 × 4, each 64 × 64. One block per SM: 128 accumulators and 64
  /// registers of double-buffered fragments put a thread at the 255-register cap.
  static constexpr int warps_m = 2;
  /// Warps along N (see warps_m).
  static constexpr int warps_n = 4;
  /// Buffers in the cp.async ring: 3 × 48 KiB = 144 KiB of shared memory, two
  /// steps of copies in flight while one is multiplied. 4 stages gained nothing on
  /// the H200 (479 against 494 TFLOP/s at 8192^3 bf16).
  static constexpr int stages = 3;
  /// Tile rows per group in the block order: 8 × 128 rows of A and, with a
  /// 132-SM wave, about 16 columns of B tiles stay hot in L2. Other group sizes
  /// were not measured yet.
  static constexpr int group_m = 8;
  /// Blocks resident per SM, which `__launch_bounds__` and the split-K plan assume:
  /// one (255 registers × 256 threads, 144 KiB of shared memory).
  static constexpr int min_blocks_per_sm = 1;
};

/// Tiling of the fast kernel for short K (`gemm_tensor_core` picks it when K ≤
/// `tensor_core_auto_policy::shallow_k_max`, 1536): 128 × 128 with 4 warps of 64 × 64, the
/// same warp tile, K step and ring as `tensor_core_policy`, at two blocks per SM
/// (255 registers × 128 threads and 96 KiB of shared memory each). A block tile that
/// runs only 16 steps of K (K = 1024) spends a large share of its time filling the
/// ring and writing its fp32 C tile; with two blocks per SM one block's prologue and
/// epilogue overlap the other's main loop. Where K is long, the wider tile's higher
/// reuse of each shared-memory element wins.
///
/// At 8192 × 8192 × 1024 bf16 on the H200: 407 TFLOP/s against 367 for 128 × 256 (0.65× against 0.59× cuBLAS).
struct tensor_core_shallow_k_policy : tensor_core_policy {
  /// Columns of the block tile: half of `tensor_core_policy`'s.
  static constexpr int block_n = 128;
  /// Warps along N.
  static constexpr int warps_n = 2;
  /// Blocks resident per SM.
  static constexpr int min_blocks_per_sm = 2;
};

/// Not a tiling: as `gemm_tensor_core`'s policy (the default) it picks one per
/// problem, `tensor_core_shallow_k_policy` when K ≤ `shallow_k_max`, else
/// `tensor_core_policy` (see `tensor_core_picks_shallow_k`). 1536: at M = N = 8192 on the
/// H200 the shallow tiling led by 11% at K = 1024 and trailed by 4% at K = 2048; the two
/// cross near K = 1600, and between 1024 and 2048 the choice is within the noise.
struct tensor_core_auto_policy {
  /// Largest K that gets the shallow-K tiling.
  static constexpr std::int64_t shallow_k_max = 1536;
};

/// Bytes of shared memory in `Policy`'s cp.async ring: `stages` tiles of A and of B, of
/// 16-bit elements. 147456 (144 KiB) for `tensor_core_policy`, 98304 (96 KiB) for the
/// shallow-K tiling.
template <class Policy>
[[nodiscard]] constexpr std::size_t tensor_core_ring_bytes() noexcept {
  return std::size_t{Policy::stages} * (Policy::block_m + Policy::block_n) * Policy::block_k * 2;
}

/// The shared memory a block may opt into that a plan made without a device assumes: enough
/// for every tiling of rung 4, as on sm_80 (163 KiB) and sm_90 (227 KiB).
inline constexpr std::size_t tensor_core_any_shared_memory = std::numeric_limits<std::size_t>::max();

/// Whether the automatic tiling of `gemm_tensor_core` is the shallow-K one for a problem with
/// this K on a device whose blocks may opt into `shared_memory_optin` bytes of shared memory
/// (`device_properties::shared_memory_per_block_optin`): K ≤ `shallow_k_max`, or a device
/// where the 144 KiB ring of `tensor_core_policy` does not fit (sm_86, sm_89 and sm_120 grant
/// 99 KiB; the shallow tiling's 96 KiB fits there).
[[nodiscard]] constexpr bool tensor_core_picks_shallow_k(
    std::int64_t k, std::size_t shared_memory_optin = tensor_core_any_shared_memory) noexcept {
  return k <= tensor_core_auto_policy::shallow_k_max ||
         shared_memory_optin < tensor_core_ring_bytes<tensor_core_policy>();
}

/// Tiling of the fallback kernel (unaligned operands): small tiles and no
/// pipeline; it exists to be correct, not fast.
struct tensor_core_fallback_policy {
  /// Rows of the block tile.
  static constexpr int block_m = 64;
  /// Columns of the block tile.
  static constexpr int block_n = 64;
  /// K per step.
  static constexpr int block_k = 32;
  /// Warps along M.
  static constexpr int warps_m = 2;
  /// Warps along N.
  static constexpr int warps_n = 2;
  static constexpr int stages = 1;  ///< not pipelined: scalar loads, a barrier, the mma steps
  /// Tile rows per group of the block order.
  static constexpr int group_m = 8;
  static constexpr int min_blocks_per_sm = 1;  ///< not in its launch bounds: only the plan (and its split-K) assumes it
  /// `__launch_bounds__`'s residency: 4 blocks of 128 threads cap the registers at 128, no
  /// spills (a step's elements prefetched in registers take 159 uncapped, 3 blocks).
  static constexpr int launch_bounds_blocks_per_sm = 4;
};

/// The fallback's tile where its 64 x 64 grid would fill at most half the SMs: 32 x 32, 2 x 1
/// warps of 16 x 32 (the epilogue stages 32 columns a pass), four times the blocks. H100,
/// session 28: ncu (warm caches) gave 608 x 118 x 51 fp16 7.1 us in 20 blocks of 64 x 64 against
/// cuBLAS's 4.5 in 76 of 32 x 32, at the same issue rate a scheduler; in the bf16 and fp16
/// sweeps (against main, both runs of each) every such row ran 25-35% faster: 608 x 118 x 51
/// 4.9 -> 3.2 us, 1283 x 3 x 31 3.9 -> 2.6, 21 x 5 x 1 3.7 -> 2.7.
struct tensor_core_small_fallback_policy : tensor_core_fallback_policy {
  static constexpr int block_m = 32;  ///< rows of the block tile
  static constexpr int block_n = 32;  ///< columns of the block tile
  static constexpr int warps_n = 1;   ///< one warp across the 32 columns
  /// 8 blocks of 64 threads: the same 128-register cap as the 64 x 64 tile's 4 of 128.
  static constexpr int launch_bounds_blocks_per_sm = 8;
};

/// Whether `gemm_tensor_core` can run `p` on its fast kernel: `cp.async` moves
/// 16 bytes (8 elements), so each operand's base must be 16-byte aligned and its
/// leading dimension a multiple of 8 elements. Any layout (K- or M/N-contiguous)
/// qualifies. Other problems take the (slow, correct) fallback.
template <class In>
[[nodiscard]] bool gemm_tensor_core_fast_path(const gemm_problem<In, float>& p) noexcept {
  constexpr std::int64_t elements_per_copy = 16 / sizeof(In);
  return p.lda % elements_per_copy == 0 && p.ldb % elements_per_copy == 0 && is_aligned(p.a, 16) && is_aligned(p.b, 16);
}

namespace detail {

/// Quantities derived from a policy, and the rules it must follow.
template <class Policy>
struct tensor_core_shape {
  static constexpr int threads = Policy::warps_m * Policy::warps_n * 32;
  static constexpr int warp_m = Policy::block_m / Policy::warps_m;
  static constexpr int warp_n = Policy::block_n / Policy::warps_n;
  static constexpr int m_fragments = warp_m / 16;  ///< mma tiles are 16 rows...
  static constexpr int n_fragments = warp_n / 8;   ///< ...by 8 columns
  static constexpr int k_steps = Policy::block_k / 16;
  static_assert(Policy::block_m % Policy::warps_m == 0 && warp_m % 16 == 0, "warp tile rows: a multiple of 16");
  static_assert(Policy::block_n % Policy::warps_n == 0 && warp_n % 16 == 0,
                "warp tile columns: a multiple of 16 (one ldmatrix.x4 loads two 8-column B fragments)");
  static_assert(Policy::block_k % 16 == 0, "block_k: a multiple of the mma K (16)");
  static_assert(Policy::stages >= 1, "at least one shared-memory stage");
};

/// The order of the four 8 × 8 matrices of one `ldmatrix.x4` over a 16 (M/N) × 16 (K)
/// sub-tile: matrix j covers M/N half `mn_half(j)` and K half `k_half(j)`.
/// - `mn_first` (A): r0 = (mn 0-7, k 0-7), r1 = (mn 8-15, k 0-7), r2 = (mn 0-7, k 8-15),
///   r3 = (mn 8-15, k 8-15): exactly a0a1, a2a3, a4a5, a6a7 of mma's A fragment.
/// - `k_first` (B): r0 = (mn 0-7, k 0-7), r1 = (mn 0-7, k 8-15), r2 = (mn 8-15, k 0-7),
///   r3 = (mn 8-15, k 8-15): {r0, r1} is the B fragment (b0b1, b2b3) of columns 0-7 and
///   {r2, r3} that of columns 8-15, each already the aligned register pair mma reads, so
///   no register moves sit between ldmatrix and mma. (With the A order, B would need
///   {r0, r2} and {r1, r3}: about 150 moves per 128 mma in the main loop, SASS of the H200 build.)
enum class fragment_order { mn_first, k_first };

/// How one operand's block tile (`Extent` along M or N, `BlockK` along K) sits in
/// shared memory. Global rows are copied as they are stored: a K-contiguous
/// operand keeps `Extent` rows of `BlockK` elements, an M/N-contiguous one
/// `BlockK` rows of `Extent` elements.
///
/// `fragment_offset<Order>(mn, k, lane)` is the row address lane `lane` gives to
/// `ldmatrix.x4` to load the 16 (M/N) × 16 (K) sub-tile at (mn, k), both
/// multiples of 16, as the four matrices of `Order`. In each matrix lane
/// l = 4g + t holds the pair (mn = g, k = 2t, 2t+1): from a K-contiguous tile
/// (rows = mn) without transposition, from an M/N-contiguous tile (rows = k) with
/// `.trans`. PTX ISA, mma.m16n8k16 .f16/.bf16 fragments:
///   A (16×16, row):  a0a1 = (g, 2t..)  a2a3 = (g+8, 2t..)  a4a5 = (g, 2t+8..)  a6a7 = (g+8, 2t+8..)
///   B (16×8, col):   b0b1 = (k 2t.., n g)  b2b3 = (k 2t+8.., n g)
/// hence `mn_first` for A and `k_first` for B.
template <bool KContiguous, int Extent, int BlockK>
struct operand_tile {
  static_assert(Extent % 16 == 0 && BlockK % 16 == 0, "operand tiles are whole 16 × 16 sub-tiles");
  using tile = swizzled_tile<KContiguous ? Extent : BlockK, (KContiguous ? BlockK : Extent) / 8>;
  static constexpr int bytes = tile::bytes;
  static constexpr bool transpose = !KContiguous;

  template <fragment_order Order>
  [[nodiscard]] __host__ __device__ static constexpr int fragment_offset(int mn, int k, int lane) noexcept {
    const int matrix = lane >> 3;
    const int row_in_matrix = lane & 7;
    const int mn_half = Order == fragment_order::mn_first ? matrix & 1 : matrix >> 1;
    const int k_half = Order == fragment_order::mn_first ? matrix >> 1 : matrix & 1;
    if constexpr (KContiguous) {
      // Row = mn index; the 16-byte chunk = 8 consecutive k.
      return tile::offset(mn + mn_half * 8 + row_in_matrix, k / 8 + k_half);
    } else {
      // Row = k index; the chunk = 8 consecutive mn, transposed by ldmatrix.
      return tile::offset(k + k_half * 8 + row_in_matrix, mn / 8 + mn_half);
    }
  }
};

/// A warp's operands for one 16-deep K step: MFragments A tiles of 16 × 16 and
/// NFragments B tiles of 16 × 8, in mma.m16n8k16's register layout.
template <int MFragments, int NFragments>
struct warp_fragments {
  std::uint32_t a[MFragments][4];
  std::uint32_t b[NFragments][2];
};

/// Loads the fragments of K offset `k` (a multiple of 16) of the shared tiles
/// at `s_a` and `s_b`, for the warp tile whose corner is (warp_row, warp_col).
template <class ALayout, class BLayout, int MFragments, int NFragments>
__device__ void load_fragments(warp_fragments<MFragments, NFragments>& f, std::uint32_t s_a, std::uint32_t s_b,
                               int warp_row, int warp_col, int k, int lane) {
#pragma unroll
  for (int i = 0; i < MFragments; ++i) {
    ldmatrix_x4<ALayout::transpose>(
        f.a[i], s_a + static_cast<std::uint32_t>(
                          ALayout::template fragment_offset<fragment_order::mn_first>(warp_row + 16 * i, k, lane)));
  }
#pragma unroll
  for (int j = 0; j < NFragments / 2; ++j) {
    std::uint32_t r[4];
    ldmatrix_x4<BLayout::transpose>(
        r, s_b + static_cast<std::uint32_t>(
                     BLayout::template fragment_offset<fragment_order::k_first>(warp_col + 16 * j, k, lane)));
    f.b[2 * j][0] = r[0];  // columns 16j .. 16j+7:  k 0-7, k 8-15
    f.b[2 * j][1] = r[1];
    f.b[2 * j + 1][0] = r[2];  // columns 16j+8 .. 16j+15
    f.b[2 * j + 1][1] = r[3];
  }
}

/// acc += A·B for one K step: MFragments × NFragments mma.m16n8k16.
template <class In, int MFragments, int NFragments>
__device__ void mma_fragments(float (&acc)[MFragments][NFragments][4],
                              const warp_fragments<MFragments, NFragments>& f) {
#pragma unroll
  for (int i = 0; i < MFragments; ++i) {
#pragma unroll
    for (int j = 0; j < NFragments; ++j) mma_m16n8k16<In>(acc[i][j], f.a[i], f.b[j]);
  }
}

/// One block of the fast kernel: its C tile and K slice, the cp.async ring, and this
/// thread's place in them; its member functions are the steps of the kernel's main loop.
/// What changes from step to step (the accumulators, the double-buffered fragments, the
/// ring's read and write cursors) stays in the kernel's locals, passed in by reference,
/// and the problem is passed to each call: kept in this object, or `p` referenced from
/// it, they compiled to other machine code (PTX and SASS of the sm_90 build; a reference
/// to the kernel parameter moved loads of its pointers and spilled registers).
template <class In, class Policy, bool AKContiguous, bool BKContiguous>
struct tensor_core_block {
  using shape = tensor_core_shape<Policy>;
  using a_layout = operand_tile<AKContiguous, Policy::block_m, Policy::block_k>;
  using b_layout = operand_tile<BKContiguous, Policy::block_n, Policy::block_k>;
  using accumulators = float[shape::m_fragments][shape::n_fragments][4];
  using fragments = warp_fragments<shape::m_fragments, shape::n_fragments>;
  static constexpr int stage_bytes = a_layout::bytes + b_layout::bytes;
  static constexpr int stages = Policy::stages;
  static constexpr int k_steps = shape::k_steps;  // mma K steps per pipeline step
  static_assert(stages >= 2, "the ring needs a buffer being filled besides the one being read");
  static_assert(k_steps >= 2 && k_steps % 2 == 0,
                "block_k: a multiple of 32, so the fragment double buffer lines up across pipeline steps");

  std::uint32_t s_base;  ///< the ring's shared address
  std::int64_t m0;       ///< the C tile's first row
  std::int64_t n0;       ///< the C tile's first column
  int lane;
  int warp;
  int warp_row;  ///< the warp tile's first row in the block tile
  int warp_col;  ///< the warp tile's first column in the block tile
  tile_copier<In, typename a_layout::tile, shape::threads> a_copier;
  tile_copier<In, typename b_layout::tile, shape::threads> b_copier;
  std::int64_t k_begin;  ///< the K slice: [k_begin, k_end)
  std::int64_t k_end;
  int steps;  ///< pipeline steps of the slice; 32-bit keeps the main loop's registers free (checked by the plan)

  /// Thread `thread` of the block of tile `tile` and K slice blockIdx.y of `p`, with the
  /// ring at shared address `s_ring`.
  __device__ tensor_core_block(const gemm_problem<In, float>& p, std::uint32_t s_ring, tile_index tile, int thread,
                               std::int64_t k_per_split)
      : s_base(s_ring),
        m0(tile.m * Policy::block_m),
        n0(tile.n * Policy::block_n),
        lane(thread % 32),
        warp(thread / 32),
        warp_row((warp / Policy::warps_n) * shape::warp_m),
        warp_col((warp % Policy::warps_n) * shape::warp_n),
        a_copier(thread),
        b_copier(thread),
        k_begin(std::int64_t{blockIdx.y} * k_per_split),
        k_end(k_begin + k_per_split < p.k ? k_begin + k_per_split : p.k),
        steps(k_end > k_begin ? static_cast<int>(ceil_div<std::int64_t>(k_end - k_begin, Policy::block_k)) : 0) {}

  /// Buffer `stage` of the ring: an A tile, then a B tile.
  [[nodiscard]] __device__ std::uint32_t stage_a(int stage) const {
    return s_base + static_cast<std::uint32_t>(stage * stage_bytes);
  }
  /// The B tile of buffer `stage`.
  [[nodiscard]] __device__ std::uint32_t stage_b(int stage) const {
    return stage_a(stage) + static_cast<std::uint32_t>(a_layout::bytes);
  }
  /// The buffer after `stage` in the ring.
  [[nodiscard]] __device__ static int next(int stage) { return stage + 1 == stages ? 0 : stage + 1; }

  /// Starts the copies of step `step`'s A tile into buffer `stage`. `Inside`:
  /// std::true_type when the caller knows the tile lies inside the matrix.
  template <class Inside>
  __device__ void copy_a(const gemm_problem<In, float>& p, Inside, int stage, int step) const {
    const std::int64_t k0 = k_begin + std::int64_t{step} * Policy::block_k;
    // Each operand as stored: (rows, cols) with cols contiguous.
    if constexpr (AKContiguous) {
      a_copier.template copy<Inside::value>(stage_a(stage), p.a, p.lda, p.m, p.k, m0, k0);
    } else {
      a_copier.template copy<Inside::value>(stage_a(stage), p.a, p.lda, p.k, p.m, k0, m0);
    }
  }
  /// `copy_a` for B.
  template <class Inside>
  __device__ void copy_b(const gemm_problem<In, float>& p, Inside, int stage, int step) const {
    const std::int64_t k0 = k_begin + std::int64_t{step} * Policy::block_k;
    if constexpr (BKContiguous) {
      b_copier.template copy<Inside::value>(stage_b(stage), p.b, p.ldb, p.n, p.k, n0, k0);
    } else {
      b_copier.template copy<Inside::value>(stage_b(stage), p.b, p.ldb, p.k, p.n, k0, n0);
    }
  }

  /// The prologue: steps 0 .. stages-2 in flight, one commit group each (empty past the
  /// end, so that "group i holds step i" holds for every wait below); then step 0 must
  /// land, and this warp loads its first fragments into `first`.
  __device__ void fill_ring(const gemm_problem<In, float>& p, fragments& first) const {
#pragma unroll
    for (int stage = 0; stage < stages - 1; ++stage) {
      if (stage < steps) {
        copy_a(p, std::false_type{}, stage, stage);
        copy_b(p, std::false_type{}, stage, stage);
      }
      cp_async_commit();
    }
    cp_async_wait<stages - 2>();
    __syncthreads();
    if (steps > 0) load_fragments<a_layout, b_layout>(first, stage_a(0), stage_b(0), warp_row, warp_col, 0, lane);
  }

  /// The end of the steps whose refill (step + stages - 1) is a whole K tile in a block
  /// tile wholly inside M and N (block-uniform): those may copy without bounds.
  [[nodiscard]] __device__ int inside_steps(const gemm_problem<In, float>& p) const {
    const bool block_inside = m0 + Policy::block_m <= p.m && n0 + Policy::block_n <= p.n;
    // Steps of this slice whose K tile is whole (all of them but a ragged last one).
    const int whole_steps = k_end > k_begin ? static_cast<int>((k_end - k_begin) / Policy::block_k) : 0;
    return block_inside && whole_steps > stages - 1 ? whole_steps - (stages - 1) : 0;
  }

  /// Pipeline steps [first, last): in each, `k_steps` mma steps on the buffer being read,
  /// the refill of the buffer read during step-1 spread between them, and the barrier into
  /// step+1. Fragments are double-buffered: the loads for K step ks+1 are issued before the
  /// mma of step ks, and the first fragments of the next pipeline step before the last mma
  /// of this one, so ldmatrix latency hides behind tensor-core work, across the barrier too.
  /// With `inside` a std::true_type every refill in the range must be a whole tile inside A
  /// and B: the copies then carry no bounds and no edge path. (Left to the compiler, the edge
  /// path of each copy was if-converted into about 250 predicated instructions per step,
  /// issued even when false: SASS of the H200 build, 4.5 instructions per mma.)
  template <class Inside>
  __device__ void run_steps(const gemm_problem<In, float>& p, accumulators& acc, fragments (&frag)[2], int& read_stage,
                            int& write_stage, Inside inside, int first, int last) const {
    for (int step = first; step < last; ++step) {
#pragma unroll
      for (int ks = 0; ks < k_steps; ++ks) {
        // Every warp read its last fragments of the refilled buffer before the barrier at
        // the end of step-1. A goes with the first K step, B with the last, so that the
        // address arithmetic of the copies is spread between the mma.
        // step + stages - 1 < steps, without overflow:
        const bool refill = Inside::value || step < steps - (stages - 1);
        if (ks == 0 && refill) copy_a(p, inside, write_stage, step + stages - 1);
        if (ks == k_steps - 1) {
          if (refill) copy_b(p, inside, write_stage, step + stages - 1);
          cp_async_commit();
          write_stage = next(write_stage);
          // stages+step groups are committed; leaving stages-2 in flight means step+1
          // landed. The barrier makes every thread's copies of it visible.
          cp_async_wait<stages - 2>();
          __syncthreads();
          read_stage = next(read_stage);
          if (step + 1 < steps) {
            load_fragments<a_layout, b_layout>(frag[(ks + 1) % 2], stage_a(read_stage), stage_b(read_stage), warp_row,
                                               warp_col, 0, lane);
          }
        } else {
          load_fragments<a_layout, b_layout>(frag[(ks + 1) % 2], stage_a(read_stage), stage_b(read_stage), warp_row,
                                             warp_col, 16 * (ks + 1), lane);
        }
        mma_fragments<In>(acc, frag[ks % 2]);
      }
    }
  }

  /// The epilogue: this warp's accumulators into C + blockIdx.y·c_slice_stride.
  __device__ void store(const gemm_problem<In, float>& p, const accumulators& acc, std::int64_t c_slice_stride) const {
    gemm_problem<In, float> out = p;
    out.c += std::int64_t{blockIdx.y} * c_slice_stride;
    store_accumulators(acc, out, m0 + warp_row, n0 + warp_col, lane);
  }
};

/// The fast kernel: cp.async ring of `stages` buffers, ldmatrix, mma.sync.
/// Needs gemm_tensor_core_fast_path(p); `AKContiguous` and `BKContiguous` must
/// match p.a_k_contiguous and !p.b_n_contiguous. Launch with
/// `tensor_core_shape<Policy>::threads` threads, a grid of one block per block
/// tile (x) and per K slice (y), and `stages × (A tile + B tile)` bytes of dynamic
/// shared memory. Block y multiplies K elements [y·k_per_split, (y+1)·k_per_split)
/// (a multiple of block_k, so that only the last slice has a ragged end) into
/// C + y·c_slice_stride.
template <class In, class Policy, bool AKContiguous, bool BKContiguous>
__global__ void __launch_bounds__(tensor_core_shape<Policy>::threads,
                                  resident_blocks_bound(tensor_core_shape<Policy>::threads, Policy::min_blocks_per_sm))
    gemm_tensor_core_kernel(gemm_problem<In, float> p, std::int64_t k_per_split, std::int64_t c_slice_stride) {
  wait_for_prior_grids();  // a copy of A or B, or the call before, may still run
  using shape = tensor_core_shape<Policy>;
  extern __shared__ __align__(128) unsigned char s_ring[];
  const std::uint32_t s_base = shared_address(s_ring);
  const tile_index tile = grouped_tile(blockIdx.x, ceil_div<std::int64_t>(p.m, Policy::block_m),
                                       ceil_div<std::int64_t>(p.n, Policy::block_n), Policy::group_m);
  const tensor_core_block<In, Policy, AKContiguous, BKContiguous> block(p, s_base, tile, static_cast<int>(threadIdx.x),
                                                                        k_per_split);
  float acc[shape::m_fragments][shape::n_fragments][4] = {};
  warp_fragments<shape::m_fragments, shape::n_fragments> frag[2];
  int read_stage = 0;
  int write_stage = Policy::stages - 1;
  block.fill_ring(p, frag[0]);
  // Phase 1: the steps that refill without bounds. Phase 2: the rest, with bounds.
  const int inside_end = block.inside_steps(p);
  block.run_steps(p, acc, frag, read_stage, write_stage, std::true_type{}, 0, inside_end);
  block.run_steps(p, acc, frag, read_stage, write_stage, std::false_type{}, inside_end, block.steps);
  cp_async_wait<0>();  // only empty groups remain; leave nothing in flight at exit
  // Only now: blocks of the next kernel made resident earlier would share the SMs, unevenly,
  // through the K loop (rows of many blocks ran 3-19% slower with the trigger first).
  allow_dependent_launch();
  block.store(p, acc, c_slice_stride);
}

__device__ inline std::uint16_t bits_of(__half x) { return __half_as_ushort(x); }
__device__ inline std::uint16_t bits_of(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }

/// One thread's share of the fallback kernel's operand tile of rows [o0, o0 + Extent) (M
/// for A, N for B) and K [k0, k0 + BlockK): its raw 16-bit elements, held in registers
/// between `load` (global memory) and `store` (the K-contiguous `Layout` in shared memory),
/// so that all of a thread's loads of a step are in flight at once and the next step's
/// loads can fly while this step multiplies: the step of a kernel whose loads are scalar is
/// bound by their latency, not by their bytes. Thread t holds elements t, t + Threads, ...
/// of the tile in its stored order, so consecutive threads read consecutive stored
/// elements: X(o, k) = x[o·ld + k] when `k_contiguous`, else x[k·ld + o]; zeros outside
/// [0, extent) × [k0, k_end).
template <class Layout, int Extent, int BlockK, int Threads>
struct operand_tile_share {
  // Thread t's elements then sit in one column (K-contiguous: k = t % BlockK, rows t /
  // BlockK + i·Threads/BlockK) or one row (o = t % Extent, k = t / Extent + i·Threads/Extent)
  // of the tile: one address and one bound move with i, so the loads need few registers.
  static_assert(Threads % BlockK == 0 && Threads % Extent == 0, "a thread's elements share a row or a column");
  static_assert((Extent * BlockK) % Threads == 0, "whole rounds of the block");
  static constexpr int count = Extent * BlockK / Threads;  ///< elements per thread
  std::uint16_t bits[count];

  template <class In>
  __device__ void load(const In* x, std::int64_t ld, bool k_contiguous, std::int64_t o0, std::int64_t extent,
                       std::int64_t k0, std::int64_t k_end, int thread) {
    // One running address a thread, `step` elements a move, not an offset per element: those
    // would be invariant across the K loop, and ptxas hoists them out of it (220 registers
    // with per-element offsets, 159 with this one address).
    const bool k_major = k_contiguous;
    const std::int64_t o = o0 + (k_major ? thread / BlockK : thread % Extent);
    const std::int64_t k = k0 + (k_major ? thread % BlockK : thread / Extent);
    const std::int64_t step = (k_major ? Threads / BlockK : Threads / Extent) * ld;
    // Elements left along the axis that moves with i, counted in steps of the thread.
    const std::int64_t left = k_major ? extent - o : k_end - k;
    const int apart = k_major ? Threads / BlockK : Threads / Extent;
    const bool fixed_ok = k_major ? k < k_end : o < extent;
    const In* at = x + (k_major ? o * ld + k : k * ld + o);
#pragma unroll
    for (int i = 0; i < count; ++i) {
      bits[i] = fixed_ok && std::int64_t{i} * apart < left ? bits_of(*at) : std::uint16_t{0};
      at += step;
    }
  }

  __device__ void store(unsigned char* s_bytes, bool k_contiguous, int thread) const {
    if (k_contiguous) {
#pragma unroll
      for (int i = 0; i < count; ++i) {
        const int r = thread / BlockK + i * (Threads / BlockK), q = thread % BlockK;
        *reinterpret_cast<std::uint16_t*>(s_bytes + Layout::tile::element_offset(r, q)) = bits[i];
      }
    } else {
#pragma unroll
      for (int i = 0; i < count; ++i) {
        const int r = thread % Extent, q = thread / Extent + i * (Threads / Extent);
        *reinterpret_cast<std::uint16_t*>(s_bytes + Layout::tile::element_offset(r, q)) = bits[i];
      }
    }
  }
};

/// The fallback kernel: any layout, leading dimension and alignment. Both
/// operands are staged K-contiguous in shared memory by plain element loads through
/// registers (`operand_tile_share`: a step's loads all in flight, the next step's issued
/// before this one multiplies), then multiplied with the same fragment loads and mma as the
/// fast kernel. One block per block tile (x) and per K slice (y), split as the fast kernel
/// splits: block y multiplies K elements [y·k_per_split, (y+1)·k_per_split) into
/// C + y·c_slice_stride.
template <class In, class Policy>
__global__ void __launch_bounds__(tensor_core_shape<Policy>::threads,
                                  resident_blocks_bound(tensor_core_shape<Policy>::threads,
                                                        Policy::launch_bounds_blocks_per_sm))
    gemm_tensor_core_fallback_kernel(gemm_problem<In, float> p, std::int64_t k_per_split, std::int64_t c_slice_stride) {
  wait_for_prior_grids();  // the kernel before on the stream may still run
  using shape = tensor_core_shape<Policy>;
  using a_layout = operand_tile<true, Policy::block_m, Policy::block_k>;
  using b_layout = operand_tile<true, Policy::block_n, Policy::block_k>;
  constexpr int bk = Policy::block_k;

  __shared__ __align__(128) unsigned char s_tiles[a_layout::bytes + b_layout::bytes];
  unsigned char* s_a_bytes = s_tiles;
  unsigned char* s_b_bytes = s_tiles + a_layout::bytes;

  const tile_index tile = grouped_tile(blockIdx.x, ceil_div<std::int64_t>(p.m, Policy::block_m),
                                       ceil_div<std::int64_t>(p.n, Policy::block_n), Policy::group_m);
  const std::int64_t m0 = tile.m * Policy::block_m;
  const std::int64_t n0 = tile.n * Policy::block_n;

  const int thread = static_cast<int>(threadIdx.x);
  const int lane = thread % 32;
  const int warp = thread / 32;
  const int warp_row = (warp / Policy::warps_n) * shape::warp_m;
  const int warp_col = (warp % Policy::warps_n) * shape::warp_n;

  const std::int64_t k_begin = std::int64_t{blockIdx.y} * k_per_split;
  const std::int64_t k_end = k_begin + k_per_split < p.k ? k_begin + k_per_split : p.k;
  float acc[shape::m_fragments][shape::n_fragments][4] = {};
  operand_tile_share<a_layout, Policy::block_m, bk, shape::threads> a_share;
  operand_tile_share<b_layout, Policy::block_n, bk, shape::threads> b_share;
  const bool b_k_contiguous = !p.b_n_contiguous;
  if (k_begin < k_end) {
    a_share.load(p.a, p.lda, p.a_k_contiguous, m0, p.m, k_begin, k_end, thread);
    b_share.load(p.b, p.ldb, b_k_contiguous, n0, p.n, k_begin, k_end, thread);
  }
  for (std::int64_t k0 = k_begin; k0 < k_end; k0 += bk) {
    a_share.store(s_a_bytes, p.a_k_contiguous, thread);
    b_share.store(s_b_bytes, b_k_contiguous, thread);
    __syncthreads();
    // The next step's loads fly while this step multiplies.
    if (k0 + bk < k_end) {
      a_share.load(p.a, p.lda, p.a_k_contiguous, m0, p.m, k0 + bk, k_end, thread);
      b_share.load(p.b, p.ldb, b_k_contiguous, n0, p.n, k0 + bk, k_end, thread);
    }
    warp_fragments<shape::m_fragments, shape::n_fragments> frag;
#pragma unroll
    for (int k = 0; k < bk; k += 16) {
      load_fragments<a_layout, b_layout>(frag, shared_address(s_a_bytes), shared_address(s_b_bytes), warp_row, warp_col,
                                         k, lane);
      mma_fragments<In>(acc, frag);
    }
    __syncthreads();  // the next step overwrites the tiles
  }
  allow_dependent_launch();  // after the K loop, as in gemm_tensor_core_kernel

  gemm_problem<In, float> out = p;
  out.c += std::int64_t{blockIdx.y} * c_slice_stride;
  if (c_rows_on_sectors(out)) {
    store_accumulators(acc, out, m0 + warp_row, n0 + warp_col, lane);
  } else {
    // Rows off sectors: through the operand tiles, free since the K loop's last barrier (or
    // never written: an empty slice), a warp's 2 KiB each, one 128-byte row a store.
    static_assert(shape::threads / 32 * swizzled_tile_floats * sizeof(float) <= sizeof(s_tiles),
                  "the warps' staging tiles fit the operand tiles");
    float* const stage = reinterpret_cast<float*>(s_tiles) + warp * swizzled_tile_floats;
    store_accumulators_swizzled(acc, out, m0 + warp_row, n0 + warp_col, lane, stage);
  }
}

/// Throws `std::invalid_argument` unless one 1D grid holds a block per `Policy` block
/// tile of an m × n C.
template <class Policy>
void check_tile_grid(std::int64_t m, std::int64_t n) {
  if (m <= 0 || n <= 0) return;
  const std::int64_t tiles_m = ceil_div<std::int64_t>(m, Policy::block_m);
  const std::int64_t tiles_n = ceil_div<std::int64_t>(n, Policy::block_n);
  FOUNDRY_EXPECTS(tiles_m <= static_cast<std::int64_t>(max_grid_x) / tiles_n,
                  "gemm_tensor_core: " + std::to_string(tiles_m) + " × " + std::to_string(tiles_n) +
                      " block tiles exceed the 1D grid limit of " + std::to_string(max_grid_x) + " blocks");
}

/// A 1D grid with one block per `Policy` block tile of an m × n C.
template <class Policy>
[[nodiscard]] launch_config tile_grid(std::int64_t m, std::int64_t n, std::size_t dynamic_shared_bytes) {
  check_tile_grid<Policy>(m, n);
  launch_config c;
  c.block = dim3(tensor_core_shape<Policy>::threads, 1, 1);
  c.dynamic_shared_bytes = dynamic_shared_bytes;
  c.dependency = launch_dependency::programmatic;  // both kernels wait before their first access
  if (m <= 0 || n <= 0) return c;                  // empty grid: nothing to launch
  c.grid = dim3(
      static_cast<unsigned>(ceil_div<std::int64_t>(m, Policy::block_m) * ceil_div<std::int64_t>(n, Policy::block_n)), 1,
      1);
  return c;
}

/// The fast kernel's instantiation for the problem's operand contiguity.
template <class In, class Policy>
auto* select_tensor_core_kernel(const gemm_problem<In, float>& p) noexcept {
  if (p.a_k_contiguous) {
    return p.b_n_contiguous ? &gemm_tensor_core_kernel<In, Policy, true, false>
                            : &gemm_tensor_core_kernel<In, Policy, true, true>;
  }
  return p.b_n_contiguous ? &gemm_tensor_core_kernel<In, Policy, false, false>
                          : &gemm_tensor_core_kernel<In, Policy, false, true>;
}

}  // namespace detail

/// The split-K plan the fast kernel of `gemm_tensor_core<In, Policy>` uses for an m ×
/// n × k problem on `sm_count` SMs (`plan_split_k_for_tiles`; `requested` as
/// `split_k_options::split_k`), with the tiling the default policy picks by K: one slice
/// while the block tiles occupy every SM, otherwise enough slices of at least 512 of K to
/// fill the `min_blocks_per_sm` block slots of every SM. At 1024 × 1024 × 8192: 32 tiles of
/// 128 × 256, 4 slices of 2048. `shared_memory_optin` as `tensor_core_picks_shallow_k`.
template <class Policy = tensor_core_auto_policy>
[[nodiscard]] split_k_plan tensor_core_split_k(std::int64_t m, std::int64_t n, std::int64_t k, int requested,
                                               int sm_count,
                                               std::size_t shared_memory_optin = tensor_core_any_shared_memory) {
  if constexpr (std::is_same_v<Policy, tensor_core_auto_policy>) {
    return tensor_core_picks_shallow_k(k, shared_memory_optin)
               ? tensor_core_split_k<tensor_core_shallow_k_policy>(m, n, k, requested, sm_count)
               : tensor_core_split_k<tensor_core_policy>(m, n, k, requested, sm_count);
  } else {
    return plan_split_k_for_tiles(m, n, k, Policy::block_m, Policy::block_n, Policy::block_k, Policy::min_blocks_per_sm,
                                  requested, sm_count);
  }
}

/// The plan of rung 4 for `p`: the fallback kernel unless `gemm_tensor_core_fast_path(p)`,
/// else the fast kernel with `Policy` (by default the tiling `tensor_core_auto_policy`
/// picks for K and the device's `shared_memory_optin`, as `tensor_core_picks_shallow_k`)
/// and its split-K plan (`requested` as `split_k_options::split_k`).
/// `sm_count()` is called only for a non-empty C, after the
/// checks, so that bad input throws its own error before the device is queried.
/// Throws `std::invalid_argument` if the grid of block tiles exceeds the device's
/// limit or (fast path) K needs more than 2^31 - 1 steps of `block_k`.
template <class In, class Policy = tensor_core_auto_policy, class SmCount>
[[nodiscard]] gemm_plan tensor_core_plan(const gemm_problem<In, float>& p, int requested, SmCount&& sm_count,
                                         std::size_t shared_memory_optin = tensor_core_any_shared_memory) {
  if constexpr (std::is_same_v<Policy, tensor_core_auto_policy>) {
    return tensor_core_picks_shallow_k(p.k, shared_memory_optin)
               ? tensor_core_plan<In, tensor_core_shallow_k_policy>(p, requested, sm_count)
               : tensor_core_plan<In, tensor_core_policy>(p, requested, sm_count);
  } else {
    if (!gemm_tensor_core_fast_path(p)) {
      const auto fallback_plan = [&](auto policy) {
        using fallback = decltype(policy);
        detail::check_tile_grid<fallback>(p.m, p.n);
        gemm_plan plan = foundry::detail::plan_with_policy<fallback>(
            gemm_rung::tensor_core, "16-bit inputs; an operand row not on a 16-byte boundary (no cp.async)");
        plan.fallback = true;
        if (p.m > 0 && p.n > 0)
          detail::record_split(
              plan,
              plan_split_k_for_tiles(p.m, p.n, p.k, fallback::block_m, fallback::block_n, fallback::block_k,
                                     fallback::min_blocks_per_sm, requested, sm_count()),
              p);
        return plan;
      };
      gemm_plan plan = fallback_plan(tensor_core_fallback_policy{});
      const std::int64_t blocks = ceil_div<std::int64_t>(p.m, plan.block_m) *
                                  ceil_div<std::int64_t>(p.n, plan.block_n) * std::int64_t{plan.split_k};
      if (p.m > 0 && p.n > 0 && requested == 0 && 2 * blocks <= sm_count()) {
        plan = fallback_plan(tensor_core_small_fallback_policy{});
      }
      return plan;
    }
    FOUNDRY_EXPECTS(ceil_div<std::int64_t>(p.k, Policy::block_k) <= std::numeric_limits<int>::max(),
                    "gemm_tensor_core: K = " + std::to_string(p.k) + " needs more than 2^31 - 1 steps of " +
                        std::to_string(Policy::block_k));
    detail::check_tile_grid<Policy>(p.m, p.n);
    gemm_plan plan = foundry::detail::plan_with_policy<Policy>(gemm_rung::tensor_core, "16-bit inputs on sm_80+");
    if (p.m > 0 && p.n > 0)
      detail::record_split(plan, tensor_core_split_k<Policy>(p.m, p.n, p.k, requested, sm_count()), p);
    return plan;
  }
}

/// `tensor_core_plan` on `sm_count` SMs.
template <class In, class Policy = tensor_core_auto_policy>
[[nodiscard]] gemm_plan tensor_core_plan(const gemm_problem<In, float>& p, int requested, int sm_count,
                                         std::size_t shared_memory_optin = tensor_core_any_shared_memory) {
  return tensor_core_plan<In, Policy>(
      p, requested, [sm_count] { return sm_count; }, shared_memory_optin);
}

/// Enqueues rung 4's kernel for `p` as `plan` (from `tensor_core_plan<In, Policy>`)
/// says, on `s` (asynchronous): the fallback kernel, or the fast kernel with `Policy`
/// (the default picks the tiling the plan names) and split-K as
/// `detail::split_k_output` (`workspace` empty: allocated on `s`). An empty C
/// launches nothing. Throws `std::invalid_argument` if the grid is too large or a
/// caller's workspace too small; `cuda_error` if an allocation or a launch fails.
template <class In, class Policy = tensor_core_auto_policy>
void launch_tensor_core(const gemm_plan& plan, const gemm_problem<In, float>& p, cuda::std::span<float> workspace,
                        cuda::stream_ref s) {
  if constexpr (std::is_same_v<Policy, tensor_core_auto_policy>) {
    // The plan names the tiling by its tile; the fallback ignores the policy.
    if (plan.block_n == tensor_core_shallow_k_policy::block_n && !plan.fallback) {
      return launch_tensor_core<In, tensor_core_shallow_k_policy>(plan, p, workspace, s);
    }
    return launch_tensor_core<In, tensor_core_policy>(plan, p, workspace, s);
  } else {
    if (plan.fallback) {
      const auto launch_fallback = [&](auto policy) {
        using fallback = decltype(policy);
        launch_config c = detail::tile_grid<fallback>(p.m, p.n, 0);
        if (p.m <= 0 || p.n <= 0) return;
        c.grid.y = static_cast<unsigned>(plan.split_k);  // <= max_grid_yz: plan_split_k
        const detail::split_k_output<In> out(p, plan.split_k, workspace, s);
        launch(s, c, detail::gemm_tensor_core_fallback_kernel<In, fallback>, out.problem(), plan.k_per_split,
               out.slice_stride());
        out.reduce(s);
      };
      if (plan.block_m == tensor_core_small_fallback_policy::block_m) {
        launch_fallback(tensor_core_small_fallback_policy{});
      } else {
        FOUNDRY_EXPECTS(plan.block_m == tensor_core_fallback_policy::block_m,
                        "gemm: a fallback plan of a tile that no kernel is built for: " + std::to_string(plan.block_m) +
                            " x " + std::to_string(plan.block_n));
        launch_fallback(tensor_core_fallback_policy{});
      }
      return;
    }
    using a_tile = detail::operand_tile<true, Policy::block_m, Policy::block_k>;  // same size either layout
    using b_tile = detail::operand_tile<true, Policy::block_n, Policy::block_k>;
    static_assert(tensor_core_ring_bytes<Policy>() == std::size_t{Policy::stages} * (a_tile::bytes + b_tile::bytes));
    launch_config c = detail::tile_grid<Policy>(p.m, p.n, tensor_core_ring_bytes<Policy>());
    if (p.m <= 0 || p.n <= 0) return;                // nothing to compute, nothing to touch
    c.grid.y = static_cast<unsigned>(plan.split_k);  // <= max_grid_yz: plan_split_k
    const detail::split_k_output<In> out(p, plan.split_k, workspace, s);
    launch(s, c, detail::select_tensor_core_kernel<In, Policy>(p), out.problem(), plan.k_per_split, out.slice_stride());
    out.reduce(s);
  }
}

/// Enqueues C = alpha·A·B + beta·C on `s` with tensor cores (fp16 or bf16 in,
/// fp32 accumulation and C): `launch_tensor_core` with `tensor_core_plan` for the
/// current device and `options`. Asynchronous: returns once the work is enqueued.
/// Shapes and leading dimensions are the caller's to validate (foundry::gemm
/// does); an empty C launches nothing, K = 0 gives C = beta·C, and C is not read
/// when beta == 0. The fallback kernel splits K as the fast one does.
/// Throws as `tensor_core_plan` and `launch_tensor_core`, and `cuda_error` if the
/// device query fails.
template <class In, class Policy = tensor_core_auto_policy>
void gemm_tensor_core(const gemm_problem<In, float>& p, const split_k_options& options, cuda::stream_ref s) {
  static_assert(std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>,
                "gemm_tensor_core takes __half or __nv_bfloat16 inputs");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  const auto device = [&s]() -> const device_properties& { return get_device_properties(stream_device(s.get())); };
  const auto sm_count = [&device] { return device().sm_count; };
  // The plan for a device where every tiling fits checks the problem before the device is
  // queried; the device's shared memory can change only the deep tiling, past K = 1536.
  const gemm_plan any_device = tensor_core_plan<In, Policy>(p, options.split_k, sm_count);
  const gemm_plan plan =
      any_device.fallback || tensor_core_picks_shallow_k(p.k)
          ? any_device
          : tensor_core_plan<In, Policy>(p, options.split_k, sm_count, device().shared_memory_per_block_optin);
  launch_tensor_core<In, Policy>(plan, p, options.workspace, s);
}

/// `gemm_tensor_core` with the default options (automatic split-K, internal workspace).
template <class In, class Policy = tensor_core_auto_policy>
void gemm_tensor_core(const gemm_problem<In, float>& p, cuda::stream_ref s) {
  gemm_tensor_core<In, Policy>(p, split_k_options{}, s);
}

}  // namespace foundry::gemm_kernels
