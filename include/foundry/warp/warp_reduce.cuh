#pragma once
/// \file
/// `warp_reduce<T>`: a reduction across the 32 lanes of a warp with register
/// shuffles (no shared memory), for use inside any kernel.
///
///     __shared__ foundry::warp_reduce<float>::temp_storage storage;  // empty: shuffles need none
///     float total = foundry::warp_reduce<float>(storage).sum(x);      // valid in lane 0
///
/// Preconditions: all 32 lanes of the warp call the member function together
/// (converged; the shuffles use the full mask). `op` is associative and
/// commutative; it is applied in a fixed order, so the same inputs give the same
/// bits on every run.

#include <foundry/warp/shuffle.cuh>

#include <cuda/std/functional>

#include <cstring>
#include <type_traits>

namespace foundry {

template <class T>
class warp_reduce {
  static_assert(std::is_trivially_copyable_v<T>,
                "warp_reduce moves values through shuffles: T must be trivially copyable");

 public:
  /// Shuffles need no shared memory; the type exists so that warp and block
  /// primitives are used the same way.
  struct temp_storage {};

  warp_reduce() noexcept = default;
  /// For symmetry with `block_reduce`: a warp needs no shared memory.
  __device__ explicit warp_reduce(temp_storage& /*unused*/) noexcept {}

  /// The reduction of `value` over the 32 lanes, returned in **lane 0**; the
  /// other lanes return partial results. Tree order: lane i combines with lane
  /// i + 16, then i + 8, ..., i + 1.
  template <class Op>
  __device__ T reduce(T value, Op op) const {
#pragma unroll
    for (unsigned offset = warp_threads / 2; offset > 0; offset /= 2) {
      value = op(value, detail::shuffle_down(value, offset));
    }
    return value;
  }

  /// The reduction over lanes `[0, valid_lanes)` (1 <= valid_lanes <= 32),
  /// returned in **lane 0**. All 32 lanes still call it; the values of lanes
  /// at or above `valid_lanes` are ignored, so no identity is needed.
  template <class Op>
  __device__ T reduce(T value, Op op, int valid_lanes) const {
    const int lane = detail::lane_id();
#pragma unroll
    for (unsigned offset = warp_threads / 2; offset > 0; offset /= 2) {
      const T other = detail::shuffle_down(value, offset);
      if (lane + static_cast<int>(offset) < valid_lanes) value = op(value, other);
    }
    return value;
  }

  /// The reduction over the 32 lanes, returned in **every lane** (butterfly
  /// exchange). With a commutative `op` all lanes hold the same bits.
  template <class Op>
  __device__ T all_reduce(T value, Op op) const {
#pragma unroll
    for (int mask = warp_threads / 2; mask > 0; mask /= 2) value = op(value, detail::shuffle_xor(value, mask));
    return value;
  }

  /// `reduce(value, cuda::std::plus<>{})`: the sum, in lane 0.
  __device__ T sum(T value) const { return reduce(value, cuda::std::plus<>{}); }
};

}  // namespace foundry
