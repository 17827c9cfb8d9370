#pragma once
/// \file
/// Out-of-place matrix transpose and pitched 2D copy, on an explicit stream:
///
///     // in: rows × cols, row pitch in_pitch; out: cols × rows, row pitch out_pitch
///     foundry::transpose(foundry::matrix_view<const float>{in, rows, cols, in_pitch},
///                        foundry::matrix_view<float>{out, cols, rows, out_pitch}, stream);
///     // rows × cols from a pitched source to a pitched destination
///     foundry::copy_2d(foundry::matrix_view<const float>{src, rows, cols, src_pitch},
///                      foundry::matrix_view<float>{dst, rows, cols, dst_pitch}, stream);
///
/// Matrices are `matrix_view`s (<foundry/gemm/gemm_problem.cuh>): `ld` is the pitch in
/// elements (`ld >= cols` for a row-major view); the elements between a row's end and
/// the next row are neither read nor written. A column-major view is its row-major
/// transpose in memory, so `transpose` between views of different layouts is a 2D copy
/// of the stored elements, and `copy_2d` between them is a transpose: both calls take
/// the same two paths below.
///
/// Design (three layers: host call -> `detail::launch_transpose` / `detail::launch_copy_2d` -> kernel):
///  - transpose: one block per tile of `tile_rows` × `tile_cols` input elements (64 × 64
///    for elements of up to 8 bytes), a 1D grid over the tiles, input-row tiles fastest.
///    32 lanes along a tile row, `block_threads / 32` rows at a time: every thread issues
///    all its loads (16 for a 64 × 64 tile) before it stores any to shared memory, so
///    16 KiB of float reads per block are in flight; after one barrier the lanes read a
///    tile column out of shared memory and write it as a row of the output. Reads and
///    writes are one contiguous run of 32 elements per warp instruction (128 bytes for
///    floats, whatever the pitch). The shared rows are padded by one element (4 bytes for
///    1- and 2-byte elements) so that a column read hits 32 different banks. Only the
///    tiles that stick out of the matrix check bounds. Element-wide accesses rather than
///    16-byte vectors: an odd pitch (16383 × 16385) leaves the rows at every offset modulo
///    16 bytes. When the output rows are misaligned (a base or a row pitch that is not a
///    multiple of 32 bytes: `detail::automatic_output_row_split`), each output row is
///    split between blocks at 32-byte aligned addresses instead of at multiples of
///    `tile_rows` (the tile's rows then shear by up to `32 / sizeof(T) - 1`): split at
///    tiles, such rows' runs start mid-sector, and the sectors at both ends of every run
///    are written in part, by two blocks. Aligned outputs keep the unsheared kernel, which
///    the shear would only slow down. The choice is made on the host, per call, unless
///    the policy fixes `store_alignment_bytes`.
///  - copy_2d: each block copies one chunk of `block_threads × vectors_in_flight`
///    vectors of one row (rows past the grid's 65535 by striding), loading all before
///    storing any; 16-byte vectors when both base pointers and both pitches allow them,
///    element by element otherwise, and the `cols % vector` tail of each row element-wise.
///    Two contiguous matrices (pitch == cols, or one row) go to `device_copy` as one span.
/// Both are programmatic dependent launches (`launch_dependency::programmatic`).

#include <foundry/algorithms/transform.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/gemm/gemm_problem.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_bounds.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/thread/vector.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace foundry {

/// `transpose_policy::store_alignment_bytes` for "choose per call": split each output row
/// at aligned addresses (`misaligned_store_alignment_bytes`) only when the output's rows are
/// misaligned, at multiples of `tile_rows` otherwise (the rule:
/// `detail::automatic_output_row_split`).
inline constexpr int store_alignment_automatic = -1;

