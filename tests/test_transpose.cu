// transpose and copy_2d, plus the naive transpose twin: CPU references on seeded random
// data at odd shapes (edge tiles, one row, one column), pitched rows whose padding must
// stay poisoned, a misaligned input or output, element types of 1, 2, 4, 8 and 16 bytes,
// views of different layouts, a matrix past 2^31 elements, and the argument checks; the
// tuning candidates of bench_transpose (rectangular tiles, output rows split at aligned
// addresses) on the same cases; the default's choice of output-row split (on the host:
// the rule and the kernel it picks; on the GPU: both kernels against the reference), and
// the split points' arithmetic on the host.
//
// Every comparison is bitwise (the data are random bytes, NaNs included): a transpose
// moves elements, it never computes with them.
#include <catch2/catch.hpp>

#include <foundry/algorithms/transform.cuh>
#include <foundry/algorithms/transpose.cuh>
#include <foundry/naive/transpose.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

using namespace foundry::test;
using foundry::matrix_layout;
using foundry::matrix_view;

namespace {

// A 16-byte element with 4-byte alignment: no vector type of its own.
struct quad {
  std::uint32_t a, b, c, d;
};

// A 24-byte element: no 32-byte address splits a row of them between whole elements.
struct triple {
  std::uint64_t a, b, c;
};

// A 48-byte element: even a 32 x 32 tile of it (33 x 32 with padding) exceeds 48 KiB of
// static shared memory, so every call moves one element per thread.
struct wide_element {
  float x[12];
};

struct shape {
  std::int64_t rows;
  std::int64_t cols;
};

// Empty, single element, one row, one column, around the 32, 64 and 128 of the tiles, and
// large enough for many interior tiles.
const std::vector<shape>& odd_shapes() {
  static const std::vector<shape> shapes{{0, 5},     {5, 0},     {1, 1},       {1, 4099},   {4099, 1},
                                         {31, 33},   {32, 32},   {33, 31},     {64, 64},    {65, 63},
                                         {129, 127}, {127, 129}, {1023, 1025}, {2049, 4099}};
  return shapes;
}

// Tuning candidates (foundry::transpose_tuning): Threads, Rows x Cols tiles, the output
// split's alignment in bytes, MinBlocksPerSm.
template <int Threads, int Rows, int Cols, int StoreAlignment, int BlocksPerSm>
using transpose_candidate = foundry::transpose_tuning<Threads, Rows, Cols, StoreAlignment, BlocksPerSm>;

using store32_policy = transpose_candidate<256, 64, 64, 32, 5>;
using store128_policy = transpose_candidate<256, 64, 64, 128, 4>;
using tile128x32_policy = transpose_candidate<256, 128, 32, 0, 5>;
using wide_store32_policy = transpose_candidate<512, 64, 128, 32, 2>;

// `n` elements of random bits (seeded), whatever the type.
template <class T>
std::vector<T> random_elements(std::size_t n, std::uint64_t stream_id) {
  const auto bytes = random_vector<std::uint8_t>(n * sizeof(T), 0, 255, stream_id);
  std::vector<T> v(n);
  if (n != 0) std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

// The index of the first element whose bits differ, or -1 when none does.
template <class T>
std::int64_t first_bit_difference(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return static_cast<std::int64_t>(i);
  }
  return -1;
}

enum class algorithm { transpose, naive_transpose, copy_2d };

// One call (`transpose` with `Policy`) on a rows × cols input of pitch `in_pitch` starting
// `in_offset` elements into its allocation; the output (cols × rows, or rows × cols for
// copy_2d) has pitch `out_pitch` and starts `out_offset` elements into an allocation of
// out_offset + out_rows × out_pitch elements, all poisoned first. The whole output
// allocation is compared with a CPU reference: padding stays poisoned. Returns the
// output view's first element's address.
template <class T, class Policy = foundry::transpose_policy>
std::uintptr_t check_against_reference(algorithm a, shape sh, std::int64_t in_pitch, std::int64_t out_pitch,
                                       std::size_t in_offset, std::size_t out_offset, std::uint64_t seed_id,
                                       cuda::stream_ref s) {
  const bool transposes = a != algorithm::copy_2d;
  const std::int64_t out_rows = transposes ? sh.cols : sh.rows;
  const std::int64_t out_cols = transposes ? sh.rows : sh.cols;
  const auto in = random_elements<T>(in_offset + static_cast<std::size_t>(sh.rows * in_pitch), seed_id);
  const auto d_in = to_device(in, s);
  auto d_out = poisoned_device_buffer<T>(out_offset + static_cast<std::size_t>(out_rows * out_pitch), s);

  const matrix_view<const T> in_view{d_in.data() == nullptr ? nullptr : d_in.data() + in_offset, sh.rows, sh.cols,
                                     in_pitch};
  const matrix_view<T> out_view{d_out.data() == nullptr ? nullptr : d_out.data() + out_offset, out_rows, out_cols,
                                out_pitch};
  switch (a) {
    case algorithm::transpose: foundry::transpose<Policy>(in_view, out_view, s); break;
    case algorithm::naive_transpose: foundry::naive::transpose(in_view, out_view, s); break;
    case algorithm::copy_2d: foundry::copy_2d(in_view, out_view, s); break;
  }

  std::vector<T> expected(d_out.size(), poison_value<T>());
  for (std::int64_t r = 0; r < sh.rows; ++r) {
    for (std::int64_t c = 0; c < sh.cols; ++c) {
      const std::int64_t o = transposes ? c * out_pitch + r : r * out_pitch + c;
      expected[out_offset + static_cast<std::size_t>(o)] = in[in_offset + static_cast<std::size_t>(r * in_pitch + c)];
    }
  }
  CHECK(first_bit_difference(to_host(d_out, s), expected) == -1);
  return reinterpret_cast<std::uintptr_t>(out_view.data);
}

// Whether the default transpose into `out` runs the kernel that splits output rows at
// aligned addresses (and not the one of `transpose_policy` itself).
template <class T>
bool default_splits_at_aligned(const matrix_view<T>& out) {
  const auto kernel = foundry::detail::transpose_kernel_for<foundry::transpose_policy>(out);
  return kernel != foundry::detail::transpose_kernel<foundry::transpose_policy, T>;
}

// Contiguous (pitch == row length), pitched (in: cols + 3, out: out_cols + 5), the input,
// the output or both misaligned by one element, pitched or not.
template <class T, class Policy = foundry::transpose_policy>
void check_odd_shapes(algorithm a, cuda::stream_ref s) {
  const bool transposes = a != algorithm::copy_2d;
  std::uint64_t seed_id = 0;
  for (const shape sh : odd_shapes()) {
    CAPTURE(sh.rows, sh.cols);
    const std::int64_t out_cols = transposes ? sh.rows : sh.cols;
    check_against_reference<T, Policy>(a, sh, sh.cols, out_cols, 0, 0, ++seed_id, s);
    check_against_reference<T, Policy>(a, sh, sh.cols + 3, out_cols + 5, 0, 0, ++seed_id, s);
    check_against_reference<T, Policy>(a, sh, sh.cols + 3, out_cols + 5, 1, 0, ++seed_id, s);
    check_against_reference<T, Policy>(a, sh, sh.cols, out_cols, 1, 0, ++seed_id, s);
    check_against_reference<T, Policy>(a, sh, sh.cols, out_cols, 0, 1, ++seed_id, s);
    check_against_reference<T, Policy>(a, sh, sh.cols + 3, out_cols + 5, 1, 1, ++seed_id, s);
  }
}

std::uint8_t byte_pattern(std::int64_t r, std::int64_t c) { return static_cast<std::uint8_t>((r * 131 + c) & 0xff); }

__device__ inline std::uint8_t device_byte_pattern(std::int64_t r, std::int64_t c) {
  return static_cast<std::uint8_t>((r * 131 + c) & 0xff);
}

// m(r, c) = pattern(r, c) for a rows × cols matrix of pitch ld: a block per row, lanes along it.
__global__ void fill_byte_pattern(std::uint8_t* m, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) m[r * ld + c] = device_byte_pattern(r, c);
  }
}

