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
/// ## How the fast kernels work
/// Two kernels; the policy picks one per filter radius at compile time
/// (`convolve_2d_policy::use_register_blocked`).
///
/// **Small filters (3×3, 5×5 by default): the register-blocked kernel**
/// (`convolve_2d_register_blocked_kernel`). At 5×5 the image must stream at
/// >= 0.8× the copy bandwidth, 0.159 ms per 8192² image, while doing 25 FMAs per
/// output. Two things stand in the way of the simple tiled kernel below:
/// 1. *Shared-memory reads.* One scalar read per tap is 25 × 4 B × 67 M outputs
///    = 6.7 GB in 0.159 ms = 42 TB/s, above the H200's 33 TB/s of shared
///    bandwidth (132 SMs × 128 B/clk × 1.98 GHz), and every read is also an
///    issued instruction. So each thread computes a `cols × rows` block of
///    outputs: each input row of its window is read once, as `cols`-float
///    vectors (three 16-byte reads cover the 4 + 2r ≤ 12 columns that 4 outputs
///    need, r ≤ 4), and applied from registers to every output of the block
///    that needs it (all k filter rows, all `cols` columns). At 4 × 4 outputs and
///    r = 2 that is 3 × 8 = 24 vector reads for 16 outputs × 25 taps.
/// 2. *Load, then compute, then load.* A block that loads its tile, waits, and
///    computes has no bytes in flight while it computes; only the other resident
///    blocks hide that. Here each block is persistent: it walks over tiles
///    (tile b, b + G, b + 2G, … of a row-major order, G the grid size), and
///    while it computes tile t the `cp.async` copies of tile t + G into the
///    second of two shared buffers are already in flight, with no registers
///    held for them.
/// The tile and its halo are copied in 16-byte chunks (the left and right halos
/// are padded to 4 columns, so every chunk is aligned). Chunks that cross the
/// image edge, or an input that allows no 16-byte loads, take the per-pixel
/// clamp / zero path with plain loads and shared stores. Outputs leave as
/// `cols`-float vector stores when the output allows it.
///
/// **Wider filters: the column kernel** (`convolve_2d_kernel`). Each block owns
/// a tile of `block_x × (block_y · rows_per_thread)` outputs. It loads the tile
/// plus an r-pixel halo into shared memory with 16-byte loads (the left halo is
/// padded to a multiple of four columns so that every chunk is aligned), then
/// each thread computes a column of `rows_per_thread` outputs: the
/// k·(rows + 2r) shared-memory reads of its window feed k²·rows FMAs.
///
/// In both, the filter radius is a template parameter so the loops unroll
/// (radius 1 to 7 is dispatched at run time to seven instantiations), and
/// border handling costs nothing in the interior: only chunks that cross the
/// image edge take the per-pixel path.

#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/runtime/device.cuh>
#include <foundry/thread/async_copy.cuh>
#include <foundry/thread/vector.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

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

/// Tuning of the register-blocked kernel (small filters; see the file comment).
/// A block of `block_x × block_y` threads computes a tile of
/// `(block_x · cols_per_thread) × (block_y · rows_per_thread)` outputs; each
/// thread a `cols_per_thread × rows_per_thread` block of them. Override by
/// deriving, through `convolve_2d_policy::register_blocked` (see there).
/// Registers and spills (sm_90, CUDA 13.0, `-Xptxas -v`, this default): 62 registers
/// at radius 1, 64 at radius 2 (the launch-bounds cap), no spills; 37.0 and 39.2 KB
/// of shared memory.
/// Predicted, not yet measured on the H200 (the column kernel's 5x5 reached
/// 2850 GB/s, 0.680× cudaMemcpy): memory-bound at about 0.85× cudaMemcpy for both
/// 3x3 and 5x5 (STENCIL_NOTES.md has the arithmetic); rows
/// stencil_<k>x<k>/foundry/8192x8192 and the candidates
/// stencil_<k>x<k>/foundry_<block_x>x<block_y>c<cols>r<rows>/8192x8192.
struct convolve_2d_register_blocked_policy {
  /// Threads along x. With 4 columns per thread, a quarter-warp's 16-byte
  /// shared reads cover 128 contiguous bytes: conflict-free for any block_x >= 8.
  static constexpr int block_x = 32;
  /// Threads along y: 32 × 8 = 256 threads.
  static constexpr int block_y = 8;
  /// Adjacent outputs per thread along x, and the width (in floats) of its
  /// shared-memory reads: 1, 2 or 4. Four outputs need 4 + 2r input columns,
  /// read as three 16-byte vectors for any r <= 4, against k scalar reads per
  /// output with one column per thread.
  static constexpr int cols_per_thread = 4;
  /// Outputs per thread along y: each input row is read once and applied to
  /// every output row of the thread that needs it (a vertical sliding window in
  /// registers), so shared reads per output fall as (rows + 2r) / rows.
  /// 4 × 4 = 16 accumulators: few enough registers for 4 blocks of 256 threads.
  static constexpr int rows_per_thread = 4;
  /// Resident blocks per SM promised to the compiler (`__launch_bounds__`), which
  /// caps registers at 65536 / (threads × this) = 64. The double-buffered tile
  /// (2 × 136 × 36 floats = 38.3 KiB at r = 2) allows 5 per SM in 227 KiB; the
  /// grid is sized from the occupancy the compiled kernel really has.
  static constexpr int min_blocks_per_sm = 4;
};

