// foundry::convolve_2d and its textbook twin foundry::naive::convolve_2d,
// against a CPU reference that accumulates in double.
#include <catch2/catch.hpp>

#include <foundry/algorithms/stencil.cuh>
#include <foundry/naive/stencil.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <cuda/std/span>
#include <cuda/stream_ref>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

using foundry::border_mode;
using foundry::image_view;

// ---------------------------------------------------------------------------
// Host images and the CPU reference

struct host_image {
  std::size_t width = 0;
  std::size_t height = 0;
  std::size_t pitch = 0;
  std::vector<float> pixels;  // height * pitch (empty when height is 0)
};

std::size_t extent(std::size_t height, std::size_t pitch) { return height * pitch; }

// Pixels uniform in [-1, 1]; the padding between width and pitch holds NaN, so
// that an output computed from a padding element is NaN and fails the check.
host_image random_image(std::size_t width, std::size_t height, std::size_t pitch, std::uint64_t stream_id) {
  host_image img{width, height, pitch,
                 foundry::test::random_vector<float>(extent(height, pitch), -1.0f, 1.0f, stream_id)};
  for (std::size_t y = 0; y < height; ++y) {
    for (std::size_t x = width; x < pitch; ++x) img.pixels[y * pitch + x] = std::numeric_limits<float>::quiet_NaN();
  }
  return img;
}

// k*k weights uniform in [-1, 1], a different draw per size.
std::vector<float> random_filter(int k, std::uint64_t stream_id = 1000) {
  return foundry::test::random_vector<float>(static_cast<std::size_t>(k * k), -1.0f, 1.0f, stream_id + k);
}

struct reference_image {
  std::vector<double> value;  // width * height, tight
  std::vector<double> bound;  // sum of |w| |x| over the taps: the scale of the rounding error
};

reference_image cpu_convolve(const host_image& in, const std::vector<float>& filter, border_mode border) {
  const int k = static_cast<int>(std::lround(std::sqrt(static_cast<double>(filter.size()))));
  const int r = k / 2;
  const auto w = static_cast<std::int64_t>(in.width);
  const auto h = static_cast<std::int64_t>(in.height);
  reference_image ref{std::vector<double>(in.width * in.height), std::vector<double>(in.width * in.height)};
  for (std::int64_t y = 0; y < h; ++y) {
    for (std::int64_t x = 0; x < w; ++x) {
      double sum = 0;
      double bound = 0;
      for (int i = 0; i < k; ++i) {
        for (int j = 0; j < k; ++j) {
          std::int64_t xx = x + j - r;
          std::int64_t yy = y + i - r;
          double v = 0;
          if (border == border_mode::clamp) {
            xx = std::clamp<std::int64_t>(xx, 0, w - 1);
            yy = std::clamp<std::int64_t>(yy, 0, h - 1);
            v = in.pixels[static_cast<std::size_t>(yy) * in.pitch + static_cast<std::size_t>(xx)];
          } else if (xx >= 0 && xx < w && yy >= 0 && yy < h) {
            v = in.pixels[static_cast<std::size_t>(yy) * in.pitch + static_cast<std::size_t>(xx)];
          }
          const double weighted = static_cast<double>(filter[static_cast<std::size_t>(i * k + j)]) * v;
          sum += weighted;
          bound += std::abs(weighted);
        }
      }
      ref.value[static_cast<std::size_t>(y * w + x)] = sum;
      ref.bound[static_cast<std::size_t>(y * w + x)] = bound;
    }
  }
  return ref;
}

