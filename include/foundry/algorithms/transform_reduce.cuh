#pragma once
/// \file
/// Fused map-reduce over one or more device spans of equal size:
/// `out[0] = init ⊕ f(a[0], b[0], ...) ⊕ f(a[1], b[1], ...) ⊕ ... ⊕ f(a[n-1], b[n-1], ...)`
/// for an associative and commutative `⊕`, reading each input once and writing
/// only the result, on an explicit stream, with the result left in device memory.
///
///     // dot product
///     foundry::transform_reduce(x.span(), y.span(), dot.span(), 0.0, cuda::std::plus<>{},
///                               cuda::std::multiplies<>{}, stream);
///     // squared Euclidean norm
///     foundry::transform_reduce(x.span(), norm2.span(), 0.0f, cuda::std::plus<>{},
///                               [] __device__ (float v) { return v * v; }, stream);
///     // count with a predicate
///     foundry::transform_reduce(x.span(), count.span(), std::uint64_t{0}, cuda::std::plus<>{},
///                               [] __device__ (float v) { return v > 0.5f ? 1ull : 0ull; }, stream);
///
/// `init` is folded in exactly once, as in `std::transform_reduce`, so it need
/// not be the identity of `⊕`. The transform's result is converted to the
/// accumulator `Acc`, the output's element type (`convert_to`).
///
/// Deterministic: no atomics; the partial count depends on `n`, the device's SM
/// count and the inputs' offset modulo 16 bytes, and the order inside each
/// thread, warp and block is fixed. The same inputs at the same alignment on
/// the same device give the same bits on every run.
///
/// Design (two passes, three layers: host call -> `detail::launch_transform_reduce` -> kernel):
///  1. The inputs are cut by `split_for_vectors` into a scalar head and tail and a
///     body of 16-byte vectors (the widest input type sets the element count);
///     inputs that start at different offsets modulo the vector run the same
///     kernel with scalar loads. Each block of a persistent grid
///     (`blocks_per_sm` × SMs) walks tiles of the body
///     (`block_striped_tile`: `vectors_in_flight` vectors per thread and input,
///     all issued before any is used), folds them in registers, and
///     `block_reduce` leaves one partial per block in the workspace.
///  2. The same kernel, one block, over the partials, folds in `init` and writes `out[0]`.
///  An input that fits one block's first tile needs only pass 1 and no workspace.

#include <foundry/algorithms/detail/checks.cuh>
#include <foundry/block/block_load.cuh>
#include <foundry/block/block_reduce.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/core/operators.cuh>
#include <foundry/launch/dependent_launch.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>
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

/// Launch policy of `reduce` and `transform_reduce`. Override by deriving and
/// passing it as the first template argument: `foundry::reduce<my_policy>(...)`.
struct reduce_policy {
  /// Threads per block. Only 256 was measured on the H200.
  static constexpr int block_threads = 256;
  /// Vectors each thread loads per input before it accumulates any: 4 × 16 bytes in flight.
  /// H200, float sum of 2^28 (bench_reduce): 4 blocks/SM × 4 vectors 4.42 TB/s, level
  /// with cub::DeviceReduce::Sum's 4.43; 4 × 8 4.43, 8 × 4 4.42, 8 × 2 4.39, 2 × 8 4.32.
  /// Dot of 2^28 doubles: 4.53 TB/s (CUB's TransformReduce 4.52, thrust 4.45).
  static constexpr int vectors_in_flight = 4;
  /// Bytes per load of the widest input type. 16 = one LDG.128.
  static constexpr int vector_bytes = 16;
  /// Grid blocks (= partials) per SM: a single wave at 1024 threads/SM (figures above).
  static constexpr int blocks_per_sm = 4;
  /// Which tiles each block reads. `contiguous` measured level (float sum: 4.41 TB/s
  /// at 2^28, 4.53 at 2^30; dot of 2^24 doubles 4.10 vs 4.13).
  static constexpr tile_assignment tiles = tile_assignment::strided;
};

