#pragma once
/// \file
/// Device-wide reduction: `out[0] = identity ⊕ in[0] ⊕ in[1] ⊕ ... ⊕ in[n-1]`
/// for any associative and commutative `⊕` with its identity, on an explicit
/// stream, with the result left in device memory.
///
///     foundry::reduce_sum(x.span(), total.span(), stream);                 // cuda::std::plus
///     foundry::reduce(x.span(), out.span(), 1.0, my_product{}, stream);    // any functor
///     std::size_t bytes = foundry::reduce_scratch_bytes<float>(n);         // caller-owned scratch
///     foundry::reduce(x.span(), out.span(), 0.0f, cuda::std::plus<>{}, scratch.span(), stream);
///
/// Types: the input `T` is converted to the accumulator `Acc`, the output's
/// element type (`__half` and `__nv_bfloat16` inputs go through `float`).
/// A sum of `uint8_t` into `uint64_t` does not wrap; into `uint8_t` it would.
///
/// Deterministic: no atomics, a partial count fixed by `n` and the device (its
/// SM count), a fixed order inside each thread, warp and block. The same input
/// at the same alignment (mod 16 bytes) on the same device gives the same bits
/// on every run.
///
/// Design (two passes, three layers: host call -> `detail::launch_reduce` -> kernel):
///  1. `reduce_kernel` over the input: each thread accumulates 16-byte
///     read-only vector loads, `vectors_in_flight` of them issued before any is
///     used, in a grid-stride loop; `block_reduce` (warp shuffles + one shared
///     value per warp) leaves one partial per block in scratch. The grid is
///     `blocks_per_sm` × SMs, so the partial count is small and fixed.
///  2. The same kernel, one block, over the partials, writes `out[0]`.
///  A small `n` that fits one block's first step needs only pass 1 and no scratch.
///
/// Lead on the H200 for this design (sum of 2^28 floats): 4.44–4.46 TB/s read,
/// 1.00–1.009× cub::DeviceReduce::Sum. foundry's own figure, measured on the H200,
/// 2026-12-02: 4.42 TB/s read (row reduce_sum_f32/foundry/268435456), 0.997× CUB's
/// 4.43 TB/s (row reduce_sum_f32/cub/268435456).

#include <foundry/block/block_reduce.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/thread/vector.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/functional>
#include <cuda/std/limits>
#include <cuda/std/span>
#include <cuda/std/type_traits>
#include <cuda/stream_ref>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace foundry {

/// Launch policy of `reduce`. Override by deriving and passing it as the first
/// template argument: `foundry::reduce<my_policy>(...)`.
struct reduce_policy {
  /// Threads per block. Only 256 was measured on the H200 (2026-12-02: every
  /// reduce_sum_f32/foundry* row uses 256; the candidates vary blocks/SM and vectors);
  /// other block sizes were not measured yet.
  static constexpr int block_threads = 256;
  /// Vectors each thread loads before it accumulates any: 4 × 16 bytes in flight.
  /// Measured on the H200, float sum of 2^28 (bench_reduce, medians of 3 × 100):
  /// 4 blocks/SM × 4 vectors read 4.423 TB/s against CUB's 4.391 in the same run
  /// (1.007×; an earlier run 4.422 vs 4.439, 0.996×: the two are level within noise);
  /// 4 × 8 4.426, 8 × 4 4.407, 8 × 2 4.408, 2 × 8 4.276.
  static constexpr int vectors_in_flight = 4;
  /// Bytes per load. 16 = one LDG.128.
  static constexpr int vector_bytes = 16;
  /// Blocks (= partials) per SM in pass 1: a single wave at 1024 threads/SM
  /// (figures above).
  static constexpr int blocks_per_sm = 4;
};

/// The accumulator a reduction of `T` uses by default: `float` for `__half` and
/// `__nv_bfloat16` (their 8- and 11-bit mantissas lose a sum's low bits fast),
/// `T` otherwise.
template <class T>
struct reduce_accumulator {
  using type = T;
};
template <>
struct reduce_accumulator<__half> {
  using type = float;
};
template <>
struct reduce_accumulator<__nv_bfloat16> {
  using type = float;
};
template <class T>
using reduce_accumulator_t = typename reduce_accumulator<std::remove_const_t<T>>::type;