// Counts the (r, c) of a rows × cols matrix of pitch ld where m(r, c) differs from
// pattern(c, r) (transposed) or pattern(r, c).
__global__ void count_byte_pattern_mismatches(const std::uint8_t* m, std::int64_t rows, std::int64_t cols,
                                              std::int64_t ld, bool transposed, unsigned long long* count) {
  unsigned long long local = 0;
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      local += m[r * ld + c] != (transposed ? device_byte_pattern(c, r) : device_byte_pattern(r, c));
    }
  }
  if (local != 0) atomicAdd(count, local);
}

foundry::launch_config row_per_block_config() {
  foundry::launch_config c;
  c.grid = dim3(foundry::resident_grid_blocks(8), 1, 1);
  c.block = dim3(256, 1, 1);
  return c;
}

unsigned long long byte_pattern_mismatches(const std::uint8_t* m, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                           bool transposed, cuda::stream_ref s) {
  foundry::device_buffer<unsigned long long> count(1, s, 0ull);
  foundry::launch(s, row_per_block_config(), count_byte_pattern_mismatches, m, rows, cols, ld, transposed,
                  count.data());
  return to_host(count, s)[0];
}

}  // namespace

TEMPLATE_TEST_CASE("transpose matches a CPU reference at odd shapes, pitches and offsets", "[gpu]", std::uint8_t,
                   std::uint16_t, float, double, quad) {
  foundry::stream s;
  check_odd_shapes<TestType>(algorithm::transpose, s);
}