/// Launch policy of `transpose`. Override by deriving and passing it as the first
/// template argument: `foundry::transpose<my_policy>(...)`. Only the output-row split has
/// been measured on the H200 yet; the other comments give the expected behaviour.
struct transpose_policy {
  /// Threads per block, as 32 lanes × `block_threads / 32` rows. Not yet measured on the
  /// H200. Expected: with `min_blocks_per_sm` below, 5 blocks (80 KiB of float tiles)
  /// per SM, more than twice the ~32 KiB of reads in flight that an H200 SM needs to keep
  /// its share of the bandwidth busy (4.8 TB/s × ~1 us loaded latency / 132 SMs).
  static constexpr int block_threads = 256;
  /// Input rows per tile: the run of contiguous elements that each output row receives
  /// from one block (a multiple of 32 and of `block_threads / 32`). Not yet measured on
  /// the H200. Expected: 64 gives every thread 16 elements in flight (the textbook
  /// 32 × 32 tile, 4 per thread, reached only 0.6× cudaMemcpy); 32 for 16-byte elements
  /// keeps the tile within the 48 KiB of static shared memory.
  __host__ __device__ static constexpr int tile_rows(std::size_t element_bytes) { return element_bytes <= 8 ? 64 : 32; }
  /// Input columns per tile: the run of contiguous elements that each input row gives
  /// one block (a multiple of 32 and of `block_threads / 32`). Square with `tile_rows`.
  __host__ __device__ static constexpr int tile_cols(std::size_t element_bytes) { return element_bytes <= 8 ? 64 : 32; }
  /// Where each output row is split between blocks:
  ///  - 0: at multiples of `tile_rows`, whatever the addresses;
  ///  - a power of two from 32 (an L2 sector) to 128 (a line): the split points of each
  ///    output row move up to the next element whose address is a multiple of this many
  ///    bytes, so that no sector (or line) of the output is written in part, or by two
  ///    blocks (except at a row's ends); each block then loads up to
  ///    `store_alignment_bytes / sizeof(T) - 1` more input rows. Capped at `tile_rows`
  ///    elements;
  ///  - `store_alignment_automatic` (the default): one of the two per call, on the host:
  ///    `misaligned_store_alignment_bytes` when the output rows are misaligned (a base or
  ///    a row pitch that is not a multiple of that many bytes, rows longer than a tile),
  ///    else 0.
  /// A policy that sets 0 or an alignment keeps it for every output.
  static constexpr int store_alignment_bytes = store_alignment_automatic;
  /// The alignment that `store_alignment_automatic` splits a misaligned output at. H200,
  /// 16383 × 16385 floats: 32 bytes 597 us (0.854× cudaMemcpy), 128 bytes 620 us.
  static constexpr int misaligned_store_alignment_bytes = 32;
  /// Blocks per SM that `__launch_bounds__` asks registers for. Not yet measured on the
  /// H200. sm_90, CUDA 13.0 (ptxas): 5 holds a 64 × 64 float tile to 48 registers, no
  /// spills (80 KiB of tiles per SM); 4 holds doubles to 64, no spills (128 KiB).
  __host__ __device__ static constexpr int min_blocks_per_sm(std::size_t element_bytes) {
    return element_bytes <= 4 ? 5 : 4;
  }
  /// Programmatic dependent launch, as every memory-bound kernel (see `transform_policy`).
  static constexpr launch_dependency dependency = launch_dependency::programmatic;
};

/// `transpose_policy` with its tuning given as values, for tuning runs (bench_transpose's
/// candidates) and their tests: `Threads` per block, `Rows` × `Cols` tiles (32 × 32 for
/// elements whose `Rows` × `Cols` tile would take more than 32 KiB), output rows split at
/// `StoreAlignment` bytes (0: at multiples of `Rows`), `MinBlocksPerSm` for the registers.
template <int Threads, int Rows, int Cols, int StoreAlignment, int MinBlocksPerSm>
struct transpose_tuning : transpose_policy {
  /// Threads per block.
  static constexpr int block_threads = Threads;
  /// Whether a `Rows` × `Cols` tile of `element_bytes` elements fits in 32 KiB.
  __host__ __device__ static constexpr bool fits(std::size_t element_bytes) {
    return element_bytes * Rows * Cols <= 32 * 1024;
  }
  /// `Rows`, or 32 where the tile would not fit.
  __host__ __device__ static constexpr int tile_rows(std::size_t element_bytes) {
    return fits(element_bytes) ? Rows : 32;
  }
  /// `Cols`, or 32 where the tile would not fit.
  __host__ __device__ static constexpr int tile_cols(std::size_t element_bytes) {
    return fits(element_bytes) ? Cols : 32;
  }
  /// `StoreAlignment`.
  static constexpr int store_alignment_bytes = StoreAlignment;
  /// `MinBlocksPerSm`, for every element size.
  __host__ __device__ static constexpr int min_blocks_per_sm(std::size_t) { return MinBlocksPerSm; }
};

/// Launch policy of `copy_2d`: one chunk of `block_threads × vectors_in_flight`
/// vectors of a row per block. Not yet measured on the H200; the shape is
/// `device_copy_policy`'s, which reached 0.975× cudaMemcpy at 1 GiB there.
struct copy_2d_policy {
  /// Threads per block.
  static constexpr int block_threads = 512;
  /// Vectors each thread loads before it stores any (its share of the chunk).
  static constexpr int vectors_in_flight = 4;
  /// Bytes per access on the vector path. 16 = one LDG.128/STG.128.
  static constexpr int vector_bytes = 16;
  /// How the kernel waits for the work before it (programmatic dependent launch on sm_90).
  static constexpr launch_dependency dependency = launch_dependency::programmatic;
};

