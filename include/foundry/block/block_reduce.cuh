#pragma once
/// \file
/// `block_reduce<T, BlockThreads>`: a reduction across all threads of a block,
/// for use inside any kernel. Each warp reduces with shuffles, lane 0 of each
/// warp writes one value to shared memory, and warp 0 reduces those.
///
///     using reduce_t = foundry::block_reduce<float, 256>;
///     __shared__ reduce_t::temp_storage storage;
///     float total = reduce_t(storage).sum(x);   // valid in thread 0 only
///     if (threadIdx.x == 0) out[blockIdx.x] = total;
///
/// Preconditions: the block has exactly `BlockThreads` threads (any shape; the
/// thread of linear rank 0 — `threadIdx` (0, 0, 0) — gets the result) and all of
/// them call the member function (it contains one `__syncthreads()`).
/// `op` is associative and commutative; the order is fixed, so results are
/// bitwise reproducible. To reuse the same `temp_storage` for a second
/// reduction, put a `__syncthreads()` between the two.

#include <foundry/warp/warp_reduce.cuh>

#include <cuda/std/functional>

#include <type_traits>

namespace foundry {

template <class T, int BlockThreads>
class block_reduce {
  static_assert(BlockThreads > 0 && BlockThreads % warp_threads == 0 && BlockThreads <= 1024,
                "block_reduce needs a whole number of warps, at most 1024 threads");
  static_assert(std::is_trivially_copyable_v<T>, "block_reduce needs a trivially copyable T");
  static constexpr int warps = BlockThreads / warp_threads;

 public:
  /// Shared memory for one reduction: one `T` per warp. Raw bytes, so that a
  /// `T` with constructors can still live in `__shared__`.
  struct temp_storage {
    /// One partial result per warp (raw bytes, so that T needs no default constructor).
    alignas(T) unsigned char warp_results[warps * sizeof(T)];
  };

  /// Binds the primitive to `storage`, which every thread of the block must pass (a `__shared__` object).
  __device__ explicit block_reduce(temp_storage& storage) noexcept : storage_(storage) {}

  /// The reduction of every thread's `value`, returned in the thread of linear
  /// rank 0; other threads return unspecified values.
  template <class Op>
  __device__ T reduce(T value, Op op) {
    const warp_reduce<T> warp;
    const T warp_total = warp.reduce(value, op);
    if constexpr (warps == 1) {
      return warp_total;
    } else {
      const unsigned rank = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
      const unsigned warp_index = rank / warp_threads;
      const unsigned lane = rank % warp_threads;
      T* results = reinterpret_cast<T*>(storage_.warp_results);
      if (lane == 0) results[warp_index] = warp_total;
      __syncthreads();
      T block_total = warp_total;
      if (warp_index == 0) {
        // Lanes at or above `warps` pass their own value; the valid-lane reduce ignores it.
        block_total = warp.reduce(lane < warps ? results[lane] : warp_total, op, warps);
      }
      return block_total;
    }
  }

  /// `reduce(value, cuda::std::plus<>{})`: the sum, in the thread of rank 0.
  __device__ T sum(T value) { return reduce(value, cuda::std::plus<>{}); }

 private:
  temp_storage& storage_;
};

}  // namespace foundry
