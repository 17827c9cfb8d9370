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
    __device__ iterator(std::uint64_t i, std::uint64_t step) : i_(i), step_(step) {}
    __device__ std::uint64_t operator*() const noexcept { return i_; }
    __device__ iterator& operator++() noexcept {
      i_ += step_;
      return *this;
    }
    // Compared only against end(): "not yet past the end", so the stride may overshoot.
    __device__ bool operator!=(const iterator& end) const noexcept { return i_ < end.i_; }

   private:
    std::uint64_t i_;
    std::uint64_t step_;
  };

  __device__ stride_range(std::uint64_t begin, std::uint64_t end, std::uint64_t step)
      : begin_(begin), end_(end), step_(step) {}
  __device__ iterator begin() const noexcept { return {begin_ < end_ ? begin_ : end_, step_}; }
  __device__ iterator end() const noexcept { return {end_, step_}; }

 private:
  std::uint64_t begin_, end_, step_;
};

/// The indices in `[0, n)` that this thread handles in a 1D grid-stride loop.
__device__ inline stride_range grid_stride_range(std::uint64_t n) noexcept {
  return {global_thread_index(), n, grid_thread_count()};
}

}  // namespace foundry