namespace detail {

/// The row-major form of `v` as it lies in memory: a column-major rows × cols view is
/// stored as the row-major cols × rows one.
template <class T>
constexpr matrix_view<T> stored_form(const matrix_view<T>& v) noexcept {
  if (v.layout == matrix_layout::row_major) return v;
  return matrix_view<T>{v.data, v.cols, v.rows, v.ld, matrix_layout::row_major};
}

/// Elements from the first element of a non-empty stored matrix to one past its last.
template <class T>
constexpr std::int64_t stored_extent(const matrix_view<T>& stored) noexcept {
  return (stored.rows - 1) * stored.ld + stored.cols;
}

/// How the output's shape follows from the input's.
enum class matrix_pairing {
  transposed,  ///< out is in.cols × in.rows (transpose)
  same_shape,  ///< out is in.rows × in.cols (copy_2d)
};

/// One view's own checks: non-negative extents, a pitch that holds a stored row, a
/// pointer when it has elements, and an extent that fits the address range.
template <class T>
void expect_matrix(const matrix_view<T>& v, const std::string& what) {
  FOUNDRY_EXPECTS(v.rows >= 0 && v.cols >= 0,
                  what + " has a negative extent (" + std::to_string(v.rows) + "x" + std::to_string(v.cols) + ")");
  const matrix_view<T> s = stored_form(v);
  FOUNDRY_EXPECTS(s.ld >= s.cols, what + " pitch " + std::to_string(s.ld) + " is smaller than its stored row of " +
                                      std::to_string(s.cols) + " elements");
  if (s.rows == 0 || s.cols == 0) return;
  FOUNDRY_EXPECTS(s.data != nullptr,
                  what + " is " + std::to_string(v.rows) + "x" + std::to_string(v.cols) + " but has a null pointer");
  constexpr std::int64_t max_elements = std::numeric_limits<std::int64_t>::max() / static_cast<std::int64_t>(sizeof(T));
  FOUNDRY_EXPECTS(s.rows - 1 <= (max_elements - s.cols) / s.ld, what + ": rows * pitch overflows the address range");
}

/// The checks shared by `transpose`, `copy_2d` and `naive::transpose`. Throws
/// `std::invalid_argument`; returns false when there is nothing to move.
template <class In, class Out>
bool check_matrix_pair(const matrix_view<In>& in, const matrix_view<Out>& out, matrix_pairing pairing,
                       const char* algorithm) {
  const std::string name(algorithm);
  const std::int64_t want_rows = pairing == matrix_pairing::transposed ? in.cols : in.rows;
  const std::int64_t want_cols = pairing == matrix_pairing::transposed ? in.rows : in.cols;
  FOUNDRY_EXPECTS(out.rows == want_rows && out.cols == want_cols,
                  name + ": the output is " + std::to_string(out.rows) + "x" + std::to_string(out.cols) +
                      " but must be " + std::to_string(want_rows) + "x" + std::to_string(want_cols) + " for a " +
                      std::to_string(in.rows) + "x" + std::to_string(in.cols) + " input");
  expect_matrix(in, name + " input");
  expect_matrix(out, name + " output");
  if (in.rows == 0 || in.cols == 0) return false;
  // Conservative and cheap: the address ranges from first to last element. Two views
  // interleaved in one allocation (rows of one between rows of the other) are refused too.
  const auto in_begin = reinterpret_cast<std::uintptr_t>(in.data);
  const auto in_end = in_begin + static_cast<std::uintptr_t>(stored_extent(stored_form(in))) * sizeof(In);
  const auto out_begin = reinterpret_cast<std::uintptr_t>(out.data);
  const auto out_end = out_begin + static_cast<std::uintptr_t>(stored_extent(stored_form(out))) * sizeof(Out);
  expect_no_forbidden_overlap({in_begin, in_end}, sizeof(In), {out_begin, out_end}, sizeof(Out), overlap_rule::disjoint,
                              (name + ": the input and output memory ranges").c_str());
  return true;
}

/// The memory checks of `transpose` and `copy_2d` (after `check_matrix_pair`): both views
/// must be memory that the device of `s` can access.
template <class In, class Out>
void expect_matrix_memory(const matrix_view<In>& in, const matrix_view<Out>& out, cuda::stream_ref s,
                          const char* algorithm) {
  const int device = device_for_checks(s);
  expect_device_accessible(in.data, device, (std::string(algorithm) + " input").c_str());
  expect_device_accessible(out.data, device, (std::string(algorithm) + " output").c_str());
}

/// The alignment, in bytes, that a transpose splits output rows of `element_bytes`
/// elements at, for a policy's `store_alignment_bytes` and `tile_rows`: capped at a
/// tile's rows; 0 (split at multiples of `tile_rows`) for 0 and `store_alignment_automatic`.
__host__ __device__ constexpr std::size_t capped_store_alignment(int store_alignment_bytes, std::size_t element_bytes,
                                                                 int tile_rows) noexcept {
  if (store_alignment_bytes <= 0) return 0;
  const std::size_t tile_bytes = element_bytes * static_cast<std::size_t>(tile_rows);
  const auto alignment = static_cast<std::size_t>(store_alignment_bytes);
  return alignment < tile_bytes ? alignment : tile_bytes;
}

/// Whether splitting at `alignment`-byte addresses can move a split point of a row of
/// `element_bytes` elements: the alignment must hold more than one whole element (a
/// 32-byte element, or a 24-byte one at 32, has nothing to align to).
__host__ __device__ constexpr bool aligned_split_applies(std::size_t element_bytes, std::size_t alignment) noexcept {
  return alignment > element_bytes && alignment % element_bytes == 0;
}

/// How a transpose splits each output row between blocks.
enum class output_row_split {
  at_tiles,    ///< at multiples of `tile_rows` elements from the row's start
  at_aligned,  ///< at the first element at or after them whose address is aligned
};

/// The choice of `store_alignment_automatic` for an output of `out_rows` rows of
/// `out_cols` elements of `element_bytes` bytes, row pitch `out_pitch` elements, first
/// element at byte address `out_base`; `tile_rows` elements per block along an output row,
/// `alignment` bytes (capped, `capped_store_alignment`) for the aligned split.
///
/// Split at tiles, output row c is cut at out_base + c * out_pitch * element_bytes +
/// k * tile_rows * element_bytes. Every cut lies on an `alignment` boundary, so that no
/// sector is written in part or by two blocks, exactly when out_base is a multiple of
/// `alignment`, the pitch in bytes is too (or there is one row), and so is the tile's run
/// (always, for a valid policy). Otherwise the runs start mid-sector and the aligned split
/// pays; on aligned rows it moves no cut and only costs. Rows of at most `tile_rows`
/// elements have no cut to move (their ends are the same either way), and the input's
/// alignment does not enter (a read fetches whole sectors at any offset).
/// H200, 2026-12-04, floats split at 32-byte addresses against at tiles: 16383 × 16385
/// (pitch 65532 bytes) 597 us (0.854× cudaMemcpy) against 808 us (0.631×); 16384 × 16384
/// (aligned) 610 us against 540 us.
__host__ __device__ constexpr output_row_split automatic_output_row_split(std::uintptr_t out_base,
                                                                          std::int64_t out_rows, std::int64_t out_cols,
                                                                          std::int64_t out_pitch,
                                                                          std::size_t element_bytes, int tile_rows,
                                                                          std::size_t alignment) noexcept {
  if (!aligned_split_applies(element_bytes, alignment) || out_cols <= tile_rows) return output_row_split::at_tiles;
  const bool base_misaligned = out_base % alignment != 0;
  const bool pitch_misaligned = out_rows > 1 && static_cast<std::uint64_t>(out_pitch) * element_bytes % alignment != 0;
  const bool run_misaligned = static_cast<std::size_t>(tile_rows) * element_bytes % alignment != 0;
  return base_misaligned || pitch_misaligned || run_misaligned ? output_row_split::at_aligned
                                                               : output_row_split::at_tiles;
}

/// `Policy` with its output rows split at `Policy::misaligned_store_alignment_bytes`: the
/// kernel that `store_alignment_automatic` runs for a misaligned output.
template <class Policy>
struct misaligned_output_policy : Policy {
  static constexpr int store_alignment_bytes = Policy::misaligned_store_alignment_bytes;
};

/// The shape of one transpose tile of `T` under `Policy`: `rows` × `cols` input elements,
/// plus `extra_rows` below them when the output rows are split at aligned addresses.
template <class Policy, class T>
struct transpose_tile {
  static constexpr int rows = Policy::tile_rows(sizeof(T));  ///< an output row's run per block
  static constexpr int cols = Policy::tile_cols(sizeof(T));  ///< an input row's run per block
  static constexpr int lanes = 32;
  static constexpr int rows_per_pass = Policy::block_threads / lanes;
  /// Bytes that the output rows' split points are aligned to (0: split at multiples of
  /// `rows`, also for `store_alignment_automatic`, whose aligned kernel is that of
  /// `misaligned_output_policy<Policy>`).
  static constexpr std::size_t alignment = capped_store_alignment(Policy::store_alignment_bytes, sizeof(T), rows);
  /// How far a split point can move: the input rows loaded past the tile's own.
  static constexpr int extra_rows = alignment == 0 ? 0 : static_cast<int>(alignment / sizeof(T)) - 1;
  static constexpr int loaded_rows = rows + extra_rows;
  static constexpr int load_passes = ceil_div(loaded_rows, rows_per_pass);  ///< input rows per thread
  static constexpr int load_steps = cols / lanes;                           ///< elements per thread per input row
  static constexpr int items = load_passes * load_steps;                    ///< elements per thread
  static constexpr int store_passes = cols / rows_per_pass;                 ///< output rows per thread
  static constexpr int store_steps = ceil_div(loaded_rows, lanes);          ///< elements per thread per output row
  /// Shared row padding: a column read then hits a different 4-byte bank per lane
  /// (row pitch an odd number of words for 1, 2 and 4 bytes; for 8 and 16 bytes an
  /// odd number of elements, conflict-free within the half- and quarter-warps that
  /// 64- and 128-bit accesses are served in).
  static constexpr int pad = sizeof(T) >= 4 ? 1 : static_cast<int>(4 / sizeof(T));
  static constexpr int shared_pitch = cols + pad;
  /// Shared rows: every row a load pass reaches, so that passes store without a check.
  static constexpr int shared_rows = load_passes * rows_per_pass;
  static constexpr std::size_t shared_bytes = sizeof(T) * shared_rows * shared_pitch;

