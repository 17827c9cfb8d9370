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
///    (gemm/split_k.cuh, shared with rungs 3 and 5); `tensor_core_split_k` says
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
#include <foundry/gemm/detail/mma_sync.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/gemm/split_k.cuh>
#include <foundry/launch/launch.cuh>
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
/// another struct with the same members (`blocks_per_sm` included: it sets the
/// kernel's `__launch_bounds__` and the split-K plan) as `gemm_tensor_core`'s second
/// template argument to try a different tiling.
struct tensor_core_policy {
  /// Block tile 128 × 256: with 64 × 64 warp tiles a thread holds 128 fp32
  /// accumulators, and every element copied to shared memory feeds 128 (A) or
  /// 64 (B) multiply-adds per warp. On Hopper mma.sync is not the fast path:
  /// rung 5 (gemm_wgmma.cuh) is.
  /// 453 TFLOP/s at 4096^3 bf16 on the H200 (0.60× cuBLAS, 71% of the ~640 TFLOP/s mma.sync peak).
  static constexpr int block_m = 128;
  static constexpr int block_n = 256;
  /// K per pipeline step: four `mma` k-steps between barriers, half the barriers per
  /// FLOP of block_k 32. 494 TFLOP/s at 8192^3 bf16 on the H200, against 398 with block_k 32.
  static constexpr int block_k = 64;
  /// 8 warps as 2 × 4, each 64 × 64. One block per SM: 128 accumulators and 64
  /// registers of double-buffered fragments put a thread at the 255-register cap.
  static constexpr int warps_m = 2;
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
  static constexpr int blocks_per_sm = 1;
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
  static constexpr int block_n = 128;
  static constexpr int warps_n = 2;
  static constexpr int blocks_per_sm = 2;
};

/// Not a tiling: as `gemm_tensor_core`'s policy (the default) it picks one per
/// problem, `tensor_core_shallow_k_policy` when K ≤ `shallow_k_max`, else
/// `tensor_core_policy` (see `tensor_core_picks_shallow_k`). 1536: at M = N = 8192 on the
/// H200 the shallow tiling led by 11% at K = 1024 and trailed by 4% at K = 2048; the two
/// cross near K = 1600, and between 1024 and 2048 the choice is within the noise.
struct tensor_core_auto_policy {
  static constexpr std::int64_t shallow_k_max = 1536;
};

/// Whether the automatic tiling of `gemm_tensor_core` is the shallow-K one for a
/// problem with this K.
[[nodiscard]] constexpr bool tensor_core_picks_shallow_k(std::int64_t k) noexcept {
  return k <= tensor_core_auto_policy::shallow_k_max;
}

/// Tiling of the fallback kernel (unaligned operands): small tiles and no
/// pipeline; it exists to be correct, not fast.
struct tensor_core_fallback_policy {
  static constexpr int block_m = 64;
  static constexpr int block_n = 64;
  static constexpr int block_k = 32;
  static constexpr int warps_m = 2;
  static constexpr int warps_n = 2;
  static constexpr int stages = 1;  ///< not pipelined: scalar loads, a barrier, the mma steps
  static constexpr int group_m = 8;
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

/// A tile of `Rows` shared-memory rows of `RowChunks` 16-byte chunks (8 fp16/bf16
/// each). Chunk c of row r is stored at chunk position c ^ key(r): the key
/// differs between the 8 consecutive rows that one ldmatrix phase reads (at the
/// same logical chunk), so they land in 8 different 16-byte bank groups of the
/// 128-byte bank window. Rows shorter than 128 bytes share a 128-byte line with
/// their neighbours; the key then changes once per line. The key depends only
/// on r mod 8, so moving down 8 rows is a plain offset.
template <int Rows, int RowChunks>
struct swizzled_tile {
  static_assert(RowChunks > 0 && (RowChunks & (RowChunks - 1)) == 0, "chunks per row: a power of two");
  static constexpr int rows = Rows;
  static constexpr int row_chunks = RowChunks;
  static constexpr int row_bytes = RowChunks * 16;
  static constexpr int bytes = Rows * row_bytes;

