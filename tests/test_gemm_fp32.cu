// foundry::gemm with fp32 inputs: every rung of the ladder (naive, shared_tiled,
// register_blocked) and the public dispatch, against a CPU reference in double,
// on every layout and transpose; the argument checks; the dispatch choice; the
// split-K reduce that rungs 3 to 5 share, tested directly.
#include <catch2/catch.hpp>

#include <foundry/gemm/gemm.cuh>
#include <foundry/runtime/stream.cuh>
#include <support/test_support.cuh>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using Catch::Matchers::Contains;
using foundry::gemm_rung;
using foundry::matrix_layout;
using foundry::matrix_op;
using foundry::matrix_view;

namespace {

// ---------------------------------------------------------------------------
// What runs: one rung through gemm_with, the public gemm (the dispatch), or a kernel launcher
// called directly (a rung with a policy other than its default).
using direct_launcher = void (*)(const foundry::gemm_problem<float, float>&, cuda::stream_ref);
struct rung_under_test {
  const char* name;
  std::optional<gemm_rung> rung;     // empty: foundry::gemm picks, unless `direct` is set
  direct_launcher direct = nullptr;  // set: called with the problem make_gemm_problem builds
};

std::vector<rung_under_test> fp32_rungs() {
  return {{"naive", gemm_rung::naive},
          {"shared_tiled", gemm_rung::shared_tiled},
          {"register_blocked", gemm_rung::register_blocked},
          {"dispatch", std::nullopt}};
}

template <class TA, class TB>
void run(const rung_under_test& r, float alpha, matrix_view<TA> a, matrix_op op_a, matrix_view<TB> b, matrix_op op_b,
         float beta, matrix_view<float> c, cuda::stream_ref s) {
  if (r.direct) {
    r.direct(foundry::make_gemm_problem<float, float>(alpha, a, op_a, b, op_b, beta, c), s);
  } else if (r.rung) {
    foundry::gemm_with(*r.rung, alpha, a, op_a, b, op_b, beta, c, s);
  } else {
    foundry::gemm(alpha, a, op_a, b, op_b, beta, c, s);
  }
}

// ---------------------------------------------------------------------------
// A stored matrix on the host: `offset` unused elements before the first one
// (to misalign the device pointer) and `pad` unused elements after each
// row (row-major) or column (column-major). Unused elements hold NaN, so a
// kernel that reads them poisons its result, and one that writes them is seen.
struct stored_matrix {
  std::int64_t rows = 0, cols = 0;
  matrix_layout layout = matrix_layout::row_major;
  std::int64_t pad = 0, offset = 0;
  std::vector<float> data;

  [[nodiscard]] std::int64_t ld() const { return (layout == matrix_layout::row_major ? cols : rows) + pad; }
  [[nodiscard]] std::int64_t outer() const { return layout == matrix_layout::row_major ? rows : cols; }
  [[nodiscard]] std::size_t index(std::int64_t i, std::int64_t j) const {
    return static_cast<std::size_t>(offset + (layout == matrix_layout::row_major ? i * ld() + j : j * ld() + i));
  }
  [[nodiscard]] float at(std::int64_t i, std::int64_t j) const { return data[index(i, j)]; }
};

stored_matrix make_matrix(std::int64_t rows, std::int64_t cols, matrix_layout layout, std::int64_t pad,
                          std::int64_t offset, std::uint64_t seed_id, bool poison_elements = false) {
  stored_matrix x{rows, cols, layout, pad, offset, {}};
  x.data.assign(static_cast<std::size_t>(offset + x.outer() * x.ld()), foundry::test::poison_value<float>());
  const auto values = foundry::test::random_vector<float>(static_cast<std::size_t>(rows * cols), -1.0f, 1.0f, seed_id);
  if (!poison_elements) {
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) x.data[x.index(i, j)] = values[static_cast<std::size_t>(i * cols + j)];
  }
  return x;
}

template <class T>
matrix_view<T> view_of(const stored_matrix& x, foundry::device_buffer<float>& d) {
  T* base = d.empty() ? nullptr : d.data() + x.offset;
  return {base, x.rows, x.cols, x.ld(), x.layout};
}

// op(X)(i, j) of a stored matrix.
float op_at(const stored_matrix& x, matrix_op op, std::int64_t i, std::int64_t j) {
  return op == matrix_op::none ? x.at(i, j) : x.at(j, i);
}

// ---------------------------------------------------------------------------
struct gemm_case {
  std::int64_t m = 1, n = 1, k = 1;
  matrix_layout a_layout = matrix_layout::row_major, b_layout = matrix_layout::row_major,
                c_layout = matrix_layout::row_major;
  matrix_op op_a = matrix_op::none, op_b = matrix_op::none;
  float alpha = 1.0f, beta = 0.0f;
  std::int64_t pad = 0, offset = 0;
};

std::string describe(const gemm_case& g) {
  auto layout = [](matrix_layout l) { return l == matrix_layout::row_major ? "row" : "col"; };
  auto op = [](matrix_op o) { return o == matrix_op::none ? "N" : "T"; };
  std::ostringstream os;
  os << g.m << "x" << g.n << "x" << g.k << " A:" << layout(g.a_layout) << "/" << op(g.op_a)
     << " B:" << layout(g.b_layout) << "/" << op(g.op_b) << " C:" << layout(g.c_layout) << " alpha=" << g.alpha
     << " beta=" << g.beta << " pad=" << g.pad << " offset=" << g.offset;
  return os.str();
}

// Tolerance, element-wise: |c - c_ref| <= 1e-5 * (|alpha| * sum_p |A(i,p) B(p,j)| + |beta| * |C0(i,j)|).
// Why: c_ref is computed in double (exact enough), so the error is the fp32
// kernel's own. Each of the K FMAs rounds once (unit roundoff u = 2^-24 ≈
// 6e-8) relative to the partial sum it produces, and every partial sum is at
// most sum |a||b|; with random signs the rounding errors add like a random walk
// and stay a small multiple of u times sum |a||b| whatever K is (Higham's
// worst case, K·u, needs all errors of one sign). 1e-5 ≈ 170 u: it leaves room
// for a different summation order (tiles, split-K) and the alpha/beta
// roundings, and still catches any wrong or missing term, which is ~1/K of
// the sum, not 1e-5 of it, for every K tested here (K ≤ 3000).
constexpr double relative_tolerance = 1e-5;

