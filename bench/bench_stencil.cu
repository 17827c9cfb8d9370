// 2D convolution of an 8192 x 8192 float image (256 MiB in, 256 MiB out, far past the
// 60 MB L2) with k x k filters: foundry::convolve_2d beside its textbook twin and beside
// a device-to-device cudaMemcpyAsync of the same bytes, the bandwidth it should approach
// (goal at 3x3 and 5x5: >= 0.8x cudaMemcpy). Bytes count the image read once and written
// once; flops count 2 k^2 per pixel (one multiply and one add per tap).
//
// Rows `stencil_<k>x<k>/foundry_<shape>/...` are tuning candidates for
// foundry::convolve_2d_policy: <block_x>x<block_y>c<columns per thread>r<rows per
// thread>; c1 is the one-column kernel that was the default before 2026-12-02's third
// session. The default policy is the row named plain `foundry`.
//
// Correct before timed: the naive output is checked against a CPU reference (double
// accumulation) on the first, middle and last rows, where all borders are; every
// foundry variant is then checked against the naive output on the whole image.

#include <foundry/algorithms/stencil.cuh>
#include <foundry/bench/harness.cuh>
#include <foundry/foundry.cuh>
#include <foundry/naive/stencil.cuh>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

namespace bench = foundry::bench;
using foundry::border_mode;
using foundry::image_view;

constexpr std::size_t side = 8192;
constexpr border_mode border = border_mode::clamp;

// A candidate policy (see the file comment): its shape at radius <= UpToRadius, the
// default's beyond. Registers and spills (sm_90, CUDA 13.0, -Xptxas -v) at the radii each
// row runs: 64 registers at min_blocks_per_sm 4, 72-80 at 3, no spills, except
// foundry_64x4c4r4 at 15x15 (80 registers, 52 bytes of spill stores: the shape the default
// gave up at radius 7 for 32 x 8).
template <int BlockX, int BlockY, int Cols, int Rows, int MinBlocks, int UpToRadius = 2>
struct candidate : foundry::convolve_2d_policy {
  using base = foundry::convolve_2d_policy;
  __host__ __device__ static constexpr int block_x(int r) { return r <= UpToRadius ? BlockX : base::block_x(r); }
  __host__ __device__ static constexpr int block_y(int r) { return r <= UpToRadius ? BlockY : base::block_y(r); }
  __host__ __device__ static constexpr int columns_per_thread(int r) {
    return r <= UpToRadius ? Cols : base::columns_per_thread(r);
  }
  __host__ __device__ static constexpr int rows_per_thread(int r) {
    return r <= UpToRadius ? Rows : base::rows_per_thread(r);
  }
  __host__ __device__ static constexpr int min_blocks_per_sm(int r) {
    return r <= UpToRadius ? MinBlocks : base::min_blocks_per_sm(r);
  }
};

// The default before 2026-12-02's third session: one output column per thread, 8 rows,
// 40 registers up to radius 4 and 64 beyond (6 and 4 blocks per SM), no spills.
struct one_column_policy : foundry::convolve_2d_policy {
  __host__ __device__ static constexpr int block_x(int) { return 64; }
  __host__ __device__ static constexpr int block_y(int) { return 4; }
  __host__ __device__ static constexpr int columns_per_thread(int) { return 1; }
  __host__ __device__ static constexpr int rows_per_thread(int) { return 8; }
  __host__ __device__ static constexpr int min_blocks_per_sm(int radius) { return radius <= 4 ? 6 : 4; }
};

// k*k weights uniform in [-1, 1] from a fixed seed.
std::vector<float> make_filter(int k) {
  std::mt19937_64 rng(bench::default_seed + static_cast<std::uint64_t>(k));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> w(static_cast<std::size_t>(k * k));
  for (auto& x : w) x = dist(rng);
  return w;
}

// |a - b| over the tolerance, or either not finite.
__global__ void count_mismatches_kernel(const float* a, const float* b, std::size_t n, float tolerance,
                                        unsigned long long* count) {
  unsigned long long local = 0;
  for (auto i : foundry::grid_stride_range(n)) {
    const float x = a[i];
    const float y = b[i];
    local += (!isfinite(x) || !isfinite(y) || fabsf(x - y) > tolerance) ? 1 : 0;
  }
  if (local != 0) atomicAdd(count, local);
}

