#pragma once
/// \file
/// Element-wise algorithms on device spans: `transform` (an n-ary map with any
/// functor, device lambdas included), `tabulate` and `iota` (outputs from the
/// index), and `device_copy` (a copy kernel, for when a copy must be a kernel:
/// inside a graph node's stream work, or to compare with `cudaMemcpyAsync`).
///
/// All calls are asynchronous: they enqueue one kernel on the given stream and
/// return. They throw `std::invalid_argument` when sizes differ or a span with
/// elements has a null pointer, and `cuda_error` when the launch fails.
///
/// Memory path (`vector_split`): when every pointer starts at the same offset
/// modulo the vector (16 bytes for the widest element type), a head of fewer
/// than one vector goes element-wise and each thread then moves whole 16-byte
/// vectors, `transform_policy::vectors_in_flight` of them per input before it
/// computes; otherwise the same kernel runs with scalar accesses (correct for
/// any offset, slower). A tail shorter than one vector goes element-wise.
///
///     // saxpy, in place: y = a * x + y
///     foundry::transform(x.span(), y.span(), y.span(),
///                        [a] __device__ (float xi, float yi) { return a * xi + yi; }, stream);
///     // three inputs
///     foundry::transform(cuda::std::make_tuple(a, b, c), out, fma_op{}, stream);
///
/// Device lambdas need nvcc's `--extended-lambda` (foundry::foundry adds it);
/// named functors need nothing.

#include <foundry/algorithms/detail/checks.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/core/operators.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/thread/vector.cuh>
#include <foundry/thread/vector_split.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/std/tuple>
#include <cuda/std/type_traits>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace foundry {

/// Launch policy of `transform` and `tabulate`. Override by deriving:
/// `struct my_policy : foundry::transform_policy { static constexpr int blocks_per_sm = 8; };`
/// and calling `foundry::transform<my_policy>(...)`.
struct transform_policy {
  /// Threads per block. Only 256 was measured on the H200 (2026-12-02: every
  /// saxpy/foundry* row uses 256; the candidates vary blocks/SM and vectors);
  /// other block sizes were not measured yet.
  static constexpr int block_threads = 256;
  /// Cap on the grid, in blocks per SM (grid = min(work / block_threads, SMs × this)).
  /// Measured on the H200, saxpy 2^28 floats (bench_transform, medians of 3 × 100):
  /// a persistent grid of 4 blocks/SM read+wrote 4.11 TB/s (0.99× thrust::transform's
  /// 4.14), 8 blocks/SM 4.01–4.05; a cap this high, so that each thread handles one or
  /// two vectors and the grid retires block by block like thrust's, 4.35 TB/s (1.05×).
  static constexpr int blocks_per_sm = 1024;
  /// Vectors each thread loads per input before computing (memory-level parallelism).
  /// With the grid above, 1 and 2 measured the same (4.355 and 4.351 TB/s); 2 keeps
  /// two loads in flight when a capped grid makes threads loop.
  static constexpr int vectors_in_flight = 2;
  /// Bytes per access of the widest element type. 16 = one LDG.128/STG.128.
  static constexpr int vector_bytes = 16;
  /// Programmatic dependent launch. H200, saxpy of 2^16 floats back to back
  /// (bench_transform): 2.32 us a call with `full`, 1.12 with this; after the L2
  /// flush kernel, which lets no dependent start early, 3.97 and 4.03 (no change).
  static constexpr launch_dependency dependency = launch_dependency::programmatic;
};

/// Launch policy of `device_copy`: a non-persistent grid in which each block
/// copies one contiguous chunk of `block_threads × vectors_in_flight × 16` bytes.
/// Lead on the H200: this shape reached 0.98× cudaMemcpy D2D at 1 GiB, where
/// persistent grid-stride loops stayed at 0.92–0.93×. foundry's figure, measured on
/// the H200, 2026-12-02, at 1 GiB: 4140 GB/s (row copy/foundry/1073741824) against
/// cudaMemcpy's 4250 GB/s (row copy/cudaMemcpy/1073741824), 0.975×; cold L2 4160
/// against 4260 GB/s (rows copy/foundry/cold/1073741824, copy/cudaMemcpy/cold/1073741824),
/// 0.977×.
struct device_copy_policy {
  /// Measured on the H200, 1 GiB (bench_transform, medians of 3 × 100; cudaMemcpy
  /// 4.235 TB/s): 512 threads × 4 vectors 4.139 TB/s (0.977×); 256 × 2 4.126;
  /// 128 × 8 4.128; 256 × 4 4.097; 256 × 8 4.074.
  static constexpr int block_threads = 512;
  /// 16-byte vectors each thread loads before it stores any (its share of the chunk).
  static constexpr int vectors_in_flight = 4;
};

