#pragma once
/// \file
/// Checks on the device for benchmarks ("correct before timed") whose reference is
/// another device buffer: no copy of a gigabyte back to the host.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/launch/grid_stride.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/runtime/stream.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <type_traits>

namespace foundry::bench {

namespace detail {

__device__ inline bool words_differ(unsigned char a, unsigned char b) { return a != b; }
__device__ inline bool words_differ(uint4 a, uint4 b) { return a.x != b.x || a.y != b.y || a.z != b.z || a.w != b.w; }

template <class Word>
__global__ void count_differences_kernel(const Word* a, const Word* b, std::size_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (auto i : grid_stride_range(n)) local += words_differ(a[i], b[i]) ? 1 : 0;
  if (local != 0) atomicAdd(count, local);
}

}  // namespace detail

/// Number of `bytes`-long positions at which the device memory at `a` and `b` differ,
/// counted in 16-byte words when both are 16-byte aligned and `bytes` is a multiple of 16,
/// else in bytes (so 0 means bitwise equal). Blocks the host until `s` has finished.
/// Throws `cuda_error` on a failed launch or copy.
inline unsigned long long count_differences(const void* a, const void* b, std::size_t bytes, cuda::stream_ref s) {
  if (bytes == 0) return 0;
  device_buffer<unsigned long long> count(1, s, 0ull);
  const auto config = [&](std::size_t n) { return make_launch_config_1d(n, 256, resident_grid_blocks(8)); };
  if (is_aligned(a, 16) && is_aligned(b, 16) && bytes % 16 == 0) {
    launch(s, config(bytes / 16), detail::count_differences_kernel<uint4>, static_cast<const uint4*>(a),
           static_cast<const uint4*>(b), bytes / 16, count.data());
  } else {
    launch(s, config(bytes), detail::count_differences_kernel<unsigned char>, static_cast<const unsigned char*>(a),
           static_cast<const unsigned char*>(b), bytes, count.data());
  }
  unsigned long long host = 0;
  FOUNDRY_CUDA_TRY(cudaMemcpyAsync(&host, count.data(), sizeof host, cudaMemcpyDeviceToHost, s.get()));
  synchronize(s);
  return host;
}

/// True when the two device spans have the same size and the same bytes. Blocks the
/// host until `s` has finished.
template <class T, class U, std::size_t E1, std::size_t E2>
bool bitwise_equal(cuda::std::span<T, E1> a, cuda::std::span<U, E2> b, cuda::stream_ref s) {
  static_assert(std::is_same_v<std::remove_const_t<T>, std::remove_const_t<U>>, "compare spans of one type");
  return a.size() == b.size() && count_differences(a.data(), b.data(), a.size_bytes(), s) == 0;
}

}  // namespace foundry::bench