// One benchmark's data: a random image, its naive convolution (the reference) and an
// output for the variant under test, poisoned with NaN.
struct stencil_data {
  explicit stencil_data(int k_)
      : k(k_), filter(make_filter(k_)), in(side * side, s), out(side * side, s), d_filter(filter.size(), s) {
    bench::fill_uniform(in.span(), -1.0, 1.0, bench::default_seed, s);
    foundry::fill(out.span(), std::numeric_limits<float>::quiet_NaN(), s);
    d_filter.copy_from_host(cuda::std::span<const float>(filter.data(), filter.size()), s);
  }

  [[nodiscard]] image_view<const float> input() const { return {in.data(), side, side, side}; }
  [[nodiscard]] image_view<float> output(foundry::device_buffer<float>& b) const {
    return {b.data(), side, side, side};
  }
  [[nodiscard]] cuda::std::span<const float> host_filter() const { return {filter.data(), filter.size()}; }

  void naive(foundry::device_buffer<float>& dst, cuda::stream_ref st) {
    foundry::naive::convolve_2d(input(), output(dst), d_filter.span(), border, st);
  }

  // The naive output in `dst` against a double-precision CPU reference on rows near the
  // top, middle and bottom (every column, so the left and right borders too). Tolerance:
  // float sums of k^2 products err by at most k^2 * FLT_EPSILON * sum|w||x|.
  [[nodiscard]] bool naive_matches_cpu(const foundry::device_buffer<float>& dst) {
    const int r = k / 2;
    const std::size_t band = 16;
    for (std::size_t first : {std::size_t{0}, side / 2 - band / 2, side - band}) {
      const std::size_t in_first = first >= static_cast<std::size_t>(r) ? first - r : 0;
      const std::size_t in_last = std::min(side, first + band + r);  // one past
      std::vector<float> h_in((in_last - in_first) * side);
      std::vector<float> h_out(band * side);
      FOUNDRY_CUDA_TRY(cudaMemcpyAsync(h_in.data(), in.data() + in_first * side, h_in.size() * sizeof(float),
                                       cudaMemcpyDeviceToHost, s.get()));
      FOUNDRY_CUDA_TRY(cudaMemcpyAsync(h_out.data(), dst.data() + first * side, h_out.size() * sizeof(float),
                                       cudaMemcpyDeviceToHost, s.get()));
      s.synchronize();
      for (std::size_t y = first; y < first + band; ++y) {
        for (std::size_t x = 0; x < side; ++x) {
          double sum = 0;
          double bound = 0;
          for (int i = 0; i < k; ++i) {
            for (int j = 0; j < k; ++j) {
              const auto yy = std::clamp<std::int64_t>(static_cast<std::int64_t>(y) + i - r, 0, side - 1);
              const auto xx = std::clamp<std::int64_t>(static_cast<std::int64_t>(x) + j - r, 0, side - 1);
              const double t = static_cast<double>(filter[static_cast<std::size_t>(i * k + j)]) *
                               h_in[(static_cast<std::size_t>(yy) - in_first) * side + static_cast<std::size_t>(xx)];
              sum += t;
              bound += std::abs(t);
            }
          }
          const float got = h_out[(y - first) * side + x];
          if (!std::isfinite(got) || std::abs(got - sum) > k * k * FLT_EPSILON * bound) return false;
        }
      }
    }
    return true;
  }

  // `dst` against `ref` on the whole image. Each differs from the exact result by at
  // most k^2 * FLT_EPSILON * sum|w||x| <= k^2 * FLT_EPSILON * sum|w| (|x| <= 1).
  [[nodiscard]] bool matches(const foundry::device_buffer<float>& dst, const foundry::device_buffer<float>& ref) {
    double sum_abs_w = 0;
    for (float w : filter) sum_abs_w += std::abs(w);
    const auto tolerance = static_cast<float>(2.0 * k * k * FLT_EPSILON * sum_abs_w);
    foundry::device_buffer<unsigned long long> count(1, s, 0ull);
    foundry::launch(s, foundry::make_launch_config_1d(dst.size(), 256, foundry::resident_grid_blocks(8)),
                    count_mismatches_kernel, dst.data(), ref.data(), dst.size(), tolerance, count.data());
    unsigned long long host = 0;
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(&host, count.data(), sizeof host, cudaMemcpyDeviceToHost, s.get()));
    s.synchronize();
    return host == 0;
  }

  [[nodiscard]] bench::work work() const {
    const double pixels = static_cast<double>(side) * side;
    return {pixels * sizeof(float), pixels * sizeof(float), 2.0 * k * k * pixels};
  }

  foundry::stream s;
  int k;
  std::vector<float> filter;
  foundry::device_buffer<float> in;
  foundry::device_buffer<float> out;
  foundry::device_buffer<float> d_filter;
};