  static_assert(Policy::block_threads % lanes == 0, "transpose: block_threads must be a whole number of warps");
  static_assert(rows % lanes == 0 && rows % rows_per_pass == 0 && cols % lanes == 0 && cols % rows_per_pass == 0,
                "transpose: tile_rows and tile_cols must be multiples of 32 and of block_threads / 32");
  static_assert(Policy::store_alignment_bytes >= 0 || Policy::store_alignment_bytes == store_alignment_automatic,
                "transpose: store_alignment_bytes must be 0, an alignment or store_alignment_automatic");
  static_assert(alignment == 0 || (alignment % sizeof(T) == 0 && (alignment & (alignment - 1)) == 0),
                "transpose: store_alignment_bytes must be 0 or a power of two that holds whole elements");
  /// Whether the tile fits the 48 KiB of static shared memory a block may hold. Elements of
  /// 47 bytes and more do not, even in a 32 × 32 tile: `launch_transpose` then moves one
  /// element per thread (`transpose_elements_kernel`), each already a sector or more.
  static constexpr bool fits_static_shared = shared_bytes <= 48 * 1024;
};

/// Element (r, c) of the stored input goes to `out[r * out_row_step + c * out_col_step]`:
/// (1, pitch) transposes, (pitch, 1) copies. One thread per element, lanes along an input
/// row: `naive::transpose`'s kernel, and the fast call's for elements too large for a tile.
template <class T>
__global__ void transpose_elements_kernel(matrix_view<const T> in, T* out, std::int64_t out_row_step,
                                          std::int64_t out_col_step) {
  // 64-bit indices: a matrix may hold more than 2^31 elements.
  const std::int64_t c = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (c >= in.cols) return;
  // Rows beyond the 65535-block grid limit are reached by striding over y.
  for (std::int64_t r = std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y; r < in.rows;
       r += std::int64_t{gridDim.y} * blockDim.y) {
    out[r * out_row_step + c * out_col_step] = in.data[r * in.ld + c];
  }
}

/// Enqueues `transpose_elements_kernel` for the stored views `in` and `out`: a transpose
/// when `transposes`, else a copy between views stored in different layouts.
template <class T>
void launch_transpose_elements(const matrix_view<const T>& in, const matrix_view<T>& out, bool transposes,
                               cuda::stream_ref s) {
  launch(s, make_launch_config_2d(static_cast<std::uint64_t>(in.cols), static_cast<std::uint64_t>(in.rows), 32, 8),
         transpose_elements_kernel<T>, in, out.data, transposes ? std::int64_t{1} : out.ld,
         transposes ? out.ld : std::int64_t{1});
}

/// Where a run of an output row begins when runs are split at aligned addresses: the
/// first index at or after `j` whose element lies at a multiple of `alignment` bytes, for
/// a row whose element 0 lies at byte address `row_address`; 0 for `j <= 0` and `limit`
/// (the row's length) when that comes first. Consecutive split points of a row never
/// cross while `alignment / element_bytes` is at most the distance between their `j`s.
__host__ __device__ constexpr std::int64_t aligned_split(std::uintptr_t row_address, std::int64_t j, std::int64_t limit,
                                                         std::size_t element_bytes, std::size_t alignment) noexcept {
  if (j <= 0) return 0;
  if (j >= limit) return limit;
  const std::uintptr_t address = row_address + static_cast<std::uintptr_t>(j) * element_bytes;
  const auto shift = static_cast<std::int64_t>((alignment - address % alignment) % alignment / element_bytes);
  return j + shift < limit ? j + shift : limit;
}

/// Moves the tile whose first input element is (r0, c0): reads its rows into shared
/// memory, then writes its columns as rows of `out`. `Edge`: the tile may stick out of
/// the matrix, so every access is checked.
///
/// With `Tile::alignment` nonzero the output rows are split at aligned addresses: output
/// row c gets input rows [aligned_split(c, r0), aligned_split(c, r0 + rows)) from this
/// block, a run that starts on an aligned address and holds whole sectors. Each lane then
/// loads only the rows of its column's run, so that every input element is read by one
/// block, and `Edge` means only that the tile sticks out past the last input column (the
/// last rows are cut by the split points).
template <class Tile, bool Edge, class T>
__device__ inline void move_transpose_tile(const matrix_view<const T>& in, const matrix_view<T>& out, T* s_tile,
                                           std::int64_t r0, std::int64_t c0) {
  constexpr bool split = Tile::alignment != 0;
  const int x = static_cast<int>(threadIdx.x);
  const int y = static_cast<int>(threadIdx.y);
  const int rows_here = !split && Edge && in.rows - r0 < Tile::rows ? static_cast<int>(in.rows - r0) : Tile::rows;
  const int cols_here = Edge && in.cols - c0 < Tile::cols ? static_cast<int>(in.cols - c0) : Tile::cols;
  const auto out_address = reinterpret_cast<std::uintptr_t>(out.data);
  // [first, last) of output row c0 + tile_col, relative to r0, when split.
  auto run_bounds = [&](int tile_col, int& first, int& last) {
    const std::uintptr_t row = out_address + static_cast<std::uintptr_t>((c0 + tile_col) * out.ld) * sizeof(T);
    first = static_cast<int>(aligned_split(row, r0, in.rows, sizeof(T), Tile::alignment) - r0);
    last = static_cast<int>(aligned_split(row, r0 + Tile::rows, in.rows, sizeof(T), Tile::alignment) - r0);
  };
  int first[Tile::load_steps];  // the runs of this lane's columns, when split
  int last[Tile::load_steps];
  if constexpr (split) {
#pragma unroll
    for (int h = 0; h < Tile::load_steps; ++h) {
      first[h] = 0;
      last[h] = 0;
      if (!Edge || x + h * Tile::lanes < cols_here) run_bounds(x + h * Tile::lanes, first[h], last[h]);
    }
  }
  const std::int64_t in_step = std::int64_t{Tile::rows_per_pass} * in.ld;
  const std::int64_t out_step = std::int64_t{Tile::rows_per_pass} * out.ld;
  // 1. Every load issued before any is used: lanes along an input row, each within the
  //    tile (split: within the run of the output row that its column becomes).
  const T* g_in = in.data + (r0 + y) * in.ld + c0 + x;
  T r_items[Tile::items];
#pragma unroll
  for (int j = 0; j < Tile::load_passes; ++j) {
#pragma unroll
    for (int h = 0; h < Tile::load_steps; ++h) {
      const int row = y + j * Tile::rows_per_pass;
      T& item = r_items[j * Tile::load_steps + h];
      if constexpr (split) {
        if (row >= first[h] && row < last[h]) item = g_in[j * in_step + h * Tile::lanes];
      } else if (!Edge || (row < rows_here && x + h * Tile::lanes < cols_here)) {
        item = g_in[j * in_step + h * Tile::lanes];
      }
    }
  }
  // Split: unchecked, an element outside its column's run is never read back (one predicate
  // per element instead of two keeps the sheared tile within the register budget).
#pragma unroll
  for (int j = 0; j < Tile::load_passes; ++j) {
#pragma unroll
    for (int h = 0; h < Tile::load_steps; ++h) {
      if (split || !Edge || (y + j * Tile::rows_per_pass < rows_here && x + h * Tile::lanes < cols_here)) {
        s_tile[(y + j * Tile::rows_per_pass) * Tile::shared_pitch + x + h * Tile::lanes] =
            r_items[j * Tile::load_steps + h];
      }
    }
  }
  __syncthreads();

  // 2. Lanes down a tile column (shared), along an output row (global). Split: a warp per
  //    output row, its lanes along the row's run, which starts on an aligned address.
  T* g_out = out.data + (c0 + y) * out.ld + r0 + x;
#pragma unroll
  for (int j = 0; j < Tile::store_passes; ++j) {
    const int tile_col = y + j * Tile::rows_per_pass;
    int row_first = 0;  // the run of output row c0 + tile_col, relative to r0
    int row_last = rows_here;
    if constexpr (split) {
      if (Edge && tile_col >= cols_here) continue;
      run_bounds(tile_col, row_first, row_last);
      g_out = out.data + (c0 + tile_col) * out.ld + r0;
    }
#pragma unroll
    for (int h = 0; h < Tile::store_steps; ++h) {
      const int tile_row = row_first + x + h * Tile::lanes;
      if constexpr (split) {
        if (tile_row < row_last) g_out[tile_row] = s_tile[tile_row * Tile::shared_pitch + tile_col];
      } else if (!Edge || (tile_col < cols_here && tile_row < row_last)) {
        g_out[j * out_step + h * Tile::lanes] = s_tile[tile_row * Tile::shared_pitch + tile_col];
      }
    }
  }
  __syncthreads();  // the block's next tile overwrites s_tile
}

/// out = in^T for row-major (stored) views: one tile per block, the grid looping when
/// the tiles outnumber its 2^31 - 1 blocks.
template <class Policy, class T>
__global__ void __launch_bounds__(Policy::block_threads,
                                  resident_blocks_bound(Policy::block_threads, Policy::min_blocks_per_sm(sizeof(T))))
    transpose_kernel(matrix_view<const T> in, matrix_view<T> out) {
  using tile = transpose_tile<Policy, T>;
  static_assert(tile::fits_static_shared, "transpose: the tile exceeds 48 KiB of static shared memory");
  __shared__ alignas(T) unsigned char s_raw[tile::shared_bytes];
  T* s_tile = reinterpret_cast<T*>(s_raw);
  allow_dependent_launch();
  wait_for_prior_grids();
  const std::int64_t tiles_x = ceil_div<std::int64_t>(in.cols, tile::cols);
  const std::int64_t tiles = tiles_x * ceil_div<std::int64_t>(in.rows, tile::rows);
  const std::int64_t full_rows = in.rows / tile::rows;  // tile rows that lie wholly inside
  const std::int64_t full_cols = in.cols / tile::cols;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t ty = t / tiles_x;
    const std::int64_t tx = t - ty * tiles_x;
    const std::int64_t r0 = ty * tile::rows;
    const std::int64_t c0 = tx * tile::cols;
    // A split tile's last rows are cut by the split points: only columns make an edge.
    if ((tile::alignment != 0 || ty < full_rows) && tx < full_cols) {
      move_transpose_tile<tile, false>(in, out, s_tile, r0, c0);
    } else {
      move_transpose_tile<tile, true>(in, out, s_tile, r0, c0);
    }
  }
}

