#pragma once
// Shared helpers for foundry's Catch2 tests: seeded random inputs, poison
// values for outputs, host copies of device data, CPU references, and the
// stand-ins that argument checks pass.

#include <foundry/core/error.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda/std/span>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
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
template <>
inline float from_float<float>(float x) {
  return x;
}
inline float to_float(float x) { return x; }
inline float to_float(__half x) { return __half2float(x); }
inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

/// Every element of `f` converted by `from_float<T>`.
template <class T>
std::vector<T> from_floats(const std::vector<float>& f) {
  std::vector<T> v(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) v[i] = from_float<T>(f[i]);
  return v;
}

/// The value of a float, half or bfloat16 element, exactly, as a double.
inline double as_double(float x) { return x; }
inline double as_double(__half x) { return to_float(x); }
inline double as_double(__nv_bfloat16 x) { return to_float(x); }

/// The reference for a floating-point sum, both parts computed in double: the sum
/// itself and the sum of magnitudes that scales `float_sum_tolerance`.
struct sum_reference {
  double sum = 0;
  double sum_abs = 0;
};

template <class T>
sum_reference reference_sum(const std::vector<T>& x) {
  sum_reference r;
  for (const T& v : x) {
    r.sum += as_double(v);
    r.sum_abs += std::fabs(as_double(v));
  }
  return r;
}

/// The host twin of `foundry::tabulate`, for CPU references: `{f(0), f(1), ..., f(n-1)}`.
template <class F>
auto host_tabulate(std::size_t n, F f) {
  std::vector<std::decay_t<decltype(f(std::size_t{0}))>> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = f(i);
  return v;
}

/// A 12-byte element: no vector width divides it, so kernels take their scalar
/// paths (element-wise loads, shuffles of three words).
struct vec3 {
  float x, y, z;
};

/// Groups the values of `v` by three, in order, into `v.size() / 3` vec3s.
template <class T>
std::vector<vec3> to_vec3s(const std::vector<T>& v) {
  return host_tabulate(v.size() / 3, [&](std::size_t i) {
    return vec3{static_cast<float>(v[3 * i]), static_cast<float>(v[3 * i + 1]), static_cast<float>(v[3 * i + 2])};
  });
}

/// The odd sizes every algorithm is tested on.
inline const std::vector<std::size_t>& odd_sizes() {
  static const std::vector<std::size_t> sizes{0, 1, 31, 32, 33, 1023, 1025, (1u << 20) + 7};
  return sizes;
}

/// A stream handle for argument checks that throw before anything is enqueued: never used.
inline cuda::stream_ref unused_stream() { return cuda::stream_ref{cudaStreamPerThread}; }

/// A non-null device address that is never dereferenced, for argument checks.
template <class T>
T* fake_pointer() {
  return reinterpret_cast<T*>(std::uintptr_t{1} << 20);
}

/// Spins each of its threads for at least `cycles` SM clock cycles (clock64).
/// A template only so that this header can define it in every test: nvcc ignores
/// `inline` on a kernel.
template <class = void>
__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

/// Enqueues on `s` one warp that lasts at least `cycles` SM clock cycles: a kernel
/// of known minimum length.
inline void enqueue_spin_cycles(cuda::stream_ref s, long long cycles) {
  foundry::launch(s, foundry::make_launch_config_1d(32, 32), spin_kernel<>, cycles);
}

/// An empty kernel whose presence in a test binary's code for the current device
/// `missing_device_code_reason` asks the runtime about.
template <int = 0>
__global__ void device_code_probe() {}

/// Why this test binary holds no code that the current device runs (neither its
/// machine code nor PTX it can compile), or "" if it holds some. A binary that CMake
/// builds for fewer architectures than the rest (tests/CMakeLists.txt) skips its [gpu]
/// cases with this reason on the others. Each test binary has one CUDA translation
/// unit, so the probe's code is that unit's. Throws `cuda_error` for any other failure.
inline std::string missing_device_code_reason() {
  cudaFuncAttributes attributes{};
  const cudaError_t status = cudaFuncGetAttributes(&attributes, device_code_probe<>);
  if (status == cudaErrorInvalidDeviceFunction || status == cudaErrorNoKernelImageForDevice) {
    (void)cudaGetLastError();  // the probe's own error, which it has now reported
    return "this binary has no code for the device (" + std::string(cudaGetErrorName(status)) +
           "): tests/CMakeLists.txt builds it for sm_90 alone";
  }
  FOUNDRY_CUDA_TRY(status);
  return {};
}

}  // namespace foundry::test

/// Returns from a test case, reported as skipped by ctest (SKIP_REGULAR_EXPRESSION), when
/// `reason_expression` (a std::string: why the case cannot run here) is not empty.
#define FOUNDRY_SKIP_FOR_REASON(reason_expression) \
  do { \
    const std::string foundry_skip_reason = (reason_expression); \
    if (!foundry_skip_reason.empty()) { \
      WARN("SKIPPED: " << foundry_skip_reason); \
      return; \
    } \
  } while (false)

/// Returns from a [gpu] test case, reported as skipped, when the binary has no code for the
/// device (`missing_device_code_reason`).
#define FOUNDRY_SKIP_UNLESS_BUILT_FOR_DEVICE() FOUNDRY_SKIP_FOR_REASON(foundry::test::missing_device_code_reason())