void bm_naive(benchmark::State& state, int k) {
  stencil_data d(k);
  d.naive(d.out, d.s);
  if (!bench::expect(state, d.naive_matches_cpu(d.out), "naive::convolve_2d differs from the CPU reference")) return;
  bench::measure(state, d.s, d.work(), [&](cuda::stream_ref st) { d.naive(d.out, st); });
}

template <class Policy>
void bm_foundry(benchmark::State& state, int k) {
  stencil_data d(k);
  foundry::device_buffer<float> reference(side * side, d.s);
  d.naive(reference, d.s);
  auto enqueue = [&](cuda::stream_ref st) {
    foundry::convolve_2d<Policy>(d.input(), d.output(d.out), d.host_filter(), border, st);
  };
  enqueue(d.s);
  if (!bench::expect(state, d.matches(d.out, reference), "convolve_2d differs from naive::convolve_2d")) return;
  bench::measure(state, d.s, d.work(), enqueue);
}

void bm_memcpy(benchmark::State& state, int k) {
  stencil_data d(k);
  const std::size_t bytes = d.in.size_bytes();
  auto enqueue = [&](cuda::stream_ref st) {
    FOUNDRY_CUDA_TRY(cudaMemcpyAsync(d.out.data(), d.in.data(), bytes, cudaMemcpyDeviceToDevice, st.get()));
  };
  enqueue(d.s);
  if (!bench::expect(state, bench::bitwise_equal(d.out.span(), d.in.span(), d.s), "the copy differs")) return;
  // The same bytes as the convolution, no flops: the bandwidth reference.
  bench::measure(state, d.s, {d.work().bytes_read, d.work().bytes_written, 0.0}, enqueue);
}

template <class Fn>
void add(const std::string& name, Fn fn, int k) {
  benchmark::RegisterBenchmark(name.c_str(), fn, k)->Apply(bench::configure);
}

const bool registered = [] {
  const std::string size = "/" + std::to_string(side) + "x" + std::to_string(side);
  for (int k : {3, 5, 9, 15}) {
    const std::string algorithm = "stencil_" + std::to_string(k) + "x" + std::to_string(k);
    add(algorithm + "/naive" + size, bm_naive, k);
    add(algorithm + "/foundry" + size, bm_foundry<foundry::convolve_2d_policy>, k);
#if FOUNDRY_BENCH_TUNING  // built where the benchmarks run (CMakeLists.txt), not in CI
    if (k <= 5) {
      add(algorithm + "/foundry_128x2c2r8" + size, bm_foundry<candidate<128, 2, 2, 8, 4>>, k);
      add(algorithm + "/foundry_32x8c2r8" + size, bm_foundry<candidate<32, 8, 2, 8, 4>>, k);
      add(algorithm + "/foundry_64x4c1r16" + size, bm_foundry<candidate<64, 4, 1, 16, 4>>, k);
    }
    if (k == 9) add(algorithm + "/foundry_32x8c4r4" + size, bm_foundry<candidate<32, 8, 4, 4, 3, 7>>, k);
    if (k == 15) add(algorithm + "/foundry_64x4c4r4" + size, bm_foundry<candidate<64, 4, 4, 4, 3, 7>>, k);
#endif
    add(algorithm + "/foundry_64x4c1r8" + size, bm_foundry<one_column_policy>, k);
    add(algorithm + "/cudaMemcpy" + size, bm_memcpy, k);
  }
  return true;
}();

}  // namespace

FOUNDRY_BENCH_MAIN()
