#pragma once
/// \file
/// The tile loaders of the GEMM rungs: global memory → shared memory, with any M, N,
/// K (out-of-range elements arrive as zeros).
/// - `operand_loader` (rung 3, fp32): through registers, 16-byte `float4` loads when
///   the operand allows them, so that the next tile is in flight during the FMAs.
/// - `tile_copier` (rung 4, fp16/bf16): `cp.async` straight into a swizzled tile.
/// Rung 5's tiles are copied by TMA (detail/tma.cuh), which needs no loader.

#include <foundry/gemm/detail/mma_sync.cuh>

#include <cstdint>

namespace foundry::gemm_kernels::detail {

/// Moves one operand tile between global memory, registers and shared memory.
/// The operand X is `Outer × K`: A is M × K (outer = i), B is seen as N × K
/// (outer = j). In global memory X(o, k) sits at `x[o * ld + k]` when
/// `KContiguous`, else at `x[k * ld + o]`. In shared memory the tile is always
/// `s[k][o]` (outer index contiguous), each row `Outer + Pad` floats long.
/// A loader is built once per block and walks along K one tile per `load`;
/// it keeps per load only a pointer and the count of in-range elements across
/// the fixed index, to stay inside the 128-register budget.
template <int Outer, int BlockK, int Threads, int Pad, bool KContiguous, bool Vector>
class operand_loader {
 public:
  static constexpr int vectors = Outer * BlockK / 4;  // float4 per tile
  static constexpr int loads = vectors / Threads;     // per thread
  static constexpr int row = Outer + Pad;             // floats per shared row
  static_assert(vectors % Threads == 0, "each thread moves a whole number of float4");

  /// Position (o, k), within the tile, of the first of the 4 elements of this
  /// thread's vector `l`. k-contiguous: vectors 2q and 2q + 1 are the two
  /// halves of one 32-byte sector along k, and consecutive pairs walk the
  /// outer index, so a warp's scattered shared stores cover 16 rows × 2 halves
  /// (32 banks, thanks to the pad). outer-contiguous: a warp reads 128
  /// consecutive floats of one k row.
  __device__ static void position(int l, int& o, int& k) {
    const int v = l * Threads + static_cast<int>(threadIdx.x);
    if constexpr (KContiguous) {
      o = (v / 2) % Outer;
      k = ((v / 2) / Outer) * 8 + (v % 2) * 4;
    } else {
      o = (v % (Outer / 4)) * 4;
      k = v / (Outer / 4);
    }
  }

  /// Points at the tile whose corner is (o0, k0); rows o >= outer_end read as 0.
  __device__ operand_loader(const float* x, std::int64_t ld, std::int64_t o0, std::int64_t outer_end, std::int64_t k0) {
#pragma unroll
    for (int l = 0; l < loads; ++l) {
      int o = 0, k = 0;
      position(l, o, k);
      const std::int64_t go = o0 + o;
      ptr_[l] = KContiguous ? x + go * ld + (k0 + k) : x + (k0 + k) * ld + go;
      // k-contiguous: 1 if the row exists; outer-contiguous: elements of the vector inside [0, outer_end).
      const std::int64_t left = outer_end - go;
      fixed_[l] = KContiguous ? (left > 0 ? 1 : 0) : static_cast<int>(left <= 0 ? 0 : (left >= 4 ? 4 : left));
    }
  }

  /// Loads the current tile into `r` and steps to the next one (`step`
  /// elements further). `k_left`: elements of K from the tile's first k to the
  /// end of the range, clamped to int; elements past it read as 0.
  __device__ void load(int k_left, std::int64_t step, float4 (&r)[loads]) {
#pragma unroll
    for (int l = 0; l < loads; ++l) {
      int o = 0, k = 0;
      position(l, o, k);
      int valid = 0;  // elements of the vector in range, 0..4, counted along the contiguous index
      if constexpr (KContiguous) {
        const int along = k_left - k;
        valid = fixed_[l] == 0 ? 0 : (along <= 0 ? 0 : (along >= 4 ? 4 : along));
      } else {
        valid = k < k_left ? fixed_[l] : 0;
      }
      const float* ptr = ptr_[l];
      if (Vector && valid == 4) {
        r[l] = __ldg(reinterpret_cast<const float4*>(ptr));
      } else {
        r[l].x = valid > 0 ? __ldg(ptr + 0) : 0.0f;
        r[l].y = valid > 1 ? __ldg(ptr + 1) : 0.0f;
        r[l].z = valid > 2 ? __ldg(ptr + 2) : 0.0f;
        r[l].w = valid > 3 ? __ldg(ptr + 3) : 0.0f;
      }
      ptr_[l] += step;
    }
  }

  /// Stores `r` (from `load`) into the shared tile `s` (`BlockK` rows of `row` floats).
  __device__ static void store(float* s, const float4 (&r)[loads]) {
#pragma unroll
    for (int l = 0; l < loads; ++l) {
      int o = 0, k = 0;
      position(l, o, k);
      if constexpr (KContiguous) {  // transpose: 4 k values of one o
        s[(k + 0) * row + o] = r[l].x;
        s[(k + 1) * row + o] = r[l].y;
        s[(k + 2) * row + o] = r[l].z;
        s[(k + 3) * row + o] = r[l].w;
      } else {
        *reinterpret_cast<float4*>(s + k * row + o) = r[l];
      }
    }
  }

 private:
  const float* ptr_[loads];
  int fixed_[loads];
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

}  // namespace foundry::gemm_kernels::detail