TEMPLATE_TEST_CASE("transpose's tuning candidates match the same CPU reference", "[gpu]", store32_policy,
                   store128_policy, tile128x32_policy, wide_store32_policy) {
  // Every element size: the split points move by up to alignment / sizeof(T) - 1 rows
  // (capped at a tile's rows for bytes), and 16-byte elements fall back to 32 × 32 tiles.
  foundry::stream s;
  check_odd_shapes<std::uint8_t, TestType>(algorithm::transpose, s);
  check_odd_shapes<std::uint16_t, TestType>(algorithm::transpose, s);
  check_odd_shapes<float, TestType>(algorithm::transpose, s);
  check_odd_shapes<double, TestType>(algorithm::transpose, s);
  check_odd_shapes<quad, TestType>(algorithm::transpose, s);
}

TEMPLATE_TEST_CASE("the default transpose matches the CPU reference on both sides of its output-row split", "[gpu]",
                   std::uint8_t, std::uint16_t, float, double, quad, triple) {
  // Outputs with 32-byte aligned bases and pitches (split at tiles), and with pitches that
  // are not multiples of 32 bytes or bases one element off (split at 32-byte addresses);
  // inputs aligned or not; pitched output rows whose padding must stay poisoned.
  foundry::stream s;
  constexpr auto per_sector = static_cast<std::int64_t>(std::max<std::size_t>(1, 32 / sizeof(TestType)));
  struct output {
    std::int64_t pitch;
    std::size_t offset;
    std::size_t in_offset;
  };
  int at_tiles = 0;
  int at_aligned = 0;
  std::uint64_t seed_id = 300;
  for (const shape sh : {shape{1023, 1025}, shape{129, 127}, shape{4099, 1}, shape{2, 4099}, shape{33, 31}}) {
    const std::int64_t aligned_pitch = (sh.rows / per_sector + 1) * per_sector;
    for (const output o : {output{sh.rows, 0, 0}, output{aligned_pitch, 0, 0}, output{aligned_pitch, 0, 1},
                           output{aligned_pitch, 1, 0}, output{sh.rows + 5, 0, 0}, output{sh.rows + 5, 1, 1}}) {
      CAPTURE(sh.rows, sh.cols, o.pitch, o.offset, o.in_offset);
      const std::uintptr_t base = check_against_reference<TestType>(algorithm::transpose, sh, sh.cols + 3, o.pitch,
                                                                    o.in_offset, o.offset, ++seed_id, s);
      const matrix_view<TestType> out{reinterpret_cast<TestType*>(base), sh.cols, sh.rows, o.pitch};
      ++(default_splits_at_aligned(out) ? at_aligned : at_tiles);
    }
  }
  // Both kernels ran, but for elements that no 32-byte split can align (24 bytes).
  CHECK(at_tiles > 0);
  CHECK((at_aligned > 0) == foundry::detail::aligned_split_applies(sizeof(TestType), 32));
}

TEST_CASE("copy_2d between layouts splits the destination's rows as transpose does", "[gpu]") {
  // A column-major destination is the source transposed in memory: copy_2d runs the
  // default transpose, at tiles for a 32-byte multiple pitch, at 32-byte addresses else.
  foundry::stream s;
  const shape sh{1023, 1025};
  const std::int64_t in_pitch = sh.cols + 3;
  const auto in = random_elements<float>(static_cast<std::size_t>(sh.rows * in_pitch), 400);
  const auto d_in = to_device(in, s);
  for (const std::int64_t pitch : {std::int64_t{1024}, std::int64_t{1028}, std::int64_t{1030}}) {
    CAPTURE(pitch);
    auto d_out = poisoned_device_buffer<float>(static_cast<std::size_t>(sh.cols * pitch), s);
    const matrix_view<float> dst{d_out.data(), sh.rows, sh.cols, pitch, matrix_layout::col_major};
    foundry::copy_2d(matrix_view<const float>{d_in.data(), sh.rows, sh.cols, in_pitch}, dst, s);
    CHECK(default_splits_at_aligned(foundry::detail::stored_form(dst)) == (pitch != 1024));
    std::vector<float> expected(d_out.size(), poison_value<float>());
    for (std::int64_t r = 0; r < sh.rows; ++r) {
      for (std::int64_t c = 0; c < sh.cols; ++c) {
        expected[static_cast<std::size_t>(c * pitch + r)] = in[static_cast<std::size_t>(r * in_pitch + c)];
      }
    }
    CHECK(first_bit_difference(to_host(d_out, s), expected) == -1);
  }
}

TEMPLATE_TEST_CASE("copy_2d matches a CPU reference at odd shapes, pitches and offsets", "[gpu]", std::uint8_t,
                   std::uint16_t, float, double, quad) {
  foundry::stream s;
  check_odd_shapes<TestType>(algorithm::copy_2d, s);
}