/// Tuning of the fast kernels, as a type (the values shape shared-memory arrays,
/// launch bounds and unrolled loops, so they are compile-time). Override by
/// deriving, and pass the result as the template argument:
/// `struct tall : foundry::convolve_2d_policy { static constexpr int rows_per_thread = 16; };`
/// then `foundry::convolve_2d<tall>(...)`.
/// Registers and spills of the column kernel (sm_90, CUDA 13.0, default policy): 40 registers for
/// radius 1-4, 64 for 5-7, no spills.
///
/// The figures below for the column kernel's values were measured when it also ran
/// 3x3 and 5x5 (2026-12-02): the rows stencil_3x3/foundry and stencil_5x5/foundry of
/// that round are the column kernel; from the register-blocked kernel on, those rows
/// are the register-blocked kernel, and the column kernel's 3x3 and 5x5 rows are the
/// candidates foundry_128x2r8 and foundry_64x4r16 (foundry_128x4r8 and foundry_32x8r8
/// are no longer registered).
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

  /// Which radii run the register-blocked kernel (the others run the column
  /// kernel tuned by the values above). Radius 1 and 2 (3x3, 5x5): there the
  /// image must stream at copy speed, and the column kernel's 5x5 reached only
  /// 0.680× cudaMemcpy (H200, 2026-12-02, figures above). The wider filters are
  /// FMA-bound; whether the register-blocked kernel also wins there is measured by
  /// the candidate rows stencil_9x9/foundry_32x4c4r4 and stencil_15x15/foundry_32x4c4r4
  /// (not yet run). At the default 128 × 32 tile their double buffer would not fit
  /// the 48 KiB of static shared memory from radius 5 on (static_assert).
  __host__ __device__ static constexpr bool use_register_blocked(int radius) { return radius <= 2; }
  /// The register-blocked kernel's tile; replace it with a type derived from
  /// `convolve_2d_register_blocked_policy`:
  /// `struct p : foundry::convolve_2d_policy { struct register_blocked : foundry::convolve_2d_register_blocked_policy { static constexpr int rows_per_thread = 8; }; };`
  using register_blocked = convolve_2d_register_blocked_policy;
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
  std::int64_t tile_rows;  ///< column kernel: tiles along y; it loops over them when the grid is capped
  std::int64_t tiles_x;    ///< register-blocked kernel: tiles along x ...
  std::int64_t tiles_y;    ///< ... and along y
  std::int64_t step_rows;  ///< register-blocked kernel: a block's next tile is step_rows tile rows
  std::int64_t step_cols;  ///< and step_cols tile columns further (gridDim.x tiles in row-major order)
  border_mode border;
  bool vector_loads;   ///< input and pitch allow aligned 16-byte loads
  bool vector_stores;  ///< output and pitch allow aligned 16-byte stores
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