namespace detail {
/// True for a NaN of a type that has one; false for every other type and value.
template <class T>
__host__ __device__ constexpr bool is_nan(const T& x) noexcept {
  if constexpr (cuda::std::numeric_limits<T>::has_quiet_NaN) {
    return !(x == x);
  } else {
    return false;
  }
}
}  // namespace detail

/// `min(a, b)` that returns NaN when either operand is NaN (as a sequential CPU
/// loop with `std::isnan` checks would). libcu++'s `cuda::minimum` returns `b`
/// when `a` is NaN and `a` when `b` is, so the result would depend on where the
/// NaN sits in the reduction tree.
struct minimum {
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const {
    return (a < b || detail::is_nan(a)) ? a : b;
  }
};

/// `max(a, b)` that returns NaN when either operand is NaN. See `minimum`.
struct maximum {
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const {
    return (b < a || detail::is_nan(a)) ? a : b;
  }
};

/// The identity of `minimum` for `T`: +infinity, or the largest finite value.
template <class T>
__host__ __device__ constexpr T minimum_identity() noexcept {
  if constexpr (cuda::std::numeric_limits<T>::has_infinity) {
    return cuda::std::numeric_limits<T>::infinity();
  } else {
    return cuda::std::numeric_limits<T>::max();
  }
}

/// The identity of `maximum` for `T`: -infinity, or the lowest finite value.
template <class T>
__host__ __device__ constexpr T maximum_identity() noexcept {
  if constexpr (cuda::std::numeric_limits<T>::has_infinity) {
    return -cuda::std::numeric_limits<T>::infinity();
  } else {
    return cuda::std::numeric_limits<T>::lowest();
  }
}

namespace detail {

/// `x` as `Acc`; half-precision types convert through float (their own
/// conversion operators make a direct cast to, say, double ambiguous).
template <class Acc, class T>
__device__ inline Acc to_accumulator(const T& x) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    return static_cast<Acc>(static_cast<float>(x));
  } else {
    return static_cast<Acc>(x);
  }
}

/// Elements of `T` per load for `Policy` (1 when `T` does not fit a vector).
template <class Policy, class T>
inline constexpr int reduce_vector_elements_v = vector_elements_v<T, Policy::vector_bytes>;

/// Input elements one block consumes in one step of its grid-stride loop.
template <class Policy, class T>
inline constexpr std::uint64_t reduce_tile_items =
    std::uint64_t{Policy::block_threads} * Policy::vectors_in_flight * reduce_vector_elements_v<Policy, T>;

/// Reduces `in[0, n)` to one value per block, written to `out[blockIdx.x]`.
/// The elements before the first vector-aligned address (`head`) and after the
/// last whole vector (`tail`), fewer than one vector each, go to the first
/// threads of the grid; the aligned body to a grid-stride loop of vector loads.
template <class Policy, class T, class Acc, class Op>
__global__ void __launch_bounds__(Policy::block_threads)
    reduce_kernel(const T* in, std::uint64_t n, Acc* out, Acc identity, Op op) {
  constexpr int n_vector = reduce_vector_elements_v<Policy, T>;
  constexpr int in_flight = Policy::vectors_in_flight;
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  const std::uint64_t misaligned = (address / sizeof(T)) % n_vector;
  const std::uint64_t to_boundary = (n_vector - misaligned) % n_vector;
  const std::uint64_t head = to_boundary < n ? to_boundary : n;
  const T* body = in + head;
  const std::uint64_t vectors = (n - head) / n_vector;
  const std::uint64_t tail_begin = head + vectors * n_vector;

  Acc acc = identity;
  const std::uint64_t stride = grid_thread_count();
  std::uint64_t i = global_thread_index();
  for (; i + (in_flight - 1) * stride < vectors; i += in_flight * stride) {
    aligned_vector<T, n_vector> v[in_flight];
#pragma unroll
    for (int u = 0; u < in_flight; ++u) v[u] = load_vector<n_vector>(body + (i + u * stride) * n_vector);
#pragma unroll
    for (int u = 0; u < in_flight; ++u) {
#pragma unroll
      for (int k = 0; k < n_vector; ++k) acc = op(acc, to_accumulator<Acc>(v[u][k]));
    }
  }
  for (; i < vectors; i += stride) {
    const aligned_vector<T, n_vector> v = load_vector<n_vector>(body + i * n_vector);
#pragma unroll
    for (int k = 0; k < n_vector; ++k) acc = op(acc, to_accumulator<Acc>(v[k]));
  }
  const std::uint64_t thread = global_thread_index();
  if (thread < head) acc = op(acc, to_accumulator<Acc>(in[thread]));
  if (tail_begin + thread < n) acc = op(acc, to_accumulator<Acc>(in[tail_begin + thread]));

  using block_reduce_t = block_reduce<Acc, Policy::block_threads>;
  __shared__ typename block_reduce_t::temp_storage storage;
  const Acc block_total = block_reduce_t(storage).reduce(acc, op);
  if (threadIdx.x == 0) out[blockIdx.x] = block_total;
}