// The CPU reference of one element of C in double: alpha·sum_p A(i, p)·B(p, j) + beta·C0, and the
// scale the tolerance is relative to, |alpha|·sum_p |A(i, p)·B(p, j)| + |beta·C0|. `a_at(p)` and
// `b_at(p)` give A(i, p) and B(p, j); C0 counts only when beta != 0 (it may be NaN otherwise).
struct reference_value {
  double expected;
  double scale;
};
template <class AAt, class BAt>
reference_value reference_at(AAt&& a_at, BAt&& b_at, std::int64_t k, float alpha, float beta, double c0) {
  double sum = 0.0, scale = 0.0;
  for (std::int64_t p = 0; p < k; ++p) {
    sum += a_at(p) * b_at(p);
    scale += std::abs(a_at(p) * b_at(p));
  }
  reference_value r{double{alpha} * sum, std::abs(double{alpha}) * scale};
  if (beta != 0.0f) {
    r.expected += double{beta} * c0;
    r.scale += std::abs(double{beta} * c0);
  }
  return r;
}

// Whether `value` is within the tolerance of `r`; false for NaN.
bool within_tolerance(double value, const reference_value& r) {
  return std::abs(value - r.expected) <= relative_tolerance * r.scale + 1e-30;
}

// Elements of the row-major m × n `got` that miss alpha·A·B + beta·C0 (A m × k, B k × n and C0
// m × n, all row-major; C0 unused, and may be empty, when beta == 0).
std::int64_t count_wrong_row_major(const std::vector<float>& a, const std::vector<float>& b,
                                   const std::vector<float>& c0, float alpha, float beta, const std::vector<float>& got,
                                   std::int64_t m, std::int64_t n, std::int64_t k) {
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const auto r = reference_at([&](std::int64_t p) { return double{a[i * k + p]}; },
                                  [&](std::int64_t p) { return double{b[p * n + j]}; }, k, alpha, beta,
                                  beta != 0.0f ? double{c0[i * n + j]} : 0.0);
      wrong += within_tolerance(got[i * n + j], r) ? 0 : 1;
    }
  }
  return wrong;
}

void check_case(const rung_under_test& r, const gemm_case& g, foundry::stream& s) {
  INFO("rung " << r.name << ": " << describe(g));
  const std::int64_t a_rows = g.op_a == matrix_op::none ? g.m : g.k, a_cols = g.op_a == matrix_op::none ? g.k : g.m;
  const std::int64_t b_rows = g.op_b == matrix_op::none ? g.k : g.n, b_cols = g.op_b == matrix_op::none ? g.n : g.k;
  const auto a = make_matrix(a_rows, a_cols, g.a_layout, g.pad, g.offset, 1);
  const auto b = make_matrix(b_rows, b_cols, g.b_layout, g.pad, g.offset, 2);
  // beta == 0: C starts as NaN, which must not reach the result (C is not read).
  const auto c0 = make_matrix(g.m, g.n, g.c_layout, g.pad, g.offset, 3, g.beta == 0.0f);

  auto da = foundry::test::to_device(a.data, s);
  auto db = foundry::test::to_device(b.data, s);
  auto dc = foundry::test::to_device(c0.data, s);
  run(r, g.alpha, view_of<const float>(a, da), g.op_a, view_of<const float>(b, db), g.op_b, g.beta,
      view_of<float>(c0, dc), s);
  const std::vector<float> got = foundry::test::to_host(dc, s);

  // Reference in double; the tolerance scale alongside.
  std::vector<double> opa(static_cast<std::size_t>(g.m * g.k)), opb(static_cast<std::size_t>(g.k * g.n));
  for (std::int64_t i = 0; i < g.m; ++i)
    for (std::int64_t p = 0; p < g.k; ++p) opa[i * g.k + p] = op_at(a, g.op_a, i, p);
  for (std::int64_t p = 0; p < g.k; ++p)
    for (std::int64_t j = 0; j < g.n; ++j) opb[p * g.n + j] = op_at(b, g.op_b, p, j);
  std::int64_t wrong = 0;
  for (std::int64_t i = 0; i < g.m; ++i) {
    for (std::int64_t j = 0; j < g.n; ++j) {
      const auto r = reference_at([&](std::int64_t p) { return opa[i * g.k + p]; },
                                  [&](std::int64_t p) { return opb[p * g.n + j]; }, g.k, g.alpha, g.beta,
                                  g.beta != 0.0f ? double{c0.at(i, j)} : 0.0);
      const double value = got[c0.index(i, j)];
      if (!within_tolerance(value, r) && wrong++ < 5) {
        UNSCOPED_INFO("C(" << i << ", " << j << ") = " << value << ", expected " << r.expected << " (scale " << r.scale
                           << ")");
      }
    }
  }
  CHECK(wrong == 0);

  // Nothing outside C's elements was written: every unused slot still holds NaN.
  std::vector<bool> is_element(got.size(), false);
  for (std::int64_t i = 0; i < g.m; ++i)
    for (std::int64_t j = 0; j < g.n; ++j) is_element[c0.index(i, j)] = true;
  std::int64_t touched = 0;
  for (std::size_t e = 0; e < got.size(); ++e) touched += (!is_element[e] && !std::isnan(got[e])) ? 1 : 0;
  CHECK(touched == 0);
}

constexpr matrix_layout layouts[] = {matrix_layout::row_major, matrix_layout::col_major};
constexpr matrix_op ops[] = {matrix_op::none, matrix_op::transpose};

// Every combination of A, B and C layouts and of both transposes (32).
std::vector<gemm_case> all_layouts(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, float beta) {
  std::vector<gemm_case> cases;
  for (auto la : layouts)
    for (auto lb : layouts)
      for (auto lc : layouts)
        for (auto oa : ops)
          for (auto ob : ops) cases.push_back({m, n, k, la, lb, lc, oa, ob, alpha, beta});
  return cases;
}

