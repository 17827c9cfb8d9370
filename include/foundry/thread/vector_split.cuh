#pragma once
/// \file
/// The one head/tail scheme of foundry's memory-bound algorithms. An array of
/// `n` elements that does not start on a vector boundary is cut into a scalar
/// **head** (fewer than `N` elements, up to the first boundary), a **body** of
/// whole `N`-element vectors that move with one access each, and a scalar
/// **tail** (fewer than `N` elements). Several arrays read or written together
/// share one split when they start at the same element offset modulo `N`
/// (`same_vector_phase`); otherwise the caller uses `N == 1` (all body, no
/// head or tail: scalar accesses, correct for any address).
///
///     const auto split = foundry::split_for_vectors<4>(x, n);      // host or device
///     // body: vectors [0, split.vectors) of split.body(x), each load_vector<4>
///     foundry::for_each_head_and_tail(split, [&](std::uint64_t i) { use(x[i]); });
///
/// The head and tail together hold fewer than 2N elements; the first N
/// threads of the grid take them, one element each from the head and the tail.

#include <foundry/launch/grid_stride.cuh>

#include <cstddef>
#include <cstdint>

namespace foundry {

/// `[0, n)` cut into `head` scalars, `vectors` whole vectors of `N` elements,
/// and the scalars from `tail_begin()` to `n`.
template <int N>
struct vector_split {
  static_assert(N >= 1, "a vector holds at least one element");
  /// Elements in all.
  std::uint64_t n = 0;
  /// Scalar elements before the first vector boundary.
  std::uint64_t head = 0;
  /// Whole vectors after the head.
  std::uint64_t vectors = 0;

  /// The first element of the tail (== n when there is none).
  [[nodiscard]] __host__ __device__ constexpr std::uint64_t tail_begin() const noexcept { return head + vectors * N; }
  /// The first element of the body in the array that starts at `p`.
  template <class T>
  [[nodiscard]] __host__ __device__ constexpr T* body(T* p) const noexcept {
    return p + head;
  }
};

/// The element offset of `p` modulo `N` (0 when `p` lies on an `N`-element vector boundary).
template <int N, class T>
[[nodiscard]] __host__ __device__ inline std::uint64_t vector_phase(const T* p) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) / sizeof(T)) % N;
}

/// True when every pointer is aligned to its own element size and all start at
/// the same element offset modulo `N`: then one `vector_split` serves them all
/// and each body starts on a vector boundary. With `N == 1`, always true.
template <int N, class T0, class... T>
[[nodiscard]] __host__ __device__ inline bool same_vector_phase(const T0* p0, const T*... p) noexcept {
  if constexpr (N == 1) {
    return true;
  } else {
    const auto natural = [](auto* q) { return reinterpret_cast<std::uintptr_t>(q) % sizeof(*q) == 0; };
    const std::uint64_t phase = vector_phase<N>(p0);
    return natural(p0) && ((natural(p) && vector_phase<N>(p) == phase) && ...);
  }
}

/// The split of `[0, n)` for an array that starts at `p`.
template <int N, class T>
[[nodiscard]] __host__ __device__ inline vector_split<N> split_for_vectors(const T* p, std::uint64_t n) noexcept {
  vector_split<N> s;
  s.n = n;
  const std::uint64_t to_boundary = (N - vector_phase<N>(p)) % N;
  s.head = to_boundary < n ? to_boundary : n;
  s.vectors = (n - s.head) / N;
  return s;
}

/// Calls `f(i)` for every head and tail index `i` that belongs to this thread:
/// global thread `t < N` takes head element `t` and tail element `tail_begin() + t`.
/// Nothing for `N == 1`. The grid needs at least `N` threads (any grid of a warp does).
template <int N, class F>
__device__ inline void for_each_head_and_tail(const vector_split<N>& s, F&& f) {
  if constexpr (N > 1) {
    const std::uint64_t t = global_thread_index();
    if (t < s.head) f(t);
    if (s.tail_begin() + t < s.n) f(s.tail_begin() + t);
  }
}

}  // namespace foundry