namespace detail {

template <class T>
using element_t = std::remove_const_t<T>;

/// Whether `Policy` has a member `vectors_per_thread`: a policy names the loads a thread
/// has in flight `vectors_in_flight` (ARCHITECTURE.md, "Policy vocabulary"), so a copy
/// policy's `vectors_per_thread` is a tuning from before the rename that no kernel reads.
template <class Policy, class = void>
inline constexpr bool has_vectors_per_thread = false;
template <class Policy>
inline constexpr bool has_vectors_per_thread<Policy, std::void_t<decltype(Policy::vectors_per_thread)>> = true;

/// Loads vector `i` of every input (for N == 1 a plain scalar load, no alignment needed).
template <int N, class... In>
__device__ inline cuda::std::tuple<aligned_vector<In, N>...> load_inputs(std::uint64_t i, const In*... in) {
  if constexpr (N == 1) {
    return cuda::std::tuple<aligned_vector<In, N>...>{aligned_vector<In, N>{{in[i]}}...};
  } else {
    return cuda::std::tuple<aligned_vector<In, N>...>{load_vector<N>(in + i * N)...};
  }
}

template <int N, class Out, class Op, class Tuple, std::size_t... I>
__device__ inline void apply_and_store(Out* out, std::uint64_t i, Op& op, const Tuple& values,
                                       std::index_sequence<I...>) {
  aligned_vector<Out, N> result;
#pragma unroll
  for (int k = 0; k < N; ++k) result[k] = op(cuda::std::get<I>(values)[k]...);
  if constexpr (N == 1) {
    out[i] = result[0];
  } else {
    store_vector(out + i * N, result);
  }
}

/// out[j] = op(in[j]...) for j in [0, split.n): the body in whole vectors (N > 1,
/// every pointer at the same offset modulo the vector, checked by the host) or
/// scalars (N == 1), in a grid-stride loop with `Policy::vectors_in_flight`
/// vectors per input loaded before any is used; the head and tail element-wise.
template <class Policy, int N, class Out, class Op, class... In>
__global__ void __launch_bounds__(Policy::block_threads)
    transform_kernel(vector_split<N> split, Out* out, Op op, const In*... in) {
  constexpr int in_flight = Policy::vectors_in_flight;
  constexpr auto inputs = std::index_sequence_for<In...>{};
  allow_dependent_launch();
  wait_for_prior_grids();
  Out* out_body = split.body(out);
  const std::uint64_t vectors = split.vectors;
  const std::uint64_t stride = grid_thread_count();
  std::uint64_t i = global_thread_index();
  for (; i + (in_flight - 1) * stride < vectors; i += in_flight * stride) {
    cuda::std::tuple<aligned_vector<In, N>...> values[in_flight];
#pragma unroll
    for (int u = 0; u < in_flight; ++u) values[u] = load_inputs<N>(i + u * stride, split.body(in)...);
#pragma unroll
    for (int u = 0; u < in_flight; ++u) apply_and_store<N>(out_body, i + u * stride, op, values[u], inputs);
  }
  for (; i < vectors; i += stride) apply_and_store<N>(out_body, i, op, load_inputs<N>(i, split.body(in)...), inputs);
  for_each_head_and_tail(split, [&](std::uint64_t j) { out[j] = op(in[j]...); });
}

/// Grid-stride configuration: enough blocks for `work_items` threads (at least
/// one block), capped at `Policy::blocks_per_sm` grid blocks per SM of `device` (the
/// stream's), with the policy's launch dependency (the kernels wait for prior grids first
/// either way).
template <class Policy>
launch_config transform_launch_config(std::uint64_t work_items, const device_properties& device) {
  launch_config c = make_launch_config_1d(std::max<std::uint64_t>(work_items, 1), Policy::block_threads,
                                          resident_grid_blocks(Policy::blocks_per_sm, device));
  c.dependency = Policy::dependency;
  return c;
}

/// The device whose SMs a call on `s` sizes its grid for: `device` when the argument checks
/// found it (`device_for_checks`, -1 when they could not), else asked again, which throws.
inline const device_properties& stream_device_properties(int device, cuda::stream_ref s) {
  return get_device_properties(device >= 0 ? device : stream_device(s.get()));
}

/// The vector path when every pointer starts at the same offset modulo the
/// vector (the head and tail then hold fewer than 2N elements), scalar otherwise.
/// `device`: the ordinal of the device of `s`, as `stream_device_properties`.
template <class Policy, class Out, class Op, class... In>
void launch_transform(Out* out, std::uint64_t n, Op op, cuda::stream_ref s, int device, const In*... in) {
  constexpr int n_vector = common_vector_elements_v<Policy::vector_bytes, Out, In...>;
  const device_properties& properties = stream_device_properties(device, s);
  if constexpr (n_vector > 1) {
    if (same_vector_phase<n_vector>(out, in...)) {
      const auto split = split_for_vectors<n_vector>(out, n);
      launch(s, transform_launch_config<Policy>(split.vectors, properties),
             transform_kernel<Policy, n_vector, Out, Op, In...>, split, out, op, in...);
      return;
    }
  }
  launch(s, transform_launch_config<Policy>(n, properties), transform_kernel<Policy, 1, Out, Op, In...>,
         split_for_vectors<1>(out, n), out, op, in...);
}

/// out[i] = op(i): the body in whole-vector stores, the head and tail element-wise.
template <class Policy, int N, class T, class Op>
__global__ void __launch_bounds__(Policy::block_threads) tabulate_kernel(vector_split<N> split, T* out, Op op) {
  allow_dependent_launch();
  wait_for_prior_grids();
  T* body = split.body(out);
  for (auto i : grid_stride_range(split.vectors)) {
    aligned_vector<T, N> v;
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = op(split.head + i * N + k);
    if constexpr (N == 1) {
      body[i] = v[0];
    } else {
      store_vector(body + i * N, v);
    }
  }
  for_each_head_and_tail(split, [&](std::uint64_t j) { out[j] = op(j); });
}

/// `start + i`, wrapping as unsigned arithmetic does for integers: the sum is taken in
/// the unsigned type, since a signed sum that passes the maximum is undefined behaviour.
template <class T>
struct iota_op {
  T start;
  __host__ __device__ constexpr T operator()(std::uint64_t i) const {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      using wide = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<wide>(static_cast<wide>(start) + static_cast<wide>(i)));
    } else {
      return static_cast<T>(start + static_cast<T>(i));
    }
  }
};