// The four transposes and both C layouts (8), with A row-major and B column-major.
std::vector<gemm_case> all_transposes(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, float beta) {
  std::vector<gemm_case> cases;
  for (auto lc : layouts)
    for (auto oa : ops)
      for (auto ob : ops)
        cases.push_back({m, n, k, matrix_layout::row_major, matrix_layout::col_major, lc, oa, ob, alpha, beta});
  return cases;
}

}  // namespace

// ---------------------------------------------------------------------------
// Correctness, on the GPU.

// Cases tagged [racecheck_slow] run hundreds of launches and need many minutes under
// compute-sanitizer's racecheck; scripts/gpu-check.sh leaves them out of racecheck only
// (memcheck, synccheck and initcheck run them). This case is racecheck's: every rung
// that uses shared memory, one shape across the tile edges, every transpose and C layout.
TEST_CASE("shared-memory rungs match the reference across tile edges (sized for racecheck)", "[gpu]") {
  const auto r = GENERATE(values<rung_under_test>(
      {{"shared_tiled", gemm_rung::shared_tiled}, {"register_blocked", gemm_rung::register_blocked}}));
  foundry::stream s;
  for (const auto& g : all_transposes(130, 70, 41, 1.5f, -0.5f)) check_case(r, g, s);
}

TEST_CASE("gemm matches the reference for every layout and transpose on small shapes", "[gpu][racecheck_slow]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  foundry::stream s;
  for (const auto& shape : {std::vector<std::int64_t>{1, 1, 1}, {17, 33, 65}, {127, 129, 255}}) {
    for (const auto& g : all_layouts(shape[0], shape[1], shape[2], 1.5f, -0.5f)) check_case(r, g, s);
  }
}

TEST_CASE("gemm matches the reference on non-square shapes and across tile edges", "[gpu][racecheck_slow]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  foundry::stream s;
  // Thin rows and columns; sizes one past and one short of the 32- and
  // 128-wide tiles; K not a multiple of 4 or 8; a 64 × 96 × 3000 problem that
  // register_blocked splits along K; C of 45 columns in 2 tiles of 128 x 64 (so register_blocked's
  // 32 x 32 tile) and in 133 (its 64-column tile); C of 30 rows or columns in 157 tiles of 32 x
  // 128 or 128 x 32 (its 32-row and 32-column tiles); few 32 x 32 tiles split to slices of 16
  // (25 x 176 x 187 in 12, 301 x 1 x 87 in 6: the dispatch takes rung 3 for products under
  // 2 MiB, skinny shapes too) or in 60 (3 x 58 x 2835).
  const std::vector<std::vector<std::int64_t>> shapes{
      {1, 300, 7},   {300, 1, 7},     {5, 7, 1},       {33, 31, 129},   {129, 257, 9},  {259, 130, 37}, {64, 96, 3000},
      {200, 45, 70}, {17000, 45, 70}, {30, 20000, 70}, {20000, 30, 70}, {25, 176, 187}, {301, 1, 87},   {3, 58, 2835}};
  for (const auto& shape : shapes) {
    for (const auto& g : all_transposes(shape[0], shape[1], shape[2], 1.0f, 0.0f)) check_case(r, g, s);
  }
}

TEST_CASE("register_blocked with other thread tiles matches the reference", "[gpu][racecheck_slow]") {
  namespace gk = foundry::gemm_kernels;
  using tall = gk::register_blocked_policy<256, 128, 8, 1, 16, 8>;  // 16 × 8 per thread
  using wide = gk::register_blocked_policy<128, 256, 8, 1, 8, 16>;  // 8 × 16 per thread
  const auto r = GENERATE(values<rung_under_test>(
      {{"register_blocked 256x128, 16x8", std::nullopt, static_cast<direct_launcher>(&gk::gemm_register_blocked<tall>)},
       {"register_blocked 128x256, 8x16", std::nullopt, static_cast<direct_launcher>(&gk::gemm_register_blocked<wide>)},
       {"register_blocked 64x128 (short_m)", std::nullopt,
        static_cast<direct_launcher>(&gk::gemm_register_blocked<gk::register_blocked_short_m_policy>)},
       {"register_blocked 128x64 (short_n)", std::nullopt,
        static_cast<direct_launcher>(&gk::gemm_register_blocked<gk::register_blocked_short_n_policy>)},
       {"register_blocked 32x128 (short_m32)", std::nullopt,
        static_cast<direct_launcher>(&gk::gemm_register_blocked<gk::register_blocked_short_m32_policy>)},
       {"register_blocked 128x32, 16x4 (short_n32)", std::nullopt,
        static_cast<direct_launcher>(&gk::gemm_register_blocked<gk::register_blocked_short_n32_policy>)},
       {"register_blocked 32x32 (small)", std::nullopt,
        static_cast<direct_launcher>(&gk::gemm_register_blocked<gk::register_blocked_small_policy>)}}));
  foundry::stream s;
  // Across the block and piece edges of both tiles, a K split in slices, and (offset 1) the
  // scalar path.
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{17, 33, 65}, {300, 520, 77}, {64, 96, 3000}}) {
    for (auto g : all_transposes(shape[0], shape[1], shape[2], 1.5f, -0.5f)) {
      check_case(r, g, s);
      g.offset = 1;
      check_case(r, g, s);
    }
  }
}

TEST_CASE("gemm applies alpha and beta", "[gpu][racecheck_slow]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  foundry::stream s;
  const std::vector<std::pair<float, float>> pairs{{1.0f, 0.0f},  {1.0f, 1.0f},  {-2.0f, 0.5f},
                                                   {0.5f, -1.0f}, {0.0f, 0.75f}, {3.0f, 0.0f}};
  for (const auto& [alpha, beta] : pairs) {
    for (const auto& g : all_transposes(65, 67, 33, alpha, beta)) check_case(r, g, s);
  }
}