TEST_CASE("transpose, copy_2d and naive::transpose take elements too large for a shared tile", "[gpu]") {
  STATIC_REQUIRE(!foundry::detail::transpose_tile<foundry::transpose_policy, wide_element>::fits_static_shared);
  STATIC_REQUIRE(foundry::detail::transpose_tile<foundry::transpose_policy, quad>::fits_static_shared);
  foundry::stream s;
  std::uint64_t seed_id = 500;
  for (const shape sh : odd_shapes()) {
    if (sh.rows * sh.cols > (std::int64_t{1} << 21)) continue;  // 48-byte elements: keep the host reference small
    CAPTURE(sh.rows, sh.cols);
    for (const algorithm a : {algorithm::transpose, algorithm::copy_2d, algorithm::naive_transpose}) {
      CAPTURE(static_cast<int>(a));
      const std::int64_t out_cols = a == algorithm::copy_2d ? sh.cols : sh.rows;
      check_against_reference<wide_element>(a, sh, sh.cols, out_cols, 0, 0, ++seed_id, s);
      check_against_reference<wide_element>(a, sh, sh.cols + 3, out_cols + 5, 1, 1, ++seed_id, s);
    }
  }
  // Views of different layouts: copy_2d transposes in memory, through the same fallback.
  const shape sh{129, 127};
  const auto in = random_elements<wide_element>(static_cast<std::size_t>(sh.rows * sh.cols), 600);
  const auto d_in = to_device(in, s);
  const std::int64_t pitch = sh.rows + 2;
  auto d_out = poisoned_device_buffer<wide_element>(static_cast<std::size_t>(sh.cols * pitch), s);
  foundry::copy_2d(matrix_view<const wide_element>{d_in.data(), sh.rows, sh.cols, sh.cols},
                   matrix_view<wide_element>{d_out.data(), sh.rows, sh.cols, pitch, matrix_layout::col_major}, s);
  std::vector<wide_element> expected(d_out.size(), poison_value<wide_element>());
  for (std::int64_t r = 0; r < sh.rows; ++r) {
    for (std::int64_t c = 0; c < sh.cols; ++c) {
      expected[static_cast<std::size_t>(c * pitch + r)] = in[static_cast<std::size_t>(r * sh.cols + c)];
    }
  }
  CHECK(first_bit_difference(to_host(d_out, s), expected) == -1);
}

TEMPLATE_TEST_CASE("naive::transpose matches the same CPU reference", "[gpu]", std::uint8_t, float, double, quad) {
  foundry::stream s;
  check_odd_shapes<TestType>(algorithm::naive_transpose, s);
}

TEMPLATE_TEST_CASE("copy_2d moves 16-byte vectors when pointers and pitches allow them", "[gpu]", std::uint8_t,
                   std::uint16_t, float, double) {
  // Pitches a multiple of the vector but wider than the row: the vector path, with a
  // scalar tail of cols % vector elements per row. The padding must stay poisoned.
  foundry::stream s;
  constexpr std::int64_t v = 16 / sizeof(TestType);
  std::uint64_t seed_id = 100;
  for (const shape sh : odd_shapes()) {
    CAPTURE(sh.rows, sh.cols);
    const std::int64_t in_pitch = (sh.cols / v + 1) * v;
    const std::int64_t out_pitch = (sh.cols / v + 2) * v;
    check_against_reference<TestType>(algorithm::copy_2d, sh, in_pitch, out_pitch, 0, 0, ++seed_id, s);
    check_against_reference<TestType>(algorithm::copy_2d, sh, in_pitch, in_pitch, 0, 0, ++seed_id, s);
  }
}

TEST_CASE("transpose between layouts copies, copy_2d between layouts transposes", "[gpu]") {
  // A column-major rows × cols view is the row-major cols × rows matrix in memory.
  foundry::stream s;
  for (const shape sh : {shape{33, 31}, shape{1023, 1025}}) {
    CAPTURE(sh.rows, sh.cols);
    const std::int64_t in_pitch = sh.cols + 3;   // row-major input: rows × cols
    const std::int64_t out_pitch = sh.cols + 5;  // column-major output: each stored row is a column
    const auto in = random_elements<float>(static_cast<std::size_t>(sh.rows * in_pitch), 200);
    const auto d_in = to_device(in, s);
    const matrix_view<const float> in_view{d_in.data(), sh.rows, sh.cols, in_pitch};

    // transpose: out (cols × rows, column-major) is stored exactly as the input.
    auto d_t = poisoned_device_buffer<float>(static_cast<std::size_t>(sh.rows * out_pitch), s);
    foundry::transpose(in_view, matrix_view<float>{d_t.data(), sh.cols, sh.rows, out_pitch, matrix_layout::col_major},
                       s);
    auto d_naive = poisoned_device_buffer<float>(static_cast<std::size_t>(sh.rows * out_pitch), s);
    foundry::naive::transpose(
        in_view, matrix_view<float>{d_naive.data(), sh.cols, sh.rows, out_pitch, matrix_layout::col_major}, s);
    // copy_2d: out (rows × cols, column-major) is stored as the input transposed.
    const std::int64_t copy_pitch = sh.rows + 5;
    auto d_c = poisoned_device_buffer<float>(static_cast<std::size_t>(sh.cols * copy_pitch), s);
    foundry::copy_2d(in_view, matrix_view<float>{d_c.data(), sh.rows, sh.cols, copy_pitch, matrix_layout::col_major},
                     s);

    std::vector<float> copied(d_t.size(), poison_value<float>());
    std::vector<float> transposed(d_c.size(), poison_value<float>());
    for (std::int64_t r = 0; r < sh.rows; ++r) {
      for (std::int64_t c = 0; c < sh.cols; ++c) {
        const float x = in[static_cast<std::size_t>(r * in_pitch + c)];
        copied[static_cast<std::size_t>(r * out_pitch + c)] = x;
        transposed[static_cast<std::size_t>(c * copy_pitch + r)] = x;
      }
    }
    CHECK(first_bit_difference(to_host(d_t, s), copied) == -1);
    CHECK(first_bit_difference(to_host(d_naive, s), copied) == -1);
    CHECK(first_bit_difference(to_host(d_c, s), transposed) == -1);
  }
}

