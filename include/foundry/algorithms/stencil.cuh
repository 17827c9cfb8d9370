#pragma once
/// \file
/// `foundry::convolve_2d`: a 2D convolution of a float image with a small square
/// filter (3×3 up to 15×15, odd sizes), with the border handling the caller
/// chooses. The textbook twin is `foundry::naive::convolve_2d` in
/// <foundry/naive/stencil.cuh>.
///
///     out(x, y) = sum over i, j in [0, k) of  filter[i * k + j] * in(x + j - r, y + i - r)
///
/// with k = 2r + 1. The filter is not flipped (a cross-correlation, as in
/// OpenCV's filter2D and cuDNN); flip it for a convolution in the strict sense.
///
/// ## Where the filter lives: a `__grid_constant__` kernel parameter, not a `__constant__` symbol
/// The classic recipe copies the filter into a `__constant__` array with
/// `cudaMemcpyToSymbol` and launches. In a header-only library that array is a
/// separate global in every translation unit that includes the header, and
/// within one translation unit it is one global for every caller: two
/// convolutions with different filters enqueued on different streams would
/// both write it and race (the second copy may land while the first kernel still
/// reads). Making it safe would need a lock plus a stream-ordered copy and an
/// event per use, which serialises the streams, or one slot per in-flight call.
///
/// Instead the weights travel inside the kernel's parameter struct, passed
/// `const __grid_constant__`. Kernel parameters live in constant bank 0, so the
/// weights are read exactly as a `__constant__` array would be: through the
/// constant cache, broadcast to the warp, and (with the loops unrolled, indices
/// known at compile time) folded straight into the FMA as a `c[0x0][offset]`
/// operand with no load instruction at all. Each launch captures its own copy
/// of the parameters when it is enqueued, so there is no shared state: any
/// number of calls with different filters may run on any streams, or be
/// captured into CUDA graphs, and the caller's host array may be reused as soon
/// as the call returns. `__grid_constant__` (sm_70+) tells the compiler never
/// to copy the struct to local memory: the wider filters index the weights with
/// a loop variable (see `convolve_2d_policy::unroll_filter_columns`), and those
/// reads stay indexed constant-bank loads. The largest filter is 225 floats
/// (900 bytes), far inside the 4 KiB parameter limit.
///
/// ## How the fast kernel works
/// Each block owns a tile of `block_x × (block_y · rows_per_thread)` outputs.
/// It loads the tile plus an r-pixel halo into shared memory with 16-byte loads
/// (the left halo is padded to a multiple of four columns so that every chunk
/// is aligned), then each thread computes a column of `rows_per_thread`
/// outputs: the k·(rows + 2r) shared-memory reads of its window feed
/// k²·rows FMAs, and the filter radius is a template parameter so the loops
/// unroll (radius 1 to 7 is dispatched at run time to seven instantiations).
/// Border handling costs nothing in the interior: only chunks that cross the
/// image edge take the per-pixel clamp / zero path.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace foundry {

/// How pixels outside the image are read.
enum class border_mode {
  clamp,  ///< the nearest edge pixel (coordinates clamped into the image)
  zero,   ///< zero
};

/// A `width × height` image stored row by row, consecutive rows `pitch`
/// elements apart (`pitch >= width`; the elements between `width` and `pitch`
/// are neither read nor written). A view: it never owns the memory.
template <class T>
struct image_view {
  T* data = nullptr;
  std::size_t width = 0;
  std::size_t height = 0;
  std::size_t pitch = 0;  ///< in elements, not bytes
};

/// The filter sizes `convolve_2d` accepts: odd, from 3 to 15.
inline constexpr int min_filter_size = 3;
inline constexpr int max_filter_size = 15;