  [[nodiscard]] __host__ __device__ static constexpr int key(int row) noexcept {
    if constexpr (RowChunks >= 8) {
      return row & 7;
    } else {
      return (row / (8 / RowChunks)) & (RowChunks - 1);
    }
  }
  /// Byte offset of logical chunk `chunk` of row `row`.
  [[nodiscard]] __host__ __device__ static constexpr int offset(int row, int chunk) noexcept {
    return row * row_bytes + ((chunk ^ key(row)) * 16);
  }
  /// Byte offset of element `col` (0 .. 8·RowChunks-1) of row `row`.
  [[nodiscard]] __host__ __device__ static constexpr int element_offset(int row, int col) noexcept {
    return offset(row, col / 8) + (col % 8) * 2;
  }
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

/// Copies an operand's block tile global → shared with cp.async. The operand is
/// seen as stored: `rows` rows of `cols` contiguous elements, `ld` apart (for a
/// K-contiguous A, rows = M and cols = K). Each thread copies the same chunk
/// column of `passes` rows; chunks past the matrix are zero-filled. The matrix
/// is passed to each call rather than kept: in the kernel those values are
/// kernel parameters, which cost no registers.
template <class In, class Tile, int Threads>
struct tile_copier {
  static_assert(Threads % Tile::row_chunks == 0, "a pass covers whole tile rows");
  static constexpr int rows_per_pass = Threads / Tile::row_chunks;
  static_assert(Tile::rows % rows_per_pass == 0, "the tile is a whole number of passes");
  static constexpr int passes = Tile::rows / rows_per_pass;
  static constexpr int elements_per_chunk = 16 / static_cast<int>(sizeof(In));

  int row;    ///< this thread's first tile row
  int chunk;  ///< this thread's chunk in each of its rows

  __host__ __device__ explicit constexpr tile_copier(int thread)
      : row(thread / Tile::row_chunks), chunk(thread % Tile::row_chunks) {}

