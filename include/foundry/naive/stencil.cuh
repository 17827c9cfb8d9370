#pragma once
/// \file
/// `foundry::naive::convolve_2d`: the textbook 2D convolution, the twin of
/// `foundry::convolve_2d` (<foundry/algorithms/stencil.cuh>), as a first
/// attempt would write it: one thread per output pixel, every input pixel and
/// every weight read straight from global memory, the filter size a runtime
/// value. Same formula, borders and argument checks as the fast version; it is
/// the baseline the benchmarks set beside it.

#include <foundry/algorithms/stencil.cuh>
#include <foundry/core/error.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <cstddef>
#include <cstdint>

namespace foundry::naive {

namespace detail {

// A template (on the pixel type, only float is used) so that the kernel, defined in a
// header, may be included by several translation units of one program: a plain
// __global__ function here would be defined once per translation unit.
template <class T>
__global__ void convolve_2d_kernel(const T* input, std::int64_t width, std::int64_t height, std::int64_t input_pitch,
                                   const T* filter, int radius, border_mode border, T* output,
                                   std::int64_t output_pitch) {
  const std::int64_t x = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (x >= width) return;
  const int k = 2 * radius + 1;
  // Rows beyond the 65535-block grid limit are reached by striding over y.
  for (std::int64_t y = std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y; y < height;
       y += std::int64_t{gridDim.y} * blockDim.y) {
    T sum = 0;
    for (int i = 0; i < k; ++i) {
      for (int j = 0; j < k; ++j) {
        std::int64_t xx = x + j - radius;
        std::int64_t yy = y + i - radius;
        T v = 0;
        if (border == border_mode::clamp) {
          xx = xx < 0 ? 0 : (xx >= width ? width - 1 : xx);
          yy = yy < 0 ? 0 : (yy >= height ? height - 1 : yy);
          v = input[yy * input_pitch + xx];
        } else if (xx >= 0 && xx < width && yy >= 0 && yy < height) {
          v = input[yy * input_pitch + xx];
        }
        sum += filter[i * k + j] * v;
      }
    }
    output[y * output_pitch + x] = sum;
  }
}

}  // namespace detail

/// Convolves `input` with the k×k filter `device_filter` into `output`, exactly
/// as `foundry::convolve_2d` does, except that the weights are read from
/// **device** memory (k·k floats, row-major, k odd in [3, 15]) by every thread.
/// The filter must stay valid until the kernel has run.
/// Asynchronous: enqueues one kernel on `s`; an empty image enqueues nothing.
/// Throws `std::invalid_argument` for the same bad arguments as the fast
/// version, `cuda_error` if the launch fails.
inline void convolve_2d(image_view<const float> input, image_view<float> output,
                        cuda::std::span<const float> device_filter, border_mode border, cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  if (!::foundry::detail::check_convolve_2d_arguments(input, output, device_filter)) return;
  const int radius = ::foundry::detail::square_filter_side(device_filter.size()) / 2;
  // 32 × 8 threads: a warp reads a row segment of 32 pixels per tap.
  launch(s, make_launch_config_2d(input.width, input.height, 32, 8), detail::convolve_2d_kernel<float>, input.data,
         static_cast<std::int64_t>(input.width), static_cast<std::int64_t>(input.height),
         static_cast<std::int64_t>(input.pitch), device_filter.data(), radius, border, output.data,
         static_cast<std::int64_t>(output.pitch));
}

}  // namespace foundry::naive