/// The kernel that `launch_transpose<Policy>` runs for the stored output `out`: under
/// `store_alignment_automatic`, that of `misaligned_output_policy<Policy>` when the output
/// rows are misaligned (`automatic_output_row_split`); for any other output, and any
/// other policy, that of `Policy`. Both run on the same grid. Touches no GPU.
template <class Policy, class T>
auto transpose_kernel_for(const matrix_view<T>& out) -> void (*)(matrix_view<const T>, matrix_view<T>) {
  using tile = transpose_tile<Policy, T>;
  if constexpr (Policy::store_alignment_bytes == store_alignment_automatic) {
    constexpr std::size_t alignment =
        capped_store_alignment(Policy::misaligned_store_alignment_bytes, sizeof(T), tile::rows);
    // Instantiated only for the element sizes that the aligned split can help.
    if constexpr (aligned_split_applies(sizeof(T), alignment)) {
      if (automatic_output_row_split(reinterpret_cast<std::uintptr_t>(out.data), out.rows, out.cols, out.ld, sizeof(T),
                                     tile::rows, alignment) == output_row_split::at_aligned) {
        return transpose_kernel<misaligned_output_policy<Policy>, T>;
      }
    }
  }
  return transpose_kernel<Policy, T>;
}

/// Enqueues the transpose of the stored, non-empty matrix `in` into `out`, with the
/// kernel of `transpose_kernel_for`, or one element per thread where the tile does not fit.
template <class Policy, class T>
void launch_transpose(const matrix_view<const T>& in, const matrix_view<T>& out, cuda::stream_ref s) {
  using tile = transpose_tile<Policy, T>;
  if constexpr (tile::fits_static_shared) {
    const std::uint64_t tiles = ceil_div<std::uint64_t>(static_cast<std::uint64_t>(in.rows), tile::rows) *
                                ceil_div<std::uint64_t>(static_cast<std::uint64_t>(in.cols), tile::cols);
    launch_config c;
    c.grid = dim3(static_cast<std::uint32_t>(std::min<std::uint64_t>(tiles, max_grid_x)), 1, 1);
    c.block = dim3(tile::lanes, tile::rows_per_pass, 1);
    c.dependency = Policy::dependency;
    launch(s, c, transpose_kernel_for<Policy>(out), in, out);
  } else {
    launch_transpose_elements(in, out, true, s);
  }
}