TEST_CASE("gemm with beta = 0 does not read C, so NaN in C does not propagate", "[gpu]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  foundry::stream s;
  // check_case fills C with NaN when beta == 0 and requires every result to be finite and right.
  check_case(r,
             {127, 129, 255, matrix_layout::row_major, matrix_layout::row_major, matrix_layout::row_major,
              matrix_op::none, matrix_op::none, 2.0f, 0.0f},
             s);
  check_case(r,
             {127, 129, 255, matrix_layout::col_major, matrix_layout::row_major, matrix_layout::col_major,
              matrix_op::transpose, matrix_op::none, 2.0f, 0.0f},
             s);
}

TEST_CASE("gemm with K = 0 sets C to beta * C", "[gpu]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  foundry::stream s;
  for (const float beta : {0.5f, 0.0f, 1.0f}) {
    for (const auto& g : all_transposes(37, 41, 0, 1.0f, beta)) check_case(r, g, s);
  }
  // A and B may be null when they hold no element.
  auto c = foundry::test::to_device(std::vector<float>(6, 2.0f), s);
  run(r, 1.0f, matrix_view<const float>{nullptr, 2, 0, 0}, matrix_op::none, matrix_view<const float>{nullptr, 0, 3, 3},
      matrix_op::none, 0.25f, matrix_view<float>{c.data(), 2, 3, 3}, s);
  CHECK(foundry::test::to_host(c, s) == std::vector<float>(6, 0.5f));
}

TEST_CASE("gemm with M = 0 or N = 0 does nothing", "[gpu]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  foundry::stream s;
  auto a = foundry::test::to_device(std::vector<float>(12, 1.0f), s);
  // Null C with no element: accepted, nothing is touched.
  REQUIRE_NOTHROW(run(r, 1.0f, matrix_view<const float>{a.data(), 0, 4, 4}, matrix_op::none,
                      matrix_view<const float>{a.data(), 4, 3, 3}, matrix_op::none, 0.0f,
                      matrix_view<float>{nullptr, 0, 3, 3}, s));
  REQUIRE_NOTHROW(run(r, 1.0f, matrix_view<const float>{a.data(), 3, 4, 4}, matrix_op::none,
                      matrix_view<const float>{a.data(), 4, 0, 0}, matrix_op::none, 0.0f,
                      matrix_view<float>{nullptr, 3, 0, 0}, s));
  s.synchronize();
}

TEST_CASE("gemm handles misaligned pointers and odd leading dimensions", "[gpu][racecheck_slow]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  foundry::stream s;
  // offset 1: pointers 4 bytes past a 16-byte boundary; pad 1 or 3: leading
  // dimensions that are not multiples of 4. Both rule out float4 loads.
  for (const std::int64_t offset : {0, 1, 2}) {
    for (const std::int64_t pad : {0, 1, 3}) {
      for (auto g : all_transposes(131, 133, 67, 1.0f, 0.5f)) {
        g.offset = offset;
        g.pad = pad;
        check_case(r, g, s);
      }
    }
  }
}

TEST_CASE("register_blocked writes C through its staged epilogue: every pad 0..7, bases 0 to 3 floats off",
          "[gpu][racecheck_slow]") {
  // Rows of C off 16-byte boundaries (pad not a multiple of 4, or a base off) take the epilogue
  // that stages each warp's 16 x 32 pieces in shared memory; the rest the float4 stores. The
  // default tile and the 32 x 32 one (a small C), across tile and piece edges, K split or not;
  // beta 0 (C poisoned, never read) and -0.5 alternate.
  namespace gk = foundry::gemm_kernels;
  const auto r = GENERATE(values<rung_under_test>(
      {{"register_blocked", gemm_rung::register_blocked},
       {"register_blocked 32x32 (small)", std::nullopt,
        static_cast<direct_launcher>(&gk::gemm_register_blocked<gk::register_blocked_small_policy>)}}));
  foundry::stream s;
  for (std::int64_t pad = 0; pad < 8; ++pad) {
    for (const std::int64_t offset : {0, 1, 2, 3}) {
      for (const auto& shape : std::vector<std::vector<std::int64_t>>{{145, 161, 9}, {33, 47, 700}}) {
        gemm_case g{shape[0], shape[1], shape[2]};
        g.c_layout = pad % 2 == 0 ? matrix_layout::row_major : matrix_layout::col_major;
        g.alpha = 1.25f;
        g.beta = (pad + offset) % 2 == 0 ? 0.0f : -0.5f;
        g.pad = pad;
        g.offset = offset;
        check_case(r, g, s);
      }
    }
  }
}

TEST_CASE("gemm leaves the padding between the rows or columns of C untouched", "[gpu][racecheck_slow]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  foundry::stream s;
  for (auto g : all_layouts(70, 130, 20, 1.0f, 1.0f)) {
    g.pad = 4;  // still 16-byte aligned: the vector path, with padding around it
    check_case(r, g, s);
  }
}

TEST_CASE("register_blocked split-K with an explicit count and a caller workspace matches the reference", "[gpu]") {
  foundry::stream s;
  const std::int64_t m = 70, n = 90, k = 1000;
  const auto a = foundry::test::random_vector<float>(static_cast<std::size_t>(m * k), -1.0f, 1.0f, 11);
  const auto b = foundry::test::random_vector<float>(static_cast<std::size_t>(k * n), -1.0f, 1.0f, 12);
  const auto c0 = foundry::test::random_vector<float>(static_cast<std::size_t>(m * n), -1.0f, 1.0f, 13);
  auto da = foundry::test::to_device(a, s);
  auto db = foundry::test::to_device(b, s);
  for (const int splits : {1, 2, 3, 7, 16, 200}) {
    INFO("split_k = " << splits);
    auto dc = foundry::test::to_device(c0, s);
    const matrix_view<const float> va{da.data(), m, k, k};
    const matrix_view<const float> vb{db.data(), k, n, n};
    const matrix_view<float> vc{dc.data(), m, n, n};
    const auto p = foundry::make_gemm_problem<float, float>(0.5f, va, matrix_op::none, vb, matrix_op::none, 2.0f, vc);
    // Sized from the plan on this device: its count is the one the launcher runs.
    const int used =
        foundry::gemm_kernels::register_blocked_split_k(p, splits, foundry::get_device_properties().sm_count).splits;
    foundry::device_buffer<float> workspace(foundry::gemm_kernels::split_k_workspace_bytes(p, used) / sizeof(float), s);
    foundry::gemm_kernels::split_k_options options;
    options.split_k = splits;
    options.workspace = workspace.span();
    foundry::gemm_kernels::gemm_register_blocked(p, options, s);
    CHECK(count_wrong_row_major(a, b, c0, 0.5f, 2.0f, foundry::test::to_host(dc, s), m, n, k) == 0);
  }
}