/// Tuning of the fast kernel, as a type (the values shape shared-memory arrays,
/// launch bounds and unrolled loops, so they are compile-time). Override by
/// deriving, and pass the result as the template argument:
/// `struct tall : foundry::convolve_2d_policy { static constexpr int rows_per_thread = 16; };`
/// then `foundry::convolve_2d<tall>(...)`.
/// Registers and spills (sm_90, CUDA 13.0, default policy): 40 registers for
/// radius 1-4, 64 for 5-7, no spills.
struct convolve_2d_policy {
  /// Threads per block along x; each thread owns one output column of the
  /// tile, so this is also the tile width. A multiple of 32 keeps the
  /// shared-memory reads conflict-free. Measured on the H200, 2026-12-02, 8192 × 8192
  /// (GB/s read + written; fraction of the same run's cudaMemcpy row,
  /// stencil_3x3/cudaMemcpy/8192x8192 4210 GB/s, stencil_5x5/cudaMemcpy/8192x8192
  /// 4190 GB/s). This default (64 × 4, 8 rows; row stencil_<k>x<k>/foundry/8192x8192):
  /// 3x3 3540 GB/s (0.842×), 5x5 2850 GB/s (0.680×). Candidates (rows
  /// stencil_<k>x<k>/foundry_<shape>/8192x8192):
  ///   foundry_128x2r8  3x3 3610 GB/s (0.859×)   5x5 2890 GB/s (0.690×)
  ///   foundry_64x4r16  3x3 3540 GB/s (0.842×)   5x5 2970 GB/s (0.708×)
  ///   foundry_128x4r8  3x3 3430 GB/s (0.815×)   5x5 2820 GB/s (0.672×)
  ///   foundry_32x8r8   3x3 3490 GB/s (0.830×)   5x5 2790 GB/s (0.665×)
  /// Against the default: block_x 128 (128 × 2) 1.02× at 3x3 and 1.01× at 5x5;
  /// block_x 32 (32 × 8) 0.986× and 0.977×. One round each; noise_pct 0.341–0.574% on
  /// these rows. The 9x9 and 15x15 filters were measured with the default only;
  /// block_x at those sizes was not measured.
  static constexpr int block_x = 64;
  /// Threads per block along y. 64 × 4 = 256 threads. Measured on the H200, 2026-12-02
  /// (figures above): 512 threads as 128 × 4 (3 blocks/SM) ran 0.969× the default
  /// at 3x3 and 0.988× at 5x5 (rows stencil_<k>x<k>/foundry_128x4r8/8192x8192); the
  /// other 256-thread shapes are above. block_y alone, at block_x 64, was not measured.
  static constexpr int block_y = 4;
  /// Outputs per thread, stacked vertically: a taller tile amortises the
  /// 2r halo rows, and the vertical window is reused from registers.
  /// Tile: 64 × 32 outputs. Measured on the H200, 2026-12-02 (figures above): 16 rows
  /// (64 × 4, 4 blocks/SM; rows stencil_<k>x<k>/foundry_64x4r16/8192x8192) ran 1.00× the
  /// default at 3x3 (3540 GB/s) and 1.04× at 5x5 (2970 against 2850 GB/s). Other
  /// row counts were not measured.
  static constexpr int rows_per_thread = 8;
  /// Resident blocks per SM promised to the compiler (`__launch_bounds__`),
  /// which caps registers at 65536 / (256 × this): 6 gives 40 registers, the
  /// fewest with which ptxas does not spill (sm_90, CUDA 13.0) up to radius 4;
  /// the wider filters need 64 (4 blocks). More resident blocks keep more
  /// tile loads in flight, which the small, memory-bound filters need.
  /// Not measured on its own (H200, 2026-12-02): no row varies only this value; the
  /// candidates that change it (64x4r16 at 4, 128x4r8 at 3/2) also change the tile.
  __host__ __device__ static constexpr int min_blocks_per_sm(int radius) { return radius <= 4 ? 6 : 4; }
  /// Whether the loop over filter columns unrolls too. Unrolled, every weight
  /// is an immediate constant-bank operand of its FMA; but past radius 3 the
  /// fully unrolled body makes ptxas hoist so many shared-memory loads that it
  /// needs 100-255 registers, so the wider filters keep a loop over columns
  /// and read the weights with an indexed constant load. Unrolled against looped was
  /// not measured (H200, 2026-12-02): only this default ran, e.g. 28.8 TFLOP/s at 9x9
  /// (row stencil_9x9/foundry/8192x8192) and 34.2 TFLOP/s at 15x15 (row
  /// stencil_15x15/foundry/8192x8192), both on the looped path.
  __host__ __device__ static constexpr bool unroll_filter_columns(int radius) { return radius <= 3; }
};