/// Blocks in pass 1 for `n` elements on the current device: enough tiles to
/// cover `n`, at most `blocks_per_sm` × SMs; at least 1 (n == 0 writes the identity).
template <class Policy, class T>
std::uint64_t reduce_partial_count(std::uint64_t n) {
  const std::uint64_t cap = resident_grid_blocks(Policy::blocks_per_sm);
  return std::max<std::uint64_t>(1, std::min<std::uint64_t>(ceil_div(n, reduce_tile_items<Policy, T>), cap));
}

/// Scratch alignment: the partials start on a vector boundary, so pass 2 splits
/// them the same way whatever the caller's scratch address (determinism).
template <class Policy, class Acc>
inline constexpr std::size_t reduce_scratch_alignment =
    std::max<std::size_t>(alignof(Acc), static_cast<std::size_t>(Policy::vector_bytes));

template <class Policy, class Acc>
std::size_t reduce_scratch_bytes_for(std::uint64_t partials) {
  if (partials <= 1) return 0;
  return static_cast<std::size_t>(partials) * sizeof(Acc) + reduce_scratch_alignment<Policy, Acc>;
}

/// Enqueues pass 1 (and pass 2 when there is more than one partial).
template <class Policy, class T, class Acc, class Op>
void launch_reduce(const T* in, std::uint64_t n, Acc* out, Acc identity, Op op, std::byte* scratch,
                   std::uint64_t partials, cuda::stream_ref s) {
  const auto grid = static_cast<std::uint32_t>(partials);
  launch_config pass1;
  pass1.grid = dim3(grid, 1, 1);
  pass1.block = dim3(Policy::block_threads, 1, 1);
  if (partials == 1) {
    launch(s, pass1, reduce_kernel<Policy, T, Acc, Op>, in, n, out, identity, op);
    return;
  }
  const std::uintptr_t raw = reinterpret_cast<std::uintptr_t>(scratch);
  Acc* partial_values = reinterpret_cast<Acc*>(round_up<std::uintptr_t>(raw, reduce_scratch_alignment<Policy, Acc>));
  launch(s, pass1, reduce_kernel<Policy, T, Acc, Op>, in, n, partial_values, identity, op);
  launch_config pass2 = pass1;
  pass2.grid = dim3(1, 1, 1);
  launch(s, pass2, reduce_kernel<Policy, Acc, Acc, Op>, partial_values, partials, out, identity, op);
}

template <class In, std::size_t InExtent, class Acc, std::size_t OutExtent>
void expect_reduce_arguments(cuda::std::span<In, InExtent> in, cuda::std::span<Acc, OutExtent> out) {
  FOUNDRY_EXPECTS(in.empty() || in.data() != nullptr,
                  "reduce input has " + std::to_string(in.size()) + " elements but a null pointer");
  FOUNDRY_EXPECTS(out.size() >= 1, "reduce output is too small: it needs 1 element, it has 0");
  FOUNDRY_EXPECTS(out.data() != nullptr, "reduce output has a null pointer");
}

}  // namespace detail

/// Bytes of scratch that `reduce` needs for `n` elements of `T` accumulated in
/// `Acc`, on the current device (the partial count follows its SM count);
/// 0 when one block covers `n`. Throws `cuda_error` if the device cannot be queried.
template <class T, class Acc = reduce_accumulator_t<T>, class Policy = reduce_policy>
[[nodiscard]] std::size_t reduce_scratch_bytes(std::size_t n) {
  return detail::reduce_scratch_bytes_for<Policy, Acc>(detail::reduce_partial_count<Policy, std::remove_const_t<T>>(n));
}