TEST_CASE("register_blocked split-K on whole, aligned block tiles matches the reference", "[gpu]") {
  // 2 x 2 full 128 x 128 tiles, aligned for float4; the slice ends (K = 1004: depths 504, 336,
  // 144) must not read into the next slice.
  foundry::stream s;
  const std::int64_t m = 256, n = 256, k = 1004;
  const auto a = foundry::test::random_vector<float>(static_cast<std::size_t>(m * k), -1.0f, 1.0f, 21);
  const auto b = foundry::test::random_vector<float>(static_cast<std::size_t>(k * n), -1.0f, 1.0f, 22);
  auto da = foundry::test::to_device(a, s);
  auto db = foundry::test::to_device(b, s);
  for (const int splits : {1, 2, 3, 7}) {
    INFO("split_k = " << splits);
    auto dc = foundry::test::poisoned_device_buffer<float>(static_cast<std::size_t>(m * n), s);
    const auto p = foundry::make_gemm_problem<float, float>(
        1.0f, matrix_view<const float>{da.data(), m, k, k}, matrix_op::none,
        matrix_view<const float>{db.data(), k, n, n}, matrix_op::none, 0.0f, matrix_view<float>{dc.data(), m, n, n});
    foundry::gemm_kernels::split_k_options options;
    options.split_k = splits;
    foundry::gemm_kernels::gemm_register_blocked(p, options, s);
    // C was poisoned with NaN and beta is 0: an element no slice wrote fails.
    CHECK(count_wrong_row_major(a, b, {}, 1.0f, 0.0f, foundry::test::to_host(dc, s), m, n, k) == 0);
  }
}

TEST_CASE("split-K reduce takes float4 only when n, ldc and both pointers allow it") {
  namespace gk = foundry::gemm_kernels::detail;
  alignas(16) static float base[8];
  CHECK(gk::split_k_reduce_width(base, 64, base, 68) == 4);
  CHECK(gk::split_k_reduce_width(base, 66, base, 68) == 1);      // n even, not a multiple of 4
  CHECK(gk::split_k_reduce_width(base, 64, base, 66) == 1);      // ldc even, not a multiple of 4
  CHECK(gk::split_k_reduce_width(base + 2, 64, base, 64) == 1);  // w 8-byte aligned only
  CHECK(gk::split_k_reduce_width(base, 64, base + 2, 64) == 1);  // C 8-byte aligned only
  CHECK(gk::split_k_reduce_width(base + 4, 4, base + 4, 4) == 4);
}

TEST_CASE("split-K reduce sums the slices in order on both paths and writes nothing else", "[gpu]") {
  // C = alpha * (w[0] + ... + w[splits - 1]) + beta * C, against the same float sum in the
  // same order on the CPU. Rounding alpha * sum and beta * c separately or in one FMA errs by at
  // most FLT_EPSILON * (|alpha * sum| + |beta * c|) against the exact value; the bound is twice that.
  struct reduce_case {
    std::int64_t m, n, ldc;
    std::size_t c_offset, w_offset;  // in floats, from 256-byte aligned allocations
    int splits;
    float beta;
    int width;  // the path split_k_reduce_width must pick
    const char* label;
  };
  const reduce_case cases[] = {
      {33, 64, 68, 0, 0, 3, 0.5f, 4, "float4"},
      {33, 64, 68, 0, 0, 3, 0.0f, 4, "float4, beta 0 over NaN"},
      {1, 4, 4, 0, 0, 16, -1.0f, 4, "float4, one row"},
      {7, 1100, 1104, 0, 0, 2, 0.5f, 4, "float4, a row wider than a block"},
      {31, 33, 36, 0, 0, 2, 0.5f, 1, "scalar: n odd"},
      {17, 66, 68, 0, 0, 3, 0.5f, 1, "scalar: n not a multiple of 4"},
      {17, 64, 66, 0, 0, 4, 0.5f, 1, "scalar: ldc not a multiple of 4"},
      {17, 64, 64, 2, 0, 4, 0.0f, 1, "scalar: C 8-byte aligned, beta 0 over NaN"},
      {17, 64, 64, 0, 2, 4, 2.0f, 1, "scalar: workspace 8-byte aligned"},
      {1, 1, 1, 0, 0, 5, 0.5f, 1, "scalar: 1 x 1"},
      {8 * 65535 + 5, 1, 2, 0, 0, 2, 0.5f, 1, "scalar: more rows than the grid, so its y loop steps"},
      {0, 64, 64, 0, 0, 3, 0.5f, 4, "no rows"},
      {5, 0, 4, 0, 0, 3, 0.5f, 4, "no columns"},
      {13, 29, 31, 0, 0, 37, 0.5f, 1, "slices kernel: 37 slices of a small C, ragged"},
      {64, 1024, 1024, 0, 0, 16, 0.0f, 4, "slices kernel: 16 slices of 2^16 elements, beta 0 over NaN"},
      {65, 1024, 1024, 0, 0, 16, 0.5f, 4, "16 slices of C past 2^16 elements: one thread an element"},
  };
  const float alpha = 0.75f;
  constexpr std::size_t guard = 8;  // floats after C's last row, which must keep their bits too
  for (const reduce_case& t : cases) {
    INFO(t.label << ": " << t.m << " x " << t.n << ", ldc " << t.ldc << ", " << t.splits << " slices, beta " << t.beta);
    foundry::stream s;
    const auto slice = static_cast<std::size_t>(t.m * t.n);
    const auto w = foundry::test::random_vector<float>(t.w_offset + t.splits * slice, -1.0f, 1.0f, 31);
    const std::size_t c_size = t.c_offset + static_cast<std::size_t>(t.m * t.ldc) + guard;
    auto c0 = foundry::test::random_vector<float>(c_size, -1.0f, 1.0f, 32);
    if (t.beta == 0.0f) std::fill(c0.begin(), c0.end(), foundry::test::poison_value<float>());
    auto dw = foundry::test::to_device(w, s);
    auto dc = foundry::test::to_device(c0, s);
    const float* w_at = dw.data() + t.w_offset;
    float* c_at = dc.data() + t.c_offset;
    if (t.m > 0 && t.n > 0) {
      REQUIRE(foundry::is_aligned(dw.data(), 16));  // else the offsets would not pick the path
      REQUIRE(foundry::is_aligned(dc.data(), 16));
      CHECK(foundry::gemm_kernels::detail::split_k_reduce_width(w_at, t.n, c_at, t.ldc) == t.width);
    }
    foundry::gemm_kernels::detail::enqueue_split_k_reduce(w_at, t.splits, t.m, t.n, c_at, t.ldc, alpha, t.beta, s);
    const auto c = foundry::test::to_host(dc, s);
    const bool slices_kernel = t.splits >= foundry::gemm_kernels::detail::split_k_reduce_slices_from &&
                               t.m * t.n <= foundry::gemm_kernels::detail::split_k_reduce_slices_max_elements;
    std::int64_t wrong = 0, touched = 0;
    for (std::size_t idx = 0; idx < c_size; ++idx) {
      const auto at = static_cast<std::int64_t>(idx - std::min(idx, t.c_offset));
      const std::int64_t i = at / t.ldc, j = at % t.ldc;
      if (idx < t.c_offset || i >= t.m || j >= t.n) {  // outside the view: must keep its bits
        touched += std::memcmp(&c[idx], &c0[idx], sizeof(float)) != 0;
        continue;
      }
      float sum = w[t.w_offset + static_cast<std::size_t>(i * t.n + j)];
      double sum_abs = std::abs(double{sum});
      for (int z = 1; z < t.splits; ++z) {
        const float part = w[t.w_offset + z * slice + static_cast<std::size_t>(i * t.n + j)];
        sum += part;
        sum_abs += std::abs(double{part});
      }
      const float old = t.beta == 0.0f ? 0.0f : c0[idx];
      const double expected = double{alpha} * sum + double{t.beta} * old;
      // The slices kernel adds in another (fixed) order: against the in-order float sum, each
      // of the two sums errs by at most (splits - 1) FLT_EPSILON sum |w| (Higham, 4.2).
      const double order = slices_kernel ? 2.0 * (t.splits - 1) * FLT_EPSILON * std::abs(double{alpha}) * sum_abs : 0.0;
      const double bound = 2.0 * FLT_EPSILON * (std::abs(double{alpha} * sum) + std::abs(double{t.beta} * old)) + order;
      wrong += !(std::abs(c[idx] - expected) <= bound);
    }
    CHECK(wrong == 0);
    CHECK(touched == 0);
  }
}