TEST_CASE("transposes and copies back to back on one stream see each other's results", "[gpu]") {
  // The kernels start before the previous one ends (programmatic dependent launch) and
  // must wait for it before touching memory: a chain of updates with no synchronisation
  // exposes a kernel that reads a stale value or writes over one still being read.
  foundry::stream s;
  const shape sh{1023, 1025};
  const std::size_t n = static_cast<std::size_t>(sh.rows * sh.cols);
  auto d_a = poisoned_device_buffer<std::int32_t>(n, s);
  auto d_b = poisoned_device_buffer<std::int32_t>(n, s);
  const std::int64_t c_pitch = sh.rows + 4;
  auto d_c = poisoned_device_buffer<std::int32_t>(static_cast<std::size_t>(sh.cols * c_pitch), s);
  foundry::iota(d_a.span(), 0, s);
  const matrix_view<std::int32_t> a{d_a.data(), sh.rows, sh.cols, sh.cols};
  const matrix_view<std::int32_t> b{d_b.data(), sh.cols, sh.rows, sh.rows};
  const matrix_view<std::int32_t> c{d_c.data(), sh.cols, sh.rows, c_pitch};
  for (int step = 0; step < 30; ++step) {
    foundry::transform(
        d_a.span(), d_a.span(), [] __device__(std::int32_t v) { return v + 1; }, s);
    foundry::transpose(a, b, s);
    foundry::copy_2d(b, c, s);
    foundry::transpose(c, a, s);
  }
  CHECK(to_host(d_a, s) == host_tabulate(n, [](std::size_t i) { return static_cast<std::int32_t>(i) + 30; }));
}

TEST_CASE("transpose and copy_2d cover 46341 x 46349 one-byte elements", "[gpu][large]") {
  // 2^31 + 2^19 elements: every index computation must be 64-bit. The data is a pattern
  // of (row, column), generated and checked on the device (2 GiB per matrix).
  foundry::stream s;
  const std::int64_t rows = 46341;
  const std::int64_t cols = 46349;
  REQUIRE(rows * cols > (std::int64_t{1} << 31));
  REQUIRE(byte_pattern(1, 2) == 133);
  foundry::device_buffer<std::uint8_t> in(static_cast<std::size_t>(rows * cols), s);
  foundry::launch(s, row_per_block_config(), fill_byte_pattern, in.data(), rows, cols, cols);
  REQUIRE(byte_pattern_mismatches(in.data(), rows, cols, cols, false, s) == 0);
  {
    auto out = poisoned_device_buffer<std::uint8_t>(static_cast<std::size_t>(rows * cols), s);
    foundry::transpose(matrix_view<const std::uint8_t>{in.data(), rows, cols, cols},
                       matrix_view<std::uint8_t>{out.data(), cols, rows, rows}, s);
    CHECK(byte_pattern_mismatches(out.data(), cols, rows, rows, true, s) == 0);
  }
  const std::int64_t pitch = cols + 3;
  auto copy = poisoned_device_buffer<std::uint8_t>(static_cast<std::size_t>(rows * pitch), s);
  foundry::copy_2d(matrix_view<const std::uint8_t>{in.data(), rows, cols, cols},
                   matrix_view<std::uint8_t>{copy.data(), rows, cols, pitch}, s);
  CHECK(byte_pattern_mismatches(copy.data(), rows, cols, pitch, false, s) == 0);
}

// ---- tile arithmetic, on the host ----

TEST_CASE("the default transpose tile is 64 x 64 for floats, with no shear") {
  using tile = foundry::detail::transpose_tile<foundry::transpose_policy, float>;
  STATIC_REQUIRE(tile::rows == 64);
  STATIC_REQUIRE(tile::cols == 64);
  STATIC_REQUIRE(tile::extra_rows == 0);
  STATIC_REQUIRE(tile::items == 16);
  STATIC_REQUIRE(tile::store_steps == 2);
  using sheared = foundry::detail::transpose_tile<store128_policy, float>;
  STATIC_REQUIRE(sheared::extra_rows == 31);
  STATIC_REQUIRE(sheared::loaded_rows == 95);
  STATIC_REQUIRE(sheared::store_steps == 3);
  // One-byte elements: 128 bytes would be 127 more rows; capped at a tile's 64.
  STATIC_REQUIRE(foundry::detail::transpose_tile<store128_policy, std::uint8_t>::extra_rows == 63);
}

