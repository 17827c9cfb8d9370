#pragma once
/// \file
/// The reduction ladder that the GPU guides teach (M. Harris, "Optimizing
/// Parallel Reduction in CUDA"), each rung a named kernel with a host launcher
/// that sums `in` into `out[0]`. Rung 5 is `foundry::reduce` (several 16-byte
/// loads per thread in a grid-stride loop, warp shuffles, two passes).
///
///  1. `reduce_sum_atomic`: one `atomicAdd` per element on one address. The
///     atomics serialise in L2, and a float result depends on their order
///     (not deterministic).
///  2. `reduce_sum_interleaved`: one element per thread into shared memory, a
///     tree with interleaved addressing (`tid % (2*s) == 0`): divergent warps
///     and a modulo in the loop.
///  3. `reduce_sum_sequential`: the same tree with sequential addressing
///     (`tid < s`): active threads stay packed in whole warps.
///  4. `reduce_sum_warp_shuffle`: sequential addressing down to 64 values, then
///     the last warp finishes with `__shfl_down_sync`, no barrier.
///
/// Rungs 2–4 write one partial per block of 256 and relaunch on the partials
/// until one value is left (ceil(log_256 n) launches), with ping-pong buffers
/// allocated stream-ordered inside the call. All calls are asynchronous on `s`
/// and throw `std::invalid_argument` on a null input with elements or an empty output.

#include <foundry/algorithms/detail/checks.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/runtime/stream.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace foundry::naive {

/// Threads per block of rungs 2–4 (a power of two: the trees halve it).
inline constexpr std::uint32_t reduce_block_threads = 256;

// Rung 1: every thread adds its element to out[0] (zeroed by the launcher).
/// Rung 1's kernel: every thread adds its element to `*out` with atomicAdd.
template <class T>
__global__ void reduce_sum_atomic_kernel(const T* in, std::size_t n, T* out) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}

