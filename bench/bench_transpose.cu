// Out-of-place transpose and pitched 2D copy of matrices of 1 to 2 GiB (far past the
// 60 MB L2), beside a device-to-device cudaMemcpyAsync of the same bytes, the ceiling
// they are measured against (goal: foundry >= 0.9x cudaMemcpy at every shape):
//  - rows "transpose_f32/{naive,foundry,cudaMemcpy}/<rows>x<cols>" at 16384x16384,
//    8192x32768 and 16383x16385 (odd: every row starts at a different offset modulo 16
//    bytes, edge tiles on two sides), and "transpose_f64/.../8192x8192". The default
//    policy splits the output rows of 16383x16385 at 32-byte addresses (its pitch is not a
//    multiple of 32 bytes), every other shape's at tiles;
//  - "transpose_f32/foundry_at_tiles" at 16384x16384 and 16383x16385: the default's
//    tiles, always split at multiples of 64 rows (the default before issue 18): equal to
//    "foundry" at the square shape, what the automatic split gains at the odd one;
//  - "transpose_f32/foundry_tile32/16384x16384": a 32 x 32 tile (4 elements per thread,
//    the textbook shape), to measure what the default's 64 x 64 tile buys;
//  - issue 18's candidates for the odd shape, each at 16384x16384 and 16383x16385:
//    "foundry_store32" and "foundry_store128" (64 x 64 tiles, output rows split between
//    blocks at 32- or 128-byte aligned addresses: no partial sector writes),
//    "foundry_tile128x32" (128 input rows x 32 columns: 512 contiguous bytes per output
//    row, the misaligned ends a smaller share), "foundry_t512_tile64x128_store32" (512
//    threads, 64 rows x 128 columns: 512 bytes per input row, sector-aligned output runs);
//  - "copy_2d_f32/{foundry,cudaMemcpy2D}/16383x16385" with both pitches cols + 7.
// GB/s counts bytes read + written: each element read once and written once (padding
// excluded). Correct before timed: every output element is compared bitwise with its
// input element on the device, once, outside the timed region.

#include <foundry/algorithms/transpose.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/memory/copy.cuh>
#include <foundry/memory/device_buffer.cuh>
#include <foundry/naive/transpose.cuh>
#include <foundry/runtime/stream.cuh>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace {

namespace bench = foundry::bench;
using foundry::matrix_view;

struct shape {
  std::int64_t rows;
  std::int64_t cols;
};

enum class variant { naive, foundry, memcpy };

// Tuning candidates (foundry::transpose_tuning): Threads, Rows x Cols tiles, the output
// split's alignment in bytes, MinBlocksPerSm.
template <int Threads, int Rows, int Cols, int StoreAlignment, int BlocksPerSm>
using transpose_candidate = foundry::transpose_tuning<Threads, Rows, Cols, StoreAlignment, BlocksPerSm>;

using tile32_policy = transpose_candidate<256, 32, 32, 0, 5>;

// Counts the (r, c) of the rows × cols input (pitch in_pitch) whose output element,
// out[r * out_row_step + c * out_col_step], differs bitwise. A block per input row.
template <class Bits>
__global__ void count_mismatches(const Bits* in, std::int64_t rows, std::int64_t cols, std::int64_t in_pitch,
                                 const Bits* out, std::int64_t out_row_step, std::int64_t out_col_step,
                                 unsigned long long* count) {
  unsigned long long local = 0;
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      local += in[r * in_pitch + c] != out[r * out_row_step + c * out_col_step] ? 1 : 0;
    }
  }
  if (local != 0) atomicAdd(count, local);
}

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

// A rows × cols input of pitch in_pitch (uniform random) and an output of `out_rows`
// rows of pitch out_pitch, poisoned with NaN.
template <class T>
struct matrix_pair_data {
  matrix_pair_data(shape sh, std::int64_t in_pitch, std::int64_t out_rows, std::int64_t out_pitch)
      : sh(sh),
        in_pitch(in_pitch),
        out_pitch(out_pitch),
        in(static_cast<std::size_t>(sh.rows * in_pitch), s),
        out(static_cast<std::size_t>(out_rows * out_pitch), s) {
    bench::fill_uniform(in.span(), -1.0, 1.0, bench::default_seed, s);
    foundry::fill(out.span(), std::numeric_limits<T>::quiet_NaN(), s);
  }

  // Every element of the input at out[r * row_step + c * col_step], checked bitwise on the
  // device (untimed; a 2 GiB round trip to the host would cost seconds per row).
  [[nodiscard]] bool correct(std::int64_t row_step, std::int64_t col_step) {
    static_assert(sizeof(bits_t<T>) == sizeof(T));
    foundry::device_buffer<unsigned long long> count(1, s, 0ull);
    foundry::launch_config c;
    c.grid = dim3(foundry::resident_grid_blocks(8), 1, 1);
    c.block = dim3(256, 1, 1);
    foundry::launch(s, c, count_mismatches<bits_t<T>>, reinterpret_cast<const bits_t<T>*>(in.data()), sh.rows, sh.cols,
                    in_pitch, reinterpret_cast<const bits_t<T>*>(out.data()), row_step, col_step, count.data());
    unsigned long long host = 1;
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(&host, count.data(), sizeof host, cudaMemcpyDeviceToHost, s.get()));
    s.synchronize();
    return host == 0;
  }

  [[nodiscard]] bench::work work() const {
    const double bytes = static_cast<double>(sh.rows) * static_cast<double>(sh.cols) * sizeof(T);
    return {bytes, bytes, 0.0};
  }

  foundry::stream s;
  shape sh;
  std::int64_t in_pitch;
  std::int64_t out_pitch;
  foundry::device_buffer<T> in;
  foundry::device_buffer<T> out;
};

