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
/// to copy the struct to local memory, even where a loop indexes the weights
/// with a variable (the one-column kernel's wider filters, see
/// `convolve_2d_policy::unroll_filter_columns`): those reads stay indexed
/// constant-bank loads. The largest filter is 225 floats (900 bytes), far inside
/// the 4 KiB parameter limit.
///
/// ## How the fast kernel works
/// Each block owns a tile of outputs. It loads the tile plus an r-pixel halo
/// into shared memory with 16-byte loads (the left halo is padded to a multiple
/// of four columns so that every chunk is aligned), then each thread computes
/// a block of `rows × cols` outputs. With 2 or 4 columns it walks down the
/// rows + 2r input rows of its window, reads each row once from shared memory
/// as the aligned float2 / float4 vectors that cover its cols + 2r floats, and
/// applies it from registers to every output row and column that needs it
/// (k²·rows·cols FMAs per thread); with 1 column it reads the k taps of each
/// input row as scalars. Outputs leave as one vector per row when the output
/// and its pitch are aligned for it, element by element otherwise. The filter radius is a template
/// parameter so that the loops unroll (radius 1 to 7 is dispatched at run time
/// to seven instantiations). Border handling costs nothing in the interior:
/// tiles whose halo lies inside the image skip the tests, and only chunks that
/// cross the image edge take the per-pixel clamp / zero path.

#include <foundry/algorithms/detail/checks.cuh>
#include <foundry/core/error.cuh>
#include <foundry/core/math.cuh>
#include <foundry/launch/launch.cuh>
#include <foundry/launch/launch_bounds.cuh>
#include <foundry/launch/launch_config.cuh>
#include <foundry/util/nvtx.cuh>

#include <cuda_runtime_api.h>
#include <cuda/std/span>
#include <cuda/stream_ref>

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
  /// First pixel (row 0, column 0); rows are `width` elements apart.
  T* data = nullptr;
  /// Pixels per row.
  std::size_t width = 0;
  /// Rows.
  std::size_t height = 0;
  std::size_t pitch = 0;  ///< in elements, not bytes
};

/// The filter sizes `convolve_2d` accepts: odd, from 3 to 15.
inline constexpr int min_filter_size = 3;
/// Largest filter side `convolve_2d` accepts (15 × 15: the constant bank holds the weights).
inline constexpr int max_filter_size = 15;