// Rung 2: interleaved addressing. In step s, threads whose index is a multiple
// of 2s add the value s places to the right; half the lanes of every active
// warp idle, and `%` is slow.
/// Rung 2's kernel: one partial sum per block, tree with interleaved addressing (divergent warps).
template <class T>
__global__ void reduce_sum_interleaved_kernel(const T* in, std::size_t n, T* partials) {
  __shared__ T sdata[reduce_block_threads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  sdata[tid] = i < n ? in[i] : T{0};
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s *= 2) {
    if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// Rung 3: sequential addressing. In step s, the first s threads add the value
// s places to the right: the active threads are contiguous, whole warps retire.
/// Rung 3's kernel: one partial sum per block, tree with sequential addressing.
template <class T>
__global__ void reduce_sum_sequential_kernel(const T* in, std::size_t n, T* partials) {
  __shared__ T sdata[reduce_block_threads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  sdata[tid] = i < n ? in[i] : T{0};
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = sdata[0];
}

// Rung 4: sequential addressing down to 64 values, then warp 0 adds the last
// two halves and finishes in registers with shuffles (no shared memory, no barrier).
/// Rung 4's kernel: sequential addressing down to one warp, then shuffles.
template <class T>
__global__ void reduce_sum_warp_shuffle_kernel(const T* in, std::size_t n, T* partials) {
  __shared__ T sdata[reduce_block_threads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  sdata[tid] = i < n ? in[i] : T{0};
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid < 32) {
    T v = sdata[tid] + sdata[tid + 32];
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    if (tid == 0) partials[blockIdx.x] = v;
  }
}

namespace detail {

template <class T>
using reduce_pass_kernel = void (*)(const T*, std::size_t, T*);

template <class In, std::size_t InExtent, class T, std::size_t OutExtent>
void expect_reduce_arguments(cuda::std::span<In, InExtent> in, cuda::std::span<T, OutExtent> out) {
  foundry::detail::expect_device_span(in, "naive reduce input");
  foundry::detail::expect_capacity(out, 1, "naive reduce output");
}

inline launch_config blocks_of(std::size_t blocks) {
  launch_config c;
  c.grid = dim3(static_cast<unsigned>(blocks), 1, 1);
  c.block = dim3(reduce_block_threads, 1, 1);
  return c;
}

/// Runs `kernel` on the input, then on its partials, until one block writes `out`.
template <class T>
void reduce_sum_tree(reduce_pass_kernel<T> kernel, const T* in, std::size_t n, T* out, cuda::stream_ref s) {
  const std::size_t first = std::max<std::size_t>(1, ceil_div<std::size_t>(n, reduce_block_threads));
  // Pass 1 writes a, pass 2 reads a and writes b, pass 3 reads b and writes a, ...
  device_buffer<T> a(first > 1 ? first : 0, s);
  device_buffer<T> b(first > 1 ? ceil_div<std::size_t>(first, reduce_block_threads) : 0, s);
  const T* src = in;
  std::size_t count = n;
  bool to_a = true;
  do {
    const std::size_t blocks = std::max<std::size_t>(1, ceil_div<std::size_t>(count, reduce_block_threads));
    T* dst = blocks == 1 ? out : (to_a ? a.data() : b.data());
    launch(s, blocks_of(blocks), kernel, src, count, dst);
    src = dst;
    count = blocks;
    to_a = !to_a;
  } while (count > 1);
}

}  // namespace detail

/// Rung 1: `out[0]` = sum of `in` by one `atomicAdd` per element (T: a type
/// `atomicAdd` supports, e.g. int, unsigned, float, double).
template <class In, std::size_t InExtent, class T, std::size_t OutExtent>
void reduce_sum_atomic(cuda::std::span<In, InExtent> in, cuda::std::span<T, OutExtent> out, cuda::stream_ref s) {
  static_assert(std::is_same_v<std::remove_const_t<In>, T>, "naive reductions accumulate in the input type");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::expect_reduce_arguments(in, out);
  foundry::detail::expect_explicit_stream(s);  // before the memset, which would land on the legacy stream
  {
    const device_guard on_stream_device(stream_device(s.get()));  // as launch does
    FOUNDRY_CUDA_TRY(cudaMemsetAsync(out.data(), 0, sizeof(T), s.get()));
  }
  launch(s, make_launch_config_1d(in.size(), reduce_block_threads), reduce_sum_atomic_kernel<T>,
         static_cast<const T*>(in.data()), in.size(), out.data());
}

/// Rung 2: shared-memory tree, interleaved addressing.
template <class In, std::size_t InExtent, class T, std::size_t OutExtent>
void reduce_sum_interleaved(cuda::std::span<In, InExtent> in, cuda::std::span<T, OutExtent> out, cuda::stream_ref s) {
  static_assert(std::is_same_v<std::remove_const_t<In>, T>, "naive reductions accumulate in the input type");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::expect_reduce_arguments(in, out);
  detail::reduce_sum_tree<T>(reduce_sum_interleaved_kernel<T>, in.data(), in.size(), out.data(), s);
}

/// Rung 3: shared-memory tree, sequential addressing.
template <class In, std::size_t InExtent, class T, std::size_t OutExtent>
void reduce_sum_sequential(cuda::std::span<In, InExtent> in, cuda::std::span<T, OutExtent> out, cuda::stream_ref s) {
  static_assert(std::is_same_v<std::remove_const_t<In>, T>, "naive reductions accumulate in the input type");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::expect_reduce_arguments(in, out);
  detail::reduce_sum_tree<T>(reduce_sum_sequential_kernel<T>, in.data(), in.size(), out.data(), s);
}

/// Rung 4: sequential addressing with a warp-shuffle final stage.
template <class In, std::size_t InExtent, class T, std::size_t OutExtent>
void reduce_sum_warp_shuffle(cuda::std::span<In, InExtent> in, cuda::std::span<T, OutExtent> out, cuda::stream_ref s) {
  static_assert(std::is_same_v<std::remove_const_t<In>, T>, "naive reductions accumulate in the input type");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::expect_reduce_arguments(in, out);
  detail::reduce_sum_tree<T>(reduce_sum_warp_shuffle_kernel<T>, in.data(), in.size(), out.data(), s);
}

}  // namespace foundry::naive