// Tolerance: the GPU sums n = k*k products in float, one rounding per FMA (or
// two per tap when the product and the sum round separately), so its error is
// at most about 2 n u * sum|w||x| with u = 2^-24 = FLT_EPSILON / 2, i.e.
// n * FLT_EPSILON * sum|w||x|: at most 225 * 1.2e-7 = 2.7e-5 relative to the
// sum of magnitudes for a 15x15 filter. The double reference's own error is
// negligible beside it. An exact 0 (all taps zero) must come out exactly 0.
//
// Counts the pixels outside the tolerance, and padding elements (between width
// and pitch) that the kernel touched: they must still hold the poison (NaN).
std::size_t count_mismatches(const host_image& out, const reference_image& ref, int k, std::string& first) {
  std::size_t bad = 0;
  const double n_eps = static_cast<double>(k * k) * FLT_EPSILON;
  for (std::size_t y = 0; y < out.height; ++y) {
    for (std::size_t x = 0; x < out.pitch; ++x) {
      const float got = out.pixels[y * out.pitch + x];
      if (x < out.width) {
        const double want = ref.value[y * out.width + x];
        const double tol = n_eps * ref.bound[y * out.width + x];
        if (std::isfinite(got) && std::abs(static_cast<double>(got) - want) <= tol) continue;
        if (bad++ == 0) {
          std::ostringstream what;
          what << "pixel (" << x << ", " << y << "): got " << got << ", want " << want << " +- " << tol;
          first = what.str();
        }
      } else if (!std::isnan(got) && bad++ == 0) {
        std::ostringstream what;
        what << "padding (" << x << ", " << y << ") was written: " << got;
        first = what.str();
      }
    }
  }
  return bad;
}

// ---------------------------------------------------------------------------
// Running either variant

enum class variant {
  foundry,               // the default policy: 2 columns x 8 rows up to radius 4, 4 x 4 beyond
  foundry_one_column,    // one output column per thread at every radius
  foundry_two_columns,   // float2 window reads at every radius, 3 rows per thread
  foundry_four_columns,  // float4 window reads at every radius, half-warp rows (block_x 16)
  naive,
};

const std::vector<variant>& all_variants() {
  static const std::vector<variant> v{variant::foundry, variant::foundry_one_column, variant::foundry_two_columns,
                                      variant::foundry_four_columns, variant::naive};
  return v;
}

const char* to_string(variant v) {
  switch (v) {
    case variant::foundry: return "foundry";
    case variant::foundry_one_column: return "foundry (one column per thread)";
    case variant::foundry_two_columns: return "foundry (two columns per thread)";
    case variant::foundry_four_columns: return "foundry (four columns per thread)";
    case variant::naive: return "naive";
  }
  return "?";
}
const char* to_string(border_mode b) { return b == border_mode::clamp ? "clamp" : "zero"; }

// Policies that force one kernel shape at every radius, with tiles unlike the
// default's, so that each path meets every border and tile edge.
struct one_column_policy : foundry::convolve_2d_policy {
  __host__ __device__ static constexpr int block_x(int) { return 64; }
  __host__ __device__ static constexpr int block_y(int) { return 4; }
  __host__ __device__ static constexpr int columns_per_thread(int) { return 1; }
  __host__ __device__ static constexpr int rows_per_thread(int) { return 8; }
};
struct two_columns_policy : foundry::convolve_2d_policy {
  __host__ __device__ static constexpr int block_x(int) { return 32; }
  __host__ __device__ static constexpr int block_y(int) { return 4; }
  __host__ __device__ static constexpr int columns_per_thread(int) { return 2; }
  __host__ __device__ static constexpr int rows_per_thread(int) { return 3; }
  __host__ __device__ static constexpr int min_blocks_per_sm(int) { return 4; }
};
struct four_columns_policy : foundry::convolve_2d_policy {
  __host__ __device__ static constexpr int block_x(int) { return 16; }
  __host__ __device__ static constexpr int block_y(int) { return 8; }
  __host__ __device__ static constexpr int columns_per_thread(int) { return 4; }
  __host__ __device__ static constexpr int rows_per_thread(int) { return 4; }
  __host__ __device__ static constexpr int min_blocks_per_sm(int) { return 4; }
};

// Enqueues the convolution of the device image `in` into `out`; the naive twin
// gets the filter in device memory (freed stream-ordered after the kernel).
void enqueue_convolution(variant v, image_view<const float> in, image_view<float> out, const std::vector<float>& filter,
                         border_mode border, cuda::stream_ref s) {
  const cuda::std::span<const float> host_filter(filter.data(), filter.size());
  switch (v) {
    case variant::foundry: foundry::convolve_2d(in, out, host_filter, border, s); break;
    case variant::foundry_one_column: foundry::convolve_2d<one_column_policy>(in, out, host_filter, border, s); break;
    case variant::foundry_two_columns: foundry::convolve_2d<two_columns_policy>(in, out, host_filter, border, s); break;
    case variant::foundry_four_columns:
      foundry::convolve_2d<four_columns_policy>(in, out, host_filter, border, s);
      break;
    case variant::naive: {
      const auto device_filter = foundry::test::to_device(filter, s);
      foundry::naive::convolve_2d(in, out, device_filter.span(), border, s);
      break;
    }
  }
}