/// Enqueues the column kernel for one filter radius.
template <int Radius, class Policy>
void launch_convolve_2d_columns(const image_view<const float>& in, const image_view<float>& out,
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

/// The compile-time geometry of the register-blocked kernel for one radius and tile.
template <int Radius, class Tile>
struct register_blocked_shape {
  static constexpr int k = 2 * Radius + 1;
  static constexpr int cols = Tile::cols_per_thread;
  static constexpr int rows = Tile::rows_per_thread;
  static constexpr int threads = Tile::block_x * Tile::block_y;
  static constexpr int tile_w = Tile::block_x * cols;  ///< outputs per tile along x
  static constexpr int tile_h = Tile::block_y * rows;  ///< and along y
  /// The halo columns on each side, padded to a multiple of four so that the
  /// first shared column, tile_x0 - pad, is a multiple of four: every 16-byte
  /// chunk of a row is aligned in global and in shared memory.
  static constexpr int pad = round_up(Radius, 4);
  static constexpr int s_w = tile_w + 2 * pad;     ///< floats per shared row
  static constexpr int s_h = tile_h + 2 * Radius;  ///< shared rows
  static constexpr int chunks_per_row = s_w / 4;
  static constexpr int chunks = s_h * chunks_per_row;  ///< 16-byte chunks per buffer
  static constexpr int chunks_per_thread = ceil_div(chunks, threads);
  /// A thread's outputs at tile columns cols·tx … cols·tx + cols - 1 read shared
  /// columns pad - r + cols·tx … pad + r + cols·tx + cols - 1: `vectors` aligned
  /// vectors of `cols` floats from vector number first_vector + tx, in which the
  /// first column needed is float number `window_offset`.
  static constexpr int first_vector = (pad - Radius) / cols;
  static constexpr int window_offset = (pad - Radius) % cols;
  static constexpr int vectors = (pad + Radius + cols - 1) / cols - first_vector + 1;

  static_assert(cols == 1 || cols == 2 || cols == 4, "cols_per_thread must be 1, 2 or 4");
  static_assert(window_offset + cols + 2 * Radius <= vectors * cols, "the vectors read cover the window");
  static_assert(tile_w % 4 == 0, "block_x * cols_per_thread must be a multiple of 4 for the 16-byte tile copies");
  static_assert(2 * chunks * 16 <= 48 * 1024,
                "the two tile buffers must fit in 48 KiB of static shared memory: use a smaller tile for this radius");
};

/// Copies into `s_tile` the input that the tile of outputs starting at (x0, y0)
/// reads: `cp.async` 16-byte copies for the chunks inside the image (when the
/// input allows aligned vector loads), per-pixel bordered loads and shared
/// stores for the others. Call `async_copy_commit` after it.
template <int Radius, class Shape>
__device__ __forceinline__ void stage_tile(const convolve_2d_params<Radius>& p, float4* s_tile, std::int64_t x0,
                                           std::int64_t y0, int tid) {
  const std::int64_t first_x = x0 - Shape::pad;  // image column of the tile's first shared column
  const std::int64_t first_y = y0 - Radius;      // and image row of its first shared row
  // Uniform across the block, true for all but the edge tiles: then no chunk needs a check.
  const bool all_inside = p.vector_loads && first_x >= 0 && first_y >= 0 && first_x + Shape::s_w <= p.width &&
                          first_y + Shape::s_h <= p.height;
#pragma unroll
  for (int c = 0; c < Shape::chunks_per_thread; ++c) {
    // Consecutive threads take consecutive chunks: 16-byte copies without bank conflicts.
    const int i = tid + c * Shape::threads;
    if (Shape::chunks % Shape::threads == 0 || i < Shape::chunks) {
      const int row = i / Shape::chunks_per_row;
      const int col = i - row * Shape::chunks_per_row;
      const std::int64_t x = first_x + 4 * col;
      const std::int64_t y = first_y + row;
      if (all_inside || (p.vector_loads && y >= 0 && y < p.height && x >= 0 && x + 4 <= p.width)) {
        async_copy_16(s_tile + i, p.input + y * p.input_pitch + x);
      } else {
        s_tile[i] = make_float4(load_pixel(p, x, y), load_pixel(p, x + 1, y), load_pixel(p, x + 2, y),
                                load_pixel(p, x + 3, y));
      }
    }
  }
}

/// Computes this thread's `cols × rows` outputs of the tile at (x0, y0) from the
/// staged input `s_tile`, and stores them.
template <int Radius, class Shape>
__device__ __forceinline__ void convolve_tile(const convolve_2d_params<Radius>& p, const float4* s_tile,
                                              std::int64_t x0, std::int64_t y0, int tx, int ty) {
  constexpr int k = Shape::k;
  constexpr int cols = Shape::cols;
  constexpr int rows = Shape::rows;
  using vec = aligned_vector<float, cols>;

  vec r_acc[rows];
#pragma unroll
  for (int o = 0; o < rows; ++o) {
#pragma unroll
    for (int c = 0; c < cols; ++c) r_acc[o][c] = 0.0f;
  }
  // The first vector of this thread's window in its first input row.
  const vec* s_window = reinterpret_cast<const vec*>(s_tile) + ty * rows * (Shape::s_w / cols) +
                        Shape::first_vector + tx;
  // Input row `in_row` of the window feeds output row o through filter row in_row - o:
  // read it once, apply it to every output that needs it, then forget it.
#pragma unroll
  for (int in_row = 0; in_row < rows + 2 * Radius; ++in_row) {
    float r_in[Shape::vectors * cols];
#pragma unroll
    for (int v = 0; v < Shape::vectors; ++v) {
      const vec chunk = s_window[in_row * (Shape::s_w / cols) + v];
#pragma unroll
      for (int c = 0; c < cols; ++c) r_in[v * cols + c] = chunk[c];
    }
#pragma unroll
    for (int i = 0; i < k; ++i) {
      const int o = in_row - i;
      if (o >= 0 && o < rows) {
#pragma unroll
        for (int j = 0; j < k; ++j) {
#pragma unroll
          for (int c = 0; c < cols; ++c) {
            r_acc[o][c] = fmaf(p.weights[i * k + j], r_in[Shape::window_offset + c + j], r_acc[o][c]);
          }
        }
      }
    }
  }

  // A warp stores block_x · cols consecutive floats of a row, as vectors when it may.
  const std::int64_t x = x0 + cols * tx;
#pragma unroll
  for (int o = 0; o < rows; ++o) {
    const std::int64_t y = y0 + ty * rows + o;
    if (y >= p.height || x >= p.width) continue;
    float* dst = p.output + y * p.output_pitch + x;
    if (p.vector_stores && x + cols <= p.width) {
      store_vector(dst, r_acc[o]);
    } else {
#pragma unroll
      for (int c = 0; c < cols; ++c) {
        if (x + c < p.width) dst[c] = r_acc[o][c];
      }
    }
  }
}

/// The register-blocked kernel (see the file comment). A persistent grid: block b
/// takes tiles b, b + G, b + 2G, … (G = gridDim.x) in row-major tile order, and
/// copies the next one into the other shared buffer while it computes the current.
template <int Radius, class Tile>
__global__ void __launch_bounds__(Tile::block_x* Tile::block_y, Tile::min_blocks_per_sm)
    convolve_2d_register_blocked_kernel(const __grid_constant__ convolve_2d_params<Radius> p) {
  using shape = register_blocked_shape<Radius, Tile>;
  __shared__ float4 s_tiles[2][shape::chunks];

  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int tid = ty * Tile::block_x + tx;

  // gridDim.x <= tiles_x · tiles_y (the launch ensures it): every block has a first tile.
  std::int64_t tile_row = std::int64_t{blockIdx.x} / p.tiles_x;
  std::int64_t tile_col = std::int64_t{blockIdx.x} - tile_row * p.tiles_x;
  stage_tile<Radius, shape>(p, s_tiles[0], tile_col * shape::tile_w, tile_row * shape::tile_h, tid);
  async_copy_commit();

  for (int buffer = 0; tile_row < p.tiles_y; buffer ^= 1) {
    // The next tile, G further in row-major order, without a 64-bit division.
    std::int64_t next_col = tile_col + p.step_cols;
    std::int64_t next_row = tile_row + p.step_rows;
    if (next_col >= p.tiles_x) {
      next_col -= p.tiles_x;
      ++next_row;
    }
    // Its copies fly while this tile is computed. The other buffer is free: every
    // thread passed the barrier at the end of the previous iteration.
    if (next_row < p.tiles_y) {
      stage_tile<Radius, shape>(p, s_tiles[buffer ^ 1], next_col * shape::tile_w, next_row * shape::tile_h, tid);
    }
    async_copy_commit();  // possibly empty: the wait below then still means "the current tile landed"
    async_copy_wait<1>();
    __syncthreads();  // every thread's copies and bordered stores of the current tile are visible

    convolve_tile<Radius, shape>(p, s_tiles[buffer], tile_col * shape::tile_w, tile_row * shape::tile_h, tx, ty);
    __syncthreads();  // the next iteration copies into this buffer
    tile_col = next_col;
    tile_row = next_row;
  }
}

/// Enqueues the register-blocked kernel for one filter radius: a persistent grid
/// of at most one wave of resident blocks, balanced so that every block has the
/// same number of tiles (give or take one).
template <int Radius, class Tile>
void launch_convolve_2d_register_blocked(const image_view<const float>& in, const image_view<float>& out,
                                         cuda::std::span<const float> filter, border_mode border,
                                         cuda::stream_ref s) {
  using shape = register_blocked_shape<Radius, Tile>;
  convolve_2d_params<Radius> p{};
  p.input = in.data;
  p.output = out.data;
  p.width = static_cast<std::int64_t>(in.width);
  p.height = static_cast<std::int64_t>(in.height);
  p.input_pitch = static_cast<std::int64_t>(in.pitch);
  p.output_pitch = static_cast<std::int64_t>(out.pitch);
  p.tiles_x = static_cast<std::int64_t>(ceil_div<std::size_t>(in.width, shape::tile_w));
  p.tiles_y = static_cast<std::int64_t>(ceil_div<std::size_t>(in.height, shape::tile_h));
  p.border = border;
  p.vector_loads = is_aligned(in.data, 16) && in.pitch % 4 == 0;
  p.vector_stores = is_aligned(out.data, 16) && out.pitch % 4 == 0;
  for (std::size_t w = 0; w < filter.size(); ++w) p.weights[w] = filter[w];

  const auto kernel = convolve_2d_register_blocked_kernel<Radius, Tile>;
  int blocks_per_sm = 0;
  FOUNDRY_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, shape::threads, 0));
  // Tiles per block, then the fewest blocks that cover the tiles with that many each: with
  // one wave of 528 slots and 16384 tiles, 512 blocks of 32 tiles finish together, where
  // 528 blocks would leave 16 of them alone on a 32nd tile at the end.
  const std::int64_t tiles = p.tiles_x * p.tiles_y;  // < 2^36 for any image that fits in memory
  const std::int64_t resident = std::int64_t{resident_grid_blocks(blocks_per_sm)};
  const std::int64_t blocks = ceil_div(tiles, ceil_div(tiles, resident));
  p.step_rows = blocks / p.tiles_x;
  p.step_cols = blocks % p.tiles_x;

  launch_config c;
  c.block = dim3(Tile::block_x, Tile::block_y, 1);
  c.grid = dim3(static_cast<unsigned>(blocks), 1, 1);
  launch(s, c, kernel, p);
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
///   4; otherwise the same kernel loads pixel by pixel (correct, slower). Likewise
///   the register-blocked kernel stores vectors only to a 16-byte aligned output
///   whose pitch is a multiple of 4.
template <class Policy = convolve_2d_policy>
void convolve_2d(image_view<const float> input, image_view<float> output, cuda::std::span<const float> filter,
                 border_mode border, cuda::stream_ref s) {
  FOUNDRY_NVTX_FUNCTION_RANGE();
  if (!detail::check_convolve_2d_arguments(input, output, filter)) return;
  // The radius is a template parameter so that the filter loops unroll and
  // every weight becomes a constant-bank operand of its FMA; the policy picks the
  // kernel per radius at compile time.
  const auto run = [&](auto radius) {
    constexpr int r = decltype(radius)::value;
    if constexpr (Policy::use_register_blocked(r)) {
      detail::launch_convolve_2d_register_blocked<r, typename Policy::register_blocked>(input, output, filter, border,
                                                                                       s);
    } else {
      detail::launch_convolve_2d_columns<r, Policy>(input, output, filter, border, s);
    }
  };
  switch (detail::square_filter_side(filter.size()) / 2) {
    case 1: run(std::integral_constant<int, 1>{}); break;
    case 2: run(std::integral_constant<int, 2>{}); break;
    case 3: run(std::integral_constant<int, 3>{}); break;
    case 4: run(std::integral_constant<int, 4>{}); break;
    case 5: run(std::integral_constant<int, 5>{}); break;
    case 6: run(std::integral_constant<int, 6>{}); break;
    case 7: run(std::integral_constant<int, 7>{}); break;
    default: break;  // unreachable: check_convolve_2d_arguments accepted the size
  }
}

}  // namespace foundry
