#pragma once
/// \file
/// Seeded random data generated on the device, so that a 1 GiB input costs
/// milliseconds, not seconds of host work and a host-to-device copy. Benchmarks never
/// time zeros: a GPU draws less power on them and some units take shortcuts.

#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace foundry::bench {

/// The seed benchmarks use unless they have a reason not to (the tests' seed).
inline constexpr std::uint64_t default_seed = 20261202;

namespace detail {

/// splitmix64's finaliser: a bijective 64-bit mix, so (seed, index) pairs never collide.
__host__ __device__ constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
__global__ void fill_uniform_kernel(T* out, std::size_t n, double lo, double hi, std::uint64_t seed) {
  const std::uint64_t key = mix64(seed);
  for (auto i : grid_stride_range(n)) {
    const std::uint64_t h = mix64(key ^ i);
    if constexpr (std::is_integral_v<T>) {
      const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
      out[i] = static_cast<T>(lo + static_cast<double>(static_cast<std::int64_t>(u * (hi - lo + 1.0))));
    } else if constexpr (std::is_same_v<T, double>) {
      out[i] = lo + static_cast<double>(h >> 11) * 0x1.0p-53 * (hi - lo);
    } else {
      // float, half, bfloat16 and other types built from a float.
      const float u = static_cast<float>(h >> 40) * 0x1.0p-24f;  // [0, 1)
      out[i] = T(static_cast<float>(lo) + u * static_cast<float>(hi - lo));
    }
  }
}

}  // namespace detail

/// Fills the device span `out` with values uniform in [lo, hi] (integers: lo..hi
/// inclusive) drawn from a hash of (seed, index): the same seed gives the same data on
/// every device and grid. `T` is an arithmetic type or one constructible from `float`
/// (`__half`, `__nv_bfloat16`). Asynchronous on `s`; throws `cuda_error` if the launch fails.
template <class T, std::size_t Extent>
void fill_uniform(cuda::std::span<T, Extent> out, double lo, double hi, std::uint64_t seed, cuda::stream_ref s) {
  if (out.empty()) return;
  // Eight resident blocks per SM saturate the stores; the hash is cheap.
  launch(s, make_launch_config_1d(out.size(), 256, resident_grid_blocks(8)), detail::fill_uniform_kernel<T>, out.data(),
         out.size(), lo, hi, seed);
}

}  // namespace foundry::bench