// Uploads `in`, convolves into a poisoned output of pitch `out_pitch`, and
// returns the output (padding included). `in_offset` shifts the input by that
// many floats from the allocation's start, to defeat 16-byte alignment.
host_image convolve_on_device(variant v, const host_image& in, std::size_t out_pitch, const std::vector<float>& filter,
                              border_mode border, std::size_t in_offset = 0) {
  foundry::stream s;
  std::vector<float> shifted(in_offset, 0.0f);
  shifted.insert(shifted.end(), in.pixels.begin(), in.pixels.end());
  const auto d_in = foundry::test::to_device(shifted, s);
  auto d_out = foundry::test::poisoned_device_buffer<float>(extent(in.height, out_pitch), s);
  enqueue_convolution(v, image_view<const float>{d_in.data() + in_offset, in.width, in.height, in.pitch},
                      image_view<float>{d_out.data(), in.width, in.height, out_pitch}, filter, border, s);
  return host_image{in.width, in.height, out_pitch, foundry::test::to_host(d_out, s)};
}

struct image_size {
  std::size_t width;
  std::size_t height;
};

// Not multiples of any tile side (128 x 32 for the default at every radius, 64 x 32
// for one column, 64 x 12 and 64 x 32 for the two- and four-column test policies),
// 2^k +- 1 around them; single rows and columns, where every tap but the centre
// one is a border read.
const std::vector<image_size>& test_sizes() {
  static const std::vector<image_size> sizes{{1, 1},   {1, 257}, {257, 1},   {2, 3},    {31, 33},  {33, 31},
                                             {63, 65}, {65, 17}, {127, 129}, {255, 15}, {257, 33}, {1000, 777}};
  return sizes;
}

// Every odd filter size, every test size, tight pitch: the whole contract for one variant and border.
void check_all_sizes(variant v, border_mode border) {
  for (int k = foundry::min_filter_size; k <= foundry::max_filter_size; k += 2) {
    const auto filter = random_filter(k);
    for (const auto& size : test_sizes()) {
      const auto in = random_image(size.width, size.height, size.width, size.width * 7919 + size.height);
      const auto out = convolve_on_device(v, in, size.width, filter, border);
      std::string first;
      const std::size_t bad = count_mismatches(out, cpu_convolve(in, filter, border), k, first);
      INFO(to_string(v) << ", " << to_string(border) << " border, " << k << "x" << k << " filter, " << size.width << "x"
                        << size.height << " image: " << bad << " bad pixels, first " << first);
      CHECK(bad == 0);
    }
  }
}

// About 50 ms at 2 GHz (above every current SM clock, so at least that long):
// work enqueued after it on the same stream is still pending when the host goes on.
constexpr long long spin_cycles = 100'000'000;

}  // namespace

// ---------------------------------------------------------------------------
// Results

TEST_CASE("convolve_2d matches the CPU reference for every odd filter size with clamped borders", "[gpu]") {
  check_all_sizes(variant::foundry, border_mode::clamp);
}

TEST_CASE("convolve_2d matches the CPU reference for every odd filter size with zero borders", "[gpu]") {
  check_all_sizes(variant::foundry, border_mode::zero);
}

TEST_CASE("convolve_2d with one output column per thread matches the CPU reference at every filter size", "[gpu]") {
  check_all_sizes(variant::foundry_one_column, border_mode::clamp);
  check_all_sizes(variant::foundry_one_column, border_mode::zero);
}

TEST_CASE("convolve_2d with two output columns per thread matches the CPU reference at every filter size", "[gpu]") {
  check_all_sizes(variant::foundry_two_columns, border_mode::clamp);
  check_all_sizes(variant::foundry_two_columns, border_mode::zero);
}

