#pragma once
/// \file
/// Per-thread vector loads and stores: `N` elements of `T` moved in one memory
/// access of `N * sizeof(T)` bytes (up to 16, one `LDG.128`/`STG.128`).
/// A warp of 16-byte accesses touches 512 contiguous bytes: four full 128-byte
/// lines per instruction, and a quarter of the instructions of scalar code.
///
///     auto v = foundry::load_vector<4>(p);      // p aligned to 16 bytes
///     for (int k = 0; k < 4; ++k) v[k] *= 2.0f;
///     foundry::store_vector(q, v);              // q aligned to 16 bytes

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace foundry {

/// Widest access (in bytes) that one thread issues: 16 bytes on every
/// architecture foundry supports (sm_70 and later).
inline constexpr int max_vector_bytes = 16;

namespace detail {

constexpr bool is_power_of_two(std::size_t x) noexcept { return x != 0 && (x & (x - 1)) == 0; }

/// The raw integer type that moves `Bytes` bytes in one access.
template <int Bytes>
struct raw_vector;
template <>
struct raw_vector<1> {
  using type = unsigned char;
};
template <>
struct raw_vector<2> {
  using type = unsigned short;
};
template <>
struct raw_vector<4> {
  using type = unsigned int;
};
template <>
struct raw_vector<8> {
  using type = uint2;
};
template <>
struct raw_vector<16> {
  using type = uint4;
};

}  // namespace detail

/// True when `N` elements of `T` can move in one access: `T` trivially
/// copyable and `N * sizeof(T)` a power of two of at most 16 bytes.
template <class T, int N>
inline constexpr bool is_vectorizable_v = std::is_trivially_copyable_v<T>&& N >= 1 &&
                                          detail::is_power_of_two(sizeof(T) * N) &&
                                          sizeof(T) * N <= static_cast<std::size_t>(max_vector_bytes);

/// Elements of `T` per access of `Bytes` bytes (`Bytes` a power of two), or 1
/// when `T` does not divide it (then code falls back to scalar accesses).
template <class T, int Bytes = max_vector_bytes>
inline constexpr int vector_elements_v = (detail::is_power_of_two(sizeof(T)) &&
                                          sizeof(T) <= static_cast<std::size_t>(Bytes))
                                             ? static_cast<int>(Bytes / sizeof(T))
                                             : 1;

namespace detail {
/// True when `N` elements of `T` move as one raw integer access. A single element
/// does only when `T` is aligned to its size: an 8-byte struct of two floats
/// (4-byte aligned) at an address 4 mod 8 would fault as a 64-bit access, so it
/// moves with `T`'s own accesses. Several elements always move raw: the callers
/// align them to the whole vector (`vector_split`).
template <class T, int N>
inline constexpr bool moves_as_raw_v = is_vectorizable_v<T, N> && (N > 1 || alignof(T) >= sizeof(T));
}  // namespace detail

/// Elements per vector for a kernel that moves every type in `T...` together:
/// the widest type gets `Bytes` per access, the others the same element count
/// (fewer bytes). 1 (scalar) when some size is not a power of two or exceeds `Bytes`.
template <int Bytes, class... T>
inline constexpr int common_vector_elements_v = ((detail::is_power_of_two(sizeof(T)) && ...) &&
                                                 ((sizeof(T) <= static_cast<std::size_t>(Bytes)) && ...))
                                                    ? static_cast<int>(static_cast<std::size_t>(Bytes) /
                                                                       std::max({sizeof(T)...}))
                                                    : 1;

/// `N` elements of `T` in registers, aligned so that the whole array moves in one
/// access. `N == 1` accepts any trivially copyable `T` (the scalar fallback of
/// kernels written for vectors), with `T`'s own alignment.
template <class T, int N>
struct alignas(N == 1 ? alignof(T) : sizeof(T) * N) aligned_vector {
  static_assert(N == 1 || is_vectorizable_v<T, N>,
                "aligned_vector needs N * sizeof(T) to be a power of two <= 16 (or N == 1)");
  /// The elements.
  T items[N];

  /// Element k.
  __host__ __device__ constexpr T& operator[](int k) noexcept { return items[k]; }
  /// Element k.
  __host__ __device__ constexpr const T& operator[](int k) const noexcept { return items[k]; }
  /// Elements per vector.
  static constexpr int size() noexcept { return N; }
};

/// Loads `N` elements from `p` through the read-only (non-coherent) data path
/// (`ld.global.nc`, as `__ldg`). Precondition: `p` is global memory aligned to
/// `N * sizeof(T)` bytes, and nothing writes those bytes while the kernel runs
/// (an in-place element-wise kernel, where each thread reads its own elements
/// before writing them, is fine).
/// With `N == 1` and a `T` whose size is not a power of two, a plain load.
template <int N, class T>
__device__ inline aligned_vector<T, N> load_vector(const T* p) noexcept {
  if constexpr (detail::moves_as_raw_v<T, N>) {
    using raw = typename detail::raw_vector<static_cast<int>(sizeof(T)) * N>::type;
    const raw bits = __ldg(reinterpret_cast<const raw*>(p));
    aligned_vector<T, N> v;
    std::memcpy(&v, &bits, sizeof(v));  // a register move: no memory traffic
    return v;
  } else {
    static_assert(N == 1, "load_vector needs N * sizeof(T) to be a power of two <= 16 (or N == 1)");
    return aligned_vector<T, 1>{{*p}};  // any T, at T's own alignment
  }
}

/// Stores `N` elements to `p` in one access. Precondition: `p` is aligned to
/// `N * sizeof(T)` bytes.
template <int N, class T>
__device__ inline void store_vector(T* p, const aligned_vector<T, N>& v) noexcept {
  if constexpr (detail::moves_as_raw_v<T, N>) {
    using raw = typename detail::raw_vector<static_cast<int>(sizeof(T)) * N>::type;
    raw bits;
    std::memcpy(&bits, &v, sizeof(v));
    *reinterpret_cast<raw*>(p) = bits;
  } else {
    static_assert(N == 1, "store_vector needs N * sizeof(T) to be a power of two <= 16 (or N == 1)");
    *p = v[0];
  }
}

}  // namespace foundry
