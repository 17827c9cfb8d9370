// Calls every algorithm and every GEMM input type, so that compiling this unit for the
// oldest architecture nvcc still builds (sm_75, Turing) and for one with 1536 threads an SM
// (sm_86) checks that a user's fat binary with such architectures in its list compiles
// under `--Werror all-warnings`: the 16-bit GEMM kernels hold sm_80 instructions (mma.sync
// on bf16, cp.async) that detail/mma_sync.cuh compiles to a trap on sm_75, as the host
// never plans them on such a device, and tuned `__launch_bounds__` are capped per
// architecture (launch/launch_bounds.cuh). tests/CMakeLists.txt builds it as an object
// library, so a failure to compile is a failure of the build; nothing runs it.
#include <foundry/foundry.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace {

template <class In>
void every_gemm(foundry::matrix_view<const In> a, foundry::matrix_view<const In> b, foundry::matrix_view<float> c,
                cuda::stream_ref s) {
  foundry::gemm(1.0f, a, foundry::matrix_op::none, b, foundry::matrix_op::transpose, 0.0f, c, s);
}

}  // namespace

void every_algorithm(cuda::std::span<float> x, cuda::std::span<float> y, cuda::std::span<std::uint8_t> bytes,
                     cuda::std::span<std::uint32_t> counts, foundry::image_view<float> image,
                     cuda::std::span<const float> filter, cuda::stream_ref s) {
  const cuda::std::span<const float> in = x;
  foundry::transform(
      in, y, [] __device__(float v) { return 2.0f * v; }, s);
  foundry::reduce_sum(in, y.first(1), s);
  foundry::transform_reduce(
      cuda::std::make_tuple(in, in), y.first(1), 0.0f, cuda::std::plus<float>{},
      [] __device__(float a, float b) { return a * b; }, s);
  foundry::inclusive_sum(in, y, s);
  foundry::histogram_even(cuda::std::span<const std::uint8_t>(bytes), counts, 0, 256, s);
  foundry::histogram_even(in, counts, 0.0f, 1.0f, s);
  const foundry::matrix_view<const float> square{x.data(), 16, 16, 16, foundry::matrix_layout::row_major};
  foundry::transpose(square, foundry::matrix_view<float>{y.data(), 16, 16, 16, foundry::matrix_layout::row_major}, s);
  foundry::convolve_2d(foundry::image_view<const float>{image.data, image.width, image.height, image.pitch}, image,
                       filter, foundry::border_mode::clamp, s);
  const foundry::matrix_view<float> c{y.data(), 16, 16, 16, foundry::matrix_layout::row_major};
  every_gemm<float>(square, square, c, s);
  const auto* half = reinterpret_cast<const __half*>(x.data());
  every_gemm<__half>({half, 16, 16, 16, foundry::matrix_layout::row_major},
                     {half, 16, 16, 16, foundry::matrix_layout::row_major}, c, s);
  const auto* bf16 = reinterpret_cast<const __nv_bfloat16*>(x.data());
  every_gemm<__nv_bfloat16>({bf16, 16, 16, 16, foundry::matrix_layout::row_major},
                            {bf16, 16, 16, 16, foundry::matrix_layout::row_major}, c, s);
}