namespace detail {

/// One thread's vectors of one input within a tile.
template <class T, int N, int VectorsPerThread>
struct thread_vectors {
  aligned_vector<T, N> v[VectorsPerThread];
};

/// Elements per vector of `transform_reduce` over inputs `In...` under `Policy`.
template <class Policy, class... In>
inline constexpr int transform_reduce_vector_elements_v = common_vector_elements_v<Policy::vector_bytes, In...>;

/// Input elements in one tile of the vector path.
template <class Policy, class... In>
inline constexpr std::uint64_t transform_reduce_tile_elements =
    std::uint64_t{Policy::block_threads} * Policy::vectors_in_flight* transform_reduce_vector_elements_v<Policy, In...>;

/// Folds this thread's vectors of one tile into `acc`: all of them, or (when
/// `valid` is given) those below `valid` vectors into the tile.
template <class Tile, int N, class Acc, class ReduceOp, class TransformOp, class Values, std::size_t... I>
__device__ inline void fold_tile(partial_result<Acc>& acc, ReduceOp& reduce_op, TransformOp& transform_op,
                                 const Values& values, std::index_sequence<I...>, std::uint64_t valid = Tile::vectors) {
#pragma unroll
  for (int u = 0; u < Tile::vectors_per_thread; ++u) {
    if (!Tile::is_valid(u, valid)) continue;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      acc.fold(convert_to<Acc>(transform_op(cuda::std::get<I>(values).v[u][k]...)), reduce_op);
    }
  }
}

/// Where a reduction's blocks put their results.
template <class Acc>
struct reduction_target {
  Acc* out;  ///< the result, `init ⊕ total`
  Acc init;
  Acc* partials;  ///< one per block; null for a one-block grid, which writes `out` itself
};

/// `init ⊕ partials[0] ⊕ ... ⊕ partials[count-1]` into `out`, by the whole block in
/// a fixed order (thread t folds t, t + block, ..., then `block_reduce`).
template <class Policy, class Acc, class ReduceOp>
__device__ void fold_partials(const reduction_target<Acc>& target, std::uint32_t count, ReduceOp& reduce_op) {
  partial_result<Acc> acc;
  acc.valid = false;
  for (std::uint32_t i = threadIdx.x; i < count; i += Policy::block_threads) acc.fold(target.partials[i], reduce_op);
  using block_reduce_t = block_reduce<partial_result<Acc>, Policy::block_threads>;
  __shared__ typename block_reduce_t::temp_storage storage;
  const partial_result<Acc> total = block_reduce_t(storage).reduce(acc, partial_result_op<ReduceOp>{reduce_op});
  if (threadIdx.x == 0) *target.out = total.valid ? reduce_op(target.init, total.value) : target.init;
}

