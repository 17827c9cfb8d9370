#pragma once
/// \file
/// Index arithmetic shared by host and device code. Everything here is
/// `constexpr` and tested on the host.

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace foundry {

/// ceil(n / d) for unsigned or non-negative n and positive d, without the
/// overflow of the textbook `(n + d - 1) / d` when n is near the type's maximum.
template <class T>
__host__ __device__ constexpr T ceil_div(T n, T d) noexcept {
  static_assert(std::is_integral_v<T>, "ceil_div needs integers");
  return n / d + (n % d != 0 ? 1 : 0);
}

/// Rounds n up to the next multiple of m (m > 0).
template <class T>
__host__ __device__ constexpr T round_up(T n, T m) noexcept {
  return ceil_div(n, m) * m;
}

/// True when `p` is aligned to `alignment` bytes (a power of two).
__host__ __device__ inline bool is_aligned(const void* p, std::size_t alignment) noexcept {
  return (reinterpret_cast<std::uintptr_t>(p) & (alignment - 1)) == 0;
}

}  // namespace foundry