  /// Starts the copies of the tile whose top-left stored element is (row0, col0).
  /// `KnownInside`: the caller guarantees that the tile lies wholly inside the matrix,
  /// so that the bounds and the edge path are not even compiled in.
  template <bool KnownInside = false>
  __device__ void copy(std::uint32_t s_tile, const In* g_data, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                       std::int64_t row0, std::int64_t col0) const {
    const std::int64_t col = col0 + chunk * elements_per_chunk;
    if (KnownInside || (row0 + Tile::rows <= rows && col0 + Tile::row_chunks * elements_per_chunk <= cols)) {
      // The whole tile lies inside the matrix (every tile off the edges; block-uniform): no
      // per-chunk bounds, one address and a fixed stride. Checking every chunk cost about
      // 20 instructions per copy, more than the mma it feeds (SASS of the H200 build).
      const In* src = g_data + (row0 + row) * ld + col;
      const std::int64_t pass_stride = std::int64_t{rows_per_pass} * ld;
#pragma unroll
      for (int pass = 0; pass < passes; ++pass) {
        cp_async_16(s_tile + static_cast<std::uint32_t>(Tile::offset(row + pass * rows_per_pass, chunk)),
                    src + pass * pass_stride, 16u);
      }
      return;
    }
    // Elements of this chunk inside the matrix: all 8, fewer at the edge, none past it.
    const std::int64_t left = cols - col;
    const std::int64_t inside = left >= elements_per_chunk ? elements_per_chunk : left > 0 ? left : 0;
    const auto col_bytes = static_cast<std::uint32_t>(inside * static_cast<std::int64_t>(sizeof(In)));
#pragma unroll
    for (int pass = 0; pass < passes; ++pass) {
      const int r = row + pass * rows_per_pass;
      const std::int64_t g_row = row0 + r;
      const std::uint32_t bytes = g_row < rows ? col_bytes : 0u;
      // A zero-byte copy reads nothing; point it at the matrix anyway.
      const In* src = bytes != 0 ? g_data + g_row * ld + col : g_data;
      cp_async_16(s_tile + static_cast<std::uint32_t>(Tile::offset(r, chunk)), src, bytes);
    }
  }
};

/// Block `block` of a grid over `tiles_m × tiles_n` tiles, numbered column by
/// column within groups of `group_m` tile rows (the last group may be shorter),
/// so that consecutive blocks reuse the same B columns and a few A rows.
struct tile_index {
  std::int64_t m;
  std::int64_t n;
};
[[nodiscard]] __host__ __device__ constexpr tile_index grouped_tile(std::int64_t block, std::int64_t tiles_m,
                                                                    std::int64_t tiles_n, int group_m) noexcept {
  const std::int64_t per_group = group_m * tiles_n;
  const std::int64_t first_m = block / per_group * group_m;
  const std::int64_t group_rows = tiles_m - first_m < group_m ? tiles_m - first_m : group_m;
  const std::int64_t in_group = block % per_group;
  return {first_m + in_group % group_rows, in_group / group_rows};
}

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

/// C = alpha·acc + beta·C for a warp's tile at (row0, col0). Accumulator c0,c1
/// of fragment (i, j) sits at row 16i + g, columns 8j + 2t and 8j + 2t + 1
/// (lane = 4g + t); c2,c3 eight rows lower. Adjacent pairs go out as one 8-byte
/// store when C allows it. C is read only when beta != 0.
template <int MFragments, int NFragments, class In>
__device__ void store_accumulators(const float (&acc)[MFragments][NFragments][4], const gemm_problem<In, float>& p,
                                   std::int64_t row0, std::int64_t col0, int lane) {
  const int g = lane >> 2;
  const int t = lane & 3;
  const bool pairs = p.ldc % 2 == 0 && is_aligned(p.c, 2 * sizeof(float));
  const bool read_c = p.beta != 0.0f;
#pragma unroll
  for (int i = 0; i < MFragments; ++i) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::int64_t row = row0 + 16 * i + 8 * half + g;
      if (row >= p.m) continue;
      float* c_row = p.c + row * p.ldc;
#pragma unroll
      for (int j = 0; j < NFragments; ++j) {
        const std::int64_t col = col0 + 8 * j + 2 * t;
        float v0 = p.alpha * acc[i][j][2 * half];
        float v1 = p.alpha * acc[i][j][2 * half + 1];
        if (pairs && col + 1 < p.n) {
          auto* c2 = reinterpret_cast<float2*>(c_row + col);
          if (read_c) {
            const float2 old = *c2;
            v0 = fmaf(p.beta, old.x, v0);
            v1 = fmaf(p.beta, old.y, v1);
          }
          *c2 = make_float2(v0, v1);
        } else {
          if (col < p.n) c_row[col] = read_c ? fmaf(p.beta, c_row[col], v0) : v0;
          if (col + 1 < p.n) c_row[col + 1] = read_c ? fmaf(p.beta, c_row[col + 1], v1) : v1;
        }
      }
    }
  }
}