TEST_CASE("split-K reduce adds the slices in their order, on both paths", "[gpu]") {
  // 2^24 + 1 - 2^24 is 0 in float in this order and 1 in the reverse one: exact, no tolerance.
  foundry::stream s;
  for (const std::int64_t n : {4, 1}) {  // float4, then scalar
    INFO("n = " << n);
    std::vector<float> w;
    for (const float x : {0x1p24f, 1.0f, -0x1p24f}) w.insert(w.end(), static_cast<std::size_t>(n), x);
    auto dw = foundry::test::to_device(w, s);
    auto dc = foundry::test::poisoned_device_buffer<float>(static_cast<std::size_t>(n), s);
    foundry::gemm_kernels::detail::enqueue_split_k_reduce(dw.data(), 3, 1, n, dc.data(), n, 1.0f, 0.0f, s);
    for (const float x : foundry::test::to_host(dc, s)) CHECK(x == 0.0f);
  }
}

TEST_CASE("split-K reduce rejects fewer than one slice") {
  CHECK_THROWS_WITH(foundry::gemm_kernels::detail::enqueue_split_k_reduce(static_cast<const float*>(nullptr), 0, 1, 1,
                                                                          static_cast<float*>(nullptr), 1, 1.0f, 0.0f,
                                                                          foundry::test::unused_stream()),
                    Contains("split-K reduce of 0 slices: needs at least one"));
}

TEST_CASE("register_blocked rejects a split-K workspace that is too small", "[gpu]") {
  foundry::stream s;
  foundry::device_buffer<float> a(64 * 1024, s), b(1024 * 64, s), c(64 * 64, s), small(64 * 64, s);
  const auto p =
      foundry::make_gemm_problem<float, float>(1.0f, matrix_view<const float>{a.data(), 64, 1024, 1024},
                                               matrix_op::none, matrix_view<const float>{b.data(), 1024, 64, 64},
                                               matrix_op::none, 0.0f, matrix_view<float>{c.data(), 64, 64, 64});
  foundry::gemm_kernels::split_k_options options;
  options.split_k = 4;
  options.workspace = small.span();
  CHECK_THROWS_WITH(foundry::gemm_kernels::gemm_register_blocked(p, options, s),
                    Contains("split-K workspace of 4096 floats is smaller than the 16384 needed"));
  s.synchronize();
}

TEST_CASE("gemm_with rejects a rung that does not handle the element types", "[gpu]") {
  foundry::stream s;
  foundry::device_buffer<float> x(16, s);
  const matrix_view<const float> a{x.data(), 4, 4, 4};
  const matrix_view<float> c{x.data(), 4, 4, 4};
  CHECK_THROWS_WITH(
      foundry::gemm_with(gemm_rung::tensor_core, 1.0f, a, matrix_op::none, a, matrix_op::none, 0.0f, c, s),
      Contains("rung tensor_core does not handle these types"));
  s.synchronize();
}

// ---------------------------------------------------------------------------
// Argument checks and the reduction to the canonical problem: host only, no GPU
// is touched (the checks run before anything is enqueued).

