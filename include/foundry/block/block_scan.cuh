#pragma once
/// \file
/// `block_scan<T, BlockThreads>`: prefix sums (any associative operator, order
/// kept) across all threads of a block, for use inside any kernel. Each warp
/// scans with shuffles, lane 31 of each warp writes the warp's total to shared
/// memory, warp 0 scans those totals, and every thread adds its warp's prefix.
///
///     using scan_t = foundry::block_scan<int, 256>;
///     __shared__ scan_t::temp_storage storage;
///     int total;
///     int exclusive = scan_t(storage).exclusive_scan(x, 0, cuda::std::plus<>{}, total);
///
/// Preconditions: the block has exactly `BlockThreads` threads in x (a 1D block;
/// thread order is `threadIdx.x`), and all of them call the member function (it
/// contains two `__syncthreads()`). To reuse the same `temp_storage`, put a
/// `__syncthreads()` between two calls.

#include <foundry/core/operators.cuh>
#include <foundry/warp/warp_scan.cuh>

#include <cuda/std/functional>

#include <type_traits>

namespace foundry {

template <class T, int BlockThreads>
class block_scan {
  static_assert(BlockThreads > 0 && BlockThreads % warp_threads == 0 && BlockThreads <= 1024,
                "block_scan needs a whole number of warps, at most 1024 threads");
  static_assert(std::is_trivially_copyable_v<T>, "block_scan needs a trivially copyable T");
  static constexpr int warps = BlockThreads / warp_threads;

 public:
  /// Shared memory for one scan: one `T` per warp, raw bytes so that a `T` with
  /// constructors can still live in `__shared__`.
  struct temp_storage {
    /// One total per warp (raw bytes, so that T needs no default constructor).
    alignas(T) unsigned char warp_totals[warps * sizeof(T)];
  };

  /// Binds the primitive to `storage`, which every thread of the block must pass (a `__shared__` object).
  __device__ explicit block_scan(temp_storage& storage) noexcept : storage_(storage) {}

  /// Thread i gets `x_0 ⊕ ... ⊕ x_i`; every thread gets the block's total in `total`.
  template <class Op>
  __device__ T inclusive_scan(T value, Op op, T& total) {
    const T inclusive = warp_scan<T>().inclusive_scan(value, op);
    const detail::partial_result<T> prefix = warp_prefix(inclusive, op, total);
    return prefix.valid ? op(prefix.value, inclusive) : inclusive;
  }

  /// Thread 0 gets `init`, thread i > 0 `init ⊕ x_0 ⊕ ... ⊕ x_{i-1}`; every thread
  /// gets the block's total `x_0 ⊕ ... ⊕ x_{n-1}` (without `init`) in `total`.
  template <class Op>
  __device__ T exclusive_scan(T value, T init, Op op, T& total) {
    const T inclusive = warp_scan<T>().inclusive_scan(value, op);
    const detail::partial_result<T> prefix = warp_prefix(inclusive, op, total);
    const T lower = detail::shuffle_up(inclusive, 1u);
    // The exclusive value within the warp, then the warps before it, then init.
    detail::partial_result<T> before = prefix;
    if (detail::lane_id() != 0) before.fold(lower, op);
    return before.valid ? op(init, before.value) : init;
  }

  /// Inclusive scan of the threads' values in rank order: thread r gets value_0 op ... op value_r. Every thread of the block must call it (it synchronises the block).
  template <class Op>
  __device__ T inclusive_scan(T value, Op op) {
    T total;
    return inclusive_scan(value, op, total);
  }
  /// Exclusive scan: thread r gets init op value_0 op ... op value_{r-1} (thread 0 gets `init`). Every thread must call it.
  template <class Op>
  __device__ T exclusive_scan(T value, T init, Op op) {
    T total;
    return exclusive_scan(value, init, op, total);
  }
  /// `inclusive_scan` with `+`.
  __device__ T inclusive_sum(T value) { return inclusive_scan(value, cuda::std::plus<>{}); }
  /// `exclusive_scan` with `+` and 0.
  __device__ T exclusive_sum(T value) { return exclusive_scan(value, T{0}, cuda::std::plus<>{}); }

 private:
  /// The total of the warps before this thread's (none for warp 0), and the block's total.
  template <class Op>
  __device__ detail::partial_result<T> warp_prefix(const T& warp_inclusive, Op& op, T& total) {
    const int warp = static_cast<int>(threadIdx.x) / warp_threads;
    const int lane = detail::lane_id();
    T* totals = reinterpret_cast<T*>(storage_.warp_totals);
    if (lane == warp_threads - 1) totals[warp] = warp_inclusive;
    __syncthreads();
    detail::partial_result<T> prefix{totals[0], false};
    for (int w = 0; w < warp; ++w) prefix.fold(totals[w], op);
    total = totals[0];
    for (int w = 1; w < warps; ++w) total = op(total, totals[w]);
    __syncthreads();  // totals read by every thread before the storage is reused
    return prefix;
  }

  temp_storage& storage_;
};

}  // namespace foundry