/// dst = src for row-major (stored) views of the same shape, `N` elements per access:
/// block (x, y) copies chunk x of rows y, y + gridDim.y, ...; the first block of a row
/// also copies its `cols % N` tail. N > 1 needs both pointers and both pitches aligned
/// to the vector (checked by the host).
template <class Policy, int N, class T>
__global__ void __launch_bounds__(Policy::block_threads) copy_2d_kernel(matrix_view<const T> src, matrix_view<T> dst) {
  constexpr int per_thread = Policy::vectors_in_flight;
  constexpr std::int64_t chunk = std::int64_t{Policy::block_threads} * per_thread;
  allow_dependent_launch();
  wait_for_prior_grids();
  const std::int64_t vectors = src.cols / N;
  const std::int64_t body = vectors * N;
  for (std::int64_t r = blockIdx.y; r < src.rows; r += gridDim.y) {
    const T* s_row = src.data + r * src.ld;
    T* d_row = dst.data + r * dst.ld;
    for (std::int64_t base = blockIdx.x * chunk; base < vectors; base += std::int64_t{gridDim.x} * chunk) {
      aligned_vector<T, N> v[per_thread];
#pragma unroll
      for (int k = 0; k < per_thread; ++k) {
        const std::int64_t i = base + threadIdx.x + std::int64_t{k} * Policy::block_threads;
        if (i >= vectors) continue;
        if constexpr (N == 1) {
          v[k][0] = s_row[i];  // any element type and alignment
        } else {
          v[k] = load_vector<N>(s_row + i * N);
        }
      }
#pragma unroll
      for (int k = 0; k < per_thread; ++k) {
        const std::int64_t i = base + threadIdx.x + std::int64_t{k} * Policy::block_threads;
        if (i >= vectors) continue;
        if constexpr (N == 1) {
          d_row[i] = v[k][0];
        } else {
          store_vector(d_row + i * N, v[k]);
        }
      }
    }
    if (blockIdx.x == 0 && threadIdx.x < src.cols - body) d_row[body + threadIdx.x] = s_row[body + threadIdx.x];
  }
}