namespace {
// A stream handle that is never used: every call below throws before enqueuing.
const cuda::stream_ref unused_stream{cudaStreamPerThread};
float dummy[64];
}  // namespace

TEST_CASE("gemm rejects inner dimensions that differ", "[gemm]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  const matrix_view<const float> a{dummy, 3, 4, 4};
  const matrix_view<const float> b{dummy, 5, 2, 2};
  const matrix_view<float> c{dummy, 3, 2, 2};
  CHECK_THROWS_AS(run(r, 1.0f, a, matrix_op::none, b, matrix_op::none, 0.0f, c, unused_stream), std::invalid_argument);
  CHECK_THROWS_WITH(run(r, 1.0f, a, matrix_op::none, b, matrix_op::none, 0.0f, c, unused_stream),
                    Contains("op(A) is 3 x 4 but op(B) is 5 x 2: the inner dimensions differ"));
  // The transpose is taken into account: op(A) = A^T is 4 x 3, which fits a 3 x 2 B but not a 3 x 2 C.
  const matrix_view<const float> b3{dummy, 3, 2, 2};
  CHECK_THROWS_WITH(run(r, 1.0f, a, matrix_op::transpose, b3, matrix_op::none, 0.0f, c, unused_stream),
                    Contains("C is 3 x 2 but op(A) op(B) is 4 x 2"));
}

TEST_CASE("gemm rejects a C whose shape differs from op(A) op(B)", "[gemm]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  const matrix_view<const float> a{dummy, 3, 4, 4};
  const matrix_view<const float> b{dummy, 4, 2, 2};
  CHECK_THROWS_WITH(
      run(r, 1.0f, a, matrix_op::none, b, matrix_op::none, 0.0f, matrix_view<float>{dummy, 2, 3, 3}, unused_stream),
      Contains("C is 2 x 3 but op(A) op(B) is 3 x 2"));
}

TEST_CASE("gemm rejects a leading dimension smaller than the contiguous extent", "[gemm]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  const matrix_view<float> c{dummy, 3, 2, 2};
  const matrix_view<const float> b{dummy, 4, 2, 2};
  CHECK_THROWS_AS(run(r, 1.0f, matrix_view<const float>{dummy, 3, 4, 3}, matrix_op::none, b, matrix_op::none, 0.0f, c,
                      unused_stream),
                  std::invalid_argument);
  CHECK_THROWS_WITH(run(r, 1.0f, matrix_view<const float>{dummy, 3, 4, 3}, matrix_op::none, b, matrix_op::none, 0.0f, c,
                        unused_stream),
                    Contains("leading dimension 3 of A (3 x 4, row-major) is smaller than its row length 4"));
  CHECK_THROWS_WITH(run(r, 1.0f, matrix_view<const float>{dummy, 3, 4, 2, matrix_layout::col_major}, matrix_op::none, b,
                        matrix_op::none, 0.0f, c, unused_stream),
                    Contains("leading dimension 2 of A (3 x 4, column-major) is smaller than its column length 3"));
  CHECK_THROWS_WITH(run(r, 1.0f, matrix_view<const float>{dummy, 3, 4, 4}, matrix_op::none,
                        matrix_view<const float>{dummy, 4, 2, 1}, matrix_op::none, 0.0f, c, unused_stream),
                    Contains("of B (4 x 2, row-major)"));
  CHECK_THROWS_WITH(run(r, 1.0f, matrix_view<const float>{dummy, 3, 4, 4}, matrix_op::none, b, matrix_op::none, 0.0f,
                        matrix_view<float>{dummy, 3, 2, 2, matrix_layout::col_major}, unused_stream),
                    Contains("leading dimension 2 of C (3 x 2, column-major)"));
}

TEST_CASE("gemm rejects a null pointer to a matrix with elements", "[gemm]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  const matrix_view<const float> a{dummy, 3, 4, 4};
  const matrix_view<const float> b{dummy, 4, 2, 2};
  const matrix_view<float> c{dummy, 3, 2, 2};
  CHECK_THROWS_WITH(run(r, 1.0f, matrix_view<const float>{nullptr, 3, 4, 4}, matrix_op::none, b, matrix_op::none, 0.0f,
                        c, unused_stream),
                    Contains("A (3 x 4, row-major) has elements but a null pointer"));
  CHECK_THROWS_WITH(run(r, 1.0f, a, matrix_op::none, matrix_view<const float>{nullptr, 4, 2, 2}, matrix_op::none, 0.0f,
                        c, unused_stream),
                    Contains("B (4 x 2, row-major) has elements but a null pointer"));
  CHECK_THROWS_WITH(
      run(r, 1.0f, a, matrix_op::none, b, matrix_op::none, 0.0f, matrix_view<float>{nullptr, 3, 2, 2}, unused_stream),
      Contains("C (3 x 2, row-major) has elements but a null pointer"));
}

TEST_CASE("gemm rejects negative extents", "[gemm]") {
  const auto r = GENERATE(from_range(fp32_rungs()));
  const matrix_view<const float> b{dummy, 4, 2, 2};
  const matrix_view<float> c{dummy, 3, 2, 2};
  CHECK_THROWS_WITH(run(r, 1.0f, matrix_view<const float>{dummy, -3, 4, 4}, matrix_op::none, b, matrix_op::none, 0.0f,
                        c, unused_stream),
                    Contains("A (-3 x 4, row-major) has a negative extent"));
}

