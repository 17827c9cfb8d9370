#pragma once
/// \file
/// The textbook twin of `foundry::transform_reduce`, written as a first attempt
/// is: map into a temporary array (one thread per element), then reduce that
/// array with a shared-memory tree (sequential addressing), relaunching on the
/// block partials until one value is left, and fold `init` in at the end.
/// The temporary costs a write and a second read of `n` accumulators, and each
/// tree level a launch: the fused, vectorised version reads each input once.
///
///     foundry::naive::transform_reduce(x, y, dot, 0.0, cuda::std::plus<>{}, cuda::std::multiplies<>{}, s);
///
/// Asynchronous on `s` (the temporaries are allocated and freed stream-ordered).
/// Throws `std::invalid_argument` on inputs of different sizes, a null pointer
/// with elements or an empty output; `cuda_error` if an allocation or launch fails.

#include <foundry/algorithms/detail/checks.cuh>
#include <foundry/core/math.cuh>
#include <foundry/core/operators.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/std/type_traits>
#include <cuda/stream_ref>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace foundry::naive {

/// Threads per block of the naive map and tree (a power of two: the tree halves it).
inline constexpr std::uint32_t transform_reduce_block_threads = 256;

/// The map pass: out[i] = op(in[i]...), written to a temporary that a tree then reduces.
template <class Acc, class TransformOp, class... In>
__global__ void map_to_temporary_kernel(Acc* out, std::size_t n, TransformOp op, const In*... in) {
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) out[i] = convert_to<Acc>(op(in[i]...));
}

/// One partial per block: a sequential-addressing tree over the block's
/// elements, bounded by how many it has (so no identity is needed); with
/// `fold_init`, the single block writes `init ⊕ total` (or `init` for n == 0).
template <class Acc, class ReduceOp>
__global__ void reduce_tree_kernel(const Acc* in, std::size_t n, Acc* out, Acc init, bool fold_init, ReduceOp op) {
  __shared__ Acc sdata[transform_reduce_block_threads];
  const unsigned tid = threadIdx.x;
  const std::size_t first = std::size_t{blockIdx.x} * blockDim.x;
  const std::size_t left = n > first ? n - first : 0;
  const std::size_t count = left < blockDim.x ? left : blockDim.x;
  if (tid < count) sdata[tid] = in[first + tid];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s && tid + s < count) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) {
    if (fold_init) {
      out[blockIdx.x] = count == 0 ? init : op(init, sdata[0]);
    } else {
      out[blockIdx.x] = sdata[0];
    }
  }
}

/// `out[0] = init ⊕ transform_op(a[0], b[0], ...) ⊕ ...` over equally sized spans
/// (one to three inputs through the overloads below).
template <class Acc, class ReduceOp, class TransformOp, class... In>
void transform_reduce_impl(std::size_t n, Acc* out, Acc init, ReduceOp reduce_op, TransformOp transform_op,
                           cuda::stream_ref s, const In*... in) {
  constexpr std::uint32_t block = transform_reduce_block_threads;
  device_buffer<Acc> mapped(n, s);
  launch(s, make_launch_config_1d(n, block), map_to_temporary_kernel<Acc, TransformOp, In...>, mapped.data(), n,
         transform_op, in...);
  // Each level reads `src` and writes one partial per block into the next buffer.
  device_buffer<Acc> partials(n > block ? ceil_div<std::size_t>(n, block) : 0, s);
  device_buffer<Acc> partials_of_partials(n > block ? ceil_div<std::size_t>(ceil_div<std::size_t>(n, block), block) : 0,
                                          s);
  const Acc* src = mapped.data();
  std::size_t count = n;
  bool to_first = true;
  for (;;) {
    const std::size_t blocks = std::max<std::size_t>(1, ceil_div<std::size_t>(count, block));
    Acc* dst = blocks == 1 ? out : (to_first ? partials.data() : partials_of_partials.data());
    launch(s, make_launch_config_1d(blocks * block, block), reduce_tree_kernel<Acc, ReduceOp>, src, count, dst, init,
           blocks == 1, reduce_op);
    if (blocks == 1) break;
    src = dst;
    count = blocks;
    to_first = !to_first;
  }
}

/// Unary: `out[0] = init ⊕ transform_op(in[0]) ⊕ ...`.
template <class In, std::size_t InExtent, class Acc, std::size_t OutExtent, class ReduceOp, class TransformOp>
void transform_reduce(cuda::std::span<In, InExtent> in, cuda::std::span<Acc, OutExtent> out,
                      cuda::std::type_identity_t<Acc> init, ReduceOp reduce_op, TransformOp transform_op,
                      cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  foundry::detail::expect_device_span(in, "naive::transform_reduce input");
  foundry::detail::expect_capacity(out, 1, "naive::transform_reduce output");
  transform_reduce_impl(in.size(), out.data(), init, reduce_op, transform_op, s,
                        static_cast<const std::remove_const_t<In>*>(in.data()));
}

/// Binary: `out[0] = init ⊕ transform_op(a[0], b[0]) ⊕ ...`.
template <class A, std::size_t AExtent, class B, std::size_t BExtent, class Acc, std::size_t OutExtent, class ReduceOp,
          class TransformOp>
void transform_reduce(cuda::std::span<A, AExtent> a, cuda::std::span<B, BExtent> b, cuda::std::span<Acc, OutExtent> out,
                      cuda::std::type_identity_t<Acc> init, ReduceOp reduce_op, TransformOp transform_op,
                      cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  foundry::detail::expect_device_span(a, "naive::transform_reduce input");
  foundry::detail::expect_device_span(b, "naive::transform_reduce input");
  foundry::detail::expect_same_size(b, a.size(), "naive::transform_reduce input", "the first input");
  foundry::detail::expect_capacity(out, 1, "naive::transform_reduce output");
  transform_reduce_impl(a.size(), out.data(), init, reduce_op, transform_op, s,
                        static_cast<const std::remove_const_t<A>*>(a.data()),
                        static_cast<const std::remove_const_t<B>*>(b.data()));
}

}  // namespace foundry::naive