template <class Policy, int N, class T>
void enqueue_copy_2d(const matrix_view<const T>& src, const matrix_view<T>& dst, cuda::stream_ref s) {
  const std::uint64_t vectors = static_cast<std::uint64_t>(src.cols / N);
  const std::uint64_t chunk = std::uint64_t{Policy::block_threads} * Policy::vectors_in_flight;
  launch_config c;
  // At least one block per row: it also copies the row's tail.
  c.grid =
      dim3(std::max<std::uint32_t>(1, detail::capped_blocks(vectors, static_cast<std::uint32_t>(chunk), max_grid_x)),
           static_cast<std::uint32_t>(std::min<std::int64_t>(src.rows, max_grid_yz)), 1);
  c.block = dim3(Policy::block_threads, 1, 1);
  c.dependency = Policy::dependency;
  launch(s, c, copy_2d_kernel<Policy, N, T>, src, dst);
}

/// Enqueues the copy of the stored, non-empty matrix `src` into `dst`: one span when
/// both are contiguous, 16-byte vectors when pointers and pitches allow, else elements.
template <class Policy, class T>
void launch_copy_2d(const matrix_view<const T>& src, const matrix_view<T>& dst, cuda::stream_ref s) {
  static_assert(!has_vectors_per_thread<Policy>, "copy_2d_policy names its loads vectors_in_flight");
  if (src.rows == 1 || (src.ld == src.cols && dst.ld == dst.cols)) {
    const auto n = static_cast<std::size_t>(src.rows * src.cols);
    device_copy(cuda::std::span<T>(dst.data, n), cuda::std::span<const T>(src.data, n), s);
    return;
  }
  constexpr int n_vector = vector_elements_v<T, Policy::vector_bytes>;
  if constexpr (n_vector > 1) {
    constexpr std::size_t bytes = sizeof(T) * n_vector;
    if (is_aligned(src.data, bytes) && is_aligned(dst.data, bytes) && src.ld % n_vector == 0 &&
        dst.ld % n_vector == 0) {
      enqueue_copy_2d<Policy, n_vector>(src, dst, s);
      return;
    }
  }
  enqueue_copy_2d<Policy, 1>(src, dst, s);
}