namespace detail {

/// The side k of a square filter of `elements` weights when k is odd and in
/// [3, 15], else 0.
constexpr int square_filter_side(std::size_t elements) noexcept {
  for (int k = min_filter_size; k <= max_filter_size; k += 2) {
    if (static_cast<std::size_t>(k) * static_cast<std::size_t>(k) == elements) return k;
  }
  return 0;
}

/// Elements from the first pixel of `v` to one past its last pixel.
template <class T>
constexpr std::size_t image_extent(const image_view<T>& v) noexcept {
  return (v.height - 1) * v.pitch + v.width;
}

/// The checks shared by `foundry::convolve_2d` and `foundry::naive::convolve_2d`.
/// Throws `std::invalid_argument`. Returns false when the image is empty.
inline bool check_convolve_2d_arguments(const image_view<const float>& in, const image_view<float>& out,
                                        cuda::std::span<const float> filter) {
  FOUNDRY_EXPECTS(square_filter_side(filter.size()) != 0,
                  "convolve_2d needs a square filter of odd size 3x3 to 15x15, got " +
                      std::to_string(filter.size()) + " weights");
  FOUNDRY_EXPECTS(filter.data() != nullptr, "convolve_2d: the filter pointer is null");
  FOUNDRY_EXPECTS(out.width == in.width && out.height == in.height,
                  "convolve_2d: the output is " + std::to_string(out.width) + "x" + std::to_string(out.height) +
                      " but the input is " + std::to_string(in.width) + "x" + std::to_string(in.height));
  FOUNDRY_EXPECTS(in.pitch >= in.width, "convolve_2d: input pitch " + std::to_string(in.pitch) +
                                            " is smaller than its width " + std::to_string(in.width));
  FOUNDRY_EXPECTS(out.pitch >= out.width, "convolve_2d: output pitch " + std::to_string(out.pitch) +
                                              " is smaller than its width " + std::to_string(out.width));
  if (in.width == 0 || in.height == 0) return false;
  FOUNDRY_EXPECTS(in.data != nullptr, "convolve_2d: the input pointer is null");
  FOUNDRY_EXPECTS(out.data != nullptr, "convolve_2d: the output pointer is null");
  constexpr std::size_t max_elements = std::numeric_limits<std::size_t>::max() / sizeof(float);
  FOUNDRY_EXPECTS(in.height - 1 <= (max_elements - in.width) / in.pitch &&
                      out.height - 1 <= (max_elements - out.width) / out.pitch,
                  "convolve_2d: height * pitch overflows the address range");
  // Every output depends on its neighbours' inputs, which other blocks may be
  // overwriting: the computation cannot run in place.
  const auto in_begin = reinterpret_cast<std::uintptr_t>(in.data);
  const auto in_end = in_begin + image_extent(in) * sizeof(float);
  const auto out_begin = reinterpret_cast<std::uintptr_t>(out.data);
  const auto out_end = out_begin + image_extent(out) * sizeof(float);
  FOUNDRY_EXPECTS(in_end <= out_begin || out_end <= in_begin,
                  "convolve_2d: the input and output memory ranges overlap (it cannot run in place)");
  return true;
}

/// Everything one launch needs, the weights included; passed `__grid_constant__`
/// so that it stays in the constant bank (see the file comment).
template <int Radius>
struct convolve_2d_params {
  static constexpr int size = 2 * Radius + 1;
  const float* input;
  float* output;
  std::int64_t width;
  std::int64_t height;
  std::int64_t input_pitch;
  std::int64_t output_pitch;
  std::int64_t tile_rows;  ///< tiles along y; the kernel loops over them when the grid is capped
  border_mode border;
  bool vector_loads;  ///< input and pitch allow aligned 16-byte loads
  float weights[size * size];
};

/// One input pixel, (x, y) possibly outside the image.
template <int Radius>
__device__ __forceinline__ float load_pixel(const convolve_2d_params<Radius>& p, std::int64_t x, std::int64_t y) {
  if (p.border == border_mode::clamp) {
    x = x < 0 ? 0 : (x >= p.width ? p.width - 1 : x);
    y = y < 0 ? 0 : (y >= p.height ? p.height - 1 : y);
    return __ldg(p.input + y * p.input_pitch + x);
  }
  const bool inside = x >= 0 && x < p.width && y >= 0 && y < p.height;
  return inside ? __ldg(p.input + y * p.input_pitch + x) : 0.0f;
}

/// Four consecutive input pixels from (x, y); one 16-byte load when they are all
/// inside the image and aligned, four bordered loads otherwise.
template <int Radius>
__device__ __forceinline__ float4 load_chunk(const convolve_2d_params<Radius>& p, std::int64_t x, std::int64_t y) {
  if (p.vector_loads && y >= 0 && y < p.height && x >= 0 && x + 4 <= p.width) {
    return __ldg(reinterpret_cast<const float4*>(p.input + y * p.input_pitch + x));
  }
  return make_float4(load_pixel(p, x, y), load_pixel(p, x + 1, y), load_pixel(p, x + 2, y), load_pixel(p, x + 3, y));
}

template <int Radius, class Policy>
__global__ void __launch_bounds__(Policy::block_x* Policy::block_y, Policy::min_blocks_per_sm(Radius))
    convolve_2d_kernel(const __grid_constant__ convolve_2d_params<Radius> p) {
  constexpr int k = 2 * Radius + 1;
  constexpr int rows = Policy::rows_per_thread;
  constexpr int threads = Policy::block_x * Policy::block_y;
  constexpr int tile_w = Policy::block_x;
  constexpr int tile_h = Policy::block_y * rows;
  // The halo columns are padded to a multiple of four so that tile_x0 - pad is
  // a multiple of four: every 16-byte chunk of a row is aligned in global and
  // in shared memory.
  constexpr int pad = round_up(Radius, 4);
  constexpr int s_w = tile_w + 2 * pad;
  constexpr int s_h = tile_h + 2 * Radius;
  constexpr int chunks_per_row = s_w / 4;
  constexpr int chunks = s_h * chunks_per_row;
  constexpr int chunks_per_thread = ceil_div(chunks, threads);
  constexpr int unroll_columns = Policy::unroll_filter_columns(Radius) ? k : 1;
  static_assert(tile_w % 4 == 0, "block_x must be a multiple of 4 for the 16-byte tile loads");
  static_assert(s_w * s_h * sizeof(float) <= 48 * 1024, "the tile and its halo must fit in 48 KiB of shared memory");

  // Chunk i sits at s_tile[4 i]: consecutive threads store consecutive 16 bytes (no bank conflicts).
  __shared__ float4 s_tile4[chunks];
  const float* s_tile = reinterpret_cast<const float*>(s_tile4);

  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int tid = ty * Policy::block_x + tx;
  const std::int64_t tile_x0 = std::int64_t{blockIdx.x} * tile_w;
  const std::int64_t x = tile_x0 + tx;

  for (std::int64_t tile_row = blockIdx.y; tile_row < p.tile_rows; tile_row += gridDim.y) {
    const std::int64_t tile_y0 = tile_row * tile_h;

    // Stage 1: global -> registers -> shared. All loads are issued before the
    // first store waits on one, so each thread keeps chunks_per_thread 16-byte
    // loads in flight.
    float4 r_chunk[chunks_per_thread];
#pragma unroll
    for (int c = 0; c < chunks_per_thread; ++c) {
      const int i = tid + c * threads;
      if (chunks % threads == 0 || i < chunks) {
        const int row = i / chunks_per_row;
        const int col = i - row * chunks_per_row;
        r_chunk[c] = load_chunk(p, tile_x0 - pad + 4 * col, tile_y0 - Radius + row);
      }
    }
#pragma unroll
    for (int c = 0; c < chunks_per_thread; ++c) {
      const int i = tid + c * threads;
      if (chunks % threads == 0 || i < chunks) s_tile4[i] = r_chunk[c];
    }
    __syncthreads();

    // Stage 2: a column of `rows` outputs per thread. Input row `in_row` of the
    // window contributes to output o through filter row in_row - o.
    float r_acc[rows];
#pragma unroll
    for (int o = 0; o < rows; ++o) r_acc[o] = 0.0f;
    const float* s_window = s_tile + ty * rows * s_w + (pad - Radius) + tx;
#pragma unroll unroll_columns
    for (int j = 0; j < k; ++j) {
#pragma unroll
      for (int in_row = 0; in_row < rows + 2 * Radius; ++in_row) {
        const float v = s_window[in_row * s_w + j];
#pragma unroll
        for (int i = 0; i < k; ++i) {
          const int o = in_row - i;
          if (o >= 0 && o < rows) r_acc[o] = fmaf(p.weights[i * k + j], v, r_acc[o]);
        }
      }
    }

    // Stage 3: each warp stores 32 consecutive floats of a row per instruction.
    if (x < p.width) {
#pragma unroll
      for (int o = 0; o < rows; ++o) {
        const std::int64_t y = tile_y0 + ty * rows + o;
        if (y < p.height) p.output[y * p.output_pitch + x] = r_acc[o];
      }
    }
    __syncthreads();  // the next tile overwrites s_tile
  }
}

/// Enqueues the fast kernel for one filter radius.
template <int Radius, class Policy>
void launch_convolve_2d(const image_view<const float>& in, const image_view<float>& out,
                        cuda::std::span<const float> filter, border_mode border, cuda::stream_ref s) {
  constexpr int tile_w = Policy::block_x;
  constexpr int tile_h = Policy::block_y * Policy::rows_per_thread;
  convolve_2d_params<Radius> p{};
  p.input = in.data;
  p.output = out.data;
  p.width = static_cast<std::int64_t>(in.width);
  p.height = static_cast<std::int64_t>(in.height);
  p.input_pitch = static_cast<std::int64_t>(in.pitch);
  p.output_pitch = static_cast<std::int64_t>(out.pitch);
  p.tile_rows = static_cast<std::int64_t>(ceil_div<std::size_t>(in.height, tile_h));
  p.border = border;
  p.vector_loads = is_aligned(in.data, 16) && in.pitch % 4 == 0;
  for (std::size_t w = 0; w < filter.size(); ++w) p.weights[w] = filter[w];

  launch_config c;
  c.block = dim3(Policy::block_x, Policy::block_y, 1);
  // Tiles along y beyond the grid limit are covered by the kernel's loop; along
  // x the 2^31 - 1 blocks cover any image that fits in memory.
  c.grid = dim3(capped_blocks(in.width, tile_w, max_grid_x), capped_blocks(in.height, tile_h, max_grid_yz), 1);
  launch(s, c, convolve_2d_kernel<Radius, Policy>, p);
}

}  // namespace detail

