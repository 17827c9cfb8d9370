#pragma once
/// \file
/// Register shuffles for any trivially copyable type, one 32-bit word at a
/// time, and the lane arithmetic that the warp primitives share. All 32 lanes
/// call them together (converged; the full mask).

#include <cstring>

namespace foundry {

/// Lanes per warp on every NVIDIA architecture.
inline constexpr int warp_threads = 32;

namespace detail {

inline constexpr unsigned full_warp_mask = 0xffffffffu;

/// This thread's lane in its warp (`%laneid`), right for any block shape.
__device__ inline int lane_id() noexcept {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return static_cast<int>(lane);
}

/// `value` moved through `shuffle_word(unsigned)` one 32-bit word at a time.
template <class T, class ShuffleWord>
__device__ inline T shuffle_words(const T& value, ShuffleWord shuffle_word) noexcept {
  constexpr int words = static_cast<int>((sizeof(T) + 3) / 4);
  unsigned w[words] = {};
  std::memcpy(w, &value, sizeof(T));
#pragma unroll
  for (int k = 0; k < words; ++k) w[k] = shuffle_word(w[k]);
  T result = value;
  std::memcpy(&result, w, sizeof(T));
  return result;
}

/// `__shfl_down_sync`: the value of lane `lane + delta` (own value past lane 31).
template <class T>
__device__ inline T shuffle_down(const T& value, unsigned delta) noexcept {
  return shuffle_words(value, [delta](unsigned w) { return __shfl_down_sync(full_warp_mask, w, delta); });
}

/// `__shfl_up_sync`: the value of lane `lane - delta` (own value below lane 0).
template <class T>
__device__ inline T shuffle_up(const T& value, unsigned delta) noexcept {
  return shuffle_words(value, [delta](unsigned w) { return __shfl_up_sync(full_warp_mask, w, delta); });
}

/// `__shfl_sync`: the value of lane `source`.
template <class T>
__device__ inline T shuffle_index(const T& value, int source) noexcept {
  return shuffle_words(value, [source](unsigned w) { return __shfl_sync(full_warp_mask, w, source); });
}

/// `__shfl_xor_sync`: the value of lane `lane ^ lane_mask`.
template <class T>
__device__ inline T shuffle_xor(const T& value, int lane_mask) noexcept {
  return shuffle_words(value, [lane_mask](unsigned w) { return __shfl_xor_sync(full_warp_mask, w, lane_mask); });
}

}  // namespace detail

}  // namespace foundry