template <class T, class Policy = foundry::transpose_policy>
void bm_transpose(benchmark::State& state, variant v, shape sh) {
  matrix_pair_data<T> d(sh, sh.cols, sh.cols, sh.rows);
  const matrix_view<const T> in{d.in.data(), sh.rows, sh.cols, sh.cols};
  const matrix_view<T> out{d.out.data(), sh.cols, sh.rows, sh.rows};
  const std::size_t bytes = d.in.size_bytes();
  auto enqueue = [&](cuda::stream_ref s) {
    switch (v) {
      case variant::naive: foundry::naive::transpose(in, out, s); break;
      case variant::foundry: foundry::transpose<Policy>(in, out, s); break;
      case variant::memcpy:
        FOUNDRY_CUDA_TRY(cudaMemcpyAsync(d.out.data(), d.in.data(), bytes, cudaMemcpyDeviceToDevice, s.get()));
        break;
    }
  };
  enqueue(d.s);
  const bool ok = v == variant::memcpy ? d.correct(sh.cols, 1) : d.correct(1, sh.rows);
  if (!bench::expect(state, ok, "the output differs from the input (transposed)")) return;
  bench::measure(state, d.s, d.work(), enqueue);
}

void bm_copy_2d(benchmark::State& state, variant v, shape sh) {
  const std::int64_t pitch = sh.cols + 7;
  matrix_pair_data<float> d(sh, pitch, sh.rows, pitch);
  const matrix_view<const float> src{d.in.data(), sh.rows, sh.cols, pitch};
  const matrix_view<float> dst{d.out.data(), sh.rows, sh.cols, pitch};
  const std::size_t pitch_bytes = static_cast<std::size_t>(pitch) * sizeof(float);
  const std::size_t row_bytes = static_cast<std::size_t>(sh.cols) * sizeof(float);
  auto enqueue = [&](cuda::stream_ref s) {
    if (v == variant::foundry) {
      foundry::copy_2d(src, dst, s);
    } else {
      FOUNDRY_CUDA_TRY(cudaMemcpy2DAsync(d.out.data(), pitch_bytes, d.in.data(), pitch_bytes, row_bytes,
                                         static_cast<std::size_t>(sh.rows), cudaMemcpyDeviceToDevice, s.get()));
    }
  };
  enqueue(d.s);
  if (!bench::expect(state, d.correct(pitch, 1), "the 2D copy differs from its source")) return;
  bench::measure(state, d.s, d.work(), enqueue);
}

template <class Fn>
void add(const std::string& name, Fn fn, variant v, shape sh) {
  benchmark::RegisterBenchmark(name.c_str(), fn, v, sh)->Apply(bench::configure);
}

std::string size_name(shape sh) { return "/" + std::to_string(sh.rows) + "x" + std::to_string(sh.cols); }

// "transpose_f32/foundry_<name>" at the square shape and the odd one.
template <class Policy>
void add_candidate(const std::string& name) {
  for (const shape sh : {shape{16384, 16384}, shape{16383, 16385}}) {
    add("transpose_f32/foundry_" + name + size_name(sh), bm_transpose<float, Policy>, variant::foundry, sh);
  }
}

const bool registered = [] {
  for (const shape sh : {shape{16384, 16384}, shape{8192, 32768}, shape{16383, 16385}}) {
    add("transpose_f32/naive" + size_name(sh), bm_transpose<float>, variant::naive, sh);
    add("transpose_f32/foundry" + size_name(sh), bm_transpose<float>, variant::foundry, sh);
    add("transpose_f32/cudaMemcpy" + size_name(sh), bm_transpose<float>, variant::memcpy, sh);
  }
  const shape square{16384, 16384};
  add("transpose_f32/foundry_tile32" + size_name(square), bm_transpose<float, tile32_policy>, variant::foundry, square);
  add_candidate<transpose_candidate<256, 64, 64, 0, 5>>("at_tiles");
  add_candidate<transpose_candidate<256, 64, 64, 32, 5>>("store32");
  add_candidate<transpose_candidate<256, 64, 64, 128, 4>>("store128");
  add_candidate<transpose_candidate<256, 128, 32, 0, 5>>("tile128x32");
  add_candidate<transpose_candidate<512, 64, 128, 32, 2>>("t512_tile64x128_store32");
  const shape f64{8192, 8192};
  add("transpose_f64/naive" + size_name(f64), bm_transpose<double>, variant::naive, f64);
  add("transpose_f64/foundry" + size_name(f64), bm_transpose<double>, variant::foundry, f64);
  add("transpose_f64/cudaMemcpy" + size_name(f64), bm_transpose<double>, variant::memcpy, f64);
  const shape odd{16383, 16385};
  add("copy_2d_f32/foundry" + size_name(odd), bm_copy_2d, variant::foundry, odd);
  add("copy_2d_f32/cudaMemcpy2D" + size_name(odd), bm_copy_2d, variant::memcpy, odd);
  return true;
}();

}  // namespace

FOUNDRY_BENCH_MAIN()