/// Reduces `transform_op(in[i]...)` for i in [0, split.n). Each block walks its
/// tiles (`Policy::tiles`); the last, partial tile is guarded; the head and tail go
/// to the grid's first threads. A one-block grid writes `init ⊕ total`; otherwise
/// each block writes its partial for `fold_partials_kernel`. Precondition: with
/// more than one block, every block has at least one tile.
template <class Policy, int N, class Acc, class ReduceOp, class TransformOp, class... In>
__global__ void __launch_bounds__(Policy::block_threads)
    transform_reduce_kernel(vector_split<N> split, reduction_target<Acc> target, ReduceOp reduce_op,
                            TransformOp transform_op, const In*... in) {
  using tile = block_striped_tile<Policy::block_threads, Policy::vectors_in_flight>;
  constexpr auto inputs = std::index_sequence_for<In...>{};
  wait_for_prior_grids();
  partial_result<Acc> acc;
  acc.valid = false;

  const std::uint64_t full_tiles = split.vectors / tile::vectors;
  const block_tiles<Policy::tiles> mine(full_tiles, blockIdx.x, gridDim.x);
  for (std::uint64_t j = mine.begin; j < mine.end; j += mine.step) {
    cuda::std::tuple<thread_vectors<In, N, tile::vectors_per_thread>...> values;
    cuda::std::apply([&](auto&... v) { (tile::load(split.body(in) + j * tile::vectors * N, v.v), ...); }, values);
    fold_tile<tile, N>(acc, reduce_op, transform_op, values, inputs);
  }
  // Only now: a dependent kernel launched earlier would hold SM resources through the loop.
  allow_dependent_launch();
  const std::uint64_t rest = split.vectors - full_tiles * tile::vectors;
  if (rest != 0 && mine.takes_partial_tile) {
    cuda::std::tuple<thread_vectors<In, N, tile::vectors_per_thread>...> values;
    cuda::std::apply([&](auto&... v) { (tile::load(split.body(in) + full_tiles * tile::vectors * N, v.v, rest), ...); },
                     values);
    fold_tile<tile, N>(acc, reduce_op, transform_op, values, inputs, rest);
  }
  for_each_head_and_tail(split, [&](std::uint64_t i) { acc.fold(convert_to<Acc>(transform_op(in[i]...)), reduce_op); });

  using block_reduce_t = block_reduce<partial_result<Acc>, Policy::block_threads>;
  __shared__ typename block_reduce_t::temp_storage storage;
  const partial_result<Acc> total = block_reduce_t(storage).reduce(acc, partial_result_op<ReduceOp>{reduce_op});
  if (threadIdx.x == 0) {
    if (target.partials == nullptr) {
      *target.out = total.valid ? reduce_op(target.init, total.value) : target.init;
    } else {
      target.partials[blockIdx.x] = total.value;
    }
  }
}

/// The second launch: one block folds the partials of the first.
template <class Policy, class Acc, class ReduceOp>
__global__ void __launch_bounds__(Policy::block_threads)
    fold_partials_kernel(reduction_target<Acc> target, std::uint32_t count, ReduceOp reduce_op) {
  allow_dependent_launch();
  wait_for_prior_grids();
  fold_partials<Policy>(target, count, reduce_op);
}

/// Most partials (= blocks) for `n` elements on the current device: one per
/// tile of the vector path, at most `blocks_per_sm` × SMs, at least 1.
template <class Policy, class... In>
std::uint64_t max_partial_count(std::uint64_t n) {
  const std::uint64_t cap = resident_grid_blocks(Policy::blocks_per_sm);
  return std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(ceil_div(n, transform_reduce_tile_elements<Policy, In...>), cap));
}

/// Workspace alignment: the partials start on a boundary of this many bytes
/// found inside the caller's workspace, whatever its address.
template <class Acc>
inline constexpr std::size_t workspace_alignment = std::max<std::size_t>(alignof(Acc), max_vector_bytes);

template <class Acc>
std::size_t workspace_bytes_for_partials(std::uint64_t partials) {
  if (partials <= 1) return 0;
  return workspace_alignment<Acc> + static_cast<std::size_t>(partials) * sizeof(Acc);
}

/// Enqueues the reduction over `split`: one block writes the result; or several
/// write partials to `workspace` and a second, one-block launch folds them. Both
/// launches are programmatic dependent launches, so the second is resident and
/// waiting when the first finishes.
template <class Policy, int N, class Acc, class ReduceOp, class TransformOp, class... In>
void enqueue_transform_reduce(vector_split<N> split, std::uint64_t max_partials, Acc* out, Acc init, ReduceOp reduce_op,
                              TransformOp transform_op, std::byte* workspace, cuda::stream_ref s, const In*... in) {
  constexpr std::uint64_t tile_vectors = std::uint64_t{Policy::block_threads} * Policy::vectors_in_flight;
  // Never more blocks than tiles: every block then owns at least one.
  const std::uint64_t blocks =
      std::max<std::uint64_t>(1, std::min(ceil_div(split.vectors, tile_vectors), max_partials));
  launch_config c;
  c.grid = dim3(static_cast<std::uint32_t>(blocks), 1, 1);
  c.block = dim3(Policy::block_threads, 1, 1);
  c.dependency = launch_dependency::programmatic;
  reduction_target<Acc> target{out, init, nullptr};
  if (blocks > 1) {
    target.partials = reinterpret_cast<Acc*>(
        round_up<std::uintptr_t>(reinterpret_cast<std::uintptr_t>(workspace), workspace_alignment<Acc>));
  }
  launch(s, c, transform_reduce_kernel<Policy, N, Acc, ReduceOp, TransformOp, In...>, split, target, reduce_op,
         transform_op, in...);
  if (blocks > 1) {
    c.grid = dim3(1, 1, 1);
    launch(s, c, fold_partials_kernel<Policy, Acc, ReduceOp>, target, static_cast<std::uint32_t>(blocks), reduce_op);
  }
}