/// Reduces `in` into `out[0]` with `op` (associative and commutative) and its
/// `identity` (op(identity, x) == x), using caller-provided device `scratch` of
/// at least `reduce_scratch_bytes<T, Acc, Policy>(in.size())` bytes. An empty
/// input gives `identity`. Asynchronous on `s`; `scratch` must stay alive and
/// unused by other work until the reduction completes on `s`.
/// Throws `std::invalid_argument` on a null input with elements, an empty or
/// null output, or scratch that is too small.
template <class Policy = reduce_policy, class In, std::size_t InExtent, class Acc, std::size_t OutExtent, class Op>
void reduce(cuda::std::span<In, InExtent> in, cuda::std::span<Acc, OutExtent> out,
            cuda::std::type_identity_t<Acc> identity, Op op, cuda::std::span<std::byte> scratch, cuda::stream_ref s) {
  using T = std::remove_const_t<In>;
  static_assert(!std::is_const_v<Acc>, "reduce writes its output: the output span must not be const");
  static_assert(!std::is_same_v<Acc, __half> && !std::is_same_v<Acc, __nv_bfloat16>,
                "reduce accumulates in its output type: give half and bfloat16 inputs a float output");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::expect_reduce_arguments(in, out);
  const std::uint64_t partials = detail::reduce_partial_count<Policy, T>(in.size());
  const std::size_t needed = detail::reduce_scratch_bytes_for<Policy, Acc>(partials);
  FOUNDRY_EXPECTS(scratch.size() >= needed && (needed == 0 || scratch.data() != nullptr),
                  "reduce scratch is too small: " + std::to_string(scratch.size()) + " bytes given, " +
                      std::to_string(needed) + " needed (reduce_scratch_bytes)");
  detail::launch_reduce<Policy>(static_cast<const T*>(in.data()), in.size(), out.data(), identity, op, scratch.data(),
                                partials, s);
}

/// As above, with scratch allocated and freed stream-ordered on `s`
/// (cudaMallocAsync/cudaFreeAsync from the device's pool). Asynchronous.
/// Throws as above, and `cuda_error` if the allocation fails.
template <class Policy = reduce_policy, class In, std::size_t InExtent, class Acc, std::size_t OutExtent, class Op>
void reduce(cuda::std::span<In, InExtent> in, cuda::std::span<Acc, OutExtent> out,
            cuda::std::type_identity_t<Acc> identity, Op op, cuda::stream_ref s) {
  detail::expect_reduce_arguments(in, out);  // before the device is queried: bad calls throw on any host
  // Freed stream-ordered after the kernels when this returns; they run later, in order on s.
  device_buffer<std::byte> scratch(reduce_scratch_bytes<In, Acc, Policy>(in.size()), s);
  foundry::reduce<Policy>(in, out, identity, op, scratch.span(), s);
}

/// `out[0]` = the sum of `in` (`cuda::std::plus`), accumulated in the output's type.
template <class Policy = reduce_policy, class In, std::size_t InExtent, class Acc, std::size_t OutExtent>
void reduce_sum(cuda::std::span<In, InExtent> in, cuda::std::span<Acc, OutExtent> out, cuda::stream_ref s) {
  foundry::reduce<Policy>(in, out, Acc{0}, cuda::std::plus<Acc>{}, s);
}

/// `out[0]` = the smallest element of `in` (NaN if any is NaN; +inf or the
/// type's maximum for an empty input).
template <class Policy = reduce_policy, class In, std::size_t InExtent, class Acc, std::size_t OutExtent>
void reduce_min(cuda::std::span<In, InExtent> in, cuda::std::span<Acc, OutExtent> out, cuda::stream_ref s) {
  foundry::reduce<Policy>(in, out, minimum_identity<Acc>(), minimum{}, s);
}

/// `out[0]` = the largest element of `in` (NaN if any is NaN; -inf or the
/// type's lowest value for an empty input).
template <class Policy = reduce_policy, class In, std::size_t InExtent, class Acc, std::size_t OutExtent>
void reduce_max(cuda::std::span<In, InExtent> in, cuda::std::span<Acc, OutExtent> out, cuda::stream_ref s) {
  foundry::reduce<Policy>(in, out, maximum_identity<Acc>(), maximum{}, s);
}

}  // namespace foundry
