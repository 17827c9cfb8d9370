#pragma once
/// \file
/// Textbook twins of `foundry::transform` and `foundry::device_copy`: one thread
/// per element, one scalar load per input and one scalar store, a grid exactly
/// as large as the data.
/// It is correct for any alignment and any `n`; it is here to be compared with
/// foundry's vectorised, grid-stride kernel in `bench/bench_transform.cu`.
/// Same contract as `foundry::transform`: asynchronous on `s`; throws
/// `std::invalid_argument` on different sizes or a null pointer with elements.

#include <foundry/core/error.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace foundry::naive {

/// Threads per block of the naive kernels: the value every tutorial starts with.
inline constexpr std::uint32_t transform_block_threads = 256;

template <class T>
struct copy_op {
  /// Returns x.
  __host__ __device__ T operator()(const T& x) const { return x; }
};

/// One thread per element, scalar loads: out[i] = op(in[i]...).
template <class Out, class Op, class... In>
__global__ void transform_kernel(Out* out, std::size_t n, Op op, const In*... in) {
  // 64-bit index: blockIdx.x * blockDim.x overflows 32 bits past 2^32 elements.
  const std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) out[i] = op(in[i]...);
}

/// `out[i] = op(in[i])`.
template <class In, std::size_t InExtent, class Out, std::size_t OutExtent, class Op>
void transform(cuda::std::span<In, InExtent> in, cuda::std::span<Out, OutExtent> out, Op op, cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  FOUNDRY_EXPECTS(in.size() == out.size(), "naive::transform input has " + std::to_string(in.size()) +
                                               " elements, the output " + std::to_string(out.size()));
  FOUNDRY_EXPECTS(out.empty() || (in.data() != nullptr && out.data() != nullptr),
                  "naive::transform got a null pointer with elements");
  using T = std::remove_const_t<In>;
  launch(s, make_launch_config_1d(out.size(), transform_block_threads), transform_kernel<Out, Op, T>, out.data(),
         out.size(), op, static_cast<const T*>(in.data()));
}

/// `out[i] = op(a[i], b[i])`.
template <class A, std::size_t AExtent, class B, std::size_t BExtent, class Out, std::size_t OutExtent, class Op>
void transform(cuda::std::span<A, AExtent> a, cuda::std::span<B, BExtent> b, cuda::std::span<Out, OutExtent> out, Op op,
               cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  FOUNDRY_EXPECTS(a.size() == out.size() && b.size() == out.size(),
                  "naive::transform inputs have " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                      " elements, the output " + std::to_string(out.size()));
  FOUNDRY_EXPECTS(out.empty() || (a.data() != nullptr && b.data() != nullptr && out.data() != nullptr),
                  "naive::transform got a null pointer with elements");
  using TA = std::remove_const_t<A>;
  using TB = std::remove_const_t<B>;
  launch(s, make_launch_config_1d(out.size(), transform_block_threads), transform_kernel<Out, Op, TA, TB>, out.data(),
         out.size(), op, static_cast<const TA*>(a.data()), static_cast<const TB*>(b.data()));
}

/// `dst[i] = src[i]`, one element per thread (the copy every tutorial writes first).
template <class T, std::size_t DstExtent, class U, std::size_t SrcExtent>
void device_copy(cuda::std::span<T, DstExtent> dst, cuda::std::span<U, SrcExtent> src, cuda::stream_ref s) {
  static_assert(std::is_same_v<std::remove_const_t<U>, T>, "device_copy copies between spans of the same type");
  naive::transform(src, dst, copy_op<T>{}, s);
}

}  // namespace foundry::naive