/// Picks the vector path when every input starts at the same offset modulo the
/// vector, the scalar path otherwise, and enqueues the reduction.
template <class Policy, class Acc, class ReduceOp, class TransformOp, class In0, class... In>
void launch_transform_reduce(std::uint64_t n, Acc* out, Acc init, ReduceOp reduce_op, TransformOp transform_op,
                             std::byte* workspace, cuda::stream_ref s, const In0* in0, const In*... in) {
  constexpr int n_vector = transform_reduce_vector_elements_v<Policy, In0, In...>;
  const std::uint64_t max_partials = max_partial_count<Policy, In0, In...>(n);
  if constexpr (n_vector > 1) {
    if (same_vector_phase<n_vector>(in0, in...)) {
      enqueue_transform_reduce<Policy>(split_for_vectors<n_vector>(in0, n), max_partials, out, init, reduce_op,
                                       transform_op, workspace, s, in0, in...);
      return;
    }
  }
  enqueue_transform_reduce<Policy>(split_for_vectors<1>(in0, n), max_partials, out, init, reduce_op, transform_op,
                                   workspace, s, in0, in...);
}

template <class... In, std::size_t... InExtents, class Acc, std::size_t OutExtent>
void expect_reduction_arguments(const cuda::std::tuple<cuda::std::span<In, InExtents>...>& inputs,
                                cuda::std::span<Acc, OutExtent> out, const char* algorithm) {
  const std::string name(algorithm);
  cuda::std::apply(
      [&](const auto& first, const auto&... rest) {
        expect_device_span(first, (name + " input").c_str());
        (expect_same_size(rest, first.size(), (name + " input").c_str(), "the first input"), ...);
        (expect_device_span(rest, (name + " input").c_str()), ...);
      },
      inputs);
  expect_capacity(out, 1, (name + " output").c_str());
}

/// Refuses a workspace that shares a byte with an input (the first blocks to finish write
/// their partials over samples that later blocks still read) or with the output.
template <class... In, std::size_t... InExtents, class Acc, std::size_t OutExtent>
void expect_workspace_apart(const cuda::std::tuple<cuda::std::span<In, InExtents>...>& inputs,
                            cuda::std::span<Acc, OutExtent> out, cuda::std::span<std::byte> workspace) {
  cuda::std::apply(
      [&](const auto&... in) {
        (expect_no_forbidden_overlap(workspace, in, overlap_rule::disjoint, "transform_reduce workspace and input"),
         ...);
      },
      inputs);
  expect_no_forbidden_overlap(workspace, out.first(1), overlap_rule::disjoint, "transform_reduce workspace and output");
}

/// The memory checks of a reduction (after `expect_reduction_arguments`): every input,
/// the output and the workspace must be memory that the device of `s` can access.
template <class... In, std::size_t... InExtents, class Acc, std::size_t OutExtent>
void expect_reduction_memory(const cuda::std::tuple<cuda::std::span<In, InExtents>...>& inputs,
                             cuda::std::span<Acc, OutExtent> out, cuda::std::span<std::byte> workspace,
                             cuda::stream_ref s) {
  const int device = device_for_checks(s);
  cuda::std::apply([&](const auto&... in) { (expect_device_accessible(in, device, "transform_reduce input"), ...); },
                   inputs);
  expect_device_accessible(out, device, "transform_reduce output");
  expect_device_accessible(workspace, device, "transform_reduce workspace");
}