TEST_CASE("convolve_2d with four output columns per thread matches the CPU reference at every filter size", "[gpu]") {
  check_all_sizes(variant::foundry_four_columns, border_mode::clamp);
  check_all_sizes(variant::foundry_four_columns, border_mode::zero);
}

TEST_CASE("naive::convolve_2d matches the CPU reference for every odd filter size with clamped borders", "[gpu]") {
  check_all_sizes(variant::naive, border_mode::clamp);
}

TEST_CASE("naive::convolve_2d matches the CPU reference for every odd filter size with zero borders", "[gpu]") {
  check_all_sizes(variant::naive, border_mode::zero);
}

TEST_CASE("convolve_2d reads and writes only the image when the pitch exceeds the width", "[gpu]") {
  // Input padding holds NaN (any read of it poisons an output); output padding
  // must keep its poison. Pitches a multiple of 4 (vector loads) and not.
  struct pitch_case {
    std::size_t width, input_pitch, output_pitch;
  };
  // Output pitches a multiple of 4 (vector stores) and not.
  const std::vector<pitch_case> cases{{1000, 1000 + 24, 1000 + 8}, {127, 127 + 5, 127 + 3}, {258, 262, 258 + 2}};
  for (int k : {3, 5, 7, 15}) {
    const auto filter = random_filter(k);
    for (const auto& c : cases) {
      for (auto border : {border_mode::clamp, border_mode::zero}) {
        for (auto v : all_variants()) {
          const auto in = random_image(c.width, 301, c.input_pitch, 77 + c.width);
          const auto out = convolve_on_device(v, in, c.output_pitch, filter, border);
          std::string first;
          const std::size_t bad = count_mismatches(out, cpu_convolve(in, filter, border), k, first);
          INFO(to_string(v) << ", " << to_string(border) << ", " << k << "x" << k << ", width " << c.width
                            << ", pitches " << c.input_pitch << "/" << c.output_pitch << ": " << bad << " bad, first "
                            << first);
          CHECK(bad == 0);
        }
      }
    }
  }
}