/// Copies `split.n` bytes of `src` to `dst`, both at the same offset modulo 16:
/// the aligned body is cut into chunks of `block_threads × vectors_in_flight`
/// 16-byte vectors, one per block, each thread loading all its vectors before
/// storing any; the head and tail go byte by byte to the grid's first threads.
template <class Policy>
__global__ void __launch_bounds__(Policy::block_threads)
    device_copy_kernel(vector_split<16> split, unsigned char* dst, const unsigned char* src) {
  constexpr int per_thread = Policy::vectors_in_flight;
  constexpr std::uint64_t chunk = std::uint64_t{Policy::block_threads} * per_thread;
  allow_dependent_launch();
  wait_for_prior_grids();
  const std::uint64_t vectors = split.vectors;
  const auto* src_v = reinterpret_cast<const uint4*>(split.body(src));
  auto* dst_v = reinterpret_cast<uint4*>(split.body(dst));
  // One chunk per block; the loop only repeats when the grid was capped at max_grid_x.
  for (std::uint64_t base = blockIdx.x * chunk; base < vectors; base += std::uint64_t{gridDim.x} * chunk) {
    uint4 v[per_thread];
#pragma unroll
    for (int k = 0; k < per_thread; ++k) {
      const std::uint64_t i = base + threadIdx.x + static_cast<std::uint64_t>(k) * Policy::block_threads;
      if (i < vectors) v[k] = __ldg(src_v + i);
    }
#pragma unroll
    for (int k = 0; k < per_thread; ++k) {
      const std::uint64_t i = base + threadIdx.x + static_cast<std::uint64_t>(k) * Policy::block_threads;
      if (i < vectors) dst_v[i] = v[k];
    }
  }
  for_each_head_and_tail(split, [&](std::uint64_t i) { dst[i] = src[i]; });
}

}  // namespace detail