/// Unpacks the input spans into pointers for `launch_transform_reduce`.
template <class Policy, class... In, std::size_t... InExtents, class Acc, std::size_t OutExtent, class ReduceOp,
          class TransformOp>
void enqueue_with_workspace(const cuda::std::tuple<cuda::std::span<In, InExtents>...>& inputs,
                            cuda::std::span<Acc, OutExtent> out, Acc init, ReduceOp reduce_op, TransformOp transform_op,
                            std::byte* workspace, cuda::stream_ref s) {
  cuda::std::apply(
      [&](auto... in) {
        launch_transform_reduce<Policy>(cuda::std::get<0>(inputs).size(), out.data(), init, reduce_op, transform_op,
                                        workspace, s, static_cast<const std::remove_const_t<In>*>(in.data())...);
      },
      inputs);
}

}  // namespace detail

/// Bytes of workspace that `transform_reduce` needs for `n` elements of each input
/// type `In...` accumulated in `Acc`, on the current device (the partial count
/// follows its SM count); 0 when one block covers `n`.
/// Throws `cuda_error` if the device cannot be queried.
template <class Acc, class Policy = reduce_policy, class... In>
[[nodiscard]] std::size_t transform_reduce_workspace_bytes(std::size_t n) {
  static_assert(sizeof...(In) >= 1, "name the input types: transform_reduce_workspace_bytes<Acc, Policy, In...>");
  return detail::workspace_bytes_for_partials<Acc>(detail::max_partial_count<Policy, std::remove_const_t<In>...>(n));
}

/// The name of `transform_reduce_workspace_bytes` before issue 20 ("workspace" everywhere).
template <class Acc, class Policy = reduce_policy, class... In>
[[deprecated("use transform_reduce_workspace_bytes")]] [[nodiscard]] std::size_t transform_reduce_scratch_bytes(
    std::size_t n) {
  return transform_reduce_workspace_bytes<Acc, Policy, In...>(n);
}

/// n-ary transform-reduce: `out[0] = init ⊕ transform_op(in_0[0], in_1[0], ...) ⊕ ...`
/// over every index, where `inputs` is a `cuda::std::tuple` of equally sized spans
/// (`cuda::std::make_tuple(a, b, c)`), `reduce_op` is associative and commutative,
/// and `workspace` holds at least `transform_reduce_workspace_bytes<Acc, Policy, In...>(n)`
/// bytes of device memory. An empty input gives `init`. Asynchronous on `s`; the
/// inputs and `workspace` must stay alive and unchanged until the call completes on `s`.
/// Throws `std::invalid_argument` if the inputs differ in size, a span with
/// elements has a null pointer, the output is empty or null, the workspace is too small or
/// overlaps an input or the output, or
/// an input, the output or the workspace is memory that the stream's device cannot access
/// (a host variable as the output, say).
template <class Policy = reduce_policy, class... In, std::size_t... InExtents, class Acc, std::size_t OutExtent,
          class ReduceOp, class TransformOp>
void transform_reduce(cuda::std::tuple<cuda::std::span<In, InExtents>...> inputs, cuda::std::span<Acc, OutExtent> out,
                      cuda::std::type_identity_t<Acc> init, ReduceOp reduce_op, TransformOp transform_op,
                      cuda::std::span<std::byte> workspace, cuda::stream_ref s) {
  static_assert(sizeof...(In) >= 1, "transform_reduce needs at least one input");
  static_assert(!std::is_const_v<Acc>, "transform_reduce writes its output: the output span must not be const");
  static_assert(!std::is_same_v<Acc, __half> && !std::is_same_v<Acc, __nv_bfloat16>,
                "transform_reduce accumulates in its output type: give half and bfloat16 inputs a float output");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::expect_reduction_arguments(inputs, out, "transform_reduce");
  const std::size_t n = cuda::std::get<0>(inputs).size();
  const std::size_t needed = transform_reduce_workspace_bytes<Acc, Policy, In...>(n);
  detail::expect_workspace(workspace.data(), workspace.size(), needed, "transform_reduce",
                           "transform_reduce_workspace_bytes");
  if (needed > 0) detail::expect_workspace_apart(inputs, out, workspace.first(needed));
  detail::expect_reduction_memory(inputs, out, needed == 0 ? cuda::std::span<std::byte>{} : workspace, s);
  detail::enqueue_with_workspace<Policy>(inputs, out, init, reduce_op, transform_op, workspace.data(), s);
}