TEST_CASE("the default policy chooses its output-row split per call, at 32 bytes for misaligned rows") {
  using foundry::detail::transpose_tile;
  using split_policy = foundry::detail::misaligned_output_policy<foundry::transpose_policy>;
  STATIC_REQUIRE(foundry::transpose_policy::store_alignment_bytes == foundry::store_alignment_automatic);
  STATIC_REQUIRE(transpose_tile<foundry::transpose_policy, float>::alignment == 0);
  STATIC_REQUIRE(split_policy::store_alignment_bytes == 32);
  STATIC_REQUIRE(transpose_tile<split_policy, float>::alignment == 32);
  STATIC_REQUIRE(transpose_tile<split_policy, float>::extra_rows == 7);
  STATIC_REQUIRE(transpose_tile<split_policy, std::uint8_t>::extra_rows == 31);
  STATIC_REQUIRE(transpose_tile<split_policy, quad>::extra_rows == 1);
  // Everything else is the default's: the same grid and block.
  STATIC_REQUIRE(transpose_tile<split_policy, float>::rows == transpose_tile<foundry::transpose_policy, float>::rows);
  STATIC_REQUIRE(transpose_tile<split_policy, float>::cols == transpose_tile<foundry::transpose_policy, float>::cols);
  STATIC_REQUIRE(split_policy::block_threads == foundry::transpose_policy::block_threads);
}