/// The fast kernel: cp.async ring of `stages` buffers, ldmatrix, mma.sync.
/// Needs gemm_tensor_core_fast_path(p); `AKContiguous` and `BKContiguous` must
/// match p.a_k_contiguous and !p.b_n_contiguous. Launch with
/// `tensor_core_shape<Policy>::threads` threads, a grid of one block per block
/// tile (x) and per K slice (y), and `stages × (A tile + B tile)` bytes of dynamic
/// shared memory. Block y multiplies K elements [y·k_per_split, (y+1)·k_per_split)
/// (a multiple of block_k, so that only the last slice has a ragged end) into
/// C + y·c_slice_stride.
template <class In, class Policy, bool AKContiguous, bool BKContiguous>
__global__ void __launch_bounds__(tensor_core_shape<Policy>::threads, Policy::blocks_per_sm)
    gemm_tensor_core_kernel(gemm_problem<In, float> p, std::int64_t k_per_split, std::int64_t c_slice_stride) {
  using shape = tensor_core_shape<Policy>;
  using a_layout = operand_tile<AKContiguous, Policy::block_m, Policy::block_k>;
  using b_layout = operand_tile<BKContiguous, Policy::block_n, Policy::block_k>;
  constexpr int stage_bytes = a_layout::bytes + b_layout::bytes;
  constexpr int stages = Policy::stages;
  constexpr int k_steps = shape::k_steps;  // mma K steps per pipeline step
  static_assert(stages >= 2, "the ring needs a buffer being filled besides the one being read");
  static_assert(k_steps >= 2 && k_steps % 2 == 0,
                "block_k: a multiple of 32, so the fragment double buffer lines up across pipeline steps");

  extern __shared__ __align__(128) unsigned char s_ring[];
  const std::uint32_t s_base = shared_address(s_ring);

  const tile_index tile = grouped_tile(blockIdx.x, ceil_div<std::int64_t>(p.m, Policy::block_m),
                                       ceil_div<std::int64_t>(p.n, Policy::block_n), Policy::group_m);
  const std::int64_t m0 = tile.m * Policy::block_m;
  const std::int64_t n0 = tile.n * Policy::block_n;

  const int thread = static_cast<int>(threadIdx.x);
  const int lane = thread % 32;
  const int warp = thread / 32;
  const int warp_row = (warp / Policy::warps_n) * shape::warp_m;
  const int warp_col = (warp % Policy::warps_n) * shape::warp_n;

  const tile_copier<In, typename a_layout::tile, shape::threads> a_copier(thread);
  const tile_copier<In, typename b_layout::tile, shape::threads> b_copier(thread);
  // The ring: buffer `stage` holds an A tile then a B tile.
  const auto stage_a = [&](int stage) { return s_base + static_cast<std::uint32_t>(stage * stage_bytes); };
  const auto stage_b = [&](int stage) { return stage_a(stage) + static_cast<std::uint32_t>(a_layout::bytes); };
  const auto next = [](int stage) { return stage + 1 == stages ? 0 : stage + 1; };
  // Each operand as stored: (rows, cols) with cols contiguous.
  const std::int64_t k_begin = std::int64_t{blockIdx.y} * k_per_split;
  const std::int64_t k_end = k_begin + k_per_split < p.k ? k_begin + k_per_split : p.k;
  // `inside`: std::true_type when the caller knows the tile lies inside the matrix.
  const auto copy_a = [&](auto inside, int stage, int step) {
    constexpr bool known_inside = decltype(inside)::value;
    const std::int64_t k0 = k_begin + std::int64_t{step} * Policy::block_k;
    if constexpr (AKContiguous) {
      a_copier.template copy<known_inside>(stage_a(stage), p.a, p.lda, p.m, p.k, m0, k0);
    } else {
      a_copier.template copy<known_inside>(stage_a(stage), p.a, p.lda, p.k, p.m, k0, m0);
    }
  };
  const auto copy_b = [&](auto inside, int stage, int step) {
    constexpr bool known_inside = decltype(inside)::value;
    const std::int64_t k0 = k_begin + std::int64_t{step} * Policy::block_k;
    if constexpr (BKContiguous) {
      b_copier.template copy<known_inside>(stage_b(stage), p.b, p.ldb, p.n, p.k, n0, k0);
    } else {
      b_copier.template copy<known_inside>(stage_b(stage), p.b, p.ldb, p.k, p.n, k0, n0);
    }
  };

  float acc[shape::m_fragments][shape::n_fragments][4] = {};
  // A 32-bit step count keeps the main loop's registers free (checked by gemm_tensor_core).
  const int steps = k_end > k_begin ? static_cast<int>(ceil_div<std::int64_t>(k_end - k_begin, Policy::block_k)) : 0;

  // Prologue: steps 0 .. stages-2 in flight, one commit group each (empty past the end, so
  // that "group i holds step i" holds for every wait below); then step 0 must land.
#pragma unroll
  for (int stage = 0; stage < stages - 1; ++stage) {
    if (stage < steps) {
      copy_a(std::false_type{}, stage, stage);
      copy_b(std::false_type{}, stage, stage);
    }
    cp_async_commit();
  }
  cp_async_wait<stages - 2>();
  __syncthreads();

  // Fragments are double-buffered: the loads for K step ks+1 are issued before the mma of
  // step ks, and the first fragments of the next pipeline step before the last mma of the
  // current one, so ldmatrix latency hides behind tensor-core work, across the barrier too.
  warp_fragments<shape::m_fragments, shape::n_fragments> frag[2];
  int read_stage = 0;
  int write_stage = stages - 1;
  if (steps > 0) load_fragments<a_layout, b_layout>(frag[0], stage_a(0), stage_b(0), warp_row, warp_col, 0, lane);

  // Runs pipeline steps [first, last). With `inside` a std::true_type, every refill in
  // the range must be a whole tile inside A and B: the copies then carry no bounds and
  // no edge path. (Left to the compiler, the edge path of each copy was if-converted into
  // about 250 predicated instructions per step, issued even when false: SASS of the H200
  // build, 4.5 instructions per mma.)
  const auto run_steps = [&](auto inside, int first, int last) {
    for (int step = first; step < last; ++step) {
#pragma unroll
      for (int ks = 0; ks < k_steps; ++ks) {
        // Refill the buffer read during step-1 (every warp read its last fragments of it
        // before the barrier at the end of step-1): A with the first K step, B with the
        // last, so that the address arithmetic of the copies is spread between the mma.
        // step + stages - 1 < steps, without overflow:
        const bool refill = decltype(inside)::value || step < steps - (stages - 1);
        if (ks == 0 && refill) copy_a(inside, write_stage, step + stages - 1);
        if (ks == k_steps - 1) {
          if (refill) copy_b(inside, write_stage, step + stages - 1);
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
  };
  // Phase 1: the steps whose refill (step + stages - 1) is a whole K tile, in a block tile
  // wholly inside M and N (block-uniform). Phase 2: the rest, with bounds.
  const bool block_inside = m0 + Policy::block_m <= p.m && n0 + Policy::block_n <= p.n;
  // Steps of this slice whose K tile is whole (all of them but a ragged last one).
  const int whole_steps = k_end > k_begin ? static_cast<int>((k_end - k_begin) / Policy::block_k) : 0;
  const int inside_end = block_inside && whole_steps > stages - 1 ? whole_steps - (stages - 1) : 0;
  run_steps(std::true_type{}, 0, inside_end);
  run_steps(std::false_type{}, inside_end, steps);
  cp_async_wait<0>();  // only empty groups remain; leave nothing in flight at exit

  gemm_problem<In, float> out = p;
  out.c += std::int64_t{blockIdx.y} * c_slice_stride;
  store_accumulators(acc, out, m0 + warp_row, n0 + warp_col, lane);
}

__device__ inline std::uint16_t bits_of(__half x) { return __half_as_ushort(x); }
__device__ inline std::uint16_t bits_of(__nv_bfloat16 x) { return __bfloat16_as_ushort(x); }

/// The fallback kernel: any layout, leading dimension and alignment. Both
/// operands are staged K-contiguous in shared memory by plain element loads
/// (consecutive threads read consecutive stored elements), then multiplied with
/// the same fragment loads and mma as the fast kernel. One block per block tile,
/// 1D grid.
template <class In, class Policy>
__global__ void __launch_bounds__(tensor_core_shape<Policy>::threads)
    gemm_tensor_core_fallback_kernel(gemm_problem<In, float> p) {
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

  float acc[shape::m_fragments][shape::n_fragments][4] = {};
  for (std::int64_t k0 = 0; k0 < p.k; k0 += bk) {
    for (int e = thread; e < Policy::block_m * bk; e += shape::threads) {
      const int r = p.a_k_contiguous ? e / bk : e % Policy::block_m;
      const int q = p.a_k_contiguous ? e % bk : e / Policy::block_m;
      const std::int64_t i = m0 + r;
      const std::int64_t kk = k0 + q;
      std::uint16_t v = 0;
      if (i < p.m && kk < p.k) v = bits_of(p.a_k_contiguous ? p.a[i * p.lda + kk] : p.a[kk * p.lda + i]);
      *reinterpret_cast<std::uint16_t*>(s_a_bytes + a_layout::tile::element_offset(r, q)) = v;
    }
    for (int e = thread; e < Policy::block_n * bk; e += shape::threads) {
      const int r = p.b_n_contiguous ? e % Policy::block_n : e / bk;
      const int q = p.b_n_contiguous ? e / Policy::block_n : e % bk;
      const std::int64_t j = n0 + r;
      const std::int64_t kk = k0 + q;
      std::uint16_t v = 0;
      if (j < p.n && kk < p.k) v = bits_of(p.b_n_contiguous ? p.b[kk * p.ldb + j] : p.b[j * p.ldb + kk]);
      *reinterpret_cast<std::uint16_t*>(s_b_bytes + b_layout::tile::element_offset(r, q)) = v;
    }
    __syncthreads();
    warp_fragments<shape::m_fragments, shape::n_fragments> frag;
#pragma unroll
    for (int k = 0; k < bk; k += 16) {
      load_fragments<a_layout, b_layout>(frag, shared_address(s_a_bytes), shared_address(s_b_bytes), warp_row, warp_col,
                                         k, lane);
      mma_fragments<In>(acc, frag);
    }
    __syncthreads();  // the next step overwrites the tiles
  }

  store_accumulators(acc, p, m0 + warp_row, n0 + warp_col, lane);
}

/// A 1D grid with one block per `Policy` block tile of an m × n C.
template <class Policy>
[[nodiscard]] launch_config tile_grid(std::int64_t m, std::int64_t n, std::size_t dynamic_shared_bytes) {
  launch_config c;
  c.block = dim3(tensor_core_shape<Policy>::threads, 1, 1);
  c.dynamic_shared_bytes = dynamic_shared_bytes;
  if (m <= 0 || n <= 0) return c;  // empty grid: nothing to launch
  const std::int64_t tiles_m = ceil_div<std::int64_t>(m, Policy::block_m);
  const std::int64_t tiles_n = ceil_div<std::int64_t>(n, Policy::block_n);
  FOUNDRY_EXPECTS(tiles_m <= static_cast<std::int64_t>(max_grid_x) / tiles_n,
                  "gemm_tensor_core: " + std::to_string(tiles_m) + " × " + std::to_string(tiles_n) +
                      " block tiles exceed the 1D grid limit of " + std::to_string(max_grid_x) + " blocks");
  c.grid = dim3(static_cast<unsigned>(tiles_m * tiles_n), 1, 1);
  return c;
}

}  // namespace detail

/// The split-K plan the fast kernel of `gemm_tensor_core<In, Policy>` uses for an m ×
/// n × k problem on `sm_count` SMs (see `plan_split_k`; `requested` as
/// `split_k_options::split_k`), with the tiling the default policy picks by K: one slice
/// while the block tiles occupy every SM, otherwise enough slices of at least 512 of K to
/// fill the `blocks_per_sm` block slots of every SM. At 1024 × 1024 × 8192: 32 tiles of
/// 128 × 256, 4 slices of 2048.
template <class Policy = tensor_core_auto_policy>
[[nodiscard]] split_k_plan tensor_core_split_k(std::int64_t m, std::int64_t n, std::int64_t k, int requested,
                                               int sm_count) {
  if constexpr (std::is_same_v<Policy, tensor_core_auto_policy>) {
    return tensor_core_picks_shallow_k(k)
               ? tensor_core_split_k<tensor_core_shallow_k_policy>(m, n, k, requested, sm_count)
               : tensor_core_split_k<tensor_core_policy>(m, n, k, requested, sm_count);
  } else {
    constexpr std::int64_t min_k_per_split = 512;
    const std::int64_t tiles = ceil_div<std::int64_t>(m, Policy::block_m) * ceil_div<std::int64_t>(n, Policy::block_n);
    return plan_split_k(tiles, std::int64_t{sm_count} * Policy::blocks_per_sm, sm_count, k, Policy::block_k, requested,
                        min_k_per_split);
  }
}

/// Enqueues C = alpha·A·B + beta·C on `s` with tensor cores (fp16 or bf16 in,
/// fp32 accumulation and C). Asynchronous: returns once the work is enqueued.
/// Shapes and leading dimensions are the caller's to validate (foundry::gemm
/// does); an empty C launches nothing, K = 0 gives C = beta·C, and C is not read
/// when beta == 0. Problems that pass `gemm_tensor_core_fast_path` run the
/// pipelined kernel with `Policy` (by default the tiling `tensor_core_auto_policy`
/// picks for the problem's K), any other the fallback (which does not split K:
/// `options` are ignored there, a caller's workspace neither used nor checked).
/// Split-K on the fast path (`options`, see `tensor_core_split_k` for the automatic
/// count): the slices go to a workspace, the caller's or one allocated and freed
/// stream-ordered on `s`, and a second kernel sums them into C in a fixed order.
/// Throws `std::invalid_argument` if the grid of block tiles exceeds the device's
/// limit, if (on the fast path) K needs more than 2^31 - 1 steps of `block_k`, or
/// if a caller's workspace is too small; `cuda_error` if an
/// allocation or a launch fails.
template <class In, class Policy = tensor_core_auto_policy>
void gemm_tensor_core(const gemm_problem<In, float>& p, const split_k_options& options, cuda::stream_ref s) {
  static_assert(std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>,
                "gemm_tensor_core takes __half or __nv_bfloat16 inputs");
  if constexpr (std::is_same_v<Policy, tensor_core_auto_policy>) {
    if (tensor_core_picks_shallow_k(p.k)) return gemm_tensor_core<In, tensor_core_shallow_k_policy>(p, options, s);
    return gemm_tensor_core<In, tensor_core_policy>(p, options, s);
  } else {
    FOUNDRY_NVTX_FUNCTION_RANGE();
    if (!gemm_tensor_core_fast_path(p)) {
      const launch_config c = detail::tile_grid<tensor_core_fallback_policy>(p.m, p.n, 0);
      launch(s, c, detail::gemm_tensor_core_fallback_kernel<In, tensor_core_fallback_policy>, p);
      return;
    }
    // Both checks run before the device is queried, so that bad input throws its own error.
    FOUNDRY_EXPECTS(ceil_div<std::int64_t>(p.k, Policy::block_k) <= std::numeric_limits<int>::max(),
                    "gemm_tensor_core: K = " + std::to_string(p.k) + " needs more than 2^31 - 1 steps of " +
                        std::to_string(Policy::block_k));
    using a_tile = detail::operand_tile<true, Policy::block_m, Policy::block_k>;  // same size either layout
    using b_tile = detail::operand_tile<true, Policy::block_n, Policy::block_k>;
    launch_config c =
        detail::tile_grid<Policy>(p.m, p.n, std::size_t{Policy::stages} * (a_tile::bytes + b_tile::bytes));
    if (p.m <= 0 || p.n <= 0) return;  // nothing to compute, nothing to touch
    const split_k_plan plan =
        tensor_core_split_k<Policy>(p.m, p.n, p.k, options.split_k, get_device_properties().sm_count);
    c.grid.y = static_cast<unsigned>(plan.splits);  // <= max_grid_yz: plan_split_k
    const auto kernel = [&] {
      if (p.a_k_contiguous) {
        return p.b_n_contiguous ? detail::gemm_tensor_core_kernel<In, Policy, true, false>
                                : detail::gemm_tensor_core_kernel<In, Policy, true, true>;
      }
      return p.b_n_contiguous ? detail::gemm_tensor_core_kernel<In, Policy, false, false>
                              : detail::gemm_tensor_core_kernel<In, Policy, false, true>;
    }();
    const auto enqueue = [&](const gemm_problem<In, float>& q, std::int64_t slice_stride) {
      launch(s, c, kernel, q, plan.depth, slice_stride);
    };
    detail::enqueue_split_k(p, plan.splits, options.workspace, enqueue, s);
  }
}

/// `gemm_tensor_core` with the default options (automatic split-K, internal workspace).
template <class In, class Policy = tensor_core_auto_policy>
void gemm_tensor_core(const gemm_problem<In, float>& p, cuda::stream_ref s) {
  gemm_tensor_core<In, Policy>(p, split_k_options{}, s);
}

}  // namespace foundry::gemm_kernels