/// As above, with the workspace allocated and freed stream-ordered on `s`
/// (cudaMallocAsync/cudaFreeAsync from the device's pool; none when one block
/// covers the input). Asynchronous. Throws as above, and `cuda_error` if the
/// allocation fails.
///
/// H200, float sum of 2^14 to 2^18 elements back to back (bench_reduce): 3.7-3.9 us
/// a call, with a caller's workspace or this per-call allocation alike, against
/// cub::DeviceReduce::Sum's 4.3-4.8 us. Programmatic dependent launch hides the
/// allocation: without it this call took 6.9-7.3 us and a caller's workspace 5.9-6.3.
/// A single-launch variant (the last block to finish folds the partials, counter
/// in a workspace that a foundry::stream kept) took 4.1-4.25 us: slower, not kept.
template <class Policy = reduce_policy, class... In, std::size_t... InExtents, class Acc, std::size_t OutExtent,
          class ReduceOp, class TransformOp>
void transform_reduce(cuda::std::tuple<cuda::std::span<In, InExtents>...> inputs, cuda::std::span<Acc, OutExtent> out,
                      cuda::std::type_identity_t<Acc> init, ReduceOp reduce_op, TransformOp transform_op,
                      cuda::stream_ref s) {
  detail::expect_reduction_arguments(inputs, out, "transform_reduce");  // before the device is queried
  // Freed stream-ordered when this returns, after the kernels that use it (they run later, in order on s).
  device_buffer<std::byte> workspace(
      transform_reduce_workspace_bytes<Acc, Policy, In...>(cuda::std::get<0>(inputs).size()), s);
  foundry::transform_reduce<Policy>(inputs, out, init, reduce_op, transform_op, workspace.span(), s);
}

/// Unary transform-reduce: `out[0] = init ⊕ transform_op(in[0]) ⊕ ...`. See the n-ary overload.
template <class Policy = reduce_policy, class In, std::size_t InExtent, class Acc, std::size_t OutExtent,
          class ReduceOp, class TransformOp>
void transform_reduce(cuda::std::span<In, InExtent> in, cuda::std::span<Acc, OutExtent> out,
                      cuda::std::type_identity_t<Acc> init, ReduceOp reduce_op, TransformOp transform_op,
                      cuda::stream_ref s) {
  foundry::transform_reduce<Policy>(cuda::std::make_tuple(in), out, init, reduce_op, transform_op, s);
}

/// Binary transform-reduce: `out[0] = init ⊕ transform_op(a[0], b[0]) ⊕ ...`
/// (with `cuda::std::plus` and `cuda::std::multiplies`, a dot product). See the n-ary overload.
template <class Policy = reduce_policy, class A, std::size_t AExtent, class B, std::size_t BExtent, class Acc,
          std::size_t OutExtent, class ReduceOp, class TransformOp>
void transform_reduce(cuda::std::span<A, AExtent> a, cuda::std::span<B, BExtent> b, cuda::std::span<Acc, OutExtent> out,
                      cuda::std::type_identity_t<Acc> init, ReduceOp reduce_op, TransformOp transform_op,
                      cuda::stream_ref s) {
  foundry::transform_reduce<Policy>(cuda::std::make_tuple(a, b), out, init, reduce_op, transform_op, s);
}

}  // namespace foundry