TEST_CASE("make_gemm_problem keeps a row-major C and marks which index of A and B is contiguous", "[gemm]") {
  for (auto la : layouts) {
    for (auto oa : ops) {
      for (auto lb : layouts) {
        for (auto ob : ops) {
          // op(A) is 2 x 3, op(B) 3 x 5, C 2 x 5 row-major with ld 7.
          const bool a_stored_as_op = oa == matrix_op::none;
          const bool b_stored_as_op = ob == matrix_op::none;
          const matrix_view<const float> a{dummy, a_stored_as_op ? 2 : 3, a_stored_as_op ? 3 : 2, 8, la};
          const matrix_view<const float> b{dummy + 1, b_stored_as_op ? 3 : 5, b_stored_as_op ? 5 : 3, 9, lb};
          const auto p = foundry::make_gemm_problem<float, float>(2.0f, a, oa, b, ob, 3.0f,
                                                                  matrix_view<float>{dummy + 2, 2, 5, 7});
          CHECK(p.m == 2);
          CHECK(p.n == 5);
          CHECK(p.k == 3);
          CHECK(p.a == dummy);
          CHECK(p.lda == 8);
          CHECK(p.b == dummy + 1);
          CHECK(p.ldb == 9);
          CHECK(p.c == dummy + 2);
          CHECK(p.ldc == 7);
          CHECK(p.alpha == 2.0f);
          CHECK(p.beta == 3.0f);
          // Row-major untransposed A has k contiguous; each of col-major and transpose flips it.
          CHECK(p.a_k_contiguous == ((la == matrix_layout::row_major) == (oa == matrix_op::none)));
          CHECK(p.b_n_contiguous == ((lb == matrix_layout::row_major) == (ob == matrix_op::none)));
        }
      }
    }
  }
}

TEST_CASE("make_gemm_problem solves a column-major C as the row-major C^T = op(B)^T op(A)^T", "[gemm]") {
  // op(A) = A is 2 x 3 row-major (k contiguous); op(B) = B is 3 x 5 row-major (n contiguous).
  const matrix_view<const float> a{dummy, 2, 3, 3};
  const matrix_view<const float> b{dummy + 1, 3, 5, 5};
  const matrix_view<float> c{dummy + 2, 2, 5, 4, matrix_layout::col_major};
  const auto p = foundry::make_gemm_problem<float, float>(1.0f, a, matrix_op::none, b, matrix_op::none, 0.0f, c);
  CHECK(p.m == 5);  // rows of C^T
  CHECK(p.n == 2);
  CHECK(p.k == 3);
  CHECK(p.a == dummy + 1);  // the new A is op(B)^T: B(p, j) = b[p * 5 + j], so k is not contiguous
  CHECK(p.lda == 5);
  CHECK_FALSE(p.a_k_contiguous);
  CHECK(p.b == dummy);  // the new B is op(A)^T: A(i, p) = a[i * 3 + p], so its n (= i) is not contiguous
  CHECK(p.ldb == 3);
  CHECK_FALSE(p.b_n_contiguous);
  CHECK(p.ldc == 4);
}

TEST_CASE("best_gemm_rung picks register_blocked for fp32 and tensor_core for 16-bit inputs on sm_80+", "[gemm]") {
  STATIC_REQUIRE(foundry::best_gemm_rung<float, float>(90) == gemm_rung::register_blocked);
  STATIC_REQUIRE(foundry::best_gemm_rung<float, float>(70) == gemm_rung::register_blocked);
  STATIC_REQUIRE(foundry::best_gemm_rung<__nv_bfloat16, float>(90) == gemm_rung::tensor_core);
  STATIC_REQUIRE(foundry::best_gemm_rung<__half, float>(80) == gemm_rung::tensor_core);
  // Below sm_80 there is no bf16 mma: the 16-bit inputs fall back to the naive rung.
  STATIC_REQUIRE(foundry::best_gemm_rung<__nv_bfloat16, float>(75) == gemm_rung::naive);
  STATIC_REQUIRE_FALSE(foundry::gemm_rung_supports<float, float>(gemm_rung::tensor_core, 90));
  STATIC_REQUIRE_FALSE(foundry::gemm_rung_supports<__half, float>(gemm_rung::register_blocked, 90));
  STATIC_REQUIRE(foundry::gemm_rung_supports<__half, float>(gemm_rung::naive, 90));
}

TEST_CASE("register_blocked splits K only when the C tiles cannot fill the GPU", "[gemm]") {
  auto plan = [](std::int64_t m, std::int64_t n, std::int64_t k, int requested) {
    foundry::gemm_problem<float, float> p;
    p.m = m, p.n = n, p.k = k;
    return foundry::gemm_kernels::register_blocked_split_k(p, requested, 132);
  };
  CHECK(plan(8192, 8192, 8192, 0).splits == 1);
  CHECK(plan(8192, 8192, 1024, 0).splits == 1);
  CHECK(plan(1024, 1024, 8192, 0).splits == 4);  // 64 tiles, 264 slots
  CHECK(plan(1024, 1024, 8192, 0).depth == 2048);
  CHECK(plan(100, 100, 100, 0).splits == 1);  // K too short to split: slices of at least 64
  CHECK(plan(100, 100, 300, 0).splits == 4);  // one tile: 300 / 64 slices of round_up(75, 8)
  CHECK(plan(100, 100, 300, 0).depth == 80);
  // 16 tiles of 128 x 128 on 264 slots; K >= deep_k_from, so slices of at least 16: 14 of 48
  // (84 steps become 6).
  CHECK(plan(1950, 23, 670, 0).splits == 14);
  CHECK(plan(1950, 23, 670, 0).depth == 48);
  CHECK(plan(1950, 300, 300, 0).splits == 4);  // K under deep_k_from: slices of at least 64
  // A C of at most 2^18 elements splits up to 64 ways (rung 5: 2^16), to fill the slots:
  // 300 x 300 has 9 tiles, 29 slices (16 before the cap moved).
  CHECK(plan(100, 100, 1 << 20, 0).splits == 64);
  CHECK(plan(300, 300, 1 << 20, 0).splits == 29);
  CHECK(plan(100, 100, 20, 5).splits == 3);  // at most one split per K tile of 8
  CHECK(plan(100, 100, 1000, 3).depth == 336);
  CHECK(plan(100, 100, 1000, 3).splits == 3);
  // 15 requested: slices of round_up(67, 8) = 72 cover K = 1000 in 14; the plan says 14, the
  // count that runs (and sizes the workspace).
  CHECK(plan(100, 100, 1000, 15).splits == 14);
  CHECK(plan(100, 100, 1000, 15).depth == 72);
  CHECK(plan(64, 64, std::int64_t{1} << 24, 100000).splits <= 65535);  // grid.z limit
  CHECK(plan(64, 64, 0, 0).splits == 1);                               // K = 0: one empty slice, C = beta * C
}