template <class In, class T>
constexpr void static_check_matrix_types() {
  static_assert(std::is_same_v<std::remove_const_t<In>, T>, "the input and output element types must be the same");
  static_assert(!std::is_const_v<T>, "the output view must not be const");
  static_assert(std::is_trivially_copyable_v<T>, "the elements must be trivially copyable");
}

}  // namespace detail

/// `out = in^T`: out(j, i) = in(i, j) for every i < in.rows, j < in.cols.
///
/// - `in`: rows × cols, `out`: cols × rows, device-accessible, any element type that is
///   trivially copyable; each view has its own pitch (`ld`, in elements) and layout.
///   Their memory ranges must not overlap (no in-place transpose).
/// - Asynchronous: enqueues one kernel on `s` and returns. An empty matrix (0 rows or
///   0 cols) enqueues nothing; its pointers may then be null.
/// - Throws `std::invalid_argument` for a shape that is not the transposed one, a
///   negative extent, a pitch smaller than a stored row, a null pointer with elements,
///   overlapping memory ranges, or an extent past the address range; `cuda_error` if the
///   launch fails.
/// - Views of different layouts are already transposed in memory: the call copies the
///   stored elements with `copy_2d`'s kernel (and its default policy).
/// - Elements too large for a tile of the policy in 48 KiB of shared memory (47 bytes and
///   more under the default) are moved one per thread, as `naive::transpose` moves them.
/// - With the default policy, an output whose base or row pitch is not a multiple of 32
///   bytes (and whose rows are longer than a tile) runs the kernel that splits its rows
///   between blocks at 32-byte addresses; any other output, the kernel that splits them
///   at multiples of the tile (`transpose_policy::store_alignment_bytes`).
template <class Policy = transpose_policy, class In, class T>
void transpose(matrix_view<In> in, matrix_view<T> out, cuda::stream_ref s) {
  detail::static_check_matrix_types<In, T>();
  FOUNDRY_NVTX_FUNCTION_RANGE();
  const matrix_view<const T> in_c{in.data, in.rows, in.cols, in.ld, in.layout};
  if (!detail::check_matrix_pair(in_c, out, detail::matrix_pairing::transposed, "transpose")) return;
  detail::expect_matrix_memory(in_c, out, s, "transpose");
  if (in.layout == out.layout) {
    detail::launch_transpose<Policy>(detail::stored_form(in_c), detail::stored_form(out), s);
  } else {
    detail::launch_copy_2d<copy_2d_policy>(detail::stored_form(in_c), detail::stored_form(out), s);
  }
}

/// `dst = src` for two rows × cols matrices with their own pitches (`ld`, in elements):
/// cudaMemcpy2D as a kernel, on an explicit stream. Same contract as `transpose` (the
/// shapes must be equal instead of transposed). Views of different layouts are
/// transposes of each other in memory: the call runs `transpose`'s kernel (and its
/// default policy, with its choice of output-row split for the destination).
template <class Policy = copy_2d_policy, class In, class T>
void copy_2d(matrix_view<In> src, matrix_view<T> dst, cuda::stream_ref s) {
  detail::static_check_matrix_types<In, T>();
  FOUNDRY_NVTX_FUNCTION_RANGE();
  const matrix_view<const T> src_c{src.data, src.rows, src.cols, src.ld, src.layout};
  if (!detail::check_matrix_pair(src_c, dst, detail::matrix_pairing::same_shape, "copy_2d")) return;
  detail::expect_matrix_memory(src_c, dst, s, "copy_2d");
  if (src.layout == dst.layout) {
    detail::launch_copy_2d<Policy>(detail::stored_form(src_c), detail::stored_form(dst), s);
  } else {
    detail::launch_transpose<transpose_policy>(detail::stored_form(src_c), detail::stored_form(dst), s);
  }
}

}  // namespace foundry
