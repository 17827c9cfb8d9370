#pragma once
/// \file
/// `warp_scan<T>`: prefix sums (any associative operator, order kept) across the
/// 32 lanes of a warp with register shuffles, for use inside any kernel.
///
///     const foundry::warp_scan<int> scan;
///     int total;
///     int inclusive = scan.inclusive_scan(x, cuda::std::plus<>{}, total);   // every lane gets total
///     int exclusive = scan.exclusive_scan(x, 0, cuda::std::plus<>{});       // lane 0 gets 0
///
/// Preconditions: all 32 lanes call the member function together (converged;
/// the full mask). `op` need not be commutative: lane i's result is
/// `x_0 ⊕ x_1 ⊕ ... ⊕ x_i` in that order (Kogge-Stone, log2(32) = 5 steps).

#include <foundry/core/operators.cuh>
#include <foundry/warp/shuffle.cuh>

#include <cuda/std/functional>

#include <type_traits>

namespace foundry {

template <class T>
class warp_scan {
  static_assert(std::is_trivially_copyable_v<T>,
                "warp_scan moves values through shuffles: T must be trivially copyable");

 public:
  /// Shuffles need no shared memory; the type exists so that warp and block
  /// primitives are used the same way.
  struct temp_storage {};

  warp_scan() noexcept = default;
  /// For symmetry with `block_scan`: a warp needs no shared memory.
  __device__ explicit warp_scan(temp_storage& /*unused*/) noexcept {}

  /// Lane i gets `x_0 ⊕ ... ⊕ x_i`.
  template <class Op>
  __device__ T inclusive_scan(T value, Op op) const {
    const int lane = detail::lane_id();
#pragma unroll
    for (int offset = 1; offset < warp_threads; offset *= 2) {
      const T lower = detail::shuffle_up(value, static_cast<unsigned>(offset));
      if (lane >= offset) value = op(lower, value);
    }
    return value;
  }

  /// As above; every lane also gets the warp's total in `total`.
  template <class Op>
  __device__ T inclusive_scan(T value, Op op, T& total) const {
    const T inclusive = inclusive_scan(value, op);
    total = detail::shuffle_index(inclusive, warp_threads - 1);
    return inclusive;
  }

  /// Lane 0 gets `init`, lane i > 0 `init ⊕ x_0 ⊕ ... ⊕ x_{i-1}`.
  template <class Op>
  __device__ T exclusive_scan(T value, T init, Op op) const {
    const T inclusive = inclusive_scan(value, op);
    const T lower = detail::shuffle_up(inclusive, 1u);
    return detail::lane_id() == 0 ? init : op(init, lower);
  }

  /// As above; every lane also gets the warp's total `x_0 ⊕ ... ⊕ x_31` (without `init`).
  template <class Op>
  __device__ T exclusive_scan(T value, T init, Op op, T& total) const {
    const T inclusive = inclusive_scan(value, op, total);
    const T lower = detail::shuffle_up(inclusive, 1u);
    return detail::lane_id() == 0 ? init : op(init, lower);
  }

  /// `inclusive_scan(value, cuda::std::plus<>{})`.
  __device__ T inclusive_sum(T value) const { return inclusive_scan(value, cuda::std::plus<>{}); }
  /// `exclusive_scan(value, T{0}, cuda::std::plus<>{})`.
  __device__ T exclusive_sum(T value) const { return exclusive_scan(value, T{0}, cuda::std::plus<>{}); }
};

}  // namespace foundry
