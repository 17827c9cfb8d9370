#pragma once
/// \file
/// Device-side indexing: 64-bit global thread indices and a grid-stride range,
/// so that kernels cover any `n` (past 2^31 too) with any grid size.

#include <cstddef>
#include <cstdint>

namespace foundry {

/// This thread's index in a 1D grid, in 64 bits (blockIdx.x * blockDim.x overflows 32 bits past 2^32 threads).
__device__ inline std::uint64_t global_thread_index() noexcept {
  return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}

/// Threads in a 1D grid.
__device__ inline std::uint64_t grid_thread_count() noexcept { return std::uint64_t{gridDim.x} * blockDim.x; }

/// `[begin, end)` visited with stride `step`: `for (auto i : grid_stride_range(n)) ...`
class stride_range {
 public:
  class iterator {
   public:
    /// At index `i`, advancing by `step`.
    __device__ iterator(std::uint64_t i, std::uint64_t step) : i_(i), step_(step) {}
    /// The current index.
    __device__ std::uint64_t operator*() const noexcept { return i_; }
    /// Advances by the stride (it may step past the end: iterators are only compared against `end()`).
    __device__ iterator& operator++() noexcept {
      i_ += step_;
      return *this;
    }
    // Compared only against end(): "not yet past the end", so the stride may overshoot.
    /// Whether the index is still below `end`'s.
    __device__ bool operator!=(const iterator& end) const noexcept { return i_ < end.i_; }

   private:
    std::uint64_t i_;
    std::uint64_t step_;
  };

  /// The indices begin, begin + step, ... below end.
  __device__ stride_range(std::uint64_t begin, std::uint64_t end, std::uint64_t step)
      : begin_(begin), end_(end), step_(step) {}
  /// The first index (or `end()` when the range is empty).
  __device__ iterator begin() const noexcept { return {begin_ < end_ ? begin_ : end_, step_}; }
  /// One past the last index.
  __device__ iterator end() const noexcept { return {end_, step_}; }

 private:
  std::uint64_t begin_, end_, step_;
};

/// The indices in `[0, n)` that this thread handles in a 1D grid-stride loop.
__device__ inline stride_range grid_stride_range(std::uint64_t n) noexcept {
  return {global_thread_index(), n, grid_thread_count()};
}

/// How the blocks of a persistent grid share the tiles of an input.
enum class tile_assignment {
  /// Block b takes tiles b, b + grid, b + 2 grid, ...: the grid sweeps the input together.
  strided,
  /// Block b takes one contiguous run of tiles (CUB's "even share").
  contiguous,
};

/// The tiles a block of a persistent 1D grid walks, for `Assignment`:
///
///     const foundry::block_tiles<foundry::tile_assignment::strided> mine(full_tiles, blockIdx.x, gridDim.x);
///     for (std::uint64_t j = mine.begin; j < mine.end; j += mine.step) { ... }
///     if (partial_tile_exists && mine.takes_partial_tile) { ... }
///
/// `strided`: tiles b, b + blocks, ...; `contiguous`: one run of floor or
/// ceil(tiles / blocks) tiles per block (CUB's "even share"), the partial tile
/// going to the first block with the shorter run.
template <tile_assignment Assignment>
struct block_tiles {
  ///@{
  /// The block's full tiles: begin, begin + step, ... below end.
  std::uint64_t begin, end, step;
  ///@}
  /// Whether this block also handles the partial tile at the end, if there is one.
  bool takes_partial_tile;

  /// The share of block `block` of `blocks` in `full_tiles` tiles.
  __device__ block_tiles(std::uint64_t full_tiles, std::uint32_t block, std::uint32_t blocks) {
    if constexpr (Assignment == tile_assignment::strided) {
      begin = block;
      end = full_tiles;
      step = blocks;
      takes_partial_tile = block == full_tiles % blocks;
    } else {
      const std::uint64_t share = full_tiles / blocks;
      const std::uint64_t extra = full_tiles % blocks;
      begin = block * share + (block < extra ? block : extra);
      end = begin + share + (block < extra ? 1 : 0);
      step = 1;
      takes_partial_tile = block == extra;
    }
  }
};

}  // namespace foundry