/// n-ary transform: `out[i] = op(in_0[i], in_1[i], ...)` for every i, where
/// `inputs` is a `cuda::std::tuple` of spans (`cuda::std::make_tuple(a, b, c)`).
/// `op` is called on the device with the input elements by value; its result is
/// converted to the output type. An input may be the output itself (in place: the same
/// address and element size) but must not otherwise overlap it. Asynchronous on `s`.
/// Throws `std::invalid_argument` if an input's size differs from the output's, a
/// non-empty span has a null pointer, an input overlaps the output other than exactly,
/// or a span is memory that the stream's device cannot access (host memory, say).
template <class Policy = transform_policy, class... In, std::size_t... InExtents, class Out, std::size_t OutExtent,
          class Op>
void transform(cuda::std::tuple<cuda::std::span<In, InExtents>...> inputs, cuda::std::span<Out, OutExtent> out, Op op,
               cuda::stream_ref s) {
  static_assert(!std::is_const_v<Out>, "transform writes its output: the output span must not be const");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::expect_device_span(out, "transform output");
  cuda::std::apply(
      [&](auto... in) {
        (detail::expect_same_size(in, out.size(), "a transform input"), ...);
        (detail::expect_device_span(in, "a transform input"), ...);
        (detail::expect_no_forbidden_overlap(in, out, detail::overlap_rule::same_or_disjoint,
                                             "a transform input and the output"),
         ...);
      },
      inputs);
  if (out.empty()) return;
  const int device = detail::device_for_checks(s);
  detail::expect_device_accessible(out, device, "transform output");
  cuda::std::apply([&](auto... in) { (detail::expect_device_accessible(in, device, "a transform input"), ...); },
                   inputs);
  cuda::std::apply(
      [&](auto... in) {
        detail::launch_transform<Policy>(out.data(), out.size(), op, s, device,
                                         static_cast<const detail::element_t<In>*>(in.data())...);
      },
      inputs);
}

/// Unary transform: `out[i] = op(in[i])`. See the n-ary overload.
template <class Policy = transform_policy, class In, std::size_t InExtent, class Out, std::size_t OutExtent, class Op>
void transform(cuda::std::span<In, InExtent> in, cuda::std::span<Out, OutExtent> out, Op op, cuda::stream_ref s) {
  foundry::transform<Policy>(cuda::std::make_tuple(in), out, op, s);
}

/// Binary transform: `out[i] = op(a[i], b[i])`. See the n-ary overload.
template <class Policy = transform_policy, class A, std::size_t AExtent, class B, std::size_t BExtent, class Out,
          std::size_t OutExtent, class Op>
void transform(cuda::std::span<A, AExtent> a, cuda::std::span<B, BExtent> b, cuda::std::span<Out, OutExtent> out, Op op,
               cuda::stream_ref s) {
  foundry::transform<Policy>(cuda::std::make_tuple(a, b), out, op, s);
}

