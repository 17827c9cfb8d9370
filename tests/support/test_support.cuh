#pragma once
// Shared helpers for foundry's Catch2 tests: seeded random inputs, poison
// values for outputs, and host copies of device data.

#include <foundry/memory/device_buffer.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda/std/span>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace foundry::test {

/// Every test draws its random data from this seed, so a failure reproduces.
inline constexpr std::uint64_t seed = 20261202;

/// `n` uniform values in [lo, hi] from a generator seeded with `seed + stream_id`.
template <class T>
std::vector<T> random_vector(std::size_t n, T lo, T hi, std::uint64_t stream_id = 0) {
  std::mt19937_64 rng(seed + stream_id);
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> dist(lo, hi);
    for (auto& x : v) x = dist(rng);
  } else {
    using wide = std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>;
    std::uniform_int_distribution<wide> dist(static_cast<wide>(lo), static_cast<wide>(hi));
    for (auto& x : v) x = static_cast<T>(dist(rng));
  }
  return v;
}

/// A value no correct kernel writes: a signalling-looking NaN for floats, a
/// recognisable bit pattern for everything else. Outputs start filled with it.
template <class T>
T poison_value() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    T v;
    std::memset(&v, 0xA5, sizeof(T));
    return v;
  }
}

/// A device copy of `host`, enqueued on `s`.
template <class T>
foundry::device_buffer<T> to_device(const std::vector<T>& host, cuda::stream_ref s) {
  foundry::device_buffer<T> d(host.size(), s);
  d.copy_from_host(cuda::std::span<const T>(host.data(), host.size()), s);
  return d;
}

/// A device buffer of `n` elements filled with `poison_value<T>()`.
template <class T>
foundry::device_buffer<T> poisoned_device_buffer(std::size_t n, cuda::stream_ref s) {
  return foundry::device_buffer<T>(n, s, poison_value<T>());
}

/// Copies `d` to a new host vector and synchronises `s`.
template <class T>
std::vector<T> to_host(const foundry::device_buffer<T>& d, cuda::stream_ref s) {
  std::vector<T> host(d.size());
  d.copy_to_host(cuda::std::span<T>(host.data(), host.size()), s);
  foundry::synchronize(s);
  return host;
}

/// gamma(n-1) * sum|x| with gamma(k) = k*u / (1 - k*u), u = 2^-24: the worst-case
/// error of a float sum of n terms in any order (Higham, Accuracy and Stability of
/// Numerical Algorithms, 4.2), against a reference computed in double.
inline double float_sum_tolerance(std::size_t n, double sum_abs) {
  if (n <= 1) return 0.0;
  const double ku = static_cast<double>(n - 1) * std::ldexp(1.0, -24);
  return ku / (1.0 - ku) * sum_abs;
}

/// Host conversions between float and CUDA's 16-bit types, rounding to nearest.
template <class T>
T from_float(float x);
template <>
inline __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
inline float to_float(__half x) { return __half2float(x); }
inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

/// The odd sizes every algorithm is tested on.
inline const std::vector<std::size_t>& odd_sizes() {
  static const std::vector<std::size_t> sizes{0, 1, 31, 32, 33, 1023, 1025, (1u << 20) + 7};
  return sizes;
}

}  // namespace foundry::test