/// Convolves `input` with the k×k `filter` into `output` (see the file comment
/// for the formula), reading pixels outside the image as `border` says.
///
/// - `input`, `output`: device-accessible images of the same width and height;
///   each has its own pitch. Their memory ranges must not overlap.
/// - `filter`: k·k weights in **host** memory, row-major, k odd in [3, 15]. They
///   are copied into the launch's parameters, so the array may be changed or
///   freed as soon as the call returns.
/// - Asynchronous: enqueues one kernel on `s` and returns. An empty image
///   (width or height 0) enqueues nothing; its pointers may then be null.
/// - Throws `std::invalid_argument` for a filter that is not a square of odd
///   side 3..15, null pointers, a pitch smaller than the width, differing input
///   and output sizes, or overlapping images; `cuda_error` if the launch fails.
/// - Vector loads need a 16-byte aligned input and a pitch that is a multiple of
///   4; otherwise the same kernel loads pixel by pixel (correct, slower).
template <class Policy = convolve_2d_policy>
void convolve_2d(image_view<const float> input, image_view<float> output, cuda::std::span<const float> filter,
                 border_mode border, cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  if (!detail::check_convolve_2d_arguments(input, output, filter)) return;
  // The radius is a template parameter so that the filter loops unroll and
  // every weight becomes a constant-bank operand of its FMA.
  switch (detail::square_filter_side(filter.size()) / 2) {
    case 1: detail::launch_convolve_2d<1, Policy>(input, output, filter, border, s); break;
    case 2: detail::launch_convolve_2d<2, Policy>(input, output, filter, border, s); break;
    case 3: detail::launch_convolve_2d<3, Policy>(input, output, filter, border, s); break;
    case 4: detail::launch_convolve_2d<4, Policy>(input, output, filter, border, s); break;
    case 5: detail::launch_convolve_2d<5, Policy>(input, output, filter, border, s); break;
    case 6: detail::launch_convolve_2d<6, Policy>(input, output, filter, border, s); break;
    case 7: detail::launch_convolve_2d<7, Policy>(input, output, filter, border, s); break;
    default: break;  // unreachable: check_convolve_2d_arguments accepted the size
  }
}

}  // namespace foundry