/// `out[i] = op(i)` for every i, with `i` a `std::uint64_t`. Asynchronous on `s`.
/// Throws `std::invalid_argument` if `out` has elements but a null pointer.
template <class Policy = transform_policy, class T, std::size_t Extent, class Op>
void tabulate(cuda::std::span<T, Extent> out, Op op, cuda::stream_ref s) {
  static_assert(!std::is_const_v<T>, "tabulate writes its output: the span must not be const");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::expect_device_span(out, "tabulate output");
  if (out.empty()) return;
  const int device = detail::device_for_checks(s);
  detail::expect_device_accessible(out, device, "tabulate output");
  const device_properties& properties = detail::stream_device_properties(device, s);
  constexpr int n_vector = vector_elements_v<T, Policy::vector_bytes>;
  if constexpr (n_vector > 1) {
    if (same_vector_phase<n_vector>(out.data())) {
      const auto split = split_for_vectors<n_vector>(out.data(), out.size());
      launch(s, detail::transform_launch_config<Policy>(split.vectors, properties),
             detail::tabulate_kernel<Policy, n_vector, T, Op>, split, out.data(), op);
      return;
    }
  }
  launch(s, detail::transform_launch_config<Policy>(out.size(), properties), detail::tabulate_kernel<Policy, 1, T, Op>,
         split_for_vectors<1>(out.data(), out.size()), out.data(), op);
}

/// `out[i] = start + T(i)` for every i (integer types wrap as unsigned
/// arithmetic does). Asynchronous on `s`. Throws as `tabulate`.
template <class Policy = transform_policy, class T, std::size_t Extent>
void iota(cuda::std::span<T, Extent> out, cuda::std::type_identity_t<T> start, cuda::stream_ref s) {
  foundry::tabulate<Policy>(out, detail::iota_op<T>{start}, s);
}

/// Copies `src` into `dst` with a kernel (both device-accessible; asynchronous on `s`).
/// When `dst` and `src` are equally aligned modulo 16 bytes, 16-byte accesses
/// move the body in contiguous per-block chunks; otherwise an element-wise
/// `transform` copies it. `dst` and `src` must not overlap.
/// Throws `std::invalid_argument` if the sizes differ, a non-empty span has a
/// null pointer, the spans overlap, or one is memory the stream's device cannot access. Use `foundry::copy` (cudaMemcpyAsync) for host memory.
template <class Policy = device_copy_policy, class T, std::size_t DstExtent, class U, std::size_t SrcExtent>
void device_copy(cuda::std::span<T, DstExtent> dst, cuda::std::span<U, SrcExtent> src, cuda::stream_ref s) {
  static_assert(std::is_same_v<std::remove_const_t<U>, T>, "device_copy copies between spans of the same type");
  static_assert(std::is_trivially_copyable_v<T>, "device_copy needs trivially copyable elements");
  static_assert(!detail::has_vectors_per_thread<Policy>, "device_copy_policy names its loads vectors_in_flight");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::expect_device_span(dst, "device_copy destination");
  detail::expect_device_span(src, "device_copy source");
  FOUNDRY_EXPECTS(dst.size() == src.size(), "device_copy between spans of different sizes (" +
                                                std::to_string(dst.size()) + " and " + std::to_string(src.size()) +
                                                " elements)");
  detail::expect_no_forbidden_overlap(dst, src, detail::overlap_rule::disjoint, "device_copy destination and source");
  if (src.empty()) return;
  const int device = detail::device_for_checks(s);
  detail::expect_device_accessible(dst, device, "device_copy destination");
  detail::expect_device_accessible(src, device, "device_copy source");
  const auto* src_bytes = reinterpret_cast<const unsigned char*>(src.data());
  auto* dst_bytes = reinterpret_cast<unsigned char*>(dst.data());
  if (!same_vector_phase<16>(src_bytes, dst_bytes)) {
    foundry::transform(src, dst, identity{}, s);
    return;
  }
  const auto split = split_for_vectors<16>(src_bytes, src.size_bytes());
  const std::uint64_t chunk_vectors = std::uint64_t{Policy::block_threads} * Policy::vectors_in_flight;
  // At least one block: its first threads also copy the unaligned head and tail.
  const std::uint64_t blocks = std::max<std::uint64_t>(1, ceil_div<std::uint64_t>(split.vectors, chunk_vectors));
  launch_config c = make_launch_config_1d(blocks * Policy::block_threads, Policy::block_threads);
  c.dependency = launch_dependency::programmatic;
  launch(s, c, detail::device_copy_kernel<Policy>, split, dst_bytes, src_bytes);
}

}  // namespace foundry