TEST_CASE("convolve_2d is correct on an input that allows no 16-byte loads", "[gpu]") {
  // One float past a 16-byte boundary, with a pitch that is a multiple of 4:
  // every row is misaligned, so the kernel must take its scalar path.
  for (int k : {3, 5, 13}) {
    const auto filter = random_filter(k);
    for (auto border : {border_mode::clamp, border_mode::zero}) {
      for (auto v : all_variants()) {
        const auto in = random_image(300, 97, 304, 5);
        const auto out = convolve_on_device(v, in, 300, filter, border, 1);
        std::string first;
        const std::size_t bad = count_mismatches(out, cpu_convolve(in, filter, border), k, first);
        INFO(to_string(v) << ", " << to_string(border) << ", " << k << "x" << k << ": " << bad << " bad, first "
                          << first);
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("convolve_2d covers an image taller than the grid's y limit", "[gpu]") {
  // 65535 blocks of at most 32 rows (every fast variant) and of 8 rows (naive)
  // cover fewer rows than this: every kernel must loop over the rest.
  const std::size_t height = (std::size_t{1} << 21) + 5;
  const auto filter = random_filter(3);
  const auto in = random_image(3, height, 3, 11);
  const auto ref = cpu_convolve(in, filter, border_mode::clamp);
  for (auto v : all_variants()) {
    const auto out = convolve_on_device(v, in, 3, filter, border_mode::clamp);
    std::string first;
    const std::size_t bad = count_mismatches(out, ref, 3, first);
    INFO(to_string(v) << ": " << bad << " bad, first " << first);
    CHECK(bad == 0);
  }
}

TEST_CASE("convolve_2d calls with different filters on two streams do not interfere", "[gpu]") {
  // The design point of passing the filter as a __grid_constant__ parameter:
  // with one shared __constant__ array, the second call's filter would
  // overwrite the first's while the first kernel still waits to run.
  const auto in = random_image(517, 263, 520, 21);
  const auto filter_a = random_filter(5, 1);
  const auto filter_b = random_filter(5, 2);
  foundry::stream a;
  foundry::stream b;
  const auto d_in = foundry::test::to_device(in.pixels, a);
  a.synchronize();
  auto out_a = foundry::test::poisoned_device_buffer<float>(in.width * in.height, a);
  auto out_b = foundry::test::poisoned_device_buffer<float>(in.width * in.height, b);
  a.synchronize();
  b.synchronize();
  foundry::test::enqueue_spin_cycles(a, spin_cycles);
  foundry::test::enqueue_spin_cycles(b, spin_cycles);
  const image_view<const float> view{d_in.data(), in.width, in.height, in.pitch};
  foundry::convolve_2d(view, image_view<float>{out_a.data(), in.width, in.height, in.width},
                       cuda::std::span<const float>(filter_a.data(), filter_a.size()), border_mode::zero, a);
  foundry::convolve_2d(view, image_view<float>{out_b.data(), in.width, in.height, in.width},
                       cuda::std::span<const float>(filter_b.data(), filter_b.size()), border_mode::zero, b);
  const host_image got_a{in.width, in.height, in.width, foundry::test::to_host(out_a, a)};
  const host_image got_b{in.width, in.height, in.width, foundry::test::to_host(out_b, b)};
  std::string first;
  CHECK(count_mismatches(got_a, cpu_convolve(in, filter_a, border_mode::zero), 5, first) == 0);
  CHECK(count_mismatches(got_b, cpu_convolve(in, filter_b, border_mode::zero), 5, first) == 0);
}

TEST_CASE("convolve_2d lets the caller reuse the host filter as soon as the call returns", "[gpu]") {
  const auto in = random_image(200, 150, 200, 31);
  auto filter = random_filter(7);
  const auto ref = cpu_convolve(in, filter, border_mode::clamp);
  foundry::stream s;
  const auto d_in = foundry::test::to_device(in.pixels, s);
  auto d_out = foundry::test::poisoned_device_buffer<float>(in.pixels.size(), s);
  foundry::test::enqueue_spin_cycles(s, spin_cycles);  // the kernel is still pending when the filter changes
  foundry::convolve_2d(image_view<const float>{d_in.data(), in.width, in.height, in.pitch},
                       image_view<float>{d_out.data(), in.width, in.height, in.pitch},
                       cuda::std::span<const float>(filter.data(), filter.size()), border_mode::clamp, s);
  std::fill(filter.begin(), filter.end(), std::numeric_limits<float>::quiet_NaN());
  const host_image out{in.width, in.height, in.pitch, foundry::test::to_host(d_out, s)};
  std::string first;
  const std::size_t bad = count_mismatches(out, ref, 7, first);
  INFO(bad << " bad, first " << first);
  CHECK(bad == 0);
}

// ---------------------------------------------------------------------------
// Arguments (host only: every check throws before anything is enqueued)

namespace {

// Stand-in pointers for argument checks that throw before any memory is touched.
struct fake_images {
  std::vector<float> in_storage = std::vector<float>(64 * 64);
  std::vector<float> out_storage = std::vector<float>(64 * 64);
  image_view<const float> in{in_storage.data(), 32, 32, 32};
  image_view<float> out{out_storage.data(), 32, 32, 32};
};

template <class Call>
void for_each_variant(Call&& call) {
  for (auto v : {variant::foundry, variant::naive}) {
    INFO(to_string(v));
    call([v](image_view<const float> in, image_view<float> out, cuda::std::span<const float> filter) {
      if (v == variant::foundry) {
        foundry::convolve_2d(in, out, filter, border_mode::clamp, foundry::test::unused_stream());
      } else {
        foundry::naive::convolve_2d(in, out, filter, border_mode::clamp, foundry::test::unused_stream());
      }
    });
  }
}

}  // namespace

TEST_CASE("square_filter_side accepts exactly the odd squares from 3x3 to 15x15") {
  using foundry::detail::square_filter_side;
  STATIC_REQUIRE(square_filter_side(9) == 3);
  STATIC_REQUIRE(square_filter_side(25) == 5);
  STATIC_REQUIRE(square_filter_side(225) == 15);
  STATIC_REQUIRE(square_filter_side(0) == 0);
  STATIC_REQUIRE(square_filter_side(1) == 0);    // 1x1
  STATIC_REQUIRE(square_filter_side(16) == 0);   // 4x4: even
  STATIC_REQUIRE(square_filter_side(10) == 0);   // not a square
  STATIC_REQUIRE(square_filter_side(289) == 0);  // 17x17: too large
}

TEST_CASE("convolve_2d rejects filters that are not odd squares from 3x3 to 15x15") {
  fake_images f;
  for_each_variant([&](auto call) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4}, std::size_t{16}, std::size_t{10},
                          std::size_t{36}, std::size_t{196}, std::size_t{289}}) {
      const std::vector<float> filter(n, 1.0f);
      INFO(n << " weights");
      REQUIRE_THROWS_AS(call(f.in, f.out, cuda::std::span<const float>(filter.data(), n)), std::invalid_argument);
    }
  });
}