namespace {

// The rule's definition: some output row is cut between blocks (at tiles) at an address
// that is not a multiple of `alignment`.
bool some_cut_off_alignment(std::uintptr_t base, std::int64_t rows, std::int64_t cols, std::int64_t pitch,
                            std::size_t size, std::int64_t tile_rows, std::size_t alignment) {
  for (std::int64_t c = 0; c < rows; ++c) {
    for (std::int64_t k = 1; k * tile_rows < cols; ++k) {
      if ((base + static_cast<std::uintptr_t>(c * pitch + k * tile_rows) * size) % alignment != 0) return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("the automatic split is aligned exactly when some output row is cut off a 32-byte boundary") {
  // Every base offset within two sectors, pitches around multiples of 32 bytes, one to
  // three rows, rows shorter than, equal to and longer than a tile.
  using foundry::detail::automatic_output_row_split;
  using foundry::detail::output_row_split;
  for (const std::size_t size : {1, 2, 4, 8, 16}) {
    const int tile_rows = size <= 8 ? 64 : 32;
    const std::size_t alignment = 32;
    for (std::uintptr_t offset = 0; offset < 2 * alignment; offset += std::min<std::size_t>(size, 4)) {
      for (const std::int64_t rows : {1, 2, 3}) {
        for (const std::int64_t cols :
             {std::int64_t{1}, std::int64_t{tile_rows}, std::int64_t{tile_rows} + 1, std::int64_t{3} * tile_rows + 5}) {
          for (std::int64_t pitch = cols; pitch < cols + 2 * static_cast<std::int64_t>(alignment); ++pitch) {
            CAPTURE(size, offset, rows, cols, pitch);
            const std::uintptr_t base = 0x10000 + offset;
            const bool expected = some_cut_off_alignment(base, rows, cols, pitch, size, tile_rows, alignment);
            REQUIRE((automatic_output_row_split(base, rows, cols, pitch, size, tile_rows, alignment) ==
                     output_row_split::at_aligned) == expected);
          }
        }
      }
    }
  }
}

TEST_CASE("the automatic split at the benchmark's shapes and at the edges of the rule") {
  using foundry::detail::automatic_output_row_split;
  const auto at_aligned = foundry::detail::output_row_split::at_aligned;
  const auto at_tiles = foundry::detail::output_row_split::at_tiles;
  const std::uintptr_t base = 0x10000;  // 256-byte aligned, as cudaMallocAsync returns
  // Floats, output cols × rows of pitch rows: 16383 x 16385 (pitch 65532 bytes) splits at
  // 32-byte addresses; 16384 x 16384, 8192 x 32768 (and doubles 8192 x 8192) at tiles.
  CHECK(automatic_output_row_split(base, 16385, 16383, 16383, 4, 64, 32) == at_aligned);
  CHECK(automatic_output_row_split(base, 16384, 16384, 16384, 4, 64, 32) == at_tiles);
  CHECK(automatic_output_row_split(base, 32768, 8192, 8192, 4, 64, 32) == at_tiles);
  CHECK(automatic_output_row_split(base, 8192, 8192, 8192, 8, 64, 32) == at_tiles);
  // A pitch of 32 bytes times an odd number is aligned; 16 bytes off is not.
  CHECK(automatic_output_row_split(base, 100, 1000, 1032, 4, 64, 32) == at_tiles);
  CHECK(automatic_output_row_split(base, 100, 1000, 1028, 4, 64, 32) == at_aligned);
  // An aligned pitch from a base 4 bytes off.
  CHECK(automatic_output_row_split(base + 4, 100, 1024, 1024, 4, 64, 32) == at_aligned);
  // One row: its pitch never matters, its base does.
  CHECK(automatic_output_row_split(base, 1, 1000, 1001, 4, 64, 32) == at_tiles);
  CHECK(automatic_output_row_split(base + 8, 1, 1000, 1001, 4, 64, 32) == at_aligned);
  // Rows of at most one tile are never cut between blocks.
  CHECK(automatic_output_row_split(base + 4, 100, 64, 65, 4, 64, 32) == at_tiles);
  CHECK(automatic_output_row_split(base + 4, 100, 65, 65, 4, 64, 32) == at_aligned);
  // 16-byte elements (4-byte aligned ones included), 24- and 32-byte elements: the
  // latter two have nothing to align to.
  CHECK(automatic_output_row_split(base, 100, 1000, 1001, 16, 32, 32) == at_aligned);
  CHECK(automatic_output_row_split(base + 4, 100, 1000, 1002, 16, 32, 32) == at_aligned);
  CHECK(automatic_output_row_split(base, 100, 1000, 1002, 16, 32, 32) == at_tiles);
  CHECK(automatic_output_row_split(base + 8, 100, 1000, 1001, 24, 32, 32) == at_tiles);
  CHECK(automatic_output_row_split(base + 8, 100, 1000, 1001, 32, 32, 32) == at_tiles);
  // No alignment (a policy that splits at tiles): never.
  CHECK(automatic_output_row_split(base + 4, 100, 1000, 1001, 4, 64, 0) == at_tiles);
}

TEST_CASE("aligned outputs run the default's own kernel; policies that fix the split keep theirs") {
  using foundry::transpose_policy;
  using foundry::detail::misaligned_output_policy;
  using foundry::detail::transpose_kernel;
  using foundry::detail::transpose_kernel_for;
  float* p = fake_pointer<float>();  // 2^20: aligned to far more than 32 bytes
  const matrix_view<float> aligned{p, 16384, 16384, 16384};
  const matrix_view<float> odd_pitch{p, 16385, 16383, 16383};
  const matrix_view<float> odd_base{p + 1, 16384, 16384, 16384};
  CHECK(transpose_kernel_for<transpose_policy>(aligned) == transpose_kernel<transpose_policy, float>);
  CHECK(transpose_kernel_for<transpose_policy>(odd_pitch) ==
        transpose_kernel<misaligned_output_policy<transpose_policy>, float>);
  CHECK(transpose_kernel_for<transpose_policy>(odd_base) ==
        transpose_kernel<misaligned_output_policy<transpose_policy>, float>);
  // store_alignment_bytes set to 32 or to 0: the same kernel for every output.
  for (const auto& out : {aligned, odd_pitch, odd_base}) {
    CHECK(transpose_kernel_for<store32_policy>(out) == transpose_kernel<store32_policy, float>);
    CHECK(transpose_kernel_for<tile128x32_policy>(out) == transpose_kernel<tile128x32_policy, float>);
  }
  // A 24-byte element: the default's kernel at any alignment.
  const matrix_view<triple> triples{fake_pointer<triple>(), 1001, 1001, 1001};
  CHECK(transpose_kernel_for<transpose_policy>(triples) == transpose_kernel<transpose_policy, triple>);
}

TEST_CASE("aligned split points cut every output row into consecutive runs at aligned addresses") {
  // Rows at many byte offsets (pitches that are not multiples of the alignment, bases
  // misaligned by one element): the runs [split(k), split(k + 1)) of consecutive tiles
  // must cover the row exactly once, each inner split point on an aligned address and at
  // most alignment / size - 1 elements past k * tile_rows.
  using foundry::detail::aligned_split;
  const std::int64_t tile_rows = 64;
  for (const std::size_t size : {1, 2, 4, 8, 16}) {
    for (const std::size_t alignment : {32, 128}) {
      const std::size_t step = std::min<std::size_t>(alignment, size * tile_rows);
      for (const std::int64_t length : {1, 63, 64, 65, 1000, 16383}) {
        for (std::uintptr_t offset = 0; offset < 2 * alignment; offset += size) {
          CAPTURE(size, alignment, length, offset);
          const std::uintptr_t row = 0x10000 + offset;
          std::int64_t previous = aligned_split(row, 0, length, size, step);
          REQUIRE(previous == 0);
          for (std::int64_t k = 1; k * tile_rows < length + tile_rows; ++k) {
            const std::int64_t at = aligned_split(row, k * tile_rows, length, size, step);
            REQUIRE(at >= previous);
            if (at < length) {
              REQUIRE((row + static_cast<std::uintptr_t>(at) * size) % step == 0);
              REQUIRE(at - k * tile_rows <= static_cast<std::int64_t>(step / size) - 1);
            }
            previous = at;
          }
          REQUIRE(previous == length);
        }
      }
    }
  }
  // A base that no element boundary aligns (a 16-byte element at a 4-byte offset): the
  // runs still tile the row, with split points at most one element late.
  for (std::int64_t k = 1; k < 10; ++k) {
    const std::int64_t at = aligned_split(0x10004, k * 64, 1000, 16, 32);
    REQUIRE(at >= k * 64);
    REQUIRE(at <= k * 64 + 1);
  }
}

// ---- argument checks: they throw before any CUDA call, so they run without a GPU ----

TEST_CASE("transpose and copy_2d reject a null pointer with elements") {
  const matrix_view<const float> null_in{nullptr, 4, 5, 5};
  const matrix_view<float> null_out{nullptr, 5, 4, 4};
  const matrix_view<const float> in{fake_pointer<float>(), 4, 5, 5};
  const matrix_view<float> out{fake_pointer<float>() + 1000, 5, 4, 4};
  const matrix_view<float> same_shape_out{fake_pointer<float>() + 1000, 4, 5, 5};
  const matrix_view<float> null_same_shape_out{nullptr, 4, 5, 5};
  REQUIRE_THROWS_AS(foundry::transpose(null_in, out, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transpose(in, null_out, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::transpose(null_in, out, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::copy_2d(null_in, same_shape_out, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::copy_2d(in, null_same_shape_out, unused_stream()), std::invalid_argument);
}

TEST_CASE("transpose and copy_2d reject a pitch smaller than a row") {
  const matrix_view<const float> in{fake_pointer<float>(), 4, 5, 5};
  const matrix_view<const float> short_in{fake_pointer<float>(), 4, 5, 4};
  const matrix_view<float> out{fake_pointer<float>() + 1000, 5, 4, 4};
  const matrix_view<float> short_out{fake_pointer<float>() + 1000, 5, 4, 3};
  REQUIRE_THROWS_AS(foundry::transpose(short_in, out, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transpose(in, short_out, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::transpose(in, short_out, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(
      foundry::copy_2d(short_in, matrix_view<float>{fake_pointer<float>() + 1000, 4, 5, 5}, unused_stream()),
      std::invalid_argument);
  // A column-major 4 × 5 view stores rows of 4: a pitch of 3 is too small, 4 is enough.
  const matrix_view<float> col_out{fake_pointer<float>() + 1000, 4, 5, 3, matrix_layout::col_major};
  REQUIRE_THROWS_AS(foundry::copy_2d(in, col_out, unused_stream()), std::invalid_argument);
}

TEST_CASE("transpose and copy_2d reject overlapping input and output") {
  float* p = fake_pointer<float>();
  const matrix_view<const float> in{p, 4, 5, 5};
  REQUIRE_THROWS_AS(foundry::transpose(in, matrix_view<float>{p, 5, 4, 4}, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::transpose(in, matrix_view<float>{p + 19, 5, 4, 4}, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::transpose(in, matrix_view<float>{p, 5, 4, 4}, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::copy_2d(in, matrix_view<float>{p, 4, 5, 5}, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::copy_2d(in, matrix_view<float>{p - 10, 4, 5, 5}, unused_stream()), std::invalid_argument);
}

TEST_CASE("transpose and copy_2d reject an output of the wrong shape and negative extents") {
  const matrix_view<const float> in{fake_pointer<float>(), 4, 5, 5};
  float* q = fake_pointer<float>() + 1000;
  REQUIRE_THROWS_AS(foundry::transpose(in, matrix_view<float>{q, 4, 5, 5}, unused_stream()), std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::naive::transpose(in, matrix_view<float>{q, 4, 5, 5}, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::copy_2d(in, matrix_view<float>{q, 5, 4, 4}, unused_stream()), std::invalid_argument);
  const matrix_view<const float> negative{fake_pointer<float>(), -1, 5, 5};
  REQUIRE_THROWS_AS(foundry::transpose(negative, matrix_view<float>{q, 5, -1, 0}, unused_stream()),
                    std::invalid_argument);
  REQUIRE_THROWS_AS(foundry::copy_2d(negative, matrix_view<float>{q, -1, 5, 5}, unused_stream()),
                    std::invalid_argument);
}

TEST_CASE("empty matrices are a no-op, even with null pointers") {
  const matrix_view<const float> no_rows{nullptr, 0, 5, 5};
  const matrix_view<const float> no_cols{nullptr, 5, 0, 0};
  REQUIRE_NOTHROW(foundry::transpose(no_rows, matrix_view<float>{nullptr, 5, 0, 0}, unused_stream()));
  REQUIRE_NOTHROW(foundry::transpose(no_cols, matrix_view<float>{nullptr, 0, 5, 5}, unused_stream()));
  REQUIRE_NOTHROW(foundry::naive::transpose(no_rows, matrix_view<float>{nullptr, 5, 0, 0}, unused_stream()));
  REQUIRE_NOTHROW(foundry::copy_2d(no_rows, matrix_view<float>{nullptr, 0, 5, 7}, unused_stream()));
  REQUIRE_NOTHROW(foundry::copy_2d(no_cols, matrix_view<float>{nullptr, 5, 0, 0}, unused_stream()));
}
