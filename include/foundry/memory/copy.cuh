#pragma once
/// \file
/// Typed, size-checked copies and fills between any spans (host, device,
/// pinned or managed; unified addressing tells the driver which is which).

#include <foundry/algorithms/detail/checks.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/overlap.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/runtime/stream.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <string>
#include <type_traits>

namespace foundry {

/// Copies `src` into `dst` on `s` (asynchronous; pageable host memory is staged
/// before the call returns). Throws `std::invalid_argument` if the sizes differ, the
/// ranges overlap (a memcpy of overlapping ranges is undefined) or `s` is the null
/// stream, `cuda_error` if the copy cannot be enqueued.
template <class T, std::size_t DstExtent, std::size_t SrcExtent>
void copy(cuda::std::span<T, DstExtent> dst, cuda::std::span<const T, SrcExtent> src, cuda::stream_ref s) {
  static_assert(std::is_trivially_copyable_v<T>, "copy needs trivially copyable elements");
  FOUNDRY_EXPECTS(dst.size() == src.size(), "copy between spans of different sizes (" + std::to_string(dst.size()) +
                                                " and " + std::to_string(src.size()) + " elements)");
  detail::expect_explicit_stream(s);
  detail::expect_no_forbidden_overlap(dst, src, detail::overlap_rule::disjoint, "copy destination and source");
  if (src.empty()) return;
  FOUNDRY_NVTX_FUNCTION_RANGE();
  // A copy to or from pageable host memory is refused (cudaErrorInvalidValue) when the
  // stream belongs to another device than the current one: enqueue from the stream's device.
  const device_guard on_stream_device(stream_device(s.get()));
  FOUNDRY_CUDA_TRY(cudaMemcpyAsync(dst.data(), src.data(), src.size_bytes(), cudaMemcpyDefault, s.get()));
}

template <class T, std::size_t DstExtent, std::size_t SrcExtent>
void copy(cuda::std::span<T, DstExtent> dst, cuda::std::span<T, SrcExtent> src, cuda::stream_ref s) {
  copy(dst, cuda::std::span<const T, SrcExtent>(src), s);
}

namespace detail {
template <class T>
__global__ void fill_kernel(T* out, std::size_t n, T value) {
  for (auto i : grid_stride_range(n)) out[i] = value;
}

/// Enqueues the fill of the non-empty device span `dst` on the explicit stream `s`, without
/// asking where `dst` lives: for memory known to be the stream's device's (a `device_buffer`
/// filling its own allocation). A resident grid (8 blocks of 256 threads per SM) with a
/// grid-stride loop: fill is a utility for initialising buffers, not a measured algorithm.
template <class T>
void enqueue_fill(T* dst, std::size_t n, const T& value, cuda::stream_ref s) {
  launch(s, make_launch_config_1d(n, 256, resident_grid_blocks(8, s)), fill_kernel<T>, dst, n, value);
}
}  // namespace detail

/// Sets every element of the device-accessible span `dst` to `value`, on `s` (asynchronous).
/// Throws `std::invalid_argument` for a null pointer with elements, the null stream, or
/// memory that the stream's device cannot access (pageable host memory without HMM or
/// ATS), `cuda_error` if the launch fails.
template <class T, std::size_t Extent>
void fill(cuda::std::span<T, Extent> dst, const T& value, cuda::stream_ref s) {
  static_assert(std::is_trivially_copyable_v<T>, "fill needs trivially copyable elements");
  if (dst.empty()) return;
  FOUNDRY_EXPECTS(dst.data() != nullptr, "fill of " + std::to_string(dst.size()) + " elements at a null pointer");
  detail::expect_explicit_stream(s);  // before the stream's device is asked for the grid size
  detail::expect_device_accessible(dst, detail::device_for_checks(s), "fill destination");
  FOUNDRY_NVTX_FUNCTION_RANGE();
  detail::enqueue_fill(dst.data(), dst.size(), value, s);
}

}  // namespace foundry