/// Tuning of the fast kernel, as a type (the values shape shared-memory arrays,
/// launch bounds and unrolled loops, so they are compile-time; all but
/// `unroll_filter_columns` are functions of the filter radius). Override by
/// deriving, and pass the result as the template argument:
///
///     struct one_column : foundry::convolve_2d_policy {
///       __host__ __device__ static constexpr int columns_per_thread(int) { return 1; }
///       __host__ __device__ static constexpr int rows_per_thread(int) { return 8; }
///       __host__ __device__ static constexpr int min_blocks_per_sm(int r) { return r <= 4 ? 6 : 4; }
///     };
///     foundry::convolve_2d<one_column>(in, out, filter, foundry::border_mode::clamp, stream);
///
/// The members depend on one another (static functions are not virtual: the
/// base's `block_y` calls the base's `block_x`, its `rows_per_thread` the base's
/// `columns_per_thread`), so override the shape members together: the tile plus
/// its halo must fit in 48 KiB (a static_assert says so), and the register cap
/// that `min_blocks_per_sm` implies must hold the `columns × rows` accumulators
/// (check with `-Xptxas -v`: a shape that spills is slow, not wrong).
///
/// A block of `block_x × block_y` threads owns a tile of
/// `block_x · columns_per_thread` × `block_y · rows_per_thread` outputs.
///
/// Figures below: H200, 8192 × 8192 float image, GB/s read + written and the
/// fraction of cudaMemcpy in the same run. "Committed" figures were measured on the
/// shapes the policy has; "probe" figures on candidates since dropped.
/// Registers (sm_90, CUDA 13.0, `-Xptxas -v`), default policy, radius 1 to 7:
/// 64, 64, 77, 80, 72, 72, 80; no spills.
struct convolve_2d_policy {
  /// Threads per block along x. The threads of a warp read consecutive
  /// elements (or vectors) of a shared-memory row, so a multiple of 32 keeps
  /// those reads conflict-free. 64 × 4 up to radius 4 and 32 × 8 beyond: tiles
  /// of 128 × 32 both, with the columns and rows below. Committed: at 15x15
  /// 32 × 8 ran 45.5 TFLOP/s, 64 × 4 (a 256 × 16 tile, whose 14 halo rows nearly
  /// double the shared-memory fill; it also spills 52 bytes) 41.1; at 5x5 64 × 4
  /// ran 3449 GB/s, 32 × 8 3408 and 128 × 2 3406; at 3x3 3912, 3821 and 3895.
  __host__ __device__ static constexpr int block_x(int radius) { return radius <= 4 ? 64 : 32; }
  /// Threads per block along y: 256 threads in all.
  __host__ __device__ static constexpr int block_y(int radius) { return 256 / block_x(radius); }
  /// Output columns per thread: 1, 2 or 4. With 1 a thread owns one column of
  /// the tile and reads its window scalar by scalar, k reads per input row: at
  /// 5x5 those reads, with the FMAs, made the kernel issue-bound. With 2 or 4 it
  /// owns a block of columns and reads each input row of its window once, as
  /// float2 / float4 vectors, applying every tap from registers.
  ///   3x3: 2 columns 3912 GB/s (0.929×), 1 column 3757 (0.892×; committed);
  ///        4 columns × 4 rows 3234 (0.774×; probe);
  ///   5x5: 2 columns 3449 (0.822×), 1 column 3078 (0.734×; 16 rows 3277;
  ///        committed); 4 columns × 4 rows 2996 (0.718×; probe);
  ///   9x9: 2 columns 38.9 TFLOP/s, 4 columns (32 × 8 × 4 rows) 38.4, 1 column
  ///        32.5 (committed);
  ///   15x15: 4 columns 45.5 TFLOP/s, 1 column 35.2 (committed).
  /// Nsight Compute at 5x5 (probe build, clocks locked by the profiler): 48
  /// thread instructions per output for 2 columns (25 of them FMAs), issue
  /// slots 75 % busy, DRAM 58 %; 4 columns issue slightly fewer instructions but
  /// stall more (issue 60 % busy; a third of their shared-memory wavefronts are
  /// bank conflicts), hence 2 for the small filters.
  __host__ __device__ static constexpr int columns_per_thread(int radius) { return radius <= 4 ? 2 : 4; }
  /// Outputs per thread, stacked vertically: a taller tile amortises the 2r
  /// halo rows, and the vertical window is reused from registers. 2 columns × 16
  /// rows need more than 64 registers (5x5, 128 threads, 116 registers: 2991 GB/s,
  /// 0.711×, probe); 4 columns take 4 rows for the same reason (8 rows spill).
  __host__ __device__ static constexpr int rows_per_thread(int radius) {
    return columns_per_thread(radius) == 4 ? 4 : 8;
  }
  /// Resident blocks per SM promised to the compiler (`__launch_bounds__`),
  /// which caps registers at 65536 / (256 × this): 4 gives 64 registers, enough
  /// for 2 columns × 8 rows up to radius 2 without spills; the wider filters
  /// need 72-80 (3 blocks). 5 (48 registers) and 6 (40) spill 52-164 bytes at
  /// radius 1-2 and were not run.
  __host__ __device__ static constexpr int min_blocks_per_sm(int radius) { return radius <= 2 ? 4 : 3; }
  /// Whether the one-column kernel (`columns_per_thread` 1, not the default at
  /// any radius) unrolls its loop over filter columns too. Unrolled, every
  /// weight is an immediate constant-bank operand of its FMA; but past radius 3
  /// the fully unrolled body makes ptxas hoist so many shared-memory loads that
  /// it needs 100-255 registers, so the wider filters keep a loop over columns
  /// and read the weights with an indexed constant load (committed: 32.5 TFLOP/s
  /// at 9x9 and 35.2 at 15x15, rows stencil_<k>x<k>/foundry_64x4c1r8/8192x8192).
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
  FOUNDRY_EXPECTS(
      square_filter_side(filter.size()) != 0,
      "convolve_2d needs a square filter of odd size 3x3 to 15x15, got " + std::to_string(filter.size()) + " weights");
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
  FOUNDRY_EXPECTS(
      in.height - 1 <= (max_elements - in.width) / in.pitch && out.height - 1 <= (max_elements - out.width) / out.pitch,
      "convolve_2d: height * pitch overflows the address range");
  // Every output depends on its neighbours' inputs, which other blocks may be
  // overwriting: the computation cannot run in place.
  const auto in_begin = reinterpret_cast<std::uintptr_t>(in.data);
  const auto out_begin = reinterpret_cast<std::uintptr_t>(out.data);
  expect_no_forbidden_overlap({in_begin, in_begin + image_extent(in) * sizeof(float)}, sizeof(float),
                              {out_begin, out_begin + image_extent(out) * sizeof(float)}, sizeof(float),
                              overlap_rule::disjoint, "convolve_2d: the input and output memory ranges");
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
  bool vector_loads;   ///< input and pitch allow aligned 16-byte loads
  bool vector_stores;  ///< output and pitch allow one aligned store per row of a thread's outputs
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

/// `cols` consecutive floats as one aligned vector: what a thread reads of a
/// window row, or writes of an output row, in one instruction.
template <int Cols>
struct float_vector;
template <>
struct float_vector<1> {
  using type = float;
  __device__ static void unpack(float v, float* f) { f[0] = v; }
  __device__ static float pack(const float* f) { return f[0]; }
};
template <>
struct float_vector<2> {
  using type = float2;
  __device__ static void unpack(float2 v, float* f) {
    f[0] = v.x;
    f[1] = v.y;
  }
  __device__ static float2 pack(const float* f) { return make_float2(f[0], f[1]); }
};
template <>
struct float_vector<4> {
  using type = float4;
  __device__ static void unpack(float4 v, float* f) {
    f[0] = v.x;
    f[1] = v.y;
    f[2] = v.z;
    f[3] = v.w;
  }
  __device__ static float4 pack(const float* f) { return make_float4(f[0], f[1], f[2], f[3]); }
};

template <int Radius, class Policy>
__global__ void __launch_bounds__(Policy::block_x(Radius) * Policy::block_y(Radius),
                                  resident_blocks_bound(Policy::block_x(Radius) * Policy::block_y(Radius),
                                                        Policy::min_blocks_per_sm(Radius)))
    convolve_2d_kernel(const __grid_constant__ convolve_2d_params<Radius> p) {
  constexpr int k = 2 * Radius + 1;
  constexpr int rows = Policy::rows_per_thread(Radius);
  constexpr int cols = Policy::columns_per_thread(Radius);
  constexpr int threads = Policy::block_x(Radius) * Policy::block_y(Radius);
  constexpr int tile_w = Policy::block_x(Radius) * cols;
  constexpr int tile_h = Policy::block_y(Radius) * rows;
  // The halo columns are padded to a multiple of four so that tile_x0 - pad is
  // a multiple of four: every 16-byte chunk of a row is aligned in global and
  // in shared memory.
  constexpr int pad = round_up(Radius, 4);
  constexpr int s_w = tile_w + 2 * pad;
  constexpr int s_h = tile_h + 2 * Radius;
  constexpr int chunks_per_row = s_w / 4;
  constexpr int chunks = s_h * chunks_per_row;
  constexpr int chunks_per_thread = ceil_div(chunks, threads);
  static_assert(cols == 1 || cols == 2 || cols == 4, "columns_per_thread must be 1, 2 or 4");
  static_assert(tile_w % 4 == 0, "block_x * columns_per_thread must be a multiple of 4 for the 16-byte tile loads");
  static_assert(s_w * s_h * sizeof(float) <= 48 * 1024, "the tile and its halo must fit in 48 KiB of shared memory");
  using vector = float_vector<cols>;

  // Chunk i sits at s_tile[4 i]: consecutive threads store consecutive 16 bytes (no bank conflicts).
  __shared__ float4 s_tile4[chunks];
  const float* s_tile = reinterpret_cast<const float*>(s_tile4);

  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int tid = ty * Policy::block_x(Radius) + tx;
  const std::int64_t tile_x0 = std::int64_t{blockIdx.x} * tile_w;
  const std::int64_t x = tile_x0 + cols * tx;  // this thread's first output column

  for (std::int64_t tile_row = blockIdx.y; tile_row < p.tile_rows; tile_row += gridDim.y) {
    const std::int64_t tile_y0 = tile_row * tile_h;

    // Stage 1: global -> registers -> shared. All loads are issued before the
    // first store waits on one, so each thread keeps chunks_per_thread 16-byte
    // loads in flight. A tile whose halo lies inside the image (all but the
    // edge tiles) skips the per-chunk border tests.
    const std::int64_t s_x0 = tile_x0 - pad;
    const std::int64_t s_y0 = tile_y0 - Radius;
    const bool interior = p.vector_loads && s_x0 >= 0 && s_x0 + s_w <= p.width && s_y0 >= 0 && s_y0 + s_h <= p.height;
    float4 r_chunk[chunks_per_thread];
    if (interior) {  // block-uniform: two separate loops, so that the fast one carries no border code
      const float* s_origin = p.input + s_y0 * p.input_pitch + s_x0;
#pragma unroll
      for (int c = 0; c < chunks_per_thread; ++c) {
        const int i = tid + c * threads;
        if (chunks % threads == 0 || i < chunks) {
          const int row = i / chunks_per_row;
          const int col = i - row * chunks_per_row;
          r_chunk[c] = __ldg(reinterpret_cast<const float4*>(s_origin + row * p.input_pitch) + col);
        }
      }
    } else {
#pragma unroll
      for (int c = 0; c < chunks_per_thread; ++c) {
        const int i = tid + c * threads;
        if (chunks % threads == 0 || i < chunks) {
          const int row = i / chunks_per_row;
          const int col = i - row * chunks_per_row;
          r_chunk[c] = load_chunk(p, s_x0 + 4 * col, s_y0 + row);
        }
      }
    }
#pragma unroll
    for (int c = 0; c < chunks_per_thread; ++c) {
      const int i = tid + c * threads;
      if (chunks % threads == 0 || i < chunks) s_tile4[i] = r_chunk[c];
    }
    __syncthreads();

    // Stage 2: a block of rows x cols outputs per thread. Input row `in_row` of
    // the window contributes to output row o through filter row in_row - o.
    float r_acc[rows][cols];
#pragma unroll
    for (int o = 0; o < rows; ++o) {
#pragma unroll
      for (int c = 0; c < cols; ++c) r_acc[o][c] = 0.0f;
    }
    if constexpr (cols == 1) {
      // One output column: k scalar reads per input row. The filter-column loop
      // is outermost so that the wide filters can keep it rolled (see
      // convolve_2d_policy::unroll_filter_columns).
      constexpr int unroll_columns = Policy::unroll_filter_columns(Radius) ? k : 1;
      const float* s_window = s_tile + ty * rows * s_w + (pad - Radius) + tx;
#pragma unroll unroll_columns
      for (int j = 0; j < k; ++j) {
#pragma unroll
        for (int in_row = 0; in_row < rows + 2 * Radius; ++in_row) {
          const float v = s_window[in_row * s_w + j];
#pragma unroll
          for (int i = 0; i < k; ++i) {
            const int o = in_row - i;
            if (o >= 0 && o < rows) r_acc[o][0] = fmaf(p.weights[i * k + j], v, r_acc[o][0]);
          }
        }
      }
    } else {
      // Several output columns: each input row of the window (cols + 2r floats)
      // is read once, as aligned vectors, and every tap of it is applied from
      // registers to all the outputs that need it.
      constexpr int lead = (pad - Radius) % cols;  // floats before the window in its first vector
      constexpr int vectors = ceil_div(lead + cols + 2 * Radius, cols);
      constexpr int vectors_per_row = s_w / cols;
      const auto* s_window = reinterpret_cast<const typename vector::type*>(s_tile) + ty * rows * vectors_per_row +
                             (pad - Radius) / cols + tx;
#pragma unroll
      for (int in_row = 0; in_row < rows + 2 * Radius; ++in_row) {
        float v[vectors * cols];
#pragma unroll
        for (int q = 0; q < vectors; ++q) vector::unpack(s_window[in_row * vectors_per_row + q], v + q * cols);
#pragma unroll
        for (int i = 0; i < k; ++i) {
          const int o = in_row - i;
          if (o >= 0 && o < rows) {
#pragma unroll
            for (int j = 0; j < k; ++j) {
#pragma unroll
              for (int c = 0; c < cols; ++c) r_acc[o][c] = fmaf(p.weights[i * k + j], v[lead + c + j], r_acc[o][c]);
            }
          }
        }
      }
    }

    // Stage 3: each warp stores 32 consecutive vectors of a row per instruction;
    // a thread whose columns cross the right edge stores element by element.
    const bool whole_vector = x + cols <= p.width && (cols == 1 || p.vector_stores);
#pragma unroll
    for (int o = 0; o < rows; ++o) {
      const std::int64_t y = tile_y0 + ty * rows + o;
      if (y >= p.height) break;
      float* out_row = p.output + y * p.output_pitch + x;
      if (whole_vector) {
        *reinterpret_cast<typename vector::type*>(out_row) = vector::pack(r_acc[o]);
      } else {
#pragma unroll
        for (int c = 0; c < cols; ++c) {
          if (x + c < p.width) out_row[c] = r_acc[o][c];
        }
      }
    }
    __syncthreads();  // the next tile overwrites s_tile
  }
}

/// Enqueues the fast kernel for one filter radius.
template <int Radius, class Policy>
void launch_convolve_2d(const image_view<const float>& in, const image_view<float>& out,
                        cuda::std::span<const float> filter, border_mode border, cuda::stream_ref s) {
  constexpr int cols = Policy::columns_per_thread(Radius);
  constexpr int tile_w = Policy::block_x(Radius) * cols;
  constexpr int tile_h = Policy::block_y(Radius) * Policy::rows_per_thread(Radius);
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
  p.vector_stores = is_aligned(out.data, cols * sizeof(float)) && out.pitch % cols == 0;
  for (std::size_t w = 0; w < filter.size(); ++w) p.weights[w] = filter[w];

  launch_config c;
  c.block = dim3(Policy::block_x(Radius), Policy::block_y(Radius), 1);
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
  // The weights are read here, on the host, into the launch's parameters.
  detail::expect_host_accessible(filter.data(), "convolve_2d filter");
  const int device = detail::device_for_checks(s);
  detail::expect_device_accessible(input.data, device, "convolve_2d input");
  detail::expect_device_accessible(output.data, device, "convolve_2d output");
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