TEST_CASE("convolve_2d rejects null image and filter pointers") {
  fake_images f;
  const std::vector<float> filter(9, 1.0f);
  const cuda::std::span<const float> good_filter(filter.data(), 9);
  for_each_variant([&](auto call) {
    auto in = f.in;
    in.data = nullptr;
    REQUIRE_THROWS_AS(call(in, f.out, good_filter), std::invalid_argument);
    auto out = f.out;
    out.data = nullptr;
    REQUIRE_THROWS_AS(call(f.in, out, good_filter), std::invalid_argument);
    REQUIRE_THROWS_AS(call(f.in, f.out, cuda::std::span<const float>(static_cast<const float*>(nullptr), 9)),
                      std::invalid_argument);
  });
}

TEST_CASE("convolve_2d rejects a pitch smaller than the width") {
  fake_images f;
  const std::vector<float> filter(9, 1.0f);
  const cuda::std::span<const float> good_filter(filter.data(), 9);
  for_each_variant([&](auto call) {
    auto in = f.in;
    in.pitch = in.width - 1;
    REQUIRE_THROWS_AS(call(in, f.out, good_filter), std::invalid_argument);
    auto out = f.out;
    out.pitch = out.width - 1;
    REQUIRE_THROWS_AS(call(f.in, out, good_filter), std::invalid_argument);
  });
}

TEST_CASE("convolve_2d rejects an output whose size differs from the input's") {
  fake_images f;
  const std::vector<float> filter(9, 1.0f);
  const cuda::std::span<const float> good_filter(filter.data(), 9);
  for_each_variant([&](auto call) {
    auto out = f.out;
    out.width = f.in.width + 1;
    out.pitch = out.width;
    REQUIRE_THROWS_AS(call(f.in, out, good_filter), std::invalid_argument);
    out = f.out;
    out.height = f.in.height - 1;
    REQUIRE_THROWS_AS(call(f.in, out, good_filter), std::invalid_argument);
  });
}

TEST_CASE("convolve_2d rejects an output that overlaps the input") {
  fake_images f;
  const std::vector<float> filter(9, 1.0f);
  const cuda::std::span<const float> good_filter(filter.data(), 9);
  for_each_variant([&](auto call) {
    // In place, and shifted by one row.
    REQUIRE_THROWS_AS(call(f.in, image_view<float>{f.in_storage.data(), 32, 32, 32}, good_filter),
                      std::invalid_argument);
    REQUIRE_THROWS_AS(call(f.in, image_view<float>{f.in_storage.data() + 32, 32, 32, 32}, good_filter),
                      std::invalid_argument);
  });
}

TEST_CASE("convolve_2d on an empty image enqueues nothing and accepts null pointers") {
  const std::vector<float> filter(25, 1.0f);
  const cuda::std::span<const float> good_filter(filter.data(), 25);
  for_each_variant([&](auto call) {
    REQUIRE_NOTHROW(
        call(image_view<const float>{nullptr, 0, 10, 0}, image_view<float>{nullptr, 0, 10, 0}, good_filter));
    REQUIRE_NOTHROW(
        call(image_view<const float>{nullptr, 10, 0, 10}, image_view<float>{nullptr, 10, 0, 10}, good_filter));
  });
}
